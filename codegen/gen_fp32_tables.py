"""Writes vkcl/compiler/prelude/fp32_tables.py: minimax polynomials of the float prelude parts
(fp32_*.py), from mpmath, with gen_trig_tables.py's Remez exchange.

    python codegen/gen_fp32_tables.py      (needs mpmath; under a minute)
"""
from __future__ import annotations

import sys
from pathlib import Path

import mpmath
from mpmath import mpf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_trig_tables import remez, round_to  # noqa: E402

mpmath.mp.prec = 256
OUT = Path(__file__).resolve().parent.parent / "vkcl" / "compiler" / "prelude" / "fp32_tables.py"
EPS = mpmath.ldexp(1, -23)

# name -> (range, g, weight, g's limit at 0, degree): p approximates g, and the weight makes
# w(v) (g(v) - p(v)) the relative error of the function it serves.
FITS = {
    # Gamma(2 + f) = 1 + f P(f), |f| <= 1/2 (tgamma: the rest is an exact product)
    "gamma2": ((-0.5, 0.5), lambda f: (mpmath.gamma(2 + f) - 1) / f, lambda f: f / mpmath.gamma(2 + f),
               1 - mpmath.euler, 10),
}


def fit(name: str):
    (a, b), g, w, limit, degree = FITS[name]
    a, b = mpf(a), mpf(b)
    g0 = lambda v: limit if v == 0 else g(v)  # noqa: E731
    w0 = lambda v: mpf(0) if v == 0 else w(v)  # noqa: E731
    floor = max(w0(a + (b - a) * j / 64) for j in range(65)) * mpf(10) ** -4
    c, e = remez(g0, lambda v: max(w0(v), floor), a, b, degree)
    coeffs = [round_to(x, 24) for x in c]
    grid = [a + (b - a) * j / 2000 for j in range(1, 2001)]
    err = max(abs(w0(v) * (g0(v) - mpmath.polyval([mpf(x) for x in coeffs[::-1]], v))) for v in grid)
    print(f"{name:8} degree {degree:2}: minimax {float(e / EPS):.3g} eps, rounded {float(err / EPS):.3g} eps",
          file=sys.stderr)
    return coeffs


def main() -> None:
    tables = {name: fit(name) for name in FITS}
    lines = ['"""Constants of the float prelude parts, written by codegen/gen_fp32_tables.py (mpmath):',
             "minimax coefficients, lowest degree first. Do not edit.", '"""', "", "TABLES = {"]
    for k, v in tables.items():
        lines.append(f"    {k!r}: [{', '.join(repr(x) for x in v)}],")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
