"""Source values for the conversion tests: every edge of every source and destination type
(limits and one past them, halfway cases, NaN, infinities, zeros, denormals, integers a float
cannot hold), then random values, as a numpy array of the source type whose length is a
multiple of 48 (every vector width divides it)."""
from __future__ import annotations

import math

import numpy as np

from conversion_reference import DTYPES, INTS, int_range

_POW = [2 ** k for k in (7, 8, 11, 12, 15, 16, 24, 25, 31, 32, 53, 54, 63, 64)]


def _integers() -> list[int]:
    out = [0, 1, -1, 2, 3, -2, -3, 100, -100]
    for t in INTS:
        lo, hi = int_range(t)
        out += [lo, lo + 1, lo - 1, hi, hi - 1, hi + 1]
    for p in _POW:
        out += [p - 1, p, p + 1, p + 3, p - 3, -p, -p - 1, -p + 1, -p - 3]
    # half: largest finite, the halfway to infinity, odd integers above 2048
    out += [65504, 65505, 65519, 65520, 65535, 2049, 2051, 4097, 4098, 4099, -65520, -65519, -2049]
    # float: 24-bit halfway cases and values above 2^24 between floats
    out += [16777217, 16777219, 16777221, 33554433, 33554435, 33554438, -16777217, -16777219,
            (1 << 31) - 64, (1 << 31) - 65, (1 << 31) - 63, (1 << 32) - 129, (1 << 32) - 128, (1 << 32) - 127,
            (1 << 53) + 1, (1 << 53) + 3, -(1 << 53) - 1, (1 << 63) - 512, (1 << 63) - 513, (1 << 63) - 1025,
            (1 << 64) - 1024, (1 << 64) - 1025, (1 << 64) - 2049, 0x7FFFFF8000000001, 0xFFFFFF7FFFFFFFFF]
    return out


def _reals() -> list[float]:
    out = [0.0, -0.0, math.inf, -math.inf, math.nan, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -3.5,
           0.25, 0.75, -0.75, 1.0, -1.0, 0.9999999, -0.9999999, 0.49999997, 0.50000006, -0.50000006,
           1.0000001, -1.0000001, 126.5, 127.5, -128.5, -128.9, -129.0, 254.5, 255.5, 255.9,
           32766.5, 32767.5, -32768.5, 65534.5, 65535.5, 1e10, -1e10, 1e30, -1e30, 3.4e38, -3.4e38,
           1e300, -1e300, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1e-310,
           1.401298464324817e-45, -1.401298464324817e-45, 1.1754943508222875e-38, 1.1754942e-38, 1e-40,
           5.960464477539063e-08, 2.9802322387695312e-08, 4.470348358154297e-08, 6.103515625e-05,
           6.097555160522461e-05, 1e-30, -1e-30, 1e-8, -1e-8, 65504.0, 65519.99, 65520.0, -65520.0,
           65536.0, 1.00048828125, 1.00146484375, 1.000732421875, 2049.0, 2051.0, -2049.0,
           3.4028235677973366e+38, 3.4028235677973362e+38, 3.402823466385289e+38,
           1.7976931348623157e+308, 16777217.0, 16777219.0, 9007199254740993.0, 0.1, -0.1, 1 / 3]
    for i in _integers():
        out += [float(i), float(i) + 0.5, float(i) - 0.5]
        for d in (np.float32, np.float64):
            f = d(i)
            out += [float(np.nextafter(f, d(math.inf))), float(np.nextafter(f, d(-math.inf)))]
    return out


def _fit_integer(t: str, values: list[int]) -> list[int]:
    lo, hi = int_range(t)
    return [v for v in values if lo <= v <= hi]


def source_values(t: str, random_count: int = 256, seed: int = 7) -> np.ndarray:
    """Edge values of type t (deduplicated, in a fixed order), then random ones, padded to a
    multiple of 48."""
    rng = np.random.default_rng(seed)
    dt = DTYPES[t]
    if t in INTS:
        edges = np.array(_fit_integer(t, _integers()), dtype=object).astype(dt)
        bits = INTS[t][0]
        raw = rng.integers(0, 2 ** 63, random_count, dtype=np.uint64) ^ (rng.integers(0, 2, random_count, dtype=np.uint64) << np.uint64(63))
        shift = rng.integers(0, bits, random_count).astype(np.uint64)
        rand = (raw >> shift).astype(np.uint64).view(np.int64).astype(dt, casting="unsafe")
    else:
        with np.errstate(over="ignore"):
            edges = np.array(_reals(), dtype=np.float64).astype(dt)
        ubits = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}[dt]
        nb = np.dtype(ubits).itemsize * 8
        half = random_count // 2
        raw = rng.integers(0, 2 ** 63, half, dtype=np.uint64) >> np.uint64(63 - nb + 1)
        raw = (raw << np.uint64(1)) | rng.integers(0, 2, half, dtype=np.uint64)
        bitsrand = raw.astype(ubits).view(dt)
        # magnitudes around every integer range, with fractions, halves among them
        mags = 2.0 ** rng.uniform(-2, 66, random_count - half)
        signs = np.where(rng.integers(0, 2, random_count - half) == 1, -1.0, 1.0)
        scaled = signs * mags
        scaled[::3] = np.round(scaled[::3] * 2) / 2
        with np.errstate(over="ignore"):
            rand = np.concatenate([bitsrand, scaled.astype(dt)])
    seen, keep = set(), []
    for v in np.concatenate([edges, rand]):
        key = v.tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(v)
    arr = np.array(keep, dtype=dt)
    pad = (-len(arr)) % 48
    return np.concatenate([arr, arr[:pad]]) if pad else arr
