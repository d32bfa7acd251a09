"""atomic_flag (OpenCL C 2.0+): clspv's builtins give a flag in global memory work-group scope
and work-group memory semantics (seen: OpAtomicExchange Workgroup, WorkgroupMemory|Acquire), so
work-items of different work-groups entered one critical section (CTS c11_atomics atomic_flag:
10 of 1024 wrong), and clspv aborts on a flag in local memory ("Call parameter type does not
match function signature"). vkcl's flag functions are atomic exchanges and stores of the flag
as an atomic_int, with the order and scope the call gives (memory_scope_device and
memory_order_seq_cst where it gives none, as the spec says, which clspv makes acquire-release).
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import OVERLOAD

_SPACES = ("global", "local")


# OpenCL C 3.0 declares the forms without a scope (device scope) and without an order (seq_cst)
# only with those features; OpenCL C 2.0 has them all.
_DEVICE_SCOPE = "__OPENCL_C_VERSION__ == 200 || defined(__opencl_c_atomic_scope_device)"
_SEQ_CST = "__OPENCL_C_VERSION__ == 200 || (defined(__opencl_c_atomic_order_seq_cst) && defined(__opencl_c_atomic_scope_device))"


# The default order is seq_cst, which clspv gives acquire-release semantics (its own builtins do
# the same, with a warning that would fail -Werror builds of programs that never wrote it); a
# clear is a store: release.
_DEFAULT_ORDER = "memory_order_acq_rel"


def _flag(space: str) -> str:
    p = f"volatile {space} atomic_flag *f"
    cast = f"(volatile {space} atomic_int *)f"
    tas, clear = "__vkcl_atomic_flag_test_and_set", "__vkcl_atomic_flag_clear"
    return (f"{OVERLOAD} bool {tas}_explicit({p}, memory_order o, memory_scope s)"
            f" {{ return atomic_exchange_explicit({cast}, 1, o, s) != 0; }}\n"
            f"{OVERLOAD} void {clear}_explicit({p}, memory_order o, memory_scope s)"
            f" {{ atomic_store_explicit({cast}, 0, o, s); }}\n"
            f"#if {_DEVICE_SCOPE}\n"
            f"{OVERLOAD} bool {tas}_explicit({p}, memory_order o) {{ return {tas}_explicit(f, o, memory_scope_device); }}\n"
            f"{OVERLOAD} void {clear}_explicit({p}, memory_order o) {{ {clear}_explicit(f, o, memory_scope_device); }}\n"
            "#endif\n"
            f"#if {_SEQ_CST}\n"
            f"{OVERLOAD} bool {tas}({p}) {{ return {tas}_explicit(f, {_DEFAULT_ORDER}, memory_scope_device); }}\n"
            f"{OVERLOAD} void {clear}({p}) {{ {clear}_explicit(f, memory_order_release, memory_scope_device); }}\n"
            "#endif\n")


NAMES = ("atomic_flag_test_and_set", "atomic_flag_test_and_set_explicit", "atomic_flag_clear",
         "atomic_flag_clear_explicit")
TEXT = ("#if __OPENCL_C_VERSION__ >= 200\n" + "".join(_flag(s) for s in _SPACES) +
        "".join(f"#define {n} __vkcl_{n}\n" for n in NAMES) + "#endif\n")
