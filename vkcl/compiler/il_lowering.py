"""OpenCL SPIR-V rewritten, before llvm-spirv reads it, into instructions that llvm-spirv-15 and
then clspv translate right (the IL path: il.to_bitcode).

Each rewrite keeps the instruction's result id, so nothing else in the module changes:
- SPIR-V 1.4 instructions that llvm-spirv-15 aborts on, as their SPIR-V 1.0 equivalents:
  OpCopyLogical as member-wise extracts and a construct; OpPtrEqual / OpPtrNotEqual as integer
  compares of the addresses (OpConvertPtrToU) and OpPtrDiff as their difference divided by the
  pointee's size; OpDecorateString / OpMemberDecorateString as OpDecorate / OpMemberDecorate;
  two memory-operand masks on a copy merged into one.
- printf's format cast from a constant string at module scope: llvm-spirv-15 makes an
  OpBitcast in the function an instruction, and clspv's printf support crashes (SIGSEGV) unless
  the format is a constant.
- OpCopyMemory (any version: llvm-spirv-15 asserts on it) as a load and a store.
- A function variable's initializer as a store at the function's start: llvm-spirv-15 makes it
  a private-memory global, which clspv turned into a module-scope Function variable (invalid
  SPIR-V, on which lavapipe crashed).
- UserSemantic decorations (strings for tools, no meaning to a program) dropped: llvm-spirv-15
  aborts on one on a built-in variable, and makes one on a struct member an
  `llvm.ptr.annotation` call that clspv crashes (SIGSEGV) on.
- Loads and stores of whole structs and arrays, member by member, and OpCopyObject of them as
  extracts and a construct (llvm-spirv made that a private copy): clspv crashed (SIGSEGV) on a
  struct loaded from global memory, and on a struct constant stored to `p[i]` with i a sign
  extension written as shifts (the CTS's op_copy_struct_*, op_constant_struct_*).
- A saturated conversion of NaN to an integer gives 0, as the spec says (_saturated_nan).
- OpCompositeConstruct of values that are not all constants, as inserts into an undefined value:
  llvm-spirv-15 reads it as a constant and crashes (SIGSEGV in ConstantVector/ConstantStruct::get).
- OpVectorInsertDynamic into vectors of 3, 8 and 16 as a select per element (vector_inserts
  says why).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import OP_TYPE_STRUCT, OP_TYPE_VECTOR, Module, instruction

OP_DECORATE, OP_MEMBER_DECORATE, OP_DECORATE_STRING, OP_MEMBER_DECORATE_STRING = 71, 72, 5632, 5633
OP_MEMORY_MODEL, OP_LOAD, OP_STORE, OP_COPY_MEMORY, OP_COPY_MEMORY_SIZED = 14, 61, 62, 63, 64
OP_LINE, OP_FUNCTION, OP_FUNCTION_PARAMETER, OP_VARIABLE, OP_LABEL, OP_NO_LINE = 8, 54, 55, 59, 248, 317
OP_IN_BOUNDS_ACCESS_CHAIN, OP_VECTOR_INSERT_DYNAMIC = 66, 78
OP_UNDEF, OP_COMPOSITE_CONSTRUCT, OP_COMPOSITE_EXTRACT, OP_COMPOSITE_INSERT, OP_COPY_OBJECT = 1, 80, 81, 82, 83
OP_CONVERT_PTR_TO_U, OP_S_CONVERT, OP_I_SUB, OP_S_DIV = 117, 114, 130, 135
OP_SELECT, OP_I_EQUAL, OP_I_NOT_EQUAL, OP_IS_NAN = 169, 170, 171, 156
OP_CONVERT_F_TO_U, OP_CONVERT_F_TO_S, OP_CONSTANT_NULL = 109, 110, 46
OP_EXT_INST_IMPORT, OP_EXT_INST, OP_SPEC_CONSTANT_OP, OPENCL_STD_PRINTF = 11, 12, 52, 184
# OpBitcast and the access chains: casts of a constant string that OpSpecConstantOp can do
_SPEC_CONSTANT_OPS = (124, 65, 66, 67, 70)
OP_COPY_LOGICAL, OP_PTR_EQUAL, OP_PTR_NOT_EQUAL, OP_PTR_DIFF = 400, 401, 402, 403
DECORATION_USER_SEMANTIC, DECORATION_SATURATED_CONVERSION, STORAGE_FUNCTION = 5635, 28, 7
MASK_VOLATILE, MASK_ALIGNED, MASK_NONTEMPORAL = 1, 2, 4
MASK_MAKE_AVAILABLE, MASK_MAKE_VISIBLE = 8, 16
MAX_MEMBERS = 64  # a load or store of a larger aggregate stays whole
ODD_WIDTHS = (3, 8, 16)


def lower(il: bytes) -> bytes:
    """The module with the rewrites above, or `il` itself when none applies."""
    m = Module(il)
    address_bytes = next((4 if inst[1] == 1 else 8 for inst in m.insts
                          if m.opcode(inst) == OP_MEMORY_MODEL), 8)
    changed = False
    for rewrite in (_decorate_strings(m), _saturated_nan(m), _printf_formats(m), _variable_initializers(m), _copy_memory(m), _copies(m), pointer_ops(m, address_bytes),
                    _vector_inserts(m), _composite_constructs(m), _aggregate_memory(m, address_bytes)):
        changed = m.rewrite(rewrite) or changed
    return m.to_bytes() if changed else il


# -- decorations --------------------------------------------------------------------------------

def _decorate_strings(m: Module):
    def each(inst: array):
        op = m.opcode(inst)
        member = op in (OP_MEMBER_DECORATE, OP_MEMBER_DECORATE_STRING)
        if op not in (OP_DECORATE, OP_DECORATE_STRING) and not member:
            return None
        if len(inst) > 2 + member and inst[2 + member] == DECORATION_USER_SEMANTIC:
            return []
        if op in (OP_DECORATE_STRING, OP_MEMBER_DECORATE_STRING):
            return [instruction(OP_MEMBER_DECORATE if member else OP_DECORATE, *inst[1:])]
        return None
    return each


def _saturated_nan(m: Module):
    """A saturated conversion of a float to an integer (OpConvertFToS / FToU decorated
    SaturatedConversion) gives 0 for NaN: the conversion, with its decorations, under a new id,
    and the result a select of 0 where the operand is NaN. llvm-spirv-15 makes it clspv's
    convert_<int>_sat, which gives INT_MIN for NaN (prelude/conversions.py: OpenCL C programs
    get vkcl's own; an IL program's calls are not renamed to it)."""
    saturated = {inst[1] for inst in m.insts if m.opcode(inst) == OP_DECORATE and len(inst) >= 3
                 and inst[2] == DECORATION_SATURATED_CONVERSION}
    renamed = {inst[2]: m.new_id() for inst in m.insts
               if m.opcode(inst) in (OP_CONVERT_F_TO_U, OP_CONVERT_F_TO_S) and inst[2] in saturated}

    def each(inst: array):
        op = m.opcode(inst)
        if op == OP_DECORATE and inst[1] in renamed:
            return [instruction(OP_DECORATE, renamed[inst[1]], *inst[2:])]
        if op not in (OP_CONVERT_F_TO_U, OP_CONVERT_F_TO_S) or inst[2] not in renamed:
            return None
        result_type, result, value = inst[1:4]
        vector, boolean = m.types[result_type], m.bool_type()
        if m.opcode(vector) == OP_TYPE_VECTOR:
            boolean = m.find_type(OP_TYPE_VECTOR, boolean, vector[3])
        nan = m.new_id()
        if m.opcode(vector) == OP_TYPE_VECTOR:
            zero = m.new_id()
            m.declare(instruction(OP_CONSTANT_NULL, result_type, zero))
        else:  # llvm-spirv-15 asserts on an OpConstantNull of a scalar
            zero = m.constant(result_type, 0)
        return [instruction(op, result_type, renamed[result], value),
                instruction(OP_IS_NAN, boolean, nan, value),
                instruction(OP_SELECT, result_type, result, nan, zero, renamed[result])]
    return each


def _printf_formats(m: Module):
    """printf's format, where a function casts a constant string to it (OpBitcast or an access
    chain of a module-scope variable), cast at module scope (OpSpecConstantOp) instead."""
    std = {inst[1] for inst in m.insts if m.opcode(inst) == OP_EXT_INST_IMPORT
           and spirv_strings(inst) == "OpenCL.std"}
    formats = {inst[5] for inst in m.insts if m.opcode(inst) == OP_EXT_INST and len(inst) > 5
               and inst[3] in std and inst[4] == OPENCL_STD_PRINTF}
    first = next(i for i, inst in enumerate(m.insts + [array("I", [OP_FUNCTION])]) if m.opcode(inst) == OP_FUNCTION)
    module_scope = {m.value_id(inst) for inst in m.insts[:first]} - {None}

    def each(inst: array):
        op = m.opcode(inst)
        if op not in _SPEC_CONSTANT_OPS or len(inst) < 4 or inst[2] not in formats:
            return None
        if not all(operand in module_scope for operand in inst[3:]):
            return None
        m.declare(instruction(OP_SPEC_CONSTANT_OP, inst[1], inst[2], op, *inst[3:]))
        return []
    return each


def _variable_initializers(m: Module):
    """A function's variables with an initializer: the initializer stored at the function's
    start, after its variables."""
    pending: list = []
    state = {"entry": False}

    def each(inst: array):
        op = m.opcode(inst)
        if op == OP_FUNCTION:
            state["entry"] = True
            return None
        if not state["entry"] or op in (OP_FUNCTION_PARAMETER, OP_LABEL, OP_LINE, OP_NO_LINE):
            return None
        if op == OP_VARIABLE:
            if len(inst) == 5 and inst[3] == STORAGE_FUNCTION:
                pending.append(instruction(OP_STORE, inst[2], inst[4]))
                return [instruction(OP_VARIABLE, *inst[1:4])]
            return None
        state["entry"] = False
        if not pending:
            return None
        out = pending + [inst]
        pending.clear()
        return out
    return each


# -- memory operands and copies ----------------------------------------------------------------

def _masks(words) -> list[tuple[int, int | None]]:
    """The memory-operand masks at the end of a copy: [(mask, alignment or None)], without the
    Vulkan memory model's availability bits (not for the OpenCL memory model) and their ids."""
    out, i = [], 0
    while i < len(words):
        mask, i = words[i], i + 1
        align = None
        if mask & MASK_ALIGNED:
            align, i = words[i], i + 1
        i += bool(mask & MASK_MAKE_AVAILABLE) + bool(mask & MASK_MAKE_VISIBLE)
        out.append((mask & (MASK_VOLATILE | MASK_ALIGNED | MASK_NONTEMPORAL), align))
    return out


