"""Kernel arguments converted to double on the host (repair 11 of spirv_fixes).

A kernel that converts a scalar argument to double (`double a = (double)af;` for a float, half
or integer argument of at most 32 bits) does the conversion in the shader. NVIDIA's Vulkan
compiler (580) keeps its result in a vector register, so every DFMA that uses it reads three
register pairs; a double that comes from the push-constant block is read from the constant bank
instead (`DFMA R8, R16, R0, c[0x0][0x638]`). On an H200 the bench's MAD double chains went from
30.8 to 33.4 TFLOP/s (the FP64 peak) that way.

These conversions are exact, so the runtime can do them: each becomes a load of a new double
member appended to the push-constant block, and an instruction of vkcl's own non-semantic set
tells the runtime which argument bytes to convert into it:

    NonSemantic.vkcl.Reflection.1, instruction 1, PushConstantConversion:
        Kernel (clspv's Kernel instruction), destination offset, source offset, source type
    source type: bits << 8 | 0 (float), 1 (signed integer) or 2 (unsigned integer)

(reflection_parser reads it into KernelReflection.push_constant_conversions.) Only values that
lie inside one of the kernel's own POD arguments move: clspv's builtin push constants, such as
the global offset, are written per dispatch region. Where the arguments are comes from
argument_layout (clspv's reflection can misplace them); new members go after them and after the
block's last member. The block grows only within the device's push-constant limit. A float
denormal keeps its value on the host, which OpenCL allows.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

IMPORT_NAME = "NonSemantic.vkcl.Reflection.1"
PUSH_CONSTANT_CONVERSION = 1
KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED = 0, 1, 2

OP_TYPE_VOID = 19
OP_COMPOSITE_EXTRACT, OP_COPY_OBJECT, OP_COPY_LOGICAL, OP_BITCAST = 81, 83, 400, 124
OP_CONVERT_S_TO_F, OP_CONVERT_U_TO_F, OP_U_CONVERT, OP_S_CONVERT, OP_F_CONVERT = 111, 112, 113, 114, 115
DECORATION_BLOCK = 2
CLSPV_IMPORT = "NonSemantic.ClspvReflection."
CLSPV_KERNEL, CLSPV_POD_PUSH_CONSTANT = 1, 7
# Decorations of a conversion that mean nothing for its exact result (clspv adds NoContraction):
# FPRoundingMode, FPFastMathMode, NoContraction. They go with the conversion.
_ARITHMETIC_DECORATIONS = {39, 40, 42}
_TYPES = {spirv.OP_TYPE_INT, spirv.OP_TYPE_FLOAT, spirv.OP_TYPE_VECTOR, spirv.OP_TYPE_ARRAY, spirv.OP_TYPE_STRUCT,
          spirv.OP_TYPE_POINTER}
_GLOBAL_VALUES = {1, 44, 46, 51}  # OpUndef, OpConstantComposite, OpConstantNull, OpSpecConstantComposite
_COMPOSITE_TYPES = {spirv.OP_TYPE_VECTOR, spirv.OP_TYPE_ARRAY, spirv.OP_TYPE_RUNTIME_ARRAY, spirv.OP_TYPE_STRUCT, 33}
_TO_DOUBLE = {OP_F_CONVERT: KIND_FLOAT, OP_CONVERT_S_TO_F: KIND_SIGNED, OP_CONVERT_U_TO_F: KIND_UNSIGNED}
# source type (bits << 8 | kind) -> its Python struct format, for the runtime
_FORMATS = {16 << 8 | KIND_FLOAT: "e", 32 << 8 | KIND_FLOAT: "f", 8 << 8 | KIND_SIGNED: "b", 16 << 8 | KIND_SIGNED: "h",
            32 << 8 | KIND_SIGNED: "i", 8 << 8 | KIND_UNSIGNED: "B", 16 << 8 | KIND_UNSIGNED: "H",
            32 << 8 | KIND_UNSIGNED: "I"}


def source_format(source_type: int) -> str | None:
    """The struct format of a PushConstantConversion's source type; None if unknown."""
    return _FORMATS.get(source_type)


