"""A SPIR-V module as a list of instructions that can be replaced, with the types, constants and
ids a rewrite needs (for il_lowering's rewrites of OpenCL SPIR-V).

Types and constants a rewrite asks for are reused when the module has them, else declared
after the module's own declarations (before its first function), where every type they name is
already declared.
"""
from __future__ import annotations

from array import array
from typing import Callable, Iterable

from vkcl.compiler import spirv

OP_CAPABILITY, OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR = 17, 20, 21, 22, 23
OP_TYPE_ARRAY, OP_TYPE_STRUCT, OP_TYPE_POINTER = 28, 30, 32
OP_CONSTANT_TRUE, OP_CONSTANT_FALSE, OP_CONSTANT, OP_FUNCTION, OP_DECORATE = 41, 42, 43, 54, 71
OP_ENTRY_POINT, DECORATION_CPACKED = 15, 10
CAPABILITY_INT64 = 11
# Instructions without a result type (their first operand may still look like one): the
# debug, annotation, mode-setting, type, store/copy and control-flow ones. A value's type is
# taken only from an instruction not listed here whose first operand is a declared type.
_NO_RESULT_TYPE = {0, 2, 3, 4, 5, 6, 7, 8, 10, 11, 14, 15, 16, 17, 56, 62, 63, 64, 71, 72, 73, 74, 75,
                   224, 225, 228, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 256, 257, 317, 330,
                   331, 332, 5632, 5633} | set(range(19, 40))


