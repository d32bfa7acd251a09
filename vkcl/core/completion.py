"""vkcl's own threads: one per VkDevice that retires completed batches, and one that runs
application callbacks and other deferred work, never while an internal lock is held."""
from __future__ import annotations

import atexit
import logging
import queue as queue_mod
import threading
from typing import Callable

from vkcl import log

_log = log.get("queue")

# --- the callback thread -------------------------------------------------------------------

_work: queue_mod.SimpleQueue = queue_mod.SimpleQueue()
_worker: threading.Thread | None = None
_worker_lock = threading.Lock()


_exiting = False


def _run_work() -> None:
    while True:
        fn, args = _work.get()
        if _exiting:
            continue
        try:
            fn(*args)
        except Exception:
            logging.getLogger("vkcl").exception("vkcl: error in a deferred call or application callback")


@atexit.register
def _stop_callbacks() -> None:
    """In a Python host (pyopencl), nothing more is delivered once the interpreter exits.

    Registered at import, so it runs after the application's own atexit handlers (they may
    still wait for work). A callback called later runs into the interpreter's finalisation:
    pyopencl hands each one to a C++ thread that then takes the GIL, which at that point ends
    the thread by unwinding through noexcept frames: std::terminate, and the process aborts.
    (A C host never finalises the embedded interpreter, so this never runs there.)"""
    global _exiting
    _exiting = True


def post(fn: Callable, *args) -> None:
    """Run fn(*args) soon on the vkcl callback thread."""
    global _worker
    if _worker is None:
        with _worker_lock:
            if _worker is None:
                _worker = threading.Thread(target=_run_work, name="vkcl-callbacks", daemon=True)
                _worker.start()
    _work.put((fn, args))


# --- the completion thread -----------------------------------------------------------------

class Completion:
    """Waits on every in-flight queue of one VkDevice and retires what completed.

    A host-signalled 'wake' timeline semaphore interrupts the wait when a new batch is
    submitted, so the thread never polls.
    """

    def __init__(self, device):
        from vkcl.vulkan.commands import Timeline
        self.device = device
        self.wake = Timeline(device)
        self.kicks = 0
        self.lock = threading.Lock()
        self.queues: set = set()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="vkcl-completion", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Leave the driver: at process exit its libraries unload under a waiting thread."""
        self.stopping = True
        with self.lock:  # as in watch(): values signalled in order
            self.kicks += 1
            self.wake.signal(self.kicks)
        self.thread.join(timeout=2.0)

    def watch(self, queue) -> None:
        """`queue` has batches in flight: make sure they are retired."""
        with self.lock:
            self.queues.add(queue)
            self.kicks += 1
            # Signalled under the lock: a timeline value must only ever increase, and two
            # threads signalling out of order lose the device (Mesa: "Timeline values must
            # only ever strictly increase").
            self.wake.signal(self.kicks)

    def _run(self) -> None:
        from vkcl.vulkan.check import VulkanError
        from vkcl.vulkan.commands import wait_any
        seen = 0
        while not self.stopping:
            with self.lock:
                queues = list(self.queues)
            pairs = []
            for q in queues:
                pending = q.first_pending_value()
                if pending is None:
                    with self.lock:
                        if q.first_pending_value() is None:
                            self.queues.discard(q)
                else:
                    pairs.append((q.timeline, pending))
            pairs.append((self.wake, seen + 1))
            try:
                wait_any(self.device.handle, pairs, 1_000_000_000)
                seen = self.wake.value()
            except VulkanError as e:
                if e.device_lost:  # every queue fails what it holds, and this thread ends
                    for q in queues:
                        q.device_lost(e)
                    return
                _log.exception("completion wait failed")
            except Exception:
                _log.exception("completion wait failed")
            for q in queues:
                try:
                    q.retire()
                except Exception:
                    _log.exception("retiring %s failed", q)


def stop_all() -> None:
    from vkcl.vulkan.device import per_device_objects
    for c in per_device_objects("completion"):
        c.stop()


def completion_for(device) -> Completion:
    from vkcl.vulkan.device import per_device
    return per_device("completion", device, Completion)
