"""Bounds checks of physical-storage-buffer accesses (VKCL_CHECK_BOUNDS=1).

Every OpLoad, OpStore and atomic through a PhysicalStorageBuffer pointer is checked, without
new control flow in the kernel, so loop headers and merges stay as clspv made them:

    %a   = OpConvertPtrToU %ulong %ptr
    %ok  = OpFunctionCall %bool %check %a %size %access
    %p   = OpConvertUToPtr %ptrtype (OpSelect %ok %a (table + SCRATCH))
    ...the access through %p; a load's or atomic's result becomes OpSelect %ok %result 0

A faulting access goes to a scratch area of the table buffer (harmless), and its load yields 0.
%check (one function added to the module) searches the ranges [base, end) of the table and,
on a miss, counts the fault atomically and writes one of the first RECORDS records.

The table's device address is a new 64-bit member appended to the push-constant block, at the
byte offset instrument() returns. Table layout (bytes, little-endian):
    0: u32 fault count, 4: u32 range count
    RECORDS_AT: RECORDS records of RECORD_SIZE: u64 address, u32 access, u32 gid x, y, z
    SCRATCH_AT: SCRATCH_SIZE bytes that faulting accesses hit
    RANGES_AT: range count pairs of u64 (base, end)
`access` numbers the instrumented accesses in module order; the gid is Vulkan's
GlobalInvocationId (without the OpenCL global offset of the dispatch region).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import instruction as _inst

VERSION = 2  # part of the program cache key while the mode is on
RECORDS, RECORD_SIZE, RECORDS_AT = 8, 32, 16
SCRATCH_AT, SCRATCH_SIZE = RECORDS_AT + RECORDS * RECORD_SIZE, 256
RANGES_AT = SCRATCH_AT + SCRATCH_SIZE

OP_TYPE_BOOL, OP_TYPE_FUNCTION, OP_CONSTANT_FALSE, OP_CONSTANT_NULL = 20, 33, 42, 46
OP_FUNCTION_PARAMETER, OP_FUNCTION_END, OP_FUNCTION_CALL = 55, 56, 57
OP_STORE, OP_CONVERT_PTR_TO_U, OP_CONVERT_U_TO_PTR = 62, 117, 120
OP_IADD, OP_IMUL, OP_U_CONVERT, OP_SELECT = 128, 132, 113, 169
OP_ULESS_THAN, OP_ULESS_EQUAL, OP_LOGICAL_AND, OP_LOGICAL_NOT = 176, 178, 167, 168
OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL, OP_BRANCH, OP_BRANCH_CONDITIONAL = 245, 246, 247, 248, 249, 250
OP_RETURN_VALUE, OP_ATOMIC_IADD, OP_COMPOSITE_EXTRACT = 254, 234, 81
OP_ATOMIC_STORE = 228
# atomics with a result: OpAtomicLoad..OpAtomicXor, OpAtomicFMinEXT, FMaxEXT, FAddEXT
_ATOMICS = set(range(227, 243)) - {OP_ATOMIC_STORE} | {5614, 5615, 6035}
# instructions of the form (result type, result id, ...) that can make a pointer
_POINTER_MAKERS = {OP_CONVERT_U_TO_PTR, 65, 66, 67, 70, 124, OP_PHI, OP_SELECT, 83, OP_FUNCTION_PARAMETER,
                   OP_FUNCTION_CALL, 1, 400}
DECORATION_BUILTIN, DECORATION_BLOCK, BUILTIN_GLOBAL_INVOCATION_ID = 11, 2, 28
SC_INPUT = 1
_SCALARS = {spirv.OP_TYPE_INT, spirv.OP_TYPE_FLOAT, spirv.OP_TYPE_VECTOR, spirv.OP_TYPE_POINTER, OP_TYPE_BOOL}


class _Builder:
    """New declarations, ids from the module's bound; types found in the module are reused."""

    def __init__(self, words: array, types: dict):
        self.bound = words[3]
        self.types = types  # (op, operands) -> id, for types already declared
        self.decls = array("I")

    def new(self) -> int:
        self.bound += 1
        return self.bound - 1

    def type(self, op: int, *operands: int) -> int:
        if (op, operands) not in self.types:
            tid = self.new()
            self.decls += _inst(op, tid, *operands)
            self.types[(op, operands)] = tid
        return self.types[(op, operands)]

    def constant(self, type_id: int, *value: int) -> int:
        cid = self.new()
        self.decls += _inst(spirv.OP_CONSTANT, type_id, cid, *value)
        return cid


