"""CUDA's copy engine for transfers between vkcl's own pinned memory and buffers, on NVIDIA GPUs
(setting `cuda_copies`; the copies are icd/cuda_copy.c's).

Why. On an H200 every copy between the GPU and host memory that NVIDIA's Vulkan driver maps for
it (its host-visible memory types, imported pages, even CUDA's own pinned memory once imported
into Vulkan) runs at ~50 GB/s host -> device and ~51 back, whichever engine copies: Vulkan's copy
engine, a kernel, or CUDA's copy engine on that memory exported. The same pages registered with
CUDA (cuMemHostRegister of their Vulkan mapping) move ~55 GB/s both ways, into device memory that
Vulkan allocated and exported: the rate of NVIDIA's OpenCL (docs/performance.md, the eleventh
session; bench/probes/barcopy.py).

How.
- On such a device, buffer memory that is not host-visible (the DEVICE pools' blocks) is
  allocated exportable (VK_KHR_external_memory_fd). CUDA imports each block (its opaque fd) and
  sees it at a device address, which C reads through `Block.cuda_slot` (vkcl_fastm_t.cuda_base).
- Host-visible, coherent blocks (CL_MEM_ALLOC_HOST_PTR buffers, maps' staging memory, C's staging
  memory) are registered with CUDA and marked so in C's table of vkcl's host memory.
- CUDA starts (cuInit, the primary context of the GPU with the same UUID, two streams of vkcl's
  own: ~0.15 s once, on the calling thread) when the application makes pinned memory CUDA could
  copy: a CL_MEM_ALLOC_HOST_PTR buffer, or a map's staging memory, of at least cuda_copy_min_kb
  (Allocator.start_cuda, called by core). Never on a thread of vkcl's, where CUDA's start-up met
  libcuda's exit handlers, and not for C's own staging memory (pageable transfers never take
  this path): a process that only launches kernels keeps CUDA out. Blocks made before then are
  attached at the start. The clock holder (clock_hold.py) stays: when this process's context
  replaced it, round trips took 51 us instead of 14 in 3 of 15 runs on the H200.
- A CUDA error at any step leaves CUDA out (`VKCL_LOG=vk` says why): Vulkan copies everything.
  So does a fork()ed child (C compares the pid) and the process's exit (stop()).
Every call here runs under the device's allocator lock (vulkan/memory.py calls it).
"""
from __future__ import annotations

import os

from vkcl import config, log, native
from vkcl.vulkan import memory_vk as raw
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.clock_hold import NVIDIA_VENDOR_ID
from vkcl.vulkan.cuda import COPY_FUNCTIONS, Cuda, CudaError

_log = log.get("vk")

EXTENSION = "VK_KHR_external_memory_fd"

_all: list["CudaCopies"] = []


def wanted(pd) -> bool:
    """Whether a device made from `pd` gets CUDA copies: setting 1 (the default) on NVIDIA's
    discrete GPUs, 2 on any device (tests, with `cuda_library` naming a stand-in), 0 never.
    Only inside the ICD, whose C does the copies."""
    setting = config.get("cuda_copies")
    if native.lib is None or not setting or EXTENSION not in pd.extensions:
        return False
    return setting >= 2 or (pd.vendor_id == NVIDIA_VENDOR_ID and not pd.is_uma)


class CudaCopies:
    """The CUDA copies of one LogicalDevice (made with it when `wanted`)."""

    def __init__(self, device):
        self.device = device
        self.c = native.lib.vkcl_cuda_dev_new()
        if self.c == native.ffi.NULL:
            raise MemoryError("vkcl_cuda_dev_new")
        self.state = "idle"  # "on" once started, "off" when CUDA cannot be had or the process exits
        self.min_size = max(1, config.get("cuda_copy_min_kb")) << 10  # smaller transfers stay Vulkan's
        self.cuda: Cuda | None = None
        self.ctx = 0
        self._get_fd = None
        _all.append(self)

    @property
    def copies(self) -> int:
        """Transfers CUDA has copied (tests)."""
        return int(self.c.copies)

    # -- blocks (from vulkan/memory.py, under the allocator's lock) ------------------------------

    def new_slot(self):
        """Where C reads a new exportable block's CUDA address (0 until CUDA has it)."""
        return native.ffi.new("uint64_t *")

    def block_created(self, block) -> None:
        if self.state == "on":
            self._attach(block)

    def block_destroyed(self, block) -> None:
        cuda, state = self.cuda, block.cuda
        block.cuda = None
        if state is None or self.state != "on":
            return
        try:
            with cuda.current(self.ctx):
                if state is True:
                    native.lib.vkcl_host_block_cuda(native.pointer(vk.ffi, block.host), 0)
                    cuda.unregister_host(int(vk.ffi.cast("uintptr_t", block.host)))
                else:
                    block.cuda_slot[0] = 0
                    cuda.release_memory(*state)
        except CudaError as e:
            _log.debug("cuda_copies: %s", e)

    # -- start and stop ------------------------------------------------------------------------

    def start(self, blocks) -> None:
        """Start CUDA and attach `blocks` (the allocator's); "off" for good when it cannot."""
        self.state = "off"
        pd = self.device.physical
        try:
            cuda = Cuda(config.get("cuda_library") or "libcuda.so.1")
            ctx = cuda.retain_primary_context(cuda.device_by_uuid(pd.device_uuid))
            with cuda.current(ctx):
                streams = (cuda.stream(), cuda.stream())
            fns = [cuda.address(name) for name in COPY_FUNCTIONS]
        except (OSError, CudaError, LookupError) as e:
            _log.debug("cuda_copies: off for %r: %s", pd.name, e)
            return
        self.cuda, self.ctx = cuda, ctx
        self._get_fd = vk.vkGetDeviceProcAddr(self.device.handle, "vkGetMemoryFdKHR")
        ffi, c = native.ffi, self.c
        c.ctx = ffi.cast("void *", ctx)
        for i, s in enumerate(streams):
            c.stream[i] = ffi.cast("void *", s)
        for i, fn in enumerate(fns):
            c.fn[i] = ffi.cast("void *", fn)
        c.min_size = self.min_size
        self.state = "on"
        for block in blocks:
            self._attach(block)
        native.lib.vkcl_cuda_dev_start(c)
        _log.debug("cuda_copies: on for %r (pid %d)", pd.name, os.getpid())

    def _attach(self, block) -> None:
        """Register a host-visible, coherent block with CUDA, or import an exportable one."""
        try:
            with self.cuda.current(self.ctx):
                if block.host is not None:
                    if not block.coherent:  # C copies only with coherent memory
                        return
                    self.cuda.register_host(int(vk.ffi.cast("uintptr_t", block.host)), block.size)
                    block.cuda = True
                    native.lib.vkcl_host_block_cuda(native.pointer(vk.ffi, block.host), 1)
                elif block.cuda_slot is not None:
                    fd = self._get_fd(self.device.handle, vk.VkMemoryGetFdInfoKHR(memory=block.memory,
                                                                                 handleType=raw.OPAQUE_FD))
                    block.cuda = self.cuda.import_memory(fd, block.reserved, block.dedicated)
                    block.cuda_slot[0] = block.cuda[1]
        except (CudaError, vk.VkError) as e:
            _log.debug("cuda_copies: a block of %d bytes stays Vulkan's: %s", block.size, e)

    def stop(self) -> None:
        """No CUDA call any more (process exit)."""
        native.lib.vkcl_cuda_dev_stop(self.c)
        self.state = "off"


def stop_all() -> None:
    for copies in _all:
        copies.stop()
