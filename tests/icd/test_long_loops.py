"""Long loops compute what the host does on lavapipe, whose llvmpipe ends every loop silently
once a batch of 8 work-items has taken 65,535 loop back-edges in all (vkcl unrolls loops 16
times there: DeviceCaps.loop_unroll_count, docs/architecture.md "Loops on lavapipe"). Each
result is exact against a host reference; on other devices the same kernels must be right too."""
from pathlib import Path

import pytest

from checks import run_ok

pytest.importorskip("pyopencl")

NESTED_RETURNS = (Path(__file__).resolve().parent.parent / "kernels" / "nested_returns.cl").read_text()

HEADER = r"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
M = 0xFFFFFFFF
STEP = "#define STEP(s, i) ((s) * 1103515245u + ((i) ^ 12345u))\n"
def step(s, i):
    return (s * 1103515245 + (i ^ 12345)) & M
# Each work-item's n steps from its own id (the loop-cut tests); lcg(n, id) on the host.
LCG_LOOP = ("kernel void k(global uint *o, uint n) { uint s = get_global_id(0);"
            " for (uint i = 0; i < n; i++) s = STEP(s, i); o[get_global_id(0)] = s; }")
# The same loop inside a loop that waits at a barrier (and runs once): on lavapipe only the outer
# loop may suspend (compiler/spirv_resume.py), so the inner one, alone past the budget, is cut.
CUT_LOOP = ("kernel void k(global uint *o, uint n) { uint s = get_global_id(0);"
            " for (uint j = 0; j <= (n >> 31); j++) { barrier(CLK_GLOBAL_MEM_FENCE);"
            " for (uint i = 0; i < n; i++) s = STEP(s, i); } o[get_global_id(0)] = s; }")
def lcg(n, s=0, start=0):
    for i in range(start, start + n):
        s = (s * 1103515245 + (i ^ 12345)) & M
    return s
def launch(src, name, gsize, lsize, *args, nout=None, dtype=np.uint32):
    prg = cl.Program(ctx, STEP + src).build()
    o = np.zeros(nout or gsize, dtype)
    ob = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
    args = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) if isinstance(a, np.ndarray) and a.ndim else a
            for a in args]
    getattr(prg, name)(q, (gsize,), (lsize,), ob, *args)
    cl.enqueue_copy(q, o, ob)
    q.finish()
    return o
"""


def run(python_with_icd, body: str):
    return run_ok(python_with_icd, HEADER + body)


def test_counted_loops_of_200000_and_1000000_iterations(python_with_icd):
    run(python_with_icd, """
src = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s = STEP(s, i); o[get_global_id(0)] = s; }"
for n in (65535, 65536, 65537, 200000, 1000000):
    got = launch(src, "k", 8, 8, np.uint32(n))
    assert (got == lcg(n)).all(), (n, got[0], lcg(n))
print("OK")
""")


def test_two_sequential_long_loops(python_with_icd):
    run(python_with_icd, """
src = '''kernel void k(global uint *o, uint n) { uint s = 0;
    for (uint i = 0; i < n; i++) s = STEP(s, i);
    for (uint i = 0; i < n; i++) s = STEP(s, i ^ 0x55u);
    o[get_global_id(0)] = s; }'''
for n in (40000, 200000):
    s = lcg(n)
    for i in range(n):
        s = step(s, i ^ 0x55)
    got = launch(src, "k", 1, 1, np.uint32(n))
    assert got[0] == s, (n, got[0], s)
print("OK")
""")


def test_nested_loops(python_with_icd):
    run(python_with_icd, """
src = '''kernel void k(global uint *o, uint n, uint m) { uint s = 0;
    for (uint i = 0; i < n; i++) for (uint j = 0; j < m; j++) s = STEP(s, i * m + j);
    o[get_global_id(0)] = s; }'''
for n, m in ((1000, 1000), (10000, 13), (3, 300000)):
    got = launch(src, "k", 1, 1, np.uint32(n), np.uint32(m))
    assert got[0] == lcg(n * m), (n, m, got[0], lcg(n * m))
print("OK")
""")


def test_while_loops_with_data_dependent_exits(python_with_icd):
    run(python_with_icd, """
