"""Memory objects: buffers and sub-buffers, their device storage and their mappings.

A buffer's data lives in device-local memory carved out of large blocks (vkcl.vulkan.memory).
Reads, writes and maps reach it through staging where device memory is not host-visible
(discrete GPUs), and directly where it is (lavapipe, integrated GPUs).
"""
from __future__ import annotations

import threading
import weakref

from vkcl import log, native
from vkcl._gen import cl
from vkcl.core import completion, fastpath
from vkcl.core.object import CLObject
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.memory import AllocationFailed, MemoryKind, allocator_for

_log = log.get("api")
ffi = vkc.ffi

HOST_ACCESS = cl.CL_MEM_HOST_WRITE_ONLY | cl.CL_MEM_HOST_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS
DEVICE_ACCESS = cl.CL_MEM_READ_WRITE | cl.CL_MEM_WRITE_ONLY | cl.CL_MEM_READ_ONLY


class Region:
    """Where a memory object's bytes are on one device."""

    __slots__ = ("buffer", "offset", "address", "host_ptr")

    def __init__(self, buffer, offset: int, address: int, host_ptr):
        self.buffer, self.offset, self.address, self.host_ptr = buffer, offset, address, host_ptr


class Mapping:
    __slots__ = ("ptr", "offset", "size", "flags", "staging", "direct")

    def __init__(self, ptr: int, offset: int, size: int, flags: int, staging, direct: bool):
        self.ptr, self.offset, self.size, self.flags = ptr, offset, size, flags
        self.staging, self.direct = staging, direct

    @property
    def writes(self) -> bool:
        return bool(self.flags & (cl.CL_MAP_WRITE | cl.CL_MAP_WRITE_INVALIDATE_REGION))


class MemObject(CLObject):
    mem_type = cl.CL_MEM_OBJECT_BUFFER
    fast_buffer = None  # core.fastpath.FastBuffer: reads and writes C may do

    def __init__(self, context, flags: int, size: int, host_ptr: int, properties: list[int]):
        super().__init__()
        self.context = context
        self.flags = flags
        self.size = size
        self.host_ptr = host_ptr  # an int address, 0 for none
        self.properties = properties
        self.parent: MemObject | None = None
        self.origin = 0
        self.mappings: dict[int, list[Mapping]] = {}
        self.map_lock = threading.Lock()
        self._destructors: list = []

    @property
    def map_count(self) -> int:
        with self.map_lock:
            return sum(len(v) for v in self.mappings.values())

    def add_destructor_callback(self, fn) -> None:
        self._destructors.append(fn)

    def _last_release(self) -> None:
        # Launches C may repeat hold their memory objects: they go, so this one can.
        fastpath.mem_released(self)

    def add_mapping(self, m: Mapping) -> None:
        with self.map_lock:
            self.mappings.setdefault(m.ptr, []).append(m)

    def take_mapping(self, ptr: int) -> Mapping | None:
        with self.map_lock:
            lst = self.mappings.get(ptr)
            if not lst:
                return None
            m = lst.pop()
            if not lst:
                del self.mappings[ptr]
            return m


def _run_destructors(callbacks: list) -> None:
    """Runs once the object is gone (a weakref finalizer): its memory is already freed."""
    for fn in reversed(callbacks):  # spec: reverse order of registration
        completion.post(fn)


