"""clCreateContext, clCreateContextFromType, clGetContextInfo, retain/release, destructor callbacks."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.api.device import devices_of_type
from vkcl.api.device import resolve as resolve_device
from vkcl.api.platform import resolve as resolve_platform
from vkcl.api.platform import the_platform
from vkcl.core.context import Context
from vkcl.errors import CLError
from vkcl.vulkan.check import VulkanError

CONTEXT_INFO = {
    cl.CL_CONTEXT_REFERENCE_COUNT: ("cl_uint", a("refcount")),
    cl.CL_CONTEXT_NUM_DEVICES: ("cl_uint", lambda c: len(c.devices)),
    cl.CL_CONTEXT_DEVICES: ("handle[]", a("devices")),
    cl.CL_CONTEXT_PROPERTIES: ("intptr[]", a("properties")),
}


def resolve(ptr) -> Context:
    return handles.get(ptr, Context, cl.CL_INVALID_CONTEXT)


def _properties(properties):
    """Validate a context property list: (platform, interop_user_sync, the list as passed)."""
    props = info.properties(properties)
    platform, user_sync, seen = None, False, set()
    for name, value in props or []:
        if name in seen:
            raise CLError(cl.CL_INVALID_PROPERTY, f"property {name:#x} given twice")
        seen.add(name)
        if name == cl.CL_CONTEXT_PLATFORM:
            platform = resolve_platform(handles.ffi.cast("cl_platform_id", value)) if value else None
            if platform is None:
                raise CLError(cl.CL_INVALID_PLATFORM)
        elif name == cl.CL_CONTEXT_INTEROP_USER_SYNC:
            if value not in (0, 1):
                raise CLError(cl.CL_INVALID_PROPERTY, "CL_CONTEXT_INTEROP_USER_SYNC must be CL_TRUE or CL_FALSE")
            user_sync = bool(value)
        else:
            raise CLError(cl.CL_INVALID_PROPERTY, f"unsupported context property {name:#x}")
    return platform or the_platform(), user_sync, info.raw_properties(props)


def _notify(pfn_notify, user_data):
    """The application's error callback as a Python callable (or None)."""
    if pfn_notify == handles.NULL:
        if user_data != handles.NULL:
            raise CLError(cl.CL_INVALID_VALUE, "user_data without pfn_notify")
        return None
    ffi = handles.ffi

    def notify(message: str, private: bytes) -> None:
        text = ffi.new("char[]", message.encode())
        blob = ffi.from_buffer(private) if private else ffi.NULL
        pfn_notify(text, blob, len(private), user_data)

    return notify


def _make(devices: list, props, notify):
    _, user_sync, raw = props
    try:
        ctx = Context(devices, raw, user_sync, notify)
    except VulkanError as e:
        raise CLError(e.cl_code, str(e)) from None
    return handles.new(ctx)


def create_context(properties, num_devices, devices, pfn_notify, user_data):
    props = _properties(properties)
    if devices == handles.NULL or num_devices == 0:
        raise CLError(cl.CL_INVALID_VALUE, "no devices")
    notify = _notify(pfn_notify, user_data)
    unique = []
    for i in range(num_devices):
        d = resolve_device(devices[i])
        if d not in unique:  # spec: duplicate devices are ignored
            unique.append(d)
    return _make(unique, props, notify)


def create_context_from_type(properties, device_type, pfn_notify, user_data):
    props = _properties(properties)
    notify = _notify(pfn_notify, user_data)
    found = devices_of_type(props[0], device_type)
    if not found:
        raise CLError(cl.CL_DEVICE_NOT_FOUND)
    return _make(found, props, notify)


def retain_context(context):
    resolve(context).retain()


def release_context(context):
    handles.release(resolve(context))


def get_context_info(context, param_name, size, value, size_ret):
    info.answer(CONTEXT_INFO, param_name, size, value, size_ret, resolve(context))


def set_context_destructor_callback(context, pfn_notify, user_data):
    ctx = resolve(context)
    if pfn_notify == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    handle = ctx.handle
    ctx.add_destructor_callback(lambda: pfn_notify(handle, user_data))
