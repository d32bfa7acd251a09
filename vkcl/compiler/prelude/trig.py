"""The trigonometric and hyperbolic builtins, one prelude part per builtin (a program gets the
parts it names, and each part the helpers it needs once): see trig_circular.py, trig_inverse.py,
trig_hyperbolic.py."""
from __future__ import annotations

from vkcl.compiler.prelude import trig_circular, trig_hyperbolic, trig_inverse

PARTS = (*trig_circular.PARTS, *trig_inverse.PARTS, *trig_hyperbolic.PARTS)
