"""pointer_variables: private variables of global pointers kept as 64-bit integers in the IR
clspv compiles, for programs it crashed on otherwise (Rodinia's heartwall)."""
from vkcl.compiler import pointer_variables

IR = """define spir_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) {
entry:
  %p = alloca ptr addrspace(1), align 8
  %q = alloca ptr addrspace(1), align 8
  %r = alloca ptr addrspace(1), align 8
  store ptr addrspace(1) %a, ptr %p, align 8, !tbaa !3
  store volatile ptr addrspace(1) null, ptr %r, align 8
  %0 = load ptr addrspace(1), ptr %p, align 8, !tbaa !3
  %1 = load volatile ptr addrspace(1), ptr %r, align 8
  call void @use(ptr %q)
  ret void
}

define spir_func void @f(ptr addrspace(1) %c) {
entry:
  %s = alloca ptr addrspace(1), align 8
  store ptr addrspace(1) %c, ptr %s, align 8
  ret void
}
"""


def test_pointer_variables_become_integers():
    lines = [line.strip() for line in pointer_variables.rewrite(IR).splitlines()]
    assert "%p = alloca i64, align 8" in lines and "%r = alloca i64, align 8" in lines
    i = lines.index("store i64 %__vkcl_ptrint1, ptr %p, align 8")    # tbaa dropped: the type changed
    assert lines[i - 1] == "%__vkcl_ptrint1 = ptrtoint ptr addrspace(1) %a to i64"
    i = lines.index("%0 = inttoptr i64 %__vkcl_ptrint3 to ptr addrspace(1)")
    assert lines[i - 1] == "%__vkcl_ptrint3 = load i64, ptr %p, align 8"
    assert "store volatile i64 %__vkcl_ptrint2, ptr %r, align 8" in lines        # volatile kept
    assert "%__vkcl_ptrint2 = ptrtoint ptr addrspace(1) null to i64" in lines
    assert "%__vkcl_ptrint4 = load volatile i64, ptr %r, align 8" in lines
    # a variable whose address goes to a call keeps its type; so does one in another function's
    # IR only where it has other uses (here it has none: it is rewritten there too)
    assert "%q = alloca ptr addrspace(1), align 8" in lines
    assert "%s = alloca i64, align 8" in lines


def test_programs_without_such_variables_are_left_alone():
    assert pointer_variables.rewrite("define void @f() {\nentry:\n  ret void\n}\n") is None
    local = IR.replace("alloca ptr addrspace(1)", "alloca ptr addrspace(3)")
    assert pointer_variables.rewrite(local) is None
    escaped = IR.replace("  ret void\n}\n\ndefine", "  call void @use(ptr %p)\n  call void @use(ptr %r)\n  ret void\n}\n\ndefine", 1)
    out = pointer_variables.rewrite(escaped)
    assert "%p = alloca ptr addrspace(1), align 8" in out and "%s = alloca i64, align 8" in out
