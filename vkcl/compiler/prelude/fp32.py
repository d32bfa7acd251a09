"""The float (and half) math builtins other than the trigonometric and geometric ones that
clspv gets wrong, one prelude part per builtin (a program gets the parts it names, and each
part the helpers it needs once): see fp32_remquo.py, fp32_gamma.py, fp32_rootn.py,
fp32_erf.py, fp32_vectors.py and fp32_half.py. Their double members stay what they were (fp32_common.py):
these parts come after any double ones in PARTS.
"""
from __future__ import annotations

from vkcl.compiler.prelude import fp32_erf, fp32_gamma, fp32_half, fp32_remquo, fp32_rootn, fp32_vectors

PARTS = (*fp32_remquo.PARTS, *fp32_gamma.PARTS, *fp32_rootn.PARTS, *fp32_erf.PARTS, *fp32_vectors.PARTS,
         *fp32_half.PARTS)
# The names whose parts use trig_common's exact arithmetic (trig.py puts it in for them).
EXACT_USERS = fp32_gamma.EXACT_USERS
