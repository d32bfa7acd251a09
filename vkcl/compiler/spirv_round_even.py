"""RoundEven and Trunc of doubles computed from Floor (llvmpipe; repair 22 of spirv_fixes).

llvmpipe (Mesa 22.3, LLVM 15) rounds a double's halves toward zero on some CPUs: on an AMD EPYC
with AVX2 and no AVX-512, rint(1.5) gave 1.0, rint(-1.5) -1.0 and rint(3.5) 3.0 (0.5, 2.5 and
-2.5 right by chance), and with it every convert_<integer>_rte(double), which clspv writes as
GLSL.std.450 RoundEven; Floor, Ceil and Trunc of doubles and RoundEven of floats were right.
Each RoundEven of a double (scalar or vector) becomes, exactly:

    f = Floor(x); d = x - f                       (exact: d in [0, 1), or NaN for infinities)
    up = d > 0.5 || (d == 0.5 && Floor(f * 0.5) != f * 0.5)     (past the half, or f odd)
    r = up ? (f == -1.0 ? -0.0 : f + 1.0) : f     (x in [-0.5, 0) rounds to -0.0)

NaN, infinities, signed zeros, and values past 2^52 (already integers: d = 0) come out as they
went in; denormals round to a zero of their sign.

The same CPU's Trunc of a double in (-1, -0] gave +0.0 (trunc(-0.3), trunc(-0.0), and round(),
which clspv writes with Trunc): Trunc(x) becomes x < 0 ? -Floor(-x) : Floor(x), exact, with the
sign of a zero kept (NaN takes Floor(x)).
"""
from __future__ import annotations

import struct
from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import Module, instruction

OP_EXT_INST_IMPORT, OP_EXT_INST, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_BOOL = 11, 12, 22, 23, 20
OP_CONSTANT_COMPOSITE, OP_SELECT, OP_FSUB, OP_FADD, OP_FMUL = 44, 169, 131, 129, 133
OP_FORD_EQUAL, OP_FUNORD_NOT_EQUAL, OP_FORD_GREATER_THAN, OP_LOGICAL_OR, OP_LOGICAL_AND = 180, 183, 186, 166, 167
OP_FNEGATE, OP_FORD_LESS_THAN = 127, 184
GLSL_ROUND_EVEN, GLSL_TRUNC, GLSL_FLOOR = 2, 3, 8


def exact_round_even(data: bytes) -> bytes:
    m = Module(data)
    glsl = next((inst[1] for inst in m.insts if m.opcode(inst) == OP_EXT_INST_IMPORT
                 and spirv.literal_string(inst, 2, len(inst))[0] == "GLSL.std.450"), None)
    if glsl is None:
        return data
    doubles = {tid for tid, t in m.types.items() if m.opcode(t) == OP_TYPE_FLOAT and t[2] == 64}
    doubles |= {tid for tid, t in m.types.items() if m.opcode(t) == OP_TYPE_VECTOR and t[2] in doubles}
    if not any(m.opcode(i) == OP_EXT_INST and i[3] == glsl and i[4] in (GLSL_ROUND_EVEN, GLSL_TRUNC)
               and i[1] in doubles for i in m.insts):
        return data
    made: dict[tuple[int, int], int] = {}  # (type, the value's bits: 0.0 and -0.0 are equal floats)

    def const(type_id: int, value: float) -> int:
        bits, = struct.unpack("<Q", struct.pack("<d", value))
        if (type_id, bits) not in made:
            t = m.types[type_id]
            if m.opcode(t) == OP_TYPE_VECTOR:
                part = const(t[2], value)
                rid = m.new_id()
                m.declare(instruction(OP_CONSTANT_COMPOSITE, type_id, rid, *[part] * t[3]))
                made[(type_id, bits)] = rid
            else:
                made[(type_id, bits)] = m.constant(type_id, bits)
        return made[(type_id, bits)]

    def bool_of(type_id: int) -> int:
        t = m.types[type_id]
        scalar = m.bool_type()
        return m.find_type(OP_TYPE_VECTOR, scalar, t[3]) if m.opcode(t) == OP_TYPE_VECTOR else scalar

    def each(inst: array):
        if not (m.opcode(inst) == OP_EXT_INST and inst[3] == glsl and inst[4] in (GLSL_ROUND_EVEN, GLSL_TRUNC)
                and inst[1] in doubles):
            return None
        t, result, x = inst[1], inst[2], inst[5]
        b = bool_of(t)
        if inst[4] == GLSL_TRUNC:
            neg, minus, floor_minus, toward, floor_x = (m.new_id() for _ in range(5))
            return [
                instruction(OP_FORD_LESS_THAN, b, neg, x, const(t, 0.0)),
                instruction(OP_FNEGATE, t, minus, x),
                instruction(OP_EXT_INST, t, floor_minus, glsl, GLSL_FLOOR, minus),
                instruction(OP_FNEGATE, t, toward, floor_minus),
                instruction(OP_EXT_INST, t, floor_x, glsl, GLSL_FLOOR, x),
                instruction(OP_SELECT, t, result, neg, toward, floor_x),
            ]
        f, d, half, hf, odd, over, tie, tie_odd, up, f1, minus_one, f_up = (m.new_id() for _ in range(12))
        return [
            instruction(OP_EXT_INST, t, f, glsl, GLSL_FLOOR, x),
            instruction(OP_FSUB, t, d, x, f),
            instruction(OP_FMUL, t, half, f, const(t, 0.5)),
            instruction(OP_EXT_INST, t, hf, glsl, GLSL_FLOOR, half),
            instruction(OP_FUNORD_NOT_EQUAL, b, odd, hf, half),
            instruction(OP_FORD_GREATER_THAN, b, over, d, const(t, 0.5)),
            instruction(OP_FORD_EQUAL, b, tie, d, const(t, 0.5)),
            instruction(OP_LOGICAL_AND, b, tie_odd, tie, odd),
            instruction(OP_LOGICAL_OR, b, up, over, tie_odd),
            instruction(OP_FADD, t, f1, f, const(t, 1.0)),
            instruction(OP_FORD_EQUAL, b, minus_one, f, const(t, -1.0)),
            instruction(OP_SELECT, t, f_up, minus_one, const(t, -0.0), f1),
            instruction(OP_SELECT, t, result, up, f_up, f),
        ]

    m.rewrite(each)
    return m.to_bytes()

