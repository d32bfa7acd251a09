"""Kernels: one entry point of a built program, with its argument values.

Argument kinds come from clspv's reflection (the descriptor map): pointers travel as buffer
device addresses in push constants, plain values as bytes in push constants (or a buffer
when clspv put them there), __local arrays as a specialisation constant with their length.
"""
from __future__ import annotations

import weakref

from vkcl._gen import cl
from vkcl.core import fastpath
from vkcl.core.object import CLObject
from vkcl.errors import CLError

POINTER_KINDS = {"buffer", "buffer_ubo", "pointer_pushconstant", "pointer_ubo"}
POD_KINDS = {"pod", "pod_ubo", "pod_pushconstant"}
IMAGE_KINDS = {"ro_image", "wo_image", "storage_texel_buffer", "uniform_texel_buffer"}
POINTER_SIZE = 8


class ArgValue:
    """What clSetKernelArg set: a memory object (or None), a local size, or POD bytes.

    A memory object is held weakly: an argument is not a reference the application counts,
    so releasing the last handle frees the object (and runs its destructor callbacks) even
    while a kernel still names it, as the spec and the CTS expect.
    """

    __slots__ = ("kind", "mem_ref", "local_size", "data")

    def __init__(self, kind: str, mem=None, local_size: int = 0, data: bytes = b""):
        self.kind, self.local_size, self.data = kind, local_size, data
        self.mem_ref = weakref.ref(mem) if mem is not None else None

    @property
    def mem(self):
        """The memory object, or None for a NULL argument or one that has since been freed."""
        return self.mem_ref() if self.mem_ref is not None else None


class Kernel(CLObject):
    fast_launch = None  # core.fastpath.FastLaunch: this kernel's launch C may repeat
    fast_candidate = None  # (queue, launch key, arg_generation) of the last one that could become one
    arg_generation = 0  # counts clSetKernelArg calls

    def __init__(self, program, name: str, reflections: dict):
        super().__init__()
        self.program = program
        self.context = program.context
        self.name = name
        self.reflections = reflections  # device -> KernelReflection
        ref = next(iter(reflections.values()))
        self.reflection = ref
        self.num_args = ref.num_args if ref.num_args is not None else len(ref.args)
        self.arg_refl = {a.ordinal: a for a in ref.args}
        self.args: list[ArgValue | None] = [None] * self.num_args
        self.unset = self.num_args  # arguments not set yet (clEnqueueNDRangeKernel checks it)
        self.attributes = ref.attributes
        self.reqd_work_group_size = ref.reqd_work_group_size
        with program.lock:
            if program.building:  # its executable is being replaced
                raise CLError(cl.CL_INVALID_PROGRAM_EXECUTABLE, "the program is being built")
            program.kernels += 1
        self.plans: dict = {}  # device -> core.ndrange.KernelPlan, made on the first enqueue

    def clone(self) -> "Kernel":
        k = Kernel(self.program, self.name, self.reflections)
        k.args = list(self.args)
        k.unset = self.unset
        return k

    def _last_release(self) -> None:
        fastpath.drop(self)
        with self.program.lock:
            self.program.kernels -= 1

    def kind(self, index: int) -> str:
        a = self.arg_refl.get(index)
        if a is not None and a.kind != "unused":
            return a.kind
        # clspv reports nothing for an argument the kernel never uses: go by its type
        if a is not None and (a.type_name.endswith("*") or a.address_qualifier in
                              (cl.CL_KERNEL_ARG_ADDRESS_GLOBAL, cl.CL_KERNEL_ARG_ADDRESS_CONSTANT)):
            return "unused_pointer"
        if a is not None and a.address_qualifier == cl.CL_KERNEL_ARG_ADDRESS_LOCAL:
            return "local"
        return "unused"

    def set_arg(self, index: int, size: int, value, resolve_mem, resolve_sampler, read_bytes) -> None:
        """clSetKernelArg, with the spec's errors. `value` is the C pointer; the resolvers turn
        handles into objects (raising the right CL error)."""
        if index >= self.num_args:
            raise CLError(cl.CL_INVALID_ARG_INDEX)
        was_unset = self.args[index] is None
        self.arg_generation += 1
        if self.fast_launch is not None:
            fastpath.drop(self)
        self._set_arg(index, size, value, resolve_mem, resolve_sampler, read_bytes)
        if was_unset:
            self.unset -= 1

    def _set_arg(self, index: int, size: int, value, resolve_mem, resolve_sampler, read_bytes) -> None:
        kind = self.kind(index)
        refl = self.arg_refl.get(index)
        if kind in POINTER_KINDS or kind == "unused_pointer":
            if size != POINTER_SIZE:
                raise CLError(cl.CL_INVALID_ARG_SIZE, f"a pointer argument takes a cl_mem ({POINTER_SIZE} bytes)")
            mem = resolve_mem(value)  # None for a NULL value or a NULL cl_mem
            if mem is not None and mem.context is not self.context:
                raise CLError(cl.CL_INVALID_MEM_OBJECT, "memory object of another context")
            self.args[index] = ArgValue("mem", mem=mem)
        elif kind == "local":
            if value is not None:
                raise CLError(cl.CL_INVALID_ARG_VALUE, "a __local argument takes a NULL value")
            if size == 0:
                raise CLError(cl.CL_INVALID_ARG_SIZE, "a __local argument needs a size")
            self.args[index] = ArgValue("local", local_size=size)
        elif kind in POD_KINDS or kind == "unused":
            if value is None:
                raise CLError(cl.CL_INVALID_ARG_VALUE, "a value argument needs a value")
            expected = refl.size if refl is not None and kind in POD_KINDS else None
            if expected is not None and size != expected and not _padded_match(refl.type_name, size, expected):
                raise CLError(cl.CL_INVALID_ARG_SIZE, f"argument {index} takes {expected} bytes, not {size}")
            if size == 0:
                raise CLError(cl.CL_INVALID_ARG_SIZE)
            self.args[index] = ArgValue("pod", data=read_bytes(value, size))
        elif kind == "sampler":
            if size != POINTER_SIZE:
                raise CLError(cl.CL_INVALID_ARG_SIZE)
            raise CLError(cl.CL_INVALID_SAMPLER, "vkcl devices have no samplers")
        elif kind in IMAGE_KINDS:
            raise CLError(cl.CL_INVALID_ARG_VALUE, "vkcl devices have no images")
        else:
            raise CLError(cl.CL_INVALID_ARG_VALUE, f"unsupported argument kind {kind}")

    def unset_args(self) -> list[int]:
        return [i for i, a in enumerate(self.args) if a is None]


def _padded_match(type_name: str, size: int, expected: int) -> bool:
    """3-component vectors: the application passes 4 components' worth (OpenCL's layout)."""
    return type_name.rstrip("*").endswith("3") and size >= expected
