"""8-bit dot products in SPIR-V's packed form (repair 10 of spirv_fixes).

clspv writes cl_khr_integer_dot_product's dot() and dot_acc_sat() of char4 / uchar4 as
OpSDot, OpUDot or OpSUDot (or their AccSat forms) of two vectors of four 8-bit integers, often
bitcasts of 32-bit values (as_uchar4(x)). NVIDIA's driver (580) takes such vectors apart byte by
byte and uses its dot-product instruction (IDP.4A) only for the packed form, the same operation
on two 32-bit integers with PackedVectorFormat4x8Bit: on an H200 the bench's dot_int8 chains ran
at 13.9 TOP/s as vectors and 61.9 packed. The two forms mean the same, so every such dot takes
32-bit operands: the integer a bitcast made the vector of, else a new OpBitcast of the vector.
The device's shaderIntegerDotProduct feature, which cl_khr_integer_dot_product needs, covers
the DotProductInput4x8BitPacked capability the module then declares.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_UNDEF, OP_BITCAST = 1, 124
# OpSDot, OpUDot, OpSUDot: type, result, vector 1, vector 2 [, packed format]; the AccSat forms
# (4453-4455) have an accumulator after the vectors.
_DOT_OPERANDS = {4450: 2, 4451: 2, 4452: 2, 4453: 3, 4454: 3, 4455: 3}
CAP_DOT_INPUT_4X8_PACKED = 6018
PACKED_VECTOR_FORMAT_4X8 = 0
# Module-level instructions with a result type (constants); inside functions every instruction
# whose first operand is a type id has one.
_GLOBAL_VALUES = {OP_UNDEF, 41, 42, 43, 44, 46, 48, 49, 50, 51, 52}


def pack_dot_products(data: bytes) -> bytes:
    words = spirv.to_words(data)
    int32, int8, vec4x8, types = set(), set(), set(), set()
    value_type, bitcast_of, dots, caps = {}, {}, [], set()
    first_capability = None
    in_function = False
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_CAPABILITY:
            caps.add(words[pos + 1])
            first_capability = pos if first_capability is None else first_capability
        elif op == spirv.OP_TYPE_INT:
            types.add(words[pos + 1])
            if words[pos + 2] == 32:
                int32.add(words[pos + 1])
            elif words[pos + 2] == 8:
                int8.add(words[pos + 1])
        elif op == spirv.OP_TYPE_VECTOR:
            types.add(words[pos + 1])
            if words[pos + 2] in int8 and words[pos + 3] == 4:
                vec4x8.add(words[pos + 1])
        elif 19 <= op <= 39:  # the other OpType*
            types.add(words[pos + 1])
        elif op == spirv.OP_FUNCTION:
            in_function = True
        elif op == spirv.OP_FUNCTION_END:
            in_function = False
        if (in_function or op in _GLOBAL_VALUES) and n >= 3 and words[pos + 1] in types:
            value_type[words[pos + 2]] = words[pos + 1]
        if op == OP_BITCAST and words[pos + 1] in vec4x8:
            bitcast_of[words[pos + 2]] = words[pos + 3]
        elif op in _DOT_OPERANDS and n == 3 + _DOT_OPERANDS[op] and words[pos + 3] in value_type \
                and value_type[words[pos + 3]] in vec4x8:
            dots.append(pos)
    if not dots or not int32:
        return data
    uint = min(int32)
    bound = words[3]
    replace = {}  # dot position -> the instructions that replace it
    for pos in dots:
        op, n = words[pos] & 0xFFFF, words[pos] >> 16
        sources = [bitcast_of.get(v) for v in words[pos + 3:pos + 5]]
        if all(s is not None and value_type.get(s) in int32 for s in sources) and \
                value_type[sources[0]] == value_type[sources[1]]:
            before, operands = [], sources
        else:  # bitcast both vectors to one 32-bit type
            before, operands = [], []
            for v in words[pos + 3:pos + 5]:
                before += [(4 << 16) | OP_BITCAST, uint, bound, v]
                operands.append(bound)
                bound += 1
        dot = [((n + 1) << 16) | op, words[pos + 1], words[pos + 2], *operands, *words[pos + 5:pos + n],
               PACKED_VECTOR_FORMAT_4X8]
        replace[pos] = before + dot
    out = array("I", words[:spirv.HEADER_WORDS])
    for pos, op, n in spirv.instructions(words):
        if pos == first_capability and CAP_DOT_INPUT_4X8_PACKED not in caps:
            out.extend([(2 << 16) | spirv.OP_CAPABILITY, CAP_DOT_INPUT_4X8_PACKED])
        out.extend(replace.get(pos, words[pos:pos + n]))
    out[3] = bound
    return spirv.to_bytes(out)
