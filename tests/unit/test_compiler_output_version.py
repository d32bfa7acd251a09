"""The compiler-output digest in CL_DRIVER_VERSION (vkcl/compiler/driver.py output_version):
it changes with whatever changes the SPIR-V made, so that applications' binary caches keyed on
the driver version (pyopencl's) do not hand back programs built before."""
from vkcl.compiler import DeviceCaps, driver, prelude, spirv_fixes


def test_output_version_follows_repairs_prelude_and_caps(monkeypatch):
    caps = DeviceCaps()
    first = driver.output_version(caps)
    assert len(first) == 8 and first == driver.output_version(DeviceCaps())
    assert driver.output_version(DeviceCaps(narrow_memory_scopes=True)) != first
    assert driver.output_version(DeviceCaps(loop_unroll_count=16)) != first
    monkeypatch.setattr(spirv_fixes, "VERSION", spirv_fixes.VERSION + 1)
    second = driver.output_version(caps)
    assert second != first
    monkeypatch.setattr(prelude, "DIGEST", "0" * 16)
    assert driver.output_version(caps) not in (first, second)
