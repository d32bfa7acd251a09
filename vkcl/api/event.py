"""Events: wait lists, clWaitForEvents, info and profiling, user events, callbacks, markers
and barriers."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.api.context import resolve as resolve_context
from vkcl.api.queue import resolve as resolve_queue
from vkcl.core.commands import Barrier, Marker
from vkcl.core.event import COMPLETE, Event, UserEvent
from vkcl.errors import CLError

EVENT_INFO = {
    cl.CL_EVENT_COMMAND_QUEUE: ("handle", a("queue")),
    cl.CL_EVENT_CONTEXT: ("handle", a("context")),
    cl.CL_EVENT_COMMAND_TYPE: ("cl_uint", a("command_type")),
    cl.CL_EVENT_COMMAND_EXECUTION_STATUS: ("cl_int", a("status")),
    cl.CL_EVENT_REFERENCE_COUNT: ("cl_uint", a("refcount")),
}
PROFILING_INDEX = {cl.CL_PROFILING_COMMAND_QUEUED: 0, cl.CL_PROFILING_COMMAND_SUBMIT: 1,
                   cl.CL_PROFILING_COMMAND_START: 2, cl.CL_PROFILING_COMMAND_END: 3,
                   cl.CL_PROFILING_COMMAND_COMPLETE: 4}


def resolve(ptr) -> Event:
    return handles.get(ptr, Event, cl.CL_INVALID_EVENT)


def wait_list(context, num: int, events) -> list[Event]:
    """A command's event_wait_list, validated as every clEnqueue* call must."""
    if (num == 0) != (events == handles.NULL):
        raise CLError(cl.CL_INVALID_EVENT_WAIT_LIST)
    out = [handles.get(events[i], Event, cl.CL_INVALID_EVENT_WAIT_LIST) for i in range(num)]
    if any(e.context is not context for e in out):
        raise CLError(cl.CL_INVALID_CONTEXT, "an event of another context in the wait list")
    return out


def give_event(ev: Event, event_ptr) -> None:
    """Hand the command's event to the application when it asked for one."""
    if event_ptr != handles.NULL:
        event_ptr[0] = handles.new(ev)


def finish_blocking(ev: Event) -> None:
    """A blocking command: wait, and report a failed wait list as the spec says."""
    if ev.wait() < 0:
        raise CLError(cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)


def wait_for_events(num_events, event_list):
    if num_events == 0 or event_list == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    events = [resolve(event_list[i]) for i in range(num_events)]
    if any(e.context is not events[0].context for e in events):
        raise CLError(cl.CL_INVALID_CONTEXT)
    failed = False
    for e in events:
        failed |= e.wait() < 0
    if failed:
        raise CLError(cl.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)


def get_event_info(event, param_name, size, value, size_ret):
    ev = resolve(event)
    if param_name == cl.CL_EVENT_COMMAND_EXECUTION_STATUS and ev.status > COMPLETE and ev.batch is not None:
        ev.queue.retire()  # report progress without waiting for the completion thread
    info.answer(EVENT_INFO, param_name, size, value, size_ret, ev)


def get_event_profiling_info(event, param_name, size, value, size_ret):
    ev = resolve(event)
    # (a trace gives every queue timestamps: the application's view stays its own)
    asked = ev.queue is not None and ev.queue.properties & cl.CL_QUEUE_PROFILING_ENABLE
    if ev.times is None or not asked or ev.status != COMPLETE:
        raise CLError(cl.CL_PROFILING_INFO_NOT_AVAILABLE)
    index = PROFILING_INDEX.get(param_name)
    if index is None:
        raise CLError(cl.CL_INVALID_VALUE)
    info.write(info.ENCODERS["cl_ulong"](ev.times[index]), size, value, size_ret)


def retain_event(event):
    resolve(event).retain()


def release_event(event):
    handles.release(resolve(event))


def create_user_event(context):
    return handles.new(UserEvent(resolve_context(context)))


def set_user_event_status(event, execution_status):
    ev = resolve(event)
    if not ev.user:
        raise CLError(cl.CL_INVALID_EVENT, "not a user event")
    if execution_status > COMPLETE:
        raise CLError(cl.CL_INVALID_VALUE, "a user event can only be set to CL_COMPLETE or an error")
    with ev.cond:
        if ev.set_once:
            raise CLError(cl.CL_INVALID_OPERATION, "user event status already set")
        ev.set_once = True
    ev.set_status(execution_status)


def set_event_callback(event, command_exec_callback_type, pfn_notify, user_data):
    ev = resolve(event)
    if pfn_notify == handles.NULL or command_exec_callback_type not in (cl.CL_SUBMITTED, cl.CL_RUNNING, cl.CL_COMPLETE):
        raise CLError(cl.CL_INVALID_VALUE)
    ev.retain()  # the callback keeps its event alive until it has run
    handle = ev.handle

    def callback(status: int) -> None:
        try:
            pfn_notify(handle, status, user_data)
        finally:
            handles.release(ev)

    ev.add_callback(command_exec_callback_type, callback)


# --- markers and barriers --------------------------------------------------------------------

def _enqueue_sync(command_queue, num, events, event, cmd):
    # With no wait list a marker or barrier waits for every earlier command: a batch's
    # timeline value is signalled after every earlier batch's (Vulkan's signal order).
    q = resolve_queue(command_queue)
    ev = q.enqueue(cmd, wait_list(q.context, num, events))
    give_event(ev, event)


def enqueue_marker_with_wait_list(command_queue, num_events, event_wait_list, event):
    _enqueue_sync(command_queue, num_events, event_wait_list, event, Marker(after_all=not num_events))


def enqueue_barrier_with_wait_list(command_queue, num_events, event_wait_list, event):
    _enqueue_sync(command_queue, num_events, event_wait_list, event, Barrier(after_all=not num_events))


def enqueue_marker(command_queue, event):
    if event == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    _enqueue_sync(command_queue, 0, handles.NULL, event, Marker(after_all=True))


def enqueue_barrier(command_queue):
    _enqueue_sync(command_queue, 0, handles.NULL, handles.NULL, Barrier(after_all=True))


def enqueue_wait_for_events(command_queue, num_events, event_list):
    if num_events == 0 or event_list == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    q = resolve_queue(command_queue)
    waits = [resolve(event_list[i]) for i in range(num_events)]
    if any(e.context is not q.context for e in waits):
        raise CLError(cl.CL_INVALID_CONTEXT)
    q.enqueue(Barrier(), waits)
