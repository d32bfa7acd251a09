"""Order comparisons of pointers as comparisons of their addresses (LLVM IR, before clspv's
passes; on the front end's route, driver._run_cl).

clspv crashed (SIGSEGV) on `for (global float *p = a; p < e; p++)` with `a` and `e` two kernel
arguments: an `icmp ult` of two global pointers. With the addresses compared as 64-bit integers
(ptrtoint, which physical addressing gives every global, constant and local pointer here) it
builds; the comparison is the same, the addresses being those the pointers hold.
"""
from __future__ import annotations

import re

_ICMP = re.compile(r"^(\s*)(%[-\w.$]+) = icmp (ult|ule|ugt|uge|slt|sle|sgt|sge) (ptr addrspace\([123]\)) "
                   r"(%[-\w.$]+|null), (%[-\w.$]+|null)\s*$")


def rewrite(ir: str) -> str | None:
    """The IR with such comparisons on addresses, or None where it has none."""
    if "icmp" not in ir:
        return None
    out, changed = [], False
    for line in ir.splitlines():
        m = _ICMP.match(line)
        if m is None:
            out.append(line)
            continue
        indent, name, cond, ty, a, b = m.groups()
        base = "%vkcl.pc." + name[1:]
        out += [f"{indent}{base}.a = ptrtoint {ty} {a} to i64", f"{indent}{base}.b = ptrtoint {ty} {b} to i64",
                f"{indent}{name} = icmp {cond} i64 {base}.a, {base}.b"]
        changed = True
    return "\n".join(out) + "\n" if changed else None
