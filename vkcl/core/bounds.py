"""VKCL_CHECK_BOUNDS at dispatch: the table of valid ranges a kernel instrumented by
vkcl.compiler.spirv_bounds checks its accesses against, and what it recorded.

One table per launch, in host-visible memory: its header and ranges are written before the
launch; after it, a fault count above zero fails the command (CL_OUT_OF_RESOURCES) with a
message naming the kernel, the nearest argument buffer, the byte offset from it and the
work-item, which goes to vkcl's log (warning) and to the context's pfn_notify.
"""
from __future__ import annotations


import struct

from vkcl import log
from vkcl._gen import cl
from vkcl.compiler import spirv_bounds as sb
from vkcl.errors import CLError
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.memory import MemoryKind

_log = log.get("queue")
ffi = vkc.ffi


class KernelFault(CLError):
    """A kernel's instrumented access fell outside every buffer it may reach."""


class BoundsTable:
    # Room for ranges known only when the launch is recorded: vkcl's own buffers that the
    # kernel's added code reaches (a resumed kernel's headers and save area, core/resume.py).
    SPARE = 2

    def __init__(self, allocator, ranges: list[tuple[int, int, str]]):
        """`ranges`: (base, end, what it is) for each buffer the kernel may reach."""
        self.allocator, self.ranges = allocator, [r for r in ranges if r[1] > r[0]]
        self.room = len(self.ranges) + self.SPARE
        self.alloc = allocator.allocate(sb.RANGES_AT + 16 * self.room, MemoryKind.STAGING)
        self._write()

    def add(self, ranges: list[tuple[int, int, str]]) -> None:
        """More ranges, before the launch runs (at most SPARE in all)."""
        ranges = [r for r in ranges if r[1] > r[0]]
        if len(self.ranges) + len(ranges) > self.room:
            raise ValueError("more bounds-table ranges than its room")
        self.ranges += ranges
        self._write()

    def _write(self) -> None:
        a, size = self.alloc, sb.RANGES_AT + 16 * len(self.ranges)
        data = bytearray(size)
        struct.pack_into("<II", data, 0, 0, len(self.ranges))
        for i, (base, end, _) in enumerate(self.ranges):
            struct.pack_into("<QQ", data, sb.RANGES_AT + 16 * i, base, end)
        ffi.memmove(a.host_ptr, bytes(data), size)
        if not a.coherent:
            self.allocator.flush(a)

    @property
    def address(self) -> int:
        return self.alloc.address

    def faults(self, kernel: str) -> str | None:
        """None when no access faulted; else the message saying where the first ones were."""
        a = self.alloc
        if not a.coherent:
            self.allocator.invalidate(a)
        head = bytes(ffi.buffer(a.host_ptr, sb.SCRATCH_AT))
        count = struct.unpack_from("<I", head, 0)[0]
        if not count:
            return None
        lines = [f"VKCL_CHECK_BOUNDS: kernel '{kernel}': {count} out-of-bounds access(es)"]
        for k in range(min(count, sb.RECORDS)):
            addr, access, x, y, z = struct.unpack_from("<QIIII", head, sb.RECORDS_AT + k * sb.RECORD_SIZE)
            lines.append(f"  access {access} by work-item ({x}, {y}, {z}): {self._where(addr)}")
        return "\n".join(lines)

    def _where(self, addr: int) -> str:
        if not self.ranges:
            return f"address {addr:#x}, the kernel has no buffers"
        base, end, what = min(self.ranges, key=lambda r: 0 if r[0] <= addr < r[1] else
                              min(abs(addr - r[0]), abs(addr - r[1])))
        return f"{what}: byte offset {addr - base} (its size is {end - base} bytes)"

    def free(self) -> None:
        if self.alloc is not None:
            self.allocator.free(self.alloc)
            self.alloc = None


def raise_if_faulted(table: BoundsTable, kernel: str, context) -> None:
    message = table.faults(kernel)
    if message is not None:
        _log.warning("%s", message)
        context.report(message)
        raise KernelFault(cl.CL_OUT_OF_RESOURCES, message)
