"""vkcl.compiler.spirv_extra_lanes: lanes past a work-group's width return first thing in the
entry points of llvmpipe's modules with loops, the result validates for Vulkan 1.3 (with the
resume pass before it and the loop-cut probe after it, as on lavapipe), and other devices'
SPIR-V is unchanged (tests/icd/test_resumed_loops.py and test_long_loops.py: what kernels
compute with it)."""
import shutil
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler import spirv, spirv_extra_lanes, spirv_resume
from vkcl.compiler.spirv_edit import Module

LLVMPIPE = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000, resume_limit=7500)
OTHER = compiler.DeviceCaps()
LOOP = """kernel void k(global uint *o, uint n) { local uint l[64]; uint lid = get_local_id(0); uint s = lid;
    #pragma nounroll
    for (uint i = 0; i < n + lid; i++) s = s * 7u + i;
    l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);
    o[get_global_id(0)] = l[(lid + 1) % get_local_size(0)]; }"""
sv = pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")


def _val(tmp_path, data: bytes) -> None:
    (tmp_path / "m.spv").write_bytes(data)
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "m.spv")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _first_blocks(data: bytes, name: str = "k"):
    m = Module(data)
    entry = next(i for i in m.insts if i[0] & 0xFFFF == 15 and spirv.literal_string(i, 3, len(i))[0] == name)
    start = next(k for k, i in enumerate(m.insts) if i[0] & 0xFFFF == 54 and i[2] == entry[2])
    end = next(k for k in range(start, len(m.insts)) if m.insts[k][0] & 0xFFFF == 56)
    return m, spirv.function_blocks(m.insts[start:end + 1])[1]


@sv
def test_resumed_kernel_returns_its_extra_lanes_first(tmp_path):
    r = compiler.compile_source(LOOP, "", LLVMPIPE)
    assert r.ok, r.log
    _val(tmp_path, r.spirv)
    assert set(spirv_extra_lanes.marked_entry_points(r.spirv)) == {"k"}
    # suspends by work-group, and may do so in groups of any width (core/resume.py)
    assert spirv_resume.resumed_entry_points(r.spirv)["k"] == (spirv_resume.resumed_entry_points(r.spirv)["k"][0], True, True)
    m, blocks = _first_blocks(r.spirv)
    head, past = blocks[0], blocks[1]
    # the extra lanes' way: the loop-cut probe (spirv_loop_cuts), then a return, never the rest
    by_label = {blk[0][1]: blk for blk in blocks}
    seen, todo, returns = set(), [past[0][1]], 0
    while todo:
        label = todo.pop()
        if label in seen:
            continue
        seen.add(label)
        term = by_label[label][-1]
        returns += term[0] & 0xFFFF == 253
        todo += [term[1]] if term[0] & 0xFFFF == 249 else list(term[2:4]) if term[0] & 0xFFFF == 250 else []
    assert returns and head[-1][2] not in seen and len(seen) < 10
    compare = next(i for i in head if i[0] & 0xFFFF == 176)  # x < width
    size = next(i for i in m.insts if i[0] & 0xFFFF == 51 and i[2] in
                {d[1] for d in m.insts if d[0] & 0xFFFF == 71 and len(d) == 4 and tuple(d[2:]) == (11, 25)})
    assert compare[4] == size[3]  # the WorkgroupSize builtin's x
    term = head[-1]
    real = next(i for i in head if i[0] & 0xFFFF == 167 and i[2] == term[1])  # x < width and (lane 0 or width > 1)
    assert compare[2] in real[3:]
    assert term[0] & 0xFFFF == 250 and term[3] == past[0][1] and head[-2][1] == term[2]


@sv
def test_kernels_without_resumable_loops_get_it_too(tmp_path):
    # a kernel of llvmpipe whose extra lanes take a long loop no work-item takes: they return
    src = """kernel void k(global uint *o, global uint *w) { uint s = 0; uint t = atomic_or(&w[0], 0u);
        if (t == 0u) { for (uint i = 0; i < 70000u; i++) s = s * 7u + i; } o[get_global_id(0)] = s; }"""
    r = compiler.compile_source(src, "", LLVMPIPE)
    assert r.ok, r.log
    _val(tmp_path, r.spirv)
    assert set(spirv_extra_lanes.marked_entry_points(r.spirv)) == {"k"}


def test_other_devices_and_loopless_modules_are_unchanged():
    r = compiler.compile_source(LOOP, "", OTHER)
    assert r.ok and spirv_extra_lanes.marked_entry_points(r.spirv) == {}
    flat = "kernel void k(global uint *o) { o[get_global_id(0)] = get_local_id(0); }"
    r = compiler.compile_source(flat, "", LLVMPIPE)
    assert r.ok and spirv_extra_lanes.marked_entry_points(r.spirv) == {}
    assert spirv_extra_lanes.return_extra_lanes(r.spirv) == r.spirv


@sv
@pytest.mark.skipif(shutil.which("spirv-as") is None, reason="spirv-as not installed")
def test_width_from_the_local_size_mode(tmp_path):
    # a module with no WorkgroupSize builtin and no LocalInvocationId: the width is LocalSize's x,
    # and the builtin is declared and named in the entry point's interface
    asm = """OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 12 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u9 = OpConstant %uint 9
%main = OpFunction %void None %fn
%entry = OpLabel
OpBranch %head
%head = OpLabel
%i = OpPhi %uint %u0 %entry %next %body
%more = OpULessThan %bool %i %u9
OpLoopMerge %done %body None
OpBranchConditional %more %body %done
%body = OpLabel
%next = OpIAdd %uint %i %u1
OpBranch %head
%done = OpLabel
OpReturn
OpFunctionEnd
"""
    (tmp_path / "m.spvasm").write_text(asm)
    subprocess.run(["spirv-as", "--target-env", "vulkan1.3", "-o", str(tmp_path / "in.spv"),
                    str(tmp_path / "m.spvasm")], check=True)
    out = spirv_extra_lanes.return_extra_lanes((tmp_path / "in.spv").read_bytes())
    _val(tmp_path, out)
    assert set(spirv_extra_lanes.marked_entry_points(out)) == {"main"}
    m, blocks = _first_blocks(out, "main")
    compare = next(i for i in blocks[0] if i[0] & 0xFFFF == 176)
    assert m.constants[compare[4]][1] == (12,)
    # the loop's phi now names the split block as its predecessor
    phi = next(i for blk in blocks for i in blk if i[0] & 0xFFFF == 245)
    assert phi[4] == blocks[2][0][1]



def _labels(data: bytes) -> list[int]:
    words = spirv.to_words(data)
    return [words[pos + 1] for pos, op, _ in spirv.instructions(words) if op == spirv.OP_LABEL]


@sv
def test_the_branch_taken_out_for_widths_without_extra_lanes(tmp_path):
    # core/ndrange makes the pipelines of groups whose width is a multiple of 8 from this
    # module: no branch to the block that returns the extra lanes, and that block gone
    r = compiler.compile_source(LOOP, "", LLVMPIPE)
    past = spirv_extra_lanes.marked_entry_points(r.spirv)["k"]
    plain = spirv_extra_lanes.without_extra_lanes(r.spirv)
    _val(tmp_path, plain)
    assert past in _labels(r.spirv) and past not in _labels(plain)
    assert len(_labels(plain)) == len(_labels(r.spirv)) - 1
    unmarked = compiler.compile_source(LOOP, "", OTHER)
    assert spirv_extra_lanes.without_extra_lanes(unmarked.spirv) is unmarked.spirv
