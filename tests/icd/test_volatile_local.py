"""`volatile __local` accesses happen as written (compiler/spirv_volatile.py): Rodinia's
hybridsort counts in local memory by storing a tagged count and reading it back until its own
store sticks. Mesa forwarded the store to the re-read (clspv's SPIR-V had lost the Volatile
operand), every work-item of an 8-wide batch saw its own store, and a group of 32 counted 4.
On the NVIDIA H200 the SPIR-V's Volatile operands and decoration do not make its Vulkan driver
re-read what other work-items stored (a group of 8 counts 1; NVIDIA's own OpenCL counts 8):
docs/status.md, the test expects that failure there."""
import pytest

from test_kernels_pyopencl import HEADER

pytest.importorskip("pyopencl")

TAGGED_COUNTER = """
src = '''
uint add_tagged(volatile __local uint *s, uint bin, uint tag) {
  uint count;
  do {
    count = s[bin] & 0x07FFFFFFu;
    count = tag | (count + 1u);
    s[bin] = count;
  } while (s[bin] != count);
  return (count & 0x07FFFFFFu) - 1u;
}
kernel void k(global uint *counts, global uint *slots) {
  volatile __local uint s[4];
  uint lid = get_local_id(0);
  if (lid < 4) s[lid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  slots[get_global_id(0)] = add_tagged(s, lid % 2u, lid << 27);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 2) counts[2 * get_group_id(0) + lid] = s[lid] & 0x07FFFFFFu;
}'''
p = cl.Program(ctx, src).build()
if dev.vendor_id == 0x10DE:
    print("NVIDIA")  # (the known gap above)
for local in (8, 32):
    groups = 4
    C, S = out(np.zeros(2 * groups, np.uint32)), out(np.zeros(local * groups, np.uint32))
    p.k(q, (local * groups,), (local,), C, S)
    counts, slots = get(C, np.zeros(2 * groups, np.uint32)), get(S, np.zeros(local * groups, np.uint32))
    assert counts.tolist() == [local // 2] * (2 * groups), (local, counts)
    for g in range(groups):  # each bin's work-items took the slots 0 .. local/2 - 1, once each
        for b in range(2):
            assert sorted(slots[g * local + b:(g + 1) * local:2].tolist()) == list(range(local // 2)), (local, g, b)
print("OK")
"""


def test_a_tagged_local_counter_counts_every_work_item(python_with_icd):
    result = python_with_icd(HEADER + TAGGED_COUNTER, timeout=300)
    if "NVIDIA" in result.stdout and result.returncode != 0:
        pytest.xfail("NVIDIA's Vulkan driver keeps a work-item's own store for its volatile re-read (docs/status.md)")
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout + result.stderr
