"""Loops that wait at a barrier unrolled in the SPIR-V, for llvmpipe (DeviceCaps.loop_unroll_count;
docs/architecture.md, "Loops on lavapipe").

llvmpipe (Mesa 22.3) ends every loop of a batch of 8 work-items silently once the batch has
taken 65,535 back-edges. vkcl has LLVM (inside clspv) unroll loops 16 times on llvmpipe, but
LLVM unrolls no loop that holds a convergent call (barrier()) unless it can divide its trip
count (LoopUnrollPass: `UP.AllowRemainder &= ConvergenceAllowsRuntime`, which no clspv option
changes), so `for (i = lid; i < n; i += lsz) { ...; barrier(...); }` keeps one back-edge per
trip and is cut after 65,535.

Here such a loop, where clspv left it one block (the header is its own continue target and
back-edge block, `OpLoopMerge M B` and `OpBranchConditional c M B`), becomes k copies of that
block one after another, each keeping its own exit test to M: copy j's phis are the values
copy j-1 computed, the last copy branches back to the first (whose phis take its values) and is
the loop's continue target. Every work-item runs the same instructions in the same order as
before, so results are unchanged bit for bit; it is valid for a loop with a barrier because
OpenCL requires every work-item of a work-group to take the same number of trips of such a
loop (each copy's exits are taken by all of them alike). Values of the loop used after it get
a phi in M over the copies. A loop whose block holds an instruction outside a short list of
known operand layouts is left alone, as is one whose copies would exceed `size` instructions
(all loops of the module together too: llvmpipe compiles a kernel with barriers as a
coroutine, and its splitting is slow on much code).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_LINE, OP_NO_LINE, OP_EXT_INST, OP_FUNCTION, OP_FUNCTION_END = 8, 317, 12, 54, 56
OP_DECORATE, OP_GROUP_DECORATE, OP_DECORATE_ID, OP_DECORATE_STRING = 71, 74, 332, 5632
OP_LOAD, OP_STORE, OP_COPY_MEMORY = 61, 62, 63
OP_COMPOSITE_EXTRACT, OP_COMPOSITE_INSERT, OP_VECTOR_SHUFFLE = 81, 82, 79
OP_CONTROL_BARRIER, OP_MEMORY_BARRIER, OP_ATOMIC_STORE = 224, 225, 228
OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL = 245, 246, 247, 248
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_RETURN_VALUE = 249, 250, 251, 254

# Instructions a copied block may hold: those whose operands are ids but for the literals
# spirv._id_operands knows (memory operands, composite indices, the ext-inst number): access
# chains, composites, conversions, arithmetic, logic, comparisons, bit operations, OpSelect,
# atomics, barriers, calls, OpCopyLogical and the subgroup operations without a group
# operation (spirv._id_operands takes all of a reduction's operands after it for literals).
_COPYABLE = (frozenset({OP_LINE, OP_NO_LINE, OP_EXT_INST, 57, OP_LOAD, OP_STORE, OP_COPY_MEMORY, 65, 66, 67,
                        70, 77, 78, OP_VECTOR_SHUFFLE, 80, OP_COMPOSITE_EXTRACT, OP_COMPOSITE_INSERT, 83,
                        OP_CONTROL_BARRIER, OP_MEMORY_BARRIER, OP_PHI, OP_LOOP_MERGE,
                        OP_BRANCH_CONDITIONAL, 400})
             | frozenset(range(109, 206)) | frozenset(range(227, 243)) | frozenset(range(333, 342))
             | frozenset(range(343, 349)))
# Of those, the ones without a result id.
_NO_RESULT = frozenset({OP_LINE, OP_NO_LINE, OP_STORE, OP_COPY_MEMORY, OP_CONTROL_BARRIER, OP_MEMORY_BARRIER,
                        OP_ATOMIC_STORE, OP_LOOP_MERGE, OP_BRANCH_CONDITIONAL})
# Instructions after the loop that may use its values, with where their ids are.
_USERS = _COPYABLE | {OP_BRANCH, OP_SELECTION_MERGE, OP_SWITCH, OP_RETURN_VALUE}


def _ids(inst: array) -> list[int]:
    """Offsets within `inst` of the ids it uses (not its result id or result type)."""
    op, n = inst[0] & 0xFFFF, len(inst)
    if op == OP_SWITCH:
        return [1]
    if op == OP_PHI:
        return list(range(3, n, 2))
    words = array("I", range(n))  # _id_operands on positions yields the offsets themselves
    start = 3 if op not in _NO_RESULT and op not in (OP_BRANCH, OP_RETURN_VALUE, OP_SELECTION_MERGE) else 1
    return [i for i in spirv._id_operands(words, 0, op, n) if i >= start]


def _blocks(insts: list[array]) -> list[tuple[int, int]]:
    """(start, end) index ranges of the blocks among one function's instructions."""
    out, start = [], None
    for i, inst in enumerate(insts):
        op = inst[0] & 0xFFFF
        if op == OP_LABEL:
            start = i
        elif start is not None and op in (OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, 252, 253, 254, 255):
            out.append((start, i + 1))
            start = None
    return out


