"""OpenCL C's float and half math builtins other than the trigonometric ones, and the geometric
builtins, on vkcl (prelude/fp32_*.py, prelude/geometric.py), through pyopencl: the largest ulp
error of each against an exact reference stays within OpenCL C 3.0's limits (7.4, full
profile; the OpenCL-CTS's for half and the geometric functions), special values exact,
remquo's quotient bits right, vector widths bit for bit the scalar results, the output
pointers in every address space, and the double members of the replaced builtins what they
were without the float parts.
"""
from pathlib import Path

import pytest

from test_kernels_pyopencl import HEADER as PYOPENCL_HEADER

pytest.importorskip("pyopencl")
pytest.importorskip("mpmath")

HERE = Path(__file__).resolve().parent

HEADER = PYOPENCL_HEADER + f"""
import sys, math
sys.path.insert(0, {str(HERE)!r})
import fp32_reference as ref, fp32_survey as survey, geometric_reference as geo
flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
def same_bits(a, b):
    return (a.view(ref.UINT[a.dtype.type]) == b.view(ref.UINT[b.dtype.type])) | (np.isnan(a) & np.isnan(b))
"""
# The builtins the float parts replace (lgamma has no ulp limit: checked on its own).
FIXED = ("remquo", "remainder", "tgamma", "rootn", "rsqrt", "fdim", "maxmag", "minmag", "erf")


def run(python_with_icd, body: str):
    result = python_with_icd(HEADER + body, timeout=600,
                             env={"PYOPENCL_COMPILER_OUTPUT": "0", "PYOPENCL_NO_CACHE": "1"})
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in text and "OK" in result.stdout, text[-6000:]
    return result.stdout


@pytest.mark.parametrize("ctype", ["float", "half"])
def test_ulp_errors_within_spec(python_with_icd, ctype):
    """Every surveyed builtin, scalar: max ulp <= the limit, special values and remquo's
    quotients exact (the ones vkcl replaces with 100,000 random inputs, the rest 20,000)."""
    out = run(python_with_icd, f"""
ctype = {ctype!r}
limits = ref.HALF_LIMITS if ctype == "half" else ref.LIMITS
for name in ref.KINDS:
    if name == "lgamma":
        continue
    n = 100000 if name in {FIXED!r} else 20000
    errs, wrong, x, y, got = survey.measure(ctx, q, name, ctype, n, flush)
    worst = float(np.max(errs[np.isfinite(errs)], initial=0.0))
    print(f"{{name}} {{ctype}} max {{worst:.3f}} ulp (limit {{limits[name]}}) over {{len(x)}} inputs")
    show = lambda i: f"{{name}}({{x[i]!r}}{{', ' + repr(y[i]) if y is not None else ''}}) = {{got[i]!r}}"
    for i in wrong[:5]:
        print(f"FAIL {{show(i)}}: special value or quotient")
    if worst > limits[name]:
        print(f"FAIL {{show(int(np.argmax(np.where(np.isfinite(errs), errs, -1))))}}: {{worst:.3f}} ulp")
print("OK")
""")
    print(out)


