"""A counted loop's final value in closed form (compiler/spirv_odd_widths.py): LLVM takes the
product of a sum's closed form in one bit more than its type, which clspv wrote as an
`OpTypeInt 40` (24 for a ushort, 72 for a ulong) that no Vulkan pipeline takes: the launch
failed with CL_OUT_OF_RESOURCES on lavapipe and NVIDIA. Each result is exact against the host's
modular arithmetic, at trip counts where the closed form's product passes 32 bits (and 16, and
64) and at the types' extremes."""
import pytest

from checks import run_ok

pytest.importorskip("pyopencl")

SCRIPT = r"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]]); q = cl.CommandQueue(ctx); mf = cl.mem_flags
def run(src, dtype, *args):
    o = cl.Buffer(ctx, mf.READ_WRITE, 8)
    cl.Program(ctx, src).build().k(q, (1,), (1,), o, *args)
    r = np.empty(1, dtype); cl.enqueue_copy(q, r, o)
    return int(r[0])
U32 = [0, 1, 2, 3, 7, 65535, 65536, 65537, 92681, 92682, 92683, 123456789, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, 2**32 - 1]
sums = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s += i; o[0] = s; }"
squares = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s += i * i; o[0] = s; }"
affine = "kernel void k(global uint *o, uint n, uint a) { uint s = 0; for (uint i = 0; i < n; i++) s += i * a + 3u; o[0] = s; }"
for n in U32:
    assert run(sums, np.uint32, np.uint32(n)) == (n * (n - 1) // 2) % 2**32, n
# where llvmpipe's forced unrolling keeps these loops they run as written: trip counts to 131,073
for n in [x for x in U32 if x < 2**17] + [2**17 + 1]:
    assert run(squares, np.uint32, np.uint32(n)) == (n * (n - 1) * (2 * n - 1) // 6) % 2**32, n
    for a in (0, 1, 0xFFFFFFFF, 0x9E3779B9):
        assert run(affine, np.uint32, np.uint32(n), np.uint32(a)) == (a * (n * (n - 1) // 2) + 3 * n) % 2**32, (n, a)
# signed: a range through zero, the extremes
ints = "kernel void k(global int *o, int n) { int s = 0; for (int i = -n; i < n; i++) s += i * 3; o[0] = s; }"
for n in (0, 1, 5, 46341, 2**30, 2**31 - 1):
    want = sum(3 * i for i in range(-n, n)) if n < 100 else (3 * (-n)) % 2**32  # pairs cancel: only -n is left
    assert run(ints, np.int32, np.int32(n)) % 2**32 == want % 2**32, n
shorts = "kernel void k(global ushort *o, ushort n) { ushort s = 0; for (ushort i = 0; i < n; i++) s += i; o[0] = s; }"
for n in (0, 1, 255, 256, 257, 362, 363, 65535):
    assert run(shorts, np.uint16, np.uint16(n)) == (n * (n - 1) // 2) % 2**16, n
# a ulong sum: its closed form would take 65 bits, so it is built again to loop as written
longs = "kernel void k(global ulong *o, ulong n) { ulong s = 0; for (ulong i = 0; i < n; i++) s += i; o[0] = s; }"
for n in (0, 1, 2, 70000):
    assert run(longs, np.uint64, np.uint64(n)) == n * (n - 1) // 2, n
print("OK")
"""


def test_closed_forms_of_counted_loops_are_exact(python_with_icd):
    run_ok(python_with_icd, SCRIPT)