def _mask_words(mask: int, align: int | None) -> list[int]:
    if align is None:
        mask &= ~MASK_ALIGNED
    return [] if mask == 0 else [mask, align] if mask & MASK_ALIGNED else [mask]


def _merged(masks: list[tuple[int, int | None]]) -> list[int]:
    """One mask for both sides of a copy: volatile or non-temporal if either side is, aligned to
    the smaller alignment only if both sides give one."""
    if len(masks) < 2:
        return _mask_words(*masks[0]) if masks else []
    (a, x), (b, y) = masks[:2]
    return _mask_words(((a | b) & ~MASK_ALIGNED) | (MASK_ALIGNED if x and y else 0), min(x, y) if x and y else None)


def _copy_memory(m: Module):
    def each(inst: array):
        op = m.opcode(inst)
        if op == OP_COPY_MEMORY_SIZED and len(inst) > 4:
            masks = _masks(inst[4:])
            if len(masks) > 1 or any(w != v for w, v in zip(_merged(masks), inst[4:])):
                return [instruction(op, *inst[1:4], *_merged(masks))]
            return None
        if op != OP_COPY_MEMORY:
            return None
        target, source = inst[1], inst[2]
        pointee = m.pointee(m.type_of.get(source, 0))
        if pointee is None:
            return None
        masks = _masks(inst[3:]) or [(0, None)]
        target_mask, source_mask = masks[0], masks[-1]  # one mask: the same for both
        value = m.new_id()
        m.type_of[value] = pointee[1]
        return [instruction(OP_LOAD, pointee[1], value, source, *_mask_words(*source_mask)),
                instruction(OP_STORE, target, value, *_mask_words(*target_mask))]
    return each


