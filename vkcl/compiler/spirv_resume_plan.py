"""Which loops of an entry point suspend on llvmpipe, and what each one's record keeps: the plan
that spirv_resume.py carries out (its docstring tells the whole pass). An entry point's
outermost loops suspend, and loops inside them at any depth where they fit (LoopPlan.plan);
each loop's copy runs in parts (LoopPlan._segments); its record keeps the loop's phis and the
values its parts use from before them that cannot be computed again (LoopPlan._loop)."""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_barrier_loops import _COPYABLE, _ids
from vkcl.compiler.spirv_edit import Module
from vkcl.compiler.spirv_resume_state import (
    OP_BRANCH_CONDITIONAL, OP_CONTROL_BARRIER, OP_FUNCTION_CALL, OP_LABEL, OP_LOAD, OP_LOOP_MERGE, OP_PHI,
    OP_RETURN, OP_RETURN_VALUE, OP_SELECTION_MERGE, OP_SWITCH, OP_UNREACHABLE, OP_VARIABLE, SC_INPUT,
    SC_PUSH_CONSTANT, SC_UNIFORM, SC_UNIFORM_CONSTANT, named as _named, reach_until, targets as _targets)
from vkcl.compiler.spirv_resume_sync import keep_at_point, plan as plan_sync

# The most outermost loops of an entry point made to suspend; one with more is left alone.
# llvmpipe's compile time grew much faster than the code: a float16 remquo (16 loops, one a
# lane, 45 saved words each) took 19 s to its first launch instead of 1.4, and such loops are
# short. With a pipeline per resumed loop (SPEC_RESUME_LOOP), L one-line loops past the budget
# took 1.75 s for L = 4, 7 s for 6 and 14 s for 8 (5, 42 and 102 s with every copy in one
# pipeline); at 8 a half8 remquo's first launch took 2.1 s instead of 0.2.
MAX_LOOPS = 6
# The most loops made to suspend where loops inside outermost ones do too. Each costs
# llvmpipe's compile of the first pass: a float4 remquo in a loop (one outer loop, four inner
# ones, a lane's each) took 0.3 s to build and launch with the outer loop alone, 0.9 s with all
# five (a float8's with all nine: 3.2 s instead of 0.45, so it keeps its outer loop alone).
MAX_WITH_INNER = 8
# The most blocks a loop's copy may hold in all its parts, as a multiple of the function's
# blocks. Each edge out of a loop around an inner loop gets a part of its own (_segments), so
# the parts grow with the product of those edges over the depth: an inner loop four deep under
# loops of several exits each (LLVM's unrolling, loop_exits' routing) made 271 parts of 33,591
# blocks from a function of 314, and the pass ran for minutes. Such a loop is left to the loop
# around it. A small function's copies may hold MIN_COPY_BLOCKS all the same (a loop four deep
# in a function of 19 blocks: 34 parts, 222 blocks).
MAX_COPY_GROWTH, MIN_COPY_BLOCKS = 4, 512
# Computed again on resumption rather than saved: instructions without side effects whose
# operands are module-scope or themselves computed again; loads only from memory a launch
# cannot change.
_PURE = (frozenset(range(109, 206)) | {65, 66, 67, 70, 77, 78, 79, 80, 81, 82, 83, 400, 12}) - {OP_FUNCTION_CALL}
_READ_ONLY = (SC_INPUT, SC_UNIFORM_CONSTANT, SC_UNIFORM, SC_PUSH_CONSTANT)
_LAYOUT_KNOWN = _COPYABLE | {OP_SWITCH, OP_RETURN, OP_RETURN_VALUE, OP_UNREACHABLE, OP_LABEL}


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


def _nest(blocks: list[list[array]], by_label: dict) -> tuple[list[int], dict[int, set[int]], list[int]]:
    """A function's loop headers, each one's body, and the outermost loops' headers."""
    headers = [blk[0][1] for blk in blocks if len(blk) > 1 and _op(blk[-2]) == OP_LOOP_MERGE]
    bodies = {h: reach_until(by_label, h, by_label[h][-2][1]) for h in headers}
    return headers, bodies, [h for h in headers if not any(h in bodies[o] for o in headers if o != h)]


def outnumbered(data: bytes) -> bool:
    """Whether a function of the module has more loops than may suspend: more than MAX_LOOPS
    outermost ones, or more than MAX_WITH_INNER with those inside them (the driver then tries
    the program with its loops rolled: LLVM's forced unrolling multiplies loops)."""
    for function in spirv.functions(Module(data).insts):
        if not any(_op(inst) == OP_LABEL for inst in function):
            continue  # a declaration
        _, blocks, _ = spirv.function_blocks(function)
        headers, _, outermost = _nest(blocks, {blk[0][1]: blk for blk in blocks})
        if len(outermost) > MAX_LOOPS or len(headers) > MAX_WITH_INNER:
            return True
    return False


class Loop:
    """One suspending loop: where it is, its copy's parts, what its record keeps."""

    __slots__ = ("number", "header", "merge", "cont", "region", "segments", "phis", "saved", "remat", "words",
                 "sync", "count_vote", "size")


