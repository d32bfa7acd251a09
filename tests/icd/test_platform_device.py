"""Platform and device queries through the ICD loader (tests/icd/c/platform_device.c)."""
import pytest
from checks import assert_passed


# The second run hides the SPIR-V translator, as on a machine without one (the H200 machine):
# vkcl then claims no IL, and the IL queries must say so consistently (empty, not an error).
@pytest.mark.parametrize("env", [{}, {"VKCL_LLVM_SPIRV": "/nonexistent/llvm-spirv"}], ids=["default", "no-il"])
def test_every_platform_and_device_query(c_program, env):
    assert_passed(c_program("platform_device").run(env=env))
