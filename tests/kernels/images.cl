// Images, a sampler argument and a literal sampler.
const sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

kernel void blur(read_only image2d_t src, write_only image2d_t dst, sampler_t linear)
{
    int2 p = (int2)((int)get_global_id(0), (int)get_global_id(1));
    float4 a = read_imagef(src, nearest, p);
    float4 b = read_imagef(src, linear, (float2)((float)p.x + 0.5f, (float)p.y + 0.5f));
    write_imagef(dst, p, (a + b) * 0.5f);
}
