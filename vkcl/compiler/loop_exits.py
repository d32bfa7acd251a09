"""Exits out of several loops at once, routed through each loop's header (LLVM IR, before
clspv's passes; only for programs clspv's structurizer would otherwise lose a loop of).

A `return` or `goto` that leaves an inner loop and the loops around it (`for (r...) for (i...)
if (hit) return;`) is an edge from inside the inner loop to a block outside them all. clspv's
structurizer (LLVM StructurizeCFG, before the fix of its prefix flow blocks) turned such loops
into ones that never repeat, or lost the inner loop (spirv_single_pass_loops), on every
device; with loop rotation off too. The same program with the exit taken through a flag that
each loop's own condition tests (`for (r = 0; r < n && !flag; r++)`) built right, since each
loop then leaves at its header only.

So, in the front end's IR (clang at -O0: locals in allocas, no phis but short-circuit ones):
each such edge stores its number in a new local and goes to its innermost loop's header as a
further back-edge; every loop it leaves tests the local at its header (`cond && exit == 0`),
and where that loop's exit block is inside the next loop it leaves, goes on from there to that
loop's header, so that each loop leaves at its header; after the outermost loop it leaves, the
local is cleared and the edge reaches its old target (a target that only branches back to
that exit block, the block of a `break`, goes on after the dispatch instead: the cleared local
cannot send it round again). The code between is not run: a loop's latch (its increment) is
skipped, as the exit skipped it. The local is volatile: LLVM's jump threading and CFG
simplification otherwise read it where an exit stored it and took the exit straight out of the
loops again, which undid the routing (tests/differential/nested_loops.py's seeds 678, 689, 703,
715, 721 and 799 were refused on every device for it until the twenty-sixth session). A
do-while loop tests its condition in its latch, not its header (the body's first block): the
exits then go to that test instead.
Where the test's block has side effects first (the `i++` of `do { ... i++; } while (i < n)`),
what follows the last of them (the loads and compare of the condition) becomes a block of its
own that the exits enter, so they run no side effect again; a value made before them that the
condition uses (`while (++i < n)`) reaches it through a local of its own (since the twenty-sixth
session; an exit entering there leaves whatever the local holds, its number being set). Where a
do-while's body ends in an inner loop, the inner loop's exit block is the do-while's test: an
exit going on from there enters that test (the dispatch's default), not the block again. An exit
from a `switch` (a `return` in a case) is routed as a branch's is (since the twenty-sixth
session). IL programs come here too (since the twenty-seventh session), their bitcode's phis
demoted to locals first (il.demote_phis): in such optimized IR a rotated loop's test may reach
its header through a block that copies the loop's values, and a loop may leave where its
condition is true (_test_block, and the tests below negate such a condition).
Left as they are (the program is then refused as before): loops with no such block
(several latches that test a condition), conditions taking a vector or aggregate value their
block's side effects made, blocks with phis where edges are added, and functions with indirect
branches.
"""
from __future__ import annotations

import re

_ID = r'(?:[-\w.$]+|"[^"]*")'  # a label's or value's name after its sigil
_DEFINE = re.compile(r"^define .*\{\s*$")
_LABEL = re.compile(rf'^({_ID}):(\s*;.*)?$')
_LABEL_REF = re.compile(rf'label %({_ID})')
_COND_BR = re.compile(rf'^(\s*)br i1 (%{_ID}|true|false), label %({_ID}), label %({_ID})\s*(,.*)?$')
# What an exit's extra pass through a header must not run again; the work-item functions are
# the only calls allowed there.
_SIDE_EFFECTS = re.compile(r"\b(?:store|call|atomicrmw|cmpxchg|fence|invoke)\b")
_PURE_CALL = re.compile(r"call spir_func \w+ @_Z\d+get_(?:global|local|group|num|enqueued)_\w+\(")
_TERMINATORS = ("br ", "switch ", "ret ", "ret\n", "unreachable", "resume ", "indirectbr ", "callbr ")
EXIT = "%vkcl.loop.exit"


