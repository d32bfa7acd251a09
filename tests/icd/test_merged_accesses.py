"""Loads and stores that vkcl merges into 64-bit accesses on llvmpipe (spirv_merge_access.py;
on other devices these kernels run as clspv wrote them): every bit of every element comes
through, edge values included, and accesses that may alias keep their order. Each result is
compared bit for bit with the host's."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")

EDGE_SETUP = """
import struct
u8 = np.arange(256, dtype=np.uint8)
f32_bits = np.array([0x7FC00000, 0x7FC00001, 0xFFC00123, 0x7F800001, 0xFF800001, 0x7F800000, 0xFF800000,
                     0x80000000, 0, 1, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x00800000, 0x3F800000,
                     0xBF800001], dtype=np.uint32)
f16_bits = np.array([0x7E00, 0x7C01, 0xFE01, 0x7D55, 0x7C00, 0xFC00, 0x8000, 0, 1, 0x83FF, 0x7BFF, 0xFBFF,
                     0x0400, 0x3C00, 0xBC01, 0x5555], dtype=np.uint16)
"""


def test_long_vector_copies_keep_every_bit(python_with_icd):
    """char16, short8, half16, float16 and int8 copies (clspv: one access per element; merged:
    8 bytes at a time), from aligned and odd offsets, with NaN payloads, signalling NaNs, -0,
    denormals and the largest values among the elements."""
    run(python_with_icd, EDGE_SETUP + """
src = '''
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void copies(global const uchar *c, global uchar16 *c16, global const ushort *s, global ushort8 *s8,
                   global const float *f, global float16 *f16, global const half *h, global half16 *h16,
                   global const int *i4, global int8 *i8, int skew) {
  size_t i = get_global_id(0);
  c16[i] = vload16(i, c + skew);
  s8[i] = vload8(i, s + skew);
  f16[i] = vload16(i, f + skew);
  h16[i] = vload16(i, h + skew);
  i8[i] = vload8(i, i4 + skew);
}'''
p = cl.Program(ctx, src).build()
n = 64
c = np.tile(u8, 5)
s = rng.integers(0, 1 << 16, n * 8 + 8, dtype=np.uint16); s[:16] = f16_bits
f = np.tile(f32_bits, n + 1).view(np.float32)
h = np.tile(f16_bits, n + 1)
i4 = rng.integers(-2**31, 2**31, n * 8 + 8, dtype=np.int64).astype(np.int32)
for skew in (0, 1, 3):
    outs = [np.zeros(n * 16, np.uint8), np.zeros(n * 8, np.uint16), np.zeros(n * 16, np.uint32),
            np.zeros(n * 16, np.uint16), np.zeros(n * 8, np.int32)]
    bufs = [out(o) for o in outs]
    p.copies(q, (n,), None, buf(c), bufs[0], buf(s), bufs[1], buf(f), bufs[2], buf(h), bufs[3],
             buf(i4), bufs[4], np.int32(skew))
    want = [c[skew:skew + n * 16], s[skew:skew + n * 8], f.view(np.uint32)[skew:skew + n * 16],
            h[skew:skew + n * 16], i4[skew:skew + n * 8]]
    for name, b, o, w in zip(("char16", "short8", "float16", "half16", "int8"), bufs, outs, want):
        got = get(b, o)
        assert np.array_equal(got, w), (name, skew, np.flatnonzero(got != w)[:8])
print("OK")
""")


def test_vector_values_computed_then_stored(python_with_icd):
    """Elements computed from loaded ones (not only copied) and stored as a long vector: the
    merged store puts each computed value in its place."""
    run(python_with_icd, EDGE_SETUP + """
src = '''
kernel void k(global const char16 *a, global const char16 *b, global char16 *sum, global short8 *wide,
              global float8 *fl, global const float8 *den) {
  size_t i = get_global_id(0);
  char16 x = a[i], y = b[i];
  sum[i] = add_sat(x, y);
  wide[i] = convert_short8(x.lo) * (short8)(1, -2, 3, -4, 5, -6, 7, -8) + convert_short8(y.hi);
  fl[i] = convert_float8(x.hi) / den[0];
}'''
p = cl.Program(ctx, src).build()
n = 128
a = rng.integers(-128, 128, (n, 16)).astype(np.int8); a[0] = np.arange(-128, 128, 16)
b = rng.integers(-128, 128, (n, 16)).astype(np.int8); b[0] = 127
S, W, F = out(np.zeros(n * 16, np.int8)), out(np.zeros(n * 8, np.int16)), out(np.zeros(n * 8, np.float32))
den = np.array([0.0, -0.0, 3.0, 1e-40, 7.0, -1.0, 1e30, 2.0], np.float32)
p.k(q, (n,), None, buf(a), buf(b), S, W, F, buf(den))
want_sum = np.clip(a.astype(np.int16) + b, -128, 127).astype(np.int8).ravel()
assert np.array_equal(get(S, np.zeros(n * 16, np.int8)), want_sum)
mul = np.array([1, -2, 3, -4, 5, -6, 7, -8], np.int16)
want_w = (a[:, :8].astype(np.int16) * mul + b[:, 8:]).astype(np.int16).ravel()
assert np.array_equal(get(W, np.zeros(n * 8, np.int16)), want_w)
with np.errstate(all="ignore"):
    want_f = (a[:, 8:].astype(np.float32) / den).ravel()
