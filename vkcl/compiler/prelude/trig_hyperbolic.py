"""sinh, cosh, tanh, asinh, acosh, atanh for float and double (half through float), every
width. clspv's double ones are garbage (sinh(x) = x, cosh(x) = 1, atanh(1) = 3.16); its float
ones lean on the device's exp, log and sqrt, whose Vulkan accuracy is loose.

Their own exp and log (not the builtins, which other prelude parts may replace):
- exp: x = k ln2 + r, ln2 in two parts (k times the first exact), exp(r) = 1 + r + r^2 E(r),
  scaled by 2**k in two steps (no overflow before the end).
- log: u = 2**k m, m in [sqrt(1/2), sqrt(2)), f = m - 1 exact, s = f/(2 + f),
  log(1 + f) = f - (f^2/2 - s (f^2/2 + s^2 G(s^2))): the quotient only in a small term.
  log1p(w) adds the rounding error of u = 1 + w as (w - (u - 1)) / u.
Then: sinh, cosh from exp(|x|) and its reciprocal (polynomial for sinh below 1), tanh as
1 - 2/(exp(2|x|) + 1) (polynomial below 0.55), asinh = log1p(a + a^2/(1 + sqrt(1 + a^2))),
acosh near 1 = log1p(t + sqrt(2t + t^2)), atanh = log1p(2a/(1 - a))/2, logs of 2a for large
arguments.
"""
from __future__ import annotations

from vkcl.compiler.prelude.trig_common import HELPER, TYPES, Part, builtin, guarded

F = HELPER

_LOG_DECOMPOSE = {
    # u > 0 finite: k and m with u = 2**k m, m in [1, 2)
    "float": """  int k = 0;
  if (u < 0x1p-126f) { u = u * 0x1p24f; k = -24; }
  uint b = as_uint(u);
  k += (int)(b >> 23) - 127;
  float m = as_float((b & 0x7FFFFFU) | 0x3F800000U);
""",
    "double": """  int k = 0;
  if (u < 0x1p-1022) { u = u * 0x1p54; k = -54; }
  uint2 b = as_uint2(u);
  k += (int)(b.y >> 20) - 1023;
  double m = as_double((uint2)(b.x, (b.y & 0xFFFFFU) | 0x3FF00000U));
""",
}


def _kernels(ty) -> str:
    return ty.fill(f"""
/* exp(x) = p 2**k, |x| small enough that k fits (|x| < 2**10) */
{F} $T __vkcl_trig_exp_k($T x, int *k) {{
  $T t = x * ${{LOG2E_HI}};
  $T kf = ($T)(int)(t + (t < 0.0$S ? -0.5$S : 0.5$S));
  *k = (int)kf;
  $T p = kf * ${{LN2_P0}};
  $T r = x - p;
  p = kf * ${{LN2_P1}};
  r = r - p;
  $T r2 = r * r;
  return 1.0$S + (r + r2 * {ty.poly('r', 'exp')});
}}
/* p 2**k, through two scalings (2**k alone may not exist) */
{F} $T __vkcl_trig_scale($T p, int k) {{
  int k1 = k / 2;
  return p * __vkcl_trig_pow2(p, k1) * __vkcl_trig_pow2(p, k - k1);
}}
/* log(1 + f) + c + k ln2 for f in [sqrt(1/2) - 1, sqrt(2) - 1], c a small correction */
{F} $T __vkcl_trig_log_f($T f, $T c, int k) {{
  $T s = f / (2.0$S + f), z = s * s, hf = 0.5$S * f;
  $T hfsq = hf * f;
  $T dk = ($T)k;
  $T hi = dk * ${{LN2_P0}};
  $T lo = dk * ${{LN2_P1}} + c;
  $T t = s * (hfsq + z * {ty.poly('z', 'log')}) + lo;
  t = hfsq - t;
  t = f - t;
  return hi + t;
}}
/* log(u) + c + extra ln2 for u > 0 finite, c a small correction */
{F} $T __vkcl_trig_log_k($T u, $T c, int extra) {{
{_LOG_DECOMPOSE[ty.name]}  if (m > ${{SQRT2}}) {{ m = m * 0.5$S; k += 1; }}
  return __vkcl_trig_log_f(m - 1.0$S, c, k + extra);
}}
/* log1p(w + e) for w > -1 finite, e a small correction: w itself where 1 + w needs no
   exponent change (so no rounding), else 1 + w and its rounding error */
{F} $T __vkcl_trig_log1p($T w, $T e) {{
  if (w >= ${{SQRT1_2M1}} && w <= ${{SQRT2M1}}) return __vkcl_trig_log_f(w, e / (1.0$S + w), 0);
  $T u = 1.0$S + w;
  $T d = u - 1.0$S;
  d = w - d;
  return __vkcl_trig_log_k(u, (d + e) / u, 0);
}}
""", **_log_bounds(ty))


def _log_bounds(ty) -> dict[str, str]:
    """sqrt(2) (where m is halved), and the range of w whose 1 + w lies in
    [sqrt(1/2), sqrt(2)]: all rounded inwards."""
    import math
    r2 = math.sqrt(2.0)
    if ty.name == "float":
        import struct
        f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]  # noqa: E731
        r2 = f32(r2)
    return {"SQRT2": ty.lit(r2), "SQRT2M1": ty.lit(0.41), "SQRT1_2M1": ty.lit(-0.29)}


KERNELS = "".join(guarded(ty.name, _kernels(ty)) for ty in TYPES)

