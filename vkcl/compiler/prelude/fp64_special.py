"""erf, erfc, tgamma, lgamma, lgamma_r and hypot of doubles. clspv's are wrong: erf(NaN) is 0,
erfc(1) is off in its 12th digit, tgamma(NaN) is inf, lgamma(NaN) finite, hypot(NaN, inf)
NaN.

- erf(x) = x P(x^2) below 1 (P interpolates erf(x)/x); erfc(x) = exp(-x^2) G(x) from 1/2 to
  27.3, where it underflows (G = erfc(x) exp(x^2) interpolated in pieces, x^2 exact in
  double-double); erf = 1 - erfc above 1, erfc = 1 - erf below 1/2, 2 - erfc(-x) below -1/2.
- tgamma: 1/gamma(1 + t) interpolated on [-1/2, 1] (an entire function), the recurrence
  gamma(x) = (x - 1) ... (x - n) gamma(x - n) (its factors exact) below 10, Stirling's series
  in double-double above, and gamma(x) = -pi / (x sin(pi x) gamma(-x)) below -1/2, sin(pi x)
  from the exact remainder of x - rint(x). Results carry their power of 2 apart until the end,
  so gamma(-x) may exceed the range.
- lgamma: the same pieces as logarithms, and Taylor series around 1 and 2 (its zeros), so the
  result is accurate relative to itself there; near the zeros between negative integers it is
  accurate relative to ln(pi / |x sin(pi x)|) (OpenCL sets no bound for lgamma).
- hypot: both scaled by a power of 2 to [1, 2), the sum of squares in double-double, its root
  corrected by the exact residual.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import guarded
from vkcl.compiler.prelude.fp64_common import HELPER, INTERNAL, Part, once, overload_set
from vkcl.compiler.prelude.fp64_bits import ILOGB
from vkcl.compiler.prelude.fp64_dd import ARITH, EXP, LOG, dd, horner, lit
from vkcl.compiler.prelude.fp64_tables import TABLES

F, H = INTERNAL, HELPER
I = F
NAN, INF = "__vkcl_fp64_nan()", "__vkcl_fp64_inf()"


def _erfc_g() -> str:
    """G(a) = erfc(a) exp(a^2) for 1/2 <= a < 27.5, piece by piece."""
    lines = []
    for lo, hi, center, coeffs in TABLES["erfc_pieces"]:
        lines.append(f"  if (a < {lit(hi)}) {{ double t = a - {lit(center)}; return {horner('t', coeffs)}; }}")
    return "\n".join(lines[:-1]) + f"\n  double t = a - {lit(TABLES['erfc_pieces'][-1][2])};\n" \
        f"  return {horner('t', TABLES['erfc_pieces'][-1][3])};"


_ERF = EXP + once("ERF", guarded("double", f"""
/* erf(x) for |x| < 1 */
{H} double __vkcl_dd_erf_small(double x) {{
  double u = x * x;
  return x * {horner('u', TABLES['erf_small'])};
}}
{I} double __vkcl_dd_erfc_g(double a) {{
{_erfc_g()}
}}
/* erfc(a) for 1/2 <= a < 27.3, as (v, k): erfc(a) = v 2^k */
{I} double2 __vkcl_dd_erfc_k(double a, int *k) {{
  double2 v = __vkcl_dd_exp_k(-__vkcl_dd_2mul(a, a), k);
  return __vkcl_dd_mul_d(v, __vkcl_dd_erfc_g(a));
}}
"""))

# Each heavy kernel (log, exp, Stirling) is called once per builtin: every call is inlined.
_GAMMA = LOG + once("GAMMA", guarded("double", f"""
/* 1/gamma(1 + t), -1/2 <= t <= 1 */
{H} double __vkcl_dd_rgamma(double t) {{ return {horner('t', TABLES['rgamma'])}; }}
/* sin(pi x) for finite x: r = x - rint(x) is exact, |r| <= 1/2 */
{H} double __vkcl_dd_sinpi(double x) {{
  double n = rint(x);
  double r = x - n;
  double u = r * r;
  double s = r * {horner('u', TABLES['sinpi'])};
  return trunc(n * 0.5) != n * 0.5 ? -s : s;
}}
/* ln gamma(y) for y >= 10 from ln y (a double-double): Stirling's series */
{I} double2 __vkcl_dd_stirling(double y, double2 ln_y) {{
  double w = 1.0 / y;
  double u = w * w;
  double2 l = __vkcl_dd_mul(ln_y, __vkcl_dd_2sum(y, -0.5));
  l = __vkcl_dd_add(l, {dd('half_ln_2pi')});
  l = __vkcl_dd_add_d(l, -y);
  return __vkcl_dd_add_d(l, w * {horner('u', TABLES['stirling'])});
}}
/* gamma(y) for 0 < y < 10 as a double-double: 1/(y R(y)) below 1/2, else the recurrence
   gamma(y) = (y - 1) ... (y - n + 1) / R(y - n), its factors exact */
{I} double2 __vkcl_dd_gamma_small(double y) {{
  if (y < 0.5) return __vkcl_dd_div((double2)(1.0, 0.0), __vkcl_dd_2mul(y, __vkcl_dd_rgamma(y)));
  double n = y < 1.5 ? 1.0 : floor(y);
  double2 v = __vkcl_dd_div((double2)(1.0, 0.0), (double2)(__vkcl_dd_rgamma(y - n), 0.0));
  for (double j = 1.0; j < n; j = j + 1.0) v = __vkcl_dd_mul_d(v, y - j);
  return v;
}}
/* ln of a positive double-double */
{H} double2 __vkcl_dd_log_dd(double2 v) {{ return __vkcl_dd_add_d(__vkcl_dd_log(v.x), v.y / v.x); }}
"""))

_TGAMMA = f"""{F} double __vkcl_fp64_tgamma(double x) {{
  if (__vkcl_fp64_isnan(x)) return x;
  if (__vkcl_fp64_isinf(x)) return x > 0.0 ? x : {NAN};
  if (x == 0.0) return __vkcl_fp64_copysign({INF}, x);
  if (x > 171.7) return {INF};
  double y = __vkcl_fp64_abs(x);
  if (y < 0x1p-60) return 1.0 / x;  /* 1/x - euler's constant + ... */
  if (x < 0.0 && trunc(x) == x) return {NAN};
  if (x < -190.0) return trunc(floor(x) * 0.5) == floor(x) * 0.5 ? 0.0 : -0.0;
  if (y < 0.5) {{ double2 v = __vkcl_dd_gamma_small(x); return v.x + v.y; }}
  /* gamma(y) = v 2^k */
  int k = 0;
  double2 v;
  if (y < 10.0) v = __vkcl_dd_gamma_small(y);
  else v = __vkcl_dd_exp_k(__vkcl_dd_stirling(y, __vkcl_dd_log(y)), &k);
  if (x < 0.0) {{  /* gamma(x) = -pi / (x sin(pi x) gamma(-x)) */
    v = __vkcl_dd_div(-{dd('pi')}, __vkcl_dd_mul(v, __vkcl_dd_2mul(x, __vkcl_dd_sinpi(x))));
    k = -k;
  }}
  return __vkcl_dd_ldexp(v, k);
}}
"""

# (ln |gamma(x)|, the sign of gamma(x): 0 at its poles); one logarithm but for x <= -10
_LGAMMA = _GAMMA + once("LGAMMA", guarded("double", f"""
{I} double2 __vkcl_dd_lgamma_r(double x) {{
  if (__vkcl_fp64_isnan(x)) return (double2)(x, 0.0);
  if (__vkcl_fp64_isinf(x)) return (double2)({INF}, x > 0.0 ? 1.0 : 0.0);
  if (x > {lit(TABLES['lgamma_overflow'])}) return (double2)({INF}, 1.0);
  if (x <= 0.0 && trunc(x) == x) return (double2)({INF}, 0.0);
  double sign = x > 0.0 || trunc(floor(x) * 0.5) == floor(x) * 0.5 ? 1.0 : -1.0;
  double y = __vkcl_fp64_abs(x);
  /* the zeros at 1 and 2: Taylor series */
  double t = x - 1.0;
  if (__vkcl_fp64_abs(t) <= 0.2) {{ double2 l = __vkcl_dd_2mul(t, {horner('t', TABLES['lgamma1'])}); return (double2)(l.x + l.y, 1.0); }}
  t = x - 2.0;
  if (__vkcl_fp64_abs(t) <= 0.2) {{ double2 l = __vkcl_dd_2mul(t, {horner('t', TABLES['lgamma2'])}); return (double2)(l.x + l.y, 1.0); }}
  /* w: what is taken the logarithm of; below 10, with the reflection's pi / |x sin(pi x)| */
  double2 w = (double2)(y, 0.0);
  int big = y >= 10.0;
  if (y >= 0x1p-60 && !big) w = __vkcl_dd_gamma_small(y);
  if (x < 0.0 && y >= 0x1p-60) {{
    double2 r = __vkcl_dd_2mul(y, __vkcl_fp64_abs(__vkcl_dd_sinpi(x)));  /* |x sin(pi x)| */
    if (big) r = __vkcl_dd_div((double2)(1.0, 0.0), r);
    else w = __vkcl_dd_mul(w, r);
    w = big ? r : __vkcl_dd_div({dd('pi')}, w);
  }}
  double2 l = __vkcl_dd_log_dd(w);
  if (y < 0x1p-60) l = -l;  /* ln |gamma(x)| = -ln |x| - euler's constant x + ... */
  else if (x >= 0x1p1000) {{
    /* y (ln y - 1), scaled by 2^-64 so that no step overflows where the result nears DBL_MAX
       (Stirling's products did: NaN); the rest of the series is below 2^-1000 of it */
    l = __vkcl_dd_mul_d(__vkcl_dd_add_d(l, -1.0), y * 0x1p-64);
    return (double2)((l.x + l.y) * 0x1p64, sign);
  }}
  else if (big) {{
    double2 st = __vkcl_dd_stirling(y, x > 0.0 ? l : __vkcl_dd_log(y));
    l = x > 0.0 ? st : __vkcl_dd_add(__vkcl_dd_add(l, {dd('ln_pi')}), -st);
  }}
  return (double2)(l.x + l.y, sign);
}}
"""))

_HYPOT = f"""{F} double __vkcl_fp64_hypot(double x, double y) {{
  double ax = __vkcl_fp64_abs(x), ay = __vkcl_fp64_abs(y);
  if (__vkcl_fp64_isinf(ax) || __vkcl_fp64_isinf(ay)) return {INF};
  if (__vkcl_fp64_isnan(ax) || __vkcl_fp64_isnan(ay)) return ax + ay;
  double big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
  if (small == 0.0) return big;
  int e = __vkcl_fp64_ilogb(big);
  if (e - __vkcl_fp64_ilogb(small) > 60) return big + small;
  double b = __vkcl_fp64_scale(big, -e), s = __vkcl_fp64_scale(small, -e);
  double2 q = __vkcl_dd_add(__vkcl_dd_2mul(b, b), __vkcl_dd_2mul(s, s));
  double r = sqrt(q.x);
  double2 r2 = __vkcl_dd_2mul(r, r);
  double c = q.x - r2.x;
  c = c - r2.y;
  c = (c + q.y) / (r + r);
  return __vkcl_fp64_scale(r + c, e);
}}
"""

_SCALARS = {
    "erf": (_ERF, "g", f"""{F} double __vkcl_fp64_erf(double x) {{
  if (__vkcl_fp64_isnan(x)) return x;
  double a = __vkcl_fp64_abs(x);
  if (a < 1.0) return __vkcl_dd_erf_small(x);
  if (a >= 6.0) return __vkcl_fp64_copysign(1.0, x);
  int k;
  double2 c = __vkcl_dd_erfc_k(a, &k);
  c = __vkcl_dd_add_d(-c * __vkcl_fp64_pow2(k), 1.0);
  return __vkcl_fp64_copysign(c.x + c.y, x);
}}
"""),
    "erfc": (_ERF, "g", f"""{F} double __vkcl_fp64_erfc(double x) {{
  if (__vkcl_fp64_isnan(x)) return x;
  if (x >= 27.3) return 0.0;
  if (x < -6.0) return 2.0;
  double a = __vkcl_fp64_abs(x);
  if (a < 0.5) {{
    double2 c = __vkcl_dd_2sum(1.0, -__vkcl_dd_erf_small(x));
    return c.x + c.y;
  }}
  int k;
  double2 c = __vkcl_dd_erfc_k(a, &k);
  if (x > 0.0) return __vkcl_dd_ldexp(c, k);
  c = __vkcl_dd_add_d(-c * __vkcl_fp64_pow2(k), 2.0);
  return c.x + c.y;
}}
"""),
    "tgamma": (EXP + _GAMMA, "g", _TGAMMA),
    "lgamma": (_LGAMMA, "g", f"{F} double __vkcl_fp64_lgamma(double x) {{ return __vkcl_dd_lgamma_r(x).x; }}\n"),
    "lgamma_r": (_LGAMMA, "gQ", f"{F} double2 __vkcl_fp64_lgamma_r(double x) {{ return __vkcl_dd_lgamma_r(x); }}\n"),
    "hypot": (ARITH + ILOGB, "gg", _HYPOT),
}


def _part(name: str) -> Part:
    kernels, params, scalar = _SCALARS[name]
    return Part((name,), kernels + guarded("double", scalar) + overload_set(name, params))


PARTS = tuple(_part(name) for name in _SCALARS)
