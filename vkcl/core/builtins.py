"""The runtime's own kernels (shaders/*.cl), dispatched like user kernels: fills with the
patterns vkCmdFillBuffer cannot express (1-128 bytes at any offset), and large copies on
discrete GPUs, where vkCmdCopyBuffer runs at the copy engine's speed (seen on an H100: about
a fifth of what a kernel's loads and stores reach)."""
from __future__ import annotations

import struct

from vkcl import compiler
from vkcl.core.ndrange import KernelPlan, ProgramImage, convert_arguments
from vkcl.vulkan import commands as vkc
from vkcl.vulkan.device import per_device

ffi, lib = vkc.ffi, vkc.lib
LOCAL_SIZE = 64
MAX_GROUPS = 4096  # the kernels loop with a stride of the global size: any grid covers any range


class BuiltinKernels:
    def __init__(self, device, vkdev):
        caps = device.compiler_caps
        result = compiler.builtin_shader("fill", caps)
        if not result.ok:
            raise RuntimeError(f"vkcl's fill kernels did not build:\n{result.log}")
        image = ProgramImage(vkdev, result, caps)
        kernels = result.reflection.kernels
        self.fill_16 = KernelPlan(image, kernels["fill_16"])
        self.fill_pattern = KernelPlan(image, kernels["fill_pattern"])
        result = compiler.builtin_shader("copy", caps)
        if not result.ok:
            raise RuntimeError(f"vkcl's copy kernel did not build:\n{result.log}")
        self.copy_16 = KernelPlan(ProgramImage(vkdev, result, caps), result.reflection.kernels["copy_16"])


def builtin_kernels(device, vkdev) -> BuiltinKernels:
    return per_device("builtin_kernels", vkdev, lambda v: BuiltinKernels(device, v))


def pack_args(plan: KernelPlan, values: dict) -> bytes:
    """Push-constant bytes: {ordinal: address (int) or value bytes} (built-ins use push constants)."""
    pc = bytearray(plan.pc_size)
    for ordinal, _, off in plan.pointers:
        struct.pack_into("<Q", pc, off, values[ordinal])
    for ordinal, _, off, size in plan.pods:
        data = values[ordinal]
        pc[off:off + size] = data[:size]
    convert_arguments(plan, pc)
    return bytes(pc)


def record_dispatch(cb, plan: KernelPlan, pc: bytes, items: int, local: int = LOCAL_SIZE,
                    max_groups: int = MAX_GROUPS) -> None:
    groups = max(1, min(max_groups, -(-items // local)))
    pipe = plan.pipeline((local, 1, 1), (), (0, 0, 0), 1)
    lib.vkCmdBindPipeline(cb, 1, pipe)  # VK_PIPELINE_BIND_POINT_COMPUTE
    data = ffi.new("char[]", pc)
    lib.vkCmdPushConstants(cb, plan.layout.handle, 0x20, 0, plan.pc_size, data)  # COMPUTE stage
    lib.vkCmdDispatch(cb, groups, 1, 1)


def copy_args(plan: KernelPlan, src_address: int, dst_address: int, size: int) -> bytes:
    """copy_16's arguments: 16-byte aligned addresses and a size that is a multiple of 16."""
    return pack_args(plan, {0: dst_address, 1: src_address, 2: (size // 16).to_bytes(8, "little")})
