// clEnqueueCopyBufferRect, and the buffer side of clEnqueueReadBufferRect /
// clEnqueueWriteBufferRect when the host side is a staging buffer.
//
// Copies a region of width bytes x height rows x depth slices. The host computes the byte
// offset of the region's origin in each buffer (origin.z * slice_pitch + origin.y * row_pitch
// + origin.x) and passes it with the pitches. src and dst are 16-byte aligned (a buffer's base
// or a sub-buffer origin); when the offsets, pitches and width are all multiples of 16 (or of
// 4) the copy moves 16-byte (or 4-byte) units, otherwise single bytes.
//
// The NDRange is 3-D: dimension 0 walks units along a row, 1 the rows, 2 the slices, each with
// a stride of the global size in that dimension, so any grid size covers any region.

#define COPY_ROWS(T, UNIT)                                                                   \
    for (ulong z = get_global_id(2); z < depth; z += get_global_size(2)) {                   \
        for (ulong y = get_global_id(1); y < height; y += get_global_size(1)) {              \
            global const T *s = (global const T *)(src + src_offset + z * src_slice_pitch    \
                                                   + y * src_row_pitch);                     \
            global T *d = (global T *)(dst + dst_offset + z * dst_slice_pitch                \
                                       + y * dst_row_pitch);                                 \
            for (ulong x = get_global_id(0); x < width / (UNIT); x += get_global_size(0))   \
                d[x] = s[x];                                                                 \
        }                                                                                    \
    }

kernel void copy_rect(global const uchar *src, global uchar *dst,
                      ulong src_offset, ulong src_row_pitch, ulong src_slice_pitch,
                      ulong dst_offset, ulong dst_row_pitch, ulong dst_slice_pitch,
                      ulong width, uint height, uint depth)
{
    ulong all = src_offset | src_row_pitch | src_slice_pitch | dst_offset | dst_row_pitch
              | dst_slice_pitch | width;
    if ((all & 15) == 0) {
        COPY_ROWS(uint4, 16)
    } else if ((all & 3) == 0) {
        COPY_ROWS(uint, 4)
    } else {
        COPY_ROWS(uchar, 1)
    }
}
