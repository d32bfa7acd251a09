"""Reading SPIR-V as a word stream: the header, instructions, literal strings, the sizes of
push-constant blocks, and removal of non-semantic instructions.

Only what vkcl needs; no general disassembler.
"""
from __future__ import annotations

import sys
from array import array
from typing import Iterator

MAGIC = 0x07230203
HEADER_WORDS = 5

# Opcodes used here.
OP_SOURCE, OP_STRING, OP_LINE, OP_EXTENSION = 3, 7, 8, 10
OP_EXT_INST_IMPORT, OP_EXT_INST, OP_MEMORY_MODEL, OP_ENTRY_POINT, OP_CAPABILITY = 11, 12, 14, 15, 17
OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_MATRIX = 21, 22, 23, 24
OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY, OP_TYPE_STRUCT, OP_TYPE_POINTER = 28, 29, 30, 32
OP_CONSTANT, OP_VARIABLE, OP_DECORATE, OP_MEMBER_DECORATE = 43, 59, 71, 72
OP_FUNCTION, OP_LOAD, OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN, OP_PTR_ACCESS_CHAIN = 54, 61, 65, 66, 67
OP_LABEL = 248
_POINTER_USERS = (OP_LOAD, OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN, OP_PTR_ACCESS_CHAIN)

SC_FUNCTION, SC_PUSH_CONSTANT, SC_PHYSICAL_STORAGE_BUFFER = 7, 9, 5349
OP_FUNCTION_END, OP_FUNCTION_CALL = 56, 57
DECORATION_ARRAY_STRIDE, DECORATION_OFFSET = 6, 35


class SpirvFormatError(ValueError):
    """Not a SPIR-V module, or a truncated one."""


def to_words(data: bytes) -> array:
    """The module as 32-bit words in host order (either byte order is accepted)."""
    if len(data) < HEADER_WORDS * 4 or len(data) % 4:
        raise SpirvFormatError(f"SPIR-V must be a whole number of words, at least {HEADER_WORDS} "
                               f"(got {len(data)} bytes)")
    words = array("I")
    words.frombytes(data)
    if words[0] != MAGIC:
        words.byteswap()
        if words[0] != MAGIC:
            raise SpirvFormatError("bad SPIR-V magic number")
    return words


def to_bytes(words: array) -> bytes:
    if sys.byteorder != "little":
        words = array("I", words)
        words.byteswap()
    return words.tobytes()


