"""Loops of any length on lavapipe: past llvmpipe's 65,535 back-edges per batch of work-items,
kernels without barriers suspend their outermost loops and the queue runs them again until
every work-item has finished (compiler/spirv_resume.py, core/resume.py). `#pragma nounroll`
makes a few tens of thousands of trips take several passes there. Every result is exact against
a host reference; on other devices (no passes) the same kernels must be right too."""
import pytest

from checks import run_ok
from test_long_loops import HEADER as LOOPS_HEADER

pytest.importorskip("pyopencl")

# test_long_loops.py's preamble (vkcl's context and queue, lcg(n, s) on the host), then:
HEADER = LOOPS_HEADER + r"""
LCG = ("kernel void k(global uint *o, uint n) { uint s = get_global_id(0);\n"
       "#pragma nounroll\n"
       " for (uint i = 0; i < n + get_global_id(0) * 37u; i++) s = s * 1103515245u + (i ^ 12345u);"
       " o[get_global_id(0)] = s; }")
def lcg_ref(n, count):
    s = np.arange(count, dtype=np.uint64)
    trips = n + np.arange(count) * 37
    for i in range(trips.max()):
        s = np.where(i < trips, (s * 1103515245 + (i ^ 12345)) & M, s)
    return s.astype(np.uint32)
def buf(a):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
"""


def run(python_with_icd, body: str, env: dict | None = None):
    return run_ok(python_with_icd, HEADER + body, env=env)


def test_one_work_item_past_the_unrolled_budget(python_with_icd):
    # 16 x 65,536 + 16 trips: over the budget even unrolled 16 times (the pyopencl debug scan's
    # case); and 40,000 trips of a loop kept rolled, over it in one pass
    run(python_with_icd, """
src = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s = s * 1103515245u + (i ^ 12345u); o[0] = s; }"
prg = cl.Program(ctx, src).build()
for n in (16 * 65536 + 16, 2 ** 21 + 5):
    o = cl.Buffer(ctx, mf.READ_WRITE, 4)
    prg.k(q, (1,), (1,), o, np.uint32(n))
    r = np.empty(1, np.uint32); cl.enqueue_copy(q, r, o)
    assert r[0] == lcg(n), (n, r[0], lcg(n))
r = np.empty(64, np.uint32)
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
cl.Program(ctx, LCG).build().k(q, (64,), (16,), o, np.uint32(40000))
cl.enqueue_copy(q, r, o)
assert (r == lcg_ref(40000, 64)).all()
print("OK")
""")


def test_state_of_every_type_is_kept_bit_for_bit(python_with_icd):
    # Loop-carried ulong, double, float (NaN, infinities, signed zeros, denormals), half, bool, a
    # pointer that moves and a float4, each work-item its own trip count, so that work-items of
    # one batch suspend at different trips; the values are taken apart into words and put
    # together again at every pass.
    run(python_with_icd, """
src = '''#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global float *of, global float *oy, global double *od, global ulong *ou, global half *oh,
              global float4 *ov, global uint *ob, global const float *e, global const float *a, float one, uint n) {
    uint g = get_global_id(0), trips = n + g * 37u;
    ulong u = g; double d = (double)e[g & 7]; float x = e[g & 7], y = e[(g + 3) & 7]; half h = (half)0.0f;
    bool b = false; global const float *p = a + (g & 7); float4 v = (float4)(e[(g + 1) & 7], e[(g + 2) & 7], 1.0f, -0.0f);
    #pragma nounroll
    for (uint i = 0; i < trips; i++) {
        u = u * 6364136223846793005ul + i; d = d + (double)a[i & 7]; x = x + *p; y = y * one;
        h = h + (half)1.0f; b = !b; p = (p == a + 7) ? a : p + 1; v = v.yzwx + (float4)(x);
    }
    of[g] = x; oy[g] = y; od[g] = d; ou[g] = u; oh[g] = h; ov[g] = v; ob[g] = b;
}'''
if "cl_khr_fp16" not in dev.extensions:
    src = src.replace("half", "float").replace("#pragma OPENCL EXTENSION cl_khr_fp16 : enable", "")
ht = np.float16 if "cl_khr_fp16" in dev.extensions else np.float32
e = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.0e38, -2.5, 1.5e-39], np.float32)
a = np.array([0.25, -0.0, 1e-45, 0.5, 0.0, -1.0, 1.5e-39, 2.0], np.float32)
if not dev.single_fp_config & cl.device_fp_config.DENORM:  # it may flush them (NVIDIA's float)
    e[[4, 7]], a[[2, 6]] = (1.25e-30, -3.5e-20), (2.5e-30, 1.0e-25)
G, n = 64, 30000
outs = [np.zeros(G, t) for t in (np.float32, np.float32, np.float64, np.uint64, ht, np.float32, np.uint32)]
outs[5] = np.zeros((G, 4), np.float32)
bufs = [buf(o) for o in outs]
cl.Program(ctx, src).build().k(q, (G,), (16,), *bufs, buf(e), buf(a), np.float32(1.0), np.uint32(n))
for o, bb in zip(outs, bufs):
    cl.enqueue_copy(q, o, bb)
q.finish()
g = np.arange(G)
trips = n + g * 37
u = g.astype(np.uint64); d = e[g & 7].astype(np.float64); x = e[g & 7].copy(); y = e[(g + 3) & 7].copy()
h = np.zeros(G, ht); b = np.zeros(G, bool); pi = (g & 7).copy()
v = np.stack([e[(g + 1) & 7], e[(g + 2) & 7], np.ones(G, np.float32), np.full(G, -0.0, np.float32)], 1)
with np.errstate(all="ignore"):
    for i in range(trips.max()):
        m = i < trips
        u = np.where(m, u * np.uint64(6364136223846793005) + np.uint64(i), u)
        d = np.where(m, d + np.float64(a[i & 7]), d)
        x = np.where(m, x + a[pi], x)
        y = np.where(m, y * np.float32(1.0), y)
        h = np.where(m, h + ht(1.0), h)
        b = np.where(m, ~b, b)
        pi = np.where(m, np.where(pi == 7, 0, pi + 1), pi)
        v = np.where(m[:, None], v[:, [1, 2, 3, 0]] + x[:, None], v)
def same(got, want, name):  # bit for bit; a NaN any NaN (OpenCL leaves payloads open)
    g, w = got.reshape(len(got), -1), want.astype(got.dtype).reshape(len(got), -1)
    if got.dtype.kind == "f":
        u = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
        ok = (g.view(u) == w.view(u)) | (np.isnan(g) & np.isnan(w))
    else:
        ok = g == w
    bad = np.flatnonzero(~ok.all(1))
    assert not len(bad), (name, bad[:4], got[bad[:4]], want[bad[:4]])
for got, want, name in zip(outs, (x, y, d, u, h, v, b.astype(np.uint32)), "x y d u h v b".split()):
    same(got, want, name)
print("OK")
""")


