"""PolyBench's correlation and covariance (as its OpenCL port writes them: one work-item a column,
and for the last kernel a column's row of the matrix, in nested loops of m x n trips), which
gave wrong results on lavapipe before its long loops were resumed: a work-item of the symmetric
matrix's kernel loops (m - j) x n times, past llvmpipe's 65,535 back-edges per batch even
unrolled (with VKCL_RESUME_LOOPS=0 the launches fail as cut).
Checked against float64 references, within the error bound of n-term float32 sums (the order
of the sums is the kernels'; contraction into fused multiply-adds is allowed, so the bound
covers both)."""
import pytest

from checks import run_ok

pytest.importorskip("pyopencl")

SCRIPT = r"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]]); q = cl.CommandQueue(ctx); mf = cl.mem_flags
src = '''
kernel void mean_kernel(global float *mean, global const float *data, float float_n, int m, int n) {
  int j = get_global_id(0);
  if (j < m) { mean[j] = 0.0f; for (int i = 0; i < n; i++) mean[j] += data[i * m + j]; mean[j] /= float_n; } }
kernel void std_kernel(global const float *mean, global float *std, global const float *data, float float_n,
                       float eps, int m, int n) {
  int j = get_global_id(0);
  if (j < m) {
    std[j] = 0.0f;
    for (int i = 0; i < n; i++) std[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
    std[j] = sqrt(std[j] / float_n);
    if (std[j] <= eps) std[j] = 1.0f; } }
kernel void center_kernel(global const float *mean, global const float *std, global float *data, float float_n,
                          int scale, int m, int n) {
  int j = get_global_id(0), i = get_global_id(1);
  if (i < n && j < m) { data[i * m + j] -= mean[j]; if (scale) data[i * m + j] /= sqrt(float_n) * std[j]; } }
kernel void sym_kernel(global float *symmat, global const float *data, float diagonal, float divisor, int m, int n) {
  int j1 = get_global_id(0);
  if (j1 < m) {
    for (int j2 = j1; j2 < m; j2++) {
      symmat[j1 * m + j2] = 0.0f;
      for (int i = 0; i < n; i++) symmat[j1 * m + j2] += data[i * m + j1] * data[i * m + j2];
      symmat[j1 * m + j2] /= divisor;
      if (j2 == j1 && diagonal != 0.0f) symmat[j1 * m + j2] = diagonal;
      symmat[j2 * m + j1] = symmat[j1 * m + j2]; } } }
'''
prg = cl.Program(ctx, src).build()
m, n = 128, 9000  # sym_kernel's first work-item: 128 x 9,000 trips, 72,000 back-edges unrolled 16 times
rng = np.random.default_rng(11)
data0 = (rng.random((n, m)) * 4 + np.arange(m) / m).astype(np.float32)
eps = np.float32(0.005)
f32 = np.finfo(np.float32).eps
for kind in ("covariance", "correlation"):
    d = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data0)
    mean, std, sym = (cl.Buffer(ctx, mf.READ_WRITE, 4 * k) for k in (m, m, m * m))
    prg.mean_kernel(q, (m,), None, mean, d, np.float32(n), np.int32(m), np.int32(n))
    if kind == "correlation":
        prg.std_kernel(q, (m,), None, mean, std, d, np.float32(n), eps, np.int32(m), np.int32(n))
    prg.center_kernel(q, (m, n), None, mean, std, d, np.float32(n), np.int32(kind == "correlation"), np.int32(m), np.int32(n))
    divisor = 1.0 if kind == "correlation" else n - 1.0
    prg.sym_kernel(q, (m,), None, sym, d, np.float32(1.0 if kind == "correlation" else 0.0), np.float32(divisor),
                   np.int32(m), np.int32(n))
    got = np.empty((m, m), np.float32); cl.enqueue_copy(q, got, sym)
    x = data0.astype(np.float64)
    c = x - x.mean(axis=0)
    if kind == "correlation":
        s = np.sqrt((c * c).mean(axis=0)); s[s <= eps] = 1.0
        c = c / (np.sqrt(n) * s)
    want = c.T @ c / divisor
    if kind == "correlation":
        np.fill_diagonal(want, 1.0)
    # a sum of n float32 terms errs by at most about n * eps * the sum of |terms|, and the
    # centring and scaling by a few more roundings of each term
    bound = (n + 8) * f32 * (np.abs(c).T @ np.abs(c)) / divisor + 1e-30
    err = np.abs(got - want)
    assert (err <= bound).all(), (kind, float((err / bound).max()), np.argwhere(err > bound)[:5])
    assert np.array_equal(got, got.T), kind
print("OK")
"""


def test_polybench_correlation_and_covariance(python_with_icd):
    run_ok(python_with_icd, SCRIPT)
