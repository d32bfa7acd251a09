"""Double-precision builtins of OpenCL C measured against exact references (mpmath, Fraction).

Used by test_math_fp64.py (inside a pyopencl snippet) and as a survey tool:
    OCL_ICD_VENDORS=build/vendors PYOPENCL_NO_CACHE=1 VKCL_CACHE=0 PYTHONPATH=$PWD \
        python tests/icd/fp64_harness.py [-n 4000] [names...]
prints the max ulp error of each builtin, and how many special-value rules it broke.

A builtin's entry in F: its signature (result:arguments; d double, i int, D double*, I int*
written by the builtin), the inputs it is measured on, its reference, and the OpenCL C full
profile's ulp limit (0: exact). The references are fp64_reference.py's (a float where the
result is exact, compared bit for bit, NaN with NaN; an mpf where it is a real value, measured
in ulps), and trig_reference.py's for the trigonometric and hyperbolic builtins.
"""
from __future__ import annotations

import math
import struct

import numpy as np
from mpmath import mp

import trig_reference
from fp64_reference import (DENORM, DMAX, DMIN, INF, INT_MAX, INT_MIN, NAN, erfc_ref, exact_fma, fdim, fminmax,
                            fract, frexp, hypot_ref, ilogb, ldexp, lgamma_ref, lgamma_sign, logb, maxmag, modf,
                            nextafter, pow_ref, pown_ref, powr_ref, remquo, rootn_ref, round_half_away, sign,
                            sqrt_ref, tgamma_ref, to_double, unary)

SPECIALS = [NAN, INF, -INF, 0.0, -0.0, DENORM, -DENORM, DMIN, -DMIN, DMIN - DENORM, -(DMIN - DENORM),
            DMAX, -DMAX, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, -2.0, 2.5, -2.5, 3.0, -3.0, 3.5, 0.1, -0.1,
            1 + 2**-52, 1 - 2**-53, -1 - 2**-52, 0.49999999999999994, -0.49999999999999994, 2.0**52, 2.0**52 + 1,
            2.0**52 + 0.5, -2.0**52 - 0.5, 2.0**53, 2.0**53 - 1, 2.0**63, 2.0**64, -2.0**70, 1e300, -1e-300,
            4503599627370495.5, 7.0, 10.0, 100.0, -7.0, 1e15 + 0.5, 2.0**-1022 * 1.5, 2.0**-1050, -2.0**-1070]


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def from_bits(b: np.ndarray) -> np.ndarray:
    return np.asarray(b, dtype=np.uint64).view(np.float64)


def wide(rng, n: int, lo: int = -1074, hi: int = 1023, sign: bool = True) -> np.ndarray:
    """Random doubles whose binary exponents are uniform in [lo, hi] (denormals below -1022)."""
    e = rng.integers(lo, hi + 1, n)
    m = rng.random(n) + 1.0
    x = np.ldexp(m, e)
    return np.where(rng.random(n) < 0.5, -x, x) if sign else x


def uniform(rng, n: int, lo: float, hi: float) -> np.ndarray:
    return rng.uniform(lo, hi, n)


# ---- the table ---------------------------------------------------------------------------------

def _pos(rng, n):
    return np.abs(wide(rng, n))


def _near_one(rng, n):
    return 1.0 + rng.standard_normal(n) * 2.0 ** rng.integers(-52, 0, n)


def _ints(rng, n, lo=-40, hi=40):
    return rng.integers(lo, hi + 1, n).astype(np.int32)


def _pow_inputs(rng, n):
    k = n // 4
    x = np.concatenate([_pos(rng, k), _near_one(rng, k), -np.round(uniform(rng, k, 0, 20)) - 0.5 * (rng.random(k) < .2),
                        uniform(rng, n - 3 * k, 0, 4)])
    y = np.concatenate([uniform(rng, k, -3, 3) * 2.0 ** rng.integers(-10, 10, k),
                        rng.standard_normal(k) * 2.0 ** rng.integers(0, 60, k),
                        np.round(uniform(rng, k, -60, 60)), uniform(rng, n - 3 * k, -700, 700)])
    return [x, y]


def _pairs_close(rng, n):
    x = wide(rng, n)
    return [x, x * np.ldexp(rng.random(n) + 0.5, rng.integers(-60, 60, n)) * np.where(rng.random(n) < .5, -1, 1)]


