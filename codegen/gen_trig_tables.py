"""Writes vkcl/compiler/prelude/trig_tables.py: the constants of the trig prelude parts, exact
from mpmath: minimax polynomials (Remez exchange, relative error of the function they serve),
splits of pi/2, ln 2 and pi into parts whose products with small integers are exact, and the
bits of 2/pi for the reduction of large arguments.

    python codegen/gen_trig_tables.py      (needs mpmath; a few minutes)
"""
from __future__ import annotations

import sys
from pathlib import Path

import mpmath
from mpmath import mpf

mpmath.mp.prec = 320
OUT = Path(__file__).resolve().parent.parent / "vkcl" / "compiler" / "prelude" / "trig_tables.py"
BITS = {"float": 24, "double": 53}


def round_to(x, bits: int) -> float:
    """x rounded to nearest with `bits` significant bits (a float or double value)."""
    if x == 0:
        return 0.0
    e = int(mpmath.floor(mpmath.log(abs(x), 2)))
    q = mpmath.ldexp(1, e - bits + 1)
    return float(mpmath.nint(x / q) * q)


def remez(g, w, a, b, degree: int, iters: int = 30):
    """Coefficients c[0..degree] (mpf) minimizing max |w(v) (g(v) - sum c[i] v^i)| on [a, b];
    returns (coefficients, max weighted error)."""
    n = degree + 2
    ref = [(a + b) / 2 - (b - a) / 2 * mpmath.cos(mpmath.pi * j / (n - 1)) for j in range(n)]
    grid = [(a + b) / 2 - (b - a) / 2 * mpmath.cos(mpmath.pi * (j + mpf(0.5)) / 3000) for j in range(3000)]
    grid = [a] + grid + [b]
    gvals = [g(v) for v in grid]
    wvals = [w(v) for v in grid]
    best = None
    for _ in range(iters):
        m = mpmath.matrix(n, n)
        rhs = mpmath.matrix(n, 1)
        for j, v in enumerate(ref):
            for i in range(degree + 1):
                m[j, i] = v ** i
            m[j, degree + 1] = (-1) ** j / w(v)
            rhs[j] = g(v)
        sol = mpmath.lu_solve(m, rhs)
        c = [sol[i] for i in range(degree + 1)]
        err = [wv * (gv - mpmath.polyval(c[::-1], v)) for v, gv, wv in zip(grid, gvals, wvals)]
        emax = max(abs(e) for e in err)
        if best is None or emax < best[1]:
            best = (c, emax)
        # new reference: the largest |error| of each run of one sign, n of them
        runs, cur = [], None
        for j, e in enumerate(err):
            s = e >= 0
            if cur is None or s != cur[0]:
                cur = [s, j]
                runs.append(cur)
            elif abs(e) > abs(err[cur[1]]):
                cur[1] = j
        idx = [r[1] for r in runs]
        while len(idx) > n:  # drop the smallest extremum at an end
            if abs(err[idx[0]]) < abs(err[idx[-1]]):
                idx.pop(0)
            else:
                idx.pop()
        if len(idx) < n:
            break
        new = [grid[j] for j in idx]
        if all(abs(x - y) < mpf(10) ** -40 for x, y in zip(new, ref)):
            break
        ref = new
    return best


def _safe(f, limit):
    """f(v), or its limit at v = 0 (the fits' functions are removable there)."""
    return lambda v: limit if v == 0 else f(v)


