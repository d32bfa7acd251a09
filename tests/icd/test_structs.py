"""Structs in kernels (issue 21: clspv crashed, looped or miscompiled on valid code): copies between
global, local and private memory, reductions in local memory, and pyopencl's code that met them.

Every layout's data is random bytes with edge values written over every third element's fields
(NaN with payloads, signalling NaN, infinities, -0, denormals, the largest and smallest integers);
results are compared bit for bit, field by field (padding bytes are not compared: C leaves them
unspecified), against permutations computed on the host.
"""
import pytest

pytest.importorskip("pyopencl")

HEADER = r"""
import numpy as np, pyopencl as cl, pyopencl.array as cla, time
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
rng = np.random.default_rng(21)

EDGES = {
    ("f", 4): [0x7FC00123, 0xFFC00001, 0x7FA00000, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001,
               0x007FFFFF, 0x7F7FFFFF, 0x00800000],
    ("f", 8): [0x7FF8000000000123, 0xFFF8000000000001, 0x7FF4000000000000, 0x7FF0000000000000,
               0xFFF0000000000000, 0x8000000000000000, 0x0000000000000001, 0x000FFFFFFFFFFFFF,
               0x7FEFFFFFFFFFFFFF],
    ("f", 2): [0x7E01, 0xFE01, 0x7D00, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x03FF, 0x7BFF, 0x0400],
    ("i", 1): [-128, 127, -1, 0], ("u", 1): [255, 0, 128],
    ("i", 2): [-32768, 32767, -1], ("u", 2): [65535, 0, 32768],
    ("i", 4): [-2**31, 2**31 - 1, -1], ("u", 4): [2**32 - 1, 2**31, 0],
    ("i", 8): [-2**63, 2**63 - 1, -1], ("u", 8): [2**64 - 1, 2**63, 0],
}

def leaves(dt, base=0):
    # (offset, scalar dtype) of every scalar in the struct, nested structs and arrays included
    for name in dt.names:
        f, off = dt.fields[name][:2]
        b, count = (f.subdtype[0], int(np.prod(f.subdtype[1]))) if f.subdtype else (f, 1)
        for i in range(count):
            if b.names:
                yield from leaves(b, base + off + i * b.itemsize)
            else:
                yield base + off + i * b.itemsize, b

def fill(dt, n):
    a = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt).copy()
    raw = a.view(np.uint8).reshape(n, dt.itemsize)
    for k, (off, b) in enumerate(leaves(dt)):
        edges = EDGES[(b.kind, b.itemsize)]
        bits = "<u%d" % b.itemsize if b.kind == "f" else "<%s%d" % (b.kind, b.itemsize)
        for e in range(0, n, 3):
            raw[e, off:off + b.itemsize] = np.array([edges[(e // 3 + k) % len(edges)]], dtype=bits).view(np.uint8)
    return a

def same(got, want):
    got, want = np.ascontiguousarray(got), np.ascontiguousarray(want)
    dt = want.dtype
    m = np.zeros(dt.itemsize, bool)
    for off, b in leaves(dt):
        m[off:off + b.itemsize] = True
    g = got.view(np.uint8).reshape(-1, dt.itemsize)[:, m]
    w = want.view(np.uint8).reshape(-1, dt.itemsize)[:, m]
    bad = np.nonzero((g != w).any(axis=1))[0]
    assert bad.size == 0, ("elements differ", bad[:10], g[bad[:2]], w[bad[:2]])

def buf(a):
    return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)

def get(b, like):
    r = np.zeros_like(like); cl.enqueue_copy(q, r, b); q.finish(); return r
"""


def run(python_with_icd, body: str, env: dict | None = None):
    result = python_with_icd(HEADER + body, timeout=300, env={"PYOPENCL_COMPILER_OUTPUT": "0", **(env or {})})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "OK" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    return result


