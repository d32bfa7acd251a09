"""Fixtures shared by every test layer.

Tests of the ICD never import vkcl: they build C programs against -lOpenCL (or run
pyopencl) with OCL_ICD_VENDORS pointing at a vendors directory written here, so every
call goes through Debian's ocl-icd loader into build/libvkcl.so.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "build" / "libvkcl.so"
C_DIR = ROOT / "tests" / "icd" / "c"


@pytest.fixture(scope="session")
def vendors_dir(tmp_path_factory) -> Path:
    if not LIB.exists():
        pytest.fail(f"{LIB} is missing: run `make build` first")
    d = tmp_path_factory.mktemp("vendors")
    (d / "vkcl.icd").write_text(f"{LIB}\n")
    return d


@pytest.fixture(scope="session")
def icd_env(vendors_dir, tmp_path_factory) -> dict:
    env = dict(os.environ)
    env["OCL_ICD_VENDORS"] = str(vendors_dir)
    env["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    env.pop("PYTHONHOME", None)
    return env


class CProgram:
    def __init__(self, exe: Path, env: dict):
        self.exe, self.env = exe, env

    def run(self, *args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.exe), *args], env={**self.env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="session")
def c_program(icd_env, tmp_path_factory):
    """Compile tests/icd/c/<name>.c against -lOpenCL; returns a runner."""
    out = tmp_path_factory.mktemp("cbin")
    built: dict[str, CProgram] = {}

    def build(name: str) -> CProgram:
        if name not in built:
            exe = out / name
            subprocess.run(["gcc", "-O1", "-g", "-Wall", "-Werror", "-I", str(C_DIR), "-o", str(exe),
                            str(C_DIR / f"{name}.c"), "-lOpenCL", "-lpthread", "-lm"], check=True)
            built[name] = CProgram(exe, icd_env)
        return built[name]

    return build


@pytest.fixture(scope="session")
def python_with_icd(icd_env):
    """Run a Python snippet in a fresh interpreter that loads vkcl through the loader."""
    def run(code: str, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code], env={**icd_env, **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)
    return run
