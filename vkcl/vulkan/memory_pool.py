"""The free-range bookkeeping of the memory allocator: pure Python, no Vulkan calls.

A pool holds the blocks of one memory type and their free ranges in a TLSF-lite structure:
ranges are binned by floor(log2(size)), a bit mask says which bins are non-empty, and dicts
keyed by a range's start and end make coalescing on release O(1). A range's key is
`block id << 40 | offset`, so one set of dicts serves every block of the pool.

Ranges are cut from the top of a free range: the remainder keeps its key (and usually its
bin), so the common allocate/release pair costs a handful of dict updates.
"""
from __future__ import annotations

from vkcl.vulkan.memory_types import HOST_COHERENT, HOST_VISIBLE

OFFSET_BITS = 40  # 1 TiB per block is plenty
_SCAN = 8  # ranges examined in the bin of the request's own size class before going up a bin


class Block:
    """One VkDeviceMemory bound to one VkBuffer (at offset 0), with its device address and mapping.

    Pool blocks serve many ranges from [origin, origin + usable); dedicated and imported
    blocks serve one allocation. `pool` is None once the block is destroyed."""

    __slots__ = ("id", "key_base", "pool", "buffer", "memory", "size", "reserved", "address", "host",
                 "host_visible", "coherent", "origin", "usable", "used", "count", "dedicated", "imported",
                 "cuda_slot", "cuda")

    def __init__(self, block_id: int, pool, buffer, memory, size: int, reserved: int, address: int, host):
        self.id, self.key_base, self.pool = block_id, block_id << OFFSET_BITS, pool
        self.buffer, self.memory, self.size, self.reserved = buffer, memory, size, reserved
        self.address, self.host = address, host
        self.host_visible, self.coherent = pool.host_visible, pool.coherent
        self.origin, self.usable = 0, size
        self.used = self.count = 0
        self.dedicated = self.imported = False
        self.cuda_slot = self.cuda = None  # vulkan/cuda_copy.py's: where C reads its CUDA address, its CUDA state


