"""Repair 12: printf's return value (fix_printf_return).

OpenCL C's printf returns 0 when it succeeds and -1 otherwise. clspv's lowering yields 1 on
success: the value is an OpPhi of the constants 1 (from the block that wrote the record into
the printf buffer) and -1 (from the block that found the buffer full). Seen: the CTS's
test_printf return_value. The repair gives that phi 0 instead of 1. It touches only phis whose
1 comes from a block that stores into the printf buffer, found from the reflection's printf
buffer pointer (a push constant; a printf buffer in a descriptor is left as it is).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_TYPE_POINTER, OP_CONSTANT, OP_FUNCTION = 32, 43, 54
OP_VARIABLE, OP_LOAD, OP_STORE, OP_ACCESS_CHAIN, OP_PTR_ACCESS_CHAIN = 59, 61, 62, 65, 67
OP_MEMBER_DECORATE, OP_CONVERT_U_TO_PTR, OP_PHI, OP_LABEL = 72, 120, 245, 248
DECORATION_OFFSET, SC_PUSH_CONSTANT = 35, 9
MINUS_ONE = 0xFFFFFFFF


def fix_printf_return(data: bytes, printf_buffer) -> bytes:
    """`printf_buffer`: the module's reflection.PrintfBuffer (None: no printf)."""
    if printf_buffer is None or printf_buffer.storage != "pushconstant":
        return data
    words = spirv.to_words(data)
    uint32, constants = spirv.int32_constants(words)
    pointee: dict[int, int] = {}
    member_offsets: dict[tuple[int, int], int] = {}
    pc_vars: dict[int, int] = {}  # push-constant variable -> its struct type
    first_function = None
    for pos, op, n in spirv.instructions(words):
        if op == OP_TYPE_POINTER:
            pointee[words[pos + 1]] = words[pos + 3]
        elif op == OP_MEMBER_DECORATE and n == 5 and words[pos + 3] == DECORATION_OFFSET:
            member_offsets[(words[pos + 1], words[pos + 2])] = words[pos + 4]
        elif op == OP_VARIABLE and words[pos + 3] == SC_PUSH_CONSTANT:
            pc_vars[words[pos + 2]] = pointee.get(words[pos + 1])
        elif op == OP_FUNCTION:
            first_function = pos
            break
    if first_function is None:
        return data

    # The printf buffer's pointers: its push constant loaded and converted, and chains from it.
    member_chains, loads, printf_pointers = set(), set(), set()
    printf_blocks, block = set(), None
    phis = []
    for pos, op, n in spirv.instructions(words):
        if pos < first_function:
            continue
        if op == OP_LABEL:
            block = words[pos + 1]
        elif op == OP_ACCESS_CHAIN and n == 5 and words[pos + 3] in pc_vars:
            struct = pc_vars[words[pos + 3]]
            member = constants.get(words[pos + 4], (0, None))[1]
            if member is not None and member_offsets.get((struct, member)) == printf_buffer.offset:
                member_chains.add(words[pos + 2])
        elif op == OP_LOAD and words[pos + 3] in member_chains:
            loads.add(words[pos + 2])
        elif op == OP_CONVERT_U_TO_PTR and words[pos + 3] in loads:
            printf_pointers.add(words[pos + 2])
        elif op in (OP_ACCESS_CHAIN, OP_PTR_ACCESS_CHAIN) and words[pos + 3] in printf_pointers:
            printf_pointers.add(words[pos + 2])
        elif op == OP_STORE and words[pos + 1] in printf_pointers:
            printf_blocks.add(block)
        elif op == OP_PHI and n == 7 and words[pos + 1] in uint32:
            phis.append(pos)

    zeros = {t: cid for cid, (t, value) in constants.items() if value == 0}
    new_constants, bound, changed = array("I"), words[3], False
    for pos in phis:
        ty = words[pos + 1]
        (v1, p1), (v2, p2) = (words[pos + 3], words[pos + 4]), (words[pos + 5], words[pos + 6])
        for at, value, parent, other in ((pos + 3, v1, p1, v2), (pos + 5, v2, p2, v1)):
            if constants.get(value) == (ty, 1) and parent in printf_blocks and constants.get(other) == (ty, MINUS_ONE):
                if ty not in zeros:  # a 0 of the phi's own type
                    zeros[ty], bound = bound, bound + 1
                    new_constants.extend([(4 << 16) | OP_CONSTANT, ty, zeros[ty], 0])
                words[at] = zeros[ty]
                changed = True
    if not changed:
        return data
    return spirv.with_declarations(words, first_function, new_constants, bound)
