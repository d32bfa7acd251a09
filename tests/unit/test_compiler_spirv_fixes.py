"""The repair of clspv's zero-extended negative pointer offsets (vkcl/compiler/spirv_fixes.py)."""
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler import spirv_fixes

CAPS = compiler.DeviceCaps()


def _disassemble(spv: bytes, tmp_path) -> str:
    path = tmp_path / "k.spv"
    path.write_bytes(spv)
    return subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("body", ["o[a] = in[a - 1];", "o[a] = in[2 * a - 3];",
                                  "const global float *q = in - 1; o[a] = q[a];"])
def test_negative_offsets_are_sign_extended(tmp_path, body):
    src = f"kernel void k(global float *o, global const float *in, int a) {{ {body} }}"
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    uses = [l for l in dis.splitlines() if ("OpIAdd %ulong" in l or "OpPtrAccessChain" in l)]
    assert not any("%ulong_42949672" in l for l in uses), "\n".join(uses)
    assert any("%ulong_184467440737095516" in l for l in uses), "\n".join(uses)
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


def test_masks_and_large_values_are_untouched(tmp_path):
    src = "kernel void k(global ulong *o, ulong a) { o[0] = a & 0xFFFFFFFFUL; o[1] = a + 0x80000000UL; }"
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    assert spirv_fixes.fix_negative_pointer_offsets(result.spirv) == result.spirv


def test_variable_pointers_dropped_only_when_unused(tmp_path):
    tile = ("kernel void t(global const float *a, global float *c) { local float s[16][16];"
            " int r = get_local_id(1), q = get_local_id(0); s[r][q] = a[r * 16 + q];"
            " barrier(CLK_LOCAL_MEM_FENCE); c[r * 16 + q] = s[q][r]; }")
    result = compiler.compile_source(tile, "", CAPS)
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    assert "OpCapability VariablePointers" not in dis.replace("VariablePointersStorageBuffer", "")
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0
    select = ("kernel void s(global float *c, int w) { local float x[8], y[8];"
              " local float *p = w ? x : y; p[get_local_id(0)] = 1.0f; barrier(CLK_LOCAL_MEM_FENCE);"
              " c[get_local_id(0)] = x[get_local_id(0)] + y[get_local_id(0)]; }")
    result = compiler.compile_source(select, "", CAPS)
    assert result.ok, result.log
    assert "VariablePointers" in _disassemble(result.spirv, tmp_path)


def test_workgroup_sizes_are_per_kernel():
    from vkcl.compiler import spirv
    src = ("kernel void a(global int *o) { local int t[256]; t[get_local_id(0)] = 1; o[0] = t[1]; }"
           "kernel void b(global int *o, local int *l) { l[0] = 1; o[0] = l[0]; }")
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    assert spirv.workgroup_sizes(result.spirv) == {"a": 1024, "b": 0}


# Two mad()s and one a * b + c (which clspv itself already makes an Fma: contraction is on).
MAD_SRC = ("kernel void k(global float4 *o, global double *d, float4 a, double b, float c) {"
           " o[0] = mad(o[0], a, a); d[0] = mad(d[0], b, b); o[1] = o[1] * c + a; }")


def test_fused_mad_turns_mad_into_fma(tmp_path):
    result = compiler.compile_source(MAD_SRC, "", compiler.DeviceCaps(fused_mad=True))
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    assert 'OpExtInstImport "GLSL.std.450"' in dis
    fmas = [l for l in dis.splitlines() if " Fma " in l]
    assert len(fmas) == 3 and sum("double" in l for l in fmas) == 1, dis
    assert "OpFAdd" not in dis and "OpFMul" not in dis and "NoContraction" not in dis  # dead multiplies go
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


def test_fused_mad_only_where_asked_and_contraction_allowed(tmp_path):
    plain = compiler.compile_source(MAD_SRC, "", CAPS)
    dis = _disassemble(plain.spirv, tmp_path)
    assert plain.ok and dis.count(" Fma ") == 1 and dis.count("OpFAdd") == 2, dis
    off = compiler.compile_source("#pragma OPENCL FP_CONTRACT OFF\n" + MAD_SRC, "", compiler.DeviceCaps(fused_mad=True))
    dis = _disassemble(off.spirv, tmp_path)
    assert off.ok and " Fma " not in dis and "NoContraction" in dis, dis


