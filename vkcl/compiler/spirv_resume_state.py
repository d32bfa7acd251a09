"""The state of a loop that suspends on llvmpipe (spirv_resume.py), as SPIR-V: values taken
apart into 32-bit words and put together again bit for bit, the loads and stores of a
work-item's record through physical addresses, the builtins and the loop word's
specialization constants the records need, and the module-level declarations they add.

The layout constants here are shared with the runtime (core/resume.py).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv, spirv_loop_cuts
from vkcl.compiler.spirv_edit import _NO_RESULT_TYPE, Module, instruction as _inst

MARK = "vkcl.resume"
WORD_HEADER = 16  # byte offset, in the loop word, of the running dispatch's header address
# Header fields (byte offsets): written by the host before a pass, the flag by the kernel.
SUSPENDED, EPOCH, PASS, GROUP_SIZE, AREA, BASE, COUNTS = 0, 4, 8, 12, 16, 24, 36
# Work-groups that wait at barriers save their local memory: where (each group at LOCAL_AREA +
# its index x LOCAL_STRIDE bytes).
LOCAL_AREA, LOCAL_STRIDE, LOCAL_SIZE, HEADER = 48, 56, 60, 72  # LOCAL_SIZE: x and y
RECORD_WORDS = 2  # epoch, loop number; then the saved words
SPEC_RESUMING = 0x7F564B12  # specialization constant: 1 in the pipelines of the passes after the first
# specialization constant: the loop number a later pass's pipeline resumes (its other copies are
# dead code there); 0 resumes every loop
SPEC_RESUME_LOOP = 0x7F564B13

OP_STRING, OP_NAME, OP_ENTRY_POINT, OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID = 7, 5, 15, 16, 331
OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_ARRAY = 20, 21, 22, 23, 28
OP_TYPE_STRUCT, OP_TYPE_POINTER, OP_CONSTANT, OP_SPEC_CONSTANT = 30, 32, 43, 50
OP_FUNCTION_CALL, OP_VARIABLE, OP_LOAD, OP_STORE, OP_ACCESS_CHAIN = 57, 59, 61, 62, 65
OP_DECORATE, OP_COMPOSITE_CONSTRUCT, OP_COMPOSITE_EXTRACT = 71, 80, 81
OP_U_CONVERT, OP_CONVERT_PTR_TO_U, OP_CONVERT_U_TO_PTR, OP_BITCAST = 113, 117, 120, 124
OP_I_ADD, OP_I_SUB, OP_I_MUL, OP_LOGICAL_AND, OP_SELECT, OP_I_EQUAL, OP_I_NOT_EQUAL = 128, 130, 132, 167, 169, 170, 171
OP_U_GREATER_THAN_EQUAL, OP_SHIFT_RIGHT_LOGICAL, OP_SHIFT_LEFT_LOGICAL, OP_BITWISE_OR = 174, 194, 196, 197
OP_CONTROL_BARRIER, OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL = 224, 245, 246, 247, 248
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_RETURN, OP_RETURN_VALUE, OP_UNREACHABLE = 249, 250, 251, 253, 254, 255
OP_FUNCTION = 54
SC_INPUT, SC_UNIFORM_CONSTANT, SC_UNIFORM, SC_FUNCTION, SC_PUSH_CONSTANT = 1, 0, 2, 7, 9
SC_WORKGROUP, SC_PHYSICAL = 4, spirv.SC_PHYSICAL_STORAGE_BUFFER
# A work-item's index in its group comes from LocalInvocationId (which clspv declares) and the
# group's size in the header.
DECORATION_BUILTIN, BUILTIN_WORKGROUP_ID, BUILTIN_LOCAL_ID = 11, 26, 27
ALIGNED, CAPABILITY_INT16 = 2, 22


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


# -- the control flow graph, as spirv_resume and spirv_resume_sync read it -----------------------
def result_id(inst: array) -> int | None:
    op = _op(inst)
    if op == OP_LABEL:
        return inst[1]
    return inst[2] if op not in _NO_RESULT_TYPE and len(inst) > 2 else None


def targets(block: list[array]) -> list[int]:
    term = block[-1]
    op = _op(term)
    if op == OP_BRANCH:
        return [term[1]]
    if op == OP_BRANCH_CONDITIONAL:
        return list(term[2:4])
    if op == OP_SWITCH:
        return [term[2]] + list(term[4::2])
    return []


def reach_until(by_label: dict, start: int, stop: int) -> set[int]:
    """The blocks reached from `start` without passing `stop`."""
    seen, stack = set(), [start]
    while stack:
        label = stack.pop()
        if label in seen or label == stop or label not in by_label:
            continue
        seen.add(label)
        stack += targets(by_label[label])
    return seen


def predecessors(blocks: list[list[array]], label: int) -> list[int]:
    return [blk[0][1] for blk in blocks if label in targets(blk)]


def named(block: list[array]) -> list[int]:
    """Successors and the blocks its merge instruction names."""
    extra = list(block[-2][1:3]) if len(block) > 1 and _op(block[-2]) == OP_LOOP_MERGE else (
        [block[-2][1]] if len(block) > 1 and _op(block[-2]) == OP_SELECTION_MERGE else [])
    return targets(block) + extra


def with_predecessor(inst: array, old: int, new: int) -> array:
    """An OpPhi with its incoming block `old` named `new` (the instruction itself if it has none)."""
    if _op(inst) != OP_PHI or old not in inst[4::2]:
        return inst
    c = array("I", inst)
    for j in range(4, len(c), 2):
        if c[j] == old:
            c[j] = new
    return c


def split_block(out: list[list[array]], at: int, n_phi: int, rest: int, head_end: list[array]) -> None:
    """Block `at` of `out` split after its label and first phis (n_phi instructions with the
    label): `head_end` ends the first part, the rest moves to a new block `rest`, and the phis
    of its successors name `rest` as their predecessor."""
    blk = out[at]
    label, tail = blk[0][1], [_inst(OP_LABEL, rest), *blk[n_phi:]]
    for other in out:
        if other[0][1] in targets(tail):
            other[:] = [with_predecessor(inst, label, rest) for inst in other]
    out[at:at + 1] = [blk[:n_phi] + head_end, tail]


def retarget(term: array, old: int, new: int) -> array:
    """A terminator with its branches to `old` going to `new`."""
    t = array("I", term)
    for k in label_positions(t):
        if t[k] == old:
            t[k] = new
    return t


def label_positions(inst: array) -> list[int]:
    op = _op(inst)
    if op == OP_BRANCH:
        return [1]
    if op == OP_BRANCH_CONDITIONAL:
        return [2, 3]
    if op == OP_SWITCH:
        return [2] + list(range(4, len(inst), 2))
    if op == OP_SELECTION_MERGE:
        return [1]
    if op == OP_LOOP_MERGE:
        return [1, 2]
    return []


class StateBuilder:
    """A module's additions for its resumable entry points (one per module)."""

    def __init__(self, m: Module, limit: int, variables: dict[int, int]):
        self.m, self.limit, self.variables = m, limit, variables
        self.copied = 0
        self.decorations: dict[int, list[array]] = {}
        for inst in m.insts:
            if _op(inst) == OP_DECORATE:
                self.decorations.setdefault(inst[1], []).append(inst)
        self.new_decorations: list[array] = []
        self.builtins: dict[int, int] = {}
        for inst in m.insts:
            if _op(inst) == OP_DECORATE and len(inst) == 4 and inst[2] == DECORATION_BUILTIN:
                self.builtins[inst[3]] = inst[1]
        self.added_inputs: list[int] = []
        self.undefs: dict[int, int] = {}
        m.insts = list(m.insts)
        u = self.uint = m.int_type(32)
        self.ulong = m.int_type(64)
        self.bool = m.bool_type()
        self.psb_uint = m.pointer_type(SC_PHYSICAL, u)
        self.psb_ulong = m.pointer_type(SC_PHYSICAL, self.ulong)
        self.v3uint = m.find_type(OP_TYPE_VECTOR, u, 3)
        self.fn_uint = m.pointer_type(SC_FUNCTION, u)
        self.spec = self._spec_word()
        self.spec_resuming = self.m.new_id()
        self.m.declare(_inst(OP_SPEC_CONSTANT, self.uint, self.spec_resuming, 0))
        self.new_decorations.append(_inst(OP_DECORATE, self.spec_resuming, 1, SPEC_RESUMING))
        self.spec_loop = self.m.new_id()
        self.m.declare(_inst(OP_SPEC_CONSTANT, self.uint, self.spec_loop, 0))
        self.new_decorations.append(_inst(OP_DECORATE, self.spec_loop, 1, SPEC_RESUME_LOOP))
        self._group_max = self._group_votes = self._group_counts = None

    @property
    def group_max(self) -> int:
        """A Workgroup uint: the largest count of a work-group's work-items (barrier kernels)."""
        if self._group_max is None:
            self._group_max = self._workgroup_uint()
        return self._group_max

    @property
    def group_votes(self) -> tuple[int, int]:
        """Two Workgroup uints: 1 once a work-item of the group parked, for spirv_resume_sync's
        votes taken in turn (one barrier each: a work-item writes a word again only two votes
        later, past the other vote's barrier, so every work-item has read it by then)."""
        if self._group_votes is None:
            self._group_votes = (self._workgroup_uint(), self._workgroup_uint())
        return self._group_votes

    @property
    def group_counts(self) -> tuple[int, int]:
        """Two Workgroup uints: the group's largest count before a barrier loop without inner
        loops (spirv_resume._vote_once), those loops taking them in turn, one barrier each."""
        if self._group_counts is None:
            self._group_counts = (self._workgroup_uint(), self._workgroup_uint())
        return self._group_counts

    def _workgroup_uint(self) -> int:
        var, ptr = self.m.new_id(), self.m.pointer_type(SC_WORKGROUP, self.uint)
        self.m.declare(_inst(OP_VARIABLE, ptr, var, SC_WORKGROUP))
        self.m.type_of[var] = ptr
        return var

    # -- module-level pieces ------------------------------------------------------------------
    def _spec_word(self) -> tuple[int, int]:
        """The loop word's address halves: spirv_loop_cuts' specialization constants, declared
        here when the module has none yet (the probe then finds them)."""
        ids = spirv_loop_cuts.spec_word_constants(self.m)
        if ids is not None:
            return ids
        halves = []
        for spec_id in spirv_loop_cuts.SPEC_WORD:
            rid = self.m.new_id()
            self.m.declare(_inst(OP_SPEC_CONSTANT, self.uint, rid, 0))
            self.new_decorations.append(_inst(OP_DECORATE, rid, 1, spec_id))
            halves.append(rid)
        return halves[0], halves[1]

    def builtin(self, which: int, type_id: int) -> int | None:
        var = self.builtins.get(which)
        if var is not None:
            ptr = self.m.type_of.get(var)
            return var if ptr is not None and self.m.pointee(ptr) == (SC_INPUT, type_id) else None
        var = self.builtins[which] = self.m.new_id()
        self.m.declare(_inst(OP_VARIABLE, self.m.pointer_type(SC_INPUT, type_id), var, SC_INPUT))
        self.m.type_of[var] = self.m.pointer_type(SC_INPUT, type_id)
        self.new_decorations.append(_inst(OP_DECORATE, var, DECORATION_BUILTIN, which))
        self.added_inputs.append(var)
        return var

    def budget_left(self, budget: int) -> bool:
        return self.copied < budget

    def finish(self, changed: list) -> None:
        m = self.m
        m.insert_annotations(self.new_decorations)
        strings = []
        for entry, stride, group in changed:
            name, _ = spirv.literal_string(entry, 3, len(entry))
            strings.append(_inst(OP_STRING, m.new_id(), *spirv.string_words(f"{MARK} {name} {stride} {int(group)}")))
            extra = [self.group_max, *(self._group_votes or ()), *(self._group_counts or ())] if group else []
            for var in [self.builtins[BUILTIN_WORKGROUP_ID], self.builtins[BUILTIN_LOCAL_ID]] + extra:
                m.add_to_interface(entry, var)
        m.insert_debug(strings)

    # -- value words ---------------------------------------------------------------------------
    def leaves(self, type_id: int) -> int | None:
        """How many 32-bit words a value of this type takes; None: not storable."""
        m = self.m
        kind = m.kind(type_id)
        t = m.types.get(type_id)
        if kind == OP_TYPE_BOOL:
            return 1
        if kind in (OP_TYPE_INT, OP_TYPE_FLOAT):
            width = t[2]
            if kind == OP_TYPE_INT and width < 32 and t[3]:
                return None
            return 2 if width == 64 else 1
        if kind == OP_TYPE_POINTER:
            return 2 if t[2] == SC_PHYSICAL else None
        if kind == OP_TYPE_VECTOR:
            one = self.leaves(t[2])
            return None if one is None else one * t[3]
        if kind in (OP_TYPE_STRUCT, OP_TYPE_ARRAY):
            members = m.members(type_id)
            if members is None:
                return None
            sizes = [self.leaves(x) for x in members]
            return None if None in sizes else sum(sizes)
        return None

    def to_words(self, value: int, type_id: int, out: list[array]) -> list[int]:
        """Instructions (appended to `out`) taking `value` apart into uint words."""
        m, u, new = self.m, self.uint, self.m.new_id
        kind, t = m.kind(type_id), m.types[type_id]
        if kind == OP_TYPE_BOOL:
            w = new()
            out.append(_inst(OP_SELECT, u, w, value, m.constant(u, 1), m.constant(u, 0)))
            return [w]
        if kind == OP_TYPE_VECTOR or kind in (OP_TYPE_STRUCT, OP_TYPE_ARRAY):
            members = [t[2]] * t[3] if kind == OP_TYPE_VECTOR else m.members(type_id)
            words = []
            for k, member in enumerate(members):
                part = new()
                out.append(_inst(OP_COMPOSITE_EXTRACT, member, part, value, k))
                words += self.to_words(part, member, out)
            return words
        if kind == OP_TYPE_POINTER:
            as_int = new()
            out.append(_inst(OP_CONVERT_PTR_TO_U, self.ulong, as_int, value))
            return self.to_words(as_int, self.ulong, out)
        width = t[2]
        if kind == OP_TYPE_FLOAT:
            if width == 16:  # taken apart bit for bit as a ushort (llvmpipe has shaderInt16)
                m.capabilities.add(CAPABILITY_INT16)
            as_int_type = m.int_type(width)
            as_int = new()
            out.append(_inst(OP_BITCAST, as_int_type, as_int, value))
            return self.to_words(as_int, as_int_type, out)
        if width == 64:
            lo, shifted, hi = new(), new(), new()
            out += [_inst(OP_U_CONVERT, u, lo, value),
                    _inst(OP_SHIFT_RIGHT_LOGICAL, self.ulong, shifted, value, m.constant(self.ulong, 32)),
                    _inst(OP_U_CONVERT, u, hi, shifted)]
            return [lo, hi]
        if width < 32:
            w = new()
            out.append(_inst(OP_U_CONVERT, u, w, value))
            return [w]
        if type_id != u:
            w = new()
            out.append(_inst(OP_BITCAST, u, w, value))
            return [w]
        return [value]

    def from_words(self, words: list[int], type_id: int, out: list[array]) -> int:
        """Instructions putting a value of `type_id` together from uint words (consumed)."""
        m, u, new = self.m, self.uint, self.m.new_id
        kind, t = m.kind(type_id), m.types[type_id]
        if kind == OP_TYPE_BOOL:
            v = new()
            out.append(_inst(OP_I_NOT_EQUAL, self.bool, v, words.pop(0), m.constant(u, 0)))
            return v
        if kind == OP_TYPE_VECTOR or kind in (OP_TYPE_STRUCT, OP_TYPE_ARRAY):
            members = [t[2]] * t[3] if kind == OP_TYPE_VECTOR else m.members(type_id)
            parts = [self.from_words(words, member, out) for member in members]
            v = new()
            out.append(_inst(OP_COMPOSITE_CONSTRUCT, type_id, v, *parts))
            return v
        if kind == OP_TYPE_POINTER:
            as_int = self.from_words(words, self.ulong, out)
            v = new()
            out.append(_inst(OP_CONVERT_U_TO_PTR, type_id, v, as_int))
            return v
        width = t[2]
        if kind == OP_TYPE_FLOAT:
            as_int = self.from_words(words, m.int_type(width), out)
            v = new()
            out.append(_inst(OP_BITCAST, type_id, v, as_int))
            return v
        if width == 64:
            lo, hi, lo64, hi64, shifted, v = (new() for _ in range(6))
            out += [_inst(OP_U_CONVERT, self.ulong, lo64, words.pop(0)),
                    _inst(OP_U_CONVERT, self.ulong, hi64, words.pop(0)),
                    _inst(OP_SHIFT_LEFT_LOGICAL, self.ulong, shifted, hi64, m.constant(self.ulong, 32)),
                    _inst(OP_BITWISE_OR, self.ulong, lo, lo64, shifted)]
            if type_id == self.ulong:
                return lo
            out.append(_inst(OP_BITCAST, type_id, v, lo))
            return v
        if width < 32:
            v = new()
            out.append(_inst(OP_U_CONVERT, type_id, v, words.pop(0)))
            return v
        if type_id != u:
            v = new()
            out.append(_inst(OP_BITCAST, type_id, v, words.pop(0)))
            return v
        return words.pop(0)

    # -- memory ---------------------------------------------------------------------------------
    def address(self, base: int, offset: int, out: list[array]) -> int:
        if not offset:
            return base
        a = self.m.new_id()
        out.append(_inst(OP_I_ADD, self.ulong, a, base, self.m.constant(self.ulong, offset)))
        return a

    def load(self, base: int, offset: int, type_id: int, out: list[array]) -> int:
        ptr_type = self.psb_uint if type_id == self.uint else self.psb_ulong
        a, p, v = self.address(base, offset, out), self.m.new_id(), self.m.new_id()
        out += [_inst(OP_CONVERT_U_TO_PTR, ptr_type, p, a),
                _inst(OP_LOAD, type_id, v, p, ALIGNED, 4 if type_id == self.uint else 8)]
        return v

    def mark_suspended(self, header: int, number: int, out: list[array]) -> None:
        """Set loop `number`'s bit in the header's suspended word (an atomic OR: work-items of
        one dispatch may suspend in different loops)."""
        u, a, p, old = self.uint, self.address(header, SUSPENDED, out), self.m.new_id(), self.m.new_id()
        out += [_inst(OP_CONVERT_U_TO_PTR, self.psb_uint, p, a),
                _inst(241, u, old, p, self.m.constant(u, 1), self.m.constant(u, 0),  # OpAtomicOr, Device
                      self.m.constant(u, 1 << number))]

    def store(self, base: int, offset: int, value: int, out: list[array]) -> None:
        a, p = self.address(base, offset, out), self.m.new_id()
        out += [_inst(OP_CONVERT_U_TO_PTR, self.psb_uint, p, a), _inst(OP_STORE, p, value, ALIGNED, 4)]

    def load_ids(self, out: list[array]) -> None:
        """The work-group's and the work-item's ids, read once in the entry block (`out`)."""
        wid, lid = self.m.new_id(), self.m.new_id()
        out += [_inst(OP_LOAD, self.v3uint, wid, self.builtins[BUILTIN_WORKGROUP_ID]),
                _inst(OP_LOAD, self.v3uint, lid, self.builtins[BUILTIN_LOCAL_ID])]
        self.ids = wid, lid

    def group_index(self, header: int, out: list[array]) -> tuple[int, int, int, int]:
        """This work-group's index in the dispatch, the work-item's in the dispatch and in its
        work-group, and the work-group size (from the dispatch's header)."""
        u, new = self.uint, self.m.new_id
        size = self.load(header, GROUP_SIZE, u, out)
        base = [self.load(header, BASE + 4 * d, u, out) for d in range(3)]
        counts = [self.load(header, COUNTS + 4 * d, u, out) for d in range(2)]
        local_size = [self.load(header, LOCAL_SIZE + 4 * d, u, out) for d in range(2)]
        wid, lid = self.ids
        lx, ly, lz, l1, l2, l3, lidx = (new() for _ in range(7))
        out += [_inst(OP_COMPOSITE_EXTRACT, u, lx, lid, 0), _inst(OP_COMPOSITE_EXTRACT, u, ly, lid, 1),
                _inst(OP_COMPOSITE_EXTRACT, u, lz, lid, 2), _inst(OP_I_MUL, u, l1, lz, local_size[1]),
                _inst(OP_I_ADD, u, l2, l1, ly), _inst(OP_I_MUL, u, l3, l2, local_size[0]),
                _inst(OP_I_ADD, u, lidx, l3, lx)]
        g = []
        for d in range(3):
            c, rel = new(), new()
            out += [_inst(OP_COMPOSITE_EXTRACT, u, c, wid, d), _inst(OP_I_SUB, u, rel, c, base[d])]
            g.append(rel)
        t1, t2, t3, group, t5, index = (new() for _ in range(6))
        out += [_inst(OP_I_MUL, u, t1, g[2], counts[1]), _inst(OP_I_ADD, u, t2, t1, g[1]),
                _inst(OP_I_MUL, u, t3, t2, counts[0]), _inst(OP_I_ADD, u, group, t3, g[0]),
                _inst(OP_I_MUL, u, t5, group, size), _inst(OP_I_ADD, u, index, t5, lidx)]
        return group, index, lidx, size

    def record(self, header: int, stride: int, out: list[array]) -> int:
        """The address of this work-item's record (see the module docstring)."""
        _, index, _, _ = self.group_index(header, out)
        area = self.load(header, AREA, self.ulong, out)
        index64, offset, rec = self.m.new_id(), self.m.new_id(), self.m.new_id()
        out += [_inst(OP_U_CONVERT, self.ulong, index64, index),
                _inst(OP_I_MUL, self.ulong, offset, index64, self.m.constant(self.ulong, stride)),
                _inst(OP_I_ADD, self.ulong, rec, area, offset)]
        return rec

    # -- a work-group's local memory -------------------------------------------------------------
    def group_barrier(self) -> array:
        """A work-group barrier as clspv writes barrier(CLK_LOCAL_MEM_FENCE)."""
        u = self.uint
        return _inst(OP_CONTROL_BARRIER, self.m.constant(u, 2), self.m.constant(u, 2), self.m.constant(u, 264))

    def leaf_paths(self, type_id: int, path: tuple = ()) -> list[tuple[tuple, int]] | None:
        """The scalar and vector parts of a type held in local memory, as access-chain indices."""
        m = self.m
        kind = m.kind(type_id)
        if kind in (OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR):
            return [(path, type_id)] if self.leaves(type_id) is not None else None
        members = m.members(type_id) if kind in (OP_TYPE_STRUCT, OP_TYPE_ARRAY) else None
        if members is None:
            return None
        out = []
        for k, member in enumerate(members):
            sub = self.leaf_paths(member, path + (k,))
            if sub is None:
                return None
            out += sub
        return out

    def local_shape(self, var: int) -> tuple[list[int], int, list] | None:
        """A Workgroup or Function variable's array lengths (ids: constants or specialization
        constants), its element type and that type's leaf paths; None where it cannot be copied."""
        m = self.m
        sc_type = m.pointee(m.type_of.get(var, 0))
        if sc_type is None:
            return None
        t, dims = sc_type[1], []
        while m.kind(t) == OP_TYPE_ARRAY:
            dims.append(m.types[t][3])
            t = m.types[t][2]
        leaves = self.leaf_paths(t)
        return (dims, t, leaves) if leaves else None

    def _word_at(self, area: int, index: int, out: list[array]) -> int:
        i64, byte, a = self.m.new_id(), self.m.new_id(), self.m.new_id()
        out += [_inst(OP_U_CONVERT, self.ulong, i64, index),
                _inst(OP_I_MUL, self.ulong, byte, i64, self.m.constant(self.ulong, 4)),
                _inst(OP_I_ADD, self.ulong, a, area, byte)]
        return a

    def private_words(self, var: int) -> int | None:
        """How many words a Function variable's contents take; None: not saved (an array length
        that is not a plain constant, a part that is not storable)."""
        shape = self.local_shape(var)
        if shape is None:
            return None
        dims, _, leaves = shape
        count = 1
        for d in dims:
            if d not in self.m.constants or self.m.types[self.m.constants[d][0]][2] != 32:
                return None
            count *= self.m.constants[d][1][0]
        return count * sum(self.leaves(t) for _, t in leaves)

    def copy_locals(self, variables: list[int], header: int, save: bool, block: list[array]
                    ) -> tuple[list[list[array]], list[array]]:
        """Blocks copying the work-group's Workgroup variables to its area (`save`) or back,
        each work-item taking every group-size-th element. `block` is the open block they start
        in; returns the finished blocks and the open one they end in (no terminator yet)."""
        new = self.m.new_id
        group, _, lidx, size = self.group_index(header, block)
        first = self.load(header, LOCAL_AREA, self.ulong, block)
        stride = self.load(header, LOCAL_STRIDE, self.uint, block)
        g64, s64, off, area = new(), new(), new(), new()
        block += [_inst(OP_U_CONVERT, self.ulong, g64, group), _inst(OP_U_CONVERT, self.ulong, s64, stride),
                  _inst(OP_I_MUL, self.ulong, off, g64, s64), _inst(OP_I_ADD, self.ulong, area, first, off)]
        return self._copy_variables(variables, SC_WORKGROUP, area, lidx, size, save, block)

    def copy_privates(self, variables: list[int], record: int, offset: int, save: bool, block: list[array]
                      ) -> tuple[list[list[array]], list[array]]:
        """Blocks copying a work-item's Function variables to its record from byte `offset` on
        (`save`) or back; as copy_locals."""
        area = self.m.new_id()
        block.append(_inst(OP_I_ADD, self.ulong, area, record, self.m.constant(self.ulong, offset)))
        one = self.m.constant(self.uint, 1)
        return self._copy_variables(variables, SC_FUNCTION, area, self.m.constant(self.uint, 0), one, save, block)

    def _copy_variables(self, variables: list[int], storage: int, area: int, start: int, step: int, save: bool,
                        block: list[array]) -> tuple[list[list[array]], list[array]]:
        """Each variable's elements from `start` on in steps of `step`, word by word to the
        words from `area` on (`save`) or back, the variables one after the other there."""
        m, u, new = self.m, self.uint, self.m.new_id
        done: list[list[array]] = []
        base = m.constant(u, 0)
        for var in variables:
            dims, _, leaves = self.local_shape(var)
            width = sum(self.leaves(t) for _, t in leaves)
            count = m.constant(u, 1)
            for d in dims:
                c = new()
                block.append(_inst(OP_I_MUL, u, c, count, d))
                count = c
            head, body, cont, after, e, e1, more = (new() for _ in range(7))
            block.append(_inst(OP_BRANCH, head))
            done.append(block)
            done.append([_inst(OP_LABEL, head), _inst(OP_PHI, u, e, start, block[0][1], e1, cont),
                         _inst(176, self.bool, more, e, count),  # OpULessThan
                         _inst(OP_LOOP_MERGE, after, cont, 0), _inst(OP_BRANCH_CONDITIONAL, more, body, after)])
            work = [_inst(OP_LABEL, body)]
            rest, index = e, [0] * len(dims)
            for k in reversed(range(len(dims))):
                i, q = new(), new()
                work += [_inst(137, u, i, rest, dims[k]), _inst(134, u, q, rest, dims[k])]  # OpUMod, OpUDiv
                index[k], rest = i, q
            scaled, word0 = new(), new()
            work += [_inst(OP_I_MUL, u, scaled, e, m.constant(u, width)), _inst(OP_I_ADD, u, word0, base, scaled)]
            at = 0
            for path, t in leaves:
                ptr = new()
                work.append(_inst(OP_ACCESS_CHAIN, m.pointer_type(storage, t), ptr, var, *index,
                                  *[m.constant(u, k) for k in path]))
                n = self.leaves(t)
                addresses = []
                for j in range(n):
                    w = new()
                    work.append(_inst(OP_I_ADD, u, w, word0, m.constant(u, at + j)))
                    addresses.append(self._word_at(area, w, work))
                at += n
                if save:
                    v = new()
                    work.append(_inst(OP_LOAD, t, v, ptr))
                    for a, w in zip(addresses, self.to_words(v, t, work)):
                        self.store(a, 0, w, work)
                else:
                    words = [self.load(a, 0, u, work) for a in addresses]
                    work.append(_inst(OP_STORE, ptr, self.from_words(words, t, work)))
            work.append(_inst(OP_BRANCH, cont))
            done += [work, [_inst(OP_LABEL, cont), _inst(OP_I_ADD, u, e1, e, step), _inst(OP_BRANCH, head)]]
            block = [_inst(OP_LABEL, after)]
            used, nxt = new(), new()
            block += [_inst(OP_I_MUL, u, used, count, m.constant(u, width)), _inst(OP_I_ADD, u, nxt, base, used)]
            base = nxt
        return done, block
