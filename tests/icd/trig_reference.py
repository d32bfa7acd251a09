"""Inputs, exact references (mpmath) and ulp errors for OpenCL C's trigonometric and hyperbolic
builtins; used by test_math_trig.py and by bench/trig_accuracy.py (the survey).

Errors are in ulps of the exact result rounded to the type (OpenCL C 3.0, 7.4: a result that
overflows counts as 2**(emax+1), a denormal result's ulp is the smallest denormal). Special
inputs (NaN, +-inf, +-0) and results that must be exact (sinpi(integer) = +-0, atan2's axes,
tanh(+-inf) = +-1, ...) are checked bit for bit, through `expected_exact`.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np

# name -> arity; the ulp limits of the full profile (OpenCL C 3.0, table "ULP values for
# single precision" and "... double precision"), the same for float and double.
LIMITS = {"sin": 4, "cos": 4, "tan": 5, "sinpi": 4, "cospi": 4, "tanpi": 6, "asin": 4, "acos": 4,
          "atan": 5, "atan2": 6, "asinpi": 5, "acospi": 5, "atanpi": 5, "atan2pi": 6, "sinh": 4,
          "cosh": 4, "tanh": 5, "asinh": 4, "acosh": 4, "atanh": 5}
BINARY = ("atan2", "atan2pi")
# half (cl_khr_fp16): OpenCL C 3.0's half limits.
HALF_LIMITS = {"sin": 2, "cos": 2, "tan": 2, "sinpi": 2, "cospi": 2, "tanpi": 2, "asin": 2,
               "acos": 2, "atan": 2, "atan2": 2, "asinpi": 2, "acospi": 2, "atanpi": 2,
               "atan2pi": 2, "sinh": 2, "cosh": 2, "tanh": 2, "asinh": 2, "acosh": 2, "atanh": 2}

# (mantissa bits, emin, emax) of each type
FORMAT = {np.float32: (24, -126, 127), np.float64: (53, -1022, 1023), np.float16: (11, -14, 15)}
UINT = {np.float32: np.uint32, np.float64: np.uint64, np.float16: np.uint16}


def _mp(name):
    mp = mpmath
    return {"sin": mp.sin, "cos": mp.cos, "tan": mp.tan, "sinpi": mp.sinpi, "cospi": mp.cospi,
            "tanpi": lambda x: mp.sinpi(x) / mp.cospi(x), "asin": mp.asin, "acos": mp.acos,
            "atan": mp.atan, "atan2": mp.atan2, "asinpi": lambda x: mp.asin(x) / mp.pi,
            "acospi": lambda x: mp.acos(x) / mp.pi, "atanpi": lambda x: mp.atan(x) / mp.pi,
            "atan2pi": lambda y, x: mp.atan2(y, x) / mp.pi, "sinh": mp.sinh, "cosh": mp.cosh,
            "tanh": mp.tanh, "asinh": mp.asinh, "acosh": mp.acosh, "atanh": mp.atanh}[name]


def _copysign0(neg: bool) -> float:
    return -0.0 if neg else 0.0


def expected_exact(name: str, x: float, y: float = 0.0):
    """The exact result the spec gives for a special input, or None (then ulps decide).
    NaN means "a NaN"."""
    nan, inf = math.nan, math.inf
    if math.isnan(x) or (name in BINARY and math.isnan(y)):
        return nan
    neg = math.copysign(1.0, x) < 0
    if name in BINARY:  # atan2(y, x): `x` holds y here, `y` holds x
        yy, xx = x, y
        ny, nx = math.copysign(1.0, yy) < 0, math.copysign(1.0, xx) < 0
        pi = mpmath.pi if name == "atan2" else mpmath.mpf(1)

        def angle(turns):  # a multiple of pi: compared in ulps, with y's sign
            return ("ref", -pi * turns if ny else pi * turns)
        if math.isinf(yy) and math.isinf(xx):
            return angle(0.75 if nx else 0.25)
        if yy == 0 or math.isinf(xx):
            return angle(1) if nx else _copysign0(ny)
        if math.isinf(yy) or xx == 0:
            return angle(0.5)
        return None
    if x == 0:
        if name in ("cos", "cospi", "cosh"):
            return 1.0
        if name == "acos":
            return ("ref", mpmath.pi / 2)
        if name == "acospi":
            return 0.5
        if name == "acosh":
            return nan
        return x  # odd functions keep the zero's sign
    if math.isinf(x):
        if name in ("sin", "cos", "tan", "sinpi", "cospi", "tanpi", "asin", "acos", "asinpi", "acospi"):
            return nan
        if name == "atan":
            return ("ref", -mpmath.pi / 2 if neg else mpmath.pi / 2)
        if name == "atanpi":
            return math.copysign(0.5, x)
        if name in ("sinh", "asinh"):
            return x
        if name == "cosh":
            return inf
        if name == "acosh":
            return nan if neg else inf
        if name == "tanh":
            return math.copysign(1.0, x)
        if name == "atanh":
            return nan
    if name in ("asin", "acos", "asinpi", "acospi", "atanh") and abs(x) > 1:
        return nan
    if name == "atanh" and abs(x) == 1:
        return math.copysign(inf, x)
    if name == "acosh" and x < 1:
        return nan
    if name == "acosh" and x == 1:
        return 0.0
    if name in ("sinpi", "cospi", "tanpi") and x == math.floor(x):
        # integers: sinpi = +-0 with x's sign, cospi = +-1, tanpi = +-0 (sign: spec 7.4's rules)
        n = abs(x)
        odd = n < 2 ** 53 and int(n) % 2 == 1
        if name == "sinpi":
            return _copysign0(neg)
        if name == "cospi":
            return -1.0 if odd else 1.0
        return _copysign0(neg != odd)
    if name in ("cospi", "tanpi") and math.fmod(abs(x), 1.0) == 0.5:  # (exact; x - 0.5 may round)
        if name == "cospi":
            return 0.0
        n = math.floor(x)  # x = n + 0.5: tanpi is +inf for even n, -inf for odd n
        return inf if n % 2 == 0 else -inf
    return None


def ulp_of(value, dtype) -> mpmath.mpf:
    """The ulp of a real number rounded to dtype (the smallest denormal below the normals)."""
    bits, emin, _ = FORMAT[dtype]
    if value == 0:
        return mpmath.ldexp(1, emin - bits + 1)
    e = int(mpmath.floor(mpmath.log(abs(value), 2)))
    if mpmath.ldexp(1, e) > abs(value):  # log's rounding at powers of two
        e -= 1
    elif mpmath.ldexp(1, e + 1) <= abs(value):
        e += 1
    return mpmath.ldexp(1, max(e, emin) - bits + 1)


def errors(name: str, dtype, x: np.ndarray, got: np.ndarray, y: np.ndarray | None = None,
           flush: bool = False):
    """(ulp errors, indices of wrong special values): ulp errors where ulps decide (0 where an
    exact value was right). `flush`: float denormals may be flushed (no CL_FP_DENORM), so a
    denormal input may act as +-0 and a denormal result may come back as +-0."""
    bits, emin, emax = FORMAT[dtype]
    top = mpmath.ldexp(1, emax + 1)
    tiny = 2.0 ** emin
    f = _mp(name)
    out = np.zeros(len(x))
    wrong = []
    with mpmath.workprec(bits + 64):
        _errors(name, dtype, x, got, y, flush, f, out, wrong, top, tiny)
    return out, wrong


def _errors(name, dtype, x, got, y, flush, f, out, wrong, top, tiny):
    for i in range(len(x)):
        xi, gi = float(x[i]), float(got[i])
        yi = float(y[i]) if y is not None else 0.0
        candidates = [(xi, yi)]
        if flush:
            if 0 < abs(xi) < tiny:
                candidates.append((math.copysign(0.0, xi), yi))
            if y is not None and 0 < abs(yi) < tiny:
                candidates.append((candidates[-1][0], math.copysign(0.0, yi)))
                candidates.append((xi, math.copysign(0.0, yi)))
        best = None
        for cx, cy in candidates:
            e = _one(name, f, cx, cy, gi, top, dtype, flush, tiny)
            best = e if best is None else min(best, e)
        if best == math.inf:
            wrong.append(i)
            out[i] = math.inf
        else:
            out[i] = best


def _one(name, f, x, y, got, top, dtype, flush, tiny) -> float:
    exact = expected_exact(name, x, y)
    ref = None
    if isinstance(exact, tuple):
        exact, ref = None, exact[1]
    if exact is not None:
        if math.isnan(exact):
            return 0.0 if math.isnan(got) else math.inf
        same = got == exact and math.copysign(1.0, got) == math.copysign(1.0, exact)
        return 0.0 if same else math.inf
    if math.isnan(got):
        return math.inf
    if ref is None:
        args = (mpmath.mpf(x), mpmath.mpf(y)) if name in BINARY else (mpmath.mpf(x),)
        ref = f(*args)
    if abs(ref) >= top:
        ref = -top if ref < 0 else top
    g = (-top if got < 0 else top) if math.isinf(got) else mpmath.mpf(got)
    if flush and got == 0 and abs(ref) < tiny:
        return 0.0
    if ref == 0:
        return 0.0 if got == 0 else float(abs(g) / ulp_of(0, dtype))
    return float(abs(g - ref) / ulp_of(ref, dtype))


def random_bits(dtype, rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniformly random bit patterns, NaNs left out: every exponent equally often."""
    u = UINT[dtype]
    v = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True).view(dtype)
    return v[~np.isnan(v)]


