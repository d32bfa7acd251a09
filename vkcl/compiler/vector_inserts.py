"""Dynamic inserts into 3-, 8- and 16-element vectors as constant-index inserts (LLVM IR, before
clspv's passes).

`v[k] = x` with `k` not a constant is LLVM's `insertelement <N x T> %v, T %x, i32 %k`. clspv
(pyclspv 0.0.1) gets it wrong for these widths (2 and 4 are right):
- 8 and 16 (its long-vector lowering): `float8 x = p[i]; x[k] = y; p[i] = x;` came out as
  loads of the eight old elements, a store of y to p[i][k], then stores of the eight old
  elements over it: p[i] unchanged, whatever k.
- 3: the compile crashes (SIGSEGV).
Written as one select per element (`k == j ? x : v[j]`) and constant-index inserts, which clspv
compiles right. For OpenCL C, a program that names such a vector type goes through clspv's
front end alone first (driver._run_cl, as for struct copies); IL programs are rewritten the same
way in their SPIR-V (il_lowering).
"""
from __future__ import annotations

import re

from vkcl.compiler.prelude import includes

WIDTHS = (3, 8, 16)
# A vector type of those widths named in the source (or a -D value): only then is the IR read.
_TYPE_WORD = re.compile(rb"\b(?:u?char|u?short|u?int|u?long|half|float|double)(?:3|8|16)\b|ext_vector_type")
_INSERT = re.compile(r'^(\s*)(%(?:[-\w.$]+|"[^"]*")) = insertelement <(3|8|16) x ([^>]+)> (.*)$')
_CONSTANT_INDEX = re.compile(r'^i\d+ -?\d+$')


def may_insert(source: bytes, include_dirs=(), headers: dict | None = None, defines: str = "") -> bool:
    """Whether the program (its headers and -D values too) names a 3-, 8- or 16-element vector
    type: only then can its IR hold a dynamic insert that clspv gets wrong."""
    return includes.mentions(_TYPE_WORD, source, include_dirs, headers, defines)


def _operands(text: str) -> list[str]:
    """`text` split at its top-level commas (constants may hold commas inside brackets)."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c in "<[{(":
            depth += 1
        elif c in ">]})":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _temp(result: str, suffix: str) -> str:
    if result.startswith('%"'):
        return f'{result[:-1]}.vkcl.{suffix}"'
    name = result[1:]
    return f"%vkcl.ins{name}.{suffix}" if name.isdigit() else f"%{name}.vkcl.{suffix}"


def _expand(indent: str, result: str, count: int, elem: str, rest: str) -> list[str] | None:
    ops = _operands(rest)
    if len(ops) != 3:  # vector, element, index (anything more, e.g. metadata: left alone)
        return None
    vector, value, index = ops
    if _CONSTANT_INDEX.match(index) or not value.startswith(elem + " "):
        return None
    vtype, (itype, ivalue) = f"<{count} x {elem}>", index.split(" ", 1)
    lines, last = [], "poison"
    for j in range(count):
        c, e, s = _temp(result, f"c{j}"), _temp(result, f"e{j}"), _temp(result, f"s{j}")
        out = result if j == count - 1 else _temp(result, f"v{j}")
        lines += [f"{indent}{c} = icmp eq {itype} {ivalue}, {j}",
                  f"{indent}{e} = extractelement {vtype} {vector}, i32 {j}",
                  f"{indent}{s} = select i1 {c}, {value}, {elem} {e}",
                  f"{indent}{out} = insertelement {vtype} {last}, {elem} {s}, i32 {j}"]
        last = out
    return lines


def rewrite(ir: str) -> str | None:
    """The IR with its dynamic inserts into 3-, 8- and 16-element vectors written out per
    element, or None when it has none."""
    if "insertelement <" not in ir:
        return None
    out, changed = [], False
    for line in ir.splitlines():
        m = _INSERT.match(line) if "insertelement <" in line else None
        new = _expand(*m.groups()[:2], int(m.group(3)), m.group(4), m.group(5)) if m else None
        if new is None:
            out.append(line)
        else:
            out += new
            changed = True
    return "\n".join(out) + "\n" if changed else None
