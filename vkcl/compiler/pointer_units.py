"""Pointer arithmetic in the unit it ends in (LLVM IR, before clspv's passes).

clspv (pyclspv 0.0.1) folds a `getelementptr` of a small type on one of a larger type into the
larger type's units and drops the remainder: `((global int *)(d + k))[i]` for a `double *d`
wrote word `(2k + i) & ~1` (every odd word landed on the even one before it), and through a
`__local double` array or a struct the odd words read back as the even ones. pyopencl's scans on
a GPU store their results so (`(__global int *) (partial_scan_buffer + unit_base)`, indexed by
int), and a float64 scan gave zeros. Chains that stay in one unit, or only grow (`(int *) d +
2 * k`, bytes then ints on a buffer), clspv compiles right.

So, where a chain of GEPs of scalar types (ints, floats) narrows, its GEPs are written again in
the narrowest unit, from the chain's root, with the same address:
- a GEP whose base is a GEP of a larger scalar type (`((int *)(d + k))[i]`);
- a GEP of a larger type stored in a pointer variable (an alloca) whose every use is the base of
  a GEP, load or store of a smaller scalar type: the variable is given the pointer in that unit
  (`int *p = (int *)(d + k); p[i]`; clspv's mem2reg then meets a chain in one unit).
Byte offsets that are not a whole number of units, pointers whose uses are not all known
(passed to calls, stored elsewhere, compared), and private or generic pointers are left alone.
"""
from __future__ import annotations

import re

from vkcl.compiler.llvm_types import Module, ParseError, Reader, Type, split_operands

_NAME = r'%(?:[-\w.$]+|"[^"]*")'
_PTR = r'ptr addrspace\((?:1|2|3)\)'
_ALLOCA = re.compile(rf'^\s*({_NAME}) = alloca ({_PTR}),')
_STORE_PTR = re.compile(rf'^(\s*)store ({_PTR}) ({_NAME}), ptr ({_NAME})(,.*)?$')
_LOAD_PTR = re.compile(rf'^\s*({_NAME}) = load {_PTR}, ptr ({_NAME})(?:,.*)?$')
_GEP = re.compile(rf'^(\s*)({_NAME}) = getelementptr ((?:(?:inbounds|nuw|nusw)\s+)*)(.*)$')
_LOAD = re.compile(rf'^\s*{_NAME} = load (?:volatile )?(.*?), ({_PTR}) ({_NAME})(?:,.*)?$')
_STORE = re.compile(rf'^\s*store (?:volatile )?(.*) (\S+), ({_PTR}) ({_NAME})(?:,.*)?$')
_INDEX = re.compile(rf'^(i\d+) (-?\d+|{_NAME})$')
_NAMES = re.compile(_NAME)


class _Gep:
    """One GEP instruction with a single index: `name = getelementptr T, ptr base, index`."""

    def __init__(self, line_no: int, indent: str, name: str, t: Type, space: str, base: str,
                 index: tuple[str, str], tail: str):
        self.line_no, self.indent, self.name, self.t = line_no, indent, name, t
        self.space, self.base, self.index, self.tail = space, base, index, tail


def rewrite(ir: str) -> str | None:
    """The IR with its narrowing pointer arithmetic in the narrowest unit, or None when it has none."""
    if "getelementptr" not in ir:
        return None
    module = Module(ir)
    lines = ir.splitlines()
    changed, start, serial = False, None, [0]
    for i, line in enumerate(lines):
        if line.startswith("define "):
            start = i
        elif line.startswith("}") and start is not None:
            changed |= _function(lines, start, i, module, serial)
            start = None
    return "\n".join(lines) + "\n" if changed else None


def _function(lines: list[str], first: int, last: int, module: Module, serial: list[int]) -> bool:
    geps: dict[str, _Gep] = {}
    allocas, stores, loads = set(), {}, {}
    uses: dict[str, list[int]] = {}
    for i in range(first + 1, last):
        line = lines[i]
        if "getelementptr" in line and (g := _gep(i, line)):
            geps[g.name] = g
        elif (m := _ALLOCA.match(line)):
            allocas.add(m.group(1))
        elif (m := _STORE_PTR.match(line)):
            stores.setdefault(m.group(4), []).append(i)
        elif (m := _LOAD_PTR.match(line)):
            loads.setdefault(m.group(2), []).append(m.group(1))
        for name in set(_NAMES.findall(line.split(" = ", 1)[1] if re.match(rf'^\s*{_NAME} = ', line) else line)):
            uses.setdefault(name, []).append(i)
    edits: dict[int, list[str]] = {}
    for g in geps.values():  # a GEP on a wider one
        base = geps.get(g.base)
        size = _scalar_size(module, g.t)
        if base is not None and size and _narrows(module, geps, base, size):
            folded = _fold(module, geps, base, size, g.t.text, g.indent, serial, extra=g.index)
            if folded:
                lines_, value = folded
                edits[g.line_no] = lines_[:-1] + [f"{g.indent}{g.name} = {lines_[-1]}{g.tail}"]
    for var in allocas:  # a pointer variable given a wider GEP
        unit = _unit_of_uses(module, lines, geps, loads.get(var, []), uses)
        if unit is None:
            continue
        size, type_text = unit
        for i in stores.get(var, []):
            m = _STORE_PTR.match(lines[i])
            value = geps.get(m.group(3))
            if value is None or i in edits or not _narrows(module, geps, value, size):
                continue
            folded = _fold(module, geps, value, size, type_text, m.group(1), serial)
            if folded:
                new, name = folded[0][:-1], _fresh(serial)
                new.append(f"{m.group(1)}{name} = {folded[0][-1]}")
                new.append(f"{m.group(1)}store {m.group(2)} {name}, ptr {m.group(4)}{m.group(5) or ''}")
                edits[i] = new
    for i in sorted(edits, reverse=True):
        lines[i:i + 1] = edits[i]
    return bool(edits)


