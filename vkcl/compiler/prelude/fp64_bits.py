"""Double builtins computed exactly on the bits: copysign, signbit, sign, round, ilogb, logb,
frexp, modf, fract, ldexp, nextafter, fdim, maxmag, minmag, isfinite, isnormal (fabs is
fabs.py's). clspv's double ones are wrong (round works in float, ilogb(1.5) = INT_MIN,
signbit(double) aborts clspv and fdim(double3) crashes it, NaN and infinity go wrong in logb,
frexp, modf, fract, ldexp, nextafter, maxmag and minmag; sign(-0) is +0; isfinite and isnormal
of a double2-4 built from scalars go through its fabs, which masks 32 bits of 64: isfinite(-inf)
was true, isnormal always false; its isinf and isnan are right, and stay, so that the many
programs that test floats with them do not compile this part). One part per builtin; each is
exact, with C99 Annex F's and OpenCL's special values. clspv's trunc, floor, fmax and fmin of
doubles are right (tests/icd/test_math_fp64.py) and are used.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import guarded
from vkcl.compiler.prelude.fp64_common import BITS, INTERNAL, Part, once, overload_set

F = INTERNAL
# name: (parameters, result kind, the scalar double function __vkcl_fp64_<name>, or "" where
# BITS has it already)
_FUNCTIONS = {
    "copysign": ("gg", "g", ""),
    "isfinite": ("g", "r", f"{F} int __vkcl_fp64_isfinite(double x) {{ return __vkcl_fp64_finite(x); }}\n"),
    "isnormal": ("g", "r", f"""{F} int __vkcl_fp64_isnormal(double x) {{
  uint e = as_uint2(x).y & 0x7FF00000U;
  return e != 0U && e != 0x7FF00000U;
}}
"""),
    "signbit": ("g", "r", f"{F} int __vkcl_fp64_signbit(double x) {{ return (int)(as_uint2(x).y >> 31); }}\n"),
    "sign": ("g", "g", f"""{F} double __vkcl_fp64_sign(double x) {{
  return __vkcl_fp64_isnan(x) ? 0.0 : x == 0.0 ? x : __vkcl_fp64_copysign(1.0, x);
}}
"""),
    # x - trunc(x) is exact; a half or more away rounds away from zero (trunc is exact too)
    "round": ("g", "g", f"""{F} double __vkcl_fp64_round(double x) {{
  double t = trunc(x);
  double d = x - t;
  return __vkcl_fp64_abs(d) >= 0.5 ? t + __vkcl_fp64_copysign(1.0, x) : t;
}}
"""),
    "ilogb": ("g", "i", f"""{F} int __vkcl_fp64_ilogb(double x) {{
  uint h = as_uint2(x).y & 0x7FFFFFFFU, l = as_uint2(x).x;
  if (h >= 0x7FF00000U) return h > 0x7FF00000U || l != 0U ? FP_ILOGBNAN : INT_MAX;
  if (h >= 0x00100000U) return (int)(h >> 20) - 1023;
  if ((h | l) == 0U) return FP_ILOGB0;
  return -1011 - (int)clz(as_ulong(x) & 0x000FFFFFFFFFFFFFUL);  /* a denormal: its top bit */
}}
"""),
    "logb": ("g", "g", f"""{F} double __vkcl_fp64_logb(double x) {{
  if (!__vkcl_fp64_finite(x)) return x * x;  /* NaN, +inf */
  if (x == 0.0) return -__vkcl_fp64_inf();
  int e = __vkcl_fp64_ilogb(x);
  return (double)e;
}}
"""),
    # (mantissa in [1/2, 1), exponent); a denormal is scaled to a normal first
    "frexp": ("gQ", "g", f"""{F} double2 __vkcl_fp64_frexp(double x) {{
  if (!__vkcl_fp64_finite(x) || x == 0.0) return (double2)(x, 0.0);
  int bias = 1022;
  if ((as_uint2(x).y & 0x7FF00000U) == 0U) {{ x = x * 0x1p54; bias = 1022 + 54; }}
  uint2 w = as_uint2(x);
  double m = as_double((uint2)(w.x, (w.y & 0x800FFFFFU) | 0x3FE00000U));
  return (double2)(m, (double)((int)((w.y >> 20) & 0x7FFU) - bias));
}}
"""),
    # OpenCL's modf: *iptr = trunc(x), copysign(isinf(x) ? 0 : x - *iptr, x)
    "modf": ("gP", "g", f"""{F} double2 __vkcl_fp64_modf(double x) {{
  double i = trunc(x);
  double f = __vkcl_fp64_isinf(x) ? 0.0 : x - i;
  return (double2)(__vkcl_fp64_copysign(f, x), i);
}}
"""),
    # fmin(x - floor(x), 0x1.fffffffffffffp-1); +-0 and +-inf give +-0, NaN NaN
    "fract": ("gP", "g", f"""{F} double2 __vkcl_fp64_fract(double x) {{
  double i = floor(x);
  double f = x - i;
  f = f < 0x1.fffffffffffffp-1 ? f : 0x1.fffffffffffffp-1;
  if (x == 0.0 || __vkcl_fp64_isinf(x)) f = __vkcl_fp64_copysign(0.0, x);
  if (__vkcl_fp64_isnan(x)) f = x;
  return (double2)(f, i);
}}
"""),
    "ldexp": ("gi", "g", f"{F} double __vkcl_fp64_ldexp(double x, int n) {{ return __vkcl_fp64_scale(x, n); }}\n"),
    "nextafter": ("gg", "g", f"""{F} double __vkcl_fp64_nextafter(double x, double y) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y)) return x + y;
  if (x == y) return y;
  if (x == 0.0) return __vkcl_fp64_copysign(0x1p-1074, y);
  long b = as_long(x);
  return as_double((x < y) == (x > 0.0) ? b + 1L : b - 1L);
}}
"""),
    # (clspv's fdim of double3 crashes it)
    "fdim": ("gg", "g", f"""{F} double __vkcl_fp64_fdim(double x, double y) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y)) return x + y;
  return x > y ? x - y : 0.0;
}}
"""),
    "maxmag": ("gg", "g", f"""{F} double __vkcl_fp64_maxmag(double x, double y) {{
  double ax = __vkcl_fp64_abs(x), ay = __vkcl_fp64_abs(y);
  return ax > ay ? x : ay > ax ? y : fmax(x, y);
}}
"""),
    "minmag": ("gg", "g", f"""{F} double __vkcl_fp64_minmag(double x, double y) {{
  double ax = __vkcl_fp64_abs(x), ay = __vkcl_fp64_abs(y);
  return ax < ay ? x : ay < ax ? y : fmin(x, y);
}}
"""),
}

# ilogb's scalar function, which logb's and hypot's parts use too
ILOGB = once("ILOGB", guarded("double", _FUNCTIONS["ilogb"][2]))


def _part(name: str) -> Part:
    params, ret, scalar = _FUNCTIONS[name]
    if name in ("ilogb", "logb"):
        scalar = ILOGB + (guarded("double", scalar) if name == "logb" else "")
    else:
        scalar = guarded("double", scalar)
    return Part((name,), BITS + scalar + overload_set(name, params, ret, scalar_int=name == "ldexp"))


PARTS = tuple(_part(name) for name in _FUNCTIONS)