def _fmod_inputs(rng, n):
    x, y = wide(rng, n), wide(rng, n)
    k = n // 2
    y[:k] = x[:k] * np.ldexp(rng.random(k) + 0.5, -rng.integers(0, 70, k))
    return [x, y]


def _fma_inputs(rng, n):
    a, b = wide(rng, n, -540, 511), wide(rng, n, -540, 511)
    c = -(a * b) * (1 + rng.standard_normal(n) * 2.0 ** rng.integers(-60, -1, n))  # cancellation
    k = n // 3
    c[:k] = wide(rng, k)
    c[k:2 * k] = wide(rng, k, -1074, -900)
    a[2 * k:] = wide(rng, n - 2 * k, -1074, 1023)
    return [a, b, c]


def _specials2(vals):
    v = np.array(vals)
    return [np.repeat(v, len(v)), np.tile(v, len(v))]


SP = np.array(SPECIALS)
INTS_SPECIAL = np.array([0, 1, -1, 2, -2, 3, -3, 4, 5, -5, 7, 8, 11, 16, -16, 31, 1000, -1000, 1100, -1100, 2100, -2100,
                         INT_MAX, INT_MIN, INT_MIN + 1, 53, -53, 1023, -1074, 1024, -1022], dtype=np.int32)


def _x(gen):
    return lambda rng, n: [gen(rng, n)]


F = {}


def fn(name, sig, ref, ulp, inputs, specials=None, **extra):
    F[name] = dict(sig=sig, ref=ref, ulp=ulp, inputs=inputs, specials=specials, **extra)


def _wide_and(*ranges):
    def make(rng, n):
        k = n // 2 // max(1, len(ranges))
        parts = [wide(rng, n - k * len(ranges))] + [uniform(rng, k, lo, hi) for lo, hi in ranges]
        return [np.concatenate(parts)]
    return make


_sp1 = [SP]
_sp2 = _specials2(SPECIALS[:24] + [7.0, 0.1, 1e300, -1e-300])
_spi = [np.repeat(SP, len(INTS_SPECIAL)), np.tile(INTS_SPECIAL, len(SP))]
_sp3 = [np.repeat(SP[:20], 400), np.tile(np.repeat(SP[:20], 20), 20), np.tile(SP[:20], 400)]

fn("fabs", "d:d", abs, 0, _x(wide), _sp1)
fn("copysign", "d:dd", math.copysign, 0, lambda r, n: [wide(r, n), wide(r, n)], _sp2)
fn("round", "d:d", round_half_away, 0, _wide_and((-1e6, 1e6), (-3, 3)), _sp1)
fn("rint", "d:d", lambda x: float(np.rint(x)), 0, _wide_and((-1e6, 1e6), (-3, 3)), _sp1)
fn("trunc", "d:d", lambda x: float(np.trunc(x)), 0, _wide_and((-1e6, 1e6), (-3, 3)), _sp1)
fn("floor", "d:d", lambda x: float(np.floor(x)), 0, _wide_and((-1e6, 1e6), (-3, 3)), _sp1)
fn("ceil", "d:d", lambda x: float(np.ceil(x)), 0, _wide_and((-1e6, 1e6), (-3, 3)), _sp1)
fn("ilogb", "i:d", ilogb, 0, _x(wide), _sp1)
fn("logb", "d:d", logb, 0, _x(wide), _sp1)
fn("frexp", "d:dI", frexp, 0, _x(wide), _sp1)
fn("modf", "d:dD", modf, 0, _wide_and((-1e6, 1e6), (-3, 3)), _sp1)
fn("fract", "d:dD", fract, 0, _wide_and((-1e6, 1e6), (-3, 3), (-1e-17, 1e-17)), _sp1)
fn("ldexp", "d:di", ldexp, 0, lambda r, n: [wide(r, n), _ints(r, n, -2200, 2200)], _spi)
fn("fma", "d:ddd", exact_fma, 0, _fma_inputs, _sp3)
fn("mad", "d:ddd", lambda a, b, c: (exact_fma(a, b, c), a * b + c), 0, _fma_inputs, _sp3)
fn("fmod", "d:dd", lambda x, y: NAN if (math.isinf(x) or y == 0 or math.isnan(x) or math.isnan(y))
   else x if math.isinf(y) else math.fmod(x, y), 0, _fmod_inputs, _sp2)