# a walk until a value comes back (200,000 steps), and Collatz step counts summed per work-item
walk = "kernel void k(global uint *o, uint seed, uint target) { uint x = seed, c = 0; while (x != target) { x = STEP(x, 7u); c++; } o[0] = c; }"
x = 5
for _ in range(200000):
    x = step(x, 7)
got = launch(walk, "k", 1, 1, np.uint32(5), np.uint32(x))
assert got[0] == 200000, got[0]
collatz = '''kernel void k(global uint *o, uint per) { uint c = 0; ulong first = 1 + get_global_id(0) * per;
    for (ulong x0 = first; x0 < first + per; x0++) { ulong x = x0; while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; c++; } }
    o[get_global_id(0)] = c; }'''
def steps(x):
    c = 0
    while x != 1:
        x = 3 * x + 1 if x & 1 else x // 2
        c += 1
    return c
per = 2000
got = launch(collatz, "k", 16, 16, np.uint32(per))
want = [sum(steps(x) for x in range(1 + g * per, 1 + (g + 1) * per)) for g in range(16)]
assert list(got) == want, (list(got), want)
assert min(want) > 65535 * 2
print("OK")
""")


def test_loop_with_break_and_continue(python_with_icd):
    run(python_with_icd, """
src = '''kernel void k(global uint *o, global const uint *in, uint n) { uint s = 0;
    for (uint i = 0; i < n; i++) { uint v = in[i & 1023]; if (v == 0xdeadbeefu) break; if (v & 1) continue; s = STEP(s, v); }
    o[get_global_id(0)] = s; }'''
def ref(inp, n):
    s = 0
    for i in range(n):
        v = int(inp[i & 1023])
        if v == 0xdeadbeef:
            break
        if v & 1:
            continue
        s = step(s, v)
    return s
inp = np.random.default_rng(1).integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
inp[inp == 0xdeadbeef] = 0
for n in (300000, 1000000):
    assert launch(src, "k", 1, 1, inp, np.uint32(n))[0] == ref(inp, n), n
inp[700] = 0xdeadbeef
assert launch(src, "k", 1, 1, inp, np.uint32(300000))[0] == ref(inp, 300000)
print("OK")
""")


def test_loop_with_barrier_and_local_memory(python_with_icd):
    run(python_with_icd, """
# 1,000 trips of a loop with barriers (LLVM leaves it rolled: barrier() is convergent), each
# running an inner loop of 300 steps: 300,000 inner iterations per work-item
src = '''kernel void k(global uint *o, uint n, uint m) { local uint l[64]; uint lid = get_local_id(0); uint s = lid;
    for (uint i = 0; i < n; i++) {
        for (uint j = 0; j < m; j++) s = STEP(s, j);
        l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);
        s = l[(lid + 1) & 63] ^ i; barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = s; }'''
n, m = 1000, 300
s = list(range(64))
for i in range(n):
    s = [lcg(m, v) for v in s]
    s = [s[(k + 1) & 63] ^ i for k in range(64)]
got = launch(src, "k", 64, 64, np.uint32(n), np.uint32(m))
assert list(got) == s
print("OK")
""")


def test_trip_counts_differing_per_work_item(python_with_icd):
    run(python_with_icd, """
src = '''kernel void k(global uint *o, uint n) { uint s = 0; uint t = n + get_global_id(0) * 40009u;
    for (uint i = 0; i < t; i++) s = STEP(s, i); o[get_global_id(0)] = s; }'''
got = launch(src, "k", 24, 8, np.uint32(100000))
want = [lcg(100000 + g * 40009) for g in range(24)]
assert list(got) == want, [g for g in range(24) if got[g] != want[g]]
print("OK")
""")


def test_unrolled_float_loop_is_bit_identical(python_with_icd):
    run(python_with_icd, """
# the same float loop unrolled (as vkcl compiles it on lavapipe) and rolled (#pragma nounroll):
# equal bits, and equal to the host's float32 arithmetic done step by step
src = '''kernel void k(global float *o, global const float *a, global const float *b, uint n) {
    float x = a[get_global_id(0)], y = b[get_global_id(0)];
    PRAGMA
    for (uint i = 0; i < n; i++) { x = x * a[i & 255] + b[i & 255]; y = fmin(y * 0.5f, y + a[(i * 7) & 255]) - x; }
    o[2 * get_global_id(0)] = x; o[2 * get_global_id(0) + 1] = y; }'''
