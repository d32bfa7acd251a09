"""sin, cos, tan, sincos, sinpi, cospi, tanpi for float and double (half through float), every
width. clspv's are wrong: float sin/cos/tan lose all accuracy for |x| >= 512 on lavapipe (its
libclc code needs a fused fma; Vulkan's Fma is not fused there), double cos(x) is 1 and sin,
tan garbage, sinpi(1) is -0 and cospi(0.5) -0 (the spec: +0), half sin/cos/tan wrong; the
half_sin/half_cos/half_tan of floats too (through clspv's sin/cos/tan).

sin/cos/tan: the reduction of trig_reduce.py, then minimax polynomials on [-pi/4, pi/4]
(tan = sin/cos with a corrected quotient). sinpi/cospi/tanpi: exact reduction (x - n/2 is exact
for a float x), then polynomials in f = x - n/2, |f| <= 1/4.
"""
from __future__ import annotations

from vkcl.compiler.prelude.trig_common import HELPER, TYPES, WIDTHS, Part, builtin, guarded
from vkcl.compiler.prelude.trig_reduce import REDUCE

F = HELPER


def _kernels(ty) -> str:
    """sin and cos of r + rr, |r| <= pi/4 (rr far below an ulp of r)."""
    return ty.fill(f"""
{F} $T __vkcl_trig_sin_k($T r, $T rr) {{
  $T z = r * r;
  return r + (r * z * {ty.poly('z', 'sin')} + rr);
}}
{F} $T __vkcl_trig_cos_k($T r, $T rr) {{
  $T z = r * r, hz = 0.5$S * z, w = 1.0$S - hz;
  /* (1 - w) - hz: the rounding error of w, exactly */
  return w + (((1.0$S - w) - hz) + (z * z * {ty.poly('z', 'cos')} - r * rr));
}}
/* (sin, cos) of x */
{F} $T2 __vkcl_trig_sincos($T x) {{
  if (!__vkcl_trig_finite(x)) return ($T2)(__vkcl_trig_nan(x), __vkcl_trig_nan(x));
  int q;
  $T2 r = __vkcl_trig_rem_pio2(__vkcl_trig_abs(x), &q);
  $T s = __vkcl_trig_sin_k(r.x, r.y), c = __vkcl_trig_cos_k(r.x, r.y);
  $T sq = (q & 1) ? c : s, cq = (q & 1) ? s : c;
  sq = (q & 2) ? -sq : sq;
  cq = ((q + 1) & 2) ? -cq : cq;
  return ($T2)(__vkcl_trig_xorsign(sq, __vkcl_trig_signbit(x)), cq);
}}
""")


KERNELS = REDUCE + "".join(guarded(ty.name, _kernels(ty)) for ty in TYPES)

_SIN = """  if (!__vkcl_trig_finite(x)) return __vkcl_trig_nan(x);
  int q;
  $T2 r = __vkcl_trig_rem_pio2(__vkcl_trig_abs(x), &q);
  $T v = (q & 1) ? __vkcl_trig_cos_k(r.x, r.y) : __vkcl_trig_sin_k(r.x, r.y);
  v = (q & 2) ? -v : v;
  return __vkcl_trig_xorsign(v, __vkcl_trig_signbit(x));
"""
_COS = """  if (!__vkcl_trig_finite(x)) return __vkcl_trig_nan(x);
  int q;
  $T2 r = __vkcl_trig_rem_pio2(__vkcl_trig_abs(x), &q);
  $T v = (q & 1) ? __vkcl_trig_sin_k(r.x, r.y) : __vkcl_trig_cos_k(r.x, r.y);
  return ((q + 1) & 2) ? -v : v;
"""
_TAN = """  if (!__vkcl_trig_finite(x)) return __vkcl_trig_nan(x);
  int q;
  $T2 r = __vkcl_trig_rem_pio2(__vkcl_trig_abs(x), &q);
  $T s = __vkcl_trig_sin_k(r.x, r.y), c = __vkcl_trig_cos_k(r.x, r.y);
  $T t = (q & 1) ? -__vkcl_trig_div(c, s) : __vkcl_trig_div(s, c);
  return __vkcl_trig_xorsign(t, __vkcl_trig_signbit(x));
"""


_GENERIC = "#if __OPENCL_C_VERSION__ == 200 || defined(__opencl_c_generic_address_space)\n"
_HALF_SINCOS = guarded("half", f"""{HELPER} half2 __vkcl_trig_sincos(half x) {{
  float2 p = __vkcl_trig_sincos((float)x);
  return (half2)((half)p.x, (half)p.y);
}}
""")


def _sincos() -> str:
    """sincos(x, &c): every address space the pointer may have (generic where the language
    has it); the private overloads compute (vectors by halves, half through float), the others
    go through them."""
    out = [_HALF_SINCOS]
    for scalar in ("float", "double", "half"):
        text = []
        for w in WIDTHS:
            t = f"{scalar}{w}"
            if not w:
                body = f"{scalar}2 p = __vkcl_trig_sincos(x); *c = p.y; return p.x;"
            elif w == "3":
                body = (f"{scalar} c0, c1, c2; {t} s = ({t})(__vkcl_sincos(x.s0, &c0), "
                        f"__vkcl_sincos(x.s1, &c1), __vkcl_sincos(x.s2, &c2)); *c = ({t})(c0, c1, c2); return s;")
            else:
                h = f"{scalar}{int(w) // 2 if w != '2' else ''}"
                body = (f"{h} c0, c1; {t} s = ({t})(__vkcl_sincos(x.lo, &c0), __vkcl_sincos(x.hi, &c1)); "
                        f"*c = ({t})(c0, c1); return s;")
            text.append(f"{HELPER} {t} __vkcl_sincos({t} x, __private {t} *c) {{ {body} }}\n")
            for space in ("__global", "__local", "__generic"):
                line = (f"{HELPER} {t} __vkcl_sincos({t} x, {space} {t} *c) "
                        f"{{ {t} k; {t} s = __vkcl_sincos(x, &k); *c = k; return s; }}\n")
                text.append(f"{_GENERIC}{line}#endif\n" if space == "__generic" else line)
        out.append(guarded(scalar, "".join(text)))
    out.append("#define sincos(x, c) __vkcl_sincos(x, c)\n")
    return "".join(out)


