"""Loads from an array of pointers at a run-time index, as a select among its elements (LLVM IR,
before clspv's passes; a program that declares an array of pointers goes through the front end's
IR for it: driver._run_cl).

clspv crashed on `global float *p[2] = {a, b}; p[sel][i] = 1.0f;` (SIGSEGV; SIGABRT "Invalid
bitcast ... Broken module found" in bigger programs): darktable's Markesteijn demosaic indexes
`global float *rgb[4]` by `c ^ d`. A constant index built. So each `load` of a pointer from a
`getelementptr [N x ptr], ptr %array, i64 0, i64 %i` of an alloca'd array becomes N loads at
constant indices and a chain of selects on %i (N at most MAX_ELEMENTS). An index outside the
array (undefined behaviour) gets element 0. Stores through such an address are left alone.
"""
from __future__ import annotations

import re

MAX_ELEMENTS = 16
_ALLOCA = re.compile(r"^\s*(%[-\w.$]+) = alloca \[(\d+) x (ptr(?: addrspace\(\d+\))?)\]")
_GEP = re.compile(r"^(\s*)(%[-\w.$]+) = getelementptr (?:inbounds |nuw |nusw )*\[(\d+) x (ptr(?: addrspace\(\d+\))?)\], ptr "
                  r"(%[-\w.$]+), i64 0, i64 (%[-\w.$]+)\s*$")
_LOAD = re.compile(r"^(\s*)(%[-\w.$]+) = load (ptr(?: addrspace\(\d+\))?), ptr (%[-\w.$]+)(, align \d+)?\s*$")


def may_index(source: bytes) -> bool:
    """Whether the program may declare an array of pointers (`float *p[2]`)."""
    return re.search(rb"\*\s*(?:const\s+|restrict\s+|volatile\s+)*\w+\s*\[[^\]\n]*\]\s*[=;,)]", source) is not None


def rewrite(ir: str) -> str | None:
    """The IR with such loads made selects, or None where it has none."""
    lines = ir.splitlines()
    arrays = {m.group(1): (int(m.group(2)), m.group(3)) for m in map(_ALLOCA.match, lines) if m}
    addresses = {}  # the GEP's result -> (array, elements, pointer type, index)
    for line in lines:
        m = _GEP.match(line)
        if m and m.group(5) in arrays and arrays[m.group(5)] == (int(m.group(3)), m.group(4)) \
                and 1 < int(m.group(3)) <= MAX_ELEMENTS:
            addresses[m.group(2)] = (m.group(5), int(m.group(3)), m.group(4), m.group(6))
    if not addresses:
        return None
    stored = {a for a in addresses for line in lines if re.search(rf"\bstore .*, ptr {re.escape(a)}(?![-\w.$])", line)}
    out, changed = [], False
    for line in lines:
        m = _LOAD.match(line)
        if not m or m.group(4) not in addresses or m.group(4) in stored:
            out.append(line)
            continue
        indent, value, ty = m.group(1), m.group(2), m.group(3)
        array, n, _, index = addresses[m.group(4)]
        align = m.group(5) or ""
        name = "vkcl.pa." + value[1:].strip('"')  # (a named value: %7's parts are not numbered)
        chosen = f"%{name}.e0"
        out.append(f"{indent}{chosen} = load {ty}, ptr {array}{align}")
        for k in range(1, n):
            out += [f"{indent}%{name}.p{k} = getelementptr inbounds [{n} x {ty}], ptr {array}, i64 0, i64 {k}",
                    f"{indent}%{name}.e{k} = load {ty}, ptr %{name}.p{k}{align}",
                    f"{indent}%{name}.c{k} = icmp eq i64 {index}, {k}"]
            last = value if k == n - 1 else f"%{name}.s{k}"
            out.append(f"{indent}{last} = select i1 %{name}.c{k}, {ty} %{name}.e{k}, {ty} {chosen}")
            chosen = last
        changed = True
    return "\n".join(out) + "\n" if changed else None
