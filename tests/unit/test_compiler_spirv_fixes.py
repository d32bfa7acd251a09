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


# Two mad()s, one a * b + c (which clspv itself makes an Fma: contraction is on), and a multiply
# and an add in separate statements (which C does not let contract).
MAD_SRC = ("kernel void k(global float4 *o, global double *d, float4 a, double b, float c) {"
           " o[0] = mad(o[0], a, a); d[0] = mad(d[0], b, b); o[1] = o[1] * c + a;"
           " float4 t = o[2] * c; o[2] = t + a; }")


def _fma_mul_add(dis: str) -> tuple[int, int, int]:
    return dis.count(" Fma "), dis.count("OpFMul"), dis.count("OpFAdd")


def test_mad_is_fma_and_other_operations_stay_exact(tmp_path):
    result = compiler.compile_source(MAD_SRC, "", CAPS)
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    assert _fma_mul_add(dis) == (3, 1, 1), dis
    decorated = {l.split()[1] for l in dis.splitlines() if l.strip().endswith("NoContraction")}
    pair = {l.split()[0] for l in dis.splitlines() if "= OpFMul" in l or "= OpFAdd" in l}
    assert pair <= decorated, dis  # the separate statements may not be fused by the driver
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


def test_mad_is_fma_whatever_fp_contract_says(tmp_path):
    off = compiler.compile_source("#pragma OPENCL FP_CONTRACT OFF\n" + MAD_SRC, "", CAPS)
    dis = _disassemble(off.spirv, tmp_path)
    assert off.ok and _fma_mul_add(dis) == (2, 2, 2), dis  # a * b + c is no longer contracted


@pytest.mark.parametrize("options", ["-cl-mad-enable", "-cl-unsafe-math-optimizations", "-cl-fast-relaxed-math"])
def test_options_that_allow_it_fuse_every_multiply_add(tmp_path, options):
    result = compiler.compile_source(MAD_SRC, options, CAPS)
    assert result.ok, result.log
    dis = _disassemble(result.spirv, tmp_path)
    assert _fma_mul_add(dis) == (4, 0, 0), dis  # dead multiplies go
    # only the options that allow reassociation let the driver do it
    assert ("NoContraction" in dis) == (options == "-cl-mad-enable") or "OpFSub" not in dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


def test_no_contraction_stays_without_options(tmp_path):
    src = "kernel void k(global float *o, float x) { o[0] = 10.0f - (10.0f - x); o[1] = (x + 1e20f) - 1e20f; }"
    dis = _disassemble(compiler.compile_source(src, "", CAPS).spirv, tmp_path)
    adds = [l.split()[0] for l in dis.splitlines() if "= OpFAdd" in l or "= OpFSub" in l]
    assert len(adds) == 4 and all(f"OpDecorate {a} NoContraction" in dis for a in adds), dis
    fast = _disassemble(compiler.compile_source(src, "-cl-unsafe-math-optimizations", CAPS).spirv, tmp_path)
    assert "NoContraction" not in fast


def test_fusing_imports_glsl_when_the_module_has_not(tmp_path):
    src = "kernel void k(global double *d, double b) { double t = d[0] * b; d[0] = t + b; }"
    plain = compiler.compile_source(src, "", CAPS)
    assert plain.ok and "GLSL.std.450" not in _disassemble(plain.spirv, tmp_path)
    result = compiler.compile_source(src, "-cl-mad-enable", CAPS)
    dis = _disassemble(result.spirv, tmp_path)
    assert result.ok and 'OpExtInstImport "GLSL.std.450"' in dis and dis.count(" Fma ") == 1, dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0


ATOMICS_SRC = ("kernel void k(global int *p, local int *l) {"
               " atomic_add(p, 1); atomic_inc(l); atomic_cmpxchg(p + 1, 2, 3); barrier(CLK_LOCAL_MEM_FENCE);"
               " p[2] = l[0]; }")
C11_SRC = ("kernel void k(global atomic_int *q) {"
           " atomic_fetch_add_explicit(q, 1, memory_order_acq_rel);"
           " atomic_store_explicit(q + 1, 1, memory_order_release);"
           " atomic_fetch_add_explicit(q + 2, 1, memory_order_relaxed); }")
