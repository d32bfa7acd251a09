"""Repair 21 (vkcl/compiler/spirv_zero_operands.py): on llvmpipe no float add, multiply, divide,
remainder or Fma keeps a constant +0.0 operand (lavapipe folds them as if IEEE had no inf, NaN
or -0); `x - C` may keep it (folded right); other devices' SPIR-V keeps clspv's operations.
The results are checked on the device in tests/icd/test_zero_operands.py."""
from vkcl import compiler
from vkcl.compiler import spirv
from vkcl.compiler.spirv_zero_operands import fix_zero_operands

SRC = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global float *f, global double *d, global float2 *v) {
  float x = f[0];
  f[1] = x * 0.0f; f[2] = 0.0f / x; f[3] = x / 0.0f; f[4] = x + 0.0f; f[5] = 0.0f - x;
  f[6] = fmod(x, 0.0f); f[7] = 0.0f * x + 0.0f; f[8] = x - 0.0f;
  double y = d[0];
  d[1] = y * 0.0; d[2] = 0.0 + y; d[3] = 0.0 / y;
  float2 w = v[0];
  v[1] = w * (float2)(0.0f, 2.0f); v[2] = w + (float2)(0.0f, 1.0f); v[3] = (float2)(0.0f, 3.0f) - w;
  v[4] = w * 0.0f;
}"""
OPS = {129: "FAdd", 131: "FSub", 133: "FMul", 136: "FDiv", 140: "FRem", 142: "VectorTimesScalar"}


def _positive_zero_operands(data: bytes) -> list[str]:
    """The arithmetic instructions (and Fma) that name a constant with a +0.0 component."""
    words = spirv.to_words(data)
    zero, floats, glsl, found = set(), set(), None, []
    composites = {}
    for pos, op, n in spirv.instructions(words):
        if op == 22:
            floats.add(words[pos + 1])
        elif op == spirv.OP_TYPE_VECTOR and words[pos + 2] in floats:
            floats.add(words[pos + 1])
        elif op == spirv.OP_CONSTANT and words[pos + 1] in floats and not any(words[pos + 3:pos + n]):
            zero.add(words[pos + 2])
        elif op == 46 and words[pos + 1] in floats:  # OpConstantNull
            zero.add(words[pos + 2])
        elif op == 44:
            composites[words[pos + 2]] = list(words[pos + 3:pos + n])
        elif op == spirv.OP_EXT_INST_IMPORT:
            if spirv.literal_string(words, pos + 2, pos + n)[0] == "GLSL.std.450":
                glsl = words[pos + 1]
    zero |= {cid for cid, lanes in composites.items() if zero & set(lanes)}
    for pos, op, n in spirv.instructions(words):
        operands = None
        if op in OPS and op != 131:
            operands, name = words[pos + 3:pos + n], OPS[op]
        elif op == 131:
            operands, name = words[pos + 3:pos + 4], "FSub (first operand)"
        elif op == spirv.OP_EXT_INST and words[pos + 3] == glsl and words[pos + 4] == 50:
            operands, name = words[pos + 5:pos + n], "Fma"
        if operands is not None and zero & set(operands):
            found.append(name)
    return found


def test_llvmpipe_gets_no_positive_zero_operands(valid_spirv):
    result = compiler.compile_source(SRC, "", compiler.DeviceCaps(negate_zero_operands=True))
    assert result.ok, result.log
    assert _positive_zero_operands(result.spirv) == []
    assert valid_spirv(result.spirv)
    assert fix_zero_operands(result.spirv) == result.spirv  # nothing left to rewrite


def test_other_devices_keep_clspv_operations():
    result = compiler.compile_source(SRC, "", compiler.DeviceCaps())
    assert result.ok, result.log
    found = _positive_zero_operands(result.spirv)
    assert {"FMul", "FDiv", "FAdd", "Fma"} <= set(found), found
