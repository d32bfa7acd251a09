"""Command recording and submission with raw `vk.lib` calls (these run on every enqueue).

Timeline semaphores track completion; command buffers come from a per-queue pool and are
recycled once their batch completes.
"""
from __future__ import annotations

import time

from vkcl import config, native
from vkcl.vulkan import faults
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.check import VulkanError, check
from vkcl.vulkan.lifetime import destroyed_with

ffi = vk.ffi
lib = vk.lib

WHOLE_SIZE = 0xFFFFFFFFFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF
ALL_COMMANDS = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
MEMORY_RW = vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT
# Absent from the `vulkan` package (its constant is None): VK_EXT_calibrated_timestamps.
STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO = 1000184000
TIME_DOMAIN_DEVICE = 0
TIME_DOMAIN_CLOCK_MONOTONIC = 1


def spin_ns(device) -> int:
    """How long a blocking wait on `device` polls before it sleeps (icd/timeline_wait.c says
    why): long on a discrete GPU, short where spinning takes CPU time from the device itself."""
    us = config.get("wait_spin_us")
    if us < 0:
        us = 100 if device.physical.is_uma else 10_000
    return us * 1000


class Timeline:
    """A timeline semaphore: the GPU signals increasing values; the host waits on them."""

    def __init__(self, device, initial: int = 0):
        self.device = device.handle
        type_info = ffi.new("VkSemaphoreTypeCreateInfo *", {
            "sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
            "semaphoreType": vk.VK_SEMAPHORE_TYPE_TIMELINE, "initialValue": initial})
        info = ffi.new("VkSemaphoreCreateInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
                                                   "pNext": type_info})
        out = ffi.new("VkSemaphore *")
        check("vkCreateSemaphore", lib.vkCreateSemaphore(self.device, info, ffi.NULL, out))
        self.handle = out[0]
        self._finalizer = destroyed_with(self, "vkDestroySemaphore", self.device, self.handle)
        self._value = ffi.new("uint64_t *")
        self.spin_ns = spin_ns(device)
        # In the ICD, waits run in C (icd/timeline_wait.c) with the GIL released throughout.
        self._native_wait = None
        if native.lib is not None:
            entry = [native.pointer(ffi, lib.vkGetDeviceProcAddr(self.device, name))
                     for name in (b"vkGetSemaphoreCounterValue", b"vkWaitSemaphores")]
            self._native_wait = (native.lib.vkcl_wait_timeline, *entry, native.pointer(ffi, self.device),
                                 native.pointer(ffi, self.handle))

    def value(self) -> int:
        if faults.ACTIVE:
            faults.check(self.device, "vkGetSemaphoreCounterValue")
        check("vkGetSemaphoreCounterValue", lib.vkGetSemaphoreCounterValue(self.device, self.handle, self._value))
        return self._value[0]

    def wait(self, value: int, timeout_ns: int = U64_MAX) -> bool:
        """True once the semaphore reached `value`; False on timeout. The GIL is released.

        The wait polls before it sleeps, for spin_ns: work that completes by then (a small
        kernel, a round trip; any kernel on a discrete GPU, up to 10 ms) is seen without the
        blocking wait's wake-up latency."""
        if faults.ACTIVE:
            faults.check(self.device, "vkWaitSemaphores")
        if self._native_wait is not None:
            fn, get, wait, dev, sem = self._native_wait
            result = fn(get, wait, dev, sem, value, timeout_ns, self.spin_ns)
        else:
            deadline = time.monotonic_ns() + min(self.spin_ns, timeout_ns)
            get, dev, handle, out = lib.vkGetSemaphoreCounterValue, self.device, self.handle, self._value
            while True:
                if get(dev, handle, out) == 0 and out[0] >= value:
                    return True
                if time.monotonic_ns() >= deadline:
                    break
            return wait_any(self.device, [(self, value)], timeout_ns)
        if result == vk.VK_TIMEOUT:
            return False
        check("vkWaitSemaphores", result)
        return True

    def signal(self, value: int) -> None:
        info = ffi.new("VkSemaphoreSignalInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
                                                   "semaphore": self.handle, "value": value})
        check("vkSignalSemaphore", lib.vkSignalSemaphore(self.device, info))

    def destroy(self) -> None:
        self._finalizer()
        self.handle = None