def test_loops_in_a_row_with_values_between(python_with_icd):
    # The first loop guarded by an `if`, a value read between the loops used after the second
    # (pyopencl's debug scan's shape), a while loop with a data-dependent exit last.
    run(python_with_icd, """
src = '''kernel void k(global uint *o, global uint *t, uint n) {
    uint g = get_global_id(0), s = g;
    if (n > 3) {
        #pragma nounroll
        for (uint i = 0; i < n; i++) { s = s * 3u + i; t[g * 256 + (i & 255)] = s; }
    }
    uint last = t[g * 256 + ((n - 1) & 255)];
    #pragma nounroll
    for (uint i = 0; i < n + g; i++) s ^= t[g * 256 + (i & 255)] + last + i;
    uint w = 0;
    while (s > 1000u) { s = s / 3u + (s & 1u); w++; }
    o[g] = s + (w << 16); }'''
G = 16
for n in (10, 20000):
    t = buf(np.zeros(G * 256, np.uint32)); o = buf(np.zeros(G, np.uint32))
    cl.Program(ctx, src).build().k(q, (G,), (8,), o, t, np.uint32(n))
    r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o)
    for g in range(G):
        s = g; tt = [0] * 256
        if n > 3:
            for i in range(n):
                s = (s * 3 + i) & M; tt[i & 255] = s
        last = tt[(n - 1) & 255]
        for i in range(n + g):
            s ^= (tt[i & 255] + last + i) & M
        w = 0
        while s > 1000:
            s = s // 3 + (s & 1); w += 1
        assert r[g] == ((s + (w << 16)) & M), (n, g, r[g], s)
print("OK")
""")


def test_work_before_and_inside_the_loop_happens_once(python_with_icd):
    # What a work-item did before it suspended is not done again: atomics before, in and after
    # the loop, and a printf before it, counted exactly.
    result = run(python_with_icd, """
src = '''kernel void k(global uint *c, global uint *o, uint n) {
    uint g = get_global_id(0);
    atomic_inc(&c[0]);
    if (g == 0) printf("before the loop\\\\n");
    uint s = g;
    #pragma nounroll
    for (uint i = 0; i < n; i++) { s = s * 1103515245u + (i ^ 12345u); if ((i & 1023u) == 0) atomic_add(&c[1], 1u); }
    atomic_inc(&c[2]);
    o[g] = s; }'''
G, n = 32, 50000
c = buf(np.zeros(3, np.uint32)); o = buf(np.zeros(G, np.uint32))
cl.Program(ctx, src).build().k(q, (G,), (8,), c, o, np.uint32(n))
r = np.empty(3, np.uint32); cl.enqueue_copy(q, r, c); q.finish()
assert list(r) == [G, G * len(range(0, n, 1024)), G], r
s = np.empty(G, np.uint32); cl.enqueue_copy(q, s, o)
assert s[5] == lcg(n, 5)
print("OK")
""")
    assert result.stdout.count("before the loop") == 1, result.stdout