def near_half_pi_multiples(dtype, count: int) -> np.ndarray:
    """Values of the type closest to multiples of pi/2 (worst cancellation in reduction), from
    the continued fraction of 2/pi scaled to each binade."""
    bits, emin, emax = FORMAT[dtype]
    out = []
    with mpmath.workprec(2 * (emax + bits) + 200):
        for e in np.linspace(0, emax, count).astype(int):
            # x = m * 2**(e - bits + 1), m in [2**(bits-1), 2**bits): m * beta near an integer
            beta = mpmath.ldexp(2 / mpmath.pi, int(e) - bits + 1)
            best = _best_multiplier(beta, bits)
            if best:
                out.append(float(mpmath.ldexp(best, int(e) - bits + 1)))
    a = np.array(out, dtype=dtype)
    a = a[np.isfinite(a)]
    return np.concatenate([a, -a])


def _best_multiplier(beta, bits):
    """m in [2**(bits-1), 2**bits) making m * beta closest to an integer, among multiples of
    continued-fraction denominators of beta."""
    lo, hi = 2 ** (bits - 1), 2 ** bits
    frac = beta - mpmath.floor(beta)
    p0, q0, p1, q1 = 1, 0, 0, 1  # convergents of [0; a1, a2, ...]
    a = frac
    best, bestd = None, None
    for _ in range(200):
        if a == 0:
            break
        t = int(mpmath.floor(1 / a)) if a != 0 else 0
        a = 1 / a - t
        p0, q0, p1, q1 = p1, q1, t * p1 + p0, t * q1 + q0
        if q1 >= hi:
            break
        m = q1 * ((lo + q1 - 1) // q1)
        if m < hi:
            d = abs(m * beta - mpmath.nint(m * beta))
            if bestd is None or d < bestd:
                best, bestd = m, d
    return best


def specials(dtype) -> np.ndarray:
    fi = np.finfo(dtype)
    tiny, dmin = float(fi.tiny), float(fi.smallest_subnormal)
    v = [0.0, math.inf, math.nan, dmin, tiny, tiny * 0.75, 1.0, 0.5, 2.0, 1.5, 0.25, 3.0, 4.5,
         float(fi.max), float(fi.eps), 1e-3, 0.1, 0.7, 0.9999, 1.0000001, 10.0, 20.0, 40.0, 88.0, 89.0,
         709.0, 710.0, 711.0, 1e5, 2.0 ** 20, 2.0 ** 23, 2.0 ** 24 + 2, 2.0 ** 52, 2.0 ** 53 + 2,
         2.0 ** 60, math.pi, math.pi / 2, math.pi / 4, 3 * math.pi / 4, 1e22]
    a = np.array(v).astype(dtype)
    a = a[np.isfinite(a) | np.isinf(np.array(v))]
    return np.concatenate([a, -a])


def inputs(name: str, dtype, rng: np.random.Generator, n: int):
    """Inputs for one function: specials, random bit patterns (the whole range), and a dense
    sample of the interesting range; for atan2, pairs."""
    parts = [specials(dtype), random_bits(dtype, rng, n)]
    if name in ("sin", "cos", "tan"):
        parts += [near_half_pi_multiples(dtype, 40),
                  rng.uniform(-20, 20, n).astype(dtype), rng.uniform(-1e6, 1e6, n // 2).astype(dtype),
                  (rng.uniform(1, 4000, n // 4).round() * math.pi / 2).astype(dtype)]
    elif name in ("sinpi", "cospi", "tanpi"):
        parts += [rng.uniform(-8, 8, n).astype(dtype), (rng.integers(-4000, 4000, n // 4) / 4).astype(dtype),
                  (rng.uniform(-1e6, 1e6, n // 4).round() + 0.5).astype(dtype)]
    elif name in ("asin", "acos", "asinpi", "acospi", "atanh"):
        parts += [rng.uniform(-1, 1, n).astype(dtype), (1 - rng.uniform(0, 1e-3, n // 4)).astype(dtype),
                  (-1 + rng.uniform(0, 1e-3, n // 4)).astype(dtype)]
    elif name in ("acosh",):
        parts += [(1 + rng.uniform(0, 1e-2, n // 2)).astype(dtype), rng.uniform(1, 30, n).astype(dtype)]
    elif name in ("atan", "atanpi", "asinh"):
        parts += [rng.uniform(-3, 3, n).astype(dtype), rng.uniform(-1e-3, 1e-3, n // 4).astype(dtype)]
    elif name in ("sinh", "cosh", "tanh"):
        top = 720.0 if dtype == np.float64 else 92.0
        parts += [rng.uniform(-top, top, n).astype(dtype), rng.uniform(-1, 1, n).astype(dtype),
                  rng.uniform(-1e-2, 1e-2, n // 4).astype(dtype)]
    x = np.concatenate(parts).astype(dtype)
    if name not in BINARY:
        return x, None
    # atan2: every special against every special, random pairs, pairs of near magnitude
    s = specials(dtype)
    sy, sx = np.meshgrid(s, s)
    ry, rx = random_bits(dtype, rng, n), random_bits(dtype, rng, n)
    m = min(len(ry), len(rx))
    uy, ux = rng.uniform(-4, 4, n).astype(dtype), rng.uniform(-4, 4, n).astype(dtype)
    close = ux * (1 + rng.uniform(-1e-3, 1e-3, n)).astype(dtype)
    # pairs near the top of the range (y + x overflows) and among the denormals
    _, emin, emax = FORMAT[dtype]
    top, low = 2.0 ** (emax - 2), 2.0 ** (emin - 4)
    ys = np.concatenate([sy.ravel(), ry[:m], uy, uy, uy * top, uy * low]).astype(dtype)
    xs = np.concatenate([sx.ravel(), rx[:m], ux, close, ux * top, ux * low]).astype(dtype)
    return ys, xs
