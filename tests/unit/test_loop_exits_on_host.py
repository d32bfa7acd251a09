"""compiler/loop_exits.py changes no result: random nested-loop kernels
(tests/differential/nested_loops.py) run on the host before and after the rewrite
(tests/host_kernels.py), with their `return`s, `goto`s, `break`s and `continue`s out of `for`,
`while` and do-while loops. The exits of the do-while loops go through their latches; where
the block after an inner loop is that latch (a do-while whose body ends in the inner loop), an
exit going on from the inner loop once dispatched back into that same block, forever: seeds 678,
679, 684, 687, 711, 713 and 714 (lavapipe gave wrong values for 678 and 711, and a launch that
never ended)."""
import random
import re
import shutil
import sys
from pathlib import Path

import pytest

from host_kernels import build, front_ir, run
from vkcl import compiler
from vkcl.compiler import loop_exits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "differential"))
import nested_loops  # noqa: E402

CAPS = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000, max_nesting=78)  # llvmpipe's
SEEDS = (678, 679, 684, 687, 711, 713, 714, 100, 119, 641, 700, 701)
# n and m: the loops' counts, none (0) and more than the hits need
COUNTS = ((40, 7), (3, 0), (0, 5), (100, 100))


# and with NESTED_LOOPS_SHAPES=extended: `switch` exits (103, 112, 113) and `++i` conditions
# (100, 101, 110), which loop_exits routes since the twenty-sixth session
EXTENDED_SEEDS = (100, 101, 103, 110, 112, 113)


@pytest.mark.parametrize("seed, extended", [(s, False) for s in SEEDS] + [(s, True) for s in EXTENDED_SEEDS])
def test_the_rewrite_computes_what_the_kernel_did(seed, extended, tmp_path, monkeypatch):
    monkeypatch.setattr(nested_loops, "EXTENDED", extended)
    ir = front_ir(nested_loops.kernel(random.Random(seed)), compiler.parse_options("").clspv_args(CAPS))
    rewritten = loop_exits.rewrite(ir)
    assert rewritten is not None, "the kernel has exits out of several loops"
    before, after = build(ir, tmp_path, "before"), build(rewritten, tmp_path, "after")
    for n, m in COUNTS:
        expected = run(before, n, m)
        assert expected != "hang"
        assert run(after, n, m) == expected, (n, m)


# A `break` out of one inner loop of a do-while: that loop's exit block becomes the dispatch of
# the exits under way, and the `break`'s own block only branches there.
BREAK_IN_DO_WHILE = """kernel void k(global uint *o, uint n, uint m) {
  uint g = get_global_id(0), s = g, t = 0, i, j;
  for (i = 0; i < 3u; i++) {
    j = 0;
    do { j++; s = s * 1103515245u + j; t++;
         if ((s % 13u) == 6u) { o[2 * g] = s; o[2 * g + 1] = t; return; }
         for (uint k = 0; k < n + g; k++) { s = s * 1103515245u + k; t++; if ((s % 13u) == 9u) break; }
    } while (j < n);
  }
  o[2 * g] = s; o[2 * g + 1] = t;
}"""


def test_the_exit_local_is_volatile():
    # LLVM's jump threading and CFG simplification read the local where an exit stored it and
    # sent the exit straight out of the loops again, undoing the routing: seeds 678, 689, 703,
    # 715, 721 and 799 of tests/differential/nested_loops.py kept a lost loop in every build and
    # were refused on every device (tests/icd/test_structurized_loops.py builds them now).
    out = loop_exits.rewrite(front_ir(BREAK_IN_DO_WHILE, compiler.parse_options("").clspv_args(CAPS)))
    assert out is not None
    accesses = [line for line in out.splitlines() if loop_exits.EXIT + "," in line]
    assert accesses and all(" volatile " in line for line in accesses), accesses


def test_a_break_leading_back_to_its_dispatch_goes_on_after_it(tmp_path):
    # The `break`'s block branches to the inner loop's exit block, which is the dispatch: once
    # the local is cleared the exit continues after the dispatch, not into it again (with the
    # local volatile, that edge made a loop no pass could remove).
    ir = front_ir(BREAK_IN_DO_WHILE, compiler.parse_options("").clspv_args(CAPS))
    out = loop_exits.rewrite(ir)
    to = re.findall(r"^vkcl\.e\d+\.to\d+:\n.*\n  br label %(vkcl\.e\d+\.rest)$", out, re.M)
    assert to, "a cleared exit goes on after its dispatch"
    before, after = build(ir, tmp_path, "before"), build(out, tmp_path, "after")
    for n, m in COUNTS:
        assert run(after, n, m) == run(before, n, m), (n, m)


