"""Loops whose back-edge can never be taken: the mark of a StructurizeCFG miscompile.

LLVM's StructurizeCFG (clspv runs it before writing SPIR-V) gives a loop a prefix flow block
when the loop's header is entered from a conditional branch (a rotated loop's guard). The loop
predicates stay keyed on the old header, so the new back-edge finds none and its condition
becomes the constant `true`: "leave the loop". The body then runs at most once. Seen with a
loop that leaves by two exits (a `break` that sets a flag, then `if (flag) return;`); an LLVM
pull request of 2026-08 ("[StructurizeCFG] Fix miscompile with prefix flow blocks in loops")
describes the same fault.

A structured loop whose continue block leaves for the merge block on a constant is otherwise
never written: LLVM deletes loops that cannot repeat long before structurizing. So such a loop
in clspv's output is taken as the miscompile, and driver.py builds the program again with loop
rotation off, which gives the structurizer no guard to put a prefix block behind.

The same fault in nested loops (lost_back_edges): an inner loop left by a `return` or `goto`
out of both loops, inside a `#pragma nounroll` outer loop, lost its own header; its back-edge
became a second edge to the outer header on the constant that never takes it, so the inner
loop ran at most one (unrolled) trip a time and the kernel returned wrong values, silently.
A loop header is the target of one back-edge only (spirv-val: "targeted by 2 back-edge
blocks"), so such an edge is the mark too. Loop rotation off did not help there (nor rolled
loops, nor -cl-opt-disable), and a `return` out of nested loops was refused on every device:
driver.py builds such a program a third time with its exits out of several loops, and every
exit of a loop but at its header, taken through the loops' headers (loop_exits.py), and
refuses it only if a loop is still cut short.

A third mark (stuck_loops): a one-block loop whose back-edge gives the value its exit test
reads a constant that keeps it in the loop. Seen in clspv's output for a do-while loop and a
`for` loop inside it, each left by a `return`, under llvmpipe's forced unrolling, built through
a loop_exits that routed the do-while's exits through its latch (its first form): LLVM's IR
had the `for` loop's back-edge as `br i1 true` (the same fault), and the writer made a loop on
the exit code that spins once the code is 2. The old marks missed it; on
lavapipe its loop budget ended that loop with wrong values, and a launch that resumed it ran
forever. Such a loop cannot leave once it repeats, which no program that terminates has.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_CONSTANT_TRUE, OP_CONSTANT_FALSE = 41, 42
OP_LOOP_MERGE, OP_BRANCH_CONDITIONAL = 246, 250

# What driver.py adds to clspv's options to build such a program again: LoopRotate duplicates
# no header instruction, so no loop gets the guard that needs the prefix flow block.
NO_ROTATION = "-rotation-max-header-size=0"
REFUSAL = ("vkcl: clspv's structurizer left a loop that can never repeat (LLVM StructurizeCFG's "
           "prefix-flow-block fault), even with loop rotation off; the program is refused rather "
           "than run with its loop cut to one pass\n")


def single_pass_loops(binary: bytes | array) -> list[int]:
    """The header ids of the loops in `binary` whose continue block never branches back, or
    that another block (lost_back_edges) branches back to on a constant that never does, or
    that cannot leave once they branch back (stuck_loops)."""
    return _single_pass(binary, True) + stuck_loops(binary)


def lost_back_edges(binary: bytes | array) -> list[int]:
    """The header ids of the loops that a block after the header other than the continue target
    branches back to, on a constant that never takes that edge."""
    return _single_pass(binary, False)


def _single_pass(binary: bytes | array, continue_targets: bool) -> list[int]:
    words = binary if isinstance(binary, array) else spirv.to_words(binary)
    constants: dict[int, bool] = {}
    loops: list[tuple[int, int, int]] = []  # (header, merge, continue target)
    terminators: dict[int, tuple[int, int, int]] = {}
    order: dict[int, int] = {}  # labels in their order (per module: ids are unique)
    label = 0
    for pos, op, _ in spirv.instructions(words):
        if op == OP_CONSTANT_TRUE or op == OP_CONSTANT_FALSE:
            constants[words[pos + 2]] = op == OP_CONSTANT_TRUE
        elif op == spirv.OP_LABEL:
            label = words[pos + 1]
            order[label] = len(order)
        elif op == OP_LOOP_MERGE:
            loops.append((label, words[pos + 1], words[pos + 2]))
        elif op == OP_BRANCH_CONDITIONAL:
            terminators[label] = (words[pos + 1], words[pos + 2], words[pos + 3])
    never_taken: dict[int, list[int]] = {}  # a target -> the blocks whose constant never takes it
    for label, (condition, taken, not_taken) in terminators.items():
        if condition in constants and taken != not_taken:
            never_taken.setdefault(not_taken if constants[condition] else taken, []).append(label)
    found = []
    for header, merge, continue_target in loops:
        branch = terminators.get(continue_target)
        if continue_targets and branch is not None and branch[0] in constants:
            condition, taken, not_taken = branch
            if {taken, not_taken} == {header, merge} and (taken if constants[condition] else not_taken) == merge:
                found.append(header)
                continue
        # A second edge back to the header, from a block after it, on a constant that never
        # takes it: an inner loop's back-edge the structurizer moved to the outer header and lost.
        if any(label != continue_target and order[label] > order[header] for label in never_taken.get(header, ())):
            found.append(header)
    return found


_COMPARES = {170: lambda a, b: a == b, 171: lambda a, b: a != b, 172: lambda a, b: a > b,
             174: lambda a, b: a >= b, 176: lambda a, b: a < b, 178: lambda a, b: a <= b}


def stuck_loops(binary: bytes | array) -> list[int]:
    """The header ids of the one-block loops (the header its own continue target) whose
    back-edge gives the phi their condition tests a constant that keeps them in the loop: once
    they branch back they never leave. The same structurizer fault wrote them: the lost loop of
    a `for` inside a do-while, each left by a `return`, under forced unrolling (LLVM's IR had
    `br i1 true` for the inner back-edge; clspv's writer made of it a loop on the exit code that
    spins where the code is 2). On lavapipe the loop budget ended it, wrong; on an H200 the
    kernel hung."""
    words = binary if isinstance(binary, array) else spirv.to_words(binary)
    ints: dict[int, int] = {}
    phis: dict[int, tuple[int, list[int]]] = {}  # result -> (its block, [value, parent, ...])
    compares: dict[int, tuple[int, int, int]] = {}  # result -> (opcode, a, b)
    loops: list[tuple[int, int, int]] = []
    branches: dict[int, tuple[int, int, int]] = {}
    label = 0
    for pos, op, n in spirv.instructions(words):
        if op == 43 and n == 4:  # OpConstant, 32 bits
            ints[words[pos + 2]] = words[pos + 3]
        elif op == spirv.OP_LABEL:
            label = words[pos + 1]
        elif op == 245:  # OpPhi
            phis[words[pos + 2]] = (label, list(words[pos + 3:pos + n]))
        elif op in _COMPARES and n == 5:
            compares[words[pos + 2]] = (op, words[pos + 3], words[pos + 4])
        elif op == OP_LOOP_MERGE:
            loops.append((label, words[pos + 1], words[pos + 2]))
        elif op == OP_BRANCH_CONDITIONAL:
            branches[label] = (words[pos + 1], words[pos + 2], words[pos + 3])

    def on_back_edge(value: int, header: int) -> int | None:
        if value in ints:
            return ints[value]
        if value in phis and phis[value][0] == header:
            pairs = phis[value][1]
            incoming = dict(zip(pairs[1::2], pairs[0::2]))
            return ints.get(incoming.get(header))
        return None
    found = []
    for header, merge, continue_target in loops:
        branch = branches.get(header)
        if continue_target != header or branch is None or branch[0] not in compares:
            continue
        op, a, b = compares[branch[0]]
        x, y = on_back_edge(a, header), on_back_edge(b, header)
        if x is None or y is None or {branch[1], branch[2]} != {header, merge}:
            continue
        if (branch[1] if _COMPARES[op](x, y) else branch[2]) == header:
            found.append(header)
    return found
