"""Loops that wait at a barrier unrolled in the SPIR-V, for llvmpipe (DeviceCaps.loop_unroll_count;
docs/architecture.md, "Loops on lavapipe").

llvmpipe (Mesa 22.3) ends every loop of a batch of 8 work-items silently once the batch has
taken 65,535 back-edges. vkcl has LLVM (inside clspv) unroll loops 16 times on llvmpipe, but
LLVM unrolls no loop that holds a convergent call (barrier()) unless it can divide its trip
count (LoopUnrollPass: `UP.AllowRemainder &= ConvergenceAllowsRuntime`, which no clspv option
changes), so `for (i = lid; i < n; i += lsz) { ...; barrier(...); }` keeps one back-edge per
trip and is cut after 65,535.

Here such a loop (header H with `OpLoopMerge M C`, its blocks those reached from H short of M
and of H, its one back-edge from the continue target C) becomes k copies of its blocks one
after another, each keeping its own exits to M: copy j's header has no phis (they are the
values copy j-1 computed) and no merge instruction, copy j's C branches to copy j+1's header,
and the last copy's C is the loop's continue target and branches back to the first header
(whose phis take its values). A conditional branch to C without a merge instruction (an `if`
whose end is C) gets C as its merge in the copies where C is no longer the continue target.
Values of the loop used after it get a phi in M over the copies; decorations of the loop's
values (NoContraction) are repeated for their copies.

Every work-item runs the same instructions in the same order as before, so results are
unchanged bit for bit; it is valid for a loop with a barrier because OpenCL requires every
work-item of a work-group to take the same number of trips of such a loop (each copy's exits
are taken by all of them alike, and a batch of llvmpipe reaches as many barriers as before).
Left alone: a loop with an exit other than to M (a return), an OpSwitch, a branch to C from
inside a selection or inner loop (a `continue` there; in copies that C is no longer a continue
target), a header or C that branches two ways inside the loop, an instruction outside a short
list of known operand layouts, and copies over `size` instructions (all loops of the module
together too: llvmpipe compiles a kernel with barriers as a coroutine, and its splitting is
slow on much code).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_LINE, OP_NO_LINE, OP_EXT_INST = 8, 317, 12
OP_DECORATE, OP_GROUP_DECORATE, OP_DECORATE_ID, OP_DECORATE_STRING = 71, 74, 332, 5632
OP_LOAD, OP_STORE, OP_COPY_MEMORY = 61, 62, 63
OP_COMPOSITE_EXTRACT, OP_COMPOSITE_INSERT, OP_VECTOR_SHUFFLE = 81, 82, 79
OP_CONTROL_BARRIER, OP_MEMORY_BARRIER, OP_ATOMIC_STORE = 224, 225, 228
OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL = 245, 246, 247, 248
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_RETURN_VALUE = 249, 250, 251, 254

# Instructions a copied block may hold: those whose operands are ids but for the literals
# spirv.id_operands knows (memory operands, composite indices, the ext-inst number): access
# chains, composites, conversions, arithmetic, logic, comparisons, bit operations, OpSelect,
# atomics, barriers, calls, OpCopyLogical and the subgroup operations without a group
# operation (spirv.id_operands takes all of a reduction's operands after it for literals).
_COPYABLE = (frozenset({OP_LINE, OP_NO_LINE, OP_EXT_INST, 57, OP_LOAD, OP_STORE, OP_COPY_MEMORY, 65, 66, 67,
                        70, 77, 78, OP_VECTOR_SHUFFLE, 80, OP_COMPOSITE_EXTRACT, OP_COMPOSITE_INSERT, 83,
                        OP_CONTROL_BARRIER, OP_MEMORY_BARRIER, OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE,
                        OP_BRANCH, OP_BRANCH_CONDITIONAL, 400})
             | frozenset(range(109, 206)) | frozenset(range(227, 243)) | frozenset(range(333, 342))
             | frozenset(range(343, 349)))
# Of those, the ones without a result id.
_NO_RESULT = frozenset({OP_LINE, OP_NO_LINE, OP_STORE, OP_COPY_MEMORY, OP_CONTROL_BARRIER, OP_MEMORY_BARRIER,
                        OP_ATOMIC_STORE, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_BRANCH, OP_BRANCH_CONDITIONAL})
# Instructions after the loop that may use its values, with where their ids are.
_USERS = _COPYABLE | {OP_SWITCH, OP_RETURN_VALUE}


def _ids(inst: array) -> list[int]:
    """Offsets within `inst` of the ids it uses (not its result id or result type)."""
    op, n = inst[0] & 0xFFFF, len(inst)
    if op == OP_SWITCH:
        return [1]
    if op == OP_PHI:
        return list(range(3, n, 2))
    words = array("I", range(n))  # id_operands on positions yields the offsets themselves
    start = 3 if op not in _NO_RESULT and op != OP_RETURN_VALUE else 1
    return [i for i in spirv.id_operands(words, 0, op, n) if i >= start]



def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


def _successors(block: list[array]) -> list[int] | None:
    """The labels the block branches to; None for a terminator this rewrite does not copy."""
    term = block[-1]
    if _op(term) == OP_BRANCH:
        return [term[1]]
    if _op(term) == OP_BRANCH_CONDITIONAL:
        return list(dict.fromkeys(term[2:4]))
    return None


def unroll_barrier_loops(data: bytes, copies: int, size: int) -> bytes:
    """The module with each loop that holds an OpControlBarrier made `copies` (or 8, 4, 2)
    copies of its blocks, while they stay within `size` instructions (`size` also bounds the
    instructions added to the module)."""
    if copies < 2:
        return data
    words = spirv.to_words(data)
    insts = [words[pos:pos + n] for pos, _, n in spirv.instructions(words)]
    state = {"bound": words[3], "budget": size, "copies_of": {}}
    # Values in decoration groups are left alone (clspv makes none); decorated ones (NoContraction)
    # have their decorations repeated for each copy.
    grouped = {w for inst in insts if _op(inst) == OP_GROUP_DECORATE for w in inst[2:]}
    changed = False

    def unroll(function: list[array]) -> list[array]:
        nonlocal changed
        changed |= _unroll_function(function, copies, size, state, grouped)
        return function
    out = spirv.map_functions(insts, unroll)
    if not changed:
        return data
    result = array("I", words[:spirv.HEADER_WORDS])
    result[3] = state["bound"]
    copies_of = state["copies_of"]
    for inst in out:
        result.extend(inst)
        if _op(inst) in (OP_DECORATE, OP_DECORATE_ID, OP_DECORATE_STRING) and inst[1] in copies_of:
            todo = list(copies_of[inst[1]])
            while todo:  # copies of copies too (an inner loop copied with its outer loop, then itself)
                new_id = todo.pop()
                todo += copies_of.get(new_id, [])
                copy = array("I", inst)
                copy[1] = new_id
                result.extend(copy)
    return spirv.to_bytes(result)


def _unroll_function(insts: list[array], copies: int, size: int, state: dict, grouped: set) -> bool:
    """Innermost loops first: their trips are the most, and what they take of the budget is
    copied along with an outer loop's blocks anyway."""
    if not any(_op(inst) == OP_LABEL for inst in insts):
        return False
    changed, tried = False, set()
    for innermost in (True, False):
        while True:
            head, blocks, end = spirv.function_blocks(insts)
            for block in blocks:
                label = block[0][1]
                if len(block) < 3 or _op(block[-2]) != OP_LOOP_MERGE or label in tried:
                    continue
                new = _unrolled(blocks, label, copies, size, state, grouped, innermost)
                if new is _LATER:
                    continue
                tried.add(label)
                if new is None:
                    continue
                insts[:] = head + [inst for b in new for inst in b] + end
                changed = True
                break
            else:
                break
    return changed


