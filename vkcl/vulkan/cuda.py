"""libcuda's driver API in vkcl's own process (ctypes): the calls CUDA copies make
(vulkan/cuda_copy.py; the copies themselves are icd/cuda_copy.c's). Every call is checked: a
CUresult other than CUDA_SUCCESS raises CudaError, which names the call.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
from ctypes import POINTER, byref, c_int, c_size_t, c_uint, c_uint64, c_void_p

EXTERNAL_MEMORY_OPAQUE_FD = 1   # CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD
EXTERNAL_MEMORY_DEDICATED = 1   # CUDA_EXTERNAL_MEMORY_DEDICATED
STREAM_NON_BLOCKING = 1         # CU_STREAM_NON_BLOCKING
# What icd/cuda_copy.c calls, in the order of its enum.
COPY_FUNCTIONS = ("cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
                  "cuStreamSynchronize")


class CudaError(RuntimeError):
    def __init__(self, call: str, result: int):
        super().__init__(f"{call} returned CUresult {result}")
        self.call, self.result = call, result


class _MemoryHandleDesc(ctypes.Structure):  # CUDA_EXTERNAL_MEMORY_HANDLE_DESC
    # type, 4 bytes of padding, the 16-byte handle union (its first member: the fd), size, ...
    _fields_ = [("type", c_int), ("_pad", c_int), ("fd", c_int), ("_union_rest", c_int * 3), ("size", c_uint64),
                ("flags", c_uint), ("reserved", c_uint * 16)]


class _BufferDesc(ctypes.Structure):  # CUDA_EXTERNAL_MEMORY_BUFFER_DESC
    _fields_ = [("offset", c_uint64), ("size", c_uint64), ("flags", c_uint), ("reserved", c_uint * 16)]


_PROTOTYPES = {
    "cuInit": (c_uint,),
    "cuDeviceGetCount": (POINTER(c_int),),
    "cuDeviceGet": (POINTER(c_int), c_int),
    "cuDeviceGetUuid": (ctypes.c_char_p, c_int),
    "cuDevicePrimaryCtxRetain": (POINTER(c_void_p), c_int),
    "cuCtxPushCurrent_v2": (c_void_p,),
    "cuCtxPopCurrent_v2": (POINTER(c_void_p),),
    "cuStreamCreate": (POINTER(c_void_p), c_uint),
    "cuMemHostRegister_v2": (c_void_p, c_size_t, c_uint),
    "cuMemHostUnregister": (c_void_p,),
    "cuImportExternalMemory": (POINTER(c_void_p), POINTER(_MemoryHandleDesc)),
    "cuExternalMemoryGetMappedBuffer": (POINTER(c_uint64), c_void_p, POINTER(_BufferDesc)),
    "cuDestroyExternalMemory": (c_void_p,),
    "cuMemFree_v2": (c_uint64,),
}


class Cuda:
    """libcuda, loaded from `path` (OSError when it cannot be)."""

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        for name, argtypes in _PROTOTYPES.items():
            fn = getattr(self.lib, name)
            fn.argtypes, fn.restype = argtypes, c_int

    def _call(self, name: str, *args) -> None:
        result = getattr(self.lib, name)(*args)
        if result != 0:
            raise CudaError(name, result)

    def address(self, name: str) -> int:
        """The address of an entry point (for C)."""
        return ctypes.cast(getattr(self.lib, name), c_void_p).value

    def device_by_uuid(self, uuid: bytes) -> int:
        """Initialise CUDA; the CUdevice whose UUID is `uuid` (LookupError when none is)."""
        self._call("cuInit", 0)
        count, dev = c_int(0), c_int(0)
        self._call("cuDeviceGetCount", byref(count))
        found = ctypes.create_string_buffer(16)
        for ordinal in range(count.value):
            self._call("cuDeviceGet", byref(dev), ordinal)
            self._call("cuDeviceGetUuid", found, dev)
            if found.raw == uuid:
                return dev.value
        raise LookupError("no CUDA device has this GPU's UUID")

    def retain_primary_context(self, dev: int) -> int:
        ctx = c_void_p()
        self._call("cuDevicePrimaryCtxRetain", byref(ctx), dev)
        return ctx.value

    @contextlib.contextmanager
    def current(self, ctx: int):
        """`ctx` current on this thread for the calls in the block."""
        self._call("cuCtxPushCurrent_v2", ctx)
        try:
            yield
        finally:
            self.lib.cuCtxPopCurrent_v2(byref(c_void_p()))

    def stream(self) -> int:
        s = c_void_p()
        self._call("cuStreamCreate", byref(s), STREAM_NON_BLOCKING)
        return s.value

    def register_host(self, ptr: int, size: int) -> None:
        self._call("cuMemHostRegister_v2", ptr, size, 0)

    def unregister_host(self, ptr: int) -> None:
        self._call("cuMemHostUnregister", ptr)

    def import_memory(self, fd: int, size: int, dedicated: bool) -> tuple[int, int]:
        """Import a Vulkan allocation's opaque fd, which this takes (CUDA's once imported, closed
        if not): its CUexternalMemory and the device address of all `size` bytes."""
        ext, dptr = c_void_p(), c_uint64()
        desc = _MemoryHandleDesc(type=EXTERNAL_MEMORY_OPAQUE_FD, fd=fd, size=size,
                                 flags=EXTERNAL_MEMORY_DEDICATED if dedicated else 0)
        try:
            self._call("cuImportExternalMemory", byref(ext), byref(desc))
        except CudaError:
            os.close(fd)
            raise
        try:
            self._call("cuExternalMemoryGetMappedBuffer", byref(dptr), ext, byref(_BufferDesc(offset=0, size=size)))
        except CudaError:
            self.lib.cuDestroyExternalMemory(ext)
            raise
        return ext.value, dptr.value

    def release_memory(self, ext: int, dptr: int) -> None:
        self._call("cuMemFree_v2", dptr)
        self._call("cuDestroyExternalMemory", ext)
