"""Commands a queue can hold: each records its Vulkan work into a batch when enqueued
(`record`) and does its host-side follow-up once the batch has completed (`complete`)."""
from __future__ import annotations

from vkcl import native
from vkcl._gen import cl
from vkcl.core.memory import Mapping, MemObject, direct_host_access
from vkcl.errors import CLError
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.memory import AllocationFailed, MemoryKind, allocator_for

ffi = vkc.ffi
lib = vkc.lib


class Command:
    command_type = 0
    gpu_work = True
    is_barrier = False
    event = None
    waits: list = []
    query_pair = None
    resume = None  # a launch whose loops may suspend: its passes (core/resume.py)
    # The memory objects the command uses. The Vulkan work names only their VkBuffer and
    # offsets, so this reference is what keeps a buffer released by the application (and its
    # memory range, which would otherwise be reused) alive until the command has completed;
    # the queue drops its commands then, and the destructor callbacks follow.
    mems: tuple = ()
    # Waits for every command enqueued before it (a marker or barrier without a wait list):
    # in an out-of-order queue it is held while any earlier command is.
    after_all = False

    def record(self, cb) -> None:
        pass

    def complete(self) -> None:
        """Host work after the GPU part completed; drop references held for the GPU."""

    def discard(self) -> None:
        """Not executed (a wait-list event failed): release what record() would have used."""


class Marker(Command):
    gpu_work = False

    def __init__(self, command_type: int = cl.CL_COMMAND_MARKER, after_all: bool = False):
        self.command_type = command_type
        self.after_all = after_all


class FastCommand(Command):
    """Stands in its batch for a launch or a transfer the C fast path recorded
    (core/fastpath.py), so that its event completes with the batch; the GPU work is already in
    the batch. `host_done`: the host side of a map or unmap C copied for, run on completion."""

    host_done = None

    def __init__(self, command_type: int, host_done=None):
        self.command_type = command_type
        self.host_done = host_done

    def complete(self) -> None:
        if self.host_done is not None:
            self.host_done()

    discard = complete


class Barrier(Command):
    command_type = cl.CL_COMMAND_BARRIER
    is_barrier = True

    def __init__(self, after_all: bool = False):
        self.after_all = after_all

    def record(self, cb) -> None:
        vkc.full_barrier(cb)


# Transfers at least this large may import the application's pages so that the GPU copies them
# directly (vkcl's own mapped memory is copied directly at any size).
DIRECT_TRANSFER_MIN = 4 << 20
# Large reads go through staging, copied out on this many threads or more (else: imported pages).
STAGED_READ_THREADS = 4
STAGED_WRITE_THREADS = 4
# ... up to this size: larger staging would be pinned and freed for each transfer (the
# allocator keeps 1 GiB of large host-visible blocks for reuse), so those import instead.
STAGED_MAX = 512 << 20
# Writes up to this size (vkCmdUpdateBuffer's limit) travel in the command buffer.
UPDATE_MAX = 65536


