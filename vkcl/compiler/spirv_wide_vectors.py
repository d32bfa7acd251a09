"""Repair 20: bitcasts to vectors of more than four elements taken apart element by element.

InstCombine (inside clspv) makes `(uchar)(v.s1 >> 8)` of a ulong3 or ulong4 `v` an element of
a bitcast of `v` to <24 x i8> or <32 x i8> (and `(uint)(v.s1 >> 32)` of a ulong3 one of <6 x
i32>); clspv's long-vector lowering leaves such vectors in its SPIR-V, where Vulkan allows at
most four components (spirv-val: "Illegal number of components (32) for TypeVector"; lavapipe
failed the pipeline, and the launch came back CL_OUT_OF_RESOURCES). Since clspv runs without
its UndoInstCombine pass (options.py: that pass dropped the offset inside the wide element),
every such element reaches SPIR-V as one of these. Each use is an OpCompositeExtract or an
OpVectorShuffle; each element it takes becomes the wide element's bits shifted down and
narrowed, exactly as little-endian memory has them:

    element i of (<n*r x iD>) bitcast of v  =  UConvert iD (v[i / r] >> (D * (i % r)))

Only a module whose every such vector can be rewritten is changed.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import Module, instruction

OP_UNDEF, OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR = 1, 21, 22, 23
OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY, OP_TYPE_STRUCT, OP_TYPE_POINTER, OP_TYPE_FUNCTION = 28, 29, 30, 32, 33
_NAMING = {5, 6, 71, 72}  # OpName, OpMemberName, OpDecorate, OpMemberDecorate
OP_FUNCTION, OP_VECTOR_SHUFFLE, OP_COMPOSITE_CONSTRUCT, OP_COMPOSITE_EXTRACT = 54, 79, 80, 81
OP_UCONVERT, OP_BITCAST, OP_SHIFT_RIGHT_LOGICAL = 113, 124, 194
MAX_COMPONENTS = 4
UNDEFINED_COMPONENT = 0xFFFFFFFF


def split_wide_vectors(data: bytes) -> bytes:
    if not _declares_wide_vector(data):
        return data
    m = Module(data)
    wide = {tid for tid, inst in m.types.items()
            if m.opcode(inst) == OP_TYPE_VECTOR and inst[3] > MAX_COMPONENTS}
    if not wide:
        return data
    sources: dict[int, int | None] = {}  # wide value -> the vector it is a bitcast of (None: undef)
    for inst in m.insts:
        op = m.opcode(inst)
        if op == OP_BITCAST and inst[1] in wide and _splittable(m, inst[1], m.type_of.get(inst[3])):
            sources[inst[2]] = inst[3]
        elif op == OP_UNDEF and inst[1] in wide:
            sources[inst[2]] = None
    if not _only_taken_apart(m, wide, sources):
        return data

    def each(inst: array):
        op = m.opcode(inst)
        if op in (OP_BITCAST, OP_UNDEF) and len(inst) > 2 and inst[2] in sources:
            return []
        if op == OP_COMPOSITE_EXTRACT and inst[3] in sources:
            return _element(m, inst[1], inst[3], sources[inst[3]], inst[4], inst[2])
        if op == OP_VECTOR_SHUFFLE and (inst[3] in sources or inst[4] in sources):
            return _shuffle(m, inst, sources)
        return None

    m.rewrite(each)
    unused = wide - _types_used(m)
    m.insts = [inst for inst in m.insts
               if not ((m.opcode(inst) == OP_TYPE_VECTOR or m.opcode(inst) in _NAMING) and inst[1] in unused)]
    return m.to_bytes()


def _types_used(m: Module) -> set[int]:
    """The types that a type, a value or a function-body operand names."""
    used, in_function = set(), False
    for inst in m.insts:
        op = m.opcode(inst)
        in_function = in_function or op == OP_FUNCTION
        if op == OP_TYPE_POINTER:
            used.add(inst[3])
        elif op in (OP_TYPE_VECTOR, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
            used.add(inst[2])
        elif op in (OP_TYPE_STRUCT, OP_TYPE_FUNCTION):
            used.update(inst[2:])
        elif m.value_id(inst) is not None:
            used.add(inst[1])
            if in_function:
                used.update(_id_operands(inst, True))
        elif in_function:
            used.update(_id_operands(inst, False))
    return used


def _declares_wide_vector(data: bytes) -> bool:
    """Whether a vector type of more than four components is declared (a quick look at the
    declarations only: most modules have none, and are returned untouched)."""
    words = spirv.to_words(data)
    for pos, op, _ in spirv.instructions(words):
        if op == OP_FUNCTION:
            return False
        if op == OP_TYPE_VECTOR and words[pos + 3] > MAX_COMPONENTS:
            return True
    return False


def _splittable(m: Module, wide_type: int, source_type: int | None) -> bool:
    """A bitcast from a vector of (at most four) wider ints or floats, each a whole number of
    the wide vector's narrower integer elements."""
    src = m.types.get(source_type) if source_type is not None else None
    if src is None or m.opcode(src) != OP_TYPE_VECTOR or src[3] > MAX_COMPONENTS:
        return False
    narrow, wide_elem = m.types[m.types[wide_type][2]], m.types.get(src[2])
    if m.opcode(narrow) != OP_TYPE_INT or wide_elem is None or m.opcode(wide_elem) not in (OP_TYPE_INT, OP_TYPE_FLOAT):
        return False
    return wide_elem[2] > narrow[2] and wide_elem[2] % narrow[2] == 0


