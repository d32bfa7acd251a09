"""Repair 18 (vkcl/compiler/spirv_scalars.py): clspv's one-element OpCompositeConstruct and
OpCompositeExtract of a scalar (invalid SPIR-V; NVIDIA's driver crashed compiling such a module,
an H200 build of pyopencl's float64 scan) become OpCopyObject; real composites are untouched."""
import subprocess

from vkcl.compiler import spirv
from vkcl.compiler.spirv_fixes import repair
from vkcl.compiler.spirv_scalars import OP_COMPOSITE_CONSTRUCT, OP_COMPOSITE_EXTRACT, OP_COPY_OBJECT
from vkcl.compiler.spirv_scalars import fix_scalar_composites

MODULE = """
               OpCapability Shader
               OpCapability Int64
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpName %ulong "ulong"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %ulong = OpTypeInt 64 0
       %uint = OpTypeInt 32 0
     %uint_1 = OpConstant %uint 1
       %arr1 = OpTypeArray %ulong %uint_1
     %v2uint = OpTypeVector %uint 2
    %ulong_5 = OpConstant %ulong 5
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %a = OpCompositeConstruct %arr1 %ulong_5
          %b = OpCompositeExtract %ulong %a 0
          %c = OpCompositeConstruct %ulong %b
          %d = OpCompositeExtract %ulong %c 0
          %v = OpCompositeConstruct %v2uint %uint_1 %uint_1
          %e = OpCompositeExtract %uint %v 0
               OpReturn
               OpFunctionEnd
"""


def _assemble(tmp_path, text: str) -> bytes:
    (tmp_path / "m.spvasm").write_text(text)
    subprocess.run(["spirv-as", "--target-env", "spv1.3", "-o", str(tmp_path / "m.spv"), str(tmp_path / "m.spvasm")],
                   check=True)
    return (tmp_path / "m.spv").read_bytes()


def _valid(tmp_path, data: bytes) -> subprocess.CompletedProcess:
    (tmp_path / "out.spv").write_bytes(data)
    return subprocess.run(["spirv-val", "--target-env", "vulkan1.1", str(tmp_path / "out.spv")], capture_output=True,
                          text=True)


def _ops(data: bytes) -> list[int]:
    words = spirv.to_words(data)
    return [op for _, op, _ in spirv.instructions(words)]


def test_composites_of_a_scalar_become_copies(tmp_path):
    before = _assemble(tmp_path, MODULE)
    assert _valid(tmp_path, before).returncode != 0  # the module really is invalid
    after = fix_scalar_composites(before)
    result = _valid(tmp_path, after)
    assert result.returncode == 0, result.stdout + result.stderr
    ops = _ops(after)
    # the array's and the vector's construct and extract stay; the scalar ones are copies
    assert ops.count(OP_COPY_OBJECT) == 2
    assert ops.count(OP_COMPOSITE_CONSTRUCT) == 2 and ops.count(OP_COMPOSITE_EXTRACT) == 2
    assert fix_scalar_composites(after) == after


def test_valid_modules_are_untouched(tmp_path):
    valid = MODULE.replace("%c = OpCompositeConstruct %ulong %b", "%c = OpCopyObject %ulong %b").replace(
        "%d = OpCompositeExtract %ulong %c 0", "%d = OpCopyObject %ulong %c")
    data = _assemble(tmp_path, valid)
    assert _valid(tmp_path, data).returncode == 0
    assert fix_scalar_composites(data) is data
    assert _valid(tmp_path, repair(_assemble(tmp_path, MODULE))).returncode == 0  # part of the repairs
