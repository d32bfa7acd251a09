"""Decoding NonSemantic.ClspvReflection instructions into vkcl.compiler.reflection's classes.

Every operand of these instructions is an id: an OpString, a 32-bit OpConstant, or the result
of an earlier Kernel / ArgumentInfo instruction (no forward references, per the spec).
"""
from __future__ import annotations

from typing import Any, Callable

from vkcl.compiler import spirv, spirv_args
from vkcl.compiler.reflection import (
    _ARG_LAYOUT, _IMAGE_METADATA, _PUSH_CONSTANTS, DESCRIPTOR_TYPES, INSTRUCTIONS, ArgReflection,
    Binding, ConstantData, KernelReflection, LiteralSampler, Location, PrintfBuffer, PrintfInfo,
    ProgramReflection, RawInstruction, ReflectionError, clean_attributes)

IMPORT_PREFIX = "NonSemantic.ClspvReflection."


class _State:
    def __init__(self, version: int):
        self.prog = ProgramReflection(version=version)
        self.results: dict[int, Any] = {}        # ext-inst result id -> KernelReflection | dict
        self.args: dict[int, dict[int, ArgReflection]] = {}  # id(kernel) -> ordinal -> arg

    def kernel(self, value: Any) -> KernelReflection:
        if not isinstance(value, KernelReflection):
            raise ReflectionError(f"expected a Kernel instruction, got {value!r}")
        return value

    def arg(self, kernel: KernelReflection, ordinal: int) -> ArgReflection:
        by_ordinal = self.args.setdefault(id(kernel), {})
        if ordinal not in by_ordinal:
            by_ordinal[ordinal] = ArgReflection(ordinal=ordinal, kind="unused")
        return by_ordinal[ordinal]


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ReflectionError(f"expected an integer constant, got {value!r}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ReflectionError(f"expected a string, got {value!r}")
    return value


# -- handlers: (state, operands, result id) -----------------------------------------------------
def _kernel(st: _State, ops: list, rid: int) -> None:
    k = KernelReflection(name=_str(ops[1]))
    if len(ops) > 2:
        k.num_args = _int(ops[2])
    if len(ops) > 3:
        k.flags = _int(ops[3])
    if len(ops) > 4:
        k.attributes_raw = _str(ops[4])
        k.attributes = clean_attributes(k.attributes_raw)
    st.results[rid] = k
    st.prog.kernels[k.name] = k


def _argument_info(st: _State, ops: list, rid: int) -> None:
    info = {"name": _str(ops[0])}
    for key, value in zip(("type_name", "address_qualifier", "access_qualifier", "type_qualifier"), ops[1:]):
        info[key] = _str(value) if key == "type_name" else _int(value)
    st.results[rid] = info


def _argument(name: str) -> Callable:
    kind, fields = _ARG_LAYOUT[name]

    def handle(st: _State, ops: list, rid: int) -> None:
        arg = st.arg(st.kernel(ops[0]), _int(ops[1]))
        arg.kind = kind
        for key, value in zip(fields, ops[2:]):
            setattr(arg, key, _int(value))
        if len(ops) > 2 + len(fields):
            info = ops[2 + len(fields)]
            if not isinstance(info, dict):
                raise ReflectionError(f"{name}: ArgInfo operand is {info!r}")
            for key, value in info.items():
                setattr(arg, key, value)
    return handle


def _image_metadata(name: str) -> Callable:
    attr, storage = _IMAGE_METADATA[name]

    def handle(st: _State, ops: list, rid: int) -> None:
        arg = st.arg(st.kernel(ops[0]), _int(ops[1]))
        if storage == "ubo":
            loc = Location("ubo", _int(ops[4]), _int(ops[5]), _int(ops[2]), _int(ops[3]))
        else:
            loc = Location("pushconstant", _int(ops[2]), _int(ops[3]))
        setattr(arg, attr, loc)
    return handle


def _push_constant(name: str) -> Callable:
    def handle(st: _State, ops: list, rid: int) -> None:
        st.prog.push_constants[_PUSH_CONSTANTS[name]] = Location("pushconstant", _int(ops[0]), _int(ops[1]))
    return handle


def _spec_constants(*names: str) -> Callable:
    def handle(st: _State, ops: list, rid: int) -> None:
        for key, value in zip(names, ops):
            st.prog.spec_constants[key] = _int(value)
    return handle


def _constant_data(storage: str) -> Callable:
    def handle(st: _State, ops: list, rid: int) -> None:
        st.prog.constant_data.append(ConstantData(storage, _hex(ops[2]), _int(ops[0]), _int(ops[1])))
    return handle


def _hex(value: Any) -> bytes:
    try:
        return bytes.fromhex(_str(value))
    except ValueError:
        raise ReflectionError("constant data is not hex bytes") from None


def _constant_pointer(st: _State, ops: list, rid: int) -> None:
    offset, size = _int(ops[0]), _int(ops[1])
    st.prog.constant_data.append(ConstantData("pushconstant", _hex(ops[2]), offset=offset, size=size))
    st.prog.push_constants["module_constants_pointer"] = Location("pushconstant", offset, size)


def _psv_storage_buffer(st: _State, ops: list, rid: int) -> None:
    st.prog.program_scope_variables = ConstantData("storage_buffer", _hex(ops[2]), _int(ops[0]), _int(ops[1]))


def _psv_pointer(st: _State, ops: list, rid: int) -> None:
    offset, size = _int(ops[0]), _int(ops[1])
    st.prog.program_scope_variables = ConstantData("pushconstant", _hex(ops[2]), offset=offset, size=size)
    st.prog.push_constants["program_scope_variables_pointer"] = Location("pushconstant", offset, size)


def _relocation(st: _State, ops: list, rid: int) -> None:
    st.prog.pointer_relocations.append((_int(ops[0]), _int(ops[1]), _int(ops[2])))


def _literal_sampler(st: _State, ops: list, rid: int) -> None:
    st.prog.literal_samplers.append(LiteralSampler(_int(ops[0]), _int(ops[1]), _int(ops[2])))


def _reqd_size(st: _State, ops: list, rid: int) -> None:
    st.kernel(ops[0]).reqd_work_group_size = (_int(ops[1]), _int(ops[2]), _int(ops[3]))


def _printf_info(st: _State, ops: list, rid: int) -> None:
    pid = _int(ops[0])
    st.prog.printf_infos[pid] = PrintfInfo(pid, _str(ops[1]), [_int(v) for v in ops[2:]])


def _printf_storage_buffer(st: _State, ops: list, rid: int) -> None:
    st.prog.printf_buffer = PrintfBuffer("storage_buffer", _int(ops[2]), _int(ops[0]), _int(ops[1]))


def _printf_pointer(st: _State, ops: list, rid: int) -> None:
    offset, size = _int(ops[0]), _int(ops[1])
    st.prog.printf_buffer = PrintfBuffer("pushconstant", _int(ops[2]), offset=offset, size=size)
    st.prog.push_constants["printf_buffer_pointer"] = Location("pushconstant", offset, size)


def _workgroup_variable_size(st: _State, ops: list, rid: int) -> None:
    variable = ops[0][1] if isinstance(ops[0], tuple) else _int(ops[0])
    st.prog.workgroup_variable_sizes[variable] = _int(ops[1])


_HANDLERS: dict[str, Callable] = {
    "Kernel": _kernel, "ArgumentInfo": _argument_info,
    "SpecConstantWorkgroupSize": _spec_constants("workgroup_size_x", "workgroup_size_y", "workgroup_size_z"),
    "SpecConstantGlobalOffset": _spec_constants("global_offset_x", "global_offset_y", "global_offset_z"),
    "SpecConstantWorkDim": _spec_constants("work_dim"),
    "SpecConstantSubgroupMaxSize": _spec_constants("subgroup_max_size"),
    "ConstantDataStorageBuffer": _constant_data("storage_buffer"),
    "ConstantDataUniform": _constant_data("uniform_buffer"),
    "ConstantDataPointerPushConstant": _constant_pointer,
    "ProgramScopeVariablesStorageBuffer": _psv_storage_buffer,
    "ProgramScopeVariablePointerPushConstant": _psv_pointer,
    "ProgramScopeVariablePointerRelocation": _relocation,
    "LiteralSampler": _literal_sampler, "PropertyRequiredWorkgroupSize": _reqd_size,
    "PrintfInfo": _printf_info, "PrintfBufferStorageBuffer": _printf_storage_buffer,
    "PrintfBufferPointerPushConstant": _printf_pointer, "WorkgroupVariableSize": _workgroup_variable_size,
    **{name: _argument(name) for name in _ARG_LAYOUT},
    **{name: _image_metadata(name) for name in _IMAGE_METADATA},
    **{name: _push_constant(name) for name in _PUSH_CONSTANTS},
}


# -- the pass over the module -------------------------------------------------------------------
def decode(spirv_bytes: bytes) -> ProgramReflection:
    words = spirv.to_words(spirv_bytes)
    strings: dict[int, str] = {}
    int_types: dict[int, int] = {}
    constants: dict[int, int] = {}
    set_id, vkcl_set, version = None, None, 0
    st: _State | None = None
    for pos, op, count in spirv.instructions(words):
        if op == spirv.OP_STRING:
            strings[words[pos + 1]] = spirv.literal_string(words, pos + 2, pos + count)[0]
        elif op == spirv.OP_TYPE_INT:
            int_types[words[pos + 1]] = words[pos + 2]
        elif op == spirv.OP_CONSTANT and words[pos + 1] in int_types:
            value = words[pos + 3]
            if int_types[words[pos + 1]] == 64 and count > 4:
                value |= words[pos + 4] << 32
            constants[words[pos + 2]] = value
        elif op == spirv.OP_EXT_INST_IMPORT:
            name = spirv.literal_string(words, pos + 2, pos + count)[0]
            if name.startswith(IMPORT_PREFIX):
                set_id = words[pos + 1]
                version = int(name[len(IMPORT_PREFIX):] or 0) if name[len(IMPORT_PREFIX):].isdigit() else 0
                st = _State(version)
            elif name == spirv_args.IMPORT_NAME:  # vkcl's own instructions: ids as in clspv's
                vkcl_set = words[pos + 1]
        elif op == spirv.OP_EXT_INST and st is not None and words[pos + 3] == vkcl_set:
            ops = [_resolve(i, strings, constants, st.results) for i in words[pos + 5:pos + count]]
            if words[pos + 4] == spirv_args.PUSH_CONSTANT_CONVERSION:
                _push_constant_conversion(st, ops)
        elif op == spirv.OP_EXT_INST and st is not None and words[pos + 3] == set_id:
            number, rid = words[pos + 4], words[pos + 2]
            ids = list(words[pos + 5:pos + count])
            name = INSTRUCTIONS.get(number)
            handler = _HANDLERS.get(name) if name else None
            ops = [_resolve(i, strings, constants, st.results) for i in ids]
            if handler is None:
                st.prog.unknown.append(RawInstruction(number, [_plain(v) for v in ops]))
                continue
            try:
                handler(st, ops, rid)
            except IndexError:
                raise ReflectionError(f"{name}: too few operands ({len(ops)})") from None
    if st is None:
        return ProgramReflection()
    _finish(st, spirv.push_constant_sizes(words))
    return st.prog


def _push_constant_conversion(st: _State, ops: list) -> None:
    if len(ops) < 4:
        raise ReflectionError(f"PushConstantConversion: too few operands ({len(ops)})")
    dst, src, kind = (_int(v) for v in ops[1:4])
    fmt = spirv_args.source_format(kind)
    if fmt is None:
        raise ReflectionError(f"PushConstantConversion: unknown source type {kind:#x}")
    st.kernel(ops[0]).push_constant_conversions.append((dst, src, fmt))


def _resolve(i: int, strings: dict, constants: dict, results: dict) -> Any:
    if i in results:
        return results[i]
    if i in strings:
        return strings[i]
    if i in constants:
        return constants[i]
    return ("id", i)


def _plain(value: Any) -> Any:
    if isinstance(value, KernelReflection):
        return {"kernel": value.name}
    if isinstance(value, tuple):
        return list(value)
    return value


def _program_bindings(prog: ProgramReflection) -> list[Binding]:
    out = []
    for c in prog.constant_data:
        if c.descriptor_set is not None:
            out.append(Binding(c.descriptor_set, c.binding, c.storage, "constant_data"))
    psv = prog.program_scope_variables
    if psv is not None and psv.descriptor_set is not None:
        out.append(Binding(psv.descriptor_set, psv.binding, "storage_buffer", "program_scope_variables"))
    for s in prog.literal_samplers:
        out.append(Binding(s.descriptor_set, s.binding, "sampler", "literal_sampler"))
    pb = prog.printf_buffer
    if pb is not None and pb.descriptor_set is not None:
        out.append(Binding(pb.descriptor_set, pb.binding, "storage_buffer", "printf_buffer"))
    return out


def _finish(st: _State, block_sizes: dict[str, int]) -> None:
    prog = st.prog
    shared = _program_bindings(prog)
    program_end = max((loc.offset + loc.size for loc in prog.push_constants.values()), default=0)
    for kernel in prog.kernels.values():
        by_ordinal = st.args.get(id(kernel), {})
        count = max([kernel.num_args or 0] + [o + 1 for o in by_ordinal])
        kernel.args = [by_ordinal.get(o) or ArgReflection(ordinal=o, kind="unused") for o in range(count)]
        end = max(program_end, block_sizes.get(kernel.name, 0))
        seen: set[tuple[int, int]] = set()
        for arg in kernel.args:
            if arg.kind.endswith("pushconstant"):
                end = max(end, arg.offset + arg.size)
            for loc in (arg.image_channel_order, arg.image_channel_data_type, arg.normalized_sampler_mask):
                if loc is None:
                    continue
                if loc.storage == "pushconstant":
                    end = max(end, loc.offset + loc.size)
                elif (loc.descriptor_set, loc.binding) not in seen:
                    seen.add((loc.descriptor_set, loc.binding))
                    kernel.bindings.append(Binding(loc.descriptor_set, loc.binding, "uniform_buffer",
                                                   "image_metadata", arg.ordinal))
            if arg.kind in DESCRIPTOR_TYPES and (arg.descriptor_set, arg.binding) not in seen:
                seen.add((arg.descriptor_set, arg.binding))
                kernel.bindings.append(Binding(arg.descriptor_set, arg.binding, DESCRIPTOR_TYPES[arg.kind],
                                               "arg", arg.ordinal))
        kernel.bindings += [b for b in shared if (b.descriptor_set, b.binding) not in seen]
        kernel.bindings.sort(key=lambda b: (b.descriptor_set, b.binding))
        for dst, _, _ in kernel.push_constant_conversions:
            end = max(end, dst + 8)
        kernel.push_constant_size = (end + 3) & ~3
