"""Double builtins computed exactly in integer arithmetic: fmod, remainder, remquo and fma.
clspv's are wrong: fmod, remainder and remquo mishandle NaN and infinity (fmod(inf, NaN) = inf),
and fma(double) is not fused (Vulkan's Fma need not be, and on lavapipe is not).

fmod, remainder, remquo: the significands as integers; x's is reduced modulo y's 11 bits of
the exponent difference at a time (a remainder below 2^53, shifted, stays below 2^64), keeping
the quotient's low bits. remquo gives 7 of them (OpenCL asks for at least 3).

fma: the 106-bit product of the significands and the addend's significand in a 128-bit frame
(two ulongs), the smaller operand shifted in with its lost bits kept as a sticky bit, then one
rounding to nearest even (into the denormals where the result is one). Where the device's Fma is
fused (DeviceCaps.native_builtins has fma: NVIDIA), clspv's builtin is that instruction, and
__VKCL_NATIVE_FMA (caps.clspv_args) keeps it: the integer version costs some hundred
instructions.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import guarded
from vkcl.compiler.prelude.fp64_common import BITS, HELPER, INTERNAL, Part, once, overload_set

H, F = HELPER, INTERNAL
I = F

# A finite nonzero double as (significand in [2^52, 2^53), exponent e): |x| = m 2^(e - 1075).
_UNPACK = once("UNPACK", guarded("double", f"""
{H} ulong __vkcl_fp64_sig(double x, int *e) {{
  ulong b = as_ulong(__vkcl_fp64_abs(x));  /* not a 64-bit mask: LLVM makes that fabs */
  int k = (int)(b >> 52);
  ulong m = b & 0x000FFFFFFFFFFFFFUL;
  if (k != 0) {{ *e = k; return m | 0x0010000000000000UL; }}
  int s = (int)clz(m) - 11;
  *e = 1 - s;
  return m << s;
}}
"""))

# (|x| rem |y| to the nearest quotient or toward zero, the quotient's low 7 bits) for finite x,
# y, y != 0; the remainder carries x's sign.
_REM = _UNPACK + once("REM", guarded("double", f"""
{I} double2 __vkcl_fp64_rem(double x, double y, int nearest) {{
  double ax = __vkcl_fp64_abs(x), ay = __vkcl_fp64_abs(y);
  if (x == 0.0) return (double2)(x, 0.0);
  int ex, ey;
  ulong mx = __vkcl_fp64_sig(x, &ex), my = __vkcl_fp64_sig(y, &ey);
  int d = ex - ey;
  uint q = 0U;
  double r = ax;
  ulong twice = 0UL;  /* twice the remainder, in units of y's last bit */
  if (d >= 0) {{
    ulong m = mx;
    q = (uint)(m / my);
    m = m % my;
    while (d > 0) {{
      int s = min(d, 11);
      m = m << s;
      q = (q << s) | (uint)(m / my);
      m = m % my;
      d = d - s;
    }}
    r = __vkcl_fp64_scale((double)m, ey - 1075);
    twice = m << 1;
  }} else if (d == -1) {{
    twice = mx;
  }}
  if (nearest && (twice > my || (twice == my && (q & 1U) != 0U))) {{
    r = r - ay;
    q = q + 1U;
  }}
  return (double2)(__vkcl_fp64_xorsign(r, __vkcl_fp64_signbits(x)), (double)(q & 0x7FU));
}}
"""))

_REM_FUNCTIONS = {
    "fmod": ("gg", f"""{F} double __vkcl_fp64_fmod(double x, double y) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y) || __vkcl_fp64_isinf(x) || y == 0.0) return __vkcl_fp64_nan();
  if (__vkcl_fp64_isinf(y)) return x;
  return __vkcl_fp64_rem(x, y, 0).x;
}}
"""),
    "remainder": ("gg", f"""{F} double __vkcl_fp64_remainder(double x, double y) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y) || __vkcl_fp64_isinf(x) || y == 0.0) return __vkcl_fp64_nan();
  if (__vkcl_fp64_isinf(y)) return x;
  return __vkcl_fp64_rem(x, y, 1).x;
}}
"""),
    "remquo": ("ggQ", f"""{F} double2 __vkcl_fp64_remquo(double x, double y) {{
  if (__vkcl_fp64_isnan(x) || __vkcl_fp64_isnan(y) || __vkcl_fp64_isinf(x) || y == 0.0)
    return (double2)(__vkcl_fp64_nan(), 0.0);
  if (__vkcl_fp64_isinf(y)) return (double2)(x, 0.0);
  double2 r = __vkcl_fp64_rem(x, y, 1);
  return (double2)(r.x, (__vkcl_fp64_signbits(x) ^ __vkcl_fp64_signbits(y)) != 0U ? -r.y : r.y);
}}
"""),
}

# 128-bit unsigned integers as ulong2 (x: low word, y: high word).
_U128 = once("U128", guarded("double", f"""
{H} ulong2 __vkcl_fp64_shl(ulong2 a, int s) {{
  if (s <= 0) return a;
  if (s >= 128) return (ulong2)(0UL, 0UL);
  if (s >= 64) return (ulong2)(0UL, a.x << (s - 64));
  return (ulong2)(a.x << s, (a.y << s) | (a.x >> (64 - s)));
}}
{H} ulong2 __vkcl_fp64_shr(ulong2 a, int s) {{
  if (s <= 0) return a;
  if (s >= 128) return (ulong2)(0UL, 0UL);
  if (s >= 64) return (ulong2)(a.y >> (s - 64), 0UL);
  return (ulong2)((a.x >> s) | (a.y << (64 - s)), a.y >> s);
}}
/* a >> s, the bits shifted out ORed into the lowest bit */
{H} ulong2 __vkcl_fp64_shr_sticky(ulong2 a, int s) {{
  ulong2 r = __vkcl_fp64_shr(a, s);
  ulong2 back = __vkcl_fp64_shl(r, s);
  r.x = r.x | ((back.x != a.x || back.y != a.y) ? 1UL : 0UL);
  return r;
}}
{H} ulong2 __vkcl_fp64_add128(ulong2 a, ulong2 b) {{
  ulong lo = a.x + b.x;
  return (ulong2)(lo, a.y + b.y + (lo < a.x ? 1UL : 0UL));
}}
{H} ulong2 __vkcl_fp64_sub128(ulong2 a, ulong2 b) {{
  return (ulong2)(a.x - b.x, a.y - b.y - (a.x < b.x ? 1UL : 0UL));
}}
{H} int __vkcl_fp64_less128(ulong2 a, ulong2 b) {{ return a.y < b.y || (a.y == b.y && a.x < b.x); }}
{H} int __vkcl_fp64_top128(ulong2 a) {{ return a.y != 0UL ? 127 - (int)clz(a.y) : 63 - (int)clz(a.x); }}
/* a * b for a, b < 2^53, from 32-bit halves */
{H} ulong2 __vkcl_fp64_mul128(ulong a, ulong b) {{
  ulong a0 = a & 0xFFFFFFFFUL, a1 = a >> 32, b0 = b & 0xFFFFFFFFUL, b1 = b >> 32;
  ulong low = a0 * b0, mid = a0 * b1 + a1 * b0;
  ulong lo = low + (mid << 32);
  return (ulong2)(lo, a1 * b1 + (mid >> 32) + (lo < low ? 1UL : 0UL));
}}
"""))

_FMA = _UNPACK + _U128 + guarded("double", f"""
{F} double __vkcl_fp64_fma(double a, double b, double c) {{
#ifdef __VKCL_NATIVE_FMA
  return fma(a, b, c);  /* clspv's builtin becomes the device's Fma, which is fused there */
#else
  if (__vkcl_fp64_isnan(a) || __vkcl_fp64_isnan(b) || __vkcl_fp64_isnan(c)) return a + b + c;
  if (!__vkcl_fp64_finite(a) || !__vkcl_fp64_finite(b)) return a * b + c;  /* IEEE's rules */
  if (!__vkcl_fp64_finite(c)) return c;  /* a finite product: even one that would overflow */
  if (a == 0.0 || b == 0.0) return a * b + c;  /* an exact zero product, IEEE's zero signs */
  if (c == 0.0) return a * b;  /* one rounding; the sign of the exact product */
  int ea, eb, ec;
  ulong ma = __vkcl_fp64_sig(a, &ea), mb = __vkcl_fp64_sig(b, &eb), mc = __vkcl_fp64_sig(c, &ec);
  uint sp = __vkcl_fp64_signbits(a) ^ __vkcl_fp64_signbits(b), sc = __vkcl_fp64_signbits(c);
  /* P = ma mb 2^(ea + eb - 2150), its top bit at 104 or 105, moved to 122 or 123: the frame
     leaves room for the sum's carry */
  ulong2 p = __vkcl_fp64_shl(__vkcl_fp64_mul128(ma, mb), 18);
  int ep = ea + eb - 2150 - 18;
  /* C = mc 2^(ec - 1075); its top bit would be at 52 + (ec - 1075 - ep) in P's frame */
  int cpos = ec - 1075 - ep;
  ulong2 x, y;
  int e;
  uint sx, sy;
  if (cpos + 52 > 125) {{  /* C leads: its frame (top bit at 124), P shifted in */
    x = (ulong2)(0UL, mc << 8);
    e = ec - 1075 - 72;
    y = __vkcl_fp64_shr_sticky(p, e - ep);
    sx = sc; sy = sp;
  }} else {{
    x = p;
    e = ep;
    y = cpos >= 0 ? __vkcl_fp64_shl((ulong2)(mc, 0UL), cpos) : __vkcl_fp64_shr_sticky((ulong2)(mc, 0UL), -cpos);
    sx = sp; sy = sc;
  }}
  uint s = sx;
  if (sx == sy) {{
    x = __vkcl_fp64_add128(x, y);
  }} else if (__vkcl_fp64_less128(x, y)) {{
    x = __vkcl_fp64_sub128(y, x);
    s = sy;
  }} else {{
    x = __vkcl_fp64_sub128(x, y);
  }}
  if ((x.x | x.y) == 0UL) return 0.0;  /* exact cancellation: +0 */
  /* keep 53 bits from the top, or down to 2^-1074 for a denormal result: m 2^(e + drop) */
  int drop = max(__vkcl_fp64_top128(x) - 52, -1074 - e);
  ulong m = __vkcl_fp64_shr(__vkcl_fp64_shl(x, -drop), drop).x;
  if (drop > 0) {{  /* round to nearest even on the bits dropped */
    ulong2 rest = __vkcl_fp64_sub128(x, __vkcl_fp64_shl((ulong2)(m, 0UL), drop));
    ulong2 tie = __vkcl_fp64_shl((ulong2)(1UL, 0UL), drop - 1);
    if (__vkcl_fp64_less128(tie, rest) || (rest.x == tie.x && rest.y == tie.y && (m & 1UL) != 0UL)) m = m + 1UL;
  }}
  /* the exponent field less one (the significand's leading bit adds it; 0 for a denormal) */
  int k = e + drop + 1074;
  ulong bits = k >= 2046 ? 0x7FF0000000000000UL : ((ulong)k << 52) + m;
  return __vkcl_fp64_xorsign(as_double(min(bits, 0x7FF0000000000000UL)), s);
#endif
}}
""")


def _rem_part(name: str) -> Part:
    params, scalar = _REM_FUNCTIONS[name]
    return Part((name,), BITS + _REM + guarded("double", scalar) + overload_set(name, params))


PARTS = (*(_rem_part(n) for n in _REM_FUNCTIONS), Part(("fma",), BITS + _FMA + overload_set("fma", "ggg")))
