"""OpenCL SPIR-V 1.5 and 1.6 modules as SPIR-V 1.4, the newest llvm-spirv-15 reads ("unsupported
SPIR-V version number" otherwise; tinytc v0.4 writes Kernel SPIR-V 1.6).

What those versions add that a Kernel module can hold, and what it becomes here (each keeps
the instruction's result id, so nothing else in the module changes):
- OpBitcast between a pointer and an integer (1.5) as OpConvertPtrToU / OpConvertUToPtr; one
  between a pointer and a vector (`uint2` for a 64-bit pointer) through an integer of the
  pointer's width;
- the Uniform and UniformId decorations (1.6 allows them on any value; 1.5 added UniformId):
  hints that the value is the same in every invocation of a scope, dropped;
- the header's version, set to 1.4.
Anything else of 1.5 and 1.6 (images, group non-uniform operations, integer dot products) is
left as it is: llvm-spirv then refuses what it cannot read, and the build log says so.
"""
from __future__ import annotations

from array import array

from vkcl.compiler.spirv_edit import OP_TYPE_INT, OP_TYPE_POINTER, OP_TYPE_VECTOR, Module, instruction

OP_MEMORY_MODEL, OP_DECORATE, OP_DECORATE_ID, OP_BITCAST = 14, 71, 332, 124
ADDRESSING_PHYSICAL32 = 1
OP_CONVERT_PTR_TO_U, OP_CONVERT_U_TO_PTR = 117, 120
DECORATION_UNIFORM, DECORATION_UNIFORM_ID = 26, 27
VERSION_1_4 = 0x00010400


class UnsupportedIL(Exception):
    """A SPIR-V 1.5/1.6 construct with no SPIR-V 1.4 form here."""


def to_1_4(il: bytes) -> bytes:
    """`il` itself when its version is 1.4 or older, else the module as SPIR-V 1.4."""
    m = Module(il)
    if m.header[1] <= VERSION_1_4:
        return il
    m.header[1] = VERSION_1_4
    pointer_bits = next((32 if inst[1] == ADDRESSING_PHYSICAL32 else 64 for inst in m.insts
                         if m.opcode(inst) == OP_MEMORY_MODEL), 64)

    def each(inst: array):
        op = m.opcode(inst)
        if op in (OP_DECORATE, OP_DECORATE_ID) and len(inst) >= 3 and \
                inst[2] in (DECORATION_UNIFORM, DECORATION_UNIFORM_ID):
            return []
        if op == OP_BITCAST and len(inst) == 4:
            to_kind, from_kind = m.kind(inst[1]), m.kind(m.type_of.get(inst[3], 0))
            if (to_kind == OP_TYPE_INT) and from_kind == OP_TYPE_POINTER:
                return [instruction(OP_CONVERT_PTR_TO_U, *inst[1:])]
            if to_kind == OP_TYPE_POINTER and from_kind == OP_TYPE_INT:
                return [instruction(OP_CONVERT_U_TO_PTR, *inst[1:])]
            if {to_kind, from_kind} == {OP_TYPE_POINTER, OP_TYPE_VECTOR}:
                word, middle = m.int_type(pointer_bits), m.new_id()
                if to_kind == OP_TYPE_VECTOR:
                    return [instruction(OP_CONVERT_PTR_TO_U, word, middle, inst[3]),
                            instruction(OP_BITCAST, inst[1], inst[2], middle)]
                return [instruction(OP_BITCAST, word, middle, inst[3]),
                        instruction(OP_CONVERT_U_TO_PTR, inst[1], inst[2], middle)]
            if OP_TYPE_POINTER in (to_kind, from_kind) and to_kind != from_kind:
                raise UnsupportedIL("an OpBitcast of a pointer to or from this type is not supported")
        return None

    m.rewrite(each)
    return m.to_bytes()
