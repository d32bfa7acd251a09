"""Loops that llvmpipe cut short, made visible (llvmpipe only). PROTOTYPE on branch h-loopcut:
the runtime side is not written yet (below).

llvmpipe (Mesa 22.3; newer Mesa keeps it) gives each shader invocation, a batch of 8
work-items, one counter of 65,535 loop back-edges for all its loops; once spent, every loop
leaves at its next back-edge, silently (docs/architecture.md, "Loops on lavapipe"), and every
later loop runs its body once. That last fact is what this pass measures: before each OpReturn
of an entry point, where the word's address is given (two 32-bit specialization constants,
SPEC_WORD; 0: not given), a probe loop runs t trips, t read from the word's second 32 bits (2)
by an atomic load so that no compiler knows it; a batch whose budget is spent leaves it after
one trip and ORs 1 into the word's first 32 bits. (A false alarm needs a batch that spent the
budget to its last back-edge without a cut.)

Measured on lavapipe (the experiment: /tmp/lc_e2e.py in the eighteenth session; a kernel of 64
work-items looping n times): n = 1,000 and 60,000 left the word 0 and were right; n = 2 million
and 30 million set it and were wrong.

Tried first, not working: a flag per loop set on every branch to its merge block and checked
there (a cut loop reaches the merge without taking one). The compilers fold it away: by the
CFG's own semantics the merge is reached only through those branches, so the flag is provably
set there; Volatile on the Private flag did not stop that.

Left to do: instrument() only for llvmpipe (caps.loop_unroll_count) at the end of
spirv_fixes.repair, spirv_fixes.VERSION; a per-device 8-byte word (0, 2) in host-visible memory
and SPEC_WORD's values at every pipeline's creation (core/ndrange.py); at each batch's
completion, in core/queue.py and in icd/fast_path.c (vkcl_fast_run_batch), exchange the word
with 0 and, where it was set, fail the batch's launch events with CL_OUT_OF_RESOURCES and log a
warning naming the kernels; tests (a long loop fails its event, short ones do not, through C's
fast path too); the cost of the probe on lavapipe.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

SPEC_WORD = (0x7F564B10, 0x7F564B11)  # the word's address, low and high halves

OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_POINTER = 20, 21, 32
OP_CONSTANT_TRUE, OP_CONSTANT_FALSE, OP_CONSTANT, OP_SPEC_CONSTANT = 41, 42, 43, 50
OP_FUNCTION, OP_FUNCTION_END, OP_VARIABLE, OP_LOAD, OP_STORE = 54, 56, 59, 61, 62
OP_DECORATE, OP_MEMORY_MODEL, OP_ENTRY_POINT = 71, 14, 15
OP_U_CONVERT, OP_CONVERT_U_TO_PTR, OP_I_NOT_EQUAL = 113, 120, 171
OP_LOGICAL_OR, OP_LOGICAL_NOT, OP_LOGICAL_AND, OP_SELECT = 166, 168, 167, 169
OP_SHIFT_LEFT_LOGICAL, OP_BITWISE_OR, OP_ATOMIC_OR = 196, 197, 241
OP_I_ADD, OP_U_LESS_THAN, OP_ATOMIC_LOAD = 128, 176, 227
OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL = 245, 246, 247, 248
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH, OP_RETURN = 249, 250, 251, 253
SC_PRIVATE, DECORATION_SPEC_ID, ADDRESSING_PHYSICAL_STORAGE_BUFFER_64 = 6, 1, 5348
SCOPE_DEVICE = 1
VOLATILE = 0x1  # memory operand: the compilers must not see through the flag (see the docstring)


def _inst(op: int, *operands: int) -> array:
    return array("I", [(len(operands) + 1) << 16 | op, *operands])


def _op(inst: array) -> int:
    return inst[0] & 0xFFFF


def instrument(data: bytes) -> bytes:
    """The module with its loops' cuts recorded (see the docstring); unchanged when it has no
    loop or does not address physical storage buffers."""
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
    private_bool = type_id(OP_TYPE_POINTER, SC_PRIVATE, boolean)
    psb_uint = type_id(OP_TYPE_POINTER, spirv.SC_PHYSICAL_STORAGE_BUFFER, uint)
    true_, false_, zero, one, zero64, shift, four64 = new(), new(), new(), new(), new(), new(), new()
    decls += [_inst(OP_CONSTANT_TRUE, boolean, true_), _inst(OP_CONSTANT_FALSE, boolean, false_),
              _inst(OP_CONSTANT, uint, zero, 0), _inst(OP_CONSTANT, uint, one, 1),
              _inst(OP_CONSTANT, ulong, zero64, 0, 0), _inst(OP_CONSTANT, uint, shift, 32),
              _inst(OP_CONSTANT, ulong, four64, 4, 0)]
    halves = [new(), new()]
    annotations = []
    for half, spec_id in zip(halves, SPEC_WORD):
        decls.append(_inst(OP_SPEC_CONSTANT, uint, half, 0))
        annotations.append(_inst(OP_DECORATE, half, DECORATION_SPEC_ID, spec_id))
    entry_points = {i[2] for i in insts if _op(i) == OP_ENTRY_POINT}
    ctx = dict(new=new, boolean=boolean, uint=uint, ulong=ulong, private_bool=private_bool, psb_uint=psb_uint,
               true=true_, false=false_, four64=four64, zero=zero, one=one, zero64=zero64, shift=shift, halves=halves,
               decls=decls)

    out: list[array] = []
    i = 0
    while i < len(insts):
        if _op(insts[i]) != OP_FUNCTION:
            out.append(insts[i])
            i += 1
            continue
        j = next(k for k in range(i, len(insts)) if _op(insts[k]) == OP_FUNCTION_END)
        out += _function(insts[i:j + 1], insts[i][2] in entry_points, ctx)
        i = j + 1
    new_vars = [inst[2] for inst in decls if _op(inst) == OP_VARIABLE]
    for k, inst in enumerate(out):  # SPIR-V 1.4 on: every global an entry point uses in its interface
        if _op(inst) == OP_ENTRY_POINT and spirv.version(words) >= (1, 4):
            out[k] = _inst(OP_ENTRY_POINT, *inst[1:], *new_vars)
    first_function = next(k for k, inst in enumerate(out) if _op(inst) == OP_FUNCTION)
    first_annotation = next((k for k, inst in enumerate(out) if 71 <= _op(inst) <= 75), first_function)
    out[first_function:first_function] = decls
    out[first_annotation:first_annotation] = annotations
    result = array("I", words[:spirv.HEADER_WORDS])
    result[3] = bound[0]
    for inst in out:
        result.extend(inst)
    return spirv.to_bytes(result)


def _blocks(function: list[array]) -> tuple[list[array], list[list[array]], array]:
    start = next(k for k, inst in enumerate(function) if _op(inst) == OP_LABEL)
    blocks: list[list[array]] = []
    for inst in function[start:-1]:
        if _op(inst) == OP_LABEL:
            blocks.append([])
        blocks[-1].append(inst)
    return function[:start], blocks, function[-1]


def _successors(block: list[array]) -> list[int]:
    term = block[-1]
    if _op(term) == OP_BRANCH:
        return [term[1]]
    if _op(term) == OP_BRANCH_CONDITIONAL:
        return [term[2], term[3]]
    if _op(term) == OP_SWITCH:
        return [term[2], *term[4::2]]
    return []


def _function(function: list[array], entry: bool, c: dict) -> list[array]:
    if not entry:
        return function
    head, blocks, end = _blocks(function)
    out = list(head)
    for block in blocks:
        if _op(block[-1]) == OP_RETURN and not any(_op(i) in (OP_LOOP_MERGE, OP_SELECTION_MERGE) for i in block):
            out += block[:-1] + _report(c)
        else:
            out += block
    out.append(end)
    return out


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