def wait_any(device_handle, pairs, timeout_ns: int, any_: bool = True) -> bool:
    """Wait until any (or all) of [(Timeline, value)] is reached. False on timeout."""
    if faults.ACTIVE:
        faults.check(device_handle, "vkWaitSemaphores")
    n = len(pairs)
    sems = ffi.new("VkSemaphore[]", [t.handle for t, _ in pairs])
    values = ffi.new("uint64_t[]", [v for _, v in pairs])
    info = ffi.new("VkSemaphoreWaitInfo *", {
        "sType": vk.VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, "flags": vk.VK_SEMAPHORE_WAIT_ANY_BIT if any_ else 0,
        "semaphoreCount": n, "pSemaphores": sems, "pValues": values})
    result = lib.vkWaitSemaphores(device_handle, info, timeout_ns)
    if result == vk.VK_TIMEOUT:
        return False
    check("vkWaitSemaphores", result)
    return True


class CommandPool:
    """Command buffers for one queue; not thread-safe (the queue's lock guards it)."""

    def __init__(self, device):
        self.device = device.handle
        info = ffi.new("VkCommandPoolCreateInfo *", {
            "sType": vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
            "flags": vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, "queueFamilyIndex": device.family})
        out = ffi.new("VkCommandPool *")
        check("vkCreateCommandPool", lib.vkCreateCommandPool(self.device, info, ffi.NULL, out))
        self.handle = out[0]
        self._finalizer = destroyed_with(self, "vkDestroyCommandPool", self.device, self.handle)
        self._free: list = []
        self._begin = ffi.new("VkCommandBufferBeginInfo *", {
            "sType": vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            "flags": vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT})

    def begin(self):
        """A command buffer in the recording state."""
        if self._free:
            cb = self._free.pop()
            check("vkResetCommandBuffer", lib.vkResetCommandBuffer(cb, 0))
        else:
            info = ffi.new("VkCommandBufferAllocateInfo *", {
                "sType": vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, "commandPool": self.handle,
                "level": vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, "commandBufferCount": 1})
            out = ffi.new("VkCommandBuffer *")
            check("vkAllocateCommandBuffers", lib.vkAllocateCommandBuffers(self.device, info, out))
            cb = out[0]
        check("vkBeginCommandBuffer", lib.vkBeginCommandBuffer(cb, self._begin))
        return cb

    def recycle(self, cb) -> None:
        self._free.append(cb)

    def destroy(self) -> None:
        self._finalizer()  # its command buffers go with it
        self.handle = None
        self._free.clear()


_barrier = ffi.new("VkMemoryBarrier *", {"sType": vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                        "srcAccessMask": MEMORY_RW, "dstAccessMask": MEMORY_RW})
_host_barrier = ffi.new("VkMemoryBarrier *", {"sType": vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                             "srcAccessMask": MEMORY_RW,
                                             "dstAccessMask": vk.VK_ACCESS_HOST_READ_BIT | vk.VK_ACCESS_HOST_WRITE_BIT})


def full_barrier(cb) -> None:
    """Every earlier command's memory effects are visible to every later one."""
    lib.vkCmdPipelineBarrier(cb, ALL_COMMANDS, ALL_COMMANDS, 0, 1, _barrier, 0, ffi.NULL, 0, ffi.NULL)


def host_barrier(cb) -> None:
    """Device writes are visible to host reads once the batch's semaphore is signalled."""
    lib.vkCmdPipelineBarrier(cb, ALL_COMMANDS, vk.VK_PIPELINE_STAGE_HOST_BIT, 0, 1, _host_barrier, 0, ffi.NULL,
                             0, ffi.NULL)


def copy_buffer(cb, src, dst, regions: list[tuple[int, int, int]]) -> None:
    """regions: (src_offset, dst_offset, size)."""
    arr = ffi.new("VkBufferCopy[]", len(regions))
    for i, (s, d, n) in enumerate(regions):
        r = arr[i]
        r.srcOffset, r.dstOffset, r.size = s, d, n
    lib.vkCmdCopyBuffer(cb, src, dst, len(regions), arr)


