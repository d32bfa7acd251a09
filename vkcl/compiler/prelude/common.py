"""What every prelude part shares: the type names and the extension guards."""
from __future__ import annotations

SCALARS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half")
WIDTHS = ("", "2", "3", "4", "8", "16")
GUARD = {"double": "defined(cl_khr_fp64) || defined(__opencl_c_fp64)", "half": "defined(cl_khr_fp16)"}
EXTENSION = {"double": "cl_khr_fp64", "half": "cl_khr_fp16"}
# How a prelude function is declared: internal to the program, overloadable, inlined.
OVERLOAD = "static inline __attribute__((overloadable, always_inline))"


def guarded(scalar: str, body: str) -> str:
    """`body` only where the device has `scalar`. half needs its extension enabled; double
    only before OpenCL C 1.2, from which clang warns that the pragma is ignored (failing
    -Werror builds)."""
    guard = GUARD.get(scalar)
    if not guard or not body:
        return body
    pragma = f"#pragma OPENCL EXTENSION {EXTENSION[scalar]} : enable\n"
    if scalar == "double":
        pragma = f"#if __OPENCL_C_VERSION__ < 120\n{pragma}#endif\n"
    return f"#if {guard}\n{pragma}{body}#endif\n"