# Loops left by a `return` out of a loop around them, in the shapes loop_exits refused until the
# twenty-sixth session (clspv's structurizer then lost a loop and the program was refused on
# every device): tests/kernels/exit_*.cl (tests/icd/test_structurized_loops.py runs them).
LEFT_ALONE_BEFORE = ("exit_preincrement_while", "exit_preincrement_do_while", "exit_from_switch")


@pytest.mark.parametrize("shape", LEFT_ALONE_BEFORE)
def test_shapes_left_alone_before_are_routed_and_compute_the_same(shape, tmp_path):
    source = (Path(__file__).resolve().parent.parent / "kernels" / f"{shape}.cl").read_text()
    ir = front_ir(source, compiler.parse_options("").clspv_args(CAPS))
    out = loop_exits.rewrite(ir)
    assert out is not None
    before, after = build(ir, tmp_path, "before"), build(out, tmp_path, "after")
    for n, m in COUNTS + ((7, 40), (1, 3)):
        expected = run(before, n, m)
        assert expected != "hang"
        assert run(after, n, m) == expected, (n, m)



# IL programs (clCreateProgramWithIL): their bitcode comes from llvm-spirv-15 in SSA form, phis
# and values across blocks, which loop_exits cannot route through; il.demote_phis puts them in
# locals first (LLVM's reg2mem). Optimized IR then differs from the front end's in two ways that
# loop_exits follows since the twenty-seventh session: a rotated loop's test reaches its header
# through a block of its own that copies the loop's values (a split critical edge), and a loop
# may go on where its condition is false (`br i1 %done, label %out, label %in`). Without them
# no -O2 kernel here was routed, and the programs were refused on every device.
IL_TOOLS = ("clang-15", "llvm-spirv-15", "opt-15")
IL_SEEDS = (678, 711, 100, 119, 641, 700)
SEARCH = """kernel void k(global uint *o, uint n, uint m) {
  uint g = get_global_id(0), s = g;
  for (uint r = 0; r < m; r++)
    for (uint i = 0; i < n; i++) {
      s = s * 1103515245u + (i ^ 12345u);
      if (s % 4093u == 1000u) { o[2 * g] = s; o[2 * g + 1] = r * n + i; return; }
    }
  o[2 * g] = s; o[2 * g + 1] = 0xffffffffu;
}"""


def il_ir(source: str, level: str, where: Path) -> str:
    """What loop_exits gets of an IL program made of `source`: clang-15 at `level` to bitcode,
    llvm-spirv-15 to SPIR-V and back (as vkcl reads IL), its phis demoted (il.demote_phis)."""
    import subprocess
    from vkcl.compiler import il
    (where / "k.cl").write_text(source)
    subprocess.run(["clang-15", "-cl-std=CL1.2", "-target", "spir64", f"-{level}", "-emit-llvm", "-c", "-w", "-Xclang",
                    "-finclude-default-header", "k.cl", "-o", "k.bc"], cwd=where, check=True)
    subprocess.run(["llvm-spirv-15", "k.bc", "-o", "k.spv"], cwd=where, check=True)
    bitcode, log = il.to_bitcode((where / "k.spv").read_bytes(), 60)
    assert bitcode is not None, log
    ir, log = il.demote_phis(bitcode, 60)
    assert ir is not None, log
    return ir


@pytest.mark.skipif(not all(shutil.which(t) for t in IL_TOOLS), reason="needs clang-15, llvm-spirv-15 and opt-15")
@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("seed", (None, *IL_SEEDS))
def test_an_il_programs_exits_are_routed_and_compute_the_same(seed, level, tmp_path):
    source = SEARCH if seed is None else nested_loops.kernel(random.Random(seed))
    ir = il_ir(source, level, tmp_path)
    assert " phi " not in ir
    rewritten = loop_exits.rewrite(ir)
    assert rewritten is not None, "the kernel has exits out of several loops"
    before, after = build(ir, tmp_path, "before"), build(rewritten, tmp_path, "after")
    for n, m in COUNTS + (((3000, 4),) if seed is None else ()):
        expected = run(before, n, m)
        assert expected != "hang"
        assert run(after, n, m) == expected, (n, m)
