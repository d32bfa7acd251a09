"""How deep a module's conditionals nest, as llvmpipe will count them.

llvmpipe (Mesa 22.3) keeps one execution mask per nested `if` of a function, on a stack of 80
(gallivm's LP_MAX_TGSI_NESTING). An `if` past the 80th pushes nothing: its branches run with
the mask of the level above, so work-items that should skip them store and return as if their
conditions held. Silently: measured with a chain of nested `if (a[g] > k) { o[g] += 1; ... }`
(81 levels as counted here right, 82 wrong), and behind the two wrong kernels a differential
run against PoCL found, where LLVM's forced unrolling (caps.loop_unroll_count) nested one level
per exit of each unrolled copy: a `return` out of three nested loops came out right at 80 levels
and wrong at 81, the one more being spirv_extra_lanes' early return.

The count follows the structured control flow the way Mesa's SPIR-V front end and its
nir_lower_returns shape it: a selection construct's branches are one level deeper than its
header; a loop adds no level (llvmpipe keeps loops on a stack of their own); a conditional
branch that leaves a construct (a `break` or `continue`) goes on at the same level; and once a
construct holds a `return`, what follows it is one level deeper (nir_lower_returns moves the
rest of the block into the branch that did not return, and a return inside a loop becomes a
break and a test after the loop). driver.py builds a program whose count is over the device's
limit again with its loops rolled, and refuses it where it is still over.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_FUNCTION, OP_FUNCTION_END, OP_LABEL = 54, 56, 248
OP_LOOP_MERGE, OP_SELECTION_MERGE = 246, 247
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_RETURN, OP_RETURN_VALUE = 249, 250, 251, 253, 254
TERMINATORS = {OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, 252, OP_RETURN, OP_RETURN_VALUE, 255, 4416}
# Deeper than any device's limit: the walk stops counting there (and its recursion stays short).
CEILING = 256


def refusal(depth: int, limit: int) -> str:
    return (f"vkcl: a kernel nests {depth} conditionals deep; llvmpipe (lavapipe) keeps no execution "
            f"mask past {limit} and would run the deeper ones for every work-item, so the program "
            "is refused rather than run wrong\n")


def deepest(binary: bytes | array) -> int:
    """The most conditionals any block of `binary` sits inside (see the docstring), over its
    functions."""
    words = binary if isinstance(binary, array) else spirv.to_words(binary)
    best = 0
    ends: dict[int, tuple] = {}  # label -> (merge instruction or None, terminator)
    label = entry = None
    last: tuple = ()
    for pos, op, n in spirv.instructions(words):
        if op == OP_FUNCTION:
            ends, entry = {}, None
        elif op == OP_LABEL:
            label = words[pos + 1]
            entry = label if entry is None else entry
            last = ()
        elif op == OP_FUNCTION_END:
            if entry is not None:
                best = max(best, _Walk(ends).deepest(entry))
            label = None
        elif label is not None:
            inst = tuple(words[pos:pos + n])
            if op in (OP_LOOP_MERGE, OP_SELECTION_MERGE):
                last = inst
            elif op in TERMINATORS:
                ends[label] = (last or None, inst)
                label = None
    return best


class _Walk:
    def __init__(self, ends: dict[int, tuple]):
        self.ends = ends
        self.best = 0
        self.seen: dict[tuple[int, int], bool] = {}

    def deepest(self, entry: int) -> int:
        self._run(entry, 0, frozenset())
        return self.best

    def _targets(self, terminator: tuple) -> list[int]:
        op = terminator[0] & 0xFFFF
        if op == OP_BRANCH:
            return [terminator[1]]
        if op == OP_BRANCH_CONDITIONAL:
            return list(dict.fromkeys(terminator[2:4]))
        if op == OP_SWITCH:  # the default, then each case's label (literals are never labels)
            return list(dict.fromkeys(w for w in terminator[2:] if w in self.ends))
        return []

    def _run(self, block: int | None, depth: int, stop: frozenset) -> bool:
        """Walk from `block` at `depth` until a block in `stop`; whether a return was met. A
        block of structured control flow has one enclosing construct, so (block, depth) decides
        the walk from it."""
        key = (block, depth)
        if key not in self.seen:
            self.seen[key] = False  # a cycle back here (never in structured flow) ends the walk
            self.seen[key] = self._walk(block, depth, stop) if depth <= CEILING else False
            self.best = max(self.best, min(depth, CEILING + 1))
        return self.seen[key]

    def _walk(self, block: int | None, depth: int, stop: frozenset) -> bool:
        returned, visited = False, set()
        # (visited: a cycle without a loop merge, which structured SPIR-V never has, ends it)
        while block is not None and block not in stop and block in self.ends and block not in visited:
            visited.add(block)
            self.best = max(self.best, depth)
            merge, terminator = self.ends[block]
            op = terminator[0] & 0xFFFF
            if op in (OP_RETURN, OP_RETURN_VALUE):
                return True
            targets = self._targets(terminator)
            if merge is not None and merge[0] & 0xFFFF == OP_SELECTION_MERGE:
                after = merge[1]
                inner = any([self._run(t, depth + 1, stop | {after}) for t in targets if t != after])
            elif merge is not None:  # a loop: its body and continue construct at the same level
                after, cont = merge[1], merge[2]
                inner = any([self._run(t, depth, stop | {after, cont, block}) for t in targets
                             if t not in (after, cont)])
                if cont != block:
                    inner |= self._run(cont, depth, stop | {after, block})
            else:
                staying = [t for t in targets if t not in stop]
                if len(staying) <= 1:  # a branch, or a break / continue beside one
                    block = staying[0] if staying else None
                    continue
                return any([self._run(t, depth + 1, stop) for t in staying]) or returned
            block = after
            if inner:  # nir_lower_returns: the rest one level down
                depth, returned = depth + 1, True
        return returned
