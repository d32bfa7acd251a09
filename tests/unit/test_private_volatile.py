"""compiler/private_volatile.py: volatile loads, stores and copies of private memory lose the
qualifier (clspv crashed on them); those of global and local memory keep it."""
from vkcl.compiler import private_volatile

IR = """define spir_func void @f(ptr addrspace(1) %g, ptr addrspace(3) %l) {
entry:
  %x = alloca i32, align 4
  %p = alloca ptr, align 8
  %s1 = alloca %struct.S, align 4
  %s2 = alloca %struct.S, align 4
  store volatile ptr %x, ptr %p, align 8
  %0 = load volatile ptr, ptr %p, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 4 %s1, ptr align 4 %s2, i64 8, i1 true)
  store volatile i32 1, ptr addrspace(1) %g, align 4
  %1 = load volatile i32, ptr addrspace(3) %l, align 4
  call void @llvm.memcpy.p3.p0.i64(ptr addrspace(3) align 4 %l, ptr align 4 %s2, i64 8, i1 true)
  ret void
}
"""


def test_private_accesses_lose_volatile_and_others_keep_it():
    out = private_volatile.rewrite(IR).splitlines()
    assert "  store ptr %x, ptr %p, align 8" in out
    assert "  %0 = load ptr, ptr %p, align 8" in out
    assert "  call void @llvm.memcpy.p0.p0.i64(ptr align 4 %s1, ptr align 4 %s2, i64 8, i1 false)" in out
    assert "  store volatile i32 1, ptr addrspace(1) %g, align 4" in out
    assert "  %1 = load volatile i32, ptr addrspace(3) %l, align 4" in out
    assert any("memcpy.p3.p0" in line and "i1 true" in line for line in out)


def test_ir_without_volatile_is_left_alone():
    assert private_volatile.rewrite(IR.replace("volatile ", "").replace("i1 true", "i1 false")) is None
