"""The crash corpus (issue 21): OpenCL C that is valid but crashed clspv (pyclspv 0.0.1) or
gave SPIR-V that lavapipe crashed on or refused, each case the smallest program that did. Every case must
build and compute what the host computes, bit for bit. The routes around the crashes live in
the prelude (prelude/*.py) and the compiler's rewrites (struct_copies, private_elements, packed_locals,
vector_inserts, spirv_private_chains); the SPIR-V-input crashes are tests/icd/test_il_lowering.py's."""
import pytest

pytest.importorskip("pyopencl")

HEADER = """
import math, struct
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
N = 16
rng = np.random.default_rng(5)
specials = np.array([0.0, -0.0, 1.0, -1.5, 3.25, 1e300, -1e-300, 5e-324, -2.5e-310, math.inf, -math.inf,
                     math.nan, 2.0 ** 52 + 1, -7.0, 0.1, 65504.0])

def run(src, ins, out_dtype, n_out=N):
    prog = cl.Program(ctx, "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\\n" + src).build()
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a)) for a in ins]
    out = np.zeros(n_out, out_dtype)
    bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    prog.k(q, (N,), None, *bufs, bo)
    cl.enqueue_copy(q, out, bo)
    return out

def same(got, want, what):
    g, w = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if g.dtype.kind == "f":
        ok = (g.view(np.uint8) == w.astype(g.dtype).view(np.uint8)).reshape(len(g), -1).all(1) | (np.isnan(g) & np.isnan(w))
    else:
        ok = g == w
    if not ok.all():
        i = int(np.argmin(ok))
        print("FAIL", what, "at", i, g[i], w[i])
"""

