"""Where each kernel argument really is: derived from the SPIR-V that runs and checked against
clspv's reflection, which is corrected to it; a kernel whose arguments cannot be placed that way
is marked so that it is never launched with a guessed layout.

Why: when a program has module-wide push constants (the module-constants pointer of sqrt, exp,
pow..., printf's buffer pointer, region offsets), clspv (pyclspv 0.0.1, as at its head) puts
every kernel's by-value arguments into one shared block: {the module's push constants, one
member of N 32-bit words}, and each kernel rebuilds its arguments from those words, at their
offsets in the natural layout of its own argument struct counted from where the word member
starts. Its reflection adds those offsets to where that argument struct would start if it were
placed with its own alignment instead. For `kernel void k(global float4 *v, float4 m)` beside
the module-constants pointer (8 bytes) the words start at byte 8, the reflection says 16: v and
m were written 8 bytes past where the kernel reads them (lavapipe crashed, the H200 hung).

So, per kernel and per block (the push constants, each uniform buffer of arguments):
- the arguments' member is the block's last one (clspv appends it to the module's own push
  constants; vkcl's converted doubles, spirv_args, are appended after it and skipped); its
  Offset decoration is where the arguments start;
- the reflection's offsets are kept relative to the kernel's first argument in the block (that
  one is at 0 in clspv's argument struct, whatever the base it assumed);
- checked: the arguments fit in the member, in order and without overlap; where the member is a
  struct of the arguments (no module push constants, or a uniform buffer, with padding members)
  each argument starts exactly at a member of its own; and every byte range the kernel loads
  from the member lies in some argument.
`__local` arguments need their specialisation constant to exist.
"""
from __future__ import annotations

import logging

from vkcl._gen import cl
from vkcl.compiler import spirv
from vkcl.compiler.reflection import ArgReflection, KernelReflection, ProgramReflection
from vkcl.compiler.spirv_blocks import SC_UNIFORM, Block, ModuleBlocks

_log = logging.getLogger("vkcl.compiler")
PUSH_CONSTANT_KINDS = ("pod_pushconstant", "pointer_pushconstant")
UNIFORM_KINDS = ("pod_ubo", "pointer_ubo")


class Disagreement(Exception):
    """The reflection and the SPIR-V disagree about an argument and cannot be reconciled."""


def reconcile(spirv_bytes: bytes, reflection: ProgramReflection) -> list[str]:
    """Set every argument's offset in `reflection` to where the SPIR-V reads it (in place) and
    each kernel's push_constant_size to match. A kernel whose arguments cannot be placed gets
    KernelReflection.layout_error; the build-log lines saying so are returned."""
    module = ModuleBlocks(spirv_bytes)
    lines = []
    for kernel in reflection.kernels.values():
        try:
            places = _places(module, reflection, kernel)
        except Disagreement as e:
            kernel.layout_error = str(e)
            lines.append(f"vkcl: kernel {kernel.name}: {e}: its arguments cannot be placed, so it cannot be "
                         "launched (CL_INVALID_PROGRAM_EXECUTABLE)")
            continue
        kernel.layout_error = ""
        for arg in kernel.args:
            if places.get(arg.ordinal, arg.offset) != arg.offset:
                _log.debug("kernel %s: argument %d (%s) is at byte %d, not at %d as clspv's reflection says",
                           kernel.name, arg.ordinal, arg.name, places[arg.ordinal], arg.offset)
                arg.offset = places[arg.ordinal]
        kernel.push_constant_size = _push_constant_size(module, reflection, kernel)
    return lines


def by_value_ranges(reflection: ProgramReflection) -> dict[str, list[tuple[int, int]]]:
    """Kernel name -> (offset, size) of each by-value argument in push constants, for kernels
    whose arguments were placed (what spirv_args may convert)."""
    return {k.name: [(a.offset, a.size) for a in k.args if a.kind == "pod_pushconstant"]
            for k in reflection.kernels.values() if not k.layout_error}


def _places(module: ModuleBlocks, program: ProgramReflection, kernel: KernelReflection) -> dict[int, int]:
    function = module.entry_points.get(kernel.name)
    if function is None:
        raise Disagreement("the module has no entry point of that name")
    reads = module.reads_of(function)
    places: dict[int, int] = {}
    in_push_constants = [a for a in kernel.args if a.kind in PUSH_CONSTANT_KINDS]
    if in_push_constants:
        blocks = module.blocks_read(function, spirv.SC_PUSH_CONSTANT)
        if len(blocks) > 1:
            raise Disagreement("the kernel reads more than one push-constant block")
        if blocks:  # none: the kernel reads none of its arguments, which may go anywhere
            builtins = {name: (loc.offset, loc.size) for name, loc in program.push_constants.items()}
            appended = {dst for k in program.kernels.values() for dst, _, _ in k.push_constant_conversions}
            # and the bounds table's address (VKCL_CHECK_BOUNDS, spirv_bounds)
            appended |= {k.bounds_table_offset for k in program.kernels.values() if k.bounds_table_offset is not None}
            unplaced = [a for a in kernel.args if a.kind == "unused" and a.ordinal < in_push_constants[0].ordinal
                        and a.address_qualifier != cl.CL_KERNEL_ARG_ADDRESS_LOCAL]
            places.update(_place(module, blocks[0], in_push_constants, reads, builtins, appended, unplaced))
    uniform: dict[tuple[int, int], list[ArgReflection]] = {}
    for a in kernel.args:
        if a.kind in UNIFORM_KINDS:
            uniform.setdefault((a.descriptor_set, a.binding), []).append(a)
    for descriptor, args in uniform.items():
        blocks = module.blocks_read(function, SC_UNIFORM, descriptor)
        if len(blocks) > 1:
            raise Disagreement(f"the kernel reads more than one uniform buffer at set {descriptor[0]}, "
                               f"binding {descriptor[1]}")
        if blocks:
            places.update(_place(module, blocks[0], args, reads, {}, set()))
    for a in kernel.args:
        if a.kind == "local" and a.spec_id not in module.spec_ids:
            raise Disagreement(f"argument {a.ordinal} ({a.name}): no specialisation constant {a.spec_id}")
    return places


