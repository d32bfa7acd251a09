"""An OpenCL device over one Vulkan physical device.

Every value is derived from the Vulkan limits and features, and claims only what vkcl can
honour: no images (until they exist), no SVM, no pipes, no device-side enqueue.
"""
from __future__ import annotations

import os
import re
from functools import cached_property

from vkcl import __version__, config
from vkcl._gen import cl
from vkcl.core.object import CLObject
from vkcl.core.platform import make_version
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.instance import PhysicalDevice, version_tuple

NVIDIA_VENDOR_ID = 0x10DE
VENDORS = {NVIDIA_VENDOR_ID: "NVIDIA Corporation", 0x1002: "Advanced Micro Devices, Inc.", 0x8086: "Intel(R) Corporation",
           0x13B5: "ARM", 0x5143: "Qualcomm", 0x1010: "Imagination Technologies", 0x10005: "Mesa",
           0x106B: "Apple"}
PRINTF_BUFFER_SIZE = 1 << 20
# llvmpipe ends every loop after 65,535 back-edges of one batch of 8 work-items in all: loops
# unrolled 16 times where 16 copies stay under 1,000 of LLVM's size units (runtime-unrolled
# loops too big for that up to 8 times), remainders unrolled too. docs/architecture.md says why.
LLVMPIPE_LOOP_UNROLL = dict(loop_unroll_count=16, loop_unroll_size=1000)
# What one work-item's loops may take of that budget before they suspend (compiler/spirv_resume.py):
# a batch spends at most the sum of its work-items' counts; a margin for the loops inside the
# last trip, the probe and what runs after the last check.
LLVMPIPE_BUDGET, LLVMPIPE_MARGIN = 65_535, 5_535
# gallivm's LP_MAX_TGSI_NESTING is 80 (measured: 80 nested conditionals right, 81 wrong; see
# compiler/spirv_nesting.py); 2 fewer for what Mesa's passes might nest that the count misses.
LLVMPIPE_NESTING = 78


