"""NDRange dispatch: what a kernel's reflection says about reaching its arguments, turned
into push constants, a uniform buffer when clspv put the arguments there, specialisation
constants and one or more vkCmdDispatchBase calls.

A KernelPlan holds everything that does not change between enqueues of one kernel on one
device; the NDRangeKernel command only packs the argument bytes and records the dispatches.
"""
from __future__ import annotations

import struct
import threading
import weakref

from vkcl import compiler
from vkcl.compiler import spirv, spirv_extra_lanes, spirv_loop_cuts, spirv_num_groups, spirv_resume
from vkcl.compiler.spirv_resume_state import SPEC_RESUME_LOOP, SPEC_RESUMING
from vkcl._gen import cl
from vkcl.core import bounds, loop_cuts, printf
from vkcl.core.commands import Command
from vkcl.errors import CLError
from vkcl.vulkan import commands as vkc
from vkcl.vulkan import pipeline as vkp
from vkcl.vulkan.memory import MemoryKind, allocator_for

ffi, lib = vkc.ffi, vkc.lib
_BUILTIN_PC = ("global_offset", "enqueued_local_size", "global_size", "region_offset", "num_workgroups",
               "region_group_offset")


class ProgramImage:
    """A program's executable on one device: its shader module and module-level buffers."""

    def __init__(self, vkdev, result: compiler.CompileResult, caps):
        self.vk = vkdev
        self.reflection = result.reflection
        self.spirv = compiler.spirv_for_device(result.spirv, caps)
        self.uniform = result.uniform_work_group_size or result.cl_std in ("CL1.0", "CL1.1", "CL1.2", "")
        self.static_local = spirv.workgroup_sizes(result.spirv)  # kernel -> bytes of its __local variables
        # Its work-group count can be set where a launch is split (compiler/spirv_num_groups.py).
        self.group_counts = spirv_num_groups.overridable(result.spirv)
        # llvmpipe's loop cap detected (core/loop_cuts.py): the device's word for its probe.
        probed = caps.loop_unroll_count and spirv_loop_cuts.instrumented(result.spirv)
        self.loop_word = loop_cuts.word_for(vkdev) if probed else None
        # Kernels whose long loops suspend and resume in later passes (compiler/spirv_resume.py):
        # name -> bytes of a work-item's record.
        self.resumed = spirv_resume.resumed_entry_points(result.spirv) if self.loop_word is not None else {}
        # The first pass's pipelines are made without the copies later passes resume in (most of
        # such a module); those passes get the whole module, made when first needed.
        first = spirv_resume.first_pass(self.spirv) if self.resumed else self.spirv
        self.shader = vkp.ShaderModule(vkdev, first)
        self.module = self.shader.handle
        self._resume_shader = self.shader if first is self.spirv else None
        # Dispatches whose group width is a multiple of llvmpipe's batch have no extra lanes:
        # their pipelines are made without the branch that returns them
        # (spirv_extra_lanes.without_extra_lanes), made when first needed.
        self._first, self._plain = first, {}
        self.extra_lanes = bool(spirv_extra_lanes.marked_entry_points(self.spirv))
        self.constants = None  # program-scope __constant data, uploaded once
        for c in self.reflection.constant_data:
            from vkcl.core.memory import Region, upload
            allocator = allocator_for(vkdev)
            a = allocator.allocate(max(16, len(c.data)), MemoryKind.DEVICE)
            upload(vkdev, Region(a.buffer, a.offset, a.address, a.host_ptr), 0, c.data, len(c.data))
            self.constants = a
            weakref.finalize(self, allocator.free, a).atexit = False
        self.plans: dict[str, KernelPlan] = {}
        self.lock = threading.Lock()

    @property
    def resume_module(self):
        """The whole module, for the pipelines of later passes (compiler/spirv_resume.py)."""
        with self.lock:
            if self._resume_shader is None:
                self._resume_shader = vkp.ShaderModule(self.vk, self.spirv)
            return self._resume_shader.handle

    def module_for(self, width: int, resuming: bool):
        """The module for a dispatch of groups `width` wide: without the extra lanes' branch
        where the width is a multiple of llvmpipe's widest batch, else as built."""
        if not self.extra_lanes or width % spirv_extra_lanes.WIDEST_BATCH:
            return self.resume_module if resuming else self.module
        with self.lock:
            shader = self._plain.get(resuming)
            if shader is None:
                plain = spirv_extra_lanes.without_extra_lanes(self.spirv if resuming else self._first)
                shader = self._plain[resuming] = vkp.ShaderModule(self.vk, plain)
            return shader.handle

    def plan(self, kernel, device) -> "KernelPlan":
        p = self.plans.get(kernel.name)
        if p is None:
            with self.lock:
                p = self.plans.get(kernel.name) or KernelPlan(self, kernel.reflections[device])
                self.plans[kernel.name] = p
        return p


