// 32-bit atomics on global and local memory.
kernel void histogram(global const uchar *data, global volatile uint *bins, local volatile uint *local_bins)
{
    size_t lid = get_local_id(0);
    if (lid < 16)
        local_bins[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&local_bins[data[get_global_id(0)] & 15]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16)
        atomic_add(&bins[lid], local_bins[lid]);
    if (lid == 0)
        atomic_max(&bins[16], (uint)get_group_id(0));
}