PIO4 = mpmath.pi / 4
# (name, variable range, g, weight): the polynomial p approximates g on the range, and the
# weight makes w(v) * (g(v) - p(v)) the relative error of the builtin the polynomial serves.
FITS = {
    # sin r = r + r^3 S(r^2), |r| <= pi/4 (and a little more: Cody-Waite's k may be off by a
    # rounding)
    "sin": ((0, (PIO4 * mpf("1.01")) ** 2),
            lambda z: (mpmath.sin(mpmath.sqrt(z)) - mpmath.sqrt(z)) / z ** mpf(1.5),
            lambda z: z ** mpf(1.5) / mpmath.sin(mpmath.sqrt(z)), -mpf(1) / 6),
    # cos r = 1 - r^2/2 + r^4 C(r^2)
    "cos": ((0, (PIO4 * mpf("1.01")) ** 2),
            lambda z: (mpmath.cos(mpmath.sqrt(z)) - 1 + z / 2) / z ** 2,
            lambda z: z ** 2 / mpmath.cos(mpmath.sqrt(z)), mpf(1) / 24),
    # sinpi f = f (pi + f^2 S(f^2)), |f| <= 1/4
    "sinpi": ((0, mpf(1) / 16),
              lambda z: (mpmath.sinpi(mpmath.sqrt(z)) / mpmath.sqrt(z) - mpmath.pi) / z,
              lambda z: z * mpmath.sqrt(z) / mpmath.sinpi(mpmath.sqrt(z)), -mpmath.pi ** 3 / 6),
    # cospi f = 1 + f^2 C(f^2)
    "cospi": ((0, mpf(1) / 16), lambda z: (mpmath.cospi(mpmath.sqrt(z)) - 1) / z,
              lambda z: z / mpmath.cospi(mpmath.sqrt(z)), -mpmath.pi ** 2 / 2),
    # asin a = a + a^3 P(a^2), |a| <= 1/2
    "asin": ((0, mpf(1) / 4), lambda z: (mpmath.asin(mpmath.sqrt(z)) - mpmath.sqrt(z)) / z ** mpf(1.5),
             lambda z: z ** mpf(1.5) / mpmath.asin(mpmath.sqrt(z)), mpf(1) / 6),
    # atan u = u + u^3 Q(u^2), |u| <= 1/2
    "atan": ((0, mpf(1) / 4), lambda z: (mpmath.atan(mpmath.sqrt(z)) - mpmath.sqrt(z)) / z ** mpf(1.5),
             lambda z: z ** mpf(1.5) / mpmath.atan(mpmath.sqrt(z)), -mpf(1) / 3),
    # exp r = 1 + r + r^2 E(r), |r| <= ln2/2 (and a little more)
    "exp": ((-mpmath.ln2 / 2 * mpf("1.01"), mpmath.ln2 / 2 * mpf("1.01")),
            lambda r: (mpmath.exp(r) - 1 - r) / r ** 2, lambda r: r ** 2 / mpmath.exp(r), mpf(1) / 2),
    # log1p f = f - f^2/2 + s (f^2/2 + s^2 G(s^2)), s = f / (2 + f), |s| <= 3 - 2 sqrt 2
    "log": ((0, (3 - 2 * mpmath.sqrt(2)) ** 2 * mpf("1.01")),
            lambda z: (2 * mpmath.atanh(mpmath.sqrt(z)) / mpmath.sqrt(z) - 2) / z,
            lambda z: z / 2, mpf(2) / 3),
    # sinh a = a + a^3 H(a^2), |a| <= 1
    "sinh": ((0, mpf(1)), lambda z: (mpmath.sinh(mpmath.sqrt(z)) - mpmath.sqrt(z)) / z ** mpf(1.5),
             lambda z: z ** mpf(1.5) / mpmath.sinh(mpmath.sqrt(z)), mpf(1) / 6),
    # tanh a = a + a^3 K(a^2), |a| <= 0.55
    "tanh": ((0, mpf("0.3025")), lambda z: (mpmath.tanh(mpmath.sqrt(z)) - mpmath.sqrt(z)) / z ** mpf(1.5),
             lambda z: z ** mpf(1.5) / mpmath.tanh(mpmath.sqrt(z)), -mpf(1) / 3),
}
# Largest relative error wanted of each fit, in units of the type's epsilon.
TARGET = mpf(1) / 16


