"""vkcl's own kernels (shaders/*.cl) compile to SPIR-V that spirv-val accepts for Vulkan 1.2,
with and without reflection, for both addressing modes (the corpus under tests/kernels has
the same check in test_compiler_corpus.py)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vkcl import compiler

SHADERS = sorted(p.stem for p in (Path(__file__).resolve().parent.parent.parent / "shaders").glob("*.cl"))


def test_shaders_are_found():
    assert {"fill", "copy_rect"} <= set(SHADERS)


@pytest.mark.parametrize("physical", [True, False], ids=["physical", "logical"])
@pytest.mark.parametrize("name", SHADERS)
def test_builtin_shader_validates(name, physical, tmp_path):
    result = compiler.builtin_shader(name, compiler.DeviceCaps(physical_addressing=physical))
    assert result.ok, result.log
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val is not installed")
    for label, data in (("full", result.spirv), ("stripped", compiler.strip_nonsemantic(result.spirv))):
        path = tmp_path / f"{name}-{label}.spv"
        path.write_bytes(data)
        check = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, f"{label}: {check.stderr}"
