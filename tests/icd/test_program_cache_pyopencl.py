"""vkcl's program cache through the ICD (pyopencl): an entry of another program copied under
a program's key is not used; the kernel computes its own result (issue 22)."""
import shutil

import pytest

pytest.importorskip("pyopencl")

PROGRAM = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]])
q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, "kernel void k(global int *a) {{ a[get_global_id(0)] = {value}; }}").build()
print("BUILD", prg._build_duration_info[0])
out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 4)
prg.k(q, (64,), None, out)
r = np.empty(64, np.int32); cl.enqueue_copy(q, r, out); q.finish()
print("RESULT", sorted(set(r.tolist())))
"""


def test_kernel_computes_its_own_result_when_the_cache_holds_a_swapped_entry(python_with_icd, tmp_path):
    # pyopencl's own binary cache off: every build goes through clBuildProgram and vkcl's cache.
    env = {"XDG_CACHE_HOME": str(tmp_path), "VKCL_CACHE_DIR": "", "PYOPENCL_NO_CACHE": "1"}
    root = tmp_path / "vkcl"

    def build_and_run(value: int) -> set:
        before = set(root.rglob("*.vkclbin"))
        out = python_with_icd(PROGRAM.format(value=value), env=env)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
        assert "uncached source build" in out.stdout, out.stdout
        assert f"RESULT [{value}]" in out.stdout, out.stdout + out.stderr[-3000:]
        return set(root.rglob("*.vkclbin")) - before

    (mine,) = build_and_run(111)
    (other,) = build_and_run(222)
    good = mine.read_bytes()
    shutil.copyfile(other, mine)
    assert build_and_run(111) == set()  # computed 111, not the other program's 222
    assert mine.read_bytes() == good  # and the entry is the program's own again
    assert good.startswith(b"VKCLCACH")  # (written by this worktree's vkcl)
