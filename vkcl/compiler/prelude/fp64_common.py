"""What the double-precision prelude parts share: how functions are declared, bit-level helpers
that clspv cannot get wrong, and the overload set that replaces a builtin.

A builtin is replaced by an overload set under another name (`#define name __vkcl_name`; a
definition of the builtin's own name would hide clang's declarations of its float and half
overloads, whose calls then went to the double one): its float and half members forward to
clspv's builtin; the double ones call the part's scalar function __vkcl_fp64_<name>, a vector
one on each component. Bit tests and sign changes work on the high 32-bit word of a double: LLVM
turns a 64-bit mask of the sign bit into fabs or copysign, which clspv compiles wrongly.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import WIDTHS, guarded

# Internal to the program by attribute (OpenCL C 1.1 rejects `static`), overloadable; small
# helpers also inlined. The large functions are left to LLVM, which calls a function it would
# otherwise copy many times (pow of a double16 compiled in 1.3 s with every call inlined, 0.2 s
# without).
INTERNAL = "__attribute__((overloadable, internal_linkage))"
HELPER = "inline __attribute__((overloadable, always_inline, internal_linkage))"
# Pointer arguments: named address spaces, and the generic one where the language has it.
SPACES = ("__global", "__local", "__private")
GENERIC = "__OPENCL_C_VERSION__ == 200 || defined(__opencl_c_generic_address_space)"


def once(key: str, text: str) -> str:
    """`text` the first time a program's prelude has it (parts share helpers)."""
    return f"#ifndef VKCL_FP64_{key}\n#define VKCL_FP64_{key}\n{text}#endif\n"


H = HELPER
BITS = once("BITS", guarded("double", f"""
{H} uint __vkcl_fp64_hi(double x) {{ return as_uint2(x).y; }}
{H} uint __vkcl_fp64_lo(double x) {{ return as_uint2(x).x; }}
{H} double __vkcl_fp64_make(uint hi, uint lo) {{ return as_double((uint2)(lo, hi)); }}
{H} double __vkcl_fp64_abs(double x) {{ uint2 w = as_uint2(x); return as_double((uint2)(w.x, w.y & 0x7FFFFFFFU)); }}
{H} uint __vkcl_fp64_signbits(double x) {{ return as_uint2(x).y & 0x80000000U; }}
{H} double __vkcl_fp64_xorsign(double v, uint s) {{ uint2 w = as_uint2(v); return as_double((uint2)(w.x, w.y ^ s)); }}
{H} double __vkcl_fp64_copysign(double v, double s) {{
  uint2 w = as_uint2(v);
  return as_double((uint2)(w.x, (w.y & 0x7FFFFFFFU) | (as_uint2(s).y & 0x80000000U)));
}}
{H} int __vkcl_fp64_isnan(double x) {{
  uint2 w = as_uint2(x);
  uint h = w.y & 0x7FFFFFFFU;
  return h > 0x7FF00000U || (h == 0x7FF00000U && w.x != 0U);
}}
{H} int __vkcl_fp64_isinf(double x) {{ uint2 w = as_uint2(x); return (w.y & 0x7FFFFFFFU) == 0x7FF00000U && w.x == 0U; }}
{H} int __vkcl_fp64_finite(double x) {{ return (as_uint2(x).y & 0x7FFFFFFFU) < 0x7FF00000U; }}
{H} double __vkcl_fp64_nan(void) {{ return as_double((uint2)(0U, 0x7FF80000U)); }}
{H} double __vkcl_fp64_inf(void) {{ return as_double((uint2)(0U, 0x7FF00000U)); }}
/* 2^e, e in the normal range [-1022, 1023] */
{H} double __vkcl_fp64_pow2(int e) {{ return as_double((uint2)(0U, (uint)(e + 1023) << 20)); }}
/* x 2^e with one rounding, as ldexp: the exponent is applied in steps that cannot round
   (a normal result each), the last one rounding once into the denormals if it must */
{H} double __vkcl_fp64_scale(double x, int e) {{
  e = clamp(e, -2200, 2200);
  if (e > 1023) {{ x = x * 0x1p1023; e = e - 1023; if (e > 1023) {{ x = x * 0x1p1023; e = min(e - 1023, 1023); }} }}
  if (e < -1022) {{ x = x * 0x1p-969; e = e + 969; if (e < -1022) {{ x = x * 0x1p-969; e = max(e + 969, -1022); }} }}
  return x * __vkcl_fp64_pow2(e);
}}
"""))