def version(words: array) -> tuple[int, int]:
    return (words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF


def instructions(words: array) -> Iterator[tuple[int, int, int]]:
    """Yield (position, opcode, word count) for every instruction after the header."""
    pos, end = HEADER_WORDS, len(words)
    while pos < end:
        count, opcode = words[pos] >> 16, words[pos] & 0xFFFF
        if count == 0 or pos + count > end:
            raise SpirvFormatError(f"truncated or malformed instruction at word {pos}")
        yield pos, opcode, count
        pos += count


def instructions_scoped(words: array) -> Iterator[tuple[int, int, int, bool]]:
    """instructions(), each with whether it lies in a function (OpFunction to OpFunctionEnd)."""
    inside = False
    for pos, opcode, count in instructions(words):
        inside = inside or opcode == OP_FUNCTION
        yield pos, opcode, count, inside
        inside = inside and opcode != OP_FUNCTION_END


def functions(insts: list) -> Iterator[list]:
    """Each function's instructions in `insts` (a module's, one array each), OpFunction to
    OpFunctionEnd."""
    start = 0
    for k, inst in enumerate(insts):
        if inst[0] & 0xFFFF == OP_FUNCTION:
            start = k
        elif inst[0] & 0xFFFF == OP_FUNCTION_END:
            yield insts[start:k + 1]


def map_functions(insts: list, rewrite) -> list:
    """`insts` (a module's instructions, one array each) with each function's instructions,
    OpFunction to OpFunctionEnd, replaced by what `rewrite` returns for them."""
    out: list = []
    i = 0
    while i < len(insts):
        if insts[i][0] & 0xFFFF != OP_FUNCTION:
            out.append(insts[i])
            i += 1
            continue
        j = next(k for k in range(i, len(insts)) if insts[k][0] & 0xFFFF == OP_FUNCTION_END)
        out += rewrite(insts[i:j + 1])
        i = j + 1
    return out


def function_blocks(insts: list) -> tuple[list, list[list], list]:
    """A function's instructions before its first block, its blocks, and its OpFunctionEnd."""
    first = next(i for i, inst in enumerate(insts) if inst[0] & 0xFFFF == OP_LABEL)
    blocks: list[list] = []
    for inst in insts[first:-1]:
        if inst[0] & 0xFFFF == OP_LABEL:
            blocks.append([])
        blocks[-1].append(inst)
    return insts[:first], blocks, insts[-1:]


def int32_constants(words: array) -> tuple[set[int], dict[int, tuple[int, int]]]:
    """The module's 32-bit integer types, and its constants of them: id -> (type, value)."""
    types, constants = set(), {}
    for pos, op, n in instructions(words):
        if op == OP_TYPE_INT and words[pos + 2] == 32:
            types.add(words[pos + 1])
        elif op == OP_CONSTANT and n == 4 and words[pos + 1] in types:
            constants[words[pos + 2]] = (words[pos + 1], words[pos + 3])
        elif op == OP_FUNCTION:
            break
    return types, constants


def with_declarations(words: array, at: int, declarations: array, bound: int) -> bytes:
    """The module with `declarations` (new types or constants) inserted at word `at`, before
    its first function, and its id bound raised to `bound`."""
    out = words[:at] + declarations + words[at:]
    out[3] = bound
    return to_bytes(out)


def string_words(text: str) -> array:
    """A literal string as SPIR-V words: UTF-8, nul-terminated, padded to a whole word."""
    raw = text.encode() + b"\0"
    words = array("I")
    words.frombytes(raw + bytes(-len(raw) % 4))
    return words


def literal_string(words: array, start: int, end: int) -> tuple[str, int]:
    """Decode the nul-terminated string at words[start:end]; return it and the next word index."""
    raw = to_bytes(words[start:end])
    n = raw.find(b"\0")
    if n < 0:
        raise SpirvFormatError("unterminated literal string")
    return raw[:n].decode("utf-8", "replace"), start + n // 4 + 1


def _type_size(tid: int, types: dict, constants: dict, strides: dict, offsets: dict) -> int:
    kind, args = types.get(tid, (None, ()))
    if kind in (OP_TYPE_INT, OP_TYPE_FLOAT):
        return args[0] // 8
    if kind in (OP_TYPE_VECTOR, OP_TYPE_MATRIX):
        return args[1] * _type_size(args[0], types, constants, strides, offsets)
    if kind == OP_TYPE_ARRAY:
        length = constants.get(args[1], 0)
        stride = strides.get(tid) or _type_size(args[0], types, constants, strides, offsets)
        return length * stride
    if kind == OP_TYPE_POINTER:
        return 8 if args[0] == SC_PHYSICAL_STORAGE_BUFFER else 4
    if kind == OP_TYPE_STRUCT:
        size = 0
        for i, member in enumerate(args):
            member_size = _type_size(member, types, constants, strides, offsets)
            size = max(size, offsets.get((tid, i), size) + member_size)
        return size
    return 0


class _TypeTables:
    """A module's types, 32-bit constants, array strides and member offsets: what _type_size reads."""

    def __init__(self, words: array):
        self.types: dict[int, tuple[int, tuple]] = {}
        self.constants: dict[int, int] = {}
        self.strides: dict[int, int] = {}
        self.offsets: dict[tuple[int, int], int] = {}
        self.pointers: dict[int, int] = {}  # pointer type -> its pointee
        w = words
        for pos, op, count in instructions(words):
            if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
                self.types[w[pos + 1]] = (op, (w[pos + 2],))
            elif op in (OP_TYPE_VECTOR, OP_TYPE_MATRIX, OP_TYPE_ARRAY):
                self.types[w[pos + 1]] = (op, (w[pos + 2], w[pos + 3]))
            elif op == OP_TYPE_RUNTIME_ARRAY:
                self.types[w[pos + 1]] = (op, (w[pos + 2],))
            elif op == OP_TYPE_STRUCT:
                self.types[w[pos + 1]] = (op, tuple(w[pos + 2:pos + count]))
            elif op == OP_TYPE_POINTER:
                self.types[w[pos + 1]] = (op, (w[pos + 2],))
                self.pointers[w[pos + 1]] = w[pos + 3]
            elif op == OP_CONSTANT:
                self.constants[w[pos + 2]] = w[pos + 3]
            elif op == OP_DECORATE and count >= 4 and w[pos + 2] == DECORATION_ARRAY_STRIDE:
                self.strides[w[pos + 1]] = w[pos + 3]
            elif op == OP_MEMBER_DECORATE and count >= 5 and w[pos + 3] == DECORATION_OFFSET:
                self.offsets[(w[pos + 1], w[pos + 2])] = w[pos + 4]

    def size(self, type_id: int) -> int:
        return _type_size(type_id, self.types, self.constants, self.strides, self.offsets)


def push_constant_sizes(words: array) -> dict[str, int]:
    """Bytes of the push-constant block each entry point uses (by entry-point name).

    From SPIR-V 1.4 the entry point's interface lists its push-constant variable; before, the
    variable is the one the entry point's function loads from (the largest block if none).
    """
    tables = _TypeTables(words)
    variables: dict[int, int] = {}  # push-constant variable id -> pointee type
    entries: dict[str, list[int]] = {}
    entry_functions: dict[str, int] = {}
    used_by_function: dict[int, set[int]] = {}
    function = 0
    for pos, op, count in instructions(words):
        w = words
        if op == OP_VARIABLE and w[pos + 3] == SC_PUSH_CONSTANT:
            variables[w[pos + 2]] = tables.pointers.get(w[pos + 1], 0)
        elif op == OP_ENTRY_POINT:
            name, nxt = literal_string(w, pos + 3, pos + count)
            entries[name] = list(w[nxt:pos + count])
            entry_functions[name] = w[pos + 2]
        elif op == OP_FUNCTION:
            function = w[pos + 2]
        elif op in _POINTER_USERS and count > 3 and w[pos + 3] in variables:
            used_by_function.setdefault(function, set()).add(w[pos + 3])
    sizes = {var: tables.size(t) for var, t in variables.items()}
    largest = max(sizes.values(), default=0)
    new_interfaces = version(words) >= (1, 4)
    result = {}
    for name, interface in entries.items():
        if not new_interfaces:
            interface = list(used_by_function.get(entry_functions[name], ()))
        used = [sizes[v] for v in interface if v in sizes]
        result[name] = max(used, default=0 if new_interfaces else largest)
    return result


def private_memory_sizes(words: array) -> dict[str, int]:
    """Bytes of the Function-storage variables (the private arrays a program keeps as arrays) of
    each entry point and of the functions it calls, by entry-point name."""
    tables = _TypeTables(words)
    own: dict[int, int] = {}
    calls: dict[int, set[int]] = {}
    entry_functions: dict[str, int] = {}
    function = 0
    for pos, op, count in instructions(words):
        if op == OP_ENTRY_POINT:
            entry_functions[literal_string(words, pos + 3, pos + count)[0]] = words[pos + 2]
        elif op == OP_FUNCTION:
            function = words[pos + 2]
        elif op == OP_VARIABLE and function and words[pos + 3] == SC_FUNCTION:
            own[function] = own.get(function, 0) + tables.size(tables.pointers.get(words[pos + 1], 0))
        elif op == OP_FUNCTION_CALL:
            calls.setdefault(function, set()).add(words[pos + 3])
    result = {}
    for name, start in entry_functions.items():
        seen, stack = set(), [start]
        while stack:
            f = stack.pop()
            if f not in seen:
                seen.add(f)
                stack += calls.get(f, ())
        result[name] = sum(own.get(f, 0) for f in seen)
    return result


def strip_nonsemantic(spirv: bytes) -> bytes:
    """Remove every non-semantic instruction set (its import and all its OpExtInst), the
    SPV_KHR_non_semantic_info extension, and the OpStrings only those instructions used."""
    words = to_words(spirv)
    sets: set[int] = set()
    for pos, op, count in instructions(words):
        if op == OP_EXT_INST_IMPORT:
            name, _ = literal_string(words, pos + 2, pos + count)
            if name.startswith("NonSemantic."):
                sets.add(words[pos + 1])
    keep_strings: set[int] = set()
    removed_refs: set[int] = set()
    drop: list[tuple[int, int]] = []
    for pos, op, count in instructions(words):
        if op == OP_EXT_INST and words[pos + 3] in sets:
            removed_refs.update(words[pos + 5:pos + count])
            drop.append((pos, count))
        elif op == OP_EXT_INST_IMPORT and words[pos + 1] in sets:
            drop.append((pos, count))
        elif op == OP_EXTENSION:
            name, _ = literal_string(words, pos + 1, pos + count)
            if name == "SPV_KHR_non_semantic_info":
                drop.append((pos, count))
        elif op == OP_SOURCE and count >= 4:
            keep_strings.add(words[pos + 3])
        elif op == OP_LINE:
            keep_strings.add(words[pos + 1])
    for pos, op, count in instructions(words):
        if op == OP_STRING and words[pos + 1] in removed_refs and words[pos + 1] not in keep_strings:
            drop.append((pos, count))
    if not drop:
        return spirv
    out = array("I", words[:HEADER_WORDS])
    dropped = sorted(drop)
    cursor = HEADER_WORDS
    for pos, count in dropped:
        out.extend(words[cursor:pos])
        cursor = pos + count
    out.extend(words[cursor:])
    return to_bytes(out)


SC_WORKGROUP = 4


def global_variables(words: array) -> dict[int, tuple[int, int]]:
    """Module-scope OpVariables: id -> (storage class, pointee type)."""
    pointers, out = {}, {}
    function = False
    for pos, op, count in instructions(words):
        if op == OP_TYPE_POINTER:
            pointers[words[pos + 1]] = words[pos + 3]
        elif op == OP_FUNCTION:
            function = True
        elif op == OP_FUNCTION_END:
            function = False
        elif op == OP_VARIABLE and not function:
            out[words[pos + 2]] = (words[pos + 3], pointers.get(words[pos + 1], 0))
    return out


# Instructions of function bodies whose words from this position on (relative to the opcode's)
# are literals, not ids: a literal equal to a variable's id is not a use of it (seen: a kernel's
# OpCompositeExtract index 14 kept another kernel's push-constant variable %14 in its entry point,
# two push-constant blocks, and lavapipe's vkCreateComputePipelines failed).
_LITERALS_FROM = {81: 4, 82: 5, 79: 5,   # OpCompositeExtract/Insert indices, OpVectorShuffle components
                  61: 4, 62: 3, 63: 3, 64: 4,  # memory operands of OpLoad, OpStore, OpCopyMemory(Sized)
                  OP_LINE: 2, 247: 2, 246: 3, 250: 4, 251: 3,  # OpLine, merges, branch weights, OpSwitch
                  342: 4, **{op: 4 for op in range(349, 367)}}  # group operations of subgroup reductions
_LITERAL_AT = {OP_EXT_INST: 4, OP_VARIABLE: 3}  # the instruction number; the storage class


def id_operands(words: array, pos: int, op: int, count: int):
    """The ids among the words of the instruction at `pos` (its result type and id included),
    its literal operands left out where they could be mistaken for ids."""
    end = pos + min(count, _LITERALS_FROM.get(op, count))
    skip = pos + _LITERAL_AT[op] if op in _LITERAL_AT else -1
    return (words[i] for i in range(pos + 1, end) if i != skip)


def variables_used(words: array, variables) -> dict[int, set[int]]:
    """Entry-point function id -> the global variables its body (and its callees') names."""
    direct: dict[int, set[int]] = {}
    calls: dict[int, set[int]] = {}
    function = None
    for pos, op, count in instructions(words):
        if op == OP_FUNCTION:
            function = words[pos + 2]
            direct[function], calls[function] = set(), set()
        elif op == OP_FUNCTION_END:
            function = None
        elif function is not None:
            if op == OP_FUNCTION_CALL:
                calls[function].add(words[pos + 3])
            direct[function].update(w for w in id_operands(words, pos, op, count) if w in variables)
    closed = {}
    for f in direct:
        seen, todo, used = {f}, [f], set()
        while todo:
            g = todo.pop()
            used |= direct.get(g, set())
            for h in calls.get(g, ()):
                if h not in seen:
                    seen.add(h)
                    todo.append(h)
        closed[f] = used
    return closed


def workgroup_sizes(spirv: bytes) -> dict[str, int]:
    """Bytes of static __local (Workgroup) variables each entry point uses, by name."""
    words = to_words(spirv)
    variables = global_variables(words)
    used = variables_used(words, variables)
    types: dict[int, tuple[int, tuple]] = {}
    constants: dict[int, int] = {}
    entries = {}
    for pos, op, count in instructions(words):
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            types[words[pos + 1]] = (op, (words[pos + 2],))
        elif op in (OP_TYPE_VECTOR, OP_TYPE_MATRIX, OP_TYPE_ARRAY):
            types[words[pos + 1]] = (op, (words[pos + 2], words[pos + 3]))
        elif op == OP_TYPE_STRUCT:
            types[words[pos + 1]] = (op, tuple(words[pos + 2:pos + count]))
        elif op == OP_CONSTANT:
            constants[words[pos + 2]] = words[pos + 3]
        elif op == OP_ENTRY_POINT:
            name, _ = literal_string(words, pos + 3, pos + count)
            entries[name] = words[pos + 2]
    return {name: sum(_type_size(variables[v][1], types, constants, {}, {})
                      for v in used.get(f, ()) if variables[v][0] == SC_WORKGROUP)
            for name, f in entries.items()}
