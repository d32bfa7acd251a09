// clEnqueueFillBuffer (and the fill parts of clEnqueueSVMMemFill).
//
// Both kernels fill the bytes [offset, offset + size) of dst with a repeated pattern, where
// offset and size are multiples of the pattern size (the OpenCL API guarantees this) and dst
// is 16-byte aligned (a buffer's base or a sub-buffer origin). Work is split in 16-byte
// chunks aligned to dst: a chunk entirely inside the range is one 16-byte store, the (at most
// two) partial chunks at the ends are written byte by byte. Each work-item loops with a stride
// of the global size, so any grid size covers any range.
//
// fill_16:      pattern of 1, 2, 4, 8 or 16 bytes, passed by value (the host repeats it to
//               16 bytes: pattern.x holds bytes 0-7, pattern.y bytes 8-15, little-endian).
// fill_pattern: pattern of up to 128 bytes (a power of two) read from a buffer.

// v rotated so that byte k of the result is byte (k + r) % 16 of v.
static ulong2 rotate_bytes(ulong2 v, uint r)
{
    if (r >= 8) {
        v = v.yx;
        r -= 8;
    }
    if (r == 0)
        return v;
    uint s = r * 8;
    return (ulong2)((v.x >> s) | (v.y << (64 - s)), (v.y >> s) | (v.x << (64 - s)));
}

static uchar byte_of(ulong2 v, uint k)
{
    return (uchar)(k < 8 ? v.x >> (8 * k) : v.y >> (8 * (k - 8)));
}

static void store_chunk(global uchar *dst, ulong chunk, ulong start, ulong end, ulong2 value)
{
    if (chunk >= start && chunk + 16 <= end) {
        *(global ulong2 *)(dst + chunk) = value;
        return;
    }
    for (uint k = 0; k < 16; k++) {
        ulong p = chunk + k;
        if (p >= start && p < end)
            dst[p] = byte_of(value, k);
    }
}

kernel void fill_16(global uchar *dst, ulong offset, ulong size, ulong2 pattern)
{
    ulong start = offset;
    ulong end = offset + size;
    ulong first = start & ~(ulong)15;
    ulong chunks = (((end + 15) & ~(ulong)15) - first) / 16;
    // Every chunk starts on a multiple of 16, so every chunk sees the same rotation.
    ulong2 value = rotate_bytes(pattern, (uint)((16 - (start & 15)) & 15));
    for (ulong i = get_global_id(0); i < chunks; i += get_global_size(0))
        store_chunk(dst, first + i * 16, start, end, value);
}

kernel void fill_pattern(global uchar *dst, ulong offset, ulong size,
                         global const uchar *pattern, uint pattern_size)
{
    ulong start = offset;
    ulong end = offset + size;
    ulong first = start & ~(ulong)15;
    ulong chunks = (((end + 15) & ~(ulong)15) - first) / 16;
    ulong mask = (ulong)pattern_size - 1;
    for (ulong i = get_global_id(0); i < chunks; i += get_global_size(0)) {
        ulong chunk = first + i * 16;
        // Byte p of the range holds pattern[(p - start) % pattern_size].
        ulong2 value = (ulong2)(0, 0);
        for (uint k = 0; k < 8; k++) {
            value.x |= (ulong)pattern[(chunk + k - start) & mask] << (8 * k);
            value.y |= (ulong)pattern[(chunk + 8 + k - start) & mask] << (8 * k);
        }
        store_chunk(dst, chunk, start, end, value);
    }
}
