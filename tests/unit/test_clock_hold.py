"""vkcl/vulkan/clock_hold.py: which GPU's CUDA context it retains, and that it never raises.

A stand-in for libcuda answers the driver calls (the real one is on the GPU machine only: there
the ICD tests run with VKCL_HOLD_CLOCKS=1 too)."""
from __future__ import annotations

import pytest

from vkcl.vulkan import clock_hold

UUID_A = bytes(range(16))
UUID_B = bytes(range(16, 32))


class FakeCuda:
    """Two CUDA devices, UUID_A and UUID_B; records the devices whose context was retained."""

    def __init__(self):
        self.retained: list[int] = []
        self.retain_result = 0
        self.compute_mode = 0  # CU_COMPUTEMODE_DEFAULT

    def cuDeviceGetCount(self, count):
        count[0] = 2
        return 0

    def cuDeviceGet(self, dev, ordinal):
        dev[0] = ordinal
        return 0

    def cuDeviceGetUuid(self, uuid, dev):
        clock_hold._ffi.memmove(uuid.bytes, UUID_A if dev == 0 else UUID_B, 16)
        return 0

    def cuDeviceGetAttribute(self, value, attribute, dev):
        assert attribute == 20  # CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
        value[0] = self.compute_mode
        return 0

    def cuDevicePrimaryCtxRetain(self, ctx, dev):
        self.retained.append(dev)
        return self.retain_result


@pytest.fixture
def fake(monkeypatch):
    cuda = FakeCuda()
    monkeypatch.setattr(clock_hold, "_cuda", cuda)
    monkeypatch.setattr(clock_hold, "_held", {})
    return cuda


def test_other_vendors_are_left_alone(fake):
    assert clock_hold.hold(0x1002, UUID_A) is False
    assert fake.retained == []


def test_the_gpu_with_the_same_uuid_is_held_once(fake):
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_B) is True
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_B) is True
    assert fake.retained == [1]


def test_no_cuda_device_with_the_uuid(fake):
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, bytes(16)) is False
    assert fake.retained == []


def test_a_failed_retain_is_not_held(fake):
    fake.retain_result = 2  # CUDA_ERROR_OUT_OF_MEMORY
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A) is False
    assert clock_hold._held == {}


def test_an_exclusive_process_gpu_is_left_alone(fake):
    fake.compute_mode = 3  # CU_COMPUTEMODE_EXCLUSIVE_PROCESS: other processes' CUDA would be shut out
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A) is False
    assert fake.retained == []


def test_without_libcuda_nothing_raises(monkeypatch):
    monkeypatch.setattr(clock_hold, "_cuda", None)
    monkeypatch.setattr(clock_hold, "_held", {})

    def no_library(name):
        raise OSError(f"cannot load {name}")

    monkeypatch.setattr(clock_hold._ffi, "dlopen", no_library)
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A) is False
    assert clock_hold._cuda is None


def test_held_on_a_thread_and_settled(fake):
    clock_hold.hold_in_background(clock_hold.NVIDIA_VENDOR_ID, UUID_A)
    clock_hold.hold_in_background(0x8086, UUID_B)  # another vendor: no thread
    clock_hold.settle()
    assert fake.retained == [0]
    assert all(not t.is_alive() for t in clock_hold._threads)
