"""vkcl inside a process that already runs Python (icd/vkcl_icd.c): another minor version gets
a message and no platform, never a hang (Python 3.12 used to spin for ever in cffi's start-up);
a virtualenv of the same version holding only pyopencl (no cffi, no vulkan) runs a kernel."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PLATFORMS = r"""
import ctypes
cl = ctypes.CDLL("libOpenCL.so.1")
n, ids = ctypes.c_uint(0), (ctypes.c_void_p * 8)()
rc = cl.clGetPlatformIDs(8, ids, ctypes.byref(n))
names = []
for i in range(n.value):
    buf = ctypes.create_string_buffer(64)
    cl.clGetPlatformInfo(ctypes.c_void_p(ids[i]), 0x0902, 64, buf, None)
    names.append(buf.value.decode())
print("PLATFORMS", rc, names)
"""

KERNEL = r"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
a = np.arange(1024, dtype=np.float32)
A = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
cl.Program(ctx, "kernel void k(global float *a) { a[get_global_id(0)] *= 3.0f; }").build().k(q, a.shape, None, A)
r = np.empty_like(a); cl.enqueue_copy(q, r, A); q.finish()
assert np.array_equal(r, a * 3)
print("OK")
"""


def _other_pythons():
    """Interpreters of other minor versions on this machine (on PATH, or pyenv's)."""
    mine = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found = []
    for v in ("3.10", "3.12", "3.13"):
        if v == mine:
            continue
        candidates = [shutil.which(f"python{v}")] + sorted(Path.home().glob(f".pyenv/versions/{v}.*/bin/python{v}"))
        for c in candidates:
            if c and subprocess.run([str(c), "-c", "pass"], capture_output=True).returncode == 0:
                found.append(str(c))
                break
    return found


@pytest.mark.parametrize("python", _other_pythons() or [pytest.param(None, marks=pytest.mark.skip("no other Python"))])
def test_another_python_gets_no_platform_and_no_hang(icd_env, python):
    result = subprocess.run([python, "-c", PLATFORMS], env=icd_env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "'vkcl'" not in result.stdout and "PLATFORMS" in result.stdout, result.stdout
    assert "vkcl was built for Python" in result.stderr


def test_a_virtualenv_holding_only_pyopencl(icd_env, tmp_path):
    import pyopencl
    venv = tmp_path / "venv"
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run([str(base), "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", f"pyopencl=={pyopencl.VERSION_TEXT}"],
                         capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        pytest.skip(f"pyopencl could not be installed into a fresh virtualenv: {pip.stderr[-500:]}")
    has = subprocess.run([str(venv / "bin" / "python"), "-c", "import cffi"], capture_output=True)
    assert has.returncode != 0  # the virtualenv really has no cffi of its own
    result = subprocess.run([str(venv / "bin" / "python"), "-c", KERNEL], env=icd_env, capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-3000:]
