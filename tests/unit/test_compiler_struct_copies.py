"""Struct copies clspv miscompiles (issue 21): LLVM type layouts (llvm_types), the IR rewrite of
aggregate copies through local and private memory (struct_copies), the repair of access chains
into private byte arrays (spirv_private_chains), and the worker stopping a clspv that loops."""
import shutil
import subprocess
import time

import pytest

from vkcl import compiler
from vkcl.compiler import driver, spirv, struct_copies, worker
from vkcl.compiler.llvm_types import Module, Reader
from vkcl.compiler.spirv_private_chains import InvalidSpirv, fix_private_byte_chains

LAYOUT = 'target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-G1"\n'
CAPS = compiler.DeviceCaps(fp64=True, int8=True, int64=True, ubo_std430=True, spirv_version="1.6")


@pytest.mark.parametrize("text,size,align", [
    ("{ i8, i32, double, i16 }", 24, 8),            # struct { char c; int i; double d; short s; }
    ("{ [2 x i32], i32, [3 x [4 x i32]] }", 60, 4),  # pyopencl's my_struct
    ("<{ i8, i32, i16 }>", 7, 1),                    # packed
    ("<3 x float>", 16, 16), ("<3 x i8>", 4, 4), ("<3 x double>", 32, 32), ("<2 x float>", 8, 8),
    ("<16 x double>", 128, 128), ("{ <3 x float>, i8 }", 32, 16), ("ptr addrspace(1)", 8, 8),
    ("{ %struct.In, i8, i64, [2 x i32] }", 40, 8), ("[0 x float]", 0, 4), ("{}", 0, 1),
])
def test_sizes_and_alignments_are_llvms(text, size, align):
    module = Module(LAYOUT + "%struct.In = type { i16, <2 x float> }\n")
    t = Reader(text).type()
    assert (module.size(t), module.align(t)) == (size, align)


IR = LAYOUT + """%struct.S = type { i32, i32, i32, i32 }
%struct.W = type { %struct.S }
%struct.F = type { float, float }
%struct.M = type { i8, i32, double, i16 }
@l = internal addrspace(3) global [2 x [9 x %struct.W]] undef, align 4

define spir_kernel void @k(ptr addrspace(1) %in, ptr addrspace(3) %raw, i64 %n) {
entry:
  %s = alloca %struct.S, align 4
  %f = alloca %struct.F, align 4
  %m = alloca %struct.M, align 8
  %gm = getelementptr inbounds nuw %struct.M, ptr addrspace(1) %in, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 8 %m, ptr addrspace(1) align 8 %gm, i64 24, i1 false)
  %g = getelementptr inbounds nuw %struct.S, ptr addrspace(1) %in, i64 %n
  %row = getelementptr inbounds nuw [9 x %struct.W], ptr addrspace(3) getelementptr inbounds ([2 x [9 x %struct.W]], ptr addrspace(3) @l, i64 0, i64 1), i64 0, i64 %n
  call void @llvm.memcpy.p3.p1.i64(ptr addrspace(3) align 4 %row, ptr addrspace(1) align 4 %g, i64 16, i1 false)
  call void @llvm.memcpy.p0.p3.i64(ptr align 4 %s, ptr addrspace(3) align 4 getelementptr inbounds ([2 x [9 x %struct.W]], ptr addrspace(3) @l, i64 0, i64 1), i64 16, i1 true), !noalias !3
  tail call void @llvm.memcpy.p0.p1.i64(ptr align 4 %s, ptr addrspace(1) align 4 %g, i64 16, i1 false)
  call void @llvm.memcpy.p3.p3.i64(ptr addrspace(3) align 4 %raw, ptr addrspace(3) align 4 %raw, i64 16, i1 false)
  call void @llvm.memcpy.p0.p3.i64(ptr align 4 %f, ptr addrspace(3) align 4 %raw, i64 %n, i1 false)
  call void @llvm.memcpy.p0.p3.i64(ptr align 4 %f, ptr addrspace(3) align 4 %row, i64 8, i1 false)
  ret void
}
"""


