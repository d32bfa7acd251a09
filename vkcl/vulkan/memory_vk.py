"""The raw Vulkan calls behind the memory allocator: buffers with device addresses, their memory,
mappings and host-pointer imports.

Everything here calls `vk.lib` directly with structs built by cffi: the `vulkan` package's
wrappers return their input struct for vkGetBufferDeviceAddress, drop falsy fields, and leave
several of the constants needed here as None (the numbers below are the spec's).
"""
from __future__ import annotations

import mmap
from dataclasses import dataclass

from vkcl.vulkan.bindings import vk
from vkcl.vulkan.check import VulkanError, check

ffi, lib = vk.ffi, vk.lib

USAGE_STORAGE, USAGE_TRANSFER_SRC, USAGE_TRANSFER_DST, USAGE_DEVICE_ADDRESS = 0x20, 0x1, 0x2, 0x20000
USAGE_UNIFORM = 0x10
# Uniform too: clspv passes kernel arguments in a uniform buffer when push constants are too small.
BUFFER_USAGE = USAGE_STORAGE | USAGE_UNIFORM | USAGE_TRANSFER_SRC | USAGE_TRANSFER_DST | USAGE_DEVICE_ADDRESS
ALLOCATE_DEVICE_ADDRESS = 0x2
HOST_ALLOCATION_EXT = 0x80  # VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
OPAQUE_FD = 0x1  # VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
_ST_MEMORY_ALLOCATE = 5
_ST_MAPPED_RANGE = 6
_ST_BUFFER_CREATE = 12
_ST_PROPERTIES_2 = 1000059001
_ST_ALLOCATE_FLAGS = 1000060000
_ST_EXTERNAL_BUFFER = 1000072000
_ST_EXPORT_ALLOCATE = 1000072002
_ST_DEDICATED_ALLOCATE = 1000127001
_ST_IMPORT_HOST_POINTER = 1000178000
_ST_HOST_POINTER_PROPS = 1000178001
_ST_EXTERNAL_HOST_PROPS = 1000178002
_ST_ADDRESS_INFO = 1000244001


@dataclass
class RawBlock:
    """A VkBuffer bound at offset 0 to its own VkDeviceMemory."""

    buffer: object
    memory: object
    reserved: int          # bytes of VkDeviceMemory
    address: int           # device address of the buffer's first byte
    host: object = None    # `char *` to the mapping (or the imported host memory), else None


def create_buffer(device, size: int, external: int = 0):
    info = ffi.new("VkBufferCreateInfo *", {"sType": _ST_BUFFER_CREATE, "size": size, "usage": BUFFER_USAGE})
    ext = None
    if external:
        ext = ffi.new("VkExternalMemoryBufferCreateInfo *", {"sType": _ST_EXTERNAL_BUFFER, "handleTypes": external})
        info.pNext = ext
    out = ffi.new("VkBuffer *")
    check("vkCreateBuffer", lib.vkCreateBuffer(device, info, ffi.NULL, out))
    return out[0]


def requirements(device, buf) -> tuple[int, int, int]:
    """(size, alignment, memoryTypeBits) of a buffer."""
    req = ffi.new("VkMemoryRequirements *")
    lib.vkGetBufferMemoryRequirements(device, buf, req)
    return int(req.size), int(req.alignment), int(req.memoryTypeBits)


def allocate_bind(device, buf, size: int, type_index: int, dedicated: bool = False, host_ptr=None,
                  export: bool = False):
    """vkAllocateMemory (device-address capable, optionally dedicated, importing `host_ptr` or
    exportable as an opaque fd), then vkBindBufferMemory at offset 0. Returns the VkDeviceMemory."""
    chain = [ffi.new("VkMemoryAllocateFlagsInfo *", {"sType": _ST_ALLOCATE_FLAGS, "flags": ALLOCATE_DEVICE_ADDRESS})]
    if export:
        chain.append(ffi.new("VkExportMemoryAllocateInfo *", {"sType": _ST_EXPORT_ALLOCATE, "handleTypes": OPAQUE_FD}))
    if dedicated:
        chain.append(ffi.new("VkMemoryDedicatedAllocateInfo *", {"sType": _ST_DEDICATED_ALLOCATE, "buffer": buf}))
    if host_ptr is not None:
        chain.append(ffi.new("VkImportMemoryHostPointerInfoEXT *", {
            "sType": _ST_IMPORT_HOST_POINTER, "handleType": HOST_ALLOCATION_EXT, "pHostPointer": host_ptr}))
    for a, b in zip(chain, chain[1:]):
        a.pNext = b
    info = ffi.new("VkMemoryAllocateInfo *", {"sType": _ST_MEMORY_ALLOCATE, "pNext": chain[0],
                                               "allocationSize": size, "memoryTypeIndex": type_index})
    out = ffi.new("VkDeviceMemory *")
    check("vkAllocateMemory", lib.vkAllocateMemory(device, info, ffi.NULL, out))
    mem = out[0]
    result = lib.vkBindBufferMemory(device, buf, mem, 0)
    if result < 0:
        lib.vkFreeMemory(device, mem, ffi.NULL)
        check("vkBindBufferMemory", result)
    return mem