def test_known_cases(python_with_icd):
    """Results the OpenCL-CTS and the survey found wrong in clspv's builtins."""
    run(python_with_icd, """
def one(name, x, y=None, ctype="float"):
    dt = survey.TYPES[ctype]
    xs = np.array([x], dt)
    ys = None if y is None else np.array([y], np.int32 if ref.KINDS[name] == "fi" else dt)
    return survey.run(ctx, q, name, ctype, xs, ys)
r, k = one("remquo", float.fromhex("0x1.e94812p+89"), float.fromhex("-0x1.43bda6p-64"))
if r[0] != np.float32(float.fromhex("0x1.0942f8p-65")) or k[0] != -118:
    print(f"FAIL remquo CTS case: {r[0]!r}, {k[0]}")
r, k = one("remquo", 2.0 ** -149, 2.0 ** -149)
if r[0] != 0 or k[0] != 1:
    print(f"FAIL remquo of denormals: {r[0]!r}, {k[0]}")
r = one("remainder", 0.0, 2.0 ** -149)
if r[0] != 0 or np.signbit(r[0]):
    print(f"FAIL remainder(+0, denormal) = {r[0]!r}")
for x, want in ((-0.0, -np.inf), (float.fromhex("-0x1.0002p+9"), -0.0), (-1653.2839, 0.0), (-1.0, np.nan),
                (-np.inf, np.nan), (36.0, np.inf), (1.0, 1.0), (5.0, 24.0), (35.0, float(math.factorial(34)))):
    g = one("tgamma", x)[0]
    if not (g == np.float32(want) and np.signbit(g) == np.signbit(want) or np.isnan(g) and np.isnan(want)):
        print(f"FAIL tgamma({x!r}) = {g!r}, not {want!r}")
g = one("tgamma", float.fromhex("-0x1.002p+3"))[0]
e, _ = ref.errors("tgamma", np.float32, np.array([float.fromhex("-0x1.002p+3")], np.float32), np.array([g]))
if e[0] > 1:
    print(f"FAIL tgamma(-0x1.002p+3) = {g!r}: {e[0]:.2f} ulp")
for x, n, want in ((4.3654023e37, -1, 1 / 4.3654023e37), (-2.2313346e-38, 1, -2.2313346e-38),
                   (1.6505624e38, -1, 1 / 1.6505624e38)):
    g = one("rootn", x, n)[0]
    if abs(float(g) - want) > 2.0 ** -149 * 2:
        print(f"FAIL rootn({x!r}, {n}) = {g!r}, not {want!r}")
g = one("rsqrt", 1172.0, ctype="half")[0]
if g != np.float16(1 / math.sqrt(1172.0)):
    print(f"FAIL rsqrt(1172h) = {g!r}")
print("OK")
""")


def test_lgamma(python_with_icd):
    """lgamma has no ulp limit in the spec: special values exact, within 4 ulp or 2^-24
    absolute (near its zeros) over both signs; lgamma_r the same values and Gamma's sign."""
    run(python_with_icd, """
x, _ = ref.inputs("lgamma", np.float32, np.random.default_rng(11), 40000)
x = np.concatenate([x, np.array([-3e-21, -2.5, -100.5, -2.4573755, -np.inf, -0.0])]).astype(np.float32)
got = survey.run(ctx, q, "lgamma", "float", x, None)
errs, wrong = ref.errors("lgamma", np.float32, x, got, None, flush=flush)
want = ref.reference("lgamma", x, None)
absolute = np.abs(got.astype(np.float64) - want)
bad = np.nonzero(np.isfinite(errs) & (errs > 4) & ~(absolute <= 2.0 ** -24))[0]
for i in list(wrong[:5]) + list(bad[:5]):
    print(f"FAIL lgamma({x[i]!r}) = {got[i]!r}, want {want[i]!r} ({errs[i]:.3g} ulp)")
src = '''kernel void k(global const float *x, global float *o, global int *s) {
  size_t i = get_global_id(0); int t; o[i] = lgamma_r(x[i], &t); s[i] = t; }'''
prog = cl.Program(ctx, src).build()
bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
bo, bs = cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes), cl.Buffer(ctx, mf.WRITE_ONLY, x.nbytes)
prog.k(q, x.shape, None, bx, bo, bs)
o, s = np.empty_like(x), np.empty(len(x), np.int32)
cl.enqueue_copy(q, o, bo); cl.enqueue_copy(q, s, bs); q.finish()
for i in np.nonzero(~same_bits(o, got))[0][:5]:
    print(f"FAIL lgamma_r({x[i]!r}) = {o[i]!r}, lgamma {got[i]!r}")
finite = np.isfinite(x) & ~((x <= 0) & (x == np.floor(x)))
sign = np.where(x > 0, 1, np.where(np.floor(x) % 2 == 1, -1, 1))
for i in np.nonzero(finite & (s != sign))[0][:5]:
    print(f"FAIL lgamma_r({x[i]!r}) sign {s[i]}, not {sign[i]}")
print("OK")
""")