with np.errstate(all="ignore"):
    rng = np.random.default_rng(7)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.17e-38, 3.4e38, -3.4e38,
                        1.0, -1.0, 0.5, 2.0, 1e-30, 1e30], np.float32)
    a = np.concatenate([special, rng.uniform(-1.01, 1.01, 240).astype(np.float32)])
    b = np.concatenate([special[::-1], rng.uniform(-2, 2, 240).astype(np.float32)])
    n = 5003
    outs = []
    for pragma in ("", "#pragma nounroll"):
        prg = cl.Program(ctx, src.replace("PRAGMA", pragma)).build()
        o = np.zeros(2 * 64, np.float32)
        ob = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
        prg.k(q, (64,), (64,), ob, cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a),
              cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b), np.uint32(n))
        cl.enqueue_copy(q, o, ob); q.finish()
        outs.append(o.view(np.uint32))
    assert np.array_equal(outs[0], outs[1]), np.nonzero(outs[0] != outs[1])
    x, y = a[:64].copy(), b[:64].copy()
    for i in range(n):
        x = x * a[i & 255] + b[i & 255]
        y = np.fmin(y * np.float32(0.5), y + a[(i * 7) & 255]) - x
    want = np.empty(128, np.float32); want[0::2] = x; want[1::2] = y
    got = outs[0].view(np.float32)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), np.nonzero(~same)
print("OK")
""")


def test_pyopencl_scan_of_2_21_elements(python_with_icd):
    run(python_with_icd, """
import pyopencl.array as cla
for n in (2**21, 2**23 + 3):
    a = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    got = cla.cumsum(cla.to_device(q, a)).get()
    want = np.cumsum(a, dtype=np.int32)
    bad = np.nonzero(got != want)[0]
    assert len(bad) == 0, (n, bad[:3], len(bad))
print("OK")
""")


def test_barrier_loops_of_200000_trips(python_with_icd):
    run(python_with_icd, """
# loops that wait at barriers, which LLVM does not unroll (barrier() is convergent): vkcl unrolls
# them in the SPIR-V on lavapipe (spirv_barrier_loops.py); up to 200,000 trips, work-groups of 64
src = '''kernel void k(global uint *o, uint n) { local uint l[64]; uint lid = get_local_id(0), lsz = get_local_size(0);
    uint s = lid;
    for (uint i = lid; i < n; i += lsz) { l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);
        s = STEP(l[(lid + 1) & 63], i); barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = s; }'''
def ref(trips):
    s = np.arange(64, dtype=np.uint64)
    lanes = np.arange(64, dtype=np.uint64)
    for t in range(trips):
        s = (np.roll(s, -1) * 1103515245 + ((lanes + 64 * t) ^ 12345)) & M
    return s.astype(np.uint32)
for trips in (65535, 65536, 200000):
    got = launch(src, "k", 128, 64, np.uint32(64 * trips))
    want = ref(trips)
    assert (got[:64] == want).all() and (got[64:] == want).all(), (trips, np.nonzero(got[:64] != want)[0][:4])
print("OK")
""")


def test_barrier_loop_of_floats_with_edge_values(python_with_icd):
    run(python_with_icd, """
# a float loop with barriers over 70,000 trips on NaN, infinities, signed zeros, denormals (where
# the device has them) and huge values (as they pass through local memory): each result's bits (NaN as one pattern)
# hashed per trip, against the host's float32 arithmetic
src = '''kernel void k(global uint *o, global const float *a, uint n) { local float l[64]; uint lid = get_local_id(0);
    uint h = lid;
    for (uint i = 0; i < n; i++) { l[lid] = a[(i + lid) & 255]; barrier(CLK_LOCAL_MEM_FENCE);
        float t = fmin(l[(lid + 1) & 63] * a[(i * 7) & 255], l[(lid + 3) & 63] - a[i & 255]) + l[lid] * 0.5f;
        h = STEP(h, isnan(t) ? 0x7fc00000u : as_uint(t)); barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = h; }'''
special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.17e-38, 3.4e38, -3.4e38,
                    1.0, -1.0, 0.5, 2.0, 1e-30, 1e30], np.float32)