def test_what_follows_waits_for_every_pass(python_with_icd):
    # A launch that takes several passes, then: a kernel reading its output in the same queue,
    # a non-blocking read, a kernel in a second queue waiting on its event, an out-of-order
    # queue's launch and a barrier; its profiling times span the passes.
    run(python_with_icd, """
import time
lcg_prg = cl.Program(ctx, LCG).build()
add = cl.Program(ctx, "kernel void a(global uint *o, global const uint *i) { o[get_global_id(0)] = i[get_global_id(0)] + 1u; }").build()
G, n = 64, 40000
want = lcg_ref(n, G)
pq = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
q2 = cl.CommandQueue(ctx)
o, o2, o3 = (cl.Buffer(ctx, mf.READ_WRITE, 4 * G) for _ in range(3))
t = time.monotonic()
ev = lcg_prg.k(pq, (G,), (16,), o, np.uint32(n))
add.a(pq, (G,), None, o2, o)
r = np.empty(G, np.uint32); cl.enqueue_copy(pq, r, o2, is_blocking=False)
e3 = add.a(q2, (G,), None, o3, o, wait_for=[ev])
r3 = np.empty(G, np.uint32); cl.enqueue_copy(q2, r3, o3)
ev.wait()
host = time.monotonic() - t
pq.finish()
assert (r == want + 1).all() and (r3 == want + 1).all()
assert 0 < ev.profile.end - ev.profile.start <= host * 1e9, (ev.profile.start, ev.profile.end, host)
oq = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
e1 = lcg_prg.k(oq, (G,), (16,), o, np.uint32(n + 1))
cl.enqueue_barrier(oq)
add.a(oq, (G,), None, o2, o)
r = np.empty(G, np.uint32); cl.enqueue_copy(oq, r, o2); oq.finish()
assert (r == lcg_ref(n + 1, G) + 1).all()
print("OK")
""")


def test_non_uniform_work_groups_in_two_dimensions(python_with_icd):
    # An OpenCL 2.0 range of 37 x 5 in groups of 8 x 2: several dispatches, each with its own
    # records, and trip counts differing per work-item.
    run(python_with_icd, """
src = '''kernel void k(global uint *o, uint n) {
    uint x = get_global_id(0), y = get_global_id(1), s = x + 100u * y;
    #pragma nounroll
    for (uint i = 0; i < n + x * 97u + y * 13u; i++) s = s * 1103515245u + (i ^ 12345u);
    o[y * get_global_size(0) + x] = s; }'''
n = 20000
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 37 * 5)
cl.Program(ctx, src).build("-cl-std=CL2.0").k(q, (37, 5), (8, 2), o, np.uint32(n))
r = np.empty(37 * 5, np.uint32); cl.enqueue_copy(q, r, o)
for y in range(5):
    for x in (0, 7, 8, 30, 36):
        s = x + 100 * y
        for i in range(n + x * 97 + y * 13):
            s = (s * 1103515245 + (i ^ 12345)) & M
        assert r[y * 37 + x] == s, (x, y)
print("OK")
""")


def test_work_groups_with_barriers_resume_with_their_local_memory(python_with_icd):
    # A loop holding barriers whose work-items pass values through local memory at every trip
    # (a static array, a 2-D char array and a __local argument of uint4): a work-group suspends
    # as one, its local memory saved and put back, and each work-group its own trip count.
    # (spirv_barrier_loops copies the loop 16 times: 130,000 trips take several passes.)
    run(python_with_icd, """
src = '''kernel void k(global uint *o, uint n, local uint4 *arg) {
    local uint l[16]; local uchar c[3][5];
    uint lid = get_local_id(0), g = get_group_id(0), s = get_global_id(0);
    if (lid == 0) { for (int a = 0; a < 3; a++) for (int b = 0; b < 5; b++) c[a][b] = (uchar)(a * 5 + b); }
    barrier(CLK_LOCAL_MEM_FENCE);
    #pragma nounroll
    for (uint i = 0; i < n + g * 1000u; i++) {
        l[lid] = s; arg[lid] = (uint4)(s, i, s ^ i, lid);
        if (lid == 0) c[i % 3][i % 5] = (uchar)(c[(i + 1) % 3][(i + 2) % 5] + s);
        barrier(CLK_LOCAL_MEM_FENCE);
        s = s * 1103515245u + (l[(lid + 1) & 15] ^ arg[(lid + 3) & 15].z) + c[lid % 3][lid % 5];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    o[get_global_id(0)] = s; }'''
def ref(n, groups):
    s = np.arange(groups * 16, dtype=np.uint64).reshape(groups, 16)
    c = np.tile((np.arange(15) & 255).reshape(3, 5), (groups, 1, 1)).astype(np.uint64)
    k = np.arange(16)
    trips = n + np.arange(groups) * 1000
    for i in range(trips.max()):
        live = (i < trips)[:, None]
        z = s ^ np.uint64(i)
        c2 = c.copy()
        c2[:, i % 3, i % 5] = (c[:, (i + 1) % 3, (i + 2) % 5] + s[:, 0]) & 255
        c = np.where(live[:, :, None], c2, c)
        new = (s * 1103515245 + (s[:, (k + 1) & 15] ^ z[:, (k + 3) & 15]) + c[:, k % 3, k % 5]) & M
        s = np.where(live, new, s)
    return s.reshape(-1).astype(np.uint32)
n = 130000
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 48)
cl.Program(ctx, src).build().k(q, (48,), (16,), o, np.uint32(n), cl.LocalMemory(16 * 16))
r = np.empty(48, np.uint32); cl.enqueue_copy(q, r, o)
want = ref(n, 3)
assert (r == want).all(), (np.flatnonzero(r != want)[:5], r[:4], want[:4])
print("OK")
""")


