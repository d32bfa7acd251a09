"""Struct copies into or out of a private array's element at a run-time index, as selects over
the array's elements (LLVM IR, before clspv; called by struct_copies for such memcpys).

`T a[2]; a[i & 1] = in[n + i - 1];` is a memcpy between global memory and
`getelementptr [2 x T], ptr %a, i64 0, i64 %idx`. clspv (pyclspv 0.0.1) got every form of it
wrong: left as a memcpy, it crashed (SIGSEGV: `struct { double a[2]; }`), ran until the compile
timeout (padded structs) or wrote SPIR-V that lavapipe died on (`struct { float3 v; int k; }`:
element indices of -1 written as 2^31 - 1 and 2^32 - 1 once LLVM folded the index); member by
member through the dynamic index it wrote pointer arithmetic in Function memory, which Vulkan
does not allow. Here each scalar or vector member k of the copy is read once from the other
side and, for each element j of the array (a constant index, so LLVM's SROA can keep the array
in registers),

    into the element:   a[j].k = (idx == j) ? value : a[j].k
    out of the element: value = (idx == N-1) ? a[N-1].k : ... (idx == 1) ? a[1].k : a[0].k

which is the copy for every index in [0, N) (C leaves any other undefined). Arrays of up to
MAX_ELEMENTS elements and copies of up to MAX_SELECTS member-element pairs; a volatile copy
stays a memcpy.
"""
from __future__ import annotations

import re

from vkcl.compiler.llvm_types import (Module, ParseError, Reader, Type, alignment_at, gep_operands,
                                      pointer_type, type_key)

MAX_ELEMENTS, MAX_SELECTS = 16, 512
_INDEX = re.compile(r'^(i\d+) (%(?:[-\w.$]+|"[^"]*")|\d+)$')
_ZERO = re.compile(r'^i\d+ 0$')
_ALIGN = re.compile(r'\balign (\d+)')


class Element:
    """A private array's element: `getelementptr [N x T], ptr base, 0, idx`. At a constant index
    (`fixed`) the copy is made member by member without selects: as a memcpy or a typed copy,
    clspv folded `a[0] = in[n + i - 1]` into the same invalid -1 element indices."""

    def __init__(self, base: str, array: Type, count: int, elem: Type, index_type: str, index: str, align: int):
        self.base, self.array, self.count, self.elem = base, array, count, elem
        self.index_type, self.index, self.align = index_type, index, align
        self.fixed = int(index) if index.isdigit() else None
        self.depth = 0  # members in from the copy's pointer to the element (1: the array itself)

    def positions(self) -> range:
        return range(self.fixed, self.fixed + 1) if self.fixed is not None else range(self.count)


def element(module: Module, value: str, pointees: dict) -> Element | None:
    """The Element that `value` (a private pointer, as the memcpy names it) is, or None."""
    found = pointees.get(value.strip())
    if isinstance(found, tuple) and found[0] == "alloca":  # a[0]: clang names the array itself
        return _whole_array(module, value.strip(), found[1])
    if not isinstance(found, tuple) or found[0] != "getelementptr":
        return None
    gep = gep_operands(re.sub(r'^(?:(?:inbounds|nuw|nusw)\s+)*', "", found[1].strip()))
    if gep is None or len(gep[1]) != 4 or not _ZERO.match(gep[1][2].strip()):
        return None
    array, parts = gep
    base = re.match(r'^ptr (%(?:[-\w.$]+|"[^"]*"))$', parts[1].strip())
    index = _INDEX.match(parts[3].strip())
    base_def = pointees.get(base.group(1)) if base else None
    if not index or not isinstance(base_def, tuple) or base_def[0] != "alloca":
        return None
    try:
        r = module.resolve(array)
        if r.kind != "array" or not 1 < r.count <= MAX_ELEMENTS or _leading(base_def[1]) != type_key(array):
            return None
        if index.group(2).isdigit() and int(index.group(2)) >= r.count:
            return None
        align = _ALIGN.search(base_def[1])
        return Element(base.group(1), array, r.count, r.elem, index.group(1), index.group(2),
                       int(align.group(1)) if align else 1)
    except ParseError:
        return None


