"""vkcl.compiler.spirv_round_even: RoundEven of doubles (scalar and vector) computed from Floor,
valid SPIR-V; float RoundEven and modules without it unchanged (tests/icd/test_round_even.py:
what it computes)."""
import shutil
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler import spirv_round_even

LLVMPIPE = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000, round_even_from_floor=True)
PLAIN = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000)
DOUBLES = """#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void k(global double4 *a, global double *b, global int *c) { size_t i = get_global_id(0);
    a[i] = rint(a[i]); b[i] = rint(b[i]); c[i] = convert_int_rte(b[i + 1]); }"""
FLOATS = "kernel void k(global float4 *a) { a[get_global_id(0)] = rint(a[get_global_id(0)]); }"


def _round_evens(data: bytes) -> int:
    out = subprocess.run(["spirv-dis", "-"], input=data, capture_output=True, check=True).stdout.decode()
    return out.count("RoundEven")


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-tools not installed")
def test_double_round_even_is_rewritten_and_validates(tmp_path):
    plain = compiler.compile_source(DOUBLES, "", PLAIN)
    fixed = compiler.compile_source(DOUBLES, "", LLVMPIPE)
    assert plain.ok and fixed.ok
    assert _round_evens(plain.spirv) >= 3 and _round_evens(fixed.spirv) == 0
    (tmp_path / "m.spv").write_bytes(fixed.spirv)
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "m.spv")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("spirv-dis") is None, reason="spirv-tools not installed")
def test_float_round_even_and_other_modules_are_unchanged():
    floats = compiler.compile_source(FLOATS, "", PLAIN)
    assert floats.ok and _round_evens(floats.spirv) == 1
    assert spirv_round_even.exact_round_even(floats.spirv) == floats.spirv
