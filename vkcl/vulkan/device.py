"""VkDevice creation: one logical device per physical device, shared by every context on it.

The device is created when the first context needs it and lives until the process exits
(pipeline caches and memory blocks outlive any one context, as in clvk).
"""
from __future__ import annotations

import threading

from vkcl import config, log, native
from vkcl.vulkan import clock_hold, cuda_copy, faults
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.check import call, check
from vkcl.vulkan.instance import PhysicalDevice

_log = log.get("vk")

# Enabled when the physical device has them; none is required beyond what instance.py checks.
OPTIONAL_EXTENSIONS = (
    "VK_KHR_push_descriptor",
    "VK_KHR_shader_non_semantic_info",
    "VK_EXT_external_memory_host",
    "VK_EXT_calibrated_timestamps",
    "VK_KHR_calibrated_timestamps",
    "VK_EXT_shader_atomic_float",
    "VK_EXT_memory_budget",
    "VK_KHR_cooperative_matrix",
)
_FEATURES11 = ("storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess", "variablePointers",
               "variablePointersStorageBuffer")
_FEATURES12 = ("bufferDeviceAddress", "timelineSemaphore", "shaderInt8", "shaderFloat16", "storageBuffer8BitAccess",
               "uniformAndStorageBuffer8BitAccess", "shaderBufferInt64Atomics", "shaderSharedInt64Atomics",
               "scalarBlockLayout", "uniformBufferStandardLayout", "hostQueryReset", "shaderSubgroupExtendedTypes",
               "vulkanMemoryModel", "vulkanMemoryModelDeviceScope")
_FEATURES13 = ("subgroupSizeControl", "computeFullSubgroups", "synchronization2", "maintenance4",
               "shaderIntegerDotProduct")


class LogicalDevice:
    """A VkDevice with its compute queue. vkQueueSubmit needs `queue_lock`."""

    # Why the device was lost (VK_ERROR_DEVICE_LOST), once it was: its queues fail what they
    # hold and refuse more; a context made later gets a new VkDevice.
    lost: str | None = None

    def __init__(self, pd: PhysicalDevice):
        self.physical = pd
        self.family = pd.compute_family
        self.extensions = [e for e in OPTIONAL_EXTENSIONS if e in pd.extensions]
        with_cuda = cuda_copy.wanted(pd)
        if with_cuda:
            self.extensions.append(cuda_copy.EXTENSION)
        has = pd.features
        f11 = vk.VkPhysicalDeviceVulkan11Features(**{n: True for n in _FEATURES11 if has.get(n)})
        f12 = vk.VkPhysicalDeviceVulkan12Features(pNext=f11, **{n: True for n in _FEATURES12 if has.get(n)})
        chain = f12
        if pd.api_version >= vk.VK_MAKE_VERSION(1, 3, 0):
            chain = vk.VkPhysicalDeviceVulkan13Features(pNext=f12, **{n: True for n in _FEATURES13 if has.get(n)})
        core = vk.VkPhysicalDeviceFeatures(**{n: True for n in ("shaderFloat64", "shaderInt64", "shaderInt16")
                                              if has.get(n)})
        queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=self.family, queueCount=1, pQueuePriorities=[1.0])
        info = vk.VkDeviceCreateInfo(
            pNext=vk.VkPhysicalDeviceFeatures2(pNext=chain, features=core),
            queueCreateInfoCount=1, pQueueCreateInfos=[queue],
            enabledExtensionCount=len(self.extensions), ppEnabledExtensionNames=self.extensions or None,
        )
        self.handle, _ = call("vkCreateDevice", vk.vkCreateDevice, pd.handle, info, None)
        self.queue = vk.vkGetDeviceQueue(self.handle, self.family, 0)
        self.queue_lock = native.make_lock()  # the fast path's C code submits too
        _log.debug("created VkDevice on %r with %s", pd.name, self.extensions)
        # Large transfers of vkcl's pinned memory by CUDA's copy engine (vulkan/cuda_copy.py)
        self.cuda_copies = cuda_copy.CudaCopies(self) if with_cuda else None
        if config.get("hold_clocks"):
            clock_hold.hold(pd.vendor_id, pd.device_uuid)

    def has_extension(self, name: str) -> bool:
        return name in self.extensions

    def mark_lost(self, why: str) -> None:
        if self.lost is None:
            self.lost = why
            _log.warning("the Vulkan device %r was lost (%s): its commands fail with CL_OUT_OF_RESOURCES; "
                         "a new context gets a new device", self.physical.name, why)

    _probe = None  # a timeline semaphore whose value check_alive reads

    def check_alive(self) -> bool:
        """False (and the device marked lost) when the driver says it is lost: a fault that only
        C's fast path met leaves Python nothing else to notice it by. One wait that does not
        wait (on NVIDIA a counter read still succeeds on a lost device; a wait fails)."""
        if self.lost is None:
            ffi = vk.ffi
            if self._probe is None:
                self._probe = _timeline_semaphore(self.handle)
            semaphores, values = ffi.new("VkSemaphore *", self._probe), ffi.new("uint64_t *", 1)
            info = ffi.new("VkSemaphoreWaitInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                                     "semaphoreCount": 1, "pSemaphores": semaphores, "pValues": values})
            result = vk.lib.vkWaitSemaphores(self.handle, info, 0)  # VK_TIMEOUT while alive
            if result == -4 or (faults.ACTIVE and faults.is_lost(self.handle)):
                self.mark_lost("VK_ERROR_DEVICE_LOST")
        return self.lost is None


_devices: dict[int, LogicalDevice] = {}
_lock = threading.Lock()


def _timeline_semaphore(device):
    ffi = vk.ffi
    type_info = ffi.new("VkSemaphoreTypeCreateInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                                        "semaphoreType": vk.VK_SEMAPHORE_TYPE_TIMELINE})
    info = ffi.new("VkSemaphoreCreateInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                               "pNext": type_info})
    out = ffi.new("VkSemaphore *")
    check("vkCreateSemaphore", vk.lib.vkCreateSemaphore(device, info, ffi.NULL, out))
    return out[0]


def logical_device(pd: PhysicalDevice) -> LogicalDevice:
    """The shared VkDevice of `pd`, created on first use, and again after the one before was
    lost (VulkanError if that fails)."""
    with _lock:
        dev = _devices.get(pd.index)
        if dev is None or not dev.check_alive():
            dev = _devices[pd.index] = LogicalDevice(pd)
        return dev


_per_device: dict = {}
_per_device_lock = threading.Lock()


def per_device(kind: str, device: LogicalDevice, make):
    """One object of `kind` per VkDevice (a pipeline cache, a descriptor allocator, ...)."""
    key = (kind, id(device))
    obj = _per_device.get(key)
    if obj is None:
        with _per_device_lock:
            obj = _per_device.get(key)
            if obj is None:
                obj = _per_device[key] = make(device)
    return obj


def per_device_objects(kind: str) -> list:
    with _per_device_lock:
        return [obj for (k, _), obj in _per_device.items() if k == kind]


def wait_idle_all() -> None:
    """Every device has finished its work (process exit)."""
    with _lock:
        devices = list(_devices.values())
    for dev in devices:
        if dev.lost is None:
            with dev.queue_lock:
                vk.lib.vkDeviceWaitIdle(dev.handle)
