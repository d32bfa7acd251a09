"""clGetDeviceIDs, clGetDeviceInfo, sub-devices, device retain/release, host timers."""
from __future__ import annotations

import time
from operator import attrgetter as a

from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.api.platform import resolve as resolve_platform
from vkcl.core.device import PRINTF_BUFFER_SIZE, Device
from vkcl.errors import CLError


def const(value):
    return lambda _device: value


DEVICE_TYPES = (cl.CL_DEVICE_TYPE_DEFAULT | cl.CL_DEVICE_TYPE_CPU | cl.CL_DEVICE_TYPE_GPU |
                cl.CL_DEVICE_TYPE_ACCELERATOR | cl.CL_DEVICE_TYPE_CUSTOM)

# Every cl_device_info of OpenCL 3.0, plus those of the extensions vkcl reports.
DEVICE_INFO = {
    cl.CL_DEVICE_TYPE: ("cl_ulong", a("type")),
    cl.CL_DEVICE_VENDOR_ID: ("cl_uint", a("vendor_id")),
    cl.CL_DEVICE_MAX_COMPUTE_UNITS: ("cl_uint", a("max_compute_units")),
    cl.CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS: ("cl_uint", const(3)),
    cl.CL_DEVICE_MAX_WORK_GROUP_SIZE: ("size_t", a("max_work_group_size")),
    cl.CL_DEVICE_MAX_WORK_ITEM_SIZES: ("size_t[]", a("max_work_item_sizes")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR: ("cl_uint", const(1)),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT: ("cl_uint", const(1)),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT: ("cl_uint", const(1)),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG: ("cl_uint", const(1)),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT: ("cl_uint", const(1)),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE: ("cl_uint", lambda d: d.vector_width("double")),
    cl.CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF: ("cl_uint", lambda d: d.vector_width("half")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR: ("cl_uint", const(1)),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT: ("cl_uint", const(1)),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_INT: ("cl_uint", const(1)),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG: ("cl_uint", const(1)),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: ("cl_uint", const(1)),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE: ("cl_uint", lambda d: d.vector_width("double")),
    cl.CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF: ("cl_uint", lambda d: d.vector_width("half")),
    cl.CL_DEVICE_MAX_CLOCK_FREQUENCY: ("cl_uint", const(0)),  # Vulkan does not tell
    cl.CL_DEVICE_ADDRESS_BITS: ("cl_uint", const(64)),
    cl.CL_DEVICE_MAX_MEM_ALLOC_SIZE: ("cl_ulong", a("max_mem_alloc_size")),
    cl.CL_DEVICE_IMAGE_SUPPORT: ("cl_bool", const(False)),
    cl.CL_DEVICE_MAX_READ_IMAGE_ARGS: ("cl_uint", const(0)),
    cl.CL_DEVICE_MAX_WRITE_IMAGE_ARGS: ("cl_uint", const(0)),
    cl.CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS: ("cl_uint", const(0)),
    cl.CL_DEVICE_IMAGE2D_MAX_WIDTH: ("size_t", const(0)),
    cl.CL_DEVICE_IMAGE2D_MAX_HEIGHT: ("size_t", const(0)),
    cl.CL_DEVICE_IMAGE3D_MAX_WIDTH: ("size_t", const(0)),
    cl.CL_DEVICE_IMAGE3D_MAX_HEIGHT: ("size_t", const(0)),
    cl.CL_DEVICE_IMAGE3D_MAX_DEPTH: ("size_t", const(0)),
    cl.CL_DEVICE_IMAGE_MAX_BUFFER_SIZE: ("size_t", const(0)),
    cl.CL_DEVICE_IMAGE_MAX_ARRAY_SIZE: ("size_t", const(0)),
    cl.CL_DEVICE_MAX_SAMPLERS: ("cl_uint", const(0)),
    cl.CL_DEVICE_IMAGE_PITCH_ALIGNMENT: ("cl_uint", const(0)),
    cl.CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT: ("cl_uint", const(0)),
    cl.CL_DEVICE_MAX_PARAMETER_SIZE: ("size_t", const(1024)),
    cl.CL_DEVICE_MEM_BASE_ADDR_ALIGN: ("cl_uint", a("mem_base_addr_align")),
    cl.CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: ("cl_uint", const(128)),
    cl.CL_DEVICE_SINGLE_FP_CONFIG: ("cl_ulong", a("single_fp_config")),
    cl.CL_DEVICE_DOUBLE_FP_CONFIG: ("cl_ulong", a("double_fp_config")),
    cl.CL_DEVICE_HALF_FP_CONFIG: ("cl_ulong", a("half_fp_config")),
    cl.CL_DEVICE_GLOBAL_MEM_CACHE_TYPE: ("cl_uint", const(cl.CL_READ_WRITE_CACHE)),
    cl.CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE: ("cl_uint", const(64)),
    cl.CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: ("cl_ulong", const(0)),  # Vulkan does not tell
    cl.CL_DEVICE_GLOBAL_MEM_SIZE: ("cl_ulong", a("global_mem_size")),
    cl.CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE: ("cl_ulong", a("max_constant_buffer_size")),
    cl.CL_DEVICE_MAX_CONSTANT_ARGS: ("cl_uint", const(8)),
    cl.CL_DEVICE_LOCAL_MEM_TYPE: ("cl_uint", const(cl.CL_LOCAL)),
    cl.CL_DEVICE_LOCAL_MEM_SIZE: ("cl_ulong", a("local_mem_size")),
    cl.CL_DEVICE_ERROR_CORRECTION_SUPPORT: ("cl_bool", const(False)),
    cl.CL_DEVICE_PROFILING_TIMER_RESOLUTION: ("size_t", a("profiling_timer_resolution")),
    cl.CL_DEVICE_ENDIAN_LITTLE: ("cl_bool", const(True)),
    cl.CL_DEVICE_AVAILABLE: ("cl_bool", const(True)),
    cl.CL_DEVICE_COMPILER_AVAILABLE: ("cl_bool", const(True)),
    cl.CL_DEVICE_LINKER_AVAILABLE: ("cl_bool", const(True)),
    cl.CL_DEVICE_EXECUTION_CAPABILITIES: ("cl_ulong", const(cl.CL_EXEC_KERNEL)),
    cl.CL_DEVICE_QUEUE_ON_HOST_PROPERTIES: ("cl_ulong", a("queue_properties")),
    cl.CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES: ("cl_ulong", const(0)),
    cl.CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE: ("cl_uint", const(0)),
    cl.CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE: ("cl_uint", const(0)),
    cl.CL_DEVICE_MAX_ON_DEVICE_QUEUES: ("cl_uint", const(0)),
    cl.CL_DEVICE_MAX_ON_DEVICE_EVENTS: ("cl_uint", const(0)),
    cl.CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: ("cl_ulong", const(0)),
    cl.CL_DEVICE_BUILT_IN_KERNELS: ("string", const("")),
    cl.CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION: ("name_version[]", const([])),
    cl.CL_DEVICE_PLATFORM: ("handle", a("platform")),
    cl.CL_DEVICE_NAME: ("string", a("name")),
    cl.CL_DEVICE_VENDOR: ("string", a("vendor")),
    cl.CL_DRIVER_VERSION: ("string", a("driver_version")),
    cl.CL_DEVICE_PROFILE: ("string", const("FULL_PROFILE")),
    cl.CL_DEVICE_VERSION: ("string", a("version")),
    cl.CL_DEVICE_NUMERIC_VERSION: ("cl_uint", const((3 << 22))),
    cl.CL_DEVICE_OPENCL_C_VERSION: ("string", const("OpenCL C 1.2 vkcl")),
    cl.CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR: ("cl_uint", const((1 << 22) | (2 << 12))),
    cl.CL_DEVICE_OPENCL_C_ALL_VERSIONS: ("name_version[]", a("opencl_c_all_versions")),
    cl.CL_DEVICE_OPENCL_C_FEATURES: ("name_version[]", a("opencl_c_features")),
    cl.CL_DEVICE_EXTENSIONS: ("string", a("extensions")),
    cl.CL_DEVICE_EXTENSIONS_WITH_VERSION: ("name_version[]", a("extensions_with_version")),
    cl.CL_DEVICE_IL_VERSION: ("string", a("il_version")),
    cl.CL_DEVICE_ILS_WITH_VERSION: ("name_version[]", a("ils_with_version")),
    cl.CL_DEVICE_HOST_UNIFIED_MEMORY: ("cl_bool", a("host_unified_memory")),
    cl.CL_DEVICE_PRINTF_BUFFER_SIZE: ("size_t", const(PRINTF_BUFFER_SIZE)),
    cl.CL_DEVICE_PREFERRED_INTEROP_USER_SYNC: ("cl_bool", const(True)),
    cl.CL_DEVICE_PARENT_DEVICE: ("handle", const(None)),
    cl.CL_DEVICE_PARTITION_MAX_SUB_DEVICES: ("cl_uint", const(0)),
    cl.CL_DEVICE_PARTITION_PROPERTIES: ("intptr[]", const([0])),
    cl.CL_DEVICE_PARTITION_AFFINITY_DOMAIN: ("cl_ulong", const(0)),
    cl.CL_DEVICE_PARTITION_TYPE: ("intptr[]", const([])),  # a root device: size 0
    cl.CL_DEVICE_REFERENCE_COUNT: ("cl_uint", const(1)),
    cl.CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE: ("size_t", const(0)),
    cl.CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE: ("size_t", const(0)),
    cl.CL_DEVICE_SVM_CAPABILITIES: ("cl_ulong", const(0)),
    cl.CL_DEVICE_MAX_PIPE_ARGS: ("cl_uint", const(0)),
    cl.CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS: ("cl_uint", const(0)),
    cl.CL_DEVICE_PIPE_MAX_PACKET_SIZE: ("cl_uint", const(0)),
    cl.CL_DEVICE_PIPE_SUPPORT: ("cl_bool", const(False)),
    cl.CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT: ("cl_uint", const(0)),
    cl.CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT: ("cl_uint", const(0)),
    cl.CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT: ("cl_uint", const(0)),
    cl.CL_DEVICE_MAX_NUM_SUB_GROUPS: ("cl_uint", a("max_num_sub_groups")),
    cl.CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS: ("cl_bool", const(False)),
    cl.CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES: ("cl_ulong", a("atomic_memory_capabilities")),
    cl.CL_DEVICE_ATOMIC_FENCE_CAPABILITIES: ("cl_ulong", a("atomic_fence_capabilities")),
    cl.CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT: ("cl_bool", const(True)),
    cl.CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT: ("cl_bool", const(False)),
    cl.CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT: ("cl_bool", const(False)),
    cl.CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: ("size_t", a("subgroup_size")),
    cl.CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED: ("string", const("v0000-01-01-00")),  # none yet
    # cl_khr_device_uuid
    cl.CL_DEVICE_UUID_KHR: ("bytes", lambda d: d.physical.device_uuid),
    cl.CL_DRIVER_UUID_KHR: ("bytes", lambda d: d.physical.driver_uuid),
    cl.CL_DEVICE_LUID_VALID_KHR: ("cl_bool", lambda d: d.physical.luid_valid),
    cl.CL_DEVICE_LUID_KHR: ("bytes", lambda d: d.physical.device_luid),
    cl.CL_DEVICE_NODE_MASK_KHR: ("cl_uint", lambda d: d.physical.node_mask),
}
# cl_khr_pci_bus_info, only where the device reports its PCI address.
PCI_BUS_INFO = {cl.CL_DEVICE_PCI_BUS_INFO_KHR: ("bytes", a("pci_bus_info"))}
# cl_khr_integer_dot_product, only where the device has it.
INTEGER_DOT_PRODUCT = {
    cl.CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR: ("cl_ulong", a("integer_dot_product_capabilities")),
    cl.CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR: ("bytes", a("integer_dot_product_8bit")),
    cl.CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR:
        ("bytes", a("integer_dot_product_4x8bit_packed")),
}


def resolve(ptr) -> Device:
    return handles.get(ptr, Device, cl.CL_INVALID_DEVICE)


def devices_of_type(platform, device_type: int) -> list:
    if device_type == 0 or (device_type & ~DEVICE_TYPES and device_type != cl.CL_DEVICE_TYPE_ALL):
        raise CLError(cl.CL_INVALID_DEVICE_TYPE)
    if device_type == cl.CL_DEVICE_TYPE_ALL:
        return list(platform.devices)
    found = [d for d in platform.devices if d.type & device_type]
    if device_type & cl.CL_DEVICE_TYPE_DEFAULT and platform.devices[0] not in found:
        found.insert(0, platform.devices[0])  # the first device is the default one
    return found


def get_device_ids(platform, device_type, num_entries, devices, num_devices):
    p = resolve_platform(platform)
    found = devices_of_type(p, device_type)
    if (num_entries == 0 and devices != handles.NULL) or (devices == handles.NULL and num_devices == handles.NULL):
        raise CLError(cl.CL_INVALID_VALUE)
    if not found:
        raise CLError(cl.CL_DEVICE_NOT_FOUND)
    if devices != handles.NULL:
        for i, d in enumerate(found[:num_entries]):
            devices[i] = d.handle
    if num_devices != handles.NULL:
        num_devices[0] = len(found)


def get_device_info(device, param_name, size, value, size_ret):
    d = resolve(device)
    table = DEVICE_INFO
    if param_name in PCI_BUS_INFO and d.physical.pci_bus is not None:
        table = PCI_BUS_INFO
    elif param_name in INTEGER_DOT_PRODUCT and d.has_integer_dot_product:
        table = INTEGER_DOT_PRODUCT
    info.answer(table, param_name, size, value, size_ret, d)


PARTITION_TYPES = (cl.CL_DEVICE_PARTITION_EQUALLY, cl.CL_DEVICE_PARTITION_BY_COUNTS,
                   cl.CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN)


def create_sub_devices(in_device, properties, num_devices, out_devices, num_devices_ret):
    resolve(in_device)
    props = info.properties(properties)
    if not props:
        raise CLError(cl.CL_INVALID_VALUE, "no partition property")
    # Spec: CL_INVALID_VALUE when the partition type is valid but not supported by the device.
    raise CLError(cl.CL_INVALID_VALUE, "vkcl devices cannot be partitioned")


def retain_device(device):
    resolve(device).retain()


def release_device(device):
    resolve(device).release()


def get_host_timer(device, host_timestamp):
    resolve(device)
    if host_timestamp == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    host_timestamp[0] = time.monotonic_ns()


def get_device_and_host_timer(device, device_timestamp, host_timestamp):
    resolve(device)
    if device_timestamp == handles.NULL or host_timestamp == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    # Profiling times are GPU timestamps converted to CLOCK_MONOTONIC (calibrated per queue),
    # so the device timer the application compares them with is that same clock.
    now = time.monotonic_ns()
    device_timestamp[0] = now
    host_timestamp[0] = now