def program_image(program, device, vkdev) -> ProgramImage:
    """The program's executable on `device`, made ready for dispatch on first use."""
    img = program.images.get(device)
    if img is None:
        with program.lock:
            img = program.images.get(device)
            if img is None:
                img = program.images[device] = ProgramImage(vkdev, program.executable(device), device.compiler_caps)
    return img


class KernelPlan:
    """Per kernel and device: layout, argument slots, builtin push constants, pipelines."""

    def __init__(self, image: ProgramImage, refl):
        self.image, self.refl, self.name = image, refl, refl.name
        R = image.reflection
        bindings = [(b.descriptor_set, b.binding, b.descriptor_type) for b in refl.bindings]
        pc_size = refl.push_constant_size
        for loc in R.push_constants.values():
            pc_size = max(pc_size, loc.offset + loc.size)
        self.layout = vkp.KernelLayout(image.vk, bindings, pc_size)
        self.pc_size = self.layout.push_constant_size
        # (ordinal, "pc"|"ubo", offset, size) for pointers and values; (ordinal, spec id, elem size) for locals
        self.pointers, self.pods, self.locals = [], [], []
        self.ubo = None  # (set, binding, size) when clspv put the arguments in a uniform buffer
        for a in refl.args:
            where = "ubo" if a.kind in ("pointer_ubo", "pod_ubo") else "pc"
            if a.kind in ("pointer_pushconstant", "pointer_ubo"):
                self.pointers.append((a.ordinal, where, a.offset))
            elif a.kind in ("pod_pushconstant", "pod_ubo"):
                self.pods.append((a.ordinal, where, a.offset, a.size))
            elif a.kind == "local":
                self.locals.append((a.ordinal, a.spec_id, a.elem_size))
            elif a.kind != "unused":
                raise CLError(cl.CL_INVALID_KERNEL, f"argument kind {a.kind} is not supported yet")
            if where == "ubo":
                end = a.offset + a.size
                self.ubo = (a.descriptor_set, a.binding, max(end, self.ubo[2] if self.ubo else 0))
        # Doubles the compiler asks the runtime to convert from argument bytes (spirv_args).
        self.conversions = tuple((dst, struct.Struct("<" + fmt), src) for dst, src, fmt in refl.push_constant_conversions)
        self.builtins = {k: R.push_constants[k].offset for k in _BUILTIN_PC if k in R.push_constants}
        self.printf_pc = R.printf_buffer.offset if R.printf_buffer and R.printf_buffer.storage == "pushconstant" else None
        self.printf_size = R.printf_buffer.buffer_size if R.printf_buffer else 0
        mc = R.push_constants.get("module_constants_pointer")
        self.constants_pc = mc.offset if mc is not None else None
        spec = R.spec_constants
        self.wg_ids = tuple(spec.get(f"workgroup_size_{c}") for c in "xyz")
        self.offset_ids = tuple(spec.get(f"global_offset_{c}") for c in "xyz")
        self.work_dim_id = spec.get("work_dim")
        # (bytes of a work-item's record, whether work-groups save their local memory, whether
        # llvmpipe's lanes past a group's width return at once: compiler/spirv_extra_lanes.py)
        self.resume_stride, self.resume_locals, self.extra_lanes_return = image.resumed.get(self.name, (0, False, False))
        self.pipelines: dict = {}
        vkp.destroy_pipelines(self, image.vk, self.pipelines)
        self.launches: dict = {}  # (work_dim, offset, global, local, __local sizes) -> Launch
        self.lock = threading.Lock()

    def pipeline(self, local: tuple, local_counts: tuple, offset: tuple, work_dim: int,
                 group_counts: tuple | None = None, resuming: int = 0):
        """The pipeline for these sizes; `group_counts`: the NumWorkgroups a split launch's
        dispatches give their kernel instead of their own counts; `resuming`: for the passes
        after the first of a kernel whose loops suspended, the number of the loop it resumes
        (compiler/spirv_resume.py)."""
        key = (local, local_counts, offset if self.offset_ids[0] is not None else None, work_dim, group_counts,
               resuming)
        p = self.pipelines.get(key)
        if p is None:
            with self.lock:
                p = self.pipelines.get(key)
                if p is None:
                    spec = {}
                    for sid, v in zip(self.wg_ids, local):
                        if sid is not None:
                            spec[sid] = v
                    for sid, v in zip(self.offset_ids, offset):
                        if sid is not None:
                            spec[sid] = v
                    if self.work_dim_id is not None:
                        spec[self.work_dim_id] = work_dim
                    for (_, sid, _), n in zip(self.locals, local_counts):
                        spec[sid] = n
                    if self.image.loop_word is not None:
                        spec.update(self.image.loop_word.spec())
                    if resuming:
                        spec[SPEC_RESUMING], spec[SPEC_RESUME_LOOP] = 1, resuming
                    if group_counts is not None:
                        spec[spirv_num_groups.SPEC_FLAG] = 1
                        spec.update(zip(spirv_num_groups.SPEC_COUNTS, group_counts))
                    module = self.image.module_for(local[0], bool(resuming))
                    p = vkp.compute_pipeline(self.image.vk, module, self.layout, self.name, spec)
                    self.pipelines[key] = p
        return p


