"""Loads and stores of Workgroup memory made Volatile in programs that say `volatile` (a repair of
spirv_fixes; OpenCL C only: the driver passes `volatile_local`).

clspv keeps a volatile access in its LLVM IR, but its SPIR-V loses the Volatile memory operand,
and the device's compiler then treats the access as any other: Mesa forwarded a store to
`__local` memory to the load that re-read it. Rodinia's hybridsort counts in `volatile __local`
counters by storing a tagged value and reading it back until its own store sticks (the
warp-synchronous idiom of GPU code of its time); with the re-read forwarded every work-item of
an 8-wide batch saw its own store, and each batch counted one where it has eight (the sort then
failed its check). Which SPIR-V access was volatile in the source is not known, so every
Workgroup load and store of such a program is made Volatile, and its Workgroup variables are
decorated Volatile: it costs the program's local memory accesses their caching in registers,
never a result. (NVIDIA's Vulkan driver still gives a work-item its own store: docs/status.md.)
"""
from __future__ import annotations

from array import array

from vkcl.compiler.spirv_edit import Module, instruction

OP_VARIABLE, OP_LOAD, OP_STORE, OP_DECORATE = 59, 61, 62, 71
DECORATION_VOLATILE = 21
SC_WORKGROUP = 4
MEMORY_ACCESS_VOLATILE = 0x1


def volatile_workgroup_accesses(data: bytes) -> bytes:
    """The module with every OpLoad and OpStore of a Workgroup pointer Volatile."""
    m = Module(data)

    def each(inst: array) -> list[array] | None:
        op = m.opcode(inst)
        if op == OP_LOAD and len(inst) >= 4:
            pointer, mask_at = inst[3], 4
        elif op == OP_STORE and len(inst) >= 3:
            pointer, mask_at = inst[1], 3
        else:
            return None
        place = m.pointee(m.type_of.get(pointer, 0))
        if place is None or place[0] != SC_WORKGROUP:
            return None
        out = array("I", inst)
        if len(out) > mask_at:
            if out[mask_at] & MEMORY_ACCESS_VOLATILE:
                return None
            out[mask_at] |= MEMORY_ACCESS_VOLATILE  # (its other operands, Aligned's, stay after it)
        else:
            out.append(MEMORY_ACCESS_VOLATILE)
            out[0] = (len(out) << 16) | op
        return [out]

    changed = m.rewrite(each)
    # The variables are decorated Volatile too, as GLSL's `volatile shared` is.
    decorated = {i[1] for i in m.insts if m.opcode(i) == OP_DECORATE and len(i) >= 3 and i[2] == DECORATION_VOLATILE}
    variables = [i[2] for i in m.insts if m.opcode(i) == OP_VARIABLE and len(i) >= 4 and i[3] == SC_WORKGROUP
                 and i[2] not in decorated]
    if variables:
        m.insert_annotations([instruction(OP_DECORATE, v, DECORATION_VOLATILE) for v in variables])
    return m.to_bytes() if changed or variables else data
