"""IEEE-754 semantics without fast-math options: no reassociation, no folding of inf * 0 or
x - x, signed zeros kept, multiplies and adds of separate statements rounded separately
(vkcl/compiler/spirv_fixes.py keeps clspv's NoContraction decorations; repair 5). Each value is
checked bit for bit against the host's IEEE arithmetic (numpy)."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")

# Each kernel reads its inputs from memory, so the compiler cannot fold them.
KERNEL = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global const T *in, global T *o) {
  T x = in[0], big = in[1], inf = in[2], zero = in[3], mz = in[4], a = in[5], c = in[6], one = in[7];
  o[0] = (T)10 - ((T)10 - x);          /* 0, not x */
  o[1] = (x + big) - big;              /* 0, not x */
  o[2] = inf * zero;                   /* NaN, not 0 */
  o[3] = inf - inf;                    /* NaN */
  T t = inf; o[4] = t - t;             /* NaN, not 0 */
  o[5] = mz + zero;                    /* +0 */
  o[6] = mz * one;                     /* -0 */
  o[7] = mz - zero;                    /* -0 */
  T p = a * a;                         /* separate statements: two roundings */
  o[8] = p + c;
  o[9] = fma(a, a, c);                 /* one rounding */
  o[10] = x * one / one;               /* x */
  o[11] = (x * big) / big;             /* x * big overflows in float: inf; in double: x */
}
"""


def _check(dtype: str, ctype: str, options: str = "") -> str:
    return f"""
T = np.{dtype}
eps = np.finfo(T).eps
a, c = T(1) + eps, -(T(1) + 2 * eps)  # a * a = 1 + 2 eps + eps^2: a * a + c is eps^2 fused, 0 not
inp = np.array([1e-20, 1e20, np.inf, 0.0, -0.0, a, c, 1.0], T)
p = cl.Program(ctx, '''{KERNEL}'''.replace("T", "{ctype}")).build(options="{options}")
O = out(np.zeros(12, T))
p.k(q, (1,), None, buf(inp), O)
o = get(O, np.zeros(12, T))
with np.errstate(all="ignore"):
    x, big, inf, zero, mz, one = T(1e-20), T(1e20), T(np.inf), T(0), T(-0.0), T(1)
    want = np.array([T(10) - (T(10) - x), (x + big) - big, inf * zero, inf - inf, inf - inf, mz + zero,
                     mz * one, mz - zero, a * a + c, eps * eps, x * one / one, (x * big) / big], T)
assert want[8] == 0 and want[9] != 0  # the inputs tell fused from unfused
bits = "u4" if T is np.float32 else "u8"
bad = [(i, o[i], want[i]) for i in range(12) if o.view(bits)[i] != want.view(bits)[i]
       and not (np.isnan(o[i]) and np.isnan(want[i]))]
assert not bad, bad
print("OK")
"""


# fma(double) is the prelude's correctly rounded one (prelude/fp64_int.py), or the device's fused
# Fma where it has one (NVIDIA): fused in either case.
@pytest.mark.parametrize("dtype,ctype", [("float32", "float"), ("float64", "double")])
def test_float_operations_are_exact_without_fast_math(python_with_icd, dtype, ctype):
    run(python_with_icd, _check(dtype, ctype))


def test_fast_relaxed_math_builds_and_computes(python_with_icd):
    run(python_with_icd, """
n = 4096
a, b = rng.random(n, dtype=np.float32) + 1, rng.random(n, dtype=np.float32)
src = "kernel void k(global const float *a, global const float *b, global float *c)" \\
      "{ size_t i = get_global_id(0); float t = a[i] * b[i]; c[i] = t + a[i] - b[i] / a[i]; }"
for options in ("-cl-fast-relaxed-math", "-cl-unsafe-math-optimizations", "-cl-mad-enable"):
    p = cl.Program(ctx, src).build(options=options)
    C = out(a)
    p.k(q, (n,), None, buf(a), buf(b), C)
    assert np.allclose(get(C, a), a * b + a - b / a, rtol=1e-5), options
print("OK")
""")