class _Unsupported(Exception):
    pass


class _Function:
    def __init__(self, lines: list[str]):
        self.head, self.end = lines[0], lines[-1]
        self.prologue: list[str] = []  # allocas of values kept for a split test (_split_after_side_effects)
        self.order: list[str] = ["<entry>"]  # an unnamed first block, until a label names it
        self.body: dict[str, list[str]] = {"<entry>": []}
        for line in lines[1:-1]:
            m = _LABEL.match(line)
            if m is None:
                self.body[self.order[-1]].append(line)
            elif self.order == ["<entry>"] and not any(x.strip() for x in self.body["<entry>"]):
                self.order, self.body = [m.group(1)], {m.group(1): []}
            else:
                self.order.append(m.group(1))
                self.body[m.group(1)] = []
        for label in self.order:
            while self.body[label] and not self.body[label][-1].strip():
                self.body[label].pop()
        self.succ = {label: self._targets(label) for label in self.order}

    def terminator(self, label: str) -> tuple[int, str]:
        lines = self.body[label]
        for k in range(len(lines) - 1, -1, -1):
            text = lines[k].strip()
            if text and not text.startswith(";"):
                if text.startswith("]"):  # the end of a switch
                    while not lines[k].strip().startswith("switch "):
                        k -= 1
                    return k, " ".join(x.strip() for x in lines[k:])
                return k, text
        raise _Unsupported(label)

    def _targets(self, label: str) -> list[str]:
        _, text = self.terminator(label)
        if text.startswith(("indirectbr", "callbr")):
            raise _Unsupported("indirect branch")
        if not text.startswith(_TERMINATORS):
            raise _Unsupported(f"no terminator in {label}")
        return list(dict.fromkeys(_LABEL_REF.findall(text)))

    def has_phi(self, label: str) -> bool:
        return any(" = phi " in line for line in self.body[label])

    def text(self) -> list[str]:
        out = [self.head]
        for label in self.order:
            if label != "<entry>":
                out.append(f"{label}:")
            out += self.body[label]
            out.append("")
        return out + [self.end]


def _predecessors(f: _Function) -> dict[str, list[str]]:
    preds: dict[str, list[str]] = {label: [] for label in f.order}
    for label in f.order:
        for t in f.succ[label]:
            preds[t].append(label)
    return preds


def _dominators(f: _Function, preds: dict[str, list[str]]) -> dict[str, set[str]]:
    entry = f.order[0]
    everything = set(f.order)
    dom = {label: set(everything) for label in f.order}
    dom[entry] = {entry}
    changed = True
    while changed:
        changed = False
        for label in f.order[1:]:
            ps = [dom[p] for p in preds[label]]
            new = set.intersection(*ps) | {label} if ps else {label}
            if new != dom[label]:
                dom[label], changed = new, True
    return dom


def _loops(f: _Function, preds: dict[str, list[str]], dom: dict[str, set[str]]) -> dict[str, set[str]]:
    """Loop header -> its blocks (natural loops, those of one header merged)."""
    loops: dict[str, set[str]] = {}
    for label in f.order:
        for h in f.succ[label]:
            if h in dom[label]:  # a back-edge
                body = loops.setdefault(h, {h})
                stack = [label]
                while stack:
                    x = stack.pop()
                    if x not in body:
                        body.add(x)
                        stack += preds[x]
    return loops


