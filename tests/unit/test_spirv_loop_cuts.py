"""vkcl.compiler.spirv_loop_cuts: the probe at an entry point's returns validates for Vulkan 1.3,
and a module without loops is left as it is (tests/icd/test_long_loops.py: what it detects)."""
import os
import shutil
import subprocess
import sys

import pytest

from vkcl.compiler import spirv_loop_cuts

LOOPS = """
kernel void k(global uint *o, uint n, global const float *a) {
    uint s = get_global_id(0);
    for (uint i = 0; i < n; i++) { s = s * 1103515245u + (i ^ 12345u); if (a[i & 7] > 3.0f) break; }
    o[get_global_id(0)] = s;
    if (s == 7) return;
    o[0] += 1;
}
"""


def _compile(tmp_path, source: str) -> bytes:
    (tmp_path / "k.cl").write_text(source)
    subprocess.run([sys.executable, "-m", "vkcl", "compile", str(tmp_path / "k.cl"), "-o", str(tmp_path / "k.spv")],
                   check=True, env=dict(os.environ, VKCL_CACHE="0"), timeout=300)
    return (tmp_path / "k.spv").read_bytes()


@pytest.mark.skipif(shutil.which("spirv-val") is None, reason="spirv-val not installed")
def test_probe_validates(tmp_path):
    out = spirv_loop_cuts.instrument(_compile(tmp_path, LOOPS))
    (tmp_path / "i.spv").write_bytes(out)
    r = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "i.spv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    dis = subprocess.run(["spirv-dis", str(tmp_path / "i.spv")], capture_output=True, text=True).stdout
    assert dis.count("OpAtomicOr") >= 1 and "SpecId 2136361744" in dis, dis


def test_module_without_loops_is_unchanged(tmp_path):
    data = _compile(tmp_path, "kernel void k(global int *o) { o[get_global_id(0)] = 1; }")
    assert spirv_loop_cuts.instrument(data) == data