def fit(name: str, ctype: str):
    (a, b), g, w, limit = FITS[name]
    a, b = mpf(a), mpf(b)
    g, w0 = _safe(g, limit), _safe(w, mpf(0))
    # a floor on the weight: where the relative error's weight vanishes (v = 0), any error
    # below the floor's bound is still below the fit's relative error there
    floor = max(w0(a + (b - a) * j / 64) for j in range(65)) * mpf(10) ** -4
    w = lambda v: max(w0(v), floor)  # noqa: E731
    bits = BITS[ctype]
    eps = mpmath.ldexp(1, 1 - bits)
    for degree in range(1, 30):
        c, e = remez(g, w, a, b, degree)
        if e < TARGET * eps:
            break
    coeffs = [round_to(x, bits) for x in c]
    # the error with the rounded coefficients, on the grid
    grid = [a + (b - a) * j / 2000 for j in range(1, 2001)]
    err = max(abs(w0(v) * (g(v) - mpmath.polyval([mpf(x) for x in coeffs[::-1]], v))) for v in grid)
    print(f"{ctype:6} {name:6} degree {degree:2}: minimax {float(e / eps):.3g} eps, "
          f"rounded {float(err / eps):.3g} eps", file=sys.stderr)
    return coeffs


def split(x, part_bits: int, parts: int, last_bits: int):
    """x as a sum of `parts` values: all but the last truncated to part_bits significant bits
    (so their products with integers below 2**(bits - part_bits) are exact), the last rounded
    to last_bits."""
    out = []
    rest = x
    for i in range(parts):
        if i == parts - 1:
            v = round_to(rest, last_bits)
        else:
            e = int(mpmath.floor(mpmath.log(abs(rest), 2)))
            q = mpmath.ldexp(1, e - part_bits + 1)
            v = float(mpmath.floor(rest / q) * q)
        out.append(v)
        rest -= mpf(v)
    return out


def hilo(x, bits):
    hi = round_to(x, bits)
    return [hi, round_to(x - mpf(hi), bits)]


def two_over_pi_words(count: int):
    """The bits of 2/pi after the binary point, 32 to a word, most significant first."""
    with mpmath.workprec(32 * count + 64):
        v = mpmath.floor(2 / mpmath.pi * mpmath.ldexp(1, 32 * count))
    n = int(v)
    return [(n >> (32 * (count - 1 - i))) & 0xFFFFFFFF for i in range(count)]


def main() -> None:
    pi = mpmath.pi
    tables = {}
    for ctype in ("float", "double"):
        bits = BITS[ctype]
        t = {name: fit(name, ctype) for name in FITS}
        # Cody-Waite: |k| < 2**12 (float) / 2**20 (double); parts of 12 / 33 bits
        t["pio2_parts"] = split(pi / 2, 12, 4, 24) if ctype == "float" else split(pi / 2, 33, 4, 53)
        # ln 2 for exp (|k| < 2**8 / 2**11) and for log (|k| < 2**8 / 2**11)
        t["ln2_parts"] = split(mpmath.ln2, bits - 9, 2, bits) if ctype == "float" else split(mpmath.ln2, bits - 12, 2, bits)
        for name, value in (("pio2", pi / 2), ("pio4", pi / 4), ("pi", pi), ("three_pio4", 3 * pi / 4),
                            ("inv_pi", 1 / pi), ("two_over_pi", 2 / pi), ("log2e", 1 / mpmath.ln2),
                            ("ln2", mpmath.ln2)):
            t[name] = hilo(value, bits)
        tables[ctype] = t
    words = two_over_pi_words(40)
    lines = ['"""Constants of the trig prelude parts, written by codegen/gen_trig_tables.py (mpmath):',
             "minimax coefficients (lowest degree first), exact splits, the bits of 2/pi. Do not edit.",
             '"""', "", "TABLES = {"]
    for ctype, t in tables.items():
        lines.append(f"    {ctype!r}: {{")
        for k, v in t.items():
            lines.append(f"        {k!r}: [{', '.join(repr(x) for x in v)}],")
        lines.append("    },")
    lines.append("}")
    lines.append("# 2/pi = sum(TWO_OVER_PI[i] * 2**(-32 * (i + 1)))")
    lines.append("TWO_OVER_PI = [")
    for i in range(0, len(words), 6):
        lines.append("    " + ", ".join(f"0x{w:08X}" for w in words[i:i + 6]) + ",")
    lines.append("]")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
