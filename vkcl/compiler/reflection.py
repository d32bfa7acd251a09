"""clspv's reflection (the NonSemantic.ClspvReflection.<N> instruction set, revision 7 of the
SPIR-V registry's grammar) decoded into plain dataclasses.

This is the descriptor map: how each kernel argument is passed (descriptor binding, push
constant, workgroup-sized spec constant), which push constants and specialization constants
the module needs, constant data, literal samplers and printf formats. Instructions this
module does not know are kept raw in ProgramReflection.unknown, never fatal.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from vkcl.compiler.spirv import strip_nonsemantic  # noqa: F401  (re-exported)

# Extended instruction number -> name, as in NonSemanticClspvReflection.h.
INSTRUCTIONS = {
    1: "Kernel", 2: "ArgumentInfo", 3: "ArgumentStorageBuffer", 4: "ArgumentUniform",
    5: "ArgumentPodStorageBuffer", 6: "ArgumentPodUniform", 7: "ArgumentPodPushConstant",
    8: "ArgumentSampledImage", 9: "ArgumentStorageImage", 10: "ArgumentSampler",
    11: "ArgumentWorkgroup", 12: "SpecConstantWorkgroupSize", 13: "SpecConstantGlobalOffset",
    14: "SpecConstantWorkDim", 15: "PushConstantGlobalOffset", 16: "PushConstantEnqueuedLocalSize",
    17: "PushConstantGlobalSize", 18: "PushConstantRegionOffset", 19: "PushConstantNumWorkgroups",
    20: "PushConstantRegionGroupOffset", 21: "ConstantDataStorageBuffer", 22: "ConstantDataUniform",
    23: "LiteralSampler", 24: "PropertyRequiredWorkgroupSize", 25: "SpecConstantSubgroupMaxSize",
    26: "ArgumentPointerPushConstant", 27: "ArgumentPointerUniform",
    28: "ProgramScopeVariablesStorageBuffer", 29: "ProgramScopeVariablePointerRelocation",
    30: "ImageArgumentInfoChannelOrderPushConstant", 31: "ImageArgumentInfoChannelDataTypePushConstant",
    32: "ImageArgumentInfoChannelOrderUniform", 33: "ImageArgumentInfoChannelDataTypeUniform",
    34: "ArgumentStorageTexelBuffer", 35: "ArgumentUniformTexelBuffer",
    36: "ConstantDataPointerPushConstant", 37: "ProgramScopeVariablePointerPushConstant",
    38: "PrintfInfo", 39: "PrintfBufferStorageBuffer", 40: "PrintfBufferPointerPushConstant",
    41: "NormalizedSamplerMaskPushConstant", 42: "WorkgroupVariableSize",
}

# Argument instructions: kind (clspv's descriptor-map name) and the operands after Kernel, Ordinal.
_ARG_LAYOUT = {
    "ArgumentStorageBuffer": ("buffer", ("descriptor_set", "binding")),
    "ArgumentUniform": ("buffer_ubo", ("descriptor_set", "binding")),
    "ArgumentPodStorageBuffer": ("pod", ("descriptor_set", "binding", "offset", "size")),
    "ArgumentPodUniform": ("pod_ubo", ("descriptor_set", "binding", "offset", "size")),
    "ArgumentPodPushConstant": ("pod_pushconstant", ("offset", "size")),
    "ArgumentSampledImage": ("ro_image", ("descriptor_set", "binding")),
    "ArgumentStorageImage": ("wo_image", ("descriptor_set", "binding")),
    "ArgumentSampler": ("sampler", ("descriptor_set", "binding")),
    "ArgumentWorkgroup": ("local", ("spec_id", "elem_size")),
    "ArgumentPointerPushConstant": ("pointer_pushconstant", ("offset", "size")),
    "ArgumentPointerUniform": ("pointer_ubo", ("descriptor_set", "binding", "offset", "size")),
    "ArgumentStorageTexelBuffer": ("storage_texel_buffer", ("descriptor_set", "binding")),
    "ArgumentUniformTexelBuffer": ("uniform_texel_buffer", ("descriptor_set", "binding")),
}
# Vulkan descriptor type (VK_DESCRIPTOR_TYPE_ minus the prefix, lower case) of each kind.
DESCRIPTOR_TYPES = {
    "buffer": "storage_buffer", "buffer_ubo": "uniform_buffer", "pod": "storage_buffer",
    "pod_ubo": "uniform_buffer", "pointer_ubo": "uniform_buffer", "ro_image": "sampled_image",
    "wo_image": "storage_image", "sampler": "sampler", "storage_texel_buffer": "storage_texel_buffer",
    "uniform_texel_buffer": "uniform_texel_buffer",
}
_PUSH_CONSTANTS = {
    "PushConstantGlobalOffset": "global_offset", "PushConstantEnqueuedLocalSize": "enqueued_local_size",
    "PushConstantGlobalSize": "global_size", "PushConstantRegionOffset": "region_offset",
    "PushConstantNumWorkgroups": "num_workgroups", "PushConstantRegionGroupOffset": "region_group_offset",
}
_IMAGE_METADATA = {
    "ImageArgumentInfoChannelOrderPushConstant": ("image_channel_order", "pushconstant"),
    "ImageArgumentInfoChannelDataTypePushConstant": ("image_channel_data_type", "pushconstant"),
    "ImageArgumentInfoChannelOrderUniform": ("image_channel_order", "ubo"),
    "ImageArgumentInfoChannelDataTypeUniform": ("image_channel_data_type", "ubo"),
    "NormalizedSamplerMaskPushConstant": ("normalized_sampler_mask", "pushconstant"),
}
KERNEL_FLAG_MAY_USE_PRINTF = 0x1


@dataclass
class Location:
    """Where the runtime writes a value: storage is "pushconstant" or "ubo" (with set/binding)."""
    storage: str
    offset: int
    size: int
    descriptor_set: int | None = None
    binding: int | None = None


@dataclass
class ArgReflection:
    ordinal: int
    kind: str  # see _ARG_LAYOUT; "unused" when clspv reported nothing for the argument
    name: str = ""
    type_name: str = ""
    address_qualifier: int | None = None  # CL_KERNEL_ARG_ADDRESS_* value
    access_qualifier: int | None = None   # CL_KERNEL_ARG_ACCESS_*
    type_qualifier: int | None = None     # CL_KERNEL_ARG_TYPE_* bits
    descriptor_set: int | None = None
    binding: int | None = None
    offset: int | None = None
    size: int | None = None
    spec_id: int | None = None    # local: spec constant holding the array's element count
    elem_size: int | None = None  # local: bytes per element
    image_channel_order: Location | None = None
    image_channel_data_type: Location | None = None
    normalized_sampler_mask: Location | None = None


@dataclass
class Binding:
    descriptor_set: int
    binding: int
    descriptor_type: str  # a key of DESCRIPTOR_TYPES' values, e.g. "storage_buffer"
    source: str           # "arg", "constant_data", "literal_sampler", "printf_buffer", ...
    ordinal: int | None = None


@dataclass
class KernelReflection:
    name: str
    args: list[ArgReflection] = field(default_factory=list)
    num_args: int | None = None
    flags: int = 0
    attributes: str = ""      # as clGetKernelInfo(CL_KERNEL_ATTRIBUTES) reports them
    attributes_raw: str = ""  # as clspv wrote them
    reqd_work_group_size: tuple[int, int, int] | None = None
    push_constant_size: int = 0  # bytes of the push-constant range the pipeline layout needs
    bindings: list[Binding] = field(default_factory=list)
    # (destination offset, source offset, source's struct format): push constants the runtime
    # fills with a double converted from argument bytes (vkcl.compiler.spirv_args)
    push_constant_conversions: list[tuple[int, int, str]] = field(default_factory=list)
    # Why the arguments' places could not be derived from the SPIR-V (argument_layout): such a
    # kernel is never launched. Empty when they were.
    layout_error: str = ""
    # VKCL_CHECK_BOUNDS: the push-constant byte offset of the bounds table's address, where
    # vkcl.compiler.spirv_bounds instrumented the kernel; None where it did not.
    bounds_table_offset: int | None = None
    # Bytes of the kernel's Function-storage variables in clspv's output (the private arrays
    # it keeps as arrays; vkcl's own additions not counted): CL_KERNEL_PRIVATE_MEM_SIZE.
    private_mem_size: int = 0

    @property
    def may_use_printf(self) -> bool:
        return bool(self.flags & KERNEL_FLAG_MAY_USE_PRINTF)


@dataclass
class ConstantData:
    storage: str  # "storage_buffer", "uniform_buffer" or "pushconstant" (a pointer)
    data: bytes
    descriptor_set: int | None = None
    binding: int | None = None
    offset: int | None = None
    size: int | None = None


@dataclass
class LiteralSampler:
    descriptor_set: int
    binding: int
    mask: int  # clspv/Sampler.h bits: normalized coords, addressing mode, filter mode


@dataclass
class PrintfInfo:
    id: int
    format: str
    arg_sizes: list[int]


@dataclass
class PrintfBuffer:
    storage: str  # "storage_buffer" or "pushconstant" (a pointer)
    buffer_size: int
    descriptor_set: int | None = None
    binding: int | None = None
    offset: int | None = None
    size: int | None = None


@dataclass
class RawInstruction:
    number: int
    operands: list[Any]


@dataclass
class ProgramReflection:
    version: int = 0
    kernels: dict[str, KernelReflection] = field(default_factory=dict)
    push_constants: dict[str, Location] = field(default_factory=dict)
    spec_constants: dict[str, int] = field(default_factory=dict)
    constant_data: list[ConstantData] = field(default_factory=list)
    program_scope_variables: ConstantData | None = None
    pointer_relocations: list[tuple[int, int, int]] = field(default_factory=list)
    literal_samplers: list[LiteralSampler] = field(default_factory=list)
    printf_infos: dict[int, PrintfInfo] = field(default_factory=dict)
    printf_buffer: PrintfBuffer | None = None
    workgroup_variable_sizes: dict[int, int] = field(default_factory=dict)
    unknown: list[RawInstruction] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return _to_plain(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ProgramReflection":
        return _program_from_dict(d)


class ReflectionError(ValueError):
    """The module's reflection is malformed (a reference to something that is not there)."""


