"""as_<type>n() of a 64-bit value the driver can know (repair 17, vkcl/compiler/spirv_bitcasts.py:
lavapipe lost the bytes above the lowest 32 of such a bitcast to 8- or 16-bit elements)."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")


def test_known_64_bit_values_reinterpreted_as_narrow_vectors(python_with_icd):
    run(python_with_icd, """
src = '''kernel void k(global ushort *s, global uchar *c, global uint *u, global ushort *r, ulong w) {
  volatile ulong v = 0x8000000000000002UL; volatile double d = 3.141592653589793;
  vstore4(as_ushort4(v), 0, s); vstore4(as_ushort4(d), 1, s);
  vstore8(as_uchar8(v), 0, c); vstore2(as_uint2(v), 0, u); vstore4(as_ushort4(w), 0, r); }'''
p = cl.Program(ctx, src).build()
S, C, U, R = (buf(np.zeros(n, t)) for n, t in ((8, np.uint16), (8, np.uint8), (2, np.uint32), (4, np.uint16)))
p.k(q, (1,), None, S, C, U, R, np.uint64(0x8000000000000002))
v = np.array([0x8000000000000002], np.uint64)
assert np.array_equal(get(S, np.zeros(8, np.uint16)), np.concatenate([v.view(np.uint16), np.array([np.pi]).view(np.uint16)]))
assert np.array_equal(get(C, np.zeros(8, np.uint8)), v.view(np.uint8))
assert np.array_equal(get(U, np.zeros(2, np.uint32)), v.view(np.uint32))
assert np.array_equal(get(R, np.zeros(4, np.uint16)), v.view(np.uint16))
print("OK")
""")
