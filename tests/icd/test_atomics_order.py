"""atomic_flag (vkcl/compiler/prelude/atomic_flag.py): a flag in local memory builds (clspv
aborted on it) and one work-item of each group wins it; a flag in global memory works too.
Fences and ordered atomics in loops whose trip count differs per work-item (repair 15,
vkcl/compiler/spirv_scopes.py: on lavapipe they acted as work-group barriers, and work-items
past the first eight never finished).

Not tested: a lock across work-groups, which needs acquire/release at device scope. vkcl does
not claim it (CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: relaxed, work-group scope), and on the H200
such a lock did not order the plain accesses it guarded (clspv's GLSL450 memory model has no
availability or visibility operations)."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")


@pytest.mark.parametrize("std", ["CL2.0", "CL3.0"])
def test_atomic_flag_in_local_memory(python_with_icd, std):
    """One work-item of each group finds the group's flag clear; a flag in global memory too."""
    run(python_with_icd, f"""
src = '''
kernel void k(global atomic_flag *g, global int *first) {{
  local atomic_flag lf;
  if (get_local_id(0) == 0) atomic_flag_clear_explicit(&lf, memory_order_relaxed, memory_scope_work_group);
  barrier(CLK_LOCAL_MEM_FENCE);
  int won = !atomic_flag_test_and_set_explicit(&lf, memory_order_relaxed, memory_scope_work_group);
  if (won) atomic_fetch_add_explicit((volatile global atomic_int *)first, 1, memory_order_relaxed,
                                     memory_scope_work_group);
  if (get_global_id(0) == 0)
    first[1] = atomic_flag_test_and_set_explicit(g, memory_order_relaxed, memory_scope_work_group);
}}'''
p = cl.Program(ctx, src).build(options="-cl-std={std}")
G, F = buf(np.zeros(1, np.int32)), buf(np.zeros(2, np.int32))
p.k(q, (256,), (32,), G, F)
f = get(F, np.zeros(2, np.int32))
assert f[0] == 256 // 32 and f[1] == 0, f
assert get(G, np.zeros(1, np.int32))[0] != 0  # the flag is set now
print("OK")
""")


@pytest.mark.parametrize("fence", [
    "mem_fence(CLK_LOCAL_MEM_FENCE)",
    "atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_acq_rel, memory_scope_work_group)",
    "atomic_fetch_add_explicit((volatile global atomic_int *)s, 1, memory_order_acq_rel, memory_scope_work_group)"])
def test_fence_in_a_divergent_loop(python_with_icd, fence):
    """Work-item i runs 3i + 1 iterations with a fence in each: every one finishes."""
    run(python_with_icd, f"""
src = '''
kernel void k(global int *out, global int *s) {{
  uint i = get_global_id(0); int n = 0;
  for (uint j = 0; j < 3 * i + 1; j++) {{ {fence}; n++; }}
  out[i] = n;
}}'''
p = cl.Program(ctx, src).build(options="-cl-std=CL2.0")
O, S = buf(np.full(64, -1, np.int32)), buf(np.zeros(1, np.int32))
p.k(q, (64,), (64,), O, S)
assert (get(O, np.zeros(64, np.int32)) == 3 * np.arange(64) + 1).all()
print("OK")
""")


def test_critical_sections_of_atomic_flags(python_with_icd):
    """The CTS's c11_atomics atomic_flag, local memory: 256 work-items of one group each win the
    first critical section no one has visited, by test-and-set and clear of its flag."""
    run(python_with_icd, """
src = '''
kernel void k(uint n, global uint *winner, volatile local atomic_flag *f) {
  uint tid = get_global_id(0);
  if (get_local_id(0) == 0)
    for (uint i = 0; i < n; i++) atomic_flag_clear_explicit(f + i, memory_order_relaxed, memory_scope_work_group);
  barrier(CLK_LOCAL_MEM_FENCE);
  uint stop = 0;
  for (uint c = 0; !stop && c < n; c++) {
    bool set = atomic_flag_test_and_set_explicit(f + c, memory_order_acquire, memory_scope_work_group);
    if (!set) {
      if (winner[c] == 0xFFFFFFFFu) { winner[c] = tid; stop = 1; }
      atomic_flag_clear_explicit(f + c, memory_order_release, memory_scope_work_group);
    }
  }
}'''
p = cl.Program(ctx, src).build(options="-cl-std=CL2.0")
W = buf(np.full(256, 0xFFFFFFFF, np.uint32))
p.k(q, (256,), (256,), np.uint32(256), W, cl.LocalMemory(4 * 256))
w = get(W, np.zeros(256, np.uint32))
assert sorted(w.tolist()) == list(range(256)), w
print("OK")
""")


def test_compare_exchange_loop_in_opencl_c_2(python_with_icd):
    """The CTS's atomics atomic_cmpxchg (an add written as a compare-exchange loop), built as
    OpenCL C 2.0, where the 1.x atomics keep clspv's acquire-release semantics. The old values
    are not checked: on lavapipe an atomic's result used after a loop is 0 for the work-items
    that left the loop before the last of their 8-wide vector (a lavapipe bug,
    docs/conformance.md)."""
    run(python_with_icd, """
src = '''
kernel void k(volatile global int *d, global int *old) {
  int tid = get_global_id(0), o, v;
  do { o = d[0]; v = atom_cmpxchg(&d[0], o, o + tid + 2); } while (v != o);
  old[tid] = v;
}'''
p = cl.Program(ctx, src).build(options="-cl-std=CL2.0")
D, O = buf(np.array([1000], np.int32)), buf(np.full(1024, -1, np.int32))
p.k(q, (1024,), (1024,), D, O)
assert get(D, np.zeros(1, np.int32))[0] == 1000 + sum(range(1024)) + 2 * 1024
print("OK")
""")
