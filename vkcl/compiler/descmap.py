"""clspv's classic CSV descriptor map (docs/OpenCLCOnVulkan.md before the map was replaced by
embedded reflection), written from a ProgramReflection.

Lines follow the format of clspv's `clspv-reflection` tool:
  kernel_decl,foo
  kernel,foo,arg,a,argOrdinal,0,descriptorSet,0,binding,0,offset,0,argKind,buffer
  kernel,foo,arg,f,argOrdinal,1,offset,0,argKind,pod_pushconstant,argSize,4
  kernel,foo,arg,L,argOrdinal,2,argKind,local,arrayElemSize,4,arrayNumElemSpecId,3
  spec_constant,workgroup_size_x,spec_id,0
  pushconstant,name,global_offset,offset,0,size,12
  constant,descriptorSet,1,binding,0,kind,buffer,hexbytes,...
  sampler,20,samplerExpr,"CLK_NORMALIZED_COORDS_FALSE|CLK_ADDRESS_CLAMP|CLK_FILTER_NEAREST",descriptorSet,0,binding,0
The tool writes nothing for kinds newer than the map; vkcl extends it in the same style:
  kernel,foo,arg,a,argOrdinal,0,offset,16,argKind,pointer_pushconstant,argSize,8
  kernel,foo,arg,a,argOrdinal,0,descriptorSet,1,binding,0,offset,8,argKind,pointer_ubo,argSize,8
  kernel,img,arg,src,argOrdinal,0,imageMetadata,channel_order,offset,88,size,4
  constant,offset,0,size,8,kind,pointer_pushconstant,hexbytes,...
  printf_buffer,offset,80,size,8,bufferSize,1048576     (or descriptorSet,N,binding,M,bufferSize,...)
  printf,id,0,argSizes,4:8:4,format,"hello %d %f %s\n"
"""
from __future__ import annotations

from vkcl.compiler.reflection import ArgReflection, KernelReflection, ProgramReflection

_ADDRESSING = {0x00: "CLK_ADDRESS_NONE", 0x02: "CLK_ADDRESS_CLAMP_TO_EDGE", 0x04: "CLK_ADDRESS_CLAMP",
               0x06: "CLK_ADDRESS_REPEAT", 0x08: "CLK_ADDRESS_MIRRORED_REPEAT"}
_CONSTANT_KIND = {"storage_buffer": "buffer", "uniform_buffer": "buffer_ubo", "pushconstant": "pointer_pushconstant"}
_SPEC_ORDER = ("workgroup_size_x", "workgroup_size_y", "workgroup_size_z", "global_offset_x",
               "global_offset_y", "global_offset_z", "work_dim", "subgroup_max_size")


def sampler_expression(mask: int) -> str:
    coords = "CLK_NORMALIZED_COORDS_TRUE" if mask & 0x01 else "CLK_NORMALIZED_COORDS_FALSE"
    address = _ADDRESSING.get(mask & 0x0E, "CLK_ADDRESS_NONE")
    filt = "CLK_FILTER_LINEAR" if (mask & 0x30) == 0x20 else "CLK_FILTER_NEAREST"
    return f"{coords}|{address}|{filt}"


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return f'"{escaped}"'


def _arg_line(kernel: KernelReflection, arg: ArgReflection) -> str | None:
    head = f"kernel,{kernel.name},arg,{arg.name},argOrdinal,{arg.ordinal}"
    kind = arg.kind
    if kind == "local":
        return f"{head},argKind,local,arrayElemSize,{arg.elem_size},arrayNumElemSpecId,{arg.spec_id}"
    if kind in ("pod_pushconstant", "pointer_pushconstant"):
        return f"{head},offset,{arg.offset},argKind,{kind},argSize,{arg.size}"
    if kind in ("pod", "pod_ubo", "pointer_ubo"):
        return (f"{head},descriptorSet,{arg.descriptor_set},binding,{arg.binding},offset,{arg.offset},"
                f"argKind,{kind},argSize,{arg.size}")
    if kind == "unused":
        return None
    return f"{head},descriptorSet,{arg.descriptor_set},binding,{arg.binding},offset,0,argKind,{kind}"


def _metadata_lines(kernel: KernelReflection, arg: ArgReflection) -> list[str]:
    lines = []
    for what in ("image_channel_order", "image_channel_data_type", "normalized_sampler_mask"):
        loc = getattr(arg, what)
        if loc is None:
            continue
        name = what.replace("image_", "")
        where = "" if loc.storage == "pushconstant" else f",descriptorSet,{loc.descriptor_set},binding,{loc.binding}"
        lines.append(f"kernel,{kernel.name},arg,{arg.name},argOrdinal,{arg.ordinal},imageMetadata,{name}"
                     f"{where},offset,{loc.offset},size,{loc.size}")
    return lines


def descriptor_map_csv(reflection: ProgramReflection) -> str:
    """The reflection as clspv's CSV descriptor map (one line per entry, newline-terminated)."""
    lines = []
    for s in reflection.literal_samplers:
        lines.append(f'sampler,{s.mask},samplerExpr,"{sampler_expression(s.mask)}",'
                     f"descriptorSet,{s.descriptor_set},binding,{s.binding}")
    for c in reflection.constant_data:
        where = (f"offset,{c.offset},size,{c.size}" if c.storage == "pushconstant"
                 else f"descriptorSet,{c.descriptor_set},binding,{c.binding}")
        lines.append(f"constant,{where},kind,{_CONSTANT_KIND[c.storage]},hexbytes,{c.data.hex()}")
    psv = reflection.program_scope_variables
    if psv is not None:
        where = (f"offset,{psv.offset},size,{psv.size}" if psv.storage == "pushconstant"
                 else f"descriptorSet,{psv.descriptor_set},binding,{psv.binding}")
        lines.append(f"program_scope_variables,{where},hexbytes,{psv.data.hex()}")
    for obj, ptr, size in reflection.pointer_relocations:
        lines.append(f"pointer_relocation,objectOffset,{obj},pointerOffset,{ptr},pointerSize,{size}")
    for name, loc in reflection.push_constants.items():
        lines.append(f"pushconstant,name,{name},offset,{loc.offset},size,{loc.size}")
    for kernel in reflection.kernels.values():
        lines.append(f"kernel_decl,{kernel.name}")
        for arg in kernel.args:
            line = _arg_line(kernel, arg)
            if line:
                lines.append(line)
            lines += _metadata_lines(kernel, arg)
    spec = reflection.spec_constants
    for name in sorted(spec, key=lambda n: (_SPEC_ORDER.index(n) if n in _SPEC_ORDER else 99, n)):
        lines.append(f"spec_constant,{name},spec_id,{spec[name]}")
    pb = reflection.printf_buffer
    if pb is not None:
        where = (f"offset,{pb.offset},size,{pb.size}" if pb.storage == "pushconstant"
                 else f"descriptorSet,{pb.descriptor_set},binding,{pb.binding}")
        lines.append(f"printf_buffer,{where},bufferSize,{pb.buffer_size}")
    for pid in sorted(reflection.printf_infos):
        info = reflection.printf_infos[pid]
        sizes = ":".join(str(s) for s in info.arg_sizes)
        lines.append(f"printf,id,{pid},argSizes,{sizes},format,{_quote(info.format)}")
    return "".join(line + "\n" for line in lines)