def _copies(m: Module):
    def copy(type_id: int, source: int, result: int | None, out: list) -> int:
        """Instructions into `out` that copy `source` (of a logically matching type) as a value
        of `type_id`; the copy's id (`result` if given)."""
        source_type = m.type_of[source]
        if source_type == type_id and result is None:
            return source
        members, source_members = m.members(type_id), m.members(source_type)
        if members is None or source_members is None or len(members) != len(source_members):
            raise _Unsupported
        parts = []
        for i, (want, have) in enumerate(zip(members, source_members)):
            part = m.new_id()
            out.append(instruction(OP_COMPOSITE_EXTRACT, have, part, source, i))
            m.type_of[part] = have
            parts.append(copy(want, part, None, out))
        rid = result if result is not None else m.new_id()
        out += _construct(m, type_id, rid, parts)
        m.type_of[rid] = type_id
        return rid

    def each(inst: array):
        op = m.opcode(inst)
        if op not in (OP_COPY_LOGICAL, OP_COPY_OBJECT) or not _splittable(m, inst[1]):
            return None
        out: list = []
        try:
            copy(inst[1], inst[3], inst[2], out)
        except _Unsupported:
            return None
        return out
    return each


def _composite_constructs(m: Module):
    """OpCompositeConstruct in a function with a part that is not a constant, as inserts
    (_construct); a vector's vector parts split into their components first."""
    first = next((i for i, inst in enumerate(m.insts) if m.opcode(inst) == OP_FUNCTION), len(m.insts))
    module_scope = {m.value_id(inst) for inst in m.insts[:first]} - {None}

    def each(inst: array):
        if m.opcode(inst) != OP_COMPOSITE_CONSTRUCT or all(part in module_scope for part in inst[3:]):
            return None
        type_id, result, parts = inst[1], inst[2], list(inst[3:])
        out: list = []
        if m.kind(type_id) == OP_TYPE_VECTOR:
            elem, flat = m.types[type_id][2], []
            for part in parts:
                ptype = m.types.get(m.type_of.get(part, 0))
                if ptype is None or m.opcode(ptype) != OP_TYPE_VECTOR:
                    flat.append(part)
                    continue
                for j in range(ptype[3]):
                    flat.append(m.new_id())
                    out.append(instruction(OP_COMPOSITE_EXTRACT, elem, flat[-1], part, j))
            parts = flat
        return out + _construct(m, type_id, result, parts)
    return each