def _pi_kernels(ty) -> str:
    """sinpi and cospi of f, |f| <= 1/4, and the reduction of a = |x|: (f, n) with
    a = f + n/2 exactly."""
    big = ty.lit(2.0 ** ty.bits)
    half_big = ty.lit(2.0 ** (ty.bits - 1))
    return ty.fill(f"""
{F} $T __vkcl_trig_sinpi_k($T f) {{
  $T z = f * f;
  return f * ${{PI_HI}} + f * (${{PI_LO}} + z * {ty.poly('z', 'sinpi')});
}}
{F} $T __vkcl_trig_cospi_k($T f) {{
  $T z = f * f;
  return 1.0$S + z * {ty.poly('z', 'cospi')};
}}
/* a = |x| finite: f = a - n/2, |f| <= 1/4; beyond 2**bits every a is an even integer */
{F} $T __vkcl_trig_rem_half($T a, $I *n) {{
  $T t = a >= {big} ? 0.0$S : a, t2 = t + t;
  *n = t2 >= {half_big} ? ($I)t2 : ($I)(t2 + 0.5$S);
  $T h = ($T)(*n) * 0.5$S;
  return t - h;
}}
""")


PI_KERNELS = "".join(guarded(ty.name, _pi_kernels(ty)) for ty in TYPES)

_SINPI = """  if (!__vkcl_trig_finite(x)) return __vkcl_trig_nan(x);
  $I n;
  $T f = __vkcl_trig_rem_half(__vkcl_trig_abs(x), &n);
  $T v = (n & 1) ? __vkcl_trig_cospi_k(f) : __vkcl_trig_sinpi_k(f);
  v = (n & 2) ? -v : v;
  /* sinpi of an integer is +0, then x's sign */
  v = (f == 0.0$S && !(n & 1)) ? 0.0$S : v;
  return __vkcl_trig_xorsign(v, __vkcl_trig_signbit(x));
"""
_COSPI = """  if (!__vkcl_trig_finite(x)) return __vkcl_trig_nan(x);
  $I n;
  $T f = __vkcl_trig_rem_half(__vkcl_trig_abs(x), &n);
  $T v = (n & 1) ? __vkcl_trig_sinpi_k(f) : __vkcl_trig_cospi_k(f);
  v = ((n + 1) & 2) ? -v : v;
  /* cospi(n + 1/2) is +0 */
  return (f == 0.0$S && (n & 1)) ? 0.0$S : v;
"""
_TANPI = """  if (!__vkcl_trig_finite(x)) return __vkcl_trig_nan(x);
  $I n;
  $T f = __vkcl_trig_rem_half(__vkcl_trig_abs(x), &n);
  $T s = __vkcl_trig_sinpi_k(f), c = __vkcl_trig_cospi_k(f);
  $T v = (n & 1) ? -__vkcl_trig_div(c, s) : __vkcl_trig_div(s, c);
  /* integers: +-0 (odd ones -0 before x's sign); n + 1/2: +inf for even n, -inf for odd */
  $T inf = __vkcl_trig_inf(x);
  $T exact = (n & 1) ? ((n & 2) ? -inf : inf) : ((n & 2) ? -0.0$S : 0.0$S);
  v = f == 0.0$S ? exact : v;
  return __vkcl_trig_xorsign(v, __vkcl_trig_signbit(x));
"""

def _half_precision(name: str) -> str:
    """half_<name> (float only, every width) as vkcl's <name>: within its limit of 8192 ulp
    wherever that holds (|x| <= 2^16), and beyond."""
    return ("".join(f"{F} float{w} __vkcl_half_{name}(float{w} x) {{ return __vkcl_{name}(x); }}\n"
                    for w in WIDTHS) +
            f"#define half_{name}(x) __vkcl_half_{name}(x)\n")


# half_sin/cos/tan: clspv's are up to 1e5 ulp off from |x| = 512 (the spec's limit: 8192 for |x| <= 2^16)
HALF_NAMES = ("half_sin", "half_cos", "half_tan")
NAMES = ("sin", "cos", "tan", "sincos", "sinpi", "cospi", "tanpi") + HALF_NAMES
# helpers first (a part for the names that need them), then one part per builtin
PARTS = (
    Part(NAMES[:4] + HALF_NAMES, KERNELS),
    Part(NAMES[4:7], PI_KERNELS),
    Part(("sin", "half_sin"), builtin("sin", 1, _SIN)),
    Part(("cos", "half_cos"), builtin("cos", 1, _COS)),
    Part(("tan", "half_tan"), builtin("tan", 1, _TAN)),
    Part(("sincos",), _sincos()),
    Part(("sinpi",), builtin("sinpi", 1, _SINPI)),
    Part(("cospi",), builtin("cospi", 1, _COSPI)),
    Part(("tanpi",), builtin("tanpi", 1, _TANPI)),
    *(Part((f"half_{n}",), _half_precision(n)) for n in ("sin", "cos", "tan")),
)
