"""length, distance, normalize and cross for float, double and half (half through float).

clspv's float normalize squares the components as they are: normalize((3e-30f, 0, 4e-30f, 0))
was (inf, nan, inf, nan) and normalize((3e30f, 0, 4e30f, 0)) all zeros (the sum underflowed or
overflowed); its double ones use its wrong fp64 library (length(-0x1p-23) was 0, normalize of
finite doubles inf or 0), and cross(double4) and cross(half4) crash clspv.

vkcl's scale a vector by a power of two that brings its largest component to [1, 2) (exact),
sum the squares exactly enough (Dekker products, two-sums: trig_common's helpers), take a
square root corrected by its exact residual, and scale back once: within about half an ulp,
for any components whose result is representable. distance(p, q) is the length of p - q
with each difference's rounding error carried along (two-sum), so it is as accurate.
normalize multiplies the scaled components by the root's corrected reciprocal; its special values
follow OpenCL C 3.0: all zeros give p, a NaN gives NaNs, infinite components count as +-1 and
the others as +-0. cross is the products' difference with each product rounded first (its own
statement, so never contracted into an Fma): the value the OpenCL-CTS computes on the host.
"""
from __future__ import annotations

from vkcl.compiler.prelude.trig_common import HELPER, INTERNAL, TYPES, Part, guarded

F = HELPER
LANES = ("0", "1", "2", "3")
_MAGNITUDE = {
    # |h|'s bits, which order non-negative values as the values do, denormals included
    "float": "return as_uint(h) & 0x7FFFFFFFU;",
    "double": "uint2 w = as_uint2(h); return as_ulong((uint2)(w.x, w.y & 0x7FFFFFFFU));",
}
_ILOGB = {
    # floor(log2(m)) for m > 0 finite: denormals scaled up first
    "float": """  int k = 0;
  if (m < 0x1p-126f) { m = m * 0x1p24f; k = -24; }
  return k + (int)(as_uint(m) >> 23) - 127;
""",
    "double": """  int k = 0;
  if (m < 0x1p-1022) { m = m * 0x1p54; k = -54; }
  return k + (int)(as_uint2(m).y >> 20) - 1023;
""",
}


def _each(template: str, lanes: tuple[str, ...] = LANES) -> str:
    """`template` once per lane, @ its number."""
    return "\n".join(template.replace("@", i) for i in lanes)


