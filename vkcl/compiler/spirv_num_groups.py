"""Repair 16: the work-group count (the NumWorkgroups builtin) can be given by the runtime.

A launch of more work-groups than the device dispatches at once (maxComputeWorkGroupCount:
65,535 on lavapipe in every dimension, on NVIDIA in y and z) is recorded as several
vkCmdDispatchBase calls, and in each the NumWorkgroups builtin is that call's count. clspv
computes get_num_groups() and, for programs with uniform work-groups (OpenCL C 1.x, the default),
get_global_size() from it; so get_global_size(0) of a 1-D launch of 65,537 work-items on lavapipe
was 65,535 in the first call and 2 in the second (CTS half vstore_half*: the last work-item of
the first call took itself for the last of all and wrote its elements shifted).

Each load of the builtin becomes a choice between it and specialization constants the runtime
sets where it splits a launch (vkcl/core/ndrange.py): a flag (SPEC_FLAG, false by default) and
the counts (SPEC_COUNTS). Launches that need no split use the pipeline they always did, and the
driver folds the choice away.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

SPEC_FLAG = 0x7F564B00  # vkcl's own specialization ids, far from clspv's small ones
SPEC_COUNTS = (0x7F564B01, 0x7F564B02, 0x7F564B03)

OP_TYPE_BOOL, OP_SPEC_CONSTANT_FALSE, OP_SPEC_CONSTANT, OP_SPEC_CONSTANT_COMPOSITE = 20, 49, 50, 51
OP_SELECT, OP_NAME = 169, 5
DECORATION_SPEC_ID, DECORATION_BUILTIN, BUILTIN_NUM_WORKGROUPS = 1, 11, 24
_CHAINS = (spirv.OP_ACCESS_CHAIN, spirv.OP_IN_BOUNDS_ACCESS_CHAIN)
# Other instructions that could take a pointer to the builtin (whose operands are all ids, but
# for OpCopyMemory's memory operands): OpFunctionCall, OpCopyMemory, OpPtrAccessChain,
# OpCopyObject, OpBitcast, OpSelect, OpPhi. (Any id test of all operands would also match
# literals, such as the alignment of a load.)
_OTHER_POINTER_USERS = (57, 63, 67, 83, 124, 169, 245)


def _instruction(op: int, *operands: int) -> list[int]:
    return [(len(operands) + 1) << 16 | op, *operands]


def overridable(data: bytes) -> bool:
    """Whether the module's work-group count can be set by specialization (this repair ran and
    found the builtin used)."""
    words = spirv.to_words(data)
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_DECORATE and n == 4 and words[pos + 2] == DECORATION_SPEC_ID \
                and words[pos + 3] == SPEC_FLAG:
            return True
        if op == spirv.OP_FUNCTION:
            break
    return False


def num_groups_from_spec_constants(data: bytes) -> bytes:
    """The module with each load of NumWorkgroups (whole, or one component through an access
    chain with a constant index) selected against SPEC_FLAG's counts; unchanged where the
    builtin is not used, or used some other way, or the module has been repaired already."""
    if overridable(data):
        return data
    words = spirv.to_words(data)
    var = uint = v3uint = bool_type = first_function = builtin_at = None
    _, constants = spirv.int32_constants(words)
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_DECORATE and n == 4 and words[pos + 2] == DECORATION_BUILTIN \
                and words[pos + 3] == BUILTIN_NUM_WORKGROUPS:
            var, builtin_at = words[pos + 1], pos + n
        elif op == spirv.OP_TYPE_INT and words[pos + 2] == 32 and words[pos + 3] == 0:
            uint = words[pos + 1]
        elif op == spirv.OP_TYPE_VECTOR and n == 4 and words[pos + 3] == 3:
            if words[pos + 2] == uint:
                v3uint = words[pos + 1]
        elif op == OP_TYPE_BOOL:
            bool_type = words[pos + 1]
        elif op == spirv.OP_FUNCTION:
            first_function = pos
            break
    if var is None or uint is None or v3uint is None or first_function is None:
        return data
    # Pointers into the builtin: the variable (component None) and chains to one component.
    pointers: dict[int, int | None] = {var: None}
    loads: dict[int, int] = {}  # position of each load of one of them -> its pointer
    for pos, op, n in spirv.instructions(words):
        if pos < first_function:
            continue
        operands = words[pos + 1:pos + n]
        if op in _CHAINS and operands[2] == var:
            index = constants.get(operands[3]) if n == 5 else None
            if index is None or index[1] > 2:
                return data  # a chain the repair does not follow: leave the module as it is
            pointers[operands[1]] = index[1]
        elif op == spirv.OP_LOAD and operands[2] in pointers:
            loads[pos] = operands[2]
        elif op in _OTHER_POINTER_USERS and any(o in pointers for o in operands):
            return data  # the builtin used some other way
    if not loads or (any(pointers[p] is None for p in loads.values()) and spirv.version(words) < (1, 4)):
        return data  # (a vector select with a scalar condition needs SPIR-V 1.4)
    bound = words[3]
    ids = iter(range(bound, bound + 16 + len(loads)))
    flag, counts, whole = next(ids), [next(ids) for _ in SPEC_COUNTS], next(ids)
    declarations: list[int] = []
    if bool_type is None:
        bool_type = next(ids)
        declarations += _instruction(OP_TYPE_BOOL, bool_type)
    declarations += _instruction(OP_SPEC_CONSTANT_FALSE, bool_type, flag)
    for count in counts:
        declarations += _instruction(OP_SPEC_CONSTANT, uint, count, 1)
    declarations += _instruction(OP_SPEC_CONSTANT_COMPOSITE, v3uint, whole, *counts)
    decorations = _instruction(spirv.OP_DECORATE, flag, DECORATION_SPEC_ID, SPEC_FLAG)
    for count, spec_id in zip(counts, SPEC_COUNTS):
        decorations += _instruction(spirv.OP_DECORATE, count, DECORATION_SPEC_ID, spec_id)
    out = array("I", words[:builtin_at])
    out.extend(decorations)
    out.extend(words[builtin_at:first_function])
    out.extend(declarations)
    for pos, op, n in spirv.instructions(words):
        if pos < first_function:
            continue
        if pos not in loads:
            out.extend(words[pos:pos + n])
            continue
        result_type, result, raw = words[pos + 1], words[pos + 2], next(ids)
        out.extend([words[pos], result_type, raw, *words[pos + 3:pos + n]])
        component = pointers[loads[pos]]
        out.extend(_instruction(OP_SELECT, result_type, result, flag,
                                whole if component is None else counts[component], raw))
    out[3] = next(ids)
    return spirv.to_bytes(out)