def _single_block_loop(insts: list[array], start: int, end: int) -> int | None:
    """The merge block of the barrier loop that is the block insts[start:end], else None."""
    label = insts[start][1]
    merge, term = insts[end - 2], insts[end - 1]
    if merge[0] & 0xFFFF != OP_LOOP_MERGE or merge[2] != label or term[0] & 0xFFFF != OP_BRANCH_CONDITIONAL:
        return None
    if sorted(term[2:4]) != sorted((label, merge[1])) or term[2] == term[3]:
        return None
    body = insts[start + 1:end]
    if not any(i[0] & 0xFFFF == OP_CONTROL_BARRIER for i in body):
        return None
    if any(i[0] & 0xFFFF not in _COPYABLE for i in body):
        return None
    return merge[1]


def unroll_barrier_loops(data: bytes, copies: int, size: int) -> bytes:
    """The module with each one-block loop that holds an OpControlBarrier made `copies` (or 8,
    4, 2) copies of its block, while they stay within `size` instructions (`size` also bounds
    the instructions added to the module)."""
    if copies < 2:
        return data
    words = spirv.to_words(data)
    insts = [words[pos:pos + n] for pos, _, n in spirv.instructions(words)]
    state = {"bound": words[3], "budget": size, "copies_of": {}}
    # Values in decoration groups are left alone (clspv makes none); decorated ones (NoContraction)
    # have their decorations repeated for each copy.
    decorated = {w for inst in insts if inst[0] & 0xFFFF == OP_GROUP_DECORATE for w in inst[2:]}
    out: list[array] = []
    changed = False
    i = 0
    while i < len(insts):
        if insts[i][0] & 0xFFFF != OP_FUNCTION:
            out.append(insts[i])
            i += 1
            continue
        j = next(k for k in range(i, len(insts)) if insts[k][0] & 0xFFFF == OP_FUNCTION_END)
        function = insts[i:j + 1]
        changed |= _unroll_function(function, copies, size, state, decorated)
        out.extend(function)
        i = j + 1
    if not changed:
        return data
    result = array("I", words[:spirv.HEADER_WORDS])
    result[3] = state["bound"]
    copies_of = state["copies_of"]
    for inst in out:
        result.extend(inst)
        if inst[0] & 0xFFFF in (OP_DECORATE, OP_DECORATE_ID, OP_DECORATE_STRING) and inst[1] in copies_of:
            for new_id in copies_of[inst[1]]:
                copy = array("I", inst)
                copy[1] = new_id
                result.extend(copy)
    return spirv.to_bytes(result)


def _unroll_function(insts: list[array], copies: int, size: int, state: dict, decorated: set) -> bool:
    changed = False
    while True:
        for start, end in _blocks(insts):
            merge = _single_block_loop(insts, start, end)
            if merge is None:
                continue
            length = end - start - 3  # the body: not the label, phis counted, not the merge and branch
            k = copies
            while k >= 2 and (k * length > size or (k - 1) * length > state["budget"]):
                k //= 2
            if k < 2:
                continue
            new = _unrolled(insts, start, end, merge, k, state, decorated)
            if new is None:
                continue
            insts[:] = new
            state["budget"] -= (k - 1) * length
            changed = True
            break  # the block ranges changed; the unrolled block no longer matches
        else:
            return changed