def test_barrier_groups_with_a_partial_batch_are_right(python_with_icd):
    # Work-groups of 12 and 10 (llvmpipe's second batch of 8 partial), 16 and 4 with barriers
    # suspend (VKCL_RESUME_LIMIT makes 3,000 trips take passes; the lanes of a partial batch past
    # the group's width return at once: compiler/spirv_extra_lanes.py).
    result = python_with_icd(HEADER + """
LB = LCG.replace("s = s * 1103515245u + (i ^ 12345u);",
                 "{ s = s * 1103515245u + (i ^ 12345u); barrier(CLK_LOCAL_MEM_FENCE); }").replace(
                 "get_global_id(0) * 37u", "get_group_id(0) * 37u")
def ref(n, G, L):
    s = np.arange(G, dtype=np.uint64)
    trips = n + (np.arange(G) // L) * 37
    for i in range(trips.max()):
        s = np.where(i < trips, (s * 1103515245 + (i ^ 12345)) & M, s)
    return s.astype(np.uint32)
prg = cl.Program(ctx, LB).build()
for G, L in ((48, 12), (48, 16), (40, 10), (24, 4)):
    o = cl.Buffer(ctx, mf.READ_WRITE, 4 * G)
    prg.k(q, (G,), (L,), o, np.uint32(3000))
    r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o)
    assert (r == ref(3000, G, L)).all(), (G, L, np.flatnonzero(r != ref(3000, G, L)))
print("OK")
""", timeout=600, env={"PYOPENCL_COMPILER_OUTPUT": "0", "PYOPENCL_NO_CACHE": "1", "VKCL_RESUME_LIMIT": "50"})
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-3000:] + result.stderr[-5000:]


PRIVATE = r"""
src = '''kernel void k(global uint *o, global float *f, global const float *init, uint n) {
  uint hist[16]; float acc[4];
  for (int i = 0; i < 16; i++) hist[i] = i;
  for (int i = 0; i < 4; i++) acc[i] = init[(get_global_id(0) + i) % 8];
  uint s = get_global_id(0);
#pragma nounroll
  for (uint i = 0; i < n + get_global_id(0) * 37u; i++) {
    s = s * 1103515245u + (i ^ 12345u);
    hist[s >> 28] += i;
    acc[s % 3u + (i & 1)] += (float)(s >> 20) * 0.5f;
  }
  uint h = 0; for (int i = 0; i < 16; i++) h = h * 31u + hist[i];
  o[get_global_id(0)] = h;
  for (int i = 0; i < 4; i++) f[4 * get_global_id(0) + i] = acc[i]; }'''
init = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, -3e-39, 1.0, 3e38], np.float32)
prg = cl.Program(ctx, src).build()
N = 24
def ref(n):
    hs, accs = [], []
    for g in range(N):
        hist = list(range(16)); acc = np.array([init[(g + i) % 8] for i in range(4)], np.float32); s = g
        for i in range(n + g * 37):
            s = (s * 1103515245 + (i ^ 12345)) & M
            hist[s >> 28] = (hist[s >> 28] + i) & M
            j = s % 3 + (i & 1)
            acc[j] = np.float32(acc[j] + np.float32((s >> 20) * 0.5))
        h = 0
        for x in hist:
            h = (h * 31 + x) & M
        hs.append(h); accs.append(acc)
    return np.array(hs, np.uint32), np.concatenate(accs)
o, fb = cl.Buffer(ctx, mf.READ_WRITE, 4 * N), cl.Buffer(ctx, mf.READ_WRITE, 16 * N)
prg.k(q, (N,), (8,), o, fb, buf(init), np.uint32(TRIPS))
r = np.empty(N, np.uint32); cl.enqueue_copy(q, r, o); fr = np.empty(4 * N, np.float32); cl.enqueue_copy(q, fr, fb)
want_h, want_f = ref(TRIPS)
assert (r == want_h).all(), np.flatnonzero(r != want_h)
same = (fr.view(np.uint32) == want_f.view(np.uint32)) | (np.isnan(fr) & np.isnan(want_f))
assert same.all(), (np.flatnonzero(~same), fr[~same], want_f[~same])
print("OK")
"""