def clean_attributes(raw: str) -> str:
    """clspv's "__attribute__((reqd_work_group_size(64, 1, 1)))kernel" -> the
    CL_KERNEL_ATTRIBUTES form "reqd_work_group_size(64,1,1)" (space-separated when several)."""
    found = []
    for m in re.finditer(r"__attribute__\s*\(\((.*?)\)\)(?=\s*(?:__attribute__|kernel|__kernel|$))", raw, re.S):
        found += [a for a in _split_top_level(re.sub(r"\s+", "", m.group(1))) if a]
    return " ".join(found)


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_reflection(spirv_bytes: bytes) -> ProgramReflection:
    """Decode the reflection instructions of a clspv-generated module."""
    from vkcl.compiler import reflection_parser  # the instruction handlers
    return reflection_parser.decode(spirv_bytes)


def descriptor_map_csv(reflection: ProgramReflection) -> str:
    """The reflection as clspv's classic CSV descriptor map (see vkcl.compiler.descmap)."""
    from vkcl.compiler import descmap
    return descmap.descriptor_map_csv(reflection)


# -- serialization (JSON-friendly dicts) --------------------------------------------------------
def _to_plain(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, bytes):
        return {"__bytes__": obj.hex()}
    if isinstance(obj, dict):
        return {str(k): _to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_plain(v) for v in obj]
    return obj