def _access_size(tid: int, types: dict, constants: dict, strides: dict, offsets: dict) -> int:
    return max(1, spirv._type_size(tid, types, constants, strides, offsets))


OP_IN_BOUNDS_PTR_ACCESS_CHAIN, OP_S_CONVERT = 70, 114
_RESULT_CONSTANTS = {spirv.OP_CONSTANT, OP_CONSTANT_NULL, 50}  # OpSpecConstant


def explicit_element_steps(w: array) -> array:
    """Each OpPtrAccessChain into PhysicalStorageBuffer memory with its element step made 64-bit
    integer arithmetic (OpConvertPtrToU, OpIMul by the base's ArrayStride, OpIAdd,
    OpConvertUToPtr, then an OpAccessChain for any further indices). The check must see the
    address the access uses: NVIDIA's driver (580) computed the step in 32 bits, and a write
    4 GiB past a buffer wrapped back into it, unreported. The same values everywhere else."""
    types: dict[int, tuple[int, tuple]] = {}
    by_shape: dict[tuple, int] = {}
    strides, result_type, constants = {}, {}, {}
    first_function = None
    chains = []
    for pos, op, n, in_function in spirv.instructions_scoped(w):
        if op == spirv.OP_DECORATE and w[pos + 2] == spirv.DECORATION_ARRAY_STRIDE:
            strides[w[pos + 1]] = w[pos + 3]
        elif not in_function and 19 <= op <= 39:
            types[w[pos + 1]] = (op, tuple(w[pos + 2:pos + n]))
            by_shape.setdefault((op, tuple(w[pos + 2:pos + n])), w[pos + 1])
            continue
        elif op == spirv.OP_FUNCTION:
            first_function = first_function or pos
        if n >= 3 and w[pos + 1] in types and (in_function or op in _RESULT_CONSTANTS):
            result_type[w[pos + 2]] = w[pos + 1]
        if in_function and op in (spirv.OP_PTR_ACCESS_CHAIN, OP_IN_BOUNDS_PTR_ACCESS_CHAIN) \
                and types.get(w[pos + 1], (0, (0,)))[1][0] == spirv.SC_PHYSICAL_STORAGE_BUFFER:
            chains.append(pos)
    ulong = by_shape.get((spirv.OP_TYPE_INT, (64, 0)))
    if not chains or ulong is None or first_function is None:
        return w
    b = _Builder(w, by_shape)
    plan = {}
    for pos in chains:
        base_type = result_type.get(w[pos + 3])
        index_type = types.get(result_type.get(w[pos + 4], 0), (0, (0,)))
        if base_type not in strides or index_type[0] != spirv.OP_TYPE_INT:
            continue
        stride = strides[base_type]
        if stride not in constants:
            constants[stride] = b.constant(ulong, stride, 0)
        plan[pos] = (base_type, index_type[1][0] == 64, constants[stride])
    if not plan:
        return w
    out = array("I", w[:spirv.HEADER_WORDS])
    for pos, op, n in spirv.instructions(w):
        if pos == first_function:
            out += b.decls
        if pos not in plan:
            out += w[pos:pos + n]
            continue
        base_type, wide, stride = plan[pos]
        result_type_id, result, base, index = w[pos + 1:pos + 5]
        rest = w[pos + 5:pos + n]
        address, index64, step, moved = b.new(), b.new(), b.new(), b.new()
        out += _inst(OP_CONVERT_PTR_TO_U, ulong, address, base)
        if wide:
            index64 = index
        else:
            out += _inst(OP_S_CONVERT, ulong, index64, index)  # indices are signed
        out += _inst(OP_IMUL, ulong, step, index64, stride)
        out += _inst(OP_IADD, ulong, moved, address, step)
        if rest:
            element = b.new()
            out += _inst(OP_CONVERT_U_TO_PTR, base_type, element, moved)
            out += _inst(spirv.OP_ACCESS_CHAIN, result_type_id, result, element, *rest)
        else:
            out += _inst(OP_CONVERT_U_TO_PTR, result_type_id, result, moved)
    out[3] = b.bound
    return out