class _Module:
    """What the pass needs to know of a module, from one walk over it."""

    def __init__(self, words: array):
        self.types: dict[int, tuple[int, tuple]] = {}
        self.constants: dict[int, tuple[int, int]] = {}  # id -> (type, value) of 32-bit int constants
        self.offsets: dict[tuple[int, int], int] = {}
        self.strides: dict[int, int] = {}
        self.blocks: set[int] = set()
        self.decorations: dict[int, set[int]] = {}  # id -> its decorations' kinds
        self.variables: dict[int, int] = {}  # push-constant variable -> its block type
        self.clspv_set = self.void = None
        self.last_import = self.first_function = None
        self.kernels: dict[int, int] = {}  # kernel function -> clspv Kernel instruction id
        self.kernel_names: dict[int, str] = {}  # clspv Kernel instruction id -> kernel name
        self.strings: dict[int, str] = {}
        self.pods: dict[int, list[tuple[int, int]]] = {}  # clspv Kernel id -> (offset, size) of its PODs
        self.conversions: list[tuple] = []  # (position, function, result, variable, offset, kind)
        self._walk(words)

    def _walk(self, w: array) -> None:
        pointers: dict[int, tuple] = {}  # pointer id -> (variable, offset, pointee type)
        values: dict[int, tuple] = {}    # value id -> (variable, offset, type in the block's layout)
        function = None
        for pos, op, n in spirv.instructions(w):
            if op in _TYPES:
                self.types[w[pos + 1]] = (op, tuple(w[pos + 2:pos + n]))
            elif op == OP_TYPE_VOID:
                self.void = w[pos + 1]
            elif op == spirv.OP_STRING:
                self.strings[w[pos + 1]] = spirv.literal_string(w, pos + 2, pos + n)[0]
            elif op == spirv.OP_CONSTANT and self.types.get(w[pos + 1], (0, ()))[0] == spirv.OP_TYPE_INT \
                    and self.types[w[pos + 1]][1][0] == 32:
                self.constants[w[pos + 2]] = (w[pos + 1], w[pos + 3])
            elif op == spirv.OP_MEMBER_DECORATE and n >= 5 and w[pos + 3] == spirv.DECORATION_OFFSET:
                self.offsets[(w[pos + 1], w[pos + 2])] = w[pos + 4]
            elif op == spirv.OP_DECORATE:
                self.decorations.setdefault(w[pos + 1], set()).add(w[pos + 2])
                if w[pos + 2] == spirv.DECORATION_ARRAY_STRIDE:
                    self.strides[w[pos + 1]] = w[pos + 3]
                elif w[pos + 2] == DECORATION_BLOCK:
                    self.blocks.add(w[pos + 1])
            elif op == spirv.OP_EXT_INST_IMPORT:
                self.last_import = pos
                if spirv.literal_string(w, pos + 2, pos + n)[0].startswith(CLSPV_IMPORT):
                    self.clspv_set = w[pos + 1]
            elif op == spirv.OP_VARIABLE and function is None and w[pos + 3] == spirv.SC_PUSH_CONSTANT:
                block = self.types.get(w[pos + 1], (0, (0, 0)))[1][1]
                self.variables[w[pos + 2]] = block
                pointers[w[pos + 2]] = (w[pos + 2], 0, block)
            elif op == spirv.OP_FUNCTION:
                function = w[pos + 2]
                self.first_function = self.first_function or pos
            elif op == spirv.OP_FUNCTION_END:
                function = None
            elif op in (spirv.OP_ACCESS_CHAIN, spirv.OP_IN_BOUNDS_ACCESS_CHAIN) and w[pos + 3] in pointers:
                var, off, t = pointers[w[pos + 3]]
                for index in w[pos + 4:pos + n]:
                    if index not in self.constants or t is None:
                        break
                    off, t = self._member(t, off, self.constants[index][1])
                else:
                    if t is not None:
                        pointers[w[pos + 2]] = (var, off, t)
            elif op == spirv.OP_LOAD and w[pos + 3] in pointers:
                values[w[pos + 2]] = pointers[w[pos + 3]]
            elif op in (OP_COPY_LOGICAL, OP_COPY_OBJECT) and w[pos + 3] in values:
                values[w[pos + 2]] = values[w[pos + 3]]
            elif op == OP_COMPOSITE_EXTRACT and w[pos + 3] in values:
                var, off, t = values[w[pos + 3]]
                for index in w[pos + 4:pos + n]:
                    off, t = self._member(t, off, index)
                    if t is None:
                        break
                else:
                    values[w[pos + 2]] = (var, off, t)
            elif op in (OP_BITCAST, OP_U_CONVERT, OP_S_CONVERT) and w[pos + 3] in values:
                # The same bytes read as another scalar, or the low bytes of an integer.
                var, off, t = values[w[pos + 3]]
                old, new = self.scalar_bits(t), self.scalar_bits(w[pos + 1])
                if old and new and (new == old if op == OP_BITCAST else new < old):
                    values[w[pos + 2]] = (var, off, w[pos + 1])
            elif op in _TO_DOUBLE and w[pos + 3] in values and function is not None \
                    and self.types.get(w[pos + 1]) == (spirv.OP_TYPE_FLOAT, (64,)):
                var, off, t = values[w[pos + 3]]
                source_op = spirv.OP_TYPE_FLOAT if op == OP_F_CONVERT else spirv.OP_TYPE_INT
                bits = self.scalar_bits(t)
                if self.types[t][0] == source_op and bits and bits <= 32:
                    self.conversions.append((pos, function, w[pos + 2], var, off, bits << 8 | _TO_DOUBLE[op]))
            elif op == spirv.OP_EXT_INST and w[pos + 3] == self.clspv_set:
                operands = w[pos + 5:pos + n]
                if w[pos + 4] == CLSPV_KERNEL:
                    self.kernels[operands[0]] = w[pos + 2]
                    self.kernel_names[w[pos + 2]] = self.strings.get(operands[1], "")
                elif w[pos + 4] == CLSPV_POD_PUSH_CONSTANT and len(operands) >= 4:
                    offset, size = (self.constants.get(i, (0, None))[1] for i in operands[2:4])
                    if offset is not None and size is not None:
                        self.pods.setdefault(operands[0], []).append((offset, size))

    def scalar_bits(self, t: int) -> int:
        kind, args = self.types.get(t, (0, ()))
        return args[0] if kind in (spirv.OP_TYPE_INT, spirv.OP_TYPE_FLOAT) else 0

    def _member(self, t: int, offset: int, index: int) -> tuple[int, int | None]:
        """The byte offset and type of member `index` of type t at `offset` in its block."""
        kind, args = self.types.get(t, (0, ()))
        if kind == spirv.OP_TYPE_STRUCT and index < len(args) and (t, index) in self.offsets:
            return offset + self.offsets[(t, index)], args[index]
        if kind == spirv.OP_TYPE_VECTOR and index < args[1] and self.scalar_bits(args[0]):
            return offset + index * self.scalar_bits(args[0]) // 8, args[0]
        if kind == spirv.OP_TYPE_ARRAY:
            stride = self.strides.get(t) or self.scalar_bits(args[0]) // 8
            if stride:
                return offset + index * stride, args[0]
        return offset, None

    def block_size(self, block: int) -> int:
        constants = {c: v for c, (_, v) in self.constants.items()}
        return spirv._type_size(block, self.types, constants, self.strides, self.offsets)


