"""The launch fast path, Python's side: what icd/fast_path.c may do without Python.

A queue's FastQueue mirrors its batch state into a C struct under the queue's lock (a
NativeLock both sides take). A FastLaunch is one kernel's launch prepared for one queue: the
pipeline, the complete push constants and the grid of one NDRange with the arguments as they
were. C then records repeated enqueues of it (no wait list, no offset) straight into the open
batch, asking Python only for the event when the application wants one
(CommandQueue.fast_event), and finishes a batch holding only such launches itself.

Events. C makes the event of a command it records itself (icd/fast_events.c) and answers the
event calls that need nothing else; whatever needs more (a wait list, a callback, Python
submitting the batch, the queue's release) has Python adopt it: CommandQueue.adopt_c_event makes
its Event, under the same handle (vkcl.api.handles asks adopt_event for any handle it does not
know).

Lifetimes. A FastLaunch holds its memory objects; C lists the launches a batch used, and
Python's submit hands them to the batch, which keeps them until it completes (as a command
keeps its arguments). A launch stops being used when its kernel's arguments change, or the
kernel or one of those memory objects is released: it is dropped then, and one the open
batch used stays alive with the batch.
"""
from __future__ import annotations

import weakref

from vkcl import config, native
from vkcl._gen import cl
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.memory import AllocationFailed, MemoryKind, allocator_for

MAX_PC = 256
_FUNCTIONS = ("vkCmdPipelineBarrier", "vkCmdBindPipeline", "vkCmdPushConstants", "vkCmdDispatchBase",
              "vkEndCommandBuffer", "vkBeginCommandBuffer", "vkQueueSubmit", "vkGetSemaphoreCounterValue",
              "vkWaitSemaphores", "vkCmdUpdateBuffer", "vkCmdResetQueryPool", "vkCmdWriteTimestamp", "vkCmdCopyBuffer",
              "vkGetQueryPoolResults", "vkResetQueryPool")
_OPTIONAL = ("vkResetQueryPool",)  # Vulkan 1.2's; only used with hostQueryReset
# C's blocking reads and writes go through the queue's staging memory: whole up to half of it,
# larger ones in chunks of half, the host copying one while the GPU copies the other.
STAGING_SIZE = 16 << 20

