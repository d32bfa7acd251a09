"""The trigonometric and hyperbolic builtins (trig_circular.py, trig_inverse.py,
trig_hyperbolic.py): one prelude part per builtin, so a program gets only the builtins it names,
each family's helpers in a part of their own before them (put in once for any of its names), and
the exact arithmetic shared by all first (also by the geometric and float parts: their EXACT_USERS).
"""
from __future__ import annotations

from vkcl.compiler.prelude import fp32, geometric, trig_circular, trig_hyperbolic, trig_inverse
from vkcl.compiler.prelude.trig_common import EXACT, SQRT, Part

PARTS = (
    Part(trig_circular.NAMES + trig_inverse.NAMES + trig_hyperbolic.NAMES + geometric.EXACT_USERS + fp32.EXACT_USERS,
         EXACT),
    Part(trig_inverse.NAMES + trig_hyperbolic.NAMES + geometric.EXACT_USERS, SQRT),
    *trig_circular.PARTS, *trig_inverse.PARTS, *trig_hyperbolic.PARTS,
)
