"""Inputs, exact references (mpmath) and errors for OpenCL C's geometric builtins (length,
distance, normalize, cross) on float, double and half vectors; used by test_math_fp32.py and
by its survey (python tests/icd/geometric_reference.py, vkcl as the platform).

Limits are the OpenCL-CTS's (test_conformance/geometrics), n the vector's width:
length 3 + (n + n - 1)/4 ulp, distance 3 + 1.5 n + (n - 1)/2, normalize 2.5 + n/2 + (n - 1)/2
per component; cross must be each product rounded, then their difference, bit for bit (the
value the CTS computes on the host; it allows 3 eps of the largest component squared).
Special values: a NaN component gives NaN (every component, for normalize), an infinite one
(and no NaN) an infinite length, normalize of zeros the zeros, normalize with infinite
components as if those were +-1 and the others +-0.
"""
from __future__ import annotations

import math
import sys

import mpmath
import numpy as np

TYPES = {"float": np.float32, "double": np.float64, "half": np.float16}
FORMAT = {np.float32: (24, -126, 127), np.float64: (53, -1022, 1023), np.float16: (11, -14, 15)}
UINT = {np.float32: np.uint32, np.float64: np.uint64, np.float16: np.uint16}
PRAGMA = {"double": "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
          "half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"}


def limit(name: str, n: int) -> float:
    return {"length": 3 + 0.5 * (0.5 * n + 0.5 * (n - 1)), "distance": 3 + 1.5 * n + 0.5 * (n - 1),
            "normalize": 2.5 + 0.5 * n + 0.5 * (n - 1), "cross": 0.0}[name]


def source(name: str, ctype: str, n: int) -> str:
    """A kernel applying the builtin to vectors of n components stored one after another."""
    t = ctype if n == 1 else f"{ctype}{n}"
    load = (lambda p: f"{p}[i]") if n == 1 else (lambda p: f"vload{n}(i, {p})")  # noqa: E731
    if name in ("length", "distance"):
        args = load("a") + (", " + load("b") if name == "distance" else "")
        body = f"o[i] = {name}({args});"
    else:
        args = load("a") + (", " + load("b") if name == "cross" else "")
        body = f"{t} r = {name}({args}); " + (f"o[i] = r;" if n == 1 else f"vstore{n}(r, i, o);")
    return (PRAGMA.get(ctype, "") + f"kernel void k(global const {ctype} *a, global const {ctype} *b,"
            f" global {ctype} *o) {{ size_t i = get_global_id(0); {body} }}\n")