def _kernels(ty) -> str:
    h = ", ".join(f"$T h{i}" for i in LANES)
    hl = h + ", " + ", ".join(f"$T l{i}" for i in LANES)
    args_h = ", ".join(f"h{i}" for i in LANES)
    return ty.fill(f"""
/* p 2**k in two exact steps (2**k alone may not be a normal number): one rounding at most */
{F} $T __vkcl_geo_scale($T p, int k) {{
  int k1 = k / 2;
  $T s = p * __vkcl_trig_pow2(p, k1);
  return s * __vkcl_trig_pow2(p, k - k1);
}}
{F} int __vkcl_geo_ilogb($T m) {{
{_ILOGB[ty.name]}}}
/* sqrt(sum (h_i + l_i)^2) as (root, correction), the largest |h_i| in [1, 2) and l_i a small
   exact remainder of h_i: squares and sums exact to twice the precision */
{F} $T2 __vkcl_geo_root({hl}) {{
  $T2 p = __vkcl_trig_2mul(h0, h0), t;
  $T s = p.x, e = p.y, c;
{_each('''  p = __vkcl_trig_2mul(h@, h@);
  t = __vkcl_trig_2sum(s, p.x);
  s = t.x;
  e = e + t.y;
  e = e + p.y;''', LANES[1:])}
{_each('''  c = h@ * l@;
  c = c + c;
  e = e + c;''')}
  $T2 r = __vkcl_trig_sqrt(s);
  c = r.x + r.x;
  return ($T2)(r.x, r.y + e / c);
}}
/* 1 / (r.x + r.y), r.x in [1, 4), as a double-length (value, correction): the quotient
   corrected by its exact residual (the device's division alone may be off by ulps: clspv's
   double one by 20) */
{F} $T2 __vkcl_geo_recip($T2 r) {{
  $T q = 1.0$S / r.x;
  $T2 p = __vkcl_trig_2mul(q, r.x);
  $T e = 1.0$S - p.x, t = q * r.y;
  e = e - p.y;
  e = e - t;
  t = e * q;
  return ($T2)(q, t);
}}
/* No float comparison tells a zero here: a device may flush denormals in comparisons (the H200
   does, while its arithmetic keeps them), and a denormal is no zero. Nor does an integer test of
   one value's bits: LLVM folds (bits & 0x7FFFFFFF) == 0 back into a float comparison. */
{F} $U __vkcl_geo_magnitude($T h) {{ {_MAGNITUDE[ty.name]} }}
/* h (v.x + v.y), v > 0, rounded once but for the correction's last bits; with h's sign (a zero's
   included) */
{F} $T __vkcl_geo_scaled($T h, $T2 v) {{
  $T a = h * v.x, b = h * v.y;
  a = a + b;
  return __vkcl_trig_xorsign(__vkcl_trig_abs(a), __vkcl_trig_signbit(h));
}}
/* the bits of the largest |h_i|, which is finite: 0 if every one is 0 */
{F} $U __vkcl_geo_max({h}) {{
  $U m = __vkcl_geo_magnitude(h0), b;
{_each('''  b = __vkcl_geo_magnitude(h@);
  m = m > b ? m : b;''', LANES[1:])}
  return m;
}}
/* the length of the vector (h_i + l_i) */
{INTERNAL} $T __vkcl_geo_length({hl}) {{
  if ({' || '.join(f'__vkcl_trig_isnan(h{i})' for i in LANES)}) return __vkcl_trig_nan(h0);
  if (!({' && '.join(f'__vkcl_trig_finite(h{i})' for i in LANES)})) return __vkcl_trig_inf(h0);
  $U mb = __vkcl_geo_max({args_h});
  if (mb == 0) return 0.0$S;
  $T m = as_$T(mb);
  int k = __vkcl_geo_ilogb(m);
{_each('  h@ = __vkcl_geo_scale(h@, -k);')}
{_each('  l@ = __vkcl_geo_scale(l@, -k);')}
  $T2 r = __vkcl_geo_root({args_h}, {', '.join(f'l{i}' for i in LANES)});
  return __vkcl_geo_scale(r.x + r.y, k);
}}
/* the vector (h_i) over its length (OpenCL C's special values) */
{INTERNAL} ${{T}}4 __vkcl_geo_normalize({h}) {{
  if ({' || '.join(f'__vkcl_trig_isnan(h{i})' for i in LANES)}) return (${{T}}4)(__vkcl_trig_nan(h0));
  if (!({' && '.join(f'__vkcl_trig_finite(h{i})' for i in LANES)})) {{
{_each('    h@ = __vkcl_trig_xorsign(__vkcl_trig_finite(h@) ? 0.0$S : 1.0$S, __vkcl_trig_signbit(h@));')}
  }}
  $U mb = __vkcl_geo_max({args_h});
  /* zeros keep their signs */
  if (mb == 0) return (${{T}}4)({', '.join(f'__vkcl_trig_xorsign(0.0$S, __vkcl_trig_signbit(h{i}))' for i in LANES)});
  int k = __vkcl_geo_ilogb(as_$T(mb));
{_each('  h@ = __vkcl_geo_scale(h@, -k);')}
  $T2 r = __vkcl_geo_root({args_h}, 0.0$S, 0.0$S, 0.0$S, 0.0$S);
  r = __vkcl_geo_recip(r);
{_each('  h@ = __vkcl_geo_scaled(h@, r);')}
  return (${{T}}4)({args_h});
}}
""")


KERNELS = "".join(guarded(ty.name, _kernels(ty)) for ty in TYPES)
_COMPONENTS = {"": ["x"], "2": ["x", "y"], "3": ["x", "y", "z"], "4": ["x", "y", "z", "w"]}


def _lanes(var: str, w: str, pad: str) -> list[str]:
    """The four lane arguments of a vector (a scalar: itself), zeros after its components."""
    comps = [var] if not w else [f"{var}.{c}" for c in _COMPONENTS[w]]
    return comps + [pad] * (4 - len(comps))


def _length(t: str, w: str) -> str:
    zero = "0.0" + ("f" if t == "float" else "")
    if not w:  # |x|
        return f"{INTERNAL} {t} __vkcl_length({t} p) {{ return __vkcl_trig_abs(p); }}\n"
    return (f"{INTERNAL} {t} __vkcl_length({t}{w} p) {{ return __vkcl_geo_length("
            f"{', '.join(_lanes('p', w, zero) + [zero] * 4)}); }}\n")


