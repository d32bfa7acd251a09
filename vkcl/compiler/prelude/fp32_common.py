"""What the float builtin parts (fp32_*.py) share: the overload set that replaces a builtin's
float and half members and leaves its double ones where they were.

A replaced builtin becomes `#define name(...) __vkcl_f32_name(...)` (function-like: a variable or
kernel argument of that name is left alone), an overload set whose float members
are the part's scalar function on each component, whose half members are the float ones on
the half values (a half is exact in float; the float result rounded to half is within the
half limits), and whose double members call `name` as it stands before the part: clspv's
builtin, or a double part put in front (prelude/fp64*.py define `__vkcl_name` sets of their
own). The part then takes the name over with #undef and #define, so the two kinds of parts
compose in either presence, provided the float parts come after the double ones in PARTS.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import WIDTHS, guarded

# Internal to the program by attribute (OpenCL C 1.1 rejects `static`), overloadable; small
# helpers also inlined, the scalar functions left to LLVM (one copy however many callers).
INTERNAL = "__attribute__((overloadable, internal_linkage))"
HELPER = "inline __attribute__((overloadable, always_inline, internal_linkage))"
# Output pointers: the generic address space where the language has it (every named one
# converts to it), else each named one, private first (the others call its members): fewer
# overloads, which clang resolves faster.
SPACES = ("__private", "__global", "__local")
GENERIC = "__OPENCL_C_VERSION__ == 200 || defined(__opencl_c_generic_address_space)"
WORKERS = ("__private", "__generic")  # the spaces whose members compute; the others call them


def by_space(member) -> str:
    """member(space) for the generic space where there is one, else for each named space."""
    named = "".join(member(space) for space in SPACES)
    return f"#if {GENERIC}\n{member('__generic')}#else\n{named}#endif\n"


def _type(kind: str, scalar: str, w: str) -> str:
    """g: the floating type; i: int (intn for vectors); Q: an int output pointer's element."""
    return scalar + w if kind == "g" else "int" + w


def _params(params: str, scalar: str, w: str, space: str | None) -> str:
    return ", ".join(f"{space} {_type(c, scalar, w)} *a{k}" if c == "Q" else f"{_type(c, scalar, w)} a{k}"
                     for k, c in enumerate(params))


_HALF = {"4": "2", "8": "4", "16": "8"}


def _member(name: str, fn: str, scalar: str, params: str, w: str, space: str | None) -> str:
    """The float or half member of width w: `fn` (a float function) on a scalar, the narrower
    member on each half of a vector of 4 or more (on each component of 2 or 3: short texts,
    which clang parses faster); an output pointer outside private memory gets what the
    private member wrote."""
    head = f"{HELPER} {scalar}{w} __vkcl_f32_{name}({_params(params, scalar, w, space)})"
    out = params.find("Q")
    if out >= 0 and space not in WORKERS:
        args = ", ".join("&t" if p == "Q" else f"a{k}" for k, p in enumerate(params))
        return (f"{head} {{ int{w} t; {scalar}{w} r = __vkcl_f32_{name}({args}); "
                f"*a{out} = t; return r; }}\n")
    if not w:
        cast, back = ("(float)", "(half)") if scalar == "half" else ("", "")
        args = ", ".join("&t" if p == "Q" else (f"{cast}a{k}" if p == "g" else f"a{k}") for k, p in enumerate(params))
        if out < 0:
            return f"{head} {{ return {back}{fn}({args}); }}\n"
        return f"{head} {{ int t; {scalar} r = {back}{fn}({args}); *a{out} = t; return r; }}\n"
    parts = [f".s{i}" for i in range(int(w))] if w in ("2", "3") else [".lo", ".hi"]
    tw = "" if w in ("2", "3") else _HALF[w]  # the width of each part

    def call(k: int, c: str) -> str:
        args = ", ".join(f"&t{k}" if p == "Q" else f"a{j}{c}" for j, p in enumerate(params))
        return f"__vkcl_f32_{name}({args})"
    if out < 0:
        return f"{head} {{ return ({scalar}{w})({', '.join(call(k, c) for k, c in enumerate(parts))}); }}\n"
    temps = ", ".join(f"t{k}" for k in range(len(parts)))
    results = ", ".join(f"r{k} = {call(k, c)}" for k, c in enumerate(parts))
    return (f"{head} {{ int{tw} {temps}; {scalar}{tw} {results}; *a{out} = (int{w})({temps}); "
            f"return ({scalar}{w})({', '.join(f'r{k}' for k in range(len(parts)))}); }}\n")


def _forward(name: str, scalar: str, params: str, w: str, space: str | None) -> str:
    """A member that calls `name` as it stands before the part (the builtin, or a part in front)."""
    args = ", ".join(f"a{k}" for k in range(len(params)))
    return (f"{HELPER} {scalar}{w} __vkcl_f32_{name}({_params(params, scalar, w, space)}) "
            f"{{ return {name}({args}); }}\n")


def overload_set(name: str, params: str, fn: str, float_members: bool = True, half: bool = True) -> str:
    """The overloads replacing builtin `name` (params: one letter per parameter, see _type),
    the float members from the scalar float function `fn` (called with the parameters in order,
    an output pointer as int *), then the #define. float_members=False leaves float to the
    builtin (fn serves half only), half=False half."""
    def members(scalar: str, space: str | None) -> str:
        own = (scalar == "float" and float_members) or (scalar == "half" and half)
        return "".join(_member(name, fn, scalar, params, w, space) if own else _forward(name, scalar, params, w, space)
                       for w in WIDTHS)
    text = {scalar: by_space(lambda space, s=scalar: members(s, space)) if "Q" in params else members(scalar, None)
            for scalar in ("double", "float", "half")}
    return (guarded("double", text["double"]) + text["float"] + guarded("half", text["half"]) +
            define(name, len(params), f"__vkcl_f32_{name}"))


def define(name: str, arity: int, target: str) -> str:
    """`name` (a macro a part in front may have defined) as a function-like macro calling target."""
    args = ", ".join(f"a{k}" for k in range(arity))
    return f"#undef {name}\n#define {name}({args}) {target}({args})\n"


class Part:
    """A prelude part: the builtins it replaces and its text."""

    def __init__(self, names: tuple[str, ...], text: str):
        self.NAMES, self.TEXT = names, text
