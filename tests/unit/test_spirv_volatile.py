"""compiler/spirv_volatile.py: in a program that says `volatile`, every load and store of
Workgroup memory carries the Volatile memory operand (clspv's SPIR-V had lost it); other
programs' accesses are left as clspv wrote them."""
from vkcl import compiler
from vkcl.compiler.spirv_edit import Module

SOURCE = """kernel void k(global uint *o) {
  {q} __local uint s[8];
  s[get_local_id(0)] = get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = s[(get_local_id(0) + 1) % 8] + s[get_local_id(0)];
}"""


def _workgroup_accesses(binary: bytes) -> list[bool]:
    """Whether each Workgroup load and store is Volatile."""
    m = Module(binary)
    out = []
    for inst in m.insts:
        op = m.opcode(inst)
        if op not in (61, 62):
            continue
        pointer, mask_at = (inst[3], 4) if op == 61 else (inst[1], 3)
        place = m.pointee(m.type_of.get(pointer, 0))
        if place and place[0] == 4:
            out.append(len(inst) > mask_at and bool(inst[mask_at] & 1))
    return out


def test_workgroup_accesses_of_volatile_programs_are_volatile():
    caps = compiler.DeviceCaps()
    marked = _workgroup_accesses(compiler.compile_source(SOURCE.replace("{q}", "volatile"), "", caps).spirv)
    plain = _workgroup_accesses(compiler.compile_source(SOURCE.replace("{q}", ""), "", caps).spirv)
    assert len(marked) >= 3 and all(marked), marked
    assert plain and not any(plain), plain