def _define(name: str, params: str, ret: str, w: str, space: str | None) -> str:
    """The double member of width w: __vkcl_fp64_<name> on each component (it returns double2,
    the result and what the pointer gets, where there is an output pointer)."""
    rtype = _type(ret, "double", w)
    head = f"{INTERNAL} {rtype} __vkcl_{name}({_declare(params, 'double', w, space)})"
    out = next((k for k, c in enumerate(params) if c in "PQ"), None)
    comps = [""] if not w else [f".s{i:x}" for i in range(int(w))]

    def call(comp: str) -> str:
        args = [f"a{k}" + ("" if c == "k" else comp) for k, c in enumerate(params) if c not in "PQ"]
        return f"__vkcl_fp64_{name}({', '.join(args)})"
    if out is not None:
        cast = "double" if params[out] == "P" else "int"
        if not w:
            return f"{head} {{ double2 c = {call('')}; *a{out} = ({cast})c.y; return c.x; }}\n"
        body = " ".join(f"c = {call(s)}; r{s} = c.x; o{s} = ({cast})c.y;" for s in comps)
        otype = _type(params[out], "double", w)
        return f"{head} {{ double2 c; {rtype} r; {otype} o; {body} *a{out} = o; return r; }}\n"
    if not w:
        return f"{head} {{ return {call('')}; }}\n"
    conv = "-(long)" if ret == "r" else ""
    return f"{head} {{ {rtype} r; {' '.join(f'r{s} = {conv}{call(s)};' for s in comps)} return r; }}\n"


def _type(kind: str, scalar: str, w: str) -> str:
    """A parameter or result type: g the floating type, i int (intn for vectors), k int (also
    for vectors), r a relational result (int for scalars, an integer vector of the element's
    size for vectors), P / Q an output pointer's element: the floating type / intn."""
    if kind in "gP":
        return scalar + w
    if kind in "iQ":
        return "int" + w
    if kind == "k":
        return "int"
    return "int" if not w else {"double": "long", "float": "int", "half": "short"}[scalar] + w


def _declare(params: str, scalar: str, w: str, space: str | None) -> str:
    return ", ".join(f"{space} {_type(c, scalar, w)} *a{k}" if c in "PQ" else f"{_type(c, scalar, w)} a{k}"
                     for k, c in enumerate(params))


def _forward(name: str, scalar: str, params: str, ret: str, w: str, space: str | None) -> str:
    """A float or half member: clspv's own builtin."""
    args = ", ".join(f"a{k}" for k in range(len(params)))
    return (f"{HELPER} {_type(ret, scalar, w)} __vkcl_{name}({_declare(params, scalar, w, space)}) "
            f"{{ return {name}({args}); }}\n")


def overload_set(name: str, params: str, ret: str = "g", scalar_int: bool = False) -> str:
    """The overloads that replace builtin `name`, then its #define. params: one letter per
    parameter (see _type); scalar_int: vectors also take a scalar int in place of intn (ldexp)."""
    pointer = any(c in "PQ" for c in params)
    text = {"double": [], "float": [], "half": []}
    for space in [*SPACES, "__generic"] if pointer else [None]:
        chunk = {"double": "", "float": "", "half": ""}
        for w in WIDTHS:
            for form in [params] + ([params.replace("i", "k")] if scalar_int and w else []):
                chunk["double"] += _define(name, form, ret, w, space)
                for scalar in ("float", "half"):
                    chunk[scalar] += _forward(name, scalar, form, ret, w, space)
        for scalar, body in chunk.items():
            text[scalar].append(f"#if {GENERIC}\n{body}#endif\n" if space == "__generic" else body)
    return (guarded("double", "".join(text["double"])) + "".join(text["float"]) +
            guarded("half", "".join(text["half"])) + f"#define {name} __vkcl_{name}\n")


class Part:
    """A prelude part: the builtins it replaces and its text."""

    def __init__(self, names: tuple[str, ...], text: str):
        self.NAMES, self.TEXT = names, text
