"""Writes vkcl/compiler/prelude/fp64_tables.py: the constants of the double-precision prelude
parts, from mpmath: double-double splits of ln 2, ln 10, pi, ...; Taylor coefficients (exact
rationals rounded once); polynomials interpolating erf, erfc, 1/gamma and sin(pi r) at
Chebyshev nodes, the degree the least that meets each one's error target once the
coefficients are doubles; Stirling's and lgamma's series coefficients.

    python codegen/gen_fp64_tables.py      (needs mpmath; under a minute)
"""
from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import mpmath
from mpmath import mp, mpf

mp.prec = 256
OUT = Path(__file__).resolve().parent.parent / "vkcl" / "compiler" / "prelude" / "fp64_tables.py"


def to_double(v) -> float:
    """v rounded to the nearest double."""
    sign, man, exp, _ = mpf(v)._mpf_
    f = Fraction(man) * Fraction(2) ** exp if exp >= 0 else Fraction(man, 2 ** -exp)
    return float(-f if sign else f)


def dd(v) -> tuple[float, float]:
    hi = to_double(v)
    return hi, to_double(mpf(v) - hi)


def interpolate(f, a, b, degree: int, center=0):
    """Monomial coefficients (lowest first, in powers of x - center) of the polynomial that
    interpolates f at the Chebyshev nodes of [a, b]."""
    n = degree + 1
    nodes = [(mpf(a) + b) / 2 + (mpf(b) - a) / 2 * mpmath.cos(mpmath.pi * (2 * j + 1) / (2 * n)) for j in range(n)]
    m = mpmath.matrix(n, n)
    rhs = mpmath.matrix(n, 1)
    for j, v in enumerate(nodes):
        for i in range(n):
            m[j, i] = (v - center) ** i
        rhs[j] = f(v)
    sol = mpmath.lu_solve(m, rhs)
    return [sol[i] for i in range(n)]


def fit(f, a, b, target: float, center=0, weight=None, max_degree: int = 40):
    """The lowest-degree interpolant whose double coefficients keep |f - p| (times weight)
    below target on [a, b]; returns (coefficients as doubles, the error seen)."""
    grid = [mpf(a) + (mpf(b) - a) * k / 2000 for k in range(2001)]
    vals = [f(v) for v in grid]
    for degree in range(2, max_degree + 1):
        coeffs = [to_double(c) for c in interpolate(f, a, b, degree, center)]
        err = 0
        for v, fv in zip(grid, vals):
            p = mpf(0)
            for c in reversed(coeffs):
                p = p * (v - center) + c
            e = abs(p - fv) * (weight(v) if weight else 1)
            err = max(err, e)
        if err < target:
            return coeffs, float(err)
    raise RuntimeError(f"no fit below {target} up to degree {max_degree}")


