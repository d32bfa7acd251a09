"""nan on ulong codes (double): clspv's builtin sets no quiet bit, so nan(0UL) is infinity (seen:
the CTS's printf double_limits). OpenCL C: nan returns a quiet NaN, the code in its significand.
Calls go to an overload set whose double members set the quiet bit; the float and half members
forward to clspv's builtin, which is right.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import INTERNAL, WIDTHS, guarded

_HEAD = INTERNAL

NAMES = ("nan",)
TEXT = ("".join(f"{_HEAD} float{w} __vkcl_nan(uint{w} c) {{ return nan(c); }}\n" for w in WIDTHS) +
        guarded("half", "".join(f"{_HEAD} half{w} __vkcl_nan(ushort{w} c) {{ return nan(c); }}\n" for w in WIDTHS)) +
        guarded("double", "".join(f"{_HEAD} double{w} __vkcl_nan(ulong{w} c) "
                                  f"{{ return as_double{w}(c | 0x7FF8000000000000UL); }}\n" for w in WIDTHS)) +
        "#define nan(code) __vkcl_nan(code)\n")