def test_local_and_private_copies_become_typed_loads_and_stores():
    out = struct_copies.rewrite(IR)
    lines = [line.strip() for line in out.splitlines()]
    # global -> local, the local side a wrapper: its member at offset 0 is the copy's type
    i = lines.index("%__vkcl_copy1.dst = getelementptr inbounds %struct.W, ptr addrspace(3) %row, i32 0, i32 0")
    # (member by member: between global and local memory, as between global and private)
    assert lines[i + 1:i + 5] == ["%__vkcl_copy1.s0 = getelementptr inbounds %struct.S, ptr addrspace(1) %g, i32 0, i32 0",
                                  "%__vkcl_copy1.d0 = getelementptr inbounds %struct.S, ptr addrspace(3) %__vkcl_copy1.dst, i32 0, i32 0",
                                  "%__vkcl_copy1.v0 = load i32, ptr addrspace(1) %__vkcl_copy1.s0, align 4",
                                  "store i32 %__vkcl_copy1.v0, ptr addrspace(3) %__vkcl_copy1.d0, align 4"]
    # local -> a private variable through a folded constant expression, volatile kept
    assert ("%__vkcl_copy2.src = getelementptr inbounds [9 x %struct.W], ptr addrspace(3) getelementptr inbounds "
            "([2 x [9 x %struct.W]], ptr addrspace(3) @l, i64 0, i64 1), i32 0, i32 0, i32 0") in lines
    assert "%__vkcl_copy2.v3 = load volatile i32, ptr addrspace(3) %__vkcl_copy2.s3, align 4" in lines
    assert "store volatile i32 %__vkcl_copy2.v3, ptr %__vkcl_copy2.d3, align 4" in lines
    # global -> private member by member, with padding or without
    assert lines[lines.index("%__vkcl_copy0.v2 = load double, ptr addrspace(1) %__vkcl_copy0.s2, align 8") + 1] == \
        "store double %__vkcl_copy0.v2, ptr %__vkcl_copy0.d2, align 8"
    assert "store i32 %__vkcl_copy3.v3, ptr %__vkcl_copy3.d3, align 4" in lines
    # untyped sides, a run-time size and sizes that match no common type are left as they are
    assert any(line.startswith("call void @llvm.memcpy.p3.p3.i64") for line in lines)
    assert any("i64 %n, i1 false)" in line for line in lines)
    assert any(line.startswith("call void @llvm.memcpy.p0.p3.i64(ptr align 4 %f, ptr addrspace(3) align 4 %row, i64 8")
               for line in lines)
    assert out.count("__vkcl_copy") == 106  # four copies rewritten, member by member, no more


def test_ir_without_such_copies_is_not_rewritten():
    assert struct_copies.rewrite(LAYOUT + "define void @f() {\n  ret void\n}\n") is None
    global_only = IR.replace("@llvm.memcpy.p0.p1.i64(ptr align 4 %s,", "@llvm.memcpy.p1.p2.i64(ptr addrspace(1) align 4 %g,")
    global_only = "\n".join(line for line in global_only.splitlines() if "memcpy.p3" not in line and "memcpy.p0" not in line)
    assert "@llvm.memcpy.p1.p2" in global_only and struct_copies.rewrite(global_only) is None
    assert not struct_copies.may_copy(b"kernel void k(global int *o) { o[0] = 1; }")
    assert struct_copies.may_copy(b"typedef struct { int a; } S;")
    assert struct_copies.may_copy(b'#include "s.h"\n', headers={"s.h": b"union U { int i; float f; };"})
    assert not struct_copies.may_copy(b'#include "s.h"\n', headers={"s.h": b"#define X 1"})


def test_a_program_without_local_or_private_copies_builds_as_before(monkeypatch):
    # The front end alone, then its IR: the same SPIR-V as clspv makes of the source directly.
    src = (b"typedef struct { float x, y; } T; typedef union { float f; uint u; } U;\n"
           b"kernel void k(global T *a, global float *o, global U *u) { T t = a[1]; o[0] = t.x; u[0].u ^= 1; }")
    args = compiler.parse_options("").clspv_args(CAPS, packed_structs=False)
    calls = []
    real = driver._run
    monkeypatch.setattr(driver, "_run", lambda inputs, a: calls.append(a) or real(inputs, a))
    two_step = driver._run_cl(src, args)
    direct = real([src], args)
    assert two_step.ok and direct.ok and two_step.binary == direct.binary
    assert [("--output-format=ll" in a, "-x" in a) for a in calls] == [(True, False), (False, True)]