def test_vectors_match_scalars(python_with_icd):
    """Every width of the replaced builtins (and of the ones that crashed clspv at 2-4 lanes)
    gives the scalar results bit for bit, float and half."""
    run(python_with_icd, f"""
for ctype in ("float", "half"):
    dt = survey.TYPES[ctype]
    for k, name in enumerate({FIXED!r} + ("lgamma",)):
        x, y = ref.inputs(name, dt, np.random.default_rng(3), 300)
        scalar = survey.run(ctx, q, name, ctype, x, y)
        for width in (2, 3, 4, 8, 16):
            vector = survey.run(ctx, q, name, ctype, x, y, width)
            pairs = zip(scalar, vector) if name == "remquo" else [(scalar, vector)]
            for a, b in pairs:
                same = same_bits(a, b) if a.dtype != np.int32 else (a == b)
                for i in np.nonzero(~same)[0][:3]:
                    print(f"FAIL {{name}} {{ctype}}{{width}}: {{x[i]!r}} gives {{b[i]!r}}, scalar {{a[i]!r}}")
print("OK")
""")


def test_output_pointers_every_address_space(python_with_icd):
    """remquo, lgamma_r and fract write through global, local, private and (OpenCL C 2.0 and
    3.0) generic pointers, scalar and vector: the same results every way."""
    run(python_with_icd, """
x = np.random.default_rng(5).uniform(-40, 40, 256).astype(np.float32)
y = np.random.default_rng(6).uniform(-3, 3, 256).astype(np.float32)
for name, call, ptype in (("remquo", "remquo(x[i], y[i], P)", "int"), ("lgamma_r", "lgamma_r(x[i], P)", "int"),
                          ("fract", "fract(x[i], P)", "float")):
    for opts in ("", "-cl-std=CL2.0", "-cl-std=CL3.0"):
        src = f'''
kernel void k(global const float *x, global const float *y, global float *r, global {ptype} *p, local {ptype} *l) {{
  size_t i = get_global_id(0), li = get_local_id(0);
  {ptype} v; {ptype} *g = &v;
  int mode = i % 4;
  if (mode == 0) {{ global {ptype} *P = p + i; r[i] = {call}; }}
  if (mode == 1) {{ local {ptype} *P = l + li; r[i] = {call}; p[i] = l[li]; }}
  if (mode == 2) {{ private {ptype} *P = &v; r[i] = {call}; p[i] = v; }}
  if (mode == 3) {{ {ptype} *P = g; r[i] = {call}; p[i] = *g; }}
}}
kernel void k4(global const float *x, global const float *y, global float *r, global {ptype} *p) {{
  size_t i = get_global_id(0);
  {ptype}4 v;
  float4 xv = vload4(i, x), yv = vload4(i, y);
  float4 rv = {call.replace("x[i]", "xv").replace("y[i]", "yv").replace("P", "&v")};
  vstore4(rv, i, r); vstore4(v, i, p);
}}
'''
        prog = cl.Program(ctx, src).build(options=opts)
        bx, by = buf(x, mf.READ_ONLY), buf(y, mf.READ_ONLY)
        results = []
        for kname in ("k", "k4"):
            br, bp = cl.Buffer(ctx, mf.READ_WRITE, x.nbytes), cl.Buffer(ctx, mf.READ_WRITE, x.nbytes)
            kern = cl.Kernel(prog, kname)
            if kname == "k":
                kern(q, (256,), (64,), bx, by, br, bp, cl.LocalMemory(64 * 4))
            else:
                kern(q, (64,), None, bx, by, br, bp)
            r, p = get(br, x), get(bp, np.empty(256, np.int32 if ptype == "int" else np.float32))
            results.append((r, p))
        (r0, p0), (r1, p1) = results
        if not (same_bits(r0, r1).all() and (p0 == p1).all()):
            print(f"FAIL {name} {opts}: scalar and vector4 differ")
        if name == "remquo":
            want = ref.reference("remainder", x, y)
            if not (r0 == want.astype(np.float32)).all():
                print(f"FAIL remquo {opts}: remainders")
        if name == "fract" and not ((p0 == np.floor(x)).all() and (r0 == x - np.floor(x)).all()):
            print(f"FAIL fract {opts}")
print("OK")
""")


