"""Arguments' places derived from the SPIR-V and checked against clspv's reflection
(vkcl/compiler/argument_layout.py, spirv_blocks.py), and the literal operands spirv.variables_used
must not take for uses."""
import copy
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler import argument_layout, spirv
from vkcl.compiler.spirv_blocks import ModuleBlocks

CAPS = compiler.DeviceCaps(fp64=True, int8=True, int64=True, ubo_std430=True, spirv_version="1.6")
MATH = "kernel void mathk(global float *o, float x) { o[0] = sqrt(x) + exp(x) + sin(x) + pow(x, 1.5f); }\n"
VEC4 = "kernel void vec4k(global float4 *v, float4 m) { v[get_global_id(0)] = m; }\n"
MIXED = "kernel void mixed(char c, global int *o, float4 m, int x) { o[0] = c + x + (int)m.y; }\n"


def _build(src: str, options: str = "") -> compiler.CompileResult:
    result = compiler.compile_source(src, options, CAPS)
    assert result.ok, result.log
    return result


def _word_reads(result: compiler.CompileResult, kernel: str) -> list[tuple[int, int]]:
    """(offset, size) of the push constants `kernel` loads."""
    m = ModuleBlocks(result.spirv)
    return sorted({(off, size) for var, off, size in m.reads_of(m.entry_points[kernel])
                   if m.blocks[var].storage_class == spirv.SC_PUSH_CONSTANT})


def test_float4_beside_the_module_constants_pointer_is_placed_where_the_kernel_reads_it():
    result = _build(MATH + VEC4)
    clspv = compiler.parse_reflection(result.spirv).kernels["vec4k"]  # clspv's own offsets
    assert [a.offset for a in clspv.args] == [16, 32]
    k = result.reflection.kernels["vec4k"]
    assert [a.offset for a in k.args] == [8, 24] and not k.layout_error
    assert _word_reads(result, "vec4k") == [(8, 4), (12, 4), (24, 4), (28, 4), (32, 4), (36, 4)]
    assert k.push_constant_size == 40
    assert [a.offset for a in result.reflection.kernels["mathk"].args] == [8, 16]
    # idempotent: a reflection already corrected stays as it is
    again = copy.deepcopy(result.reflection)
    assert argument_layout.reconcile(result.spirv, again) == [] and again == result.reflection


@pytest.mark.parametrize("options", ["", "-cl-std=CL3.0"])
def test_every_kernel_is_placed_with_and_without_module_push_constants(options):
    for src in (VEC4 + MIXED, MATH + VEC4 + MIXED):
        result = _build(src, options)
        for k in result.reflection.kernels.values():
            assert not k.layout_error, (src, k.layout_error)
        mixed = result.reflection.kernels["mixed"]
        c, o, m, x = (a.offset for a in mixed.args)
        assert o - c == 8 and m - c == 16 and x - c == 32  # the natural layout of (char, ptr, float4, int)
        reads = _word_reads(result, "mixed")
        for start in (o, m + 4, x):  # m.y, not m.x, is read
            assert any(off <= start < off + size for off, size in reads), (start, reads)


def _tampered(result, kernel: str, ordinal: int, **changes):
    refl = compiler.parse_reflection(result.spirv)
    argument_layout.reconcile(result.spirv, refl)
    arg = refl.kernels[kernel].args[ordinal]
    for key, value in changes.items():
        setattr(arg, key, value(getattr(arg, key)))
    return refl


@pytest.mark.parametrize("module_constants", [False, True])
@pytest.mark.parametrize("change, why", [
    ({"offset": lambda v: v + 4}, ""),                       # m in the middle of the block's words
    ({"size": lambda v: 4}, ""),                             # m's last 12 bytes would be no argument's
    ({"offset": lambda v: v - 16}, "overlap"),               # on top of the argument before it
])
def test_a_reflection_that_disagrees_with_the_spirv_is_refused(module_constants, change, why):
    result = _build((MATH if module_constants else "") + VEC4 + MIXED)
    refl = _tampered(result, "mixed", 2, **change)
    lines = argument_layout.reconcile(result.spirv, refl)
    bad = refl.kernels["mixed"]
    assert bad.layout_error and why in bad.layout_error, bad.layout_error
    assert len(lines) == 1 and lines[0].startswith("vkcl: kernel mixed: ") and "cannot be launched" in lines[0]
    assert not refl.kernels["vec4k"].layout_error  # the other kernels still run