_ORDERING = 0x2 | 0x4 | 0x8 | 0x10


def _atomic_semantics(spv: bytes) -> list[int]:
    from vkcl.compiler import spirv
    words = spirv.to_words(spv)
    _, constants = spirv.int32_constants(words)
    return [constants[words[pos + k]][1] for pos, op, n in spirv.instructions(words)
            if op in spirv_fixes._ATOMIC_SEMANTICS for k in spirv_fixes._ATOMIC_SEMANTICS[op] if k < n]


def test_opencl_1x_atomics_are_relaxed(tmp_path):
    result = compiler.compile_source(ATOMICS_SRC, "", CAPS)
    assert result.ok, result.log
    semantics = _atomic_semantics(result.spirv)
    assert len(semantics) == 4 and not any(s & _ORDERING for s in semantics), semantics
    assert all(s & 0x140 for s in semantics)  # the storage-class bits stay
    raw = _atomic_semantics(spirv_fixes.repair(result.spirv))  # what the repair is for:
    assert raw == semantics  # (already relaxed: repairing twice changes nothing)


def test_c11_atomics_keep_their_order(tmp_path, monkeypatch):
    result = compiler.compile_source(C11_SRC, "-cl-std=CL2.0", CAPS)
    assert result.ok, result.log
    semantics = _atomic_semantics(result.spirv)
    assert [s & _ORDERING for s in semantics] == [0x8, 0x4, 0], semantics
    assert _atomic_semantics(spirv_fixes.relax_atomics(result.spirv)) != semantics  # what keeping it avoids


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


# Three multiply-add pairs that only -cl-mad-enable lets fuse.
PAIRS_SRC = ("kernel void k(global float4 *o, global double *d, float4 a, double b, float c) {"
             " float4 t = o[0] * a; o[0] = t + a; double u = d[0] * b; d[0] = u + b; float4 v = o[1] * c; o[1] = v + a; }")


def test_fused_mad_drops_a_multiply_whose_id_a_string_spells(tmp_path, monkeypatch):
    """A dead multiply goes even when a word of a string equals its id ("n\\0\\0\\0", the end of
    "mad_chain", kept NVIDIA issuing one dead double multiply per multiply-add of a loop)."""
    from vkcl.compiler import spirv
    monkeypatch.setattr(spirv_fixes, "fuse_multiply_adds", lambda data: data)
    monkeypatch.setattr(spirv_fixes, "allow_contraction", lambda data: data)
    monkeypatch.setenv("VKCL_CACHE", "0")  # the unrepaired binary must not be cached
    raw = compiler.compile_source(PAIRS_SRC, "-cl-mad-enable", CAPS)
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
_STEP8 = "".join(f" x{j} = x{j} * a; x{j} = x{j} + b;" for j in range(8))
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


def test_mistyped_pointer_access_chains_are_reinterpreted(tmp_path, monkeypatch):
    """A select between p[i - 1] and p[255] (a byte offset to LLVM): clspv's SPIR-V is invalid."""
    from vkcl.compiler import spirv_pointers
    src = ("kernel void shift(global float *o, global const float *in) {"
           " int i = get_global_id(0); o[i] = i > 0 ? in[i - 1] : in[255]; }")
    monkeypatch.setattr(spirv_fixes, "fix_mistyped_pointers", lambda data: data)
    monkeypatch.setenv("VKCL_CACHE", "0")  # the unrepaired binary must not be cached
    raw = compiler.compile_source(src, "", CAPS)
    monkeypatch.undo()
    assert raw.ok, raw.log
    path = tmp_path / "k.spv"
    path.write_bytes(raw.spirv)
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(path)], capture_output=True).returncode != 0
    fixed = spirv_pointers.fix_mistyped_pointers(raw.spirv)
    dis = _disassemble(fixed, tmp_path)
    assert dis.count("OpBitcast %_ptr_PhysicalStorageBuffer") == 2, dis
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "k.spv")]).returncode == 0
    assert spirv_pointers.fix_mistyped_pointers(fixed) == fixed
