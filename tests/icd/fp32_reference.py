"""Inputs, references and ulp errors for OpenCL C's float (and half) math builtins other than
the trigonometric ones; used by test_math_fp32.py and by fp32_survey.py.

The reference is the function on doubles (numpy and Python's math, which follow C99's Annex F
for special values): a float argument is exact in double, and the double result is within a
few double ulps, 2**-29 float ulp, of the exact one: exact enough to measure float and half
errors. remquo's reference is exact (rational arithmetic). Errors are in ulps of the exact
result rounded to the type (OpenCL C 3.0, 7.4: a result that overflows counts as 2**(emax+1),
a denormal result's ulp is the smallest denormal). Where an argument is special (NaN, +-inf,
+-0, or one that C99 gives an exact result for, such as pow(1, y) or pown(x, 0)), the result
must be the reference bit for bit (NaN: any NaN).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

# name -> argument kinds: f a float, i an int; remquo also returns the quotient's bits.
KINDS = {"exp": "f", "exp2": "f", "exp10": "f", "expm1": "f", "log": "f", "log2": "f", "log10": "f",
         "log1p": "f", "cbrt": "f", "sqrt": "f", "rsqrt": "f", "hypot": "ff", "pow": "ff", "powr": "ff",
         "pown": "fi", "rootn": "fi", "remquo": "ff", "fmod": "ff", "remainder": "ff", "tgamma": "f",
         "erf": "f", "erfc": "f", "lgamma": "f", "fdim": "ff", "maxmag": "ff", "minmag": "ff"}
# The full profile's limits (OpenCL C 3.0, 7.4, single precision; lgamma has none).
LIMITS = {"exp": 3, "exp2": 3, "exp10": 3, "expm1": 3, "log": 3, "log2": 3, "log10": 3, "log1p": 2,
          "cbrt": 2, "sqrt": 3, "rsqrt": 2, "hypot": 4, "pow": 16, "powr": 16, "pown": 16, "rootn": 16,
          "remquo": 0, "fmod": 0, "remainder": 0, "tgamma": 16, "erf": 16, "erfc": 16,
          "lgamma": math.inf, "fdim": 0, "maxmag": 0, "minmag": 0}
# half (cl_khr_fp16), as the OpenCL-CTS holds them.
HALF_LIMITS = {"exp": 2, "exp2": 2, "exp10": 2, "expm1": 2, "log": 2, "log2": 2, "log10": 2,
               "log1p": 2, "cbrt": 2, "sqrt": 1.5, "rsqrt": 1, "hypot": 2, "pow": 4, "powr": 4,
               "pown": 4, "rootn": 4, "remquo": 0, "fmod": 0, "remainder": 0, "tgamma": 4, "erf": 4,
               "erfc": 4, "lgamma": math.inf, "fdim": 0, "maxmag": 0, "minmag": 0}

FORMAT = {np.float32: (24, -126, 127), np.float16: (11, -14, 15), np.float64: (53, -1022, 1023)}
UINT = {np.float32: np.uint32, np.float16: np.uint16, np.float64: np.uint64}


def _vec(f):
    return np.vectorize(f, otypes=[np.float64])


def _safe_gamma(x: float) -> float:
    if math.isnan(x) or x == math.inf:
        return x
    if x == -math.inf or (x < 0 and x == math.floor(x)):
        return math.nan
    if x == 0:
        return math.copysign(math.inf, x)
    if x < -190:  # |gamma| below the smallest double: the sign alternates
        return -0.0 if math.floor(x) % 2 else 0.0
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf


def _safe_lgamma(x: float) -> float:
    if math.isnan(x):
        return x
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf
    return math.lgamma(x)


def _powr(x, y):
    """powr: pow for x >= 0 only, with its own special values (OpenCL C 3.0, 7.5.1)."""
    with np.errstate(all="ignore"):
        r = np.power(x, y)
    nan = (np.isnan(x) | np.isnan(y) | (x < 0) | ((x == 0) & (y == 0)) | (np.isinf(x) & (y == 0)) |
           ((x == 1) & np.isinf(y)))
    r = np.where(nan, np.nan, r)
    r = np.where((x == 0) & ~nan, np.where(y < 0, np.inf, 0.0), r)  # +-0: +inf or +0, whatever the zero's sign
    return np.where((x == 1) & ~nan, 1.0, r)


def _rootn(x, n):
    x, n = np.asarray(x, np.float64), np.asarray(n, np.int64)
    with np.errstate(all="ignore"):
        odd = (n % 2) != 0
        mag = np.power(np.abs(x), 1.0 / np.where(n == 0, 1, n))
        r = np.where(np.signbit(x) & odd, -mag, mag)
        r = np.where((x < 0) & ~odd, np.nan, r)
        r = np.where(n == 0, np.nan, r)
        # rootn(+-0, n): +-0 for odd n > 0, +0 for even n > 0, +-inf for odd n < 0, +inf for even n < 0
        zero = x == 0
        r = np.where(zero & (n > 0), np.where(odd, x, 0.0), r)
        r = np.where(zero & (n < 0), np.where(odd, np.copysign(np.inf, x), np.inf), r)
    return r


def reference(name: str, x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """The function on doubles (x, y the inputs as doubles or ints)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        if name == "exp10":
            return np.power(10.0, x)
        if name == "rsqrt":
            return 1.0 / np.sqrt(x)
        if name in ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "cbrt", "sqrt"):
            return getattr(np, name)(x)
        if name == "hypot":
            return np.hypot(x, y)
        if name == "pow":
            return np.power(x, np.asarray(y, np.float64))
        if name == "powr":
            return _powr(x, np.asarray(y, np.float64))
        if name == "pown":
            return np.power(x, np.asarray(y, np.float64))
        if name == "rootn":
            return _rootn(x, y)
        if name == "fmod":
            return np.fmod(x, y)
        if name in ("remainder", "remquo"):
            return _vec(lambda a, b: math.nan if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0
                        else math.remainder(a, b))(x, y)
        if name == "tgamma":
            return _vec(_safe_gamma)(x)
        if name == "lgamma":
            return _vec(_safe_lgamma)(x)
        if name in ("erf", "erfc"):
            return _vec(getattr(math, name))(x)
        if name == "fdim":
            return np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0))
        if name in ("maxmag", "minmag"):
            big = name == "maxmag"
            ax, ay = np.abs(x), np.abs(y)
            pick = np.fmax(x, y) if big else np.fmin(x, y)
            first, second = (ax > ay, ay > ax) if big else (ax < ay, ay < ax)
            return np.where(first, x, np.where(second, y, pick))
    raise KeyError(name)


