"""Device memory: large VkDeviceMemory blocks, each bound to one VkBuffer, carved into ranges.

An OpenCL buffer is a range of a block: (the block's VkBuffer, offset, size), its device
address (block address + offset, what clspv's physical-addressing kernels take) and, when the
memory is host-visible, a pointer into the block's persistent mapping. Thousands of small
cl_mem objects therefore cost a few vkAllocateMemory calls, not thousands.

Blocks of one memory type form a pool (memory_pool.py: a TLSF-lite free list with coalescing).
Requests larger than a quarter of the block size get a dedicated block of their own. A block
that becomes empty is kept as the pool's one spare; a second empty block is freed at once.
The heap sizes the driver reports are enforced here: lavapipe itself accepts allocations far
beyond its heap (it overcommits, and touching the memory would kill the process).
"""
from __future__ import annotations

import threading

from vkcl import config, log, native
from vkcl._gen import cl
from vkcl.vulkan import memory_vk as raw
from vkcl.vulkan.check import VulkanError
from vkcl.vulkan.memory_pool import Block, ImportedPool, Pool
from vkcl.vulkan.memory_types import HOST_COHERENT, HOST_VISIBLE, MemoryKind, candidate_types, import_type

__all__ = ["MemoryKind", "Allocation", "AllocationFailed", "Allocator", "allocator_for"]

_log = log.get("vk")

DEFAULT_BLOCK_SIZE = 64 << 20
MIN_BLOCK_SIZE = 1 << 20


class AllocationFailed(MemoryError):
    """No memory for a request; `cl_code` is what clCreateBuffer reports."""

    def __init__(self, cl_code: int = cl.CL_MEM_OBJECT_ALLOCATION_FAILURE, message: str = ""):
        super().__init__(message or f"allocation failed (CL error {cl_code})")
        self.cl_code = self.code = cl_code


class Allocation:
    """A range of a block. Plain attributes; `offset` is relative to `buffer`."""

    __slots__ = ("buffer", "offset", "size", "address", "host_ptr", "host_visible", "coherent", "kind",
                 "_block", "_span")

    def __init__(self, block: Block, offset: int, size: int, span: int, kind: MemoryKind):
        self.buffer = block.buffer
        self.offset = offset
        self.size = size
        self.address = block.address + offset
        host = block.host
        self.host_ptr = None if host is None else host + offset
        self.host_visible = block.host_visible
        self.coherent = block.coherent
        self.kind = kind
        self._block = block
        self._span = span

    @property
    def memory(self):
        """The VkDeviceMemory of the block (None once freed)."""
        return None if self._block is None else self._block.memory

    @property
    def cuda_slot(self):
        """Where C reads the CUDA address of the block's memory (vulkan/cuda_copy.py); None when
        CUDA never sees it."""
        return None if self._block is None else self._block.cuda_slot

    @property
    def memory_offset(self) -> int:
        """Offset of the first byte within `memory` (blocks bind their buffer at 0)."""
        return self.offset

    def __repr__(self) -> str:
        return (f"Allocation({self.kind.name}, offset={self.offset}, size={self.size}, "
                f"address={self.address:#x}, host={'yes' if self.host_ptr is not None else 'no'})")


class _KindState:
    __slots__ = ("kind", "pools", "used", "count")

    def __init__(self, kind: MemoryKind, pools: list):
        self.kind, self.pools = kind, pools
        self.used = self.count = 0


def _pow2_ceil(n: int) -> int:
    return 1 << (n - 1).bit_length()


