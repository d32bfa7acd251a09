"""The Vulkan instance and what each physical device offers, as plain Python values.

vkcl needs, of a device: a compute queue, bufferDeviceAddress, timeline semaphores and the
storage-buffer storage class (core since Vulkan 1.1). A device without them is skipped and
the reason logged.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

from vkcl import config, log
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.check import VulkanError, call

_log = log.get("vk")
ffi = vk.ffi

API_VERSION = vk.VK_MAKE_VERSION(1, 3, 0)
VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"


def version_tuple(v: int) -> tuple[int, int, int]:
    return (v >> 22) & 0x7F, (v >> 12) & 0x3FF, v & 0xFFF


def _str(chars) -> str:
    return ffi.string(chars).decode(errors="replace") if not isinstance(chars, str) else chars


@dataclass
class PhysicalDevice:
    """Facts about one VkPhysicalDevice, read once at start-up."""

    handle: object
    index: int
    name: str
    device_type: int  # VkPhysicalDeviceType
    vendor_id: int
    device_id: int
    api_version: int
    driver_version: int
    driver_name: str
    driver_info: str
    device_uuid: bytes
    driver_uuid: bytes
    device_luid: bytes
    luid_valid: bool
    node_mask: int
    limits: dict
    subgroup_size: int
    subgroup_ops: int
    min_subgroup_size: int
    max_subgroup_size: int
    max_memory_allocation_size: int
    max_buffer_size: int
    features: dict
    extensions: set
    memory_types: list  # (propertyFlags, heapIndex)
    memory_heaps: list  # (size, flags)
    queue_families: list  # (queueFlags, queueCount, timestampValidBits)
    sm_count: int = 0  # VK_NV_shader_sm_builtins, when the driver tells
    pci_bus: tuple | None = None  # (domain, bus, device, function)
    # shaderIntegerDotProduct's "accelerated" properties (Vulkan 1.3), for 8-bit vectors and
    # packed 4x8-bit: (signed, unsigned, mixed, and the same three accumulating-saturating).
    dot_8bit: tuple = (False,) * 6
    dot_4x8_packed: tuple = (False,) * 6
    # Vulkan 1.2's float controls: denormBehaviorIndependence, roundingModeIndependence and the
    # shader{SignedZeroInfNanPreserve,DenormPreserve,DenormFlushToZero,RoundingModeRTE,
    # RoundingModeRTZ}Float{16,32,64} booleans.
    float_controls: dict = field(default_factory=dict)
    unsupported: list = field(default_factory=list)

    @property
    def compute_family(self) -> int | None:
        # Prefer a compute queue family without graphics (a dedicated async-compute family).
        best = None
        for i, (flags, count, _) in enumerate(self.queue_families):
            if flags & vk.VK_QUEUE_COMPUTE_BIT and count:
                if not flags & vk.VK_QUEUE_GRAPHICS_BIT:
                    return i
                best = i if best is None else best
        return best

    @property
    def is_uma(self) -> bool:
        """Every device-local memory type is also host-visible (lavapipe, integrated GPUs)."""
        local = [f for f, _ in self.memory_types if f & vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT]
        return bool(local) and all(f & vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT for f in local)

    @property
    def device_local_bytes(self) -> int:
        return sum(size for size, flags in self.memory_heaps if flags & vk.VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)


_LIMITS = ("maxComputeSharedMemorySize", "maxComputeWorkGroupInvocations", "maxPushConstantsSize",
           "minStorageBufferOffsetAlignment", "minUniformBufferOffsetAlignment", "maxStorageBufferRange",
           "maxUniformBufferRange", "timestampPeriod", "maxMemoryAllocationCount", "nonCoherentAtomSize",
           "timestampComputeAndGraphics", "maxBoundDescriptorSets", "maxPerStageDescriptorStorageBuffers",
           "minMemoryMapAlignment", "optimalBufferCopyOffsetAlignment", "maxSamplerAllocationCount")
_LIMIT_ARRAYS = ("maxComputeWorkGroupSize", "maxComputeWorkGroupCount")
_FEATURES10 = ("shaderFloat64", "shaderInt64", "shaderInt16", "robustBufferAccess")
_FEATURES11 = ("storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess", "variablePointers",
               "variablePointersStorageBuffer")
_FEATURES12 = ("bufferDeviceAddress", "timelineSemaphore", "shaderInt8", "shaderFloat16", "storageBuffer8BitAccess",
               "uniformAndStorageBuffer8BitAccess", "shaderBufferInt64Atomics", "shaderSharedInt64Atomics",
               "vulkanMemoryModel", "vulkanMemoryModelDeviceScope", "scalarBlockLayout", "uniformBufferStandardLayout",
               "hostQueryReset", "shaderSubgroupExtendedTypes", "bufferDeviceAddressCaptureReplay")
_FLOAT_CONTROLS = tuple(f"shader{k}Float{w}" for k in ("SignedZeroInfNanPreserve", "DenormPreserve",
                        "DenormFlushToZero", "RoundingModeRTE", "RoundingModeRTZ") for w in (16, 32, 64))
_FEATURES13 = ("subgroupSizeControl", "computeFullSubgroups", "synchronization2", "maintenance4",
               "shaderIntegerDotProduct", "shaderZeroInitializeWorkgroupMemory")


def _read_physical_device(handle, index: int) -> PhysicalDevice:
    v11p = vk.VkPhysicalDeviceVulkan11Properties()
    v12p = vk.VkPhysicalDeviceVulkan12Properties(pNext=v11p)
    idp = vk.VkPhysicalDeviceIDProperties(pNext=v12p)
    p2 = vk.VkPhysicalDeviceProperties2(pNext=idp)
    vk.vkGetPhysicalDeviceProperties2(handle, p2)
    props = p2.properties
    api = props.apiVersion
    extensions = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(handle, None)}

    f11 = vk.VkPhysicalDeviceVulkan11Features()
    f12 = vk.VkPhysicalDeviceVulkan12Features(pNext=f11)
    chain = f12
    f13 = None
    if api >= vk.VK_MAKE_VERSION(1, 3, 0):
        f13 = vk.VkPhysicalDeviceVulkan13Features(pNext=f12)
        chain = f13
    f2 = vk.VkPhysicalDeviceFeatures2(pNext=chain)
    vk.vkGetPhysicalDeviceFeatures2(handle, f2)
    features = {n: bool(getattr(f2.features, n)) for n in _FEATURES10}
    features.update({n: bool(getattr(f11, n)) for n in _FEATURES11})
    features.update({n: bool(getattr(f12, n)) for n in _FEATURES12})
    features.update({n: bool(getattr(f13, n)) if f13 is not None else False for n in _FEATURES13})

    min_sg = max_sg = v11p.subgroupSize
    max_buffer = v11p.maxMemoryAllocationSize
    if api >= vk.VK_MAKE_VERSION(1, 3, 0):
        v13p = vk.VkPhysicalDeviceVulkan13Properties()
        vk.vkGetPhysicalDeviceProperties2(handle, vk.VkPhysicalDeviceProperties2(pNext=v13p))
        min_sg, max_sg, max_buffer = v13p.minSubgroupSize, v13p.maxSubgroupSize, v13p.maxBufferSize
        p = "integerDotProduct"
        dot_8bit = tuple(bool(getattr(v13p, f"{p}{acc}8Bit{kind}Accelerated")) for acc in ("", "AccumulatingSaturating")
                         for kind in ("Signed", "Unsigned", "MixedSignedness"))
        dot_4x8_packed = tuple(bool(getattr(v13p, f"{p}{acc}4x8BitPacked{kind}Accelerated"))
                               for acc in ("", "AccumulatingSaturating") for kind in ("Signed", "Unsigned", "MixedSignedness"))
    else:
        dot_8bit = dot_4x8_packed = (False,) * 6

    sm_count = 0
    if "VK_NV_shader_sm_builtins" in extensions:
        smp = vk.VkPhysicalDeviceShaderSMBuiltinsPropertiesNV()
        vk.vkGetPhysicalDeviceProperties2(handle, vk.VkPhysicalDeviceProperties2(pNext=smp))
        sm_count = smp.shaderSMCount
    pci = None
    if "VK_EXT_pci_bus_info" in extensions:
        pcp = vk.VkPhysicalDevicePCIBusInfoPropertiesEXT()
        vk.vkGetPhysicalDeviceProperties2(handle, vk.VkPhysicalDeviceProperties2(pNext=pcp))
        pci = (pcp.pciDomain, pcp.pciBus, pcp.pciDevice, pcp.pciFunction)

    mem = vk.vkGetPhysicalDeviceMemoryProperties(handle)
    limits = {n: getattr(props.limits, n) for n in _LIMITS}
    limits.update({n: list(getattr(props.limits, n)) for n in _LIMIT_ARRAYS})
    pd = PhysicalDevice(
        handle=handle, index=index, name=_str(props.deviceName), device_type=props.deviceType,
        vendor_id=props.vendorID, device_id=props.deviceID, api_version=api, driver_version=props.driverVersion,
        driver_name=_str(v12p.driverName), driver_info=_str(v12p.driverInfo),
        device_uuid=bytes(idp.deviceUUID), driver_uuid=bytes(idp.driverUUID), device_luid=bytes(idp.deviceLUID),
        luid_valid=bool(idp.deviceLUIDValid), node_mask=idp.deviceNodeMask, limits=limits,
        subgroup_size=v11p.subgroupSize, subgroup_ops=v11p.subgroupSupportedOperations,
        min_subgroup_size=min_sg, max_subgroup_size=max_sg,
        max_memory_allocation_size=v11p.maxMemoryAllocationSize, max_buffer_size=max_buffer,
        features=features, extensions=extensions, dot_8bit=dot_8bit, dot_4x8_packed=dot_4x8_packed,
        memory_types=[(mem.memoryTypes[i].propertyFlags, mem.memoryTypes[i].heapIndex) for i in range(mem.memoryTypeCount)],
        memory_heaps=[(mem.memoryHeaps[i].size, mem.memoryHeaps[i].flags) for i in range(mem.memoryHeapCount)],
        queue_families=[(q.queueFlags, q.queueCount, q.timestampValidBits)
                        for q in vk.vkGetPhysicalDeviceQueueFamilyProperties(handle)],
        sm_count=sm_count, pci_bus=pci,
        float_controls={"denormBehaviorIndependence": v12p.denormBehaviorIndependence,
                        "roundingModeIndependence": v12p.roundingModeIndependence,
                        **{n: bool(getattr(v12p, n)) for n in _FLOAT_CONTROLS}},
    )
    pd.unsupported = _missing_requirements(pd)
    return pd


def _missing_requirements(pd: PhysicalDevice) -> list[str]:
    missing = []
    if pd.api_version < vk.VK_MAKE_VERSION(1, 2, 0):
        missing.append("Vulkan 1.2")
    if pd.compute_family is None:
        missing.append("a compute queue")
    for feature in ("bufferDeviceAddress", "timelineSemaphore"):
        if not pd.features.get(feature):
            missing.append(feature)
    return missing


class Instance:
    """The process-wide VkInstance and its physical devices."""

    def __init__(self) -> None:
        layers = []
        if config.get("validation"):
            available = {l.layerName for l in vk.vkEnumerateInstanceLayerProperties()}
            if VALIDATION_LAYER in available:
                layers.append(VALIDATION_LAYER)
            else:
                _log.warning("VKCL_VALIDATION: %s is not installed", VALIDATION_LAYER)
        app = vk.VkApplicationInfo(pApplicationName="vkcl", applicationVersion=1, pEngineName="vkcl",
                                   engineVersion=1, apiVersion=API_VERSION)
        info = vk.VkInstanceCreateInfo(pApplicationInfo=app, ppEnabledLayerNames=layers or None,
                                       enabledLayerCount=len(layers))
        self.handle, _ = call("vkCreateInstance", vk.vkCreateInstance, info, None)
        self.physical_devices: list[PhysicalDevice] = []
        wanted = [w.strip().lower() for w in config.get("devices").split(",") if w.strip()]
        for i, h in enumerate(vk.vkEnumeratePhysicalDevices(self.handle)):
            pd = _read_physical_device(h, i)
            if pd.unsupported:
                _log.warning("skipping Vulkan device %r: it lacks %s", pd.name, ", ".join(pd.unsupported))
            elif wanted and not any(w in pd.name.lower() for w in wanted):
                _log.info("skipping Vulkan device %r: not selected by VKCL_DEVICES", pd.name)
            else:
                self.physical_devices.append(pd)
        _log.debug("usable Vulkan devices: %s", [p.name for p in self.physical_devices])


# Run after the VkInstance exists (its drivers are loaded): the ICD registers its exit hook here.
on_created: list = []

_instance: Instance | None = None
_instance_error: Exception | None = None
_lock = threading.Lock()


def instance() -> Instance | None:
    """The instance, created on first use; None (with the reason logged once) if Vulkan fails."""
    global _instance, _instance_error
    with _lock:
        if _instance is None and _instance_error is None:
            try:
                _instance = Instance()
                for fn in on_created:
                    fn()
            except (VulkanError, OSError, vk.VkError, vk.VkException) as e:
                _instance_error = e
                _log.warning("Vulkan is not usable: %s", e)
        return _instance
