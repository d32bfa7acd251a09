"""Repair 17: a 64-bit scalar bitcast to a vector of 16- or 8-bit elements goes through a
vector of two 32-bit integers.

lavapipe (Mesa 22.3.6) gets such a bitcast wrong where it knows the 64-bit value: the bytes
above the lowest 32 bits came out 0 (`as_ushort4(v)` of a `volatile ulong v =
0x8000000000000002` gave {2, 0, 0, 0}; as_uint2 was right, and so was the same bitcast of a value
it could not know). clspv makes such bitcasts to store 64-bit values through byte pointers (CTS
spirv_new op_constant_ulong_simple and op_copy_double_simple, from SPIR-V given to
clCreateProgramWithIL, stored 0x0002 for 0x8000000000000002). Two bitcasts, 64 to 2 x 32 and
2 x 32 to the narrow vector, give the same bits on every device.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_FUNCTION, OP_BITCAST = 21, 22, 23, 54, 124
# Module-level instructions whose first operands are a result type and a result id: constants,
# spec constants, variables; in functions, all but these (which have no result type).
_GLOBAL_VALUES = {43, 44, 46, 48, 49, 50, 51, 52, 59}
_NO_RESULT_TYPE = {8, 62, 63, 64, 224, 225, 228, 246, 247, 250, 251, 253, 254}


def split_wide_bitcasts(data: bytes) -> bytes:
    """The module with each OpBitcast of a 64-bit scalar to a vector of 8- or 16-bit elements
    made two bitcasts, through a vector of two 32-bit unsigned integers."""
    words = spirv.to_words(data)
    widths: dict[int, int] = {}  # scalar type -> bits
    vectors: dict[int, tuple[int, int]] = {}  # vector type -> (element type, count)
    values: dict[int, int] = {}  # id -> its type, for the operands of bitcasts
    uint = v2uint = first_function = None
    targets = []
    for pos, op, n in spirv.instructions(words):
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            widths[words[pos + 1]] = words[pos + 2]
            if op == OP_TYPE_INT and words[pos + 2] == 32 and words[pos + 3] == 0:
                uint = words[pos + 1]
        elif op == OP_TYPE_VECTOR:
            vectors[words[pos + 1]] = (words[pos + 2], words[pos + 3])
            if (words[pos + 2], words[pos + 3]) == (uint, 2):
                v2uint = words[pos + 1]
        elif op == OP_FUNCTION and first_function is None:
            first_function = pos
        if n >= 3 and (op in _GLOBAL_VALUES if first_function is None else op not in _NO_RESULT_TYPE):
            values[words[pos + 2]] = words[pos + 1]
        if op == OP_BITCAST:
            to = vectors.get(words[pos + 1])
            source_type = values.get(words[pos + 3])
            if to and widths.get(to[0], 32) < 32 and widths.get(source_type) == 64 and source_type not in vectors:
                targets.append(pos)
    if not targets or uint is None or first_function is None:
        return data
    bound = words[3]
    declarations = array("I")
    if v2uint is None:
        v2uint, bound = bound, bound + 1
        declarations.extend([4 << 16 | OP_TYPE_VECTOR, v2uint, uint, 2])
    out = array("I", words[:first_function])
    out.extend(declarations)
    at = iter(targets)
    nxt = next(at)
    for pos, op, n in spirv.instructions(words):
        if pos < first_function:
            continue
        if pos != nxt:
            out.extend(words[pos:pos + n])
            continue
        middle, bound = bound, bound + 1
        out.extend([4 << 16 | OP_BITCAST, v2uint, middle, words[pos + 3]])
        out.extend([4 << 16 | OP_BITCAST, words[pos + 1], words[pos + 2], middle])
        nxt = next(at, None)
    out[3] = bound
    return spirv.to_bytes(out)
