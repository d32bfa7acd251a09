"""What every prelude part shares: the type names and the extension guards."""
from __future__ import annotations

SCALARS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half")
WIDTHS = ("", "2", "3", "4", "8", "16")
GUARD = {"double": "defined(cl_khr_fp64) || defined(__opencl_c_fp64)", "half": "defined(cl_khr_fp16)"}
EXTENSION = {"double": "cl_khr_fp64", "half": "cl_khr_fp16"}
# clang treats cl_khr_fp64 as an optional core feature from OpenCL C 1.2: enabling it there warns.
_CORE_SINCE_1_2 = ("double",)
# How a prelude function is declared: internal to the program, overloadable, inlined. Internal
# by attribute, since OpenCL C 1.1 rejects `static`.
INTERNAL = "__attribute__((overloadable, internal_linkage))"
OVERLOAD = "inline __attribute__((overloadable, always_inline, internal_linkage))"


def guarded(scalar: str, body: str) -> str:
    """`body` only where the device has `scalar` (double and half need their extensions)."""
    guard = GUARD.get(scalar)
    if not guard or not body:
        return body
    pragma = f"#pragma OPENCL EXTENSION {EXTENSION[scalar]} : enable\n"
    if scalar in _CORE_SINCE_1_2:  # the pragma would warn in the user's build log (and fail -Werror)
        pragma = f"#if __OPENCL_C_VERSION__ < 120\n{pragma}#endif\n"
    return f"#if {guard}\n{pragma}{body}#endif\n"
