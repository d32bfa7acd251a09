"""OpenCL C conversions on vkcl, exact: every convert_<dst><n>[_sat][_rnd] of every source type
and width (1, 2, 3, 4, 8, 16), and vload_half / vstore_half / vstorea_half of float and double,
against an exact host reference (conversion_reference.py: Python integers and fractions).
Floats compare bitwise, NaN as any NaN; a float denormal may be flushed to a zero of its sign
(vkcl's devices report no float denormals). Out-of-range float-to-integer results without _sat
are the implementation's and are not checked. vkcl/compiler/prelude/conversions.py says which
ones clspv got wrong; the reproducers below are the smallest kernels that crashed or hung it.
"""
from pathlib import Path

import pytest

from test_kernels_pyopencl import HEADER as PYOPENCL_HEADER
from vkcl.compiler.prelude.conversions import OWN

pytest.importorskip("pyopencl")

HERE = Path(__file__).resolve().parent
ENV = {"PYOPENCL_COMPILER_OUTPUT": "0", "PYOPENCL_NO_CACHE": "1"}
TYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "double")
MODES = ("", "_rte", "_rtz", "_rtp", "_rtn")
HEADER = PYOPENCL_HEADER + f"""
import sys
sys.path.insert(0, {str(HERE)!r})
flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
if "cl_khr_fp64" not in dev.extensions or "cl_khr_fp16" not in dev.extensions:
    print("OK (no fp64 or fp16)"); raise SystemExit
"""


def run(python_with_icd, body: str):
    result = python_with_icd(HEADER + body, timeout=600, env=ENV)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "OK" in result.stdout, result.stdout[-6000:] + result.stderr[-3000:]
    return result


def conversion_cases(dst: str) -> list[tuple]:
    """Every overload vkcl replaces, in every width; every other one in widths 1 and 3, and 16
    without a rounding mode. (lavapipe's compile of the kernels is most of the time: the whole
    product took 20 s per destination type; tests/icd/conversion_survey.py still runs it.)"""
    out = []
    for src in TYPES:
        for sat in ((False, True) if dst not in ("half", "float", "double") else (False,)):
            for mode in MODES:
                widths = (1, 2, 3, 4, 8, 16) if src in OWN.get((dst, sat, mode), ()) else \
                    (1, 3, 16) if mode == "" else (1, 3)
                out += [(dst, src, sat, mode, w) for w in widths]
    return out


@pytest.mark.parametrize("dst", TYPES)
def test_convert_every_source_and_mode(python_with_icd, dst):
    """convert_<dst> from all 11 source types, with and without _sat, in every rounding mode:
    one kernel per (dst, src) pair."""
    run(python_with_icd, f"""
from conversion_harness import Survey, name
s = Survey(cl, ctx, q, flush)
s.run({conversion_cases(dst)!r})
bad = [f"{{name(c[0], *c[2:])}}({{c[1]}}): {{n}} wrong, e.g. {{ex[:2]}}" for c, (n, ex) in sorted(s.wrong.items())]
bad += [f"{{name(c[0], *c[2:])}}({{c[1]}}): does not build" for c in s.build_failed]
assert not bad, chr(10).join(bad[:40])
assert s.checked > 5000, s.checked
print("OK", s.checked)
""")


@pytest.mark.parametrize("data", ["float", "double"])
def test_vstore_half_every_mode_and_width(python_with_icd, data):
    """vstore_half<n>[_rnd] and vstorea_half<n>[_rnd] of float or double (vstorea_half3 lands at
    offset * 4): every width and mode into global memory, and into local and private memory
    widths 1, 2, 3 and 16 (every width for float into local memory, which vkcl replaces); and
    vload_half<n> / vloada_half<n> from global, constant, local and private memory."""
    run(python_with_icd, f"""
from conversion_half_io import run_cases
wrong = {{}}
for space in ("global", "local", "private"):
    widths = (1, 2, 3, 4, 8, 16) if space == "global" or (space, "{data}") == ("local", "float") else (1, 2, 3, 16)
    for n in widths:
        cases = [("store", "{data}", n, m, a, space) for m in ("", "_rte", "_rtz", "_rtp", "_rtn")
                 for a in (False, True) if not (a and n == 1)]
        if "{data}" == "float":
            cases += [("load", "float", n, "", a, sp) for a in (False, True) if not (a and n == 1)
                      for sp in ((space, "constant") if space == "global" else (space,))]
        wrong.update(run_cases(cl, ctx, q, cases, flush))
assert not wrong, chr(10).join(f"{{c}}: {{v[0]}} wrong, e.g. {{v[1][:2]}}" for c, v in wrong.items())
print("OK")
""")


