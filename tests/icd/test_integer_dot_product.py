"""cl_khr_integer_dot_product (where Vulkan has shaderIntegerDotProduct; lavapipe does): the
device queries, and every 8-bit dot built-in clspv declares against numpy, in OpenCL C 1.2 and
3.0."""
import pytest

pytest.importorskip("pyopencl")

CODE = r'''
import numpy as np, pyopencl as cl
import ctypes
p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = p.get_devices()[0]
assert "cl_khr_integer_dot_product" in dev.extensions, dev.extensions
ocl = ctypes.CDLL("libOpenCL.so.1")
info = ocl.clGetDeviceInfo
info.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
caps, size = ctypes.c_uint64(), ctypes.c_size_t()
assert info(dev.int_ptr, 0x1073, 8, ctypes.byref(caps), ctypes.byref(size)) == 0 and size.value == 8
assert caps.value == 3, caps.value  # INPUT_4x8BIT_PACKED | INPUT_4x8BIT
for param in (0x1074, 0x1075):  # acceleration properties: six cl_bool
    props = (ctypes.c_uint32 * 6)()
    assert info(dev.int_ptr, param, 24, props, ctypes.byref(size)) == 0 and size.value == 24
    assert all(v in (0, 1) for v in props)
    assert info(dev.int_ptr, param, 23, props, None) == -30  # CL_INVALID_VALUE: too small
ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
src = """
kernel void dots(global int *o, global const uchar4 *ua, global const uchar4 *ub, global const char4 *sa, global const char4 *sb,
                 global const uint *pa, global const uint *pb) {
  size_t i = get_global_id(0);
  o[8*i+0] = (int)dot(ua[i], ub[i]);
  o[8*i+1] = dot(sa[i], sb[i]);
  o[8*i+2] = dot(sa[i], ub[i]);
  o[8*i+3] = (int)dot_4x8packed_uu_uint(pa[i], pb[i]);
  o[8*i+4] = dot_4x8packed_ss_int(pa[i], pb[i]);
  o[8*i+5] = dot_acc_sat(sa[i], sb[i], 0x7ffffff0);
  o[8*i+6] = (int)dot_acc_sat(ua[i], ub[i], 0xfffffff0u);
  o[8*i+7] = dot_acc_sat(sa[i], ub[i], -100);
}"""
n = 4096
rng = np.random.default_rng(7)
ua, ub = rng.integers(0, 256, (n, 4), dtype=np.uint8), rng.integers(0, 256, (n, 4), dtype=np.uint8)
sa, sb = rng.integers(-128, 128, (n, 4), dtype=np.int8), rng.integers(-128, 128, (n, 4), dtype=np.int8)
pa, pb = ua.view(np.uint32).ravel(), ub.view(np.uint32).ravel()
mf = cl.mem_flags
bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x) for x in (ua, ub, sa, sb, pa, pb)]
out = np.empty((n, 8), np.int32); ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
for opts in ("", "-cl-std=CL3.0"):
    prg = cl.Program(ctx, src).build(options=opts)
    prg.dots(q, (n,), None, ob, *bufs)
    cl.enqueue_copy(q, out, ob)
    U, V, S, T = (x.astype(np.int64) for x in (ua, ub, sa, sb))
    pa8s, pb8s = ua.view(np.int8).astype(np.int64), ub.view(np.int8).astype(np.int64)
    want = np.stack([(U * V).sum(1), (S * T).sum(1), (S * V).sum(1), (U * V).sum(1), (pa8s * pb8s).sum(1),
                     np.minimum((S * T).sum(1) + 0x7ffffff0, 2**31 - 1),
                     np.minimum((U * V).sum(1) + 0xfffffff0, 2**32 - 1),
                     (S * V).sum(1) - 100], 1)
    want = (want & 0xffffffff).astype(np.uint32).view(np.int32)
    assert (out == want).all(), (opts, np.argwhere(out != want)[:5], out[:2], want[:2])
    print(opts or "CL1.2", "ok")
print("DOT OK")
'''


def test_integer_dot_product(python_with_icd):
    result = python_with_icd(CODE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "DOT OK" in result.stdout, result.stdout