def _construct(m: Module, type_id: int, result: int, parts: list[int]) -> list[array]:
    """A composite of `parts` as inserts into an undefined value: llvm-spirv-15 reads an
    OpCompositeConstruct as a constant, and crashes (in ConstantStruct::get or
    ConstantVector::get) when a part is not one."""
    last = result if not parts else m.new_id()
    out = [instruction(OP_UNDEF, type_id, last)]
    for i, part in enumerate(parts):
        rid = result if i == len(parts) - 1 else m.new_id()
        out.append(instruction(OP_COMPOSITE_INSERT, type_id, rid, part, last, i))
        last = rid
    return out


class _Unsupported(Exception):
    pass


# -- pointers ------------------------------------------------------------------------------------

def pointer_ops(m: Module, address_bytes: int):
    """OpPtrEqual, OpPtrNotEqual and OpPtrDiff as integer operations on the addresses (an
    instruction rewriter for Module.rewrite; spirv_ptr_diffs uses it on clspv's output too)."""
    def each(inst: array):
        op = m.opcode(inst)
        if op not in (OP_PTR_EQUAL, OP_PTR_NOT_EQUAL, OP_PTR_DIFF):
            return None
        result_type, result, a, b = inst[1:5]
        address = m.int_type(address_bytes * 8)
        ia, ib = m.new_id(), m.new_id()
        out = [instruction(OP_CONVERT_PTR_TO_U, address, ia, a), instruction(OP_CONVERT_PTR_TO_U, address, ib, b)]
        if op != OP_PTR_DIFF:
            return out + [instruction(OP_I_EQUAL if op == OP_PTR_EQUAL else OP_I_NOT_EQUAL, result_type, result, ia, ib)]
        pointee = m.pointee(m.type_of[a])
        size = m.size_align(pointee[1], address_bytes)[0]
        diff = m.new_id()
        out.append(instruction(OP_I_SUB, address, diff, ia, ib))
        if m.types[result_type][2] == address_bytes * 8:
            return out + [instruction(OP_S_DIV, result_type, result, diff, m.constant(result_type, size))]
        count = m.new_id()  # a result narrower (or wider) than an address: the count converted
        return out + [instruction(OP_S_DIV, address, count, diff, m.constant(address, size)),
                      instruction(OP_S_CONVERT, result_type, result, count)]
    return each


# -- vectors ---------------------------------------------------------------------------------------