def _whole_array(module: Module, base: str, alloca: str) -> Element | None:
    """Element 0 of the private array `base` allocates (the copy then reaches it one member in)."""
    try:
        array = Reader(alloca).type()
        r = module.resolve(array)
        if r.kind != "array" or not 1 < r.count <= MAX_ELEMENTS:
            return None
    except ParseError:
        return None
    align = _ALIGN.search(alloca)
    e = Element(base, array, r.count, r.elem, "i64", "0", int(align.group(1)) if align else 1)
    e.depth = 1
    return e


def copy(lines: list, indent: str, name: str, module: Module, copy_t: Type, members, src, dst) -> bool:
    """Append the copy of `copy_t` (its `members`, as struct_copies._members gives them) from
    `src` to `dst`, each (space, align, pointer, Element or None), to `lines`; False (and
    nothing appended) where it would pass MAX_SELECTS."""
    sides = [e for e in (src[3], dst[3]) if e is not None]
    if sum(len(e.positions()) for e in sides) * len(members) > MAX_SELECTS:
        return False
    size = module.size(copy_t)
    for e in sides:
        side = "s" if e is src[3] else "d"
        for j in e.positions() if e.fixed is None else ():
            lines.append(f"{indent}{name}.{side}is{j} = icmp eq {e.index_type} {e.index}, {j}")
    for k, (path, t, offset) in enumerate(members):
        value = _read(lines, indent, name, k, copy_t, path, t, offset, size, src)
        _write(lines, indent, name, k, copy_t, path, t, offset, size, dst, value)
    return True


def _read(lines, indent, name, k, copy_t, path, t, offset, size, side) -> str:
    space, align, ptr, e = side
    if e is None:
        p = pointer_type(space)
        lines.append(f"{indent}{name}.s{k} = getelementptr inbounds {copy_t.text}, {p} {ptr}, i32 0{path}")
        lines.append(f"{indent}{name}.v{k} = load {t.text}, {p} {name}.s{k}, align {alignment_at(align, offset)}")
        return f"{name}.v{k}"
    chosen = None
    for j in e.positions():
        at = f"{name}.s{k}_{j}"
        lines.append(f"{indent}{at} = getelementptr inbounds {e.array.text}, ptr {e.base}, i64 0, i64 {j}{path}")
        lines.append(f"{indent}{at}.v = load {t.text}, ptr {at}, align {alignment_at(e.align, j * size + offset)}")
        if chosen is None:
            chosen = f"{at}.v"
        else:
            lines.append(f"{indent}{at}.c = select i1 {name}.sis{j}, {t.text} {at}.v, {t.text} {chosen}")
            chosen = f"{at}.c"
    return chosen


def _write(lines, indent, name, k, copy_t, path, t, offset, size, side, value: str) -> None:
    space, align, ptr, e = side
    if e is None:
        p = pointer_type(space)
        lines.append(f"{indent}{name}.d{k} = getelementptr inbounds {copy_t.text}, {p} {ptr}, i32 0{path}")
        lines.append(f"{indent}store {t.text} {value}, {p} {name}.d{k}, align {alignment_at(align, offset)}")
        return
    for j in e.positions():
        at, a = f"{name}.d{k}_{j}", alignment_at(e.align, j * size + offset)
        lines.append(f"{indent}{at} = getelementptr inbounds {e.array.text}, ptr {e.base}, i64 0, i64 {j}{path}")
        if e.fixed is not None:
            lines.append(f"{indent}store {t.text} {value}, ptr {at}, align {a}")
            continue
        lines.append(f"{indent}{at}.o = load {t.text}, ptr {at}, align {a}")
        lines.append(f"{indent}{at}.n = select i1 {name}.dis{j}, {t.text} {value}, {t.text} {at}.o")
        lines.append(f"{indent}store {t.text} {at}.n, ptr {at}, align {a}")


def _leading(text: str) -> str | None:
    try:
        return type_key(Reader(text).type())
    except ParseError:
        return None
