"""Holding an NVIDIA GPU's clocks up while vkcl uses it (setting `hold_clocks`, on by default).

NVIDIA's driver lowers a GPU's clocks whenever its graphics/compute engine is idle, and a
Vulkan device's copy engines do not count as work. On an H200: after a few seconds of copies
only, the SM clock falls from 1980 to 345 MHz, and short transfers run at that clock; a kernel
after 3 s of idle runs at 0.42 of its speed. While a CUDA context exists the driver keeps the
clocks up, and NVIDIA's OpenCL, built on CUDA, holds them while an OpenCL context lives. So
vkcl retains the CUDA primary context of the same GPU (matched by UUID) for as long as its
VkDevice lives, which is the process's life. It costs the context's device memory (~515 MiB on
the H200) and CUDA's start-up, 0.1-0.3 s on a thread of its own (`hold_in_background`), which
the first context does not wait for; it does no CUDA work. Only in
CUDA's default compute mode: an exclusive-process GPU would be closed to other processes' CUDA.
Without libcuda, or on another vendor's device, nothing happens.
"""
from __future__ import annotations

import threading

import cffi

from vkcl import log

_log = log.get("vk")

NVIDIA_VENDOR_ID = 0x10DE
_CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20
_CU_COMPUTEMODE_DEFAULT = 0

_ffi = cffi.FFI()
_ffi.cdef("""
    typedef int CUresult;
    typedef int CUdevice;
    typedef struct CUctx_st *CUcontext;
    typedef struct { char bytes[16]; } CUuuid;
    CUresult cuInit(unsigned int flags);
    CUresult cuDeviceGetCount(int *count);
    CUresult cuDeviceGet(CUdevice *device, int ordinal);
    CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
    CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev);
    CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
""")

_held: dict[bytes, object] = {}  # device UUID -> the retained primary context
_cuda = None
_threads: list[threading.Thread] = []


def _libcuda():
    global _cuda
    if _cuda is None:
        cuda = _ffi.dlopen("libcuda.so.1")
        result = cuda.cuInit(0)
        if result != 0:
            raise OSError(f"cuInit returned {result}")
        _cuda = cuda
    return _cuda


def hold(vendor_id: int, device_uuid: bytes) -> bool:
    """Retain the CUDA primary context of the GPU whose UUID is `device_uuid`; whether one is held.

    Never raises, nor warns: a GPU this cannot hold runs as without the setting."""
    if vendor_id != NVIDIA_VENDOR_ID:
        return False
    if device_uuid in _held:
        return True
    try:
        cuda = _libcuda()
        count = _ffi.new("int *")
        if cuda.cuDeviceGetCount(count) != 0:
            raise OSError("cuDeviceGetCount failed")
        dev, uuid = _ffi.new("CUdevice *"), _ffi.new("CUuuid *")
        for ordinal in range(count[0]):
            if cuda.cuDeviceGet(dev, ordinal) != 0 or cuda.cuDeviceGetUuid(uuid, dev[0]) != 0:
                continue
            if bytes(_ffi.buffer(uuid.bytes)) != device_uuid:
                continue
            mode = _ffi.new("int *")
            if cuda.cuDeviceGetAttribute(mode, _CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, dev[0]) != 0:
                raise OSError("cuDeviceGetAttribute failed")
            if mode[0] != _CU_COMPUTEMODE_DEFAULT:
                _log.debug("hold_clocks: CUDA device %d is in compute mode %d: left alone", ordinal, mode[0])
                return False
            ctx = _ffi.new("CUcontext *")
            result = cuda.cuDevicePrimaryCtxRetain(ctx, dev[0])
            if result != 0:
                raise OSError(f"cuDevicePrimaryCtxRetain returned {result}")
            _held[device_uuid] = ctx[0]  # released by the driver when the process exits
            _log.debug("hold_clocks: retained CUDA device %d's primary context", ordinal)
            return True
        _log.debug("hold_clocks: no CUDA device has this GPU's UUID")
    except (OSError, AttributeError) as e:  # no libcuda (a Vulkan-only install), or CUDA refuses
        _log.debug("hold_clocks: cannot hold the clocks (%s)", e)
    return False


def hold_in_background(vendor_id: int, device_uuid: bytes) -> None:
    """`hold` on a thread of its own (cffi's calls release the GIL): nothing waits for it."""
    if vendor_id != NVIDIA_VENDOR_ID:
        return
    thread = threading.Thread(target=hold, args=(vendor_id, device_uuid), name="vkcl-hold-clocks", daemon=True)
    _threads.append(thread)
    thread.start()


def settle(timeout: float = 10.0) -> None:
    """Process exit: no thread is inside CUDA's start-up while the driver's libraries unload."""
    for thread in _threads:
        thread.join(timeout)