def _vector_inserts(m: Module):
    def each(inst: array):
        if m.opcode(inst) != OP_VECTOR_INSERT_DYNAMIC:
            return None
        vtype, result, vector, value, index = inst[1:6]
        vinst = m.types[vtype]
        count, elem = vinst[3], vinst[2]
        if count not in ODD_WIDTHS:
            return None
        # Built by inserts into the old vector: llvm-spirv-15 crashed (in ConstantVector::get)
        # on an OpCompositeConstruct of the selects.
        itype, boolean = m.type_of[index], m.bool_type()
        out, last = [], vector
        for j in range(count):
            c, e, s = m.new_id(), m.new_id(), m.new_id()
            v = result if j == count - 1 else m.new_id()
            out += [instruction(OP_I_EQUAL, boolean, c, index, m.constant(itype, j)),
                    instruction(OP_COMPOSITE_EXTRACT, elem, e, vector, j),
                    instruction(OP_SELECT, elem, s, c, value, e),
                    instruction(OP_COMPOSITE_INSERT, vtype, v, s, last, j)]
            last = v
        return out
    return each


# -- aggregates in memory --------------------------------------------------------------------------

def _leaves(m: Module, type_id: int) -> int:
    members = m.members(type_id)
    return 1 if members is None else sum(_leaves(m, t) for t in members)


def _splittable(m: Module, type_id: int) -> bool:
    """A struct or array small enough to be handled member by member."""
    return m.members(type_id) is not None and _leaves(m, type_id) <= MAX_MEMBERS


def _member_masks(m: Module, type_id: int, masks: list[tuple[int, int | None]], address_bytes: int):
    """Each member's memory-operand words: the aggregate's, aligned to what the member's offset
    leaves of the aggregate's alignment (members of a packed struct: to 1 if none was given)."""
    mask, align = masks[0] if masks else (0, None)
    members = m.members(type_id)
    if m.kind(type_id) == OP_TYPE_STRUCT:
        offsets = m.offsets(type_id, address_bytes)
    else:
        step = m.size_align(members[0], address_bytes)[0] if members else 0
        offsets = [i * step for i in range(len(members))]
    if align is None and type_id in m.packed:
        align = 1
    out = []
    for offset in offsets:
        a = None if align is None else (align if offset == 0 else min(align, offset & -offset))
        out.append([(mask | (MASK_ALIGNED if a else 0), a)])
    return out


def _aggregate_memory(m: Module, address_bytes: int):
    uint = None

    def index(i: int) -> int:
        nonlocal uint
        uint = uint or m.int_type(32)
        return m.constant(uint, i)

    def member_pointer(pointer: int, i: int, member_type: int, out: list) -> int:
        storage = m.pointee(m.type_of[pointer])[0]
        ptype, rid = m.pointer_type(storage, member_type), m.new_id()
        out.append(instruction(OP_IN_BOUNDS_ACCESS_CHAIN, ptype, rid, pointer, index(i)))
        m.type_of[rid] = ptype
        return rid

    def load(type_id: int, result: int, pointer: int, masks, out: list) -> None:
        members = m.members(type_id)
        if members is None:
            out.append(instruction(OP_LOAD, type_id, result, pointer, *_merged(masks)))
            return
        parts = []
        for i, (t, mm) in enumerate(zip(members, _member_masks(m, type_id, masks, address_bytes))):
            part = m.new_id()
            load(t, part, member_pointer(pointer, i, t, out), mm, out)
            parts.append(part)
        out += _construct(m, type_id, result, parts)

    def store(type_id: int, pointer: int, value: int, masks, out: list) -> None:
        members = m.members(type_id)
        if members is None:
            out.append(instruction(OP_STORE, pointer, value, *_merged(masks)))
            return
        for i, (t, mm) in enumerate(zip(members, _member_masks(m, type_id, masks, address_bytes))):
            part = m.new_id()
            out.append(instruction(OP_COMPOSITE_EXTRACT, t, part, value, i))
            store(t, member_pointer(pointer, i, t, out), part, mm, out)

    def each(inst: array):
        op = m.opcode(inst)
        if op == OP_LOAD:
            type_id, result, pointer = inst[1:4]
            if not _splittable(m, type_id) or pointer not in m.type_of:
                return None
            out: list = []
            load(type_id, result, pointer, _masks(inst[4:]), out)
            return out
        if op == OP_STORE:
            pointer, value = inst[1:3]
            pointee = m.pointee(m.type_of.get(pointer, 0))
            if pointee is None or not _splittable(m, pointee[1]):
                return None
            out = []
            store(pointee[1], pointer, value, _masks(inst[3:]), out)
            return out
        return None
    return each


def spirv_strings(inst: array) -> str:
    """The literal string that starts at an instruction's second operand word."""
    return spirv.literal_string(inst, 2, len(inst))[0]