def llvmpipe_lanes(name: str) -> int:
    """Work-items per llvmpipe batch: its vector width over 32 ("llvmpipe (LLVM 15.0.6, 256 bits)")."""
    found = re.search(r"(\d+) bits", name)
    return max(1, int(found.group(1)) // 32) if found else 16
KHR = make_version(1, 0, 0)


class Device(CLObject):
    """A root device. Sub-devices are not supported (clCreateSubDevices fails as the spec allows)."""

    def __init__(self, platform, pd: PhysicalDevice):
        super().__init__()
        self.platform = platform
        self.physical = pd
        lim = pd.limits
        f = pd.features
        self.name = pd.name
        self.vendor_id = pd.vendor_id
        self.vendor = VENDORS.get(pd.vendor_id, f"Vulkan vendor {pd.vendor_id:#x}")
        vk_major, vk_minor, vk_patch = version_tuple(pd.api_version)
        self.version = f"OpenCL 3.0 vkcl {__version__} (Vulkan {vk_major}.{vk_minor}.{vk_patch}, {pd.driver_info or pd.driver_name})"
        self.type = cl.CL_DEVICE_TYPE_CPU if pd.device_type == vk.VK_PHYSICAL_DEVICE_TYPE_CPU else (
            cl.CL_DEVICE_TYPE_GPU if pd.device_type in (vk.VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                                                         vk.VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                                                         vk.VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU)
            else cl.CL_DEVICE_TYPE_ACCELERATOR)
        self.max_compute_units = pd.sm_count or (os.cpu_count() or 1 if self.type == cl.CL_DEVICE_TYPE_CPU else 1)
        self.max_work_item_sizes = list(lim["maxComputeWorkGroupSize"])
        self.max_work_group_size = lim["maxComputeWorkGroupInvocations"]
        self.local_mem_size = lim["maxComputeSharedMemorySize"]
        self.max_push_constants = lim["maxPushConstantsSize"]
        self.subgroup_size = pd.subgroup_size
        self.has_fp64 = f["shaderFloat64"]
        self.has_int64 = f["shaderInt64"]
        self.has_fp16 = f["shaderFloat16"] and f["storageBuffer16BitAccess"]
        self.has_int8 = f["shaderInt8"] and f["storageBuffer8BitAccess"]
        # cl_khr_integer_dot_product: Vulkan 1.3's shaderIntegerDotProduct (SPIR-V 1.6 OpSDot...).
        self.has_integer_dot_product = (f.get("shaderIntegerDotProduct", False) and self.has_int8 and
                                        pd.api_version >= vk.VK_MAKE_VERSION(1, 3, 0))
        self.host_unified_memory = pd.is_uma
        self.global_mem_size = pd.device_local_bytes
        # An allocation must fit one VkBuffer and one VkDeviceMemory (and a quarter of memory at least).
        self.max_mem_alloc_size = min(pd.max_memory_allocation_size, pd.max_buffer_size, self.global_mem_size)
        # clspv's sub-buffer offsets and vload/vstore want long16 alignment at least (bits).
        self.mem_base_addr_align = 8 * max(128, lim["minStorageBufferOffsetAlignment"])
        self.profiling_timer_resolution = max(1, round(lim["timestampPeriod"]))
        self.extensions_with_version = self._extensions()
        self.extensions = " ".join(name for name, _ in self.extensions_with_version)

    def _extensions(self) -> list[tuple[str, int]]:
        exts = [
            "cl_khr_byte_addressable_store",
            "cl_khr_global_int32_base_atomics", "cl_khr_global_int32_extended_atomics",
            "cl_khr_local_int32_base_atomics", "cl_khr_local_int32_extended_atomics",
            "cl_khr_device_uuid", "cl_khr_extended_versioning",
        ]
        if self.has_il:
            exts.append("cl_khr_il_program")
        if self.has_fp64:
            exts.append("cl_khr_fp64")
        if self.has_fp16:
            exts.append("cl_khr_fp16")
        if self.physical.pci_bus is not None:
            exts.append("cl_khr_pci_bus_info")
        if self.has_integer_dot_product:
            exts.append("cl_khr_integer_dot_product")
        versions = {"cl_khr_extended_versioning": make_version(1, 0, 0),
                    "cl_khr_integer_dot_product": make_version(2, 0, 0)}
        return sorted((e, versions.get(e, KHR)) for e in exts)

    # --- derived values the info table reads -------------------------------------------------

    @cached_property
    def driver_version(self) -> str:
        """vkcl's version and its compiler output's: applications key their binary caches on it
        (pyopencl does), so a program cached before vkcl's repairs, prelude or device caps
        changed is built again rather than refused as CL_INVALID_BINARY or run stale."""
        from vkcl.compiler.driver import output_version
        return f"{__version__} (compiler {output_version(self.compiler_caps)})"

    @cached_property
    def float_modes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The float widths whose signed zeros, infinities and NaNs, and whose denormals, every
        kernel asks the driver to preserve (compiler/spirv_float_modes.py)."""
        fc = self.physical.float_controls
        widths = [w for w, has in ((16, self.has_fp16), (32, True), (64, self.has_fp64)) if has]
        inf_nan = tuple(w for w in widths if fc.get(f"shaderSignedZeroInfNanPreserveFloat{w}"))
        denorms = [w for w in widths if fc.get(f"shaderDenormPreserveFloat{w}")]
        # Where denormal behaviour cannot differ between widths (VK_SHADER_FLOAT_CONTROLS_
        # INDEPENDENCE_NONE = 2, or 32_BIT_ONLY = 0 for 16 and 64), preserve them in all or none.
        independence = fc.get("denormBehaviorIndependence", 2)
        if independence == 2 and denorms != widths:
            denorms = []
        elif independence == 0 and (16 in widths and 64 in widths) and (16 in denorms) != (64 in denorms):
            denorms = [w for w in denorms if w == 32]
        return inf_nan, tuple(denorms)

    def _denorm_bit(self, width: int) -> int:
        return cl.CL_FP_DENORM if width in self.float_modes[1] else 0

    @property
    def single_fp_config(self) -> int:
        # The full-profile minimum, and denormals where the driver preserves them. Vulkan
        # promises no fused fma() for fp32: CL_FP_FMA is not claimed.
        return cl.CL_FP_ROUND_TO_NEAREST | cl.CL_FP_INF_NAN | self._denorm_bit(32)

    @property
    def double_fp_config(self) -> int:
        if not self.has_fp64:
            return 0
        # The CTS holds fp64 devices to OpenCL 1.0's minimum, rounding modes included.
        return (cl.CL_FP_FMA | cl.CL_FP_ROUND_TO_NEAREST | cl.CL_FP_ROUND_TO_ZERO | cl.CL_FP_ROUND_TO_INF |
                cl.CL_FP_INF_NAN | cl.CL_FP_DENORM)

    @property
    def half_fp_config(self) -> int:
        return cl.CL_FP_ROUND_TO_NEAREST | cl.CL_FP_INF_NAN | self._denorm_bit(16) if self.has_fp16 else 0

    @property
    def queue_properties(self) -> int:
        return cl.CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | cl.CL_QUEUE_PROFILING_ENABLE

    # 0: no sub-group support is claimed (no cl_khr_subgroups, no __opencl_c_subgroups), and
    # the API and the compiler must agree (the CTS's features_macro checks it).
    max_num_sub_groups = 0

    @property
    def max_constant_buffer_size(self) -> int:
        # __constant arguments are buffer addresses, like __global ones.
        return self.max_mem_alloc_size

    def vector_width(self, kind: str) -> int:
        if kind == "double":
            return 1 if self.has_fp64 else 0
        if kind == "half":
            return 1 if self.has_fp16 else 0
        return 1

    @cached_property
    def opencl_c_all_versions(self) -> list[tuple[str, int]]:
        return [("OpenCL C", make_version(1, 0)), ("OpenCL C", make_version(1, 1)),
                ("OpenCL C", make_version(1, 2)), ("OpenCL C", make_version(3, 0))]

    @cached_property
    def opencl_c_features(self) -> list[tuple[str, int]]:
        names = []
        if self.has_int64:
            names.append("__opencl_c_int64")
        if self.has_fp64:
            names.append("__opencl_c_fp64")
        if self.has_integer_dot_product:
            names += ["__opencl_c_integer_dot_product_input_4x8bit",
                      "__opencl_c_integer_dot_product_input_4x8bit_packed"]
        return [(n, make_version(3, 0)) for n in names]

    # cl_khr_integer_dot_product's queries.
    @property
    def integer_dot_product_capabilities(self) -> int:
        return (cl.CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR |
                cl.CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR) if self.has_integer_dot_product else 0

    @property
    def integer_dot_product_8bit(self) -> bytes:
        import struct
        return struct.pack("<6I", *self.physical.dot_8bit)

    @property
    def integer_dot_product_4x8bit_packed(self) -> bytes:
        import struct
        return struct.pack("<6I", *self.physical.dot_4x8_packed)

    @cached_property
    def has_il(self) -> bool:
        """SPIR-V programs are translated by the SPIRV-LLVM-Translator (compiler/il.py): where it
        is missing none can be built, so none is claimed (the CTS then skips them)."""
        from vkcl.compiler import toolchain
        try:
            toolchain.llvm_spirv()
        except toolchain.ToolMissing:
            return False
        return True

    @property
    def ils_with_version(self) -> list[tuple[str, int]]:
        # 1.5 and 1.6 as 1.4 (compiler/il_versions.py), the newest llvm-spirv-15 reads
        return [("SPIR-V", make_version(1, v)) for v in range(0, 7)] if self.has_il else []

    @property
    def il_version(self) -> str:
        return " ".join(f"{name}_{(v >> 22) & 0x3FF}.{(v >> 12) & 0x3FF}" for name, v in self.ils_with_version)

    # OpenCL 3.0's minimum atomic capabilities: nothing beyond them is claimed yet.
    atomic_memory_capabilities = cl.CL_DEVICE_ATOMIC_ORDER_RELAXED | cl.CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
    atomic_fence_capabilities = (cl.CL_DEVICE_ATOMIC_ORDER_RELAXED | cl.CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
                                 cl.CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP)

    @property
    def pci_bus_info(self) -> bytes:
        import struct
        return struct.pack("<4I", *(self.physical.pci_bus or (0, 0, 0, 0)))

    @cached_property
    def llvmpipe_lanes(self) -> int:
        """Work-items per batch of llvmpipe (its vector width over 32)."""
        return llvmpipe_lanes(self.physical.name)

    @cached_property
    def compiler_caps(self):
        """What clspv may use on this device (vkcl.compiler.DeviceCaps)."""
        from vkcl.compiler import DeviceCaps
        pd, f = self.physical, self.physical.features
        return DeviceCaps(
            fp16=self.has_fp16, fp64=self.has_fp64, int8=self.has_int8, int16=f["shaderInt16"],
            int64=self.has_int64, max_push_constant_size=self.max_push_constants,
            spirv_version="1.6" if pd.api_version >= vk.VK_MAKE_VERSION(1, 3, 0) else "1.5",
            non_semantic_info="VK_KHR_shader_non_semantic_info" in pd.extensions,
            max_workgroup_size=self.max_work_group_size, printf_buffer_size=PRINTF_BUFFER_SIZE,
            images=False, ubo_std430=f["uniformBufferStandardLayout"],
            preserve_inf_nan=self.float_modes[0], preserve_denorms=self.float_modes[1],
            rounding_mode_rte=tuple(w for w in (16, 32, 64)
                                    if self.physical.float_controls.get(f"shaderRoundingModeRTEFloat{w}")),
            features=tuple(name for name, _ in self.opencl_c_features),
            # Discrete GPUs: their compilers may not unroll (NVIDIA's does not). Not on CPU
            # devices such as lavapipe, whose JIT time grows with the code.
            unroll_runtime_loops=not pd.is_uma,
            unroll_partial_threshold=0 if pd.is_uma else 300,
            # NVIDIA's Fma is one fused instruction (FFMA/DFMA, one rounding): fma() need not
            # be emulated (clspv's float emulation ran at 265 GFLOP/s on an H200, the
            # instruction at 62,700).
            native_builtins=("fma",) if pd.vendor_id == NVIDIA_VENDOR_ID else (),
            narrow_memory_scopes=pd.driver_name == "llvmpipe",
            merge_narrow_accesses=pd.driver_name == "llvmpipe",
            roll_copies=pd.driver_name == "llvmpipe",
            negate_zero_operands=pd.driver_name == "llvmpipe",
            round_even_from_floor=pd.driver_name == "llvmpipe",
            **(LLVMPIPE_LOOP_UNROLL if pd.driver_name == "llvmpipe" else {}),
            max_nesting=LLVMPIPE_NESTING if pd.driver_name == "llvmpipe" else 0,
            resume_limit=((config.get("resume_limit") or (LLVMPIPE_BUDGET - LLVMPIPE_MARGIN) // llvmpipe_lanes(pd.name))
                          if pd.driver_name == "llvmpipe" and config.get("resume_loops") else 0),
        )

    # Root devices are not reference counted (clRetainDevice/clReleaseDevice are no-ops).
    def retain(self) -> None:
        pass

    def release(self) -> bool:
        return False
