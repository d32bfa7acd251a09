"""Volatile accesses of private memory made plain (LLVM IR, before clspv's passes; a program
that says `volatile` goes through the front end's IR for it: driver._run_cl).

clspv crashed (SIGSEGV) on a volatile load or store of a pointer in private memory
(`int * volatile p = &x;`, which CLSmith writes in nearly every kernel) and on a volatile copy
of a private struct (`struct S { volatile int a; int b; }; s1 = s2;`). Nothing but the
work-item itself can see its private memory, so no other agent can observe the difference: the
accesses stay, without the qualifier. Volatile accesses of global and local memory are left as
they are (spirv_volatile marks local ones in the SPIR-V).
"""
from __future__ import annotations

import re

# `store volatile T v, ptr %p` / `load volatile T, ptr %p` with the address in private memory
# (address space 0: `ptr`, not `ptr addrspace(n)`), and llvm.memcpy between private objects
_STORE = re.compile(r"^(\s*store )volatile (.*, ptr %[-\w.$\"]+(?:, align \d+)?)\s*$")
_LOAD = re.compile(r"^(\s*%[-\w.$\"]+ = load )volatile ([^,]+, ptr %[-\w.$\"]+(?:, align \d+)?)\s*$")
_COPY = re.compile(r"^(\s*(?:tail )?call void @llvm\.mem(?:cpy|move|set)\.p0\.(?:p0\.)?i(?:32|64)\(.*), i1 true\)(.*)$")


def rewrite(ir: str) -> str | None:
    """The IR with its volatile accesses of private memory plain, or None where it has none."""
    if "volatile" not in ir:
        return None
    out, changed = [], False
    for line in ir.splitlines():
        m = _STORE.match(line) or _LOAD.match(line)
        if m and "addrspace(" not in m.group(2).rsplit(", ptr ", 1)[-1]:
            line, changed = m.group(1) + m.group(2), True
        else:
            c = _COPY.match(line)
            if c and "addrspace(" not in c.group(1):
                line, changed = f"{c.group(1)}, i1 false){c.group(2)}", True
        out.append(line)
    return "\n".join(out) + "\n" if changed else None
