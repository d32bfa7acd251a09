"""asin, acos, atan, atan2 and their pi-scaled forms (asinpi, acospi, atanpi, atan2pi) for
float and double (half through float), every width. clspv's double ones are garbage (asin of
0.25 is a denormal, acos of anything pi/2, atan(-0) is +0) and its atan2(double) crashes clspv;
its float ones use the device's approximate sqrt.

Each computes an angle as K pi/4 + v (K = 0..4, v a small correction with a sign), so the
radian forms add v to K pi/4 in two parts and the pi forms add v/pi to K/4 exactly:
- atan(y/x), y, x >= 0: t = y/x below 1/2, else u = (y - x)/(y + x) (the difference exact) with
  K = 1; y > x by the complement, K = 2. Quotients are corrected (trig_common's div).
- asin(a): a <= 1/2 a polynomial; above, pi/2 - 2 asin(sqrt((1 - a)/2)), the root corrected
  by its exact residual.
"""
from __future__ import annotations

from vkcl.compiler.prelude.trig_common import HELPER, TYPES, Part, builtin, guarded

F = HELPER


def _kernels(ty) -> str:
    big = ty.lit(2.0 ** (1022 if ty.name == "double" else 126))
    quarter = ("uint2 w = as_uint2(v); return as_double((uint2)(w.x, w.y - (2U << 20)));"
               if ty.name == "double" else "return as_float(as_uint(v) - (2U << 23));")
    return ty.fill(f"""
/* v / 4, exactly, for v at least 4 times the smallest normal */
{F} $T __vkcl_trig_quarter($T v) {{ {quarter} }}
/* atan(u), |u| <= 1/2 */
{F} $T __vkcl_trig_atan_k($T u) {{
  $T z = u * u;
  return u + u * z * {ty.poly('z', 'atan')};
}}
/* asin(a), |a| <= 1/2, and asin(s + c) for the root s + c of z, z <= 1/4 */
{F} $T __vkcl_trig_asin_k($T a) {{
  $T z = a * a;
  return a + a * z * {ty.poly('z', 'asin')};
}}
{F} $T __vkcl_trig_asin_root($T2 s, $T z) {{
  return s.x + (s.y + s.x * z * {ty.poly('z', 'asin')});
}}
/* K pi/4 + v, and (K pi/4 + v) / pi */
{F} $T __vkcl_trig_rad(int K, $T v) {{
  $T hi = K == 1 ? ${{PIO4_HI}} : K == 2 ? ${{PIO2_HI}} : K == 3 ? ${{THREE_PIO4_HI}} : ${{PI_HI}};
  $T lo = K == 1 ? ${{PIO4_LO}} : K == 2 ? ${{PIO2_LO}} : K == 3 ? ${{THREE_PIO4_LO}} : ${{PI_LO}};
  $T s = v + lo;
  return K == 0 ? v : hi + s;
}}
{F} $T __vkcl_trig_turn(int K, $T v) {{
  $T2 w = __vkcl_trig_2mul(v, ${{INV_PI_HI}});
  $T lo = v * ${{INV_PI_LO}} + w.y;
  /* K/4 + w.x: its rounding error kept (|w.x| <= K/4 where K > 0) */
  $T2 s = __vkcl_trig_fast2sum(($T)K * 0.25$S, w.x);
  return K == 0 ? w.x + lo : s.x + (s.y + lo);
}}
/* atan(y / x) = K pi/4 + v for y, x >= 0 finite, not both 0. Where y + x is formed, the two
   are within a factor 2, so both are quartered (an exponent change) when the sum could
   overflow: no multiplication a compiler could move past the sum. */
{F} $T __vkcl_trig_atan2_k($T y, $T x, int *K) {{
  int swap = y > x;
  $T lo = swap ? x : y, hi = swap ? y : x, v;
  if (lo <= 0.5$S * hi) {{
    v = __vkcl_trig_atan_k(__vkcl_trig_div(lo, hi));
    *K = swap ? 2 : 0;
  }} else {{
    if (hi > {big}) {{ lo = __vkcl_trig_quarter(lo); hi = __vkcl_trig_quarter(hi); }}
    v = __vkcl_trig_atan_k(__vkcl_trig_div(lo - hi, lo + hi));
    *K = 1;
  }}
  return swap ? -v : v;
}}
/* asin(a) = K pi/4 + v, 0 <= a <= 1 */
{F} $T __vkcl_trig_asin_parts($T a, int *K) {{
  if (a <= 0.5$S) {{ *K = 0; return __vkcl_trig_asin_k(a); }}
  $T z = (1.0$S - a) * 0.5$S;
  *K = 2;
  return -2.0$S * __vkcl_trig_asin_root(__vkcl_trig_sqrt(z), z);
}}
/* acos(x) = K pi/4 + v, |x| <= 1 */
{F} $T __vkcl_trig_acos_parts($T x, int *K) {{
  $T a = __vkcl_trig_abs(x);
  if (a <= 0.5$S) {{ *K = 2; return -__vkcl_trig_asin_k(x); }}
  $T z = (1.0$S - a) * 0.5$S;
  $T v = 2.0$S * __vkcl_trig_asin_root(__vkcl_trig_sqrt(z), z);
  *K = x > 0.0$S ? 0 : 4;
  return x > 0.0$S ? v : -v;
}}
/* atan2(y, x) = K pi/4 + v for all inputs but NaNs, y's sign left out */
{F} $T __vkcl_trig_atan2_parts($T y, $T x, int *K) {{
  $T ay = __vkcl_trig_abs(y), ax = __vkcl_trig_abs(x);
  /* Both tiny: scaled up together (exactly; the ratio is kept), so that no step below meets a
     denormal, which a driver may flush in one step and not another (seen on the H200:
     atan2(FLT_MIN, 8.8e-39) was neither the exact nor the flushed angle). */
  if (ay < 0x1p-60$S && ax < 0x1p-60$S) {{ ay *= 0x1p64$S; ax *= 0x1p64$S; }}
  int xneg = __vkcl_trig_signbit(x) != 0, yinf = !__vkcl_trig_finite(y), xinf = !__vkcl_trig_finite(x);
  $T v = 0.0$S;
  if (ay == 0.0$S || (xinf && !yinf)) *K = 0;
  else if (yinf) *K = xinf ? 1 : 2;
  else v = __vkcl_trig_atan2_k(ay, ax, K);
  /* x < 0 (or -0): the angle from the negative axis */
  if (xneg) {{ *K = 4 - *K; v = -v; }}
  return v;
}}
""")