# name: (OpenCL C declaration of T, numpy dtype of T, KEY(t) in C, the same key from numpy)
LAYOUTS = {
    "float2_like": ("typedef struct { float x, y; } T;",
                    "np.dtype({'names': ['x', 'y'], 'formats': ['<f4', '<f4'], 'offsets': [0, 4], 'itemsize': 8})",
                    "as_uint(t.y)", "a['y'].view(np.uint32)"),
    "double2_like": ("typedef struct { double x, y; } T;",
                     "np.dtype({'names': ['x', 'y'], 'formats': ['<f8', '<f8'], 'offsets': [0, 8], 'itemsize': 16})",
                     "as_ulong(t.x)", "a['x'].view(np.uint64)"),
    "mixed_padding": ("typedef struct { char c; int i; double d; short s; } T;",
                      "np.dtype({'names': ['c', 'i', 'd', 's'], 'formats': ['i1', '<i4', '<f8', '<i2'],"
                      " 'offsets': [0, 4, 8, 16], 'itemsize': 24})",
                      "as_uint(t.i)", "a['i'].view(np.uint32)"),
    "leading_array": ("typedef struct { uint a[3]; float f; } T;",
                      "np.dtype({'names': ['a', 'f'], 'formats': [('<u4', 3), '<f4'], 'offsets': [0, 12],"
                      " 'itemsize': 16})",
                      "t.a[1]", "a['a'][:, 1].copy()"),
    "nested": ("typedef struct { short h; float2 v; } In; typedef struct { In inner; uchar tag; ulong u; int k[2]; } T;",
               "np.dtype({'names': ['inner', 'tag', 'u', 'k'], 'formats': [np.dtype({'names': ['h', 'v'],"
               " 'formats': ['<i2', ('<f4', 2)], 'offsets': [0, 8], 'itemsize': 16}), 'u1', '<u8', ('<i4', 2)],"
               " 'offsets': [0, 16, 24, 32], 'itemsize': 40})",
               "t.u", "a['u'].copy()"),
    "vector3_member": ("typedef struct { float3 p; char c; } T;",
                       "np.dtype({'names': ['p', 'c'], 'formats': [('<f4', 3), 'i1'], 'offsets': [0, 16],"
                       " 'itemsize': 32})",
                       "as_uint(t.p.y)", "a['p'][:, 1].copy().view(np.uint32)"),
    "array_fields_60_bytes": ("typedef struct { uint x[2]; int y; uint z[3][4]; } T;",
                              "np.dtype({'names': ['x', 'y', 'z'], 'formats': [('<u4', 2), '<i4', ('<u4', (3, 4))],"
                              " 'offsets': [0, 8, 12], 'itemsize': 60})",
                              "t.z[2][3]", "a['z'][:, 2, 3].copy()"),
    # copied through private and local memory at a folded index (`T t = in[n + i - 1]; out[i] =
    # t;`) these crashed lavapipe (SIGSEGV) or looped clspv until the build's timeout, and so did
    # copies into a private array's elements (`a[i & 1] = in[n + i - 1]`, kernel private_elements)
    "double_array": ("typedef struct { double a[2]; } T;",
                     "np.dtype({'names': ['a'], 'formats': [('<f8', 2)], 'offsets': [0], 'itemsize': 16})",
                     "as_ulong(t.a[1])", "a['a'][:, 1].copy().view(np.uint64)"),
    "int_array": ("typedef struct { int a[4]; } T;",
                  "np.dtype({'names': ['a'], 'formats': [('<i4', 4)], 'offsets': [0], 'itemsize': 16})",
                  "t.a[2]", "a['a'][:, 2].copy()"),
    "float3_int": ("typedef struct { float3 v; int k; } T;",
                   "np.dtype({'names': ['v', 'k'], 'formats': [('<f4', 3), '<i4'], 'offsets': [0, 16], 'itemsize': 32})",
                   "t.k", "a['k'].copy()"),
    "double2_member": ("typedef struct { double2 v; } T;",
                       "np.dtype({'names': ['v'], 'formats': [('<f8', 2)], 'offsets': [0], 'itemsize': 16})",
                       "as_ulong(t.v.y)", "a['v'][:, 1].copy().view(np.uint64)"),
    "nested_char_double": ("typedef struct { struct { char c; double d; } v; int k; } T;",
                           "np.dtype({'names': ['v', 'k'], 'formats': [np.dtype({'names': ['c', 'd'], 'formats':"
                           " ['i1', '<f8'], 'offsets': [0, 8], 'itemsize': 16}), '<i4'], 'offsets': [0, 16],"
                           " 'itemsize': 24})",
                           "t.k", "a['k'].copy()"),
    "half_array": ("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\ntypedef struct { half h[3]; } T;",
                   "np.dtype({'names': ['h'], 'formats': [('<f2', 3)], 'offsets': [0], 'itemsize': 6})",
                   "as_ushort(t.h[1])", "a['h'][:, 1].copy().view(np.uint16)"),
}