def test_double_members_unchanged(python_with_icd):
    """The double members of the replaced builtins are what the program gives without the
    float parts (clspv's builtin, or a double part in front of them): bit for bit."""
    run(python_with_icd, f"""
import vkcl.compiler.prelude as prelude
from vkcl.compiler.prelude import fp32
ours = {{id(p) for p in fp32.PARTS}}
x = np.random.default_rng(8).uniform(0.5, 30, 64)
y = np.random.default_rng(9).uniform(0.5, 3, 64)
calls = {{"remquo": "remquo(x[i], y[i], &k)", "remainder": "remainder(x[i], y[i])", "tgamma": "tgamma(x[i])",
         "lgamma": "lgamma(x[i])", "lgamma_r": "lgamma_r(x[i], &k)", "rootn": "rootn(x[i], 3)",
         "rsqrt": "rsqrt(x[i])", "fdim": "fdim(x[i], y[i])", "maxmag": "maxmag(x[i], y[i])",
         "minmag": "minmag(x[i], y[i])", "fract": "fract(x[i], &d)"}}
def results(call, tag):
    src = f'''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* {{tag}} */
kernel void k(global const double *x, global const double *y, global double *o) {{{{
  size_t i = get_global_id(0); int k = 0; double d = 0.0; o[i] = {{call}} + (double)k + d; }}}}'''
    prog = cl.Program(ctx, src).build()
    o = cl.Buffer(ctx, mf.READ_WRITE, x.nbytes)
    prog.k(q, x.shape, None, buf(x, mf.READ_ONLY), buf(y, mf.READ_ONLY), o)
    return get(o, x)
saved = prelude._WORDS
for name, call in calls.items():
    with_parts = results(call, "with")
    prelude._WORDS = [(w, p) for w, p in saved if id(p) not in ours]
    try:
        without = results(call, "without")
    finally:
        prelude._WORDS = saved
    if not same_bits(with_parts, without).all():
        print(f"FAIL {{name}}(double): {{with_parts[:3]}} with the float parts, {{without[:3]}} without")
print("OK")
""")


@pytest.mark.parametrize("ctype", ["float", "double", "half"])
def test_geometric(python_with_icd, ctype):
    """length, distance, normalize of 1-4 components and cross of 3 and 4 within the CTS's
    limits (cross: each product rounded, then the difference, bit for bit), over random,
    tiny, huge and mixed components and the CTS's tricky values with NaN and infinities."""
    out = run(python_with_icd, f"""
ctype = {ctype!r}
dt = geo.TYPES[ctype]
for name in ("length", "distance", "normalize", "cross"):
    for n in ((3, 4) if name == "cross" else (1, 2, 3, 4)):
        a, b = geo.inputs(dt, n, np.random.default_rng(n), 500)
        got = geo.run(ctx, q, name, ctype, a, b)
        errs = geo.errors(name, dt, a, b, got, flush and ctype != "double")
        worst = float(np.max(errs[np.isfinite(errs)], initial=0.0))
        print(f"{{name}} {{ctype}}{{n}}: max {{worst:.3f}} ulp (limit {{geo.limit(name, n)}}) over {{len(a)}}")
        for i in np.nonzero(np.isinf(errs) | (errs > geo.limit(name, n)))[0][:3]:
            print(f"FAIL {{name}}({{a[i]!r}}, {{b[i]!r}}) = {{got[i]!r}} ({{errs[i]:.3g}} ulp)")
src = '''kernel void k(global float4 *o) {{
  o[0] = normalize((float4)(3e-30f, 0.0f, 4e-30f, 0.0f));
  o[1] = normalize((float4)(3e30f, 0.0f, -4e30f, -0.0f));
  o[2] = (float4)(length((float4)(3e-30f, 0.0f, 4e-30f, 0.0f)), length((float2)(3e30f, 4e30f)),
                  distance((float3)(3e38f, 0.0f, 0.0f), (float3)(-3e38f, 0.0f, 0.0f)), length((float3)(0x1p-149f, 0.0f, 0.0f)));
}}'''
prog = cl.Program(ctx, src).build()
o = cl.Buffer(ctx, mf.READ_WRITE, 48)
prog.k(q, (1,), None, o)
r = get(o, np.empty((3, 4), np.float32))
if flush and r[2][3] == 0:  # a denormal result may be flushed
    r[2][3] = 2.0 ** -149
for got, want in ((r[0], [0.6, 0, 0.8, 0]), (r[1], [0.6, 0, -0.8, -0.0]), (r[2], [5e-30, 5e30, np.inf, 2.0 ** -149])):
    if not np.allclose(got, np.array(want, np.float32), rtol=3e-7, atol=0) or not (np.signbit(got) == np.signbit(np.array(want, np.float32))).all():
        print(f"FAIL {{got!r}}, not {{want!r}}")
print("OK")
""")
    print(out)
