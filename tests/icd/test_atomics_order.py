"""atomic_flag (vkcl/compiler/prelude/atomic_flag.py): a flag in local memory builds (clspv
aborted on it) and one work-item of each group wins it; a flag in global memory works too.

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