class _TooLarge(Exception):
    """A loop's copy would pass MAX_COPY_GROWTH."""


class LoopPlan:
    """The planning half of spirv_resume._Function (its blocks, by_label, defs, defined_in,
    group, b and m)."""

    def plan(self) -> list[Loop]:
        headers, bodies, outermost = _nest(self.blocks, self.by_label)
        sync = {}
        if self.group:  # loops holding a barrier, and loops without one that have a sync point
            for h in outermost:
                if not any(_op(i) == OP_CONTROL_BARRIER for x in bodies[h] for i in self.by_label[x]):
                    sync[h] = plan_sync(self, h)
            outermost = [h for h in outermost if sync.get(h, True)]
        loops = []
        for h in outermost:
            loop = self._loop(h, len(loops) + 1)
            if loop is not None:
                loop.sync = sync.get(h)
                loop.count_vote = None
                if loop.sync:
                    keep_at_point(self, loop)
                    loop.sync.vote = sum(1 for lp in loops if lp.sync) % 2  # the word of its vote
                elif self.group and not any(len(self.by_label[x]) > 1 and _op(self.by_label[x][-2]) == OP_LOOP_MERGE
                                            for x in bodies[h] if x != h):  # no inner loop: _vote_once
                    loop.count_vote = sum(1 for lp in loops if lp.count_vote is not None) % 2
                loops.append(loop)
        if len(loops) > MAX_LOOPS:
            return []
        if not self.group:
            self._plan_inner(headers, bodies, loops)
        return loops

    def _plan_inner(self, headers: list[int], bodies: dict[int, set[int]], loops: list[Loop]) -> None:
        """Loops inside outermost loops suspend too: one inner loop's trips within a single trip
        of the loop around it can outrun the budget. All of them where they fit within
        MAX_WITH_INNER, else those directly inside an outermost loop where they fit, else none
        (LLVM's unrolling of an outer loop makes copies of the inner one, each of which can be
        the long one, so all copies or none). Not in kernels whose work-groups suspend together
        (their loops vote as one). An outer loop comes before the loops inside it
        (_with_checks). Until the twenty-fifth session only loops directly inside an outermost
        one that held no loops suspended: a later inner loop of the same outer trip lost a
        value of an earlier one that the outer loop's next trip takes (_loop; the twenty-fourth
        session's differential run, seed 641), and a deeper loop's copy shared its parts
        between ways that must not meet again (_segments)."""
        chains = {h: [o for o in headers if o != h and h in bodies[o]] for h in headers}
        nested = sorted((h for h in headers if chains[h]), key=lambda h: len(chains[h]))
        for inner in (nested, [h for h in nested if len(chains[h]) == 1]):
            if inner and len(loops) + len(inner) <= MAX_WITH_INNER:
                break
        else:
            return
        for h in inner:
            loop = self._loop(h, len(loops) + 1, chains[h])
            if loop is not None:
                loop.sync, loop.count_vote = None, None
                loops.append(loop)

    def _body(self, header: int) -> set[int]:
        return reach_until(self.by_label, header, self.by_label[header][-2][1])

    def _reach(self, header: int, stops: frozenset[int] | set[int] = frozenset()) -> set[int]:
        seen, stack = set(), [header]
        while stack:
            label = stack.pop()
            if label in seen or (label in stops and label != header):
                continue
            seen.add(label)
            stack += _named(self.by_label[label])
        return seen

    def _segments(self, header: int, chain: list[int]) -> list[tuple[int, set[int], set[int], dict]]:
        """What a loop's copy runs, in parts: (the block it starts at, the blocks it reaches, the
        loops around it that it is inside without holding them, and for each edge that leaves
        one of those (a back-edge to its header, an exit to its merge block: a `break` or the
        end of its trips) the index of the part it goes on in). The first part starts at the
        loop's header, inside all of `chain` (the loops around it, outermost first); a part
        starting at an outer loop's header runs that loop's next trips, one starting at its
        merge block the rest after it. Each such edge has a part of its own, so the parts make
        a tree and no two ways of a branch that leaves a loop meet again (_copy). An outermost
        loop has one part: the rest of the function. Raises _TooLarge past MAX_COPY_GROWTH."""
        parts: list[tuple[int, set[int], set[int], dict]] = []
        budget = max(MAX_COPY_GROWTH * len(self.blocks), MIN_COPY_BLOCKS)

        def part(start: int, opened: list[int]) -> int:
            nonlocal budget
            shape = {o: (self._body(o), *self.by_label[o][-2][1:3]) for o in opened}
            region, stack, leaving = set(), [start], []
            while stack:
                x = stack.pop()
                if x in region:
                    continue
                region.add(x)
                branches = _targets(self.by_label[x])
                for t in _named(self.by_label[x]):
                    left = [o for o, (body, merge, cont) in shape.items()
                            if x in body and t in (o, merge, cont) and x != t]
                    if t in branches and left:
                        leaving.append((x, t, left[-1]))  # (the innermost such loop)
                    else:
                        stack.append(t)
            budget -= len(region)
            if budget < 0:
                raise _TooLarge
            k = len(parts)
            parts.append((start, region, set(opened), {}))
            for x, t, o in sorted(set(leaving)):
                # the rest of o's trip from its continue target (o still around it), o's next
                # trips from its header, or what follows o from its merge block
                around = chain[:chain.index(o) + (t == shape[o][2] and t != o)]
                parts[k][3][(x, t)] = part(t, around)
            return k

        part(header, list(chain))
        return parts

    def _loop(self, header: int, number: int, chain: list[int] = ()) -> Loop | None:
        m, b = self.m, self.b
        blk = self.by_label[header]
        merge, cont = blk[-2][1], blk[-2][2]
        term = blk[-1]
        if _op(term) == OP_SWITCH:
            return None
        if _op(term) == OP_BRANCH_CONDITIONAL and not ({merge, cont, header} & set(term[2:4])):
            return None  # the header branches two ways inside the loop: it keeps its merge instruction
        try:
            segments = self._segments(header, list(chain))
        except _TooLarge:
            return None
        for _, region, _, links in segments:
            # What follows the inner loop in its copy is no longer in the outer loop: its edges
            # out of the outer loop's trip become selections (_copy), which a block that heads
            # a construct of its own cannot be, and a construct the part holds must have its
            # merge block (and continue target) there too. Otherwise the inner loop is left to
            # its outer loop.
            for x in region:
                held = self.by_label[x]
                if len(held) > 1 and _op(held[-2]) in (OP_LOOP_MERGE, OP_SELECTION_MERGE) and (
                        any((x, t) in links for t in _targets(held))
                        or any(t not in region for t in held[-2][1:3 if _op(held[-2]) == OP_LOOP_MERGE else 2])):
                    return None
        insts = [i for _, region, _, _ in segments for label in region for i in self.by_label[label]]
        if any(_op(i) not in _LAYOUT_KNOWN for i in insts):
            return None
        for i in insts:
            if _op(i) == OP_SWITCH and m.types[m.type_of.get(i[1], b.uint)][2] != 32:
                return None
        phis = [(i[2], i[1]) for i in blk if _op(i) == OP_PHI]
        outside: list[int] = []
        seen = set()
        parent = {k2: k for k, (_, _, _, links) in enumerate(segments) for k2 in links.values()}
        for at, (_, region, stops, links) in enumerate(segments):  # values each part uses from before it
            defined = set(region)  # (a part also has what the parts it comes after made)
            up = at
            while up in parent:
                up = parent[up]
                defined |= segments[up][1]
            # (a phi's values from blocks outside the part are not: the copy drops those edges,
            # and such a value may not dominate the loop, so a record could not keep it)
            used = [i[k] for label in region for i in self.by_label[label]
                    for k in (range(3, len(i), 2) if _op(i) == OP_PHI else _ids(i))
                    if _op(i) != OP_PHI or i[k + 1] in region]
            # and what it passes to the parts it goes on in: the phis' values there on its edges (a
            # value of an earlier inner loop of the same outer trip, which this part does not
            # hold, going on to the outer loop's next trip)
            used += [i[k] for x, t in links for i in self.by_label[t] if _op(i) == OP_PHI
                     for k in range(3, len(i), 2) if i[k + 1] == x]
            for v in used:
                if v in seen or v not in self.defined_in or self.defined_in[v] in defined:
                    continue
                if _op(self.defs[v]) in (OP_LABEL, OP_VARIABLE):
                    continue  # a Function variable is the resumed function's too (its contents are saved)
                seen.add(v)
                outside.append(v)
        saved, remat = [], []
        for v in outside:
            if self._computable(v, region, remat):
                continue
            t = self.defs[v][1]
            if b.leaves(t) is None:
                return None
            saved.append((v, t))
        if any(b.leaves(t) is None for _, t in phis):
            return None
        loop = Loop()
        loop.number, loop.header, loop.merge, loop.cont = number, header, merge, cont
        loop.segments, loop.region = segments, set().union(*(r for _, r, _, _ in segments))
        loop.phis, loop.saved, loop.remat = phis, saved, remat
        loop.words = sum(b.leaves(t) for _, t in phis + saved)
        loop.size = len(insts)
        return loop

    def _computable(self, v: int, region: set[int], order: list[int], depth: int = 0) -> bool:
        """Whether `v` can be computed again from module-scope values (appending it, after what it
        needs, to `order`)."""
        if v in order:
            return True
        inst = self.defs.get(v)
        if inst is None or depth > 12:
            return False
        op = _op(inst)
        if op == OP_LOAD:
            ptr_type = self.m.type_of.get(inst[3])
            if ptr_type is None or (self.m.pointee(ptr_type) or (None,))[0] not in _READ_ONLY:
                return False
        elif op not in _PURE:
            return False
        for k in _ids(inst):
            w = inst[k]
            if w in self.defined_in and _op(self.defs[w]) != OP_VARIABLE \
                    and not self._computable(w, region, order, depth + 1):
                return False
        order.append(v)
        return True