def test_unions_behind_global_pointers_build_without_byte_rewrites():
    # clspv's front end refuses a global pointer to a union (pyopencl's complex types) unless it
    # runs with -rewrite-packed-structs: the front end alone gets it, the rest of clspv does not.
    src = ("typedef union { struct { float x, y; }; struct { float real, imag; }; } cfloat_t;\n"
           "typedef struct { uint a[3]; int b; } S;\n"
           "kernel void k(global const cfloat_t *restrict z, global const S *s, global uint *o)\n"
           "{ size_t i = get_global_id(0); S t = s[i]; o[i] = t.a[2] + (uint)z[i].imag; }\n")
    result = compiler.compile_source(src, "-cl-kernel-arg-info", CAPS)
    assert result.ok, result.log
    assert [(a.name, a.type_name) for a in result.reflection.kernels["k"].args] == [
        ("z", "cfloat_t*"), ("s", "S*"), ("o", "uint*")]


def test_packed_structs_are_found_in_the_source_and_its_headers():
    assert struct_copies.declares_packed(b"typedef struct __attribute__((packed)) { char c; int i; } P;")
    assert struct_copies.declares_packed(b"struct __attribute__ ((aligned(4), __packed__)) P { char c; };")
    assert struct_copies.declares_packed(b"#pragma pack(push, 1)\nstruct P { char c; int i; };")
    assert not struct_copies.declares_packed(b"typedef struct { char c; int i; } P; // packed? no")
    assert struct_copies.declares_packed(b'#include "p.h"\n', headers={"p.h": b"#pragma pack(1)"})
    assert not struct_copies.declares_packed(b'#include "p.h"\n', headers={"p.h": b"struct S { int i; };"})
    assert struct_copies.declares_packed(b'#include "missing.h"\n')  # unknown: the option stays, as before


def test_the_issue_reproducers_build():
    src = ("typedef struct { float x, y; } T;\n"
           "kernel void k(global T *b, global T *o) { local T l[64]; size_t i = get_local_id(0); l[i] = b[i];\n"
           "  barrier(CLK_LOCAL_MEM_FENCE); if (i == 0) o[get_group_id(0)] = l[1]; }\n"
           "typedef struct { int a, b, c, d; } S; typedef struct { S v; } W;\n"
           "kernel void scan(global S *in, global S *out) { local W l[3][9]; size_t i = get_local_id(0);\n"
           "  l[1][i].v = in[i]; barrier(CLK_LOCAL_MEM_FENCE); S s = l[1][0].v;\n"
           "  for (int j = 1; j < 8; j++) { S t = l[1][j].v; s.a += t.a; s.d ^= t.d; } out[i] = s; }\n")
    start = time.monotonic()
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    assert time.monotonic() - start < 30


PRIVATE_SWAP = """typedef struct { char c; int i; double d; short s; } T;
kernel void k(global const T *in, global T *out, uint shift)
{
    T a[4];
    size_t g = get_global_id(0);
    for (int j = 0; j < 4; j++) a[j] = in[4 * g + j];
    uint x = (g + shift) % 4, y = (g + shift + 1) % 4;
    T t = a[x]; a[x] = a[y]; a[y] = t;
    for (int j = 0; j < 4; j++) out[4 * g + j] = a[j];
}
"""


def _function_ptr_chains(data: bytes) -> int:
    words = spirv.to_words(data)
    pointers = {}
    type_of = {}
    count = 0
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_TYPE_POINTER:
            pointers[words[pos + 1]] = words[pos + 2]
        elif n >= 3 and words[pos + 1] in pointers:
            type_of[words[pos + 2]] = words[pos + 1]
        if op == spirv.OP_PTR_ACCESS_CHAIN and pointers.get(type_of.get(words[pos + 3])) == 7:
            count += 1
    return count


def test_private_arrays_of_padded_structs_get_valid_chains(tmp_path):
    result = compiler.compile_source(PRIVATE_SWAP, "", CAPS)
    assert result.ok, result.log
    assert _function_ptr_chains(result.spirv) == 0
    if shutil.which("spirv-val"):
        path = tmp_path / "k.spv"
        path.write_bytes(result.spirv)
        val = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)], capture_output=True, text=True)
        assert val.returncode == 0, val.stderr + val.stdout


