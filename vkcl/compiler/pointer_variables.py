"""Private variables holding global pointers kept as 64-bit integers (LLVM IR, before clspv's
passes), for programs clspv crashed on otherwise.

Rodinia's heartwall picks its buffers per work-group (`if (bx < endoPoints) { d_in =
&d_endoT[...]; ... } else { d_in = &d_epiT[...]; ... }`). LLVM's StructurizeCFG turns such an
if/else into two guarded blocks and a flow block, whose phi of the pointer takes `poison` on the
path that skips the else; clspv's SPIR-V writer could not type that poison pointer and crashed
(SIGSEGV). Kept as integers, the phis are of i64 (poison is an integer then), and each use is an
`inttoptr` of the value, which clspv writes as OpConvertUToPtr under physical addressing: the
same addresses, loaded and stored as before.

Only `alloca ptr addrspace(1)` variables whose every use is a whole load or store of the pointer
are rewritten; one whose address goes anywhere else (a call, a GEP, a copy) is left as it is.
The driver builds a program this way only after clspv crashed on it (build_ways).
"""
from __future__ import annotations

import re

_NAME = r'%(?:[-\w.$]+|"[^"]*")'
_ALLOCA = re.compile(rf'^(\s*)({_NAME}) = alloca ptr addrspace\(1\)(, align \d+)?(.*)$')
_LOAD = re.compile(rf'^(\s*)({_NAME}) = load (volatile )?ptr addrspace\(1\), ptr ({_NAME})(, align \d+)?(.*)$')
_STORE = re.compile(rf'^(\s*)store (volatile )?ptr addrspace\(1\) (.+?), ptr ({_NAME})(, align \d+)?(.*)$')
_TOKEN = re.compile(_NAME)
_TBAA = re.compile(r',\s*!tbaa !\d+')


def rewrite(ir: str) -> str | None:
    """The IR with its private global-pointer variables as i64 ones, or None when it has none."""
    if "alloca ptr addrspace(1)" not in ir:
        return None
    out: list[str] = []
    body: list[str] | None = None
    changed = False
    for line in ir.split("\n"):
        if body is None:
            out.append(line)
            if line.startswith("define ") and line.rstrip().endswith("{"):
                body = []
        elif line.startswith("}"):
            rewritten = _function(body)
            changed |= rewritten is not None
            out.extend(rewritten if rewritten is not None else body)
            out.append(line)
            body = None
        else:
            body.append(line)
    if body is not None:
        out.extend(body)
    return "\n".join(out) if changed else None


def _function(body: list[str]) -> list[str] | None:
    variables = {m.group(2) for line in body if (m := _ALLOCA.match(line))}
    if not variables:
        return None
    kept = set(variables)
    for line in body:
        if _ALLOCA.match(line):
            continue
        m = _LOAD.match(line)
        if m and m.group(4) in kept:
            continue
        m = _STORE.match(line)
        if m and m.group(4) in kept:
            if any(t in kept for t in _TOKEN.findall(m.group(3))):
                kept -= set(_TOKEN.findall(m.group(3)))  # the variable's own address stored
            continue
        for token in _TOKEN.findall(line):
            if token in kept:
                kept.discard(token)  # its address goes elsewhere: left as it is
    if not kept:
        return None
    out: list[str] = []
    serial = [0]

    def access(volatile: str | None, var: str, align: str | None, rest: str) -> tuple[str, str, str]:
        """A fresh name for the integer, and what goes before and after its operand list's `, ptr`."""
        serial[0] += 1
        return f"%__vkcl_ptrint{serial[0]}", f"{volatile or ''}i64", f", ptr {var}{align or ''}{_TBAA.sub('', rest)}"

    for line in body:
        m = _ALLOCA.match(line)
        if m and m.group(2) in kept:
            out.append(f"{m.group(1)}{m.group(2)} = alloca i64{m.group(3) or ''}{m.group(4)}")
            continue
        m = _LOAD.match(line)
        if m and m.group(4) in kept:
            indent, name, volatile, var, align, rest = m.groups()
            word, kind, tail = access(volatile, var, align, rest)
            out.append(f"{indent}{word} = load {kind}{tail}")
            out.append(f"{indent}{name} = inttoptr i64 {word} to ptr addrspace(1)")
            continue
        m = _STORE.match(line)
        if m and m.group(4) in kept:
            indent, volatile, value, var, align, rest = m.groups()
            word, kind, tail = access(volatile, var, align, rest)
            out.append(f"{indent}{word} = ptrtoint ptr addrspace(1) {value} to i64")
            out.append(f"{indent}store {kind} {word}{tail}")
            continue
        out.append(line)
    return out
