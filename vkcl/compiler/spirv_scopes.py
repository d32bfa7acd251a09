"""Repair 15: memory scopes narrowed to Subgroup for llvmpipe (lavapipe), where a wider one hangs
work-items or drops them.

On lavapipe (Mesa 22.3.6, LLVM 15) a memory barrier of Workgroup or wider scope, whether an
OpMemoryBarrier or the Acquire/Release semantics of an atomic instruction, acts as a work-group
control barrier. llvmpipe runs a work-group as 8-wide vectors of work-items, one after another
on one CPU thread, switching at barriers; where such a fence sits in control flow that not every
vector takes equally often, the vectors' barrier counts differ and the later vectors are never
finished. Seen: a loop whose trip count differs per work-item with `mem_fence()` (or
`atomic_work_item_fence(..., memory_scope_work_group)`, or an acquire-release
`atomic_fetch_add`) in its body, in a work-group of 16: work-items 8-15 never reached the
statement after the loop, while with `memory_scope_sub_group` all 16 did. The CTS's
c11_atomics atomic_flag and atomics atomic_cmpxchg (from OpenCL C 2.0, whose 1.x atomics keep
clspv's AcquireRelease: repair 6) failed by it.

On llvmpipe every work-item of every work-group runs on the host's CPUs, with the one coherent
memory, and its atomic instructions are the CPU's atomic instructions whatever their scope, so
a Subgroup scope keeps each atomic atomic; OpControlBarrier (barrier()) keeps its scopes. What
may be lost is the ordering a fence gives plain loads and stores of different work-groups
against the compiler's reordering; no case of it was seen (the CTS's c11_atomics atomic_fence,
which checks it, passes).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_CONSTANT, OP_FUNCTION, OP_MEMORY_BARRIER = 43, 54, 225
SCOPE_SUBGROUP = 3
# CrossDevice, Device, Workgroup, QueueFamily: the scopes narrowed.
_WIDE_SCOPES = {0, 1, 2, 5}
# Atomic opcodes -> word offset of their memory-scope operand (the semantics follow it).
_ATOMIC_SCOPE = {227: 4, 228: 2, 229: 4, 230: 4, 232: 4, 233: 4, 234: 4, 235: 4, 236: 4, 237: 4,
                 238: 4, 239: 4, 240: 4, 241: 4, 242: 4, 318: 4, 319: 2, 6035: 4, 5614: 4, 5615: 4}


def narrow_memory_scopes(data: bytes) -> bytes:
    """The module with every memory scope of OpMemoryBarrier and atomic instructions that is
    Workgroup or wider made Subgroup (the constant is shared or added)."""
    words = spirv.to_words(data)
    _, constants = spirv.int32_constants(words)
    subgroup = {type_id: cid for cid, (type_id, value) in constants.items() if value == SCOPE_SUBGROUP}
    bound, first_function = words[3], None
    new_constants = array("I")
    changed = False
    for pos, op, n in spirv.instructions(words):
        if op == OP_FUNCTION and first_function is None:
            first_function = pos
        at = pos + 1 if op == OP_MEMORY_BARRIER else pos + _ATOMIC_SCOPE.get(op, n)
        if at >= pos + n:
            continue
        const = constants.get(words[at])
        if const is None or const[1] not in _WIDE_SCOPES:
            continue  # an Invocation or Subgroup scope, or one not a constant (none in Vulkan)
        type_id = const[0]
        if type_id not in subgroup:
            subgroup[type_id] = bound
            new_constants.extend([(4 << 16) | OP_CONSTANT, type_id, bound, SCOPE_SUBGROUP])
            bound += 1
        words[at] = subgroup[type_id]
        changed = True
    if not changed:
        return data
    if not new_constants:
        return spirv.to_bytes(words)
    return spirv.with_declarations(words, first_function, new_constants, bound)