_LATER: list = []  # _unrolled's answer for a loop that holds another while innermost loops go first


def _dominators(order: list[int], preds: dict[int, list[int]]) -> dict[int, set[int]]:
    everything = set(order)
    dom = {b: set(everything) for b in order}
    dom[order[0]] = {order[0]}
    moved = True
    while moved:
        moved = False
        for b in order[1:]:
            new = {b} | set.intersection(*(dom[p] for p in preds[b])) if preds[b] else {b}
            if new != dom[b]:
                dom[b], moved = new, True
    return dom


def _region(blocks: list[list[array]], header: int, merge: int, cont: int) -> list[int] | None:
    """The loop's blocks in layout order (the header first), or None where it is not one this
    rewrite copies (see the module's docstring)."""
    by_label = {b[0][1]: b for b in blocks}
    region, stack = set(), [header]
    while stack:
        label = stack.pop()
        if label in region:
            continue
        if label not in by_label:
            return None
        region.add(label)
        succ = _successors(by_label[label])
        if succ is None:
            return None
        for s in succ:
            if s == header:
                if label != cont:
                    return None  # a second back-edge
            elif s != merge:
                stack.append(s)
    if cont not in region or header not in _successors(by_label[cont]):
        return None
    order = [b[0][1] for b in blocks if b[0][1] in region]
    if order[0] != header:
        return None
    preds: dict[int, list[int]] = {b: [] for b in order}
    for b in blocks:
        label = b[0][1]
        for s in _successors(b) or ():
            if s in region and s != header:
                if label not in region:
                    return None  # entered from outside other than through the header
                preds[s].append(label)
        named = set(b[-2][1:3]) if len(b) > 1 and _op(b[-2]) in (OP_LOOP_MERGE, OP_SELECTION_MERGE) else set()
        if label not in region and named & (region - {header} if _op(b[-2]) == OP_SELECTION_MERGE else region):
            return None  # (an `if` before the loop may end at its header, which stays where it was)
    body = [inst for label in order for inst in by_label[label]]
    if not any(_op(i) == OP_CONTROL_BARRIER for i in body) or any(_op(i) not in _COPYABLE and _op(i) != OP_LABEL
                                                                   for i in body):
        return None
    term = by_label[header][-1]
    if _op(term) == OP_BRANCH_CONDITIONAL and merge not in term[2:4] and term[2] != term[3] and header != cont:
        return None  # the header branches two ways inside the loop: it needs its merge instruction
    cterm = by_label[cont][-1]
    if _op(cterm) == OP_BRANCH_CONDITIONAL and merge not in cterm[2:4] and cterm[2] != cterm[3]:
        return None  # the back-edge block branches two ways inside the loop
    # No branch to the continue target from inside a selection or an inner loop; a conditional
    # one without a merge instruction (a `continue` or the end of an `if`) gets the continue
    # target as its merge in the copies where it is no longer one: that block must dominate it.
    dom = _dominators(order, preds)
    for label in preds[cont]:
        block = by_label[label]
        if _implicit_continue(block, cont, merge) and label not in dom[cont]:
            return None
    for label in order:
        inner = by_label[label][-2] if len(by_label[label]) > 1 else None
        if label == header or inner is None or _op(inner) not in (OP_SELECTION_MERGE, OP_LOOP_MERGE):
            continue
        construct = {b for b in order if label in dom[b] and inner[1] not in dom[b]}
        if cont not in construct and any(p in construct for p in preds[cont]):
            return None
    return order


