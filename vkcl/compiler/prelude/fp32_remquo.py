"""remquo and remainder for float and half (half through float: exact, as a half remainder is a
half). clspv's remquo lost the quotient's low bits for large quotients (the OpenCL-CTS:
remquo(0x1.e94812p+89, -0x1.43bda6p-64) gave -116, not -118) and gave NaN for denormal
arguments (remquo(0x1p-149, 0x1p-149)); its remainder(+0, y) was -0 for denormal y.

Both are exact, in integer arithmetic: |x| = mx 2^ex and |y| = my 2^ey with integer
significands (denormals too); where ex >= ey, mx 2^(ex - ey) is divided by my 8 bits at a time
(a remainder below 2^24, shifted, stays below 2^32), keeping the quotient's low 7 bits; where
ex < ey, |x| < |y|. The quotient is then rounded to nearest, ties to even, the remainder
follows (r - |y|, exact), and both take their signs: the remainder x's (a zero too), the
quotient that of x/y. NaN for x infinite, y zero or a NaN (quotient 0); x for y infinite.
"""
from __future__ import annotations

from vkcl.compiler.prelude.fp32_common import INTERNAL, Part, overload_set

REM = f"""
/* x rem y to the nearest integer quotient; *q its sign and low 7 bits */
{INTERNAL} float __vkcl_f32_rem(float x, float y, int *q) {{
  uint bx = as_uint(x), by = as_uint(y);
  uint ax = bx & 0x7FFFFFFFU, ay = by & 0x7FFFFFFFU;
  *q = 0;
  if (ax >= 0x7F800000U || ay > 0x7F800000U || ay == 0U) return as_float(0x7FC00000U);
  if (ay == 0x7F800000U) return x;
  /* significands and the exponents of their last bits */
  int ex = ax >= 0x00800000U ? (int)(ax >> 23) - 150 : -149;
  int ey = ay >= 0x00800000U ? (int)(ay >> 23) - 150 : -149;
  uint mx = ax >= 0x00800000U ? (ax & 0x007FFFFFU) | 0x00800000U : ax;
  uint my = ay >= 0x00800000U ? (ay & 0x007FFFFFU) | 0x00800000U : ay;
  uint quo, r;
  int up;
  if (ex < ey) {{
    /* |x| < |y|: quotient 0, or 1 where |x| > |y|/2 (exact halving: y is normal here) */
    float fx = as_float(ax), fy = as_float(ay);
    up = fx > 0.5f * fy;
    *q = up ? ((bx ^ by) >> 31 ? -1 : 1) : 0;
    float v = up ? fy - fx : fx;
    return as_float(as_uint(v) | ((bx & 0x80000000U) ^ (up ? 0x80000000U : 0U)));
  }}
  int d = ex - ey;
  quo = mx / my;
  r = mx % my;
  while (d > 0) {{
    int k = min(d, 8);
    r = r << k;
    quo = (quo << k) + r / my;
    r = r % my;
    d -= k;
  }}
  up = 2U * r > my || (2U * r == my && (quo & 1U));
  quo = (quo + (up ? 1U : 0U)) & 0x7FU;
  r = up ? my - r : r;
  /* r 2^ey, exact, in two steps (2^ey alone may not be normal) */
  int k1 = ey / 2;
  float v = (float)r * as_float((uint)(k1 + 127) << 23);
  v = v * as_float((uint)(ey - k1 + 127) << 23);
  *q = (bx ^ by) >> 31 ? -(int)quo : (int)quo;
  return as_float(as_uint(v) | ((bx & 0x80000000U) ^ (up ? 0x80000000U : 0U)));
}}
{INTERNAL} float __vkcl_f32_remainder_k(float x, float y) {{ int q; return __vkcl_f32_rem(x, y, &q); }}
"""

NAMES = ("remquo", "remainder")
PARTS = (
    Part(NAMES, REM),
    Part(("remquo",), overload_set("remquo", "ggQ", "__vkcl_f32_rem")),
    Part(("remainder",), overload_set("remainder", "gg", "__vkcl_f32_remainder_k")),
)
