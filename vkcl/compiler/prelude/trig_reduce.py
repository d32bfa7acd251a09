"""Argument reduction by pi/2 for sin, cos, tan and sincos: __vkcl_trig_rem_pio2(a, &q) gives,
for a finite a >= 0, the quadrant q (mod 4) and r = a - k pi/2 (|r| <= pi/4 and a little) as a
pair (r, rr) whose sum is accurate to far below an ulp of r.

- Small a (below 6144 for float, 1.5 * 2**20 for double): Cody-Waite, pi/2 as 4 parts whose
  products with k are exact. float's chain was checked against exact values for every float
  below the bound (error at most 1.0 ulp of r); double's sums carry their rounding errors.
- Large a: Payne-Hanek in integers: the significand times a window of 2/pi's bits (a table of
  1280 bits, enough for 2**1024), quadrant and fraction taken from the product, the fraction
  (64 / 128 bits, worst cancellation about 2**-62) turned into radians by an exact product.
  Integers make this exact on every device.
"""
from __future__ import annotations

from vkcl.compiler.prelude.trig_common import DOUBLE, FLOAT, HELPER, INTERNAL, guarded
from vkcl.compiler.prelude.trig_tables import TWO_OVER_PI

_TABLE = "__attribute__((internal_linkage)) __constant uint __vkcl_trig_2opi[%d] = {%s};\n" % (
    len(TWO_OVER_PI), ", ".join(f"0x{w:08X}U" for w in TWO_OVER_PI))


def _payne_hanek(ty) -> str:
    """Straight-line text: from a (> 0) to q and (r, rr), large arguments."""
    double = ty is DOUBLE
    nm, nw, nf = (2, 7, 4) if double else (1, 4, 2)  # words: significand, 2/pi window, fraction
    np_ = nm + nw  # product words
    out = []
    if double:
        out.append("  ulong ia = as_ulong(a); int e = (int)(ia >> 52) - 1075;\n"
                   "  ulong m = (ia & 0xFFFFFFFFFFFFFUL) | 0x10000000000000UL;\n"
                   "  uint m0 = (uint)m, m1 = (uint)(m >> 32);\n")
    else:
        out.append("  uint ia = as_uint(a); int e = (int)(ia >> 23) - 150;\n"
                   "  uint m0 = (ia & 0x7FFFFFU) | 0x800000U;\n")
    # a 2/pi = m 2**e sum(table[i] 2**(-32(i+1))): words before j0 add multiples of 4
    out.append("  int j0 = e >= 2 ? (e - 2) >> 5 : 0;\n")
    out.append("".join(f"  uint w{i} = __vkcl_trig_2opi[j0 + {i}];\n" for i in range(nw)))
    # products m_a * w_i land at word a + (nw - 1 - i) of the product
    terms = {p: [] for p in range(np_ + 1)}
    for a in range(nm):
        for i in range(nw):
            out.append(f"  ulong p{a}_{i} = (ulong)m{a} * w{i};\n")
            pos = a + nw - 1 - i
            terms[pos].append(f"(p{a}_{i} & 0xFFFFFFFFUL)")
            terms[pos + 1].append(f"(p{a}_{i} >> 32)")
    out.append("  ulong c = 0;\n")
    for p in range(np_):
        out.append(f"  c = (c >> 32) + {' + '.join(terms[p])}; uint P{p} = (uint)c;\n")
    out.append(f"  uint P{np_} = 0;\n")
    # the product's bit n has weight 2**0; fraction: bits n-1 .. n-32nf; quadrant: n, n+1
    out.append(f"  int b = 32 * (j0 + {nw}) - e - {32 * nf}, wi = b >> 5, bo = b & 31;\n")
    lo_wi, hi_wi = ((63 >> 5), (128 >> 5)) if double else ((31 >> 5), (75 >> 5))

    def pick(j: int) -> str:
        text = f"P{hi_wi + j}"
        for k in range(hi_wi - 1, lo_wi - 1, -1):
            text = f"(wi == {k} ? P{k + j} : {text})"
        return text
    for j in range(nf + 2):
        out.append(f"  uint s{j} = {pick(j)};\n")
    for j in range(nf + 1):
        out.append(f"  uint u{j} = (uint)((((ulong)s{j + 1} << 32) | s{j}) >> bo);\n")
    out.append(f"  uint neg = u{nf - 1} >> 31;\n  *q = (int)((u{nf} + neg) & 3);\n")
    if double:
        out.append("  ulong fh = ((ulong)u3 << 32) | u2, fl = ((ulong)u1 << 32) | u0;\n"
                   "  if (neg) { fh = ~fh + (fl == 0 ? 1 : 0); fl = 0 - fl; }\n"
                   "  uint top = (uint)(fh >> 32);\n"
                   "  int lz = top ? (int)clz(top) : 32 + (int)clz((uint)fh);\n"
                   "  ulong nh = (fh << lz) | ((fl >> 1) >> (63 - lz)), nl = fl << lz;\n"
                   "  double hi = (double)(nh >> 11) * 0x1p-53;\n"
                   "  double lo = (double)(nh & 0x7FFUL) * 0x1p-64 + (double)nl * 0x1p-128;\n")
    else:
        out.append("  ulong f = ((ulong)u1 << 32) | u0;\n"
                   "  if (neg) f = 0 - f;\n"
                   "  uint top = (uint)(f >> 32);\n"
                   "  int lz = top ? (int)clz(top) : 32 + (int)clz((uint)f | 1U);\n"
                   "  ulong nf = f << lz;\n"
                   "  float hi = (float)(uint)(nf >> 40) * 0x1p-24f;\n"
                   "  float lo = (float)(nf & 0xFFFFFFFFFFUL) * 0x1p-64f;\n")
    # (hi + lo) 2**-lz is the fraction of a quarter turn; times pi/2, exactly enough
    out.append(ty.fill("  $T2 p = __vkcl_trig_2mul(hi, ${PIO2_HI});\n"
                       "  $T lo2 = hi * ${PIO2_LO} + lo * ${PIO2_HI};\n"
                       "  $T2 r = __vkcl_trig_fast2sum(p.x, p.y + lo2);\n"
                       "  $T s = __vkcl_trig_pow2(a, -lz);\n"
                       "  r *= s;\n"
                       "  return neg ? -r : r;\n"))
    return "".join(out)


