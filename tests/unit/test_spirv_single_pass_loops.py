"""Loops that StructurizeCFG left unable to repeat (vkcl/compiler/spirv_single_pass_loops.py):
found in clspv's output, built again without loop rotation, refused if still there."""
from pathlib import Path

import pytest

from vkcl import compiler
from vkcl.compiler import loop_exits, spirv_single_pass_loops

from conftest import FUNCTION_START, MODULE_TYPES

# The reproducer: a flagged break, then a return on the flag.
FLAG_THEN_RETURN = (Path(__file__).resolve().parent.parent / "kernels" / "two_exit_loop.cl").read_text()

ORDINARY_LOOPS = [
    "kernel void k(global float *o, int n) { float s = 0; for (int i = 0; i < n; i++) s += o[i]; o[0] = s; }",
    "kernel void k(global int *o, int n) { int i = 0; do { o[i] += i; i++; } while (i < n && o[i] != 3); }",
    "kernel void k(global int *o, int n) { for (int i = 0; i < n; i++) { if (o[i] < 0) break; o[i] *= 2; } }",
    """kernel void k(global int *o, int n) { for (int j = 0; j < n; j++) for (int i = 0; i < n; i++) {
         if (o[i] == j) continue; if (o[i] > 100) break; o[i + n * j] += 1; } }""",
    "kernel void k(global int *o, int n) { while (1) { if (o[n] == 0) return; n = o[n]; } }",
    # leaving nested loops through a flag: built right, nothing to refuse
    """kernel void k(global uint *o, uint n) { uint s = 0, found = 0xffffffffu;
         for (uint r = 0; r < 4u && found == 0xffffffffu; r++) for (uint i = 0; i < n; i++) {
           s = s * 1103515245u + (i ^ 12345u); if (s % 4093u == 1000u) { found = r * n + i; break; } }
         o[0] = s; o[1] = found; }""",
]

# A return and a goto out of an inner loop inside a rolled outer loop: the inner loop's
# back-edge comes out as a second, never-taken edge to the outer header (lost_back_edges).
LOST_INNER_LOOPS = [
    """kernel void k(global uint *o, uint n) { uint s = 0;
         #pragma nounroll
         for (uint r = 0; r < 4u; r++) {
           #pragma nounroll
           for (uint i = 0; i < n; i++) { s = s * 1103515245u + (i ^ 12345u);
             if (s % 4093u == 1000u) { o[0] = s; o[1] = r * n + i; return; } } } }""",
    """kernel void k(global uint *o, uint n) { uint s = 0, found = 0xffffffffu;
         #pragma nounroll
         for (uint r = 0; r < 4u; r++) for (uint i = 0; i < n; i++) { s = s * 1103515245u + (i ^ 12345u);
           if (s % 4093u == 1000u) { found = r * n + i; goto out; } }
       out: o[0] = s; o[1] = found; }""",
]


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    # A build made with the check turned off must not reach the cache other tests read.
    monkeypatch.setenv("VKCL_CACHE", "0")


@pytest.mark.parametrize("caps", [compiler.DeviceCaps(), compiler.DeviceCaps(loop_unroll_count=16,
                                                                               loop_unroll_size=1000)],
                         ids=["default", "unrolling"])
def test_miscompiled_loop_is_found_and_rebuilt(monkeypatch, caps):
    built = compiler.compile_source(FLAG_THEN_RETURN, "", caps)
    assert built.ok, built.log
    assert spirv_single_pass_loops.single_pass_loops(built.spirv) == []
    # What clspv gives with rotation, that the check sends back: its loop never repeats.
    monkeypatch.setattr(spirv_single_pass_loops, "single_pass_loops", lambda binary: [])
    raw = compiler.compile_source(FLAG_THEN_RETURN, "", caps)
    monkeypatch.undo()
    assert raw.ok and len(spirv_single_pass_loops.single_pass_loops(raw.spirv)) == 1


@pytest.mark.parametrize("index", range(len(ORDINARY_LOOPS)))
def test_ordinary_loops_are_not_taken_for_it(monkeypatch, index):
    found, check = [], spirv_single_pass_loops.single_pass_loops
    monkeypatch.setattr(spirv_single_pass_loops, "single_pass_loops", lambda binary: found.append(check(binary)) or [])
    built = compiler.compile_source(ORDINARY_LOOPS[index], "", compiler.DeviceCaps())
    assert built.ok, built.log
    assert found == [[]]  # clspv's own output, checked once: no rebuild


