// c[i] = a[i] + b[i] * scale
kernel void vector_add(global const float *a, global const float *b, global float *c, float scale)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i] * scale;
}
