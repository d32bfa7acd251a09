"""Pointer arithmetic clspv miscompiles (issue 21, pyopencl's GPU scans): `__local` arrays of
packed structs indexed as words (packed_locals) and narrowing pointer arithmetic written in its
narrowest unit (pointer_units), IR rewrites before clspv's passes."""
import shutil
import subprocess

from vkcl import compiler
from vkcl.compiler import packed_locals, pointer_units, spirv

LAYOUT = 'target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-G1"\n'
CAPS = compiler.DeviceCaps(fp64=True, int8=True, int64=True, ubo_std430=True, spirv_version="1.6")

PACKED = LAYOUT + """%struct.w = type <{ double, i32 }>
@l = internal addrspace(3) global [4 x [9 x %struct.w]] undef, align 1
@plain = internal addrspace(3) global [4 x double] undef, align 8

define spir_kernel void @k(i64 %a, i32 %b, ptr addrspace(1) %o) {
entry:
  %row = getelementptr inbounds [4 x [9 x %struct.w]], ptr addrspace(3) @l, i64 0, i64 %a
  %e = getelementptr inbounds [9 x %struct.w], ptr addrspace(3) %row, i64 0, i32 %b
  %tag = getelementptr inbounds nuw %struct.w, ptr addrspace(3) %e, i32 0, i32 1, !noalias !3
  store i32 7, ptr addrspace(3) %tag, align 1
  %v = load double, ptr addrspace(3) getelementptr inbounds ([9 x %struct.w], ptr addrspace(3) getelementptr inbounds ([4 x [9 x %struct.w]], ptr addrspace(3) @l, i64 0, i64 3), i64 0, i64 8), align 1
  %first = load double, ptr addrspace(3) @l, align 1
  %p = getelementptr inbounds double, ptr addrspace(3) @plain, i64 %a
  ret void
}
"""


def test_a_local_array_of_packed_structs_becomes_words():
    out = packed_locals.rewrite(PACKED)
    lines = [line.strip() for line in out.splitlines()]
    assert "@l = internal addrspace(3) global [108 x i32] undef, align 4" in lines   # 432 bytes
    assert "@plain = internal addrspace(3) global [4 x double] undef, align 8" in lines
    i = lines.index("%row = getelementptr inbounds i32, ptr addrspace(3) @l, i64 %__vkcl_word1")
    assert lines[i - 1] == "%__vkcl_word1 = mul i64 %a, 27"          # 108 bytes a row
    i = lines.index("%e = getelementptr inbounds i32, ptr addrspace(3) @l, i64 %__vkcl_word4")
    assert lines[i - 3:i] == ["%__vkcl_word2 = sext i32 %b to i64", "%__vkcl_word3 = mul i64 %__vkcl_word2, 3",
                              "%__vkcl_word4 = add i64 %__vkcl_word1, %__vkcl_word3"]
    i = lines.index("%tag = getelementptr inbounds i32, ptr addrspace(3) @l, i64 %__vkcl_word5, !noalias !3")
    assert lines[i - 1] == "%__vkcl_word5 = add i64 %__vkcl_word4, 2"  # the int 8 bytes in
    # a constant expression in a constant expression: row 3, element 8 = word 3 * 27 + 8 * 3
    assert "%v = load double, ptr addrspace(3) getelementptr inbounds (i32, ptr addrspace(3) @l, i64 105), align 1" in lines
    assert "%first = load double, ptr addrspace(3) @l, align 1" in lines
    assert "%p = getelementptr inbounds double, ptr addrspace(3) @plain, i64 %a" in lines