# The largest |x| whose sinh/cosh is finite is about 89.4 (float) and 710.5 (double): beyond a
# bound a little above, infinity (exp_k is given at most that); BIG: where asinh, acosh become
# log(2|x|).
_LIMITS = {"float": ("0x1.68p6f", "0x1p13f"), "double": ("0x1.64p9", "0x1p28")}


def _sinh_cosh(cosh: bool) -> str:
    odd = "" if cosh else """  if (a < 1.0$S) {
    $T z = a * a;
    return __vkcl_trig_xorsign(a + a * z * POLY, __vkcl_trig_signbit(x));
  }
"""
    combine = "h + g" if cosh else "h - g"
    tail = "  return v;\n" if cosh else "  return __vkcl_trig_xorsign(v, __vkcl_trig_signbit(x));\n"
    return f"""  if (__vkcl_trig_isnan(x)) return x;
  $T a = __vkcl_trig_abs(x);
{odd}  if (a > LIMIT) return {"" if cosh else "__vkcl_trig_xorsign("}__vkcl_trig_inf(x){"" if cosh else ", __vkcl_trig_signbit(x))"};
  int k;
  $T p = __vkcl_trig_exp_k(a, &k);
  /* exp(a)/2 and exp(-a)/2 */
  $T h = __vkcl_trig_scale(p, k - 1), g = __vkcl_trig_scale(__vkcl_trig_div(0.5$S, p), -k);
  $T v = {combine};
{tail}"""


_TANH = """  if (__vkcl_trig_isnan(x)) return x;
  $T a = __vkcl_trig_abs(x), v;
  if (a < 0.55$S) {
    $T z = a * a;
    v = a + a * z * POLY;
  } else {
    int k;
    $T p = __vkcl_trig_exp_k(a < 40.0$S ? a + a : 80.0$S, &k);
    $T e = __vkcl_trig_scale(p, k) + 1.0$S;
    v = 1.0$S - __vkcl_trig_div(2.0$S, e);
  }
  return __vkcl_trig_xorsign(v, __vkcl_trig_signbit(x));
"""
_ASINH = """  $T a = __vkcl_trig_abs(x), v;
  if (!__vkcl_trig_finite(a)) return x;
  if (a < 2.0$S) {
    $T2 r = __vkcl_trig_sqrt(1.0$S + a * a);
    $T d = 1.0$S + r.x;
    v = __vkcl_trig_log1p(a + a * a / (d + r.y), 0.0$S);
  } else if (a < BIG) {
    $T2 r = __vkcl_trig_sqrt(a * a + 1.0$S);
    $T y = a + r.x;
    $T c = (r.y - (y - a - r.x)) / y;
    v = __vkcl_trig_log_k(y, c, 0);
  } else {
    v = __vkcl_trig_log_k(a, 0.0$S, 1);
  }
  return __vkcl_trig_xorsign(v, __vkcl_trig_signbit(x));
"""
_ACOSH = """  if (!(x >= 1.0$S)) return __vkcl_trig_nan(x);
  if (!__vkcl_trig_finite(x)) return x;
  if (x < 2.0$S) {
    $T t = x - 1.0$S;
    $T2 r = __vkcl_trig_sqrt(t * t + (t + t));
    $T2 w = __vkcl_trig_fast2sum(r.x, t);
    return __vkcl_trig_log1p(w.x, w.y + r.y);
  }
  if (x < BIG) {
    $T2 r = __vkcl_trig_sqrt(x * x - 1.0$S);
    $T y = x + r.x;
    return __vkcl_trig_log_k(y, r.y / y, 0);
  }
  return __vkcl_trig_log_k(x, 0.0$S, 1);
"""
_ATANH = """  $T a = __vkcl_trig_abs(x), v;
  if (!(a <= 1.0$S)) return __vkcl_trig_nan(x);
  if (a == 1.0$S) return __vkcl_trig_xorsign(__vkcl_trig_inf(x), __vkcl_trig_signbit(x));
  $T d = 1.0$S - a;
  if (a < 0.5$S) {
    $T a2 = a + a;
    v = __vkcl_trig_log1p(a2 + a2 * a / d, 0.0$S);
  } else {
    v = __vkcl_trig_log1p(__vkcl_trig_div(a + a, d), 0.0$S);
  }
  return __vkcl_trig_xorsign(0.5$S * v, __vkcl_trig_signbit(x));
"""


def _body(template: str, poly: str | None = None) -> dict[str, str]:
    """Per-type texts with LIMIT, BIG and POLY put in (builtin() fills the rest)."""
    out = {}
    for ty in TYPES:
        limit, big = _LIMITS[ty.name]
        text = template.replace("LIMIT", limit).replace("BIG", big)
        if poly:
            text = text.replace("POLY", ty.poly("z", poly))
        out[ty.name] = text
    return out


NAMES = ("sinh", "cosh", "tanh", "asinh", "acosh", "atanh")
PARTS = (
    Part(NAMES, KERNELS),
    Part(("sinh",), builtin("sinh", 1, _body(_sinh_cosh(False), "sinh"))),
    Part(("cosh",), builtin("cosh", 1, _body(_sinh_cosh(True)))),
    Part(("tanh",), builtin("tanh", 1, _body(_TANH, "tanh"))),
    Part(("asinh",), builtin("asinh", 1, _body(_ASINH))),
    Part(("acosh",), builtin("acosh", 1, _body(_ACOSH))),
    Part(("atanh",), builtin("atanh", 1, _body(_ATANH))),
)