def _bytes(v: Any) -> bytes:
    return bytes.fromhex(v["__bytes__"]) if isinstance(v, dict) else bytes(v)


def _loc(d: dict | None) -> Location | None:
    return Location(**d) if d else None


def _arg(d: dict) -> ArgReflection:
    d = dict(d)
    for k in ("image_channel_order", "image_channel_data_type", "normalized_sampler_mask"):
        d[k] = _loc(d.get(k))
    return ArgReflection(**d)


def _kernel(d: dict) -> KernelReflection:
    d = dict(d)
    d["args"] = [_arg(a) for a in d["args"]]
    d["bindings"] = [Binding(**b) for b in d["bindings"]]
    if d.get("reqd_work_group_size") is not None:
        d["reqd_work_group_size"] = tuple(d["reqd_work_group_size"])
    d["push_constant_conversions"] = [tuple(c) for c in d.get("push_constant_conversions", ())]
    return KernelReflection(**d)


def _constant(d: dict | None) -> ConstantData | None:
    if d is None:
        return None
    d = dict(d)
    d["data"] = _bytes(d["data"])
    return ConstantData(**d)


def _program_from_dict(d: dict[str, Any]) -> ProgramReflection:
    try:
        return ProgramReflection(
            version=d["version"],
            kernels={k: _kernel(v) for k, v in d["kernels"].items()},
            push_constants={k: Location(**v) for k, v in d["push_constants"].items()},
            spec_constants=dict(d["spec_constants"]),
            constant_data=[_constant(c) for c in d["constant_data"]],
            program_scope_variables=_constant(d["program_scope_variables"]),
            pointer_relocations=[tuple(r) for r in d["pointer_relocations"]],
            literal_samplers=[LiteralSampler(**s) for s in d["literal_samplers"]],
            printf_infos={int(k): PrintfInfo(**v) for k, v in d["printf_infos"].items()},
            printf_buffer=PrintfBuffer(**d["printf_buffer"]) if d["printf_buffer"] else None,
            workgroup_variable_sizes={int(k): v for k, v in d["workgroup_variable_sizes"].items()},
            unknown=[RawInstruction(**u) for u in d["unknown"]],
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ReflectionError(f"bad serialized reflection: {e}") from None


__all__ = [
    "ArgReflection", "Binding", "ConstantData", "KernelReflection", "LiteralSampler", "Location",
    "PrintfBuffer", "PrintfInfo", "ProgramReflection", "RawInstruction", "ReflectionError",
    "clean_attributes", "descriptor_map_csv", "parse_reflection", "strip_nonsemantic",
]
