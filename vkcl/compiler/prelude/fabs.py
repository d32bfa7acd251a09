"""fabs on double: clspv lowers it as an and of the 64-bit bits with 0x7FFFFFFF, a 32-bit mask,
so fabs(10.0) came out 3.0e-315 (seen: pyopencl's clmath.fabs, and its complex128 division, which
picks a branch by fabs and gave NaN). The double members clear the sign bit in the high word of a
uint2: the bits as one ulong and'ed with 0x7FFF... are turned back into LLVM's fabs, which clspv
lowers the same wrong way. The float and half members forward to clspv's builtin, which is right.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import INTERNAL, WIDTHS, guarded

_LANES = {"2": 2, "3": 3, "4": 4, "8": 8, "16": 16}


def _double(w: str) -> str:
    if not w:
        return (f"{INTERNAL} double __vkcl_fabs(double x) "
                "{ uint2 v = as_uint2(x); v.y &= 0x7FFFFFFFu; return as_double(v); }\n")
    lanes = ", ".join(f"__vkcl_fabs(x.s{i:x})" for i in range(_LANES[w]))
    return f"{INTERNAL} double{w} __vkcl_fabs(double{w} x) {{ return (double{w})({lanes}); }}\n"


NAMES = ("fabs",)
TEXT = ("".join(f"{INTERNAL} float{w} __vkcl_fabs(float{w} x) {{ return fabs(x); }}\n" for w in WIDTHS) +
        guarded("half", "".join(f"{INTERNAL} half{w} __vkcl_fabs(half{w} x) {{ return fabs(x); }}\n"
                                for w in WIDTHS)) +
        guarded("double", "".join(_double(w) for w in WIDTHS)) +
        "#define fabs(x) __vkcl_fabs(x)\n")