def test_what_cannot_be_written_in_words_is_left_alone():
    assert packed_locals.rewrite(LAYOUT + "define void @f() {\n  ret void\n}\n") is None
    assert packed_locals.rewrite(PACKED.replace("<{ double, i32 }>", "{ double, i32 }")) is None  # not packed
    assert packed_locals.rewrite(PACKED.replace("<{ double, i32 }>", "<{ i8, i32 }>")) is None   # an int at byte 1
    bytes_in = PACKED.replace("  ret void", "  %x = getelementptr inbounds i8, ptr addrspace(3) %e, i64 %a\n  ret void")
    assert packed_locals.rewrite(bytes_in) is None  # a byte offset not known to be whole words
    # a struct copied whole through it (struct_copies' typed copies): clspv looped for ever on words
    copied = PACKED.replace("  ret void", "  %s = load %struct.w, ptr addrspace(3) %e, align 1\n  ret void")
    assert packed_locals.rewrite(copied) is None
    stored = PACKED.replace("  ret void", "  store <{ double, i32 }> zeroinitializer, ptr addrspace(3) @l, align 1\n  ret void")
    assert packed_locals.rewrite(stored) is None
    scalar = PACKED.replace("  ret void", "  %s = load <2 x i32>, ptr addrspace(3) %e, align 1\n  ret void")
    assert packed_locals.rewrite(scalar) is not None



UNPACKED = LAYOUT + """%struct.W = type { double, i32 }
@l = internal addrspace(3) global [8 x %struct.W] undef, align 8
@m = internal addrspace(3) global [8 x %struct.W] undef, align 8

define spir_kernel void @k(i64 %a, ptr addrspace(1) %o) {
entry:
  %e = getelementptr inbounds [8 x %struct.W], ptr addrspace(3) @l, i64 0, i64 %a
  %hi = getelementptr inbounds i32, ptr addrspace(3) %e, i64 1
  %x = load i32, ptr addrspace(3) %hi, align 4
  %c = getelementptr inbounds i32, ptr addrspace(3) getelementptr inbounds ([8 x %struct.W], ptr addrspace(3) @m, i64 0, i64 7), i64 1
  %f = getelementptr inbounds [8 x %struct.W], ptr addrspace(3) @m, i64 0, i64 %a
  %tag = getelementptr inbounds nuw %struct.W, ptr addrspace(3) %f, i32 0, i32 1
  %same = getelementptr inbounds i32, ptr addrspace(3) %tag, i64 0
  ret void
}
"""


def test_a_local_array_of_structs_viewed_through_narrower_pointers_becomes_words():
    # `((local int *)&l[i].v)[1]` for a double v in an unpacked struct crashed clspv (SIGSEGV)
    lines = [line.strip() for line in packed_locals.rewrite(UNPACKED).splitlines()]
    assert "@l = internal addrspace(3) global [32 x i32] undef, align 4" in lines
    assert "@m = internal addrspace(3) global [32 x i32] undef, align 4" in lines  # through a constant expression
    i = lines.index("%hi = getelementptr inbounds i32, ptr addrspace(3) @l, i64 %__vkcl_word2")
    assert lines[i - 1] == "%__vkcl_word2 = add i64 %__vkcl_word1, 1"
    assert "%c = getelementptr inbounds i32, ptr addrspace(3) @m, i64 29" in lines
    # an int pointer onto the int member, and a double pointer onto the double, are no narrower view
    plain = UNPACKED.replace("%hi = getelementptr inbounds i32, ptr addrspace(3) %e, i64 1",
                             "%hi = getelementptr inbounds double, ptr addrspace(3) %e, i64 0")
    plain = plain[:plain.index("  %c = ")] + plain[plain.index("  %f = "):]
    assert packed_locals.rewrite(plain) is None
    # but a double pointer stepped from the struct's start lands past the double: words
    stepped = plain.replace("double, ptr addrspace(3) %e, i64 0", "double, ptr addrspace(3) %e, i64 %a")
    assert "@l = internal addrspace(3) global [32 x i32] undef, align 4" in packed_locals.rewrite(stepped)


