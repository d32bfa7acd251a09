"""The float and geometric prelude parts (vkcl/compiler/prelude/fp32*.py, geometric.py): which
text a program gets, and that every replaced name compiles for float, half and double in every
OpenCL C version without a warning, also behind a double part that defines the same names (as
prelude/fp64*.py do). Results are checked by tests/icd/test_math_fp32.py.
"""
from __future__ import annotations

import re

import pytest

from vkcl import compiler
from vkcl.compiler import prelude
from vkcl.compiler.prelude import fp32, geometric, trig_common
from vkcl.compiler.prelude.common import WIDTHS, guarded
from vkcl.compiler.prelude.fp32_common import Part

CALLS = {
    "remquo": "remquo({v}, {v}, &{q})", "remainder": "remainder({v}, {v})", "tgamma": "tgamma({v})",
    "lgamma": "lgamma({v})", "lgamma_r": "lgamma_r({v}, &{q})", "rootn": "rootn({v}, {n})", "rsqrt": "rsqrt({v})",
    "fdim": "fdim({v}, {v})", "maxmag": "maxmag({v}, {v})", "minmag": "minmag({v}, {v})", "fract": "fract({v}, &{p})",
}


def _text(source: bytes) -> str:
    return "".join(prelude.parts_for(source))


def test_a_program_gets_the_parts_it_names():
    text = _text(b"kernel void k(global float *f) { f[0] = tgamma(f[1]); }")
    assert "#define tgamma(a0) __vkcl_f32_tgamma(a0)\n" in text and "__vkcl_f32_gamma_dd" in text
    assert "__vkcl_trig_2mul" in text  # trig_common's exact arithmetic, once
    assert text.count("__vkcl_trig_2mul(float a, float b)") == 1
    assert "lgamma" not in text and "__vkcl_f32_rem" not in text and "__vkcl_geo" not in text
    text = _text(b"kernel void k(global float4 *f) { f[0] = cross(f[1], f[2]); }")
    assert "#define cross(p, q) __vkcl_cross(p, q)\n" in text and "__vkcl_trig_2mul" not in text
    text = _text(b"kernel void k(global float4 *f) { f[0].x = length(f[1]); }")
    assert "__vkcl_geo_length" in text and "__vkcl_trig_sqrt" in text and "#define normalize" not in text
    assert _text(b"kernel void k(global float *f) { f[0] = pow(f[1], f[2]) + exp10(f[0]); }") == ""


def test_the_parts_define_the_names_they_list():
    names = [n for part in (*fp32.PARTS, *geometric.PARTS) for n in part.NAMES]
    defined = {line.split()[1].split("(")[0] for part in (*fp32.PARTS, *geometric.PARTS)
               for line in part.TEXT.splitlines() if line.startswith("#define ")}
    assert defined == set(CALLS) | {"length", "distance", "normalize", "cross"}
    assert set(defined) <= set(names)


def _program(ctypes=("float", "half", "double")) -> str:
    lines = ["#pragma OPENCL EXTENSION cl_khr_fp16 : enable",
             "kernel void k(global float *o, global half *h, global double *d) {"]
    for t in ctypes:
        for w in ("", "3", "16"):
            v = f"{t}{w}"
            lines.append(f"  {{ {v} v = ({v})(1); int{w} q; {v} p; int{w} n = (int{w})(3); {v} r = ({v})(0);")
            for call in CALLS.values():
                lines.append(f"    r += {call.format(v='v', q='q', p='p', n='n')};")
            if w != "16":
                lines.append("    r += length(v) + distance(v, v) + normalize(v)" + (" + cross(v, v)" if w == "3" else "") + ";")
            lines.append(f"    o[0] += (float)r{'.s0' if w else ''} + (float)q{'.s0' if w else ''} + (float)p{'.s0' if w else ''}; }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("std", ["CL1.1", "CL1.2", "CL2.0", "CL3.0"])
def test_every_name_compiles_without_warnings(std):
    result = compiler.compile_source(_program(), f"-cl-std={std} -Werror", compiler.DeviceCaps())
    assert result.ok, result.log[:3000]
    assert not result.log.strip(), result.log[:3000]


def test_behind_a_double_part_of_the_same_names(monkeypatch):
    """A part in front that takes the names over (`#define name __vkcl_name`, double members
    of its own) composes: the float parts' double members call it, no macro is redefined."""
    sigs = {"remquo": "T a, T b, S I *q", "remainder": "T a, T b", "tgamma": "T a", "lgamma": "T a",
            "lgamma_r": "T a, S I *q", "rootn": "T a, I n", "rsqrt": "T a", "fdim": "T a, T b",
            "maxmag": "T a, T b", "minmag": "T a, T b", "fract": "T a, S T *p"}
    defs = {"double": "", "float": "", "half": ""}
    for name, sig in sigs.items():
        args = ", ".join(p.split()[-1].lstrip("*") for p in sig.split(", "))
        for t in defs:
            for w in WIDTHS:
                for space in ("__global", "__local", "__private") if " S " in sig else ("",):
                    params = sig.replace(" S ", f" {space} ").replace("T", f"{t}{w}").replace("I", f"int{w}")
                    body = f"({t}{w})(42.0)" if t == "double" else f"{name}({args})"
                    defs[t] += f"{trig_common.HELPER} {t}{w} __vkcl_{name}({params}) {{ return {body}; }}\n"
    fake = Part(tuple(CALLS), guarded("double", defs["double"]) + defs["float"] + guarded("half", defs["half"])
                + "".join(f"#define {name} __vkcl_{name}\n" for name in sigs))
    words = list(prelude._WORDS)
    first = next(i for i, (_, p) in enumerate(words) if p in fp32.PARTS)
    words.insert(first, (re.compile(rb"\b(?:" + "|".join(CALLS).encode() + rb")\b"), fake))
    monkeypatch.setattr(prelude, "_WORDS", words)
    src = ("kernel void k(global double *d, global float *f) { int q; double p; float fp;\n" +
           "".join(f"  d[0] += {c.format(v='d[1]', q='q', p='p', n='3')};\n" for c in CALLS.values()) +
           "".join(f"  f[0] += {c.format(v='f[1]', q='q', p='fp', n='3')};\n" for c in CALLS.values()) + "}\n")
    result = compiler.compile_source(src, "-cl-std=CL1.2 -Werror", compiler.DeviceCaps())
    assert result.ok, result.log[:3000]
    assert not result.log.strip(), result.log[:3000]


def test_variables_and_arguments_of_those_names_stay():
    """The names are function-like macros: a kernel argument or variable called length keeps
    its name (clGetKernelArgInfo reports it)."""
    src = ("kernel void k(global float4 *o, int length, float distance) {\n"
           "  float cross = (float)length, fract = distance, tgamma = 2.0f;\n"
           "  o[0] = normalize(o[1]) * (cross + fract + tgamma) + cross(o[2], o[3]);\n"
           "  o[1].x = length(o[0]) + distance(o[1], o[2]) + tgamma(fract);\n}\n")
    result = compiler.compile_source(src, "-cl-kernel-arg-info -Werror", compiler.DeviceCaps())
    assert result.ok, result.log[:3000]
    args = result.reflection.kernels["k"].args
    assert [a.name for a in args] == ["o", "length", "distance"]
