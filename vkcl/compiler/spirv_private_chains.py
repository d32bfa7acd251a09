"""Access chains into private byte arrays (a repair of clspv's output, spirv_fixes repair 19).

A private array of structs with padding, indexed at run time (`T a[4]; ... a[x] = a[y];` for
`struct { char c; int i; double d; short s; }`), is retyped by clspv's SimplifyPointerBitcastPass
as an array of bytes (`[96 x i8]`), and clspv then writes invalid SPIR-V for it:
- `OpAccessChain %ptr_Function_uchar %var %uint_0 %uint_0`: a second index past the byte the
  first one selects (spirv-val: "reached non-composite type while indexes still remain");
- `OpPtrAccessChain %ptr_Function_uchar %that %ulong_24` for the elements after the first
  (`&a[1]` as byte 24), which Vulkan allows only on Workgroup, StorageBuffer and
  PhysicalStorageBuffer pointers.
lavapipe crashed the application's process on that module (before vkcl, clspv itself crashed on
such programs). The repair: an index of constant 0 past a scalar selects that scalar, so it is
dropped; an OpPtrAccessChain on a Function or Private pointer whose base is an access chain
ending at element 0 of an array (whose elements are the pointer's ArrayStride apart) becomes one
OpAccessChain of that array with the element index in place of the 0. Anything else of the kind
is not guessed at: the build fails (InvalidSpirv) instead of handing the driver invalid SPIR-V.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_TYPE_BOOL, OP_CONSTANT, OP_IN_BOUNDS_PTR_ACCESS_CHAIN = 20, 43, 70
SC_PRIVATE, SC_FUNCTION = 6, 7
_CHAINS = (spirv.OP_ACCESS_CHAIN, spirv.OP_IN_BOUNDS_ACCESS_CHAIN)
_PTR_CHAINS = (spirv.OP_PTR_ACCESS_CHAIN, OP_IN_BOUNDS_PTR_ACCESS_CHAIN)


class InvalidSpirv(spirv.SpirvFormatError):
    """clspv wrote an access chain vkcl cannot make valid."""


def fix_private_byte_chains(data: bytes) -> bytes:
    words = spirv.to_words(data)
    types: dict[int, tuple] = {}     # type id -> ("scalar", bytes) / ("composite", element ids) / ...
    pointers: dict[int, tuple[int, int]] = {}  # pointer type -> (storage class, pointee)
    strides: dict[int, int] = {}
    zero, int_types = set(), set()
    type_of: dict[int, int] = {}
    for pos, op, n in spirv.instructions(words):
        if op in (spirv.OP_TYPE_INT, spirv.OP_TYPE_FLOAT):
            types[words[pos + 1]] = ("scalar", words[pos + 2] // 8)
            if op == spirv.OP_TYPE_INT:
                int_types.add(words[pos + 1])
        elif op == OP_TYPE_BOOL:
            types[words[pos + 1]] = ("scalar", 0)
        elif op in (spirv.OP_TYPE_VECTOR, spirv.OP_TYPE_MATRIX, spirv.OP_TYPE_ARRAY, spirv.OP_TYPE_RUNTIME_ARRAY):
            types[words[pos + 1]] = ("array", words[pos + 2])
        elif op == spirv.OP_TYPE_STRUCT:
            types[words[pos + 1]] = ("struct", tuple(words[pos + 2:pos + n]))
        elif op == spirv.OP_TYPE_POINTER:
            pointers[words[pos + 1]] = (words[pos + 2], words[pos + 3])
        elif op == spirv.OP_DECORATE and n == 4 and words[pos + 2] == spirv.DECORATION_ARRAY_STRIDE:
            strides[words[pos + 1]] = words[pos + 3]
        elif op == OP_CONSTANT and words[pos + 1] in int_types and all(w == 0 for w in words[pos + 3:pos + n]):
            zero.add(words[pos + 2])
        if n >= 3 and words[pos + 1] in pointers:
            type_of[words[pos + 2]] = words[pos + 1]

    chains: dict[int, tuple[int, list[int], int | None]] = {}  # result -> (base, indices, array type of the last)
    out, changed = array("I", words[:spirv.HEADER_WORDS]), False
    for pos, op, n in spirv.instructions(words):
        inst = words[pos:pos + n]
        if op in _CHAINS:
            base, indices = inst[3], list(inst[4:])
            kept, last_array = _walk(types, pointers, type_of.get(base), indices, zero)
            if len(kept) != len(indices):
                inst, changed = array("I", [(4 + len(kept)) << 16 | op, *inst[1:4], *kept]), True
            chains[inst[2]] = (base, kept, last_array)
        elif op in _PTR_CHAINS and pointers.get(type_of.get(inst[3]), (None,))[0] in (SC_FUNCTION, SC_PRIVATE):
            inst, changed = _as_access_chain(inst, chains, types, strides, type_of, zero), True
        out.extend(inst)
    return spirv.to_bytes(out) if changed else data


def _walk(types, pointers, pointer_type, indices, zero) -> tuple[list[int], int | None]:
    """The indices an access chain keeps (trailing zeros past a scalar dropped), and the array
    type its last kept index selects an element of (None if not an array)."""
    if pointer_type is None or pointer_type not in pointers:
        return indices, None
    t, last_array = pointers[pointer_type][1], None
    for k, index in enumerate(indices):
        kind = types.get(t)
        if kind is None:
            return indices, None
        if kind[0] == "scalar":
            if all(i in zero for i in indices[k:]):
                return indices[:k], last_array
            raise InvalidSpirv("clspv wrote an access chain that indexes into a scalar")
        if kind[0] == "array":
            last_array, t = t, kind[1]
        else:  # a struct: its members need the indices' values; such chains stay as they are
            return indices, None
    return indices, last_array


def _as_access_chain(inst, chains, types, strides, type_of, zero) -> array:
    result_type, result, base, element, rest = inst[1], inst[2], inst[3], inst[4], inst[5:]
    chain = chains.get(base)
    if chain is not None:
        root, indices, last_array = chain
        if indices and indices[-1] in zero and last_array is not None:
            elem = types.get(types[last_array][1])
            stride = strides.get(type_of.get(base))
            if elem is not None and elem[0] == "scalar" and stride == elem[1]:
                out = array("I", [0, result_type, result, root, *indices[:-1], element, *rest])
                out[0] = (len(out) << 16) | spirv.OP_ACCESS_CHAIN
                return out
    raise InvalidSpirv("clspv wrote an OpPtrAccessChain into private memory (a private array of structs "
                       "with padding, indexed at run time?), which Vulkan does not allow and vkcl cannot rewrite")
