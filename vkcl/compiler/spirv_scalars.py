"""Composite instructions on scalars (a repair of clspv's output, spirv_fixes repair 18).

clspv can wrap a scalar in a one-element "composite" and take it out again: seen on an H200
build of pyopencl's float64 scan (a work-group array of struct {double; uint} read back as
words) as `%b = OpCompositeConstruct %ulong %a` and `%c = OpCompositeExtract %ulong %b 0`.
Both are invalid SPIR-V (their composite is a scalar), which spirv-val rejects and NVIDIA's
driver (580) crashed on in vkCreateComputePipelines, killing the application (lavapipe took it).
Each means its one operand unchanged, so it becomes OpCopyObject of that operand: the same
result id and type, the same value, valid SPIR-V.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT = 20, 21, 22
OP_COPY_OBJECT, OP_COMPOSITE_CONSTRUCT, OP_COMPOSITE_EXTRACT = 83, 80, 81
# Instructions whose first two operands are not a result type and a result: names, entry points,
# execution modes, decorations, stores and copies.
_NO_RESULT_TYPE = frozenset({5, 6, 15, 16, 62, 63, 71, 72, 331, 332})


def fix_scalar_composites(data: bytes) -> bytes:
    words = spirv.to_words(data)
    scalar_types: set[int] = set()
    scalar_values: set[int] = set()  # ids of values of a scalar type
    rewrite: list[tuple[int, int]] = []  # (position, words) of the instructions to replace
    for pos, op, n in spirv.instructions(words):
        if op in (OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT):
            scalar_types.add(words[pos + 1])
            continue
        if op == OP_COMPOSITE_CONSTRUCT and n == 4 and words[pos + 1] in scalar_types:
            rewrite.append((pos, n))
        elif op == OP_COMPOSITE_EXTRACT and n == 5 and words[pos + 4] == 0 and words[pos + 3] in scalar_values:
            rewrite.append((pos, n))
        # A result type, then the result (annotations and debug names name ids at those places too)
        if n >= 3 and op not in _NO_RESULT_TYPE and words[pos + 1] in scalar_types:
            scalar_values.add(words[pos + 2])
    if not rewrite:
        return data
    replaced = dict(rewrite)
    out = array("I", words[:spirv.HEADER_WORDS])
    for pos, op, n in spirv.instructions(words):
        if pos in replaced:  # result type, result id, the one operand
            out.extend([(4 << 16) | OP_COPY_OBJECT, words[pos + 1], words[pos + 2], words[pos + 3]])
        else:
            out.extend(words[pos:pos + n])
    return spirv.to_bytes(out)
