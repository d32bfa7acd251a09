"""Long loops without a barrier in kernels that wait at barriers (spirv_resume.py).

Such a loop's trips may differ between a work-group's work-items, so they cannot decide together
inside it; and they must suspend together, since the code after the loop may wait at a barrier.
So each work-item counts its own trips and, past the limit, leaves the loop ("parks"): it stores
the loop's state in its record and goes straight to a point every work-item reaches, the sync
point. There the group votes (an atomic maximum of a Workgroup word, then a barrier): if any
work-item parked, every one suspends, those that had finished the loop storing the values live at
the sync point (marked DONE in their loop number), and the group saves its local memory. In the
next pass, parked work-items resume in the loop's copy; finished ones pass through the copy's
header straight back to the sync point with their values, and vote again.

The sync point is the loop's merge block where every work-item reaches it (the loop at the top
of the function), or the merge of the one selection around the loop (a guard such as
`if (gid < n)`) where every work-item reaches that; a loop elsewhere is left alone. The values
live there: at a merge block, its phis and the loop's values used after it; at a selection's
merge, its phis (what the selection computed reaches the rest of the function only through them).
"""
from __future__ import annotations

from array import array

from vkcl.compiler.spirv_barrier_loops import _ids
from vkcl.compiler.spirv_edit import instruction as _inst
from vkcl.compiler.spirv_resume_state import (
    EPOCH, OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_CONTROL_BARRIER, OP_I_NOT_EQUAL, OP_LABEL, OP_LOOP_MERGE, OP_PHI,
    OP_RETURN, OP_RETURN_VALUE, OP_SELECT, OP_SELECTION_MERGE, RECORD_WORDS, result_id, retarget,
    predecessors, reach_until, split_block, targets)

DONE = 0x80000000  # in a record's loop number: the work-item had finished the loop
OP_ATOMIC_LOAD, OP_ATOMIC_U_MAX, OP_BITWISE_AND, OP_LOGICAL_OR = 227, 239, 199, 166


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


class SyncExit:
    """Where a loop's work-items vote, and what a finished one saves there."""
    __slots__ = ("point", "at_merge", "levels", "merge_phis", "escaping", "values", "words", "kept", "vote")


def plan(f, header: int) -> SyncExit | None:
    """The sync point of the loop headed by `header` in `f` (spirv_resume._Function, original
    blocks), or None where it has none (see the module docstring)."""
    merge = f.by_label[header][-2][1]
    enclosing = []  # (its blocks, its header block)
    for blk in f.blocks:
        label = blk[0][1]
        if label == header or len(blk) < 2 or _op(blk[-2]) not in (OP_LOOP_MERGE, OP_SELECTION_MERGE):
            continue
        inside = reach_until(f.by_label, label, blk[-2][1])
        if header in inside:
            if _op(blk[-2]) != OP_SELECTION_MERGE or _op(blk[-1]) != OP_BRANCH_CONDITIONAL:
                return None  # inside another loop or a switch
            enclosing.append((inside, blk))
    enclosing.sort(key=lambda e: len(e[0]))
    if any(not inner <= outer for (inner, _), (outer, _) in zip(enclosing, enclosing[1:])):
        return None
    levels = [blk[-2][1] for _, blk in enclosing]  # the selections' merges, innermost first
    point = levels[-1] if levels else merge
    for label in levels:
        at = f.by_label[label]
        if len(at) > 1 and _op(at[-2]) == OP_LOOP_MERGE:
            return None  # the bypass would split a loop header
    at = f.by_label[point]
    if len(at) > 1 and _op(at[-2]) == OP_LOOP_MERGE:
        return None  # the vote would split a loop header
    # Parked work-items pass no barrier on their way there (the others would wait at it alone),
    # nor another loop (whose own suspension would then sit inside the way they bypass).
    between = reach_until(f.by_label, merge, point)
    if any(_op(i) in (OP_CONTROL_BARRIER, OP_LOOP_MERGE) for x in between for i in f.by_label[x]):
        return None
    # Every work-item reaches the point: no return on a path from the entry that avoids it.
    seen, stack = {point}, [f.blocks[0][0][1]]
    while stack:
        label = stack.pop()
        if label in seen:
            continue
        seen.add(label)
        if _op(f.by_label[label][-1]) in (OP_RETURN, OP_RETURN_VALUE):
            return None
        stack += targets(f.by_label[label])
    s = SyncExit()
    s.point, s.at_merge, s.levels = point, point == merge, levels
    s.merge_phis, s.escaping = [], []
    if s.at_merge:
        body = f._body(header)
        s.merge_phis = [(i[2], i[1]) for i in f.by_label[merge]
                        if _op(i) == OP_PHI and any(p in body for p in i[4::2])]
        # What spirv_resume._suspending routes through the new merge block, in a fixed order: the
        # values of the loop but its header's phis (the rest of the header is split off there).
        defined = {result_id(i): i[1] for x in body for i in f.by_label[x]
                   if result_id(i) is not None and _op(i) != OP_LABEL and not (x == header and _op(i) == OP_PHI)}
        for blk in f.blocks:
            if blk[0][1] in body:
                continue
            for i in blk:
                if _op(i) == OP_PHI:
                    ids = [i[j] for j in range(3, len(i), 2) if i[j + 1] not in body]
                elif _op(i) == OP_LABEL:
                    continue
                else:
                    ids = [i[k] for k in _ids(i)]
                s.escaping += [(v, defined[v]) for v in ids if v in defined and (v, defined[v]) not in s.escaping]
        s.values = s.merge_phis + s.escaping
    else:
        s.values = [(i[2], i[1]) for i in at if _op(i) == OP_PHI]
    sizes = [f.b.leaves(t) for _, t in s.values]
    if None in sizes:
        return None
    s.words = sum(sizes)
    return s