KERNELS = r"""
#define WG 64
typedef struct { T v; } W;
#define KEY(t) (%s)
T pick(global const T *in, size_t i) { return in[i]; }
kernel void permute(global const T *in, global T *out)
{
    local T l[WG];
    size_t lid = get_local_id(0), g = get_global_id(0);
    l[lid] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    T p = l[(lid + 1) %% WG];
    barrier(CLK_LOCAL_MEM_FENCE);
    l[lid] = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = l[(lid + 3) %% WG];
}
kernel void permute_arg(global const T *in, global T *out, local T *l)
{
    size_t lid = get_local_id(0), g = get_global_id(0);
    l[lid] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    T p = l[(lid + 5) %% WG];
    barrier(CLK_LOCAL_MEM_FENCE);
    *(l + lid) = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = l[(lid + 2) %% WG];
}
kernel void wrapped(global const T *in, global T *out)
{
    local W lw[2][WG + 1];
    size_t lid = get_local_id(0), g = get_global_id(0);
    lw[1][lid].v = pick(in, g ^ 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    T p = lw[1][(lid + 9) %% WG].v;
    lw[0][lid] = lw[1][(lid + 1) %% WG];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = (lid & 1) ? p : lw[0][(lid + 2) %% WG].v;
}
kernel void argmax(global const T *in, global T *out)
{
    local T l[WG];
    size_t lid = get_local_id(0);
    l[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            T a = l[lid], b = l[lid + s];
            if (KEY(b) > KEY(a))
                l[lid] = b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[get_group_id(0)] = l[0];
}
kernel void reverse(global const T *in, global T *out)
{
    size_t i = get_global_id(0), n = get_global_size(0);
    T t = in[i];
    out[n - 1 - i] = t;
}
kernel void between_buffers(global const T *in, global T *out, global W *wout, int n)
{
    size_t i = get_global_id(0);
    out[i] = in[n + i - 1];      // the source's index folded into bytes by LLVM, then the other's
    wout[n + i - 1].v = in[i];
}
kernel void folded(global const T *in, global T *out, global T *lout, int n)
{
    local T l[WG];
    size_t i = get_global_id(0), lid = get_local_id(0);
    T t = in[n + i - 1];         // LLVM folds the index into bytes: through a variable, then local memory
    out[i] = t;
    l[lid] = in[n + i - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    lout[n + i - 1] = l[WG - 1 - lid];
}
kernel void private_elements(global const T *in, global T *out, int n)
{
    size_t i = get_global_id(0);
    T a[2], b[3];
    a[i & 1] = in[n + i - 1];    // into elements at a run-time index, from an index LLVM folds
    a[(i + 1) & 1] = in[i];
    b[0] = in[n + i - 1];        // at constant indices (b[0]: the IR names the array itself)
    b[1] = in[i];
    b[2] = a[i & 1];
    b[i %% 3] = b[(i + 1) %% 3];  // element to element
    T t = b[i %% 3];              // out of an element into a variable
    out[3 * i] = t;
    out[3 * i + 1] = a[(i + 1) & 1];
    out[3 * i + 2] = b[2];
}
kernel void private_swap(global const T *in, global T *out, uint shift)
{
    T a[4];
    size_t g = get_global_id(0);
    for (int j = 0; j < 4; j++)
        a[j] = in[4 * g + j];
    uint x = (g + shift) %% 4, y = (g + shift + 1) %% 4;
    T t = a[x];
    a[x] = a[y];
    a[y] = t;
    for (int j = 0; j < 4; j++)
        out[4 * g + j] = a[j];
}
"""


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_struct_layouts_through_local_private_and_global_memory(python_with_icd, layout):
    decl, dtype, key_c, key_np = LAYOUTS[layout]
    run(python_with_icd, f"""
dt = {dtype}
src = '''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
{decl}''' + {KERNELS!r} % {key_c!r}
p = cl.Program(ctx, src).build()
n, wg = 1024, 64
a = fill(dt, n)
A = buf(a)
lid = np.arange(n) % wg
base = np.arange(n) - lid

O = buf(np.zeros_like(a))
p.permute(q, (n,), (wg,), A, O)
same(get(O, a), a[base + (lid + 4) % wg])

O = buf(np.zeros_like(a))
p.permute_arg(q, (n,), (wg,), A, O, cl.LocalMemory(wg * dt.itemsize))
same(get(O, a), a[base + (lid + 7) % wg])

O = buf(np.zeros_like(a))
p.wrapped(q, (n,), (wg,), A, O)
want = np.where(lid & 1, base + ((lid + 9) % wg ^ 1), base + ((lid + 3) % wg ^ 1))
same(get(O, a), a[want])

key = {key_np}
groups = n // wg
slots = np.arange(n).reshape(groups, wg)
s = wg // 2
while s:
    left, right = slots[:, :s], slots[:, s:2 * s]
    slots[:, :s] = np.where(key[right] > key[left], right, left)
    s //= 2
R = buf(np.zeros(groups, dt))
p.argmax(q, (n,), (wg,), A, R)
same(get(R, a[:groups]), a[slots[:, 0]])

O = buf(np.zeros_like(a))
p.reverse(q, (n,), None, A, O)
same(get(O, a), a[::-1])

O, WO = buf(np.zeros_like(a)), buf(np.zeros_like(a))
p.between_buffers(q, (n - 8,), None, A, O, WO, np.int32(3))
same(get(O, a)[:n - 8], a[2:n - 6])
same(get(WO, a)[2:n - 6], a[:n - 8])

O, LO = buf(np.zeros_like(a)), buf(np.zeros_like(a))
p.folded(q, (n - wg,), (wg,), A, O, LO, np.int32(3))
same(get(O, a)[:n - wg], a[2:n - wg + 2])
mirrored = (base + wg - 1 - lid)[:n - wg] + 2
same(get(LO, a)[2:n - wg + 2], a[mirrored])

m = n - 8
O = buf(np.zeros(3 * m, dt))
p.private_elements(q, (m,), None, A, O, np.int32(3))
i = np.arange(m)
b = np.stack([i + 2, i, i + 2], axis=1)
b[i, i % 3] = b[i, (i + 1) % 3]
same(get(O, np.zeros(3 * m, dt)), a[np.stack([b[i, i % 3], i, b[i, 2]], axis=1).reshape(-1)])

O = buf(np.zeros_like(a))
shift = 3
p.private_swap(q, (n // 4,), None, A, O, np.uint32(shift))
perm = np.arange(n).reshape(-1, 4)
g = np.arange(n // 4)
x, y = (g + shift) % 4, (g + shift + 1) % 4
perm[g, x], perm[g, y] = perm[g, y].copy(), perm[g, x].copy()
same(get(O, a), a[perm.reshape(-1)])
print("OK")
""")


def test_issue_reproducer_float_pair_in_local_memory(python_with_icd):
    # clspv crashed (SIGSEGV) on this program: the 8-byte copy became an i64 that clspv split
    # into the struct's floats with an i64 struct index its SPIR-V writer could not take.
    run(python_with_icd, """
src = '''typedef struct { float x, y; } T;
kernel void k(global T *b, global T *o) { local T l[64]; size_t i = get_local_id(0); l[i] = b[i];
  barrier(CLK_LOCAL_MEM_FENCE); if (i == 0) o[get_group_id(0)] = l[1]; }'''
p = cl.Program(ctx, src).build()
b = np.array([[1.5, -0.0], [np.inf, 1e-45]] + [[7.0, 8.0]] * 126, np.float32)
O = buf(np.zeros((2, 2), np.float32))
p.k(q, (128,), (64,), buf(b), O)
assert np.array_equal(get(O, np.zeros((2, 2), np.float32)).view(np.uint32), b[[1, 1]].view(np.uint32))
print("OK")
""")


def test_radix_sort_and_key_value_sort_build_and_sort(python_with_icd):
    # pyopencl's radix sort keeps a struct scan type in local memory (`psc_ldata[K + 1][WG_SIZE
    # + 1]` of `struct { scan_t value; }`) and copies `.value` into private variables: clspv
    # looped for ever on that copy (the worker stops such a loop and the build fails; no time
    # is asserted: it depends on the machine's load).
    run(python_with_icd, """
from pyopencl.algorithm import RadixSort, KeyValueSorter
sort = RadixSort(ctx, "int *ary", key_expr="ary[i]", sort_arg_names=["ary"])
a = np.array([5, 3, 2**31 - 1, 0, 7, 7, 1, 65535, 3, 2**30], np.int32)
(s,), _ = sort(cla.to_device(q, a), key_bits=32)
assert np.array_equal(s.get(), np.sort(a))
for n in (10, 1000, 65536):
    a = rng.integers(0, 2**16, n).astype(np.int32)
    (s,), _ = sort(cla.to_device(q, a), key_bits=16)
    assert np.array_equal(s.get(), np.sort(a)), n
keys = rng.integers(0, 300, 5000).astype(np.int32)
values = np.arange(5000, dtype=np.int32)
kvs = KeyValueSorter(ctx)
starts, lists, _ = kvs(q, cla.to_device(q, keys), cla.to_device(q, values), 300, starts_dtype=np.int32)
starts, lists = starts.get(), lists.get()
for k in range(300):
    assert sorted(lists[starts[k]:starts[k + 1]]) == sorted(np.nonzero(keys == k)[0]), k
print("OK")
""")


