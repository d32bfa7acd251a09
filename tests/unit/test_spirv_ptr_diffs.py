"""compiler/spirv_ptr_diffs.py: clspv's OpPtrDiff of physical pointers (a loop `p < a + n`)
becomes address arithmetic; NVIDIA's driver crashed the process making the pipeline of the
OpPtrDiff (tests/icd/test_crash_corpus.py runs the kernel on each device)."""
import shutil
import subprocess

from vkcl import compiler
from vkcl.compiler import spirv

SRC = ("kernel void k(global float *o, global const float *a, uint n) { float t = 0.0f;"
       " for (global const float *p = a; p < a + n; p++) t += *p; o[get_global_id(0)] = t; }")

def test_no_pointer_difference_of_physical_pointers_is_left(tmp_path):
    r = compiler.compile_source(SRC, "", compiler.DeviceCaps())
    assert r.ok, r.log
    ops = [op for _, op, _ in spirv.instructions(spirv.to_words(r.spirv))]
    assert 403 not in ops and 117 in ops  # no OpPtrDiff; OpConvertPtrToU
    if shutil.which("spirv-val"):
        (tmp_path / "k.spv").write_bytes(r.spirv)
        assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(tmp_path / "k.spv")]).returncode == 0
