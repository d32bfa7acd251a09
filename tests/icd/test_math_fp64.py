"""Double-precision math builtins on vkcl (the prelude's fp64 parts and the clspv builtins they
rely on) against exact references (tests/icd/fp64_harness.py: mpmath, Fraction): the max ulp
error of each within the OpenCL C full profile's limit (0 for the exact ones, fma correctly
rounded), on random inputs over the whole exponent range and the special ones (NaN, +-inf,
+-0, denormals, DBL_MAX, DBL_MIN, integers and half-integers), whose results follow C99 Annex F
and OpenCL C's own rules; vectors and pointer arguments in every address space."""
from pathlib import Path

import pytest

pytest.importorskip("pyopencl")
pytest.importorskip("mpmath")

HERE = str(Path(__file__).resolve().parent)
HEADER = f"""
import sys
sys.path.insert(0, {HERE!r})
import numpy as np, pyopencl as cl
import fp64_harness as h
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
"""


def run(python_with_icd, body: str):
    result = python_with_icd(HEADER + body, timeout=600, env={"PYOPENCL_COMPILER_OUTPUT": "0"})
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in text and "OK" in result.stdout, text[-6000:]
    return result


# Builtins measured together (one program each); the harness's table gives inputs, references
# and limits.
GROUPS = {
    "exact": ["fabs", "copysign", "signbit", "sign", "round", "rint", "trunc", "floor", "ceil", "ilogb",
              "logb", "frexp", "modf", "fract", "ldexp", "nextafter", "fdim", "fmax", "fmin", "maxmag",
              "minmag", "step", "clamp", "isnan", "isinf", "isfinite", "isnormal", "sqrt"],
    "remainders": ["fmod", "remainder", "remquo"],
    "fma": ["fma", "mad"],
    "exp_log": ["exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "rsqrt"],
    "powers": ["pow", "powr", "pown", "rootn", "cbrt", "hypot"],
    "special": ["erf", "erfc", "tgamma", "lgamma", "lgamma_r"],
}


@pytest.mark.parametrize("group", list(GROUPS))
def test_ulp_limits(python_with_icd, group):
    """Each builtin's max ulp error on 600 random inputs and the special ones is within its
    limit, and every special value is the spec's, bit for bit (NaN as any NaN)."""
    run(python_with_icd, f"""
names = {GROUPS[group]!r}
prog = cl.Program(ctx, h.program_source(names)).build()
for name in names:
    ins = h.make_inputs(name, 600, seed=7)
    outs = h.run(ctx, q, prog, name, ins)
    worst, at, bad = h.measure(name, ins, outs)
    print(f"{{name}}: max {{worst:.3g}} ulp (limit {{h.F[name]['ulp']}}) at {{at}}")
    for row in bad[:5]:
        print("FAIL", name, "inputs, results, reference:", row)
print("OK")
""")


def test_fma_is_fused_on_hard_cases(python_with_icd):
    """fma rounds once: products whose low half decides the result (x*y - x*y is the product's
    rounding error, not 0), ties just above and below halfway, results in the denormals, and
    an overflowing product brought back by the addend's sign (DBL_MAX*2 - DBL_MAX)."""
    run(python_with_icd, """
a = np.array([1 + 2**-52, 0.1, 1 + 2**-30, 2.0**-537, 1.5 * 2**-1000, 1.7976931348623157e308, 3.0, 2**-1074,
              1 + 2**-52, -(1 + 2**-27)])
b = np.array([1 - 2**-52, 10.0, 1 - 2**-30, 2.0**-537, 2**-74, 2.0, 1 / 3, 0.5, 1 + 2**-52, 1 - 2**-27])
c = np.array([-1.0, -1.0, -1.0, 2.0**-1074, 0.0, -1.7976931348623157e308, -1.0, 0.0, -(1 + 2**-51), 1.0])
c[1] = -(a[1] * b[1]); c[6] = -(a[6] * b[6])
prog = cl.Program(ctx, h.program_source(["fma"])).build()
got = h.run(ctx, q, prog, "fma", [a, b, c])[0]
for x, y, z, g in zip(a, b, c, got):
    want = h.exact_fma(float(x), float(y), float(z))
    if not h.same(float(g), want):
        print("FAIL fma", x, y, z, g, want)
print("OK")
""")


# (expression, expected) evaluated in one kernel: the special values of C99 Annex F and OpenCL C
# (section 7.5.1, "Additional requirements beyond C99 TC2"). int results are stored as doubles.
SPECIAL_VALUES = [
    ("pow(DNAN, 0.0)", 1.0), ("pow(1.0, DNAN)", 1.0), ("pow(-0.0, -3.0)", "-inf"), ("pow(-0.0, 3.0)", -0.0),
    ("pow(-0.0, 2.0)", 0.0), ("pow(0.0, -2.5)", "inf"), ("pow(-1.0, HUGE_VAL)", 1.0), ("pow(-8.0, 1.0 / 3)", "nan"),
    ("pow(-2.0, 3.0)", -8.0), ("pow(-HUGE_VAL, -3.0)", -0.0), ("pow(0.5, -HUGE_VAL)", "inf"),
    ("pown(DNAN, 0)", 1.0), ("pown(-0.0, -3)", "-inf"), ("pown(0.0, -2)", "inf"), ("pown(-0.0, 3)", -0.0),
    ("pown(-0.0, 2)", 0.0), ("pown(-2.0, 3)", -8.0),
    ("powr(-1.0, 2.0)", "nan"), ("powr(0.0, 0.0)", "nan"), ("powr(HUGE_VAL, 0.0)", "nan"),
    ("powr(1.0, HUGE_VAL)", "nan"), ("powr(0.0, -1.0)", "inf"), ("powr(-0.0, 2.0)", 0.0), ("powr(2.0, 0.0)", 1.0),
    ("powr(0.0, -HUGE_VAL)", "inf"), ("powr(1.0, 5.0)", 1.0),
    ("rootn(-8.0, 3)", -2.0), ("rootn(-8.0, 2)", "nan"), ("rootn(4.0, 0)", "nan"), ("rootn(-0.0, -3)", "-inf"),
    ("rootn(0.0, -2)", "inf"), ("rootn(-0.0, 3)", -0.0), ("rootn(-0.0, 2)", 0.0),
    ("fabs(-0.0)", 0.0), ("fabs(-HUGE_VAL)", "inf"), ("copysign(1.0, -0.0)", -1.0), ("copysign(DNAN, -1.0)", "nan"),
    ("round(-0.5)", -1.0), ("round(2.5)", 3.0), ("round(-0.25)", -0.0), ("round(0.49999999999999994)", 0.0),
    ("ilogb(0.0)", -2**31), ("ilogb(DNAN)", 2**31 - 1), ("ilogb(-HUGE_VAL)", 2**31 - 1), ("ilogb(0x1p-1074)", -1074),
    ("logb(-0.0)", "-inf"), ("logb(-HUGE_VAL)", "inf"), ("logb(0x1.8p-1070)", -1070.0),
    ("frexp_m(HUGE_VAL)", "inf"), ("frexp_e(HUGE_VAL)", 0.0), ("frexp_e(DNAN)", 0.0), ("frexp_m(-0.0)", -0.0),
    ("frexp_m(0x1.8p-1070)", 0.75), ("frexp_e(0x1.8p-1070)", -1069.0),
    ("modf_f(-HUGE_VAL)", -0.0), ("modf_i(-HUGE_VAL)", "-inf"), ("modf_f(-3.0)", -0.0), ("modf_f(-3.5)", -0.5),
    ("fract_f(-0.0)", -0.0), ("fract_f(-HUGE_VAL)", -0.0), ("fract_i(-HUGE_VAL)", "-inf"), ("fract_f(DNAN)", "nan"),
    ("fract_f(-1e-17)", 0.9999999999999999), ("fract_i(-1e-17)", -1.0),
    ("remquo_r(7.0, 2.0)", -1.0), ("remquo_q(7.0, 2.0)", 4.0), ("remquo_r(-7.0, 2.0)", 1.0),
    ("remquo_q(-7.0, 2.0)", -4.0), ("remquo_r(HUGE_VAL, 1.0)", "nan"), ("remquo_q(HUGE_VAL, 1.0)", 0.0),
    ("remquo_r(5.0, 0.0)", "nan"), ("remquo_q(5.0, 0.0)", 0.0), ("remquo_q(DNAN, 1.0)", 0.0),
    ("fmod(-0.0, 1.0)", -0.0), ("fmod(5.5, HUGE_VAL)", 5.5), ("fmod(HUGE_VAL, 2.0)", "nan"), ("fmod(1.0, 0.0)", "nan"),
    ("fmod(-5.0, 3.0)", -2.0), ("remainder(5.5, HUGE_VAL)", 5.5), ("remainder(-4.0, 2.0)", -0.0),
    ("nextafter(-0.0, 1.0)", 5e-324), ("nextafter(0.0, -1.0)", -5e-324), ("nextafter(1.0, DNAN)", "nan"),
    ("nextafter(DBL_MAX, HUGE_VAL)", "inf"),
    ("fdim(DNAN, 1.0)", "nan"), ("fdim(1.0, 2.0)", 0.0), ("fdim(HUGE_VAL, HUGE_VAL)", 0.0),
    ("maxmag(-3.0, 2.0)", -3.0), ("minmag(-3.0, 2.0)", 2.0), ("maxmag(DNAN, 1.0)", 1.0), ("minmag(-2.0, 2.0)", -2.0),
    ("ldexp(1.0, -1075)", 0.0), ("ldexp(1.5, -1075)", 5e-324), ("ldexp(1.0, 1024)", "inf"),
    ("ldexp(0x1p-1074, 2100)", "inf"), ("ldexp(0x1p1023, -2098)", 0.0), ("ldexp(0x1.8p1023, -2098)", 5e-324), ("ldexp(DNAN, -1)", "nan"),
    ("fma(HUGE_VAL, 0.0, 1.0)", "nan"), ("fma(DBL_MAX, 2.0, -HUGE_VAL)", "-inf"), ("fma(0x1p-1074, 0.5, 0.0)", 0.0),
    ("fma(-0x1p-1074, 0x1p-1074, 0.0)", -0.0), ("fma(-0.0, 1.0, 0.0)", 0.0), ("fma(-0.0, 1.0, -0.0)", -0.0),
    ("exp(-HUGE_VAL)", 0.0), ("exp(DNAN)", "nan"), ("exp10(-0.0)", 1.0), ("exp10(-HUGE_VAL)", 0.0),
    ("expm1(-0.0)", -0.0), ("expm1(-HUGE_VAL)", -1.0), ("log(-0.0)", "-inf"), ("log(-1.0)", "nan"),
    ("log(HUGE_VAL)", "inf"), ("log1p(-1.0)", "-inf"), ("log1p(-0.0)", -0.0), ("log2(1.0)", 0.0), ("log2(0x1p-1074)", -1074.0),
    ("log10(0.0)", "-inf"), ("cbrt(-0.0)", -0.0), ("cbrt(-HUGE_VAL)", "-inf"), ("cbrt(DNAN)", "nan"),
    ("hypot(HUGE_VAL, DNAN)", "inf"), ("hypot(DNAN, -HUGE_VAL)", "inf"), ("hypot(-0.0, 0.0)", 0.0),
    ("erf(-0.0)", -0.0), ("erf(-HUGE_VAL)", -1.0), ("erfc(-HUGE_VAL)", 2.0), ("erfc(HUGE_VAL)", 0.0),
    ("tgamma(-0.0)", "-inf"), ("tgamma(-1.0)", "nan"), ("tgamma(-HUGE_VAL)", "nan"), ("tgamma(HUGE_VAL)", "inf"),
    ("tgamma(1.0)", 1.0), ("tgamma(5.0)", 24.0),
    ("lgamma(1.0)", 0.0), ("lgamma(2.0)", 0.0), ("lgamma(-1.0)", "inf"), ("lgamma(-HUGE_VAL)", "inf"),
    ("lgamma_s(-1.0)", 0.0), ("lgamma_s(-0.5)", -1.0), ("lgamma_s(-1.5)", 1.0), ("lgamma_s(0.0)", 0.0),
    ("sign(-0.0)", -0.0), ("sign(DNAN)", 0.0), ("sign(-2.5)", -1.0), ("signbit(-0.0)", 1.0), ("signbit(DNAN)", 0.0),
    ("sqrt(-0.0)", -0.0), ("sqrt(-1.0)", "nan"), ("rint(-0.5)", -0.0), ("trunc(-0.5)", -0.0), ("ceil(-0.5)", -0.0),
    ("floor(-0.0)", -0.0),
]

# OpenCL C's INFINITY and NAN are floats (a float argument beside doubles makes a call
# ambiguous, with clspv's builtins too): HUGE_VAL is double, DNAN a double NaN.
HELPERS = """
#define DNAN ((double)NAN)
double frexp_m(double x) { int e; return frexp(x, &e); }
double frexp_e(double x) { int e; frexp(x, &e); return e; }
double modf_f(double x) { double i; return modf(x, &i); }
double modf_i(double x) { double i; modf(x, &i); return i; }
double fract_f(double x) { double i; return fract(x, &i); }
double fract_i(double x) { double i; fract(x, &i); return i; }
double remquo_r(double x, double y) { int n; return remquo(x, y, &n); }
double remquo_q(double x, double y) { int n; remquo(x, y, &n); return n; }
double lgamma_s(double x) { int s; lgamma_r(x, &s); return s; }
"""


def test_special_values(python_with_icd):
    """Each special value of the table, bit for bit (+0 and -0 apart)."""
    body = "".join(f"  o[{i}] = {expr};\n" for i, (expr, _) in enumerate(SPECIAL_VALUES))
    want = [str(float(v)) for _, v in SPECIAL_VALUES]  # float() reads "inf", "nan"
    exprs = [e for e, _ in SPECIAL_VALUES]
    run(python_with_icd, f"""
src = {HELPERS!r} + "kernel void k(global double *o) {{\\n" + {body!r} + "}}\\n"
prog = cl.Program(ctx, src).build()
out = np.zeros({len(SPECIAL_VALUES)})
O = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
prog.k(q, (1,), None, O)
cl.enqueue_copy(q, out, O); q.finish()
for expr, got, want in zip({exprs!r}, out, {want!r}):
    if not h.same(float(got), float(want)):
        print("FAIL", expr, "=", got, "not", want)
print("OK")
""")


# Builtins of every signature form: pointer outputs, an int or intn argument, a scalar int
# beside a vector (ldexp), relational results (longn of -1 / 0), and fdim (clspv crashes on its
# double3).
VECTOR_NAMES = ["fabs", "frexp", "modf", "remquo", "ldexp", "pown", "signbit", "pow", "fma", "fdim", "lgamma_r"]


@pytest.mark.parametrize("width", ["2", "3", "4", "8", "16"])
def test_vectors_match_scalars(python_with_icd, width):
    """Each component of a vector builtin is the scalar builtin's result, bit for bit."""
    run(python_with_icd, f"""
names = {VECTOR_NAMES!r}
scalar = cl.Program(ctx, h.program_source(names)).build()
vector = cl.Program(ctx, h.program_source(names, {width!r})).build()
for name in names:
    ins = h.make_inputs(name, 60, seed=3)
    one, many = h.run(ctx, q, scalar, name, ins), h.run(ctx, q, vector, name, ins, {width!r})
    sign = -1 if name in h.RELATIONAL else 1
    for k, (a, b) in enumerate(zip(one, many)):
        a = a * sign if k == 0 else a
        same = (a.view(np.uint64) == b.view(np.uint64)) | (np.isnan(a) & np.isnan(b)) if a.dtype == np.float64 \\
            else a == b
        if not same.all():
            i = int(np.argmin(same))
            print("FAIL", name, "width {width}", "output", k, "inputs", [x[i] for x in ins], a[i], b[i])
print("OK")
""")


def test_pointer_outputs_to_local_and_global_memory(python_with_icd):
    """frexp, modf, fract, remquo and lgamma_r write through __local and __global pointers too."""
    run(python_with_icd, """
src = '''
kernel void k(global const double *x, global double *r, global int *ie, global double *dg) {
  local int li[4]; local double ld[4];
  size_t i = get_global_id(0), l = get_local_id(0);
  r[5 * i] = frexp(x[i], &li[l]); ie[3 * i] = li[l];
  r[5 * i + 1] = modf(x[i], &ld[l]); dg[2 * i] = ld[l];
  r[5 * i + 2] = fract(x[i], &dg[2 * i + 1]);
  r[5 * i + 3] = remquo(x[i], 0.75, &ie[3 * i + 1]);
  r[5 * i + 4] = lgamma_r(x[i], &li[l]); ie[3 * i + 2] = li[l];
}'''
prog = cl.Program(ctx, src).build()
x = np.array([-2.5, 3.75, 1e-310, -7.0])
X = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
r, ie, dg = np.zeros(20), np.zeros(12, np.int32), np.zeros(8)
R, IE, DG = (cl.Buffer(ctx, mf.READ_WRITE, a.nbytes) for a in (r, ie, dg))
prog.k(q, (4,), (4,), X, R, IE, DG)
for a, b in ((r, R), (ie, IE), (dg, DG)):
    cl.enqueue_copy(q, a, b)
q.finish()
for i, v in enumerate(map(float, x)):
    m, e = h.frexp(v); f, ip = h.modf(v); fr, fl = h.fract(v); rq, qq = h.remquo(v, 0.75)
    want = [(r[5 * i], m), (ie[3 * i], e), (r[5 * i + 1], f), (dg[2 * i], ip), (r[5 * i + 2], fr), (dg[2 * i + 1], fl),
            (r[5 * i + 3], rq), (ie[3 * i + 1], qq), (ie[3 * i + 2], h.lgamma_sign(v))]
    for got, w in want:
        if float(got) != float(w):
            print("FAIL", v, got, w)
print("OK")
""")


CLASSIFIERS = ["isfinite", "isinf", "isnan", "isnormal", "signbit"]


def test_classification_of_vectors_built_from_scalars(python_with_icd):
    """isfinite, isinf, isnan, isnormal and signbit of double vectors loaded with vloadn (the
    CTS's way) or built from scalars: -1 or 0 per component as numpy says (clspv's isfinite and
    isnormal of such a double2-4 went through its 32-bit fabs mask: isfinite(-inf) was -1 and
    isnormal was 0 everywhere)."""
    run(python_with_icd, f"""
names = {CLASSIFIERS!r}
x = np.array([-np.inf, np.inf, np.nan, -np.nan, 1.0, -1.0, 0.0, -0.0, 5e-324, -5e-324, 2.0 ** -1022,
              -2.0 ** -1022, float.fromhex("0x0.fffffffffffffp-1022"), 1.7976931348623157e308,
              -2.0 ** 897, 3.5, float.fromhex("0x1.0000000000001p+0"), 2.0 ** 1023, -7e-310, 1e300,
              float("nan"), -2.5, 1e-300, 123.0] * 10)
# other NaNs: the smallest payload, a negative quiet one, all ones
x[20::24] = np.array([0x7FF0000000000001, 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF] * 4, np.uint64)[:10].view(np.float64)
want = {{"isfinite": np.isfinite(x), "isinf": np.isinf(x), "isnan": np.isnan(x), "signbit": np.signbit(x),
        "isnormal": np.isfinite(x) & (np.abs(x) >= 2.0 ** -1022)}}
X = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
O = cl.Buffer(ctx, mf.READ_WRITE, x.nbytes)
for w in (2, 3, 4, 8, 16):
    comps = ", ".join(f"x[{{w}} * i + {{c}}]" for c in range(w))
    src = "".join(f'''
kernel void v_{{f}}(global const double *x, global long *o) {{{{
  size_t i = get_global_id(0); vstore{{w}}({{f}}(vload{{w}}(i, x)), i, o); }}}}
kernel void b_{{f}}(global const double *x, global long *o) {{{{
  size_t i = get_global_id(0); double{{w}} v = (double{{w}})({{comps}}); vstore{{w}}({{f}}(v), i, o); }}}}
''' for f in names)
    prog = cl.Program(ctx, src).build()
    n = len(x) // w
    for f in names:
        for kind in ("v", "b"):
            getattr(prog, kind + "_" + f)(q, (n,), None, X, O)
            got = np.zeros(len(x), np.int64)
            cl.enqueue_copy(q, got, O); q.finish()
            expect = np.where(want[f], -1, 0)[:n * w]
            for i in np.nonzero(got[:n * w] != expect)[0][:3]:
                print("FAIL", kind, f, "double" + str(w), x[i], x[i:i+1].view(np.uint64), got[i], "not", expect[i])
print("OK")
""")
