"""Real kernels through pyopencl on vkcl, each result checked against numpy."""
import pytest

pytest.importorskip("pyopencl")

HEADER = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
rng = np.random.default_rng(1234)
def buf(a, flags=mf.READ_WRITE):
    return cl.Buffer(ctx, flags | mf.COPY_HOST_PTR, hostbuf=a)
def out(like):
    return cl.Buffer(ctx, mf.READ_WRITE, like.nbytes)
def get(b, like):
    r = np.empty_like(like); cl.enqueue_copy(q, r, b); q.finish(); return r
"""


def run(python_with_icd, body: str, expect: str = "OK"):
    result = python_with_icd(HEADER + body, timeout=300, env={"PYOPENCL_COMPILER_OUTPUT": "0"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert expect in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_vector_add(python_with_icd):
    run(python_with_icd, """
n = 1 << 20
a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
p = cl.Program(ctx, "kernel void add(global const float *a, global const float *b, global float *c)"
               "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }").build()
C = out(a)
p.add(q, (n,), None, buf(a), buf(b), C)
assert np.array_equal(get(C, a), a + b)
print("OK")
""")


@pytest.mark.parametrize("dtype,ctype", [("float32", "float"), ("float64", "double")])
def test_saxpy(python_with_icd, dtype, ctype):
    run(python_with_icd, f"""
n = 100003
x, y = rng.random(n).astype(np.{dtype}), rng.random(n).astype(np.{dtype})
src = '''
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void saxpy({ctype} a, global const {ctype} *x, global {ctype} *y, uint n)
{{ size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i]; }}'''
p = cl.Program(ctx, src).build()
Y = buf(y)
p.saxpy(q, (n,), None, np.{dtype}(2.5), buf(x), Y, np.uint32(n))
assert np.allclose(get(Y, y), 2.5 * x + y, rtol=1e-6)
print("OK")
""")


def test_reduction_with_local_argument_and_barriers(python_with_icd):
    run(python_with_icd, """
n, wg = 1 << 18, 128
a = rng.integers(0, 100, n).astype(np.int32)
p = cl.Program(ctx, '''
kernel void reduce(global const int *in, global int *partial, local int *scratch) {
  size_t l = get_local_id(0);
  scratch[l] = in[get_global_id(0)];
  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < s) scratch[l] += scratch[l + s];
  }
  if (l == 0) partial[get_group_id(0)] = scratch[0];
}''').build()
groups = n // wg
P = cl.Buffer(ctx, mf.READ_WRITE, groups * 4)
p.reduce(q, (n,), (wg,), buf(a), P, cl.LocalMemory(wg * 4))
partial = get(P, np.empty(groups, np.int32))
assert np.array_equal(partial, a.reshape(groups, wg).sum(axis=1)), partial[:8]
print("OK")
""")


def test_tiled_sgemm_with_local_memory(python_with_icd):
    run(python_with_icd, """
M = N = K = 256
T = 16
A = rng.random((M, K), dtype=np.float32); B = rng.random((K, N), dtype=np.float32)
p = cl.Program(ctx, '''
#define T 16
kernel void sgemm(global const float *A, global const float *B, global float *C, int M, int N, int K) {
  local float As[T][T], Bs[T][T];
  int r = get_local_id(1), c = get_local_id(0);
  int row = get_global_id(1), col = get_global_id(0);
  float acc = 0.0f;
  for (int t = 0; t < K; t += T) {
    As[r][c] = A[row * K + t + c];
    Bs[r][c] = B[(t + r) * N + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < T; k++) acc += As[r][k] * Bs[k][c];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[row * N + col] = acc;
}''').build()
C = out(np.empty((M, N), np.float32))
p.sgemm(q, (N, M), (T, T), buf(A), buf(B), C, np.int32(M), np.int32(N), np.int32(K))
assert np.allclose(get(C, np.empty((M, N), np.float32)), A @ B, rtol=1e-4, atol=1e-3)
print("OK")
""")


def test_histogram_with_global_atomics(python_with_icd):
    run(python_with_icd, """
