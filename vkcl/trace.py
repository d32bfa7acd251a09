"""A timeline of what vkcl did, as Chrome trace / Perfetto JSON (VKCL_TRACE=<file>, which
`python -m vkcl trace -- <command>` sets): every OpenCL call on its thread, compiles (with cache
hits and misses), queue submissions, and each command's execution on the GPU, per queue, from
Vulkan timestamps.

While tracing, every queue takes timestamps (the application's view of profiling is
unchanged: CL_QUEUE_PROPERTIES and clGetEventProfilingInfo answer as they would), and calls go
through Python (C's fast path is off), so that all of them are seen. Untraced, nothing here
runs: callers test ENABLED, a module constant.
"""
from __future__ import annotations

import json
import os
import threading
import time

from vkcl import config

ENABLED = bool(config.get("trace"))
_PID = os.getpid()
_GPU_PID = _PID + 1_000_000  # a second "process" in the viewer: the GPU, a row per queue
_events: list[dict] = []
_lock = threading.Lock()
_queue_rows: dict[int, int] = {}


def _us(ns: int) -> float:
    return ns / 1000.0


def span(name: str, cat: str, start_ns: int, end_ns: int, args: dict | None = None) -> None:
    """A complete event on the calling thread."""
    e = {"name": name, "cat": cat, "ph": "X", "ts": _us(start_ns), "dur": _us(max(0, end_ns - start_ns)),
         "pid": _PID, "tid": threading.get_native_id()}
    if args:
        e["args"] = args
    with _lock:
        _events.append(e)


def instant(name: str, cat: str, args: dict | None = None) -> None:
    e = {"name": name, "cat": cat, "ph": "i", "s": "t", "ts": _us(time.monotonic_ns()), "pid": _PID,
         "tid": threading.get_native_id()}
    if args:
        e["args"] = args
    with _lock:
        _events.append(e)


def gpu(queue, name: str, start_ns: int, end_ns: int) -> None:
    """A command's execution on the GPU (host-clock nanoseconds), on its queue's row."""
    with _lock:
        row = _queue_rows.get(id(queue))
        if row is None:
            row = _queue_rows[id(queue)] = len(_queue_rows) + 1
            _events.append({"name": "thread_name", "ph": "M", "pid": _GPU_PID, "tid": row,
                            "args": {"name": f"queue {row} ({queue.device.name})"}})
        _events.append({"name": name, "cat": "gpu", "ph": "X", "ts": _us(start_ns),
                        "dur": _us(max(0, end_ns - start_ns)), "pid": _GPU_PID, "tid": row})


def api(name: str, fn):
    """`fn`, an entry point's implementation, recording each call."""
    def entry(*args):
        start = time.monotonic_ns()
        try:
            return fn(*args)
        finally:
            span(name, "api", start, time.monotonic_ns())
    entry.__name__ = name
    return entry


def write() -> None:
    """Write the trace file (at exit; again later, with what came since)."""
    path = config.get("trace")
    with _lock:
        events = list(_events)
    meta = [{"name": "process_name", "ph": "M", "pid": _PID, "args": {"name": f"host (pid {_PID})"}},
            {"name": "process_name", "ph": "M", "pid": _GPU_PID, "args": {"name": "GPU"}}]
    tmp = f"{path}.{_PID}.tmp"
    with open(tmp, "w") as f:
        json.dump({"traceEvents": meta + events, "displayTimeUnit": "ms"}, f)
    os.replace(tmp, path)