HOLDING_AN_ARRAY = LAYOUT + """%struct.TB = type { i32, i32, [8 x i32] }
%struct.F = type { i8, i32, %struct.TB, i16 }
@f = internal addrspace(3) global %struct.F undef, align 4

define spir_func void @step(ptr addrspace(3) %b, i32 %i) {
entry:
  %data = getelementptr inbounds nuw %struct.TB, ptr addrspace(3) %b, i32 0, i32 2
  %e = getelementptr inbounds [8 x i32], ptr addrspace(3) %data, i64 0, i32 %i
  store i32 1, ptr addrspace(3) %e, align 4
  ret void
}

define spir_kernel void @k(i32 %i) {
entry:
  store i32 1, ptr addrspace(3) getelementptr inbounds nuw (%struct.F, ptr addrspace(3) @f, i32 0, i32 1), align 4
  %tb = getelementptr inbounds nuw %struct.F, ptr addrspace(3) @f, i32 0, i32 2
  call spir_func void @step(ptr addrspace(3) %tb, i32 %i)
  %s = getelementptr inbounds nuw %struct.F, ptr addrspace(3) @f, i32 0, i32 3
  ret void
}
"""


def test_a_local_struct_holding_an_array_becomes_words():
    # Rodinia's dwt2d: clspv folded a word GEP split in two (a hoisted local-id part, the rest in
    # a loop) from such a struct's array into whole structs, and read 68 structs past it
    lines = [line.strip() for line in packed_locals.rewrite(HOLDING_AN_ARRAY).splitlines()]
    assert "@f = internal addrspace(3) global [13 x i32] undef, align 4" in lines  # 52 bytes
    assert "%tb = getelementptr inbounds i32, ptr addrspace(3) @f, i64 2" in lines
    assert "%s = getelementptr inbounds i32, ptr addrspace(3) @f, i64 12" in lines   # the short's word
    assert "store i32 1, ptr addrspace(3) getelementptr inbounds (i32, ptr addrspace(3) @f, i64 1), align 4" in lines
    # a callee's GEPs on the pointer it is given are its own (clspv inlines them onto the words)
    assert "%data = getelementptr inbounds nuw %struct.TB, ptr addrspace(3) %b, i32 0, i32 2" in lines
    # members sharing a word (a char array, packed) or a struct without an array: left as it is
    for shared in ("[8 x i8] }", "[3 x i16] }"):
        assert packed_locals.rewrite(HOLDING_AN_ARRAY.replace("[8 x i32] }", shared)) is None, shared
    assert packed_locals.rewrite(HOLDING_AN_ARRAY.replace("{ i8, i32, %struct.TB, i16 }",
                                                          "{ i8, i8, %struct.TB, i16 }")) is None
    # a char or short member read or written in local memory: clspv looped on such copies as words
    for narrow in ("store i8 1, ptr addrspace(3) @f, align 4", "store i16 2, ptr addrspace(3) %s, align 4"):
        accessed = HOLDING_AN_ARRAY.replace("  %s = getelementptr inbounds nuw %struct.F, ptr addrspace(3) @f, i32 0, i32 3\n",
                                            "  %s = getelementptr inbounds nuw %struct.F, ptr addrspace(3) @f, i32 0, i32 3\n"
                                            f"  {narrow}\n")
        assert accessed != HOLDING_AN_ARRAY and packed_locals.rewrite(accessed) is None, narrow
    no_array = HOLDING_AN_ARRAY.replace("%struct.TB = type { i32, i32, [8 x i32] }", "%struct.TB = type { i32, i32, i32 }")
    assert packed_locals.rewrite(no_array) is None


NARROWING = LAYOUT + """define spir_kernel void @k(ptr addrspace(1) %d, i32 %k, i64 %i, ptr addrspace(3) %l) {
entry:
  %dest = alloca ptr addrspace(1), align 8
  %other = alloca ptr addrspace(1), align 8
  %priv = alloca ptr, align 8
  %add.ptr = getelementptr inbounds double, ptr addrspace(1) %d, i32 %k
  %more = getelementptr inbounds double, ptr addrspace(1) %add.ptr, i64 4
  store ptr addrspace(1) %more, ptr %dest, align 8, !noalias !3
  %0 = load ptr addrspace(1), ptr %dest, align 8
  %w = getelementptr inbounds i32, ptr addrspace(1) %0, i64 %i
  store i32 1, ptr addrspace(1) %w, align 4
  %h = getelementptr inbounds i16, ptr addrspace(1) %add.ptr, i64 %i
  %x = load i16, ptr addrspace(1) %h, align 2
  store ptr addrspace(1) %add.ptr, ptr %other, align 8
  %1 = load ptr addrspace(1), ptr %other, align 8
  call void @use(ptr addrspace(1) %1)
  ret void
}
declare void @use(ptr addrspace(1))
"""


