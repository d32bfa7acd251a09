"""Copies of a run of global loads by a run of global stores made one loop each for llvmpipe
(vkcl/compiler/spirv_copy_loops.py), in kernels of many global accesses; what may not be rolled
(values used elsewhere, stores of other values, a global access between, `volatile`, small
kernels, other devices) stays as clspv wrote it. The results, edge values and overlapping copies
included, are checked on the device in tests/icd/test_merged_accesses.py."""
from vkcl import compiler
from vkcl.compiler import spirv
from vkcl.compiler.spirv_copy_loops import MIN_ACCESSES, roll_copies

OP_LOAD, OP_STORE, OP_LOOP_MERGE = 61, 62, 246
LINES = 40  # 40 copies of 16 elements: 1,280 global accesses
ROLLED = compiler.DeviceCaps(roll_copies=True)
BOTH = compiler.DeviceCaps(roll_copies=True, merge_narrow_accesses=True)


def _kernel(body: str, head: str = "global const long *src, global long16 *dst") -> str:
    lines = "\n".join(body.format(k=k) for k in range(LINES))
    return f"kernel void k({head}) {{\n{lines}\n}}"


# The CTS's basic/vector_creation shape: a long16 made of vloads of src, stored whole.
COPIES = _kernel("  dst[{k}] = (long16)(vload3(0, src), vload4(0, src + 3), vload8(0, src + 7), src[15]);")


def _counts(data: bytes) -> tuple[int, int, list[int]]:
    """(loads and stores of any kind, OpLoopMerge count, their loop controls)."""
    words = spirv.to_words(data)
    accesses, controls = 0, []
    for pos, op, n in spirv.instructions(words):
        if op in (OP_LOAD, OP_STORE):
            accesses += 1
        elif op == OP_LOOP_MERGE:
            controls.append(words[pos + 3])
    return accesses, len(controls), controls


def test_copies_become_loops_that_nir_keeps_rolled(valid_spirv):
    plain = compiler.compile_source(COPIES, "", compiler.DeviceCaps())
    rolled = compiler.compile_source(COPIES, "", ROLLED)
    assert plain.ok and rolled.ok, plain.log + rolled.log
    before, after = _counts(plain.spirv), _counts(rolled.spirv)
    assert before[1] == 0 and before[0] >= 2 * 16 * LINES >= MIN_ACCESSES, before
    # the 40 copies (sources 0 elements apart, destinations 16) one loop (DontUnroll) of one
    # load and one store; the push constants' load too
    assert after[1] == 1 and set(after[2]) == {0x2}, after
    assert after[0] == 2 + 1, after
    assert valid_spirv(rolled.spirv)
    assert roll_copies(rolled.spirv) == rolled.spirv  # nothing left to roll


def test_narrow_copies_roll_before_merging(valid_spirv):
    src = _kernel("  dst[{k}] = vload16(0, src + 1);", "global const char *src, global char16 *dst")
    both = compiler.compile_source(src, "", BOTH)
    assert both.ok, both.log
    accesses, loops, _ = _counts(both.spirv)
    assert loops == 1 and accesses == 2 + 1
    assert valid_spirv(both.spirv)


def test_copies_that_do_not_step_alike_are_separate_loops(valid_spirv):
    """A copy joins the loop of the ones before it only if its source and destination are as
    many elements after theirs as theirs were after the ones before."""
    lines = "".join(f"  dst[{k * k}] = vload16(0, src + {k});\n" for k in range(LINES))
    src = f"kernel void k(global const long *src, global long16 *dst) {{\n{lines}}}"
    result = compiler.compile_source(src, "", ROLLED)
    assert result.ok, result.log
    accesses, loops, _ = _counts(result.spirv)
    # destinations 0, 1, 4, 9, ...: steps 1, 3, 5, ... so that pairs at most share a loop
    assert LINES // 2 <= loops < LINES and accesses == 2 * loops + 1, (loops, accesses)
    assert valid_spirv(result.spirv)


def test_what_may_not_be_rolled_stays(valid_spirv):
    kernels = {
        # the loaded values are used again (summed into another store)
        "reused": _kernel("  {{ long16 v = vload16(0, src); dst[{k}] = v; dst[{k} + 100] = v + 1; }}"),
        # the stored values are not the loads' in order
        "shuffled": _kernel("  dst[{k}] = vload16(0, src).sfedcba9876543210;"),
        # a global load of another array between the loads and the stores
        "between": _kernel("  dst[{k}] = vload16(0, src) + (long16)(other[{k}]);",
                           "global const long *src, global long16 *dst, global const long *other"),
        "volatile": _kernel("  dst[{k}] = vload16(0, src);", "global const long *src, volatile global long16 *dst"),
    }
    for name, src in kernels.items():
        result = compiler.compile_source(src, "", ROLLED)
        assert result.ok, (name, result.log)
        assert _counts(result.spirv)[1] == 0, name
        assert valid_spirv(result.spirv), name
    small = "kernel void k(global const long *src, global long16 *dst) { dst[0] = vload16(0, src); }"
    result = compiler.compile_source(small, "", ROLLED)
    assert result.ok and _counts(result.spirv)[1] == 0  # too few accesses to matter


def test_other_devices_keep_clspv_accesses():
    plain = compiler.compile_source(COPIES, "", compiler.DeviceCaps(merge_narrow_accesses=True))
    assert _counts(plain.spirv)[1] == 0
    assert _counts(roll_copies(plain.spirv))[1] == 1  # what llvmpipe would get


def test_modules_with_loops_are_not_rolled():
    """llvmpipe's one budget of 65,535 back-edges per batch is shared by every loop: trips added
    to a module that has loops could cut a long loop of its own short."""
    src = COPIES.replace("{\n", "{\n  for (int i = 0; i < (int)src[100]; i++) dst[200 + i] = vload16(i, src);\n", 1)
    result = compiler.compile_source(src, "", ROLLED)
    assert result.ok, result.log
    plain = compiler.compile_source(src, "", compiler.DeviceCaps())
    assert _counts(result.spirv) == _counts(plain.spirv)
    assert result.spirv == plain.spirv
