"""llvmpipe's loop cap made visible (llvmpipe only: DeviceCaps.loop_unroll_count; spirv_fixes
runs it last; the runtime side is core/loop_cuts.py).

llvmpipe (Mesa 22.3; newer Mesa keeps it) gives each shader invocation, a batch of 8
work-items, one counter of 65,535 loop back-edges for all its loops; once spent, every loop
leaves at its next back-edge, silently (docs/architecture.md, "Loops on lavapipe"), and every
later loop runs its body once. That last fact is what this pass measures: before each OpReturn
of an entry point, where the word's address is given (two 32-bit specialization constants,
SPEC_WORD; 0: not given), a probe loop runs t trips, t read from the word's second 32 bits
(PROBE_TRIPS) by an atomic load so that no compiler knows it; a batch whose budget is spent
leaves it after one trip and ORs 1 into the word's first 32 bits. A false alarm needs a batch
that spent the budget to its last back-edge without a cut. Modules without loops are left as
they are.

Measured on lavapipe: a kernel of 64 work-items looping n times set the word for n = 2 and 30
million (results wrong) and not for 1,000 or 60,000 (right). Tried first, not working: a flag
per loop set on every branch to its merge block and checked there (a cut loop reaches the
merge without taking one); the compilers fold it away, since by the CFG's own semantics the
merge is reached only through those branches (Volatile on the Private flag did not stop that).
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv, spirv_extra_lanes
from vkcl.compiler.spirv_edit import instruction as _inst

SPEC_WORD = (0x7F564B10, 0x7F564B11)  # the word's address, low and high halves
PROBE_TRIPS = 2  # the word's second 32 bits: the probe loop's trip count


OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_POINTER = 20, 21, 32
OP_CONSTANT, OP_SPEC_CONSTANT, OP_FUNCTION = 43, 50, 54
OP_DECORATE, OP_MEMORY_MODEL, OP_ENTRY_POINT = 71, 14, 15
OP_U_CONVERT, OP_CONVERT_U_TO_PTR, OP_I_NOT_EQUAL = 113, 120, 171
OP_SHIFT_LEFT_LOGICAL, OP_BITWISE_OR, OP_ATOMIC_OR = 196, 197, 241
OP_I_ADD, OP_U_LESS_THAN, OP_ATOMIC_LOAD = 128, 176, 227
OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL = 245, 246, 247, 248
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_RETURN = 249, 250, 253
DECORATION_SPEC_ID, ADDRESSING_PHYSICAL_STORAGE_BUFFER_64 = 1, 5348


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


def instrument(data: bytes) -> bytes:
    """The module with the probe before each return of its entry points (see the docstring);
    unchanged when it has no loop or does not address physical storage buffers."""
    words = spirv.to_words(data)
    insts = [words[pos:pos + n] for pos, _, n in spirv.instructions(words)]
    if not any(_op(i) == OP_LOOP_MERGE for i in insts):
        return data
    if not any(_op(i) == OP_MEMORY_MODEL and i[1] == ADDRESSING_PHYSICAL_STORAGE_BUFFER_64 for i in insts):
        return data
    bound = [words[3]]

    def new() -> int:
        bound[0] += 1
        return bound[0] - 1

    types = {(_op(i), tuple(i[2:])): i[1] for i in insts if 19 <= _op(i) <= 39}
    decls: list[array] = []

    def type_id(op: int, *operands: int) -> int:
        key = (op, operands)
        if key not in types:
            types[key] = new()
            decls.append(_inst(op, types[key], *operands))
        return types[key]

    boolean, uint, ulong = type_id(OP_TYPE_BOOL), type_id(OP_TYPE_INT, 32, 0), type_id(OP_TYPE_INT, 64, 0)
    psb_uint = type_id(OP_TYPE_POINTER, spirv.SC_PHYSICAL_STORAGE_BUFFER, uint)
    zero, one, zero64, shift, four64 = new(), new(), new(), new(), new()
    decls += [_inst(OP_CONSTANT, uint, zero, 0), _inst(OP_CONSTANT, uint, one, 1),
              _inst(OP_CONSTANT, ulong, zero64, 0, 0), _inst(OP_CONSTANT, uint, shift, 32),
              _inst(OP_CONSTANT, ulong, four64, 4, 0)]
    annotations = []
    have = _spec_ids(insts)  # declared by spirv_resume, which runs first
    if have is not None:
        halves = list(have)
    else:
        halves = [new(), new()]
        for half, spec_id in zip(halves, SPEC_WORD):
            decls.append(_inst(OP_SPEC_CONSTANT, uint, half, 0))
            annotations.append(_inst(OP_DECORATE, half, DECORATION_SPEC_ID, spec_id))
    entry_points = {i[2] for i in insts if _op(i) == OP_ENTRY_POINT}
    ctx = dict(new=new, boolean=boolean, uint=uint, ulong=ulong, psb_uint=psb_uint, four64=four64, zero=zero,
               one=one, zero64=zero64, shift=shift, halves=halves,
               skip=set(spirv_extra_lanes.marked_entry_points(data).values()))
    out = spirv.map_functions(insts, lambda f: _function(f, ctx) if f[0][2] in entry_points else f)
    first_function = next(k for k, inst in enumerate(out) if _op(inst) == OP_FUNCTION)
    first_annotation = next((k for k, inst in enumerate(out) if 71 <= _op(inst) <= 75), first_function)
    out[first_function:first_function] = decls
    out[first_annotation:first_annotation] = annotations
    result = array("I", words[:spirv.HEADER_WORDS])
    result[3] = bound[0]
    for inst in out:
        result.extend(inst)
    return spirv.to_bytes(result)


def _spec_ids(insts) -> tuple[int, int] | None:
    found = {i[3]: i[1] for i in insts if _op(i) == OP_DECORATE and len(i) == 4 and i[2] == DECORATION_SPEC_ID
             and i[3] in SPEC_WORD}
    return (found[SPEC_WORD[0]], found[SPEC_WORD[1]]) if len(found) == 2 else None


def spec_word_constants(module) -> tuple[int, int] | None:
    """The word's two specialization constants where a spirv_edit.Module declares them."""
    return _spec_ids(module.insts)