@pytest.mark.parametrize("trips, limit", [(3000, "50"), (70000, "")], ids=["many_passes", "past_the_budget"])
def test_private_arrays_are_saved_and_put_back(python_with_icd, trips, limit):
    # A histogram and float sums in private arrays, written at every trip; the floats start at
    # NaN, infinities, -0 and denormals and keep them or not bit for bit through every pass
    # (VKCL_RESUME_LIMIT: 3,000 trips take many); and 70,000 trips rolled, past llvmpipe's budget.
    run(python_with_icd, PRIVATE.replace("TRIPS", str(trips)), env={"VKCL_RESUME_LIMIT": limit} if limit else None)


# Kernels that wait at barriers, with long loops that hold none (compiler/spirv_resume_sync.py):
# each work-item parks on its own count, and the work-group votes after the loop.
SYNC = r"""
src = '''kernel void k(global const uint *a, global const float *init, global uint *o, global float *f, uint n) {
  local uint l[64]; local float lf[64]; uint lid = get_local_id(0), g = get_global_id(0);
  l[lid] = lid * 7u; barrier(CLK_LOCAL_MEM_FENCE);
  // at the top of the kernel: the vote at the loop's merge; a do-while, trips differ
  uint s = l[(lid + 1) % get_local_size(0)], i = 0;
#pragma nounroll
  do { s = s * 1103515245u + (a[i % 64u] ^ i); i++; } while (i < n + lid * 3u);
  // guarded twice (the vote at the outer merge): some work-items skip it, a float state
  float x = init[g % 8u]; uint t = 0;
  if (g % 3u != 0u) {
    t = a[g % 64u];
#pragma nounroll
    for (uint j = g; j < n; j += 7u) { x = x * 0.5f + (float)(a[j % 64u] & 255u); s ^= j; }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  l[lid] = s; lf[lid] = x; barrier(CLK_LOCAL_MEM_FENCE);
  o[g] = l[get_local_size(0) - 1 - lid] + i + t; f[g] = lf[(lid + 1) % get_local_size(0)]; }'''
a = np.random.default_rng(2).integers(0, 1 << 30, 64, dtype=np.uint32)
init = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, -3e-39, 1.0, 3e38], np.float32)
f32 = np.float32
def ref(n, G, L):
    s_, i_, x_, t_ = {}, {}, {}, {}
    for g in range(G):
        lid = g % L; s = ((lid + 1) % L) * 7; i = 0
        while True:
            s = (s * 1103515245 + (int(a[i % 64]) ^ i)) & M; i += 1
            if not i < n + lid * 3: break
        x, t = init[g % 8], 0
        if g % 3:
            t = int(a[g % 64])
            for j in range(g, n, 7):
                x = f32(f32(x * f32(0.5)) + f32(int(a[j % 64]) & 255)); s ^= j
        s_[g], i_[g], x_[g], t_[g] = s, i, x, t
    o = [(s_[g - g % L + L - 1 - g % L] + i_[g] + t_[g]) & M for g in range(G)]
    f = [x_[g - g % L + (g % L + 1) % L] for g in range(G)]
    return np.array(o, np.uint32), np.array(f, np.float32)
prg = cl.Program(ctx, src).build()
k = cl.Kernel(prg, "k")
for G, L, n in SIZES:
    o, fb = cl.Buffer(ctx, mf.READ_WRITE, 4 * G), cl.Buffer(ctx, mf.READ_WRITE, 4 * G)
    k(q, (G,), (L,), buf(a), buf(init), o, fb, np.uint32(n))
    r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o); fr = np.empty(G, np.float32); cl.enqueue_copy(q, fr, fb)
    want, want_f = ref(n, G, L)
    assert (r == want).all(), (G, L, n, np.flatnonzero(r != want))
    same = (fr.view(np.uint32) == want_f.view(np.uint32)) | (np.isnan(fr) & np.isnan(want_f))
    assert same.all(), (G, L, n, np.flatnonzero(~same), fr[~same], want_f[~same])
print("OK")
"""


def test_loops_without_barriers_in_barrier_kernels_vote_after_them(python_with_icd):
    # VKCL_RESUME_LIMIT makes a few hundred trips take passes; work-groups of 8 to 64
    sizes = "[(64, 16, 300), (48, 8, 200), (64, 32, 150), (24, 24, 100), (64, 64, 90)]"
    run(python_with_icd, SYNC.replace("SIZES", sizes), env={"VKCL_RESUME_LIMIT": "50"})


