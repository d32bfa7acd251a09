"""Events: the status of one command (or a user event), its callbacks and profiling times."""
from __future__ import annotations

import threading
import time
from typing import Callable

from vkcl._gen import cl
from vkcl.core import completion
from vkcl.core.object import CLObject

QUEUED, SUBMITTED, RUNNING, COMPLETE = cl.CL_QUEUED, cl.CL_SUBMITTED, cl.CL_RUNNING, cl.CL_COMPLETE
# One condition for every event's status: a waiter re-checks its own event when woken. An
# event per enqueue cannot afford a Condition (and its RLock) of its own.
_STATUS = threading.Condition()
_PROFILE_INDEX = {QUEUED: 0, SUBMITTED: 1, RUNNING: 2, COMPLETE: 4}


class Event(CLObject):
    """The event of an enqueued command. Status only moves towards CL_COMPLETE or an error."""

    user = False
    cond = _STATUS

    def __init__(self, context, queue, command_type: int):
        super().__init__()
        self.context = context
        self.queue = queue
        self.command_type = command_type
        self.status = QUEUED
        self.batch = None  # the submitted Batch holding the command (None before submission)
        # queued, submit, start, end, complete (host CLOCK_MONOTONIC ns); filled when profiling
        self.times = [0, 0, 0, 0, 0] if queue is not None and queue.profiling else None
        if self.times is not None:
            self.times[0] = time.monotonic_ns()
        self._callbacks: list[tuple[int, Callable[[int], None]]] = []
        self._waiters: list[Callable[[], None]] = []

    @property
    def done(self) -> bool:
        return self.status <= COMPLETE

    def set_status(self, status: int, when: int | None = None) -> None:
        """Move to `status` (a CL execution status or a negative error) and run what waits on it."""
        with self.cond:
            if self.status <= COMPLETE or (status >= 0 and status >= self.status):
                return
            self.status = status
            if self.times is not None and status >= 0:
                now = when if when is not None else time.monotonic_ns()
                self.times[_PROFILE_INDEX[status]] = now
                if status == COMPLETE:
                    _complete_times(self.times, now)
            due = waiters = ()
            if self._callbacks:  # in status order (SUBMITTED, RUNNING, COMPLETE) when one change passes several
                due = sorted(((s, fn) for s, fn in self._callbacks if status <= s), key=lambda c: -c[0])
                self._callbacks = [(s, fn) for s, fn in self._callbacks if status > s]
            if self._waiters:
                waiters = list(self._waiters)
            if status <= COMPLETE:
                self._waiters = []
                self.cond.notify_all()
        # Never run application code or other queues' work while holding a lock.
        for trigger, fn in due:
            completion.post(fn, _reported(trigger, status))
        for fn in waiters:
            completion.post(fn)

    def fail(self, code: int) -> None:
        self.set_status(code)

    def run_on_host(self, work: Callable[[], None]) -> None:
        """Do `work` (the host's own copy, at once) as this command: its profiling start and end
        are the copy's, measured on the host's clock, and it is complete after it."""
        if self.times is not None:
            self.times[1] = self.times[2] = time.monotonic_ns()
        work()
        if self.times is not None:
            self.times[3] = time.monotonic_ns()
        self.set_status(COMPLETE)

    def add_callback(self, trigger: int, fn: Callable[[int], None]) -> None:
        with self.cond:
            if self.status > trigger:
                self._callbacks.append((trigger, fn))
                return
            status = self.status
        completion.post(fn, _reported(trigger, status))

    def add_waiter(self, fn: Callable[[], None]) -> None:
        """fn runs (on the vkcl thread) at each status change, until complete or failed."""
        with self.cond:
            if not self.done:
                self._waiters.append(fn)
                return
        completion.post(fn)

    def wait(self) -> int:
        """Block until complete or failed; returns the final status."""
        while True:
            with self.cond:
                if self.status <= COMPLETE:
                    return self.status
                batch = self.batch
            if batch is not None:
                batch.queue.wait_batch(batch)
            elif self.queue is not None and self.queue.flush_for(self):
                continue
            else:
                with self.cond:
                    if self.status > COMPLETE and self.batch is None:
                        self.cond.wait(0.05)


def _reported(trigger: int, status: int) -> int:
    """What a callback is told (spec, clSetEventCallback): the status it was registered for,
    even when the event went past it in one step, or the error that ended the command."""
    return status if status < 0 else trigger


def _complete_times(t: list[int], now: int) -> None:
    """The times a command has no measurement of, at its completion (`now`); the others stay as
    measured (GPU timestamps come from the device clock, calibrated against the host's:
    vkcl/vulkan/commands.py, DeviceClock). A command the host did at once was never submitted:
    it was submitted and ran when the host did it. One without GPU work ran when it completed."""
    t[1] = t[1] or now
    if not t[3]:
        t[2] = t[3] = now
    t[4] = now


class UserEvent(Event):
    user = True

    def __init__(self, context):
        super().__init__(context, None, cl.CL_COMMAND_USER)
        self.status = SUBMITTED  # spec: a user event starts CL_SUBMITTED
        self.set_once = False


def wait_all(events: list[Event]) -> bool:
    """Wait for every event; True when all completed successfully."""
    ok = True
    for e in events:
        ok = e.wait() == COMPLETE and ok
    return ok