class Buffer(MemObject):
    def __init__(self, context, flags: int, size: int, host_ptr: int, properties: list[int]):
        super().__init__(context, flags, size, host_ptr, properties)
        self._storage: dict = {}  # LogicalDevice -> Allocation
        self.imported = False  # CL_MEM_USE_HOST_PTR backed by the application's memory itself
        for vkdev in context.vk.values():
            self._allocate(vkdev)
        if host_ptr and flags & (cl.CL_MEM_COPY_HOST_PTR | cl.CL_MEM_USE_HOST_PTR) and not self.imported:
            for vkdev in context.vk.values():
                upload(vkdev, self.region(vkdev), 0, ffi.cast("void *", host_ptr), size)
        weakref.finalize(self, _run_destructors, self._destructors)

    def _allocate(self, vkdev) -> None:
        allocator = allocator_for(vkdev)
        alloc = None
        if self.flags & cl.CL_MEM_USE_HOST_PTR and vkdev.physical.is_uma:
            # Zero-copy: the application's memory is the buffer (VK_EXT_external_memory_host).
            alloc = allocator.import_host(self.host_ptr, self.size)
            self.imported = alloc is not None
        if alloc is None:
            # CL_MEM_ALLOC_HOST_PTR asks for host-accessible memory: on a discrete GPU, pinned
            # host memory the device reaches over the bus (as NVIDIA's OpenCL does): maps are
            # then zero-copy and transfers from it are direct DMA.
            host = self.flags & cl.CL_MEM_ALLOC_HOST_PTR and not vkdev.physical.is_uma
            alloc = allocator.allocate(self.size, MemoryKind.STAGING if host else MemoryKind.DEVICE)
            if host:  # transfers from and to it may be CUDA's (vulkan/cuda_copy.py)
                allocator.start_cuda(self.size)
        self._storage[vkdev] = alloc
        weakref.finalize(self, allocator.free, alloc)

    def region(self, vkdev) -> Region:
        a = self._storage[vkdev]
        return Region(a.buffer, a.offset, a.address, a.host_ptr)

    def allocation(self, vkdev):
        return self._storage[vkdev]

    def address(self, vkdev) -> int:
        """The device address of the first byte (what a kernel's pointer argument gets)."""
        return self._storage[vkdev].address

    @property
    def root(self) -> "Buffer":
        return self


class SubBuffer(MemObject):
    """A view of [origin, origin + size) of its parent buffer."""

    def __init__(self, parent: Buffer, flags: int, origin: int, size: int):
        host_ptr = parent.host_ptr + origin if parent.host_ptr and parent.flags & cl.CL_MEM_USE_HOST_PTR else 0
        super().__init__(parent.context, flags, size, host_ptr, [])
        self.parent = parent
        self.origin = origin
        self.imported = parent.imported
        weakref.finalize(self, _run_destructors, self._destructors)

    def region(self, vkdev) -> Region:
        r = self.parent.region(vkdev)
        host = r.host_ptr + self.origin if r.host_ptr is not None else None
        return Region(r.buffer, r.offset + self.origin, r.address + self.origin, host)

    def allocation(self, vkdev):
        return self.parent.allocation(vkdev)

    def address(self, vkdev) -> int:
        return self.parent.address(vkdev) + self.origin

    @property
    def root(self) -> Buffer:
        return self.parent


def direct_host_access(mem: MemObject, vkdev) -> bool:
    """The buffer's bytes can be read and written by the host where they live."""
    a = mem.allocation(vkdev)
    if a.host_ptr is None or not a.coherent:
        return False
    # A copy-semantics USE_HOST_PTR buffer must be seen through host_ptr, not its device copy.
    return not (mem.flags & cl.CL_MEM_USE_HOST_PTR) or mem.imported


_upload_lock = threading.Lock()
_uploaders: dict = {}


def upload(vkdev, region: Region, offset: int, src, size: int) -> None:
    """Blocking host -> device copy, outside any queue (the object is new: nothing else uses it)."""
    if region.host_ptr is not None:
        native.host_copy(ffi, region.host_ptr + offset, src, size)
        return
    allocator = allocator_for(vkdev)
    staging = allocator.allocate(size, MemoryKind.STAGING)
    try:
        native.host_copy(ffi, staging.host_ptr, src, size)
        with _upload_lock:
            pool, timeline, value = _uploaders.get(vkdev) or (vkc.CommandPool(vkdev), vkc.Timeline(vkdev), 0)
            cb = pool.begin()
            vkc.copy_buffer(cb, staging.buffer, region.buffer, [(staging.offset, region.offset + offset, size)])
            vkc.end(cb)
            value += 1
            vkc.submit(vkdev, [cb], [], timeline, value)
            timeline.wait(value)
            pool.recycle(cb)
            _uploaders[vkdev] = (pool, timeline, value)
    finally:
        allocator.free(staging)


__all__ = ["AllocationFailed", "Buffer", "SubBuffer", "MemObject", "Mapping", "Region", "direct_host_access",
           "upload", "HOST_ACCESS", "DEVICE_ACCESS"]