def _distance(t: str, w: str) -> str:
    zero = "0.0" + ("f" if t == "float" else "")
    comps = _COMPONENTS[w or ""] if w else [""]
    lines = [f"{INTERNAL} {t} __vkcl_distance({t}{w} p, {t}{w} q) {{"]
    his, los = [], []
    for i, c in enumerate(comps):
        dot = f".{c}" if w else ""
        lines.append(f"  {t}2 d{i} = __vkcl_trig_2sum(p{dot}, -q{dot});")
        his.append(f"d{i}.x")
        los.append(f"d{i}.y")
    his += [zero] * (4 - len(his))
    los += [zero] * (4 - len(los))
    lines.append(f"  return __vkcl_geo_length({', '.join(his + los)});\n}}\n")
    return "\n".join(lines)


def _normalize(t: str, w: str) -> str:
    zero = "0.0" + ("f" if t == "float" else "")
    if not w:  # +-1 with x's sign; zeros and NaN as they are
        one = "1.0" + ("f" if t == "float" else "")
        return (f"{INTERNAL} {t} __vkcl_normalize({t} p) {{ return __vkcl_trig_isnan(p) ? p : "
                f"__vkcl_trig_xorsign(p == {zero} ? {zero} : {one}, __vkcl_trig_signbit(p)); }}\n")
    r = f"__vkcl_geo_normalize({', '.join(_lanes('p', w, zero))})"
    take = ".xyz"[:int(w) + 1] if w != "4" else ""
    return f"{INTERNAL} {t}{w} __vkcl_normalize({t}{w} p) {{ return {r}{take}; }}\n"


def _cross(t: str, w: str) -> str:
    """Each product rounded, then their difference; w (width 4) is 0."""
    lines = [f"{INTERNAL} {t}{w} __vkcl_cross({t}{w} a, {t}{w} b) {{"]
    for out, (i, j) in zip("xyz", (("y", "z"), ("z", "x"), ("x", "y"))):
        lines.append(f"  {t} {out}1 = a.{i} * b.{j};")
        lines.append(f"  {t} {out}2 = a.{j} * b.{i};")
    tail = ", 0.0" + ("f" if t == "float" else "") if w == "4" else ""
    lines.append(f"  return ({t}{w})(x1 - x2, y1 - y2, z1 - z2{tail});\n}}\n")
    return "\n".join(lines)


def _half(name: str, w: str, arity: int) -> str:
    """The half member: the float one, its result rounded to half (products of halves are
    exact in float)."""
    params = ", ".join(f"half{w} {p}" for p in "pq"[:arity])
    fw = lambda p: f"(float{w})({', '.join(f'(float){p}.{c}' for c in _COMPONENTS[w])})" if w else f"(float){p}"  # noqa: E731
    call = f"__vkcl_{name}({', '.join(fw(p) for p in 'pq'[:arity])})"
    vector_result = name in ("normalize", "cross") and w
    if not vector_result:
        return f"{HELPER} half __vkcl_{name}({params}) {{ return (half){call}; }}\n"
    comps = ", ".join(f"(half)r.{c}" for c in _COMPONENTS[w])
    return f"{HELPER} half{w} __vkcl_{name}({params}) {{ float{w} r = {call}; return (half{w})({comps}); }}\n"


def _part(name: str, widths: tuple[str, ...], make, arity: int) -> str:
    out = []
    for t in ("float", "double"):
        out.append(guarded(t, "".join(make(t, w) for w in widths)))
    out.append(guarded("half", "".join(_half(name, w, arity) for w in widths)))
    args = ", ".join("pq"[:arity])  # function-like: a variable named length stays one
    out.append(f"#define {name}({args}) __vkcl_{name}({args})\n")
    return "".join(out)


VECTORS = ("", "2", "3", "4")
NAMES = ("length", "distance", "normalize", "cross")
# The names whose parts use trig_common's exact arithmetic and square root (trig.py puts them
# in for these names too).
EXACT_USERS = ("length", "distance", "normalize")
PARTS = (
    Part(EXACT_USERS, KERNELS),
    Part(("length",), _part("length", VECTORS, _length, 1)),
    Part(("distance",), _part("distance", VECTORS, _distance, 2)),
    Part(("normalize",), _part("normalize", VECTORS, _normalize, 1)),
    Part(("cross",), _part("cross", ("3", "4"), _cross, 2)),
)
