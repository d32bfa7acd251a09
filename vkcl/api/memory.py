"""clCreateBuffer(WithProperties), clCreateSubBuffer, clGetMemObjectInfo, retain/release,
clSetMemObjectDestructorCallback."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.api.context import resolve as resolve_context
from vkcl.core.memory import DEVICE_ACCESS, HOST_ACCESS, Buffer, MemObject, SubBuffer
from vkcl.errors import CLError
from vkcl.vulkan.check import VulkanError
from vkcl.vulkan.memory import AllocationFailed

HOST_PTR_FLAGS = cl.CL_MEM_USE_HOST_PTR | cl.CL_MEM_ALLOC_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR
BUFFER_FLAGS = DEVICE_ACCESS | HOST_PTR_FLAGS | HOST_ACCESS

MEM_INFO = {
    cl.CL_MEM_TYPE: ("cl_uint", a("mem_type")),
    cl.CL_MEM_FLAGS: ("cl_ulong", a("flags")),
    cl.CL_MEM_SIZE: ("size_t", a("size")),
    cl.CL_MEM_HOST_PTR: ("cl_ulong", lambda m: m.host_ptr if m.flags & cl.CL_MEM_USE_HOST_PTR else 0),
    cl.CL_MEM_MAP_COUNT: ("cl_uint", a("map_count")),
    cl.CL_MEM_REFERENCE_COUNT: ("cl_uint", a("refcount")),
    cl.CL_MEM_CONTEXT: ("handle", a("context")),
    cl.CL_MEM_ASSOCIATED_MEMOBJECT: ("handle", a("parent")),
    cl.CL_MEM_OFFSET: ("size_t", a("origin")),
    cl.CL_MEM_USES_SVM_POINTER: ("cl_bool", lambda m: False),
    cl.CL_MEM_PROPERTIES: ("cl_ulong[]", a("properties")),
}


def resolve(ptr) -> MemObject:
    return handles.get(ptr, MemObject, cl.CL_INVALID_MEM_OBJECT)


def _one_of(flags: int, group: int) -> bool:
    bits = flags & group
    return bits & (bits - 1) == 0


def check_flags(flags: int) -> int:
    """Validate buffer flags (spec: CL_INVALID_VALUE); return them with the default access."""
    if flags & ~BUFFER_FLAGS or not _one_of(flags, DEVICE_ACCESS) or not _one_of(flags, HOST_ACCESS):
        raise CLError(cl.CL_INVALID_VALUE, f"invalid memory flags {flags:#x}")
    if flags & cl.CL_MEM_USE_HOST_PTR and flags & (cl.CL_MEM_ALLOC_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR):
        raise CLError(cl.CL_INVALID_VALUE, "CL_MEM_USE_HOST_PTR excludes ALLOC_HOST_PTR and COPY_HOST_PTR")
    return flags if flags & DEVICE_ACCESS else flags | cl.CL_MEM_READ_WRITE


def _create(context, properties, flags, size, host_ptr):
    ctx = resolve_context(context)
    props = info.properties(properties, "cl_mem_properties")
    if props:
        raise CLError(cl.CL_INVALID_PROPERTY, f"unsupported memory property {props[0][0]:#x}")
    flags = check_flags(flags)
    if size == 0 or size > min(d.max_mem_alloc_size for d in ctx.devices):
        raise CLError(cl.CL_INVALID_BUFFER_SIZE, f"size {size}")
    wants_ptr = bool(flags & (cl.CL_MEM_USE_HOST_PTR | cl.CL_MEM_COPY_HOST_PTR))
    if wants_ptr != (host_ptr != handles.NULL):
        raise CLError(cl.CL_INVALID_HOST_PTR)
    address = int(handles.ffi.cast("uintptr_t", host_ptr)) if host_ptr != handles.NULL else 0
    try:
        mem = Buffer(ctx, flags, size, address, [0] if props is not None else [])
    except AllocationFailed as e:
        raise CLError(e.cl_code, str(e)) from None
    except VulkanError as e:
        raise CLError(e.cl_code, str(e)) from None
    return handles.new(mem)


def create_buffer(context, flags, size, host_ptr):
    return _create(context, handles.NULL, flags, size, host_ptr)


def create_buffer_with_properties(context, properties, flags, size, host_ptr):
    return _create(context, properties, flags, size, host_ptr)


def create_sub_buffer(buffer, flags, create_type, create_info):
    parent = resolve(buffer)
    if not isinstance(parent, Buffer):
        raise CLError(cl.CL_INVALID_MEM_OBJECT, "a sub-buffer's parent must be a buffer, not a sub-buffer")
    if flags & ~(DEVICE_ACCESS | HOST_ACCESS) or not _one_of(flags, DEVICE_ACCESS) or not _one_of(flags, HOST_ACCESS):
        raise CLError(cl.CL_INVALID_VALUE, f"invalid sub-buffer flags {flags:#x}")
    p = parent.flags
    if (p & cl.CL_MEM_WRITE_ONLY and flags & (cl.CL_MEM_READ_WRITE | cl.CL_MEM_READ_ONLY)) or \
       (p & cl.CL_MEM_READ_ONLY and flags & (cl.CL_MEM_READ_WRITE | cl.CL_MEM_WRITE_ONLY)):
        raise CLError(cl.CL_INVALID_VALUE, "sub-buffer access wider than its parent's")
    if (p & cl.CL_MEM_HOST_WRITE_ONLY and flags & cl.CL_MEM_HOST_READ_ONLY) or \
       (p & cl.CL_MEM_HOST_READ_ONLY and flags & cl.CL_MEM_HOST_WRITE_ONLY) or \
       (p & cl.CL_MEM_HOST_NO_ACCESS and flags & (cl.CL_MEM_HOST_READ_ONLY | cl.CL_MEM_HOST_WRITE_ONLY)):
        raise CLError(cl.CL_INVALID_VALUE, "sub-buffer host access wider than its parent's")
    if create_type != cl.CL_BUFFER_CREATE_TYPE_REGION or create_info == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "create type must be CL_BUFFER_CREATE_TYPE_REGION with a region")
    region = handles.ffi.cast("size_t *", create_info)
    origin, size = int(region[0]), int(region[1])
    if size == 0:
        raise CLError(cl.CL_INVALID_BUFFER_SIZE)
    if origin + size > parent.size:
        raise CLError(cl.CL_INVALID_VALUE, "region outside the buffer")
    if any(origin % (d.mem_base_addr_align // 8) for d in parent.context.devices):
        raise CLError(cl.CL_MISALIGNED_SUB_BUFFER_OFFSET)
    # Inherited: device access and host access when not given, the host-pointer flags always.
    eff = flags | (p & HOST_PTR_FLAGS)
    if not flags & DEVICE_ACCESS:
        eff |= p & DEVICE_ACCESS
    if not flags & HOST_ACCESS:
        eff |= p & HOST_ACCESS
    return handles.new(SubBuffer(parent, eff, origin, size))


def retain_mem_object(memobj):
    resolve(memobj).retain()


def release_mem_object(memobj):
    handles.release(resolve(memobj))


def get_mem_object_info(memobj, param_name, size, value, size_ret):
    info.answer(MEM_INFO, param_name, size, value, size_ret, resolve(memobj))


def get_pipe_info(pipe, param_name, size, value, size_ret):
    resolve(pipe)
    # No vkcl device supports pipes, so no memory object is a pipe.
    raise CLError(cl.CL_INVALID_MEM_OBJECT, "not a pipe: vkcl devices have no pipe support")


def set_mem_object_destructor_callback(memobj, pfn_notify, user_data):
    mem = resolve(memobj)
    if pfn_notify == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    handle = mem.handle
    mem.add_destructor_callback(lambda: pfn_notify(handle, user_data))


IMAGE_TYPES = (cl.CL_MEM_OBJECT_IMAGE1D, cl.CL_MEM_OBJECT_IMAGE1D_BUFFER, cl.CL_MEM_OBJECT_IMAGE1D_ARRAY,
               cl.CL_MEM_OBJECT_IMAGE2D, cl.CL_MEM_OBJECT_IMAGE2D_ARRAY, cl.CL_MEM_OBJECT_IMAGE3D)


def get_supported_image_formats(context, flags, image_type, num_entries, image_formats, num_image_formats):
    resolve_context(context)
    if flags & ~(BUFFER_FLAGS | cl.CL_MEM_KERNEL_READ_AND_WRITE) or image_type not in IMAGE_TYPES or \
            (num_entries == 0 and image_formats != handles.NULL):
        raise CLError(cl.CL_INVALID_VALUE)
    # No vkcl device supports images (CL_DEVICE_IMAGE_SUPPORT is CL_FALSE): there are none.
    if num_image_formats != handles.NULL:
        num_image_formats[0] = 0