def run(ctx, queue, name: str, ctype: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Results for rows of a (and b): one value per row, or a row (normalize, cross)."""
    import pyopencl as cl
    rows, n = a.shape
    prog = cl.Program(ctx, source(name, ctype, n)).build()
    mf = cl.mem_flags
    ba = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))
    bb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(b))
    shape = (rows,) if name in ("length", "distance") else (rows, n)
    out = np.empty(shape, a.dtype)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    prog.k(queue, (rows,), None, ba, bb, bo)
    cl.enqueue_copy(queue, out, bo)
    queue.finish()
    return out


def _ulp(value, dtype) -> mpmath.mpf:
    bits, emin, _ = FORMAT[dtype]
    if value == 0:
        return mpmath.ldexp(1, emin - bits + 1)
    e = int(mpmath.floor(mpmath.log(abs(value), 2)))
    if mpmath.ldexp(1, e) > abs(value):
        e -= 1
    elif mpmath.ldexp(1, e + 1) <= abs(value):
        e += 1
    return mpmath.ldexp(1, max(e, emin) - bits + 1)


def _ulps(got: float, ref, dtype) -> float:
    """|got - ref| in ulps of ref; an overflowing ref counts as 2**(emax+1)."""
    _, _, emax = FORMAT[dtype]
    top = mpmath.ldexp(1, emax + 1)
    if math.isnan(got):
        return math.inf
    ref = max(min(ref, top), -top)
    g = mpmath.mpf(math.copysign(top, got)) if math.isinf(got) else mpmath.mpf(got)
    return float(abs(g - ref) / _ulp(ref, dtype))


def _norm(v) -> mpmath.mpf:
    return mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in v))


def errors(name: str, dtype, a: np.ndarray, b: np.ndarray, got: np.ndarray, flush: bool = False) -> np.ndarray:
    """The error of each row in ulps (the largest over a row's components): inf where a special
    value is wrong. `flush`: denormal components may be taken as zeros and denormal results
    returned as zeros (the device reports no CL_FP_DENORM)."""
    out = np.zeros(len(a))
    if name == "cross":
        want = cross_reference(a, b)
        same = (got.view(UINT[dtype]) == want.view(UINT[dtype])) | (np.isnan(got) & np.isnan(want))
        return np.where(same.all(axis=1), 0.0, np.inf)
    tiny = 2.0 ** FORMAT[dtype][1]
    with mpmath.workprec(160):  # far beyond the types: sums and differences rounded at 2**-160
        for i in range(len(a)):
            rows = [(a[i], b[i])]
            if flush:
                rows.append(tuple(np.where(np.abs(v) < tiny, np.copysign(0.0, v), v).astype(dtype) for v in (a[i], b[i])))
            out[i] = min(_row_error(name, dtype, x, y, got[i], flush, tiny) for x, y in rows)
    return out


def _row_error(name, dtype, x, y, got, flush, tiny) -> float:
    if name == "distance":
        v = [mpmath.mpf(float(p)) - mpmath.mpf(float(q)) for p, q in zip(x, y)]
    else:
        v = [mpmath.mpf(float(p)) if np.isfinite(p) else float(p) for p in x]
    if name in ("length", "distance"):
        if any(mpmath.isnan(c) for c in v):
            return 0.0 if math.isnan(got) else math.inf
        if any(mpmath.isinf(c) for c in v):
            return 0.0 if got == math.inf else math.inf
        ref = mpmath.sqrt(mpmath.fsum(c ** 2 for c in v))
        if flush and got == 0 and ref < tiny:
            return 0.0
        return _ulps(float(got), ref, dtype)
    # normalize
    if any(mpmath.isnan(c) for c in v):
        return 0.0 if np.isnan(got).all() else math.inf
    if any(mpmath.isinf(c) for c in v):
        v = [mpmath.mpf(math.copysign(1.0 if mpmath.isinf(c) else 0.0, float(c))) for c in v]
    if all(c == 0 for c in v):
        same = all(g == 0 and np.signbit(g) == np.signbit(p) for g, p in zip(got, x))
        return 0.0 if same else math.inf
    n = mpmath.sqrt(mpmath.fsum(c ** 2 for c in v))
    worst = 0.0
    for g, c, p in zip(got, v, x):
        ref = c / n
        if ref == 0:  # a zero component keeps its sign (mpmath's zeros have none: the input's)
            ok = g == 0 and np.signbit(g) == np.signbit(p)
            e = 0.0 if ok else (math.inf if g == 0 else _ulps(float(g), ref, dtype))
        elif flush and g == 0 and abs(ref) < tiny:
            e = 0.0
        else:
            e = _ulps(float(g), ref, dtype)
        worst = max(worst, e)
    return worst


def cross_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each product rounded, then the difference rounded (half: in float, exact products, then
    rounded to half); a fourth component is 0."""
    t = np.float32 if a.dtype == np.float16 else a.dtype
    x, y = a.astype(t), b.astype(t)
    with np.errstate(all="ignore"):
        r = [x[:, 1] * y[:, 2] - x[:, 2] * y[:, 1], x[:, 2] * y[:, 0] - x[:, 0] * y[:, 2],
             x[:, 0] * y[:, 1] - x[:, 1] * y[:, 0]]
    if a.shape[1] == 4:
        r.append(np.zeros(len(a), t))
    with np.errstate(all="ignore"):
        return np.stack(r, axis=1).astype(a.dtype)


def random_bits(dtype, rng, shape) -> np.ndarray:
    u = UINT[dtype]
    v = rng.integers(0, np.iinfo(u).max, shape, dtype=u, endpoint=True).view(dtype)
    return np.where(np.isnan(v), dtype(1.5), v).astype(dtype)


TRICKY = [-1.1920929e-07, 1.1920929e-07, 2.0 ** 63, 1.5 * 2.0 ** 63, 2.0 ** 64, -(2.0 ** 63), -1.5 * 2.0 ** -63,
          -(2.0 ** 64), 2.0 ** -63, 1.5 * 2.0 ** -63, 2.0 ** -64, -(2.0 ** -63), -(2.0 ** -64), math.inf,
          -math.inf, 0.0, -0.0, 3e-30, 4e-30, 3e30, 4e30, 1.0, -1.0, 0.5, math.nan]


def inputs(dtype, n: int, rng, rows: int):
    """(a, b): rows of n components: random bit patterns, [-512, 512], components of random
    magnitudes across the whole range, tiny and huge vectors, and every pair of tricky values
    in each position (the CTS's, with 3e-30, 4e-30, 3e30, 4e30 and NaN)."""
    fi = np.finfo(dtype)
    bits, emin, emax = FORMAT[dtype]
    tricky = np.array([v for v in TRICKY + [float(fi.max) / 2, float(fi.tiny), float(fi.smallest_subnormal)]
                       if not np.isfinite(v) or abs(v) <= float(fi.max)]).astype(dtype)
    parts = [random_bits(dtype, rng, (rows, n)), rng.uniform(-512, 512, (rows, n)).astype(dtype)]
    mag = rng.uniform(-1, 1, (rows, n)) * np.exp2(rng.integers(emin - bits + 2, emax, (rows, n)).astype(np.float64))
    parts.append(mag.astype(dtype))
    for scale in (2.0 ** (emin + 2), 2.0 ** (emax - 3), 2.0 ** (emin - bits // 2)):
        parts.append((rng.uniform(-4, 4, (rows // 4, n)) * scale).astype(dtype))
    ti = rng.integers(0, len(tricky), (len(tricky) * 8, n))
    for pos in range(n):  # each tricky value in each position at least once
        ti[pos * len(tricky):(pos + 1) * len(tricky), pos] = np.arange(len(tricky))
    parts.append(tricky[ti])
    a = np.concatenate(parts).astype(dtype)
    b = np.concatenate([rng.permutation(a, axis=0)[: len(a) // 2], np.zeros((len(a) - len(a) // 2, n), dtype)])
    b = b[rng.permutation(len(b))].astype(dtype)
    return a, b


def main() -> int:
    import pyopencl as cl
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
    for ctype in ("float", "double", "half"):
        dtype = TYPES[ctype]
        for name in ("length", "distance", "normalize", "cross"):
            for n in ((3, 4) if name == "cross" else (1, 2, 3, 4)):
                a, b = inputs(dtype, n, np.random.default_rng(n), rows)
                try:
                    got = run(ctx, queue, name, ctype, a, b)
                except Exception as e:  # a failed build is a result
                    print(f"{name:9} {ctype}{n}: build fails: {str(e).splitlines()[0][:90]}")
                    continue
                errs = errors(name, dtype, a, b, got, flush and ctype != "double")
                finite = errs[np.isfinite(errs)]
                worst = int(np.argmax(np.where(np.isfinite(errs), errs, -1)))
                nbad = int(np.sum(np.isinf(errs)))
                lim = limit(name, n)
                bad = np.nonzero(np.isinf(errs))[0][:1]
                badtxt = f" e.g. {a[bad[0]]!r}, {b[bad[0]]!r} -> {got[bad[0]]!r}" if len(bad) else ""
                mark = "" if nbad == 0 and (finite.max(initial=0) <= lim) else "  WRONG"
                print(f"{name:9} {ctype}{n}: max {finite.max(initial=0):.3g} ulp (limit {lim}) at {a[worst]!r}; "
                      f"{nbad} wrong specials{badtxt}{mark}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