# Denormals: a device without CL_FP_DENORM may flush them, and NVIDIA's H100 and H200 do in
# this kernel (in fmin and additions, not in products; a two-line probe kernel kept them), which
# the host's reference does not model. There no input is or makes one. lavapipe claims no
# CL_FP_DENORM either but keeps them, and it is where vkcl copies this loop, so they stay there.
# C99 leaves the sign of fmin(-0, +0) open: NVIDIA gives -0, lavapipe +0; a probe measures it.
if not (dev.single_fp_config & cl.device_fp_config.DENORM or "llvmpipe" in dev.name):
    special[5:8] = [1e-18, -1e-18, 1e-17]   # no product of two inputs falls below 2^-126 either
    special[14] = 1e-16
probe = launch("kernel void p(global uint *o, global const float *a) { o[0] = as_uint(fmin(a[0], a[1])); }",
               "p", 1, 1, np.array([-0.0, 0.0], np.float32))
negative_zero_min = probe[0] == 0x80000000
a = np.concatenate([special, np.random.default_rng(3).uniform(-1.01, 1.01, 240).astype(np.float32)])
a[100:116] = special
lanes = np.arange(64)
def ref(n):
    h = lanes.astype(np.uint64)
    with np.errstate(all="ignore"):
        for i in range(n):
            l = a[(i + lanes) & 255]
            x, y = np.roll(l, -1) * a[(i * 7) & 255], np.roll(l, -3) - a[i & 255]
            m = np.fmin(x, y)
            if negative_zero_min:
                m = np.where((x == 0) & (y == 0) & (np.signbit(x) | np.signbit(y)), np.float32(-0.0), m)
            t = m + l * np.float32(0.5)
            bits = np.where(np.isnan(t), np.uint32(0x7fc00000), t.view(np.uint32)).astype(np.uint64)
            h = (h * 1103515245 + (bits ^ 12345)) & M
    return h.astype(np.uint32)
for n in (1000, 70000):
    got = launch(src, "k", 64, 64, a, np.uint32(n))
    want = ref(n)
    assert (got == want).all(), (n, np.nonzero(got != want)[0])
print("OK")
""")


def test_barrier_loop_with_ifs_of_200000_trips(python_with_icd):
    run(python_with_icd, """
# the shape of pyopencl's scan_final_update: a loop with barriers whose body has ifs (a store
# under a condition, a value kept from the previous trip); 200,000 trips, the last one partial
src = '''kernel void k(global uint *o, global const uint *in, uint n) { local uint l[64]; uint lid = get_local_id(0);
    uint prev = 7, h = lid;
    for (uint base = 0; base < n; base += 64) {
        uint i = base + lid;
        if (i < n) l[lid] = in[i & 1023] + base;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid != 0) prev = l[lid - 1];
        if (i < n) h = STEP(h, prev);
        if (lid == 0) prev = l[63];
        barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = h; }'''
inp = np.random.default_rng(5).integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
lanes = np.arange(64, dtype=np.uint64)
def ref(n):
    prev = np.full(64, 7, np.uint64)
    h = lanes.copy()
    l = np.zeros(64, np.uint64)
    for base in range(0, n, 64):
        i = base + lanes
        live = i < n
        l = np.where(live, (inp[(i & 1023).astype(np.int64)].astype(np.uint64) + base) & M, l)
        prev = np.where(lanes != 0, np.roll(l, 1), prev)
        h = np.where(live, (h * 1103515245 + (prev ^ 12345)) & M, h)
        prev = np.where(lanes == 0, l[63], prev)
    return h.astype(np.uint32)
for n in (64 * 1000 - 5, 64 * 200000 - 5):
    got = launch(src, "k", 64, 64, inp, np.uint32(n))
    want = ref(n)
    assert (got == want).all(), (n, np.nonzero(got != want)[0][:8])
print("OK")
""")


def test_barrier_loop_with_continue_and_break(python_with_icd):
    run(python_with_icd, """
# a work-group-uniform continue and break in a loop with barriers, over 300,000 trips
src = '''kernel void k(global uint *o, global const uint *in, uint n) { local uint l[64]; uint lid = get_local_id(0);
    uint s = lid;
    for (uint i = 0; i < n; i++) { l[lid] = in[i & 1023] ^ lid; barrier(CLK_LOCAL_MEM_FENCE);
        uint v = l[0]; barrier(CLK_LOCAL_MEM_FENCE);
        if ((v & 7) == 3) continue;
        if (v == 0xdeadbeefu) break;
        s = STEP(s, v ^ i); }
    o[get_global_id(0)] = s; }'''
