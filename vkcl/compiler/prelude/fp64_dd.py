"""Double-double arithmetic for the double prelude parts, and the exp and log kernels built on
it (no part of its own: the parts of exp, log, pow, erf, tgamma, ... put these texts first, each
once per program).

A double-double is a double2 (hi, lo), |lo| <= ulp(hi) / 2: about 106 bits. Exact sums are
Knuth's two-sum; exact products Dekker's, the halves split by integer masks (Vulkan's Fma may
be unfused, and is on lavapipe). Every exact step is its own statement: clang contracts
`a * b + c` within one expression into an Fma, which carries no NoContraction, and lavapipe
reassociates what is not decorated. (vkcl keeps clspv's NoContraction decorations unless the
build options allow fusing: spirv_fixes.py, repair 5.) No clspv math builtin on doubles is
called but sqrt, trunc, floor and rint, which are right, and a quotient is refined from its
exact residual, so a device's division need not be correctly rounded.

- log: x = 2^e m, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(u), u = (m - 1)/(m + 1) (|u| <=
  0.1716), the series 2u (1 + u^2/3 + u^4/5 + ...) with its first two terms in double-double
  and the rest in double: relative error about 2^-66.
- exp: x = k ln2 + r, |r| <= ln2/2, r in double-double; exp(r) = 1 + r + r^2 (1/2 + r/6 + ...)
  to 1/17!: relative error about 2^-56, the result (v, k) with exp(x) = v 2^k, which the
  caller scales (its overflow and underflow are the scaling's).
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import guarded
from vkcl.compiler.prelude.fp64_common import BITS, HELPER, INTERNAL, once
from vkcl.compiler.prelude.fp64_tables import TABLES

H, I = HELPER, INTERNAL


def lit(v: float) -> str:
    """A double literal of exactly v."""
    return float.hex(float(v))


def dd(key: str) -> str:
    """A double-double constant of the tables as a double2 literal."""
    hi, lo = TABLES[key]
    return f"(double2)({lit(hi)}, {lit(lo)})"


def horner(var: str, coeffs) -> str:
    """Horner's scheme of the polynomial sum coeffs[i] var^i."""
    text = lit(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        text = f"({lit(c)} + {var} * {text})"
    return text


ARITH = BITS + once("DD", guarded("double", f"""
/* a + b as (sum, error): Knuth's two-sum */
{H} double2 __vkcl_dd_2sum(double a, double b) {{
  double s = a + b;
  double bb = s - a;
  double e = s - bb;
  e = a - e;
  bb = b - bb;
  return (double2)(s, e + bb);
}}
/* a + b as (sum, error) where |a| >= |b| or a == 0 */
{H} double2 __vkcl_dd_fast(double a, double b) {{
  double s = a + b;
  double e = s - a;
  return (double2)(s, b - e);
}}
/* a rounded to its top 26 bits: halves of at most 26 bits, whose products are exact */
{H} double __vkcl_dd_hi(double a) {{ return as_double((as_ulong(a) + 0x4000000UL) & 0xFFFFFFFFF8000000UL); }}
/* a * b as (product, error), exactly where no part under- or overflows */
{H} double2 __vkcl_dd_2mul(double a, double b) {{
  double p = a * b;
  double ah = __vkcl_dd_hi(a), bh = __vkcl_dd_hi(b);
  double al = a - ah, bl = b - bh;
  double e = ah * bh;
  e = e - p;
  double t = ah * bl;
  e = e + t;
  t = al * bh;
  e = e + t;
  t = al * bl;
  return (double2)(p, e + t);
}}
{H} double2 __vkcl_dd_add(double2 a, double2 b) {{
  double2 s = __vkcl_dd_2sum(a.x, b.x);
  double2 t = __vkcl_dd_2sum(a.y, b.y);
  s = __vkcl_dd_fast(s.x, s.y + t.x);
  return __vkcl_dd_fast(s.x, s.y + t.y);
}}
{H} double2 __vkcl_dd_add_d(double2 a, double b) {{
  double2 s = __vkcl_dd_2sum(a.x, b);
  return __vkcl_dd_fast(s.x, s.y + a.y);
}}
{H} double2 __vkcl_dd_mul(double2 a, double2 b) {{
  double2 p = __vkcl_dd_2mul(a.x, b.x);
  double c = a.x * b.y;
  c = c + a.y * b.x;
  return __vkcl_dd_fast(p.x, p.y + c);
}}
{H} double2 __vkcl_dd_mul_d(double2 a, double b) {{
  double2 p = __vkcl_dd_2mul(a.x, b);
  double c = a.y * b;
  return __vkcl_dd_fast(p.x, p.y + c);
}}
/* a / b, each quotient digit from the exact residual */
{I} double2 __vkcl_dd_div(double2 a, double2 b) {{
  double q1 = a.x / b.x;
  double2 r = __vkcl_dd_add(a, -__vkcl_dd_mul_d(b, q1));
  double q2 = r.x / b.x;
  r = __vkcl_dd_add(r, -__vkcl_dd_mul_d(b, q2));
  double q3 = r.x / b.x;
  double2 q = __vkcl_dd_fast(q1, q2);
  return __vkcl_dd_add_d(q, q3);
}}
"""))

_LOG_TAIL = TABLES["log_tail"]
# ln x for finite x > 0 (denormals too) as a double-double, and its parts: e (the power of 2)
# and ln m, for log2 and log10 to scale separately.
LOG = ARITH + once("LOG", guarded("double", f"""
/* x = 2^e m, m in [sqrt(1/2), sqrt(2)); returns ln m as a double-double, e through *e */
{I} double2 __vkcl_dd_log_m(double x, int *e) {{
  int k = 0;
  if (x < 0x1p-1022) {{ x = x * 0x1p54; k = -54; }}
  uint hi = as_uint2(x).y;
  k = k + (int)(hi >> 20) - 1023;
  hi = (hi & 0x000FFFFFU) | 0x3FF00000U;
  if (hi > 0x3FF6A09EU) {{ hi = hi - 0x00100000U; k = k + 1; }}
  *e = k;
  double m = as_double((uint2)(as_uint2(x).x, hi));
  double f = m - 1.0;
  double2 u = __vkcl_dd_div((double2)(f, 0.0), __vkcl_dd_2sum(m, 1.0));
  double2 s = __vkcl_dd_mul(u, u);
  double q = {horner('s.x', _LOG_TAIL)};
  double2 t = __vkcl_dd_add(__vkcl_dd_mul_d(s, q), {dd('third')});
  t = __vkcl_dd_add_d(__vkcl_dd_mul(t, s), 1.0);
  t = __vkcl_dd_mul(u, t);
  return t * 2.0;
}}
{I} double2 __vkcl_dd_log(double x) {{
  int e;
  double2 l = __vkcl_dd_log_m(x, &e);
  return __vkcl_dd_add(__vkcl_dd_mul_d({dd('ln2')}, (double)e), l);
}}
"""))

_EXP_TAIL = TABLES["exp_tail"]
# exp of a double-double x, |x.hi| < 746, as (v, k): exp(x) = (v.hi + v.lo) 2^k.
EXP = ARITH + once("EXP", guarded("double", f"""
{I} double2 __vkcl_dd_exp_k(double2 x, int *k) {{
  double kd = rint(x.x * {lit(TABLES['inv_ln2'][0])});
  *k = (int)kd;
  double2 r = __vkcl_dd_add(x, -__vkcl_dd_mul_d({dd('ln2')}, kd));
  double p = r.x;
  double q = {horner('p', _EXP_TAIL)};
  double c = p * q;
  c = 0.5 + c;
  double sq = p * p;
  c = sq * c;
  double2 v = __vkcl_dd_2sum(1.0, r.x);
  c = c + r.y;
  return __vkcl_dd_fast(v.x, v.y + c);
}}
/* v 2^k: one rounding, two where the result is a denormal (within an ulp then) */
{H} double __vkcl_dd_ldexp(double2 v, int k) {{ return __vkcl_fp64_scale(v.x + v.y, k); }}
"""))