n, bins = 1 << 18, 256
data = rng.integers(0, bins, n).astype(np.uint32)
p = cl.Program(ctx, '''
kernel void hist(global const uint *data, global uint *h) { atomic_inc(&h[data[get_global_id(0)]]); }
''').build()
H = buf(np.zeros(bins, np.uint32))
p.hist(q, (n,), None, buf(data), H)
assert np.array_equal(get(H, np.zeros(bins, np.uint32)), np.bincount(data, minlength=bins).astype(np.uint32))
print("OK")
""")


def test_prefix_scan(python_with_icd):
    run(python_with_icd, """
wg, groups = 256, 64
n = wg * groups
a = rng.integers(0, 10, n).astype(np.int32)
p = cl.Program(ctx, '''
kernel void scan_block(global const int *in, global int *out, global int *sums, local int *tmp) {
  size_t l = get_local_id(0), n = get_local_size(0);
  tmp[l] = in[get_global_id(0)];
  for (size_t d = 1; d < n; d *= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = l >= d ? tmp[l - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[l] += v;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tmp[l];
  if (l == n - 1) sums[get_group_id(0)] = tmp[l];
}
kernel void add_offsets(global int *out, global const int *offsets) {
  out[get_global_id(0)] += offsets[get_group_id(0)];
}''').build()
O = out(a); S = cl.Buffer(ctx, mf.READ_WRITE, groups * 4)
p.scan_block(q, (n,), (wg,), buf(a), O, S, cl.LocalMemory(wg * 4))
sums = get(S, np.empty(groups, np.int32))
offsets = np.concatenate([[0], np.cumsum(sums)[:-1]]).astype(np.int32)
p.add_offsets(q, (n,), (wg,), O, buf(offsets))
assert np.array_equal(get(O, a), np.cumsum(a).astype(np.int32))
print("OK")
""")


def test_nbody_float4(python_with_icd):
    run(python_with_icd, """
n = 512
pos = np.concatenate([rng.random((n, 3), dtype=np.float32), rng.random((n, 1), dtype=np.float32) + 0.5], axis=1)
p = cl.Program(ctx, '''
kernel void accel(global const float4 *pos, global float4 *acc, int n, float eps2) {
  size_t i = get_global_id(0);
  float4 pi = pos[i], a = (float4)(0.0f);
  for (int j = 0; j < n; j++) {
    float4 d = pos[j] - pi; d.w = 0.0f;
    float r2 = dot(d, d) + eps2;
    float inv = rsqrt(r2);
    a += d * (pos[j].w * inv * inv * inv);
  }
  acc[i] = a;
}''').build()
A = out(pos)
p.accel(q, (n,), (64,), buf(pos), A, np.int32(n), np.float32(0.01))
got = get(A, pos)[:, :3]
d = pos[None, :, :3] - pos[:, None, :3]
r2 = (d * d).sum(-1) + 0.01
want = (d * (pos[None, :, 3] / r2 ** 1.5)[..., None]).sum(1)
assert np.allclose(got, want, rtol=1e-3, atol=1e-3), np.abs(got - want).max()
print("OK")
""")


def test_mandelbrot(python_with_icd):
    run(python_with_icd, """
w, h, it = 256, 192, 64
p = cl.Program(ctx, '''
kernel void mandel(global int *out, int w, int h, int max_it) {
  int x = get_global_id(0), y = get_global_id(1);
  float cr = -2.0f + 3.0f * x / w, ci = -1.0f + 2.0f * y / h, zr = 0.0f, zi = 0.0f;
  int i = 0;
  while (i < max_it && zr * zr + zi * zi <= 4.0f) { float t = zr * zr - zi * zi + cr; zi = 2.0f * zr * zi + ci; zr = t; i++; }
  out[y * w + x] = i;
}''').build()
O = cl.Buffer(ctx, mf.WRITE_ONLY, w * h * 4)
p.mandel(q, (w, h), (16, 16), O, np.int32(w), np.int32(h), np.int32(it))
got = get(O, np.empty((h, w), np.int32))
x, y = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
c = (np.float32(-2) + np.float32(3) * x / np.float32(w)) + 1j * (np.float32(-1) + np.float32(2) * y / np.float32(h))
z = np.zeros_like(c); n = np.zeros(c.shape, np.int32); alive = np.ones(c.shape, bool)
for i in range(it):
    alive &= (z.real ** 2 + z.imag ** 2) <= 4
    z[alive] = z[alive] ** 2 + c[alive]; n[alive] += 1
