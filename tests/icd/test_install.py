"""`make install PREFIX=...` (icd/install.py): a self-contained install under one prefix. clinfo
and a C program run on it through the loader with the checkout's .venv hidden; DESTDIR stages it
as packagers expect; `make uninstall` removes everything it installed."""
import os
import shutil
import subprocess

from pathlib import Path

import pytest

from checks import assert_passed
from test_any_python import OTHERS, PLATFORMS

ROOT = Path(__file__).resolve().parents[2]

VENV = ROOT / ".venv"


def _make(*args, **env):
    return subprocess.run(["make", "-s", *args], cwd=ROOT, env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=600)


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.skipif(not VENV.is_dir(), reason="make install runs from the checkout's .venv")
def test_install_runs_without_the_checkout(tmp_path, c_program, icd_env):
    prefix = tmp_path / "prefix"
    result = _make("install", f"PREFIX={prefix}")
    assert result.returncode == 0, result.stdout + result.stderr
    icd = prefix / "etc" / "OpenCL" / "vendors" / "vkcl.icd"
    assert icd.read_text().strip() == str(prefix / "lib" / "vkcl" / "libvkcl.so")
    assert all(f.startswith(("etc/", "lib/vkcl/")) for f in _files(prefix))  # nothing outside the prefix
    info = (prefix / "lib" / "vkcl" / "vkcl" / "_build_info.py").read_text()
    assert str(ROOT) not in info, info
    program = c_program("fork")  # built now: the checkout's .venv goes next
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OCL_ICD_VENDORS": str(icd),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    # The checkout's .venv and its other Pythons' packages (build/python<X.Y>/site) go away.
    moved = [(VENV, ROOT / ".venv-hidden-by-test")]
    moved += [(d, d.with_name(d.name + "-hidden-by-test")) for d in sorted((ROOT / "build").glob("python3.*/site"))]
    for a, b in moved:
        os.rename(a, b)
    try:
        clinfo = subprocess.run(["clinfo", "-l"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        run = subprocess.run([str(program.exe), "before"], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=120)
        others = [subprocess.run([python, "-c", PLATFORMS], env=env, cwd=tmp_path, capture_output=True,
                                 text=True, timeout=120) for _, python in OTHERS]
    finally:
        for a, b in moved:
            os.rename(b, a)
    assert "vkcl" in clinfo.stdout, clinfo.stdout + clinfo.stderr
    assert_passed(run)  # a kernel built and run (in a forked child too)
    for result in others:  # a host of each other Python finds the installed platform
        assert " 0 ['vkcl']" in result.stdout, result.stdout + result.stderr
    result = _make("uninstall", f"PREFIX={prefix}")
    assert result.returncode == 0, result.stderr
    assert _files(prefix) == []


@pytest.mark.skipif(not VENV.is_dir(), reason="make install runs from the checkout's .venv")
def test_destdir_stages_the_install(tmp_path):
    stage = tmp_path / "stage"
    result = _make("install", "PREFIX=/opt/vkcl-test", f"DESTDIR={stage}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (stage / "opt/vkcl-test/lib/vkcl/libvkcl.so").is_file()
    assert (stage / "opt/vkcl-test/etc/OpenCL/vendors/vkcl.icd").read_text().strip() == "/opt/vkcl-test/lib/vkcl/libvkcl.so"
    assert "ROOT = '/opt/vkcl-test/lib/vkcl'" in (stage / "opt/vkcl-test/lib/vkcl/vkcl/_build_info.py").read_text()
    assert not os.path.exists("/opt/vkcl-test")
    assert _make("uninstall", "PREFIX=/opt/vkcl-test", f"DESTDIR={stage}").returncode == 0
    assert _files(stage) == []
    shutil.rmtree(stage)