def main() -> None:
    t = {}
    t["ln2"] = dd(mp.log(2))
    t["inv_ln2"] = dd(1 / mp.log(2))
    t["ln10"] = dd(mp.log(10))
    t["inv_ln10"] = dd(1 / mp.log(10))
    t["log10_2"] = dd(mp.log10(2))
    t["third"] = dd(mpf(1) / 3)
    t["pi"] = dd(mp.pi)
    t["half_ln_2pi"] = dd(mp.log(2 * mp.pi) / 2)
    t["ln_pi"] = dd(mp.log(mp.pi))
    # the largest double x whose ln gamma(x) is below DBL_MAX
    dmax = mpf(2) ** 1024 * (1 - mpf(2) ** -53)
    lo, hi = 2.5e305, 2.6e305
    while math.nextafter(lo, hi) < hi:  # bisection over the doubles
        mid = (lo + hi) / 2 if (lo + hi) / 2 not in (lo, hi) else math.nextafter(lo, hi)
        lo, hi = (mid, hi) if mp.loggamma(mid) < dmax else (lo, mid)
    t["lgamma_overflow"] = lo
    t["two_over_sqrt_pi"] = dd(2 / mp.sqrt(mp.pi))
    # log(m) = 2u (1 + u^2/3 + u^4/5 + ...): the coefficients after 1/3, while u^2 <= 0.0295
    # leaves a term above 2^-70
    t["log_tail"] = [float(Fraction(1, 2 * n + 1)) for n in range(2, 15)]
    # exp(r) = 1 + r + r^2 (1/2 + r (1/6 + r/24 + ...)), |r| <= ln2 / 2: 1/3! .. 1/17!
    t["exp_tail"] = [float(Fraction(1, math.factorial(n))) for n in range(3, 18)]
    # erf(x) = x P(x^2), |x| <= 1, relative error
    erf_x = lambda u: mp.erf(mp.sqrt(u)) / mp.sqrt(u) if u else 2 / mp.sqrt(mp.pi)  # noqa: E731
    t["erf_small"], e1 = fit(erf_x, 0, 1, 1.5 * 2.0 ** -53, weight=lambda u: 1 / erf_x(u))
    # erfc(x) = exp(-x^2) G(x): G on [0.5, 27.5] in pieces, powers of x - center, relative error
    g = lambda x: mp.erfc(x) * mp.exp(x * x)  # noqa: E731
    t["erfc_pieces"] = []
    errs = [e1]
    for a, b in ((0.5, 1), (1, 1.5), (1.5, 2), (2, 2.75), (2.75, 3.75), (3.75, 5), (5, 7), (7, 10), (10, 15), (15, 27.5)):
        c = (mpf(a) + b) / 2
        coeffs, e = fit(g, a, b, 1.5 * 2.0 ** -53, center=c, weight=lambda v: 1 / g(v))
        t["erfc_pieces"].append((float(a), float(b), to_double(c), coeffs))
        errs.append(e)
    # 1/gamma(1 + t), t in [-0.5, 1] (an entire function), relative error
    t["rgamma"], e = fit(lambda v: mp.rgamma(1 + v), -0.5, 1, 1.5 * 2.0 ** -53, weight=lambda v: mp.gamma(1 + v))
    errs.append(e)
    # sin(pi r) = r S(r^2), |r| <= 1/2, relative error
    t["sinpi"], e = fit(lambda u: mp.sin(mp.pi * mp.sqrt(u)) / mp.sqrt(u) if u else mp.pi, 0, 0.25, 1.5 * 2.0 ** -53,
                        weight=lambda u: 1 / mp.pi)
    errs.append(e)
    # Stirling: ln gamma(x) = (x - 1/2) ln x - x + ln(2 pi)/2 + sum B_2k / (2k (2k - 1) x^(2k-1))
    t["stirling"] = [to_double(mpmath.bernoulli(2 * k) / (2 * k * (2 * k - 1))) for k in range(1, 12)]
    # ln gamma(1 + t) and ln gamma(2 + t) by their Taylor series (|t| <= 0.2)
    euler = mp.euler
    t["lgamma1"] = [to_double(-euler)] + [to_double((-1) ** k * mp.zeta(k) / k) for k in range(2, 30)]
    t["lgamma2"] = [to_double(1 - euler)] + [to_double((-1) ** k * (mp.zeta(k) - 1) / k) for k in range(2, 30)]
    lines = ['"""Constants of the double-precision prelude parts, written by codegen/gen_fp64_tables.py',
             "(mpmath): double-double splits as (hi, lo), series and interpolant coefficients lowest",
             'degree first. Do not edit."""', "", "TABLES = {"]
    for k, v in t.items():
        lines.append(f"    {k!r}: {v!r},")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print("worst fit errors:", [f"{e:.3g}" for e in errs])
    print("degrees:", {k: len(v) - 1 for k, v in t.items() if k in ("erf_small", "rgamma", "sinpi")},
          [len(p[3]) - 1 for p in t["erfc_pieces"]])


if __name__ == "__main__":
    main()
