"""Programs: creation from source, IL or binaries; build, compile, link; info queries."""
from __future__ import annotations

from operator import attrgetter as a

from vkcl import compiler
from vkcl._gen import cl
from vkcl.api import handles, info
from vkcl.api.context import resolve as resolve_context
from vkcl.api.device import resolve as resolve_device
from vkcl.core.program import Program
from vkcl.errors import CLError

PROGRAM_INFO = {
    cl.CL_PROGRAM_REFERENCE_COUNT: ("cl_uint", a("refcount")),
    cl.CL_PROGRAM_CONTEXT: ("handle", a("context")),
    cl.CL_PROGRAM_NUM_DEVICES: ("cl_uint", lambda p: len(p.devices)),
    cl.CL_PROGRAM_DEVICES: ("handle[]", a("devices")),
    cl.CL_PROGRAM_SOURCE: ("string", lambda p: p.source or ""),
    cl.CL_PROGRAM_IL: ("bytes", lambda p: p.il or b""),
    cl.CL_PROGRAM_BINARY_SIZES: ("size_t[]", lambda p: [len(p.binary(d)) for d in p.devices]),
    cl.CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT: ("cl_bool", lambda p: False),
    cl.CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT: ("cl_bool", lambda p: False),
}
EXECUTABLE_INFO = {
    cl.CL_PROGRAM_NUM_KERNELS: ("size_t", lambda p: len(p.kernel_names)),
    cl.CL_PROGRAM_KERNEL_NAMES: ("string", lambda p: ";".join(p.kernel_names)),
}
BUILD_INFO = {
    cl.CL_PROGRAM_BUILD_STATUS: ("cl_int", a("status")),
    cl.CL_PROGRAM_BUILD_OPTIONS: ("string", a("options")),
    cl.CL_PROGRAM_BUILD_LOG: ("string", a("log")),
    cl.CL_PROGRAM_BINARY_TYPE: ("cl_uint", a("binary_type")),
    cl.CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE: ("size_t", lambda b: 0),
}


def resolve(ptr) -> Program:
    return handles.get(ptr, Program, cl.CL_INVALID_PROGRAM)


def _new(program: Program):
    return handles.new(program)


def create_program_with_source(context, count, strings, lengths):
    ctx = resolve_context(context)
    if count == 0 or strings == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "no source strings")
    ffi = handles.ffi
    parts = []
    for i in range(count):
        if strings[i] == ffi.NULL:
            raise CLError(cl.CL_INVALID_VALUE, f"source string {i} is NULL")
        n = lengths[i] if lengths != ffi.NULL else 0
        parts.append(ffi.string(strings[i]) if n == 0 else ffi.buffer(strings[i], n)[:])
    source = b"".join(parts).decode("utf-8", errors="replace")
    return _new(Program(ctx, list(ctx.devices), source=source))


def create_program_with_il(context, il, length):
    ctx = resolve_context(context)
    if il == handles.NULL or length == 0:
        raise CLError(cl.CL_INVALID_VALUE, "no IL")
    if not any(d.has_il for d in ctx.devices):
        raise CLError(cl.CL_INVALID_OPERATION, "no device of the context takes IL programs (llvm-spirv is missing)")
    data = handles.ffi.buffer(handles.ffi.cast("char *", il), length)[:]
    try:
        compiler.check_il(data)
    except compiler.InvalidILError as e:
        raise CLError(cl.CL_INVALID_VALUE, str(e)) from None
    return _new(Program(ctx, list(ctx.devices), il=data))


def _device_list(ctx_devices: list, num_devices: int, device_list, code_if_foreign: int = cl.CL_INVALID_DEVICE) -> list:
    if (num_devices == 0) != (device_list == handles.NULL):
        raise CLError(cl.CL_INVALID_VALUE, "num_devices and device_list disagree")
    if num_devices == 0:
        return list(ctx_devices)
    out = []
    for i in range(num_devices):
        d = resolve_device(device_list[i])
        if d not in ctx_devices:
            raise CLError(code_if_foreign, "device not associated with the program")
        if d not in out:
            out.append(d)
    return out


