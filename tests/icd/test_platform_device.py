"""Platform and device queries through the ICD loader (tests/icd/c/platform_device.c)."""
from checks import assert_passed


def test_every_platform_and_device_query(c_program):
    assert_passed(c_program("platform_device").run())
