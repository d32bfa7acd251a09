"""Command queues: commands are recorded into a batch (one VkCommandBuffer) as they are
enqueued and submitted on flush, on a blocking call, or when the batch grows large.

Each queue signals its own timeline semaphore; batch N completes when it reaches N. A
command whose wait list names an event that is not yet submitted (a user event, or one
held back in another queue) is held, with everything after it in the queue, until that
event is submitted: nothing waits on the GPU for a condition the host has not met.
"""
from __future__ import annotations

import time
from collections import deque

from vkcl import config, log, native, trace
from vkcl._gen import cl
from vkcl.core.completion import completion_for
from vkcl.core.event import COMPLETE, SUBMITTED, Event
from vkcl.core.commands import FastCommand
from vkcl.core import bounds, fastpath, loop_cuts
from vkcl.core.fastpath import FastQueue
from vkcl.core.object import CLObject
from vkcl.errors import CLError
from vkcl.vulkan import commands as vkc, faults
from vkcl.vulkan.check import VulkanError

_LAUNCHES = (cl.CL_COMMAND_NDRANGE_KERNEL, cl.CL_COMMAND_TASK)

_log = log.get("queue")


class Batch:
    __slots__ = ("queue", "cb", "value", "commands", "waits", "gpu_work", "keep", "fast_events", "loop_slot")

    def __init__(self, queue, cb):
        self.queue, self.cb = queue, cb
        self.value = 0
        self.commands: list = []
        self.waits: list = []
        self.gpu_work = False
        self.keep = None  # fast launches recorded in the batch, kept until it completes
        self.fast_events = 0  # of `commands`, the FastCommands: C's clFinish may complete those
        self.loop_slot = None  # llvmpipe: where the batch's end captures its loop-cut flag (core/loop_cuts.py)