def fill_buffer(cb, buf, offset: int, size: int, word: int) -> None:
    lib.vkCmdFillBuffer(cb, buf, offset, size, word)


def end(cb) -> None:
    check("vkEndCommandBuffer", lib.vkEndCommandBuffer(cb))


def submit(device, cbs: list, waits: list, signal: Timeline, value: int) -> None:
    """vkQueueSubmit of command buffers that waits on [(Timeline, value)] and signals `value`."""
    n_wait = len(waits)
    cb_arr = ffi.new("VkCommandBuffer[]", cbs)
    sig_sem = ffi.new("VkSemaphore[1]", [signal.handle])
    sig_val = ffi.new("uint64_t[1]", [value])
    wait_sem = ffi.new("VkSemaphore[]", [t.handle for t, _ in waits]) if n_wait else ffi.NULL
    wait_val = ffi.new("uint64_t[]", [v for _, v in waits]) if n_wait else ffi.NULL
    stages = ffi.new("VkPipelineStageFlags[]", [ALL_COMMANDS] * n_wait) if n_wait else ffi.NULL
    tl = ffi.new("VkTimelineSemaphoreSubmitInfo *", {
        "sType": vk.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        "waitSemaphoreValueCount": n_wait, "pWaitSemaphoreValues": wait_val,
        "signalSemaphoreValueCount": 1, "pSignalSemaphoreValues": sig_val})
    info = ffi.new("VkSubmitInfo *", {
        "sType": vk.VK_STRUCTURE_TYPE_SUBMIT_INFO, "pNext": tl,
        "waitSemaphoreCount": n_wait, "pWaitSemaphores": wait_sem, "pWaitDstStageMask": stages,
        "commandBufferCount": len(cbs), "pCommandBuffers": cb_arr,
        "signalSemaphoreCount": 1, "pSignalSemaphores": sig_sem})
    if faults.ACTIVE:
        faults.check(device.handle, "vkQueueSubmit")
    with device.queue_lock:
        result = lib.vkQueueSubmit(device.queue, 1, info, ffi.NULL)
    check("vkQueueSubmit", result)
    if faults.ACTIVE:
        faults.submitted(device.handle)


