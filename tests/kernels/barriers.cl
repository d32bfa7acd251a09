// A kernel-scope __local array, barriers and memory fences.
kernel void reverse_tile(global int *data)
{
    local int tile[32];
    size_t lid = get_local_id(0);
    size_t base = get_group_id(0) * 32;
    tile[lid] = data[base + lid];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    data[base + lid] = tile[31 - lid];
    mem_fence(CLK_GLOBAL_MEM_FENCE);
}
