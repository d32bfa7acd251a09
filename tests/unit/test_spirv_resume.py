"""vkcl.compiler.spirv_resume: which entry points become resumable, that the result validates for
Vulkan 1.3 (with the loop-cut probe after it, as on lavapipe), and that other devices' SPIR-V is
unchanged (tests/icd/test_resumed_loops.py: what the passes compute)."""
import shutil
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler import spirv_loop_cuts, spirv_resume, spirv_resume_plan

LLVMPIPE = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000, resume_limit=7500)
OTHER = compiler.DeviceCaps()

SHAPES = {
    # two loops in a row, a value between them, the first guarded by an `if`
    "sequential": """kernel void k(global uint *o, global uint *t, uint n) {
        uint s = 0;
        if (n > 3) { for (uint i = 0; i < n; i++) { s = s * 3u + i; t[i & 255] = s; } }
        uint last = t[n & 255];
        for (uint i = 0; i < n; i++) s ^= t[i & 255] + last;
        o[get_global_id(0)] = s; }""",
    # state of many types: ulong, double, float, half, bool, a pointer that moves, a vector
    "types": """#pragma OPENCL EXTENSION cl_khr_fp16 : enable
        kernel void k(global float *o, global const float *a, uint n) {
        ulong u = get_global_id(0); double d = a[0]; float x = a[1]; half h = (half)a[2]; bool b = false;
        global const float *p = a; float4 v = (float4)(a[3]);
        #pragma nounroll
        for (uint i = 0; i < n; i++) {
            u = u * 6364136223846793005ul + i; d += a[i & 7]; x += *p; h += (half)1.0f; b = !b;
            p = (p == a + 7) ? a : p + 1; v = v.yzwx + (float4)(x);
        }
        o[get_global_id(0)] = (float)u + (float)d + x + (float)h + (b ? 1.0f : 0.0f) + v.x; }""",
    # break, continue and a return inside the loop, a while loop after it
    "exits": """kernel void k(global uint *o, global const uint *a, uint n) {
        uint s = get_global_id(0);
        for (uint i = 0; i < n; i++) { if (a[i & 15] == 7) continue; if (s == 99) break; if (s == 98) return; s += a[i & 15]; }
        while (s > 1000) s = s / 3;
        o[get_global_id(0)] = s; }""",
    # private arrays written in the loop: their contents go to the record after the loop's words
    "private_arrays": """kernel void k(global uint *o, uint n, uint j) { uint p[16]; float2 q[3][2];
        for (uint i = 0; i < 16; i++) p[i] = i * j;
        for (uint i = 0; i < 6; i++) q[i / 2][i % 2] = (float2)(i);
        uint s = 0; for (uint i = 0; i < n; i++) { s += p[(i * j) & 15]; p[s & 15] = i; q[s % 3][i & 1].y += 1.0f; }
        o[get_global_id(0)] = s + (uint)q[j % 3][1].y; }""",
    # inner loops that suspend too: after one, values from before it, an `if`, a store
    "nested": """kernel void k(global uint *o, global uint *rows, uint n) {
        uint g = get_global_id(0), total = 0;
        #pragma nounroll
        for (uint r = 0; r < 3u; r++) {
            uint s = g + r, before = s ^ 5u;
            #pragma nounroll
            for (uint i = 0; i < n; i++) s = s * 3u + i;
            if (s & 1u) total ^= before;
            rows[g * 3u + r] = s; total = total * 31u + s; }
        o[g] = total; }""",
    # an outer loop unrolled four times by LLVM: five copies of its inner loop
    "nested_unrolled": """kernel void k(global const float *a, global float *out, int rows, int n) {
        int g = get_global_id(0); float total = 0;
        for (int r = 0; r < rows; r++) { float s = 0;
            for (int i = 0; i < n; i++) s += a[(r * n + i + g) % (rows * n)];
            out[g * rows + r] = s; total += s; }
        out[get_global_size(0) * rows + g] = total; }""",
    # three loops deep, all rolled: the innermost suspends too, and its copy's first part
    # leaves the middle loop and the outer one (a tree of parts: spirv_resume_plan.LoopPlan._segments)
    "three_deep": """kernel void k(global uint *o, uint n) { uint g = get_global_id(0), s = g;
        #pragma nounroll
        for (uint a = 0; a < n; a++)
            #pragma nounroll
            for (uint b = 0; b < n; b++)
                #pragma nounroll
                for (uint c = 0; c < n + g; c++) s = s * 3u + (a ^ b ^ c);
        o[g] = s; }""",
    # two inner loops holding loops, the second entered from the first's latch (its header is
    # the first's merge block, whose phi takes a value of the first's body that a record of
    # the second cannot keep: the copy drops that edge)
    "inner_loops_holding_loops": """kernel void k(global uint *o, uint n) { uint g = get_global_id(0), s = g, x = 1;
        #pragma nounroll
        for (uint r = 0; r < n; r++) { s = s * 3u + (r ^ x);
            #pragma nounroll
            for (uint i = 0; i < n; i++) { s = s * 5u + i;
                #pragma nounroll
                for (uint j = 0; j < n + g; j++) { s = s * 7u + j; x = s >> 7; } }
            #pragma nounroll
            for (uint i = 0; i < n; i++) { s = s * 9u + i;
                #pragma nounroll
                for (uint j = 0; j < n + g; j++) s = s * 11u + j; } }
        o[g] = s; }""",
    # a break after the inner loop: the copy's `break` and the end of the outer trip go on in
    # parts of their own (since the twenty-fifth session; the inner loop was left to the outer
    # one before)
    "nested_break": """kernel void k(global uint *o, uint n) {
        uint g = get_global_id(0), s = g;
        #pragma nounroll
        for (uint r = 0; r < 6u; r++) {
            #pragma nounroll
            for (uint i = 0; i < n; i++) s = s * 3u + i;
            if (s % 5u == 0u) break; }
        o[g] = s; }""",
}


