"""Float execution modes on every entry point (vkcl/compiler/spirv_float_modes.py)."""
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler.spirv_float_modes import add_float_modes

SRC = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
       "kernel void a(global float *o) { o[0] = o[1] * o[2]; }\n"
       "kernel void b(global double *d) { d[0] = d[1] + d[2]; }\n")


def _dis(spv: bytes, tmp_path, env: str) -> str:
    path = tmp_path / "k.spv"
    path.write_bytes(spv)
    assert subprocess.run(["spirv-val", "--target-env", env, str(path)]).returncode == 0
    return subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("version,env", [("1.3", "vulkan1.1"), ("1.6", "vulkan1.3")])
def test_modes_for_declared_widths_on_every_entry_point(tmp_path, version, env):
    caps = compiler.DeviceCaps(spirv_version=version, preserve_inf_nan=(16, 32, 64), preserve_denorms=(64,),
                               rounding_mode_rte=(32, 64))
    result = compiler.compile_source(SRC, "", caps)
    assert result.ok, result.log
    dis = _dis(result.spirv, tmp_path, env)
    modes = sorted(" ".join(l.split()[2:]) for l in dis.splitlines() if "OpExecutionMode " in l and "Local" not in l)
    # two entry points, the module's two float widths (no half: none is declared)
    assert modes[::2] == ["DenormPreserve 64", "RoundingModeRTE 32", "RoundingModeRTE 64",
                                                       "SignedZeroInfNanPreserve 32", "SignedZeroInfNanPreserve 64"], modes
    assert len(modes) == 10 and "16" not in " ".join(modes)
    assert ('OpExtension "SPV_KHR_float_controls"' in dis) == (version == "1.3")
    for cap in ("DenormPreserve", "SignedZeroInfNanPreserve", "RoundingModeRTE"):
        assert dis.count(f"OpCapability {cap}\n") == 1
    assert add_float_modes(result.spirv, (32, 64), (64,), (32, 64)) == result.spirv  # already there


def test_nothing_asked_nothing_added():
    result = compiler.compile_source(SRC, "", compiler.DeviceCaps())
    assert result.ok and add_float_modes(result.spirv, (), ()) == result.spirv
    assert b"\x6d\x11\x00\x00" not in result.spirv  # no SignedZeroInfNanPreserve mode (4461)
