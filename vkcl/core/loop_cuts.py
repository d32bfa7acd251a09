"""llvmpipe's loop cap made an error instead of wrong results (compiler/spirv_loop_cuts.py).

Kernels compiled for llvmpipe carry a probe that ORs 1 into a word of the device's when the
batch of work-items running it had spent llvmpipe's 65,535 loop back-edges, that is when some
loop of it was cut short. The word (host-visible memory: its flag, then the probe's trip count
2) is given to every pipeline by two specialization constants; each batch's completion takes
the flag back to 0 and, where it was set, fails the batch's launches with CL_OUT_OF_RESOURCES
and a warning naming their kernels (core/queue.py; C's fast path in icd/fast_path.c).
"""
from __future__ import annotations

from vkcl import log
from vkcl.compiler import spirv_loop_cuts
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.device import per_device
from vkcl.vulkan.memory import MemoryKind, allocator_for

_log = log.get("queue")
ffi = vkc.ffi


class LoopWord:
    def __init__(self, vkdev):
        a = self.alloc = allocator_for(vkdev).allocate(8, MemoryKind.STAGING)
        if not a.coherent:
            raise RuntimeError("llvmpipe's staging memory is coherent")
        ffi.memmove(a.host_ptr, (0).to_bytes(4, "little") + spirv_loop_cuts.PROBE_TRIPS.to_bytes(4, "little"), 8)
        self.flag = ffi.cast("uint32_t *", a.host_ptr)

    def spec(self) -> dict[int, int]:
        address = self.alloc.address
        return {spirv_loop_cuts.SPEC_WORD[0]: address & 0xFFFFFFFF, spirv_loop_cuts.SPEC_WORD[1]: address >> 32}

    def take(self) -> bool:
        """Whether a batch cut a loop since the last call (the flag goes back to 0)."""
        if not self.flag[0]:
            return False
        self.flag[0] = 0
        return True


def word_for(vkdev) -> LoopWord:
    return per_device("loop_word", vkdev, LoopWord)


def warn(kernels: list[str]) -> None:
    _log.warning("kernel(s) %s ran a loop past llvmpipe's 65,535 back-edges per batch of work-items, which "
                 "llvmpipe cuts short: their results are wrong, so their events fail with CL_OUT_OF_RESOURCES "
                 "(docs/status.md, Known runtime gaps)", ", ".join(sorted(set(kernels))))