def test_compiler_crash_and_hang_reproducers_now_build_and_compute(python_with_icd):
    """The smallest kernels that crashed clspv (a call to convert_double or to vstore_half of a
    double: its library has no definition, and any call to an undefined function is a SIGSEGV)
    or hung it (vstore_half2 at a computed local pointer with offset 0)."""
    run(python_with_icd, r"""
src = '''
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void to_double(global const uint *u, global double *d) { d[0] = convert_double(u[0]); }
kernel void to_double4(global const uint4 *u, global double4 *d) { d[0] = convert_double4(u[0]); }
kernel void store_double(global const double *d, global half *h) { vstore_half(d[0], 0, h); }
kernel void store_local2(global const float *in, global ushort *out) {
  local half tmp[64 * 16];
  vstore_half2(vload2(0, in), 0, tmp + get_local_id(0) * 16);
  out[0] = as_ushort(tmp[get_local_id(0) * 16]); out[1] = as_ushort(tmp[get_local_id(0) * 16 + 1]);
}
'''
p = cl.Program(ctx, src).build()
mf = cl.mem_flags
u = np.array([4294967295, 1, 2, 16777217], np.uint32)
U = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=u)
D = cl.Buffer(ctx, mf.READ_WRITE, 32)
p.to_double(q, (1,), None, U, D)
d = np.zeros(1); cl.enqueue_copy(q, d, D)
assert d[0] == 4294967295.0, d
p.to_double4(q, (1,), None, U, D)
d = np.zeros(4); cl.enqueue_copy(q, d, D)
assert (d == u.astype(np.float64)).all(), d
X = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([1.0 + 2.0 ** -11 + 2.0 ** -40]))
H = cl.Buffer(ctx, mf.READ_WRITE, 4)
p.store_double(q, (1,), None, X, H)
h = np.zeros(2, np.uint16); cl.enqueue_copy(q, h, H)
assert h[0] == 0x3C01, hex(h[0])  # just above the halfway case: rounds up (via float it would tie to 1.0)
F = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([1.5, -2.0], np.float32))
p.store_local2(q, (1,), (1,), F, H)
cl.enqueue_copy(q, h, H)
assert list(h) == [0x3E00, 0xC000], [hex(x) for x in h]
print("OK")
""")


def test_builds_are_clean_in_every_language_version(python_with_icd):
    """A replaced conversion builds with -Werror and an empty log in OpenCL C 1.1 to 3.0 (the
    prelude's functions are internal without `static`, which 1.1 rejects, and it enables fp64
    only where enabling it does not warn)."""
    run(python_with_icd, r"""
src = '''
kernel void k(global const uint *u, global float *f, global int *i, global const float *x)
{ f[0] = convert_float_rtz(u[0]); i[0] = convert_int_sat(x[0]); }
'''
mf = cl.mem_flags
for std in ("CL1.1", "CL1.2", "CL2.0", "CL3.0"):
    p = cl.Program(ctx, src).build(f"-cl-std={std} -Werror")
    log = p.get_build_info(dev, cl.program_build_info.LOG).strip()
    assert not log, (std, log[:2000])
    U = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([16777217], np.uint32))
    Xs = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([np.nan], np.float32))
    F, I = cl.Buffer(ctx, mf.READ_WRITE, 4), cl.Buffer(ctx, mf.READ_WRITE, 4)
    p.k(q, (1,), None, U, F, I, Xs)
    f, i = np.zeros(1, np.float32), np.ones(1, np.int32)
    cl.enqueue_copy(q, f, F); cl.enqueue_copy(q, i, I)
    assert f[0] == 16777216.0 and i[0] == 0, (std, f, i)
print("OK")
""")


def test_half_stores_and_loads_through_generic_pointers(python_with_icd):
    """OpenCL C 2.0 programs get the generic-pointer overloads: vstore_half of double and
    vload_half16 through pointers to local and global memory."""
    run(python_with_icd, r"""
src = '''
void put(double4 v, half *p) { vstore_half4_rtz(v, 1, p); }
float16 get(const half *p) { return vload_half16(0, p); }
kernel void k(global const double4 *d, global half *h, global float16 *f) {
  local ushort bits[16];
  local half *tmp = (local half *)bits;
  put(d[0], h);
  put(d[0], tmp); put(d[0], tmp + 8); put(d[0], tmp - 4);
  barrier(CLK_LOCAL_MEM_FENCE);
  f[0] = get(tmp);
}
'''
p = cl.Program(ctx, src).build("-cl-std=CL2.0")
mf = cl.mem_flags
d = np.array([1.0 + 2.0 ** -10 - 2.0 ** -40, -65520.0, np.nan, 2.0 ** -25], np.float64)
D = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=d)
H, F = cl.Buffer(ctx, mf.READ_WRITE, 16), cl.Buffer(ctx, mf.READ_WRITE, 64)
p.k(q, (1,), (1,), D, H, F)
h, f = np.zeros(8, np.uint16), np.zeros(16, np.float32)
cl.enqueue_copy(q, h, H); cl.enqueue_copy(q, f, F)
want = [0x3C00, 0xFBFF, None, 0x0000]  # rtz: 1.0, -65504, NaN, 0
for i, w in enumerate(want):
    assert (h[4 + i] & 0x7FFF) > 0x7C00 if w is None else h[4 + i] == w, (i, hex(h[4 + i]))
halves = np.array([0x3C00, 0xFBFF, 0x7E00, 0x0000], np.uint16).view(np.float16).astype(np.float32)
assert np.array_equal(f[0:4], halves, equal_nan=True) and np.array_equal(f[4:8], halves, equal_nan=True), f
assert np.array_equal(f[12:16], halves, equal_nan=True), f
print("OK")
""")