def _gep(i: int, line: str) -> _Gep | None:
    m = _GEP.match(line)
    if not m:
        return None
    body = m.group(4)
    tail_m = re.search(r'(,\s*![-\w.]+\s+!.*)$', body)
    tail = tail_m.group(1) if tail_m else ""
    body = body[:tail_m.start()] if tail_m else body
    try:
        reader = Reader(body)
        t = reader.type()
    except ParseError:
        return None
    parts = [p.strip() for p in split_operands(body[reader.pos:])]
    if len(parts) != 3 or parts[0]:
        return None
    base = re.fullmatch(rf'({_PTR}) ({_NAME}|@(?:[-\w.$]+|"[^"]*"))', parts[1])
    index = _INDEX.match(parts[2])
    if not base or not index:
        return None
    return _Gep(i, m.group(1), m.group(2), t, base.group(1), base.group(2), (index.group(1), index.group(2)), tail)


def _scalar_size(module: Module, t: Type) -> int:
    """The size of an int or float type (0 for anything else)."""
    try:
        return module.size(t) if module.resolve(t).kind in ("int", "float") else 0
    except ParseError:
        return 0


def _narrows(module: Module, geps: dict, g: _Gep, size: int) -> bool:
    """Whether the scalar chain ending at `g` has a GEP wider than `size`, all of them multiples of it."""
    wider, seen = False, 0
    while g is not None and seen < 64:
        s = _scalar_size(module, g.t)
        if not s:
            break
        if s % size:
            return False
        wider |= s > size
        g, seen = geps.get(g.base), seen + 1
    return wider


def _fold(module: Module, geps: dict, g: _Gep, size: int, type_text: str, indent: str,
          serial: list[int], extra: tuple[str, str] | None = None) -> tuple[list[str], str] | None:
    """Lines computing the chain ending at `g` (plus `extra` units) as one GEP of `type_text`
    from the chain's root; the last line is the GEP's right-hand side."""
    terms, constant, root, space = [], 0, None, g.space
    if extra is not None:
        terms.append((extra, 1))
    while g is not None:
        s = _scalar_size(module, g.t)
        if not s:
            break
        terms.append((g.index, s // size))
        root = g.base
        g = geps.get(g.base)
    out, total = [], None
    for (ty, value), scale in terms:
        if not value.startswith("%"):
            constant += int(value) * scale
            continue
        if ty != "i64":
            wide = _fresh(serial)
            out.append(f"{indent}{wide} = sext {ty} {value} to i64")
            value = wide
        if scale != 1:
            scaled = _fresh(serial)
            out.append(f"{indent}{scaled} = mul i64 {value}, {scale}")
            value = scaled
        if total is not None:
            summed = _fresh(serial)
            out.append(f"{indent}{summed} = add i64 {total}, {value}")
            value = summed
        total = value
    if constant:
        if total is None:
            total = str(constant)
        else:
            summed = _fresh(serial)
            out.append(f"{indent}{summed} = add i64 {total}, {constant}")
            total = summed
    out.append(f"getelementptr inbounds {type_text}, {space} {root}, i64 {total or 0}")
    return out, total


def _fresh(serial: list[int]) -> str:
    serial[0] += 1
    return f"%__vkcl_unit{serial[0]}"


def _unit_of_uses(module: Module, lines: list[str], geps: dict, loaded: list[str], uses: dict):
    """(size, type) of the narrowest scalar a pointer variable's loads are indexed, loaded or
    stored as; None if some use is anything else (or there is none)."""
    best = None
    for name in loaded:
        for i in uses.get(name, []):
            line = lines[i]
            t = None
            g = geps.get(line.split(" = ", 1)[0].strip()) if "getelementptr" in line else None
            if g is not None and g.base == name:
                t = g.t
            elif (m := _LOAD.match(line)) and m.group(3) == name:
                t = _type(m.group(1))
            elif (m := _STORE.match(line)) and m.group(4) == name and m.group(2) != name:
                t = _type(m.group(1))
            size = _scalar_size(module, t) if t is not None else 0
            if not size:
                return None
            if best is None or size < best[0]:
                best = (size, t.text)
    return best


def _type(text: str) -> Type | None:
    try:
        return Reader(text).type()
    except ParseError:
        return None