def test_a_grid_stride_loop_then_a_reduction_in_local_memory(python_with_icd):
    # The common shape: each work-item sums a strided share of a long input (70,000 trips, past
    # llvmpipe's budget, cut before), then the work-group reduces in local memory with barriers.
    run(python_with_icd, """
src = '''kernel void k(global const uint *a, global uint *o, uint n, local uint *l) {
  uint acc = 0;
#pragma nounroll
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) acc = acc * 3u + a[i];
  l[get_local_id(0)] = acc;
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) < s) l[get_local_id(0)] += l[get_local_id(0) + s];
  }
  if (get_local_id(0) == 0) o[get_group_id(0)] = l[0]; }'''
G, L, n = 64, 16, 64 * 70000 + 40
a = np.random.default_rng(1).integers(0, 1000, n, dtype=np.uint32)
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * (G // L))
cl.Program(ctx, src).build().k(q, (G,), (L,), buf(a), o, np.uint32(n), cl.LocalMemory(4 * L))
r = np.empty(G // L, np.uint32); cl.enqueue_copy(q, r, o)
acc = np.zeros(G, np.uint64)
padded = np.zeros(-(-n // G) * G, np.uint64); padded[:n] = a
for t in range(len(padded) // G):
    live = np.arange(G) + t * G < n
    acc = np.where(live, (acc * 3 + padded[t * G:(t + 1) * G]) & M, acc)
want = (acc.reshape(-1, L).sum(1) & M).astype(np.uint32)
assert (r == want).all(), (r, want)
print("OK")
""")


def test_a_value_of_one_loop_saved_by_the_next(python_with_icd):
    # x is computed in the first loop's body and used after it, in the second loop, whose record
    # keeps it: it must be the value that left the first loop, also for work-items that
    # suspended inside the first loop (their x then comes through its new merge block).
    run(python_with_icd, """
src = '''kernel void k(global uint *o, uint n) { uint g = get_global_id(0), s = g, x = 0;
#pragma nounroll
  for (uint i = 0; i < n + g * 5u; i++) { s = s * 1103515245u + (i ^ 12345u); x = s ^ (i * 7u); }
#pragma nounroll
  for (uint j = 0; j < n; j++) s = s * 3u + (x ^ j);
  o[g] = s + x; }'''
def ref(n, G):
    out = []
    for g in range(G):
        s, x = g, 0
        for i in range(n + g * 5):
            s = (s * 1103515245 + (i ^ 12345)) & M; x = s ^ ((i * 7) & M)
        for j in range(n):
            s = (s * 3 + (x ^ j)) & M
        out.append((s + x) & M)
    return np.array(out, np.uint32)
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 24)
cl.Program(ctx, src).build().k(q, (24,), (8,), o, np.uint32(130))
r = np.empty(24, np.uint32); cl.enqueue_copy(q, r, o)
assert (r == ref(130, 24)).all(), np.flatnonzero(r != ref(130, 24))
print("OK")
""", env={"VKCL_RESUME_LIMIT": "50"})


def test_a_barrier_loop_after_loops_of_different_lengths(python_with_icd):
    # The work-items reach the barrier loop with different counts (a loop of lid-dependent trips
    # before it, with a private array); the barrier loop takes the group's largest count once,
    # before its header (spirv_resume._vote_once), and suspends by it at later trips.
    run(python_with_icd, """
src = '''kernel void k(global const uint *a, global uint *o, uint n) {
  local uint l[64]; uint lid = get_local_id(0); uint p[4] = {1, 2, 3, 4}; uint s = lid;
#pragma nounroll
  for (uint i = 0; i < n + lid; i++) { p[i & 3] += a[(i + lid) % 64u]; s ^= p[(i >> 2) & 3]; }
  l[lid] = s + p[0] + p[1] + p[2] + p[3];
#pragma nounroll
  for (uint j = 0; j < n; j++) { barrier(CLK_LOCAL_MEM_FENCE); uint v = l[(lid + 1) % get_local_size(0)];
    barrier(CLK_LOCAL_MEM_FENCE); l[lid] = v * 3u + j; }
  o[get_global_id(0)] = l[lid]; }'''
a = np.random.default_rng(2).integers(0, 1 << 30, 64, dtype=np.uint32)
def ref(n, G, L):
    out = []
    for base in range(0, G, L):
        l = []
        for lid in range(L):
            p = [1, 2, 3, 4]; s = lid
            for i in range(n + lid):
                p[i & 3] = (p[i & 3] + int(a[(i + lid) % 64])) & M; s ^= p[(i >> 2) & 3]
            l.append((s + sum(p)) & M)
        for j in range(n):
            v = [l[(lid + 1) % L] for lid in range(L)]
            l = [(v[lid] * 3 + j) & M for lid in range(L)]
        out += l
    return np.array(out, np.uint32)
k = cl.Kernel(cl.Program(ctx, src).build(), "k")
for G, L, n in ((64, 16, 300), (48, 8, 200), (64, 32, 150), (64, 64, 90)):
    o = cl.Buffer(ctx, mf.READ_WRITE, 4 * G)
    k(q, (G,), (L,), buf(a), o, np.uint32(n))
    r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o)
    assert (r == ref(n, G, L)).all(), (G, L, n, np.flatnonzero(r != ref(n, G, L)))
print("OK")
""", env={"VKCL_RESUME_LIMIT": "50"})


