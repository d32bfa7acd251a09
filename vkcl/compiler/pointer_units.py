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
The wider GEPs of a chain may also step over vectors, structs or unions (pointer arithmetic on a
`cdouble_t *`: pyopencl's complex128 scans on a GPU store their results through
`(__global int *)(partial_scan_buffer + unit_base)` too, and every odd word of the 16-byte
unions landed on the even word before it). Byte offsets that are not a whole number of units,
pointers whose uses are not all known (passed to calls, stored elsewhere, compared), and private
or generic pointers are left alone.
"""
from __future__ import annotations

import re

from vkcl.compiler.llvm_types import Module, ParseError, Reader, Type
from vkcl.compiler.prelude import includes

_NAME = r'%(?:[-\w.$]+|"[^"]*")'
_PTR = r'ptr addrspace\((?:1|2|3)\)'
_ALLOCA = re.compile(rf'^\s*({_NAME}) = alloca ({_PTR}),')
_STORE_PTR = re.compile(rf'^(\s*)store ({_PTR}) ({_NAME}), ptr ({_NAME})(,.*)?$')
_LOAD_PTR = re.compile(rf'^\s*({_NAME}) = load {_PTR}, ptr ({_NAME})(?:,.*)?$')
# the unit: a scalar, a vector of scalars or a named struct or union
_GEP = re.compile(rf'^(\s*)({_NAME}) = getelementptr (?:(?:inbounds|nuw|nusw)\s+)*'
                  rf'(i\d+|half|bfloat|float|double|<\d+ x (?:i\d+|half|bfloat|float|double)>|{_NAME}), '
                  rf'({_PTR}) ({_NAME}|@(?:[-\w.$]+|"[^"]*")), (i\d+) (-?\d+|{_NAME})((?:,\s*![-\w.]+\s+!.*)?)$')
_FLOAT_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64}
_LOAD = re.compile(rf'^\s*{_NAME} = load (?:volatile )?(.*?), ({_PTR}) ({_NAME})(?:,.*)?$')
_STORE = re.compile(rf'^\s*store (?:volatile )?(.*) (\S+), ({_PTR}) ({_NAME})(?:,.*)?$')


class _Gep:
    """One GEP instruction with a single index: `name = getelementptr T, ptr base, index`."""

    def __init__(self, line_no: int, indent: str, name: str, t: Type, size: int, space: str, base: str,
                 index: tuple[str, str], tail: str):
        self.line_no, self.indent, self.name, self.t, self.size = line_no, indent, name, t, size
        self.space, self.base, self.index, self.tail = space, base, index, tail


# A cast to a pointer type in the program's own text (`(global int *)`, `(T*)`, `(const uint *)`):
# only such a program can narrow a pointer; it then takes the front-end route (driver._run_cl).
_POINTER_CAST = re.compile(rb"\(\s*(?:(?:__)?(?:global|local|constant|private|generic|const|volatile|unsigned|"
                           rb"signed|struct|union)\s+)*[A-Za-z_]\w*\s*(?:const\s*)?\*+\s*(?:const\s*)?\)")


def may_narrow(source: bytes, include_dirs=(), headers: dict | None = None, defines: str = "") -> bool:
    """Whether the program (its headers and -D values too) casts to a pointer type: without a
    cast no GEP chain can narrow (a program without one compiles from source as before)."""
    return includes.mentions(_POINTER_CAST, source, include_dirs, headers, defines)


def rewrite(ir: str) -> str | None:
    """The IR with its narrowing pointer arithmetic in the narrowest unit, or None when it has none."""
    if not _may_narrow(ir):
        return None
    lines = ir.splitlines()
    changed, start, serial, module = False, None, [0], Module(ir)
    for i, line in enumerate(lines):
        if line.startswith("define "):
            start = i
        elif line.startswith("}") and start is not None:
            changed |= _function(lines, start, i, serial, module)
            start = None
    return "\n".join(lines) + "\n" if changed else None


_SCALAR = r'(?:i\d+|half|bfloat|float|double)'
# each starts with a literal, which Python's re looks for quickly (a name first took 6 ms a MB)
_UNIT_GEP_AT = re.compile(rf'= getelementptr (?:(?:inbounds|nuw|nusw) )*(?:{_SCALAR}|<\d+ x {_SCALAR}>|%[^,]*), {_PTR} ')
_SCALAR_GEP_ON = re.compile(rf'= getelementptr (?:(?:inbounds|nuw|nusw) )*{_SCALAR}, {_PTR} ({_NAME})')
_STORED = re.compile(rf'store {_PTR} ({_NAME})')


def _may_narrow(ir: str) -> bool:
    """Whether some GEP of a scalar type is the base of another, or some single-unit GEP is stored
    as a pointer (by name, in any function: a quick test that spares most modules the
    line-by-line reading)."""
    defined = set()
    for m in _UNIT_GEP_AT.finditer(ir):
        defined.add(ir[ir.rfind("\n", 0, m.start()) + 1:m.start()].strip())
    if not defined:
        return False
    return any(n in defined for n in _SCALAR_GEP_ON.findall(ir)) or any(n in defined for n in _STORED.findall(ir))


def _function(lines: list[str], first: int, last: int, serial: list[int], module: Module) -> bool:
    geps: dict[str, _Gep] = {}  # the GEPs of one unit (a scalar, vector, struct or union) and one index
    allocas, stores, loads = set(), {}, {}
    for i in range(first + 1, last):
        line = lines[i]
        if "getelementptr" in line:
            if (g := _gep(i, line, module)) is not None:
                geps[g.name] = g
        elif "alloca ptr addrspace(" in line:
            if (m := _ALLOCA.match(line)):
                allocas.add(m.group(1))
        elif "store ptr addrspace(" in line:
            if (m := _STORE_PTR.match(line)):
                stores.setdefault(m.group(4), []).append(i)
        elif "load ptr addrspace(" in line and (m := _LOAD_PTR.match(line)):
            loads.setdefault(m.group(2), []).append(m.group(1))
    if not geps:
        return False
    edits: dict[int, list[str]] = {}
    for g in geps.values():  # a GEP of a scalar on a wider one
        base = geps.get(g.base)
        size = _scalar_size(g.t)
        if base is not None and size and _narrows(geps, base, size):
            folded = _fold(geps, base, size, g.t.text, g.indent, serial, extra=g.index)
            edits[g.line_no] = folded[:-1] + [f"{g.indent}{g.name} = {folded[-1]}{g.tail}"]
    # pointer variables given a GEP of a scalar type
    given = {var: found for var in allocas
             if (found := [i for i in stores.get(var, ()) if _STORE_PTR.match(lines[i]).group(3) in geps])}
    uses = _uses(lines, first, last, [name for var in given for name in loads.get(var, ())])
    for var, store_lines in given.items():
        unit = _unit_of_uses(lines, geps, loads.get(var, []), uses)
        if unit is None:
            continue
        size, type_text = unit
        for i in store_lines:
            m = _STORE_PTR.match(lines[i])
            value = geps[m.group(3)]
            if i in edits or not _narrows(geps, value, size):
                continue
            new, name = _fold(geps, value, size, type_text, m.group(1), serial), _fresh(serial)
            new[-1] = f"{m.group(1)}{name} = {new[-1]}"
            new.append(f"{m.group(1)}store {m.group(2)} {name}, ptr {m.group(4)}{m.group(5) or ''}")
            edits[i] = new
    for i in sorted(edits, reverse=True):
        lines[i:i + 1] = edits[i]
    return bool(edits)


def _uses(lines: list[str], first: int, last: int, names: list[str]) -> dict[str, list[int]]:
    """The lines of a function (after its definitions' `=`) that name each of `names`."""
    out: dict[str, list[int]] = {}
    if not names:
        return out
    pattern = re.compile("(" + "|".join(re.escape(n) for n in names) + r")(?![-\w.$])")
    for i in range(first + 1, last):
        line = lines[i]
        rhs = line.split(" = ", 1)[1] if " = " in line else line
        for name in set(pattern.findall(rhs)):
            out.setdefault(name, []).append(i)
    return out


def _gep(i: int, line: str, module: Module) -> _Gep | None:
    m = _GEP.match(line)
    if not m:
        return None
    name = m.group(3)
    if name[0] in "<%":
        t = _type(name)
        if t is None or module.resolve(t).kind not in ("vector", "struct"):
            return None
        try:
            size = module.size(t)
        except ParseError:  # no layout (opaque)
            return None
    else:
        t = Type("int", bits=int(name[1:]), text=name) if name.startswith("i") else \
            Type("float", bits=_FLOAT_BITS[name], text=name)
        size = _scalar_size(t)
    return _Gep(i, m.group(1), m.group(2), t, size, m.group(4), m.group(5), (m.group(6), m.group(7)), m.group(8))


def _scalar_size(t: Type) -> int:
    """The size in bytes of an int or float type of whole bytes (0 for anything else)."""
    return t.bits // 8 if t.kind in ("int", "float") and t.bits % 8 == 0 else 0


def _narrows(geps: dict, g: _Gep, size: int) -> bool:
    """Whether the chain ending at `g` has a GEP wider than `size`, all of them multiples of it."""
    wider, seen = False, 0
    while g is not None and seen < 64:
        s = g.size
        if not s:
            break
        if s % size:
            return False
        wider |= s > size
        g, seen = geps.get(g.base), seen + 1
    return wider


def _fold(geps: dict, g: _Gep, size: int, type_text: str, indent: str,
          serial: list[int], extra: tuple[str, str] | None = None) -> list[str]:
    """Lines computing the chain ending at `g` (plus `extra` units) as one GEP of `type_text`
    from the chain's root; the last line is the GEP's right-hand side."""
    terms, constant, root, space = [], 0, None, g.space
    if extra is not None:
        terms.append((extra, 1))
    while g is not None:
        s = g.size
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
    return out


def _fresh(serial: list[int]) -> str:
    serial[0] += 1
    return f"%__vkcl_unit{serial[0]}"


def _unit_of_uses(lines: list[str], geps: dict, loaded: list[str], uses: dict):
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
            size = _scalar_size(t) if t is not None else 0
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