def test_dot_of_complex128_reduces_in_local_memory(python_with_icd):
    # pyopencl's dot/vdot of complex128 reduce through `__local cdouble_t pcl_ldata[]`: clspv
    # crashed building them. Small integers make every product and sum exact.
    run(python_with_icd, """
n = 10000
x = (rng.integers(-50, 50, n) + 1j * rng.integers(-50, 50, n)).astype(np.complex128)
y = (rng.integers(-50, 50, n) + 1j * rng.integers(-50, 50, n)).astype(np.complex128)
X, Y = cla.to_device(q, x), cla.to_device(q, y)
assert cla.dot(X, Y).get() == np.dot(x, y)
assert cla.vdot(X, Y).get() == np.vdot(x, y)
f = rng.integers(-50, 50, n).astype(np.float32)
assert cla.dot(cla.to_device(q, f), Y).get() == np.dot(f.astype(np.float64), y)
assert cla.sum(X).get() == x.sum()
print("OK")
""")


def test_struct_with_array_fields_copied_from_global(python_with_icd):
    # pyopencl's test_arrays_in_structs.py: with -rewrite-packed-structs, clspv read word k of a
    # struct whose first member is an array from word 4k (any such struct of 12 bytes or more).
    run(python_with_icd, """
src = '''typedef struct { uint x[2]; int y; uint z[3][4]; } my_struct;
kernel void array_structs(global my_struct *structs, global int *res) {
    int i = get_global_id(0);
    my_struct s = structs[i];
    res[i] = s.x[0] + s.x[1] + s.y;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            res[i] += s.z[r][c];
}'''
dt = np.dtype({'names': ['x', 'y', 'z'], 'formats': [('<u4', 2), '<i4', ('<u4', (3, 4))], 'offsets': [0, 8, 12],
               'itemsize': 60})
a = fill(dt, 64)
p = cl.Program(ctx, src).build()
R = buf(np.zeros(64, np.int32))
p.array_structs(q, (64,), None, buf(a), R)
want = (a['x'].astype(np.uint64).sum(axis=1) + a['y'].view(np.uint32) + a['z'].astype(np.uint64).sum(axis=(1, 2)))
assert np.array_equal(get(R, np.zeros(64, np.int32)).view(np.uint32), (want % 2**32).astype(np.uint32))
for z in range(1, 14):
    words = 3 + z
    src = '''typedef struct { uint x[2]; uint y; uint z[%d]; } S;
    kernel void k(global S *a, global uint *o) { int i = get_global_id(0); S s = a[i]; global uint *w = o + i * %d;
      w[0] = s.x[0]; w[1] = s.x[1]; w[2] = s.y; for (int r = 0; r < %d; r++) w[3 + r] = s.z[r]; }''' % (z, words, z)
    a = rng.integers(0, 2**32, words * 8, dtype=np.uint64).astype(np.uint32)
    a[:3] = [2**32 - 1, 2**31, 0]
    O = buf(np.zeros_like(a))
    cl.Program(ctx, src).build().k(q, (8,), None, buf(a), O)
    assert np.array_equal(get(O, a), a), words
print("OK")
""")


def test_complex_pointers_beside_a_struct_copy(python_with_icd):
    # pyopencl's complex types are unions, which clspv's layout check refuses at a global pointer
    # parameter: vkcl passes such parameters as pointers to bytes (no -rewrite-packed-structs), so
    # the struct copy in the same program is compiled right too.
    run(python_with_icd, """
src = '''#define PYOPENCL_DEFINE_CDOUBLE
#include <pyopencl-complex.h>
typedef struct { uint x[4]; int y; } S;
kernel void k(global const cdouble_t *restrict a, global cdouble_t *b, const global cfloat_t *c,
              global cfloat_t *d, cdouble_t e, global const S *s, global uint *o)
{
    size_t i = get_global_id(0);
    b[i] = cdouble_add(cdouble_mul(a[i], a[i]), e);
    d[i] = cfloat_mul(c[i], c[i]);
    S t = s[i];
    for (int j = 0; j < 4; j++)
        o[5 * i + j] = t.x[j];
    o[5 * i + 4] = t.y;
}'''
n = 256
a = (rng.integers(-1000, 1000, n) + 1j * rng.integers(-1000, 1000, n)).astype(np.complex128)
c = (rng.integers(-100, 100, n) + 1j * rng.integers(-100, 100, n)).astype(np.complex64)
e = np.complex128(3 - 4j)
s = rng.integers(0, 2**32, 5 * n, dtype=np.uint64).astype(np.uint32)
s[:5] = [2**32 - 1, 2**31, 0, 1, 2**31 - 1]
p = cl.Program(ctx, src).build(options='-cl-kernel-arg-info')
B, D, O = buf(np.zeros_like(a)), buf(np.zeros_like(c)), buf(np.zeros_like(s))
p.k(q, (n,), None, buf(a), B, buf(c), D, e, buf(s), O)
assert np.array_equal(get(B, a), a * a + e)
assert np.array_equal(get(D, c), c * c)
assert np.array_equal(get(O, s), s)
k = cl.Kernel(p, "k")
assert [k.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME) for i in range(7)] == \\
    ["cdouble_t*", "cdouble_t*", "cfloat_t*", "cfloat_t*", "cdouble_t", "S*", "uint*"], \\
    [k.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME) for i in range(7)]
assert [k.get_arg_info(i, cl.kernel_arg_info.NAME) for i in range(7)] == ["a", "b", "c", "d", "e", "s", "o"]
print("OK")
""")