class Allocator:
    """Sub-allocates buffers of one LogicalDevice. Thread-safe (one lock)."""

    def __init__(self, device, block_size: int | None = None, keep_spare: bool = True):
        self.device = device
        self._handle = device.handle
        pd = device.physical
        self._pd = pd
        self._lock = threading.Lock()
        self.keep_spare = keep_spare
        if block_size is None:
            mb = config.get("memory_block_mb")  # a VKCL_MEMORY_BLOCK_MB setting, where config declares one
            block_size = int(mb) << 20 if mb else DEFAULT_BLOCK_SIZE
        self._max_size = min(pd.max_memory_allocation_size or 1 << 62, pd.max_buffer_size or 1 << 62)
        self._heap_size = [size for size, _ in pd.memory_heaps]
        self._heap_reserved = [0] * len(self._heap_size)
        min_align = pd.limits.get("minStorageBufferOffsetAlignment", 16)
        self.granularity = max(256, _pow2_ceil(max(1, min_align)))
        self._atom = _pow2_ceil(max(1, pd.limits.get("nonCoherentAtomSize", 256)))
        self._next_id = 1
        self._imported: dict[int, Block] = {}
        self._importer: raw.HostImporter | None = None
        self.cuda = getattr(device, "cuda_copies", None)  # vulkan/cuda_copy.py's, on NVIDIA GPUs

        allowed, base_align = self._probe_requirements()
        self._pools: dict = {}  # memory type index (or (index, "unmapped")) -> Pool
        self._kinds: dict[MemoryKind, _KindState] = {}
        unmapped_device = pd.is_uma and not config.get("map_device_memory")
        for kind in MemoryKind:
            types = candidate_types(kind, pd.memory_types, pd.memory_heaps, allowed, pd.is_uma)
            if not types:  # not seen: the spec promises a device-local and a host-coherent type
                _log.warning("no memory type suits %s memory; using any the buffers allow", kind.name)
                types = [t for t in range(len(pd.memory_types)) if allowed >> t & 1]
            unmapped = unmapped_device and kind is MemoryKind.DEVICE
            pools = []
            for t in types:
                key = (t, "unmapped") if unmapped else t
                pool = self._pools.get(key)
                if pool is None:
                    flags, heap = pd.memory_types[t]
                    gran = self.granularity if flags & HOST_COHERENT else max(self.granularity, self._atom)
                    # At most an eighth of a small heap (a 256 MiB BAR window) per block.
                    size = min(block_size, max(MIN_BLOCK_SIZE, self._heap_size[heap] // 8), self._max_size)
                    size = max(gran, size // gran * gran)
                    pool = self._pools[key] = Pool(t, flags & ~HOST_VISIBLE if unmapped else flags, heap, gran,
                                                   base_align, size)
                pools.append(pool)
            self._kinds[kind] = _KindState(kind, pools)
            _log.debug("memory kind %s -> types %s", kind.name, types)

    # -- hot path ------------------------------------------------------------------------------

    def allocate(self, size: int, kind: MemoryKind = MemoryKind.DEVICE, alignment: int = 256) -> Allocation:
        """A range of at least `size` bytes whose device address is a multiple of `alignment`
        and of the granularity, max(256, minStorageBufferOffsetAlignment). Raises
        AllocationFailed (CL_MEM_OBJECT_ALLOCATION_FAILURE) when no memory can be had."""
        if size <= 0:
            raise ValueError(f"allocation size must be positive, not {size}")
        if alignment & (alignment - 1) or alignment < 0:
            raise ValueError(f"alignment must be a power of two, not {alignment}")
        ks = self._kinds[kind]
        pool = ks.pools[0]
        gran = pool.granularity
        span = (size + gran - 1) & -gran
        if alignment <= gran and span <= pool.dedicated_threshold:  # the common case
            with self._lock:
                found = pool.carve(span, gran)
                if found is not None:
                    block, offset = found
                    block.count += 1
                    ks.used += size
                    ks.count += 1
                    return Allocation(block, offset, size, span, kind)
        return self._allocate(size, ks, alignment)

    def _allocate(self, size: int, ks: _KindState, alignment: int) -> Allocation:
        """Dedicated blocks, new blocks, large alignments, and the fallback memory types."""
        failure = None
        with self._lock:
            for pool in ks.pools:
                gran = pool.granularity
                span = (size + gran - 1) & -gran
                align = alignment if alignment > gran else gran
                try:
                    if span + align - gran > pool.dedicated_threshold:
                        block, offset = self._dedicated(pool, span, align)
                    else:
                        found = pool.carve(span, align)
                        if found is None:
                            self._grow(pool, span + align - gran)
                            found = pool.carve(span, align)
                            if found is None:
                                raise AllocationFailed(cl.CL_OUT_OF_RESOURCES, "new block does not fit")
                        block, offset = found
                except AllocationFailed as e:
                    failure = e
                    continue
                block.count += 1
                ks.used += size
                ks.count += 1
                return Allocation(block, offset, size, span, ks.kind)
        raise AllocationFailed(failure.cl_code if failure else cl.CL_MEM_OBJECT_ALLOCATION_FAILURE,
                               f"cannot allocate {size} bytes of {ks.kind.name} memory: {failure}")

    def free(self, a: Allocation) -> None:
        """Return `a` to its block (ranges coalesce; a second empty block is released)."""
        with self._lock:
            block = a._block
            if block is None:
                raise ValueError("allocation freed twice")
            a._block = None
            pool = block.pool
            if pool is None:  # the allocator was destroyed meanwhile
                return
            ks = self._kinds[a.kind]
            ks.used -= a.size
            ks.count -= 1
            block.count -= 1
            if block.dedicated:
                self._retire_dedicated(pool, block)
            elif pool.release(block, a.offset, a._span):
                if pool.spare is None and self.keep_spare:
                    pool.spare = block
                else:
                    self._destroy_block(block)

    # -- blocks --------------------------------------------------------------------------------

    def _grow(self, pool: Pool, need: int) -> None:
        """Add a block that can hold `need` bytes: the pool's block size, or smaller if the
        heap is short. Raises AllocationFailed."""
        size = pool.block_size
        failure = None
        while True:
            try:
                block = self._create_block(pool, size)
                break
            except AllocationFailed as e:
                failure = e
            if size // 2 < max(need + pool.granularity, MIN_BLOCK_SIZE):
                raise failure
            size //= 2
        pool.add_block(block)

    # Large host-visible blocks are kept for reuse: staging for maps and transfers of big
    # buffers would otherwise allocate, pin and free hundreds of MiB each time.
    RECYCLE_BYTES = 1 << 30

    def _retire_dedicated(self, pool: Pool, block: Block) -> None:
        recycled = getattr(pool, "recycled", None)
        if recycled is not None and pool.host_visible and not block.imported and \
                sum(b.size for b in recycled) + block.size <= self.RECYCLE_BYTES:
            del pool.blocks[block.id]
            recycled.append(block)
        else:
            self._destroy_block(block)

    def _dedicated(self, pool: Pool, span: int, align: int):
        extra = align - pool.base_align if align > pool.base_align else 0
        recycled = pool.recycled
        fits = [b for b in recycled if span + extra <= b.size <= 2 * (span + extra)]
        if fits:
            block = min(fits, key=lambda b: b.size)
            recycled.remove(block)
            pool.blocks[block.id] = block
            block.count = 1
            offset = -block.address & (align - 1)
            block.used = span
            return block, offset
        block = self._create_block(pool, span + extra, dedicated=True)
        pool.blocks[block.id] = block
        offset = -block.address & (align - 1)
        block.used = span
        return block, offset

    def _create_block(self, pool: Pool, size: int, dedicated: bool = False) -> Block:
        if size > self._max_size:
            raise AllocationFailed(message=f"{size} bytes exceed the device's largest allocation "
                                           f"({self._max_size})")
        heap = pool.heap
        if self._heap_reserved[heap] + size > self._heap_size[heap]:
            self._release_spares(heap)
            self._release_recycled()
            if self._heap_reserved[heap] + size > self._heap_size[heap]:
                raise AllocationFailed(message=f"memory heap {heap} is full: {self._heap_reserved[heap]} "
                                               f"of {self._heap_size[heap]} bytes in use, {size} more asked")
        export = self.cuda is not None and not pool.host_visible  # buffer memory CUDA may copy into
        try:
            rb = raw.create_block(self._handle, size, pool.type_index, pool.host_visible, dedicated, export)
        except VulkanError as e:
            raise AllocationFailed(_cl_code(e), str(e)) from e
        block = self._new_block(rb, pool, size)
        block.dedicated = dedicated
        if export:
            block.cuda_slot = self.cuda.new_slot()
        if rb.host is not None and block.coherent and native.lib is not None:
            # C's blocking transfers copy straight from and to it (icd/fast_path.c)
            native.lib.vkcl_host_block_add(native.pointer(raw.ffi, self._handle), native.pointer(raw.ffi, rb.buffer),
                                           native.pointer(raw.ffi, rb.host), size)
        if self.cuda is not None:
            self.cuda.block_created(block)
        self._heap_reserved[heap] += rb.reserved
        _log.debug("new %s block of %d bytes in memory type %d at %#x", "dedicated" if dedicated else "pool",
                   size, pool.type_index, block.address)
        return block

    def _new_block(self, rb: raw.RawBlock, pool, size: int) -> Block:
        block = Block(self._next_id, pool, rb.buffer, rb.memory, size, rb.reserved, rb.address, rb.host)
        self._next_id += 1
        return block

    def _destroy_block(self, block: Block, unlink: bool = True) -> None:
        pool = block.pool
        if block.imported:
            self._imported.pop(block.id, None)
        else:
            if unlink:
                pool.unlink(block)
            self._heap_reserved[pool.heap] -= block.reserved
        if block.host is not None and not block.imported and native.lib is not None:
            native.lib.vkcl_host_block_remove(native.pointer(raw.ffi, block.host))
        if block.cuda is not None:
            self.cuda.block_destroyed(block)
        raw.destroy(self._handle, block.buffer, block.memory)
        block.pool = block.host = None
        _log.debug("freed block of %d bytes (memory type %s)", block.size,
                   "imported" if block.imported else pool.type_index)

    def start_cuda(self, size: int) -> None:
        """The application made `size` bytes of pinned memory (an ALLOC_HOST_PTR buffer, a map's
        staging): where the device has CUDA copies and the size is worth one, start them."""
        cuda = self.cuda
        if cuda is not None and cuda.state == "idle" and size >= cuda.min_size:
            with self._lock:
                if cuda.state == "idle":
                    cuda.start([b for pool in self._pools.values() for b in (*pool.blocks.values(), *pool.recycled)])

    def _release_spares(self, heap: int | None = None, keep: int = 0) -> None:
        for pool in self._pools.values():
            if heap is not None and pool.heap != heap:
                continue
            empty = [b for b in pool.blocks.values() if not b.dedicated and not b.used]
            empty.sort(key=lambda b: b is not pool.spare)  # the designated spare is kept first
            for block in empty[keep:]:
                self._destroy_block(block)
            if keep and pool.spare is None and empty[:keep]:
                pool.spare = empty[0]

    # -- non-coherent memory -------------------------------------------------------------------

    def flush(self, a: Allocation, offset: int = 0, size: int | None = None) -> None:
        """Make host writes to [offset, offset+size) of `a` visible to the device (non-coherent memory)."""
        if not a.coherent and a.host_visible:
            self._mapped_range(True, a, offset, size)

    def invalidate(self, a: Allocation, offset: int = 0, size: int | None = None) -> None:
        """Make device writes to [offset, offset+size) of `a` visible to the host (non-coherent memory)."""
        if not a.coherent and a.host_visible:
            self._mapped_range(False, a, offset, size)

    def _mapped_range(self, flush: bool, a: Allocation, offset: int, size: int | None) -> None:
        block = a._block
        if block is None or block.pool is None:
            raise ValueError("allocation is freed")
        if size is None:
            size = a.size - offset
        atom = self._atom
        start = (a.offset + offset) // atom * atom
        end = min(-(-(a.offset + offset + size) // atom) * atom, block.reserved)
        raw.mapped_range(self._handle, flush, block.memory, start, end - start)

    def find_host(self, ptr: int, size: int):
        """(VkBuffer, offset) when [ptr, ptr + size) lies in the mapping of one of this
        allocator's host-visible blocks (a mapped CL_MEM_ALLOC_HOST_PTR buffer used as the
        host side of a transfer): the GPU then copies it directly. None otherwise."""
        with self._lock:
            for pool in self._pools.values():
                if not pool.host_visible:
                    continue
                for block in pool.blocks.values():
                    if block.host is None:
                        continue
                    base = int(raw.ffi.cast("uintptr_t", block.host))
                    if base <= ptr and ptr + size <= base + block.size:
                        return block.buffer, ptr - base
        return None

    # -- host memory import (VK_EXT_external_memory_host) --------------------------------------

    @property
    def import_alignment(self) -> int | None:
        """minImportedHostPointerAlignment, or None when the device cannot import host memory."""
        if self._importer is None and self.device.has_extension("VK_EXT_external_memory_host"):
            self._importer = raw.HostImporter(self._handle, self._pd.handle)
        return self._importer.alignment if self._importer is not None else None

    def import_host(self, ptr: int, size: int) -> Allocation | None:
        """Wrap `size` bytes of host memory at `ptr` as a buffer the device reads and writes in
        place; None when the device cannot (no extension, pointer not aligned to
        import_alignment, driver refusal): the caller then copies. The memory must outlive the
        allocation; freeing the allocation leaves it alone."""
        if size <= 0:
            raise ValueError(f"import size must be positive, not {size}")
        if not self.import_alignment:
            return None
        types = self._pd.memory_types
        got = self._importer.import_block(ptr, size, self._max_size, lambda bits: import_type(types, bits))
        if got is None:
            _log.debug("import_host: %d bytes at %#x cannot be imported", size, ptr)
            return None
        rb, type_index, rounded = got
        with self._lock:
            block = self._new_block(rb, _IMPORTED, rounded)
            block.coherent = bool(types[type_index][0] & HOST_COHERENT)
            block.used, block.count = rounded, 1
            block.dedicated = block.imported = True
            self._imported[block.id] = block
            ks = self._kinds[MemoryKind.DEVICE]
            ks.used += size
            ks.count += 1
        return Allocation(block, 0, size, rounded, MemoryKind.DEVICE)

    # -- bookkeeping ---------------------------------------------------------------------------

    def stats(self) -> dict:
        """Bytes reserved and used, per kind and per memory type; block and allocation counts.

        Kinds served by the same memory type (all of them on lavapipe) share its blocks, so
        their `reserved` figures are those of the shared pools."""
        with self._lock:
            types = {t: pool.stats() for t, pool in self._pools.items()}
            kinds = {}
            for kind, ks in self._kinds.items():
                primary = ks.pools[0].type_index if ks.pools else None
                kinds[kind.name] = {
                    "memory_type": primary, "used": ks.used, "allocations": ks.count,
                    "reserved": sum(types[p.type_index]["reserved"] for p in ks.pools),
                }
            imported = list(self._imported.values())
            return {
                "blocks": sum(v["blocks"] for v in types.values()),
                "dedicated": sum(v["dedicated"] for v in types.values()),
                "allocations": sum(v["allocations"] for v in types.values()) + len(imported),
                "reserved": sum(v["reserved"] for v in types.values()),
                "used": sum(v["used"] for v in types.values()),
                "imported": len(imported), "imported_bytes": sum(b.size for b in imported),
                "heaps": [{"size": s, "reserved": r} for s, r in zip(self._heap_size, self._heap_reserved)],
                "kinds": kinds, "memory_types": types,
            }

    def trim(self, keep_spare: bool = True) -> None:
        """Free empty blocks, keeping at most one spare per pool (none with keep_spare=False)."""
        with self._lock:
            self._release_spares(keep=1 if keep_spare and self.keep_spare else 0)
            self._release_recycled()

    def _release_recycled(self) -> None:
        for pool in self._pools.values():
            for block in pool.recycled:
                self._destroy_block(block, unlink=False)
            pool.recycled = []

    def destroy(self) -> None:
        """Free every block and import. Outstanding allocations become invalid (freeing one is
        then a no-op); the allocator itself stays usable."""
        with self._lock:
            self._release_recycled()
            for pool in self._pools.values():
                for block in list(pool.blocks.values()):
                    self._destroy_block(block, unlink=False)
                pool.clear()
            for block in list(self._imported.values()):
                self._destroy_block(block)
            for ks in self._kinds.values():
                ks.used = ks.count = 0

    def _probe_requirements(self) -> tuple[int, int]:
        """memoryTypeBits and alignment of the buffers blocks will bind (the same for any size)."""
        buf = raw.create_buffer(self._handle, 4096)
        try:
            _, alignment, bits = raw.requirements(self._handle, buf)
            return bits, alignment
        finally:
            raw.destroy(self._handle, buf, None)


_IMPORTED = ImportedPool()


def _cl_code(e: VulkanError) -> int:
    # VK_ERROR_OUT_OF_HOST_MEMORY / _DEVICE_MEMORY: the buffer's memory; anything else: resources.
    return cl.CL_MEM_OBJECT_ALLOCATION_FAILURE if e.result in (-1, -2) else cl.CL_OUT_OF_RESOURCES


_allocators: dict[int, tuple] = {}
_allocators_lock = threading.Lock()


def allocator_for(device) -> Allocator:
    """The Allocator of `device`, created on first use."""
    entry = _allocators.get(id(device))
    if entry is None or entry[0] is not device:
        with _allocators_lock:
            entry = _allocators.get(id(device))
            if entry is None or entry[0] is not device:
                entry = _allocators[id(device)] = (device, Allocator(device))
    return entry[1]
