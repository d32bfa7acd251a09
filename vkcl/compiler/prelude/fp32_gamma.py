"""tgamma, lgamma and lgamma_r for float and half (half through float). clspv's was wrong: tgamma(-0) was +inf (the
spec: -inf), tgamma(-1653.28) +inf (a tiny value: +-0), tgamma(-0x1.0002p+9) +inf (-0) and
tgamma(-0x1.002p+3) 16.7 ulp off (the OpenCL-CTS).

x = n + f, n the nearest integer, |f| <= 1/2, both exact. Gamma(2 + f) = 1 + f P(f), P a
minimax polynomial (codegen/gen_fp32_tables.py), and the recurrence gives the rest exactly
enough: Gamma(x) = Gamma(2 + f) (f + 2) ... (f + n - 1) for n >= 2, and
Gamma(2 + f) / ((f + n) ... (f + 1)) for n <= 1. Each factor f + j is an exact two-sum, their
product a double-float (trig_common's exact products) kept below 2^64 by exact scalings, f
itself (the factor that may be tiny) taken as its significand and exponent, and the quotient
corrected by its exact residual: one rounding at the end (two where the result is denormal).
Beyond x = 36 the result overflows; below -43.5 it underflows (+-0: negative where floor(x)
is odd); NaN for negative integers and -inf, +-inf for +-0.

lgamma (no accuracy limit in the spec): clspv's was +inf for tiny negative x (lgamma(-3e-21),
not 47.26) and -inf for -inf (+inf). vkcl's takes, for x in [-43.5, 36], the log of the
recurrence's double-float above (scaled to its value first), within 4.2 ulp for positive x and
2^-24 absolute near lgamma's zeros (133 ulp relative at -2.7472); above 36, Stirling's series;
below -43.5, the reflection log(pi / |sin(pi f)|) - lgamma(1 - x) (within 3 ulp). The builtin
log is called from one function (its code compiled once). lgamma_r's sign is Gamma's (clspv's
for zeros and poles).
"""
from __future__ import annotations

from vkcl.compiler.prelude.fp32_common import HELPER, INTERNAL, Part, overload_set
from vkcl.compiler.prelude.fp32_tables import TABLES
from vkcl.compiler.prelude.trig_common import FLOAT

F = HELPER


def _poly(var: str, coeffs: list[float]) -> str:
    text = float.hex(coeffs[-1]) + "f"
    for c in reversed(coeffs[:-1]):
        text = f"({float.hex(c)}f + {var} * {text})"
    return text


# Double-float arithmetic on float2 (value, error) and exact scaling.
DD = f"""
/* a b for double-floats, the result renormalized */
{F} float2 __vkcl_f32_ddmul(float2 a, float2 b) {{
  float2 p = __vkcl_trig_2mul(a.x, b.x);
  float t = a.x * b.y;
  float e = p.y + t;
  t = a.y * b.x;
  e = e + t;
  return __vkcl_trig_fast2sum(p.x, e);
}}
/* a / b for double-floats (b.x normal): corrected by the exact residual */
{F} float2 __vkcl_f32_dddiv(float2 a, float2 b) {{
  float q = a.x / b.x;
  float2 p = __vkcl_trig_2mul(q, b.x);
  float r = a.x - p.x, t = q * b.y;
  r = r - p.y;
  r = r + a.y;
  r = r - t;
  return __vkcl_trig_fast2sum(q, r / b.x);
}}
/* v 2**k for v finite, nonzero, any k: one rounding, where the result is denormal, overflows
   or underflows */
{F} float __vkcl_f32_scalbn(float v, int k) {{
  uint b = as_uint(v);
  if ((b & 0x7F800000U) == 0U) {{ v = v * 0x1p24f; k -= 24; b = as_uint(v); }}
  k += (int)((b >> 23) & 0xFFU) - 127;
  v = as_float((b & 0x807FFFFFU) | 0x3F800000U);
  if (k > 127) return v * 0x1p127f * 2.0f;
  if (k >= -126) return v * as_float((uint)(k + 127) << 23);
  if (k < -152) return v * 0.0f;
  v = v * as_float((uint)(k + 64 + 127) << 23);
  return v * 0x1p-64f;
}}
"""

GAMMA = f"""
/* Gamma(x) = (r.x + r.y) 2^e for x in [-43.5, 36], not 0 and not a negative integer */
{INTERNAL} float2 __vkcl_f32_gamma_dd(float x, int *e) {{
  float nf = rint(x);
  float f = x - nf;
  int n = (int)nf, k = 0;
  int lo = n >= 2 ? 2 : n, hi = n >= 2 ? n - 1 : 1;
  float2 p = (float2)(1.0f, 0.0f);
  for (int j = lo; j <= hi; j++) {{
    if (j == 0) continue;
    p = __vkcl_f32_ddmul(p, __vkcl_trig_2sum(f, (float)j));
    if (__vkcl_trig_abs(p.x) > 0x1p64f) {{ p = p * 0x1p-64f; k += 64; }}
  }}
  if (n <= 0) {{
    /* the factor f: its significand into the product, its exponent into k */
    float m = f;
    uint fb = as_uint(f);
    if ((fb & 0x7F800000U) == 0U) {{ m = m * 0x1p24f; k -= 24; fb = as_uint(m); }}
    k += (int)((fb >> 23) & 0xFFU) - 127;
    m = as_float((fb & 0x807FFFFFU) | 0x3F800000U);
    p = __vkcl_f32_ddmul(p, (float2)(m, 0.0f));
  }}
  float g = f * {_poly('f', TABLES['gamma2'])};
  float2 G = __vkcl_trig_fast2sum(1.0f, g);
  *e = n >= 2 ? k : -k;
  return n >= 2 ? __vkcl_f32_ddmul(G, p) : __vkcl_f32_dddiv(G, p);
}}
"""

