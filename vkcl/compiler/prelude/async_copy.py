"""async_work_group_copy and async_work_group_strided_copy on double elements: clspv lowers them
into a loop that copies one 32-bit float per element, so every double comes back with its low
word duplicated (seen: the CTS's async_copy sub-tests, double types only). The builtins are
renamed to an overload set whose double members are plain work-group loops; every other member
forwards to clspv's builtin. The loops end with a barrier: the copy is a work-group function, so
every work-item makes the call, and wait_group_events then finds the data in place.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import INTERNAL, SCALARS, WIDTHS, guarded


def _overloads(scalar: str) -> str:
    out = []
    for w in WIDTHS:
        t = scalar + w
        for dst, src, strided_src in (("__local", "__global", 1), ("__global", "__local", 0)):
            head = f"{INTERNAL} event_t"
            copy = f"({dst} {t} *d, const {src} {t} *s, size_t n, event_t e)"
            scopy = f"({dst} {t} *d, const {src} {t} *s, size_t n, size_t stride, event_t e)"
            if scalar != "double":  # forward to clspv's own builtin
                out.append(f"{head} __vkcl_awgc{copy} {{ return async_work_group_copy(d, s, n, e); }}\n")
                out.append(f"{head} __vkcl_awgsc{scopy} {{ return async_work_group_strided_copy(d, s, n, stride, e); }}\n")
                continue
            loop = ("{ size_t l = get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) *"
                    " get_local_id(2)); size_t all = get_local_size(0) * get_local_size(1) * get_local_size(2);"
                    " for (size_t i = l; i < n; i += all) ASSIGN;"
                    " barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); return e; }")
            out.append(f"{head} __vkcl_awgc{copy} " + loop.replace("ASSIGN", "d[i] = s[i]") + "\n")
            strided = "d[i] = s[i * stride]" if strided_src else "d[i * stride] = s[i]"
            out.append(f"{head} __vkcl_awgsc{scopy} " + loop.replace("ASSIGN", strided) + "\n")
    return guarded(scalar, "".join(out))


NAMES = ("async_work_group_copy", "async_work_group_strided_copy")
TEXT = ("".join(_overloads(s) for s in SCALARS) +
        "#define async_work_group_copy __vkcl_awgc\n"
        "#define async_work_group_strided_copy __vkcl_awgsc\n")