_CODY_WAITE = {
    # float: k < 2**12, parts of 12 bits: each subtraction but the last exact where it matters
    "float": """  float k = (float)(int)(a * ${TWO_OVER_PI_HI} + 0.5f);
  *q = (int)k & 3;
  float p = k * ${PIO2_P0};
  float t = a - p;
  p = k * ${PIO2_P1};
  t = t - p;
  p = k * ${PIO2_P2};
  t = t - p;
  p = k * ${PIO2_P3};
  float r = t - p;
  float e = t - r;
  return (float2)(r, e - p);
""",
    # double: k < 2**20, parts of 33 bits, the sums' errors kept
    "double": """  double k = (double)(long)(a * ${TWO_OVER_PI_HI} + 0.5);
  *q = (int)(long)k & 3;
  double p = k * ${PIO2_P0};
  double t = a - p;
  p = k * ${PIO2_P1};
  double2 h = __vkcl_trig_2sum(t, -p);
  p = k * ${PIO2_P2};
  double2 h2 = __vkcl_trig_2sum(h.x, -p);
  p = k * ${PIO2_P3};
  double lo = h.y + h2.y;
  return __vkcl_trig_fast2sum(h2.x, lo - p);
""",
}
_BOUND = {"float": "0x1.8p12f", "double": "0x1.8p20"}


def _reduce(ty) -> str:
    return guarded(ty.name, ty.fill(
        f"{INTERNAL} $T2 __vkcl_trig_rem_pio2_large($T a, int *q) {{\n"
        f"{_payne_hanek(ty)}}}\n"
        f"{HELPER} $T2 __vkcl_trig_rem_pio2($T a, int *q) {{\n"
        f"  if (a <= ${{PIO4_HI}}) {{ *q = 0; return ($T2)(a, 0); }}\n"
        f"  if (a >= {_BOUND[ty.name]}) return __vkcl_trig_rem_pio2_large(a, q);\n"
        f"{_CODY_WAITE[ty.name]}}}\n"))


REDUCE = _TABLE + _reduce(FLOAT) + _reduce(DOUBLE)
