"""The param_value / param_value_size / param_value_size_ret rules, implemented once.

Info tables are data: {param_name: (ctype, getter)}. `ctype` names an encoder below; the
getter takes the object (and the extra argument some queries have, like a device).
"""
from __future__ import annotations

import struct
from typing import Any, Callable

from vkcl._gen import cl
from vkcl.api import handles
from vkcl.errors import CLError


def _array(fmt: str) -> Callable[[Any], bytes]:
    return lambda values: struct.pack(f"<{len(values)}{fmt}", *values)


def _handles(values) -> bytes:
    return b"".join(struct.pack("<Q", _address(v)) for v in values)


def _address(obj) -> int:
    h = obj.handle if obj is not None else None
    return 0 if h is None else int(handles.ffi.cast("uintptr_t", h))


def _name_versions(values) -> bytes:
    # struct cl_name_version { cl_version version; char name[CL_NAME_VERSION_MAX_NAME_SIZE]; }
    return b"".join(struct.pack("<I64s", version, name.encode()) for name, version in values)


ENCODERS: dict[str, Callable[[Any], bytes]] = {
    "cl_uint": lambda v: struct.pack("<I", v),
    "cl_int": lambda v: struct.pack("<i", v),
    "cl_bool": lambda v: struct.pack("<I", 1 if v else 0),
    "cl_ulong": lambda v: struct.pack("<Q", v),
    "size_t": lambda v: struct.pack("<Q", v),
    "string": lambda v: v.encode() + b"\0",
    "bytes": bytes,
    "handle": lambda v: struct.pack("<Q", _address(v)),
    "handle[]": _handles,
    "size_t[]": _array("Q"),
    "cl_uint[]": _array("I"),
    "cl_ulong[]": _array("Q"),
    "intptr[]": _array("q"),
    "name_version[]": _name_versions,
}


def write(data: bytes, size: int, ptr, size_ret) -> None:
    """Copy `data` to the caller: too small a buffer is CL_INVALID_VALUE (spec, all queries)."""
    n = len(data)
    if ptr != handles.ffi.NULL:
        if size < n:
            raise CLError(cl.CL_INVALID_VALUE, f"param_value_size {size} < {n}")
        handles.ffi.memmove(ptr, data, n)
    if size_ret != handles.ffi.NULL:
        size_ret[0] = n


def answer(table: dict, param: int, size: int, ptr, size_ret, *args) -> None:
    """Answer one query from an info table; an unknown param is CL_INVALID_VALUE."""
    row = table.get(param)
    if row is None:
        raise CLError(cl.CL_INVALID_VALUE, f"unknown param_name {param:#x}")
    ctype, getter = row
    value = getter(*args)
    write(ENCODERS[ctype](value), size, ptr, size_ret)


def string(ptr) -> str | None:
    return None if ptr == handles.ffi.NULL else handles.ffi.string(ptr).decode(errors="replace")


def properties(ptr, width: str = "intptr_t") -> list[tuple[int, int]] | None:
    """A zero-terminated (name, value) property list, or None for NULL."""
    if ptr == handles.ffi.NULL:
        return None
    arr = handles.ffi.cast(f"{width} *", ptr)
    out, i = [], 0
    while arr[i] != 0:
        out.append((int(arr[i]), int(arr[i + 1])))
        i += 2
        if i > 2048:
            raise CLError(cl.CL_INVALID_PROPERTY, "property list not terminated")
    return out


def raw_properties(props) -> list[int]:
    """The property list as the app passed it, terminated, for *_PROPERTIES queries."""
    if props is None:
        return []
    return [x for pair in props for x in pair] + [0]
