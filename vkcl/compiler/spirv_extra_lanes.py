"""llvmpipe's lanes past a work-group's width return at once (llvmpipe only: spirv_fixes runs
it after spirv_resume and before spirv_loop_cuts).

llvmpipe (Mesa 22.3) runs a work-group row by row in batches of 8 lanes along x. Where the
group's width is not a multiple of 8, a row's last batch is partial: its extra lanes run the
shader with x ids past the width, and their stores and atomics are masked off. Their control
flow still counts, though. A loop goes on while any lane of its batch goes on, and all the
batch's loops share one budget of back-edges (spirv_loop_cuts.py). An atomic gives an extra lane
0, not the memory's value.

So an extra lane can go another way than the group's real work-items, and then spend the batch's
budget. Measured on lavapipe:
  - a branch on an atomic's result, or on `get_local_id(0) < get_local_size(0)`, sent the
    extra lanes of a group of 4 into a loop of 70,000 trips that no work-item took, and the
    launch was reported cut;
  - in a kernel that suspends (spirv_resume.py), the extra lanes missed the group's vote (an
    atomic). So they kept looping where the group suspended, and groups of 4, 12 or 13
    work-items came out wrong or cut.

An extra lane's work is never seen, so each entry point of a module with loops now begins by
returning its extra lanes: those whose x is not below the width (the WorkgroupSize builtin's x,
else the entry point's LocalSize) and, for a width of 1, those past the batch's first lane
(SubgroupLocalInvocationId, llvmpipe's lane in the batch). A width of 1 needs the second test
because NIR then folds every lane's x to 0 (measured: with the first test alone, groups of one
work-item still came out wrong). A real work-item passes both tests on every device, so the
branch changes nothing for it.

Each changed entry point is named in an OpString "vkcl.extra_lanes <entry point> <label>".
spirv_resume.resumed_entry_points reads it: a kernel that suspends by work-group may then
suspend in groups with a partial batch (core/resume.py). spirv_loop_cuts puts no probe in the
labelled block, where only extra lanes return: the probe's count comes from an atomic, which
gives them 0, so it would measure nothing there.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import Module, instruction as _inst
from vkcl.compiler import spirv_resume_state  # (a module, not its names: spirv_resume_state imports this one)

MARK = "vkcl.extra_lanes"
# llvmpipe's widest batch of work-items (256-bit vectors of 32-bit lanes): a group width that is
# a multiple of it leaves no lane of a batch past the width (core/ndrange.ProgramImage.module_for).
WIDEST_BATCH = 8
OP_STRING, OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID, OP_ENTRY_POINT = 7, 16, 331, 15
OP_TYPE_VECTOR, OP_CONSTANT_COMPOSITE, OP_SPEC_CONSTANT_COMPOSITE = 23, 44, 51
OP_FUNCTION, OP_VARIABLE, OP_LOAD, OP_DECORATE = 54, 59, 61, 71
OP_FUNCTION_CALL, OP_COMPOSITE_EXTRACT, OP_U_LESS_THAN = 57, 81, 176
OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL, OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_RETURN = 246, 247, 248, 249, 250, 253
DECORATION_BUILTIN, BUILTIN_WORKGROUP_SIZE, BUILTIN_LOCAL_ID, BUILTIN_SUBGROUP_LOCAL_ID = 11, 25, 27, 41
OP_LOGICAL_OR, OP_LOGICAL_AND, OP_I_EQUAL, OP_I_NOT_EQUAL = 166, 167, 170, 171
CAPABILITY_GROUP_NON_UNIFORM = 61
MODE_LOCAL_SIZE, MODE_LOCAL_SIZE_ID, SC_INPUT = 17, 38, 1


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


def marked_entry_points(data: bytes) -> dict[str, int]:
    """The entry points this pass changed -> the label of the block their extra lanes return in."""
    words = spirv.to_words(data)
    out = {}
    for pos, op, n in spirv.instructions(words):
        if op == OP_STRING:
            parts = spirv.literal_string(words, pos + 2, pos + n)[0].split(" ")
            if len(parts) == 3 and parts[0] == MARK:
                out[parts[1]] = int(parts[2])
        elif op == OP_FUNCTION:
            break
    return out


def return_extra_lanes(data: bytes) -> bytes:
    """The module with its entry points' extra lanes returning at once (see the docstring);
    unchanged when it has no loop."""
    m = Module(data)
    if not any(_op(i) == OP_LOOP_MERGE for i in m.insts):
        return data
    builtins = {i[3]: i[1] for i in m.insts if _op(i) == OP_DECORATE and len(i) == 4 and i[2] == DECORATION_BUILTIN}
    entries = {i[2]: i for i in m.insts if _op(i) == OP_ENTRY_POINT and i[1] == 5}  # GLCompute
    called = {i[3] for i in m.insts if _op(i) == OP_FUNCTION_CALL}
    u = m.int_type(32)
    v3uint = m.find_type(OP_TYPE_VECTOR, u, 3)
    new_annotations, names = [], []

    def builtin(which: int, type_id: int) -> int | None:
        var = builtins.get(which)
        if var is None:
            var = builtins[which] = m.new_id()
            m.type_of[var] = m.pointer_type(SC_INPUT, type_id)
            m.declare(_inst(OP_VARIABLE, m.type_of[var], var, SC_INPUT))
            new_annotations.append(_inst(OP_DECORATE, var, DECORATION_BUILTIN, which))
        return var if var in m.type_of and m.pointee(m.type_of[var]) == (SC_INPUT, type_id) else None

    for fid, entry in entries.items():
        width = _group_width(m, builtins, fid, u)
        if width is None or fid in called:
            continue
        local, lane = builtin(BUILTIN_LOCAL_ID, v3uint), builtin(BUILTIN_SUBGROUP_LOCAL_ID, u)
        if local is None or lane is None:
            continue
        m.capabilities.add(CAPABILITY_GROUP_NON_UNIFORM)
        start = next(k for k, i in enumerate(m.insts) if _op(i) == OP_FUNCTION and i[2] == fid)
        end = next(k for k in range(start, len(m.insts)) if _op(m.insts[k]) == 56)
        function, past = _with_early_return(m, m.insts[start:end + 1], local, lane, width, u, v3uint)
        m.insts[start:end + 1] = function
        for var in (local, lane):
            m.add_to_interface(entry, var)
        names.append(f"{spirv.literal_string(entry, 3, len(entry))[0]} {past}")
    if not names:
        return data
    m.insert_annotations(new_annotations)
    m.insert_debug([_inst(OP_STRING, m.new_id(), *spirv.string_words(f"{MARK} {n}")) for n in names])
    return m.to_bytes()


def _group_width(m: Module, builtins: dict, fid: int, u: int) -> int | None:
    """The id of the work-group's width in x: the WorkgroupSize builtin's first constituent,
    else the entry point's LocalSize (a constant) or LocalSizeId; None where there is none."""
    size = builtins.get(BUILTIN_WORKGROUP_SIZE)
    if size is not None:
        inst = next((i for i in m.insts if _op(i) in (OP_CONSTANT_COMPOSITE, OP_SPEC_CONSTANT_COMPOSITE)
                     and i[2] == size), None)
        return inst[3] if inst is not None and m.type_of.get(inst[3]) == u else None
    for i in m.insts:
        if _op(i) == OP_EXECUTION_MODE and i[1] == fid and i[2] == MODE_LOCAL_SIZE:
            return m.constant(u, i[3])
        if _op(i) == OP_EXECUTION_MODE_ID and i[1] == fid and i[2] == MODE_LOCAL_SIZE_ID:
            return i[3] if m.type_of.get(i[3]) == u else None
    return None