fn("remainder", "d:dd", lambda x, y: remquo(x, y)[0], 0, _fmod_inputs, _sp2)
fn("remquo", "d:ddI", remquo, 0, _fmod_inputs, _sp2)
fn("nextafter", "d:dd", nextafter, 0, _pairs_close, _sp2)
fn("fdim", "d:dd", fdim, 0, _pairs_close, _sp2)
fn("fmax", "d:dd", lambda x, y: fminmax(x, y, True), 0, _pairs_close, _sp2, zero_sign_free=True)
fn("fmin", "d:dd", lambda x, y: fminmax(x, y, False), 0, _pairs_close, _sp2, zero_sign_free=True)
fn("maxmag", "d:dd", lambda x, y: maxmag(x, y, True), 0, _pairs_close, _sp2, zero_sign_free=True)
fn("minmag", "d:dd", lambda x, y: maxmag(x, y, False), 0, _pairs_close, _sp2, zero_sign_free=True)
fn("sqrt", "d:d", sqrt_ref, 0, _x(_pos), _sp1)
fn("rsqrt", "d:d", unary(lambda x: 1 / mp.sqrt(x), zero_keeps_sign=False, at_zero=lambda x: math.copysign(INF, x),
                         at_inf=0.0, at_minus_inf=NAN, neg_nan=True), 2, _x(_pos), _sp1)
fn("cbrt", "d:d", unary(lambda x: mp.sign(x) * mp.cbrt(abs(x)), at_inf=INF, at_minus_inf=-INF), 2, _x(wide), _sp1)
def _exp_of(base):
    """base^x, a float once far outside the range."""
    lb = math.log2(base)
    return lambda x: mp.mpf(INF) if x * lb > 1100 else mp.mpf(0) if x * lb < -1200 else \
        mp.exp(x * mp.log(base))


fn("exp", "d:d", unary(_exp_of(mp.e), at_inf=INF, at_minus_inf=0.0, at_zero=lambda x: 1.0), 3,
   _wide_and((-746, 710), (-1, 1)), _sp1)
# exp2's ends of range (clspv's exp2(1024) was 1)
_sp_exp2 = [np.concatenate([SP, [1024.0, -1024.0, 1023.0, 1024 - 2**-42, 1024 + 2**-42, 1025.0, -1022.0, -1074.0,
                                 -1074.5, -1075.0, -1076.0]])]
fn("exp2", "d:d", unary(_exp_of(2), at_inf=INF, at_minus_inf=0.0, at_zero=lambda x: 1.0), 3,
   _wide_and((-1076, 1024), (-1, 1)), _sp_exp2)
fn("exp10", "d:d", unary(_exp_of(10), at_inf=INF, at_minus_inf=0.0, at_zero=lambda x: 1.0), 3,
   _wide_and((-324, 309), (-1, 1)), _sp1)
