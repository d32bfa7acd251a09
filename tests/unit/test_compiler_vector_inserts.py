"""vector_inserts: dynamic inserts into 3-, 8- and 16-element vectors written per element
(LLVM IR text), and which programs go through that rewrite."""
from vkcl.compiler import vector_inserts

IR = """define spir_kernel void @k(ptr addrspace(1) %v, float %x, i32 %k) {
entry:
  %0 = load <8 x float>, ptr addrspace(1) %v, align 32
  %vecins.i = insertelement <8 x float> %0, float %x, i32 %k
  %1 = insertelement <8 x float> <float 1.0, float 2.0, float 3.0, float 4.0, float 5.0, float 6.0, float 7.0, float 8.0>, float %x, i64 %idx
  %c = insertelement <8 x float> %0, float %x, i32 3
  %f = insertelement <4 x float> zeroinitializer, float %x, i32 %k
  ret void
}
"""


def test_dynamic_inserts_written_per_element():
    out = vector_inserts.rewrite(IR)
    lines = out.splitlines()
    # the named one: 8 compares, extracts, selects and inserts; the last insert keeps its name
    assert "  %vecins.i.vkcl.c0 = icmp eq i32 %k, 0" in lines
    assert "  %vecins.i.vkcl.e7 = extractelement <8 x float> %0, i32 7" in lines
    assert "  %vecins.i.vkcl.s7 = select i1 %vecins.i.vkcl.c7, float %x, float %vecins.i.vkcl.e7" in lines
    assert "  %vecins.i.vkcl.v0 = insertelement <8 x float> poison, float %vecins.i.vkcl.s0, i32 0" in lines
    assert "  %vecins.i = insertelement <8 x float> %vecins.i.vkcl.v6, float %vecins.i.vkcl.s7, i32 7" in lines
    # a numbered result gets named temporaries (numbering unchanged); a constant vector operand
    # with commas inside is one operand
    assert "  %vkcl.ins1.c5 = icmp eq i64 %idx, 5" in lines
    assert any(line.startswith("  %vkcl.ins1.e0 = extractelement <8 x float> <float 1.0, float 2.0,") for line in lines)
    assert "  %1 = insertelement <8 x float> %vkcl.ins1.v6, float %vkcl.ins1.s7, i32 7" in lines
    # constant indices and 4-element vectors are left as they are
    assert "  %c = insertelement <8 x float> %0, float %x, i32 3" in lines
    assert "  %f = insertelement <4 x float> zeroinitializer, float %x, i32 %k" in lines
    assert sum("insertelement" in line for line in lines) == 8 + 8 + 2


def test_nothing_to_rewrite():
    assert vector_inserts.rewrite("define void @f() {\n  ret void\n}\n") is None
    assert vector_inserts.rewrite(IR.replace("%vecins.i = insertelement <8 x float> %0, float %x, i32 %k\n", "")
                                  .replace("i64 %idx", "i64 2")) is None


def test_which_programs():
    assert vector_inserts.may_insert(b"kernel void k(global float8 *v) {}")
    assert vector_inserts.may_insert(b"kernel void k(global uchar3 *v) {}")
    assert vector_inserts.may_insert(b"kernel void k(global T *v) {}", defines="-DT=long16")
    assert not vector_inserts.may_insert(b"kernel void k(global float4 *v, global int2 *w) {}")
    assert not vector_inserts.may_insert(b"kernel void k(global float *v) { v[0] = 8; }")
