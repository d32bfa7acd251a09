// A struct passed by value.
typedef struct {
    float scale;
    int offset;
    float4 bias;
} params_t;

kernel void apply_params(global float4 *data, params_t p)
{
    size_t i = get_global_id(0);
    data[i] = data[i] * p.scale + p.bias + (float)p.offset;
}
