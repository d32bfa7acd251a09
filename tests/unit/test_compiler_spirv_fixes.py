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