def test_fused_mad_imports_glsl_when_the_module_has_not(tmp_path):
    src = "kernel void k(global double *d, double b) { d[0] = mad(d[0], b, b); }"
    plain = compiler.compile_source(src, "", CAPS)
    assert plain.ok and "GLSL.std.450" not in _disassemble(plain.spirv, tmp_path)
    result = compiler.compile_source(src, "", compiler.DeviceCaps(fused_mad=True))
    dis = _disassemble(result.spirv, tmp_path)
    assert result.ok and 'OpExtInstImport "GLSL.std.450"' in dis and dis.count(" Fma ") == 1, dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


# A two-sum's error term and a product used twice (exact arithmetic the prelude relies on),
# beside one mad(): only the mad()'s multiply and add may lose NoContraction.
EXACT_SRC = ("kernel void k(global double *o, double a, double b) {"
             " double s = a + b, t = s - a, e = (a - (s - t)) + (b - t); double p = a * b;"
             " o[0] = e; o[1] = p - o[2]; o[3] = p + o[4]; o[5] = mad(o[6], a, b); }")


@pytest.mark.parametrize("fused_mad", [False, True])
def test_contraction_only_frees_single_use_multiply_adds(tmp_path, fused_mad):
    result = compiler.compile_source(EXACT_SRC, "", compiler.DeviceCaps(fused_mad=fused_mad))
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    decorated = {l.split()[1] for l in dis.splitlines() if "NoContraction" in l}
    ops = [l.split() for l in dis.splitlines()]
    arith = {w[0]: w[2] for w in ops if w[2:3] in (["OpFAdd"], ["OpFSub"], ["OpFMul"])}
    free = {r for r, op in arith.items() if r not in decorated}
    fmas = [l for l in dis.splitlines() if " Fma " in l]
    if fused_mad:
        assert not free and len(fmas) == 1, dis  # the mad() pair became one Fma
    else:
        assert sorted(arith[r] for r in free) == ["OpFAdd", "OpFMul"] and not fmas, dis
    # The two-sum (4 subtracts, 2 adds) and p with its two users keep theirs.
    assert sum(arith[r] == "OpFSub" for r in decorated if r in arith) == 5, dis


# Eight chains through a loop of run-time trip count: LLVM's -unroll-runtime adds a remainder
# loop, and clspv gives its merge a second phi per chain that is OpUndef on one edge.
CHAINS_SRC = ("kernel void k(global double *o, double a, double b, int n) {"
              " double x0 = o[0], x1 = o[1], x2 = o[2], x3 = o[3], x4 = o[4], x5 = o[5], x6 = o[6], x7 = o[7];"
              " for (int i = 0; i < n; i++) { x0 = mad(x0, a, b); x1 = mad(x1, a, b); x2 = mad(x2, a, b);"
              " x3 = mad(x3, a, b); x4 = mad(x4, a, b); x5 = mad(x5, a, b); x6 = mad(x6, a, b); x7 = mad(x7, a, b); }"
              " o[0] = x0; o[1] = x1; o[2] = x2; o[3] = x3; o[4] = x4; o[5] = x5; o[6] = x6; o[7] = x7; }")


def _undef_phis(dis: str) -> int:
    undef = {line.split("=")[0].strip() for line in dis.splitlines() if "OpUndef" in line}
    return sum(1 for line in dis.splitlines() if "OpPhi" in line and any(u + " " in line + " " for u in undef))


def test_undef_phis_after_runtime_unrolling_are_merged(tmp_path, monkeypatch):
    from vkcl.compiler import spirv_phis
    caps = compiler.DeviceCaps(fp64=True, unroll_runtime_loops=True)
    monkeypatch.setattr(spirv_fixes, "merge_undef_phis", lambda data: data)
    monkeypatch.setenv("VKCL_CACHE", "0")  # the unrepaired binary must not be cached
    before = compiler.compile_source(CHAINS_SRC, "-cl-std=CL1.2", caps)
    monkeypatch.undo()
    assert before.ok, before.log
    dis_before = _disassemble(before.spirv, tmp_path)
    assert _undef_phis(dis_before) == 8, dis_before  # what the repair is for
    after = spirv_phis.merge_undef_phis(before.spirv)
    dis = _disassemble(after, tmp_path)
    assert _undef_phis(dis) == 0 and dis.count("OpPhi") == dis_before.count("OpPhi") - 8, dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0
    assert spirv_phis.merge_undef_phis(after) == after  # nothing left to do