def _module(last_index: int) -> bytes:
    from array import array
    words = [spirv.MAGIC, 0x10600, 0, 20, 0,
             (4 << 16) | 21, 1, 32, 0,                  # %1 = uint
             (4 << 16) | 43, 1, 2, 4,                   # %2 = 4
             (4 << 16) | 43, 1, 3, 1,                   # %3 = 1
             (4 << 16) | 43, 1, 9, 0,                   # %9 = 0
             (4 << 16) | 28, 4, 1, 2,                   # %4 = [4 x uint]
             (4 << 16) | 32, 5, 7, 4,                   # %5 = Function *[4 x uint]
             (4 << 16) | 32, 6, 7, 1,                   # %6 = Function *uint
             (4 << 16) | 59, 5, 7, 7,                   # %7 = variable
             (6 << 16) | 65, 6, 8, 7, 3, last_index]    # %8 = chain %7 [1][last]: past the uint
    return spirv.to_bytes(array("I", words))


def test_a_zero_index_past_a_scalar_is_dropped_and_any_other_fails_the_build():
    out = spirv.to_words(fix_private_byte_chains(_module(9)))
    assert list(out[-5:]) == [(5 << 16) | 65, 6, 8, 7, 3]
    with pytest.raises(InvalidSpirv):
        fix_private_byte_chains(_module(3))