class QueryPool:
    """Timestamp queries for a profiling queue: pairs (start, end) handed out and returned."""

    def __init__(self, device, pairs: int = 1024):
        self.device = device.handle
        self.period_ns = device.physical.limits["timestampPeriod"]
        info = ffi.new("VkQueryPoolCreateInfo *", {"sType": vk.VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                                   "queryType": vk.VK_QUERY_TYPE_TIMESTAMP, "queryCount": 2 * pairs})
        out = ffi.new("VkQueryPool *")
        check("vkCreateQueryPool", lib.vkCreateQueryPool(self.device, info, ffi.NULL, out))
        self.handle = out[0]
        self._finalizer = destroyed_with(self, "vkDestroyQueryPool", self.device, self.handle)
        # Where the device can (hostQueryReset), a pair is reset on the host when it comes back,
        # instead of by a command before its first timestamp: on NVIDIA that command costs each
        # profiled command ~4 us.
        self.host_reset = bool(device.physical.features.get("hostQueryReset"))
        if self.host_reset:
            lib.vkResetQueryPool(self.device, self.handle, 0, 2 * pairs)
        self._free = list(range(pairs - 1, -1, -1))
        self._result = ffi.new("uint64_t[2]")
        self.lent_base = pairs  # pairs from here on are lent (lend) and go back through lent_back
        self.lent_back = None

    def lend(self, n: int, give_back) -> int:
        """Set the last `n` pairs aside for another owner (the C fast path); `give_back(pair)` takes
        one back when a command that used it completes here. Returns the first."""
        self.lent_base -= n
        self._free = [p for p in self._free if p < self.lent_base]
        self.lent_back = give_back
        return self.lent_base

    def take(self) -> int | None:
        return self._free.pop() if self._free else None

    def give_back(self, pair: int) -> None:
        """`pair` is free again: the command that used it has completed, or never ran."""
        if pair >= self.lent_base:
            self.lent_back(pair)  # (the owner resets it)
        else:
            if self.host_reset:
                lib.vkResetQueryPool(self.device, self.handle, 2 * pair, 2)
            self._free.append(pair)

    def reset(self, cb, pair: int) -> None:
        """Before the pair's first timestamp in `cb`, where pairs are not reset on the host."""
        if not self.host_reset:
            lib.vkCmdResetQueryPool(cb, self.handle, 2 * pair, 2)

    def write(self, cb, pair: int, end_: bool) -> None:
        stage = vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT if end_ else vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT
        lib.vkCmdWriteTimestamp(cb, stage, self.handle, 2 * pair + int(end_))

    def read_ns(self, pair: int) -> tuple[int, int]:
        """(start, end) in device nanoseconds, once the batch that wrote them has completed (so
        the results are there; asking the driver to wait for them costs lavapipe a flush)."""
        flags = vk.VK_QUERY_RESULT_64_BIT
        result = lib.vkGetQueryPoolResults(self.device, self.handle, 2 * pair, 2, 16, self._result, 8, flags)
        if result == vk.VK_NOT_READY:
            result = lib.vkGetQueryPoolResults(self.device, self.handle, 2 * pair, 2, 16, self._result, 8,
                                               flags | vk.VK_QUERY_RESULT_WAIT_BIT)
        check("vkGetQueryPoolResults", result)
        return int(self._result[0] * self.period_ns), int(self._result[1] * self.period_ns)

    def destroy(self) -> None:
        self._finalizer()
        self.handle = None


CALIBRATION_NS = 100_000_000


def calibrate_function(device):
    """vkGetCalibratedTimestamps{KHR,EXT} of `device` (a cdata function pointer), or None."""
    for ext, fn in (("VK_KHR_calibrated_timestamps", "vkGetCalibratedTimestampsKHR"),
                    ("VK_EXT_calibrated_timestamps", "vkGetCalibratedTimestampsEXT")):
        if device.has_extension(ext):
            addr = lib.vkGetDeviceProcAddr(device.handle, fn.encode())
            if addr != ffi.NULL:
                return addr
    return None


class DeviceClock:
    """Converts a queue's timestamps (in device ns) to host CLOCK_MONOTONIC ns by an offset.
    The offset is measured (VK_KHR/EXT_calibrated_timestamps) again when older than 100 ms:
    the H200's timer drifts ~1.6 us a second from the host's clock, more than a short kernel's
    start lies after its submission. Without the extension the offset is 0 (lavapipe's
    timestamps are CLOCK_MONOTONIC already)."""

    def __init__(self, device):
        self.device = device.handle
        self.period_ns = device.physical.limits["timestampPeriod"]
        addr = calibrate_function(device)
        self._get = ffi.cast("PFN_vkGetCalibratedTimestampsEXT", addr) if addr is not None else None
        self._infos = ffi.new("VkCalibratedTimestampInfoEXT[2]")
        for i, domain in enumerate((TIME_DOMAIN_DEVICE, TIME_DOMAIN_CLOCK_MONOTONIC)):
            self._infos[i].sType = STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO
            self._infos[i].timeDomain = domain
        self._stamps, self._deviation = ffi.new("uint64_t[2]"), ffi.new("uint64_t *")
        self.offset, self.calibrated_ns = 0, 0
        self.calibrate()

    def calibrate(self) -> None:
        if self._get is not None and self._get(self.device, 2, self._infos, self._stamps, self._deviation) == 0:
            self.offset = int(self._stamps[1]) - int(self._stamps[0] * self.period_ns)
        self.calibrated_ns = time.monotonic_ns()

    def offset_ns(self) -> int:
        if time.monotonic_ns() - self.calibrated_ns > CALIBRATION_NS:
            self.calibrate()
        return self.offset


def monotonic_ns() -> int:
    return time.monotonic_ns()
