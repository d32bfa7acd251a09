"""Build logs: clspv's diagnostics cut down to the warnings clang shows by default.

clspv turns on every clang warning (`setEnableAllWarnings`, i.e. -Weverything) and has no
option to choose groups (only -w and -Werror). So an ordinary kernel such as
`int i = get_global_id(0);` warns ("implicit conversion loses integer precision"), every
program logs something (pyopencl then warns on each build), and -Werror fails kernels that
every other OpenCL compiler accepts (the CTS builds exactly that line with -Werror).

vkcl therefore drops from the log the warnings of groups that clang leaves off by default
(recognised by their message: clspv does not print the -W flag), and applies -Werror itself
to the warnings that remain.
"""
from __future__ import annotations

import re

# Messages of warnings that clang emits only with -Wall, -Wextra or -Weverything, seen in
# OpenCL C. Each names its group; keep them anchored so that default-on warnings with
# similar words (e.g. -Wconstant-conversion's "changes value from") stay.
OFF_BY_DEFAULT = tuple(re.compile(p) for p in (
    r"implicit conversion changes signedness",                        # -Wsign-conversion
    r"operand of \? changes signedness",                               # -Wsign-conversion
    r"implicit conversion loses integer precision",                   # -Wshorten-64-to-32, -Wimplicit-int-conversion
    r"implicit conversion loses floating-point precision",            # -Wimplicit-float-conversion
    r"implicit conversion increases floating-point precision",        # -Wdouble-promotion
    r"implicit conversion turns floating-point number into integer",  # -Wfloat-conversion
    r"implicit conversion from .* may lose precision",                # -Wimplicit-int-float-conversion
    r"implicit conversion turns vector to scalar",                    # -Wconversion
    r"no newline at end of file",                                     # -Wnewline-eof
    r"unused parameter ",                                             # -Wunused-parameter
    r"unused variable ",                                              # -Wunused-variable
    r"unused function ",                                              # -Wunused-function
    r"unused label ",                                                 # -Wunused-label
    r"macro is not used",                                             # -Wunused-macros
    r"variable .* set but not used",                                  # -Wunused-but-set-variable
    r"comparison of integers of different signs",                     # -Wsign-compare
    r"no previous prototype for function",                            # -Wmissing-prototypes
    r"no previous extern declaration for non-static variable",        # -Wmissing-variable-declarations
    r"padding (struct|size of|class)",                                # -Wpadded
    r"declaration shadows a",                                         # -Wshadow
    r"cast from .* increases required alignment",                     # -Wcast-align
    r"cast from .* drops .* qualifier",                               # -Wcast-qual
    r"comparing floating point with == or != is unsafe",              # -Wfloat-equal
    r"possible misuse of comma operator",                             # -Wcomma
    r"identifier .* is reserved because",                             # -Wreserved-identifier
    r"macro name is a reserved identifier",                           # -Wreserved-macro-identifier
    r"(code|'break'|'return'|loop) will never be executed",           # -Wunreachable-code*
    r"missing field .* initializer",                                  # -Wmissing-field-initializers
    r"extra ';'",                                                     # -Wextra-semi
    r"empty expression statement has no effect",                      # -Wextra-semi-stmt
    r"switch missing 'default' label",                                # -Wswitch-default
    r"'switch' missing 'default' label",                              # -Wswitch-default
    r"format string is not a string literal",                         # -Wformat-nonliteral
    r"function .* could be declared with attribute 'noreturn'",       # -Wmissing-noreturn
    r"use of GNU .* extension",                                       # -Wgnu-*
    r"variable length array used",                                    # -Wvla
    r"mixing declarations and code",                                  # -Wdeclaration-after-statement
    r"'.*' is a C2x extension",                                       # -Wc2x-extensions
    r"declaration is not declared in any header",                     # -Wmissing-variable-declarations (newer)
    r"misleading indentation; statement is not part of the previous", # -Wmisleading-indentation
    r"variable .* is uninitialized when used here",                   # -Wuninitialized
    r"variable .* is used uninitialized whenever",                    # -Wsometimes-uninitialized
    r"variable .* may be uninitialized when used here",               # -Wconditional-uninitialized
    r"unannotated fall-through between switch labels",                # -Wimplicit-fallthrough
    r"default label in switch which covers all enumeration values",   # -Wcovered-switch-default
    r"'.*' is not defined, evaluates to 0",                           # -Wundef
    r"zero size arrays are an extension",                             # -Wzero-length-array
    r"result of comparison of unsigned expression .* is always",      # -Wtautological-unsigned-zero-compare
    r"result of comparison of unsigned enum expression .* is always", # -Wtautological-unsigned-enum-zero-compare
))

