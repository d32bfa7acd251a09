"""The checks that make a resumable entry point's loops suspend (spirv_resume.py): every loop
header counts its work-item's trips, and each outermost loop leaves past the limit through a new
merge block, where its work-item (or its work-group) stores the loop's state and returns; a
barrier loop without inner loops takes its group's largest count once, before its header."""
from __future__ import annotations

from array import array

from vkcl.compiler.spirv_barrier_loops import _ids
from vkcl.compiler.spirv_edit import instruction as _inst
from vkcl.compiler.spirv_resume_state import (
    EPOCH, OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_I_ADD, OP_LABEL, OP_LOAD, OP_LOGICAL_AND, OP_LOOP_MERGE, OP_PHI,
    OP_RETURN, OP_SELECTION_MERGE, OP_STORE, OP_U_GREATER_THAN_EQUAL, RECORD_WORDS,
    named as _named, predecessors, result_id as _result, retarget, targets as _targets, with_predecessor)
from vkcl.compiler.spirv_resume_sync import SyncExits


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


class LeftAlone(Exception):
    """An entry point found, while being rewritten, not to be resumable after all."""


class LoopChecks(SyncExits):
    """spirv_resume._Function's counting and suspending."""

    def _with_checks(self, blocks: list[list[array]], loops: dict, names: dict[int, int],
                     uncounted: set[int] | frozenset[int] = frozenset(),
                     names_at: dict[int, dict[int, int]] | None = None) -> list[list[array]]:
        """`blocks` with every loop header but those of `uncounted` counting the trips into the
        function's counter, and each loop of `loops` (label in `blocks` -> loop, an outer loop
        before those inside it) leaving through a new merge block when the count is past the
        limit, where the work-item suspends. `names`: the copy's ids of original ids (empty in
        the original); `names_at`: those of the part of a copy holding a loop's header, by label."""
        m, new, u = self.m, self.m.new_id, self.b.uint
        out = [list(blk) for blk in blocks]
        counts = {}
        for blk in out:
            if len(blk) > 1 and _op(blk[-2]) == OP_LOOP_MERGE and blk[0][1] not in uncounted:
                c, c1 = new(), new()
                at = 1 + sum(1 for i in blk if _op(i) == OP_PHI)
                blk[at:at] = [_inst(OP_LOAD, u, c, self.counter), _inst(OP_I_ADD, u, c1, c, m.constant(u, 1)),
                              _inst(OP_STORE, self.counter, c1)]
                counts[blk[0][1]] = c1
        # A loop's values used after it reach their uses through phis in its new merge block;
        # a later loop that saves one saves the phi (its definition no longer dominates).
        self.escaped = {}
        for label, loop in loops.items():
            out = self._suspending(out, label, loop, counts[label], (names_at or {}).get(label, names))
        return out

    def _suspending(self, blocks: list[list[array]], label: int, loop, count: int,
                    names: dict[int, int]) -> list[list[array]]:
        """The loop headed by `label` split: its header tests the count (past the limit: to a new
        merge block), the rest of its block follows; the new merge block takes the old one's
        incoming values and the header's, suspends the work-item when it came from the test, and
        goes on to the old merge block otherwise. Values of the loop used after it reach their
        uses through the new merge block (the test's edge does not pass their definitions)."""
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        by_label = {blk[0][1]: blk for blk in blocks}
        header = by_label[label]
        merge = header[-2][1]
        body = set()
        stack = [label]
        while stack:
            x = stack.pop()
            if x in body or x == merge or x not in by_label:
                continue
            body.add(x)
            stack += _named(by_label[x]) if x != label else _targets(by_label[x])
        body.discard(merge)
        after, new_merge, go_on, suspend, over, go, flag = (new() for _ in range(7))
        n_phi = sum(1 for i in header if _op(i) == OP_PHI)
        phis, counted = [array("I", i) for i in header[1:1 + n_phi]], header[1 + n_phi:4 + n_phi]
        for i in phis:  # a one-block loop's back-edge now leaves the rest of the header's block
            for j in range(4, len(i), 2):
                if i[j] == label:
                    i[j] = after
        rest, term = header[4 + n_phi:-2], retarget(header[-1], merge, new_merge)
        merge_inst = array("I", header[-2])
        merge_inst[1] = new_merge
        if merge_inst[2] == label:  # a one-block loop: its rest is now the continue target
            merge_inst[2] = after
        tested = count
        resuming = self.resuming if loop.sync and self.resuming and self.resuming[0] == loop.number else None
        e_in = {names.get(v, v): value for v, value in resuming[3].items()} if resuming else {}
        once = None
        if loop.count_vote is not None:  # one vote per loop (_vote_once)
            once = tc, tc1, largest = new(), new(), new()
            tested = new()
            counted = counted + [_inst(OP_I_ADD, u, tc1, tc, m.constant(u, 1)),
                                 _inst(OP_I_ADD, u, tested, largest, tc1)]
        elif self.group and not loop.sync:  # the group's largest count, the same for all: they leave together
            old_max, tested = new(), new()
            counted = counted + [
                _inst(239, u, old_max, b.group_max, m.constant(u, 2), m.constant(u, 0), count),  # OpAtomicUMax
                b.group_barrier(), _inst(227, u, tested, b.group_max, m.constant(u, 2), m.constant(u, 0)),
                b.group_barrier()]  # OpAtomicLoad; no work-item adds to it before all have read it
        leave = [_inst(OP_U_GREATER_THAN_EQUAL, b.bool, over, tested, m.constant(u, b.limit)),
                 _inst(OP_LOGICAL_AND, b.bool, go, over, self.given)]
        if resuming:  # or straight through, for a work-item that had finished the loop
            go, went = new(), go
            leave.append(_inst(166, b.bool, go, went, resuming[1]))  # OpLogicalOr
        new_header = [header[0], *phis, *counted, *leave, merge_inst,
                      _inst(OP_BRANCH_CONDITIONAL, go, new_merge, after)]
        rest_block = [_inst(OP_LABEL, after), *rest, term]
        # The loop's exits go to the new merge block; edges that left the header leave its rest.
        out: list[list[array]] = []
        for blk in blocks:
            x = blk[0][1]
            if x == label:
                out += [new_header, rest_block]
                continue
            blk = list(blk)
            if x in body:
                blk[-1] = retarget(blk[-1], merge, new_merge)
            out.append([with_predecessor(inst, label, after) for inst in blk])
        body.add(after)
        by_label = {blk[0][1]: blk for blk in out}
        exits = [blk[0][1] for blk in out if blk[0][1] in body and new_merge in _targets(blk)]
        exits = [x for x in exits if x != label]
        # The new merge block: the old one's values from the loop, the header's, the flag.
        nm = [_inst(OP_LABEL, new_merge)]
        old = by_label[merge]
        replaced = []
        exit_of: dict[int, int] = {}  # a value after the loop -> its phi in the new merge block
        for k, inst in enumerate(old):
            if _op(inst) != OP_PHI:
                continue
            pairs = [(inst[j], inst[j + 1]) for j in range(3, len(inst), 2)]
            inside = [(v, p) for v, p in pairs if p in body]
            if not inside:
                continue
            v = new()
            nm.append(_inst(OP_PHI, inst[1], v, *[w for pr in inside for w in pr],
                            e_in.get(inst[2], self._undef(inst[1])), label))
            outside = [(w, p) for w, p in pairs if p not in body] + [(v, go_on)]
            old[k] = _inst(OP_PHI, inst[1], inst[2], *[w for pr in outside for w in pr])
            replaced.append(k)
            exit_of[inst[2]] = v
        saved_phis = []
        for i in phis:  # (a finished work-item saves them too where the loop's merge is a sync point)
            v = new()
            at_exits = i[2] if loop.sync else self._undef(i[1])
            nm.append(_inst(OP_PHI, i[1], v, i[2], label, *[w for x in exits for w in (at_exits, x)]))
            saved_phis.append((v, i[1]))
        nm.append(_inst(OP_PHI, b.bool, flag, resuming[2] if resuming else m.bool_constant(True), label,
                        *[w for x in exits for w in (m.bool_constant(False), x)]))
        # Values of the loop (past its header's test) used after it: through phis here.
        defined = {_result(i): i[1] for x in body - {label} for i in by_label[x]
                   if _result(i) is not None and _op(i) != OP_LABEL}
        escaping: dict[int, int] = {}
        for v0, t in (loop.sync.escaping if loop.sync else ()):  # in a fixed order: the record's
            v = names.get(v0, v0)
            escaping[v] = exit_of[v] = new()
            nm.append(_inst(OP_PHI, t, escaping[v], *[w for x in exits for w in (v, x)],
                            e_in.get(v, self._undef(t)), label))
        for blk in out:
            if blk[0][1] in body or blk[0][1] == new_merge:
                continue
            for k, inst in enumerate(blk):
                if _op(inst) == OP_PHI:
                    positions = [j for j in range(3, len(inst), 2) if inst[j + 1] not in body and inst[j + 1] != go_on]
                elif _op(inst) == OP_LABEL:
                    continue
                else:
                    positions = _ids(inst)
                hits = [j for j in positions if inst[j] in defined]
                if not hits:
                    continue
                c = array("I", inst)
                for j in hits:
                    v = c[j]
                    if v not in escaping:
                        if loop.sync and loop.sync.at_merge:  # its record would miss it (spirv_resume_sync.plan)
                            raise LeftAlone(f"value {v} leaves loop {loop.number} unplanned")
                        escaping[v] = new()
                        nm.append(_inst(OP_PHI, defined[v], escaping[v], *[w for x in exits for w in (v, x)],
                                        self._undef(defined[v]), label))
                    c[j] = escaping[v]
                blk[k] = c
        inside = frozenset(body)
        for v, phi in escaping.items():
            self.escaped.setdefault(v, []).append((phi, inside))
        if loop.sync:
            state = saved_phis + self._saved_values(loop, names, label)
            exit_values = [exit_of[names.get(v, v)] for v, _ in loop.sync.values] if loop.sync.at_merge else \
                [names.get(v, v) for v, _ in loop.sync.values]
            return self._sync_tail(out, nm, loop, names, merge, flag, go_on, state, exit_values, e_in)
        nm += [_inst(OP_SELECTION_MERGE, go_on, 0), _inst(OP_BRANCH_CONDITIONAL, flag, suspend, go_on)]
        sus = [_inst(OP_LABEL, suspend)]
        rec = b.record(self.header, self.stride, sus)
        words = []
        for v, t in saved_phis + self._saved_values(loop, names, label):
            words += b.to_words(v, t, sus)
        for k, w in enumerate(words):
            b.store(rec, 4 * (RECORD_WORDS + k), w, sus)
        b.store(rec, 0, b.load(self.header, EPOCH, u, sus), sus)
        b.store(rec, 4, m.constant(u, loop.number), sus)
        suspension = [sus]
        if self.privates:
            done, last = b.copy_privates(self.privates, rec, self.private_at, True, sus)
            suspension = done + [last]
        if self.group:  # the group's local memory to its area
            done, last = b.copy_locals(self.locals, self.header, True, suspension.pop())
            suspension += done + [last]
        b.mark_suspended(self.header, loop.number, suspension[-1])
        suspension[-1].append(_inst(OP_RETURN))
        at = next(k for k, blk in enumerate(out) if blk[0][1] == merge)
        out[at:at] = [nm, *suspension, [_inst(OP_LABEL, go_on), _inst(OP_BRANCH, merge)]]
        if once:
            self._vote_once(out, label, body, once, b.group_counts[loop.count_vote])
        return out

    def _vote_once(self, out: list[list[array]], label: int, body: set[int], once: tuple[int, int, int],
                   word: int) -> None:
        """A barrier loop without inner loops: its work-items' counts all grow by one a trip, so
        the group's largest count at trip t is the largest before the loop plus t + 1. The group
        takes it once, in a new block before the header, instead of at every trip (llvmpipe runs
        a barrier inside an `if` whether or not the `if` is taken), in `word` (such loops take
        two words in turn: a work-item writes one again only past the other's barrier, when
        every work-item has read it, so one barrier does)."""
        b, m, new, u = self.b, self.m, self.m.new_id, self.b.uint
        tc, tc1, largest = once
        pre, count, old = new(), new(), new()
        entries = [blk for blk in out if label in _targets(blk) and blk[0][1] not in body]
        header = next(blk for blk in out if blk[0][1] == label)
        block = [_inst(OP_LABEL, pre)]
        for k, inst in enumerate(header):
            if _op(inst) != OP_PHI:
                continue
            pairs = [(inst[j], inst[j + 1]) for j in range(3, len(inst), 2)]
            into = [(v, p) for v, p in pairs if p not in body]
            v = into[0][0] if len(into) == 1 else new()
            if len(into) > 1:
                block.append(_inst(OP_PHI, inst[1], v, *[w for pr in into for w in pr]))
            kept = [(w, p) for w, p in pairs if p in body] + [(v, pre)]
            header[k] = _inst(OP_PHI, inst[1], inst[2], *[w for pr in kept for w in pr])
        block += [_inst(OP_LOAD, u, count, self.counter),
                  _inst(239, u, old, word, m.constant(u, 2), m.constant(u, 0), count),  # OpAtomicUMax
                  b.group_barrier(), _inst(227, u, largest, word, m.constant(u, 2), m.constant(u, 0)),
                  _inst(OP_BRANCH, label)]
        backs = [x for x in predecessors(out, label) if x in body]
        header.insert(1, _inst(OP_PHI, u, tc, m.constant(u, 0), pre, *[w for x in backs for w in (tc1, x)]))
        for blk in entries:
            blk[-1] = retarget(blk[-1], label, pre)
        out.insert(next(k for k, blk in enumerate(out) if blk[0][1] == label), block)

    def _saved_values(self, loop, names: dict[int, int], header: int) -> list[tuple[int, int]]:
        """The values defined before `loop` that its record keeps, as they are named where it
        suspends, at `header` (in a copy; through the phis of an earlier loop: of the outermost
        of those it left that do not hold `header`)."""
        out = []
        for v, t in loop.saved:
            v = names.get(v, v)
            left = [(len(body), phi) for phi, body in self.escaped.get(v, ()) if header not in body]
            out.append((max(left)[1] if left else v, t))
        return out

    def _undef(self, type_id: int) -> int:
        have = self.b.undefs.get(type_id)
        if have is None:
            have = self.b.undefs[type_id] = self.m.new_id()
            self.m.declare(_inst(1, type_id, have))  # OpUndef
        return have