mismatch = (got != n).mean()
assert mismatch < 0.01, mismatch  # float rounding at the set's edge
print("OK")
""")


def test_2d_stencil_with_global_offset(python_with_icd):
    run(python_with_icd, """
w, h = 130, 66
a = rng.random((h, w), dtype=np.float32)
p = cl.Program(ctx, '''
kernel void stencil(global const float *in, global float *out, int w) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * w + x] = 0.2f * (in[y * w + x] + in[y * w + x - 1] + in[y * w + x + 1] + in[(y - 1) * w + x] + in[(y + 1) * w + x]);
}''').build()
O = buf(np.zeros_like(a))
p.stencil(q, (w - 2, h - 2), None, buf(a), O, np.int32(w), global_offset=(1, 1))
got = get(O, a)
want = np.zeros_like(a)
want[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1])
assert np.allclose(got, want, atol=1e-6)
print("OK")
""")


def test_struct_argument(python_with_icd):
    run(python_with_icd, """
p = cl.Program(ctx, '''
typedef struct { float scale; int bias; float2 shift; } Params;
kernel void apply(global float *out, Params prm) {
  size_t i = get_global_id(0); out[i] = i * prm.scale + prm.bias + prm.shift.y;
}''').build()
params = np.zeros(1, dtype=[("scale", np.float32), ("bias", np.int32), ("shift", np.float32, 2)])
params["scale"], params["bias"], params["shift"] = 0.5, 3, (1.0, 10.0)
n = 1000
O = cl.Buffer(ctx, mf.WRITE_ONLY, n * 4)
p.apply(q, (n,), None, O, params)
assert np.allclose(get(O, np.empty(n, np.float32)), np.arange(n) * 0.5 + 3 + 10.0)
print("OK")
""")


def test_printf(python_with_icd):
    result = run(python_with_icd, """
p = cl.Program(ctx, '''
kernel void talk(int x, float f) {
  if (get_global_id(0) == 3) printf("item %d: x=%d f=%.2f hex=%x str=%s\\\\n", (int)get_global_id(0), x, f, 255, "ok");
}''').build()
p.talk(q, (8,), None, np.int32(42), np.float32(1.25))
q.finish()
print("OK")
""")
    assert "item 3: x=42 f=1.25 hex=ff str=ok" in result.stdout, result.stdout


def test_3d_ndrange_with_null_local_size(python_with_icd):
    run(python_with_icd, """
X, Y, Z = 24, 10, 6
p = cl.Program(ctx, '''
kernel void ids(global int *out) {
  size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
  size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;
  out[i] = (int)(x + 100 * y + 10000 * z);
}''').build()
O = cl.Buffer(ctx, mf.WRITE_ONLY, X * Y * Z * 4)
p.ids(q, (X, Y, Z), None, O)
z, y, x = np.meshgrid(np.arange(Z), np.arange(Y), np.arange(X), indexing="ij")
assert np.array_equal(get(O, np.empty((Z, Y, X), np.int32)), x + 100 * y + 10000 * z)
print("OK")
""")


def test_grid_larger_than_max_work_group_count(python_with_icd):
    """More work-groups than one dispatch takes (maxComputeWorkGroupCount[0] is 65,535 on
    lavapipe): ids, get_global_size and get_num_groups are the launch's, not each dispatch's
    (they were 65,535 and the remainder: CTS half vstore_half*, repair 16)."""
    run(python_with_icd, """
p = cl.Program(ctx, '''kernel void ids(global uint *out) {
  size_t i = get_global_id(0), n = get_global_size(0);
  out[3 * i] = i * 3u; out[3 * i + 1] = n; out[3 * i + 2] = get_num_groups(0) * get_local_size(0); }
kernel void two_d(global uint *out) {
  size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
  out[i] = get_global_size(0) << 20 | get_global_size(1); }''').build()
for n, local in [(65535 * 2 + 7, (1,)), (65537, None), (100003, None), (65536, None)]:
    O = cl.Buffer(ctx, mf.WRITE_ONLY, 3 * n * 4)
    p.ids(q, (n,), local, O)
    got = get(O, np.empty(3 * n, np.uint32)).reshape(n, 3)
    assert np.array_equal(got[:, 0], np.arange(n, dtype=np.uint32) * 3), n
    assert (got[:, 1] == n).all() and (got[:, 2] == n).all(), (n, np.unique(got[:, 1:]))
