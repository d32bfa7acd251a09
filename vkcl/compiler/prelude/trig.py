"""The trigonometric and hyperbolic builtins, one prelude part per builtin (a program gets the
parts it names, and each part the helpers it needs once): see trig_circular.py, trig_inverse.py,
trig_hyperbolic.py."""
from __future__ import annotations

from vkcl.compiler.prelude import trig_circular

PARTS = (*trig_circular.PARTS,)