PARTIAL = r"""
flat = '''kernel void k(global uint *o, uint n) { local uint l[64]; uint lid = get_local_id(0); uint s = lid;
#pragma nounroll
  for (uint j = 0; j < n; j++) { l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);
    s = l[(lid + 1) % get_local_size(0)] * 3u + j; barrier(CLK_LOCAL_MEM_FENCE); }
  o[get_global_id(0)] = s; }'''
vote = flat.replace("for (uint j = 0; j < n; j++) {",
                    "for (uint i = 0; i < n + lid; i++) s = s * 7u + i;\n  for (uint j = 0; j < n; j++) {")
# the loop without barriers suspends, then the group's local memory is written and read
shared = '''kernel void k(global uint *o, uint n) { local uint l[64]; uint lid = get_local_id(0); uint s = lid;
#pragma nounroll
  for (uint i = 0; i < n + lid; i++) s = s * 7u + i;
  l[lid] = s; barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = l[(lid + 1) % get_local_size(0)]; }'''
def ref(kind, n, G, L):
    out = []
    for base in range(0, G, L):
        s = list(range(L))
        if kind != "flat":
            for x in range(L):
                for i in range(n + x):
                    s[x] = (s[x] * 7 + i) & M
        if kind == "shared":
            out += [s[(x + 1) % L] for x in range(L)]
            continue
        for j in range(n):
            s = [(s[(x + 1) % L] * 3 + j) & M for x in range(L)]
        out += s
    return np.array(out, np.uint32)
def check(kinds, sizes, n):
    for kind in kinds:
        k = cl.Kernel(cl.Program(ctx, {"flat": flat, "vote": vote, "shared": shared}[kind]).build(), "k")
        for G, L in sizes:
            o = cl.Buffer(ctx, mf.READ_WRITE, 4 * G)
            k(q, (G,), (L,), o, np.uint32(n))
            r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o)
            want = ref(kind, n, G, L)
            assert (r == want).all(), (kind, G, L, np.flatnonzero(r != want))
"""


def test_groups_with_a_partial_batch_suspend_together(python_with_icd):
    # llvmpipe runs a group's rows in batches of 8 lanes: in groups of 4, 12 or 13 work-items a
    # batch has lanes past the group's width, which missed the group's votes (an atomic gives
    # them 0) and went on where the group suspended: wrong results or a reported cut. They
    # return first thing now (compiler/spirv_extra_lanes.py), and these groups suspend in passes
    # (VKCL_RESUME_LIMIT: 120 trips take three) in a barrier loop voting once, after a vote
    # following a loop without barriers, and with local memory written after such a vote.
    run(python_with_icd, PARTIAL + """
check(("flat", "vote", "shared"), ((24, 12), (40, 10), (60, 20), (72, 36), (26, 13), (24, 4), (12, 3), (8, 1)), 120)
print("OK")
""", env={"VKCL_RESUME_LIMIT": "50"})


def test_groups_with_a_partial_batch_past_llvmpipes_budget(python_with_icd):
    # 150,000 trips: past llvmpipe's 65,535 back-edges per batch, so on lavapipe in passes at
    # the real budget (before, groups of 12 never suspended and their launches failed as cut)
    run(python_with_icd, PARTIAL + """
check(("vote",), ((24, 12), (8, 4)), 150000)
print("OK")
""")


