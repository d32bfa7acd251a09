"""Long loops on llvmpipe run in several passes: a loop suspends before llvmpipe's budget of
loop back-edges is spent, and the runtime dispatches the kernel again to resume it (llvmpipe
only: DeviceCaps.resume_limit; spirv_fixes runs it before spirv_loop_cuts; the runtime side is
core/resume.py).

llvmpipe (Mesa 22.3) gives each shader invocation, a batch of up to 8 work-items, one budget of
65,535 back-edges for all its loops and then cuts every loop short (docs/architecture.md,
"Loops on lavapipe"). No rewrite inside one invocation escapes it, since the count is the
invocation's; a second invocation starts afresh. So each outermost loop of an entry point
(one not inside another loop) checks, at each trip, a count of the back-edges its work-item
took in all the function's loops (a Function variable every loop header increments); past
`limit` the loop leaves for a new merge block, where the work-item stores the loop's state in a
record of its own and returns (outside the loop: llvmpipe runs an `if`'s body under a mask
whether or not a lane takes it, so inside it would cost every trip):
  - the loop header's phis (its loop-carried values),
  - the values defined before the loop and used in it or after it that cannot be computed again
    (those that can, from constants, builtins and push constants, are computed again);
then sets its loop's bit in the dispatch's header. The runtime sees the bits and dispatches
again ("a pass"), once for each loop suspended there, with a pipeline whose SPEC_RESUME_LOOP
names the loop: each work-item whose record holds this launch's epoch and that loop's number
jumps to a copy of the function from the loop's header on, with the values read back, and
clears its loop number; the others return at once (the copies of other loops are dead code in
that pipeline, which keeps llvmpipe's compile small). `limit` is llvmpipe's budget over its lanes (a batch spends the
largest of its work-items' counts per loop, at most their sum).

Where the state lives: the device's loop word (core/loop_cuts.py, its address in spirv_loop_cuts'
specialization constants) holds at byte 16 the address of the running dispatch's header:
suspended flag, epoch, pass, work-group size, record area, and the dispatch's base group and
group counts, and where work-groups save their local memory (HEADER). A work-item's record is
at area + index * stride: the epoch, the loop number, then the saved values as 32-bit words.
Each changed entry point is named in an OpString "vkcl.resume <entry point> <stride> <0|1>",
1 where its work-groups suspend together.

An entry point that waits at barriers or uses Workgroup memory suspends by work-group: at
outermost loops holding a barrier (whose trips OpenCL makes the work-group's), on the group's
largest count (an atomic maximum between two barriers at each trip; once, before the loop,
where it has no inner loop: spirv_resume_checks._vote_once), saving its Workgroup variables to an
area of the group's and putting them back, then a barrier, before resuming; at outermost loops
without one, by a vote after the loop (spirv_resume_sync.py).

A work-item's Function variables (private arrays) are saved after the loop's words, element by
element, and put back before it resumes (at most PRIVATE_WORDS words).

In kernels that do not suspend by work-group, loops inside an outermost loop suspend too
(spirv_resume_plan.py, LoopPlan._plan_inner): one inner loop's trips within a single trip of
the loop around it can outrun the budget. The record keeps the inner loop's phis and what it
uses from before it (the outer loops' phis among them); its copy runs in parts
(LoopPlan._segments, a tree): the inner loop and the rest of the trip of the loop around it, up
to that loop's back-edge, then that loop from its header on, and so on out to the end of the
function. A back-edge or exit of a loop a part does not hold becomes a selection whose merge is
never reached (each way ends in a return); each such edge goes on in a part of its own, so no
two ways meet again. An inner loop whose copy would branch out of a trip from a block heading
a construct of its own, or hold a construct without its merge block, is not made to suspend
(LoopPlan._loop).

Left alone: entry points with more than MAX_LOOPS outermost loops, with calls or with Function
variables of more words or of a length that is not a constant, and loops whose saved values
include a pointer that is not a physical address nor computed from module-scope or Function
variables, or whose blocks hold an instruction of an unknown operand layout.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_barrier_loops import _ids
from vkcl.compiler.spirv_edit import Module, instruction as _inst
from vkcl.compiler.spirv_extra_lanes import marked_entry_points
from vkcl.compiler.spirv_resume_checks import LeftAlone, LoopChecks
from vkcl.compiler.spirv_resume_plan import _LAYOUT_KNOWN, MAX_WITH_INNER, Loop as _Loop, LoopPlan
from vkcl.compiler.spirv_resume_sync import DONE
from vkcl.compiler.spirv_resume_state import (
    BUILTIN_LOCAL_ID, BUILTIN_WORKGROUP_ID, EPOCH, MARK, OP_BITWISE_OR, OP_BRANCH, OP_BRANCH_CONDITIONAL,
    OP_CONTROL_BARRIER, OP_ENTRY_POINT, OP_FUNCTION, OP_FUNCTION_CALL, OP_I_EQUAL, OP_I_NOT_EQUAL, OP_LABEL,
    OP_LOOP_MERGE, OP_PHI, OP_RETURN, OP_RETURN_VALUE, OP_SELECT, OP_SELECTION_MERGE, OP_SHIFT_LEFT_LOGICAL,
    OP_STRING, OP_SWITCH, OP_U_CONVERT, OP_UNREACHABLE, OP_VARIABLE, RECORD_WORDS, SC_FUNCTION, SC_WORKGROUP,
    SPEC_RESUMING, WORD_HEADER, StateBuilder, label_positions as _label_positions, named as _named,
    result_id as _result, targets as _targets)

# The most words of Function variables (private arrays) a work-item saves: the records of a
# launch take this much per work-item.
PRIVATE_WORDS = 256
_TERMINATORS = (OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_RETURN, OP_RETURN_VALUE, OP_UNREACHABLE)


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


def resumed_entry_points(data: bytes) -> dict[str, tuple[int, bool, bool]]:
    """Entry point name -> (record stride in bytes, whether its work-groups suspend together and
    save their local memory, whether lanes past its group's width return at once:
    spirv_extra_lanes), of the entry points this pass changed."""
    words = spirv.to_words(data)
    extra = marked_entry_points(data)
    out = {}
    for pos, op, n in spirv.instructions(words):
        if op == OP_STRING:
            text, _ = spirv.literal_string(words, pos + 2, pos + n)
            parts = text.split(" ")
            if len(parts) == 4 and parts[0] == MARK:
                out[parts[1]] = (int(parts[2]), parts[3] == "1", parts[1] in extra)
    return out


def make_resumable(data: bytes, limit: int, budget: int = 60_000) -> bytes:
    """The module with its entry points' outermost loops made to suspend past `limit`
    back-edges (see the docstring); `budget`: at most this many instructions copied in all."""
    m = Module(data)
    if not any(_op(i) == OP_LOOP_MERGE for i in m.insts):
        return data
    if not any(_op(i) == 14 and i[1] == 5348 for i in m.insts):  # PhysicalStorageBuffer64 addressing
        return data
    entries = {i[2]: i for i in m.insts if _op(i) == OP_ENTRY_POINT and i[1] == 5}  # GLCompute
    variables = {i[2]: i[3] for i in m.insts if _op(i) == OP_VARIABLE and i[3] != SC_FUNCTION}
    builder = StateBuilder(m, limit, variables)
    changed = []
    out, i = [], 0
    while i < len(m.insts):
        inst = m.insts[i]
        if _op(inst) != OP_FUNCTION:
            out.append(inst)
            i += 1
            continue
        j = next(k for k in range(i, len(m.insts)) if _op(m.insts[k]) == 56)
        function = m.insts[i:j + 1]
        done = None
        if inst[2] in entries and builder.budget_left(budget):
            try:
                done = _entry_point(builder, function)
            except LeftAlone:
                done = None
        if done is None:
            out += function
        else:
            out += done[0]
            changed.append((entries[inst[2]], *done[1:]))
        i = j + 1
    if not changed:
        return data
    m.insts = out
    builder.finish(changed)
    return m.to_bytes()


def _entry_point(b: StateBuilder, function: list[array]):
    """The function made resumable with its outermost loops, and its record stride; None where
    it is left alone (see the module's docstring)."""
    head, blocks, end = spirv.function_blocks(function)
    if len(head) != 1:
        return None  # parameters
    body = [inst for blk in blocks for inst in blk]
    privates = [inst[2] for inst in blocks[0] if _op(inst) == OP_VARIABLE]
    if (any(_op(inst) == OP_FUNCTION_CALL for inst in body)
            or sum(_op(inst) == OP_VARIABLE for inst in body) > len(privates)):
        return None
    sizes = [b.private_words(v) for v in privates]
    if None in sizes or sum(sizes) > PRIVATE_WORDS:
        return None
    barriers = any(_op(inst) == OP_CONTROL_BARRIER for inst in body)
    local = sorted({inst[k] for inst in body if _op(inst) in _LAYOUT_KNOWN for k in _ids(inst)
                    if b.variables.get(inst[k]) == SC_WORKGROUP})
    if any(b.local_shape(v) is None for v in local):
        return None
    if (b.builtin(BUILTIN_WORKGROUP_ID, b.v3uint) is None
            or b.builtin(BUILTIN_LOCAL_ID, b.v3uint) is None):
        return None
    f = _Function(b, blocks)
    # Work-items that wait at barriers or share local memory suspend together, at loops every
    # one of them runs as often (those holding a barrier), with their group's local memory.
    f.group, f.locals = barriers or bool(local), local
    f.privates, f.private_words = privates, sum(sizes)
    loops = f.plan()
    if not loops or len(loops) > MAX_WITH_INNER:
        return None
    b.copied += sum(loop.size for loop in loops)
    return f.emit(head, end, loops)



class _Function(LoopChecks, LoopPlan):
    """One entry point's blocks and what resuming its outermost loops takes."""

    group = False  # its work-groups suspend together (barriers, local memory)
    locals: list = []  # the Workgroup variables it uses
    privates: list = []  # its Function variables, whose contents each work-item saves
    private_words = 0
    escaped: dict = {}  # a value used after a loop -> [(its phi there, the loop's blocks)] (_with_checks)

    def __init__(self, b: StateBuilder, blocks: list[list[array]]):
        self.b, self.m = b, b.m
        self.blocks = blocks
        self.by_label = {blk[0][1]: blk for blk in blocks}
        self.defined_in: dict[int, int] = {}
        self.defs: dict[int, array] = {}
        for blk in blocks:
            for inst in blk:
                rid = _result(inst)
                if rid is not None:
                    self.defined_in[rid] = blk[0][1]
                    self.defs[rid] = inst

    # -- output ----------------------------------------------------------------------------------
    def emit(self, head: list[array], end: list[array], loops: list[_Loop]):
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        # The record: epoch, loop number, the largest loop's words, then the Function variables.
        self.private_at = 4 * (RECORD_WORDS + max(loop.words + (loop.sync.words if loop.sync else 0)
                                                  for loop in loops))
        stride = self.private_at + 4 * self.private_words
        self.stride = stride = -(-stride // 8) * 8
        entry, load_word, have_word, resume_check, done = (new() for _ in range(5))
        unreachable_sw, unreachable = new(), new()
        self.counter = new()
        # The word's address, and in it the running dispatch's header: read only where given (a
        # pipeline made without the word, or a dispatch without a header, runs as before).
        lo, hi, shifted, word, given_w, hdr, given_h, later = (new() for _ in range(8))
        # The function's variables move to the new first block, as SPIR-V wants them there.
        first = [_inst(OP_LABEL, entry), _inst(OP_VARIABLE, b.fn_uint, self.counter, SC_FUNCTION, m.constant(u, 0)),
                 *[i for i in self.blocks[0] if _op(i) == OP_VARIABLE]]
        self.blocks[0] = [i for i in self.blocks[0] if _op(i) != OP_VARIABLE]
        self.by_label[self.blocks[0][0][1]] = self.blocks[0]
        b.load_ids(first)
        first += [_inst(OP_U_CONVERT, b.ulong, lo, b.spec[0]), _inst(OP_U_CONVERT, b.ulong, hi, b.spec[1]),
                 _inst(OP_SHIFT_LEFT_LOGICAL, b.ulong, shifted, hi, m.constant(b.ulong, 32)),
                 _inst(OP_BITWISE_OR, b.ulong, word, lo, shifted),
                 _inst(OP_I_NOT_EQUAL, b.bool, given_w, word, m.constant(b.ulong, 0)),
                 _inst(OP_SELECTION_MERGE, have_word, 0), _inst(OP_BRANCH_CONDITIONAL, given_w, load_word, have_word)]
        read_word = [_inst(OP_LABEL, load_word)]
        at_word = b.load(word, WORD_HEADER, b.ulong, read_word)
        read_word.append(_inst(OP_BRANCH, have_word))
        orig_entry = self.blocks[0][0][1]
        # Which part runs is a specialization constant (SPEC_RESUMING): the first pass's pipeline
        # has the copies below as dead code, a later pass's the original, and the compiler drops
        # it before llvmpipe compiles (a barrier kernel is a coroutine, whose splitting grows
        # with the square of its size: twice the code took pyopencl's first scan 2.8 -> 15 s).
        with_word = [_inst(OP_LABEL, have_word),
                     _inst(OP_PHI, b.ulong, hdr, at_word, load_word, m.constant(b.ulong, 0), entry),
                     _inst(OP_I_NOT_EQUAL, b.bool, given_h, hdr, m.constant(b.ulong, 0)),
                     _inst(OP_I_NOT_EQUAL, b.bool, later, b.spec_resuming, m.constant(u, 0))]
        if self.group:  # the group's largest count starts at 0 (every work-item passes here)
            with_word += [_inst(228, b.group_max, m.constant(u, 2), m.constant(u, 0), m.constant(u, 0))]
            words = [*(b.group_votes if any(loop.sync for loop in loops) else ()),
                     *(b.group_counts if any(loop.count_vote is not None for loop in loops) else ())]
            with_word += [_inst(228, w, m.constant(u, 2), m.constant(u, 0), m.constant(u, 0)) for w in words]
            with_word.append(b.group_barrier())  # after the OpAtomicStores
        with_word += [_inst(OP_SELECTION_MERGE, unreachable, 0),
                      _inst(OP_BRANCH_CONDITIONAL, later, resume_check, orig_entry)]
        self.header, self.given = hdr, given_h
        # Later passes: this work-item's record says where it resumes (its loop number, when
        # the epoch is this launch's), else it is done.
        rc = [_inst(OP_LABEL, resume_check)]
        rec = b.record(hdr, stride, rc)
        epoch_rec = b.load(rec, 0, u, rc)
        number = b.load(rec, 4, u, rc)
        epoch = b.load(hdr, EPOCH, u, rc)
        mine, sel, which = new(), new(), new()
        res_labels = {loop.number: new() for loop in loops}
        gates = {loop.number: (new(), new(), new()) for loop in loops}  # gate, its return, its merge
        rc += [_inst(OP_I_EQUAL, b.bool, mine, epoch_rec, epoch),
               _inst(199, u, which, number, m.constant(u, ~DONE)),  # OpBitwiseAnd: the loop, finished or not
               _inst(OP_SELECT, u, sel, mine, which, m.constant(u, 0)),
               _inst(OP_SELECTION_MERGE, unreachable_sw, 0),
               _inst(OP_SWITCH, sel, done, *[w for lp in loops for w in (lp.number, gates[lp.number][0])])]
        out_blocks = [first, read_word, with_word]
        out_blocks += self._with_checks(self.blocks, {lp.header: lp for lp in loops}, {})
        out_blocks += [rc, [_inst(OP_LABEL, done), _inst(OP_RETURN)]]
        for loop in loops:
            out_blocks += self._gate(loop.number, *gates[loop.number], res_labels[loop.number])
            out_blocks += self._copy(loop, res_labels[loop.number], loops)
        out_blocks += [[_inst(OP_LABEL, unreachable_sw), _inst(OP_UNREACHABLE)],
                       [_inst(OP_LABEL, unreachable), _inst(OP_UNREACHABLE)]]
        return head + [i for blk in out_blocks for i in blk] + end, stride, self.group

    def _gate(self, number: int, gate: int, back: int, merge: int, res_label: int) -> list[list[array]]:
        """Blocks letting a work-item of loop `number` on to its copy only in a pipeline that
        resumes that loop (SPEC_RESUME_LOOP `number`, or 0: every loop); elsewhere it returns,
        its record kept for that pipeline's dispatch. The test is on specialization constants,
        so each pipeline's compile drops the other loops' copies: a pipeline holding all of them
        took llvmpipe 5 s for 4 one-line loops and 102 s for 8."""
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        every, this, ok = new(), new(), new()
        return [[_inst(OP_LABEL, gate),
                 _inst(OP_I_EQUAL, b.bool, every, b.spec_loop, m.constant(u, 0)),
                 _inst(OP_I_EQUAL, b.bool, this, b.spec_loop, m.constant(u, number)),
                 _inst(166, b.bool, ok, every, this),  # OpLogicalOr
                 _inst(OP_SELECTION_MERGE, merge, 0), _inst(OP_BRANCH_CONDITIONAL, ok, res_label, back)],
                [_inst(OP_LABEL, back), _inst(OP_RETURN)],
                [_inst(OP_LABEL, merge), _inst(OP_UNREACHABLE)]]

    def _copy(self, loop: _Loop, res_label: int, loops: list[_Loop]) -> list[list[array]]:
        """RES: the record read back, the rest computed again, then a copy of the blocks from the
        loop's header on."""
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        res = [_inst(OP_LABEL, res_label)]
        rec = b.record(self.header, self.stride, res)
        number = b.load(rec, 4, u, res)
        b.store(rec, 4, m.constant(u, 0), res)
        words = [b.load(rec, 4 * (RECORD_WORDS + k), u, res)
                 for k in range(loop.words + (loop.sync.words if loop.sync else 0))]
        names: dict[int, int] = {}
        phi_values = [b.from_words(words, t, res) for _, t in loop.phis]
        for v, t in loop.saved:
            names[v] = b.from_words(words, t, res)
        if loop.sync:  # a work-item that had finished the loop passes its header back to the sync point
            exits = {v: b.from_words(words, t, res) for v, t in loop.sync.values}
            masked, skip, not_skip = new(), new(), new()
            res += [_inst(199, u, masked, number, m.constant(u, DONE)),
                    _inst(OP_I_NOT_EQUAL, b.bool, skip, masked, m.constant(u, 0)),
                    _inst(168, b.bool, not_skip, skip)]  # OpLogicalNot
            self.resuming = (loop.number, skip, not_skip, exits)
        for v in loop.remat:
            inst = array("I", self.defs[v])
            for k in _ids(inst):
                inst[k] = names.get(inst[k], inst[k])
            names[v] = inst[2] = new()
            res.append(inst)
            self._decorate_copy(v, names[v])
        # Each part of the copy (loop.segments) names its own copies of the blocks' values.
        seg_names = []  # (a part also names what the parts it comes after made: they dominate it)
        parent = {k2: k for k, (_, _, _, links) in enumerate(loop.segments) for k2 in links.values()}
        for at, (h, region, _, _) in enumerate(loop.segments):
            own = dict(seg_names[parent[at]] if at in parent else names)
            seg_names.append(own)
            for label in region:
                for inst in self.by_label[label]:
                    rid = _result(inst)
                    if rid is not None:
                        own[rid] = new()
                        self._decorate_copy(rid, own[rid])
        restored = [res]
        if self.privates:
            done, last = b.copy_privates(self.privates, rec, self.private_at, False, res)
            restored = done + [last]
        if self.group:  # the group's local memory back, before any work-item reads it
            done, last = b.copy_locals(self.locals, self.header, False, restored.pop())
            restored += done + [last]
            last.append(b.group_barrier())
        restored[-1].append(_inst(OP_BRANCH, seg_names[0][loop.header]))
        res_label = restored[-1][0][1]
        copied = []
        for at, (h, region, stops, links) in enumerate(loop.segments):
            own = seg_names[at]
            # A part's first block also takes the edge of the part before that goes on in it.
            into = [(seg_names[k2], x) for k2, (_, _, _, l2) in enumerate(loop.segments)
                    for (x, _), k3 in l2.items() if k3 == at]
            for blk in self.blocks:
                label = blk[0][1]
                if label not in region:
                    continue
                out = []
                for inst in blk:
                    op = _op(inst)
                    c = array("I", inst)
                    if op == OP_PHI:
                        pairs = [(inst[k], inst[k + 1]) for k in range(3, len(inst), 2)]
                        kept = [(own.get(v, v), own[p]) for v, p in pairs if p in region]
                        if label == loop.header and h == loop.header:
                            kept.append((phi_values[[p for p, _ in loop.phis].index(inst[2])], res_label))
                        elif label == h:
                            kept += [(other.get(v, v), other[p]) for other, x in into for v, p in pairs if p == x]
                        c = _inst(OP_PHI, inst[1], own[inst[2]], *[w for pr in kept for w in pr])
                        out.append(c)
                        continue
                    for k in _ids(c) if op != OP_LABEL else ():
                        c[k] = own.get(c[k], c[k])
                    if op in (OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_SELECTION_MERGE, OP_LOOP_MERGE):
                        for k in _label_positions(c):
                            t = c[k]
                            went = links.get((label, t)) if op in (OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH) else None
                            c[k] = seg_names[went][t] if went is not None else own[t] if t in region else t
                    rid = _result(inst)
                    if rid is not None:
                        c[1 if op == OP_LABEL else 2] = own[rid]
                    out.append(c)
                if _op(blk[-1]) in (OP_BRANCH_CONDITIONAL, OP_SWITCH) and any((label, t) in links for t in _targets(blk)):
                    # A break, continue or back-edge of an outer loop this part does not hold:
                    # now a selection, whose ways never meet again (each ends in a return).
                    never = new()
                    out.insert(len(out) - 1, _inst(OP_SELECTION_MERGE, never, 0))
                    copied.append([_inst(OP_LABEL, never), _inst(OP_UNREACHABLE)])
                copied.append(out)
        order = _reverse_postorder(copied, seg_names[0][loop.header])
        inside, names_at = {}, {}
        for lp in loops:  # in their order: an outer loop's before those inside it (_saved_values)
            for at, (_, region, _, _) in enumerate(loop.segments):
                if lp.header in region:
                    inside[seg_names[at][lp.header]] = lp
                    names_at[seg_names[at][lp.header]] = seg_names[at]
        # The copies putting the record back do not count: a pass that starts past the limit
        # would make no progress (a group of one work-item with 64 local words, a limit of 50).
        checked = self._with_checks(restored + order, inside, names, uncounted={blk[0][1] for blk in restored},
                                    names_at=names_at)
        self.resuming = None
        return checked

    def _decorate_copy(self, old: int, new_id: int) -> None:
        for inst in self.b.decorations.get(old, ()):
            c = array("I", inst)
            c[1] = new_id
            self.b.new_decorations.append(c)

def _reverse_postorder(blocks: list[list[array]], start: int) -> list[list[array]]:
    """The blocks reachable from `start` in reverse postorder (a block after those that dominate
    it), then the rest (merge blocks nothing reaches) in their order."""
    by_label = {blk[0][1]: blk for blk in blocks}
    seen, post = set(), []

    def visit(label: int) -> None:
        stack = [(label, iter(_named(by_label[label])))]
        seen.add(label)
        while stack:
            node, succ = stack[-1]
            nxt = next((s for s in succ if s in by_label and s not in seen), None)
            if nxt is None:
                post.append(node)
                stack.pop()
            else:
                seen.add(nxt)
                stack.append((nxt, iter(_named(by_label[nxt]))))
    visit(start)
    order = [by_label[label] for label in reversed(post)]
    return order + [blk for blk in blocks if blk[0][1] not in seen]


# A module whose work-groups suspend together (barrier kernels: coroutines in llvmpipe, whose
# splitting grows with the square of their size) is left as it was where its first pass would be
# more than this many times its size and at least GROUP_MIN_BYTES: Rodinia's dwt2d (three
# inlined variants of a transform of 30 barriers) grew 268 KB -> 653 KB and llvmpipe had not made
# its pipeline after 300 s (60 s without). Its long loops are then cut (CL_OUT_OF_RESOURCES).
GROUP_GROWTH_LIMIT, GROUP_MIN_BYTES = 2.0, 256 * 1024


def affordable(plain: bytes, resumable: bytes) -> bool:
    """Whether llvmpipe can afford the module made resumable (see GROUP_GROWTH_LIMIT)."""
    if resumable is plain or not any(group for _, group, _ in resumed_entry_points(resumable).values()):
        return True
    size = len(first_pass(resumable))
    return size < GROUP_MIN_BYTES or size <= GROUP_GROWTH_LIMIT * len(plain)


def first_pass(data: bytes) -> bytes:
    """The module as the first pass of its launches runs it: SPEC_RESUMING is 0 there, so each
    resumable entry point's branch on it goes to the original code, and the copies that later
    passes resume in (most of the module: a copy of the rest of the function for each loop) are
    dropped with what names them. llvmpipe translates all of a module before it drops the code
    a specialization constant kills (pyopencl-style builtins with 16 loops: 57 KB of SPIR-V
    became 1.3 MB, and their pipelines took ten times as long)."""
    words = spirv.to_words(data)
    insts = [words[pos:pos + n] for pos, _, n in spirv.instructions(words)]
    spec = {i[1] for i in insts if _op(i) == 71 and len(i) == 4 and i[2] == 1 and i[3] == SPEC_RESUMING}
    later = {i[2] for i in insts if _op(i) == OP_I_NOT_EQUAL and (i[3] in spec or i[4] in spec)}
    if not later:
        return data
    removed: set[int] = set()

    def strip(function: list[array]) -> list[array]:
        head, blocks, end = spirv.function_blocks(function)
        out = []
        for blk in blocks:
            if _op(blk[-1]) == OP_BRANCH_CONDITIONAL and blk[-1][1] in later:
                blk = [i for i in blk[:-1] if _op(i) != OP_SELECTION_MERGE] + [_inst(OP_BRANCH, blk[-1][3])]
            out.append(blk)
        by_label = {blk[0][1]: blk for blk in out}
        seen, stack = set(), [out[0][0][1]]
        while stack:
            label = stack.pop()
            if label not in seen and label in by_label:
                seen.add(label)
                stack += _named(by_label[label])
        kept = [blk for blk in out if blk[0][1] in seen]
        removed.update(r for blk in out if blk[0][1] not in seen for i in blk if (r := _result(i)) is not None)
        return head + [i for blk in kept for i in blk] + end

    insts = spirv.map_functions(insts, strip)
    # Decorations and names of what went (the copies' NoContraction, say).
    insts = [i for i in insts if not (_op(i) in (5, 6, 71, 72, 332) and i[1] in removed)]
    out = array("I", words[:spirv.HEADER_WORDS])
    for i in insts:
        out.extend(i)
    return spirv.to_bytes(out)