def _implicit_continue(block: list[array], cont: int, merge: int) -> bool:
    """Whether the block ends in a conditional branch to the continue target that has no merge
    instruction and is no break."""
    term = block[-1]
    return (_op(term) == OP_BRANCH_CONDITIONAL and cont in term[2:4] and merge not in term[2:4]
            and term[2] != term[3] and _op(block[-2]) not in (OP_SELECTION_MERGE, OP_LOOP_MERGE))


def _unrolled(blocks: list[list[array]], header: int, copies: int, size: int, state: dict,
              grouped: set, innermost: bool = False) -> list[list[array]] | None:
    by_label = {b[0][1]: b for b in blocks}
    loop_merge = by_label[header][-2]
    merge, cont = loop_merge[1], loop_merge[2]
    order = _region(blocks, header, merge, cont)
    if order is None:
        return None
    if innermost and any(len(by_label[b]) > 1 and _op(by_label[b][-2]) == OP_LOOP_MERGE for b in order[1:]):
        return _LATER
    length = sum(len(by_label[b]) - 1 for b in order)
    k = copies
    while k >= 2 and (k * length > size or (k - 1) * length > state["budget"]):
        k //= 2
    if k < 2:
        return None
    region = set(order)
    header_phis = [i for i in by_label[header] if _op(i) == OP_PHI]
    defined, types = set(), {}
    for label in order:
        for inst in by_label[label]:
            if _op(inst) not in _NO_RESULT and _op(inst) != OP_LABEL:
                defined.add(inst[2])
                types[inst[2]] = inst[1]
    if defined & grouped:
        return None
    back = {}
    for phi in header_phis:
        froms = [phi[p - 1] for p in range(4, len(phi), 2) if phi[p] == cont]
        if len(froms) != 1:
            return None
        back[phi[2]] = froms[0]
    # Uses after the loop: in instructions whose ids are known; the merge block's phis apart.
    used_after = set()
    for b in blocks:
        if b[0][1] in region:
            continue
        for inst in b:
            named = set(inst[1:]) & defined
            if not named:
                continue
            if _op(inst) not in _USERS:
                return None
            ids = {inst[p] for p in _ids(inst)}
            if _op(inst) == OP_PHI and b[0][1] == merge:
                ids = {inst[p] for p in range(3, len(inst), 2) if inst[p + 1] not in region}
            used_after |= named & ids

    def new_id() -> int:
        state["bound"] += 1
        return state["bound"] - 1

    labels = [{b: b for b in order}] + [{b: new_id() for b in order} for _ in range(k - 1)]
    maps: list[dict[int, int]] = [{v: v for v in defined}]
    for j in range(1, k):
        current = {phi: maps[-1].get(value, value) for phi, value in back.items()}
        for v in sorted(defined - set(back)):
            current[v] = new_id()
            state["copies_of"].setdefault(v, []).append(current[v])
        maps.append(current)
    heads = [labels[j][header] for j in range(k)]

    def copy(inst: array, j: int) -> array:
        new, op = array("I", inst), _op(inst)
        for p in _ids(inst):
            new[p] = maps[j].get(new[p], new[p])
        if op not in _NO_RESULT and op != OP_LABEL:
            new[2] = maps[j][inst[2]]
        if op == OP_LABEL:
            new[1] = labels[j][inst[1]]
        elif op == OP_PHI:
            for p in range(4, len(inst), 2):
                new[p] = labels[j].get(inst[p], inst[p])
        elif op in (OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SELECTION_MERGE, OP_LOOP_MERGE):
            for p in ((1,) if op in (OP_BRANCH, OP_SELECTION_MERGE) else (2, 3) if op == OP_BRANCH_CONDITIONAL
                      else (1, 2)):
                t = inst[p]
                new[p] = heads[(j + 1) % k] if t == header else labels[j].get(t, t)
        return new

    out_blocks: list[list[array]] = []
    for j in range(k):
        for label in order:
            block = []
            for inst in by_label[label]:
                if label == header and j > 0 and _op(inst) in (OP_PHI, OP_LOOP_MERGE):
                    continue
                if label == header and j == 0 and _op(inst) == OP_PHI:
                    new = array("I", inst)
                    for p in range(4, len(inst), 2):
                        if inst[p] == cont:
                            new[p - 1], new[p] = maps[-1].get(back[inst[2]], back[inst[2]]), labels[-1][cont]
                    block.append(new)
                elif label == header and j == 0 and _op(inst) == OP_LOOP_MERGE:
                    new = array("I", inst)
                    new[2] = labels[-1][cont]
                    block.append(new)
                else:
                    if (j < k - 1 and inst is by_label[label][-1] and label != cont
                            and _implicit_continue(by_label[label], cont, merge)):
                        block.append(array("I", [(2 << 16) | OP_SELECTION_MERGE, labels[j][cont], 0]))
                        block[-1][0] = (3 << 16) | OP_SELECTION_MERGE
                    block.append(copy(inst, j))
            out_blocks.append(block)
    exits = [b for b in order if merge in (_successors(by_label[b]) or ())]
    outs = {v: new_id() for v in sorted(used_after)}

    def after(inst: array) -> array:
        if _op(inst) not in _USERS or not set(inst[1:]) & set(outs):
            return inst
        new = array("I", inst)
        for p in _ids(inst):
            new[p] = outs.get(new[p], new[p])
        return new

    result: list[list[array]] = []
    last = max(i for i, b in enumerate(blocks) if b[0][1] in region)
    for i, b in enumerate(blocks):
        label = b[0][1]
        if label in region:
            if i == last:
                result.extend(out_blocks)
            continue
        if label != merge:
            result.append([after(inst) for inst in b])
            continue
        block = [b[0]]
        for inst in b[1:]:
            if _op(inst) == OP_PHI:
                new = array("I", inst[:3])
                for p in range(3, len(inst), 2):
                    if inst[p + 1] in region:
                        for j in range(k):
                            new.extend([maps[j].get(inst[p], inst[p]), labels[j][inst[p + 1]]])
                    else:
                        new.extend([outs.get(inst[p], inst[p]), inst[p + 1]])
                new[0] = (len(new) << 16) | OP_PHI
                block.append(new)
            else:
                if outs and len(block) == 1 + sum(_op(x) == OP_PHI for x in b[1:]):
                    for v, out in outs.items():
                        phi = array("I", [0, types[v], out])
                        for j in range(k):
                            for e in exits:
                                phi.extend([maps[j].get(v, v), labels[j][e]])
                        phi[0] = (len(phi) << 16) | OP_PHI
                        block.append(phi)
                block.append(after(inst))
        result.append(block)
    state["budget"] -= (k - 1) * length
    return result
