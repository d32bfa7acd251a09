"""Kernels: creation, arguments, info, argument info, work-group and sub-group info."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.compiler import spirv
from vkcl.api import handles, info
from vkcl.api.device import resolve as resolve_device
from vkcl.api.program import drop_if_unused, resolve as resolve_program
from vkcl.core.kernel import Kernel
from vkcl.core.memory import MemObject
from vkcl.errors import CLError

KERNEL_INFO = {
    cl.CL_KERNEL_FUNCTION_NAME: ("string", a("name")),
    cl.CL_KERNEL_NUM_ARGS: ("cl_uint", a("num_args")),
    cl.CL_KERNEL_REFERENCE_COUNT: ("cl_uint", a("refcount")),
    cl.CL_KERNEL_CONTEXT: ("handle", a("context")),
    cl.CL_KERNEL_PROGRAM: ("handle", a("program")),
    cl.CL_KERNEL_ATTRIBUTES: ("string", a("attributes")),
}
ARG_INFO = {
    cl.CL_KERNEL_ARG_ADDRESS_QUALIFIER: ("cl_uint", lambda r: r.address_qualifier or cl.CL_KERNEL_ARG_ADDRESS_PRIVATE),
    cl.CL_KERNEL_ARG_ACCESS_QUALIFIER: ("cl_uint", lambda r: r.access_qualifier or cl.CL_KERNEL_ARG_ACCESS_NONE),
    cl.CL_KERNEL_ARG_TYPE_NAME: ("string", a("type_name")),
    cl.CL_KERNEL_ARG_TYPE_QUALIFIER: ("cl_ulong", lambda r: r.type_qualifier or 0),
    cl.CL_KERNEL_ARG_NAME: ("string", a("name")),
}


def resolve(ptr) -> Kernel:
    return handles.get(ptr, Kernel, cl.CL_INVALID_KERNEL)


def _make(program, name: str):
    p = program
    if not p.has_executable:
        raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE)
    reflections = p.kernel_reflection(name)
    if not reflections:
        raise CLError(cl.CL_INVALID_KERNEL_NAME, f"no kernel {name!r}")
    return Kernel(p, name, reflections)


def create_kernel(program, kernel_name):
    p = resolve_program(program)
    name = info.string(kernel_name)
    if name is None:
        raise CLError(cl.CL_INVALID_VALUE)
    return handles.new(_make(p, name))


def create_kernels_in_program(program, num_kernels, kernels, num_kernels_ret):
    p = resolve_program(program)
    if not p.has_executable:
        raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE)
    names = p.kernel_names
    if kernels != handles.NULL and num_kernels < len(names):
        raise CLError(cl.CL_INVALID_VALUE, f"room for {num_kernels} kernels, the program has {len(names)}")
    if kernels != handles.NULL:
        for i, name in enumerate(names):
            kernels[i] = handles.new(_make(p, name))
    if num_kernels_ret != handles.NULL:
        num_kernels_ret[0] = len(names)


def clone_kernel(source_kernel):
    return handles.new(resolve(source_kernel).clone())


def retain_kernel(kernel):
    resolve(kernel).retain()


def release_kernel(kernel):
    k = resolve(kernel)
    handles.release(k)
    if k.refcount == 0:  # the program may have been waiting for its last kernel
        drop_if_unused(k.program)


def _mem_from(value):
    """A cl_mem argument: the pointer to the handle, which may be NULL or hold NULL."""
    if value is None:
        return None
    h = handles.ffi.cast("cl_mem *", value)[0]
    if h == handles.NULL:
        return None
    return handles.get(h, MemObject, cl.CL_INVALID_MEM_OBJECT)


def _sampler_from(value):
    raise CLError(cl.CL_INVALID_SAMPLER)


def _bytes(value, size: int) -> bytes:
    return handles.ffi.buffer(handles.ffi.cast("char *", value), size)[:]


def set_kernel_arg(kernel, arg_index, arg_size, arg_value):
    k = resolve(kernel)
    value = None if arg_value == handles.NULL else arg_value
    k.set_arg(arg_index, arg_size, value, _mem_from, _sampler_from, _bytes)


def get_kernel_info(kernel, param_name, size, value, size_ret):
    info.answer(KERNEL_INFO, param_name, size, value, size_ret, resolve(kernel))


def get_kernel_arg_info(kernel, arg_index, param_name, size, value, size_ret):
    k = resolve(kernel)
    if arg_index >= k.num_args:
        raise CLError(cl.CL_INVALID_ARG_INDEX)
    if param_name not in ARG_INFO:
        raise CLError(cl.CL_INVALID_VALUE)
    if not any(k.program.builds[d].arg_info for d in k.reflections):
        raise CLError(cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    refl = k.arg_refl.get(arg_index)
    if refl is None:
        raise CLError(cl.CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    info.answer(ARG_INFO, param_name, size, value, size_ret, refl)


def _kernel_device(k: Kernel, device):
    if device == handles.NULL:
        if len(k.reflections) != 1:
            raise CLError(cl.CL_INVALID_DEVICE, "the kernel's program has several devices: name one")
        return next(iter(k.reflections))
    d = resolve_device(device)
    if d not in k.reflections:
        raise CLError(cl.CL_INVALID_DEVICE, "device not associated with the kernel")
    return d


def _local_mem(k: Kernel, d) -> int:
    """Local memory the kernel uses: its __local variables plus the __local arguments set."""
    ex = k.program.executable(d)
    static = spirv.workgroup_sizes(ex.spirv).get(k.name, 0) if ex is not None else 0
    return static + sum(a.local_size for a in k.args if a is not None and a.kind == "local")


def _work_group_size(k: Kernel, d) -> int:
    """The largest work-group the kernel can run with: the size it requires, when it requires
    one; else the device's limit (Vulkan pipelines must accept any size up to it, so registers
    and private memory lower nothing; its local memory does not grow with the size)."""
    reqd = k.reqd_work_group_size
    if reqd:
        return reqd[0] * reqd[1] * reqd[2]
    return d.max_work_group_size


WORK_GROUP_INFO = {
    cl.CL_KERNEL_WORK_GROUP_SIZE: ("size_t", _work_group_size),
    cl.CL_KERNEL_COMPILE_WORK_GROUP_SIZE: ("size_t[]", lambda k, d: list(k.reqd_work_group_size or (0, 0, 0))),
    cl.CL_KERNEL_LOCAL_MEM_SIZE: ("cl_ulong", _local_mem),
    cl.CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: ("size_t", lambda k, d: d.subgroup_size),
    # The private arrays the kernel keeps as arrays; Vulkan tells neither a pipeline's registers
    # nor its scratch memory (docs/status.md).
    cl.CL_KERNEL_PRIVATE_MEM_SIZE: ("cl_ulong", lambda k, d: k.reflections.get(d, k.reflection).private_mem_size),
}


def get_kernel_work_group_info(kernel, device, param_name, size, value, size_ret):
    k = resolve(kernel)
    d = _kernel_device(k, device)
    if param_name == cl.CL_KERNEL_GLOBAL_WORK_SIZE:
        raise CLError(cl.CL_INVALID_VALUE, "only for custom devices and built-in kernels")
    info.answer(WORK_GROUP_INFO, param_name, size, value, size_ret, k, d)


def get_kernel_sub_group_info(kernel, device, param_name, input_value_size, input_value, size, value, size_ret):
    k = resolve(kernel)
    d = _kernel_device(k, device)
    if not d.max_num_sub_groups:
        raise CLError(cl.CL_INVALID_OPERATION, "the device does not support sub-groups")
    ffi = handles.ffi
    sg = d.subgroup_size

    def local_size() -> int:
        if input_value == ffi.NULL or input_value_size == 0 or input_value_size % 8 or input_value_size > 24:
            raise CLError(cl.CL_INVALID_VALUE, "input_value must be a local size of 1-3 size_t")
        dims = ffi.cast("size_t *", input_value)
        n = 1
        for i in range(input_value_size // 8):
            n *= int(dims[i])
        return n

    if param_name == cl.CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE:
        result = ("size_t", min(sg, local_size()))
    elif param_name == cl.CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE:
        result = ("size_t", -(-local_size() // sg))
    elif param_name == cl.CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT:
        if input_value == ffi.NULL or input_value_size != 8:
            raise CLError(cl.CL_INVALID_VALUE)
        count = int(ffi.cast("size_t *", input_value)[0])
        n = count * sg
        result = ("size_t[]", [n if 0 < n <= d.max_work_group_size else 0, 1, 1][: max(1, size // 8 or 1)])
    elif param_name == cl.CL_KERNEL_MAX_NUM_SUB_GROUPS:
        result = ("size_t", -(-d.max_work_group_size // sg))
    elif param_name == cl.CL_KERNEL_COMPILE_NUM_SUB_GROUPS:
        result = ("size_t", 0)
    else:
        raise CLError(cl.CL_INVALID_VALUE)
    info.write(info.ENCODERS[result[0]](result[1]), size, value, size_ret)


def get_kernel_sub_group_info_khr(kernel, device, param_name, input_value_size, input_value, size, value, size_ret):
    get_kernel_sub_group_info(kernel, device, param_name, input_value_size, input_value, size, value, size_ret)
