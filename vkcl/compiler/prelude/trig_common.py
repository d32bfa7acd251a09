"""What the trig prelude parts share: the two types' descriptions, OpenCL C text templates over
them, exact arithmetic helpers, and the way a part is put together.

The helpers use no clspv math builtin on doubles (clspv's fp64 library is wrong: fabs masks 32
bits of 64) and none whose accuracy Vulkan leaves loose without correcting it: a quotient or a
square root is refined with an exact residual, so a driver's 2.5-ulp division or approximate
sqrt costs nothing in the result. Exact products come from Dekker's splitting with the split
made by integer masks (no fma: Vulkan's Fma may be unfused, and is on lavapipe). Everything
assumes the IEEE operations clspv's NoContraction decorations ask for; a product whose
exactness counts is its own statement, so that clang does not contract it into an Fma.
"""
from __future__ import annotations

from string import Template

from vkcl.compiler.prelude.common import GUARD, WIDTHS
from vkcl.compiler.prelude.trig_tables import TABLES

# How trig functions are declared: internal to the program (by attribute: OpenCL C 1.1 rejects
# `static`), overloadable; helpers also inlined.
INTERNAL = "__attribute__((overloadable, internal_linkage))"
HELPER = "inline __attribute__((overloadable, always_inline, internal_linkage))"


def guarded(scalar: str, body: str) -> str:
    """`body` only where the device has `scalar`. half needs its extension enabled; double not
    from OpenCL C 1.2 on, where clang warns that the pragma is ignored (which fails -Werror)."""
    guard = GUARD.get(scalar)
    if not guard or not body:
        return body
    if scalar == "half":
        pragma = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    else:
        pragma = "#if __OPENCL_C_VERSION__ < 120\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
    return f"#if {guard}\n{pragma}{body}#endif\n"


CONSTANTS = ("pio2", "pio4", "pi", "three_pio4", "inv_pi", "two_over_pi", "log2e", "ln2")