def instrumented(data: bytes) -> bool:
    """Whether the module carries the probe (its SPEC_WORD specialization constants)."""
    words = spirv.to_words(data)
    return any(op == OP_DECORATE and n == 4 and words[pos + 2] == DECORATION_SPEC_ID and words[pos + 3] == SPEC_WORD[0]
               for pos, op, n in spirv.instructions(words))


def _function(function: list[array], c: dict) -> list[array]:
    """An entry point's instructions with the probe before each of its returns (but the one
    where only lanes past the work-group's width return: spirv_extra_lanes.py)."""
    head, blocks, end = spirv.function_blocks(function)
    out = list(head)
    for block in blocks:
        if (_op(block[-1]) == OP_RETURN and not any(_op(i) in (OP_LOOP_MERGE, OP_SELECTION_MERGE) for i in block)
                and block[0][1] not in c["skip"]):
            out += block[:-1] + _report(c)
        else:
            out += block
    return out + end


def _report(c: dict) -> list[array]:
    """Where the word's address is given: a probe loop of t trips, t read from the word's
    second half (an atomic load, so no compiler knows it: 2); a batch whose budget is spent
    leaves it after one trip, and then ORs 1 into the word. Then the return."""
    new = c["new"]
    lo, hi, shifted, address, given, at4, ptr4, t = (new() for _ in range(8))
    then, header, body, cont, lmerge, report, done2, done = (new() for _ in range(8))
    count, count1, more, short, ptr, old = (new() for _ in range(6))
    u, b = c["uint"], c["boolean"]
    return [
        _inst(OP_U_CONVERT, c["ulong"], lo, c["halves"][0]), _inst(OP_U_CONVERT, c["ulong"], hi, c["halves"][1]),
        _inst(OP_SHIFT_LEFT_LOGICAL, c["ulong"], shifted, hi, c["shift"]),
        _inst(OP_BITWISE_OR, c["ulong"], address, lo, shifted),
        _inst(OP_I_NOT_EQUAL, b, given, address, c["zero64"]),
        _inst(OP_SELECTION_MERGE, done, 0), _inst(OP_BRANCH_CONDITIONAL, given, then, done),
        _inst(OP_LABEL, then),
        _inst(OP_I_ADD, c["ulong"], at4, address, c["four64"]),
        _inst(OP_CONVERT_U_TO_PTR, c["psb_uint"], ptr4, at4),
        _inst(OP_ATOMIC_LOAD, u, t, ptr4, c["one"], c["zero"]),
        _inst(OP_BRANCH, header),
        _inst(OP_LABEL, header),
        _inst(OP_PHI, u, count, c["zero"], then, count1, cont),
        _inst(OP_U_LESS_THAN, b, more, count, t),
        _inst(OP_LOOP_MERGE, lmerge, cont, 0), _inst(OP_BRANCH_CONDITIONAL, more, body, lmerge),
        _inst(OP_LABEL, body), _inst(OP_BRANCH, cont),
        _inst(OP_LABEL, cont), _inst(OP_I_ADD, u, count1, count, c["one"]), _inst(OP_BRANCH, header),
        _inst(OP_LABEL, lmerge),
        _inst(OP_I_NOT_EQUAL, b, short, count, t),
        _inst(OP_SELECTION_MERGE, done2, 0), _inst(OP_BRANCH_CONDITIONAL, short, report, done2),
        _inst(OP_LABEL, report),
        _inst(OP_CONVERT_U_TO_PTR, c["psb_uint"], ptr, address),
        _inst(OP_ATOMIC_OR, u, old, ptr, c["one"], c["zero"], c["one"]),
        _inst(OP_BRANCH, done2),
        _inst(OP_LABEL, done2), _inst(OP_BRANCH, done),
        _inst(OP_LABEL, done), _inst(OP_RETURN)]
