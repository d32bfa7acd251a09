// vload/vstore on unaligned scalar pointers.
kernel void vload_vstore(global const float *src, global float *dst)
{
    size_t i = get_global_id(0);
    float4 v = vload4(i, src);
    float3 w = vload3(0, src + 1);
    vstore4(v * 2.0f + (float4)(w, 1.0f), i, dst);
}
