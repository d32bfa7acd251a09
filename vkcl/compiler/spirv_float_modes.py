"""Float execution modes (SPV_KHR_float_controls, core in SPIR-V 1.4) on every entry point.

Without them Vulkan lets a driver ignore signed zeros, infinities and NaNs and flush denormals
(Vulkan spec, "Precision and Operation of SPIR-V Instructions"); OpenCL's full profile needs the
first three for every float type (CL_FP_INF_NAN) and denormals for double. So each entry point
gets SignedZeroInfNanPreserve for every float width the module declares and the device can
preserve (shaderSignedZeroInfNanPreserveFloatN), and DenormPreserve where the device can
(shaderDenormPreserveFloatN; vkcl then reports CL_FP_DENORM for that type), and RoundingModeRTE
where the device has it (Vulkan otherwise leaves the rounding of float operations to the
driver; OpenCL's default is round to nearest even). Modes the module already has stay.
"""
from __future__ import annotations

from array import array

from vkcl.compiler import spirv

OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID = 16, 331
MODE_DENORM_PRESERVE, MODE_SIGNED_ZERO_INF_NAN_PRESERVE, MODE_ROUNDING_RTE = 4459, 4461, 4462
CAP_DENORM_PRESERVE, CAP_SIGNED_ZERO_INF_NAN_PRESERVE, CAP_ROUNDING_RTE = 4464, 4466, 4467
_CAPABILITY_OF = {MODE_DENORM_PRESERVE: CAP_DENORM_PRESERVE,
                  MODE_SIGNED_ZERO_INF_NAN_PRESERVE: CAP_SIGNED_ZERO_INF_NAN_PRESERVE,
                  MODE_ROUNDING_RTE: CAP_ROUNDING_RTE}
EXTENSION = "SPV_KHR_float_controls"


def add_float_modes(data: bytes, preserve_widths: tuple[int, ...], denorm_widths: tuple[int, ...],
                    rte_widths: tuple[int, ...] = ()) -> bytes:
    """`data` with SignedZeroInfNanPreserve for `preserve_widths`, DenormPreserve for
    `denorm_widths` and RoundingModeRTE for `rte_widths` (each only where the module declares
    that float type) on every entry point."""
    words = spirv.to_words(data)
    entries, floats, present, caps, extensions = [], set(), set(), set(), set()
    last_capability = last_mode = None
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_CAPABILITY:
            caps.add(words[pos + 1])
            last_capability = pos + n
        elif op == spirv.OP_EXTENSION:
            extensions.add(spirv.literal_string(words, pos + 1, pos + n)[0])
        elif op == spirv.OP_ENTRY_POINT:
            entries.append(words[pos + 2])
            last_mode = pos + n
        elif op in (OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID):
            present.add(tuple(words[pos + 1:pos + n]))
            last_mode = pos + n
        elif op == spirv.OP_TYPE_FLOAT:
            floats.add(words[pos + 2])
    wanted = [(MODE_SIGNED_ZERO_INF_NAN_PRESERVE, w) for w in sorted(set(preserve_widths) & floats)]
    wanted += [(MODE_DENORM_PRESERVE, w) for w in sorted(set(denorm_widths) & floats)]
    wanted += [(MODE_ROUNDING_RTE, w) for w in sorted(set(rte_widths) & floats)]
    modes = array("I")
    for entry in entries:
        for mode, width in wanted:
            if (entry, mode, width) not in present:
                modes.extend([(4 << 16) | OP_EXECUTION_MODE, entry, mode, width])
    if not modes or last_capability is None:
        return data
    head = array("I")
    for cap in sorted({_CAPABILITY_OF[mode] for mode, _ in wanted} - caps):
        head.extend([(2 << 16) | spirv.OP_CAPABILITY, cap])
    if spirv.version(words) < (1, 4) and EXTENSION not in extensions:
        name = spirv.string_words(EXTENSION)
        head.extend([((1 + len(name)) << 16) | spirv.OP_EXTENSION, *name])
    return spirv.to_bytes(words[:last_capability] + head + words[last_capability:last_mode] + modes +
                          words[last_mode:])
