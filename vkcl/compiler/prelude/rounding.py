"""OpenCL C helpers that round a value to a binary floating-point format with integer arithmetic
only (conversions.py's replacements use them): no float operation, so no driver that flushes
denormals or reassociates can change a result.

A format is (W, P, B): W bits in all, P significand bits counting the hidden one, exponent bias
B (half 16, 11, 15; float 32, 24, 127; double 64, 53, 1023). A mode is an int: 0 rte, 1 rtz,
2 rtp, 3 rtn. Every helper is inlined with constant format and mode arguments, which fold.
"""
from __future__ import annotations

FORMAT = {"half": (16, 11, 15), "float": (32, 24, 127), "double": (64, 53, 1023)}
MODE = {"": 0, "_rte": 0, "_rtz": 1, "_rtp": 2, "_rtn": 3}
BITS_TYPE = {"half": "ushort", "float": "uint", "double": "ulong"}

_INLINE = "inline __attribute__((always_inline, internal_linkage))"

# __vkcl_round_bits: the magnitude m * 2^q (m != 0) rounded to format (P, B) as its bits without
# the sign; neg is the value's sign (rtp and rtn depend on it). The exponent field and the
# significand are added, not or-ed: a significand that rounds up to 2^P carries into the
# exponent, and a subnormal (biased exponent 0 written as te + B - 1 = 0) comes out right too.
# Past the largest finite value: infinity, or the largest finite where the mode rounds toward it.
# __vkcl_narrow: the bits of a floating-point value (format SW, SP, SB) rounded to a narrower
# format (W, P, B), NaN as a quiet NaN of the value's sign. It compares the magnitude shifted
# left over the sign and never masks the sign off a double: LLVM turns a compare of
# `b & 0x7FFF...` into one of an i63 truncation, which clspv cannot lower ("Unhandled bit width";
# it then hangs), and `b & 0x7FFF...` alone into fabs, which clspv lowers with a 32-bit mask.
# __vkcl_from_int: the bits of the integer -m or m (neg) in format (W, P, B).
HELPERS = f"""{_INLINE} ulong __vkcl_round_bits(ulong m, int q, int neg, int mode, int P, int B) {{
  int e = 63 - (int)clz(m) + q;
  int te = max(e, 1 - B);
  int s = te - (P - 1) - q;
  ulong mant = 0, rest = m, halfway = ~0UL;
  if (s <= 0) {{ mant = m << -s; rest = 0; }}
  else if (s < 64) {{ mant = m >> s; rest = m & ((1UL << s) - 1UL); halfway = 1UL << (s - 1); }}
  else if (s == 64) halfway = 0x8000000000000000UL;
  int away = mode == 2 ? !neg : mode == 3 ? neg : 0;
  int up = mode == 0 ? (rest > halfway || (rest == halfway && (mant & 1UL))) : (rest != 0UL && away);
  ulong bits = ((ulong)(te + B - 1) << (P - 1)) + mant + (ulong)up;
  ulong inf = (ulong)(2 * B + 1) << (P - 1);
  if (bits >= inf) bits = (mode == 0 || away) ? inf : inf - 1UL;
  return bits;
}}
{_INLINE} ulong __vkcl_narrow(ulong b, int SW, int SP, int SB, int mode, int W, int P, int B) {{
  ulong a2 = (b << (65 - SW)) >> (64 - SW);
  int neg = (int)(b >> (SW - 1)) & 1;
  ulong sign = (ulong)neg << (W - 1);
  ulong sinf2 = (ulong)(2 * SB + 1) << SP;
  ulong inf = (ulong)(2 * B + 1) << (P - 1);
  if (a2 > sinf2) return sign | inf | (1UL << (P - 2));
  if (a2 == sinf2) return sign | inf;
  if (a2 == 0UL) return sign;
  int E = (int)(a2 >> SP);
  ulong m = b & ((1UL << (SP - 1)) - 1UL);
  int q = 1 - SB - (SP - 1);
  if (E != 0) {{ m |= 1UL << (SP - 1); q = E - SB - (SP - 1); }}
  return sign | __vkcl_round_bits(m, q, neg, mode, P, B);
}}
{_INLINE} ulong __vkcl_from_int(ulong m, int neg, int mode, int W, int P, int B) {{
  if (m == 0UL) return 0UL;
  return ((ulong)neg << (W - 1)) | __vkcl_round_bits(m, 0, neg, mode, P, B);
}}
"""


# The float that half bits stand for (exact: every half is a float; a subnormal half is
# normalized, a NaN keeps its payload).
HALF_TO_FLOAT = f"""{_INLINE} float __vkcl_half_to_float(ushort h) {{
  uint s = (uint)(h & 0x8000) << 16, e = (uint)(h >> 10) & 0x1Fu, m = (uint)h & 0x3FFu;
  if (e == 0x1Fu) return as_float(s | 0x7F800000u | (m << 13));
  if (e != 0u) return as_float(s | ((e + 112u) << 23) | (m << 13));
  if (m == 0u) return as_float(s);
  uint shift = clz(m) - 21u;
  return as_float(s | ((113u - shift) << 23) | (((m << shift) & 0x3FFu) << 13));
}}
"""


def narrow(dst: str, src: str, mode: str, x: str) -> str:
    """An expression: the floating-point value x of type src rounded to the narrower type dst,
    as dst's bits type (ushort, uint)."""
    sw, sp, sb = FORMAT[src]
    w, p, b = FORMAT[dst]
    return (f"({BITS_TYPE[dst]})__vkcl_narrow((ulong)as_{BITS_TYPE[src]}({x}), {sw}, {sp}, {sb}, "
            f"{MODE[mode]}, {w}, {p}, {b})")


def from_int(dst: str, signed: bool, mode: str, x: str) -> str:
    """An expression: the integer x (signed or not) rounded to dst, as dst's bits type."""
    w, p, b = FORMAT[dst]
    if signed:
        m, neg = f"((long){x} < 0 ? 0UL - (ulong)(long){x} : (ulong)(long){x})", f"(long){x} < 0"
    else:
        m, neg = f"(ulong){x}", "0"
    return f"({BITS_TYPE[dst]})__vkcl_from_int({m}, {neg}, {MODE[mode]}, {w}, {p}, {b})"
