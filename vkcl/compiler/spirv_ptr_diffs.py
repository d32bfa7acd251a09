"""OpPtrDiff, OpPtrEqual and OpPtrNotEqual of PhysicalStorageBuffer pointers as integer
operations on their addresses (a repair of spirv_fixes).

clspv wrote a loop `for (global const float *p = a; p < a + n; p++)` as an OpPtrDiff of two
physical pointers tested against 0, and NVIDIA's driver crashed the process (SIGSEGV) making
its pipeline. Vulkan gives these instructions to pointers of variable-pointer storage classes;
physical pointers have addresses, and the difference of two addresses over the element's size is
the same count. (il_lowering does the same for IL programs, for every pointer.)
"""
from __future__ import annotations

from array import array

from vkcl.compiler.il_lowering import pointer_ops
from vkcl.compiler.spirv_edit import Module

OP_PTR_EQUAL, OP_PTR_NOT_EQUAL, OP_PTR_DIFF = 401, 402, 403
SC_PHYSICAL_STORAGE_BUFFER = 5349


def physical_pointer_diffs(data: bytes) -> bytes:
    """The module with those instructions on physical pointers as address arithmetic."""
    m = Module(data)
    if not any(m.opcode(i) in (OP_PTR_EQUAL, OP_PTR_NOT_EQUAL, OP_PTR_DIFF) for i in m.insts):
        return data
    arithmetic = pointer_ops(m, 8)

    def each(inst: array):
        if m.opcode(inst) not in (OP_PTR_EQUAL, OP_PTR_NOT_EQUAL, OP_PTR_DIFF):
            return None
        place = m.pointee(m.type_of.get(inst[3], 0))
        if place is None or place[0] != SC_PHYSICAL_STORAGE_BUFFER:
            return None
        return arithmetic(inst)

    return m.to_bytes() if m.rewrite(each) else data
