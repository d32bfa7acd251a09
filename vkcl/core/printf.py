"""printf: decoding clspv's printf buffer after a kernel completes.

Word 0 counts the words written after it; each record is a printf id (a PrintfInfo: format
string and argument sizes) followed by its arguments, each padded to whole words. A %s
argument is the id of another PrintfInfo whose format is the string itself.
"""
from __future__ import annotations

import os
import re
import struct

from vkcl import c_format

_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d+|\*))?"
                         r"(?:v(?P<vec>\d+))?(?P<len>hh|hl|h|ll|l)?(?P<conv>[diouxXeEfFgGaAcsp%])")


# Bits of an integer by length modifier (OpenCL C's printf): a scalar argument may be wider
# (char and short are promoted to int), a vector's elements are exactly this wide.
_INT_BITS = {"hh": 8, "h": 16, "hl": 32, "": 32, "l": 64, "ll": 64}
_FLOAT_BYTES = {"h": 2, "hl": 4, "l": 8}  # a vector's elements; a scalar is its argument's size


def _int(raw: bytes, signed: bool) -> int:
    return int.from_bytes(raw, "little", signed=signed)


def _float(raw: bytes) -> float:
    return {2: lambda b: struct.unpack("<e", b)[0], 4: lambda b: struct.unpack("<f", b)[0],
            8: lambda b: struct.unpack("<d", b)[0]}[len(raw)](raw)


def _one(spec: str, conv: str, length: str, raw: bytes) -> str:
    """One value of one conversion: reduced to its OpenCL type, formatted by C."""
    if conv == "p":
        return "0x%x" % _int(raw, False)
    if conv in "diouxXc":
        bits = _INT_BITS.get(length, 32)
        value = _int(raw, False) & ((1 << bits) - 1)
        if conv in "di" and value >> (bits - 1):
            value -= 1 << bits
        return c_format.integer(spec, conv, value & 0xFF if conv == "c" else value)
    return c_format.floating(spec, conv, _float(raw))


def _element_size(conv: str, length: str, raw: bytes, n: int) -> int:
    size = _FLOAT_BYTES.get(length) if conv in "eEfFgGaA" else _INT_BITS.get(length, 0) // 8
    return size if size and size * n <= len(raw) else len(raw) // n


def format_record(fmt: str, args: list[bytes], strings: dict[int, str]) -> str:
    out, pos, i = [], 0, 0
    for m in _CONVERSION.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        conv = m.group("conv")
        if conv == "%":
            out.append("%")
            continue
        if i >= len(args):
            break
        raw = args[i]
        i += 1
        spec = "%" + (m.group("flags") or "") + (m.group("width") or "") + \
            (("." + m.group("prec")) if m.group("prec") else "")
        length = m.group("len") or ""
        if conv == "s":
            out.append(c_format.string(spec, strings.get(_int(raw[:4], False), "")))
        elif m.group("vec"):
            n = int(m.group("vec"))
            size = _element_size(conv, length, raw, n)
            out.append(",".join(_one(spec, conv, length, raw[k * size:(k + 1) * size]) for k in range(n)))
        else:
            out.append(_one(spec, conv, length, raw))
    out.append(fmt[pos:])
    return "".join(out)


def decode(buf, infos: dict) -> str:
    """The text a printf buffer holds, records in the order the device wrote them."""
    data = bytes(buf)
    words_used = struct.unpack_from("<I", data, 0)[0]
    end = min(4 + 4 * words_used, len(data))
    strings = {i.id: i.format for i in infos.values()}
    pos, text = 4, []
    while pos + 4 <= end:
        pid = struct.unpack_from("<I", data, pos)[0]
        pos += 4
        info = infos.get(pid)
        if info is None:
            break
        args = []
        for size in info.arg_sizes:
            span = (size + 3) & ~3
            args.append(data[pos:pos + size])
            pos += span
        if pos > end:
            break
        text.append(format_record(info.format, args, strings))
    return "".join(text)


def emit(buf, infos: dict) -> None:
    text = decode(buf, infos)
    if text:
        os.write(1, text.encode())  # the application's stdout, unbuffered: ordered with its own output