_objects: dict = {}  # address of a vkcl_fastk_t / vkcl_fastm_t -> its FastLaunch / FastBuffer, while current
_queues: "weakref.WeakSet[FastQueue]" = weakref.WeakSet()
_by_address: "weakref.WeakValueDictionary[int, FastQueue]" = weakref.WeakValueDictionary()
# A profiling queue's timestamp pairs C's events may use at once (bits of vkcl_fastq_t.qfree).
C_QUERY_PAIRS = 64
# Gives an adopted C event its handle (set by vkcl.api.handles: the handle table is the api's).
register_adopted = None


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
        self.staging = None
        fq.lock = queue.lock.ptr
        fq.submit_lock = vkdev.queue_lock.ptr
        fq.device = native.pointer(vk.ffi, vkdev.handle)
        fq.queue = native.pointer(vk.ffi, vkdev.queue)
        fq.timeline = native.pointer(vk.ffi, queue.timeline.handle)
        fq.limit = queue.batch_limit
        fq.next_value = 1
        fq.tag = 1
        fq.spin_ns = queue.timeline.spin_ns
        fq.query_pool = native.pointer(vk.ffi, queue.queries.handle) if queue.profiling else native.ffi.NULL
        fq.context = native.ffi.cast("void *", id(queue.context))
        for i, name in enumerate(_FUNCTIONS):
            fn = vk.lib.vkGetDeviceProcAddr(vkdev.handle, name.encode())
            if fn == vk.ffi.NULL and name not in _OPTIONAL:
                raise RuntimeError(f"no {name}")
            fq.fn[i] = native.pointer(vk.ffi, fn)
        fq.uma = int(vkdev.physical.is_uma)
        fq.copy_threads = native.COPY_THREADS
        # C's own second command buffer, for chunked transfers (left executable: C begins it)
        cb2 = queue.pool.begin()
        vkc.end(cb2)
        fq.cb2 = native.pointer(vk.ffi, cb2)
        fq.c_events_on = int(config.get("c_events"))
        fq.cuda = vkdev.cuda_copies.c if vkdev.cuda_copies is not None else native.ffi.NULL
        # llvmpipe's loop cap detected (core/loop_cuts.py): the batches C runs capture the
        # device's flag into their slot as they end, as Python's do
        if queue.loop_word is not None:
            word = queue.loop_word.alloc
            fq.loop_word_buffer = native.pointer(vk.ffi, word.buffer)
            fq.loop_word_offset = word.offset
        if queue.profiling:
            fq.qbase = queue.queries.lend(C_QUERY_PAIRS, self._query_back)
            fq.qfree = (1 << C_QUERY_PAIRS) - 1
            fq.period_ns = queue.queries.period_ns
            fq.host_query_reset = int(queue.queries.host_reset and fq.fn[len(_FUNCTIONS) - 1] != native.ffi.NULL)
            fq.clock_offset, fq.calibrated_ns = queue.clock.offset, queue.clock.calibrated_ns
            calibrate = vkc.calibrate_function(vkdev)
            fq.calibrate = native.pointer(vk.ffi, calibrate) if calibrate is not None else native.ffi.NULL
        self.staged = False  # the staging memory is made with the first transfer (prepare_transfer)
        _queues.add(self)
        _by_address[int(ffi.cast("uintptr_t", fq))] = self

    def _query_back(self, pair: int) -> None:
        """A lent timestamp pair Python used (an adopted C event's) is C's again."""
        native.lib.vkcl_fastq_query_back(self.c, pair)

    def stage(self, vkdev) -> None:
        """The staging memory of C's transfers from and to the application's own memory:
        host-visible, coherent and, where the device has it, cached (reads of it run at memory
        speed). Without it C leaves them to Python. Made on the first transfer, not with the
        queue: its memory block costs ~17 ms to make on NVIDIA (pinning), and by then Python's
        own staging memory has made one."""
        self.staged = True
        allocator = allocator_for(vkdev)
        try:
            a = allocator.allocate(STAGING_SIZE, MemoryKind.READBACK)
        except AllocationFailed:
            return
        if a.host_ptr is None or not a.coherent:
            allocator.free(a)
            return
        self.staging = (allocator, a)
        fq = self.c
        with self.queue.lock:  # the pointer last: C takes none of it until then
            fq.staging_ptr = native.ffi.cast("uint8_t *", int(vk.ffi.cast("uintptr_t", a.host_ptr)))
            fq.staging_offset, fq.staging_size = a.offset, STAGING_SIZE
            fq.staging = native.pointer(vk.ffi, a.buffer)

    def register(self, handle) -> None:
        """The queue has its handle: C may find it now."""
        if native.lib.vkcl_fast_set(handle, self.c):
            self.handle = handle
            self.c.handle = handle  # clWaitForEvents' fast path completes events through it

    def close(self) -> None:
        if self.handle is not None:
            native.lib.vkcl_fast_remove(self.handle)
            self.handle = None
            with self.queue.lock:  # C's events must not outlive the queue's C state
                while (ptr := native.lib.vkcl_cev_first_live(self.c)) != native.ffi.NULL:
                    self.queue.adopt_c_event(ptr)
        self.c.enabled = 0
        self.c.handle = native.ffi.NULL
        self.c.staging_size = 0
        if self.staging is not None:
            allocator, a = self.staging
            self.staging = None
            allocator.free(a)

    def __del__(self):
        if native.lib is not None and self.c is not None:
            self.close()
            native.lib.vkcl_fastq_free(self.c)
            self.c = None

    # Called with the queue's lock held.

    def opened(self, cb, barrier: bool, loop_slot=None) -> None:
        fq = self.c
        fq.cb = native.pointer(vk.ffi, cb)
        if loop_slot is not None:
            fq.loop_slot = native.ffi.cast("uint32_t *", int(vk.ffi.cast("uintptr_t", loop_slot.host)))
            fq.loop_slot_buffer = native.pointer(vk.ffi, loop_slot.buffer)
            fq.loop_slot_offset = loop_slot.offset
        fq.count = fq.fast = fq.nused = fq.nev = 0
        fq.barrier = int(barrier)
        fq.host_barrier = 0

    def take_batch(self, batch) -> list:
        """The open batch (`batch`) is being submitted by Python: its C events become Python's, to
        complete with it; returns the launches and buffers it used, to keep."""
        fq = self.c
        for i in range(fq.nev):
            if fq.ev[i] != native.ffi.NULL:
                self.queue.adopt_c_event(fq.ev[i], batch)
        dropped = {x.key: x for x in self.dropped}
        used = []
        for i in range(fq.nused):
            key = int(native.ffi.cast("uintptr_t", fq.used[i]))
            used.append(_objects.get(key) or dropped[key])
        fq.cb = native.ffi.NULL
        fq.loop_slot = native.ffi.NULL
        fq.count = fq.fast = fq.nused = fq.nev = 0
        fq.host_barrier = 0
        fq.tag += 1
        self.dropped = []
        return used

    def open_kernels(self) -> list[str]:
        """The kernels of the launches C recorded in the open batch. Under the lock."""
        fq = self.c
        dropped = {x.key: x for x in self.dropped}
        used = []
        for i in range(fq.nused):
            key = int(native.ffi.cast("uintptr_t", fq.used[i]))
            used.append(_objects.get(key) or dropped.get(key))
        return launched_kernels(used)

    def uses(self, obj) -> bool:
        """Whether the open batch used `obj` (a FastLaunch or a FastBuffer). Under the lock."""
        fq = self.c
        return any(int(native.ffi.cast("uintptr_t", fq.used[i])) == obj.key for i in range(fq.nused))


