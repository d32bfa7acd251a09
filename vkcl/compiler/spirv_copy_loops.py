"""Runs of global loads copied unchanged by the run of global stores after them, made one loop,
for llvmpipe (`DeviceCaps.roll_copies`), in kernels with many global accesses.

llvmpipe (Mesa 22.3) compiles every compute shader as an LLVM coroutine, and LLVM's coroutine
splitting (buildCoroutineFrame and the suspend-crossing analysis it runs) takes time that grows
with the square of the function's basic blocks; every global load and store component becomes a
loop over the 8 work-items of a batch (a few blocks each), so a kernel of thousands of accesses
spends minutes there (perf: buildCoroutineFrame and Instruction::getSuccessor, 30% of the
samples, most of the rest in LLVM code around them). Wider accesses do not help: a vector access
is one such loop per component (137 copies of 16 ulongs as ulong2 took 25 s of CPU, as ulongs
11 s). The CTS's basic/vector_creation kernels are 270 lines each of
`result[k] = (long16)(vload3(0, src), ..)`, which clspv makes 16 loads of src and 16 stores of
the loaded values: 8,768 such loops, 62 s of CPU in lavapipe for one kernel.

Here a run of N loads of consecutive elements of one array followed by a run of N stores of
consecutive elements whose values are those loads' results, in order, each used nowhere else,
with nothing but the run's own loads and stores and instructions without side effects between
its first load and its last store, becomes a loop of N trips (LoopControl DontUnroll, so that
Mesa's NIR keeps it rolled) that loads one element and stores it: one load and one store for
llvmpipe to expand instead of N of each. The loop copies upwards when the destination's address
is not above the source's and downwards when it is (memmove's rule), so each element is read
before any store of the copy can reach its bytes, as when every load came first; the elements
move as they are, in their own type (no arithmetic: NaN payloads, -0 and denormals keep every
bit). Consecutive copies of as many elements of one type, in one block with nothing but
instructions without side effects between them, whose sources and destinations each move by a
constant number of elements from one copy to the next, share one loop of their trips in order
(copy t // N, element t % N, the direction chosen for each copy): with a loop per copy,
LLVM's ScalarEvolution took the time instead (274 loops: 12 s of CPU, perf: getLoopDisposition
and getRangeRef first; llvmpipe's loop limiter, one value carried through every loop, is the
likely link between them). It applies only to a module with at least MIN_ACCESSES global
accesses (where compile time is what matters: the loop costs a few instructions per element
at run time), to runs of at least MIN_RUN elements, and under the rules of spirv_merge_access (no program that says
`volatile`, no IL or linked program); it runs before that merging, which then merges what is
left. llvmpipe gives each batch of work-items one budget of 65,535 back-edges for all its loops,
after which every loop exits early, silently (docs/architecture.md, "Loops on lavapipe"): so
only a module without loops of its own is rolled, and its loops take at most MAX_TRIPS trips in
all (the copies after that stay as they are).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import Module, instruction
from vkcl.compiler.spirv_merge_access import OP_LOAD, OP_STORE, _PURE, _Plan

MIN_ACCESSES = 512
MIN_RUN = 4
MAX_TRIPS = 32768  # back-edges the loops of a module may take in all
OP_PHI, OP_LOOP_MERGE, OP_LABEL, OP_BRANCH, OP_BRANCH_CONDITIONAL = 245, 246, 248, 249, 250
OP_UCONVERT, OP_CONVERT_PTR_TO_U, OP_CONVERT_U_TO_PTR = 113, 117, 120
OP_UDIV, OP_UMOD = 134, 137
OP_IADD, OP_ISUB, OP_IMUL, OP_SELECT, OP_UGREATER_THAN, OP_UGREATER_THAN_EQUAL = 128, 130, 132, 169, 172, 174
LOOP_CONTROL_DONT_UNROLL = 0x2
MEMORY_ALIGNED = 0x2


class _AnyWidth(_Plan):
    WIDTHS = (8, 16, 32, 64)


def roll_copies(data: bytes) -> bytes:
    """The module with its copies of a load run by a store run made loops, consecutive ones
    sharing one (see the module's docstring); unchanged when there is none."""
    module = Module(data)
    plan = _AnyWidth(module)
    accesses = sum(1 for inst in module.insts if Module.opcode(inst) in (OP_LOAD, OP_STORE)
                   and plan.is_global(inst[3] if Module.opcode(inst) == OP_LOAD else inst[1]))
    if accesses < MIN_ACCESSES:
        return data
    if any(Module.opcode(inst) == OP_LOOP_MERGE for inst in module.insts):
        return data  # llvmpipe's one budget of back-edges: see the module's docstring
    copies = _copies(module, plan)
    if not copies:
        return data
    return _rewrite(module, plan, _groups(module, copies))


def _blocks(module: Module) -> list[int]:
    """The label of the block of every instruction (0 outside functions)."""
    label_of, current = [], 0
    for inst in module.insts:
        if Module.opcode(inst) == OP_LABEL:
            current = inst[1]
        label_of.append(current)
    return label_of


OP_NAME, OP_DECORATE, OP_FUNCTION, OP_FUNCTION_END = 5, 71, 54, 56


def _uses(module: Module) -> dict[int, int]:
    """How many times each id appears in the functions' instructions (a definition included)
    and as the target of a name or decoration. Literal operands are left out where they are
    known to be literal; elsewhere a literal equal to an id counts, which only keeps a copy
    from being rolled."""
    count: dict[int, int] = {}
    in_function = False
    for inst in module.insts:
        op = Module.opcode(inst)
        if op == OP_FUNCTION:
            in_function = True
        if in_function:
            words = spirv.id_operands(inst, 0, op, len(inst))
        else:
            words = inst[1:2] if op in (OP_NAME, OP_DECORATE) else ()
        for word in words:
            count[word] = count.get(word, 0) + 1
        if op == OP_FUNCTION_END:
            in_function = False
    return count


def _copies(module: Module, plan: _Plan) -> list[tuple[list, list]]:
    runs = plan.find_runs()
    by_first_value = {run[0].value: run for kind, run in runs if kind == OP_LOAD}
    label_of = _blocks(module)
    uses = _uses(module)
    found = []
    for kind, stores in runs:
        if kind != OP_STORE or len(stores) < MIN_RUN:
            continue
        loads = by_first_value.get(stores[0].value)
        if (loads is None or len(loads) != len(stores) or loads[0].elem != stores[0].elem
                or loads[0].index > stores[0].index):
            continue
        if any(l.value != s.value or uses.get(l.value) != 2 for l, s in zip(loads, stores)):
            continue  # each loaded value: its load's result and its store's object, nothing else
        label = label_of[loads[0].index]
        if label == 0 or label_of[stores[-1].index] != label:
            continue
        mine = {a.index for a in loads} | {a.index for a in stores}
        if all(i in mine or Module.opcode(module.insts[i]) in _PURE
               for i in range(loads[0].index, stores[-1].index + 1)):
            found.append((loads, stores))
    return found


def _groups(module: Module, copies: list[tuple[list, list]]) -> list[list[tuple[list, list]]]:
    """Consecutive copies made one loop: in one block, with only instructions without side
    effects between them, of as many elements of one type, each source and each destination
    a constant number of elements (the same for the whole group) after the one before."""
    label_of = _blocks(module)
    groups: list[list[tuple[list, list]]] = []
    trips = 0
    for copy in copies:
        loads, stores = copy
        trips += len(loads)
        if trips > MAX_TRIPS:
            break
        group = groups[-1] if groups else None
        if group is not None and _joins(module, label_of, group, copy):
            group.append(copy)
        else:
            groups.append([copy])
    return groups


def _step(group: list[tuple[list, list]], side: int) -> int | None:
    """How many elements each copy's source (side 0) or destination (side 1) is after the one
    before, in a group of at least 2."""
    return group[1][side][0].offset - group[0][side][0].offset if len(group) > 1 else None


def _joins(module: Module, label_of: list[int], group: list[tuple[list, list]], copy: tuple[list, list]) -> bool:
    last, first = group[-1], group[0]
    loads, stores = copy
    if (len(loads) != len(first[0]) or loads[0].elem != first[0][0].elem
            or label_of[loads[0].index] != label_of[last[1][-1].index]
            or loads[0].key != first[0][0].key or stores[0].key != first[1][0].key):
        return False
    for side in (0, 1):
        step, have = _step(group, side), copy[side][0].offset - last[side][0].offset
        if step is not None and step != have:
            return False
    return all(Module.opcode(module.insts[i]) in _PURE for i in range(last[1][-1].index + 1, loads[0].index))


def _rewrite(module: Module, plan: _Plan, groups: list[list[tuple[list, list]]]) -> bytes:
    dropped = {a.index for group in groups for loads, stores in group for a in loads + stores}
    at_end = {group[-1][1][-1].index: group for group in groups}
    renamed: dict[int, int] = {}  # a block's label -> the label of its last part
    bound = module.bound  # ids from here on are the loops' own
    out: list[array] = []
    current = first = 0
    for index, inst in enumerate(module.insts):
        op = Module.opcode(inst)
        if op == OP_LABEL:
            current = inst[1]
            first = inst[1]
        if index in at_end:
            merge = _loop(module, plan, at_end[index], current, out)
            renamed[first] = current = merge
            continue
        if index not in dropped:
            out.append(inst)
    mine = {inst[2] for inst in out if Module.opcode(inst) == OP_PHI and inst[2] >= bound}
    for inst in out:  # other phis naming a split block as a predecessor now name its last part
        if Module.opcode(inst) == OP_PHI and inst[2] not in mine:
            for i in range(4, len(inst), 2):
                inst[i] = renamed.get(inst[i], inst[i])
    module.insts = out
    return module.to_bytes()


def _loop(module: Module, plan: _Plan, group: list[tuple[list, list]], current: int, out: list[array]) -> int:
    """Append the loop that makes the group's copies, one after the other; returns the label of
    the block after it."""
    m = module
    uint, ulong, boolean = m.int_type(32), m.int_type(64), m.bool_type()
    loads, stores = group[0]
    n, elem = len(loads), loads[0].elem
    size = plan.width(elem) // 8
    header, body, cont, merge = m.new_id(), m.new_id(), m.new_id(), m.new_id()
    src, dst = m.new_id(), m.new_id()
    out.append(instruction(OP_CONVERT_PTR_TO_U, ulong, src, loads[0].pointer))
    out.append(instruction(OP_CONVERT_PTR_TO_U, ulong, dst, stores[0].pointer))
    out.append(instruction(OP_BRANCH, header))
    t, t_next, done = m.new_id(), m.new_id(), m.new_id()
    out.append(instruction(OP_LABEL, header))
    out.append(instruction(OP_PHI, uint, t, m.constant(uint, 0), current, t_next, cont))
    out.append(instruction(OP_UGREATER_THAN_EQUAL, boolean, done, t, m.constant(uint, n * len(group))))
    out.append(instruction(OP_LOOP_MERGE, merge, cont, LOOP_CONTROL_DONT_UNROLL))
    out.append(instruction(OP_BRANCH_CONDITIONAL, done, merge, body))
    out.append(instruction(OP_LABEL, body))
    # copy `line` of the group, its element j: from src + line * src_step, to dst + line * dst_step
    line, j, line64 = m.new_id(), m.new_id(), m.new_id()
    out.append(instruction(OP_UDIV, uint, line, t, m.constant(uint, n)))
    out.append(instruction(OP_UMOD, uint, j, t, m.constant(uint, n)))
    out.append(instruction(OP_UCONVERT, ulong, line64, line))
    bases = []
    for base, side in ((src, 0), (dst, 1)):
        step = (_step(group, side) or 0) * size
        moved, at = m.new_id(), m.new_id()
        out.append(instruction(OP_IMUL, ulong, moved, line64, m.constant(ulong, step)))
        out.append(instruction(OP_IADD, ulong, at, base, moved))
        bases.append(at)
    down, back, k, k64, offset, from_, to, from_ptr, to_ptr, value = (m.new_id() for _ in range(10))
    out.append(instruction(OP_UGREATER_THAN, boolean, down, bases[1], bases[0]))
    out.append(instruction(OP_ISUB, uint, back, m.constant(uint, n - 1), j))
    out.append(instruction(OP_SELECT, uint, k, down, back, j))
    out.append(instruction(OP_UCONVERT, ulong, k64, k))
    out.append(instruction(OP_IMUL, ulong, offset, k64, m.constant(ulong, size)))
    out.append(instruction(OP_IADD, ulong, from_, bases[0], offset))
    out.append(instruction(OP_IADD, ulong, to, bases[1], offset))
    out.append(instruction(OP_CONVERT_U_TO_PTR, m.type_of[loads[0].pointer], from_ptr, from_))
    out.append(instruction(OP_CONVERT_U_TO_PTR, m.type_of[stores[0].pointer], to_ptr, to))
    aligns = [a.align for copy in group for a in copy[0]], [a.align for copy in group for a in copy[1]]
    out.append(instruction(OP_LOAD, elem, value, from_ptr, MEMORY_ALIGNED, min(aligns[0])))
    out.append(instruction(OP_STORE, to_ptr, value, MEMORY_ALIGNED, min(aligns[1])))
    out.append(instruction(OP_BRANCH, cont))
    out.append(instruction(OP_LABEL, cont))
    out.append(instruction(OP_IADD, uint, t_next, t, m.constant(uint, 1)))
    out.append(instruction(OP_BRANCH, header))
    out.append(instruction(OP_LABEL, merge))
    return merge
