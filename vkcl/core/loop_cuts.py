"""llvmpipe's loop cap made an error instead of wrong results (compiler/spirv_loop_cuts.py).

Kernels compiled for llvmpipe carry a probe that ORs 1 into a flag word of the device's when the
batch of work-items running it had spent llvmpipe's 65,535 loop back-edges, that is when some
loop of it was cut short. The word (host-visible memory: the flag, the probe's trip count 2, a
zero) is given to every pipeline by two specialization constants. The flag is the device's,
but a cut belongs to one command batch: each batch ends, on the device, by copying the flag to a
slot of its own and the zero over the flag (capture), so what a batch's completion reads
(Python's queue and C's fast path alike) is what its own launches flagged, however late the host
gets to it and whichever of the device's queues ran in between. A flagged batch fails its
launches with CL_OUT_OF_RESOURCES and a warning naming their kernels (core/queue.py,
icd/fast_path.c). Batches of one VkDevice run in submission order on its queue (lavapipe has
one), and the capture's barriers order it against the batches before and after.
"""
from __future__ import annotations

import threading

from vkcl import log
from vkcl.compiler import spirv_loop_cuts
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.device import per_device
from vkcl.vulkan.memory import MemoryKind, allocator_for

_log = log.get("queue")
ffi = vkc.ffi

FLAG, TRIPS, ZERO = 0, 4, 8      # byte offsets in the word
WORD_BYTES = 24  # bytes 16..24: the running dispatch's resume header (compiler/spirv_resume.py)
SLOTS_PER_BLOCK = 256


class Slot:
    """Where one open batch's capture of the flag goes (4 bytes of host-visible memory)."""
    __slots__ = ("buffer", "offset", "host")

    def __init__(self, alloc, index: int):
        self.buffer = alloc.buffer
        self.offset = alloc.offset + 4 * index
        self.host = ffi.cast("uint32_t *", alloc.host_ptr) + index


class LoopWord:
    def __init__(self, vkdev):
        self.allocator = allocator_for(vkdev)
        a = self.alloc = self.allocator.allocate(WORD_BYTES, MemoryKind.STAGING)
        if not a.coherent:
            raise RuntimeError("llvmpipe's staging memory is coherent")
        words = (0, spirv_loop_cuts.PROBE_TRIPS, 0, 0, 0, 0)  # then the header address of core/resume.py
        ffi.memmove(a.host_ptr, b"".join(w.to_bytes(4, "little") for w in words), WORD_BYTES)
        self.lock = threading.Lock()
        self.blocks: list = []
        self.free: list[Slot] = []

    def spec(self) -> dict[int, int]:
        address = self.alloc.address + FLAG
        return {spirv_loop_cuts.SPEC_WORD[0]: address & 0xFFFFFFFF, spirv_loop_cuts.SPEC_WORD[1]: address >> 32}

    def take_slot(self) -> Slot:
        """A slot for a batch being opened (clear: its capture has not run)."""
        with self.lock:
            if not self.free:
                block = self.allocator.allocate(4 * SLOTS_PER_BLOCK, MemoryKind.STAGING)
                ffi.memmove(block.host_ptr, bytes(4 * SLOTS_PER_BLOCK), 4 * SLOTS_PER_BLOCK)
                self.blocks.append(block)
                self.free = [Slot(block, i) for i in reversed(range(SLOTS_PER_BLOCK))]
            return self.free.pop()

    def give_back(self, slot: Slot) -> None:
        slot.host[0] = 0
        with self.lock:
            self.free.append(slot)

    def capture(self, cb, slot: Slot) -> None:
        """At the end of a batch: the flag to the batch's slot, the zero over the flag. The first
        barrier makes the batch's probes visible to the copy, the second orders the clearing
        before the probes of later batches (a pipeline barrier's scopes reach commands submitted
        before and after it on the queue)."""
        vkc.full_barrier(cb)
        vkc.copy_buffer(cb, self.alloc.buffer, slot.buffer, [(self.alloc.offset + FLAG, slot.offset, 4)])
        vkc.copy_buffer(cb, self.alloc.buffer, self.alloc.buffer,
                        [(self.alloc.offset + ZERO, self.alloc.offset + FLAG, 4)])
        vkc.full_barrier(cb)

    @staticmethod
    def cut(slot: Slot) -> bool:
        """Whether the batch whose capture went to `slot` cut a loop (read once it completed;
        the slot is cleared for the batch's next use, as C's batches reuse theirs)."""
        if not slot.host[0]:
            return False
        slot.host[0] = 0
        return True


def word_for(vkdev) -> LoopWord:
    return per_device("loop_word", vkdev, LoopWord)


def warn(kernels: list[str]) -> None:
    _log.warning("kernel(s) %s ran a loop past llvmpipe's 65,535 back-edges per batch of work-items, which "
                 "llvmpipe cuts short: their results are wrong, so their events fail with CL_OUT_OF_RESOURCES "
                 "(docs/status.md, Known runtime gaps)", ", ".join(sorted(set(kernels))))