def _only_taken_apart(m: Module, wide: set[int], sources: dict) -> bool:
    """Every wide vector value is one of `sources`, and each is used only as an extract's
    composite (with one index) or a shuffle's operand (in functions: the module's declarations
    name none of them)."""
    in_function = False
    for inst in m.insts:
        op = m.opcode(inst)
        value = m.value_id(inst)
        if value is not None and inst[1] in wide and value not in sources:
            return False
        in_function = in_function or op == OP_FUNCTION
        if not in_function or op == OP_VECTOR_SHUFFLE or value in sources:
            continue
        if op == OP_COMPOSITE_EXTRACT:
            if inst[3] in sources and len(inst) != 5:
                return False
            continue
        if any(word in sources for word in _id_operands(inst, value is not None)):
            return False
    return True


def _id_operands(inst: array, has_result: bool) -> array:
    """The operands of a function-body instruction that are ids (its literals left out where
    they could be mistaken for one)."""
    op = inst[0] & 0xFFFF
    if op in _ID_SLICES:
        return array("I", [word for part in _ID_SLICES[op] for word in inst[part]])
    return inst[3:] if has_result else inst[1:]


# Literal operands: OpLoad's and OpStore's memory operands, OpExtInst's instruction number,
# OpCompositeInsert's indices, the merge instructions' controls, OpSwitch's case values,
# OpBranchConditional's weights.
_ID_SLICES = {61: (slice(3, 4),), 62: (slice(1, 3),), 12: (slice(3, 4), slice(5, None)),
              82: (slice(3, 5),), 246: (slice(1, 3),), 247: (slice(1, 2),),
              251: (slice(1, 3), slice(4, None, 2)), 250: (slice(1, 4),)}


def _element(m: Module, narrow_type: int, wide_value: int, source: int | None, index: int,
             result: int) -> list[array]:
    """Instructions that make `result` element `index` of the wide vector."""
    if source is None:
        return [instruction(OP_UNDEF, narrow_type, result)]
    src_vec = m.types[m.type_of[source]]
    elem_type = src_vec[2]
    elem_bits, narrow_bits = m.types[elem_type][2], m.types[narrow_type][2]
    ratio = elem_bits // narrow_bits
    bits_type = m.int_type(elem_bits)
    out = []
    value = m.new_id()
    out.append(instruction(OP_COMPOSITE_EXTRACT, elem_type, value, source, index // ratio))
    if elem_type != bits_type:
        as_bits = m.new_id()
        out.append(instruction(OP_BITCAST, bits_type, as_bits, value))
        value = as_bits
    shift = narrow_bits * (index % ratio)
    if shift:
        shifted = m.new_id()
        out.append(instruction(OP_SHIFT_RIGHT_LOGICAL, bits_type, shifted, value, m.constant(bits_type, shift)))
        value = shifted
    out.append(instruction(OP_UCONVERT, narrow_type, result, value))
    return out


def _shuffle(m: Module, inst: array, sources: dict) -> list[array]:
    """A shuffle with a wide operand, as one composite of its elements."""
    result_type, result, first, second = inst[1], inst[2], inst[3], inst[4]
    elem_type = m.types[result_type][2]
    first_count = m.types[m.type_of[first]][3]
    out, parts = [], []
    for index in inst[5:]:
        vector, at = (first, index) if index < first_count else (second, index - first_count)
        if index == UNDEFINED_COMPONENT:  # any value will do
            vector, at = first, 0
        part = m.new_id()
        if vector in sources:
            out += _element(m, elem_type, vector, sources[vector], at, part)
        else:
            out.append(instruction(OP_COMPOSITE_EXTRACT, elem_type, part, vector, at))
        parts.append(part)
    out.append(instruction(OP_COMPOSITE_CONSTRUCT, result_type, result, *parts))
    return out