got_f = get(F, np.zeros(n * 8, np.float32))
# a denormal divisor may be flushed (no CL_FP_DENORM): only column 3 may differ that way
ok = (got_f.view(np.uint32) == want_f.view(np.uint32)) | (np.isnan(got_f) & np.isnan(want_f))
cols = np.flatnonzero(~ok) % 8
assert set(cols.tolist()) <= {3}, (np.flatnonzero(~ok)[:8], got_f[~ok][:8], want_f[~ok][:8])
print("OK")
""")


def test_aliasing_pointers_keep_program_order(python_with_icd):
    """Element-by-element copies between overlapping ranges of one buffer (through two
    pointers the compiler cannot tell apart) must behave as written, one element after the
    other: merging them across each other would read or write stale bytes."""
    run(python_with_icd, """
src = '''
kernel void fwd(global uchar *p, int off) {
  global uchar *a = p, *b = p + off;
  b[0] = a[0]; b[1] = a[1]; b[2] = a[2]; b[3] = a[3]; b[4] = a[4]; b[5] = a[5]; b[6] = a[6]; b[7] = a[7];
  b[8] = a[8]; b[9] = a[9]; b[10] = a[10]; b[11] = a[11]; b[12] = a[12]; b[13] = a[13]; b[14] = a[14];
  b[15] = a[15];
}
kernel void both(global uint *a, global uint *b) {
  uint x0 = a[0], x1 = a[1], x2 = a[2], x3 = a[3];
  b[0] = x0 + 1; b[1] = x1 + 1; b[2] = x2 + 1; b[3] = x3 + 1;
  uint y0 = a[0], y1 = a[1], y2 = a[2], y3 = a[3];
  b[4] = y0; b[5] = y1; b[6] = y2; b[7] = y3;
}'''
p = cl.Program(ctx, src).build()
for off in (-3, -1, 1, 2, 5, 8, 16):
    host = np.arange(64, dtype=np.uint8) * 3 + 1
    start = 24
    P = buf(host.copy())
    k = cl.Program(ctx, src.replace("global uchar *a = p", "p += %d; global uchar *a = p" % start)).build()
    k.fwd(q, (1,), None, P, np.int32(off))
    want = host.copy()
    for e in range(16):
        want[start + off + e] = want[start + e]
    got = get(P, host)
    assert np.array_equal(got, want), (off, got[16:48], want[16:48])
# a and b the same buffer: the second loads must see the first stores
A = buf(np.arange(8, dtype=np.uint32) * 10)
p.both(q, (1,), None, A, A)
assert get(A, np.zeros(8, np.uint32)).tolist() == [1, 11, 21, 31, 1, 11, 21, 31]
print("OK")
""")


def test_copies_made_loops_keep_every_bit_and_overlap_order(python_with_icd):
    """Kernels of many copies of 16 loaded elements into a stored 16-element vector (the CTS's
    basic/vector_creation shape; spirv_copy_loops.py makes each copy one loop on llvmpipe):
    doubles, floats and halves with NaN payloads, signalling NaNs, -0, denormals and infinities
    keep every bit, and copies between overlapping ranges of one buffer (destination above or
    below the source) give what loading all 16 elements before storing any gives."""
    run(python_with_icd, EDGE_SETUP + """
f64_bits = np.array([0x7FF8000000000001, 0xFFF0000000000001, 0x7FF4000000000000, 0x8000000000000000, 0,
                     1, 0x800FFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FEFFFFFFFFFFFFF,
                     0x0010000000000000, 0x3FF0000000000000, 0xBFF0000000000001, 0x7FFFFFFFFFFFFFFF,
                     0x000FFFFFFFFFFFFF, 0x5555555555555555], dtype=np.uint64)
lines = 40
fp64 = "cl_khr_fp64" in dev.extensions
types = [("float", np.uint32, f32_bits), ("half", np.uint16, f16_bits), ("char", np.uint8, u8[250:]),
         ("int", np.uint32, f32_bits)] + ([("double", np.uint64, f64_bits)] if fp64 else [])
src = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\\n"
if fp64:
    src += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\\n"
for t, _, _ in types:
    body = "".join("  vstore16((%s16)(vload3(0, a + %d), vload4(0, a + %d), vload8(0, a + %d), a[%d]), %d, b);\\n"
                   % (t, k, k + 3, k + 7, k + 15, k) for k in range(lines))
    src += "kernel void copy_%s(global %s *p, int s, int d) {\\n  global %s *a = p + s, *b = p + d;\\n%s}\\n" % (
        t, t, t, body)
p = cl.Program(ctx, src).build()
for t, dtype, edge in types:
    for s, d in ((0, 16 * lines + 64), (16 * lines + 64, 0), (8, 9), (9, 8), (8, 24), (24, 8), (8, 8)):
        size = 16 * lines + 16 * lines + 128
        host = np.tile(edge, size // len(edge) + 1)[:size].copy()
        host[1::7] = rng.integers(0, np.iinfo(dtype).max, host[1::7].size, dtype=dtype, endpoint=True)
        P = buf(host.copy())
        getattr(p, "copy_" + t)(q, (1,), None, P, np.int32(s), np.int32(d))
        want = host.copy()
        for k in range(lines):  # every load of a line before any of its stores, line by line
            want[d + 16 * k:d + 16 * k + 16] = want[s + k:s + k + 16].copy()
        got = get(P, host)
        assert np.array_equal(got, want), (t, s, d, np.flatnonzero(got != want)[:8])
print("OK")
""")
