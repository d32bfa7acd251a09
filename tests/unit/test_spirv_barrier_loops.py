"""One-block loops that wait at a barrier unrolled in the SPIR-V on llvmpipe
(compiler/spirv_barrier_loops.py; DeviceCaps.loop_unroll_count): LLVM leaves them rolled, and
llvmpipe cuts them after 65,535 back-edges. The results are checked on lavapipe by
tests/icd/test_long_loops.py (test_barrier_loop*); here: the shape, validity and limits."""
import subprocess

from vkcl import compiler
from vkcl.compiler import spirv, spirv_fixes
from vkcl.compiler.spirv_barrier_loops import unroll_barrier_loops

UNROLLING = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000)
OP_CONTROL_BARRIER, OP_LOOP_MERGE = 224, 246
SRC = """kernel void k(global uint *o, uint n, int tag) {
  local uint l[64]; uint lid = get_local_id(0), lsz = get_local_size(0); uint s = lid + tag;
  for (uint i = lid; i < n; i += lsz) {
    l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);
    s = l[(lid + 1) & 63] * 1103515245u + (i ^ 12345u); barrier(CLK_LOCAL_MEM_FENCE);
  }
  o[get_global_id(0)] = s;
}"""


def _count(data: bytes, opcode: int) -> int:
    words = spirv.to_words(data)
    return sum(1 for _, op, _ in spirv.instructions(words) if op == opcode)


def _valid(data: bytes, tmp_path) -> bool:
    path = tmp_path / "m.spv"
    path.write_bytes(data)
    return subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)]).returncode == 0


def test_barrier_loop_is_copied_16_times_on_llvmpipe(tmp_path):
    result = compiler.compile_source(SRC.replace("tag", "tag1"), "", UNROLLING)
    assert result.ok, result.log
    assert _count(result.spirv, OP_CONTROL_BARRIER) == 2 * 16
    assert _count(result.spirv, OP_LOOP_MERGE) == 2  # and the loop-cut probe's (spirv_loop_cuts)
    assert _valid(result.spirv, tmp_path)


def test_other_devices_spirv_is_byte_identical(monkeypatch):
    def refuse(*args):
        raise AssertionError("unroll_barrier_loops ran for a device without loop_unroll_count")
    plain = compiler.compile_source(SRC.replace("tag", "tag2"), "", compiler.DeviceCaps())
    monkeypatch.setattr(spirv_fixes, "unroll_barrier_loops", refuse)
    for caps in (compiler.DeviceCaps(), compiler.DeviceCaps(unroll_runtime_loops=True, unroll_partial_threshold=300)):
        result = compiler.compile_source(SRC.replace("tag", "tag3"), "", caps)
        assert result.ok, result.log
        assert _count(result.spirv, OP_CONTROL_BARRIER) == 2
    assert _count(plain.spirv, OP_CONTROL_BARRIER) == 2


def test_copies_stay_within_the_size_budget(tmp_path):
    rolled = compiler.compile_source(SRC.replace("tag", "tag4"), "", compiler.DeviceCaps())
    assert rolled.ok, rolled.log
    four = unroll_barrier_loops(rolled.spirv, 16, 60)  # a body of 14 instructions with its phis: 4 copies fit in 60
    assert _count(four, OP_CONTROL_BARRIER) == 2 * 4
    assert _valid(four, tmp_path)
    assert unroll_barrier_loops(rolled.spirv, 16, 15) == rolled.spirv  # not even 2 copies fit
    assert unroll_barrier_loops(rolled.spirv, 1, 1000) == rolled.spirv


def test_loops_without_barriers_are_left_to_llvm():
    src = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s = s * 3u + i; o[0] = s; }"
    rolled = compiler.compile_source(src, "", compiler.DeviceCaps())
    assert unroll_barrier_loops(rolled.spirv, 16, 1000) == rolled.spirv


def test_decorations_are_repeated_for_each_copy(tmp_path):
    # clspv decorates float operations NoContraction; each copy of one keeps it
    src = """kernel void k(global float *o, global const float *a, uint n) { local float l[64]; uint lid = get_local_id(0);
      float s = 0;
      for (uint i = 0; i < n; i++) { l[lid] = a[i & 255]; barrier(CLK_LOCAL_MEM_FENCE);
        s = s * a[(i * 7) & 255] - l[(lid + 1) & 63]; barrier(CLK_LOCAL_MEM_FENCE); }
      o[lid] = s; }"""
    rolled = compiler.compile_source(src, "", compiler.DeviceCaps())
    unrolled = compiler.compile_source(src, "", UNROLLING)
    assert rolled.ok and unrolled.ok, rolled.log + unrolled.log
    text = [subprocess.run(["spirv-dis", "-"], input=r.spirv, capture_output=True).stdout.count(b"NoContraction")
            for r in (rolled, unrolled)]
    assert text[0] >= 1 and text[1] == 16 * text[0]
    assert _count(unrolled.spirv, OP_CONTROL_BARRIER) == 2 * 16
    assert _valid(unrolled.spirv, tmp_path)


