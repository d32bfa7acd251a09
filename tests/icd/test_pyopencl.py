"""pyopencl, in the same virtualenv, finds vkcl through its bundled ICD loader."""
import pytest

pytest.importorskip("pyopencl")


def test_pyopencl_lists_vkcl(python_with_icd):
    code = """
import pyopencl as cl
ps = [p for p in cl.get_platforms() if p.name == "vkcl"]
assert ps, [p.name for p in cl.get_platforms()]
p = ps[0]
devs = p.get_devices()
assert devs
ctx = cl.Context(devs)
print("OK", p.version, "|", devs[0].name, "|", len(ctx.devices))
"""
    result = python_with_icd(code)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("OK OpenCL 3.0 vkcl"), result.stdout