class Pool:
    """The blocks of one memory type and their free ranges."""

    def __init__(self, type_index, flags: int, heap: int, granularity: int, base_align: int, block_size: int):
        self.type_index, self.flags, self.heap = type_index, flags, heap
        self.host_visible = bool(flags & HOST_VISIBLE)
        self.coherent = bool(flags & HOST_COHERENT)
        self.granularity = granularity      # every range's size and address are multiples of this
        self.base_align = base_align        # VkMemoryRequirements.alignment of a block's buffer
        self.block_size = block_size
        self.dedicated_threshold = block_size // 4
        self.recycled: list = []  # emptied dedicated host-visible blocks kept for reuse
        self.blocks: dict[int, Block] = {}
        self.bins: list[dict] = [{} for _ in range(64)]  # size class -> {start key: None}
        self.mask = 0                                     # bit c set <=> bins[c] is not empty
        self.free: dict[int, int] = {}                    # start key -> size
        self.ends: dict[int, int] = {}                    # end key -> start key
        self.spare: Block | None = None                   # the one empty block kept for reuse

    def insert(self, key: int, size: int) -> None:
        self.free[key] = size
        self.ends[key + size] = key
        c = size.bit_length() - 1
        self.bins[c][key] = None
        self.mask |= 1 << c

    def remove(self, key: int) -> int:
        size = self.free.pop(key)
        del self.ends[key + size]
        c = size.bit_length() - 1
        b = self.bins[c]
        del b[key]
        if not b:
            self.mask &= ~(1 << c)
        return size

    def _rebin(self, key: int, old: int, new: int) -> None:
        c0, c1 = old.bit_length() - 1, new.bit_length() - 1
        bins = self.bins
        del bins[c0][key]
        if not bins[c0]:
            self.mask &= ~(1 << c0)
        bins[c1][key] = None
        self.mask |= 1 << c1

    def add_block(self, block: Block) -> None:
        """Make a new pool block's space available, starting at a granularity-aligned address."""
        gran = self.granularity
        block.origin = -block.address & (gran - 1)
        block.usable = (block.size - block.origin) // gran * gran
        self.blocks[block.id] = block
        self.insert(block.key_base + block.origin, block.usable)

    def unlink(self, block: Block) -> None:
        """Forget an empty (or dedicated) block before it is destroyed."""
        if not block.dedicated:
            self.remove(block.key_base + block.origin)
        if self.spare is block:
            self.spare = None
        del self.blocks[block.id]

    def carve(self, span: int, align: int):
        """Take `span` bytes at an `align`-aligned address; (block, offset) or None if no free
        range fits. span is a multiple of the granularity, align a power of two >= it."""
        need = span + align - self.granularity  # room for the worst-case alignment padding
        k = need.bit_length() - 1
        bins, free = self.bins, self.free
        key = None
        b = bins[k]
        if b:  # ranges of need's own size class may be too small: look at a few
            n = 0
            for candidate in b:
                if free[candidate] >= need:
                    key = candidate
                    break
                n += 1
                if n == _SCAN:
                    break
        if key is None:  # every range in a higher class fits
            m = self.mask >> (k + 1)
            if not m:
                return None
            key = next(iter(bins[k + (m & -m).bit_length()]))
        size = free[key]
        block = self.blocks[key >> 40]  # OFFSET_BITS
        end = key + size
        if align == self.granularity:  # every range's end address is aligned to that already
            start = end - span
        else:
            base = block.key_base - block.address  # key == address + base within this block
            start = ((end - base - span) & -align) + base
        head = start - key
        del self.ends[end]
        if head:  # the rest of the range stays where it is, under the same key
            free[key] = head
            self.ends[start] = key
            if size.bit_length() != head.bit_length():
                self._rebin(key, size, head)
        else:
            del free[key]
            c = size.bit_length() - 1
            del bins[c][key]
            if not bins[c]:
                self.mask &= ~(1 << c)
        tail = end - start - span
        if tail:  # alignment above the granularity left a gap above the range
            self.insert(start + span, tail)
        if not block.used and block is self.spare:
            self.spare = None
        block.used += span
        return block, start - block.key_base

    def release(self, block: Block, offset: int, span: int) -> bool:
        """Give back a range, merging it with free neighbours; True if the block is now empty."""
        key = block.key_base + offset
        block.used -= span
        free, ends = self.free, self.ends
        end = key + span
        if end in free:  # merge the free range above
            span += self.remove(end)
            end = key + span
        prev = ends.pop(key, None)
        if prev is None:
            free[key] = span
            ends[end] = key
            c = span.bit_length() - 1
            self.bins[c][key] = None
            self.mask |= 1 << c
        else:  # grow the free range below in place
            old = free[prev]
            new = free[prev] = old + span
            ends[end] = prev
            if old.bit_length() != new.bit_length():
                self._rebin(prev, old, new)
        return not block.used

    def clear(self) -> None:
        self.blocks.clear()
        self.free.clear()
        self.ends.clear()
        for b in self.bins:
            b.clear()
        self.mask = 0
        self.spare = None

    def stats(self) -> dict:
        blocks = list(self.blocks.values())
        return {
            "heap": self.heap, "block_size": self.block_size,
            "blocks": sum(1 for b in blocks if not b.dedicated),
            "dedicated": sum(1 for b in blocks if b.dedicated),
            "empty_blocks": sum(1 for b in blocks if not b.dedicated and not b.used),
            "reserved": sum(b.reserved for b in blocks),
            "used": sum(b.used for b in blocks),
            "allocations": sum(b.count for b in blocks),
            "free_ranges": len(self.free),
        }


class ImportedPool:
    """The owner of imported host-memory blocks (one allocation each)."""

    type_index = "imported"
    host_visible = True
    coherent = True
