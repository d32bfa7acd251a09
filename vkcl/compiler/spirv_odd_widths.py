"""Integers of widths Vulkan has no type for (i40), carried in the next width it has (spirv_fixes).

LLVM computes the value a counted loop leaves behind in closed form where it can: after
`for (uint i = 0; i < n; i++) s += i;`, s is (n - 1)(n - 2) / 2 + n - 1, its product taken in
33 bits so that the halving loses nothing. clspv writes that i33 as an `OpTypeInt 40`, which no
Vulkan implementation takes: the pipeline failed (CL_OUT_OF_RESOURCES at the launch, lavapipe
and NVIDIA alike). 4 of the 14,837 programs of the development machine's cache had one.

Here each such type becomes the next width Vulkan has (40 -> 64, 24 -> 32, 12 -> 16), and each
value keeps the N-bit value in its low bits, the bits above it zero. Operations whose low N bits
depend only on their operands' low N bits (add, sub, mul, shift left, not, zero extension or
truncation to it) are masked back to N bits after; the others taken here (and, or, xor,
unsigned division and remainder, logical shift right, unsigned comparisons, selects, phis,
truncation from it) give the N-bit results from zero-extended operands as they are. So every
result equals the N-bit arithmetic's. A module whose odd integers reach memory, vectors,
constants other than plain ones, or any other instruction (those reading them as signed among
them: clspv's closed forms have none) is left as it was (so is one where a literal operand
happens to equal such a value's id).

Past 64 bits there is nothing to carry a value in: a ulong sum's closed form takes an i65 (an
`OpTypeInt 72`). The driver builds such a program (and one left as it was above) again with
NO_CLOSED_FORMS, so that the loop computes the value as written.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv
from vkcl.compiler.spirv_edit import _NO_RESULT_TYPE as _NO_RESULT, Module, instruction as _inst

LEGAL = (8, 16, 32, 64)
OP_TYPE_INT, OP_CONSTANT, OP_UNDEF, OP_PHI, OP_SELECT, OP_COPY_OBJECT = 21, 43, 1, 245, 169, 83
OP_FUNCTION, OP_FUNCTION_END = 54, 56
OP_NOT, OP_I_ADD, OP_I_SUB, OP_I_MUL, OP_U_DIV, OP_U_MOD, OP_U_CONVERT = 200, 128, 130, 132, 134, 137, 113
OP_SHR_LOGICAL, OP_SHL, OP_OR, OP_XOR, OP_AND, OP_EXT_INST = 194, 196, 197, 198, 199, 12
_ANNOTATIONS = (5, 6, 71, 72)  # OpName, OpMemberName, OpDecorate, OpMemberDecorate
UNSIGNED_COMPARES = (170, 171, 172, 174, 176, 178)  # equal, not equal, unsigned orders
MASKED = (OP_I_ADD, OP_I_SUB, OP_I_MUL, OP_SHL, OP_NOT)  # results past N bits
KEPT = (OP_AND, OP_OR, OP_XOR, OP_U_DIV, OP_U_MOD, OP_SHR_LOGICAL, OP_SELECT, OP_PHI, OP_COPY_OBJECT)
# Where type declarations name other types: vector, matrix, array, runtime array, struct, pointer, function.
_TYPE_OPERANDS = {23: slice(2, 3), 24: slice(2, 3), 28: slice(2, 3), 29: slice(2, 3), 30: slice(2, None),
                  32: slice(3, 4), 33: slice(2, None)}

# The option that keeps LLVM from writing loops' final values in closed form (IndVarSimplify's
# exit value replacement), for a module whose integers widen_odd_integers cannot carry.
NO_CLOSED_FORMS = "-replexitval=never"


def uncarried(data: bytes) -> bool:
    """Whether the module has an integer type that neither Vulkan nor widen_odd_integers carries."""
    words = spirv.to_words(data)
    if not any(op == OP_TYPE_INT and words[pos + 2] not in LEGAL for pos, op, _ in spirv.instructions(words)):
        return False
    words = spirv.to_words(widen_odd_integers(data))
    return any(op == OP_TYPE_INT and words[pos + 2] not in LEGAL for pos, op, _ in spirv.instructions(words))


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


class _Keep(Exception):
    """The module is left as it was."""


def widen_odd_integers(data: bytes) -> bytes:
    """The module with its integers of widths other than 8, 16, 32 and 64 carried in the next
    of those (see the docstring); unchanged if it has none or uses one otherwise."""
    m = Module(data)
    odd = {i[1]: i[2] for i in m.insts if _op(i) == OP_TYPE_INT and i[2] not in LEGAL and i[2] < 64}
    if not odd:
        return data
    try:
        insts = _widened(m, odd)
    except _Keep:
        return data
    m.insts = insts
    return m.to_bytes()


def _widened(m: Module, odd: dict[int, int]) -> list[array]:
    wide = {t: m.int_type(next(w for w in LEGAL if w > n)) for t, n in odd.items()}
    for i in m.insts:  # vectors, arrays, structs, pointers or functions of them
        op = _op(i)
        if op in _TYPE_OPERANDS and set(i[_TYPE_OPERANDS[op]]) & set(odd):
            raise _Keep
    constants: dict[int, int] = {}
    out: list[array] = []
    new = m.new_id
    masks: dict[int, int] = {}

    def mask(t: int) -> int:
        if t not in masks:
            masks[t] = m.constant(wide[t], (1 << odd[t]) - 1)
        return masks[t]

    type_of = dict(m.type_of)
    in_function = False
    for inst in m.insts:
        op = _op(inst)
        in_function = (in_function or op == OP_FUNCTION) and op != OP_FUNCTION_END
        if op == OP_TYPE_INT and inst[1] in odd:
            continue
        if op == OP_CONSTANT and inst[1] in odd:
            value = inst[3] | (inst[4] << 32 if len(inst) > 4 else 0)
            constants[inst[2]] = m.constant(wide[inst[1]], value & ((1 << odd[inst[1]]) - 1))
            continue
        if op not in _NO_RESULT and len(inst) > 2 and inst[1] in m.types and inst[1] in odd and 41 <= op <= 52:
            raise _Keep  # other constants of it (specialization constants, composites)
        if op in _ANNOTATIONS:  # literals past their target: dropped with their target, else kept
            if not (inst[1] in odd or inst[1] in constants):
                out.append(inst)
            continue
        if not in_function and op != OP_UNDEF:  # capabilities, modes, entry points: literals
            out.append(inst)
            continue
        result_odd = op not in _NO_RESULT and len(inst) > 2 and inst[1] in odd
        first = 5 if op == OP_EXT_INST else 3 if op not in _NO_RESULT else 1  # past an extended instruction's number
        operand_types = [type_of.get(inst[k]) for k in range(first, len(inst))]
        operand_odd = [t for t in operand_types if t in odd]
        if not result_odd and not operand_odd:
            out.append(inst)
            continue
        # the instructions handled below take ids only after their result: constants renamed
        c = array("I", [inst[0], *(constants.get(x, x) for x in inst[1:])])
        t = c[1] if result_odd else operand_odd[0]
        w = wide[t]
        if op == OP_UNDEF and result_odd:
            c[1] = w
            out.append(c)
        elif op in KEPT and result_odd:
            c[1] = w
            out.append(c)
        elif op in MASKED and result_odd:
            raw = new()
            out += [_inst(op, w, raw, *c[3:]), _inst(OP_AND, w, c[2], raw, mask(t))]
        elif op == OP_U_CONVERT and result_odd:
            source = type_of.get(inst[3])
            if source in odd:
                raise _Keep
            raw = new()  # zero-extended or truncated to the carrier, then to N bits
            same = m.types[source][2] == m.types[w][2]
            out += [_inst(OP_COPY_OBJECT if same else OP_U_CONVERT, w, raw, c[3]), _inst(OP_AND, w, c[2], raw, mask(t))]
        elif op == OP_U_CONVERT:  # from it: the carrier's low bits
            same = m.types[c[1]][2] == m.types[w][2]
            out.append(_inst(OP_COPY_OBJECT, c[1], c[2], c[3]) if same else c)
        elif op in UNSIGNED_COMPARES or (op in (OP_SHR_LOGICAL, OP_SHL) and not result_odd):
            out.append(c)  # a comparison, an odd shift count
        else:
            raise _Keep
        if result_odd:
            type_of[inst[2]] = t
    return out