class _Staged(Command):
    """A command with a staging allocation freed once it completed."""

    staging = None
    own_buffer = src_buffer = dst_buffer = None  # a direct transfer's host-side VkBuffer

    def _stage(self, vkdev, size: int, kind: MemoryKind):
        self.allocator = allocator_for(vkdev)
        try:
            self.staging = self.allocator.allocate(size, kind)
        except AllocationFailed as e:  # vkcl's own memory, not the buffer's: resources
            raise CLError(cl.CL_OUT_OF_RESOURCES, f"no staging memory: {e}") from None
        return self.staging

    def _free_staging(self) -> None:
        if self.staging is not None:
            self.allocator.free(self.staging)
            self.staging = None

    def _host_view(self, vkdev, ptr, regions, import_pages: bool = True) -> int | None:
        """On a discrete GPU: vkcl's own mapped memory (an ALLOC_HOST_PTR buffer) as it is, or,
        for a large transfer and with `import_pages`, the application's own pages imported
        (VK_EXT_external_memory_host), so the GPU copies them directly, with no host copy
        through staging. Returns the byte offset of `ptr` in the view, or None."""
        if vkdev.physical.is_uma:
            return None
        self.allocator = allocator_for(vkdev)
        address = int(ffi.cast("uintptr_t", ptr))
        lo = min(h for h, _, _ in regions)
        own = self.allocator.find_host(address + lo, max(h + n for h, _, n in regions) - lo)
        if own is not None:  # vkcl's own mapped memory (an ALLOC_HOST_PTR buffer): copy from it
            self.own_buffer, at = own
            return at - lo
        if sum(n for _, _, n in regions) < DIRECT_TRANSFER_MIN:
            return None
        align = self.allocator.import_alignment
        if not align or not import_pages:
            return None
        start = int(ffi.cast("uintptr_t", ptr)) + min(h for h, _, _ in regions)
        end = int(ffi.cast("uintptr_t", ptr)) + max(h + n for h, _, n in regions)
        base = start & ~(align - 1)  # whole pages: the application's buffer need not be aligned
        view = self.allocator.import_host(base, -(-(end - base) // align) * align)
        if view is None:
            return None
        self.staging = view
        return int(ffi.cast("uintptr_t", ptr)) - base

    def discard(self) -> None:
        self._free_staging()


class WriteBuffer(_Staged):
    """Host -> buffer regions: the host data is copied to staging now, the GPU copies it in order."""

    command_type = cl.CL_COMMAND_WRITE_BUFFER
    updates: list = []

    def __init__(self, vkdev, mem: MemObject, regions: list[tuple[int, int, int]], src, command_type=None):
        """regions: (host byte offset from src, buffer byte offset, size)."""
        self.command_type = command_type or self.command_type
        self.mems = (mem,)
        r = mem.region(vkdev)
        self.dst = r.buffer
        total = sum(n for _, _, n in regions)
        if total <= UPDATE_MAX and all((r.offset + b) % 4 == 0 and n % 4 == 0 for _, b, n in regions):
            # Small: the data travels inside the command buffer (vkCmdUpdateBuffer), no staging.
            src = ffi.cast("char *", src)
            self.updates = []
            for h, b, n in regions:
                data = ffi.new("char[]", n)
                ffi.memmove(data, src + h, n)
                self.updates.append((r.offset + b, n, data))
            self.copies = []
            return
        at = self._host_view(vkdev, src, regions, import_pages=native.COPY_THREADS < STAGED_WRITE_THREADS or
                             total > STAGED_MAX)
        if at is not None:
            self.src_buffer = self.own_buffer or self.staging.buffer
            base = 0 if self.own_buffer else self.staging.offset
            self.copies = [(base + at + h, r.offset + b, n) for h, b, n in regions]
            return
        total = sum(n for _, _, n in regions)
        st = self._stage(vkdev, max(total, 1), MemoryKind.STAGING)
        src = ffi.cast("char *", src)
        pos, self.copies = 0, []
        for h, b, n in regions:
            native.host_copy(ffi, st.host_ptr + pos, src + h, n)
            self.copies.append((st.offset + pos, r.offset + b, n))
            pos += n
        if not st.coherent:
            self.allocator.flush(st)

    def record(self, cb) -> None:
        for offset, n, data in self.updates:
            lib.vkCmdUpdateBuffer(cb, self.dst, offset, n, data)
        if self.copies:
            vkc.copy_buffer(cb, self.src_buffer or self.staging.buffer, self.dst, self.copies)

    def complete(self) -> None:
        self.updates = ()
        self._free_staging()


class ReadBuffer(_Staged):
    """Buffer -> host regions: the GPU copies to staging, the host copies out on completion."""

    command_type = cl.CL_COMMAND_READ_BUFFER

    def __init__(self, vkdev, mem: MemObject, regions: list[tuple[int, int, int]], dst, command_type=None):
        """regions: (host byte offset from dst, buffer byte offset, size)."""
        self.command_type = command_type or self.command_type
        self.mems = (mem,)
        r = mem.region(vkdev)
        self.src, self.dst = r.buffer, ffi.cast("char *", dst)
        self.outs = []
        # Importing pages pins them on every read (22 ms for 256 MiB on an H200 host); staging
        # and a copy-out on several threads is faster where there are threads to spare.
        at = self._host_view(vkdev, dst, regions, import_pages=native.COPY_THREADS < STAGED_READ_THREADS or
                             sum(n for _, _, n in regions) > STAGED_MAX)
        if at is not None:  # the GPU writes the application's pages itself
            self.dst_buffer = self.own_buffer or self.staging.buffer
            base = 0 if self.own_buffer else self.staging.offset
            self.copies = [(r.offset + b, base + at + h, n) for h, b, n in regions]
            return
        total = sum(n for _, _, n in regions)
        st = self._stage(vkdev, max(total, 1), MemoryKind.READBACK)
        pos, self.copies = 0, []
        for h, b, n in regions:
            self.copies.append((r.offset + b, st.offset + pos, n))
            self.outs.append((h, pos, n))
            pos += n

    def record(self, cb) -> None:
        if self.copies:
            vkc.copy_buffer(cb, self.src, self.dst_buffer or self.staging.buffer, self.copies)

    def complete(self) -> None:
        st = self.staging
        if st is None:  # the GPU wrote the host memory directly
            return
        if not st.coherent:
            self.allocator.invalidate(st)
        for h, pos, n in self.outs:
            native.host_copy(ffi, self.dst + h, st.host_ptr + pos, n)
        self._free_staging()


# Copies at least this large on a discrete GPU run vkcl's copy kernel, not vkCmdCopyBuffer.
KERNEL_COPY_MIN = 1 << 20


class CopyBuffer(Command):
    command_type = cl.CL_COMMAND_COPY_BUFFER
    kernel = None

    def __init__(self, queue, src: MemObject, dst: MemObject, regions: list[tuple[int, int, int]],
                 command_type=None):
        """regions: (src byte offset, dst byte offset, size)."""
        vkdev = queue.vk
        self.command_type = command_type or self.command_type
        self.mems = (src, dst)
        s, d = src.region(vkdev), dst.region(vkdev)
        self.src, self.dst = s.buffer, d.buffer
        self.copies = [(s.offset + a, d.offset + b, n) for a, b, n in regions if n]
        if len(self.copies) == 1 and self.copies[0][2] >= KERNEL_COPY_MIN and not vkdev.physical.is_uma:
            from vkcl.core.builtins import builtin_kernels, copy_args
            a, b, n = regions[0]
            if (s.address + a) % 16 == 0 and (d.address + b) % 16 == 0 and n % 16 == 0:
                self.kernel = builtin_kernels(queue.device, vkdev).copy_16
                self.pc = copy_args(self.kernel, s.address + a, d.address + b, n)
                self.size = n

    def record(self, cb) -> None:
        if self.kernel is not None:
            from vkcl.core.builtins import record_dispatch
            record_dispatch(cb, self.kernel, self.pc, -(-self.size // 16), local=256, max_groups=65535)
        elif self.copies:
            vkc.copy_buffer(cb, self.src, self.dst, self.copies)


class FillBuffer(_Staged):
    """A pattern of 1-128 bytes: vkCmdFillBuffer where the pattern repeats in aligned 4-byte
    words, else vkcl's fill kernels (shaders/fill.cl)."""

    command_type = cl.CL_COMMAND_FILL_BUFFER

    def __init__(self, queue, mem: MemObject, pattern: bytes, offset: int, size: int):
        vkdev = queue.vk
        self.mems = (mem,)
        r = mem.region(vkdev)
        self.dst, self.offset, self.size = r.buffer, r.offset + offset, size
        self.word = None
        if len(pattern) <= 4 and self.offset % 4 == 0 and size % 4 == 0:
            self.word = int.from_bytes(pattern * (4 // len(pattern)), "little")
            return
        from vkcl.core.builtins import builtin_kernels, pack_args
        kernels = builtin_kernels(queue.device, vkdev)
        if len(pattern) <= 16:
            self.plan = kernels.fill_16
            values = {3: pattern * (16 // len(pattern))}
        else:  # 32-128 bytes: the kernel reads the pattern from memory
            self.plan = kernels.fill_pattern
            st = self._stage(vkdev, len(pattern), MemoryKind.STAGING)
            ffi.memmove(st.host_ptr, pattern, len(pattern))
            if not st.coherent:
                self.allocator.flush(st)
            values = {3: st.address, 4: len(pattern).to_bytes(4, "little")}
        values.update({0: r.address, 1: offset.to_bytes(8, "little"), 2: size.to_bytes(8, "little")})
        self.pc = pack_args(self.plan, values)

    def record(self, cb) -> None:
        if self.word is not None:
            vkc.fill_buffer(cb, self.dst, self.offset, self.size, self.word)
        else:
            from vkcl.core.builtins import record_dispatch
            record_dispatch(cb, self.plan, self.pc, -(-self.size // 16))

    def complete(self) -> None:
        self._free_staging()


class MapBuffer(_Staged):
    """Map: direct host access where the buffer is host-visible, else a staging copy."""

    command_type = cl.CL_COMMAND_MAP_BUFFER

    def __init__(self, vkdev, mem: MemObject, flags: int, offset: int, size: int):
        self.mem, self.size = mem, size
        self.mems = (mem,)
        invalidate = bool(flags & cl.CL_MAP_WRITE_INVALIDATE_REGION)
        self.copy_back_to_host_ptr = False
        self.copies = []
        if direct_host_access(mem, vkdev):
            r = mem.region(vkdev)
            ptr = int(ffi.cast("uintptr_t", r.host_ptr)) + offset
            self.gpu_work = False
            self.mapping = Mapping(ptr, offset, size, flags, None, True)
        else:
            st = self._stage(vkdev, max(size, 1), MemoryKind.READBACK)
            self.allocator.start_cuda(size)  # its copies may be CUDA's (vulkan/cuda_copy.py)
            r = mem.region(vkdev)
            self.src = r.buffer
            if not invalidate:
                self.copies = [(r.offset + offset, st.offset, size)]
            if mem.flags & cl.CL_MEM_USE_HOST_PTR:  # spec: the pointer is host_ptr + offset
                ptr = mem.host_ptr + offset
                self.copy_back_to_host_ptr = not invalidate
            else:
                ptr = int(ffi.cast("uintptr_t", st.host_ptr))
            self.gpu_work = bool(self.copies)
            self.mapping = Mapping(ptr, offset, size, flags, st, False)
        mem.add_mapping(self.mapping)

    @property
    def pointer(self):
        return ffi.cast("void *", self.mapping.ptr)

    def record(self, cb) -> None:
        if self.copies:
            vkc.copy_buffer(cb, self.src, self.staging.buffer, self.copies)

    def complete(self) -> None:
        st = self.staging
        if st is not None and self.copies:
            if not st.coherent:
                self.allocator.invalidate(st)
            if self.copy_back_to_host_ptr:
                ffi.memmove(ffi.cast("char *", self.mapping.ptr), st.host_ptr, self.size)
        self.staging = None  # owned by the mapping until unmapped
        self.mem = None

    def discard(self) -> None:
        self.mem.take_mapping(self.mapping.ptr)
        self._free_staging()


class UnmapBuffer(_Staged):
    command_type = cl.CL_COMMAND_UNMAP_MEM_OBJECT

    def __init__(self, vkdev, mem: MemObject, mapping: Mapping):
        self.mapping = mapping
        self.mems = (mem,)
        self.copies = []
        self.gpu_work = False
        if not mapping.direct:
            self.allocator = allocator_for(vkdev)
            self.staging = st = mapping.staging
            if mapping.writes:
                if mem.flags & cl.CL_MEM_USE_HOST_PTR:
                    ffi.memmove(st.host_ptr, ffi.cast("char *", mapping.ptr), mapping.size)
                if not st.coherent:
                    self.allocator.flush(st)
                r = mem.region(vkdev)
                self.dst = r.buffer
                self.copies = [(st.offset, r.offset + mapping.offset, mapping.size)]
                self.gpu_work = True

    def record(self, cb) -> None:
        if self.copies:
            vkc.copy_buffer(cb, self.staging.buffer, self.dst, self.copies)

    def complete(self) -> None:
        self._free_staging()
