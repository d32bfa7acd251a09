"""Pointers whose SPIR-V types disagree (a repair of clspv's output, spirv_fixes repair 14).

LLVM's opaque pointers let one pointer value be indexed as floats in one place and as bytes in
another (it folds `in[255]` into a byte offset). clspv then gives a PhysicalStorageBuffer
OpPtrAccessChain a result type other than its base's (seen: `i > 0 ? in[i - 1] : in[255]` on
floats gave `OpPtrAccessChain %ptr_float %ptr_to_uchar_value %i`, and an OpSelect of that and a
byte pointer), which spirv-val rejects and lavapipe refused to run (CL_OUT_OF_RESOURCES at the
launch). The element index is in units of the result's pointee, as LLVM meant: the base is
reinterpreted (OpBitcast) as the result's pointer type first. An OpSelect whose pointer operands
have another type than its result gets them reinterpreted the same way. Bitcasts between
PhysicalStorageBuffer pointers change no address.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_BITCAST, OP_SELECT = 124, 169


def fix_mistyped_pointers(data: bytes) -> bytes:
    words = spirv.to_words(data)
    pointer_types: dict[int, int] = {}  # pointer type id -> storage class
    type_of: dict[int, int] = {}       # pointer value id -> its type
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_TYPE_POINTER:
            pointer_types[words[pos + 1]] = words[pos + 2]
        elif n >= 3 and words[pos + 1] in pointer_types:  # a result type, then the result
            type_of[words[pos + 2]] = words[pos + 1]
    psb = spirv.SC_PHYSICAL_STORAGE_BUFFER
    bound = words[3]
    before: dict[int, array] = {}

    def reinterpret(pos: int, at: int, want: int) -> None:
        nonlocal bound
        value = words[at]
        have = type_of.get(value)
        if have is None or have == want or pointer_types.get(have) != psb or pointer_types.get(want) != psb:
            return
        before.setdefault(pos, array("I")).extend([(4 << 16) | OP_BITCAST, want, bound, value])
        words[at] = bound
        bound += 1

    for pos, op, n, in_function in spirv.instructions_scoped(words):
        if not in_function:
            continue
        if op == spirv.OP_PTR_ACCESS_CHAIN and n == 5:  # result type, result, base, element
            reinterpret(pos, pos + 3, words[pos + 1])
        elif op == OP_SELECT and n == 6 and words[pos + 1] in pointer_types:
            reinterpret(pos, pos + 4, words[pos + 1])
            reinterpret(pos, pos + 5, words[pos + 1])
    if not before:
        return data
    out = array("I", words[:spirv.HEADER_WORDS])
    for pos, op, n in spirv.instructions(words):
        if pos in before:
            out.extend(before[pos])
        out.extend(words[pos:pos + n])
    out[3] = bound
    return spirv.to_bytes(out)