def convert_arguments(plan: KernelPlan, pc: bytearray) -> None:
    """Fill the push constants that hold arguments converted to double (vkcl.compiler.spirv_args)."""
    for dst, source, src in plan.conversions:
        struct.pack_into("<d", pc, dst, source.unpack_from(pc, src)[0])


# --- work sizes --------------------------------------------------------------------------------

def choose_local(global_: tuple, device, uniform: bool) -> tuple:
    """A work-group size for local_work_size == NULL: divides the global size where the program
    needs uniform work-groups, fits the device, prefers multiples of the subgroup size."""
    dims = len(global_)
    target = {1: 256, 2: 16, 3: 8}[dims] if device.type == cl.CL_DEVICE_TYPE_GPU else {1: 64, 2: 8, 3: 4}[dims]
    budget = device.max_work_group_size
    sg = device.subgroup_size
    local = []
    for d, g in enumerate(global_):
        limit = max(1, min(target, device.max_work_item_sizes[d], budget, g))
        if not uniform:
            n = limit
        else:
            n = max((x for x in range(limit, 0, -1) if g % x == 0 and (x % sg == 0 or x == g)), default=0) or \
                max(x for x in range(limit, 0, -1) if g % x == 0)
        local.append(n)
        budget //= n
    return tuple(local)


def regions(global_: tuple, local: tuple):
    """The uniform regions of an NDRange: (start, size, local) per region, main region first."""
    per_dim = []
    for g, l in zip(global_, local):
        full = g - g % l
        parts = [(0, full, l)] if full else []
        if g % l:
            parts.append((full, g % l, g % l))
        per_dim.append(parts)
    out = [((), (), ())]
    for parts in per_dim:
        out = [(s + (a,), z + (b,), l + (c,)) for s, z, l in out for a, b, c in parts]
    return out