SHAPES = {
    # pyopencl's scan_final_update: ifs in the body, one ending at the continue target
    "ifs": """kernel void k(global uint *o, global const uint *in, uint n) { local uint l[64]; uint lid = get_local_id(0);
      uint prev = 7, h = lid;
      for (uint base = 0; base < n; base += 64) { uint i = base + lid;
        if (i < n) l[lid] = in[i & 1023] + base;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid != 0) prev = l[lid - 1];
        if (i < n) o[i] = prev;
        if (lid == 0) prev = l[63];
        barrier(CLK_LOCAL_MEM_FENCE); }
      o[n + lid] = h + prev; }""",
    "continue_and_break": """kernel void k(global uint *o, global const uint *in, uint n) { local uint l[64]; uint lid = get_local_id(0);
      uint s = 0;
      for (uint i = 0; i < n; i++) { l[lid] = in[i]; barrier(CLK_LOCAL_MEM_FENCE);
        uint v = l[(lid + 1) & 63]; barrier(CLK_LOCAL_MEM_FENCE);
        if (v == 3) continue;
        if (v == 5) break;
        s += v * i; }
      o[lid] = s; }""",
    "nested": """kernel void k(global uint *o, global const uint *in, uint n, uint m) { local uint l[64]; uint lid = get_local_id(0);
      uint s = 0;
      for (uint i = 0; i < n; i++) for (uint j = 0; j < m; j++) {
        l[lid] = in[i ^ j] + s; barrier(CLK_LOCAL_MEM_FENCE); s = l[(lid + j) & 63]; barrier(CLK_LOCAL_MEM_FENCE); }
      o[lid] = s; }""",
    # the inner loop is copied with the outer one, then each copy of it on its own: decorations
    # of copies of copies
    "nested_float": """kernel void k(global float *o, global const float *a, uint n, uint m) { local float l[64];
      uint lid = get_local_id(0); float s = 1;
      for (uint i = 0; i < n; i++) for (uint j = 0; j < m; j++) { l[lid] = s * a[j]; barrier(CLK_LOCAL_MEM_FENCE);
        s = l[(lid + 1) & 63] - a[i]; barrier(CLK_LOCAL_MEM_FENCE); }
      o[lid] = s; }""",
    "two_loops": """kernel void k(global float *o, global const float *in, uint n) { local float l[64]; uint lid = get_local_id(0);
      float s = 0, t = 1;
      for (uint i = lid; i < n; i += 64) { l[lid] = in[i]; barrier(CLK_LOCAL_MEM_FENCE); s += l[63 - lid]; barrier(CLK_LOCAL_MEM_FENCE); }
      for (uint i = 0; i < n; i++) { l[lid] = s * t; barrier(CLK_LOCAL_MEM_FENCE); t = fmax(t, l[i & 63]); barrier(CLK_LOCAL_MEM_FENCE); }
      o[lid] = s + t; }""",
}


def test_loops_of_several_blocks_are_copied_and_stay_valid(tmp_path):
    counts = {}
    for name, src in SHAPES.items():
        rolled = compiler.compile_source(src, "", compiler.DeviceCaps())
        unrolled = compiler.compile_source(src, "", UNROLLING)
        assert rolled.ok and unrolled.ok, rolled.log + unrolled.log
        assert _valid(unrolled.spirv, tmp_path), name
        counts[name] = (_count(rolled.spirv, OP_CONTROL_BARRIER), _count(unrolled.spirv, OP_CONTROL_BARRIER))
        text = subprocess.run(["spirv-dis", "-"], input=unrolled.spirv, capture_output=True).stdout
        assert text.count(b"NoContraction") == sum(text.count(op) for op in (b"OpFMul", b"OpFSub", b"OpFAdd")), name
    assert counts["ifs"] == (2, 2 * 16)
    assert counts["two_loops"] == (4, 4 * 16)
    assert all(unrolled >= rolled for rolled, unrolled in counts.values()), counts
