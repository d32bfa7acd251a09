"""Injected Vulkan failures, for the tests of what vkcl does when a device is lost.

VKCL_INJECT_DEVICE_LOST=N: at the N-th queue submission (counted over the process, through
vkcl's Python path: the C fast path is off while this is set) that VkDevice becomes a lost one:
the N-th submission itself runs, but every later submission to it, and every wait or query of
its timeline semaphores, fails with VK_ERROR_DEVICE_LOST, as a fence does after a GPU fault. A
device made later is not affected. Off (0) by default, and then costs one test per call.
"""
from __future__ import annotations

from vkcl import config
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.check import VulkanError

DEVICE_LOST = -4  # VK_ERROR_DEVICE_LOST
ACTIVE = config.get("inject_device_lost") > 0
_submits = 0
_lost: set[int] = set()


def _key(handle) -> int:
    return int(vk.ffi.cast("uintptr_t", handle))


def submitted(device_handle) -> None:
    """Count a submission to `device_handle`; the N-th loses the device."""
    global _submits
    _submits += 1
    if _submits == config.get("inject_device_lost"):
        _lost.add(_key(device_handle))


def is_lost(device_handle) -> bool:
    return _key(device_handle) in _lost


def check(device_handle, what: str) -> None:
    """Raise VK_ERROR_DEVICE_LOST for `what` on a device lost by injection."""
    if is_lost(device_handle):
        raise VulkanError(what, DEVICE_LOST)
