"""LLVM IR types as text: parsing, data layout (sizes, alignments) and first members.

What `struct_copies` needs to know about the types of clspv's textual IR (LLVM 22 syntax, opaque
pointers): a type expression's structure, the module's named types, and each type's ABI size and
alignment under the module's `target datalayout`, as LLVM computes them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r'%(?:[-\w.$]+|"[^"]*")'
_TOKEN = re.compile(rf'\s*({_NAME}|<\{{|\}}>|[<>\[\]{{}}(),x*]|[A-Za-z_][\w.]*|\d+)')
_NAMED_TYPE = re.compile(rf'^({_NAME}) = type (.*)$', re.M)
_LAYOUT = re.compile(r'^target datalayout = "([^"]*)"', re.M)
_FLOATS = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "fp128": 128}


@dataclass(frozen=True)
class Type:
    """kind: "int" (bits), "float" (bits), "ptr", "vector"/"array" (count, elem), "struct"
    (fields, packed), "named" (name: resolved through the module), "opaque" (no layout)."""
    kind: str
    bits: int = 0
    count: int = 0
    elem: "Type | None" = None
    fields: tuple["Type", ...] = ()
    packed: bool = False
    name: str = ""
    text: str = ""  # as written in the IR, for emitting it again


class ParseError(ValueError):
    pass


def parse_type(text: str) -> tuple[Type, str]:
    """The type at the start of `text` and the rest of the text after it."""
    it = Reader(text)
    t = it.type()
    return t, text[it.pos:]


class Reader:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def peek(self) -> str:
        m = _TOKEN.match(self.text, self.pos)
        if not m:
            raise ParseError(f"cannot read a type at {self.text[self.pos:self.pos + 20]!r}")
        return m.group(1)

    def take(self, expected: str | None = None) -> str:
        m = _TOKEN.match(self.text, self.pos)
        if not m or (expected is not None and m.group(1) != expected):
            raise ParseError(f"expected {expected!r} at {self.text[self.pos:self.pos + 20]!r}")
        self.pos = m.end()
        return m.group(1)

    def type(self) -> Type:
        start = self.pos
        t = self._type()
        return _with_text(t, self.text[start:self.pos].strip())

    def _type(self) -> Type:
        tok = self.take()
        if tok.startswith("%"):
            return Type("named", name=tok)
        if re.fullmatch(r"i\d+", tok):
            return Type("int", bits=int(tok[1:]))
        if tok in _FLOATS:
            return Type("float", bits=_FLOATS[tok])
        if tok == "ptr":
            if self.peek() == "addrspace":
                self.take(), self.take("("), self.take(), self.take(")")
            return Type("ptr", bits=64)
        if tok in ("<", "["):
            count = int(self.take())
            self.take("x")
            elem = self.type()
            self.take(">" if tok == "<" else "]")
            return Type("vector" if tok == "<" else "array", count=count, elem=elem)
        if tok in ("{", "<{"):
            close = "}" if tok == "{" else "}>"
            fields = []
            if self.peek() != close:
                fields.append(self.type())
                while self.peek() == ",":
                    self.take(",")
                    fields.append(self.type())
            self.take(close)
            return Type("struct", fields=tuple(fields), packed=tok == "<{")
        if tok == "opaque":
            return Type("opaque")
        raise ParseError(f"unsupported type {tok!r}")


def _with_text(t: Type, text: str) -> Type:
    return Type(t.kind, t.bits, t.count, t.elem, t.fields, t.packed, t.name, text)


class Module:
    """A module's named types and data layout."""

    def __init__(self, ir: str):
        self.named: dict[str, Type] = {}
        for m in _NAMED_TYPE.finditer(ir):
            try:
                self.named[m.group(1)] = Reader(m.group(2)).type()
            except ParseError:
                self.named[m.group(1)] = Type("opaque")
        layout = _LAYOUT.search(ir)
        self._int_align = {1: 1, 8: 1, 16: 2, 32: 4, 64: 4}   # LLVM's defaults (i64:32)
        self._float_align = {16: 2, 32: 4, 64: 8, 128: 16}
        self._vector_align = {64: 8, 128: 16}
        self._ptr = (8, 8)
        for spec in (layout.group(1).split("-") if layout else ()):
            self._spec(spec)

    def _spec(self, spec: str) -> None:
        m = re.fullmatch(r"([ifv])(\d+):(\d+)(?::\d+)?", spec)
        if m:
            table = {"i": self._int_align, "f": self._float_align, "v": self._vector_align}[m.group(1)]
            table[int(m.group(2))] = int(m.group(3)) // 8
            return
        m = re.fullmatch(r"p0?:(\d+):(\d+)(?::\d+)*", spec)
        if m:
            self._ptr = (int(m.group(1)) // 8, int(m.group(2)) // 8)

    def resolve(self, t: Type) -> Type:
        seen = 0
        while t.kind == "named":
            t = self.named.get(t.name, Type("opaque"))
            seen += 1
            if seen > 64:
                return Type("opaque")
        return t

    def align(self, t: Type) -> int:
        t = self.resolve(t)
        if t.kind == "int":
            bits = t.bits
            if bits in self._int_align:
                return self._int_align[bits]
            larger = [b for b in self._int_align if b >= bits]
            return self._int_align[min(larger)] if larger else self._int_align[max(self._int_align)]
        if t.kind == "float":
            return self._float_align.get(t.bits, t.bits // 8)
        if t.kind == "ptr":
            return self._ptr[1]
        if t.kind == "vector":
            bits = t.count * self._store_bits(t.elem)
            if bits in self._vector_align:
                return self._vector_align[bits]
            return _next_pow2(max(1, (bits + 7) // 8))
        if t.kind == "array":
            return self.align(t.elem)
        if t.kind == "struct":
            return 1 if t.packed or not t.fields else max(self.align(f) for f in t.fields)
        raise ParseError("a type without layout")

    def _store_bits(self, t: Type) -> int:
        t = self.resolve(t)
        if t.kind in ("int", "float"):
            return t.bits
        if t.kind == "ptr":
            return self._ptr[0] * 8
        raise ParseError("a vector of aggregates")

    def size(self, t: Type) -> int:
        """The ABI allocation size in bytes (what sizeof and memcpy count)."""
        t = self.resolve(t)
        if t.kind in ("int", "float", "ptr"):
            store = (self._store_bits(t) + 7) // 8
            return _align_to(store, self.align(t))
        if t.kind == "vector":
            store = (t.count * self._store_bits(t.elem) + 7) // 8
            return _align_to(store, self.align(t))
        if t.kind == "array":
            return t.count * self.size(t.elem)
        if t.kind == "struct":
            return _align_to(self.offsets(t)[-1], self.align(t)) if t.fields else 0
        raise ParseError("a type without layout")

    def offsets(self, t: Type) -> list[int]:
        """A struct's field offsets, and its unpadded end last."""
        t = self.resolve(t)
        out, offset = [], 0
        for f in t.fields:
            if not t.packed:
                offset = _align_to(offset, self.align(f))
            out.append(offset)
            offset += self.size(f)
        return out + [offset]

    def first_member(self, t: Type) -> Type | None:
        """The member at offset 0 that an index of 0 selects (None for scalars, empty structs)."""
        t = self.resolve(t)
        if t.kind in ("array", "vector") and t.count:
            return t.elem
        if t.kind == "struct" and t.fields:
            return t.fields[0]
        return None

    def indexed(self, t: Type, index: int | None) -> Type | None:
        """The type a GEP index after the first selects in `t` (None: unknown or invalid)."""
        t = self.resolve(t)
        if t.kind in ("array", "vector"):
            return t.elem
        if t.kind == "struct" and index is not None and 0 <= index < len(t.fields):
            return t.fields[index]
        return None


def _align_to(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def gep_operands(text: str) -> tuple[Type, list[str]] | None:
    """A getelementptr's `T, ptr base, index...` (its text from T on): T and the operands after
    it, split (the first is the empty text before the comma, the second the base); None where
    the text does not start that way."""
    try:
        reader = Reader(text)
        t = reader.type()
    except ParseError:
        return None
    parts = split_operands(text[reader.pos:])
    return (t, parts) if parts and not parts[0].strip() else None


def split_operands(text: str) -> list[str]:
    """`text` split at its commas outside brackets and quotes."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def matching_paren(text: str, i: int) -> int:
    """The index of the `)` closing the `(` at `i` (-1 if none)."""
    depth, quoted = 0, False
    for j in range(i, len(text)):
        c = text[j]
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def pointer_type(space: int) -> str:
    """The IR's pointer type in address space `space`."""
    return "ptr" if space == 0 else f"ptr addrspace({space})"


def type_key(t: Type) -> str:
    """A type's name, or its text without spacing: equal for the same type."""
    return t.name if t.kind == "named" else " ".join(t.text.split())


def alignment_at(align: int, offset: int) -> int:
    """The alignment of `offset` bytes past a pointer aligned to `align`."""
    return min(align, offset & -offset if offset else 1 << 30)