def launched_kernels(used) -> list[str]:
    """The kernels' names of the FastLaunches among `used` (what a batch kept)."""
    return [x.kernel.name for x in used or () if isinstance(x, FastLaunch)]


def adopt_event(ptr):
    """The Event of the C event at `ptr` (vkcl.api.handles: a handle it does not know), made now;
    None when `ptr` is no C event the application holds."""
    if native.lib is None:
        return None
    fq = native.lib.vkcl_cev_queue_of(ptr)
    fast = _by_address.get(int(native.ffi.cast("uintptr_t", fq))) if fq != native.ffi.NULL else None
    if fast is None:
        return None
    with fast.queue.lock:  # when another thread adopted it, that one has registered it by now: None
        return fast.queue.adopt_c_event(ptr)


def c_event_state(ptr):
    """Take the C event at `ptr` over (the queue's lock held): its vkcl_cev_state_t, or None."""
    st = native.ffi.new("vkcl_cev_state_t *")
    return st if native.lib.vkcl_cev_adopt(ptr, st) else None


class _CState:
    """The Python owner of a struct C reads (a launch or a buffer C may use); frees it. `key`,
    its address, is how the queue's used[] names it."""

    __slots__ = ("c", "key")

    def __init__(self, c) -> None:
        if c == native.ffi.NULL:
            raise MemoryError("vkcl_fast*_new")
        self.c, self.key = c, int(native.ffi.cast("uintptr_t", c))

    def __del__(self):
        if native.lib is not None and self.c is not None:
            native.lib.vkcl_fast_free(self.c)
            self.c = None


class FastLaunch(_CState):
    """One kernel launch C may repeat (vkcl_fastk_t)."""

    __slots__ = ("fast_queue", "kernel", "mems")

    def __init__(self, fast_queue: FastQueue, kernel, work_dim: int, global_: tuple, local, pipeline, layout,
                 pc: bytes, base: tuple, groups: tuple, mems: list):
        super().__init__(native.lib.vkcl_fastk_new())
        fk, ffi = self.c, native.ffi
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
        # Memory the host sees directly (ALLOC_HOST_PTR, USE_HOST_PTR, a UMA device's): the
        # batch then ends with a barrier to the host (icd/fast_path.c, vkcl_fast_run_batch).
        vkdev = fast_queue.queue.vk
        fk.host_visible = int(any(m.region(vkdev).host_ptr is not None for m in mems))


def prepare(queue, kernel, work_dim: int, global_: tuple, local, cmd) -> None:
    """After a slow-path enqueue (no wait list or offset) of `cmd`, an NDRangeKernel:
    let C repeat it, when it is simple enough."""
    fast = queue.fast
    launch = cmd.launch
    plan = cmd.plan
    if (fast is None or fast.handle is None or kernel.handle is None or len(launch.dispatches) != 1
            or cmd.dset is not None or plan.printf_size or plan.pc_size > MAX_PC or plan.resume_stride):
        return
    pipe, region, base, groups = launch.dispatches[0]
    pc = cmd.pcs[region] if plan.pc_size else b""
    new = FastLaunch(fast, kernel, work_dim, global_, local, pipe, plan.layout.handle, pc, base, groups,
                     list(cmd.mems))
    drop(kernel)
    if _register(kernel.handle, new):
        kernel.fast_launch = new


def _register(handle, obj) -> bool:
    """Let C find `obj` (a FastLaunch or FastBuffer) by the handle; False when its table is full."""
    _objects[obj.key] = obj
    if native.lib.vkcl_fast_set(handle, obj.c):
        return True
    del _objects[obj.key]
    return False