TGAMMA = f"""
{INTERNAL} float __vkcl_f32_tgamma_k(float x) {{
  uint b = as_uint(x), a = b & 0x7FFFFFFFU;
  if (a > 0x7F800000U) return x;
  if (a == 0x7F800000U) return b >> 31 ? as_float(0x7FC00000U) : x;
  if (a == 0U) return as_float(b | 0x7F800000U);
  if (x > 36.0f) return as_float(0x7F800000U);
  float nf = rint(x);
  if (x < 0.0f && x == nf) return as_float(0x7FC00000U);
  if (x < -43.5f) {{
    /* |Gamma| below the smallest denormal; its sign alternates between the poles */
    int fl = (int)nf - (x < nf ? 1 : 0);
    return (fl & 1) ? -0.0f : 0.0f;
  }}
  int e;
  float2 r = __vkcl_f32_gamma_dd(x, &e);
  return __vkcl_f32_scalbn(r.x + r.y, e);
}}
"""

LGAMMA = f"""
/* the builtin log, called from one function (its code once) */
{INTERNAL} float __vkcl_f32_log(float v) {{ return log(v); }}
/* lgamma(y) for y > 36 finite: (y - 1/2) (log y - 1) - 1/2 + log(2 pi)/2 + 1/(12 y)
   - 1/(360 y^3) (log y - 1 exact; no overflow before the result does) */
{INTERNAL} float __vkcl_f32_stirling(float y) {{
  float l = __vkcl_f32_log(y) - 1.0f, z = 1.0f / y;
  float z2 = z * z, t = y - 0.5f;
  float s = (0x1.d67f1cp-1f - 0.5f) + z * (0x1.555556p-4f - z2 * 0x1.6c16c2p-9f);
  t = t * l;
  return t + s;
}}
/* log|Gamma(x)|, *s the sign of Gamma(x) (+-1 for +-0 and 1 at the poles, as clspv's) */
{INTERNAL} float __vkcl_f32_lgamma_k(float x, int *s) {{
  uint b = as_uint(x), a = b & 0x7FFFFFFFU;
  *s = 1;
  if (a > 0x7F800000U) return x;
  if (a == 0x7F800000U) return as_float(0x7F800000U);
  if (a == 0U) {{ *s = b >> 31 ? -1 : 1; return as_float(0x7F800000U); }}
  float nf = rint(x);
  if (x < 0.0f && x == nf) return as_float(0x7F800000U);
  int fl = (int)nf - (x < nf ? 1 : 0);
  /* a denormal's sign from its bit: a device that flushes denormals in comparisons (the H200)
     saw -denormal < 0 as false */
  *s = a < 0x00800000U ? (b >> 31 ? -1 : 1) : (x > 0.0f || !(fl & 1) ? 1 : -1);
  /* log|u| + v + w, log called from one place (one copy of its code) */
  float u, v, w = 0.0f;
  if (x > 36.0f || x < -43.5f) {{
    /* Stirling's series; below -43.5 Gamma(x) Gamma(1 - x) = pi / sin(pi x):
       log(pi / |sin(pi f)|) - lgamma(1 - x), f = x - nf and 1 - x exact (|x| < 2^23 here) */
    float y = x > 0.0f ? x : 1.0f - x;
    float st = __vkcl_f32_stirling(y);
    if (x > 0.0f) return st;
    u = 0x1.921fb6p+1f / sinpi(x - nf);
    v = -st;
  }} else {{
    /* the exact recurrence's double-float, scaled to its value where that is a normal float
       (no cancellation with e ln 2 near lgamma's zeros) */
    int e;
    float2 r = __vkcl_f32_gamma_dd(x, &e);
    int ev = (int)((as_uint(r.x) >> 23) & 0xFFU) - 127 + e;
    if (ev > -126 && ev < 127) {{
      u = __vkcl_f32_scalbn(r.x, e);
      v = r.y == 0.0f ? 0.0f : __vkcl_f32_scalbn(r.y, e);
      v = v / u;
    }} else {{
      float de = (float)e, t = de * ${{LN2_LO}};
      u = r.x;
      v = r.y / r.x;
      v = v + t;
      w = de * ${{LN2_HI}};
    }}
  }}
  float l = __vkcl_f32_log(__vkcl_trig_abs(u));
  return w + (l + v);
}}
{INTERNAL} float __vkcl_f32_lgamma_value(float x) {{ int s; return __vkcl_f32_lgamma_k(x, &s); }}
"""

NAMES = ("tgamma", "lgamma", "lgamma_r")
# The names whose parts use trig_common's exact arithmetic (trig.py puts it in for them).
EXACT_USERS = NAMES
PARTS = (
    Part(NAMES, DD + GAMMA),
    Part(("tgamma",), TGAMMA + overload_set("tgamma", "g", "__vkcl_f32_tgamma_k")),
    Part(("lgamma", "lgamma_r"), FLOAT.fill(LGAMMA)),
    Part(("lgamma",), overload_set("lgamma", "g", "__vkcl_f32_lgamma_value")),
    Part(("lgamma_r",), overload_set("lgamma_r", "gQ", "__vkcl_f32_lgamma_k")),
)