def _rewrite_function(f: _Function) -> bool:
    preds = _predecessors(f)
    loops = _loops(f, preds, _dominators(f, preds))
    if not loops:
        return False

    def around(label: str) -> list[str]:
        """The headers of the loops holding `label`, innermost first."""
        return sorted((h for h, body in loops.items() if label in body), key=lambda h: len(loops[h]))

    # Where each loop leaves: its header (`for`, `while`) or, for a do-while loop, the latch
    # that tests its condition: the block whose `br i1 %c, label %in, label %out` has one target
    # inside the loop and one outside (its "test"). None where there is no such block.
    tests = {h: _test_block(f, h, loops, preds) for h in loops}
    for h, test in tests.items():  # a test with side effects: the exits enter after them
        if test is not None and not _pure(f, test):
            tests[h] = _split_after_side_effects(f, test, loops, preds)
    edges = []  # (block, target, headers of the loops it leaves, innermost first)
    for label in f.order:
        for t in f.succ[label]:
            left = [h for h in around(label) if t not in loops[h]]
            if len(left) > 1 or (left and label != tests[left[0]]):  # all but a loop's own exit
                edges.append((label, t, left))
    if not edges:
        return False
    # One number per target and loops left: edges that meet there share it.
    numbers: dict[tuple, int] = {}
    for _, t, left in edges:
        numbers.setdefault((t, tuple(left)), len(numbers) + 1)
    exits = [(number, t, list(left)) for (t, left), number in numbers.items()]
    # What each loop needs: a test `br i1 %c, label %in, label %out` leaving to its exit block.
    headers: dict[str, tuple[int, re.Match, str]] = {}  # test block -> (line, branch, exit block)
    for _, _, left in edges:
        for h in left:
            test = tests[h]
            if test is None:
                raise _Unsupported(f"loop {h} leaves at no conditional test")
            k, text = f.terminator(test)
            m = _COND_BR.match(f.body[test][k])
            inside, out = m.group(3), m.group(4)
            headers[test] = (k, m, inside if out in loops[h] else out)
            if f.has_phi(test):
                raise _Unsupported("a phi in a loop's test block")
    # Each loop an exit leaves but its outermost one sends it on from its exit block to the next
    # loop's header (the exit block must be inside that loop); the outermost's exit block sends
    # it to its old target.
    cases: dict[str, list[tuple[int, str | None]]] = {}  # exit block -> [(number, header or None)]
    for number, t, left in exits:
        for j, h in enumerate(left):
            exit_block = headers[tests[h]][2]
            nxt = left[j + 1] if j + 1 < len(left) else None
            if nxt is not None and exit_block not in loops[nxt]:
                raise _Unsupported("an exit block outside the next loop")
            cases.setdefault(exit_block, []).append((number, tests[nxt] if nxt else None))
    for block in [*cases, *(t for _, t, _ in edges)]:
        if f.has_phi(block):
            raise _Unsupported("a phi where an edge is added")

    def new_block(label: str, lines: list[str], after: str) -> None:
        f.order.insert(f.order.index(after) + 1, label)
        f.body[label] = lines

    # The edges: the exit's number into the local, then to the innermost loop's test.
    for b, t, left in edges:
        k, text = f.terminator(b)
        number = numbers[(t, tuple(left))]
        name = f"vkcl.exit.{number}"
        # (a switch's arms run on over the lines after it, to its `]`)
        end = k + 1 if text.startswith("br ") else next(j for j in range(k, len(f.body[b]))
                                                         if f.body[b][j].strip().startswith("]")) + 1
        for j in range(k, end):
            f.body[b][j] = re.sub(rf'label %{re.escape(t)}(?=[,\s\]]|$)', f"label %{name}", f.body[b][j])
        if name not in f.body:
            new_block(name, [f"  store volatile i32 {number}, ptr {EXIT}, align 4", f"  br label %{tests[left[0]]}"], b)
    # Tests: leave when an exit is under way.
    for n, (h, (k, m, out)) in enumerate(headers.items()):
        indent, cond, a, b, rest = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or ""
        x, quiet, go = f"%vkcl.h{n}.x", f"%vkcl.h{n}.quiet", f"%vkcl.h{n}.go"
        inside = a if out == b else b
        stay = [cond]
        if out == a:  # (optimized IR may leave on `true`: the loop goes on where it is false)
            stay = [f"{indent}%vkcl.h{n}.stay = xor i1 {cond}, true", f"%vkcl.h{n}.stay"]
        f.body[h][k:k + 1] = [*stay[:-1], f"{indent}{x} = load volatile i32, ptr {EXIT}, align 4",
                              f"{indent}{quiet} = icmp eq i32 {x}, 0",
                              f"{indent}{go} = and i1 {stay[-1]}, {quiet}",
                              f"{indent}br i1 {go}, label %{inside}, label %{out}{rest}"]
    # Exit blocks: pass each exit on to the next loop's header, or send it to its target.
    targets = {number: t for number, t, _ in exits}
    for n, block in enumerate(cases):
        rest = f"vkcl.e{n}.rest"
        lines = f.body[block]
        # An exit block that is the next loop's test too (a do-while whose body ends in the inner
        # loop) goes on to its own test, after this dispatch: the default arm.
        arms = " ".join(f"i32 {number}, label %{nxt if nxt else f'vkcl.e{n}.to{number}'}"
                        for number, nxt in cases[block] if nxt != block)
        f.body[block] = [f"  %vkcl.e{n}.x = load volatile i32, ptr {EXIT}, align 4",
                         f"  switch i32 %vkcl.e{n}.x, label %{rest} [ {arms} ]"]
        for number, nxt in cases[block]:
            if nxt is None:
                # (a `break` whose block only branches back to this exit block goes on after the
                # dispatch: the local is cleared and cannot be read as an exit again)
                target = targets[number] if _forwarded(f, targets[number]) != block else rest
                new_block(f"vkcl.e{n}.to{number}", [f"  store volatile i32 0, ptr {EXIT}, align 4",
                                                    f"  br label %{target}"], block)
        new_block(rest, lines, block)
    entry = f.order[0]
    f.body[entry][0:0] = [f"  {EXIT} = alloca i32, align 4", f"  store volatile i32 0, ptr {EXIT}, align 4",
                          *f.prologue]
    return True