def _val(tmp_path, data: bytes) -> None:
    (tmp_path / "m.spv").write_bytes(data)
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "m.spv")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_resumable_shapes_validate(tmp_path, shape):
    r = compiler.compile_source(SHAPES[shape], "", LLVMPIPE)
    assert r.ok, r.log
    assert set(spirv_resume.resumed_entry_points(r.spirv)) == {"k"}
    assert spirv_loop_cuts.instrumented(r.spirv)  # the probe shares the word's constants
    _val(tmp_path, r.spirv)


BARRIER_LOOP = """kernel void k(global uint *o, uint n, local uint4 *arg) { local uint l[64]; local char c[3][5];
    uint s = 0;
    #pragma nounroll
    for (uint i = 0; i < n; i++) { l[get_local_id(0)] = s; arg[get_local_id(0)] = (uint4)(s); c[i % 3][i % 5] = (char)s;
        barrier(CLK_LOCAL_MEM_FENCE); s += l[(get_local_id(0) + 1) & 63] + arg[0].y + c[0][0]; barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = s; }"""


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
def test_barrier_loops_suspend_by_work_group(tmp_path):
    # a loop holding a barrier: the group decides together and saves its local memory
    r = compiler.compile_source(BARRIER_LOOP, "", LLVMPIPE)
    assert r.ok, r.log
    assert spirv_resume.resumed_entry_points(r.spirv)["k"][1] is True
    _val(tmp_path, r.spirv)