O = cl.Buffer(ctx, mf.WRITE_ONLY, 3 * 65537 * 4)
p.two_d(q, (3, 65537), (1, 1), O)
assert (get(O, np.empty(3 * 65537, np.uint32)) == (3 << 20 | 65537)).all()
print("OK")
""")


def test_non_uniform_work_groups(python_with_icd):
    run(python_with_icd, """
n, wg = 1000, 64
p = cl.Program(ctx, '''
kernel void sizes(global int *out) {
  size_t i = get_global_id(0);
  out[3 * i] = get_local_size(0); out[3 * i + 1] = get_group_id(0); out[3 * i + 2] = get_enqueued_local_size(0);
}''').build(options=["-cl-std=CL2.0"])
O = cl.Buffer(ctx, mf.WRITE_ONLY, 3 * n * 4)
p.sizes(q, (n,), (wg,), O)
got = get(O, np.empty((n, 3), np.int32))
i = np.arange(n)
assert np.array_equal(got[:, 0], np.where(i < n - n % wg, wg, n % wg))
assert np.array_equal(got[:, 1], i // wg)
assert (got[:, 2] == wg).all()
print("OK")
""")


def test_arguments_are_captured_at_enqueue(python_with_icd):
    run(python_with_icd, """
p = cl.Program(ctx, "kernel void fill(global int *o, int v) { o[get_global_id(0)] = v; }").build()
k = p.fill
O1, O2 = cl.Buffer(ctx, mf.READ_WRITE, 64 * 4), cl.Buffer(ctx, mf.READ_WRITE, 64 * 4)
k.set_args(O1, np.int32(1)); cl.enqueue_nd_range_kernel(q, k, (64,), None)
k.set_args(O2, np.int32(2)); cl.enqueue_nd_range_kernel(q, k, (64,), None)
assert (get(O1, np.empty(64, np.int32)) == 1).all() and (get(O2, np.empty(64, np.int32)) == 2).all()
print("OK")
""")


def test_nan_is_a_quiet_nan_with_its_code(python_with_icd):
    """nan(code): a quiet NaN carrying the code, for float, double and their vectors (clspv's
    double builtin alone made nan(0UL) infinity: vkcl/compiler/prelude/nan.py)."""
    run(python_with_icd, """
src = '''
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global float *f, global double *d, global double2 *d2, global float4 *f4)
{
    f[0] = nan(0u); f[1] = nan(5u);
    d[0] = nan(0ul); d[1] = nan(7ul);
    d2[0] = nan((ulong2)(0, 9));
    f4[0] = nan((uint4)(0, 1, 2, 3));
}
'''
if "cl_khr_fp64" not in dev.extensions:
    print("OK"); raise SystemExit
p = cl.Program(ctx, src).build()
f, d, d2, f4 = np.zeros(2, np.float32), np.zeros(2, np.float64), np.zeros(2, np.float64), np.zeros(4, np.float32)
F, D, D2, F4 = out(f), out(d), out(d2), out(f4)
p.k(q, (1,), None, F, D, D2, F4)
f, d, d2, f4 = get(F, f), get(D, d), get(D2, d2), get(F4, f4)
assert np.isnan(f).all() and np.isnan(d).all() and np.isnan(d2).all() and np.isnan(f4).all(), (f, d, d2, f4)
bits = d.view(np.uint64)
assert bits[0] == 0x7FF8000000000000 and bits[1] == 0x7FF8000000000007, [hex(b) for b in bits]
assert d2.view(np.uint64)[1] & 0xFFFFFFFFFFFF == 9 and (f.view(np.uint32) & 0x400000).all()
print("OK")
""")


def test_printf_returns_zero(python_with_icd):
    """printf returns 0 when it succeeds (clspv's lowering made it 1: vkcl/compiler/spirv_printf.py)."""
    result = run(python_with_icd, """
p = cl.Program(ctx, 'kernel void k(global int *r, int v) { r[get_global_id(0)] = printf("ret %d\\\\n", v); }').build()
r = np.full(4, 7, np.int32)
R = buf(r)
p.k(q, (4,), None, R, np.int32(3))
assert (get(R, r) == 0).all(), get(R, r)
print("OK")
""")
    assert result.stdout.count("ret 3") == 4