_HEADER = re.compile(r"^\S.*?:\d+(?::\d+)?: (warning|error|fatal error|note): (.*)$")
_INCLUDED = re.compile(r"^In file included from ")
_SUMMARY = re.compile(r"^\d+ (warning|error)s?( and \d+ (warning|error)s?)? generated\.$")


def _blocks(log: str) -> list[tuple[str | None, str, list[str]]]:
    """Split a clang log into (severity, message, lines) blocks: a diagnostic with its
    include stack, source snippet and caret lines; severity None for any other line."""
    blocks: list[tuple[str | None, str, list[str]]] = []
    stack: list[str] = []  # "In file included from" lines wait for their diagnostic
    for line in log.splitlines():
        m = _HEADER.match(line)
        if m:
            blocks.append((m.group(1), m.group(2), stack + [line]))
            stack = []
        elif _INCLUDED.match(line):
            stack.append(line)
        elif line[:1].isspace() and blocks and blocks[-1][0] is not None:
            blocks[-1][2].append(line)
        else:
            blocks.append((None, "", stack + [line]))
            stack = []
    if stack:
        blocks.append((None, "", stack))
    return blocks


def clean(log: str) -> str:
    """The log without the warnings clang leaves off by default (and the notes that belong
    to them), and without clang's "N warnings generated." summaries."""
    if "warning:" not in log:
        return log
    out: list[str] = []
    dropping = False
    for severity, message, lines in _blocks(log):
        if severity == "warning":
            dropping = any(p.match(message) for p in OFF_BY_DEFAULT)
        elif severity != "note":
            dropping = False
        if dropping or (severity is None and len(lines) == 1 and _SUMMARY.match(lines[0])):
            continue
        out.extend(lines)
    return "\n".join(out) + ("\n" if out and log.endswith("\n") else "")


def has_warnings(log: str) -> bool:
    return any(severity == "warning" for severity, _, _ in _blocks(log))


def warnings_as_errors(log: str) -> str:
    """-Werror: each remaining warning reported as an error, as clang does."""
    out = []
    for line in log.splitlines():
        m = _HEADER.match(line)
        if m and m.group(1) == "warning":
            head, _, tail = line.partition(": warning: ")
            line = f"{head}: error: {tail}"
        out.append(line)
    return "\n".join(out) + ("\n" if log.endswith("\n") else "")


_LOCATION = re.compile(r"(\S+?):(\d+):(?=\d+:)")
_GUTTER = re.compile(r"^(\s*)(\d+)( \| )")


def shift_source_lines(log: str, prelude_lines: int) -> str:
    """The program's own line numbers in clspv's log: clspv counts the lines of what it compiled,
    vkcl's prelude included (it ignores `#line`). Locations in the prelude say so."""
    if not prelude_lines:
        return log
    out, current = [], None

    def location(m: re.Match) -> str:
        nonlocal current
        current = m.group(1)
        if current != "source":
            return m.group(0)
        n = int(m.group(2)) - prelude_lines
        return f"source:{n}:" if n > 0 else f"<vkcl prelude>:{m.group(2)}:"

    for line in log.split("\n"):
        line = _LOCATION.sub(location, line)
        g = _GUTTER.match(line)
        if g and current == "source" and int(g.group(2)) > prelude_lines:
            line = f"{g.group(1)}{int(g.group(2)) - prelude_lines}{g.group(3)}" + line[g.end():]
        out.append(line)
    return "\n".join(out)
