"""`python -m vkcl info`: its --json parses and says what clGetDeviceInfo says (through the ICD
loader, via pyopencl); the text form names what each feature rests on."""
import json
import subprocess
import sys

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("pyopencl")

QUERY = """
import json, pyopencl as cl
d = [p for p in cl.get_platforms() if p.name == "vkcl"][0].get_devices()[0]
i = cl.device_info
print(json.dumps({n: d.get_info(getattr(i, n[len("CL_DEVICE_"):])) for n in NAMES}))
"""
NAMES = ["CL_DEVICE_NAME", "CL_DEVICE_VERSION", "CL_DEVICE_MAX_COMPUTE_UNITS", "CL_DEVICE_GLOBAL_MEM_SIZE",
         "CL_DEVICE_LOCAL_MEM_SIZE", "CL_DEVICE_MAX_WORK_GROUP_SIZE", "CL_DEVICE_EXTENSIONS",
         "CL_DEVICE_SINGLE_FP_CONFIG", "CL_DEVICE_DOUBLE_FP_CONFIG", "CL_DEVICE_HALF_FP_CONFIG",
         "CL_DEVICE_MAX_MEM_ALLOC_SIZE", "CL_DEVICE_TYPE"]


def _info(env, *args):
    return subprocess.run([sys.executable, "-m", "vkcl", "info", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_info_json_matches_clgetdeviceinfo(icd_env, python_with_icd):
    env = {k: v for k, v in icd_env.items() if k != "OCL_ICD_VENDORS"}
    result = _info(env, "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    device = report["devices"][0]
    mine = {n: device["opencl"][n] for n in NAMES}
    loader = python_with_icd(f"NAMES = {NAMES!r}\n" + QUERY)
    assert loader.returncode == 0, loader.stderr
    assert mine == json.loads(loader.stdout.strip().splitlines()[-1])
    assert device["vulkan"]["device"] and device["foundations"] and report["cache"]["enabled"]
    assert all(f["available"] for f in device["foundations"] if f["required"])


def test_info_text(icd_env):
    result = _info({k: v for k, v in icd_env.items() if k != "OCL_ICD_VENDORS"})
    assert result.returncode == 0, result.stderr
    assert "rests on" in result.stdout and "bufferDeviceAddress: yes" in result.stdout
    assert _info(icd_env, "--bogus").returncode == 2
