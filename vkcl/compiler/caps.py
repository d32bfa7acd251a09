"""What the compiler needs to know about a device, and the clspv options that follow from it.

The runtime fills a DeviceCaps from the Vulkan device's features and limits. Two devices with
equal caps get byte-identical SPIR-V, so `key()` is part of every cache key and of every
program binary.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

SPIRV_VERSIONS = ("1.0", "1.3", "1.4", "1.5", "1.6")
STORAGE_CLASSES = ("ssbo", "ubo", "pushconstant")
CAPS_FORMAT = 1
# clspv lays packed structs out as bytes; given only where they need it (clspv_args, driver.py)
REWRITE_PACKED_STRUCTS = "-rewrite-packed-structs"
PHYSICAL_STORAGE_BUFFERS = "-physical-storage-buffers"


@dataclass(frozen=True)
class DeviceCaps:
    # Types the device supports (Vulkan shaderFloat16/Float64/Int8/Int16/Int64).
    fp16: bool = True
    fp64: bool = True
    int8: bool = True
    int16: bool = True
    int64: bool = True
    # 64: size_t and pointers are 64-bit (-arch=spir64); 32: -arch=spir.
    address_bits: int = 64
    # bufferDeviceAddress: buffer arguments become 64-bit addresses in push constants.
    physical_addressing: bool = True
    max_push_constant_size: int = 128
    max_ubo_size: int = 65536
    # SPIR-V version of the output: 1.5 for Vulkan 1.2, 1.6 for Vulkan 1.3.
    spirv_version: str = "1.5"
    # VK_KHR_shader_non_semantic_info (core in Vulkan 1.3): if False, strip reflection first.
    non_semantic_info: bool = True
    max_workgroup_size: int = 1024
    printf_buffer_size: int = 1 << 20
    images: bool = True
    # uniformBufferStandardLayout: UBOs may use std430 layout.
    ubo_std430: bool = False
    # The runtime splits NDRanges whose size is not a multiple of the work-group size.
    non_uniform_workgroups: bool = True
    # get_global_offset() from push constants (True) or specialization constants (False).
    global_offset_push_constant: bool = False
    # Storage classes without 8-/16-bit access ("ssbo", "ubo", "pushconstant").
    no_8bit_storage: tuple[str, ...] = ()
    no_16bit_storage: tuple[str, ...] = ()
    # Float widths (16, 32, 64) with shaderRoundingModeRTE.
    rounding_mode_rte: tuple[int, ...] = ()
    # Float widths whose signed zeros, infinities and NaNs the device can preserve
    # (shaderSignedZeroInfNanPreserveFloatN), and whose denormals (shaderDenormPreserveFloatN):
    # every entry point asks for them (spirv_float_modes.py).
    preserve_inf_nan: tuple[int, ...] = ()
    preserve_denorms: tuple[int, ...] = ()
    # Builtins clspv may map to the native Vulkan instruction (--use-native-builtins).
    native_builtins: tuple[str, ...] = ()
    # OpenCL C 3.0 feature macros to define (__opencl_c_...); empty: clspv's own choice.
    features: tuple[str, ...] = ()
    decorate_nonuniform: bool = False
    # Unroll loops whose trip count is only known at run time (LLVM's -unroll-runtime). NVIDIA's
    # Vulkan compiler leaves them rolled where NVIDIA's OpenCL compiler unrolls them: on an H200
    # a float4 multiply-add loop ran at 52.3 TFLOP/s rolled, 64.3 unrolled (NVIDIA OpenCL 59.4).
    unroll_runtime_loops: bool = False
    # The size budget (LLVM's -unroll-partial-threshold; 0: LLVM's 150) for those unrolled loops.
    # NVIDIA's Vulkan compiler adds a few instructions to each iteration of an unrolled loop
    # (phi copies, a reloaded constant): 6 next to 64 FFMAs at 150 (91% of the issue slots),
    # 6 next to 128 at 300 (96%). See docs/performance.md, "MAD float".
    unroll_partial_threshold: int = 0
    # Memory scopes of fences and atomics made Subgroup (spirv_scopes.py): on llvmpipe a wider
    # one acts as a work-group barrier, and in divergent code some work-items never finish.
    narrow_memory_scopes: bool = False
    # Adjacent 8/16/32-bit global loads and stores merged into 64-bit ones (spirv_merge_access.py):
    # llvmpipe makes each a loop over its batch of work-items, and its compile time grows with
    # the square of their number (a vector of 16 chars is 16 of them).
    merge_narrow_accesses: bool = False
    # In kernels of many global accesses, a run of loads stored unchanged by the run of stores
    # after it made one loop (spirv_copy_loops.py): llvmpipe's coroutine splitting takes time
    # that grows with the square of the basic blocks those accesses become.
    roll_copies: bool = False
    # Float operations with a constant +0.0 operand rewritten with it negated (repair 21,
    # spirv_zero_operands.py): llvmpipe folds x * 0.0 to 0, x + 0.0 to x and so on.
    negate_zero_operands: bool = False
    # RoundEven and Trunc of doubles computed from Floor (repair 22, spirv_round_even.py):
    # llvmpipe rounds a double's halves toward zero on some CPUs (rint(1.5) gave 1.0 on an AMD
    # EPYC with AVX2) and truncates (-1, -0] to +0.0.
    round_even_from_floor: bool = False
    # Every loop unrolled this many times (LLVM's -unroll-count, each copy keeping its exit test
    # where the trip count is unknown) while the unrolled loop stays under `loop_unroll_size`
    # (LLVM's size units; also the runtime-unroll budget of larger loops). For llvmpipe, which
    # ends every loop of a SIMD batch of work-items silently after 65,535 back-edges in all
    # (docs/architecture.md, "Loops on lavapipe"): a copy per back-edge multiplies what fits.
    loop_unroll_count: int = 0
    loop_unroll_size: int = 0
    # Outermost loops suspend past this many back-edges of one work-item and are resumed by a
    # later dispatch (spirv_resume.py; 0: never). For llvmpipe: its 65,535 over its lanes.
    resume_limit: int = 0
    # Conditionals nest at most this deep (spirv_nesting.py; 0: no limit). llvmpipe keeps no
    # execution mask past 80 and runs deeper branches wrong, silently.
    max_nesting: int = 0

    def __post_init__(self) -> None:
        if self.spirv_version not in SPIRV_VERSIONS:
            raise ValueError(f"spirv_version must be one of {SPIRV_VERSIONS}, not {self.spirv_version!r}")
        if self.address_bits not in (32, 64):
            raise ValueError("address_bits must be 32 or 64")
        if self.physical_addressing and self.address_bits != 64:
            raise ValueError("physical addressing needs 64-bit addresses")
        for name in ("no_8bit_storage", "no_16bit_storage"):
            bad = set(getattr(self, name)) - set(STORAGE_CLASSES)
            if bad:
                raise ValueError(f"{name}: unknown storage classes {sorted(bad)}")
        for name in ("rounding_mode_rte", "preserve_inf_nan", "preserve_denorms"):
            if set(getattr(self, name)) - {16, 32, 64}:
                raise ValueError(f"{name} takes 16, 32 and 64")
        if self.max_push_constant_size < 0 or self.printf_buffer_size <= 0:
            raise ValueError("sizes must be positive")
        if self.loop_unroll_count < 0 or self.loop_unroll_size < 0:
            raise ValueError("loop_unroll_count and loop_unroll_size must not be negative")
        if self.loop_unroll_count and self.unroll_runtime_loops:
            # both would name -unroll-partial-threshold, and clspv exit()s on a repeated option
            raise ValueError("loop_unroll_count and unroll_runtime_loops exclude each other")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "DeviceCaps":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ValueError(f"unknown device caps: {sorted(unknown)}")
        fixed = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        return cls(**fixed)

    def key(self) -> str:
        """A stable text naming these caps: equal caps, equal key, across runs and versions."""
        return f"caps{CAPS_FORMAT}:" + json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def clspv_args(self, packed_structs: bool = True, unroll_loops: bool = True) -> list[str]:
        """The device-dependent clspv options (language and user options are not included).
        `packed_structs`: whether clspv may rewrite struct accesses as bytes (needed for packed
        structs; see byvalue_args.declares_packed for why it is not always on); `unroll_loops`:
        whether `loop_unroll_count` applies (not to programs with barriers: see driver.py)."""
        args = ["-arch=spir64" if self.address_bits == 64 else "-arch=spir"]
        if self.physical_addressing:
            args.append(PHYSICAL_STORAGE_BUFFERS)
        args += [
            f"-spv-version={self.spirv_version}",
            f"-max-pushconstant-size={self.max_push_constant_size}",
            f"-max-ubo-size={self.max_ubo_size}",
            "-enable-printf",
            f"-printf-buffer-size={self.printf_buffer_size}",
            "-long-vector",
            "-module-constants-in-storage-buffer",
            "-global-offset-push-constant" if self.global_offset_push_constant else "-global-offset",
        ]
        if not self.fp16:
            args.append("-fp16=0")
        if not self.fp64:
            args.append("-fp64=0")
        if self.int8:
            if packed_structs:
                args.append(REWRITE_PACKED_STRUCTS)
        else:
            args.append("-int8=0")
        if not self.images:
            args.append("-images=0")
        if self.ubo_std430:
            args.append("-std430-ubo-layout")
        if self.decorate_nonuniform:
            args.append("-decorate-nonuniform")
        if self.unroll_runtime_loops:
            args.append("-unroll-runtime")
            if self.unroll_partial_threshold:
                args.append(f"-unroll-partial-threshold={self.unroll_partial_threshold}")
        if self.loop_unroll_count and unroll_loops:
            args.append(f"-unroll-count={self.loop_unroll_count}")
            if self.loop_unroll_size:
                args += [f"-unroll-threshold={self.loop_unroll_size}",
                         f"-unroll-partial-threshold={self.loop_unroll_size}"]
        args += [f"-no-8bit-storage={s}" for s in self.no_8bit_storage]
        args += [f"-no-16bit-storage={s}" for s in self.no_16bit_storage]
        # clspv refuses RTE for a float width the device does not have.
        rte = [w for w in sorted(self.rounding_mode_rte) if (w != 16 or self.fp16) and (w != 64 or self.fp64)]
        if rte:
            args.append("-rounding-mode-rte=" + ",".join(str(w) for w in rte))
        if self.native_builtins:
            args.append("--use-native-builtins=" + ",".join(self.native_builtins))
        if "fma" in self.native_builtins:  # the device's Fma is fused: the prelude's fma(double) uses it
            args.append("-D__VKCL_NATIVE_FMA")
        return args


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