def grid_chunks(groups: tuple, max_count: list) -> list:
    """Split a grid of work-groups into dispatches of at most maxComputeWorkGroupCount."""
    axes = []
    for n, m in zip(groups, max_count):
        axes.append([(b, min(m, n - b)) for b in range(0, n, m)])
    out = [((), ())]
    for parts in axes:
        out = [(base + (b,), cnt + (c,)) for base, cnt in out for b, c in parts]
    return out


# --- the command ---------------------------------------------------------------------------------

class Launch:
    """What one (sizes, offset, __local sizes) of a kernel needs: the dispatches, with the
    pipelines and the builtin push constants (ids of each region) already in place. Cached on
    the plan, so repeated enqueues only pack argument bytes."""

    __slots__ = ("dispatches", "builtin_pcs", "group_sizes", "pipeline_args")

    def __init__(self, plan: KernelPlan, vkdev, work_dim: int, offset: tuple, global_: tuple, local: tuple,
                 local_counts: tuple):
        n = work_dim
        pad = lambda t, v: tuple(t) + (v,) * (3 - n)  # noqa: E731
        b = plan.builtins
        self.dispatches = []  # (pipeline, region index, base groups, group counts)
        self.group_sizes = []  # work-items per work-group, per dispatch
        self.pipeline_args = []  # per dispatch: what KernelPlan.pipeline made its pipeline of
        self.builtin_pcs = []  # per region: push-constant bytes with only the builtins set, or None
        for start, size, loc in regions(global_, local):
            groups = tuple(s // l for s, l in zip(size, loc))
            builtin = None
            if b:
                values = {"global_offset": pad(offset, 0), "enqueued_local_size": pad(local, 1),
                          "global_size": pad(global_, 1),
                          "region_offset": pad([o + s for o, s in zip(offset, start)], 0),
                          "num_workgroups": pad([-(-g // l) for g, l in zip(global_, local)], 1),
                          "region_group_offset": pad([s // l for s, l in zip(start, local)], 0)}
                pc = bytearray(plan.pc_size)
                for name, off in b.items():
                    struct.pack_into("<3I", pc, off, *values[name])
                builtin = int.from_bytes(pc, "little")
            region = len(self.builtin_pcs)
            self.builtin_pcs.append(builtin)
            chunks = grid_chunks(pad(groups, 1), vkdev.physical.limits["maxComputeWorkGroupCount"])
            # Split into several dispatches: each is told the region's whole work-group count.
            whole = pad(groups, 1) if len(chunks) > 1 and plan.image.group_counts else None
            args = (pad(loc, 1), local_counts, pad(offset, 0), work_dim, whole)
            pipe = plan.pipeline(*args)
            for base, count in chunks:
                self.dispatches.append((pipe, region, base, count))
                self.pipeline_args.append(args)
                self.group_sizes.append(loc[0] * (loc[1] if n > 1 else 1) * (loc[2] if n > 2 else 1))


class NDRangeKernel(Command):
    command_type = cl.CL_COMMAND_NDRANGE_KERNEL
    ubo_alloc = dset = printf_alloc = printf_copy = bounds = None

    def __init__(self, queue, kernel, plan: KernelPlan, launch: Launch):
        vkdev = queue.vk
        self.plan, self.vk, self.launch = plan, vkdev, launch
        pc = bytearray(plan.pc_size)
        ubo = bytearray(plan.ubo[2]) if plan.ubo else None
        args = kernel.args
        mems, named = [], []
        for ordinal, where, off in plan.pointers:
            ref = args[ordinal].mem_ref
            mem = ref() if ref is not None else None
            if mem is not None:
                mems.append(mem)
            elif ref is not None:
                raise CLError(cl.CL_INVALID_KERNEL_ARGS, f"argument {ordinal}: its memory object was released")
            if mem is not None:
                named.append((ordinal, mem))
            struct.pack_into("<Q", pc if where == "pc" else ubo, off, mem.address(vkdev) if mem is not None else 0)
        for ordinal, where, off, size in plan.pods:
            data = args[ordinal].data[:size]
            (pc if where == "pc" else ubo)[off:off + len(data)] = data
        if plan.conversions:
            convert_arguments(plan, pc)
        self.mems = mems  # kept alive until the kernel completes
        self.local_sizes = [args[o].local_size for o, _, _ in plan.locals] if plan.resume_locals else ()
        if plan.constants_pc is not None and plan.image.constants is not None:
            struct.pack_into("<Q", pc, plan.constants_pc, plan.image.constants.address)
        if plan.printf_size or ubo is not None:
            self.allocator = allocator_for(vkdev)
            if plan.printf_size:
                self._printf_buffer(pc)
            if ubo is not None:
                self._uniform_buffer(ubo)
        if plan.refl.bounds_table_offset is not None:  # VKCL_CHECK_BOUNDS: the kernel is instrumented
            self._bounds_table(pc, named)
        # The builtin and argument fields of the push constants never overlap.
        n = plan.pc_size
        self.pcs = [bytes(pc) if bpc is None else (int.from_bytes(pc, "little") | bpc).to_bytes(n, "little")
                    for bpc in launch.builtin_pcs]

    def _bounds_table(self, pc: bytearray, named: list) -> None:
        plan, vkdev = self.plan, self.vk
        names = {a.ordinal: a.name or f"#{a.ordinal}" for a in plan.refl.args}
        ranges = [(m.address(vkdev), m.address(vkdev) + m.size, f"argument {o} '{names.get(o, o)}'")
                  for o, m in named]
        if plan.image.constants is not None:
            c = plan.image.constants
            ranges.append((c.address, c.address + c.size, "program-scope constant data"))
        if self.printf_alloc is not None:
            a = self.printf_alloc
            ranges.append((a.address, a.address + plan.printf_size, "the printf buffer"))
        if plan.image.loop_word is not None:  # the code vkcl adds for llvmpipe's loop cap reads it
            a = plan.image.loop_word.alloc
            ranges.append((a.address, a.address + loop_cuts.WORD_BYTES, "vkcl's loop-cut word"))
        self.bounds = bounds.BoundsTable(allocator_for(vkdev), ranges)
        struct.pack_into("<Q", pc, plan.refl.bounds_table_offset, self.bounds.address)

    def _uniform_buffer(self, data: bytearray) -> None:
        a = self.ubo_alloc = self.allocator.allocate(max(16, len(data)), MemoryKind.STAGING)
        ffi.memmove(a.host_ptr, bytes(data), len(data))
        if not a.coherent:
            self.allocator.flush(a)
        s, binding, size = self.plan.ubo
        sets = vkp.descriptor_sets(self.vk)
        pool, dset = sets.allocate(self.plan.layout.set_layouts[s])
        sets.write(dset, [(binding, "uniform_buffer", a.buffer, a.offset, max(16, (size + 15) & ~15))])
        self.dset = (pool, dset, s)

    def _printf_buffer(self, pc: bytearray) -> None:
        a = self.printf_alloc = self.allocator.allocate(self.plan.printf_size, MemoryKind.DEVICE)
        if self.plan.printf_pc is not None:
            struct.pack_into("<Q", pc, self.plan.printf_pc, a.address)
        if a.host_ptr is None:
            self.printf_copy = self.allocator.allocate(self.plan.printf_size, MemoryKind.READBACK)

    def record(self, cb) -> None:
        plan = self.plan
        if self.printf_alloc is not None:
            a = self.printf_alloc
            vkc.fill_buffer(cb, a.buffer, a.offset, 4, 0)
            vkc.full_barrier(cb)
        if plan.resume_stride:
            local, lanes = 0, 0
            if plan.resume_locals:  # what a work-group's local memory takes, __local arguments too
                local = plan.image.static_local.get(plan.name, 0) + sum(self.local_sizes)
                lanes = 0 if plan.extra_lanes_return else self.event.queue.device.llvmpipe_lanes
            self.resume = self.event.queue.resume_state().begin(self.launch, plan.resume_stride, local, lanes)
            if self.bounds is not None:
                state = self.resume.state
                self.bounds.add([(a.address, a.address + a.size, what) for a, what in
                                 ((state.headers, "vkcl's resume headers"), (state.area, "vkcl's resume area"))])
        self.record_pass(cb)

    def prepare_pass(self) -> None:
        """Before a later pass is recorded: the pipelines it needs, so that one that cannot be
        made fails the launch with nothing of that pass recorded (core/queue.py)."""
        for k, loops in self.resume.active.items():
            for loop in loops:
                self.plan.pipeline(*self.launch.pipeline_args[k], resuming=loop)

    def record_pass(self, cb) -> None:
        """The dispatches (again for each later pass of a kernel that suspended: the printf
        buffer's offset is not reset between them)."""
        bound = None
        plan, resume = self.plan, self.resume
        size, layout = plan.pc_size, plan.layout.handle
        if self.dset is not None:
            pool, dset, s = self.dset
            sets = ffi.new("VkDescriptorSet[1]", [dset])
            lib.vkCmdBindDescriptorSets(cb, vkp.vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, s, 1, sets, 0, ffi.NULL)
        for k, (pipe, region, base, count) in enumerate(self.launch.dispatches):
            # Later passes: only dispatches that suspended, once for each loop that suspended
            # there, with the pipeline that resumes that loop (the others' work-items return).
            loops = resume.active.get(k, ()) if resume is not None and resume.passes else (0,)
            for loop in loops:
                if loop:
                    pipe = plan.pipeline(*self.launch.pipeline_args[k], resuming=loop)
                if resume is not None:
                    resume.state.point_at(cb, resume.header_address(k))
                if pipe is not bound:
                    lib.vkCmdBindPipeline(cb, 1, pipe)  # VK_PIPELINE_BIND_POINT_COMPUTE
                    bound = pipe
                if size:
                    lib.vkCmdPushConstants(cb, layout, vkp.COMPUTE, 0, size, self.pcs[region])
                lib.vkCmdDispatchBase(cb, base[0], base[1], base[2], count[0], count[1], count[2])
                if resume is not None:
                    vkc.full_barrier(cb)  # the dispatch's reads of the word before the next fill
        if self.printf_copy is not None:
            vkc.full_barrier(cb)
            a, c = self.printf_alloc, self.printf_copy
            vkc.copy_buffer(cb, a.buffer, c.buffer, [(a.offset, c.offset, self.plan.printf_size)])

    def complete(self) -> None:
        if self.printf_alloc is not None:
            src = self.printf_copy or self.printf_alloc
            if not src.coherent:
                self.allocator.invalidate(src)
            printf.emit(ffi.buffer(src.host_ptr, self.plan.printf_size), self.plan.image.reflection.printf_infos)
        try:
            if self.bounds is not None:
                bounds.raise_if_faulted(self.bounds, self.plan.name, self.event.context)
        finally:
            self.discard()

    def discard(self) -> None:
        self.mems = ()
        if self.bounds is not None:
            self.bounds.free()
            self.bounds = None
        for name in ("ubo_alloc", "printf_alloc", "printf_copy"):
            a = getattr(self, name)
            if a is not None:
                self.allocator.free(a)
                setattr(self, name, None)
        if self.dset is not None:
            vkp.descriptor_sets(self.vk).free(self.dset[0], self.dset[1])
            self.dset = None