inp = np.random.default_rng(9).integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
inp[inp == 0xdeadbeef] = 1
def ref(n):
    s = np.arange(64, dtype=np.uint64)
    for i in range(n):
        v = int(inp[i & 1023])
        if v & 7 == 3:
            continue
        if v == 0xdeadbeef:
            break
        s = (s * 1103515245 + ((v ^ i) ^ 12345)) & M
    return s.astype(np.uint32)
for n in (300000,):
    assert (launch(src, "k", 64, 64, inp, np.uint32(n)) == ref(n)).all(), n
inp[500] = 0xdeadbeef
assert (launch(src, "k", 64, 64, inp, np.uint32(300000)) == ref(300000)).all()
print("OK")
""")


def test_nested_barrier_loops(python_with_icd):
    run(python_with_icd, """
# barriers in an inner loop: 300 x 700 = 210,000 trips of it (copied with the outer loop, then
# each copy on its own)
src = '''kernel void k(global uint *o, uint n, uint m) { local uint l[64]; uint lid = get_local_id(0); uint s = lid;
    for (uint i = 0; i < n; i++) for (uint j = 0; j < m; j++) { l[lid] = s ^ j; barrier(CLK_LOCAL_MEM_FENCE);
        s = STEP(l[(lid + 1) & 63], i * m + j); barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = s; }'''
def ref(n, m):
    s = np.arange(64, dtype=np.uint64)
    for i in range(n):
        for j in range(m):
            s = (np.roll(s ^ j, -1) * 1103515245 + ((i * m + j) ^ 12345)) & M
    return s.astype(np.uint32)
for n, m in ((3, 7), (300, 700)):
    assert (launch(src, "k", 64, 64, np.uint32(n), np.uint32(m)) == ref(n, m)).all(), (n, m)
print("OK")
""")


def test_what_is_still_cut_short_on_lavapipe(python_with_icd):
    run(python_with_icd, """
# lavapipe only: a counted loop of 16 x 65,536 + 16 iterations overruns even unrolled 16 times;
# elsewhere it is right. A one-block loop with barriers (vkcl unrolls it in the SPIR-V) is right.
llvmpipe = "llvmpipe" in dev.name
bar = '''kernel void k(global uint *o, uint n) { local uint l[8]; uint lid = get_local_id(0); uint s = lid;
    for (uint i = 0; i < n; i++) { l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE); s = STEP(l[(lid + 1) & 7], i); barrier(CLK_LOCAL_MEM_FENCE); }
    o[get_global_id(0)] = s; }'''
def bar_ref(n):
    s = list(range(8))
    for i in range(n):
        s = [step(s[(k + 1) & 7], i) for k in range(8)]
    return s
for n in (65535, 65536, 100003):
    assert list(launch(bar, "k", 8, 8, np.uint32(n))) == bar_ref(n), n
one = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s = STEP(s, i); o[0] = s; }"
n = 16 * 65536 + 16
assert launch(one, "k", 1, 1, np.uint32(n))[0] == lcg(n)  # on lavapipe in passes (core/resume.py)
# with a barrier after it: on lavapipe its work-group votes after the loop at each pass
after = one.replace("o[0] = s;", "barrier(CLK_GLOBAL_MEM_FENCE); o[0] = s;")
assert launch(after, "k", 1, 1, np.uint32(n))[0] == lcg(n)
cut = one.replace("for (uint i", "for (uint j = 0; j <= (n >> 31); j++) { barrier(CLK_GLOBAL_MEM_FENCE); for (uint i").replace(
    "o[0] = s;", "} o[0] = s;")
if llvmpipe:  # inside a barrier loop, cut short, which vkcl reports: the launch's event fails (core/loop_cuts.py)
    ev = cl.Program(ctx, STEP + cut).build().k(q, (1,), (1,), cl.Buffer(ctx, mf.READ_WRITE, 4), np.uint32(n))
    q.finish()
    assert ev.command_execution_status == cl.status_code.OUT_OF_RESOURCES, ev.command_execution_status
else:
    assert launch(cut, "k", 1, 1, np.uint32(n))[0] == lcg(n)