def test_narrowing_pointer_arithmetic_is_written_in_the_narrowest_unit():
    out = pointer_units.rewrite(NARROWING)
    lines = [line.strip() for line in out.splitlines()]
    # directly: shorts on a double GEP -> one short GEP from %d, 4 shorts a double
    i = lines.index("%h = getelementptr inbounds i16, ptr addrspace(1) %d, i64 %__vkcl_unit3")
    assert lines[i - 3:i] == ["%__vkcl_unit1 = sext i32 %k to i64", "%__vkcl_unit2 = mul i64 %__vkcl_unit1, 4",
                              "%__vkcl_unit3 = add i64 %i, %__vkcl_unit2"]
    # through a pointer variable used as int: it is given the chain in ints, 4 + k doubles in
    i = lines.index("store ptr addrspace(1) %__vkcl_unit7, ptr %dest, align 8, !noalias !3")
    assert lines[i - 4:i] == ["%__vkcl_unit4 = sext i32 %k to i64", "%__vkcl_unit5 = mul i64 %__vkcl_unit4, 2",
                              "%__vkcl_unit6 = add i64 %__vkcl_unit5, 8",
                              "%__vkcl_unit7 = getelementptr inbounds i32, ptr addrspace(1) %d, i64 %__vkcl_unit6"]
    # a variable whose pointer goes somewhere unknown keeps what it was given
    assert "store ptr addrspace(1) %add.ptr, ptr %other, align 8" in lines
    assert pointer_units.rewrite(NARROWING.replace("%w = getelementptr inbounds i32", "%w = getelementptr inbounds double")
                                 .replace("%h = getelementptr inbounds i16", "%h = getelementptr inbounds double")) is None


def test_the_rewritten_programs_build_to_valid_spirv(tmp_path):
    src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
           "struct __attribute__((packed)) w { double v; int d; };\n"
           "kernel void k(global const double *in, global double *out, int base)\n"
           "{ local struct w ld[5][65]; int l = get_local_id(0);\n"
           "  ld[l % 4][l / 4].v = in[l]; ld[l % 4][l / 4].d = l; barrier(CLK_LOCAL_MEM_FENCE);\n"
           "  global int *dest = (global int *)(out + base);\n"
           "  local int *src = (local int *)&ld[(l / 2) % 4][(l / 2) / 4].v; dest[l] = src[l % 2]; }\n")
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    if shutil.which("spirv-val"):
        path = tmp_path / "k.spv"
        path.write_bytes(result.spirv)
        val = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)], capture_output=True, text=True)
        assert val.returncode == 0, val.stderr + val.stdout


def test_programs_with_pointer_casts_take_the_front_end_route():
    """A program casting to a pointer type (in its text, a header or a -D value) is read as IR,
    where its narrowing chains are rewritten; one without keeps clspv's one-step compile."""
    from vkcl.compiler.pointer_units import may_narrow
    assert may_narrow(b"kernel void k(global double *d) { ((global int *)(d + 1))[3] = 0; }")
    assert may_narrow(b"kernel void k(global double *d) { __global const uint* p = (__global const uint*)d; }")
    assert may_narrow(b"typedef int T; kernel void k(global double *d) { T *p = (T*) d; }")
    assert may_narrow(b"kernel void k(global double *d) { X(d); }", defines="-DX(p)=((global int*)(p))[1]=0")
    assert may_narrow(b'#include "h.h"\nkernel void k(global double *d) { X(d); }',
                      headers={"h.h": "#define X(p) ((local short *)p)[0] = 1\n"})
    assert not may_narrow(b"kernel void k(global int *d, int a, int b) { d[0] = (a * b) + (a) * (b); }")
    assert not may_narrow(b"kernel void k(global float4 *d) { d[0] = (float4)(1.0f) * d[1]; }")