def instrument(data: bytes) -> tuple[bytes, dict[str, int]]:
    """The module with its physical-storage-buffer accesses checked, and for each kernel (entry
    point) whose accesses are, the push-constant byte offset of its table address; (data, {})
    when there is nothing to check. clspv gives each kernel its own push-constant variable: an
    access is checked where its function reaches one (kernels do; clspv inlines their callees)."""
    w = explicit_element_steps(spirv.to_words(data))
    types: dict[int, tuple[int, tuple]] = {}
    by_shape: dict[tuple, int] = {}
    constants, strides, offsets, blocks, builtins = {}, {}, {}, set(), {}
    pointer_types: dict[int, int] = {}  # id -> its pointer type, for pointer values
    pc_vars: dict[int, int] = {}  # push-constant variable -> its block type
    function_pc: dict[int, int] = {}  # function -> the push-constant variable it reads
    function = None
    accesses = []  # (pos, op, count, pointer operand index)
    first_type = first_function = None
    entry_points = []
    for pos, op, n, in_function in spirv.instructions_scoped(w):
        if op == spirv.OP_ENTRY_POINT:
            entry_points.append(pos)
        elif op in (spirv.OP_DECORATE, spirv.OP_MEMBER_DECORATE) or op in (OP_FUNCTION_END,):
            if op == spirv.OP_DECORATE and w[pos + 2] == DECORATION_BUILTIN:
                builtins[w[pos + 3]] = w[pos + 1]
            elif op == spirv.OP_DECORATE and w[pos + 2] == spirv.DECORATION_ARRAY_STRIDE:
                strides[w[pos + 1]] = w[pos + 3]
            elif op == spirv.OP_DECORATE and w[pos + 2] == DECORATION_BLOCK:
                blocks.add(w[pos + 1])
            elif op == spirv.OP_MEMBER_DECORATE and w[pos + 3] == spirv.DECORATION_OFFSET:
                offsets[(w[pos + 1], w[pos + 2])] = w[pos + 4]
        elif not in_function and 19 <= op <= 39:  # OpTypeVoid .. OpTypeForwardPointer
            first_type = first_type or pos
            types[w[pos + 1]] = (op, tuple(w[pos + 2:pos + n]))
            by_shape.setdefault((op, tuple(w[pos + 2:pos + n])), w[pos + 1])
        elif op == spirv.OP_CONSTANT and not in_function:
            constants[w[pos + 2]] = w[pos + 3]
        elif op == spirv.OP_VARIABLE and not in_function:
            if w[pos + 3] == spirv.SC_PUSH_CONSTANT:
                pc_vars[w[pos + 2]] = types[w[pos + 1]][1][1]
        elif op == spirv.OP_FUNCTION:
            first_function = first_function or pos
            function = w[pos + 2]
        elif op in (spirv.OP_ACCESS_CHAIN, spirv.OP_IN_BOUNDS_ACCESS_CHAIN, spirv.OP_LOAD) and w[pos + 3] in pc_vars:
            function_pc.setdefault(function, w[pos + 3])
        if in_function and op in _POINTER_MAKERS and n >= 3 and types.get(w[pos + 1], (0,))[0] == spirv.OP_TYPE_POINTER:
            pointer_types[w[pos + 2]] = w[pos + 1]
        if in_function:
            ptr_at = {spirv.OP_LOAD: 3, OP_STORE: 1, OP_ATOMIC_STORE: 1}.get(op, 3 if op in _ATOMICS else 0)
            if ptr_at and types.get(pointer_types.get(w[pos + ptr_at], 0), (0, (0,)))[1][0] == spirv.SC_PHYSICAL_STORAGE_BUFFER:
                accesses.append((pos, op, n, ptr_at, function))
    ulong = by_shape.get((spirv.OP_TYPE_INT, (64, 0)))
    accesses = [a for a in accesses if a[4] in function_pc and pc_vars[function_pc[a[4]]] in blocks]
    if not accesses or ulong is None or first_type is None or first_function is None:
        return data, {}
    used_vars = {function_pc[a[4]] for a in accesses}
    if any(ulong > pc_vars[v] for v in used_vars):
        return data, {}
    # block -> (index of the new member, its byte offset)
    new_member = {pc_vars[v]: (len(types[pc_vars[v]][1]),
                               (spirv._type_size(pc_vars[v], types, constants, strides, offsets) + 7) // 8 * 8)
                  for v in used_vars}
    b = _Builder(w, by_shape)
    uint, boolean = b.type(spirv.OP_TYPE_INT, 32, 0), b.type(OP_TYPE_BOOL)
    v3uint = b.type(spirv.OP_TYPE_VECTOR, uint, 3)
    psb_uint = b.type(spirv.OP_TYPE_POINTER, spirv.SC_PHYSICAL_STORAGE_BUFFER, uint)
    psb_ulong = b.type(spirv.OP_TYPE_POINTER, spirv.SC_PHYSICAL_STORAGE_BUFFER, ulong)
    pc_ulong = b.type(spirv.OP_TYPE_POINTER, spirv.SC_PUSH_CONSTANT, ulong)
    in_v3uint = b.type(spirv.OP_TYPE_POINTER, SC_INPUT, v3uint)
    fn_type = b.type(OP_TYPE_FUNCTION, boolean, ulong, ulong, ulong, uint)
    c = {v: b.constant(uint, v) for v in {0, 1, 2, 4, RECORDS, *(i for i, _ in new_member.values())}}
    cl = {v: b.constant(ulong, v, 0) for v in (4, 8, 12, 16, 20, 24, RECORDS_AT, RECORD_SIZE, SCRATCH_AT, RANGES_AT)}
    false = b.new()
    b.decls += _inst(OP_CONSTANT_FALSE, boolean, false)
    annotations = array("I")
    gid = builtins.get(BUILTIN_GLOBAL_INVOCATION_ID)
    if gid is None:
        gid = b.new()
        b.decls += _inst(spirv.OP_VARIABLE, in_v3uint, gid, SC_INPUT)
        annotations += _inst(spirv.OP_DECORATE, gid, DECORATION_BUILTIN, BUILTIN_GLOBAL_INVOCATION_ID)
    for block, (index, offset) in new_member.items():
        annotations += _inst(spirv.OP_MEMBER_DECORATE, block, index, spirv.DECORATION_OFFSET, offset)
    check = b.new()

    def table_address(code: array, pc_var: int) -> int:
        chain, value = b.new(), b.new()
        code += _inst(spirv.OP_ACCESS_CHAIN, pc_ulong, chain, pc_var, c[new_member[pc_vars[pc_var]][0]])
        code += _inst(spirv.OP_LOAD, ulong, value, chain)
        return value

    def at(code: array, base: int, offset: int, ptr_type: int) -> int:
        address, ptr = b.new(), b.new()
        code += _inst(OP_IADD, ulong, address, base, offset)
        code += _inst(OP_CONVERT_U_TO_PTR, ptr_type, ptr, address)
        return ptr

    # the check function
    f = array("I")
    tb, a, size, access = b.new(), b.new(), b.new(), b.new()
    f += _inst(spirv.OP_FUNCTION, boolean, check, 0, fn_type)
    for p, t in ((tb, ulong), (a, ulong), (size, ulong), (access, uint)):
        f += _inst(OP_FUNCTION_PARAMETER, t, p)
    entry, header, body, cont, merge, record, write, rdone, done = (b.new() for _ in range(9))
    f += _inst(OP_LABEL, entry)
    end, count = b.new(), b.new()
    f += _inst(OP_IADD, ulong, end, a, size)
    f += _inst(spirv.OP_LOAD, uint, count, at(f, tb, cl[4], psb_uint), 2, 4)
    f += _inst(OP_BRANCH, header)
    i, found, i_next, found_next, more, not_found, go = (b.new() for _ in range(7))
    f += _inst(OP_LABEL, header)
    f += _inst(OP_PHI, uint, i, c[0], entry, i_next, cont)
    f += _inst(OP_PHI, boolean, found, false, entry, found_next, cont)
    f += _inst(OP_ULESS_THAN, boolean, more, i, count)
    f += _inst(OP_LOGICAL_NOT, boolean, not_found, found)
    f += _inst(OP_LOGICAL_AND, boolean, go, more, not_found)
    f += _inst(OP_LOOP_MERGE, merge, cont, 0)
    f += _inst(OP_BRANCH_CONDITIONAL, go, body, merge)
    f += _inst(OP_LABEL, body)
    wide, scaled, entry_at, lo, hi, ge, le = (b.new() for _ in range(7))
    f += _inst(OP_U_CONVERT, ulong, wide, i)
    f += _inst(OP_IMUL, ulong, scaled, wide, cl[16])
    f += _inst(OP_IADD, ulong, entry_at, scaled, tb)
    f += _inst(spirv.OP_LOAD, ulong, lo, at(f, entry_at, cl[RANGES_AT], psb_ulong), 2, 8)
    hi_at = b.new()
    f += _inst(OP_IADD, ulong, hi_at, entry_at, cl[8])
    f += _inst(spirv.OP_LOAD, ulong, hi, at(f, hi_at, cl[RANGES_AT], psb_ulong), 2, 8)
    f += _inst(OP_ULESS_EQUAL, boolean, ge, lo, a)
    f += _inst(OP_ULESS_EQUAL, boolean, le, end, hi)
    f += _inst(OP_LOGICAL_AND, boolean, found_next, ge, le)
    f += _inst(OP_BRANCH, cont)
    f += _inst(OP_LABEL, cont)
    f += _inst(OP_IADD, uint, i_next, i, c[1])
    f += _inst(OP_BRANCH, header)
    f += _inst(OP_LABEL, merge)
    f += _inst(OP_SELECTION_MERGE, done, 0)
    f += _inst(OP_BRANCH_CONDITIONAL, found, done, record)
    f += _inst(OP_LABEL, record)
    k, first = b.new(), b.new()
    f += _inst(OP_ATOMIC_IADD, uint, k, _counter(f, b, tb, psb_uint), c[1], c[0], c[1])
    f += _inst(OP_ULESS_THAN, boolean, first, k, c[RECORDS])
    f += _inst(OP_SELECTION_MERGE, rdone, 0)
    f += _inst(OP_BRANCH_CONDITIONAL, first, write, rdone)
    f += _inst(OP_LABEL, write)
    kw, ks, rec = b.new(), b.new(), b.new()
    f += _inst(OP_U_CONVERT, ulong, kw, k)
    f += _inst(OP_IMUL, ulong, ks, kw, cl[RECORD_SIZE])
    f += _inst(OP_IADD, ulong, rec, ks, tb)
    f += _inst(OP_STORE, at(f, rec, cl[RECORDS_AT], psb_ulong), a, 2, 8)
    f += _inst(OP_STORE, at(f, rec, _plus(f, b, ulong, cl[RECORDS_AT], cl[8]), psb_uint), access, 2, 4)
    ids = b.new()
    f += _inst(spirv.OP_LOAD, v3uint, ids, gid)
    for axis, off in enumerate((12, 16, 20)):
        comp = b.new()
        f += _inst(OP_COMPOSITE_EXTRACT, uint, comp, ids, axis)
        f += _inst(OP_STORE, at(f, rec, _plus(f, b, ulong, cl[RECORDS_AT], cl[off]), psb_uint), comp, 2, 4)
    f += _inst(OP_BRANCH, rdone)
    f += _inst(OP_LABEL, rdone)
    f += _inst(OP_BRANCH, done)
    f += _inst(OP_LABEL, done)
    f += _inst(OP_RETURN_VALUE, found)
    f += _inst(OP_FUNCTION_END)

    # the accesses, rewritten in place; nulls for the results of faulting loads
    nulls: dict[int, int] = {}
    starts = {}
    for number, (pos, op, n, ptr_at, function) in enumerate(accesses):
        pointee = types[pointer_types[w[pos + ptr_at]]][1][1]
        size = b.constant(ulong, _access_size(pointee, types, constants, strides, offsets), 0)
        starts[pos] = (op, n, ptr_at, size, b.constant(uint, number), function_pc[function])
        if op not in (OP_STORE, OP_ATOMIC_STORE) and types.get(w[pos + 1], (0,))[0] in _SCALARS \
                and w[pos + 1] not in nulls:
            nulls[w[pos + 1]] = b.new()
            b.decls += _inst(OP_CONSTANT_NULL, w[pos + 1], nulls[w[pos + 1]])
    out = array("I", w[:spirv.HEADER_WORDS])
    for pos, op, n in spirv.instructions(w):
        inst = array("I", w[pos:pos + n])
        if op == spirv.OP_ENTRY_POINT:
            name_end = pos + 3 + len(spirv.string_words(spirv.literal_string(w, pos + 3, pos + n)[0]))
            missing = [gid] if gid not in w[name_end:pos + n] else []
            inst = array("I", [(n + len(missing)) << 16 | op]) + w[pos + 1:pos + n] + array("I", missing)
        if pos == first_type:
            out += annotations
        if pos == first_function:
            out += b.decls
        if pos in starts:
            op, n, ptr_at, size, acc, pc_var = starts[pos]
            ptr = w[pos + ptr_at]
            ptr_type = pointer_types[ptr]
            addr, ok, safe, new_ptr, scratch = (b.new() for _ in range(5))
            out += _inst(OP_CONVERT_PTR_TO_U, ulong, addr, ptr)
            tb = table_address(out, pc_var)
            out += _inst(OP_FUNCTION_CALL, boolean, ok, check, tb, addr, size, acc)
            out += _inst(OP_IADD, ulong, scratch, tb, cl[SCRATCH_AT])
            out += _inst(OP_SELECT, ulong, safe, ok, addr, scratch)
            out += _inst(OP_CONVERT_U_TO_PTR, ptr_type, new_ptr, safe)
            inst[ptr_at] = new_ptr
            if op != OP_STORE and op != OP_ATOMIC_STORE and types.get(w[pos + 1], (0,))[0] in _SCALARS:
                result, raw = w[pos + 2], b.new()
                inst[2] = raw
                out += inst
                inst = _inst(OP_SELECT, w[pos + 1], result, ok, raw, nulls[w[pos + 1]])
        elif op == spirv.OP_TYPE_STRUCT and w[pos + 1] in new_member:
            inst = array("I", [(n + 1) << 16 | op]) + w[pos + 1:pos + n] + array("I", [ulong])
        out += inst
    out += f
    out[3] = b.bound
    offsets_by_kernel = {}
    for pos in entry_points:
        name = spirv.literal_string(w, pos + 3, pos + (w[pos] >> 16))[0]
        if w[pos + 2] in function_pc and function_pc[w[pos + 2]] in used_vars:
            offsets_by_kernel[name] = new_member[pc_vars[function_pc[w[pos + 2]]]][1]
    return spirv.to_bytes(out), offsets_by_kernel


def _counter(code: array, b: _Builder, tb: int, psb_uint: int) -> int:
    ptr = b.new()
    code += _inst(OP_CONVERT_U_TO_PTR, psb_uint, ptr, tb)
    return ptr


def _plus(code: array, b: _Builder, ulong: int, x: int, y: int) -> int:
    s = b.new()
    code += _inst(OP_IADD, ulong, s, x, y)
    return s