def test_a_clspv_that_floods_stderr_is_stopped_at_once(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "loop.c"
    src.write_text('#include <stdio.h>\n#include <stddef.h>\n'
                   'int clspvCompileFromSourcesString(size_t c, const size_t *s, const char **p, const char *o,\n'
                   '    char **b, size_t *bs, char **l) {\n'
                   '  for (;;) fputs("Instruction:   call void @llvm.memcpy.p0.p3.i64(ptr align 4 %x, '
                   'ptr addrspace(3) align 4 %y, i64 16, i1 false)\\n", stderr);\n}\n')
    lib = tmp_path / "libloop.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    w = worker.Worker(library=str(lib))
    try:
        start = time.monotonic()
        out = w.compile([b"kernel void k() {}"], [], timeout=120)
        took = time.monotonic() - start
    finally:
        w.stop()
    assert out.status == "error" and took < 20, (out.status, took)
    assert "clspv was stopped" in out.log and "Instruction:   call void @llvm.memcpy.p0.p3.i64" in out.log, out.log
    assert len(out.log) < 8192


def test_byval_parameters_are_typed_and_untyped_sides_outside_local_memory_are_left():
    ir = LAYOUT + """%struct.B = type { [16 x i8] }
%union.C = type { { double, double } }
%struct.M = type { i8, i32, double, i16 }

define void @f(ptr noundef byval(%struct.B) align 8 %arg, ptr addrspace(1) %out, ptr noundef byval(%struct.M) align 8 %m) {
entry:
  %c = alloca %union.C, align 8
  %b = alloca %struct.B, align 8
  call void @llvm.memcpy.p0.p0.i64(ptr align 8 %c, ptr align 8 %arg, i64 16, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr align 8 %b, ptr align 8 %arg, i64 16, i1 false)
  call void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) align 8 %out, ptr align 8 %m, i64 24, i1 false)
  ret void
}
"""
    lines = [line.strip() for line in struct_copies.rewrite(ir).splitlines()]
    # bytes into a union: no common type, left; bytes into bytes: typed; into an untyped global
    # pointer (clspv infers its type from its uses): left
    assert "call void @llvm.memcpy.p0.p0.i64(ptr align 8 %c, ptr align 8 %arg, i64 16, i1 false)" in lines
    assert "%__vkcl_copy0 = load %struct.B, ptr %arg, align 8" in lines
    assert "call void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) align 8 %out, ptr align 8 %m, i64 24, i1 false)" in lines


BUFFERS = LAYOUT + """%union.C = type { %struct.P }
%struct.P = type { double, double }
%struct.M = type { i8, i32, double, i16 }
%union.U = type { %struct.Q }
%struct.Q = type { i8, double }
%struct.A = type { [65 x i32] }
%struct.w = type <{ double, i32 }>
@l = internal addrspace(3) global [8 x %struct.w] undef, align 1

define spir_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, i64 %n) {
entry:
  %x = alloca %struct.w, align 1
  %s = getelementptr inbounds %union.C, ptr addrspace(1) %a, i64 %n
  %d = getelementptr inbounds %union.C, ptr addrspace(1) %b, i64 %n
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 8 %d, ptr addrspace(1) align 8 %s, i64 16, i1 false)
  %sm = getelementptr inbounds %struct.M, ptr addrspace(1) %a, i64 %n
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 8 %b, ptr addrspace(1) align 8 %sm, i64 24, i1 false)
  %su = getelementptr inbounds %union.U, ptr addrspace(1) %a, i64 %n
  %du = getelementptr inbounds %union.U, ptr addrspace(1) %b, i64 %n
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 8 %du, ptr addrspace(1) align 8 %su, i64 16, i1 false)
  %sa = getelementptr inbounds %struct.A, ptr addrspace(1) %a, i64 %n
  %da = getelementptr inbounds %struct.A, ptr addrspace(1) %b, i64 %n
  call void @llvm.memcpy.p1.p1.i64(ptr addrspace(1) align 4 %da, ptr addrspace(1) align 4 %sa, i64 260, i1 false)
  %lw = getelementptr inbounds [8 x %struct.w], ptr addrspace(3) @l, i64 0, i64 %n
  call void @llvm.memcpy.p0.p3.i64(ptr align 1 %x, ptr addrspace(3) align 1 %lw, i64 12, i1 false)
  ret void
}
"""


def test_copies_between_buffers_and_of_packed_local_structs_go_member_by_member():
    # A 16-byte wrapper copied between buffers became an i128 that lavapipe refused (pyopencl's
    # complex128 scans); a packed struct loaded whole from local memory lost its trailing int.
    lines = [line.strip() for line in struct_copies.rewrite(BUFFERS).splitlines()]
    assert lines[lines.index("%__vkcl_copy0.s1 = getelementptr inbounds %union.C, ptr addrspace(1) %s, i32 0, i32 0, i32 1"):][:4] == [
        "%__vkcl_copy0.s1 = getelementptr inbounds %union.C, ptr addrspace(1) %s, i32 0, i32 0, i32 1",
        "%__vkcl_copy0.d1 = getelementptr inbounds %union.C, ptr addrspace(1) %d, i32 0, i32 0, i32 1",
        "%__vkcl_copy0.v1 = load double, ptr addrspace(1) %__vkcl_copy0.s1, align 8",
        "store double %__vkcl_copy0.v1, ptr addrspace(1) %__vkcl_copy0.d1, align 8"]
    # one side typed is enough between buffers; a padded struct's padding is not copied
    assert "%__vkcl_copy1.d3 = getelementptr inbounds %struct.M, ptr addrspace(1) %b, i32 0, i32 3" in lines
    assert "store i16 %__vkcl_copy1.v3, ptr addrspace(1) %__vkcl_copy1.d3, align 8" in lines
    assert not any(line.startswith("%__vkcl_copy1.v4") for line in lines)
    # a union whose LLVM type leaves bytes out, and more than 64 members: left as memcpys
    assert sum(line.startswith("call void @llvm.memcpy.p1.p1.i64") for line in lines) == 2
    # the packed local struct, member by member into the private copy
    assert "%__vkcl_copy2.v1 = load i32, ptr addrspace(3) %__vkcl_copy2.s1, align 1" in lines
    assert "store i32 %__vkcl_copy2.v1, ptr %__vkcl_copy2.d1, align 1" in lines


PRIVATE_GLOBAL = LAYOUT + """%struct.D = type { [2 x double] }
%union.C = type { <2 x double> }
%struct.H = type { [3 x half] }
%struct.A = type { [65 x i32] }
%struct.P = type { i8, [65 x i32] }
@l = internal addrspace(3) global [4 x %struct.H] undef, align 2

define spir_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out, ptr addrspace(2) %c, i64 %n) {
entry:
  %arr = alloca [4 x %struct.D], align 8
  %d = alloca %struct.D, align 8
  %u = alloca %union.C, align 16
  %h = alloca %struct.H, align 2
  %a = alloca %struct.A, align 4
  %p = alloca %struct.P, align 4
  %gd = getelementptr inbounds nuw %struct.D, ptr addrspace(1) %in, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 8 %d, ptr addrspace(1) align 8 %gd, i64 16, i1 false)
  %od = getelementptr inbounds nuw %struct.D, ptr addrspace(1) %out, i64 %n
  call void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) align 8 %od, ptr align 8 %d, i64 16, i1 false)
  %gu = getelementptr inbounds nuw %union.C, ptr addrspace(1) %in, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 16 %u, ptr addrspace(1) align 16 %gu, i64 16, i1 false)
  %gh = getelementptr inbounds nuw %struct.H, ptr addrspace(1) %in, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 2 %h, ptr addrspace(1) align 2 %gh, i64 6, i1 false)
  %ga = getelementptr inbounds nuw %struct.A, ptr addrspace(1) %in, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 4 %a, ptr addrspace(1) align 4 %ga, i64 260, i1 false)
  %gp = getelementptr inbounds nuw %struct.P, ptr addrspace(1) %in, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 4 %p, ptr addrspace(1) align 4 %gp, i64 264, i1 false)
  call void @llvm.memcpy.p0.p1.i64(ptr align 8 %d, ptr addrspace(1) align 8 %in, i64 16, i1 false)
  %cd = getelementptr inbounds nuw %struct.D, ptr addrspace(2) %c, i64 %n
  call void @llvm.memcpy.p0.p2.i64(ptr align 8 %d, ptr addrspace(2) align 8 %cd, i64 16, i1 false)
  %e = getelementptr inbounds [4 x %struct.D], ptr %arr, i64 0, i64 %n
  call void @llvm.memcpy.p0.p1.i64(ptr align 8 %e, ptr addrspace(1) align 8 %gd, i64 16, i1 false)
  %lh = getelementptr inbounds [4 x %struct.H], ptr addrspace(3) @l, i64 0, i64 %n
  call void @llvm.memcpy.p3.p1.i64(ptr addrspace(3) align 2 %lh, ptr addrspace(1) align 2 %gh, i64 6, i1 false)
  ret void
}
"""


def test_copies_between_private_and_global_memory_go_member_by_member():
    # `T t = in[n + i - 1]; out[i] = t;`: LLVM folded the index into bytes and clspv's memcpy
    # lowering then made SPIR-V that lavapipe crashed on (struct { double a[2]; }, half[3], ...)
    # or looped for ever (double2 members, unions of a struct and a double2, padded structs).
    lines = [line.strip() for line in struct_copies.rewrite(PRIVATE_GLOBAL).splitlines()]
    assert lines[lines.index("%__vkcl_copy0.s1 = getelementptr inbounds %struct.D, ptr addrspace(1) %gd, i32 0, i32 0, i64 1"):][:4] == [
        "%__vkcl_copy0.s1 = getelementptr inbounds %struct.D, ptr addrspace(1) %gd, i32 0, i32 0, i64 1",
        "%__vkcl_copy0.d1 = getelementptr inbounds %struct.D, ptr %d, i32 0, i32 0, i64 1",
        "%__vkcl_copy0.v1 = load double, ptr addrspace(1) %__vkcl_copy0.s1, align 8",
        "store double %__vkcl_copy0.v1, ptr %__vkcl_copy0.d1, align 8"]
    assert "store double %__vkcl_copy1.v1, ptr addrspace(1) %__vkcl_copy1.d1, align 8" in lines  # and back
    # a union of a struct and a double2: its one vector; half[3]: three halves, none wider
    assert "%__vkcl_copy2.v0 = load <2 x double>, ptr addrspace(1) %__vkcl_copy2.s0, align 16" in lines
    assert not any(line.startswith("%__vkcl_copy2.v1") for line in lines)
    assert "%__vkcl_copy3.v2 = load half, ptr addrspace(1) %__vkcl_copy3.s2, align 2" in lines
    assert not any(line.startswith("%__vkcl_copy3.v3") for line in lines)
    # more than 64 members: without padding the memcpy stays (as before), with padding it is typed whole
    assert "call void @llvm.memcpy.p0.p1.i64(ptr align 4 %a, ptr addrspace(1) align 4 %ga, i64 260, i1 false)" in lines
    assert "%__vkcl_copy4 = load %struct.P, ptr addrspace(1) %gp, align 4" in lines
    # an untyped global side, and constant memory: left as they are
    assert "call void @llvm.memcpy.p0.p1.i64(ptr align 8 %d, ptr addrspace(1) align 8 %in, i64 16, i1 false)" in lines
    assert any(line.startswith("call void @llvm.memcpy.p0.p2.i64(ptr align 8 %d") for line in lines)
    # a private array's element at a run-time index: each member stored into every element
    # through a select on the index (private_elements; clspv crashed, looped or wrote pointer
    # arithmetic in Function memory for the memcpy and for member accesses at the index)
    assert not any("memcpy" in line and "%e," in line for line in lines)
    assert "%__vkcl_copy5.dis3 = icmp eq i64 %n, 3" in lines
    assert lines[lines.index("%__vkcl_copy5.d1_3 = getelementptr inbounds [4 x %struct.D], ptr %arr, i64 0, i64 3, "
                             "i32 0, i64 1"):][:4] == [
        "%__vkcl_copy5.d1_3 = getelementptr inbounds [4 x %struct.D], ptr %arr, i64 0, i64 3, i32 0, i64 1",
        "%__vkcl_copy5.d1_3.o = load double, ptr %__vkcl_copy5.d1_3, align 8",
        "%__vkcl_copy5.d1_3.n = select i1 %__vkcl_copy5.dis3, double %__vkcl_copy5.v1, double %__vkcl_copy5.d1_3.o",
        "store double %__vkcl_copy5.d1_3.n, ptr %__vkcl_copy5.d1_3, align 8"]
    # between global and local memory: member by member too (half[3] at a folded index crashed lavapipe)
    assert "store half %__vkcl_copy6.v2, ptr addrspace(3) %__vkcl_copy6.d2, align 2" in lines


ELEMENTS = LAYOUT + """%struct.D = type { [2 x double] }

define spir_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %arr = alloca [3 x %struct.D], align 8
  %gd = getelementptr inbounds nuw %struct.D, ptr addrspace(1) %in, i64 5
  call void @llvm.memcpy.p0.p1.i64(ptr align 8 %arr, ptr addrspace(1) align 8 %gd, i64 16, i1 false)
  %e = getelementptr inbounds [3 x %struct.D], ptr %arr, i64 0, i32 %n
  call void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) align 8 %out, ptr align 8 %e, i64 16, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr align 8 %e, ptr align 8 %e, i64 16, i1 true)
  ret void
}
"""


def test_private_array_elements_by_constant_and_run_time_index():
    # a[0] = in[5]: clang names the array itself (one member in from the copy's type), so
    # element 0 is written directly; out = a[n]: each member read from every element, chosen
    # by selects on n; a volatile copy gets no selects
    lines = [line.strip() for line in struct_copies.rewrite(ELEMENTS).splitlines()]
    assert "%__vkcl_copy0.d1_0 = getelementptr inbounds [3 x %struct.D], ptr %arr, i64 0, i64 0, i32 0, i64 1" in lines
    assert "store double %__vkcl_copy0.v1, ptr %__vkcl_copy0.d1_0, align 8" in lines
    assert not any(line.startswith("%__vkcl_copy0.dis") for line in lines)
    assert lines[lines.index("%__vkcl_copy1.s1_2 = getelementptr inbounds [3 x %struct.D], ptr %arr, i64 0, i64 2, "
                             "i32 0, i64 1"):][:3] == [
        "%__vkcl_copy1.s1_2 = getelementptr inbounds [3 x %struct.D], ptr %arr, i64 0, i64 2, i32 0, i64 1",
        "%__vkcl_copy1.s1_2.v = load double, ptr %__vkcl_copy1.s1_2, align 8",
        "%__vkcl_copy1.s1_2.c = select i1 %__vkcl_copy1.sis2, double %__vkcl_copy1.s1_2.v, double %__vkcl_copy1.s1_1.c"]
    assert "%__vkcl_copy1.sis2 = icmp eq i32 %n, 2" in lines
    assert "store double %__vkcl_copy1.s1_2.c, ptr addrspace(1) %__vkcl_copy1.d1, align 8" in lines
    assert "%__vkcl_copy2 = load volatile %struct.D, ptr %e, align 8" in lines  # typed whole, as before
    assert not any(line.startswith(("%__vkcl_copy2.sis", "%__vkcl_copy2.dis")) for line in lines)
