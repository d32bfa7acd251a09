"""The SPIR-V repairs change no result (vkcl/compiler/spirv_fixes.py; each has a unit test that
shows the miscompilation it works around): kernels that go through repairs 1-4 and 14 move IEEE edge
values (NaN with a payload, +-inf, +-0, denormals, the largest and smallest floats) bit for bit.
(Repairs 5 and 13: test_ieee_semantics.py; 6: test_atomics_order.py and the histograms; 8-9:
test_unrolled_loops.py; 10: test_integer_dot_product.py; 11: test_argument_conversions.py; 15:
test_atomics_order.py; 16: test_kernels_pyopencl.py's split launches; 17: here, edge doubles; 18:
test_pyopencl_regressions.py's float64 scans; 19: test_structs.py's private arrays of padded
structs, edge values bit for bit; 20: test_byte_extracts.py; 21: test_zero_operands.py, every
result against IEEE arithmetic; llvmpipe's merged accesses: test_merged_accesses.py.)"""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")

EDGE = """
edge = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.17549435e-38, 3.4028235e38,
                 -3.4028235e38, 1.0, -1.5, 2.5e-40], np.float32)
payload = np.array([0x7fc12345, 0xffa00001], np.uint32).view(np.float32)  # NaNs with payloads
vals = np.resize(np.concatenate([edge, payload]), 256).astype(np.float32)
rng.shuffle(vals)
bits = lambda a: a.view(np.uint32)
"""


def test_negative_offsets_and_local_tiles_move_edge_values_exactly(python_with_icd):
    run(python_with_icd, EDGE + """
p = cl.Program(ctx, '''
kernel void shift(global float *o, global const float *in) {      /* repairs 1 and 14 */
  int i = get_global_id(0); o[i] = i > 0 ? in[i - 1] : in[255]; }
kernel void back(global float *o, global const float *in) {       /* repair 1: p - 1 */
  const global float *q = in + 1; int i = get_global_id(0); o[i] = (q - 1)[i]; }
kernel void tile(global float *o, global const float *in) {       /* repairs 2, 3: local [16][16] */
  local float t[16][16]; int r = get_local_id(1), c = get_local_id(0);
  t[r][c] = in[r * 16 + c]; barrier(CLK_LOCAL_MEM_FENCE); o[r * 16 + c] = t[c][r]; }
''').build()
V, O = buf(vals), out(vals)
p.shift(q, (256,), None, O, V)
assert np.array_equal(bits(get(O, vals)), bits(np.roll(vals, 1)))
p.back(q, (255,), None, O, V)
assert np.array_equal(bits(get(O, vals))[:255], bits(vals)[:255])
p.tile(q, (16, 16), (16, 16), O, V)
assert np.array_equal(bits(get(O, vals)), bits(vals.reshape(16, 16).T.copy().ravel()))
print("OK")
""")


def test_kernels_beside_a_padded_struct_argument_move_edge_values_exactly(python_with_icd):
    """Repair 4: another kernel's push-constant block is pruned from an entry point."""
    run(python_with_icd, EDGE + """
p = cl.Program(ctx, '''
typedef struct { char c; float f; short s; double d; } padded;
kernel void take(global float *o, padded v) { o[0] = v.f; o[1] = (float)v.c; o[2] = (float)v.s; o[3] = (float)v.d; }
kernel void copy(global float *o, global const float *in, float k) { int i = get_global_id(0); o[i] = in[i] * k; }
''').build()
dt = np.dtype([("c", np.int8), ("f", np.float32), ("s", np.int16), ("d", np.float64)], align=True)
V, O = buf(vals), out(vals)
for f in edge:
    s = np.zeros(1, dt); s["c"], s["f"], s["s"], s["d"] = -7, f, 1234, -0.0
    p.take(q, (1,), None, O, s)
    r = get(O, vals)[:4]
    assert bits(r[:1])[0] == bits(np.array([f], np.float32))[0] and r[1] == -7 and r[2] == 1234
    assert bits(r[3:4])[0] == 0x80000000  # -0.0
p.copy(q, (256,), None, O, V, np.float32(1.0))
assert np.array_equal(bits(get(O, vals))[~np.isnan(vals)], bits(vals)[~np.isnan(vals)])
print("OK")
""")


def test_wide_bitcasts_move_edge_doubles_exactly(python_with_icd):
    # repair 17: a 64-bit value reinterpreted as 16- or 8-bit lanes goes through two 32-bit
    # integers; the bits of NaN payloads, infinities, -0 and denormals come through unchanged
    run(python_with_icd, """
import struct
d = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 5e-324, -2.2250738585072009e-308, 1.7976931348623157e308,
              struct.unpack('<d', struct.pack('<Q', 0x7FF0000000000001))[0],
              struct.unpack('<d', struct.pack('<Q', 0xFFF8DEADBEEF0001))[0], 1.0, -3.5], np.float64)
p = cl.Program(ctx, '''
kernel void k(global const double *d, global ushort *s, global uchar *c) {
  int i = get_global_id(0); volatile double v = d[i];
  vstore4(as_ushort4(v), i, s); vstore8(as_uchar8(d[i]), i, c); }''').build()
S, C = out(np.zeros(4 * len(d), np.uint16)), out(np.zeros(8 * len(d), np.uint8))
p.k(q, (len(d),), None, buf(d), S, C)
assert np.array_equal(get(S, np.zeros(4 * len(d), np.uint16)), d.view(np.uint16))
assert np.array_equal(get(C, np.zeros(8 * len(d), np.uint8)), d.view(np.uint8))
print("OK")
""")