def test_partial_batches_keep_float_edge_values(python_with_icd):
    # a float state through NaN, infinities, signed zeros, denormals (where the device keeps
    # them) and huge values, each work-item its own trip count in a loop without barriers, then
    # exchanged through local memory in a barrier loop, in groups of 12 and 13 (a partial
    # batch) and 16, in short passes on lavapipe: each result's bits hashed per trip
    run(python_with_icd, """
src = '''kernel void k(global uint *o, global const float *a, uint n) { local uint l[64]; uint lid = get_local_id(0);
  uint h = lid;
#pragma nounroll
  for (uint i = 0; i < n + 3u * lid; i++) {
    float t = fmin(a[(i + lid) & 255] * a[(i * 7u) & 255], a[(i * 3u + 1u) & 255] - a[i & 255]) + a[(i + lid) & 255] * 0.5f;
    h = h * 1103515245u + ((isnan(t) ? 0x7fc00000u : as_uint(t)) ^ 12345u); }
  for (uint j = 0; j < n; j++) { l[lid] = h; barrier(CLK_LOCAL_MEM_FENCE);
    h = l[(lid + 1) % get_local_size(0)] * 3u + j; barrier(CLK_LOCAL_MEM_FENCE); }
  o[get_global_id(0)] = h; }'''
special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.17e-38, 3.4e38, -3.4e38,
                    1.0, -1.0, 0.5, 2.0, 1e-30, 1e30], np.float32)
# as test_long_loops' edge values: NVIDIA flushes denormals in fmin and additions (it claims
# none), lavapipe keeps them (and is where this kernel suspends); fmin(-0, +0)'s sign is open
dev = q.device
if not (dev.single_fp_config & cl.device_fp_config.DENORM or "llvmpipe" in dev.name):
    special[5:8] = [1e-18, -1e-18, 1e-17]
    special[14] = 1e-16
a = np.concatenate([special, np.random.default_rng(5).uniform(-1.01, 1.01, 240).astype(np.float32)])
a[100:116] = special
probe = np.empty(1, np.uint32)
p = cl.Program(ctx, "kernel void p(global uint *o, global const float *a) { o[0] = as_uint(fmin(a[0], a[1])); }").build()
pb = cl.Buffer(ctx, mf.READ_WRITE, 4)
p.p(q, (1,), (1,), pb, buf(np.array([-0.0, 0.0], np.float32))); cl.enqueue_copy(q, probe, pb)
negative_zero_min = probe[0] == 0x80000000
def lane(x, n):
    h = x
    with np.errstate(all="ignore"):
        for i in range(n + 3 * x):
            u, v = a[(i + x) & 255] * a[(i * 7) & 255], a[(i * 3 + 1) & 255] - a[i & 255]
            m = np.fmin(u, v)
            if negative_zero_min and u == 0 and v == 0 and (np.signbit(u) or np.signbit(v)):
                m = np.float32(-0.0)
            t = np.float32(m + a[(i + x) & 255] * np.float32(0.5))
            bits = 0x7fc00000 if np.isnan(t) else int(t.view(np.uint32))
            h = (h * 1103515245 + (bits ^ 12345)) & M
    return h
n = 120
k = cl.Program(ctx, src).build().k
ab = buf(a)
for G, L in ((24, 12), (26, 13), (32, 16)):
    o = cl.Buffer(ctx, mf.READ_WRITE, 4 * G)
    k(q, (G,), (L,), o, ab, np.uint32(n))
    r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o)
    want = []
    for base in range(0, G, L):
        s = [lane(x, n) for x in range(L)]
        for j in range(n):
            s = [(s[(x + 1) % L] * 3 + j) & M for x in range(L)]
        want += s
    assert (r == np.array(want, np.uint32)).all(), (G, L, np.flatnonzero(r != np.array(want, np.uint32)))
print("OK")
""", env={"VKCL_RESUME_LIMIT": "50"})


def test_async_copies_of_wide_vectors(python_with_icd):
    # CTS basic's async_copy_global_to_local for char16: two loops around an async copy, each
    # guarded, in one selection; lavapipe could not make a pipeline of the SPIR-V the votes
    # after them made (not structured), so the launch failed.
    run(python_with_icd, """
src = '''kernel void k(global const char16 *src, global char16 *dst, local char16 *l, int total, int per) {
  for (int i = 0; i < per; i++) l[get_local_id(0) * per + i] = (char16)(char)0;
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t e = async_work_group_copy(l, src + total * get_group_id(0), (size_t)total, 0);
  wait_group_events(1, &e);
  for (int i = 0; i < per; i++) dst[get_global_id(0) * per + i] = l[get_local_id(0) * per + i]; }'''
L, G, per = 64, 256, 3
a = np.random.default_rng(3).integers(-128, 128, (G * per, 16), dtype=np.int8)
d = cl.Buffer(ctx, mf.READ_WRITE, a.nbytes)
cl.Program(ctx, src).build().k(q, (G,), (L,), buf(a), d, cl.LocalMemory(L * per * 16), np.int32(L * per), np.int32(per))
r = np.empty_like(a); cl.enqueue_copy(q, r, d)
assert (r == a).all()
print("OK")
""")


def test_six_loops_with_work_items_in_different_loops(python_with_icd):
    # Six loops in a row, each work-item its own trip counts: at a pass its work-items have
    # suspended in different loops, so the pass dispatches once a loop, each with the pipeline
    # that resumes that loop (SPEC_RESUME_LOOP); the others' records wait for theirs. Before,
    # an entry point of more than four loops was left alone and its long loops were cut.
    run(python_with_icd, """
loops = "\\n".join(f"#pragma nounroll\\n  for (uint i = 0; i < n + (gid * 7919u + {k * 104729}u) % 30000u; i++) s = s * {2 * k + 3}u + (i ^ {k}u);"
                   for k in range(6))
src = f"kernel void k(global uint *o, uint n) {{ uint gid = get_global_id(0); uint s = gid;\\n{loops}\\n  o[gid] = s; }}"
G = 16
def ref(n):
    out = []
    for g in range(G):
        s = g
        for k in range(6):
            for i in range(n + (g * 7919 + k * 104729) % 30000):
                s = (s * (2 * k + 3) + (i ^ k)) & M
        out.append(s)
    return np.array(out, np.uint32)
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * G)
cl.Program(ctx, src).build().k(q, (G,), (8,), o, np.uint32(1000))  # 1,000 to 31,000 trips a loop
r = np.empty(G, np.uint32); cl.enqueue_copy(q, r, o)
want = ref(1000)
assert (r == want).all(), np.flatnonzero(r != want)
print("OK")
""")