def test_packed_struct_in_a_buffer(python_with_icd):
    # A packed struct still gets clspv's byte rewrite (-rewrite-packed-structs), which its layout needs.
    run(python_with_icd, """
src = '''typedef struct __attribute__((packed)) { char a; uint b; short c; } P;
kernel void k(global const P *in, global P *out)
{ size_t i = get_global_id(0); P p = in[i]; p.b += 1; p.c ^= 0x5555; p.a = -p.a; out[i] = p; }'''
dt = np.dtype([('a', 'i1'), ('b', '<u4'), ('c', '<i2')])
assert dt.itemsize == 7
a = fill(dt, 300)
p = cl.Program(ctx, src).build()
O = buf(np.zeros_like(a))
p.k(q, (300,), None, buf(a), O)
want = a.copy()
want['b'] = (a['b'].astype(np.uint64) + 1) % 2**32
want['c'] = a['c'] ^ np.int16(0x5555)
want['a'] = (-a['a'].astype(np.int16)).astype(np.int8)
same(get(O, a), want)
print("OK")
""")


@pytest.mark.parametrize("layout", ["float2_like", "double2_like", "mixed_padding", "vector3_member"])
def test_struct_arguments_by_value_and_through_global_memory(python_with_icd, layout):
    # Kernels that built before the struct repairs: they now go through clspv's front end and IR
    # without -rewrite-packed-structs; every bit of every field must come through as before.
    decl, dtype, _, _ = LAYOUTS[layout]
    run(python_with_icd, f"""
dt = {dtype}
src = '''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
{decl}
kernel void fill(global T *out, T v, global const T *in, global T *copy)
{{ size_t i = get_global_id(0); out[i] = v; copy[i] = in[i]; }}'''
p = cl.Program(ctx, src).build()
a = fill(dt, 300)
for j in range(0, 296, 3):
    O, C = buf(np.zeros(4, dt)), buf(np.zeros(4, dt))
    p.fill(q, (4,), None, O, a[j:j + 1], buf(a[j:j + 4]), C)
    same(get(O, a[:4]), np.repeat(a[j:j + 1], 4))
    same(get(C, a[:4]), a[j:j + 4])
print("OK")
""")


def test_struct_copies_in_compiled_and_linked_programs(python_with_icd):
    # clCompileProgram keeps the front end's IR, with its copies typed, in the object.
    run(python_with_icd, """
src = '''typedef struct { float x, y; } T;
kernel void k(global T *b, global T *o) { local T l[64]; size_t i = get_local_id(0); l[i] = b[i];
  barrier(CLK_LOCAL_MEM_FENCE); if (i == 0) o[get_group_id(0)] = l[(get_group_id(0) + 1) % 64]; }'''
p = cl.link_program(ctx, [cl.Program(ctx, src).compile()])
b = np.arange(256, dtype=np.float32).reshape(128, 2)
O = buf(np.zeros((2, 2), np.float32))
p.k(q, (128,), (64,), buf(b), O)
assert np.array_equal(get(O, np.zeros((2, 2), np.float32)), b[[1, 2]])
print("OK")
""")


PACKED_LOCAL_SCAN = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define K 4
#define WG 64
// pyopencl's scan on a GPU: a double padded to 12 bytes against bank conflicts, in local memory
struct __attribute__((packed)) wrapped { double value; int dummy; };
kernel void k(global const double *in, global const int *tags, global double *out, global double *out2,
              global int *tags_out, int base)
{
    local struct wrapped ld[K + 1][WG + 1];
    int lid = get_local_id(0);
    int group = get_group_id(0) * K * WG;
    for (int k = 0; k < K; k++) {   // a unit read in, transposed
        int o = k * WG + lid;
        ld[o % K][o / K].value = in[group + o];
        ld[o % K][o / K].dummy = tags[group + o];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = 0; step < 3; step++) {   // every column moved one place on, three times
        double v[K]; int t[K];
        for (int k = 0; k < K; k++) { v[k] = ld[k][lid].value; t[k] = ld[k][lid].dummy; }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < K; k++) { ld[k][(lid + 1) % WG].value = v[k]; ld[k][(lid + 1) % WG].dummy = t[k]; }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // written out 32 bits at a time, as pyopencl's scan writes its results
    global int *dest = (global int *)(out + base + group);
    for (int j = 0; j < 2 * K; j++) {
        int li = j * WG + lid, idx = li / 2, rem = li - idx * 2;
        local int *src = (local int *)&(ld[idx % K][idx / K].value);
        dest[li] = src[rem];
        ((global int *)(out2 + group))[li] = ((local int *)&ld[idx % K][idx / K])[rem];
    }
    for (int j = 0; j < K; j++) {
        int idx = j * WG + lid;
        tags_out[group + idx] = ld[idx % K][idx / K].dummy;
    }
}
"""


def test_packed_double_int_pairs_in_local_memory_read_as_ints(python_with_icd):
    # pyopencl's float64 scan on a GPU gave zeros: clspv read word 1 of each packed {double; int}
    # in local memory as word 0, and wrote word 2k+1 of the output through `(int *)(double *)` as
    # word 2k. Every double's bits (NaN payloads, infinities, -0, denormals, random bits) and its
    # int must come through the struct, its int view and the int pointer into the output.
    run(python_with_icd, f"""