def test_fused_mad_drops_a_multiply_whose_id_a_string_spells(tmp_path, monkeypatch):
    """A dead multiply goes even when a word of a string equals its id ("n\\0\\0\\0", the end of
    "mad_chain", kept NVIDIA issuing one dead double multiply per mad() of the bench's loop)."""
    from vkcl.compiler import spirv
    monkeypatch.setattr(spirv_fixes, "fuse_multiply_adds", lambda data: data)
    monkeypatch.setattr(spirv_fixes, "allow_contraction", lambda data: data)
    monkeypatch.setenv("VKCL_CACHE", "0")  # the unrepaired binary must not be cached
    raw = compiler.compile_source(MAD_SRC, "", compiler.DeviceCaps(fused_mad=True))
    monkeypatch.undo()
    assert raw.ok, raw.log
    words = spirv.to_words(raw.spirv)
    muls = [words[pos + 2] for pos, op, n in spirv.instructions(words) if op == spirv_fixes.OP_FMUL]
    assert muls and all(m < 128 for m in muls)
    # OpString "<chr(id)>" for every multiply, in the debug section (before the first name or
    # decoration): its one string word equals the id.
    first = next(pos for pos, op, n in spirv.instructions(words) if op in (5, 6, 71, 72, 330))
    bound = words[3]
    strings = [w for i, m in enumerate(muls) for w in ((3 << 16) | spirv.OP_STRING, bound + i, m)]
    words = words[:first] + type(words)("I", strings) + words[first:]
    words[3] = bound + len(muls)
    fused = spirv_fixes.allow_contraction(spirv_fixes.fuse_multiply_adds(spirv.to_bytes(words)))
    dis = _disassemble(fused, tmp_path)
    assert dis.count(" Fma ") == 3 and "OpFMul" not in dis and "OpFAdd" not in dis, dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


# A loop that exits in the middle, too large a header for LLVM to rotate: clspv's structured
# form gives its continue block phis that are OpUndef on the edge from the header (the exit path).
_STEP8 = "".join(f" x{j} = mad(x{j}, a, b);" for j in range(8))
MIDEXIT_SRC = ("kernel void k(global float *o, float a, float b, int n) {"
               + "".join(f" float x{j} = (float)(get_local_id(0) + {j});" for j in range(8)) + " int i = 0;"
               + " for (;;) {" + _STEP8 + " if (i >= n) break;" + _STEP8 + " i++; }"
               + "".join(f" o[{j}] = x{j};" for j in range(8)) + " }")


def test_undef_phi_inputs_of_a_mid_exit_loop_are_filled(tmp_path, monkeypatch):
    from vkcl.compiler import spirv_phis
    monkeypatch.setattr(spirv_fixes, "fill_undef_phi_inputs", lambda data: data)
    monkeypatch.setenv("VKCL_CACHE", "0")  # the unrepaired binary must not be cached
    before = compiler.compile_source(MIDEXIT_SRC, "", compiler.DeviceCaps(unroll_runtime_loops=True))
    monkeypatch.undo()
    assert before.ok, before.log
    dis_before = _disassemble(before.spirv, tmp_path)
    assert _undef_phis(dis_before) == 9, dis_before  # x0..x7 and i: what the repair is for
    after = spirv_phis.fill_undef_phi_inputs(before.spirv)
    dis = _disassemble(after, tmp_path)
    assert _undef_phis(dis) == 0 and dis.count("OpPhi") == dis_before.count("OpPhi"), dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0
    assert spirv_phis.fill_undef_phi_inputs(after) == after  # nothing left to do


# dot() of bitcast integers (as the bench's dot_int8 chains), of loaded vectors, and the
# accumulating and packed built-ins.
DOT_SRC = ("kernel void k(global uint *o, global const uchar4 *v, global const char4 *s, uint a) {"
           " uint x = o[0]; o[1] = dot(as_uchar4(x), as_uchar4(a)); o[2] = dot(v[0], v[1]);"
           " o[3] = dot_acc_sat(s[0], v[2], (int)x); o[4] = dot_4x8packed_uu_uint(x, a); }")