def _forwarded(f: _Function, label: str) -> str:
    """Where `label` leads through blocks that hold nothing but an unconditional branch."""
    seen = set()
    while label not in seen and len(f.body[label]) == 1 and f.body[label][0].strip().startswith("br label "):
        seen.add(label)
        label = _LABEL_REF.findall(f.body[label][0])[0]
    return label


_CAST = re.compile(r"= (?:zext|sext|trunc|bitcast|fptoui|fptosi|uitofp|sitofp|fpext|fptrunc|ptrtoint|inttoptr|"
                   r"addrspacecast) .* to (\S+)\s*(?:,.*)?$")
_LOAD = re.compile(r"= load (?:volatile )?([^,]+),")
_BINARY = re.compile(r"= (?:add|sub|mul|udiv|sdiv|urem|srem|shl|lshr|ashr|and|or|xor|fadd|fsub|fmul|fdiv|frem|fneg)"
                     r"(?: (?:nuw|nsw|exact|disjoint|fast|nnan|ninf|nsz|arcp|contract|afn|reassoc))* ([a-z]\w*) ")


def _result_type(line: str) -> str | None:
    """The type of the value a scalar instruction defines, where the line says it plainly."""
    if re.search(r"= [if]cmp \w+ [a-z]\w* ", line):
        return "i1"
    for pattern in (_LOAD, _CAST, _BINARY):
        m = pattern.search(line)
        if m and re.fullmatch(r"i\d+|half|float|double|ptr(?: addrspace\(\d+\))?", m.group(1).strip()):
            return m.group(1).strip()
    return None


def _pure(f: _Function, label: str) -> bool:
    return not any(_SIDE_EFFECTS.search(line) and not _PURE_CALL.search(line) for line in f.body[label])