def keep_at_point(f, loop) -> None:
    """Which of the loop's saved values a finished work-item keeps at the sync point: at a
    selection's merge, those defined where they reach it (the others serve only the loop)."""
    if loop.sync.at_merge:
        loop.sync.kept = list(range(len(loop.saved)))
        return
    entry = f.blocks[0][0][1]
    loop.sync.kept = []
    for k, (v, _) in enumerate(loop.saved):
        where = f.defined_in[v]
        if where == entry or loop.sync.point not in reach_until(f.by_label, entry, where):
            loop.sync.kept.append(k)


class SyncExits:
    """spirv_resume._Function's part for loops with a sync point."""

    resuming = None  # (loop number, skip, not skip, {value id: value restored}) in a loop's copy

    def _sync_tail(self, out: list[list[array]], nm: list[array], loop, names: dict[int, int], merge: int,
                   flag: int, go_on: int, state: list[tuple[int, int]], exit_values: list[int],
                   e_in: dict[int, int]) -> list[list[array]]:
        """The new merge block's end for a loop with a sync point: parked work-items store the
        loop's `state` and go to the point; the vote there. `exit_values`: the values a finished
        work-item saves, in loop.sync.values' order, where they are defined by then (the merge
        block's kind); `e_in`: in the loop's own copy, the values read back for them."""
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        resuming = self.resuming if self.resuming and self.resuming[0] == loop.number else None
        point = names.get(loop.sync.point, loop.sync.point)
        park, park_end, store = new(), new(), new()
        into = merge if loop.sync.at_merge else new()  # where parked work-items join the rest
        if resuming:
            tosp = new()
            nm.append(_inst(OP_LOGICAL_OR, b.bool, tosp, flag, resuming[1]))
        else:
            tosp = flag
        nm += [_inst(OP_SELECTION_MERGE, into, 0), _inst(OP_BRANCH_CONDITIONAL, tosp, park, go_on)]
        parking = [[_inst(OP_LABEL, park), _inst(OP_SELECTION_MERGE, park_end, 0),
                    _inst(OP_BRANCH_CONDITIONAL, flag, store, park_end)]]
        stored = [_inst(OP_LABEL, store)]
        rec = self._store_record(stored, self._packed(state), m.constant(u, loop.number))
        if self.privates:
            done, last = b.copy_privates(self.privates, rec, self.private_at, True, stored)
            parking += done
            stored = last
        stored.append(_inst(OP_BRANCH, park_end))
        parking += [stored, [_inst(OP_LABEL, park_end), _inst(OP_BRANCH, into)]]
        at = next(k for k, blk in enumerate(out) if blk[0][1] == merge)
        out[at:at] = [nm, *parking, [_inst(OP_LABEL, go_on), _inst(OP_BRANCH, merge)]]
        by_label = {blk[0][1]: blk for blk in out}
        parked = new()
        if loop.sync.at_merge:
            blk = by_label[merge]
            for k, inst in enumerate(blk):
                if _op(inst) == OP_PHI:  # every one comes through the new merge block (via go_on)
                    value = inst[3 + 2 * list(inst[4::2]).index(go_on)]
                    blk[k] = _inst(OP_PHI, inst[1], inst[2], *inst[3:], value, park_end)
            blk.insert(1, _inst(OP_PHI, b.bool, parked, flag, park_end, m.bool_constant(False), go_on))
            saved = self._packed(state + [(v, t) for v, (_, t) in zip(exit_values, loop.sync.values)])
        else:
            parked = self._bypass(out, loop, names, merge, into, park_end, flag, e_in)
            in_state = self._packed(state)
            kept = [in_state[len(loop.phis) + k] for k in loop.sync.kept]
            saved = kept + self._packed([(v, t) for v, (_, t) in zip(exit_values, loop.sync.values)], loop.words)
        return self._vote(out, point, parked, loop, saved)

    def _bypass(self, out: list[list[array]], loop, names: dict[int, int], merge: int, into: int, park_end: int,
                flag: int, e_in: dict[int, int]) -> int:
        """The paths of parked (and, resuming, finished) work-items from the loop past every
        enclosing selection's code to the outermost one's merge, the sync point: at each
        selection's merge, the edges from the loop's side meet in a new block with the bypass
        edge first, and the merge (but the last) branches over its own code for bypassing
        work-items. Returns the sync point's `parked` flag."""
        b, m, new = self.b, self.m, self.m.new_id
        true, false = m.bool_constant(True), m.bool_constant(False)
        source, parked_in, start = park_end, flag, merge
        levels = [names.get(x, x) for x in loop.sync.levels]
        for k, level in enumerate(levels):
            last = k == len(levels) - 1
            by_label = {blk[0][1]: blk for blk in out}
            preds = [x for x in reach_until(by_label, start, level) if level in targets(by_label[x])]
            for x in preds:
                by_label[x][-1] = retarget(by_label[x][-1], level, into)
            joined = [_inst(OP_LABEL, into)]
            target = by_label[level]
            for j, inst in enumerate(target):
                if _op(inst) != OP_PHI:
                    continue
                pairs = [(inst[i], inst[i + 1]) for i in range(3, len(inst), 2)]
                mine = [(v, p) for v, p in pairs if p in preds]
                v = new()
                skipped = e_in.get(inst[2], self._undef(inst[1])) if last else self._undef(inst[1])
                joined.append(_inst(OP_PHI, inst[1], v, *[w for pr in mine for w in pr], skipped, source))
                rest = [(w, p) for w, p in pairs if p not in preds] + [(v, into)]
                target[j] = _inst(OP_PHI, inst[1], inst[2], *[w for pr in rest for w in pr])
            bypass_in, parked_here = new(), new()
            joined += [_inst(OP_PHI, b.bool, bypass_in, true, source, *[w for x in preds for w in (false, x)]),
                       _inst(OP_PHI, b.bool, parked_here, parked_in, source, *[w for x in preds for w in (false, x)]),
                       _inst(OP_BRANCH, level)]
            others = [p for p in predecessors(out, level) if p != into]
            out.insert(next(j for j, blk in enumerate(out) if blk[0][1] == level), joined)
            parked = new()
            target.insert(1, _inst(OP_PHI, b.bool, parked, parked_here, into,
                                   *[w for x in others for w in (false, x)]))
            if last:
                return parked
            bypass, rest_label, next_into = new(), new(), new()
            target.insert(1, _inst(OP_PHI, b.bool, bypass, bypass_in, into, *[w for x in others for w in (false, x)]))
            n_phi = 1 + sum(1 for i in target[1:] if _op(i) == OP_PHI)
            at = next(j for j, blk in enumerate(out) if blk[0][1] == level)
            split_block(out, at, n_phi, rest_label, [_inst(OP_SELECTION_MERGE, next_into, 0),
                                                _inst(OP_BRANCH_CONDITIONAL, bypass, next_into, rest_label)])
            source, parked_in, start, into = level, parked, rest_label, next_into
        raise AssertionError("no sync point")

    def _packed(self, values: list[tuple[int, int]], first: int = 0) -> list[tuple[int, int, int]]:
        """(value, type, its first word) for values stored one after the other from word `first`."""
        out = []
        for v, t in values:
            out.append((v, t, first))
            first += self.b.leaves(t)
        return out

    def _store_record(self, block: list[array], values: list[tuple[int, int, int]], number: int) -> int:
        """Stores of `values` (value, type, its first word among the saved ones), the epoch and
        `number`, to this work-item's record; returns the record's address."""
        b = self.b
        rec = b.record(self.header, self.stride, block)
        for v, t, first in values:
            for k, w in enumerate(b.to_words(v, t, block)):
                b.store(rec, 4 * (RECORD_WORDS + first + k), w, block)
        b.store(rec, 0, b.load(self.header, EPOCH, b.uint, block), block)
        b.store(rec, 4, number, block)
        return rec

    def _vote(self, out: list[list[array]], point: int, parked: int, loop, saved: list[tuple[int, int, int]]
              ) -> list[list[array]]:
        """The sync point split after its phis: the group's vote; if any work-item parked, every
        one suspends (finished ones storing `saved`: the state and exit values at a loop's merge,
        the exit values alone at a selection's)."""
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        at = next(k for k, blk in enumerate(out) if blk[0][1] == point)
        blk = out[at]
        n_phi = 1 + sum(1 for i in blk[1:] if _op(i) == OP_PHI)
        rest, suspend, finished, leave = new(), new(), new(), new()
        one, old, seen, anyone = new(), new(), new(), new()
        word = b.group_votes[loop.sync.vote]
        head = blk[:n_phi] + [
            _inst(OP_SELECT, u, one, parked, m.constant(u, 1), m.constant(u, 0)),
            _inst(OP_ATOMIC_U_MAX, u, old, word, m.constant(u, 2), m.constant(u, 0), one),
            b.group_barrier(), _inst(OP_ATOMIC_LOAD, u, seen, word, m.constant(u, 2), m.constant(u, 0)),
            _inst(OP_I_NOT_EQUAL, b.bool, anyone, seen, m.constant(u, 0)),
            _inst(OP_SELECTION_MERGE, rest, 0), _inst(OP_BRANCH_CONDITIONAL, anyone, suspend, rest)]
        blocks = [head, [_inst(OP_LABEL, suspend), _inst(OP_SELECTION_MERGE, leave, 0),
                         _inst(OP_BRANCH_CONDITIONAL, parked, leave, finished)]]
        store = [_inst(OP_LABEL, finished)]
        rec = self._store_record(store, saved, m.constant(u, loop.number | DONE))
        if self.privates:
            done, store = b.copy_privates(self.privates, rec, self.private_at, True, store)
            blocks += done
        store.append(_inst(OP_BRANCH, leave))
        blocks.append(store)
        last = [_inst(OP_LABEL, leave)]
        done, last = b.copy_locals(self.locals, self.header, True, last)
        b.mark_suspended(self.header, loop.number, last)
        last.append(_inst(OP_RETURN))
        blocks += done + [last]
        split_block(out, at, n_phi, rest, head[n_phi:])
        out[at + 1:at + 1] = blocks[1:]
        return out