print("OK")
""")


def test_a_loop_cut_short_fails_its_launch(python_with_icd):
    run(python_with_icd, """
# lavapipe: llvmpipe cuts a batch's loops after 65,535 back-edges in all; vkcl's probe sees it
# (compiler/spirv_loop_cuts.py) and the launch's event fails with CL_OUT_OF_RESOURCES, through
# Python's path and C's repeated launches alike, while launches whose loops end stay right.
# Elsewhere every launch is right. (CUT_LOOP: its long loop inside a barrier loop, which later
# passes cannot resume on lavapipe; tests/icd/test_resumed_loops.py has those they can.)
llvmpipe = "llvmpipe" in dev.name
src = CUT_LOOP
k = cl.Kernel(cl.Program(ctx, STEP + src).build(), "k")
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
for n, cut in ((1000, False), (2_000_000, llvmpipe), (60000, False), (2_000_000, llvmpipe)):
    k.set_args(o, np.uint32(n))
    evs = [cl.enqueue_nd_range_kernel(q, k, (64,), (64,)) for _ in range(4)]   # the last ones C's
    q.finish()
    want = cl.status_code.OUT_OF_RESOURCES if cut else cl.command_execution_status.COMPLETE
    assert [e.command_execution_status for e in evs] == [want] * 4, (n, [e.command_execution_status for e in evs])
    if not cut:
        r = np.empty(64, np.uint32); cl.enqueue_copy(q, r, o); q.finish()
        assert r[5] == lcg(n, 5), n
print("OK")
""")


def test_a_cut_is_charged_to_its_own_batch(python_with_icd):
    run(python_with_icd, """
# lavapipe: batch 1 (a long right launch L, then A) and batch 2 (B, cut short) both end before the
# host looks at either: the main thread keeps the GIL from the completion thread meanwhile. Only
# B fails: each batch takes what its own launches flagged as it ends, on the device, not what the
# device's flag holds when the host gets to it. B in the same queue, then in a second one (whose
# batches the completion thread may retire before or after the first queue's). Elsewhere all are
# right.
import sys, time
llvmpipe = "llvmpipe" in dev.name
src = CUT_LOOP
prg = cl.Program(ctx, STEP + src).build()
q2 = cl.CommandQueue(ctx)
ol, oa, ob = (cl.Buffer(ctx, mf.READ_WRITE, 4 * 32768) for _ in range(3))
kl, ka, kb = (cl.Kernel(prg, "k") for _ in range(3))
kl.set_args(ol, np.uint32(60000))   # ~1 s on lavapipe: batch 1 ends after the host is busy
ka.set_args(oa, np.uint32(1000))
kb.set_args(ob, np.uint32(2_000_000))
for qb in (q, q2, q, q2):
    el = cl.enqueue_nd_range_kernel(q, kl, (32768,), (64,))
    ea = cl.enqueue_nd_range_kernel(q, ka, (64,), (64,))
    q.flush()
    eb = cl.enqueue_nd_range_kernel(qb, kb, (64,), (64,))
    qb.flush()
    sys.setswitchinterval(100)
    t = time.monotonic()
    while time.monotonic() - t < 3:
        pass
    sys.setswitchinterval(0.005)
    q.finish(); q2.finish()
    got = (el.command_execution_status, ea.command_execution_status, eb.command_execution_status)
    ok = cl.command_execution_status.COMPLETE
    assert got == (ok, ok, cl.status_code.OUT_OF_RESOURCES if llvmpipe else ok), (qb is q, got)
    r = np.empty(64, np.uint32); cl.enqueue_copy(q, r, oa); q.finish()
    assert r[5] == lcg(1000, 5)
print("OK")
""")


def test_a_cut_in_cs_own_batch_names_its_kernel(python_with_icd):
    body = """
# lavapipe: a batch of only C's repeated launches (icd/fast_path.c runs it at clFinish) that
# llvmpipe cut short: their events fail, and the warning names the kernel. Elsewhere all right.
llvmpipe = "llvmpipe" in dev.name
src = CUT_LOOP.replace("void k(", "void only_c(")
k = cl.Kernel(cl.Program(ctx, STEP + src).build(), "only_c")
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
k.set_args(o, np.uint32(10))
cl.enqueue_nd_range_kernel(q, k, (64,), (64,)); q.finish()   # Python's launch: C's from now on
for n in (2_000_000, 1000, 2_000_000):
    k.set_args(o, np.uint32(n))
    evs = [cl.enqueue_nd_range_kernel(q, k, (64,), (64,)) for _ in range(3)]
    q.finish()
    cut = llvmpipe and n > 1000
    want = cl.status_code.OUT_OF_RESOURCES if cut else cl.command_execution_status.COMPLETE
    assert [e.command_execution_status for e in evs] == [want] * 3, (n, [e.command_execution_status for e in evs])
    sys.stderr.write("ROUND\\n"); sys.stderr.flush()
