"""Command queues: creation, info, retain/release, clFlush, clFinish."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.api.context import resolve as resolve_context
from vkcl.api.device import resolve as resolve_device
from vkcl.core.queue import CommandQueue
from vkcl.errors import CLError
from vkcl.vulkan.check import VulkanError

ON_HOST = cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | cl.CL_QUEUE_PROFILING_ENABLE
KNOWN = ON_HOST | cl.CL_QUEUE_ON_DEVICE | cl.CL_QUEUE_ON_DEVICE_DEFAULT

QUEUE_INFO = {
    cl.CL_QUEUE_CONTEXT: ("handle", a("context")),
    cl.CL_QUEUE_DEVICE: ("handle", a("device")),
    cl.CL_QUEUE_REFERENCE_COUNT: ("cl_uint", a("refcount")),
    cl.CL_QUEUE_PROPERTIES: ("cl_ulong", a("properties")),
    cl.CL_QUEUE_PROPERTIES_ARRAY: ("cl_ulong[]", a("raw_properties")),
    cl.CL_QUEUE_DEVICE_DEFAULT: ("handle", lambda q: None),
}


def resolve(ptr) -> CommandQueue:
    return handles.get(ptr, CommandQueue, cl.CL_INVALID_COMMAND_QUEUE)


def _create(context, device, properties: int, raw: list[int]):
    ctx = resolve_context(context)
    dev = resolve_device(device)
    if dev not in ctx.devices:
        raise CLError(cl.CL_INVALID_DEVICE, "device not in the context")
    if properties & ~KNOWN or (properties & cl.CL_QUEUE_ON_DEVICE_DEFAULT and not properties & cl.CL_QUEUE_ON_DEVICE):
        raise CLError(cl.CL_INVALID_VALUE, f"invalid queue properties {properties:#x}")
    if properties & ~ON_HOST:
        raise CLError(cl.CL_INVALID_QUEUE_PROPERTIES, "device-side queues are not supported")
    try:
        q = CommandQueue(ctx, dev, properties, raw)
    except VulkanError as e:
        raise CLError(e.cl_code, str(e)) from None
    h = handles.new(q)
    if q.fast is not None:
        q.fast.register(h)
    return h


def create_command_queue(context, device, properties):
    return _create(context, device, properties, [])


def create_command_queue_with_properties(context, device, properties):
    props = info.properties(properties, "cl_queue_properties")
    bits, seen = 0, set()
    for name, value in props or []:
        if name in seen:
            raise CLError(cl.CL_INVALID_VALUE, f"queue property {name:#x} given twice")
        seen.add(name)
        if name == cl.CL_QUEUE_PROPERTIES:
            bits = value
        elif name == cl.CL_QUEUE_SIZE:
            if not bits & cl.CL_QUEUE_ON_DEVICE:
                raise CLError(cl.CL_INVALID_VALUE, "CL_QUEUE_SIZE is for device queues")
        else:
            raise CLError(cl.CL_INVALID_VALUE, f"unsupported queue property {name:#x}")
    return _create(context, device, bits, info.raw_properties(props))


def retain_command_queue(command_queue):
    resolve(command_queue).retain()


def release_command_queue(command_queue):
    handles.release(resolve(command_queue))


def get_command_queue_info(command_queue, param_name, size, value, size_ret):
    q = resolve(command_queue)
    if param_name == cl.CL_QUEUE_SIZE:
        raise CLError(cl.CL_INVALID_COMMAND_QUEUE, "CL_QUEUE_SIZE is for device queues")
    info.answer(QUEUE_INFO, param_name, size, value, size_ret, q)


def flush(command_queue):
    resolve(command_queue).flush()


def finish(command_queue):
    resolve(command_queue).finish()


def loop_cut(command_queue) -> int:
    """C's fast path ran a batch in which llvmpipe cut a loop short (icd/fast_path.c,
    vkcl_py_loop_cut): the warning names its kernels. Called with the queue's lock held."""
    try:
        resolve(command_queue).loop_cut_in_c()
        return cl.CL_SUCCESS
    except Exception:
        return cl.CL_OUT_OF_RESOURCES


def fast_events_done(command_queue, submitted_ns) -> int:
    """C's clFinish ran a batch of fast launches that asked for events (icd/fast_path.c,
    vkcl_py_fast_events_done): complete them. Called with the queue's lock held."""
    try:
        resolve(command_queue).fast_events_done(submitted_ns)
        return cl.CL_SUCCESS
    except CLError as e:
        return e.code
    except Exception:
        return cl.CL_OUT_OF_RESOURCES
