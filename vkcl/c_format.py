"""One printf conversion formatted by the C library's snprintf.

OpenCL C's printf is C99's, and Python's `%` operator differs from it in many corners: a
precision with the 0 flag (`%06.5i` is "  00100" in C), `#` with octal ("0575360400", not
"0o575360400") and with a zero (`%#X` of 0 is "0"), a zero precision of zero (`%.0u` prints
nothing), hexadecimal floats with a precision, NaN and infinity. So each conversion goes to
snprintf, with the value already reduced to its OpenCL type (vkcl/core/printf.py) and passed as
long long, unsigned long long or double; glibc then answers as NVIDIA's and PoCL's printf do.
"""
from __future__ import annotations

import ctypes

_libc = ctypes.CDLL(None)
_snprintf = _libc.snprintf
_snprintf.restype = ctypes.c_int


def _format(fmt: str, value) -> str:
    spec = fmt.encode()
    n = _snprintf(None, 0, spec, value)
    if n < 0:
        raise ValueError(f"snprintf rejected {fmt!r}")
    buf = ctypes.create_string_buffer(n + 1)
    _snprintf(buf, n + 1, spec, value)
    return buf.value.decode("latin-1")


def integer(spec: str, conv: str, value: int) -> str:
    """`spec` (%, flags, width, precision) + conv in d i o u x X c, for an int in C's range."""
    if conv == "c":
        return _format(spec + "c", ctypes.c_int(value))
    if conv in "di":
        return _format(spec + "lld", ctypes.c_longlong(value))
    return _format(spec + "ll" + conv, ctypes.c_ulonglong(value))


def floating(spec: str, conv: str, value: float) -> str:
    """`spec` + conv in e E f F g G a A, the value as a double (C promotes float and half)."""
    return _format(spec + conv, ctypes.c_double(value))


def string(spec: str, value: str) -> str:
    return _format(spec + "s", ctypes.c_char_p(value.encode("latin-1", "replace")))
