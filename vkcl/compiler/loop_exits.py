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
local is cleared and the edge reaches its old target. The code between is not run: a loop's
latch (its increment) is skipped, as the exit skipped it. Left as they are (the program is
then refused as before): loops whose header does not end in `br i1 %c, label %inside, label
%exit` (do-while loops) or has side effects (an exit runs it once more), exits from a
`switch`, blocks with phis where edges are added, and functions with indirect branches.
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

    edges = []  # (block, target, headers of the loops it leaves, innermost first)
    for label in f.order:
        for t in f.succ[label]:
            left = [h for h in around(label) if t not in loops[h]]
            if len(left) > 1 or (left and label != left[0]):  # all but a loop's exit at its header
                edges.append((label, t, left))
    if not edges:
        return False
    # One number per target and loops left: edges that meet there share it.
    numbers: dict[tuple, int] = {}
    for _, t, left in edges:
        numbers.setdefault((t, tuple(left)), len(numbers) + 1)
    exits = [(number, t, list(left)) for (t, left), number in numbers.items()]
    # What each loop needs: a header `br i1 %c, label %in, label %out` leaving to its exit block.
    headers: dict[str, tuple[int, re.Match, str]] = {}
    for _, _, left in edges:
        for h in left:
            k, text = f.terminator(h)
            m = _COND_BR.match(f.body[h][k])
            if m is None:
                raise _Unsupported(f"loop {h} does not leave at its header")
            inside, out = m.group(3), m.group(4)
            if inside in loops[h] and out not in loops[h]:
                headers[h] = (k, m, out)
            elif out in loops[h] and inside not in loops[h]:
                headers[h] = (k, m, inside)
            else:
                raise _Unsupported(f"loop {h} does not leave at its header")
            if f.has_phi(h):
                raise _Unsupported("a phi in a loop header")
            if any(_SIDE_EFFECTS.search(line) and not _PURE_CALL.search(line) for line in f.body[h]):
                raise _Unsupported("a loop header with side effects (an exit runs it once more)")
    # Each loop an exit leaves but its outermost one sends it on from its exit block to the next
    # loop's header (the exit block must be inside that loop); the outermost's exit block sends
    # it to its old target.
    cases: dict[str, list[tuple[int, str | None]]] = {}  # exit block -> [(number, header or None)]
    for number, t, left in exits:
        for j, h in enumerate(left):
            exit_block = headers[h][2]
            nxt = left[j + 1] if j + 1 < len(left) else None
            if nxt is not None and exit_block not in loops[nxt]:
                raise _Unsupported("an exit block outside the next loop")
            cases.setdefault(exit_block, []).append((number, nxt))
    for block in [*cases, *(t for _, t, _ in edges)]:
        if f.has_phi(block):
            raise _Unsupported("a phi where an edge is added")

    def new_block(label: str, lines: list[str], after: str) -> None:
        f.order.insert(f.order.index(after) + 1, label)
        f.body[label] = lines

    # The edges: the exit's number into the local, then back to the innermost loop's header.
    for b, t, left in edges:
        k, text = f.terminator(b)
        if not text.startswith("br "):
            raise _Unsupported("an exit from a switch")
        number = numbers[(t, tuple(left))]
        name = f"vkcl.exit.{number}"
        f.body[b][k] = re.sub(rf'label %{re.escape(t)}(?=[,\s\]]|$)', f"label %{name}", f.body[b][k])
        if name not in f.body:
            new_block(name, [f"  store i32 {number}, ptr {EXIT}, align 4", f"  br label %{left[0]}"], b)
    # Headers: leave when an exit is under way.
    for n, (h, (k, m, out)) in enumerate(headers.items()):
        indent, cond, a, b, rest = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or ""
        x, quiet, go = f"%vkcl.h{n}.x", f"%vkcl.h{n}.quiet", f"%vkcl.h{n}.go"
        inside = a if out == b else b
        f.body[h][k:k + 1] = [f"{indent}{x} = load i32, ptr {EXIT}, align 4",
                              f"{indent}{quiet} = icmp eq i32 {x}, 0",
                              f"{indent}{go} = and i1 {cond}, {quiet}",
                              f"{indent}br i1 {go}, label %{inside}, label %{out}{rest}"]
    # Exit blocks: pass each exit on to the next loop's header, or send it to its target.
    targets = {number: t for number, t, _ in exits}
    for n, block in enumerate(cases):
        rest = f"vkcl.e{n}.rest"
        lines = f.body[block]
        arms = " ".join(f"i32 {number}, label %{nxt if nxt else f'vkcl.e{n}.to{number}'}"
                        for number, nxt in cases[block])
        f.body[block] = [f"  %vkcl.e{n}.x = load i32, ptr {EXIT}, align 4",
                         f"  switch i32 %vkcl.e{n}.x, label %{rest} [ {arms} ]"]
        for number, nxt in cases[block]:
            if nxt is None:
                new_block(f"vkcl.e{n}.to{number}", [f"  store i32 0, ptr {EXIT}, align 4",
                                                    f"  br label %{targets[number]}"], block)
        new_block(rest, lines, block)
    entry = f.order[0]
    f.body[entry][0:0] = [f"  {EXIT} = alloca i32, align 4", f"  store i32 0, ptr {EXIT}, align 4"]
    return True


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
