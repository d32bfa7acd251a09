"""Start-up and shut-down inside the ICD: start runs once, from the library's embedded init code."""
from __future__ import annotations

import atexit
import os
import threading

_shutdown_lock = threading.Lock()
_shut_down = False
_lib = None  # the ICD library (start), told when shutdown is done


def start(ffi, lib, build_info: dict) -> None:
    from vkcl import log
    from vkcl.api import registry
    from vkcl._gen import thunks

    global _lib
    _lib = lib
    log.setup()
    registry.bind(ffi, lib)
    thunks.install(ffi, lib, registry.implementation)
    from vkcl.api import ndrange, queue
    ffi.def_extern(name="vkcl_py_fast_event", error=-6)(ndrange.fast_event)  # -6: CL_OUT_OF_HOST_MEMORY
    ffi.def_extern(name="vkcl_py_fast_events_done", error=-5)(queue.fast_events_done)  # CL_OUT_OF_RESOURCES
    ffi.def_extern(name="vkcl_py_loop_cut", error=-5)(queue.loop_cut)

    @ffi.def_extern(name="vkcl_py_at_exit")
    def _at_exit():  # the C host's exit(): its interpreter is never finalised
        shutdown(python_host=False)

    atexit.register(shutdown)  # a Python host (pyopencl) finalises its interpreter first
    os.register_at_fork(after_in_child=_forked)  # (a C host's fork: icd/vkcl_icd.c)
    from vkcl.vulkan import instance
    instance.on_created.append(lib.vkcl_register_exit)
    lib.vkcl_set_ready(1)


def _forked() -> None:
    """A Python host's os.fork(): vkcl's threads and the driver's are not in the child, so its
    exit must not wait for them (the library refuses the child's OpenCL calls)."""
    global _shut_down, _shutdown_lock
    _shutdown_lock = threading.Lock()  # another thread may have held it at the fork
    _shut_down = True


def _live_events() -> list:
    from vkcl.api import handles
    from vkcl.core.event import Event
    return [(h, e) for h, e in list(handles._objects.items()) if isinstance(e, Event)]


def _flush_pending_events(events: list) -> None:
    """Submit the recorded commands of events not yet ended, as clReleaseCommandQueue's
    implicit flush would: a host's exit may still wait on them (pyopencl's ~nanny_event)."""
    for _, e in events:
        if not e.done and e.batch is None and e.queue is not None:
            try:
                e.queue.flush_for(e)
            except Exception:  # a lost device, or a callback thread refused at exit
                pass


def _note_final_events(events: list) -> None:
    """With every device idle: retire what the GPU finished, then tell C the status of each
    event that has ended, which a Python host finalizing after this may still wait on."""
    queues = {id(e.batch.queue): e.batch.queue for _, e in events if not e.done and e.batch is not None}
    for q in queues.values():
        try:
            q.retire()
        except Exception:  # a lost device: its events stay as they are
            pass
    ended = [(h, e.status) for h, e in events if e.done]
    if ended and _lib is not None:
        from vkcl.api.handles import ffi
        _lib.vkcl_note_final_events(ffi.new("void *[]", [h for h, _ in ended]),
                                    ffi.new("int[]", [s for _, s in ended]), len(ended))


def shutdown(python_host: bool = True) -> None:
    """Process exit: vkcl's threads leave the driver and the devices go idle before the
    driver's libraries are unloaded under them (seen: a segfault at exit on NVIDIA). A Python
    host then finalizes its interpreter: the clock holders are let go first (clock_hold.let_go)."""
    global _shut_down
    with _shutdown_lock:
        if _shut_down:
            return
        _shut_down = True
    try:
        from vkcl.core import completion
        from vkcl.vulkan import cuda_copy
        from vkcl.vulkan.device import wait_idle_all
        cuda_copy.stop_all()  # libcuda's own exit handlers may run before vkcl's
        completion.stop_all()
        events = _live_events()
        _flush_pending_events(events)
        wait_idle_all()
        _note_final_events(events)
        from vkcl import trace
        if trace.ENABLED:
            trace.write()
        if python_host:
            from vkcl.vulkan import clock_hold
            clock_hold.let_go()
    except Exception:  # never turn an exit into a failure
        pass
    if _lib is not None:
        _lib.vkcl_note_shutdown()