print("OK", f"llvmpipe={llvmpipe}")
"""
    result = run(python_with_icd, "import sys\n" + body)
    rounds = result.stderr.split("ROUND\n")[:3]
    llvmpipe = "llvmpipe=True" in result.stdout
    named = ["kernel(s) only_c ran a loop past" in r for r in rounds]
    assert named == ([True, False, True] if llvmpipe else [False] * 3), result.stderr[-3000:]


@pytest.mark.parametrize("resume", ["1", "0"])
def test_lanes_past_a_groups_width_take_no_loop(python_with_icd, resume):
    run_ok(python_with_icd, HEADER + """
# llvmpipe runs groups of 4 or 12 work-items in batches of 8 lanes; the lanes past the width run
# the kernel masked, and an atomic gives them 0. They took the 70,000-trip branch no work-item
# takes, spent the batch's loop budget and the launch failed as cut (CL_OUT_OF_RESOURCES) where
# that loop does not suspend (VKCL_RESUME_LOOPS=0 here). They return first thing now
# (compiler/spirv_extra_lanes.py); everywhere the results are exact.
for first in ("uint t = atomic_or(&w[0], 0u);", "uint t = get_local_id(0) < get_local_size(0) ? w[0] : 0u;"):
    src = '''kernel void k(global uint *o, global uint *w) { uint s = get_global_id(0); %s
      if (t == 0u) {
    #pragma nounroll
        for (uint i = 0; i < 70000u; i++) s = STEP(s, i); }
    #pragma nounroll
      for (uint j = 0; j < w[1]; j++) s = STEP(s, j);
      o[get_global_id(0)] = s; }''' % first
    for G, L in ((8, 4), (24, 12), (16, 8)):
        got = launch(src, "k", G, L, np.array([5, 1000], np.uint32))
        assert list(got) == [lcg(1000, g) for g in range(G)], (first, G, L)
print("OK")
""", env={"VKCL_RESUME_LOOPS": resume})


def test_returns_from_nested_loops_in_groups_of_any_width(python_with_icd):
    # LLVM's forced unrolling (llvmpipe's) nests this kernel's conditionals 80 deep, one level
    # per exit of each copy, and the branch that returns extra lanes (compiler/spirv_extra_lanes.py)
    # made it 81: llvmpipe keeps no mask past 80, and work-items 2, 3, 8 and 11 stored nothing.
    # Groups whose width is a multiple of 8 get pipelines without that branch
    # (core/ndrange.ProgramImage.module_for); the others came out wrong until programs nested
    # that deep were built again rolled (compiler/spirv_nesting.py).
    run(python_with_icd, "src = " + repr(NESTED_RETURNS) + r"""
def ref(g, n, m):
    s, t = g, 0
    for r in range(m):
        for i in range(n):
            s = (s * 1103515245 + (i ^ 82664)) & M; t += 1
            for j in range(3):
                s = (s * 1103515245 + (j ^ 36499)) & M; t += 1
                if s % 211 == 191:
                    return s ^ 0xABCD, t
            if s % 13 == 7:
                return s ^ 0xABCD, t
    return s, t
k = cl.Program(ctx, src).build().k
for size, local in ((32, None), (32, (32,)), (32, (16,)), (32, (8,)), (32, (4,)), (32, (1,)), (24, (12,)), (15, (5,))):
    want = [w for g in range(size) for w in ref(g, 40, 7)]
    o = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(2 * size, 7, np.uint32))
    k(q, (size,), local, o, np.uint32(40), np.uint32(7))
    got = np.empty(2 * size, np.uint32); cl.enqueue_copy(q, got, o)
    assert list(got) == want, (local, [g for g in range(size) if got[2 * g] != want[2 * g]])
print("OK")
""")
