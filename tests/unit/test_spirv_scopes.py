"""Repair 15 (vkcl/compiler/spirv_scopes.py): on llvmpipe the memory scopes of fences and atomics
become Subgroup; barriers keep theirs; other devices' SPIR-V is untouched."""
import subprocess

from vkcl import compiler
from vkcl.compiler import spirv
from vkcl.compiler.spirv_scopes import narrow_memory_scopes

SRC = """kernel void k(global atomic_int *g, global int *o) {
  local atomic_int l;
  if (get_local_id(0) == 0) atomic_store_explicit(&l, 0, memory_order_relaxed, memory_scope_work_group);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < get_global_id(0); i++) {
    atomic_fetch_add_explicit(&l, 1, memory_order_acq_rel, memory_scope_work_group);
    atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_work_group);
    mem_fence(CLK_LOCAL_MEM_FENCE);
  }
  int old = 0;
  atomic_compare_exchange_strong_explicit(&l, &old, 1, memory_order_acq_rel, memory_order_acquire,
                                          memory_scope_work_group);
  o[get_global_id(0)] = atomic_exchange_explicit(g, 2, memory_order_relaxed, memory_scope_work_group)
                        + atomic_load_explicit(&l, memory_order_acquire, memory_scope_work_group);
}"""
OP_CONTROL_BARRIER, OP_MEMORY_BARRIER = 224, 225
ATOMIC_SCOPE_AT = {227: 4, 228: 2, 230: 4, 229: 4, 234: 4}  # load, store, cmpxchg, exchange, add


def _scopes(data: bytes) -> dict[str, list[int]]:
    """The scope values of the module's barriers, fences and atomics, by kind."""
    words = spirv.to_words(data)
    _, constants = spirv.int32_constants(words)
    found = {"control": [], "fence": [], "atomic": []}
    for pos, op, _ in spirv.instructions(words):
        if op == OP_CONTROL_BARRIER:
            found["control"] += [constants[words[pos + 1]][1], constants[words[pos + 2]][1]]
        elif op == OP_MEMORY_BARRIER:
            found["fence"].append(constants[words[pos + 1]][1])
        elif op in ATOMIC_SCOPE_AT:
            found["atomic"].append(constants[words[pos + ATOMIC_SCOPE_AT[op]]][1])
    return found


def test_llvmpipe_scopes_become_subgroup(tmp_path):
    caps = compiler.DeviceCaps(narrow_memory_scopes=True)
    result = compiler.compile_source(SRC, "-cl-std=CL2.0", caps)
    assert result.ok, result.log
    scopes = _scopes(result.spirv)
    assert len(scopes["fence"]) >= 2 and len(scopes["atomic"]) >= 5, scopes
    assert set(scopes["fence"]) == set(scopes["atomic"]) == {3}, scopes  # Subgroup
    assert set(scopes["control"]) == {2}, scopes  # barrier(): Workgroup, as written
    path = tmp_path / "k.spv"
    path.write_bytes(result.spirv)
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)]).returncode == 0
    assert narrow_memory_scopes(result.spirv) == result.spirv  # nothing left to narrow


def test_other_devices_keep_their_scopes():
    result = compiler.compile_source(SRC, "-cl-std=CL2.0", compiler.DeviceCaps())
    assert result.ok, result.log
    scopes = _scopes(result.spirv)
    assert 3 not in scopes["fence"] + scopes["atomic"], scopes
    assert 2 in scopes["fence"] and 2 in scopes["atomic"], scopes
