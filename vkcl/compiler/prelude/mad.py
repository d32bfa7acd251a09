"""mad(a, b, c): clspv compiles it as a multiply and an add, each decorated NoContraction, so a
Vulkan driver must round twice and cannot use its fused instruction (seen: 0.46x NVIDIA's OpenCL
on an H100 before vkcl fused them). OpenCL C lets mad() be computed any way, fused included, and
clspv writes a contracted `a * b + c` (FP_CONTRACT ON) as GLSL.std.450 Fma: vkcl's mad() is that
expression, with contraction on inside it whatever the program's own FP_CONTRACT says. The
program's other multiplies and adds keep their NoContraction: they stay exact.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import OVERLOAD, WIDTHS, guarded


def _mad(scalar: str) -> str:
    return guarded(scalar, "".join(
        f"{OVERLOAD} {scalar}{w} __vkcl_mad({scalar}{w} a, {scalar}{w} b, {scalar}{w} c) {{\n"
        "#pragma OPENCL FP_CONTRACT ON\n  return a * b + c;\n}\n" for w in WIDTHS))


NAMES = ("mad",)
TEXT = "".join(_mad(s) for s in ("float", "double", "half")) + "#define mad __vkcl_mad\n"