def remquo_bits(x: float, y: float) -> int | None:
    """The quotient's sign and low 7 bits that remquo must give (the spec asks for at least 7:
    its sign and magnitude modulo 128 are compared), or None where it is unspecified."""
    if not (math.isfinite(x) and math.isfinite(y)) or y == 0:
        return None
    q = round(Fraction(x) / Fraction(y))  # to nearest, ties to even
    return q


def special(name: str, x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """Inputs whose result C99 / OpenCL fix exactly."""
    s = ~np.isfinite(x) | (x == 0)
    if y is not None:
        yf = np.asarray(y, np.float64)
        if KINDS[name] == "ff":
            s |= ~np.isfinite(yf) | (yf == 0)
        else:
            s |= yf == 0
    if name in ("fdim", "maxmag", "minmag"):  # exact everywhere
        s |= True
    if name in ("pow", "powr"):
        s |= x == 1
        if name == "pow":
            s |= (x == -1) & np.isinf(np.asarray(y, np.float64))
    if name in ("log", "log2", "log10"):
        s |= x == 1
    if name == "rootn":
        s |= (x < 0) & (np.asarray(y) % 2 == 0)
    if name in ("log", "log2", "log10", "sqrt", "rsqrt"):
        s |= x < 0
    if name == "log1p":
        s |= x <= -1
    if name == "tgamma":
        s |= (x < 0) & (x == np.floor(x))
    return s


def ulp_of(value: np.ndarray, dtype) -> np.ndarray:
    """The ulp of each (double) value rounded to dtype: 2**(e - bits + 1), e its exponent, no
    less than emin (denormals' ulp is the smallest denormal)."""
    bits, emin, _ = FORMAT[dtype]
    _, e = np.frexp(np.abs(value))  # value = m 2**e, m in [0.5, 1)
    e = np.where(value == 0, emin + 1, e)
    return np.ldexp(1.0, np.maximum(e - 1, emin) - bits + 1)


def errors(name: str, dtype, x, got, y=None, flush: bool = False):
    """(ulp error of each result, indices of wrong special values). `flush`: denormals may be
    flushed (the device reports no CL_FP_DENORM): a denormal argument may act as +-0 and a
    denormal result may come back as +-0."""
    bits, emin, emax = FORMAT[dtype]
    top = 2.0 ** (emax + 1)
    tiny = 2.0 ** emin
    xs = x.astype(np.float64)
    ys = None if y is None else (y.astype(np.float64) if KINDS[name] == "ff" else y.astype(np.int64))
    g = got.astype(np.float64)
    best = np.full(len(x), np.inf)
    variants = [(xs, ys)]
    if flush:
        fx = np.where(np.abs(xs) < tiny, np.copysign(0.0, xs), xs)
        variants.append((fx, ys))
        if ys is not None and KINDS[name] == "ff":
            fy = np.where(np.abs(ys) < tiny, np.copysign(0.0, ys), ys)
            variants += [(xs, fy), (fx, fy)]
    for vx, vy in variants:
        ref = reference(name, vx, vy)
        exact = special(name, vx, vy)
        with np.errstate(all="ignore"):
            ref_t = ref.astype(dtype).astype(np.float64)  # the exact value, rounded
        same = (g == ref_t) & (np.signbit(g) == np.signbit(ref_t)) | (np.isnan(g) & np.isnan(ref))
        if name in ("maxmag", "minmag"):  # fmax/fmin of +0 and -0: either zero (OpenCL C)
            same |= (vx == 0) & (vy == 0) & (g == 0)
        if flush:  # an exact result that is denormal may be flushed too (fdim on the H200)
            same |= (g == 0) & (np.abs(ref) < tiny)
        e = np.where(same, 0.0, np.inf)
        clamped = np.clip(ref, -top, top)
        gg = np.where(np.isinf(g), np.copysign(top, g), g)
        with np.errstate(all="ignore"):
            ulps = np.abs(gg - clamped) / ulp_of(clamped, dtype)
        ulps = np.where(np.isnan(ref) | np.isnan(g), np.where(np.isnan(ref) & np.isnan(g), 0.0, np.inf), ulps)
        if flush:  # a denormal result returned as zero
            ulps = np.where((g == 0) & (np.abs(ref) < tiny), 0.0, ulps)
        e = np.where(exact, e, ulps)
        best = np.minimum(best, e)
    wrong = np.nonzero(np.isinf(best))[0]
    return best, wrong


def random_bits(dtype, rng: np.random.Generator, n: int) -> np.ndarray:
    """Uniformly random bit patterns, NaNs left out: every exponent equally often."""
    u = UINT[dtype]
    v = rng.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True).view(dtype)
    return v[~np.isnan(v)]


