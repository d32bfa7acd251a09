"""Scalar arguments a kernel converts to double are converted by the runtime into push constants
of their own (vkcl/compiler/spirv_args.py); kernels see the same values as the conversion in the
shader would give, for every source type, with the global offset and region offsets clspv keeps
in the same block, across repeated launches (the launch fast path) and changed arguments."""
import pytest

pytest.importorskip("pyopencl")

CODE = r"""
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = p.get_devices()[0]
if not dev.double_fp_config:
    print("no fp64")
    raise SystemExit(0)
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
src = '''
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void scalars(global double *o, float f, char c, uchar uc, short s, ushort us, int i, uint u) {
    size_t g = get_global_id(0);
    double x = (double)g;
    o[8 * g] = x * (double)f; o[8 * g + 1] = x + (double)c; o[8 * g + 2] = x + (double)uc;
    o[8 * g + 3] = x + (double)s; o[8 * g + 4] = x + (double)us; o[8 * g + 5] = x + (double)i;
    o[8 * g + 6] = x + (double)u; o[8 * g + 7] = (double)f;
}
kernel void with_offset(global double *o, float2 v, float f) {
    size_t g = get_global_id(0);
    o[2 * (g - get_global_offset(0))] = mad((double)g, (double)v.y, (double)f);
    o[2 * (g - get_global_offset(0)) + 1] = (double)v.x;
}
'''
prg = cl.Program(ctx, src).build("-cl-std=CL3.0")  # non-uniform work-groups
n = 300  # not a multiple of the work-group size below: two dispatch regions
out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 8 * 8)
g = np.arange(n, dtype=np.float64)
cases = [(np.float32(1.5), -128, 255, -32768, 65535, -2**31, 2**32 - 1),
         (np.float32(-3.25e-3), 7, 0, 1234, 1, 2**31 - 1, 0),
         (np.float32(np.inf), -1, 1, -1, 0, -7, 12345678),
         (np.float32(3.4e38), 0, 200, 32767, 40000, 0, 2**31)]
scalars, with_offset = cl.Kernel(prg, "scalars"), cl.Kernel(prg, "with_offset")
checked = 0
for f, c, uc, s, us, i, u in cases:
    for _ in range(3):  # the first launch, then repeats
        scalars(q, (n,), (64,), out, f, np.int8(c), np.uint8(uc), np.int16(s), np.uint16(us), np.int32(i),
                    np.uint32(u))
        got = np.empty(n * 8)
        cl.enqueue_copy(q, got, out)
        got = got.reshape(n, 8)
        want = np.stack([g * np.float64(f), g + c, g + uc, g + s, g + us, g + i, g + u,
                         np.full(n, np.float64(f))], axis=1)
        assert np.array_equal(got, want, equal_nan=True), (f, c, uc, s, us, i, u, got[:2], want[:2])
        checked += 1
for off in (0, 1000):
    for vx, vy, f in ((0.5, 2.0, 1.0), (-1e-3, 0.25, 7.5)):
        k = with_offset
        k.set_args(out, np.array([vx, vy], np.float32), np.float32(f))
        cl.enqueue_nd_range_kernel(q, k, (n,), (64,), global_work_offset=(off,))
        got = np.empty(2 * n)
        cl.enqueue_copy(q, got, out)
        gg = np.arange(off, off + n, dtype=np.float64)
        want = np.stack([gg * np.float64(np.float32(vy)) + np.float64(np.float32(f)),
                         np.full(n, np.float64(np.float32(vx)))], axis=1).ravel()
        assert np.array_equal(got, want), (off, vx, vy, f, got[:4], want[:4])
        checked += 1
# Past the push-constant budget: 40 float arguments (clspv may move them to a uniform buffer),
# and 28 (only some conversions fit beside them): the same sums, whichever way each arrived.
for count in (40, 28):
    names = [f"a{i}" for i in range(count)]
    many = cl.Kernel(cl.Program(ctx, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                                f"kernel void many(global double *o, {', '.join('float ' + a for a in names)}) {{"
                                f" o[get_global_id(0)] = {' + '.join('(double)' + a for a in names)}"
                                " + (double)get_global_id(0); }").build(), "many")
    vals = np.random.default_rng(count).standard_normal(count).astype(np.float32)
    many(q, (64,), None, out, *vals)
    got = np.empty(64)
    cl.enqueue_copy(q, got, out)
    # the kernel adds left to right, as cumsum does
    assert np.array_equal(got, np.cumsum(vals.astype(np.float64))[-1] + np.arange(64)), (count, got[:2])
    checked += 1
print("checked", checked)
"""


def test_arguments_converted_to_double_by_the_runtime(python_with_icd):
    result = python_with_icd(CODE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked 18" in result.stdout or "no fp64" in result.stdout, result.stdout
