"""Exact host reference for OpenCL C's explicit conversions (convert_<dst>[_sat][_rnd]) and for
vload_half / vstore_half[_rnd]: Python integers and fractions, no floating-point arithmetic.

A value is a Python int (integer source), a Fraction with a sign flag for zeros, or NaN / +-inf.
`expect()` answers what the spec requires, or None where the spec leaves the result to the
implementation (float-to-integer out of range without _sat, NaN to an integer without _sat).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

INTS = {"char": (8, True), "uchar": (8, False), "short": (16, True), "ushort": (16, False),
        "int": (32, True), "uint": (32, False), "long": (64, True), "ulong": (64, False)}
# precision (significand bits with the hidden one), emin, emax
FLOATS = {"half": (11, -14, 15), "float": (24, -126, 127), "double": (53, -1022, 1023)}
DTYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16, "int": np.int32,
          "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "half": np.float16, "float": np.float32,
          "double": np.float64}
BITS = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
TYPES = tuple(DTYPES)
MODES = ("", "_rte", "_rtz", "_rtp", "_rtn")
WIDTHS = (1, 2, 3, 4, 8, 16)
NAN, INF = "nan", "inf"


def int_range(t: str) -> tuple[int, int]:
    bits, signed = INTS[t]
    return (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)


class Real:
    """A finite or infinite real with a sign (so -0 is kept)."""
    __slots__ = ("neg", "mag")  # mag: Fraction >= 0, or INF

    def __init__(self, neg: bool, mag):
        self.neg, self.mag = neg, mag

    def fraction(self) -> Fraction:
        return -self.mag if self.neg else self.mag


def from_host(t: str, x):
    """A source element (numpy scalar) as int, Real or NAN."""
    if t in INTS:
        return int(x)
    f = float(x)
    if math.isnan(f):
        return NAN
    neg = math.copysign(1.0, f) < 0
    return Real(neg, INF if math.isinf(f) else abs(Fraction(f)))


def is_denormal(t: str, x) -> bool:
    if t not in FLOATS or not isinstance(x, Real) or x.mag in (0, INF):
        return False
    return x.mag < Fraction(2) ** FLOATS[t][1]


def round_integer(q: Fraction, neg: bool, mode: str) -> int:
    """|value| = q >= 0 rounded to an integer magnitude; neg is the value's sign."""
    m = q.numerator // q.denominator
    rem = q - m
    if rem == 0:
        return m
    up = {"_rtz": False, "_rtp": not neg, "_rtn": neg,
          "_rte": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m % 2 == 1)}[mode]
    return m + 1 if up else m


def round_to_float(t: str, neg: bool, mag, mode: str) -> float:
    """The value -mag or mag rounded to format t as a Python float (exact, since every half,
    float and double value is a double)."""
    p, emin, emax = FLOATS[t]
    sign = -1.0 if neg else 1.0
    if mag == INF:
        return sign * math.inf
    if mag == 0:
        return sign * 0.0
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - p + 1)
    value = round_integer(mag / ulp, neg, mode) * ulp
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if value > largest:
        to_inf = {"_rte": True, "_rtz": False, "_rtp": not neg, "_rtn": neg}[mode]
        return sign * (math.inf if to_inf else float(largest))
    return sign * float(value)


def expect(dst: str, src: str, sat: bool, mode: str, x):
    """What convert_<dst>[_sat]<mode>(x) must give, as int, float or NAN; None if the spec leaves
    it to the implementation."""
    if dst in INTS:
        lo, hi = int_range(dst)
        if isinstance(x, int):  # integer to integer: no rounding; modular without _sat (C99)
            if sat:
                return min(max(x, lo), hi)
            bits = INTS[dst][0]
            r = x % (1 << bits)
            return r - (1 << bits) if INTS[dst][1] and r >= 1 << bits - 1 else r
        if x == NAN:
            return 0 if sat else None
        if x.mag == INF:
            return (lo if x.neg else hi) if sat else None
        r = round_integer(x.mag, x.neg, mode or "_rtz")
        r = -r if x.neg else r
        if lo <= r <= hi:
            return r
        return min(max(r, lo), hi) if sat else None
    if isinstance(x, int):
        return round_to_float(dst, x < 0, Fraction(abs(x)), mode or "_rte")
    if x == NAN:
        return NAN
    return round_to_float(dst, x.neg, x.mag, mode or "_rte")


def flushed(t: str, x):
    """x with a denormal of format t replaced by a zero of its sign (for devices without float
    denormals)."""
    return Real(x.neg, Fraction(0)) if is_denormal(t, x) else x


def expected_arrays(dst: str, src: str, sat: bool, mode: str, values: np.ndarray, flush_float: bool):
    """(want, alt, tested) arrays for a column of source values: `alt` is a second acceptable
    answer (a float denormal input or output flushed to zero when the device has no float
    denormals), `tested` marks where the spec fixes the answer."""
    dt = DTYPES[dst]
    want, alt = np.zeros(len(values), dt), np.zeros(len(values), dt)
    tested = np.zeros(len(values), bool)
    for i, v in enumerate(values):
        x = from_host(src, v)
        e = expect(dst, src, sat, mode, x)
        if e is None:
            continue
        tested[i] = True
        a = e
        if flush_float and src == "float" and is_denormal("float", x):
            a = expect(dst, src, sat, mode, flushed("float", x))
            if a is None:
                a = e
        if flush_float and dst == "float" and isinstance(a, float) and a != 0 and abs(a) < 2.0 ** -126:
            a = math.copysign(0.0, a)
        want[i] = math.nan if e == NAN else e
        alt[i] = math.nan if a == NAN else a
    return want, alt, tested


def mismatches(dst: str, got: np.ndarray, want: np.ndarray, alt: np.ndarray, tested: np.ndarray) -> np.ndarray:
    """Indices where got is neither want nor alt (bitwise for floats, any NaN for NaN)."""
    if dst in INTS:
        ok = (got == want) | (got == alt)
    else:
        b = BITS[DTYPES[dst]]
        gb, wb, ab = got.view(b), want.view(b), alt.view(b)
        ok = (gb == wb) | (gb == ab) | (np.isnan(got) & np.isnan(want))
    return np.nonzero(tested & ~ok)[0]
