"""vkcl.compiler.spirv_odd_widths: integers of widths Vulkan lacks (clspv's i40 for LLVM's i33)
carried in the next width it has, masked back to their width where an operation can carry past
it; modules it cannot carry are left for the driver to build again (tests/icd/
test_loop_closed_forms.py: the results)."""
import shutil
import subprocess

import pytest

from vkcl.compiler import spirv, spirv_odd_widths

pytestmark = pytest.mark.skipif(shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
                                reason="SPIRV-Tools not installed")

HEAD = """OpCapability Shader
OpCapability Int64
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpName %u40 "u40"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%u40 = OpTypeInt 40 0
%uint_5 = OpConstant %uint 5
%c1 = OpConstant %u40 1
%big = OpConstant %u40 0xFFFFFFFFFF
"""
# the closed form of a sum as clspv writes it, and the other operations taken
BODY = """%main = OpFunction %void None %fn
%entry = OpLabel
%a = OpUConvert %u40 %uint_5
%b = OpIAdd %u40 %a %big
%p = OpIMul %u40 %a %b
%h = OpShiftRightLogical %u40 %p %c1
%n = OpNot %u40 %h
%q = OpUDiv %u40 %n %a
%o = OpBitwiseOr %u40 %q %c1
%lt = OpULessThan %bool %o %big
%s = OpSelect %u40 %lt %o %h
%r = OpUConvert %uint %s
OpReturn
OpFunctionEnd
"""


def _dis(tmp_path, data: bytes) -> str:
    (tmp_path / "out.spv").write_bytes(data)
    return subprocess.run(["spirv-dis", "--raw-id", str(tmp_path / "out.spv")], capture_output=True, text=True).stdout


def test_odd_width_is_carried_and_masked(tmp_path, assemble_spirv, valid_spirv):
    data = assemble_spirv(HEAD + BODY)
    assert not valid_spirv(data)  # no Vulkan type of 40 bits
    out = spirv_odd_widths.widen_odd_integers(data)
    assert valid_spirv(out)
    assert not spirv_odd_widths.uncarried(out)
    text = _dis(tmp_path, out)
    assert "OpTypeInt 40" not in text and '"u40"' not in text
    # the sum, the product and the complement are masked to 40 bits; the shift, the division,
    # the or, the comparison and the select are not
    assert text.count("OpBitwiseAnd") == 4  # the conversion to it, the add, the mul, the not
    words = spirv.to_words(out)
    masks = {words[pos + 2] for pos, op, n in spirv.instructions(words) if op == 43 and n == 5
             and words[pos + 3] | words[pos + 4] << 32 == (1 << 40) - 1}
    assert len(masks) == 1


@pytest.mark.parametrize("extra, body", [
    ("%ptr = OpTypePointer Function %u40\n", BODY),                      # in memory
    ("%v2 = OpTypeVector %u40 2\n", BODY),                               # in a vector
    ("", BODY.replace("%n = OpNot %u40 %h", "%n = OpShiftRightArithmetic %u40 %h %c1")),  # read as signed
])
def test_what_it_cannot_carry_is_left_for_a_rebuild(assemble_spirv, extra, body):
    data = assemble_spirv(HEAD + extra + body)
    assert spirv_odd_widths.widen_odd_integers(data) == data
    assert spirv_odd_widths.uncarried(data)


def test_wider_than_64_bits_is_left_for_a_rebuild(assemble_spirv):
    # a ulong sum's closed form: LLVM's i65, clspv's 72 bits
    head = HEAD.replace("%u40 = OpTypeInt 40 0", "%u72 = OpTypeInt 72 0").replace('OpName %u40 "u40"\n', "")
    head = "\n".join(line for line in head.splitlines() if "%u40" not in line) + "\n"
    body = """%main = OpFunction %void None %fn
%entry = OpLabel
%a = OpUConvert %u72 %uint_5
%r = OpUConvert %uint %a
OpReturn
OpFunctionEnd
"""
    data = assemble_spirv(head + body)
    assert spirv_odd_widths.widen_odd_integers(data) == data and spirv_odd_widths.uncarried(data)


def test_legal_widths_are_untouched(assemble_spirv):
    data = assemble_spirv(HEAD.replace("%u40 = OpTypeInt 40 0", "%u40 = OpTypeInt 64 0") + BODY)
    assert spirv_odd_widths.widen_odd_integers(data) == data and not spirv_odd_widths.uncarried(data)
