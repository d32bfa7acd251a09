"""The double-precision math builtins other than the trigonometric and hyperbolic ones, one
prelude part per builtin (a program gets the parts it names, and each part the helpers it needs
once): see fp64_bits.py (exact on the bits)."""
from __future__ import annotations

from vkcl.compiler.prelude import fp64_bits, fp64_explog, fp64_int, fp64_special

PARTS = (*fp64_bits.PARTS, *fp64_int.PARTS, *fp64_explog.PARTS, *fp64_special.PARTS)
