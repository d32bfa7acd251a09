"""clEnqueueNDRangeKernel and clEnqueueTask."""
from __future__ import annotations

from vkcl._gen import cl
from vkcl.api import handles
from vkcl.api.event import give_event, wait_list
from vkcl.api.kernel import resolve as resolve_kernel
from vkcl.api.queue import resolve as resolve_queue
from vkcl.core import fastpath
from vkcl.core.commands import Marker
from vkcl.core.ndrange import Launch, NDRangeKernel, choose_local, program_image
from vkcl.errors import CLError
from vkcl.vulkan.check import VulkanError

SIZE_MAX = (1 << 64) - 1


def _sizes(ptr, n: int) -> tuple | None:
    return None if ptr == handles.NULL else tuple(ptr[0:n])


def _check_local(kernel, device, global_: tuple, local: tuple, uniform: bool) -> None:
    if any(l == 0 for l in local):
        raise CLError(cl.CL_INVALID_WORK_GROUP_SIZE, "a local size of 0")
    for l, m in zip(local, device.max_work_item_sizes):
        if l > m:
            raise CLError(cl.CL_INVALID_WORK_ITEM_SIZE, f"local size {l} > {m}")
    total = 1
    for l in local:
        total *= l
    if total > device.max_work_group_size:
        raise CLError(cl.CL_INVALID_WORK_GROUP_SIZE, f"{total} work-items > {device.max_work_group_size}")
    reqd = kernel.reqd_work_group_size
    if reqd is not None and tuple(local) + (1,) * (3 - len(local)) != tuple(reqd):
        raise CLError(cl.CL_INVALID_WORK_GROUP_SIZE, f"the kernel requires {reqd}")
    if uniform and any(g % l for g, l in zip(global_, local)):
        raise CLError(cl.CL_INVALID_WORK_GROUP_SIZE, "the global size is not a multiple of the local size "
                      "(the program needs uniform work-groups: OpenCL C 1.x or -cl-uniform-work-group-size)")


EMPTY = object()  # a launch with a 0 in its global size: nothing to run (OpenCL 2.1+)


def _plan(k, q):
    """The kernel's plan on the queue's device, made once per kernel and device."""
    plan = k.plans.get(q.device)
    if plan is None:
        if q.device not in k.reflections:
            raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE, "no executable for the queue's device")
        refused = k.reflections[q.device].layout_error
        if refused:  # never launched with a guessed argument layout (compiler/argument_layout.py)
            raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE, f"kernel {k.name}: {refused}")
        try:
            plan = k.plans[q.device] = program_image(k.program, q.device, q.vk).plan(k, q.device)
        except VulkanError as e:
            raise CLError(e.cl_code, str(e)) from None
    return plan


def _launch(q, k, plan, work_dim: int, offset, global_, local, local_sizes):
    """Validate sizes and make the Launch (spec errors of clEnqueueNDRangeKernel)."""
    device = q.device
    if global_ is None:  # OpenCL 2.1+: like a global size of 0, nothing runs
        return EMPTY
    offset = offset or (0,) * work_dim
    for g, o in zip(global_, offset):
        if g > 0xFFFFFFFF:
            raise CLError(cl.CL_INVALID_GLOBAL_WORK_SIZE, "a global size beyond 32 bits")
        if g + o > SIZE_MAX or o + g > 0xFFFFFFFF:
            raise CLError(cl.CL_INVALID_GLOBAL_OFFSET)
    image = plan.image
    if local is None:
        if k.reqd_work_group_size is not None:
            local = tuple(k.reqd_work_group_size[:work_dim])
        elif 0 not in global_:
            local = choose_local(global_, device, image.uniform)
    if 0 in global_:
        return EMPTY
    _check_local(k, device, global_, local, image.uniform)
    static = image.static_local.get(k.name, 0)
    if static + sum(local_sizes) > device.local_mem_size:
        raise CLError(cl.CL_OUT_OF_RESOURCES, "more local memory than the device has")
    counts = tuple(n // max(1, es) for n, (_, _, es) in zip(local_sizes, plan.locals))
    try:
        return Launch(plan, q.vk, work_dim, offset, global_, local, counts)
    except VulkanError as e:
        raise CLError(e.cl_code, str(e)) from None


def enqueue(q, k, work_dim: int, offset, global_, local, waits, event, fast_ok: bool = False) -> None:
    """The hot path: everything that depends only on the sizes is cached per kernel plan."""
    if k.context is not q.context:
        raise CLError(cl.CL_INVALID_CONTEXT)
    if k.unset:
        raise CLError(cl.CL_INVALID_KERNEL_ARGS, f"arguments {k.unset_args()} are not set")
    plan = _plan(k, q)
    args = k.args
    local_sizes = tuple(args[o].local_size for o, _, _ in plan.locals) if plan.locals else ()
    key = (work_dim, offset, global_, local, local_sizes)
    launch = plan.launches.get(key)
    if launch is None:
        launch = _launch(q, k, plan, work_dim, offset, global_, local, local_sizes)
        if len(plan.launches) > 256:
            plan.launches.clear()
        plan.launches[key] = launch
    if launch is EMPTY:
        ev = q.enqueue(Marker(cl.CL_COMMAND_NDRANGE_KERNEL), waits)
    else:
        cmd = NDRangeKernel(q, k, plan, launch)
        ev = q.enqueue(cmd, waits)
        # The second identical launch in a row (same queue, sizes and argument values) that C
        # did not take: let C repeat it (core/fastpath.py).
        if fast_ok and q.fast is not None:
            candidate = (q, key, k.arg_generation)
            if k.fast_candidate == candidate:
                fastpath.prepare(q, k, work_dim, global_, local, cmd)
            k.fast_candidate = candidate
    give_event(ev, event)


def enqueue_nd_range_kernel(command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
                            num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    k = resolve_kernel(kernel)
    waits = wait_list(q.context, num_events, event_wait_list) if num_events or event_wait_list != handles.NULL else ()
    if not 1 <= work_dim <= 3:
        raise CLError(cl.CL_INVALID_WORK_DIMENSION)
    offset = _sizes(global_work_offset, work_dim)
    enqueue(q, k, work_dim, offset, _sizes(global_work_size, work_dim), _sizes(local_work_size, work_dim), waits,
            event, fast_ok=not waits and offset is None)


def fast_event(command_queue, event, query, command_type) -> int:
    """C's fast path is recording a launch or a transfer that asks for an event
    (icd/fast_path.c, vkcl_py_fast_event): the event, joined to the batch, and on a profiling
    queue the timestamp queries C writes (query[0]). Called with the queue's lock held."""
    try:
        q = resolve_queue(command_queue)
        give_event(q.fast_event(command_type), event)
        query[0] = q.fast_timestamps()  # last: C records nothing after a failure
        return cl.CL_SUCCESS
    except CLError as e:
        return e.code
    except Exception:
        return cl.CL_OUT_OF_HOST_MEMORY


def enqueue_task(command_queue, kernel, num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    k = resolve_kernel(kernel)
    waits = wait_list(q.context, num_events, event_wait_list)
    enqueue(q, k, 1, None, (1,), (1,), waits, event)
