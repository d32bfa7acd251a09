"""Issue 21: clspv runs without its UndoInstCombine pass (options.py), and repair 20
(vkcl/compiler/spirv_wide_vectors.py) takes apart the bitcasts to vectors of more than four
elements that clspv then leaves in its SPIR-V. The ICD tests (tests/icd/test_byte_extracts.py)
check the values; these check the SPIR-V."""
import re
import subprocess

from vkcl import compiler
from vkcl.compiler.options import UNDO_INSTCOMBINE_OFF, parse_options
from vkcl.compiler.spirv_edit import Module
from vkcl.compiler.spirv_wide_vectors import split_wide_vectors

CAPS = compiler.DeviceCaps()

MODULE = """
               OpCapability Shader
               OpCapability Int64
               OpCapability Int8
               OpCapability Float64
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main"
               OpExecutionMode %main LocalSize 1 1 1
               OpName %a "a"
               OpName %b "b"
               OpName %c "c"
               OpName %d "d"
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %ulong = OpTypeInt 64 0
      %uchar = OpTypeInt 8 0
     %double = OpTypeFloat 64
    %v4ulong = OpTypeVector %ulong 4
   %v4double = OpTypeVector %double 4
    %v4uchar = OpTypeVector %uchar 4
   %v32uchar = OpTypeVector %uchar 32
    %ulong_1 = OpConstant %ulong 0x0807060504030201
    %ulong_2 = OpConstant %ulong 0x100f0e0d0c0b0a09
   %double_1 = OpConstant %double -0.0
        %vec = OpConstantComposite %v4ulong %ulong_1 %ulong_2 %ulong_1 %ulong_2
       %dvec = OpConstantComposite %v4double %double_1 %double_1 %double_1 %double_1
      %undef = OpUndef %v32uchar
       %main = OpFunction %void None %fn
      %entry = OpLabel
       %wide = OpBitcast %v32uchar %vec
          %a = OpCompositeExtract %uchar %wide 0
          %b = OpCompositeExtract %uchar %wide 10
          %c = OpVectorShuffle %v4uchar %wide %undef 11 29 2 0xFFFFFFFF
      %dwide = OpBitcast %v32uchar %dvec
          %d = OpCompositeExtract %uchar %dwide 31
               OpReturn
               OpFunctionEnd
"""


def _assemble(tmp_path, text: str) -> bytes:
    (tmp_path / "m.spvasm").write_text(text)
    subprocess.run(["spirv-as", "--target-env", "spv1.3", "-o", str(tmp_path / "m.spv"), str(tmp_path / "m.spvasm")],
                   check=True)
    return (tmp_path / "m.spv").read_bytes()


def _validate(tmp_path, data: bytes) -> subprocess.CompletedProcess:
    (tmp_path / "out.spv").write_bytes(data)
    return subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "out.spv")], capture_output=True,
                          text=True)


def _disassemble(tmp_path, data: bytes) -> str:
    (tmp_path / "d.spv").write_bytes(data)
    return subprocess.run(["spirv-dis", "--raw-id", str(tmp_path / "d.spv")], capture_output=True, text=True,
                          check=True).stdout


def _evaluate(data: bytes) -> dict[int, object]:
    """The values of a straight-line module of constants, extracts, shifts, conversions,
    bitcasts and composites (integers as unsigned, doubles as their bits)."""
    m = Module(data)
    values: dict[int, object] = {}
    width = {tid: inst[2] for tid, inst in m.types.items() if m.opcode(inst) in (21, 22)}
    for inst in m.insts:
        op = m.opcode(inst)
        if op == 43:  # OpConstant
            values[inst[2]] = inst[3] | (inst[4] << 32 if len(inst) > 4 else 0)
        elif op in (44, 80):  # OpConstantComposite, OpCompositeConstruct
            values[inst[2]] = [values[i] for i in inst[3:]]
        elif op == 81:  # OpCompositeExtract
            values[inst[2]] = values[inst[3]][inst[4]]
        elif op == 194:  # OpShiftRightLogical
            values[inst[2]] = values[inst[3]] >> values[inst[4]]
        elif op == 113:  # OpUConvert
            values[inst[2]] = values[inst[3]] & ((1 << width[inst[1]]) - 1)
        elif op == 124:  # OpBitcast (scalar: the bits stay)
            values[inst[2]] = values[inst[3]]
    return values


def test_elements_become_shifts_of_the_wide_element(tmp_path):
    before = _assemble(tmp_path, MODULE)
    assert "Illegal number of components (32)" in _validate(tmp_path, before).stderr
    after = split_wide_vectors(before)
    assert _validate(tmp_path, after).returncode == 0, _validate(tmp_path, after).stderr
    names = {name: int(rid) for rid, name in re.findall(r"OpName %(\d+) \"(\w+)\"", _disassemble(tmp_path, before))}
    values = _evaluate(after)
    memory = b"".join(x.to_bytes(8, "little") for x in (0x0807060504030201, 0x100f0e0d0c0b0a09) * 2)
    assert values[names["a"]] == memory[0] and values[names["b"]] == memory[10]
    assert values[names["c"]][:3] == [memory[11], memory[29], memory[2]]
    assert values[names["d"]] == 0x80  # the sign byte of -0.0
    assert not re.search(r"OpTypeVector %\d+ 32\b", _disassemble(tmp_path, after))  # the type went too


def test_a_wide_vector_used_otherwise_is_left_alone(tmp_path):
    text = MODULE.replace("               OpReturn", "          %e = OpCopyObject %v32uchar %wide\n               OpReturn")
    before = _assemble(tmp_path, text)
    assert split_wide_vectors(before) == before


def test_clspv_output_for_ulong4_bytes_is_valid(tmp_path):
    src = """kernel void k(global const ulong4 *src, global uchar *o, global uchar4 *o4) {
        ulong4 v = src[0];
        for (int k = 0; k < 8; k++) { o[k] = (uchar)(v.s1 >> (8 * k)); o[8 + k] = (uchar)(v.s3 >> (8 * k)); }
        o4[0] = (uchar4)((uchar)(v.s1 >> 24), (uchar)(v.s3 >> 40), (uchar)(v.s0 >> 16), (uchar)(v.s2 >> 8));
    }"""
    assert UNDO_INSTCOMBINE_OFF in parse_options("", "build").clspv_args(CAPS)
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    checked = _validate(tmp_path, result.spirv)
    assert checked.returncode == 0, checked.stderr