# (name, OpenCL C with a kernel `k`, Python computing `got` and checking it)
CASES = {
    # clspv's library has no convert_double<n>(uint<n>): any call of an undefined function crashed it
    "convert_double4_uint4": """
u = rng.integers(0, 2**32, N, dtype=np.uint32)
got = run('kernel void k(global const uint4 *a, global double4 *o) { size_t i = get_global_id(0); if (i < 4) o[i] = convert_double4(a[i]); }', [u], np.float64)
same(got, u.astype(np.float64), "convert_double4(uint4)")
got = run('kernel void k(global const uint *a, global double *o) { size_t i = get_global_id(0); o[i] = convert_double(a[i]); }', [u], np.float64)
same(got, u.astype(np.float64), "convert_double(uint)")
""",
    "vstore_half_double": """
got = run('kernel void k(global const double *a, global half *o) { size_t i = get_global_id(0); vstore_half(a[i], i, o); }', [specials], np.float16)
same(got, specials.astype(np.float16), "vstore_half(double)")
""",
    "signbit_double": """
got = run('kernel void k(global const double *a, global int *o) { size_t i = get_global_id(0); o[i] = signbit(a[i]); }', [specials], np.int32)
same(got, np.signbit(specials).astype(np.int32), "signbit(double)")
""",
    "atan2_double": """
y = specials; x = specials[::-1].copy()
got = run('kernel void k(global const double *y, global const double *x, global double *o) { size_t i = get_global_id(0); o[i] = atan2(y[i], x[i]); }', [y, x], np.float64)
want = np.arctan2(y, x)
close = np.isclose(got, want, rtol=2 ** -50, atol=0) | (got == want) | (np.isnan(got) & np.isnan(want))
if not (close & (np.signbit(got) == np.signbit(want)) | np.isnan(want)).all():
    print("FAIL atan2(double)", got, want)
""",
    "cross_double4_half4": """
a = rng.standard_normal(4 * N); b = rng.standard_normal(4 * N)
a[3::4] = 0; b[3::4] = 0
got = run('kernel void k(global const double4 *a, global const double4 *b, global double4 *o) { size_t i = get_global_id(0); o[i] = cross(a[i], b[i]); }', [a, b], np.float64, 4 * N)
A, B = a.reshape(-1, 4), b.reshape(-1, 4)
want = np.zeros((N, 4))
for j, (p, r) in enumerate(((1, 2), (2, 0), (0, 1))):
    want[:, j] = A[:, p] * B[:, r] - A[:, r] * B[:, p]
same(got, want.ravel(), "cross(double4)")
ah, bh = a.astype(np.float16), b.astype(np.float16)
got = run('kernel void k(global const half *a, global const half *b, global half *o) { size_t i = get_global_id(0); vstore_half4(convert_float4(cross(vload4(i, a), vload4(i, b))), i, o); }', [ah, bh], np.float16, 4 * N)
Ah, Bh = ah.reshape(-1, 4).astype(np.float32), bh.reshape(-1, 4).astype(np.float32)
wh = np.zeros((N, 4), np.float32)
for j, (p, r) in enumerate(((1, 2), (2, 0), (0, 1))):  # products of halves are exact in float
    wh[:, j] = Ah[:, p] * Bh[:, r] - Ah[:, r] * Bh[:, p]
wh = wh.ravel().astype(np.float16)
if not (np.abs(got.astype(np.float32) - wh.astype(np.float32)) <= np.spacing(np.abs(wh)).astype(np.float32)).all():
    print("FAIL cross(half4)", got, wh)  # within the half limit (the float difference rounded twice)
""",
    "fdim_double3": """
x = specials; y = specials[::-1].copy()
got = run('kernel void k(global const double *x, global const double *y, global double *o) { size_t i = get_global_id(0); if (i < 5) vstore3(fdim(vload3(i, x), vload3(i, y)), i, o); }', [x, y], np.float64)
want = np.where(np.isnan(x) | np.isnan(y), np.nan, np.where(x > y, x - y, 0.0))
same(got[:15], want[:15], "fdim(double3)")
""",
    # a run-time insert into a 3-element vector crashed clspv (8 and 16 were silently lost)
    "dynamic_insert_int3": """
v = rng.integers(-2**31, 2**31, 3 * N, dtype=np.int64).astype(np.int32)
got = run('kernel void k(global const int *v, global int *o) { size_t i = get_global_id(0); int3 t = vload3(i, v); t[i % 3] = -1; vstore3(t, i, o); }', [v], np.int32, 3 * N)
want = v.copy().reshape(-1, 3)
for i in range(N):
    want[i, i % 3] = -1
same(got, want.ravel(), "int3 v[k] = x")
""",
    # a private array of padded structs indexed at run time crashed clspv, then lavapipe
    "private_padded_structs": """
src = '''typedef struct { char c; int i; double d; short s; } T;
kernel void k(global const T *in, global const int *idx, global T *o) {
  size_t g = get_global_id(0);
  T a[4];
  for (int j = 0; j < 4; j++) a[j] = in[(g + j) % 16];
  a[idx[g] & 3] = a[(idx[g] >> 2) & 3];
  o[g] = a[g & 3];
}'''
dt = np.dtype({"names": ["c", "i", "d", "s"], "formats": [np.int8, np.int32, np.float64, np.int16],
               "offsets": [0, 4, 8, 16], "itemsize": 24})
t = np.zeros(N, dt)
t["c"] = rng.integers(-128, 128, N); t["i"] = rng.integers(-2**31, 2**31, N); t["d"] = specials
t["s"] = rng.integers(-2**15, 2**15, N)
idx = rng.integers(0, 16, N).astype(np.int32)
got = run(src, [t, idx], dt)
want = np.zeros(N, dt)
for g in range(N):
    a = [t[(g + j) % 16].copy() for j in range(4)]
    a[idx[g] & 3] = a[(idx[g] >> 2) & 3]
    want[g] = a[g & 3]
for f in ("c", "i", "s"):
    same(got[f], want[f], "padded struct field " + f)
same(got["d"], want["d"], "padded struct field d")
""",
    # an int view of a double in an unpacked struct in local memory crashed clspv (SIGSEGV)
    "int_view_of_a_double_in_a_local_struct": """
src = '''typedef struct { double v; int d; } W;
kernel void k(global const double *in, global int *out) {
  local W l[16];
  int i = get_local_id(0);
  l[i].v = in[i]; l[i].d = i;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[2 * i] = ((local int *)&l[15 - i].v)[0];
  out[2 * i + 1] = ((local int *)&l[15 - i].v)[1];
  out[32 + i] = l[15 - i].d;
}'''
prog = cl.Program(ctx, src).build()
o = np.zeros(3 * N, np.int32)
bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
prog.k(q, (N,), (N,), cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=specials), bo)
cl.enqueue_copy(q, o, bo)
same(o[:2 * N], specials[::-1].copy().view(np.int32), "int view of a local double")
same(o[2 * N:], np.arange(N)[::-1].astype(np.int32), "the int beside it")
""",
    # a 16-byte wrapper struct copied between buffers from a folded index (pyopencl's complex128
    # scans: `interval_results[g] = partial_scan_buffer[end - 1]`): clspv made it an i128 with an
    # invalid constant and lavapipe refused the pipeline (CL_OUT_OF_RESOURCES at the launch)
    "wrapped_double_pair_between_buffers": """
src = '''typedef union { struct { double x, y; } __attribute__((aligned(16)));
                 struct { double re, im; } __attribute__((aligned(16))); } C;
kernel void k(global const C *in, global C *out, int n) { int i = get_global_id(0); out[i] = in[n + i - 1]; }'''
x = np.concatenate([specials, specials[::-1], specials[:4]])
o = np.zeros(2 * N + 4)
bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
cl.Program(ctx, src).build().k(q, (N,), None, cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x), bo,
                               np.int32(2))
cl.enqueue_copy(q, o, bo)
same(o[:2 * N], x[2:2 * N + 2], "a double pair between buffers")
same(o[2 * N:], np.zeros(4), "past the copies")
""",
    # a union of a struct and a double2 copied through private memory looped clspv (the build
    # ended at its 120 s timeout): struct copies between global memory and a variable go member
    # by member (struct_copies)
    "union_of_a_struct_and_a_double2_through_private_memory": """
src = '''typedef union { struct { double x, y; }; double2 d; } C;
kernel void k(global const C *in, global C *out) { int i = get_global_id(0); C a = in[i];
  C b = in[i + 1]; C c; c.x = a.x + b.x; c.y = a.y + b.y; out[i] = c; }'''
x = np.concatenate([specials, specials[::-1], [2.0, -0.0]])
got = run(src, [x], np.float64, 2 * N)
with np.errstate(invalid="ignore"):
    want = x[:2 * N] + x[2:]
same(got, want, "a union's members added through private copies")
""",
    # on lavapipe, whose loops LLVM unrolls 16 times inside clspv: the index `(i * j) & 15` into a
    # 16-element private array became an i4 that clspv could not lower (SIGSEGV); such a program
    # is built again with its loops rolled (compiler/driver.py)
    "private_array_index_narrowed_by_unrolling": """
src = '''kernel void k(global const uint *a, global uint *o) { uint p[16]; uint j = a[0], n = a[1];
  for (uint i = 0; i < 16; i++) p[i] = i * j;
  uint s = 0; for (uint i = 0; i < n; i++) s += p[(i * j) & 15];
  o[get_global_id(0)] = s + (uint)get_global_id(0); }'''
got = run(src, [np.array([7, 1000], np.uint32)], np.uint32)
same(got, np.uint32(sum(((i * 7) & 15) * 7 for i in range(1000))) + np.arange(N, dtype=np.uint32), "p[(i * j) & 15]")
""",
    # struct { half h[3]; } at a folded index (`T t = in[n + i - 1]`) through a variable or local
    # memory: lavapipe crashed on clspv's SPIR-V (SIGSEGV), as for struct { double a[2]; } and
    # struct { float3 v; int k; } (tests/icd/test_structs.py has them all, every direction)
    "half3_struct_at_a_folded_index": """
src = '''typedef struct { half h[3]; } H;
kernel void k(global const H *in, global H *out, int n) {
  local H l[16];
  size_t i = get_global_id(0);
  H t = in[n + i - 1];
  out[i] = t;
  l[i] = in[n + i - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[N + n + i - 1] = l[15 - i];
}'''.replace("N +", "%d +" % N)
bits = np.array([0x7E01, 0xFE01, 0x7D00, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x03FF, 0x7BFF, 0x0400, 0x3C00, 0xBC00], np.uint16)
h = np.resize(bits, 3 * (N + 2)).view(np.float16)
prog = cl.Program(ctx, src).build()
o = np.zeros(3 * (2 * N + 2), np.float16)
bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
prog.k(q, (N,), (N,), cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=h), bo, np.int32(2))
cl.enqueue_copy(q, o, bo)
rows = h.view(np.uint16).reshape(-1, 3)
got = o.view(np.uint16).reshape(-1, 3)
same(got[:N].ravel(), rows[1:N + 1].ravel(), "half[3] through a variable")
same(got[N + 1:2 * N + 1].ravel(), rows[1:N + 1][::-1].ravel(), "half[3] through local memory")
""",
    # a struct copied into a private array's element at a run-time index from a folded one:
    # clspv wrote its -1 element index as 2^31 - 1 and lavapipe died (SIGSEGV) running it; with
    # `double a[2]` clspv crashed, with a padded struct it ran until the compile timeout
    "struct_into_a_private_array_element": """
src = '''typedef struct { float3 v; int k; } T;
kernel void k(global const T *in, global T *out, int n) {
  size_t i = get_global_id(0);
  T a[2];
  a[i & 1] = in[n + i - 1];
  a[(i + 1) & 1] = in[i];
  out[i] = a[i & 1];
}'''
dt = np.dtype({"names": ["v", "k"], "formats": [(np.float32, 3), np.int32], "offsets": [0, 16], "itemsize": 32})
t = np.zeros(N + 2, dt)
t["v"] = np.resize(specials.astype(np.float32), 3 * (N + 2)).reshape(-1, 3)
t["k"] = rng.integers(-2**31, 2**31, N + 2)
prog = cl.Program(ctx, src).build()
o = np.zeros(N, dt)
bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
prog.k(q, (N,), None, cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=t), bo, np.int32(3))
cl.enqueue_copy(q, o, bo)
same(o["v"].ravel(), t["v"][2:N + 2].ravel(), "float3 member")
same(o["k"], t["k"][2:N + 2], "int member")
""",
    # clspv's SPIR-V writer crashed on the rotated loops of a do-while around a `for` left by a
    # `break`, with a loop left by a `return` after them (every device); built without loop
    # rotation now (compiler/driver.py)
    "rotated_loops_before_a_returning_loop": """
src = '''kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g; uint i0 = 0;
  do { i0++;
    for (uint i1 = 0; i1 < n; i1++) { uint i2 = 0;
      do { i2++; s = s * 1103515245u + i2; } while (i2 < n);
      if ((s % 1009u) == 770u) break; } } while (i0 < m);
  for (uint i5 = 0; i5 < n; i5++) { s = s * 1103515245u + i5; if ((s % 211u) == 111u) { o[g] = s; return; } }
  o[g] = s + 1; }'''
M = 0xFFFFFFFF
def ref(g, n, m):
    s, i0 = g, 0
    while True:
        i0 += 1
        for i1 in range(n):
            i2 = 0
            while True:
                i2 += 1
                s = (s * 1103515245 + i2) & M
                if i2 >= n:
                    break
            if s % 1009 == 770:
                break
        if i0 >= m:
            break
    for i5 in range(n):
        s = (s * 1103515245 + i5) & M
        if s % 211 == 111:
            return s
    return (s + 1) & M
prog = cl.Program(ctx, src).build()
for n, m in ((40, 7), (3, 1), (0, 2)):
    o = np.zeros(N, np.uint32)
    bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
    prog.k(q, (N,), None, bo, np.uint32(n), np.uint32(m))
    cl.enqueue_copy(q, o, bo)
    same(o, np.array([ref(g, n, m) for g in range(N)], np.uint32), f"n={n} m={m}")
""",
    # three double `pow`s of constant exponents, inlined: a pointer phi with a poison input, on
    # which clspv's SimplifyPointerBitcastPass crashed (SIGSEGV); built with the calls kept
    # (build_ways). Exact for x^2 and x^3 (in range), sqrt's for x^0.5 within pow's 16 ulp.
    "three_double_pows_of_constant_exponents": """
x = np.array([-100.0, -3.0, 2.0, 10.0, 0.5, 1.5, 0.0, -0.0, 3.25, 7.0, 1e-3, 12.5, 9.0, 0.25, 64.0, 1e10])
got = run('kernel void k(global const double *x, global double *o) { size_t i = get_global_id(0); double v = x[i];'
          ' o[3 * i] = pow(v, 2.0); o[3 * i + 1] = pow(v, 3.0); o[3 * i + 2] = pow(v, 0.5); }', [x], np.float64, 3 * N)
same(got[0::3], x * x, "pow(x, 2)")
same(got[1::3], x * x * x, "pow(x, 3)")
roots = got[2::3]
want = np.where(x < 0, np.nan, np.sqrt(np.abs(x)))
ok = (np.isnan(roots) & np.isnan(want)) | (np.abs(roots - want) <= 16 * np.spacing(np.abs(want)))
if not ok.all():
    print("FAIL pow(x, 0.5)", roots, want)
""",
    # an array of global (and constant) pointers indexed at run time, as darktable's Markesteijn
    # demosaic indexes `global float *rgb[4]` by `c ^ d`: clspv crashed (SIGSEGV); the loads of
    # such pointers are selects among the elements now (pointer_arrays)
    "global_pointer_array_at_a_run_time_index": """
a, b, c = specials, -specials[::-1], rng.standard_normal(N)  # NaN, infinities, -0, denormals: bit for bit
got = run('kernel void k(global const double *a, global const double *b, global const double *c, global double *o) {'
          ' size_t i = get_global_id(0); global const double *p[3] = {a, b, c}; o[i] = p[(i * 7u) % 3u][i]; }',
          [a, b, c], np.float64)
same(got, np.array([(a, b, c)[(i * 7) % 3][i] for i in range(N)]), "p[(i * 7) % 3][i]")
got = run('kernel void k(global const double *a, global const double *b, global double *o) {'
          ' size_t i = get_global_id(0); global double *w[2] = {o, o}; global const double *p[2] = {a, b};'
          ' w[i & 1u][i] = p[(i >> 1) & 1u][i] * 2.0; }', [a, b], np.float64)
same(got, np.array([(a, b)[(i >> 1) & 1][i] * 2 for i in range(N)]), "w[i & 1][i] = p[(i >> 1) & 1][i] * 2")
""",
    # a private struct holding a pointer (and a ulong) copied by assignment: clspv's whole copy
    # read its members one to three bytes off (CLSmith's structs of globals: `s1.d` was 0x700
    # for 7), or never finished; such copies go member by member (struct_copies._holds_pointer).
    # The float member carries NaN, infinities, -0 and denormals bit for bit.
    "private_struct_with_a_pointer_copied_whole": """
src = '''
struct A { ulong a; char b; short c; uint d; int e; int *p; float f; };
struct B { ulong a; char b; short c[4]; uint d; int *p; };
struct C { ulong a; short c; uint d; int *p; };
kernel void k(global const float *in, global ulong *o) {
  size_t i = get_global_id(0); int x = (int)i;
  struct A a1, a2 = {i + 1, (char)(i + 2), (short)(i + 3), (uint)i + 7, (int)i + 8, &x, in[i]};
  struct B b1, b2 = {i, 2, {3, (short)i, 5, 6}, (uint)i * 3u, &x};
  struct C c1, c2 = {i, (short)(i + 3), (uint)i + 70, &x};
  a1 = a2; b1 = b2; c1 = c2;
  global ulong *r = o + 12 * i;
  r[0] = a1.a; r[1] = (ulong)(uchar)a1.b; r[2] = (ulong)(ushort)a1.c; r[3] = a1.d; r[4] = (ulong)(uint)a1.e;
  r[5] = 1; r[6] = as_uint(a1.f);  /* (reading the pointer after the copy still crashes clspv: status.md) */
  r[7] = b1.d; r[8] = (ulong)(ushort)b1.c[1]; r[9] = 1;
  r[10] = c1.d; r[11] = (ulong)(ushort)c1.c;
}'''
with np.errstate(over='ignore'):
    f = specials.astype(np.float32)
o = run(src, [f], np.uint64, 12 * N)
want = []
for i in range(N):
    want += [i + 1, i + 2, i + 3, i + 7, i + 8, 1, int(f[i:i + 1].view(np.uint32)[0]), 3 * i, i, 1, i + 70, i + 3]
same(o, np.array(want, np.uint64), "members after the copies")
""",
    # volatile accesses of private memory, which CLSmith writes in nearly every kernel: a
    # `T * volatile` pointer and a copy of a struct with a volatile member crashed clspv
    # (SIGSEGV); they are plain accesses now (private_volatile: no one else sees private memory)
    "volatile_private_pointer_and_member": """
src = '''
struct S { volatile int a; int b; volatile float f; };
kernel void k(global const float *in, global float *o) {
  size_t i = get_global_id(0); int x = (int)i * 3;
  int * volatile p = &x;
  volatile int * volatile q = p;
  struct S s1, s2 = {(int)i + 1, 2, in[i]};
  s1 = s2;
  *q += 1;
  o[3 * i] = (float)*p; o[3 * i + 1] = (float)(s1.a + s1.b); o[3 * i + 2] = s1.f;
}'''
with np.errstate(over='ignore'):
    f = specials.astype(np.float32)
o = run(src, [f], np.float32, 3 * N)
want = np.array([[3 * i + 1, i + 3, f[i]] for i in range(N)], np.float32).reshape(-1)
same(o, want, "through volatile private pointers and a copied volatile member")
""",
    # a loop over [a, e) by a pointer, a and e kernel arguments (`for (p = a; p < e; p++)`), and
    # over [a, a + n): clspv crashed on the order comparison of two global pointers (SIGSEGV);
    # the front end's route compares their addresses (pointer_compares), taken where a build
    # crashed clspv. The sums are sequential float sums, bit for bit.
    # buffers picked per work-group in an if/else with work of its own in each branch (Rodinia's
    # heartwall): LLVM's StructurizeCFG left a phi of the pointer with a poison input on the path
    # that skips the else, and clspv's SPIR-V writer crashed on it (SIGSEGV); built again with
    # the pointer variables as integers (pointer_variables). Doubles carry NaN, infinities, -0
    # and denormals bit for bit.
    "pointers_picked_in_an_if_else": """
a, b = specials, -specials[::-1]
ia, ib = np.arange(80, dtype=np.int32), np.arange(80, dtype=np.int32) * 3
src = '''kernel void k(global const double *a, global const double *b, global int *ia, global int *ib,
                  global double *o, global int *rows, int n) {
    int bx = get_group_id(0);
    global const double *d_in; global int *row; int point;
    if (bx < n) { point = bx; row = ia; d_in = &a[point * 4]; if (get_local_id(0) == 0) ia[point + 64] += 1; }
    else { point = bx - n; row = ib; d_in = &b[point * 4]; if (get_local_id(0) == 0) ib[point + 64] += 2; }
    barrier(CLK_GLOBAL_MEM_FENCE);
    o[get_global_id(0)] = d_in[get_local_id(0)];
    rows[get_global_id(0)] = row[point];
}'''
prog = cl.Program(ctx, src).build()
bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x) for x in (a, b, ia, ib)]
o, rows = np.zeros(N, np.float64), np.zeros(N, np.int32)
bo, br = (cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x) for x in (o, rows))
n = 2                                        # groups 0, 1 read a; groups 2, 3 read b
prog.k(q, (N,), (4,), *bufs, bo, br, np.int32(n))
cl.enqueue_copy(q, o, bo); cl.enqueue_copy(q, rows, br)
g, l = np.arange(N) // 4, np.arange(N) % 4
same(o, np.where(g < n, a[(g * 4 + l) % N], b[((g - n) * 4 + l) % N]), "d_in[lid]")
same(rows, np.where(g < n, ia[g], ib[g - n]), "row[point]")
""",
    "pointer_loop_between_two_arguments": """
align = dev.mem_base_addr_align // 8
count = align // 4
x = rng.standard_normal(2 * count).astype(np.float32)
x[:4] = [np.inf, -0.0, 1e-40, 3.0]
src = '''kernel void k(global float *o, global const float *a, global const float *e, uint n) {
  float s = 0.0f, t = 0.0f;
  for (global const float *p = a; p < e; p++) s += *p;
  for (global const float *p = a; p < a + n; p++) t += *p;
  o[2 * get_global_id(0)] = s; o[2 * get_global_id(0) + 1] = t; }'''
prog = cl.Program(ctx, src).build()
bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
end = bx.get_sub_region(align, align)
o = np.zeros(2 * N, np.float32)
bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
prog.k(q, (N,), None, bo, bx, end, np.uint32(count // 2))
cl.enqueue_copy(q, o, bo)
def seq(v):
    s = np.float32(0)
    for y in v:
        s = np.float32(s + y)
    return s
same(o, np.array([seq(x[:count]), seq(x[:count // 2])] * N, np.float32), "sums over [a, e) and [a, a + n)")
""",
}


@pytest.mark.parametrize("case", list(CASES))
def test_builds_and_computes_right(python_with_icd, case):
    result = python_with_icd(HEADER + CASES[case] + "\nprint('OK')\n", timeout=300,
                             env={"PYOPENCL_COMPILER_OUTPUT": "0"})
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in result.stdout and "OK" in result.stdout, text[-5000:]