DOT_CAPS = compiler.DeviceCaps(int8=True, spirv_version="1.6", features=(
    "__opencl_c_integer_dot_product_input_4x8bit", "__opencl_c_integer_dot_product_input_4x8bit_packed"))


def test_dot_products_of_8bit_vectors_are_packed(tmp_path):
    result = compiler.compile_source(DOT_SRC, "-cl-std=CL3.0", DOT_CAPS)
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    dots = [l for l in dis.splitlines() if "Dot" in l and "OpCapability" not in l]
    assert len(dots) == 4 and all(l.endswith("PackedVectorFormat4x8Bit") for l in dots), dots
    assert "OpCapability DotProductInput4x8BitPacked" in dis
    # as_uchar4(x) . as_uchar4(a): the integers themselves, no bitcast back
    first = dots[0].split()
    assert first[2] == "OpUDot" and all(f"{v} = OpBitcast %v4uchar" not in dis for v in first[4:6]), dis
    casts = [l.split()[0] for l in dis.splitlines() if "= OpBitcast %uint" in l]
    assert len(casts) == 4  # the loaded vectors: two dots of two
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "k.spv")]).returncode == 0


CONVERT_SRC = ("kernel void mad_chain(global double *o, float af, int n, float2 v) {"
               " double a = (double)af, x = o[get_global_id(0)];"
               " for (int i = 0; i < n; i++) x = mad(x, a, (double)n);"
               " o[get_global_id(0)] = x * (double)v.y; }")
CONVERT_CAPS = compiler.DeviceCaps(fp64=True, int64=True, max_push_constant_size=256, spirv_version="1.6")


def _conversions_to_double(dis: str) -> list[str]:
    return [l for l in dis.splitlines() if "= OpFConvert %double" in l or "ToF %double" in l]


def test_arguments_converted_to_double_become_push_constants(tmp_path):
    result = compiler.compile_source(CONVERT_SRC, "", CONVERT_CAPS)
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    assert _conversions_to_double(dis) == [], dis
    k = result.reflection.kernels["mad_chain"]
    args_end = max(a.offset + a.size for a in k.args)
    convs = sorted(k.push_constant_conversions)
    sources = {src: fmt for _, src, fmt in convs}
    # n > 0 inside the loop, so LLVM may convert it as unsigned
    assert sources.keys() == {k.args[1].offset, k.args[2].offset, k.args[3].offset + 4}, convs
    assert sources[k.args[1].offset] == sources[k.args[3].offset + 4] == "f" and sources[k.args[2].offset] in "iI"
    dsts = [dst for dst, _, _ in convs]
    assert dsts[0] >= args_end and dsts[0] % 8 == 0 and dsts == list(range(dsts[0], dsts[0] + 8 * len(dsts), 8))
    assert k.push_constant_size == dsts[-1] + 8
    assert "NonSemantic.vkcl.Reflection.1" in dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "k.spv")]).returncode == 0
    # what the runtime strips for a driver without VK_KHR_shader_non_semantic_info stays valid
    (tmp_path / "k.spv").write_bytes(compiler.strip_nonsemantic(result.spirv))
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "k.spv")]).returncode == 0
    # and the record survives a program binary
    again = compiler.unpack(compiler.pack(result.to_binary())).reflection.kernels["mad_chain"]
    assert again.push_constant_conversions == k.push_constant_conversions


def test_argument_conversions_stay_within_the_push_constant_limit(tmp_path):
    full = compiler.compile_source(CONVERT_SRC, "", CONVERT_CAPS).reflection.kernels["mad_chain"]
    args_end = (max(a.offset + a.size for a in full.args) + 7) & ~7
    caps = compiler.DeviceCaps(fp64=True, int64=True, max_push_constant_size=args_end + 8, spirv_version="1.6")
    result = compiler.compile_source(CONVERT_SRC, "", caps)
    assert result.ok, result.log
    k = result.reflection.kernels["mad_chain"]
    assert len(k.push_constant_conversions) == 1 and k.push_constant_size == args_end + 8
    assert len(_conversions_to_double(_disassemble(result.spirv, tmp_path))) == 2
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "k.spv")]).returncode == 0