class CommandQueue(CLObject):
    fast_host_done = None  # what the next fast event's command does on the host when complete

    def __init__(self, context, device, properties: int, raw_properties: list[int], size: int = 0):
        super().__init__()
        self.context = context
        self.device = device
        self.vk = context.vk[device]
        self.properties = properties
        self.raw_properties = raw_properties
        self.size = size
        self.out_of_order = bool(properties & cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        self.profiling = bool(properties & cl.CL_QUEUE_PROFILING_ENABLE) or trace.ENABLED
        self.lock = native.make_lock()  # the fast path's C code takes it too
        self.timeline = vkc.Timeline(self.vk)
        self.pool = vkc.CommandPool(self.vk)
        self.queries = vkc.QueryPool(self.vk) if self.profiling else None
        self.clock = vkc.DeviceClock(self.vk) if self.profiling else None
        self.completion = completion_for(self.vk)
        self.batch_limit = max(1, config.get("batch_commands"))
        self.next_value = 1
        self.batch: Batch | None = None
        self.held: deque = deque()
        self.in_flight: deque = deque()
        self.barrier_pending = False  # an out-of-order queue's barrier orders what follows
        # llvmpipe: the launch whose loops may have suspended, submitted and not yet resolved
        # (core/resume.py); everything after it is held until it is.
        self.resuming = None
        self._resume_state = None
        # llvmpipe's loop cap detected (core/loop_cuts.py): each batch captures the flag as it ends
        self.loop_word = loop_cuts.word_for(self.vk) if device.compiler_caps.loop_unroll_count else None
        # In-order queues in the ICD: C records repeated launches itself (core/fastpath.py).
        # Not while faults are injected: they are injected on Python's path.
        # Nor with a kernel timeout: C's waits have none.
        self.timeout_ns = int(config.get("kernel_timeout") * 1e9) or vkc.U64_MAX
        # Nor while accesses are bounds-checked: Python reads each launch's fault table.
        use_c = (native.lib is not None and not self.out_of_order and not faults.ACTIVE and not trace.ENABLED
                 and not config.get("check_bounds")
                 and self.timeout_ns == vkc.U64_MAX)
        self.fast = FastQueue(self) if use_c else None

    def resume_state(self):
        if self._resume_state is None:
            from vkcl.core.resume import ResumeState
            self._resume_state = ResumeState(self.vk)
        return self._resume_state

    # --- enqueue -----------------------------------------------------------------------

    def enqueue(self, cmd, waits: list[Event]) -> Event:
        """Queue `cmd` after `waits` (and, in an in-order queue, after everything before it)."""
        if self.vk.lost is not None:
            cmd.discard()
            raise CLError(cl.CL_OUT_OF_RESOURCES, f"the device was lost ({self.vk.lost})")
        for e in waits:  # an implicit flush of other queues whose events we need
            if e.queue is not None and e.queue is not self and e.batch is None and not e.done:
                e.queue.flush()
        ev = Event(self.context, self, cmd.command_type)
        cmd.event, cmd.waits = ev, waits
        with self.lock:
            if self._must_hold(cmd, self.held):
                self.held.append(cmd)
                for e in waits:
                    if not e.done:
                        e.add_waiter(self.release_held)
            else:
                self._record(cmd)
            if self.fast is not None:
                self._sync_fast()
        if self.resuming is cmd:
            # A launch that may resume holds what follows until the host has seen each pass
            # complete; waiting here, on the application's thread, spares the completion
            # thread's round trips (on lavapipe the kernel runs on this machine's CPUs anyway).
            ev.wait()
        return ev

    def fast_event(self, command_type: int) -> Event:
        """The event of a command C is recording into the open batch now (it holds the lock):
        a command with nothing to record, completed with the batch."""
        ev = Event(self.context, self, command_type)
        cmd = FastCommand(command_type, self.fast_host_done)
        self.fast_host_done = None
        cmd.event = ev
        b = self.batch
        b.commands.append(cmd)
        b.fast_events += 1
        self.fast.c.events = b.fast_events
        return ev

    def adopt_c_event(self, ptr, batch: Batch | None = None) -> Event | None:
        """Python takes over the event C made at `ptr` (icd/fast_events.c; the lock held): an
        Event under the same handle, its command, when pending, a FastCommand of `batch` (the
        batch being submitted) or of the open batch. None when `ptr` is no C event in use."""
        st = fastpath.c_event_state(ptr)
        if st is None:
            return None
        ev = Event(self.context, self, st.command_type)
        if ev.times is not None:
            ev.times[:] = list(st.times)
        if st.status <= COMPLETE:
            ev.status = st.status
        else:
            cmd = FastCommand(st.command_type)
            cmd.event = ev
            cmd.query_pair = st.query if st.query >= 0 else None
            b = batch or self.batch
            b.commands.append(cmd)
            b.fast_events += 1
            if batch is None:
                self.fast.c.events = b.fast_events
        if st.refcount:  # else released: completed with its batch, handle-less
            ev.refcount = st.refcount
            fastpath.register_adopted(ev, ptr)
        return ev

    def fast_timestamps(self) -> int:
        """On a profiling queue, the pair of timestamp queries C writes around the command whose
        event fast_event just made (-1: none free; its times are then filled in)."""
        pair = self.queries.take() if self.profiling else None
        self.batch.commands[-1].query_pair = pair
        return -1 if pair is None else pair

    def _sync_fast(self) -> None:
        """Tell the fast path what Python has pending (under the lock)."""
        fq = self.fast.c
        b = self.batch
        fq.enabled = 0 if self.held or self.resuming is not None else 1
        fq.pending = 1 if (self.in_flight or self.held or (b is not None and len(b.commands) > b.fast_events)) else 0
        fq.events = b.fast_events if b is not None else 0

    def _must_hold(self, cmd, held) -> bool:
        """Whether `cmd` waits among the held commands (`held`, earlier in the queue).

        In an in-order queue everything after a held command waits with it. In an
        out-of-order queue only what must follow it does: a marker or barrier without a wait
        list, and anything after a held barrier. Holding more would deadlock an application
        that waits for an independent later command before it sets a user event."""
        if self._gated(cmd, held) or self.resuming is not None:
            return True  # (after a launch that may resume, everything: core/resume.py)
        if not held:
            return False
        if not self.out_of_order or cmd.after_all:
            return True
        return any(h.is_barrier for h in held)

    def _gated(self, cmd, held=()) -> bool:
        """A user event not yet complete, or a command not yet submitted: another queue's,
        or one of `held`, this queue's held commands before `cmd` (an out-of-order queue
        records later commands past them)."""
        for e in cmd.waits:
            if e.done:
                continue
            if e.user or (e.batch is None and (e.queue is not self or any(h.event is e for h in held))):
                return True
            r = e.queue.resuming if e.queue is not None else None
            if r is not None and r.event is e:
                return True  # its passes are not all submitted
        return False

    def _record(self, cmd) -> None:
        ev = cmd.event
        if cmd.waits and any(e.status < 0 for e in cmd.waits):
            cmd.discard()
            ev.fail(cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
            return
        self._check_c_failure()
        b = self.batch or self._open()
        fast = self.fast.c.fast if self.fast is not None else 0
        barrier = self.barrier_pending or (not self.out_of_order and cmd.gpu_work and
                                           (b.gpu_work or fast or bool(self.in_flight)))
        for e in cmd.waits:
            if e.done:
                continue
            if e.batch is None or e.batch.queue.vk is self.vk:
                barrier = True  # earlier in this VkQueue's submission order: a barrier orders it
            else:  # another device: its timeline
                if b.commands:
                    self._submit()
                    b = self._open()
                b.waits.append((e.batch.queue.timeline, e.batch.value))
        if barrier and cmd.gpu_work:
            vkc.full_barrier(b.cb)
            self.barrier_pending = False
        self._timed(b, cmd, cmd.record)
        b.gpu_work |= cmd.gpu_work
        b.commands.append(cmd)
        if cmd.is_barrier:
            self.barrier_pending = True
        if cmd.resume is not None:
            self.resuming = cmd  # submitted now; its completion decides whether it runs again
            if self.fast is not None:
                self.fast.c.count += 1
            self._submit()
            return
        n = len(b.commands)
        if self.fast is not None:
            fq = self.fast.c
            fq.count += 1
            fq.barrier |= cmd.gpu_work
            n = fq.count
        if n >= self.batch_limit:
            self._submit()

    def _timed(self, b: Batch, cmd, record) -> None:
        """record(b.cb), between a pair of timestamp queries on a profiling queue."""
        pair = None
        if self.profiling and cmd.gpu_work:
            pair = self.queries.take()
            if pair is not None:
                self.queries.reset(b.cb, pair)
                self.queries.write(b.cb, pair, False)
        record(b.cb)
        if pair is not None:
            self.queries.write(b.cb, pair, True)
        cmd.query_pair = pair

    def _open(self) -> Batch:
        self.batch = b = Batch(self, self.pool.begin())
        if self.loop_word is not None:
            b.loop_slot = self.loop_word.take_slot()
        if self.fast is not None:
            self.fast.opened(b.cb, bool(self.in_flight), b.loop_slot)
        return b

    def _submit(self, waiter: bool = False) -> None:
        """Submit the open batch. `waiter`: the caller is about to wait for it and retire it
        itself, so the completion thread is not woken to compete for the GIL (a round trip,
        enqueue + clFinish, pays for that wake-up otherwise)."""
        self._check_c_failure()
        b = self.batch
        fast = self.fast
        if b is None or not (b.commands or (fast is not None and fast.c.fast)):
            return
        self.batch = None
        if fast is not None:
            b.gpu_work |= fast.c.fast > 0
            b.keep = fast.take_batch(b)
            b.value = fast.c.next_value
            fast.c.next_value += 1
        else:
            b.value = self.next_value
            self.next_value += 1
        if b.loop_slot is not None and b.gpu_work:
            self.loop_word.capture(b.cb, b.loop_slot)
        vkc.host_barrier(b.cb)
        vkc.end(b.cb)
        # The submit time is taken first: the device may start the batch before submit returns.
        submitted = time.monotonic_ns() if self.profiling else None
        try:
            vkc.submit(self.vk, [b.cb], b.waits, self.timeline, b.value)
        except VulkanError as e:
            if not e.device_lost:
                raise
            self.in_flight.append(b)  # failed with the rest
            self._lose(e)
            return
        self.in_flight.append(b)
        if trace.ENABLED:
            trace.instant("submit", "queue", {"commands": len(b.commands), "value": b.value})
        for cmd in b.commands:
            cmd.event.batch = b
            cmd.event.set_status(SUBMITTED, submitted)
        if fast is not None:
            self._open()  # the fast path records only into an open batch
            self._sync_fast()
        if not waiter:
            self.completion.watch(self)

    # --- flushing and waiting ------------------------------------------------------------

    def flush(self) -> None:
        with self.lock:
            self._submit()

    def flush_for(self, event: Event) -> bool:
        """Submit the batch holding `event`; False when it is held back by a gate. Held behind a
        launch that may resume: waits for that launch's pass, which drives the next."""
        with self.lock:
            if event.batch is not None:
                return True
            if self.batch is not None and any(c.event is event for c in self.batch.commands):
                self._submit(waiter=True)
                return True
            r = self.resuming
            batch = r.event.batch if r is not None else None
        if batch is None:
            return False
        self.wait_batch(batch)
        return True

    def release_held(self) -> None:
        """A gate may have opened: record the held commands that no longer need to wait."""
        with self.lock:
            self._release_held()

    def _release_held(self) -> None:
        """Under the lock: release_held's work (also when a launch that may resume is resolved)."""
        if self.out_of_order:
            still: deque = deque()
            for cmd in self.held:
                if self._must_hold(cmd, still):
                    still.append(cmd)
                else:
                    self._record(cmd)
            self.held = still
        else:
            while self.held and self.resuming is None and not self._gated(self.held[0]):
                self._record(self.held.popleft())
        self._submit()
        if self.fast is not None:
            self._sync_fast()

    def first_pending_value(self) -> int | None:
        b = self.in_flight[0] if self.in_flight else None
        return b.value if b is not None else None

    def wait_batch(self, batch: Batch) -> None:
        try:
            if not self.timeline.wait(batch.value, self.timeout_ns):
                self.device_lost(f"a command ran past VKCL_KERNEL_TIMEOUT ({config.get('kernel_timeout')} s)")
                return
        except VulkanError as e:
            if not e.device_lost:
                raise
            self.device_lost(e)
            return
        self.retire()

    def _check_c_failure(self) -> None:
        """Under the lock: C's fast path failed the open batch (a submission or wait error;
        icd/fast_path.c drops the command buffer, whose state is then unknown). Its commands
        fail, and so does everything else when the device was lost."""
        if self.fast is None or self.batch is None or self.fast.c.cb != native.ffi.NULL:
            return
        commands, self.batch = self.batch.commands, None
        if not self.vk.check_alive():
            self.batch = None
            self._lose(self.vk.lost)
        for cmd in commands:
            cmd.event.fail(cl.CL_OUT_OF_RESOURCES)

    def device_lost(self, error) -> None:
        """The device is lost (a wait or submission said so): what this queue holds fails."""
        with self.lock:
            self._lose(error)

    def _lose(self, error) -> None:
        """Under the lock: mark the device lost; every command in flight, recorded or held
        fails with CL_OUT_OF_RESOURCES (and what waits on them, in any queue, with
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), and C's fast path stops."""
        self.vk.mark_lost(str(error))
        commands = [c for b in self.in_flight for c in b.commands]
        self.in_flight.clear()
        if self.batch is not None:
            commands += self.batch.commands
            self.batch = None  # its command buffer is abandoned with the device
        commands += self.held
        self.held.clear()
        self.resuming = None
        if self.fast is not None:
            self.fast.c.enabled = 0
            self.fast.c.cb = native.ffi.NULL
        for cmd in commands:
            cmd.event.fail(cl.CL_OUT_OF_RESOURCES)

    def retire(self) -> None:
        """Finish every batch the GPU has completed: host follow-ups, then event status."""
        with self.lock:
            if not self.in_flight:
                return
            try:
                done = self.timeline.value()
            except VulkanError as e:
                if not e.device_lost:
                    raise
                self._lose(e)
                return
            while self.in_flight and self.in_flight[0].value <= done:
                self._finish(self.in_flight.popleft())
            if self.fast is not None:
                self._sync_fast()

    def _finish(self, b: Batch) -> None:
        cut = False
        if b.loop_slot is not None:
            cut = loop_cuts.LoopWord.cut(b.loop_slot)
            self.loop_word.give_back(b.loop_slot)
            b.loop_slot = None
            if cut:  # named whether or not the launches have events (C's, in b.keep, too)
                loop_cuts.warn([c.plan.name for c in b.commands if c.event.command_type in _LAUNCHES
                                and getattr(c, "plan", None) is not None] + fastpath.launched_kernels(b.keep))
        self._complete(b.commands, cut)
        self.pool.recycle(b.cb)
        # Events keep their batch (for its queue and timeline value); the commands, and the
        # memory objects they hold, go now (and the command -> event -> batch cycle with them).
        b.commands = []
        b.keep = None

    def _complete(self, commands: list, loop_cut: bool = False) -> None:
        """The host side of completed commands, then their events' status and times;
        `loop_cut`: llvmpipe cut a loop of the batch short, so its launches fail (the warning
        naming them is given where the cut is found)."""
        launches = {id(c) for c in commands if c.event.command_type in _LAUNCHES} if loop_cut else set()
        resolved = False
        for cmd in commands:
            ev = cmd.event
            unfinished = False
            if cmd is self.resuming:
                if not loop_cut and ev.status > COMPLETE and cmd.resume.suspended():
                    if self._next_pass(cmd):
                        continue
                    unfinished = True
                self.resuming, resolved = None, True
            try:
                cmd.complete()
                status = cl.CL_OUT_OF_RESOURCES if id(cmd) in launches or unfinished else COMPLETE
            except bounds.KernelFault:  # reported where it was found
                status = cl.CL_OUT_OF_RESOURCES
            except Exception:
                _log.exception("host side of %s failed", type(cmd).__name__)
                status = cl.CL_OUT_OF_RESOURCES
            if cmd.query_pair is not None:
                start, end = self.queries.read_ns(cmd.query_pair)
                self.queries.give_back(cmd.query_pair)
                first = cmd.resume
                if first is not None and first.start_ns is not None:
                    start = first.start_ns  # it ran in several passes (core/resume.py)
                offset = self.clock.offset_ns()
                ev.times[2], ev.times[3] = start + offset, end + offset
                if trace.ENABLED:
                    trace.gpu(self, type(cmd).__name__, ev.times[2], ev.times[3])
            ev.set_status(status)
        if resolved:
            self._release_held()

    def _next_pass(self, cmd) -> bool:
        """Under the lock, at the completion of a pass in which a work-item suspended: the next
        pass, recorded and submitted (its profiling start is the first pass's). False where its
        pipelines cannot be made: the launch then fails (CL_OUT_OF_RESOURCES) and what it held
        goes on, instead of waiting for a pass that never comes."""
        r = cmd.resume
        if cmd.query_pair is not None:
            start, _ = self.queries.read_ns(cmd.query_pair)
            self.queries.give_back(cmd.query_pair)
            if r.start_ns is None:
                r.start_ns = start
            cmd.query_pair = None
        r.next_pass()
        try:
            cmd.prepare_pass()
        except Exception as e:
            _log.warning("kernel %s: the pipeline of its next pass could not be made (%s); the launch fails",
                         cmd.plan.name, e)
            return False
        b = self.batch or self._open()
        vkc.full_barrier(b.cb)
        self._timed(b, cmd, cmd.record_pass)
        b.gpu_work = True
        b.commands.append(cmd)
        if self.fast is not None:
            self.fast.c.count += 1
        self._submit()
        return True

    def loop_cut_in_c(self) -> None:
        """C ran the open batch (its clFinish) and llvmpipe cut a loop of it short: C fails the
        events it made, Python's FastCommands fail in fast_events_done; here the warning. The
        lock held."""
        loop_cuts.warn(self.fast.open_kernels())

    def fast_events_done(self, submitted: int) -> None:
        """C's clFinish ran the open batch, which held only fast launches, and reopened it (it
        holds the lock): complete the events of those launches."""
        b = self.batch
        commands, b.commands, b.fast_events = b.commands, [], 0
        try:
            # Straight to CL_COMPLETE: one status change per event, not two (a change that
            # passes CL_SUBMITTED runs its callbacks too); the submit time is set directly.
            if self.profiling:
                for cmd in commands:
                    cmd.event.times[1] = submitted
            self._complete(commands, bool(self.fast.c.loop_cut))
        finally:
            self._sync_fast()

    def finish(self) -> None:
        """clFinish: every command enqueued so far has completed."""
        while True:
            with self.lock:
                self._submit(waiter=True)
                # The last held command (in an out-of-order queue, earlier ones may still be
                # held after it is released: the loop comes back for them), else the last batch.
                held = self.held[-1].event if self.held else None
                last = self.in_flight[-1] if self.in_flight else None
            if held is not None:
                held.wait()
            elif last is not None:
                self.wait_batch(last)
            else:
                break
        if self.vk.lost is not None:
            raise CLError(cl.CL_OUT_OF_RESOURCES, f"the device was lost ({self.vk.lost})")

    def idle(self) -> bool:
        """Nothing is pending: host work may touch memory directly, in order. Under the lock:
        while the vkcl thread records released held commands or submits a batch, the queue
        passes through states that look idle without it."""
        with self.lock:
            fast = self.fast.c.fast if self.fast is not None else 0
            return not self.held and not self.in_flight and not fast and (
                self.batch is None or not self.batch.commands)

    def _last_release(self) -> None:
        # clReleaseCommandQueue performs an implicit flush; pending work still completes.
        if self.fast is not None:
            self.fast.close()  # its handle goes: C must no longer find it
        self.flush()
