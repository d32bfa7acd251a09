"""Long loops on llvmpipe resumed in later dispatches (compiler/spirv_resume.py).

A kernel whose outermost loops may suspend records each dispatch behind the address of a
header of its own, written into the device's loop word (core/loop_cuts.py, byte 16) by two
fills; the header (host-visible) tells the kernel the launch's epoch, the pass, the dispatch's
geometry and where the work-items' records lie, and a work-item that suspends sets its loop's
bit there. The queue (core/queue.py) submits such a launch at once and holds what follows it;
when its batch completes and a bit is set, it records the dispatches again (the next pass: a
dispatch once for each loop suspended in it, with that loop's pipeline) and submits, until no
work-item suspends; then the launch completes and what was held goes on.
Each queue has one ResumeState: its headers and records serve one launch at a time, which the
holding guarantees.
"""
from __future__ import annotations

import struct

from vkcl.compiler import spirv_resume_state as layout
from vkcl.core import loop_cuts
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.memory import MemoryKind, allocator_for

ffi = vkc.ffi
_HEADER = struct.Struct("<IIIIQ3I2I4xQI2I4x")
assert _HEADER.size == layout.HEADER


class ResumeState:
    """A queue's headers and record area, grown as launches need."""

    def __init__(self, vkdev):
        self.vk = vkdev
        self.allocator = allocator_for(vkdev)
        self.word = loop_cuts.word_for(vkdev)
        self.headers = self.area = None
        self.epoch = 0

    def begin(self, launch, stride: int, local_bytes: int = 0, lanes: int = 0) -> "Resumption":
        """The headers of a new launch's first pass: its dispatches' records laid end to end,
        then, for kernels whose work-groups suspend together (`lanes`: llvmpipe's batch of
        work-items) and save their local memory (`local_bytes` of it), an area per work-group
        of four times that (a word per byte at most: a char takes a word).

        A work-group whose width is not a multiple of llvmpipe's batch (`lanes`) has extra
        lanes, which miss the group's votes; the kernel's own can suspend only where they
        return at once (compiler/spirv_extra_lanes.py, which gives every clspv kernel the
        group's width). Where it could not, pass `lanes` (the batch's width): dispatches of
        such groups get no header, so they never suspend (their long loops are cut, and
        fail)."""
        n = len(launch.dispatches)
        groups = [count[0] * count[1] * count[2] for _, _, _, count in launch.dispatches]
        items = [size * g for size, g in zip(launch.group_sizes, groups)]
        local_stride = -(-4 * local_bytes // 8) * 8
        records = stride * sum(items)
        self.headers = self._fit(self.headers, layout.HEADER * n, MemoryKind.STAGING)
        self.area = self._fit(self.area, max(8, records + local_stride * sum(groups)), MemoryKind.DEVICE)
        if not self.headers.coherent:
            raise RuntimeError("llvmpipe's staging memory is coherent")
        self.epoch = (self.epoch + 1) & 0xFFFFFFFF or 1
        at, local_at = self.area.address, self.area.address + records
        base_ptr = ffi.cast("char *", self.headers.host_ptr)
        for k, ((_, _, base, count), size) in enumerate(zip(launch.dispatches, launch.group_sizes)):
            lx, ly = launch.pipeline_args[k][0][:2]  # the work-group's size in x and y
            data = _HEADER.pack(0, self.epoch, 0, size, at, *base, count[0], count[1], local_at, local_stride, lx, ly)
            ffi.memmove(base_ptr + layout.HEADER * k, data, len(data))
            at += stride * items[k]
            local_at += local_stride * groups[k]
        r = Resumption(self, n)
        if lanes:
            r.disabled = {k for k in range(n) if launch.pipeline_args[k][0][0] % lanes}
        return r

    def _fit(self, alloc, size: int, kind: MemoryKind):
        if alloc is not None and alloc.size >= size:
            return alloc
        if alloc is not None:
            self.allocator.free(alloc)
        return self.allocator.allocate(size, kind)

    def point_at(self, cb, header_address: int) -> None:
        """Record: the word names this header for the dispatch that follows (and a barrier)."""
        w = self.word.alloc
        vkc.fill_buffer(cb, w.buffer, w.offset + layout.WORD_HEADER, 4, header_address & 0xFFFFFFFF)
        vkc.fill_buffer(cb, w.buffer, w.offset + layout.WORD_HEADER + 4, 4, header_address >> 32)
        vkc.full_barrier(cb)

    def free(self) -> None:
        for a in (self.headers, self.area):
            if a is not None:
                self.allocator.free(a)
        self.headers = self.area = None


class Resumption:
    """One launch's passes."""
    __slots__ = ("state", "count", "passes", "start_ns", "disabled", "active")

    def __init__(self, state: ResumeState, count: int):
        self.state, self.count = state, count
        self.disabled: set = set()  # dispatches given no header (they never suspend)
        # dispatch -> the numbers of the loops the next pass resumes there (a pipeline each):
        # those of its work-items that suspended, from the bits of its header's suspended word
        self.active: dict[int, list[int]] = {}
        self.passes = 0  # passes after the first
        self.start_ns = None  # the first pass's start (profiling)

    def header_address(self, k: int) -> int:
        return 0 if k in self.disabled else self.state.headers.address + layout.HEADER * k

    def _words(self):
        return ffi.cast("uint32_t *", self.state.headers.host_ptr)

    def suspended(self) -> bool:
        """Whether a work-item of the pass that completed suspended (read once it completed)."""
        words, step = self._words(), layout.HEADER // 4
        return any(words[step * k + layout.SUSPENDED // 4] for k in range(self.count))

    def next_pass(self) -> None:
        """The headers of the next pass: its number, the flags cleared."""
        self.passes += 1
        words, step = self._words(), layout.HEADER // 4
        self.active = {}
        for k in range(self.count):
            bits = words[step * k + layout.SUSPENDED // 4]
            if bits:
                self.active[k] = [n for n in range(1, 32) if bits >> n & 1]
        for k in range(self.count):
            words[step * k + layout.SUSPENDED // 4] = 0
            words[step * k + layout.PASS // 4] = self.passes
