"""il_lowering: OpenCL SPIR-V rewritten before llvm-spirv-15 reads it. Each module here made
llvm-spirv-15 abort before the rewrite; after it, the module is valid (spirv-val) and
llvm-spirv-15 translates it. (What the programs compute: tests/icd/test_il_lowering.py.)"""
import shutil
import subprocess

import pytest

from vkcl.compiler import il_lowering, spirv
from vkcl.compiler.spirv_edit import Module

TOOLS = ("spirv-as", "spirv-val", "llvm-spirv-15")
pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS), reason="needs " + ", ".join(TOOLS))

HEAD = """OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k"
"""
TYPES = """%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%float = OpTypeFloat 32
%void = OpTypeVoid
%bool = OpTypeBool
%puint = OpTypePointer CrossWorkgroup %uint
"""
MODULES = {
    "copylogical": """OpMemberDecorateString %S2 1 UserSemantic "x"
""" + TYPES + """%S1 = OpTypeStruct %uint %float
%S2 = OpTypeStruct %uint %float
%A1 = OpTypeStruct %S1 %uint
%A2 = OpTypeStruct %S2 %uint
%pA2 = OpTypePointer CrossWorkgroup %A2
%fn = OpTypeFunction %void %pA2 %uint %float
%k = OpFunction %void None %fn
%o = OpFunctionParameter %pA2
%a = OpFunctionParameter %uint
%b = OpFunctionParameter %float
%l = OpLabel
%s = OpCompositeConstruct %S1 %a %b
%t = OpCompositeConstruct %A1 %s %a
%c = OpCopyLogical %A2 %t
OpStore %o %c Aligned 8
OpReturn
OpFunctionEnd
""",
    "ptrops": TYPES + """%P = OpTypeStruct %ulong %uint
%pP = OpTypePointer CrossWorkgroup %P
%fn = OpTypeFunction %void %puint %pP %pP
%k = OpFunction %void None %fn
%o = OpFunctionParameter %puint
%p = OpFunctionParameter %pP
%r = OpFunctionParameter %pP
%l = OpLabel
%e = OpPtrEqual %bool %p %r
%n = OpPtrNotEqual %bool %p %r
%d = OpPtrDiff %uint %p %r
%w = OpPtrDiff %ulong %p %r
OpReturn
OpFunctionEnd
""",
    "copymemory": """OpDecorateString %v UserSemantic "y"
""" + TYPES + """%fuint = OpTypePointer Function %uint
%u7 = OpConstant %uint 7
%fn = OpTypeFunction %void %puint
%k = OpFunction %void None %fn
%o = OpFunctionParameter %puint
%l = OpLabel
%v = OpVariable %fuint Function %u7
OpCopyMemory %o %v Aligned 4 Volatile
OpCopyMemory %o %v
OpReturn
OpFunctionEnd
""",
}
SPIRV_14_OPS = {400, 401, 402, 403, 5632, 5633, 63}


def _assemble(tmp_path, name: str, text: str) -> bytes:
    (tmp_path / "m.spvasm").write_text(text)
    subprocess.run(["spirv-as", "--target-env", "spv1.4", str(tmp_path / "m.spvasm"), "-o", str(tmp_path / "m.spv")],
                   check=True)
    return (tmp_path / "m.spv").read_bytes()


def _translates(tmp_path, il: bytes) -> bool:
    (tmp_path / "in.spv").write_bytes(il)
    proc = subprocess.run(["llvm-spirv-15", "-r", str(tmp_path / "in.spv"), "-o", str(tmp_path / "out.bc")],
                          capture_output=True)
    return proc.returncode == 0


@pytest.mark.parametrize("name", sorted(MODULES))
def test_spirv14_lowered(tmp_path, name):
    il = _assemble(tmp_path, name, HEAD + MODULES[name])
    assert not _translates(tmp_path, il)  # llvm-spirv-15 aborts on the module as written
    lowered = il_lowering.lower(il)
    (tmp_path / "low.spv").write_bytes(lowered)
    val = subprocess.run(["spirv-val", str(tmp_path / "low.spv")], capture_output=True, text=True)
    assert val.returncode == 0, val.stderr
    words = spirv.to_words(lowered)
    assert not {op for _, op, _ in spirv.instructions(words)} & SPIRV_14_OPS
    assert _translates(tmp_path, lowered)


def test_unchanged_module_is_the_same_bytes(tmp_path):
    text = HEAD + TYPES + """%fn = OpTypeFunction %void %puint
%k = OpFunction %void None %fn
%o = OpFunctionParameter %puint
%l = OpLabel
OpReturn
OpFunctionEnd
"""
    il = _assemble(tmp_path, "plain", text)
    assert il_lowering.lower(il) is il


def test_sizes_for_pointer_differences(tmp_path):
    """OpPtrDiff divides by the pointee's OpenCL C size: padded structs, 3-element vectors,
    CPacked structs."""
    il = _assemble(tmp_path, "sizes", HEAD + """OpDecorate %Q CPacked
%uchar = OpTypeInt 8 0
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%v3 = OpTypeVector %uint 3
%u5 = OpConstant %uint 5
%arr = OpTypeArray %uchar %u5
%S = OpTypeStruct %uchar %ulong %uchar
%Q = OpTypeStruct %uchar %ulong %uchar
%R = OpTypeStruct %arr %v3
""")
    m = Module(il)
    structs = [tid for tid, inst in m.types.items() if inst[0] & 0xFFFF == 30]
    vectors = [tid for tid, inst in m.types.items() if inst[0] & 0xFFFF == 23]
    s, q, r = structs
    assert m.size_align(s, 8) == (24, 8)
    assert m.size_align(q, 8) == (10, 1)
    assert m.size_align(vectors[0], 8) == (16, 16)
    assert m.size_align(r, 8) == (32, 16) and m.offsets(r, 8) == [0, 16]