def _unrolled(insts: list[array], start: int, end: int, merge: int, k: int, state: dict,
              decorated: set) -> list[array] | None:
    label = insts[start][1]
    block = insts[start:end]
    phis = [inst for inst in block[1:] if inst[0] & 0xFFFF == OP_PHI]
    body = [inst for inst in block[1:-2] if inst[0] & 0xFFFF != OP_PHI]
    loop_merge, term = block[-2], block[-1]
    defined = {inst[2] for inst in phis} | {inst[2] for inst in body if inst[0] & 0xFFFF not in _NO_RESULT}
    types = {inst[2]: inst[1] for inst in phis}
    types.update({inst[2]: inst[1] for inst in body if inst[0] & 0xFFFF not in _NO_RESULT})
    if defined & decorated:
        return None
    back = {}
    for phi in phis:
        froms = [phi[p - 1] for p in range(4, len(phi), 2) if phi[p] == label]
        if len(froms) != 1:
            return None
        back[phi[2]] = froms[0]
    # Uses after the loop: only in instructions whose ids we can find, and none in a loop-merge
    # or selection-merge position naming this block.
    outside_uses = False
    for n, inst in enumerate(insts):
        if start <= n < end:
            continue
        op = inst[0] & 0xFFFF
        if op in (OP_LOOP_MERGE, OP_SELECTION_MERGE) and label in inst[1:3]:
            return None
        if op == OP_LABEL or op == OP_FUNCTION or op == OP_FUNCTION_END or op == 55 or op == 59:
            continue
        named = set(inst[1:]) & defined
        if not named:
            continue
        if op not in _USERS:
            return None
        if named & {inst[p] for p in _ids(inst)}:
            outside_uses = True

    def new_id() -> int:
        state["bound"] += 1
        return state["bound"] - 1

    labels = [label] + [new_id() for _ in range(k - 1)]
    maps: list[dict[int, int]] = [{v: v for v in defined}]
    copies_out: list[list[array]] = []
    for j in range(1, k):
        prev = maps[-1]
        current = {phi: prev.get(value, value) for phi, value in back.items()}
        code = [array("I", [(2 << 16) | OP_LABEL, labels[j]])]
        for inst in body:
            new = array("I", inst)
            for p in _ids(inst):
                new[p] = current.get(new[p], new[p])
            if inst[0] & 0xFFFF not in _NO_RESULT:
                current[inst[2]] = new[2] = new_id()
                state["copies_of"].setdefault(inst[2], []).append(new[2])
            code.append(new)
        branch = array("I", term)
        branch[1] = current.get(branch[1], branch[1])
        for p in (2, 3):
            if branch[p] == label:
                branch[p] = labels[(j + 1) % k]
        code.append(branch)
        maps.append(current)
        copies_out.append(code)
    first = [block[0]]
    for phi in phis:
        new = array("I", phi)
        for p in range(4, len(phi), 2):
            if phi[p] == label:
                new[p - 1] = maps[-1].get(back[phi[2]], back[phi[2]])
                new[p] = labels[-1]
        first.append(new)
    first += body
    lm = array("I", loop_merge)
    lm[2] = labels[-1]
    first.append(lm)
    branch = array("I", term)
    for p in (2, 3):
        if branch[p] == label:
            branch[p] = labels[1]
    first.append(branch)
    result = insts[:start] + first + [inst for code in copies_out for inst in code]
    rest = insts[end:]
    # The merge block: its phis over this block take a value from each copy; other uses of the
    # loop's values after it read a new phi there.
    m = next(n for n, inst in enumerate(rest) if inst[0] & 0xFFFF == OP_LABEL and inst[1] == merge)
    outs: dict[int, int] = {}
    head, tail = rest[:m + 1], rest[m + 1:]
    merged_phis, others = [], []
    for n, inst in enumerate(tail):
        if inst[0] & 0xFFFF != OP_PHI:
            others = tail[n:]
            break
        new = array("I", inst[:3])
        for p in range(3, len(inst), 2):
            if inst[p + 1] == label:
                for j in range(k):
                    new.extend([maps[j].get(inst[p], inst[p]), labels[j]])
            else:
                new.extend(inst[p:p + 2])
        new[0] = (len(new) << 16) | OP_PHI
        merged_phis.append(new)
    if outside_uses:
        used = set()
        for inst in rest[:m + 1] + others:
            used |= {inst[p] for p in _ids(inst)} & defined
        outs = {v: new_id() for v in sorted(used)}
        for v, out in sorted(outs.items()):
            phi = array("I", [0, types[v], out])
            for j in range(k):
                phi.extend([maps[j][v], labels[j]])
            phi[0] = (len(phi) << 16) | OP_PHI
            merged_phis.append(phi)

        def renamed(inst: array) -> array:
            if inst[0] & 0xFFFF not in _USERS:
                return inst  # checked above to name none of the loop's values
            new = array("I", inst)
            for p in _ids(inst):
                new[p] = outs.get(new[p], new[p])
            return new
        head = [renamed(inst) for inst in head]
        others = [renamed(inst) for inst in others]
    return result + head + merged_phis + others
