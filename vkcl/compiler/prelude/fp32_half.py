"""Half builtins that clspv computes beyond the half limits, through float instead: rsqrt
(1.33 ulp on lavapipe, rsqrt(1172.0h) = 0.02919h; the limit is 1). Its float rsqrt is within
1.5 float ulps, 2^-12 of a half ulp, so rounding it to half gives within 0.5 + 2^-12 ulp. The
float and double members are the builtin's.
"""
from __future__ import annotations

from vkcl.compiler.prelude.fp32_common import Part, overload_set

NAMES = ("rsqrt",)
PARTS = (Part(NAMES, overload_set("rsqrt", "g", "rsqrt", float_members=False)),)