def specials(dtype) -> np.ndarray:
    fi = np.finfo(dtype)
    tiny, dmin = float(fi.tiny), float(fi.smallest_subnormal)
    v = [0.0, math.inf, math.nan, dmin, tiny, tiny * 0.75, 1.0, 0.5, 2.0, 1.5, 0.25, 3.0, 4.5,
         float(fi.max), float(fi.eps), 1e-3, 0.1, 0.7, 0.9999, 1.0000001, 10.0, 20.0, 38.0, 39.0,
         40.0, 45.0, 88.0, 89.0, 104.0, 128.0, 150.0, 1e5, 2.0 ** 20, 2.0 ** 23, 2.0 ** 24 + 2,
         2.0 ** 60, math.pi, 1e22, 1e30, 3e-30]
    a = np.array(v).astype(dtype)
    a = a[np.isfinite(a) | np.isinf(np.array(v)) | np.isnan(np.array(v))]
    return np.concatenate([a, -a])


def _pairs(a: np.ndarray, b: np.ndarray):
    ya, xa = np.meshgrid(b, a)
    return xa.ravel(), ya.ravel()


def inputs(name: str, dtype, rng: np.random.Generator, n: int):
    """(x, y): specials (every pair of them for two arguments), random bit patterns (the whole
    range) and dense samples of the interesting ranges; y None for one argument, ints for pown
    and rootn."""
    kind = KINDS[name]
    f = lambda v: np.asarray(v).astype(dtype)  # noqa: E731
    u = lambda lo, hi, m: f(rng.uniform(lo, hi, m))  # noqa: E731
    big = float(np.finfo(dtype).max)
    lnmax = math.log(big)
    sp = specials(dtype)
    if kind == "f":
        parts = [sp, random_bits(dtype, rng, n)]
        if name in ("exp", "expm1", "exp2", "exp10"):
            scale = {"exp": 1.0, "expm1": 1.0, "exp2": 1 / math.log(2), "exp10": 1 / math.log(10)}[name]
            parts += [u(-lnmax * 1.2 * scale, lnmax * 1.02 * scale, n), u(-1, 1, n // 2), u(-1e-3, 1e-3, n // 8)]
            if name != "expm1":  # integers and halves
                parts.append(f(np.round(rng.uniform(-160, 130, n // 8) * 2) / 2))
        elif name in ("log", "log2", "log10", "log1p", "cbrt", "sqrt", "rsqrt"):
            parts += [u(0, 10, n), f(1 + rng.uniform(-1e-2, 1e-2, n // 2)), np.abs(random_bits(dtype, rng, n))]
            if name == "log1p":
                parts += [u(-1, 1, n), u(-1e-3, 1e-3, n // 4)]
            if name == "cbrt":
                parts += [u(-10, 10, n)]
        elif name in ("tgamma", "lgamma"):
            top = 36.0 if dtype == np.float32 else 9.0
            parts += [u(-top, top, n), u(0, 3, n // 2), u(-1e-3, 1e-3, n // 8),
                      f(np.round(rng.uniform(-top, top, n // 8)) + rng.uniform(-1e-3, 1e-3, n // 8))]
        elif name in ("erf", "erfc"):
            parts += [u(-6, 12, n), u(-1, 1, n // 2)]
        return np.concatenate(parts).astype(dtype), None
    if kind == "fi":
        xs, ns = [], []
        special_n = np.array([0, 1, -1, 2, -2, 3, -3, 4, 5, 7, -7, 8, 127, 128, -128, 2 ** 24 + 1,
                              2 ** 31 - 1, -2 ** 31], np.int64)
        a, b = _pairs(sp, special_n)
        xs.append(a)
        ns.append(b)
        xs.append(random_bits(dtype, rng, n))
        ns.append(rng.integers(-40, 40, len(xs[-1])))
        if name == "pown":
            xs += [u(-4, 4, n), u(-1.1, 1.1, n // 2), f(1 + rng.uniform(-1e-4, 1e-4, n // 4))]
            ns += [rng.integers(-150, 150, n), rng.integers(-2000, 2000, n // 2),
                   rng.integers(-2 ** 20, 2 ** 20, n // 4)]
        else:
            xs += [u(-100, 100, n), random_bits(dtype, rng, n // 2)]
            ns += [rng.integers(-12, 12, n), rng.integers(-300, 300, n // 2)]
        return _join(xs, ns, dtype, np.int32)
    # two floats
    a, b = _pairs(sp, sp)
    xs, ys = [a], [b]
    r1, r2 = random_bits(dtype, rng, n), random_bits(dtype, rng, n)
    m = min(len(r1), len(r2))
    xs.append(r1[:m])
    ys.append(r2[:m])
    if name in ("pow", "powr"):
        # ordinary ranges, x near 1 with huge y, negative x with integer y (pow), results near
        # the ends of the range
        xs += [u(0, 10, n), f(1 + rng.uniform(-1e-3, 1e-3, n // 2)), f(1 + rng.uniform(-1e-6, 1e-6, n // 4)),
               np.abs(random_bits(dtype, rng, n // 2))]
        ys += [u(-40, 40, n), u(-1e5, 1e5, n // 2), u(-1e7, 1e7, n // 4), u(-2, 2, n // 2)]
        bx = u(0.5, 2, n // 2)
        xs.append(bx)
        ys.append(f(rng.uniform(-1, 1, n // 2) * (lnmax / np.log(bx.astype(np.float64))) * 1.05))
        if name == "pow":
            xs += [u(-10, 0, n // 2), -np.abs(random_bits(dtype, rng, n // 4))]
            ys += [f(np.round(rng.uniform(-40, 40, n // 2))), f(np.round(rng.uniform(-300, 300, n // 4)))]
    elif name == "hypot":
        xs += [u(-10, 10, n), u(-1, 1, n // 2) * dtype(2.0 ** 100 if dtype == np.float32 else 2.0 ** 10)]
        ys += [u(-10, 10, n), u(-1, 1, n // 2) * dtype(2.0 ** 100 if dtype == np.float32 else 2.0 ** 10)]
    elif name in ("fmod", "remainder", "remquo"):
        xs += [u(-100, 100, n), u(-1e6, 1e6, n // 2), random_bits(dtype, rng, n // 2)]
        ys += [u(-10, 10, n), u(-3, 3, n // 2), u(-1e-3, 1e-3, n // 2)]
        q = f(np.round(rng.uniform(-300, 300, n // 4)) + 0.5)  # ties: x = (k + 1/2) y
        yy = u(0.5, 4, n // 4)
        xs.append(f(q.astype(np.float64) * yy.astype(np.float64)))
        ys.append(yy)
    return _join(xs, ys, dtype, dtype)


def _join(xs, ys, xtype, ytype):
    """The pieces of x and y, each pair cut to the shorter (random bits lose their NaNs)."""
    m = [min(len(a), len(b)) for a, b in zip(xs, ys)]
    return (np.concatenate([a[:k] for a, k in zip(xs, m)]).astype(xtype),
            np.concatenate([b[:k] for b, k in zip(ys, m)]).astype(ytype))
