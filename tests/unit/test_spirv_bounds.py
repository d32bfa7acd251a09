"""vkcl.compiler.spirv_bounds: the instrumented SPIR-V of kernels with loads, stores, atomics,
vectors and loops is valid for Vulkan 1.2 and 1.3, and the table address goes after the
push-constant block's members."""
import os
import shutil
import subprocess
import sys

import pytest

from vkcl.compiler import spirv_bounds

SOURCE = """
kernel void k(global float4 *a, global int *c, global const double *d, float v, int n) {
    size_t i = get_global_id(0);
    for (int j = 0; j < n; ++j) a[i + j] = a[i] * v + (float4)(j);
    atomic_add(c, 1);
    if (atomic_cmpxchg(c + 1, 0, 1) == 0) c[2] = (int)d[i];
}
kernel void nothing(int x) { }
"""


def _compile(tmp_path, source: str) -> bytes:
    """The SPIR-V vkcl makes of `source` with the mode off."""
    (tmp_path / "k.cl").write_text(source)
    env = dict(os.environ, VKCL_CACHE="0", VKCL_CHECK_BOUNDS="0")
    subprocess.run([sys.executable, "-m", "vkcl", "compile", str(tmp_path / "k.cl"), "-o", str(tmp_path / "k.spv")],
                   check=True, env=env, timeout=300)
    return (tmp_path / "k.spv").read_bytes()


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
def test_instrumented_spirv_is_valid(tmp_path):
    data = _compile(tmp_path, SOURCE)
    instrumented, offsets = spirv_bounds.instrument(data)
    assert list(offsets) == ["k"] and offsets["k"] % 8 == 0 and len(instrumented) > len(data)
    (tmp_path / "i.spv").write_bytes(instrumented)
    for env_name in ("vulkan1.2", "vulkan1.3"):
        r = subprocess.run(["spirv-val", "--target-env", env_name, str(tmp_path / "i.spv")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    dis = subprocess.run(["spirv-dis", str(tmp_path / "i.spv")], capture_output=True, text=True).stdout
    # every access of k is checked: 3 loads, 2 stores in the loop and after, 2 atomics
    assert dis.count("OpFunctionCall %bool") >= 6, dis


STEPS = """
typedef struct { int a; float b[4]; } S;
kernel void s(global S *p, global int *q, int k, long j) {
    p[k].b[2] = 1.0f;
    p[j].a = 3;
    q[j + 1] = q[k - 7];
}
"""


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
def test_element_steps_become_64_bit_arithmetic(tmp_path):
    # NVIDIA's driver computed OpPtrAccessChain's element step in 32 bits, so the address the
    # check saw for data[1 << 30] had wrapped back into the buffer: with the mode on, every step
    # into PhysicalStorageBuffer memory is explicit 64-bit arithmetic (32-bit indices
    # sign-extended), and struct members after it an OpAccessChain.
    data = _compile(tmp_path, STEPS)
    before = subprocess.run(["spirv-dis", str(tmp_path / "k.spv")], capture_output=True, text=True).stdout
    assert "OpPtrAccessChain %_ptr_PhysicalStorageBuffer" in before, before
    instrumented, _ = spirv_bounds.instrument(data)
    (tmp_path / "i.spv").write_bytes(instrumented)
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "i.spv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    dis = subprocess.run(["spirv-dis", str(tmp_path / "i.spv")], capture_output=True, text=True).stdout
    assert "PtrAccessChain %_ptr_PhysicalStorageBuffer" not in dis, dis
    assert "OpSConvert %ulong" in dis and "OpIMul %ulong" in dis, dis
