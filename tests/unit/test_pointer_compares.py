"""compiler/pointer_compares.py: order comparisons of global, constant and local pointers become
comparisons of their addresses (clspv crashed on `p < e` of two global pointers); equality
comparisons and private pointers are left alone."""
from vkcl.compiler import pointer_compares

IR = """define spir_func void @f(ptr addrspace(1) %a, ptr addrspace(1) %e, ptr addrspace(3) %l, ptr %x, ptr %y) {
entry:
  %lt = icmp ult ptr addrspace(1) %a, %e
  %ge = icmp sge ptr addrspace(3) %l, null
  %eq = icmp eq ptr addrspace(1) %a, %e
  %pr = icmp ult ptr %x, %y
  ret void
}
"""


def test_order_comparisons_compare_addresses():
    out = pointer_compares.rewrite(IR).splitlines()
    assert "  %vkcl.pc.lt.a = ptrtoint ptr addrspace(1) %a to i64" in out
    assert "  %vkcl.pc.lt.b = ptrtoint ptr addrspace(1) %e to i64" in out
    assert "  %lt = icmp ult i64 %vkcl.pc.lt.a, %vkcl.pc.lt.b" in out
    assert "  %ge = icmp sge i64 %vkcl.pc.ge.a, %vkcl.pc.ge.b" in out
    assert "  %eq = icmp eq ptr addrspace(1) %a, %e" in out
    assert "  %pr = icmp ult ptr %x, %y" in out


def test_ir_without_them_is_left_alone():
    assert pointer_compares.rewrite(IR.replace("ult ptr addrspace(1)", "eq ptr addrspace(1)")
                                    .replace("sge ptr addrspace(3)", "eq ptr addrspace(3)")) is None
