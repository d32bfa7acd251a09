"""One choke point for Vulkan results.

The `vulkan` package raises for every VkResult but VK_SUCCESS, non-error statuses
included (VK_NOT_READY, VK_TIMEOUT, ...). `call` turns those statuses back into return
values and real errors into VulkanError naming the failing call; `check` does the same
for raw vk.lib results.
"""
from __future__ import annotations

from vkcl._gen import cl
from vkcl.vulkan.bindings import vk

# The package's own VkResult -> exception table, inverted.
_RESULT_OF = {cls: code for code, cls in vk._vulkan.exception_codes.items() if code is not None}


class VulkanError(Exception):
    def __init__(self, what: str, result: int):
        super().__init__(f"{what} failed: VkResult {result}")
        self.what, self.result = what, result

    @property
    def device_lost(self) -> bool:
        return self.result == -4  # VK_ERROR_DEVICE_LOST

    @property
    def cl_code(self) -> int:
        """The OpenCL error a failed Vulkan call maps to."""
        if self.result == -1:
            return cl.CL_OUT_OF_HOST_MEMORY
        if self.result == -2:
            return cl.CL_MEM_OBJECT_ALLOCATION_FAILURE
        return cl.CL_OUT_OF_RESOURCES


def call(what: str, fn, *args):
    """Call a `vulkan` wrapper; return (value, status) where status is a non-error VkResult."""
    try:
        return fn(*args), 0
    except (vk.VkException, vk.VkError) as exc:
        result = _RESULT_OF.get(type(exc), -13)  # VK_ERROR_UNKNOWN
        if result > 0:
            return None, result
        raise VulkanError(what, result) from None


def check(what: str, result: int) -> int:
    """Raise VulkanError for a negative raw VkResult; return non-negative ones."""
    if result < 0:
        raise VulkanError(what, result)
    return result