def create_program_with_binary(context, num_devices, device_list, lengths, binaries, binary_status):
    ctx = resolve_context(context)
    if num_devices == 0 or device_list == handles.NULL or lengths == handles.NULL or binaries == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    ffi = handles.ffi
    devices = _device_list(ctx.devices, num_devices, device_list)
    results, statuses, failure = {}, [], None
    for i in range(num_devices):
        dev = resolve_device(device_list[i])
        if lengths[i] == 0 or binaries[i] == ffi.NULL:
            raise CLError(cl.CL_INVALID_VALUE, f"binary {i} is empty")
        data = ffi.buffer(binaries[i], lengths[i])[:]
        try:
            binary = compiler.unpack(data)
            why = binary.incompatibility(dev.compiler_caps, compiler.compiler_version())
            if why:
                raise compiler.InvalidBinaryError(why)
            results[dev] = compiler.CompileResult.from_binary(binary)
            statuses.append(cl.CL_SUCCESS)
        except compiler.InvalidBinaryError:
            statuses.append(cl.CL_INVALID_BINARY)
            failure = cl.CL_INVALID_BINARY
    if binary_status != ffi.NULL:
        for i, s in enumerate(statuses):
            binary_status[i] = s
    if failure is not None:
        raise CLError(failure)
    return _new(Program(ctx, devices, binaries=results))


def create_program_with_built_in_kernels(context, num_devices, device_list, kernel_names):
    ctx = resolve_context(context)
    _device_list(ctx.devices, num_devices, device_list)
    if kernel_names == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    raise CLError(cl.CL_INVALID_VALUE, "vkcl devices have no built-in kernels")


def retain_program(program):
    resolve(program).retain()


def release_program(program):
    release(resolve(program))


def release(p: Program) -> None:
    """Drop one reference. Spec: the program is deleted once its count is zero *and* its
    kernels are gone, so the handle outlives the count while kernels exist (CL_KERNEL_PROGRAM
    stays valid); the last kernel's release drops it (drop_if_unused)."""
    if p.release() and not p.kernels:
        handles.drop(p)


def drop_if_unused(p: Program) -> None:
    if p.refcount == 0 and not p.kernels:
        handles.drop(p)


def _notify(program: Program, pfn_notify, user_data):
    if pfn_notify == handles.NULL:
        if user_data != handles.NULL:
            raise CLError(cl.CL_INVALID_VALUE, "user_data without pfn_notify")
        return None
    program.retain()  # the callback keeps the program alive until it ran

    def notify() -> None:
        try:
            pfn_notify(program.handle, user_data)
        finally:
            release(program)
    return notify


def _check_rebuild(p: Program) -> None:
    if p.kernels:
        raise CLError(cl.CL_INVALID_OPERATION, "kernel objects are attached to the program")
    if p.building:
        raise CLError(cl.CL_INVALID_OPERATION, "a build is in progress")


def _options(text, mode: str, code: int) -> compiler.BuildOptions:
    try:
        return compiler.parse_options(info.string(text), mode)
    except compiler.InvalidOptionsError as e:
        raise CLError(code, str(e)) from None


def build_program(program, num_devices, device_list, options, pfn_notify, user_data):
    p = resolve(program)
    devices = _device_list(p.devices, num_devices, device_list)
    notify = None
    opts = _options(options, "build", cl.CL_INVALID_BUILD_OPTIONS)
    _check_rebuild(p)
    if p.source is None and p.il is None and any(p.builds[d].result is None for d in devices):
        raise CLError(cl.CL_INVALID_BINARY, "no binary for a device")
    notify = _notify(p, pfn_notify, user_data)
    if not p.build(devices, opts, notify):
        raise CLError(cl.CL_BUILD_PROGRAM_FAILURE)


def compile_program(program, num_devices, device_list, options, num_input_headers, input_headers,
                    header_include_names, pfn_notify, user_data):
    p = resolve(program)
    devices = _device_list(p.devices, num_devices, device_list)
    # Spec: with no headers both arrays must be NULL; with headers neither may be.
    if (num_input_headers == 0) != (input_headers == handles.NULL) or \
       (num_input_headers == 0) != (header_include_names == handles.NULL):
        raise CLError(cl.CL_INVALID_VALUE, "input headers and their names disagree")
    opts = _options(options, "compile", cl.CL_INVALID_COMPILER_OPTIONS)
    if p.source is None and p.il is None:
        raise CLError(cl.CL_INVALID_OPERATION, "the program has no source or IL")
    _check_rebuild(p)
    headers = {}
    for i in range(num_input_headers):
        h = resolve(input_headers[i])
        if h.source is None:
            raise CLError(cl.CL_INVALID_OPERATION, "a header program has no source")
        headers[handles.ffi.string(header_include_names[i]).decode()] = h.source
    notify = _notify(p, pfn_notify, user_data)
    if not p.compile(devices, opts, headers, notify):
        raise CLError(cl.CL_COMPILE_PROGRAM_FAILURE)