def test_loop_still_cut_short_is_refused(monkeypatch):
    monkeypatch.setattr(spirv_single_pass_loops, "single_pass_loops", lambda binary: [1])
    built = compiler.compile_source(ORDINARY_LOOPS[0], "", compiler.DeviceCaps())
    assert not built.ok and built.status == "error"
    assert spirv_single_pass_loops.REFUSAL in built.log


@pytest.mark.parametrize("index", range(len(LOST_INNER_LOOPS)))
@pytest.mark.parametrize("caps", [compiler.DeviceCaps(), compiler.DeviceCaps(loop_unroll_count=16,
                                                                               loop_unroll_size=1000)],
                         ids=["default", "unrolling"])
def test_an_inner_loop_whose_back_edge_was_lost_is_built_again(monkeypatch, index, caps):
    # built a third time, with the exits taken through the loops' headers (loop_exits)
    built = compiler.compile_source(LOST_INNER_LOOPS[index], "", caps)
    assert built.ok, built.log
    assert spirv_single_pass_loops.single_pass_loops(built.spirv) == []
    # without that, refused: neither rotation off nor anything else gets the loop back
    monkeypatch.setattr(loop_exits, "rewrite", lambda ir: None)
    refused = compiler.compile_source(LOST_INNER_LOOPS[index], "", caps)
    assert not refused.ok and spirv_single_pass_loops.REFUSAL in refused.log, refused.log


def test_the_lost_back_edge_is_found():
    # clspv's own output (llvmpipe's forced unrolling, both loops rolled by their pragmas): the
    # edge is there, and only the nested-loop rule finds it
    import unittest.mock
    caps = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000)
    with unittest.mock.patch.object(spirv_single_pass_loops, "single_pass_loops", lambda binary: []):
        raw = compiler.compile_source(LOST_INNER_LOOPS[0], "", caps)
    assert raw.ok
    lost = spirv_single_pass_loops.lost_back_edges(raw.spirv)
    assert len(lost) == 1 and spirv_single_pass_loops.single_pass_loops(raw.spirv) == lost


STUCK_LOOP = (Path(__file__).resolve().parent.parent / "kernels" / "stuck_loop.cl").read_text()


@pytest.mark.parametrize("caps", [compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000), compiler.DeviceCaps()],
                         ids=["llvmpipe", "other"])
def test_the_stuck_loops_kernel_builds_through_its_do_while_latch(caps):
    # tests/kernels/stuck_loop.cl: every way of building it but loop_exits keeps a lost loop;
    # loop_exits' first routing of the do-while's exits through its latch (6c8fb55, reverted)
    # had a one-block loop spinning on its exit code, which only stuck_loops (below) sees. With
    # an exit going on from the inner loop into the latch's test, not the latch again
    # (tests/unit/test_loop_exits_on_host.py), it builds with neither mark on both devices' caps
    # (what it computes: tests/icd/test_structurized_loops.py).
    import unittest.mock
    with unittest.mock.patch.object(spirv_single_pass_loops, "single_pass_loops", lambda binary: []):
        plain = compiler.compile_source(STUCK_LOOP, "", caps)
    assert plain.ok and spirv_single_pass_loops.single_pass_loops(plain.spirv)  # the fault, without loop_exits
    built = compiler.compile_source(STUCK_LOOP, "", caps)
    assert built.ok, built.log
    assert not spirv_single_pass_loops.single_pass_loops(built.spirv)


STUCK_HEAD = MODULE_TYPES + "%c2 = OpConstant %uint 2\n" + FUNCTION_START + """OpBranch %h
%h = OpLabel
%code = OpPhi %uint %x %entry %BACK %h
%go = %TEST %bool %code %c2
OpLoopMerge %out %h None
OpBranchConditional %go %out %h
%out = OpLabel
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize("back, test, stuck", [
    ("%c2", "OpINotEqual", True),    # code 2 loops back with 2: forever
    ("%c2", "OpIEqual", False),      # code 2 leaves
    ("%x", "OpINotEqual", False),    # not a constant: not known
])
def test_stuck_loops_evaluates_the_back_edge(assemble_spirv, back, test, stuck):
    module = assemble_spirv(STUCK_HEAD.replace("%BACK", back).replace("%TEST", "OpINotEqual" if test == "OpINotEqual" else "OpIEqual"))
    assert bool(spirv_single_pass_loops.stuck_loops(module)) == stuck
