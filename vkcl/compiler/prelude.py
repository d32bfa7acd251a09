"""OpenCL C put in front of every program's source: replacements for clspv builtins that
compile wrongly.

async_work_group_copy and async_work_group_strided_copy on double elements: clspv lowers them
into a loop that copies one 32-bit float per element, so every double comes back with its low
word duplicated (seen: the CTS's async_copy sub-tests, double types only). The builtins are renamed to an
overload set whose double members are plain work-group loops; every other member forwards to
clspv's builtin. The loops end with a barrier: the copy is a work-group function, so every
work-item makes the call, and wait_group_events then finds the data in place.

nan on ulong codes (double): clspv's builtin sets no quiet bit, so nan(0UL) is infinity (seen:
the CTS's printf double_limits). OpenCL C: nan returns a quiet NaN, the code in its significand.
Calls go to an overload set whose double members set the quiet bit; the float and half members
forward to clspv's builtin, which is right.

Each part is put in front only of sources that name its builtins.
"""
from __future__ import annotations

import hashlib

SCALARS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half")
WIDTHS = ("", "2", "3", "4", "8", "16")
GUARD = {"double": "defined(cl_khr_fp64) || defined(__opencl_c_fp64)", "half": "defined(cl_khr_fp16)"}


def _overloads(scalar: str) -> str:
    out = []
    for w in WIDTHS:
        t = scalar + w
        for dst, src, strided_src in (("__local", "__global", 1), ("__global", "__local", 0)):
            head = "static __attribute__((overloadable)) event_t"
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
    body = "".join(out)
    guard = GUARD.get(scalar)
    if guard:
        ext = "cl_khr_fp64" if scalar == "double" else "cl_khr_fp16"
        return f"#if {guard}\n#pragma OPENCL EXTENSION {ext} : enable\n{body}#endif\n"
    return body


def _nan_overloads() -> str:
    head = "static __attribute__((overloadable))"
    out = []
    for w in WIDTHS:
        out.append(f"{head} float{w} __vkcl_nan(uint{w} c) {{ return nan(c); }}\n")
    half = "".join(f"{head} half{w} __vkcl_nan(ushort{w} c) {{ return nan(c); }}\n" for w in WIDTHS)
    double = "".join(f"{head} double{w} __vkcl_nan(ulong{w} c) {{ return as_double{w}(c | 0x7FF8000000000000UL); }}\n"
                     for w in WIDTHS)
    return ("".join(out) + f"#if {GUARD['half']}\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n{half}#endif\n"
            f"#if {GUARD['double']}\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{double}#endif\n")


ASYNC_COPY_PRELUDE = ("".join(_overloads(s) for s in SCALARS) +
                      "#define async_work_group_copy __vkcl_awgc\n"
                      "#define async_work_group_strided_copy __vkcl_awgsc\n")
NAN_PRELUDE = _nan_overloads() + "#define nan(code) __vkcl_nan(code)\n"
PARTS = ((b"async_work_group", ASYNC_COPY_PRELUDE), (b"nan", NAN_PRELUDE))
# Part of the program cache's key: a program cached before the prelude changed is compiled again.
DIGEST = hashlib.sha256("".join(text for _, text in PARTS).encode()).hexdigest()[:16]


def with_prelude(source: bytes) -> bytes:
    """The source as clspv compiles it: the prelude parts it needs, then the program from its
    line 1."""
    parts = [text for trigger, text in PARTS if trigger in source]
    if not parts:
        return source
    return ("".join(parts) + "#line 1\n").encode() + source