# Loops without a barrier in kernels with barriers: the work-group votes after the loop (at its
# merge, or at the merge of the selections around it), then all suspend or none.
SYNC_LOOPS = {
    "merge": """kernel void k(global uint *o, uint n) { local uint l[64]; uint s = get_global_id(0), i = 0;
        do { s = s * 3u + i; i++; } while (i < n + get_local_id(0));
        l[get_local_id(0)] = s; barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = l[63 - get_local_id(0)] + i; }""",
    "guarded": """kernel void k(global const uint *a, global uint *o, uint n, local uint *l) { uint s = 0, t = 0;
        if (get_global_id(0) % 3u != 0u) { t = a[0]; for (uint i = get_global_id(0); i < n; i += 7u) s = s * 3u + a[i]; }
        l[get_local_id(0)] = s; barrier(CLK_LOCAL_MEM_FENCE); o[get_global_id(0)] = l[0] ^ t; }""",
    "with_barrier_loop": """kernel void k(global uint *o, uint n) { local uint l[64]; uint p[4] = {1, 2, 3, 4}; uint s = 0;
        for (uint i = 0; i < n + get_local_id(0); i++) { p[i & 3] += i; s ^= p[(i >> 2) & 3]; }
        l[get_local_id(0)] = s;
        for (uint j = 0; j < n; j++) { barrier(CLK_LOCAL_MEM_FENCE); uint v = l[(get_local_id(0) + 1) & 63];
            barrier(CLK_LOCAL_MEM_FENCE); l[get_local_id(0)] = v + j; }
        o[get_global_id(0)] = l[get_local_id(0)]; }""",
    # two guarded loops in one selection, before the same merge (CTS basic's async copies of
    # char16): the first would pass the second on its way there, so only the second votes
    "sibling_loops": """kernel void k(global const char16 *src, global char16 *dst, local char16 *l, int per, int total) {
        for (int i = 0; i < per; i++) l[get_local_id(0) * per + i] = (char16)(char)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        event_t e = async_work_group_copy(l, src + total * get_group_id(0), (size_t)total, 0);
        wait_group_events(1, &e);
        for (int i = 0; i < per; i++) dst[get_global_id(0) * per + i] = l[get_local_id(0) * per + i]; }""",
}


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
@pytest.mark.parametrize("shape", sorted(SYNC_LOOPS))
def test_loops_without_barriers_in_barrier_kernels_vote(tmp_path, shape):
    r = compiler.compile_source(SYNC_LOOPS[shape], "", LLVMPIPE)
    assert r.ok, r.log
    assert spirv_resume.resumed_entry_points(r.spirv)["k"][1] is True
    _val(tmp_path, r.spirv)


def test_kernels_it_leaves_alone():
    # a private array of more than PRIVATE_WORDS words: the records would be too big
    big_private = """kernel void k(global uint *o, uint n, uint j) { uint p[260];
        for (uint i = 0; i < 260; i++) p[i] = i * j;
        uint s = 0; for (uint i = 0; i < n; i++) { s += p[(i * j) % 260u]; p[s % 260u] = i; }
        o[get_global_id(0)] = s; }"""
    # a loop without barriers whose way to a point every work-item reaches passes a barrier
    # (inside the same selection): parked work-items would leave the others waiting there
    barrier_on_the_way = """kernel void k(global uint *o, uint n) { local uint l[64]; uint s = get_global_id(0);
        if (n > 5u) { for (uint i = 0; i < n + get_local_id(0); i++) s = s * 3u + i;
                      barrier(CLK_LOCAL_MEM_FENCE); l[get_local_id(0)] = s; barrier(CLK_LOCAL_MEM_FENCE); s += l[0]; }
        o[get_global_id(0)] = s; }"""
    no_loops = "kernel void k(global uint *o) { o[get_global_id(0)] = 1; }"
    for src in (big_private, barrier_on_the_way, no_loops):
        r = compiler.compile_source(src, "", LLVMPIPE)
        assert r.ok, r.log
        assert spirv_resume.resumed_entry_points(r.spirv) == {}, src


def test_other_devices_spirv_is_unchanged():
    # resume_limit is 0 everywhere but llvmpipe: the pass is not run there
    for src in SHAPES.values():
        r = compiler.compile_source(src, "", OTHER)
        assert r.ok, r.log
        assert spirv_resume.resumed_entry_points(r.spirv) == {}


def test_record_stride_covers_the_saved_words():
    r = compiler.compile_source(SHAPES["types"], "", LLVMPIPE)
    stride, group, _ = spirv_resume.resumed_entry_points(r.spirv)["k"]
    assert group is False
    # epoch and loop number, then at least u (2 words), d (2), x, h, b, p (2), v (4)
    assert stride >= 4 * (spirv_resume.RECORD_WORDS + 13) and stride % 8 == 0
    r = compiler.compile_source(SHAPES["private_arrays"], "", LLVMPIPE)
    stride, _, _ = spirv_resume.resumed_entry_points(r.spirv)["k"]
    assert stride >= 4 * (spirv_resume.RECORD_WORDS + 1 + 16 + 12)  # s, p[16], q's 12 floats


