"""`python -m vkcl compile`, and the built-in shaders' lookup."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vkcl import compiler
from vkcl.__main__ import main

ROOT = Path(__file__).resolve().parent.parent.parent
KERNELS = ROOT / "tests" / "kernels"


def test_cli_writes_spirv_and_descriptor_map(tmp_path):
    spv, csv = tmp_path / "va.spv", tmp_path / "va.csv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "vkcl", "compile", str(KERNELS / "vector_add.cl"), "-o", str(spv),
                           "--descriptor-map", str(csv), "-D", "UNUSED=1", "-cl-mad-enable"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert spv.read_bytes()[:4] == b"\x03\x02\x23\x07"
    lines = csv.read_text().splitlines()
    assert "kernel_decl,vector_add" in lines
    assert "kernel,vector_add,arg,a,argOrdinal,0,offset,0,argKind,pointer_pushconstant,argSize,8" in lines
    if shutil.which("spirv-val"):
        assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(spv)]).returncode == 0


def test_cli_device_caps_and_strip(tmp_path, capsys):
    out, csv = tmp_path / "r.spv", tmp_path / "r.csv"
    caps = json.dumps({"physical_addressing": False, "max_push_constant_size": 256})
    assert main(["compile", str(KERNELS / "reduction.cl"), "-o", str(out), f"--descriptor-map={csv}",
                 "--device-caps", caps, "--strip-reflection", "-cl-std=CL3.0"]) == 0
    assert b"NonSemantic" not in out.read_bytes()
    assert "argKind,buffer" in csv.read_text()
    caps_file = tmp_path / "caps.json"
    caps_file.write_text(caps)
    assert main(["compile", str(KERNELS / "vector_add.cl"), "--device-caps", str(caps_file),
                 "--output", str(tmp_path / "v.spv")]) == 0
    assert (tmp_path / "v.spv").exists()


def test_cli_failures(tmp_path, capsys):
    assert main(["compile", str(KERNELS / "syntax_error.cl"), "-o", str(tmp_path / "x.spv")]) == 1
    err = capsys.readouterr().err
    assert "undeclared_thing" in err and "failed" in err
    assert not (tmp_path / "x.spv").exists()
    assert main(["compile", str(KERNELS / "vector_add.cl"), "-cl-bogus"]) == 2
    assert "unknown option '-cl-bogus'" in capsys.readouterr().err
    assert main(["compile"]) == 2
    assert main(["compile", "a.cl", "b.cl"]) == 2
    assert main(["compile", str(tmp_path / "missing.cl")]) == 2
    assert main(["compile", str(KERNELS / "vector_add.cl"), "--device-caps", '{"bogus": 1}']) == 2
    assert main(["nonsense"]) == 2
    assert main(["compile", "--help"]) == 0


def test_cli_default_output_name(tmp_path):
    src = tmp_path / "k.cl"
    src.write_text((KERNELS / "barriers.cl").read_text())
    assert main(["compile", str(src)]) == 0
    assert (tmp_path / "k.spv").exists()


def test_shader_dir(monkeypatch, tmp_path):
    assert compiler.shader_dir() == ROOT / "shaders"
    (tmp_path / "mine.cl").write_text("kernel void mine(global int *p) { p[0] = 1; }\n")
    monkeypatch.setenv("VKCL_SHADER_DIR", str(tmp_path))
    result = compiler.builtin_shader("mine.cl", compiler.DeviceCaps())
    assert result.ok and list(result.reflection.kernels) == ["mine"]
    with pytest.raises(FileNotFoundError):
        compiler.builtin_shader("fill", compiler.DeviceCaps())
    with pytest.raises(ValueError):
        compiler.builtin_shader("../etc/passwd", compiler.DeviceCaps())


@pytest.mark.parametrize("name", ["fill", "copy_rect"])
@pytest.mark.parametrize("physical", [True, False])
def test_builtin_shaders_build(name, physical):
    result = compiler.builtin_shader(name, compiler.DeviceCaps(physical_addressing=physical))
    assert result.ok, result.log
    assert result.log == ""  # built with -w: no noise in logs
    for kernel in result.reflection.kernels.values():
        assert kernel.push_constant_size <= 128
