"""erf for float and half (half through float) near zero. clspv's erf of a tiny x adds x to
x (2/sqrt(pi) - 1); the H200, which may flush denormals (vkcl does not claim CL_FP_DENORM there),
dropped the addend x of a denormal: erf(-0x1.f288p-127) was -0x1.00011p-129, not
-0x1.194422p-126 (CTS math_brute_force erf). Below |x| = 2^-14 erf(x) is 2/sqrt(pi) x within
2^-28 of itself (the series' next term, x^2/3), so one product is within about an ulp and
has no sum a device can flush; above, clspv's erf (its results within the limit: the CTS).
"""
from __future__ import annotations

from vkcl.compiler.prelude.fp32_common import INTERNAL, Part, overload_set

ERF = f"""
{INTERNAL} float __vkcl_f32_erf_k(float x) {{
  return fabs(x) < 0x1p-14f ? x * 0x1.20dd76p+0f : erf(x);
}}
"""

NAMES = ("erf",)
PARTS = (Part(NAMES, ERF + overload_set("erf", "g", "__vkcl_f32_erf_k")),)
