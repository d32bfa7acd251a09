"""Exact references for OpenCL C's double-precision builtins (Fraction arithmetic, mpmath), used
by fp64_harness.py. A reference returns a float where the result is exact (compared bit for bit,
NaN with NaN) and an mpf where it is a real value (measured in ulps). Special values follow C99
Annex F and OpenCL C 3.0's section 7.5.1.
"""
from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np
from mpmath import mp

mp.prec = 320
INF, NAN = math.inf, math.nan
DMAX, DMIN, DENORM = sys.float_info.max, sys.float_info.min, 5e-324
INT_MIN, INT_MAX = -2**31, 2**31 - 1

# ---- exact references -------------------------------------------------------------------------

def to_double(v) -> float:
    """A rational or mpf rounded to the nearest double (ties to even), inf past the range."""
    if isinstance(v, float):
        return v
    if not isinstance(v, Fraction):
        if mp.isnan(v):
            return NAN
        if mp.isinf(v):
            return INF if v > 0 else -INF
        sign, man, exp, _ = mp.mpf(v)._mpf_
        v = Fraction(man) * (Fraction(2) ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)
        v = -v if sign else v
    try:
        return float(v)
    except OverflowError:
        return INF if v > 0 else -INF


def exact_fma(a: float, b: float, c: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c  # IEEE's inf and NaN rules; one rounding cannot matter here
    if not math.isfinite(c):
        return c  # a finite product, even one past the range, and an infinite or NaN addend
    r = Fraction(a) * Fraction(b) + Fraction(c)
    if r == 0:  # IEEE: -0 only for -0 + -0 (a product of zero with a negative sign, and c = -0)
        negative = (a == 0 or b == 0) and math.copysign(1, a) * math.copysign(1, b) < 0 \
            and c == 0 and math.copysign(1, c) < 0
        return -0.0 if negative else 0.0
    return to_double(r)


def round_half_away(x: float) -> float:
    if not math.isfinite(x) or x == 0:
        return x
    return math.copysign(float(math.floor(Fraction(abs(x)) + Fraction(1, 2))), x)


def ilogb(x: float) -> int:
    if math.isnan(x):
        return INT_MAX
    if math.isinf(x):
        return INT_MAX
    if x == 0:
        return INT_MIN
    return math.frexp(x)[1] - 1


def logb(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x):
        return INF
    if x == 0:
        return -INF
    return float(math.frexp(x)[1] - 1)


def frexp(x: float):
    if not math.isfinite(x) or x == 0:
        return x, 0
    return math.frexp(x)


def modf(x: float):
    if math.isinf(x):
        return math.copysign(0.0, x), x
    f, i = math.modf(x)
    return f, i


def fract(x: float):
    if math.isnan(x):
        return x, x
    if math.isinf(x):
        return math.copysign(0.0, x), x
    fl = math.floor(x) if x != 0 else x
    f = min(x - fl, 0.99999999999999989)  # fmin(x - floor(x), 0x1.fffffffffffffp-1)
    return (math.copysign(0.0, x) if x == 0 else f), float(fl)


def remquo(x: float, y: float):
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return NAN, 0
    if math.isinf(y):
        return x, 0
    r = math.remainder(x, y)
    q = (Fraction(x) - Fraction(r)) / Fraction(y)  # an integer
    assert q.denominator == 1
    qi = abs(int(q)) & 0x7F
    return r, (-qi if (x < 0) != (y < 0) else qi)


def fminmax(x: float, y: float, big: bool) -> float:
    if math.isnan(x):
        return y
    if math.isnan(y):
        return x
    if x == y == 0:  # fmax(-0, +0): either zero is allowed by C99; OpenCL follows IEEE maxNum
        return x if (math.copysign(1, x) > 0) == big else y
    return max(x, y) if big else min(x, y)


def maxmag(x: float, y: float, big: bool) -> float:
    if not (math.isnan(x) or math.isnan(y)):
        if abs(x) > abs(y):
            return x if big else y
        if abs(y) > abs(x):
            return y if big else x
    return fminmax(x, y, big)


def fdim(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y):
        return NAN
    return to_double(Fraction(x) - Fraction(y)) if x > y and math.isfinite(x - y) else (x - y if x > y else 0.0)


def nextafter(x: float, y: float) -> float:
    return float(np.nextafter(x, y))


def ldexp(x: float, n: int) -> float:
    if not math.isfinite(x) or x == 0:
        return x
    n = max(-2200, min(2200, n))  # the same result, without a huge power of two
    return to_double(Fraction(x) * Fraction(2) ** n)


def sign(x: float) -> float:
    if math.isnan(x):
        return 0.0
    return math.copysign(1.0, x) if x != 0 else x


def cr(f):
    """A reference from a Fraction-exact computation, rounded once."""
    return lambda *a: to_double(f(*map(Fraction, a)))


def sqrt_ref(x: float) -> float:
    if math.isnan(x) or x < 0:
        return NAN
    return math.sqrt(x)  # correctly rounded in CPython (libm's sqrt)


# ---- real-valued references (mpmath) ----------------------------------------------------------

def _m(x: float):
    return mp.mpf(x)


def _odd_int(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and abs(y) < 2**53 and int(y) % 2 == 1


def _power(x: float, y):
    """|x|^y for finite x != 0, y; a float once far past the range (mpmath would need a precision
    as large as the exponent)."""
    t = y * math.log2(abs(x))
    if t > 1100:
        return INF
    if t < -1200:
        return 0.0
    return mp.power(abs(_m(x)), y if isinstance(y, mp.mpf) else _m(y))


def pow_ref(x: float, y: float):
    """C99 Annex F's pow: special values as floats, the rest as mpf."""
    if y == 0:
        return 1.0
    if x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return NAN
    if math.isinf(y):
        if x == -1:
            return 1.0
        return (INF if abs(x) > 1 else 0.0) if y > 0 else (0.0 if abs(x) > 1 else INF)
    if x == 0:
        if y < 0:
            return math.copysign(INF, x) if _odd_int(y) else INF
        return x if _odd_int(y) else 0.0
    if math.isinf(x):
        s = -1.0 if x < 0 and _odd_int(y) else 1.0
        return s * (INF if y > 0 else 0.0)
    if x < 0:
        if y != math.floor(y):
            return NAN
        v = _power(x, y)
        return -v if _odd_int(y) else v
    return _power(x, y)


def pown_ref(x: float, n: int):
    if n == 0:
        return 1.0
    return pow_ref(x, float(n))


def powr_ref(x: float, y: float):
    if math.isnan(x) or math.isnan(y) or x < 0:
        return NAN
    if x == 0:
        if y == 0:
            return NAN
        return INF if y < 0 else 0.0
    if math.isinf(x):
        if y == 0:
            return NAN
        return INF if y > 0 else 0.0
    if x == 1:
        return NAN if math.isinf(y) else 1.0
    if y == 0:
        return 1.0
    if math.isinf(y):
        return (INF if x > 1 else 0.0) if y > 0 else (0.0 if x > 1 else INF)
    return _power(x, y)


def rootn_ref(x: float, n: int):
    if n == 0 or math.isnan(x):
        return NAN
    if x < 0 and n % 2 == 0:
        return NAN
    if x == 0:
        if n < 0:
            return math.copysign(INF, x) if n % 2 else INF
        return x if n % 2 else 0.0
    if math.isinf(x):
        v = 0.0 if n < 0 else INF
        return math.copysign(v, x) if n % 2 else v
    v = mp.power(abs(_m(x)), mp.mpf(1) / n)
    return -v if x < 0 else v


def unary(f, zero_keeps_sign=True, at_inf=None, at_minus_inf=None, neg_nan=False, at_zero=None):
    """A reference for an mpmath function with C99's special values."""
    def ref(x):
        if math.isnan(x):
            return NAN
        if math.isinf(x):
            return (at_inf if x > 0 else at_minus_inf)
        if neg_nan and x < 0:
            return NAN
        if x == 0:
            if at_zero is not None:
                return at_zero(x)
            if zero_keeps_sign:
                return x
        return f(_m(x))
    return ref


def lgamma_ref(x: float):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return INF
    if x <= 0 and x == math.floor(x):
        return INF
    return mp.re(mp.loggamma(_m(x)))


def lgamma_sign(x: float) -> int:
    """The sign of gamma(x); 0 at its poles, NaN and -inf; 1 at +inf."""
    if x == INF:
        return 1
    if not math.isfinite(x) or (x <= 0 and x == math.floor(x)):
        return 0
    if x > 0:
        return 1
    return 1 if math.floor(x) % 2 == 0 else -1


def tgamma_ref(x: float):
    if math.isnan(x) or x == -INF:
        return NAN
    if x == INF:
        return INF
    if x == 0:
        return math.copysign(INF, x)
    if x < 0 and x == math.floor(x):
        return NAN
    if x > 172:
        return INF
    if x < -190:  # |gamma| < 2^-1100: zero with the sign of gamma
        return 0.0 if math.floor(x) % 2 == 0 else -0.0
    return mp.gamma(_m(x))


def hypot_ref(x: float, y: float):
    if math.isinf(x) or math.isinf(y):
        return INF
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == 0 and y == 0:
        return 0.0
    return mp.hypot(_m(x), _m(y))


def erfc_ref(x: float):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0 if x > 0 else 2.0
    if x > 40:
        return 0.0
    if x < -30:
        return 2.0
    return mp.erfc(_m(x))