def link_program(context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify,
                 user_data):
    ctx = resolve_context(context)
    devices = _device_list(ctx.devices, num_devices, device_list)
    if num_input_programs == 0 or input_programs == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "no input programs")
    if pfn_notify == handles.NULL and user_data != handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "user_data without pfn_notify")
    opts = _options(options, "link", cl.CL_INVALID_LINKER_OPTIONS)
    inputs = [resolve(input_programs[i]) for i in range(num_input_programs)]
    for p in inputs:
        for d in devices:
            b = p.builds.get(d)
            if b is None or b.binary_type not in (cl.CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
                                                  cl.CL_PROGRAM_BINARY_TYPE_LIBRARY):
                raise CLError(cl.CL_INVALID_OPERATION, "an input is not a compiled object or library")
    out = Program(ctx, devices)
    handle = _new(out)
    notify = _notify(out, pfn_notify, user_data)
    if not out.link_from(devices, opts, inputs, notify):
        # Spec: a failed link still returns a valid program object, whose build log says why.
        raise CLError(cl.CL_LINK_PROGRAM_FAILURE, result=handle)
    return handle


def unload_compiler():
    compiler.shutdown()


def unload_platform_compiler(platform):
    from vkcl.api.platform import resolve as resolve_platform
    resolve_platform(platform)
    compiler.shutdown()


def get_program_info(program, param_name, size, value, size_ret):
    p = resolve(program)
    if param_name == cl.CL_PROGRAM_BINARIES:
        return _binaries(p, size, value, size_ret)
    if param_name in EXECUTABLE_INFO:
        if not p.has_executable:
            raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE)
        return info.answer(EXECUTABLE_INFO, param_name, size, value, size_ret, p)
    info.answer(PROGRAM_INFO, param_name, size, value, size_ret, p)


def _binaries(p: Program, size: int, value, size_ret) -> None:
    """CL_PROGRAM_BINARIES: param_value is an array of pointers the application allocated."""
    ffi = handles.ffi
    n = len(p.devices)
    if value != ffi.NULL:
        if size < n * ffi.sizeof("void *"):
            raise CLError(cl.CL_INVALID_VALUE)
        ptrs = ffi.cast("unsigned char **", value)
        for i, d in enumerate(p.devices):
            data = p.binary(d)
            if ptrs[i] != ffi.NULL and data:
                ffi.memmove(ptrs[i], data, len(data))
    if size_ret != ffi.NULL:
        size_ret[0] = n * ffi.sizeof("void *")


def get_program_build_info(program, device, param_name, size, value, size_ret):
    p = resolve(program)
    d = resolve_device(device)
    if d not in p.builds:
        raise CLError(cl.CL_INVALID_DEVICE, "device not associated with the program")
    info.answer(BUILD_INFO, param_name, size, value, size_ret, p.builds[d])


SPEC_SIZES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "f32": 4, "f64": 8}


def set_program_specialization_constant(program, spec_id, spec_size, spec_value):
    p = resolve(program)
    if not any(d.has_il for d in p.devices):
        raise CLError(cl.CL_INVALID_OPERATION, "no device of the program takes IL programs (llvm-spirv is missing)")
    if p.il is None:
        raise CLError(cl.CL_INVALID_PROGRAM, "only IL programs have specialisation constants")
    kind = compiler.il_spec_constants(p.il).get(spec_id)
    if kind is None:
        raise CLError(cl.CL_INVALID_SPEC_ID, f"the IL has no specialisation constant {spec_id}")
    if spec_value == handles.NULL or spec_size != SPEC_SIZES[kind]:
        raise CLError(cl.CL_INVALID_VALUE, f"specialisation constant {spec_id} takes {SPEC_SIZES[kind]} bytes")
    data = handles.ffi.buffer(handles.ffi.cast("char *", spec_value), spec_size)[:]
    with p.lock:
        p.spec_values[spec_id] = (kind, data)