def test_entry_points_with_many_loops_are_left_alone():
    # more than MAX_LOOPS outermost loops (a float16 builtin has one a lane): llvmpipe's compile
    # of the checks grew much faster than the code, and such loops are short
    def kernel(loops):
        body = " ".join(f"for (uint i = 0; i < n + {k}u; i++) s = s * 3u + a[i & 7u];" for k in range(loops))
        return f"kernel void k(global uint *o, global const uint *a, uint n) {{ uint s = 1; {body} o[0] = s; }}"
    r = compiler.compile_source(kernel(spirv_resume_plan.MAX_LOOPS), "", LLVMPIPE)
    assert set(spirv_resume.resumed_entry_points(r.spirv)) == {"k"}
    r = compiler.compile_source(kernel(spirv_resume_plan.MAX_LOOPS + 1), "", LLVMPIPE)
    assert spirv_resume.resumed_entry_points(r.spirv) == {}


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
@pytest.mark.parametrize("shape", sorted(SHAPES) + ["with_barrier_loop"])
def test_first_pass_drops_the_copies(tmp_path, shape):
    # the module the first pass's pipelines are made of: valid, without the resume copies
    r = compiler.compile_source(SHAPES.get(shape) or SYNC_LOOPS[shape], "", LLVMPIPE)
    first = spirv_resume.first_pass(r.spirv)
    assert len(first) < len(r.spirv)
    _val(tmp_path, first)
    plain = compiler.compile_source(SHAPES[sorted(SHAPES)[0]], "", OTHER)
    assert spirv_resume.first_pass(plain.spirv) is plain.spirv


@pytest.mark.parametrize("shape, count", [("three_deep", 3), ("inner_loops_holding_loops", 5), ("nested", 2),
                                          ("nested_break", 2)])
def test_loops_inside_loops_suspend_at_every_depth(monkeypatch, shape, count):
    # every loop of these kernels can outrun the budget within one trip of the loop around it,
    # so each gets its own check and copy (since the twenty-fifth session at any depth, and
    # inner loops holding loops; before, only loops directly inside an outermost one that held
    # none); test_resumable_shapes_validate checks their copies
    monkeypatch.setenv("VKCL_CACHE", "0")  # (test_resumable_shapes_validate compiled them)
    planned = []
    real = spirv_resume._Function.plan
    monkeypatch.setattr(spirv_resume._Function, "plan", lambda self: planned.append(real(self)) or planned[-1])
    assert compiler.compile_source(SHAPES[shape], "", LLVMPIPE).ok
    assert [len(loops) for loops in planned] == [count]


# tests/differential/nested_loops.py's seed 703 (three loops deep, a `return` out of two, a
# `break`, a `goto`), which builds through loop_exits: with LLVM's unrolling its deepest loop
# sits under loops of several exits each.
DEEP_UNDER_EXITS = """kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, t = 0; uint i0; uint i1; uint i2; uint i5;
#pragma nounroll
for (i0 = 0; i0 < 3u; i0++) { s = s * 1103515245u + (i0 ^ 85339u); t++; if ((s % 1009u) == 56u) continue; i1 = 0;
#pragma nounroll
do { i1++; s = s * 1103515245u + (i1 ^ 1875u); t++; if ((s % 13u) == 6u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; }
#pragma nounroll
for (i2 = 0; i2 < n + g; i2++) { s = s * 1103515245u + (i2 ^ 21168u); t++; if ((s % 13u) == 9u) break; } } while (i1 < n); }
for (i5 = 0; i5 < n + g; i5++) { s = s * 1103515245u + (i5 ^ 19782u); t++; if ((s % 211u) == 95u) goto out; } out: ;
 o[2 * g] = s; o[2 * g + 1] = t; }"""