def test_mad_is_within_its_bounds(python_with_icd):
    """mad() may be fused or not (OpenCL C 6.15.2): either result, nothing else."""
    run(python_with_icd, """
n = 1 << 16
a = (1 + rng.random(n, dtype=np.float32)).astype(np.float32)
b = (1 + rng.random(n, dtype=np.float32)).astype(np.float32)
c = -(a.astype(np.float64) * b).astype(np.float32)
p = cl.Program(ctx, "kernel void k(global const float *a, global const float *b, global const float *c,"
               " global float *o) { size_t i = get_global_id(0); o[i] = mad(a[i], b[i], c[i]); }").build()
O = out(a)
p.k(q, (n,), None, buf(a), buf(b), buf(c), O)
o = get(O, a)
unfused = a * b + c
fused = (a.astype(np.float64) * b + c).astype(np.float32)  # exact product: one rounding
assert np.all((o == unfused) | (o == fused))
print("OK")
""")


# Finite math (-cl-finite-math-only, and -cl-fast-relaxed-math, which implies it) let LLVM fold
# the prelude's double-double builtins wrong for finite inputs: a double pow(x, 2) gave |x|^3
# (Rodinia's particlefilter: its likelihoods, then NaN), tgamma and lgamma were 40% and 125%
# off. vkcl passes clspv the unsafe math these options also mean, not the finite math: the
# builtins give the same bits as without the options (the special values too: NaN, infinities,
# -0 and denormals, which the options make undefined but which must not break finite lanes).
def test_fast_math_options_change_no_double_builtin(python_with_icd):
    run(python_with_icd, """
import math
x = np.array([-100.0, -3.0, 2.0, 10.0, 0.5, 1e-310, -0.0, 3.5, 0.3, 1.7, 170.5, 1e300], np.float64)
src = '''kernel void k(global const double *x, global double *o) { size_t i = get_global_id(0); double v = x[i];
  o[5 * i] = pow(v, 2); o[5 * i + 1] = pow(v, 0.5); o[5 * i + 2] = tgamma(v); o[5 * i + 3] = lgamma(v);
  o[5 * i + 4] = pown(v, 3); }'''
outs = {}
for options in ("", "-cl-fast-relaxed-math", "-cl-finite-math-only"):
    p = cl.Program(ctx, src).build(options=options)
    O = out(np.zeros(5 * len(x)))
    p.k(q, x.shape, None, buf(x), O)
    outs[options] = get(O, np.zeros(5 * len(x))).reshape(len(x), 5)
plain = outs[""]
for options, got in outs.items():
    finite = np.isfinite(plain)
    assert np.array_equal(got[finite].view(np.uint64), plain[finite].view(np.uint64)), (options, got, plain)
assert plain[:, 0].tolist() == [1e4, 9.0, 4.0, 100.0, 0.25, 0.0, 0.0, 12.25, 0.3 * 0.3, 1.7 * 1.7, 170.5 ** 2, math.inf]
for v, g in zip(x, plain[:, 2]):
    if 1e-300 < v < 170:  # tgamma within 16 ulp of the host's
        assert abs(g - math.gamma(v)) <= 16 * math.ulp(math.gamma(v)), (v, g)
print("OK")
""")


def test_fast_relaxed_math_defines_its_macro(python_with_icd):
    run(python_with_icd, """
src = "kernel void k(global int *o) { \\n#ifdef __FAST_RELAXED_MATH__\\n o[0] = __FAST_RELAXED_MATH__;\\n#else\\n o[0] = -1;\\n#endif\\n }"
for options, want in (("-cl-fast-relaxed-math", 1), ("", -1), ("-cl-unsafe-math-optimizations", -1)):
    p = cl.Program(ctx, src).build(options=options)
    O = out(np.zeros(1, np.int32))
    p.k(q, (1,), None, O)
    assert get(O, np.zeros(1, np.int32))[0] == want, options
print("OK")
""")