def _test_block(f: _Function, h: str, loops: dict[str, set[str]], preds: dict[str, list[str]]) -> str | None:
    """The block where loop `h` leaves on its condition: its header if that branches on it with
    no side effects, else its one latch that does (a do-while loop's; its header may leave too,
    at a `return` inside the body); None otherwise. In optimized IR (an IL program's, its phis
    demoted: il.demote_phis) a rotated loop's test reaches the header through a block of its own
    that copies the loop's values (a split critical edge), and a header may leave on a `return`
    out of the loops around it too: there the block that leaves to within the loop around is the
    test."""
    body = loops[h]

    def leaves_on_condition(label: str) -> bool:
        m = _COND_BR.match(f.body[label][f.terminator(label)[0]])
        return m is not None and (m.group(3) in body) != (m.group(4) in body)

    def leaves_around(label: str) -> bool:  # (past the loop holding h, if any)
        around = [b for g, b in loops.items() if g != h and h in b]
        return any(t not in body and around and t not in min(around, key=len) for t in f.succ[label])

    latches = [p for p in preds[h] if p in body and leaves_on_condition(p)]
    if leaves_on_condition(h) and (_pure(f, h) or len(latches) != 1) and not leaves_around(h):
        return h
    if len(latches) == 1:
        return latches[0]
    copied = [b for b in f.order if b in body and leaves_on_condition(b) and not leaves_around(b)
              and any(t in body and f.succ[t] == [h] and preds[t] == [b] for t in f.succ[b])]
    if len(copied) == 1:
        return copied[0]
    return h if leaves_on_condition(h) else None


def _split_after_side_effects(f: _Function, label: str, loops: dict[str, set[str]],
                              preds: dict[str, list[str]]) -> str | None:
    """A new block holding what follows `label`'s last side effect (the loads and compare of
    its condition, and its branch), `label` branching to it. A value of the first part that the
    new block uses goes there through a local (an exit entering there would not have it); None
    where its type is not known (_result_type)."""
    lines = f.body[label]
    k, _ = f.terminator(label)
    last = max(j for j in range(k) if _SIDE_EFFECTS.search(lines[j]) and not _PURE_CALL.search(lines[j]))
    head, tail = lines[:last + 1], lines[last + 1:]
    for line in list(head):
        m = re.match(rf"\s*(%{_ID}) = ", line)
        use = re.compile(rf"{re.escape(m.group(1))}(?![-\w.$])") if m else None
        if use is None or not any(use.search(x) for x in tail):
            continue
        # A value the condition takes from the side effects' part (`while (++i < n)`) is kept in
        # a local of its own and loaded again after them, where exits enter too (their test
        # leaves whatever it holds: the exit number is set).
        ty = _result_type(line)
        if ty is None:
            return None
        keep = f"%vkcl.keep.{len(f.prologue)}"
        f.prologue += [f"  {keep} = alloca {ty}", f"  store {ty} zeroinitializer, ptr {keep}"]
        head.insert(head.index(line) + 1, f"  store {ty} {m.group(1)}, ptr {keep}")
        again = f"{keep}.v"
        tail = [use.sub(again, x) for x in tail]
        tail.insert(0, f"  {again} = load {ty}, ptr {keep}")
    new = f"vkcl.test.{len(f.order)}"
    f.body[label] = head + [f"  br label %{new}"]
    f.order.insert(f.order.index(label) + 1, new)
    f.body[new] = tail
    f.succ[new], f.succ[label] = f.succ[label], [new]
    preds[new] = [label]
    for s in f.succ[new]:
        preds[s] = [new if p == label else p for p in preds[s]]
    for body in loops.values():
        if label in body:
            body.add(new)
    return new


def rewrite(ir: str) -> str | None:
    """The IR with its exits out of several loops at once taken through the loops' headers (see
    the module's docstring), or None when it has none it can take."""
    lines = ir.splitlines()
    out, changed, i = [], False, 0
    while i < len(lines):
        if not _DEFINE.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        j = next(k for k in range(i + 1, len(lines)) if lines[k].startswith("}"))
        function = lines[i:j + 1]
        try:
            f = _Function(function)
            if _rewrite_function(f):
                function, changed = f.text(), True
        except (_Unsupported, KeyError, ValueError, StopIteration):
            pass
        out += function
        i = j + 1
    return "\n".join(out) + "\n" if changed else None
