"""The argument blocks of a SPIR-V module as the code reads them: each push-constant and
uniform-buffer variable, its block type with every member's byte offset (OpMemberDecorate
Offset), and the bytes of it each function loads (through access chains with constant
indices), so that argument_layout can check clspv's reflection against the code that runs.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from vkcl.compiler import spirv

SC_UNIFORM, SC_STORAGE_BUFFER = 2, 12
DECORATION_SPEC_ID, DECORATION_BINDING, DECORATION_DESCRIPTOR_SET = 1, 33, 34
OP_SPEC_CONSTANT_TRUE, OP_SPEC_CONSTANT_FALSE, OP_SPEC_CONSTANT = 48, 49, 50
_SCALARS = (spirv.OP_TYPE_INT, spirv.OP_TYPE_FLOAT)
_VARIABLE_CLASSES = (spirv.SC_PUSH_CONSTANT, SC_UNIFORM, SC_STORAGE_BUFFER)


@dataclass
class Member:
    offset: int
    type: int
    size: int


@dataclass
class Block:
    """A push-constant or buffer variable: its storage class, descriptor (set, binding) and members."""
    variable: int
    storage_class: int
    type: int
    members: list[Member] = field(default_factory=list)
    descriptor: tuple[int, int] | None = None


class ModuleBlocks:
    """One walk over a module: entry points, blocks, spec ids, and what each function reads."""

    def __init__(self, data: bytes | array):
        words = data if isinstance(data, array) else spirv.to_words(data)
        self.types: dict[int, tuple[int, tuple]] = {}
        self.constants: dict[int, int] = {}
        self.offsets: dict[tuple[int, int], int] = {}
        self.strides: dict[int, int] = {}
        self.entry_points: dict[str, int] = {}  # name -> function
        self.interfaces: dict[str, list[int]] = {}  # name -> the entry point's interface ids
        self.spec_ids: set[int] = set()
        self.blocks: dict[int, Block] = {}
        # function -> [(variable, first byte, byte count)] of each load from a block
        self.reads: dict[int, list[tuple[int, int, int]]] = {}
        self.calls: dict[int, set[int]] = {}
        self._walk(words)

    # -- the walk ---------------------------------------------------------------------------
    def _walk(self, w: array) -> None:
        pointers: dict[int, int] = {}   # pointer type -> pointee
        variables: dict[int, tuple[int, int]] = {}
        decorations: dict[int, dict[int, int]] = {}
        where: dict[int, tuple[int, int, int]] = {}  # pointer value -> (variable, offset, type)
        function = None
        for pos, op, n in spirv.instructions(w):
            if op in _SCALARS:
                self.types[w[pos + 1]] = (op, (w[pos + 2],))
            elif op in (spirv.OP_TYPE_VECTOR, spirv.OP_TYPE_MATRIX, spirv.OP_TYPE_ARRAY):
                self.types[w[pos + 1]] = (op, (w[pos + 2], w[pos + 3]))
            elif op in (spirv.OP_TYPE_STRUCT, spirv.OP_TYPE_RUNTIME_ARRAY):
                self.types[w[pos + 1]] = (op, tuple(w[pos + 2:pos + n]))
            elif op == spirv.OP_TYPE_POINTER:
                self.types[w[pos + 1]] = (op, (w[pos + 2], w[pos + 3]))  # storage class, pointee
                pointers[w[pos + 1]] = w[pos + 3]
            elif op == spirv.OP_CONSTANT and self.types.get(w[pos + 1], (0,))[0] == spirv.OP_TYPE_INT:
                self.constants[w[pos + 2]] = w[pos + 3]
            elif op == spirv.OP_MEMBER_DECORATE and n >= 5 and w[pos + 3] == spirv.DECORATION_OFFSET:
                self.offsets[(w[pos + 1], w[pos + 2])] = w[pos + 4]
            elif op == spirv.OP_DECORATE and n >= 4:
                decorations.setdefault(w[pos + 1], {})[w[pos + 2]] = w[pos + 3]
                if w[pos + 2] == spirv.DECORATION_ARRAY_STRIDE:
                    self.strides[w[pos + 1]] = w[pos + 3]
            elif op in (OP_SPEC_CONSTANT, OP_SPEC_CONSTANT_TRUE, OP_SPEC_CONSTANT_FALSE):
                spec_id = decorations.get(w[pos + 2], {}).get(DECORATION_SPEC_ID)
                if spec_id is not None:
                    self.spec_ids.add(spec_id)
            elif op == spirv.OP_ENTRY_POINT:
                name, after = spirv.literal_string(w, pos + 3, pos + n)
                self.entry_points[name] = w[pos + 2]
                self.interfaces[name] = list(w[after:pos + n])
            elif op == spirv.OP_VARIABLE and function is None and w[pos + 3] in _VARIABLE_CLASSES:
                var, block = w[pos + 2], pointers.get(w[pos + 1], 0)
                variables[var] = (w[pos + 3], block)
                where[var] = (var, 0, block)
            elif op == spirv.OP_FUNCTION:
                function = w[pos + 2]
                self.reads.setdefault(function, [])
                self.calls.setdefault(function, set())
            elif op == spirv.OP_FUNCTION_END:
                function = None
            elif function is None:
                continue
            elif op == spirv.OP_FUNCTION_CALL:
                self.calls[function].add(w[pos + 3])
            elif op in (spirv.OP_ACCESS_CHAIN, spirv.OP_IN_BOUNDS_ACCESS_CHAIN) and w[pos + 3] in where:
                var, off, t = where[w[pos + 3]]
                for index in w[pos + 4:pos + n]:
                    if index not in self.constants:
                        break  # a run-time index: the load reads (some of) the whole of t
                    off, t = self.member(t, off, self.constants[index])
                    if t is None:
                        break
                if t is not None:
                    where[w[pos + 2]] = (var, off, t)
            elif op == spirv.OP_LOAD and w[pos + 3] in where:
                var, off, t = where[w[pos + 3]]
                self.reads[function].append((var, off, self.size(t)))
        for var, (sc, block) in variables.items():
            b = Block(var, sc, block)
            d = decorations.get(var, {})
            if DECORATION_DESCRIPTOR_SET in d and DECORATION_BINDING in d:
                b.descriptor = (d[DECORATION_DESCRIPTOR_SET], d[DECORATION_BINDING])
            kind, members = self.types.get(block, (0, ()))
            if kind == spirv.OP_TYPE_STRUCT:
                b.members = [Member(self.offsets.get((block, i), 0), t, self.size(t)) for i, t in enumerate(members)]
            self.blocks[var] = b

    # -- types ------------------------------------------------------------------------------
    def size(self, t: int) -> int:
        return spirv._type_size(t, self.types, self.constants, self.strides, self.offsets)

    def member(self, t: int, offset: int, index: int) -> tuple[int, int | None]:
        """The byte offset and type of element `index` of type t placed at `offset`."""
        kind, args = self.types.get(t, (0, ()))
        if kind == spirv.OP_TYPE_STRUCT and index < len(args):
            return offset + self.offsets.get((t, index), 0), args[index]
        if kind == spirv.OP_TYPE_VECTOR and index < args[1]:
            return offset + index * self.size(args[0]), args[0]
        if kind in (spirv.OP_TYPE_ARRAY, spirv.OP_TYPE_RUNTIME_ARRAY):
            return offset + index * (self.strides.get(t) or self.size(args[0])), args[0]
        return offset, None

    def is_word(self, t: int) -> bool:
        kind, args = self.types.get(t, (0, ()))
        return kind == spirv.OP_TYPE_INT and args[0] == 32

    # -- per entry point --------------------------------------------------------------------
    def reads_of(self, function: int) -> list[tuple[int, int, int]]:
        """Every load from a block by `function` and the functions it calls."""
        seen, todo, out = {function}, [function], []
        while todo:
            f = todo.pop()
            out += self.reads.get(f, ())
            for g in self.calls.get(f, ()):
                if g not in seen:
                    seen.add(g)
                    todo.append(g)
        return out

    def blocks_read(self, function: int, storage_class: int, descriptor: tuple[int, int] | None = None) -> list[Block]:
        """The blocks of a storage class (and descriptor) that `function` loads from. clspv gives
        each kernel its own variables, several at one binding in different kernels."""
        used = {var for var, _, _ in self.reads_of(function)}
        return [b for v, b in self.blocks.items()
                if v in used and b.storage_class == storage_class and (descriptor is None or b.descriptor == descriptor)]