@pytest.mark.timeout(120)
def test_copies_past_the_growth_limit_are_left_to_the_loop_around(monkeypatch):
    # each edge out of a loop around an inner loop gets a part of the copy (_segments), so the
    # parts multiply with the depth: this kernel's deepest copy came to 271 parts of 33,591
    # blocks (from 314) and the build ran for many minutes; past MAX_COPY_GROWTH the loop is
    # left to the loop around it, and the loops that fit still suspend
    monkeypatch.setenv("VKCL_CACHE", "0")
    planned = []
    real = spirv_resume._Function.plan
    monkeypatch.setattr(spirv_resume._Function, "plan", lambda self: planned.append((self, real(self))) or planned[-1][1])
    assert compiler.compile_source(DEEP_UNDER_EXITS, "", LLVMPIPE).ok
    fn, loops = planned[-1]
    assert any(len(loop.segments) > 1 for loop in loops), "inner loops suspend"
    for loop in loops:
        assert sum(len(region) for _, region, _, _ in loop.segments) <= max(
            spirv_resume_plan.MAX_COPY_GROWTH * len(fn.blocks), spirv_resume_plan.MIN_COPY_BLOCKS)


def test_outnumbered_counts_the_loops_that_may_suspend():
    # the driver builds a program again with its loops rolled where LLVM's forced unrolling left
    # more loops than may suspend (tests/icd/test_structurized_loops.py runs two such kernels)
    def kernel(outer, inner):
        body = " ".join(f"for (uint i = 0; i < n + {k}u; i++) {{ s = s * 3u + a[i & 7u];"
                        + (f" for (uint j = 0; j < n; j++) s ^= a[j & 7u] + {k}u;" if k < inner else "") + " }"
                        for k in range(outer))
        return f"kernel void k(global uint *o, global const uint *a, uint n) {{ uint s = 1; {body} o[0] = s; }}"
    limit, total = spirv_resume_plan.MAX_LOOPS, spirv_resume_plan.MAX_WITH_INNER
    for outer, inner, many in ((limit, 0, False), (limit + 1, 0, True), (total // 2, total // 2, False),
                               (total // 2 + 1, total // 2, True)):
        r = compiler.compile_source(kernel(outer, inner), "", OTHER)
        assert spirv_resume_plan.outnumbered(r.spirv) is many, (outer, inner)


def test_barrier_modules_that_grow_past_the_limit_are_left_as_they_were(monkeypatch):
    # llvmpipe splits a barrier kernel into coroutines, at a cost that grows with the square of
    # its size: Rodinia's dwt2d's first pass grew 268 KB -> 653 KB and its pipeline took more
    # than 300 s (60 s left as it was). spirv_fixes keeps such a module as it was.
    src = ("kernel void k(global uint *o, uint n) { local uint t[64]; uint l = get_local_id(0), s = l;"
           " for (uint r = 0; r < n; r++) { t[l] = s + r; barrier(CLK_LOCAL_MEM_FENCE);"
           " s = s * 3u + t[(l + 1u) % 64u]; barrier(CLK_LOCAL_MEM_FENCE); } o[get_global_id(0)] = s; }")
    plain = compiler.compile_source(src, "", compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000)).spirv
    resumed = compiler.compile_source(src, "", LLVMPIPE).spirv
    assert spirv_resume.resumed_entry_points(resumed)["k"][1], "its work-groups suspend together"
    assert spirv_resume.affordable(plain, resumed)  # small: below GROUP_MIN_BYTES
    monkeypatch.setattr(spirv_resume, "GROUP_MIN_BYTES", 0)
    growth = len(spirv_resume.first_pass(resumed)) / len(plain)
    monkeypatch.setattr(spirv_resume, "GROUP_GROWTH_LIMIT", growth * 0.9)
    assert not spirv_resume.affordable(plain, resumed)
    monkeypatch.setattr(spirv_resume, "GROUP_GROWTH_LIMIT", growth * 1.1)
    assert spirv_resume.affordable(plain, resumed)
    # and through the driver: the module then has no resumed entry point
    monkeypatch.setattr(spirv_resume, "GROUP_GROWTH_LIMIT", growth * 0.9)
    again = compiler.compile_source(src, "-DAGAIN", LLVMPIPE).spirv
    assert spirv_resume.resumed_entry_points(again) == {}