def _place(module: ModuleBlocks, block: Block, args: list[ArgReflection], reads: list, builtins: dict,
           appended: set, unplaced: list[ArgReflection] = ()) -> dict[int, int]:
    """Offsets of `args` (in ordinal order) in `block`, from the member holding them. `unplaced`:
    arguments before them that the reflection does not place (which may hold the first bytes)."""
    members = [m for m in block.members if m.offset not in appended]
    if not members:
        raise Disagreement("the argument block has no members")
    holder = max(members, key=lambda m: m.offset)
    base, end = holder.offset, holder.offset + holder.size
    for name, (offset, size) in builtins.items():
        if offset < end and base < offset + size:
            raise Disagreement(f"the block's last member (bytes {base}..{end}) holds the {name}, not arguments")
    anchor = args[0].offset
    places = {a.ordinal: base + a.offset - anchor for a in args}
    at = base
    for a in args:
        if places[a.ordinal] < at:
            raise Disagreement(f"argument {a.ordinal} ({a.name}) would overlap the one before it")
        at = places[a.ordinal] + a.size
    if _words(module, holder.type):
        if unplaced:
            raise Disagreement(f"argument {unplaced[0].ordinal} ({unplaced[0].name}) has no place in the "
                               "reflection, so where the others start among the words is unknown")
        if at > end:
            raise Disagreement(f"the arguments would end at byte {at}, past the block member holding them "
                               f"(bytes {base}..{end})")
    else:  # each starts at a member of its own, which fits before the next argument
        _match_members(module, holder.type, args, anchor, end - base)
    for var, offset, size in reads:
        if var != block.variable or offset >= end or offset + size <= base:
            continue
        if not any(places[a.ordinal] < offset + size and offset < places[a.ordinal] + a.size for a in args):
            raise Disagreement(f"the kernel reads bytes {offset}..{offset + size} of its argument block, "
                               "where no argument is")
    return places


def _words(module: ModuleBlocks, t: int) -> bool:
    """Whether t is clspv's type-mangled argument member: consecutive 32-bit words."""
    kind, members = module.types.get(t, (0, ()))
    return kind == spirv.OP_TYPE_STRUCT and all(
        module.is_word(m) and module.offsets.get((t, i), -1) == 4 * i for i, m in enumerate(members))


def _match_members(module: ModuleBlocks, t: int, args: list[ArgReflection], anchor: int, room: int) -> None:
    """Each argument starts at a member of struct t of its own (padding members may lie between),
    which fits before the next argument (or the end of t's `room` bytes) and holds no more than the
    argument, but for a 3-component vector's, which clspv widens to 4 components."""
    kind, members = module.types.get(t, (0, ()))
    if kind != spirv.OP_TYPE_STRUCT:
        raise Disagreement("the block member holding the arguments is not a struct")
    starts = [(module.offsets.get((t, i), 0), m) for i, m in enumerate(members)]
    index = 0
    for n, a in enumerate(args):
        want = a.offset - anchor
        while index < len(starts) and starts[index][0] < want:
            index += 1
        if index == len(starts) or starts[index][0] != want:
            raise Disagreement(f"argument {a.ordinal} ({a.name}) does not start at a member of the argument "
                               f"struct (offset {want} in it)")
        limit = (args[n + 1].offset - anchor if n + 1 < len(args) else room) - want
        size = module.size(starts[index][1])
        if size > limit or (size > a.size and size * 3 != a.size * 4):
            raise Disagreement(f"argument {a.ordinal} ({a.name}) has {a.size} bytes, but its member holds {size} "
                               f"({limit} before the next argument)")
        index += 1


def _push_constant_size(module: ModuleBlocks, program: ProgramReflection, kernel: KernelReflection) -> int:
    """Bytes of push constants the kernel's pipeline layout needs: its block, the module's push
    constants, its arguments and the doubles converted for it."""
    end = max((loc.offset + loc.size for loc in program.push_constants.values()), default=0)
    function = module.entry_points.get(kernel.name)
    declared = [module.blocks[v] for v in module.interfaces.get(kernel.name, ()) if v in module.blocks]
    read = module.blocks_read(function, spirv.SC_PUSH_CONSTANT) if function is not None else []
    for block in declared + read:  # SPIR-V 1.4 lists the block in the interface; before, it is loaded
        if block.storage_class == spirv.SC_PUSH_CONSTANT:
            end = max(end, module.size(block.type))
    for arg in kernel.args:
        if arg.kind in PUSH_CONSTANT_KINDS:
            end = max(end, arg.offset + arg.size)
        for loc in (arg.image_channel_order, arg.image_channel_data_type, arg.normalized_sampler_mask):
            if loc is not None and loc.storage == "pushconstant":
                end = max(end, loc.offset + loc.size)
    for dst, _, _ in kernel.push_constant_conversions:
        end = max(end, dst + 8)
    return (end + 3) & ~3
