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
    """The header ids of the loops in `binary` whose continue block never branches back."""
    words = binary if isinstance(binary, array) else spirv.to_words(binary)
    constants: dict[int, bool] = {}
    loops: list[tuple[int, int, int]] = []  # (header, merge, continue target)
    terminators: dict[int, tuple[int, int, int]] = {}
    label = 0
    for pos, op, _ in spirv.instructions(words):
        if op == OP_CONSTANT_TRUE or op == OP_CONSTANT_FALSE:
            constants[words[pos + 2]] = op == OP_CONSTANT_TRUE
        elif op == spirv.OP_LABEL:
            label = words[pos + 1]
        elif op == OP_LOOP_MERGE:
            loops.append((label, words[pos + 1], words[pos + 2]))
        elif op == OP_BRANCH_CONDITIONAL:
            terminators[label] = (words[pos + 1], words[pos + 2], words[pos + 3])
    found = []
    for header, merge, continue_target in loops:
        branch = terminators.get(continue_target)
        if branch is None or branch[0] not in constants:
            continue
        condition, taken, not_taken = branch
        if {taken, not_taken} == {header, merge} and (taken if constants[condition] else not_taken) == merge:
            found.append(header)
    return found