class Ty:
    """One floating type: its names, bit layout and constants."""

    def __init__(self, name: str):
        self.name = name
        double = name == "double"
        self.bits, self.mant, self.bias = (53, 52, 1023) if double else (24, 23, 127)
        self.u, self.i = ("ulong", "long") if double else ("uint", "int")
        self.us = "UL" if double else "U"
        self.table = TABLES[name]
        width = 64 if double else 32
        self.subs = {
            "T": name, "T2": f"{name}2", "U": self.u, "I": self.i, "S": "" if double else "f",
            "MANT": str(self.mant), "BIAS": str(self.bias),
            "DIV_TINY": self.lit(2.0 ** ((-1022 + 2 * 53) if double else (-126 + 2 * 24))),
            # Dekker's split: round to half the significand (26 of 53 bits, 12 of 24), so both
            # halves have at most that many bits and their products are exact
            "SPLIT_ADD": self.hexu(1 << (self.mant - self.bits // 2)),
            "SPLIT_MASK": self.hexu(((1 << width) - 1) ^ ((1 << (self.mant - self.bits // 2 + 1)) - 1)),
        }
        for key in CONSTANTS:  # ${PIO2_HI}, ${PIO2_LO}, ...
            self.subs[f"{key.upper()}_HI"], self.subs[f"{key.upper()}_LO"] = map(self.lit, self.table[key])
        for key in ("pio2", "ln2"):  # ${PIO2_P0}, ...: the Cody-Waite parts
            for n, v in enumerate(self.table[f"{key}_parts"]):
                self.subs[f"{key.upper()}_P{n}"] = self.lit(v)

    def hexu(self, v: int) -> str:
        return f"0x{v:X}{self.us}"

    def lit(self, v: float) -> str:
        """A literal of exactly v in this type."""
        return float.hex(float(v)) + ("" if self.name == "double" else "f")

    def poly(self, var: str, key: str) -> str:
        """Horner's scheme of the table's polynomial `key` in `var`."""
        coeffs = self.table[key]
        text = self.lit(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            text = f"({self.lit(c)} + {var} * {text})"
        return text

    def fill(self, template: str, **extra: str) -> str:
        return Template(template).substitute({**self.subs, **extra})


FLOAT, DOUBLE = Ty("float"), Ty("double")
TYPES = (FLOAT, DOUBLE)


F = HELPER
# Bit tests and sign changes. On doubles they work on the high 32-bit word: LLVM turns a
# 64-bit mask of the sign bit into fabs or copysign, which clspv then compiles wrongly.
_BITS = {
    "float": f"""
{F} float __vkcl_trig_abs(float x) {{ return as_float(as_uint(x) & 0x7FFFFFFFU); }}
{F} uint __vkcl_trig_signbit(float x) {{ return as_uint(x) & 0x80000000U; }}
{F} float __vkcl_trig_xorsign(float v, uint s) {{ return as_float(as_uint(v) ^ s); }}
{F} int __vkcl_trig_finite(float x) {{ return (as_uint(x) & 0x7FFFFFFFU) < 0x7F800000U; }}
{F} int __vkcl_trig_isnan(float x) {{ return (as_uint(x) & 0x7FFFFFFFU) > 0x7F800000U; }}
{F} float __vkcl_trig_nan(float x) {{ return as_float(0x7FC00000U); }}
{F} float __vkcl_trig_inf(float x) {{ return as_float(0x7F800000U); }}
/* 2**e in the type of `like`, e in the normal range */
{F} float __vkcl_trig_pow2(float like, int e) {{ return as_float((uint)(e + 127) << 23); }}
""",
    "double": f"""
{F} double __vkcl_trig_abs(double x) {{ uint2 w = as_uint2(x); return as_double((uint2)(w.x, w.y & 0x7FFFFFFFU)); }}
{F} uint __vkcl_trig_signbit(double x) {{ return as_uint2(x).y & 0x80000000U; }}
{F} double __vkcl_trig_xorsign(double v, uint s) {{ uint2 w = as_uint2(v); return as_double((uint2)(w.x, w.y ^ s)); }}
{F} int __vkcl_trig_finite(double x) {{ return (as_uint2(x).y & 0x7FFFFFFFU) < 0x7FF00000U; }}
{F} int __vkcl_trig_isnan(double x) {{
  uint2 w = as_uint2(x);
  return (w.y & 0x7FFFFFFFU) > 0x7FF00000U || ((w.y & 0x7FFFFFFFU) == 0x7FF00000U && w.x != 0);
}}
{F} double __vkcl_trig_nan(double x) {{ return as_double((uint2)(0, 0x7FF80000U)); }}
{F} double __vkcl_trig_inf(double x) {{ return as_double((uint2)(0, 0x7FF00000U)); }}
{F} double __vkcl_trig_pow2(double like, int e) {{ return as_double((uint2)(0, (uint)(e + 1023) << 20)); }}
""",
}
# Exact sums and products. Each product that feeds a sum is its own statement: clang contracts
# `a * b + c` within an expression into an Fma, which no NoContraction protects, and lavapipe
# then merged Fma chains with constant operands (a - k*c1 - k*c2 became a - k*(c1 + c2)).
EXACT = "".join(guarded(ty.name, _BITS[ty.name] + ty.fill(f"""
/* a + b as (sum, error): Knuth's two-sum */
{F} $T2 __vkcl_trig_2sum($T a, $T b) {{
  $T s = a + b;
  $T bb = s - a;
  $T e = s - bb;
  e = a - e;
  bb = b - bb;
  return ($T2)(s, e + bb);
}}
/* a + b as (sum, error) where |a| >= |b| (or a == 0) */
{F} $T2 __vkcl_trig_fast2sum($T a, $T b) {{
  $T s = a + b;
  $T e = s - a;
  return ($T2)(s, b - e);
}}
{F} $T __vkcl_trig_hi($T a) {{ return as_$T((as_$U(a) + $SPLIT_ADD) & $SPLIT_MASK); }}
/* a * b as (product, error), exactly (Dekker) */
{F} $T2 __vkcl_trig_2mul($T a, $T b) {{
  $T p = a * b;
  $T ah = __vkcl_trig_hi(a), bh = __vkcl_trig_hi(b);
  $T al = a - ah, bl = b - bh;
  $T e = ah * bh;
  e = e - p;
  $T t = ah * bl;
  e = e + t;
  t = al * bh;
  e = e + t;
  t = al * bl;
  return ($T2)(p, e + t);
}}
/* a / b within about half an ulp whatever the device's division: one correction from the
   exact residual a - q b. The residual is exact only while the product's low parts are
   normal numbers (|a| above DIV_TINY) and finite: elsewhere the quotient stays as it is. */
{F} $T __vkcl_trig_div($T a, $T b) {{
  $T q = a / b;
  $T2 p = __vkcl_trig_2mul(q, b);
  $T r = a - p.x;
  r = r - p.y;
  $T c = r / b;
  return __vkcl_trig_abs(a) > $DIV_TINY && __vkcl_trig_finite(c) ? q + c : q;
}}
""")) for ty in TYPES)

# sqrt(z) as (root, correction), 0 <= z finite, z a normal float when T is double: a seed
# (clspv's float sqrt, then a Newton step for double), corrected by the exact residual.
SQRT = f"""
{F} float2 __vkcl_trig_sqrt(float z) {{
  float s = sqrt(z);
  float2 p = __vkcl_trig_2mul(s, s);
  float c = z - p.x;
  c = (c - p.y) * 0.5f / s;
  return (float2)(s, z > 0.0f ? c : 0.0f);
}}
""" + guarded("double", f"""
{F} double2 __vkcl_trig_sqrt(double z) {{
  double s = (double)sqrt((float)z);
  s = z > 0.0 ? 0.5 * (s + z / s) : 0.0;
  double2 p = __vkcl_trig_2mul(s, s);
  double c = z - p.x;
  c = (c - p.y) * 0.5 / s;
  return (double2)(s, z > 0.0 ? c : 0.0);
}}
""")


def _vector(name: str, t: str, w: str, params: list[tuple[str, str]], ret: str) -> str:
    """The vector overload of a scalar function: per component (width 3), else by halves."""
    decl = ", ".join(f"{pt}{w} {pn}" for pt, pn in params)
    pieces = ("s0", "s1", "s2") if w == "3" else ("lo", "hi")
    comps = ", ".join(f"__vkcl_{name}({', '.join(f'{pn}.{c}' for _, pn in params)})" for c in pieces)
    return f"{HELPER} {ret}{w} __vkcl_{name}({decl}) {{ return ({ret}{w})({comps}); }}\n"


def builtin(name: str, arity: int, body: str | dict[str, str]) -> str:
    """Overloads of builtin `name` for float, double and half, every width: the scalar float
    and double bodies from the template `body` (parameters x, or y and x; or a template per
    type), vectors per component, half through float (exact enough: float's result rounded to
    half)."""
    params = ["x"] if arity == 1 else ["y", "x"]
    out = []
    for ty in TYPES:
        decl = ", ".join(f"{ty.name} {p}" for p in params)
        template = body if isinstance(body, str) else body[ty.name]
        text = f"{INTERNAL} {ty.name} __vkcl_{name}({decl}) {{\n{ty.fill(template)}}}\n"
        text += "".join(_vector(name, ty.name, w, [(ty.name, p) for p in params], ty.name) for w in WIDTHS[1:])
        out.append(guarded(ty.name, text))
    decl = ", ".join(f"half {p}" for p in params)
    call = ", ".join(f"(float){p}" for p in params)
    half = f"{HELPER} half __vkcl_{name}({decl}) {{ return (half)__vkcl_{name}({call}); }}\n"
    half += "".join(_vector(name, "half", w, [("half", p) for p in params], "half") for w in WIDTHS[1:])
    out.append(guarded("half", half))
    args = ", ".join(params)
    out.append(f"#define {name}({args}) __vkcl_{name}({args})\n")
    return "".join(out)


class Part:
    """A prelude part: the builtins it replaces and its text."""

    def __init__(self, names: tuple[str, ...], text: str):
        self.NAMES, self.TEXT = names, text