fn("expm1", "d:d", unary(lambda x: mp.mpf(INF) if x > 1100 else mp.expm1(x), at_inf=INF, at_minus_inf=-1.0), 3, _wide_and((-40, 710), (-1, 1)), _sp1)
_log0 = dict(at_zero=lambda x: -INF, at_inf=INF, at_minus_inf=NAN, neg_nan=True)
fn("log", "d:d", unary(mp.log, **_log0), 3, lambda r, n: [np.concatenate([_pos(r, n // 2), _near_one(r, n - n // 2)])],
   _sp1)
fn("log2", "d:d", unary(lambda x: mp.log(x, 2), **_log0), 3,
   lambda r, n: [np.concatenate([_pos(r, n // 2), _near_one(r, n - n // 2)])], _sp1)
fn("log10", "d:d", unary(mp.log10, **_log0), 3,
   lambda r, n: [np.concatenate([_pos(r, n // 2), _near_one(r, n - n // 2)])], _sp1)
fn("log1p", "d:d", lambda x: NAN if x < -1 else -INF if x == -1 else unary(mp.log1p, at_inf=INF)(x), 2,
   lambda r, n: [np.concatenate([wide(r, n // 2), uniform(r, n - n // 2, -1, 1)])], _sp1)
fn("pow", "d:dd", pow_ref, 16, _pow_inputs, _sp2)
fn("powr", "d:dd", powr_ref, 16, lambda r, n: [np.abs(a) for a in _pow_inputs(r, n)][:1] + [_pow_inputs(r, n)[1]],
   _sp2)
fn("pown", "d:di", pown_ref, 16, lambda r, n: [np.concatenate([_near_one(r, n // 2), wide(r, n - n // 2, -30, 30)]),
                                               _ints(r, n, -1100, 1100)], _spi)
fn("rootn", "d:di", rootn_ref, 16, lambda r, n: [wide(r, n), _ints(r, n, -40, 40)], _spi)
fn("hypot", "d:dd", hypot_ref, 4, _pairs_close, _sp2)
fn("erf", "d:d", unary(lambda x: mp.sign(x) if abs(x) > 30 else mp.erf(x), at_inf=1.0, at_minus_inf=-1.0), 16, _wide_and((-7, 7), (-1, 1)), _sp1)
fn("erfc", "d:d", erfc_ref, 16, _wide_and((-7, 28), (-1, 1)), _sp1)
fn("tgamma", "d:d", tgamma_ref, 16, _wide_and((-180, 172), (-5, 5), (0, 1e-10)), _sp1)
# (2.54e305, 2.56e305): results up to DBL_MAX (NaN from 2.553e305 once: the CTS)
fn("lgamma", "d:d", lgamma_ref, None, _wide_and((-180, 180), (-5, 5), (0.5, 3), (2.54e305, 2.56e305)), _sp1)
fn("lgamma_r", "d:dI", lambda x: (lgamma_ref(x), lgamma_sign(x)), None,
   _wide_and((-180, 180), (-5, 5), (2.54e305, 2.56e305)), _sp1)
fn("sign", "d:d", sign, 0, _x(wide), _sp1)
fn("step", "d:dd", lambda e, x: 0.0 if x < e else 1.0, 0, _pairs_close, _sp2)
fn("isnan", "i:d", lambda x: int(math.isnan(x)), 0, _x(wide), _sp1)
fn("isinf", "i:d", lambda x: int(math.isinf(x)), 0, _x(wide), _sp1)
fn("isfinite", "i:d", lambda x: int(math.isfinite(x)), 0, _x(wide), _sp1)
fn("isnormal", "i:d", lambda x: int(math.isfinite(x) and abs(x) >= DMIN), 0, _x(wide), _sp1)
fn("signbit", "i:d", lambda x: int(math.copysign(1, x) < 0), 0, _x(wide), _sp1)
fn("clamp", "d:ddd", lambda x, lo, hi: min(max(x, lo), hi) if lo <= hi else NAN, 0,
   lambda r, n: [wide(r, n, -10, 10), -np.abs(wide(r, n, -10, 10)), np.abs(wide(r, n, -10, 10))], None)
# mix: OpenCL defines it as x + (y - x) a and sets no error bound (clspv uses GLSL's FMix, which
# is x (1 - a) + y a); measured against x + (y - x) a with y - x rounded, as that formula would
fn("mix", "d:ddd", lambda x, y, a: mp.mpf(y - x) * a + x, None,
   lambda r, n: [uniform(r, n, -10, 10), uniform(r, n, -10, 10), r.random(n)], None)


def _trig_ref(name):
    """trig_reference's: its exact special values (NaN, +-inf, +-0, atan2's axes, ...), else
    mpmath's function."""
    f = trig_reference._mp(name)

    def ref(*args):
        exact = trig_reference.expected_exact(name, *args)
        if exact is None:
            x = args[0]
            if name in ("sinh", "cosh") and abs(x) > 800:  # past the range (mpmath would take long)
                return INF if name == "cosh" or x > 0 else -INF
            return f(*map(mp.mpf, args))
        return mp.mpf(exact[1]) if isinstance(exact, tuple) else exact
    return ref


def _trig_inputs(name):
    """trig_reference's inputs (specials, random bit patterns, each function's hard ranges;
    for atan2 pairs), a third as many as `n` would give there."""
    def make(rng, n):
        ys, xs = trig_reference.inputs(name, np.float64, rng, max(1, n // 3))
        return [ys] if xs is None else [ys, xs]
    return make


for _name, _ulp in trig_reference.LIMITS.items():
    _binary = _name in trig_reference.BINARY
    fn(_name, "d:dd" if _binary else "d:d", _trig_ref(_name), _ulp, _trig_inputs(_name), _sp2 if _binary else _sp1)


# ---- running kernels ---------------------------------------------------------------------------

_CTYPE = {"d": "double", "i": "int", "D": "double", "I": "int"}


def kernel_source(name: str, sig: str, width: str = "") -> str:
    """A kernel applying `name` to element i of its inputs (of type double`width`)."""
    ret, args = sig.split(":")
    vec = lambda c: _CTYPE[c] + width  # noqa: E731
    params, call, stores = [f"global {vec(ret)} *r"], [], []
    ins = [c for c in args if c in "di"]
    outs = [c for c in args if c in "DI"]
    for k, c in enumerate(ins):
        params.append(f"global const {vec(c)} *a{k}")
    for k, c in enumerate(outs):
        params.append(f"global {vec(c)} *o{k}")
    k_in = k_out = 0
    decls = []
    for c in args:
        if c in "di":
            call.append(f"a{k_in}[i]")
            k_in += 1
        else:
            decls.append(f"{vec(c)} t{k_out};")
            call.append(f"&t{k_out}")
            stores.append(f"o{k_out}[i] = t{k_out};")
            k_out += 1
    result = f"{name}({', '.join(call)})"
    if ret == "i" and width:  # relational builtins of vectors return long vectors
        result = f"convert_int{width}({result})"
    return (f"kernel void k_{name}({', '.join(params)}) {{ size_t i = get_global_id(0); {' '.join(decls)} "
            f"r[i] = {result}; {' '.join(stores)} }}\n")


def program_source(names, width: str = "") -> str:
    """The kernels of `names` (OpenCL C 1.2, the default, has doubles without a pragma: with
    one, clang warns in the build log)."""
    return "".join(
        kernel_source(n, F[n]["sig"], width) for n in names)


def make_inputs(name: str, n: int, seed: int = 1):
    spec = F[name]
    rng = np.random.default_rng(seed)
    ins = spec["inputs"](rng, n)
    if spec["specials"] is not None:
        ins = [np.concatenate([s, i]) for s, i in zip(spec["specials"], ins)]
    ret, args = spec["sig"].split(":")
    kinds = [c for c in args if c in "di"]
    return [np.ascontiguousarray(a, dtype=np.float64 if c == "d" else np.int32) for a, c in zip(ins, kinds)]


def run(ctx, queue, program, name: str, ins, width: str = ""):
    """The outputs of `name` on `ins` (arrays): [result, pointer outputs...]."""
    import pyopencl as cl
    sig = F[name]["sig"]
    ret, args = sig.split(":")
    w = int(width or 1)
    w_store = 4 if w == 3 else w
    count = len(ins[0])
    groups = -(-count // w)
    mf = cl.mem_flags
    bufs = []
    for a in ins:
        pad = np.zeros(groups * w_store, dtype=a.dtype)
        view = pad.reshape(groups, w_store)
        flat = np.concatenate([a, np.zeros(groups * w - count, a.dtype)]).reshape(groups, w)
        view[:, :w] = flat
        bufs.append(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=pad))
    out_kinds = [ret] + [c for c in args if c in "DI"]
    outs = [np.zeros(groups * w_store, dtype=np.float64 if c in "dD" else np.int32) for c in out_kinds]
    obufs = [cl.Buffer(ctx, mf.READ_WRITE, o.nbytes) for o in outs]
    getattr(program, f"k_{name}")(queue, (groups,), None, obufs[0], *bufs, *obufs[1:])
    for o, b in zip(outs, obufs):
        cl.enqueue_copy(queue, o, b)
    queue.finish()
    return [o.reshape(groups, w_store)[:, :w].reshape(-1)[:count] for o in outs]


# ---- measuring ---------------------------------------------------------------------------------

def ulp_of(v) -> object:
    """The OpenCL ulp of a real value: the gap between the doubles around it (2^-1074 below
    DBL_MIN, 2^971 past DBL_MAX)."""
    if v == 0:
        return mp.mpf(2) ** -1074
    e = int(mp.floor(mp.log(abs(v), 2)))
    if mp.mpf(2) ** e > abs(v):
        e -= 1
    elif mp.mpf(2) ** (e + 1) <= abs(v):
        e += 1
    return mp.mpf(2) ** (min(max(e, -1022), 1023) - 52)


def same(got: float, want: float, zero_sign_free: bool = False) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    if got != want:
        return False
    return zero_sign_free or want != 0 or math.copysign(1, got) == math.copysign(1, want)


def error(got: float, want) -> float:
    """ulps between a result and its reference (0 or inf for exact references)."""
    if not isinstance(want, (float, int)) and mp.isinf(want):
        want = float(want)
    if isinstance(want, (float, int)):
        return 0.0 if same(float(got), float(want)) else INF
    if math.isnan(got):
        return INF
    if math.isinf(got):
        return 0.0 if to_double(want) == got else INF
    return float(abs(mp.mpf(got) - want) / ulp_of(want))


RELATIONAL = ("isnan", "isinf", "isfinite", "isnormal", "signbit")


def measure(name: str, ins, outs, width: str = ""):
    """(max ulp error, its input, the rows that broke their limit or an exact rule). Relational
    builtins of vectors give -1 for true."""
    spec = F[name]
    ref, limit = spec["ref"], spec["ulp"]
    if width and name in RELATIONAL:
        ref = lambda *a: -spec["ref"](*a)  # noqa: E731
    worst, worst_at, bad, finite_worst = 0.0, None, [], 0.0
    for row in range(len(ins[0])):
        args = [float(a[row]) if a.dtype == np.float64 else int(a[row]) for a in ins]
        want = ref(*args)
        got = [float(o[row]) if o.dtype == np.float64 else int(o[row]) for o in outs]
        if name == "mad":  # either the fused or the unfused result
            ok = any(same(got[0], w) for w in want)
            if not ok:
                bad.append((args, got, want))
            continue
        wants = list(want) if isinstance(want, tuple) else [want]
        errs = []
        for g, w in zip(got, wants):
            if isinstance(w, int) and not isinstance(w, bool):
                errs.append(0.0 if g == w else INF)
            elif isinstance(w, float) and spec.get("zero_sign_free"):
                errs.append(0.0 if same(g, w, True) else INF)
            elif name in ("lgamma", "lgamma_r") and not isinstance(w, float):
                errs.append(lgamma_error(g, w))
            else:
                errs.append(error(g, w))
        e = max(errs)
        if e == INF or (limit is not None and e > limit):
            bad.append((args, got, want))
        if e > worst:
            worst, worst_at = e, args
        if e != INF and e > finite_worst:
            finite_worst = e
    measure.finite_worst = finite_worst  # the max over rows that broke no exact rule
    return worst, worst_at, bad


def lgamma_error(got: float, want) -> float:
    """lgamma has no ulp limit in OpenCL; near its zeros (1, 2, and between negative integers) it
    is measured against the error in log|gamma| of its input's rounding: ulps of the result, or
    the absolute error in units of 2^-52, whichever is smaller."""
    if math.isnan(got) or math.isinf(got):
        return 0.0 if to_double(want) == got else INF
    d = abs(mp.mpf(got) - want)
    return float(min(d / ulp_of(want), d / mp.mpf(2) ** -52))


def survey(names, n: int, width: str = "", verbose: int = 1, seed: int = 1):
    import pyopencl as cl
    plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
    ctx = cl.Context([plat.get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    print(f"{'builtin':10} {'limit':>5} {'max ulp':>12} {'finite max':>10}  broken/total  worst input / a broken row")
    for name in names:
        ins = make_inputs(name, n, seed)
        try:
            prog = cl.Program(ctx, program_source([name], width)).build()
            outs = run(ctx, queue, prog, name, ins, width)
        except Exception as e:  # noqa: BLE001  (a survey lists compile failures, it does not stop)
            print(f"{name:10} {str(F[name]['ulp']):>5} {'FAILED':>12}  {str(e).splitlines()[0][:80]}")
            continue
        worst, at, bad = measure(name, ins, outs, width)
        ex = bad[0] if bad else at
        print(f"{name:10} {str(F[name]['ulp']):>5} {worst:12.4g} {measure.finite_worst:10.4g}  "
              f"{len(bad):5d}/{len(ins[0]):<6d} {ex}", flush=True)
        for row in bad[1:verbose]:
            print(f"{'':37} {row}")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=4000)
    ap.add_argument("-w", "--width", default="")
    ap.add_argument("-v", "--verbose", type=int, default=1, help="broken rows to show")
    ap.add_argument("-s", "--seed", type=int, default=1, help="of the random inputs")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    survey(a.names or list(F), a.n, a.width, a.verbose, a.seed)