def buffer_address(device, buf) -> int:
    info = ffi.new("VkBufferDeviceAddressInfo *", {"sType": _ST_ADDRESS_INFO, "buffer": buf})
    return int(lib.vkGetBufferDeviceAddress(device, info))


def create_block(device, size: int, type_index: int, mapped: bool, dedicated: bool = False,
                 export: bool = False) -> RawBlock:
    """A buffer of `size` bytes in memory type `type_index`, mapped for its lifetime if `mapped`,
    its memory exportable as an opaque fd if `export`. Raises VulkanError; nothing is left behind
    on failure."""
    buf = create_buffer(device, size, OPAQUE_FD if export else 0)
    mem = None
    try:
        reserved, _, _ = requirements(device, buf)
        mem = allocate_bind(device, buf, reserved, type_index, dedicated=dedicated, export=export)
        host = None
        if mapped:
            pp = ffi.new("void **")
            check("vkMapMemory", lib.vkMapMemory(device, mem, 0, reserved, 0, pp))
            host = ffi.cast("char *", pp[0])
        return RawBlock(buf, mem, reserved, buffer_address(device, buf), host)
    except BaseException:
        destroy(device, buf, mem)
        raise


def destroy(device, buf, mem) -> None:
    if buf is not None:
        lib.vkDestroyBuffer(device, buf, ffi.NULL)
    if mem is not None:
        lib.vkFreeMemory(device, mem, ffi.NULL)  # unmaps too


def mapped_range(device, flush: bool, mem, offset: int, size: int) -> None:
    """vkFlushMappedMemoryRanges (flush) or vkInvalidateMappedMemoryRanges of one range."""
    rng = ffi.new("VkMappedMemoryRange *", {"sType": _ST_MAPPED_RANGE, "memory": mem, "offset": offset,
                                            "size": size})
    if flush:
        check("vkFlushMappedMemoryRanges", lib.vkFlushMappedMemoryRanges(device, 1, rng))
    else:
        check("vkInvalidateMappedMemoryRanges", lib.vkInvalidateMappedMemoryRanges(device, 1, rng))


class HostImporter:
    """VK_EXT_external_memory_host for one device: host memory used in place as a buffer."""

    def __init__(self, device, physical_handle):
        props = ffi.new("VkPhysicalDeviceExternalMemoryHostPropertiesEXT *", {"sType": _ST_EXTERNAL_HOST_PROPS})
        p2 = ffi.new("VkPhysicalDeviceProperties2 *", {"sType": _ST_PROPERTIES_2, "pNext": props})
        lib.vkGetPhysicalDeviceProperties2(physical_handle, p2)
        self.alignment = int(props.minImportedHostPointerAlignment)
        fn = lib.vkGetDeviceProcAddr(device, b"vkGetMemoryHostPointerPropertiesEXT")
        self._props = ffi.cast("PFN_vkGetMemoryHostPointerPropertiesEXT", fn) if fn != ffi.NULL else None
        self._device = device

    def import_block(self, ptr: int, size: int, max_size: int, choose_type) -> tuple[RawBlock, int, int] | None:
        """(block, memory type, bytes imported) for `size` bytes at `ptr`, or None if the pointer,
        the size or the driver does not allow it. `choose_type(bits)` picks among allowed types."""
        align = self.alignment
        if self._props is None or not align or not ptr or ptr % align:
            return None
        rounded = -(-size // align) * align
        if (rounded != size and align > mmap.PAGESIZE) or rounded > max_size:
            return None  # rounding up could reach past the caller's pages
        device, host = self._device, ffi.cast("void *", ptr)
        hp = ffi.new("VkMemoryHostPointerPropertiesEXT *", {"sType": _ST_HOST_POINTER_PROPS})
        if self._props(device, HOST_ALLOCATION_EXT, host, hp) < 0:
            return None
        buf = mem = None
        try:
            buf = create_buffer(device, rounded, external=HOST_ALLOCATION_EXT)
            req_size, _, bits = requirements(device, buf)
            type_index = choose_type(hp.memoryTypeBits & bits)
            if type_index is None or req_size > rounded:
                destroy(device, buf, None)
                return None
            mem = allocate_bind(device, buf, rounded, type_index, host_ptr=host)
            block = RawBlock(buf, mem, rounded, buffer_address(device, buf), ffi.cast("char *", host))
            return block, type_index, rounded
        except VulkanError:
            destroy(device, buf, mem)
            return None
