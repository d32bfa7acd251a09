// Work-group sum with a __local scratch argument and barriers.
__attribute__((reqd_work_group_size(64, 1, 1)))
kernel void reduce_sum(global const int *in, global int *partial, local int *scratch, uint n)
{
    uint lid = (uint)get_local_id(0);
    uint gid = (uint)get_global_id(0);
    scratch[lid] = gid < n ? in[gid] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = (uint)get_local_size(0) / 2; stride > 0; stride /= 2) {
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