STRUCT_UNITS = LAYOUT + """%union.cd = type { %struct.anon }
%struct.anon = type { double, double }
%struct.odd = type { double, i8 }
define spir_kernel void @k(ptr addrspace(1) %p, ptr addrspace(1) %q, i32 %base, i64 %i) {
entry:
  %dest = alloca ptr addrspace(1), align 8
  %add.ptr = getelementptr inbounds %union.cd, ptr addrspace(1) %p, i32 %base
  store ptr addrspace(1) %add.ptr, ptr %dest, align 8
  %0 = load ptr addrspace(1), ptr %dest, align 8
  %w = getelementptr inbounds i32, ptr addrspace(1) %0, i64 %i
  store i32 1, ptr addrspace(1) %w, align 4
  %o = getelementptr inbounds %struct.odd, ptr addrspace(1) %q, i64 %i
  %b = getelementptr inbounds i16, ptr addrspace(1) %o, i64 1
  %v = getelementptr inbounds <4 x float>, ptr addrspace(1) %q, i64 %i
  %f = getelementptr inbounds float, ptr addrspace(1) %v, i64 3
  ret void
}
"""


def test_struct_union_and_vector_units_narrow_too():
    # `(global int *)(partial_scan_buffer + unit_base)` on pyopencl's 16-byte cdouble_t: clspv
    # wrote word (4k + i) & ~3 (every word of a union landed on the union's first)
    lines = [line.strip() for line in pointer_units.rewrite(STRUCT_UNITS).splitlines()]
    i = lines.index("store ptr addrspace(1) %__vkcl_unit7, ptr %dest, align 8")
    assert lines[i - 3:i] == ["%__vkcl_unit5 = sext i32 %base to i64", "%__vkcl_unit6 = mul i64 %__vkcl_unit5, 4",
                              "%__vkcl_unit7 = getelementptr inbounds i32, ptr addrspace(1) %p, i64 %__vkcl_unit6"]
    # `{ double, i8 }` is 16 bytes with its padding, 8 shorts: element i, short 1 = short 8i + 1
    i = lines.index("%b = getelementptr inbounds i16, ptr addrspace(1) %q, i64 %__vkcl_unit2")
    assert lines[i - 2:i] == ["%__vkcl_unit1 = mul i64 %i, 8", "%__vkcl_unit2 = add i64 %__vkcl_unit1, 1"]
    # a float4 is 4 floats: element i, float 3 = float 4i + 3
    i = lines.index("%f = getelementptr inbounds float, ptr addrspace(1) %q, i64 %__vkcl_unit4")
    assert lines[i - 2:i] == ["%__vkcl_unit3 = mul i64 %i, 4", "%__vkcl_unit4 = add i64 %__vkcl_unit3, 3"]
    # a 6-byte struct is no whole number of ints: left as it is
    six = STRUCT_UNITS.replace("%struct.odd = type { double, i8 }", "%struct.odd = type { i16, i16, i16 }") \
        .replace("%b = getelementptr inbounds i16", "%b = getelementptr inbounds i32")
    assert "%b = getelementptr inbounds i32, ptr addrspace(1) %o, i64 1" in pointer_units.rewrite(six)


LOCAL_VIEW = LAYOUT + """%struct.W = type { double }
@l = internal addrspace(3) global [5 x [257 x %struct.W]] undef, align 8
define spir_kernel void @k(i64 %a, i64 %b, i64 %rem, ptr addrspace(1) %o) {
entry:
  %src = alloca ptr addrspace(3), align 8
  br label %body
body:
  %0 = load ptr addrspace(3), ptr %src, align 8
  %w = getelementptr inbounds i32, ptr addrspace(3) %0, i64 %rem
  %x = load i32, ptr addrspace(3) %w, align 4
  %row = getelementptr inbounds [5 x [257 x %struct.W]], ptr addrspace(3) @l, i64 0, i64 %a
  %e = getelementptr inbounds [257 x %struct.W], ptr addrspace(3) %row, i64 0, i64 %b
  store ptr addrspace(3) %e, ptr %src, align 8
  br label %body
}
"""


