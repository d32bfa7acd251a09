"""The launch fast path, Python's side: what icd/fast_path.c may do without Python.

A queue's FastQueue mirrors its batch state into a C struct under the queue's lock (a
NativeLock both sides take). A FastLaunch is one kernel's launch prepared for one queue: the
pipeline, the complete push constants and the grid of one NDRange with the arguments as they
were. C then records repeated enqueues of it (no wait list, no offset) straight into the open
batch, asking Python only for the event when the application wants one
(CommandQueue.fast_launch_event), and finishes a batch holding only such launches itself.

Lifetimes. A FastLaunch holds its memory objects; C lists the launches a batch used, and
Python's submit hands them to the batch, which keeps them until it completes (as a command
keeps its arguments). A launch stops being used when its kernel's arguments change, or the
kernel or one of those memory objects is released: it is dropped then, and one the open
batch used stays alive with the batch.
"""
from __future__ import annotations

import vulkan as vk

from vkcl import native

MAX_PC = 256
_FUNCTIONS = ("vkCmdPipelineBarrier", "vkCmdBindPipeline", "vkCmdPushConstants", "vkCmdDispatchBase",
              "vkEndCommandBuffer", "vkBeginCommandBuffer", "vkQueueSubmit", "vkGetSemaphoreCounterValue",
              "vkWaitSemaphores")

_launches: dict = {}  # address of a vkcl_fastk_t -> its FastLaunch, while C may name it


def available() -> bool:
    return native.lib is not None


class FastQueue:
    """The C view of one in-order queue (icd/fast_path.c, vkcl_fastq_t)."""

    def __init__(self, queue):
        lib, ffi = native.lib, native.ffi
        vkdev = queue.vk
        fq = lib.vkcl_fastq_new()
        if fq == ffi.NULL:
            raise MemoryError("vkcl_fastq_new")
        self.c = fq
        self.queue = queue
        self.handle = None
        self.dropped: list = []  # dropped launches the open batch may still name
        fq.lock = queue.lock.ptr
        fq.submit_lock = vkdev.queue_lock.ptr
        fq.device = native.pointer(vk.ffi, vkdev.handle)
        fq.queue = native.pointer(vk.ffi, vkdev.queue)
        fq.timeline = native.pointer(vk.ffi, queue.timeline.handle)
        fq.limit = queue.batch_limit
        fq.next_value = 1
        fq.tag = 1
        fq.profiling = int(queue.profiling)
        for i, name in enumerate(_FUNCTIONS):
            fn = vk.lib.vkGetDeviceProcAddr(vkdev.handle, name.encode())
            if fn == vk.ffi.NULL:
                raise RuntimeError(f"no {name}")
            fq.fn[i] = native.pointer(vk.ffi, fn)

    def register(self, handle) -> None:
        """The queue has its handle: C may find it now."""
        if native.lib.vkcl_fast_set(handle, self.c):
            self.handle = handle

    def close(self) -> None:
        if self.handle is not None:
            native.lib.vkcl_fast_remove(self.handle)
            self.handle = None
        self.c.enabled = 0

    def __del__(self):
        if native.lib is not None and self.c is not None:
            self.close()
            native.lib.vkcl_fast_free(self.c)
            self.c = None

    # Called with the queue's lock held.

    def opened(self, cb, barrier: bool) -> None:
        fq = self.c
        fq.cb = native.pointer(vk.ffi, cb)
        fq.count = fq.fast = fq.nused = 0
        fq.barrier = int(barrier)

    def take_batch(self) -> list:
        """The open batch is being submitted by Python: the launches it used, to keep."""
        fq = self.c
        used = [_launches[int(native.ffi.cast("uintptr_t", fq.used[i]))] for i in range(fq.nused)]
        fq.cb = native.ffi.NULL
        fq.count = fq.fast = fq.nused = 0
        fq.tag += 1
        self._forget_dropped()
        return used

    def _forget_dropped(self) -> None:
        tag = self.c.tag
        keep = [launch for launch in self.dropped if launch.c.tag == tag]
        for launch in self.dropped:
            if launch.c.tag != tag:
                _launches.pop(launch.key, None)
        self.dropped = keep


class FastLaunch:
    """One kernel launch C may repeat (vkcl_fastk_t)."""

    __slots__ = ("c", "key", "fast_queue", "kernel", "mems")

    def __init__(self, fast_queue: FastQueue, kernel, work_dim: int, global_: tuple, local, pipeline, layout,
                 pc: bytes, base: tuple, groups: tuple, mems: list):
        lib, ffi = native.lib, native.ffi
        fk = lib.vkcl_fastk_new()
        if fk == ffi.NULL:
            raise MemoryError("vkcl_fastk_new")
        self.c = fk
        self.key = int(ffi.cast("uintptr_t", fk))
        self.fast_queue, self.kernel, self.mems = fast_queue, kernel, mems
        fk.fq = fast_queue.c
        fk.work_dim = work_dim
        fk.local_null = int(local is None)
        for d in range(work_dim):
            fk.global_size[d] = global_[d]
            fk.local_size[d] = local[d] if local is not None else 0
        fk.pipeline = native.pointer(vk.ffi, pipeline)
        fk.layout = native.pointer(vk.ffi, layout)
        fk.pc_size = len(pc)
        ffi.memmove(fk.pc, pc, len(pc))
        for d in range(3):
            fk.base[d], fk.groups[d] = base[d], groups[d]

    def __del__(self):
        if native.lib is not None and self.c is not None:
            native.lib.vkcl_fast_free(self.c)
            self.c = None


def prepare(queue, kernel, work_dim: int, global_: tuple, local, cmd) -> None:
    """After a slow-path enqueue (no wait list or offset) of `cmd`, an NDRangeKernel:
    let C repeat it, when it is simple enough."""
    fast = queue.fast
    launch = cmd.launch
    plan = cmd.plan
    if (fast is None or fast.handle is None or kernel.handle is None or len(launch.dispatches) != 1
            or cmd.dset is not None or plan.printf_size or plan.pc_size > MAX_PC):
        return
    pipe, region, base, groups = launch.dispatches[0]
    pc = cmd.pcs[region] if plan.pc_size else b""
    new = FastLaunch(fast, kernel, work_dim, global_, local, pipe, plan.layout.handle, pc, base, groups,
                     list(cmd.mems))
    drop(kernel)
    _launches[new.key] = new
    if native.lib.vkcl_fast_set(kernel.handle, new.c):
        kernel.fast_launch = new
    else:
        del _launches[new.key]


def drop(kernel) -> None:
    """The kernel's prepared launch no longer applies (arguments changed, kernel or memory
    released). A launch the open batch used stays alive until that batch is submitted."""
    launch = kernel.fast_launch
    if launch is None:
        return
    kernel.fast_launch = None
    if kernel.handle is not None:
        native.lib.vkcl_fast_remove(kernel.handle)
    fast = launch.fast_queue
    with fast.queue.lock:
        if fast.c is not None and launch.c.tag == fast.c.tag:
            fast.dropped.append(launch)
        else:
            _launches.pop(launch.key, None)


def mem_released(mem) -> None:
    """The application released `mem` (its last reference): drop the launches that use it."""
    for launch in [x for x in _launches.values() if any(m is mem for m in x.mems)]:
        if launch.kernel.fast_launch is launch:
            drop(launch.kernel)