def _only_declared(words: array, block: int) -> bool:
    """Whether `block` is never a value (a whole-block load, a constant) nor part of another
    type: then a new member changes nothing but the block. Ids are unique, so an id in a result
    type's place or among a type's operands is the block itself."""
    for pos, op, n, in_function in spirv.instructions_scoped(words):
        if in_function or op in _GLOBAL_VALUES:
            if n >= 2 and words[pos + 1] == block:
                return False
        elif op in _COMPOSITE_TYPES and block in words[pos + 2:pos + n]:
            return False
    return True


def convert_arguments_on_host(data: bytes, push_constant_limit: int,
                              pods: dict[str, list[tuple[int, int]]] | None = None) -> bytes:
    """`pods`: kernel name -> (offset, size) of its by-value push-constant arguments, where the
    code reads them (argument_layout); clspv's reflection when None. A kernel not named has none."""
    words = spirv.to_words(data)
    m = _Module(words)
    if not m.conversions or m.clspv_set is None or m.void is None:
        return data
    if pods is not None:
        m.pods = {kid: list(pods.get(name, ())) for kid, name in m.kernel_names.items()}
    args_end = max((o + s for ranges in m.pods.values() for o, s in ranges), default=0)
    # Which conversions can move: in a kernel, of bytes inside one of its POD arguments, from a
    # block this pass may grow.
    blocks = {}  # block -> {(offset, kind): new member's offset}
    sizes = {}
    moved = []   # (position, result, variable, member offset, clspv Kernel id, source offset, kind)
    for pos, function, result, var, off, kind in m.conversions:
        kernel = m.kernels.get(function)
        block = m.variables[var]
        if kernel is None or not m.decorations.get(result, set()) <= _ARITHMETIC_DECORATIONS or block not in m.blocks:
            continue
        if not any(o <= off and off + (kind >> 8) // 8 <= o + s for o, s in m.pods.get(kernel, ())):
            continue
        if block not in blocks:
            if not _only_declared(words, block):
                blocks[block] = None
            else:
                blocks[block], sizes[block] = {}, (max(m.block_size(block), args_end) + 7) & ~7
        members = blocks[block]
        if members is None:
            continue
        if (off, kind) not in members:
            if sizes[block] + 8 > push_constant_limit:
                continue
            members[(off, kind)] = sizes[block]
            sizes[block] += 8
        moved.append((pos, result, var, members[(off, kind)], kernel, off, kind))
    if not moved:
        return data
    return _rewrite(words, m, blocks, moved)


def _rewrite(words: array, m: _Module, blocks: dict, moved: list) -> bytes:
    bound = words[3]
    double = next(t for t, v in m.types.items() if v == (spirv.OP_TYPE_FLOAT, (64,)))
    uint = next((t for t, v in m.types.items() if v == (spirv.OP_TYPE_INT, (32, 0))), None) or \
        next(t for t, v in m.types.items() if v[0] == spirv.OP_TYPE_INT and v[1][0] == 32)
    globals_ = array("I")  # new declarations, placed before the first function

    def fresh() -> int:
        nonlocal bound
        bound += 1
        return bound - 1

    known: dict[int, int] = {}  # value -> an existing or new 32-bit constant of it
    for c, (t, v) in m.constants.items():
        if t == uint:
            known.setdefault(v, c)

    def constant(value: int) -> int:
        if value not in known:
            known[value] = fresh()
            globals_.extend([(4 << 16) | spirv.OP_CONSTANT, uint, known[value], value])
        return known[value]

    pointer = next((t for t, (k, a) in m.types.items()
                    if k == spirv.OP_TYPE_POINTER and a == (spirv.SC_PUSH_CONSTANT, double)), None)
    if pointer is None:
        pointer = fresh()
        globals_.extend([(4 << 16) | spirv.OP_TYPE_POINTER, pointer, spirv.SC_PUSH_CONSTANT, double])
    # Each grown block: its new members, by offset, after its old ones.
    new_members = {b: sorted(mem.values()) for b, mem in blocks.items() if mem}
    index_of = {(b, off): len(m.types[b][1]) + i for b, offs in new_members.items() for i, off in enumerate(offs)}
    replace, member_decorations = {}, {}
    for pos, result, var, member, kernel, off, kind in moved:
        block = m.variables[var]
        chain = fresh()
        replace[pos] = [(5 << 16) | spirv.OP_ACCESS_CHAIN, pointer, chain, var, constant(index_of[(block, member)]),
                        (4 << 16) | spirv.OP_LOAD, double, result, chain]
    for b, offs in new_members.items():
        member_decorations[b] = [x for i, off in enumerate(offs)
                                 for x in ((5 << 16) | spirv.OP_MEMBER_DECORATE, b, len(m.types[b][1]) + i,
                                           spirv.DECORATION_OFFSET, off)]
    records = set((kernel, member, off, kind) for _, _, var, member, kernel, off, kind in moved)
    import_id = fresh()
    tail = array("I")
    for kernel, member, off, kind in sorted(records):
        tail.extend([(9 << 16) | spirv.OP_EXT_INST, m.void, fresh(), import_id, PUSH_CONSTANT_CONVERSION, kernel,
                     constant(member), constant(off), constant(kind)])
    name = spirv.string_words(IMPORT_NAME)
    double_declared = False
    out = array("I", words[:spirv.HEADER_WORDS])
    last_member_decoration = {}
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_MEMBER_DECORATE and words[pos + 1] in member_decorations:
            last_member_decoration[words[pos + 1]] = pos
    results = {r for _, r, *_ in moved}
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_DECORATE and words[pos + 1] in results:
            continue
        if pos == m.first_function:
            out.extend(globals_)
        if op == spirv.OP_TYPE_FLOAT and words[pos + 1] == double:
            if double_declared:
                continue  # already declared before a block that needed it
            double_declared = True
        if op == spirv.OP_TYPE_STRUCT and words[pos + 1] in new_members:
            if not double_declared:  # a block declared before the double type
                out.extend([(3 << 16) | spirv.OP_TYPE_FLOAT, double, 64])
                double_declared = True
            extra = [double] * len(new_members[words[pos + 1]])
            out.extend([((n + len(extra)) << 16) | op, *words[pos + 1:pos + n], *extra])
            continue
        out.extend(replace.get(pos, words[pos:pos + n]))
        if pos == m.last_import:
            out.extend([((2 + len(name)) << 16) | spirv.OP_EXT_INST_IMPORT, import_id, *name])
        for b, last in last_member_decoration.items():
            if pos == last:
                out.extend(member_decorations[b])
    out.extend(tail)
    out[3] = bound
    return spirv.to_bytes(out)
