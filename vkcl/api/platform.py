"""clGetPlatformIDs, clGetPlatformInfo (and clIcdGetPlatformIDsKHR, which shares the first)."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.core.platform import Platform, platform
from vkcl.errors import CLError

PLATFORM_INFO = {
    cl.CL_PLATFORM_PROFILE: ("string", a("profile")),
    cl.CL_PLATFORM_VERSION: ("string", a("version")),
    cl.CL_PLATFORM_NUMERIC_VERSION: ("cl_uint", a("numeric_version")),
    cl.CL_PLATFORM_NAME: ("string", a("name")),
    cl.CL_PLATFORM_VENDOR: ("string", a("vendor")),
    cl.CL_PLATFORM_EXTENSIONS: ("string", a("extensions")),
    cl.CL_PLATFORM_EXTENSIONS_WITH_VERSION: ("name_version[]", a("extensions_with_version")),
    cl.CL_PLATFORM_HOST_TIMER_RESOLUTION: ("cl_ulong", a("host_timer_resolution")),
    cl.CL_PLATFORM_ICD_SUFFIX_KHR: ("string", a("icd_suffix")),
}


def the_platform() -> Platform:
    """The platform with handles for it and its devices; CL_PLATFORM_NOT_FOUND_KHR without one."""
    p = platform()
    if p is None:
        raise CLError(cl.CL_PLATFORM_NOT_FOUND_KHR, "no usable Vulkan device")
    if p.handle is None:
        handles.new(p)
        for d in p.devices:
            handles.new(d)
    return p


def resolve(ptr) -> Platform:
    """A platform argument: NULL selects vkcl's platform (the spec leaves NULL to the implementation)."""
    if ptr == handles.NULL:
        return the_platform()
    return handles.get(ptr, Platform, cl.CL_INVALID_PLATFORM)


def get_platform_ids(num_entries, platforms, num_platforms):
    if (num_entries == 0 and platforms != handles.NULL) or (platforms == handles.NULL and num_platforms == handles.NULL):
        raise CLError(cl.CL_INVALID_VALUE)
    p = the_platform()
    if platforms != handles.NULL:
        platforms[0] = p.handle
    if num_platforms != handles.NULL:
        num_platforms[0] = 1


def get_platform_info(platform_, param_name, size, value, size_ret):
    info.answer(PLATFORM_INFO, param_name, size, value, size_ret, resolve(platform_))