def test_a_kernel_without_its_entry_point_or_spec_constant_is_refused():
    result = _build("kernel void loc(global int *o, local int *l) { l[0] = 1; barrier(CLK_LOCAL_MEM_FENCE);"
                    " o[0] = l[0]; }\n" + VEC4)
    refl = _tampered(result, "loc", 1, spec_id=lambda v: v + 1000)
    argument_layout.reconcile(result.spirv, refl)
    assert "specialisation constant" in refl.kernels["loc"].layout_error
    refl.kernels["loc"].name = "elsewhere"
    refl.kernels = {"elsewhere": refl.kernels["loc"]}
    argument_layout.reconcile(result.spirv, refl)
    assert "no entry point" in refl.kernels["elsewhere"].layout_error


def test_arguments_in_a_uniform_buffer_are_checked_too():
    values = ", ".join(f"float4 a{i}" for i in range(9))
    result = _build(MATH + f"kernel void many(global float4 *o, char c, {values}) {{ o[0] = a0 + a8 + (float)c; }}\n")
    k = result.reflection.kernels["many"]
    assert {a.kind for a in k.args} == {"pointer_ubo", "pod_ubo"} and not k.layout_error
    assert [a.offset for a in k.args] == [0, 8] + [16 * (i + 1) for i in range(9)]
    refl = _tampered(result, "many", 10, offset=lambda v: v + 4)
    argument_layout.reconcile(result.spirv, refl)
    assert "does not start at a member" in refl.kernels["many"].layout_error


def test_conversions_to_double_read_the_arguments_true_places():
    # With module constants clspv misplaces m and f; the doubles the runtime fills must come
    # from where the kernel reads them.
    src = MATH + "kernel void conv(global double *o, float4 m, float f) { o[0] = (double)f * (double)m.w; }\n"
    result = _build(src)
    k = result.reflection.kernels["conv"]
    places = {a.name: (a.offset, a.size) for a in k.args}
    assert places["m"] == (24, 16) and places["f"] == (40, 4), places
    sources = {src: fmt for _, src, fmt in k.push_constant_conversions}
    assert set(sources) <= {places["f"][0], places["m"][0] + 12}, (sources, places)
    ends = max(o + s for o, s in places.values())
    assert all(dst >= ends for dst, _, _ in k.push_constant_conversions)


def test_variables_used_ignores_literal_operands(tmp_path):
    # %14 is a push-constant variable; `f` names 14 only as an OpCompositeExtract index, an
    # OpLoad alignment and an OpVectorShuffle component.
    text = """
        OpCapability Shader
        OpMemoryModel Logical GLSL450
        OpEntryPoint GLCompute %f "f"
        OpExecutionMode %f LocalSize 1 1 1
        OpDecorate %blk Block
        OpMemberDecorate %blk 0 Offset 0
        %void = OpTypeVoid
        %fn = OpTypeFunction %void
        %uint = OpTypeInt 32 0
        %uint_16 = OpConstant %uint 16
        %arr = OpTypeArray %uint %uint_16
        %v4 = OpTypeVector %uint 4
        %blk = OpTypeStruct %uint
        %pblk = OpTypePointer PushConstant %blk
        %parr = OpTypePointer Function %arr
        %14 = OpVariable %pblk PushConstant
        %f = OpFunction %void None %fn
        %entry = OpLabel
        %v = OpVariable %parr Function
        %a = OpLoad %arr %v Aligned 14
        %e = OpCompositeExtract %uint %a 14
        %vec = OpCompositeConstruct %v4 %e %e %e %e
        %s = OpVectorShuffle %v4 %vec %vec 0 1 2 14
        OpReturn
        OpFunctionEnd
    """
    (tmp_path / "m.spvasm").write_text(text)
    subprocess.run(["spirv-as", "--preserve-numeric-ids", "--target-env", "spv1.3", "-o", str(tmp_path / "m.spv"),
                    str(tmp_path / "m.spvasm")], check=True)
    words = spirv.to_words((tmp_path / "m.spv").read_bytes())
    variables = spirv.global_variables(words)
    assert 14 in variables
    assert all(14 not in used for used in spirv.variables_used(words, variables).values())