KERNELS = "".join(guarded(ty.name, _kernels(ty)) for ty in TYPES)


def _asin(form: str) -> str:
    return f"""  $T a = __vkcl_trig_abs(x);
  if (!(a <= 1.0$S)) return __vkcl_trig_nan(x);
  int K;
  $T v = __vkcl_trig_asin_parts(a, &K);
  return __vkcl_trig_xorsign(__vkcl_trig_{form}(K, v), __vkcl_trig_signbit(x));
"""


def _acos(form: str) -> str:
    return f"""  if (!(__vkcl_trig_abs(x) <= 1.0$S)) return __vkcl_trig_nan(x);
  int K;
  $T v = __vkcl_trig_acos_parts(x, &K);
  return __vkcl_trig_{form}(K, v);
"""


def _atan(form: str) -> str:
    return f"""  if (__vkcl_trig_isnan(x)) return x;
  $T a = __vkcl_trig_abs(x);
  int K = 2;
  $T v = __vkcl_trig_finite(a) ? __vkcl_trig_atan2_k(a, 1.0$S, &K) : 0.0$S;
  return __vkcl_trig_xorsign(__vkcl_trig_{form}(K, v), __vkcl_trig_signbit(x));
"""


def _atan2(form: str) -> str:
    return f"""  if (__vkcl_trig_isnan(y) || __vkcl_trig_isnan(x)) return __vkcl_trig_nan(x);
  int K;
  $T v = __vkcl_trig_atan2_parts(y, x, &K);
  return __vkcl_trig_xorsign(__vkcl_trig_{form}(K, v), __vkcl_trig_signbit(y));
"""


NAMES = ("asin", "asinpi", "acos", "acospi", "atan", "atanpi", "atan2", "atan2pi")
PARTS = (
    Part(NAMES, KERNELS),
    Part(("asin",), builtin("asin", 1, _asin("rad"))),
    Part(("asinpi",), builtin("asinpi", 1, _asin("turn"))),
    Part(("acos",), builtin("acos", 1, _acos("rad"))),
    Part(("acospi",), builtin("acospi", 1, _acos("turn"))),
    Part(("atan",), builtin("atan", 1, _atan("rad"))),
    Part(("atanpi",), builtin("atanpi", 1, _atan("turn"))),
    Part(("atan2",), builtin("atan2", 2, _atan2("rad"))),
    Part(("atan2pi",), builtin("atan2pi", 2, _atan2("turn"))),
)
