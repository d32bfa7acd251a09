"""vkcl/core/printf.py formats each conversion as C99's printf does (through vkcl/c_format.py),
on the cases where Python's % operator differs from C (the CTS's test_printf found them)."""
import struct

import pytest

from vkcl.core.printf import format_record


def i32(v: int, n: int = 4) -> bytes:
    return (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


def f32(v: float) -> bytes:
    return struct.pack("<f", v)


def f64(v: float) -> bytes:
    return struct.pack("<d", v)


def f16(v: float) -> bytes:
    return struct.pack("<e", v)


CASES = [
    ("%06.5i", [i32(100)], " 00100"),        # a precision turns the 0 flag off
    ("%#o", [i32(100000000)], "0575360400"),  # C's alternate octal form
    ("%.0u", [i32(0)], ""),                    # zero precision, zero value: no digits
    ("%#X", [i32(0)], "0"),                    # no 0X prefix for zero
    ("%hx", [i32(-32767)], "8001"),            # length modifiers narrow the value
    ("%hhx", [i32(-128)], "80"),
    ("%ho", [i32(-32767)], "100001"),
    ("%hho", [i32(-128)], "200"),
    ("%hd", [i32(-32767)], "-32767"),
    ("%hhd", [i32(0xFF)], "-1"),
    ("%ld", [i32(-10000000000, 8)], "-10000000000"),
    ("%lx", [i32(-1, 8)], "ffffffffffffffff"),
    ("%f", [f32(float("nan"))], "nan"),
    ("%E", [f64(float("nan"))], "NAN"),
    ("%e", [f64(float("-inf"))], "-inf"),
    ("%8.3f|%-9.1e|", [f32(3.14159), f64(-2.5)], "   3.142|-2.5e+00 |"),
    ("%4.2f", [f16(1.2345)], "1.23"),
    ("%.1a", [f32(0.25)], "0x1.0p-2"),
    ("%#v2hhx", [bytes([0xFA, 0xFB, 0, 0])], "0xfa,0xfb"),  # elements by the length modifier
    ("%.1v4hla", [f32(.25) + f32(.5) + f32(1) + f32(1.5)], "0x1.0p-2,0x1.0p-1,0x1.0p+0,0x1.8p+0"),
    ("%v2hd", [i32(-2, 2) + i32(3, 2)], "-2,3"),
    ("%v3hlu", [i32(1) + i32(2) + i32(3) + i32(0)], "1,2,3"),
    ("%5d|%-4d|%s %c %u %%", [i32(42), i32(7), i32(1), i32(ord("Z")), i32(4000000000)], "   42|7   |lit Z 4000000000 %"),
    ("%-6s|%.2s", [i32(1), i32(1)], "lit   |li"),
]


@pytest.mark.parametrize("fmt, args, want", CASES)
def test_conversions_as_c(fmt, args, want):
    assert format_record(fmt, args, {1: "lit"}) == want
