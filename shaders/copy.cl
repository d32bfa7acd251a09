// clEnqueueCopyBuffer of large, 16-byte aligned ranges on discrete GPUs, where vkCmdCopyBuffer
// runs at the copy engine's speed. uint4 pointers make every access a 16-byte load or store
// (copy_rect.cl reaches memory through uchar pointers, which compile to narrower accesses).
// Loops with a stride of the global size, so any grid covers any range.
kernel void copy_16(global uint4 *dst, global const uint4 *src, ulong units)
{
    for (ulong i = get_global_id(0); i < units; i += get_global_size(0))
        dst[i] = src[i];
}