def drop(kernel) -> None:
    """The kernel's prepared launch no longer applies (arguments changed, kernel or memory
    released). A launch the open batch used stays alive until that batch is submitted."""
    launch = kernel.fast_launch
    if launch is None:
        return
    kernel.fast_launch = None
    if kernel.handle is not None:
        native.lib.vkcl_fast_remove(kernel.handle)
    _objects.pop(launch.key, None)
    fast = launch.fast_queue
    with fast.queue.lock:
        if fast.c is not None and fast.uses(launch):
            fast.dropped.append(launch)


class FastBuffer(_CState):
    """A buffer C may read and write (vkcl_fastm_t): its bytes on one device, and what its
    host-access flags allow."""

    __slots__ = ("mem", "cuda_slot")

    def __init__(self, mem, vkdev):
        super().__init__(native.lib.vkcl_fastm_new())
        fm, self.mem = self.c, mem
        region = mem.region(vkdev)
        # held here too: C reads it while this buffer's fast state lives (vulkan/cuda_copy.py)
        self.cuda_slot = mem.allocation(vkdev).cuda_slot
        if self.cuda_slot is not None:
            fm.cuda_base = self.cuda_slot
        fm.device = native.pointer(vk.ffi, vkdev.handle)
        fm.context = native.ffi.cast("void *", id(mem.context))
        fm.buffer = native.pointer(vk.ffi, region.buffer)
        fm.offset, fm.size = region.offset, mem.size
        fm.readable = int(not mem.flags & (cl.CL_MEM_HOST_WRITE_ONLY | cl.CL_MEM_HOST_NO_ACCESS))
        fm.writable = int(not mem.flags & (cl.CL_MEM_HOST_READ_ONLY | cl.CL_MEM_HOST_NO_ACCESS))


def prepare_transfer(queue, mem) -> None:
    """After a slow-path read or write of `mem`: let C do the next small non-blocking writes
    (vkCmdUpdateBuffer) and reads and writes (through the queue's staging memory, made now)."""
    fast = queue.fast
    if fast is None or fast.handle is None:
        return
    if not fast.staged:
        fast.stage(queue.vk)
    if mem.handle is None or mem.fast_buffer is not None or mem.flags & (cl.CL_MEM_USE_HOST_PTR |
                                                                         cl.CL_MEM_HOST_NO_ACCESS):
        return
    new = FastBuffer(mem, queue.vk)
    if _register(mem.handle, new):
        mem.fast_buffer = new


def map_copy(queue, mem, staging, offset: int, size: int, reading: bool, blocking: bool, event, command_type: int,
             host_done) -> int | None:
    """The copy of a map (`reading`: buffer -> staging) or an unmap (staging -> buffer) done by
    C as a fast transfer of `command_type` (icd/fast_path.c, vkcl_fast_map_copy), its event
    (when `event` is not NULL) made through CommandQueue.fast_event, whose command runs
    `host_done` once complete. The CL code C returned, or None when C left it to Python (then
    nothing was recorded)."""
    fast = queue.fast
    if fast is None or fast.handle is None or mem.fast_buffer is None or staging.host_ptr is None:
        return None
    ffi = native.ffi
    ret = ffi.new("cl_int *")
    host = ffi.cast("void *", int(vk.ffi.cast("uintptr_t", staging.host_ptr)))
    with queue.lock:
        queue.fast_host_done = host_done
        try:
            done = native.lib.vkcl_fast_map_copy(ret, fast.handle, mem.handle, int(blocking), offset, size, host,
                                                 int(reading), event, command_type)
        finally:
            queue.fast_host_done = None
    return ret[0] if done else None


def _drop_buffer(mem) -> None:
    buf, mem.fast_buffer = mem.fast_buffer, None
    native.lib.vkcl_fast_remove(mem.handle)
    _objects.pop(buf.key, None)
    for fast in list(_queues):
        with fast.queue.lock:
            if fast.c is not None and fast.uses(buf):
                fast.dropped.append(buf)


def mem_released(mem) -> None:
    """The application released `mem` (its last reference): drop what C may do with it."""
    if mem.fast_buffer is not None:
        _drop_buffer(mem)
    for launch in [x for x in _objects.values() if isinstance(x, FastLaunch) and any(m is mem for m in x.mems)]:
        if launch.kernel.fast_launch is launch:
            drop(launch.kernel)
