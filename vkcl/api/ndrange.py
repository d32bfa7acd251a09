"""clEnqueueNDRangeKernel and clEnqueueTask."""
from __future__ import annotations

from vkcl._gen import cl
from vkcl.api import handles
from vkcl.api.event import give_event, wait_list
from vkcl.api.kernel import resolve as resolve_kernel
from vkcl.api.queue import resolve as resolve_queue
from vkcl.core.ndrange import NDRangeKernel, choose_local, program_image
from vkcl.errors import CLError
from vkcl.vulkan.check import VulkanError

SIZE_MAX = (1 << 64) - 1


def _sizes(ptr, n: int) -> tuple | None:
    return None if ptr == handles.NULL else tuple(int(ptr[i]) for i in range(n))


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


def enqueue(q, k, work_dim: int, offset, global_, local, waits, event) -> None:
    device = q.device
    if k.context is not q.context:
        raise CLError(cl.CL_INVALID_CONTEXT)
    if device not in k.reflections:
        raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE, "no executable for the queue's device")
    if not 1 <= work_dim <= 3:
        raise CLError(cl.CL_INVALID_WORK_DIMENSION)
    if global_ is None:
        raise CLError(cl.CL_INVALID_GLOBAL_WORK_SIZE)
    offset = offset or (0,) * work_dim
    for g, o in zip(global_, offset):
        if g > 0xFFFFFFFF:
            raise CLError(cl.CL_INVALID_GLOBAL_WORK_SIZE, "a global size beyond 32 bits")
        if g + o > SIZE_MAX or o + g > 0xFFFFFFFF:
            raise CLError(cl.CL_INVALID_GLOBAL_OFFSET)
    unset = k.unset_args()
    if unset:
        raise CLError(cl.CL_INVALID_KERNEL_ARGS, f"arguments {unset} are not set")
    try:
        image = program_image(k.program, device, q.vk)
        plan = image.plan(k, device)
    except VulkanError as e:
        raise CLError(e.cl_code, str(e)) from None
    uniform = image.uniform
    if local is None:
        if k.reqd_work_group_size is not None:
            local = tuple(k.reqd_work_group_size[:work_dim])
        elif 0 not in global_:
            local = choose_local(global_, device, uniform)
    if 0 in global_:  # OpenCL 2.1+: an empty NDRange does nothing, once its wait list is met
        from vkcl.core.commands import Marker
        ev = q.enqueue(Marker(cl.CL_COMMAND_NDRANGE_KERNEL), waits)
        return give_event(ev, event)
    _check_local(k, device, global_, local, uniform)
    static = sum(image.reflection.workgroup_variable_sizes.values())
    if static + sum(a.local_size for a in k.args if a.kind == "local") > device.local_mem_size:
        raise CLError(cl.CL_OUT_OF_RESOURCES, "more local memory than the device has")
    try:
        cmd = NDRangeKernel(q, k, plan, work_dim, offset, global_, local)
    except VulkanError as e:
        raise CLError(e.cl_code, str(e)) from None
    give_event(q.enqueue(cmd, waits), event)


def enqueue_nd_range_kernel(command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,
                            num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    k = resolve_kernel(kernel)
    waits = wait_list(q.context, num_events, event_wait_list)
    if not 1 <= work_dim <= 3:
        raise CLError(cl.CL_INVALID_WORK_DIMENSION)
    enqueue(q, k, work_dim, _sizes(global_work_offset, work_dim), _sizes(global_work_size, work_dim),
            _sizes(local_work_size, work_dim), waits, event)


def enqueue_task(command_queue, kernel, num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    k = resolve_kernel(kernel)
    waits = wait_list(q.context, num_events, event_wait_list)
    enqueue(q, k, 1, None, (1,), (1,), waits, event)