class Module:
    def __init__(self, data: bytes):
        words = spirv.to_words(bytes(data))
        self.header = array("I", words[:spirv.HEADER_WORDS])
        self.insts: list[array] = [words[pos:pos + n] for pos, _, n in spirv.instructions(words)]
        self.bound = words[3]
        self.types: dict[int, array] = {}      # type id -> its OpType* instruction
        self.type_of: dict[int, int] = {}      # value id -> its type id
        self.constants: dict[int, tuple[int, tuple]] = {}  # OpConstant id -> (type, value words)
        self.packed: set[int] = set()          # structs decorated CPacked
        self.capabilities: set[int] = set()
        self._added: list[array] = []
        for inst in self.insts:
            op = inst[0] & 0xFFFF
            if 19 <= op <= 39 and len(inst) > 1:
                self.types[inst[1]] = inst
            elif op == OP_CAPABILITY:
                self.capabilities.add(inst[1])
            elif op == OP_DECORATE and len(inst) >= 3 and inst[2] == DECORATION_CPACKED:
                self.packed.add(inst[1])
            elif op not in _NO_RESULT_TYPE and len(inst) >= 3 and inst[1] in self.types:
                self.type_of[inst[2]] = inst[1]
                if op == OP_CONSTANT and len(inst) >= 4:
                    self.constants[inst[2]] = (inst[1], tuple(inst[3:]))

    def value_id(self, inst: array) -> int | None:
        """The result id of an instruction that has a result type, else None."""
        if self.opcode(inst) in _NO_RESULT_TYPE or len(inst) < 3 or inst[1] not in self.types:
            return None
        return inst[2]

    @staticmethod
    def opcode(inst: array) -> int:
        return inst[0] & 0xFFFF

    def new_id(self) -> int:
        self.bound += 1
        return self.bound - 1

    def _declare(self, op: int, *operands: int) -> int:
        rid = self.new_id()
        self.types[rid] = instruction(op, rid, *operands)
        self._added.append(self.types[rid])
        return rid

    def find_type(self, op: int, *operands: int) -> int:
        for tid, inst in self.types.items():
            if self.opcode(inst) == op and tuple(inst[2:]) == operands:
                return tid
        return self._declare(op, *operands)

    def int_type(self, width: int) -> int:
        if width == 64:
            self.capabilities.add(CAPABILITY_INT64)
        return self.find_type(OP_TYPE_INT, width, 0)

    def bool_type(self) -> int:
        return self.find_type(OP_TYPE_BOOL)

    def pointer_type(self, storage: int, pointee: int) -> int:
        return self.find_type(OP_TYPE_POINTER, storage, pointee)

    def constant(self, type_id: int, value: int) -> int:
        """An OpConstant of an integer type (reused if the module has it)."""
        width = self.types[type_id][2]
        value &= (1 << width) - 1
        words = (value,) if width <= 32 else (value & 0xFFFFFFFF, value >> 32)
        for cid, (tid, have) in self.constants.items():
            if tid == type_id and have == words:
                return cid
        rid = self.new_id()
        self._added.append(instruction(OP_CONSTANT, type_id, rid, *words))
        self.type_of[rid], self.constants[rid] = type_id, (type_id, words)
        return rid

    def bool_constant(self, value: bool) -> int:
        """An OpConstantTrue or OpConstantFalse (reused if the module has it)."""
        op, bool_type = (OP_CONSTANT_TRUE if value else OP_CONSTANT_FALSE), self.bool_type()
        for inst in self.insts + self._added:
            if self.opcode(inst) == op and inst[1] == bool_type:
                return inst[2]
        rid = self.new_id()
        self._added.append(instruction(op, bool_type, rid))
        return rid

    def declare(self, inst: array) -> None:
        """Add a module-scope declaration (after the module's own)."""
        self._added.append(inst)

    def insert_annotations(self, insts: list[array]) -> None:
        """Decorations put before the module's first annotation (or its first type)."""
        at = next(k for k, i in enumerate(self.insts) if 71 <= self.opcode(i) <= 75 or 19 <= self.opcode(i) <= 39)
        self.insts[at:at] = insts

    def insert_debug(self, insts: list[array]) -> None:
        """OpStrings put before the module's first debug instruction (or what follows them)."""
        at = next(k for k, i in enumerate(self.insts) if self.opcode(i) in (2, 3, 4, 5, 6, 7, 330)
                  or 71 <= self.opcode(i) <= 75 or 19 <= self.opcode(i) <= 39)
        self.insts[at:at] = insts

    @staticmethod
    def add_to_interface(entry: array, var: int) -> None:
        """Name `var` in an OpEntryPoint's interface (in place) unless it is there."""
        name, _ = spirv.literal_string(entry, 3, len(entry))
        if var not in entry[3 + len(spirv.string_words(name)):]:
            entry.append(var)
            entry[0] = (len(entry) << 16) | OP_ENTRY_POINT

    # -- types ------------------------------------------------------------------------------
    def kind(self, type_id: int) -> int:
        inst = self.types.get(type_id)
        return self.opcode(inst) if inst is not None else 0

    def members(self, type_id: int) -> list[int] | None:
        """The member types of a struct or (constant-length) array type, else None."""
        inst = self.types.get(type_id)
        if inst is None:
            return None
        op = self.opcode(inst)
        if op == OP_TYPE_STRUCT:
            return list(inst[2:])
        if op == OP_TYPE_ARRAY:
            length = self.constants.get(inst[3])
            return [inst[2]] * length[1][0] if length is not None else None
        return None

    def pointee(self, pointer_type: int) -> tuple[int, int] | None:
        """(storage class, pointee type) of a pointer type."""
        inst = self.types.get(pointer_type)
        if inst is None or self.opcode(inst) != OP_TYPE_POINTER:
            return None
        return inst[2], inst[3]

    def size_align(self, type_id: int, address_bytes: int) -> tuple[int, int]:
        """The OpenCL C size and alignment of a type (vectors of 3 take the room of 4; structs
        padded unless CPacked)."""
        inst = self.types[type_id]
        op = self.opcode(inst)
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            return inst[2] // 8, inst[2] // 8
        if op == OP_TYPE_POINTER:
            return address_bytes, address_bytes
        if op == OP_TYPE_VECTOR:
            size = self.size_align(inst[2], address_bytes)[0] * (4 if inst[3] == 3 else inst[3])
            return size, size
        if op == OP_TYPE_ARRAY:
            size, align = self.size_align(inst[2], address_bytes)
            return size * self.constants[inst[3]][1][0], align
        if op == OP_TYPE_STRUCT:
            members = [self.size_align(member, address_bytes) for member in inst[2:]]
            offsets = self.offsets(type_id, address_bytes)
            end = offsets[-1] + members[-1][0] if members else 0
            most = 1 if type_id in self.packed else max((a for _, a in members), default=1)
            return -(-end // most) * most, most
        raise ValueError(f"type %{type_id} has no size")

    def offsets(self, struct_id: int, address_bytes: int) -> list[int]:
        """A struct's member offsets in bytes (none padded in a CPacked one)."""
        out, offset = [], 0
        for member in self.types[struct_id][2:]:
            size, align = self.size_align(member, address_bytes)
            align = 1 if struct_id in self.packed else align
            offset = -(-offset // align) * align
            out.append(offset)
            offset += size
        return out

    # -- output -----------------------------------------------------------------------------
    def rewrite(self, each: Callable[[array], Iterable[array] | None]) -> bool:
        """Replace every instruction for which `each` returns a list by that list."""
        out, changed = [], False
        for inst in self.insts:
            new = each(inst)
            if new is None:
                out.append(inst)
            else:
                out.extend(new)
                changed = True
        self.insts = out
        return changed

    def to_bytes(self) -> bytes:
        first_function = next((i for i, inst in enumerate(self.insts) if self.opcode(inst) == OP_FUNCTION),
                              len(self.insts))
        have = {inst[1] for inst in self.insts if self.opcode(inst) == OP_CAPABILITY}
        caps = [instruction(OP_CAPABILITY, c) for c in sorted(self.capabilities - have)]
        insts = caps + self.insts[:first_function] + self._added + self.insts[first_function:]
        out = array("I", self.header)
        out[3] = self.bound
        for inst in insts:
            out.extend(inst)
        return spirv.to_bytes(out)


def instruction(op: int, *operands: int) -> array:
    return array("I", [((len(operands) + 1) << 16) | op, *operands])
