"""fdim, maxmag, minmag and fract on float and half vectors of 2, 3 and 4: clspv crashes on
them (SIGSEGV: its library builds them from LLVM's vector maxnum / maximumnum / minimumnum
intrinsics, which it cannot lower; the OpenCL-CTS's math_brute_force could not build them).
Those widths call the builtin on each component; scalars and 8 and 16 lanes, which compile,
call it as they are; double members forward (fp32_common).
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import WIDTHS, guarded
from vkcl.compiler.prelude.fp32_common import HELPER, WORKERS, Part, by_space, define

_LANES = {"2": 2, "3": 3, "4": 4, "8": 8, "16": 16}
SPLIT = ("2", "3", "4")


def _member(name: str, t: str, w: str, pointer: str | None) -> str:
    """fdim, maxmag, minmag: (x, y); fract: (x, pointer to the floor)."""
    if pointer is None:
        head = f"{HELPER} {t}{w} __vkcl_f32_{name}({t}{w} x, {t}{w} y)"
        if w not in SPLIT:
            return f"{head} {{ return {name}(x, y); }}\n"
        comps = ", ".join(f"{name}(x.s{i}, y.s{i})" for i in range(_LANES[w]))
        return f"{head} {{ return ({t}{w})({comps}); }}\n"
    head = f"{HELPER} {t}{w} __vkcl_f32_{name}({t}{w} x, {pointer} {t}{w} *p)"
    if w not in SPLIT or t == "double":
        return f"{head} {{ return {name}(x, p); }}\n"
    if pointer not in WORKERS:  # what the private member wrote
        return f"{head} {{ {t}{w} q, r = __vkcl_f32_{name}(x, &q); *p = q; return r; }}\n"
    n = _LANES[w]
    floors = ", ".join(f"f{i}" for i in range(n))
    results = ", ".join(f"r{i} = {name}(x.s{i}, &f{i})" for i in range(n))
    return (f"{head} {{ {t} {floors}; {t} {results}; *p = ({t}{w})({floors}); "
            f"return ({t}{w})({', '.join(f'r{i}' for i in range(n))}); }}\n")


def _set(name: str, pointer: bool) -> str:
    def members(t: str, space: str | None) -> str:
        return "".join(_member(name, t, w, space) for w in WIDTHS)
    text = {t: by_space(lambda space, t=t: members(t, space)) if pointer else members(t, None)
            for t in ("double", "float", "half")}
    return (guarded("double", text["double"]) + text["float"] + guarded("half", text["half"]) +
            define(name, 2, f"__vkcl_f32_{name}"))


NAMES = ("fdim", "maxmag", "minmag", "fract")
PARTS = tuple(Part((name,), _set(name, name == "fract")) for name in NAMES)
