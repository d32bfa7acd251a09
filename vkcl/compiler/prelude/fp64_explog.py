"""exp, exp10, expm1, log, log2, log10, log1p, pow, pown, powr, rootn and cbrt of doubles, on the
double-double kernels of fp64_dd.py. clspv's are wrong: exp(10) is 660 ulps off, exp10 500,
expm1(-0) is +0, log(inf) is 709.78, pow(NaN, NaN) is 1, cbrt(inf) NaN, and the special values
of pow, pown, powr and rootn go wrong. (clspv's exp2 of doubles is right, but exp2(1024) is 1
(the CTS): the part sends x >= 1024 to +inf and the rest to it.)

Each is computed in double-double and rounded once, but for a denormal result (scaled after
rounding: within an ulp); pow, pown, powr and rootn form y ln|x| as a double-double from
the double-double logarithm, so the error of the exponential's argument stays near 2^-56 and
the result within a few ulps (OpenCL allows 16). Special values follow C99 Annex F and
OpenCL's additions (pown(x, 0) = 1, powr and rootn's own rules).
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import guarded
from vkcl.compiler.prelude.fp64_common import BITS, HELPER, INTERNAL, Part, once, overload_set
from vkcl.compiler.prelude.fp64_dd import EXP, LOG, dd

F, H = INTERNAL, HELPER
I = F
NAN, INF = "__vkcl_fp64_nan()", "__vkcl_fp64_inf()"

# pow's kernels: exp(y ln|x|) with y ln|x| in double-double.
_POW = LOG + EXP + once("POW", guarded("double", f"""
/* exp(z) of a double-double z */
{I} double __vkcl_dd_exp(double2 z) {{
  if (z.x > 710.0) return {INF};
  if (z.x < -746.0) return 0.0;
  int k;
  double2 v = __vkcl_dd_exp_k(z, &k);
  return __vkcl_dd_ldexp(v, k);
}}
/* |x|^y, finite x != 0, finite y */
{I} double __vkcl_dd_powy(double ax, double y) {{
  double2 l = __vkcl_dd_log(ax);
  double z = l.x * y;  /* out of range (y huge included): no double-double product needed */
  if (l.x == 0.0) return 1.0;  /* |x| = 1: y may be too large to split */
  if (z > 710.0 || z < -746.0) return z > 0.0 ? {INF} : 0.0;
  return __vkcl_dd_exp(__vkcl_dd_mul_d(l, y));
}}
/* pow with C99 Annex F's special values */
{I} double __vkcl_dd_pow_c99(double x, double y) {{
  if (y == 0.0 || x == 1.0) return 1.0;
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y)) return x + y;
  double ax = __vkcl_fp64_abs(x), ay = __vkcl_fp64_abs(y);
  if (__vkcl_fp64_isinf(y)) return ax == 1.0 ? 1.0 : (ax > 1.0) == (y > 0.0) ? {INF} : 0.0;
  int integral = trunc(y) == y;
  double hy = y * 0.5;
  int odd = integral && ay < 0x1p53 && trunc(hy) != hy;
  uint neg = odd ? __vkcl_fp64_signbits(x) : 0U;  /* the sign of an odd power */
  if (x == 0.0) return __vkcl_fp64_xorsign(y < 0.0 ? {INF} : 0.0, neg);
  if (__vkcl_fp64_isinf(x)) return __vkcl_fp64_xorsign(y > 0.0 ? {INF} : 0.0, neg);
  if (x < 0.0 && !integral) return {NAN};
  return __vkcl_fp64_xorsign(__vkcl_dd_powy(ax, y), neg);
}}
"""))

_EXP_FUNCS = {
    "exp": ("710.0", "-746.0", "(double2)(x, 0.0)"),
    "exp10": ("309.0", "-325.0", f"__vkcl_dd_mul_d({dd('ln10')}, x)"),
}


def _exp(name: str) -> str:
    hi, lo, arg = _EXP_FUNCS[name]
    return f"""{F} double __vkcl_fp64_{name}(double x) {{
  if (__vkcl_fp64_isnan(x)) return x;
  if (x > {hi}) return {INF};
  if (x < {lo}) return 0.0;
  int k;
  double2 v = __vkcl_dd_exp_k({arg}, &k);
  return __vkcl_dd_ldexp(v, k);
}}
"""


_SCALARS = {
    "exp": (EXP, _exp("exp")),
    "exp10": (EXP, _exp("exp10")),
    # |x| < 2^-54: x (x + x^2/2 rounds to it); below -38, -1; (e^x - 1 exactly from the
    # double-double e^x)
    "expm1": (EXP, f"""{F} double __vkcl_fp64_expm1(double x) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_abs(x) < 0x1p-54) return x;
  if (x > 710.0) return {INF};
  if (x < -38.0) return -1.0;
  int k;
  double2 v = __vkcl_dd_exp_k((double2)(x, 0.0), &k);
  if (k > 60) return __vkcl_dd_ldexp(v, k);  /* the 1 is below the last bit */
  v = __vkcl_dd_add_d(v * __vkcl_fp64_pow2(k), -1.0);
  return v.x + v.y;
}}
"""),
    "log": (LOG, f"""{F} double __vkcl_fp64_log(double x) {{
  if (!(x > 0.0) || __vkcl_fp64_isinf(x)) return x == 0.0 ? -{INF} : x < 0.0 ? {NAN} : x + x;
  double2 l = __vkcl_dd_log(x);
  return l.x + l.y;
}}
"""),
    # clspv's exp2 scales its result by 2^1024 at x = 1024 exactly, which wraps to 1
    "exp2": (BITS, f"{F} double __vkcl_fp64_exp2(double x) {{ return x >= 1024.0 ? {INF} : exp2(x); }}\n"),
    "log2": (LOG, f"""{F} double __vkcl_fp64_log2(double x) {{
  if (!(x > 0.0) || __vkcl_fp64_isinf(x)) return x == 0.0 ? -{INF} : x < 0.0 ? {NAN} : x + x;
  int e;
  double2 l = __vkcl_dd_log_m(x, &e);
  l = __vkcl_dd_add_d(__vkcl_dd_mul(l, {dd('inv_ln2')}), (double)e);
  return l.x + l.y;
}}
"""),
    "log10": (LOG, f"""{F} double __vkcl_fp64_log10(double x) {{
  if (!(x > 0.0) || __vkcl_fp64_isinf(x)) return x == 0.0 ? -{INF} : x < 0.0 ? {NAN} : x + x;
  int e;
  double2 l = __vkcl_dd_log_m(x, &e);
  l = __vkcl_dd_add(__vkcl_dd_mul(l, {dd('inv_ln10')}), __vkcl_dd_mul_d({dd('log10_2')}, (double)e));
  return l.x + l.y;
}}
"""),
    # ln(u.hi + u.lo) = ln(u.hi) + u.lo / u.hi, u = 1 + x exactly (the next term is below 2^-106)
    "log1p": (LOG, f"""{F} double __vkcl_fp64_log1p(double x) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_abs(x) < 0x1p-54) return x;
  if (!(x > -1.0) || __vkcl_fp64_isinf(x)) return x == -1.0 ? -{INF} : x < -1.0 ? {NAN} : x;
  double2 u = __vkcl_dd_2sum(1.0, x);
  double2 l = __vkcl_dd_add_d(__vkcl_dd_log(u.x), u.y / u.x);
  return l.x + l.y;
}}
"""),
    "pow": (_POW, f"{F} double __vkcl_fp64_pow(double x, double y) {{ return __vkcl_dd_pow_c99(x, y); }}\n"),
    # pown(x, 0) = 1 even for NaN, and pown(+-0, n) as pow's
    "pown": (_POW, f"{F} double __vkcl_fp64_pown(double x, int n) {{ return __vkcl_dd_pow_c99(x, (double)n); }}\n"),
    "powr": (_POW, f"""{F} double __vkcl_fp64_powr(double x, double y) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y)) return x + y;
  if (x < 0.0) return {NAN};
  if (x == 0.0) return y == 0.0 ? {NAN} : y < 0.0 ? {INF} : 0.0;
  if (__vkcl_fp64_isinf(x)) return y == 0.0 ? {NAN} : y < 0.0 ? 0.0 : {INF};
  if (x == 1.0) return __vkcl_fp64_isinf(y) ? {NAN} : 1.0;
  if (y == 0.0) return 1.0;
  if (__vkcl_fp64_isinf(y)) return (x > 1.0) == (y > 0.0) ? {INF} : 0.0;
  return __vkcl_dd_powy(x, y);
}}
"""),
    "rootn": (_POW, f"""{F} double __vkcl_fp64_rootn(double x, int n) {{
  if (n == 0 || __vkcl_fp64_isnan(x)) return {NAN};
  uint neg = (n & 1) != 0 ? __vkcl_fp64_signbits(x) : 0U;
  if (x < 0.0 && neg == 0U) return {NAN};
  if (x == 0.0) return __vkcl_fp64_xorsign(n < 0 ? {INF} : 0.0, neg);
  if (__vkcl_fp64_isinf(x)) return __vkcl_fp64_xorsign(n < 0 ? 0.0 : {INF}, neg);
  double2 l = __vkcl_dd_div(__vkcl_dd_log(__vkcl_fp64_abs(x)), (double2)((double)n, 0.0));
  return __vkcl_fp64_xorsign(__vkcl_dd_exp(l), neg);
}}
"""),
    "cbrt": (_POW, f"""{F} double __vkcl_fp64_cbrt(double x) {{
  if (!__vkcl_fp64_finite(x) || x == 0.0) return x + x;
  double2 l = __vkcl_dd_mul(__vkcl_dd_log(__vkcl_fp64_abs(x)), {dd('third')});
  return __vkcl_fp64_xorsign(__vkcl_dd_exp(l), __vkcl_fp64_signbits(x));
}}
"""),
}
_PARAMS = {"pow": "gg", "powr": "gg", "pown": "gi", "rootn": "gi"}


def _part(name: str) -> Part:
    kernels, scalar = _SCALARS[name]
    return Part((name,), kernels + guarded("double", scalar) + overload_set(name, _PARAMS.get(name, "g")))


PARTS = tuple(_part(name) for name in _SCALARS)
