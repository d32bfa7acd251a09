"""rint, trunc, round and the _rte conversions of doubles (compiler/spirv_round_even.py): on
lavapipe, on an AMD EPYC with AVX2, rint(1.5) gave 1.0, rint(-1.5) -1.0 and rint(3.5) 3.0, and
every convert_<integer>_rte(double) with them (tests/icd/test_conversions.py failed for eight
destination types); trunc(-0.3), trunc(-0.0) and round(-0.3) gave +0.0. Checked bit for bit
against numpy on halves, values next to halves, NaN, infinities, signed zeros, denormals and
values past 2^52, as scalars and double4."""
import pytest

from checks import run_ok

pytest.importorskip("pyopencl")

ROUND_EVEN = r"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
src = '''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global const double *a, global double *r, global double4 *r4, global int *c, global long *l,
              global double *tr, global double *rd) {
    size_t i = get_global_id(0);
    tr[i] = trunc(a[i]); rd[i] = round(a[i]); r[i] = rint(a[i]);  // (trunc's constant 0.0 first)
    c[i] = convert_int_sat_rte(a[i]);
    l[i] = convert_long_sat_rte(a[i]);
    if (i % 4 == 0) r4[i / 4] = rint(vload4(i / 4, a));
}'''
halves = [k + 0.5 for k in range(-8, 8)]
near = [np.nextafter(h, 0.0) for h in halves] + [np.nextafter(h, 2 * h if h else 1.0) for h in halves]
special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, -1e-300,
           0.49999999999999994, -0.49999999999999994, 2.0 ** 52, 2.0 ** 52 + 1, -(2.0 ** 52) - 1, 2.0 ** 53 - 1,
           2.0 ** 52 - 0.5, -(2.0 ** 52) + 0.5, 1e300, -1e300, 2147483647.5, -2147483648.5, 1.7976931348623157e308]
a = np.array(halves + near + special, np.float64)
a = np.concatenate([a, np.zeros((-len(a)) % 4)])
n = len(a)
prg = cl.Program(ctx, src).build()
mf = cl.mem_flags
ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
r, r4 = cl.Buffer(ctx, mf.READ_WRITE, 8 * n), cl.Buffer(ctx, mf.READ_WRITE, 8 * n)
c, l = cl.Buffer(ctx, mf.READ_WRITE, 4 * n), cl.Buffer(ctx, mf.READ_WRITE, 8 * n)
tr, rd = cl.Buffer(ctx, mf.READ_WRITE, 8 * n), cl.Buffer(ctx, mf.READ_WRITE, 8 * n)
prg.k(q, (n,), None, ab, r, r4, c, l, tr, rd)
got, got4, gtr, grd = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
gc, gl = np.empty(n, np.int32), np.empty(n, np.int64)
for buf, out in ((r, got), (r4, got4), (c, gc), (l, gl), (tr, gtr), (rd, grd)):
    cl.enqueue_copy(q, out, buf)
want = np.rint(a)
t = np.trunc(a)
with np.errstate(invalid="ignore"):
    away = np.where(np.abs(a - t) >= 0.5, t + np.sign(a), t)  # halves away from zero, exactly
want_round = np.where(np.isfinite(a), np.copysign(away, a), a)
for name, g, w in (("trunc", gtr, t), ("round", grd, want_round)):
    wrong = [(x, gg, ww) for x, gg, ww in zip(a, g, w) if gg.tobytes() != ww.tobytes() and not (np.isnan(gg) and np.isnan(ww))]
    assert not wrong, (name, wrong[:6])
bad = [(x, g, w) for x, g, w in zip(a, got, want) if g.tobytes() != w.tobytes() and not (np.isnan(g) and np.isnan(w))]
bad4 = [(x, g, w) for x, g, w in zip(a, got4, want) if g.tobytes() != w.tobytes() and not (np.isnan(g) and np.isnan(w))]
def sat(w, lo, hi):
    return 0 if np.isnan(w) else int(min(max(w, lo), hi))
badc = [(x, g, sat(w, -2**31, 2**31 - 1)) for x, g, w in zip(a, gc, want) if g != sat(w, -2**31, 2**31 - 1)]
badl = [(x, g, sat(w, -2**63, 2**63 - 1)) for x, g, w in zip(a, gl, want)
        if g != sat(w, -2**63, 2**63 - 1) and abs(w) < 2.0 ** 63]
assert not (bad or bad4 or badc or badl), (bad[:6], bad4[:6], badc[:6], badl[:6])
print("OK", n)
"""


def test_rint_and_rte_conversions_of_doubles(python_with_icd):
    run_ok(python_with_icd, ROUND_EVEN)
