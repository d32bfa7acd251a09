"""rootn for float and half (half through float). clspv's rootn(x, -1) is 0 for |x| above
2^125 (rootn(4.3654023e37, -1) = 0, not 2.29e-38: 1.6e7 ulp) and rootn(x, 1) is 0 for |x|
below about 2^-125 (rootn(-2.2313346e-38, 1) = -0); its other results were within 0.7 ulp (n
from -300 to 300 over the whole range, and every result range, on lavapipe). rootn(x, 1) is
x; rootn(x, -1) of a large x is 1 / x as a division of normal numbers, x scaled down by 16
first, the quotient scaled back (exact, or one rounding into the denormals); the rest is
clspv's.
"""
from __future__ import annotations

from vkcl.compiler.prelude.fp32_common import INTERNAL, Part, overload_set

ROOTN = f"""
{INTERNAL} float __vkcl_f32_rootn_k(float x, int n) {{
  uint a = as_uint(x) & 0x7FFFFFFFU;
  if (n == 1) return x;
  if (n == -1 && a >= 0x7E000000U && a < 0x7F800000U) {{
    float q = 1.0f / (x * 0x1p-4f);
    return q * 0x1p-4f;
  }}
  return rootn(x, n);
}}
"""

NAMES = ("rootn",)
PARTS = (Part(NAMES, ROOTN + overload_set("rootn", "gi", "__vkcl_f32_rootn_k")),)
