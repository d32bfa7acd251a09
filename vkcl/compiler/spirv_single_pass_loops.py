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
    that another block (lost_back_edges) branches back to on a constant that never does."""
    return _single_pass(binary, True)


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