def _with_early_return(m: Module, function: list[array], local: int, lane: int, width: int, u: int,
                       v3uint: int) -> tuple[list[array], int]:
    """The entry function with its first block split after its variables: extra lanes go to
    a block that returns (its label returned too), the others on to the rest of the block."""
    head, blocks, end = spirv.function_blocks(function)
    n = 1
    while n < len(blocks[0]) and _op(blocks[0][n]) == OP_VARIABLE:
        n += 1
    boolean, zero, one = m.bool_type(), m.constant(u, 0), m.constant(u, 1)
    v, x, inside, index, first, wide, either, real, rest, past = (m.new_id() for _ in range(10))
    spirv_resume_state.split_block(blocks, 0, n, rest, [
        _inst(OP_LOAD, v3uint, v, local), _inst(OP_COMPOSITE_EXTRACT, u, x, v, 0),
        _inst(OP_U_LESS_THAN, boolean, inside, x, width),
        _inst(OP_LOAD, u, index, lane), _inst(OP_I_EQUAL, boolean, first, index, zero),
        _inst(OP_I_NOT_EQUAL, boolean, wide, width, one),
        _inst(OP_LOGICAL_OR, boolean, either, first, wide), _inst(OP_LOGICAL_AND, boolean, real, inside, either),
        _inst(OP_SELECTION_MERGE, rest, 0), _inst(OP_BRANCH_CONDITIONAL, real, rest, past)])
    blocks.insert(1, [_inst(OP_LABEL, past), _inst(OP_RETURN)])
    return [*head, *(i for blk in blocks for i in blk), *end], past


def without_extra_lanes(data: bytes) -> bytes:
    """The module with the branch that returns its entry points' extra lanes taken out (the
    first block going straight on), for dispatches whose work-group width is a multiple of
    llvmpipe's batch, which have no extra lanes. The branch nests the whole function one level
    deeper (nir_lower_returns puts the rest of it under the branch that did not return): a
    kernel of nested loops returning from within, unrolled, came to 81 levels with it and ran
    wrong (spirv_nesting.py; the driver now also builds such programs rolled). The module
    itself where nothing is marked."""
    marked = set(marked_entry_points(data).values())
    if not marked:
        return data
    m = Module(data)

    def straight(function: list[array]) -> list[array]:
        head, blocks, end = spirv.function_blocks(function)
        first = blocks[0]
        if (len(first) < 2 or _op(first[-1]) != OP_BRANCH_CONDITIONAL or first[-1][3] not in marked
                or _op(first[-2]) != OP_SELECTION_MERGE):
            return function
        past, rest = first[-1][3], first[-1][2]
        blocks[0] = first[:-2] + [_inst(OP_BRANCH, rest)]
        blocks = [blk for blk in blocks if blk[0][1] != past]
        return [*head, *(i for blk in blocks for i in blk), *end]

    m.insts = spirv.map_functions(m.insts, straight)
    return m.to_bytes()