def test_a_narrower_view_kept_in_a_pointer_variable_makes_words():
    # `local int *src = (local int *)&l[i][j].value; src[rem]` (pyopencl's scans): clspv read word
    # rem of a double as rem / 2 doubles in, so the high words read as the low ones; the variable is
    # loaded above the store that gives it (a loop), as in clspv's front-end IR
    out = packed_locals.rewrite(LOCAL_VIEW)
    assert out is not None
    lines = [line.strip() for line in out.splitlines()]
    assert "@l = internal addrspace(3) global [2570 x i32] undef, align 4" in lines
    assert any(line.startswith("%e = getelementptr inbounds i32, ptr addrspace(3) @l, i64 ") for line in lines)
    # a variable that is given pointers into two different places is not followed
    two = LOCAL_VIEW.replace("  br label %body\n}", "  store ptr addrspace(3) null, ptr %src, align 8\n  br label %body\n}")
    assert packed_locals.rewrite(two) is None


def test_uses_packed_sees_only_packed_types_the_code_names():
    natural = LAYOUT + "%struct.W = type { %struct.cf, i32 }\n%struct.cf = type { float, float }\n" \
        "@l = internal addrspace(3) global [4 x %struct.W] undef, align 1\n"
    assert not packed_locals.uses_packed(natural)
    packed = natural.replace("type { %struct.cf, i32 }", "type <{ %struct.cd, i32 }>") + "%struct.cd = type { double, double }\n"
    assert packed_locals.uses_packed(packed)                        # @l holds one
    words = packed.replace("[4 x %struct.W]", "[20 x i32]")         # as packed_locals leaves it
    assert not packed_locals.uses_packed(words)
    holder = words + "%struct.H = type { %struct.W }\ndefine void @f(ptr %p) {\n  %x = load %struct.H, ptr %p, align 1\n  ret void\n}\n"
    assert packed_locals.uses_packed(holder)                        # a named type holding one
    literal = words + "define void @g(ptr %p) {\n  %x = load <{ i8, i32 }>, ptr %p, align 1\n  ret void\n}\n"
    assert packed_locals.uses_packed(literal)


STEPS = """typedef union { struct { float x, y; }; struct { float re, im; }; } C;
struct W { C value; };
kernel void k(global C *in, global int *out) {
  local struct W l[5][65];
  int lid = get_local_id(0);
  l[lid % 4][lid / 4].value = in[lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < 2; j++) {
    int li = j * 64 + lid, idx = li / 2, rem = li - 2 * idx;
    local int *src = (local int *)&(l[idx % 4][idx / 4].value);
    out[li] = src[rem];
  }
}
"""


def test_scalar_steps_through_a_struct_in_local_memory_become_indices():
    # `((local int *)&l[i][j].value)[rem]` for a `union { struct { float x, y; }; ... }` value (the
    # int as wide as the float it views): clspv wrote an OpPtrAccessChain from a pointer to member
    # x, which Vulkan's logical addressing leaves undefined; NVIDIA's driver read zeros (pyopencl's
    # complex64 scans on the H200). As words it is an OpAccessChain of the word array.
    result = compiler.compile_source(STEPS, "", CAPS)
    assert result.ok, result.log
    w = spirv.to_words(result.spirv)
    pointers = {w[pos + 1]: w[pos + 2] for pos, op, _ in spirv.instructions(w) if op == 32}  # OpTypePointer
    chains = [pointers.get(w[pos + 1]) for pos, op, _ in spirv.instructions(w) if op == 67]  # OpPtrAccessChain
    assert chains and 4 not in chains, chains   # 4: Workgroup; the one left is the output's