src = r'''{PACKED_LOCAL_SCAN}'''
K, WG, groups, base = 4, 64, 3, 3
n = K * WG * groups
x = fill(np.dtype([('v', '<f8')]), n)['v'].copy()
x[1::7] = np.array([0x8000000000000000, 0x000FFFFFFFFFFFFF, 0x7FF4000000000001], dtype='<u8').view('<f8')[np.arange(len(x[1::7])) % 3]
tags = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
p = cl.Program(ctx, src).build()
O, O2, T = buf(np.zeros(n + base)), buf(np.zeros(n)), buf(np.zeros(n, np.int32))
p.k(q, (WG * groups,), (WG,), buf(x), buf(tags), O, O2, T, np.int32(base))
idx = np.arange(K * WG)
source = ((idx // K - 3) % WG) * K + idx % K   # which input each local entry holds at the end
want = np.concatenate([x[g * K * WG + source] for g in range(groups)])
want_tags = np.concatenate([tags[g * K * WG + source] for g in range(groups)])
got = get(O, np.zeros(n + base))
assert np.array_equal(got[base:].view(np.uint64), want.view(np.uint64)), \\
    np.nonzero(got[base:].view(np.uint64) != want.view(np.uint64))[0][:10]
assert np.array_equal(got[:base].view(np.uint64), np.zeros(base, np.uint64))
assert np.array_equal(get(O2, np.zeros(n)).view(np.uint64), want.view(np.uint64))
assert np.array_equal(get(T, tags), want_tags)
print("OK")
""")


def test_narrowing_pointer_arithmetic_on_doubles(python_with_icd):
    # `(int *)(d + k)` indexed by int, from a pointer variable or directly, into a buffer and into
    # local memory: clspv kept the double's unit and dropped the odd words (pointer_units), in a
    # program declaring a struct and in one without (which takes the front-end route for its
    # pointer casts: pointer_units.may_narrow).
    run(python_with_icd, """
for decl in ("typedef struct { double d; } unused_but_declared;", ""):
  src = r'''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
DECL
kernel void k(global const double *in, global double *out, global double *out2, global double *out3, int k)
{
    local double ld[64];
    int l = get_local_id(0);
    ld[l] = in[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    global int *dest = (global int *)(out + k);
    local int *src = (local int *)(ld + l / 2);
    dest[l] = src[l % 2];
    ((global int *)(out2 + k))[l] = ((local int *)(ld + l / 2))[l % 2];
    global short *h = (global short *)(out3 + k);
    h[2 * l] = src[l % 2];
    h[2 * l + 1] = src[l % 2] >> 16;
}'''.replace("DECL", decl)
  x = fill(np.dtype([('v', '<f8')]), 64)['v'].copy()
  p = cl.Program(ctx, src).build()
  for k in (0, 3):
    outs = [buf(np.zeros(64 + k)) for _ in range(3)]
    p.k(q, (64,), (64,), buf(x), *outs, np.int32(k))
    want = np.concatenate([np.zeros(k), x[:32]])
    for O in outs:
        assert np.array_equal(get(O, np.zeros(64 + k))[:32 + k].view(np.uint64), want.view(np.uint64)), (k, decl)
print("OK")
""")


def test_packed_wrapper_copied_whole_and_read_as_ints_in_local_memory(python_with_icd):
    # pyopencl's scans on a GPU keep a packed { scan_t value; int dummy; } in local memory, copy
    # `.value` whole (a complex128 there: a union of structs) and write it out 32 bits at a time
    # through `(local int *)&ldata[i][j].value`. The whole copies kept packed_locals from indexing
    # the array as words, and clspv then read the wrong words; member by member, it is words.
    run(python_with_icd, """
src = r'''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef union { struct { double x, y; } __attribute__((aligned(16)));
                struct { double real, imag; } __attribute__((aligned(16))); } C;
struct __attribute__((packed)) w { C value; int dummy; };
kernel void k(global const double *in, global const int *tags, global int *out, global int *tags_out)
{
    local struct w l[2][65];
    int i = get_local_id(0), g = get_global_id(0), base = get_group_id(0) * 64;
    l[1][i].value.x = in[2 * g];
    l[1][i].value.y = in[2 * g + 1];
    l[1][i].dummy = tags[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    C x = l[1][(i + 5) % 64].value;
    l[0][63 - i].value = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < 4; j++) {
        int li = j * 64 + i, idx = li / 4, rem = li - idx * 4;
        out[4 * base + li] = ((local int *)&(l[0][idx].value))[rem];
    }
    tags_out[g] = l[1][i].dummy;
}'''
n = 256
x = fill(np.dtype([('v', '<f8')]), 2 * n)['v'].copy()
tags = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
p = cl.Program(ctx, src).build()
O, T = buf(np.zeros(2 * n)), buf(np.zeros(n, np.int32))
p.k(q, (n,), (64,), buf(x), buf(tags), O, T)
lid = np.arange(n) % 64
src_index = np.arange(n) - lid + (63 - lid + 5) % 64   # the pair each slot of l[0] holds
want = x.reshape(-1, 2)[src_index].reshape(-1)
assert np.array_equal(get(O, np.zeros(2 * n)).view(np.uint64), want.view(np.uint64))
assert np.array_equal(get(T, tags), tags)
print("OK")
""")


def test_complex128_scan(python_with_icd):
    # pyopencl's complex128 scans: the copy `interval_results[g] = partial_scan_buffer[end - 1]`
    # became an i128 with an invalid constant and lavapipe refused the pipeline. The values make
    # every partial sum exact in any order: multiples of 2^960 (huge) and of the smallest
    # denormal, -0, an infinity and a NaN.
    run(python_with_icd, r"""
import math
from pyopencl.scan import GenericScanKernel
knl = GenericScanKernel(ctx, np.complex128, arguments="__global cdouble_t *ary, __global cdouble_t *out",
                        input_expr="ary[i]", scan_expr="cdouble_add(a, b)", neutral="cdouble_new(0, 0)",
                        output_statement="out[i] = item;",
                        preamble="#define PYOPENCL_DEFINE_CDOUBLE\n#include <pyopencl-complex.h>")
for n in (1, 7, 1000, 100003):
    x = (rng.integers(-50, 50, n) * 2.0 ** 960 + 1j * rng.integers(-50, 50, n) * 5e-324).astype(np.complex128)
    x[0] = complex(-0.0, -0.0)
    if n > 20:
        x.real[n // 3] = math.inf
        x.imag[2 * n // 3] = math.nan
        x[5] = complex(-0.0, 5e-324)
    X = cla.to_device(q, x)
    Y = cla.empty_like(X)
    knl(X, Y)
    got = Y.get().view(np.float64)
    want = np.cumsum(np.concatenate([[0j], x]))[1:].view(np.float64)  # the neutral first: 0 + -0 is +0
    ok = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
    assert ok.all(), (n, np.nonzero(~ok)[0][:10])
print("OK")
""")


# A kernel of pyopencl's GPU scans in small: a struct holding a `T` in a `__local` array, filled
# from global memory, then written out 32 bits at a time through a `(local int *)` kept in a
# pointer variable, into a `(global int *)` made from a `T *` plus an offset.
NARROW_VIEWS = r'''
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
TYPEDEF
WRAPPER
kernel void k(global T *in, global T *out, int base) {
  local struct W l[5][257];
  int lid = get_local_id(0);
  for (int k = 0; k < 4; k++) { int o = k * 256 + lid; l[o % 4][o / 4].value = in[o]; }
  barrier(CLK_LOCAL_MEM_FENCE);
  global int *dest = (global int *)(out + base);
  const int per = sizeof(T) / sizeof(int);
  for (int j = 0; j < per * 4; j++) {
    int li = j * 256 + lid, idx = li / per, rem = li - idx * per;
    local int *src = (local int *)&(l[idx % 4][idx / 4].value);
    dest[li] = src[rem];
  }
}
'''


@pytest.mark.parametrize("wrapper", ["struct W { T value; };",
                                     "struct __attribute__((packed)) W { T value; int dummy; };"],
                         ids=["plain", "packed_with_int"])
def test_values_written_out_as_ints_through_pointer_variables(python_with_icd, wrapper):
    # clspv folded `src[rem]` (a local int pointer kept in a variable) into the wider unit of the
    # struct's first scalar and dropped the remainder, and `dest[li]` (on a `cdouble_t *` plus an
    # offset) into the 16-byte unit: every odd word read or landed on the even one before it
    # (pyopencl's float64 and complex128 scans on a GPU gave zeros or denormals).
    # packed_locals follows the pointer variable; pointer_units narrows the global chain.
    run(python_with_icd, r"""
src = r'''NARROW_VIEWS'''.replace("WRAPPER", '''WRAPPER_TEXT''')
TYPES = {
    "double": ("typedef double T;", np.dtype([("x", "<f8")])),
    "double2": ("typedef double2 T;", np.dtype([("x", "<f8"), ("y", "<f8")])),
    "cdouble": ("typedef union { struct { double x, y; }; struct { double real, imag; }; } T;",
                np.dtype([("x", "<f8"), ("y", "<f8")])),
    "cfloat": ("typedef union { struct { float x, y; }; struct { float real, imag; }; } T;",
               np.dtype([("x", "<f4"), ("y", "<f4")])),
    "float_int": ("typedef struct { float f; int i; } T;", np.dtype([("f", "<f4"), ("i", "<i4")])),
}
for name, (typedef, dt) in TYPES.items():
    p = cl.Program(ctx, src.replace("TYPEDEF", typedef)).build()
    x = fill(dt, 1024)
    base = 3
    O = buf(np.zeros(1024 + base, dt))
    p.k(q, (256,), (256,), buf(x), O, np.int32(base))
    got = get(O, np.zeros(1024 + base, dt))
    same(got[base:], x)
    assert not got[:base].view(np.uint8).any(), name   # nothing written before `base`
print("OK")
""".replace("NARROW_VIEWS", NARROW_VIEWS).replace("WRAPPER_TEXT", wrapper))


def test_packed_wrapper_of_natural_layout_copied_from_global(python_with_icd):
    # `struct __attribute__((packed)) { cfloat_t value; int dummy; }` has its natural layout, so the
    # program holds no packed type; with clspv's -rewrite-packed-structs (given for the attribute)
    # the imaginary part copied from `in[k * 16 + i]` was read from byte 32i + 16, not 8i + 4.
    run(python_with_icd, r"""
src = r'''
typedef union { struct { float x, y; }; struct { float real, imag; }; } C;
struct __attribute__((packed)) W { C v; int d; };
kernel void k(global C *in, global C *out) {
  local struct W l[9][17];
  int i = get_local_id(0);
  for (int k = 0; k < 8; k++) l[k][i].v = in[k * 16 + i];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 0; k < 8; k++) out[k * 16 + i] = l[(k + 1) % 8][15 - i].v;
}'''
dt = np.dtype([("x", "<f4"), ("y", "<f4")])
p = cl.Program(ctx, src).build()
x = fill(dt, 128)
O = buf(np.zeros(128, dt))
p.k(q, (16,), (16,), buf(x), O)
want = np.stack([x.reshape(8, 16)[(k + 1) % 8, ::-1] for k in range(8)]).reshape(-1)
same(get(O, x), want)
print("OK")
""")


@pytest.mark.parametrize("dtype", ["float64", "complex64", "complex128"])
def test_pyopencl_scans_and_sorts_in_their_gpu_form(python_with_icd, dtype):
    # pyopencl generates other code for a GPU (is_gpu: a packed { scan_t value; int dummy; } in
    # local memory for 8- and 16-byte types, results written 32 bits at a time), which lavapipe,
    # a CPU device, never gets: the device type is made GPU here. On the H200 these scans gave
    # zeros and the radix sort (a struct scan type) hung or sorted into zeros.
    run(python_with_icd, r"""
import math, os
cl.Device.type = property(lambda self: cl.device_type.GPU)
from pyopencl.scan import GenericScanKernel
dt = np.dtype("DTYPE")
ctype = {"float64": "double", "complex64": "cfloat_t", "complex128": "cdouble_t"}[dt.name]
add = {"float64": "a+b", "complex64": "cfloat_add(a, b)", "complex128": "cdouble_add(a, b)"}[dt.name]
zero = {"float64": "0", "complex64": "cfloat_new(0, 0)", "complex128": "cdouble_new(0, 0)"}[dt.name]
knl = GenericScanKernel(ctx, dt, arguments=f"__global {ctype} *ary, __global {ctype} *out",
                        input_expr="ary[i]", scan_expr=add, neutral=zero, output_statement="out[i] = item;",
                        preamble="#define PYOPENCL_DEFINE_CDOUBLE\n#include <pyopencl-complex.h>")
real = np.float64 if dt.itemsize != 8 or dt.kind == "f" else np.float32
for n in (7, 1000, 100003):
    # sums exact in any order: multiples of a power of two, and -0 and inf and NaN at places
    parts = rng.integers(-50, 50, (n, 2 if dt.kind == "c" else 1)).astype(real) * real(2.0 ** -20)
    parts[0] = -0.0
    if n > 20:
        parts[n // 3, 0] = math.inf
        parts[2 * n // 3, -1] = math.nan
    x = (parts[:, 0] + 1j * parts[:, 1]).astype(dt) if dt.kind == "c" else parts[:, 0].astype(dt)
    X = cla.to_device(q, x)
    Y = cla.empty_like(X)
    knl(X, Y)
    got = Y.get().view(real)
    want = np.cumsum(np.concatenate([np.zeros(1, dt), x]))[1:].astype(dt).view(real)
    ok = (got.view(np.uint8).reshape(got.size, -1) == want.view(np.uint8).reshape(want.size, -1)).all(axis=1)
    ok |= np.isnan(got) & np.isnan(want)
    assert ok.all(), (n, np.nonzero(~ok)[0][:10], got[~ok][:4], want[~ok][:4])
if dt.name == "float64":
    from pyopencl.algorithm import RadixSort
    sort = RadixSort(ctx, "int *ary", key_expr="ary[i]", sort_arg_names=["ary"])
    for n, bits in ((10, 32), (65536, 16)):
        a = rng.integers(0, 2**bits, n).astype(np.int32) if bits < 32 else \
            np.array([5, 3, 2**31 - 1, 0, 7, 7, 1, 65535, 3, 2**30], np.int32)
        (s,), _ = sort(cla.to_device(q, a), key_bits=bits)
        assert np.array_equal(s.get(), np.sort(a)), n
print("OK")
""".replace("DTYPE", dtype), env={"PYOPENCL_NO_CACHE": "1"})  # pyopencl's scan cache has no device type in its key


def test_array_in_a_local_struct_read_through_a_split_index(python_with_icd):
    # A `__local` struct holding an array, read at `prev + i * width + get_local_id(0)` in a loop
    # inside another loop (Rodinia's dwt2d has this shape): clspv's optimizations hoisted the
    # local-id part of the word index out of the loops and SimplifyPointerBitcastPass folded the
    # two parts into an index of whole structs, dropping the hoisted one; llvmpipe's code read
    # structs far past the variable (SIGSEGV). packed_locals now indexes such a struct as words.
    # The second kernel keeps float and double edge values (NaN payloads, signalling NaN, inf,
    # -0, denormals, the largest finite) in such a struct; they come back bit for bit.
    run(python_with_icd, r"""
src = '''#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef struct { int width, stride, gap, unused[3]; int cells[2000]; } Grid;
typedef struct { int tag, pad[8]; Grid grid; int tail; } Window;

void sweep(local Grid *g, int count, int prev, int mid, int next, int update) {
    int steps = count / g->width;
    for (int i = 0; i < steps; i++) {
        int p = g->cells[prev + i * g->width + get_local_id(0)];
        int n = g->cells[next + i * g->width + get_local_id(0)];
        local int *c = &g->cells[mid + i * g->width + get_local_id(0)];
        if (update) *c += (p + n + 2) / 4; else *c -= (p + n) / 2;
    }
}

kernel void lift(global int *cells, int rows, int width, int stride, int gap, int rounds) {
    local Window w;
    for (int i = get_local_id(0); i < 2000; i += get_local_size(0)) w.grid.cells[i] = cells[i];
    if (get_local_id(0) == 0) { w.grid.width = width; w.grid.stride = stride; w.grid.gap = gap; }
    barrier(CLK_LOCAL_MEM_FENCE);
    int count = rows * w.grid.stride - 1, low = 2 * w.grid.stride;
    for (int r = 0; r < rounds; r++) {
        sweep(&w.grid, count, low, low + w.grid.gap, low + 1, 0);
        barrier(CLK_LOCAL_MEM_FENCE);
        sweep(&w.grid, count, low + w.grid.gap, low + 1, low + w.grid.gap + 1, 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = get_local_id(0); i < 2000; i += get_local_size(0)) cells[i] = w.grid.cells[i];
}

typedef struct { int count; float f[64]; double d[64]; } Edges;
kernel void edges(global const float *f, global const double *d, global float *fo, global double *do_) {
    local Edges e;
    size_t l = get_local_id(0);
    e.f[l] = f[l]; e.d[l] = d[l];
    if (l == 0) e.count = 64;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t k = (l * 5 + 3) % e.count;
    fo[l] = e.f[k]; do_[l] = e.d[k];
}
'''
p = cl.Program(ctx, src).build()
width, stride, gap, rows, rounds = 64, 34, 400, 8, 3
cells = rng.integers(-1000, 1000, 2000).astype(np.int32)
C = buf(cells)
p.lift(q, (width,), (width,), C, *(np.int32(v) for v in (rows, width, stride, gap, rounds)))

def trunc_div(x, n):                      # C's division, toward zero
    return np.sign(x) * (np.abs(x) // n)
want = cells.astype(np.int64)
count, low, lid = rows * stride - 1, 2 * stride, np.arange(width)
for r in range(rounds):
    for prev, mid, nxt, update in ((low, low + gap, low + 1, 0), (low + gap, low + 1, low + gap + 1, 1)):
        for i in range(count // width):   # each step's reads and writes are disjoint
            at = i * width + lid
            pn = want[prev + at] + want[nxt + at]
            want[mid + at] += trunc_div(pn + 2, 4) if update else -trunc_div(pn, 2)
assert np.array_equal(get(C, cells), want.astype(np.int32)), "lift differs"

f_bits = np.array((EDGES[("f", 4)] * 7)[:64], np.uint32)
d_bits = np.array((EDGES[("f", 8)] * 8)[:64], np.uint64)
FO, DO = buf(np.zeros(64, np.float32)), buf(np.zeros(64, np.float64))
p.edges(q, (64,), (64,), buf(f_bits.view(np.float32)), buf(d_bits.view(np.float64)), FO, DO)
k = (np.arange(64) * 5 + 3) % 64
assert np.array_equal(get(FO, np.zeros(64, np.float32)).view(np.uint32), f_bits[k])
assert np.array_equal(get(DO, np.zeros(64, np.float64)).view(np.uint64), d_bits[k])
print("OK")
""")
