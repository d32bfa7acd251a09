"""vkcl inside a process that already runs Python, whatever its minor version (icd/front.c picks
build/python<X.Y>/libvkcl.so): a fresh virtualenv holding only pyopencl (no cffi, no vulkan, a
numpy other than vkcl's) runs a kernel, on this Python and on every other one the machine has,
and the application's sys.path and modules stay as they were. A Python vkcl has no library for
gets a message and no platform, never a hang."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MINE = f"{sys.version_info[0]}.{sys.version_info[1]}"

PLATFORMS = r"""
import ctypes, sys
before = list(sys.path)
cl = ctypes.CDLL("libOpenCL.so.1")
n, ids = ctypes.c_uint(0), (ctypes.c_void_p * 8)()
rc = cl.clGetPlatformIDs(8, ids, ctypes.byref(n))
names = []
for i in range(n.value):
    buf = ctypes.create_string_buffer(64)
    cl.clGetPlatformInfo(ctypes.c_void_p(ids[i]), 0x0902, 64, buf, None)
    names.append(buf.value.decode())
print("PLATFORMS", rc, names, "PATH-KEPT", sys.path == before)
"""

KERNEL = r"""
import importlib.util, sys
before = list(sys.path)
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
a = np.arange(1024, dtype=np.float32)
A = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
cl.Program(ctx, "kernel void k(global float *a) { a[get_global_id(0)] = a[get_global_id(0)] * 3.0f + 1.0f; }"
           ).build().k(q, a.shape, None, A)
r = np.empty_like(a); cl.enqueue_copy(q, r, A); q.finish()
assert np.array_equal(r, a * 3 + 1)
# vkcl's own packages did not become the application's
assert sys.path == before, (before, sys.path)
assert importlib.util.find_spec("vulkan") is None and importlib.util.find_spec("cffi") is None
assert "vulkan" not in sys.modules
print("OK", np.__version__)
"""


def _interpreter(version: str) -> str | None:
    candidates = [shutil.which(f"python{version}")] + sorted(Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for c in candidates:
        if c and subprocess.run([str(c), "-c", "import venv"], capture_output=True).returncode == 0:
            return str(c)
    return None


OTHERS = [(v, p) for v in ("3.10", "3.11", "3.12", "3.13", "3.14") if v != MINE and (p := _interpreter(v))]
UNSUPPORTED = [p for v in ("3.9", "3.8") if (p := _interpreter(v))][:1]


def _params(pythons, arity=1):
    return pythons or [pytest.param(*[None] * arity, marks=pytest.mark.skip("no such Python on this machine"))]


@pytest.mark.parametrize("version,python", _params(OTHERS, 2))
def test_every_python_finds_the_platform(icd_env, version, python):
    assert (ROOT / "build" / f"python{version}" / "libvkcl.so").is_file(), f"make build made no library for {python}"
    result = subprocess.run([python, "-c", PLATFORMS], env=icd_env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "'vkcl'" in result.stdout and "PATH-KEPT True" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("python", _params(UNSUPPORTED))
def test_a_python_without_a_library_gets_a_message_and_no_hang(icd_env, python):
    result = subprocess.run([python, "-c", PLATFORMS], env=icd_env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "'vkcl'" not in result.stdout and "PLATFORMS" in result.stdout, result.stdout
    assert "vkcl has no library for it" in result.stderr


def _virtualenv(python: str, where: Path, *packages: str) -> str:
    """A fresh virtualenv of `python` holding only `packages`; its interpreter."""
    base = subprocess.run([python, "-c", "import sys, os; print(os.path.realpath(sys._base_executable))"],
                          capture_output=True, text=True).stdout.strip()
    subprocess.run([base, "-m", "venv", str(where)], check=True, timeout=120)
    py = str(where / "bin" / "python")
    pip = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--only-binary=:all:",
                          *packages], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        pytest.skip(f"{' '.join(packages)} could not be installed into a fresh virtualenv: {pip.stderr[-500:]}")
    return py


@pytest.mark.parametrize("python", [sys.executable] + [p for _, p in OTHERS])
def test_a_virtualenv_holding_only_pyopencl(icd_env, tmp_path, python):
    import numpy
    import pyopencl
    # A numpy other than vkcl's (vkcl uses none in the host process; the host's must not matter).
    py = _virtualenv(python, tmp_path / "venv", f"pyopencl=={pyopencl.VERSION_TEXT}", f"numpy!={numpy.__version__}")
    result = subprocess.run([py, "-c", KERNEL], env=icd_env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.split()[-1] != numpy.__version__


def test_a_host_with_an_older_cffi_of_its_own(icd_env, tmp_path):
    """cffi's backend is the one module vkcl shares with its host (the embedding imports it by
    name): an application that imported its own, older cffi first still runs kernels."""
    import cffi
    import pyopencl
    py = _virtualenv(sys.executable, tmp_path / "venv", f"pyopencl=={pyopencl.VERSION_TEXT}", "cffi==1.16.0")
    check = KERNEL.replace("and importlib.util.find_spec(\"cffi\") is None", "")
    script = "import cffi, _cffi_backend\nassert cffi.__version__ == '1.16.0'\n" + check
    result = subprocess.run([py, "-c", script], env=icd_env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-3000:]
    assert cffi.__version__ != "1.16.0"
