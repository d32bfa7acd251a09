"""The float and geometric prelude parts (vkcl/compiler/prelude/fp32*.py, geometric.py): which
text a program gets, and that every replaced name compiles for float, half and double in every
OpenCL C version without a warning, also behind a double part that defines the same names (as
prelude/fp64*.py do). Results are checked by tests/icd/test_math_fp32.py.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from vkcl import compiler
from vkcl.compiler import prelude
from vkcl.compiler.prelude import fp32, geometric

CALLS = {
    "remquo": "remquo({v}, {v}, &{q})", "remainder": "remainder({v}, {v})", "tgamma": "tgamma({v})",
    "lgamma": "lgamma({v})", "lgamma_r": "lgamma_r({v}, &{q})", "rootn": "rootn({v}, {n})", "rsqrt": "rsqrt({v})",
    "fdim": "fdim({v}, {v})", "maxmag": "maxmag({v}, {v})", "minmag": "minmag({v}, {v})", "fract": "fract({v}, &{p})",
    "erf": "erf({v})",
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
    text = _text(b"kernel void k(global float *f) { f[0] = pow(f[1], f[2]) + exp10(f[0]); }")
    assert "__vkcl_f32" not in text and "__vkcl_geo" not in text  # (the double parts name them too)


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


def test_behind_the_double_parts_of_the_same_names():
    """The double parts (fp64*.py) come first and take the names over (`#define name
    __vkcl_name`, double members of their own): the float parts' double members call theirs,
    no macro is redefined, and every name builds for double and float together."""
    src = ("kernel void k(global double *d, global float *f) { int q; double p; float fp;\n" +
           "".join(f"  d[0] += {c.format(v='d[1]', q='q', p='p', n='3')};\n" for c in CALLS.values()) +
           "".join(f"  f[0] += {c.format(v='f[1]', q='q', p='fp', n='3')};\n" for c in CALLS.values()) + "}\n")
    text = _text(src.encode())
    assert "__vkcl_fp64_remquo" in text and "__vkcl_f32_" in text
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


@pytest.mark.parametrize("ctype", ["float", "double"])
def test_geometric_zero_tests_are_no_float_comparisons(ctype, tmp_path):
    """length and normalize tell zeros by integer tests of several components' bits, never by a
    float comparison with 0: the H200 flushes denormals in comparisons while its arithmetic keeps
    them, so normalize((1.2f, 3.6e-41f)) returned the denormal unscaled (CTS geom_normalize, 4503
    ulp). LLVM folds `(bits & 0x7FFFFFFF) == 0` of one value back into `x == 0.0`, which is why
    the code avoids that form too. (On lavapipe, which compares denormals as they are, the results
    are in tests/icd/test_math_fp32.py.)"""
    src = (f"kernel void k(global {ctype}2 *a, global {ctype}3 *b, global {ctype} *o) {{\n"
           f"  a[1] = normalize(a[0]); b[1] = normalize(b[0]); o[0] = length(a[0]) + length(b[0]); }}\n")
    result = compiler.compile_source(src, "", compiler.DeviceCaps())
    assert result.ok, result.log[:3000]
    path = tmp_path / "k.spv"
    path.write_bytes(result.spirv)
    dis = subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout
    zeros = {line.split()[0] for line in dis.splitlines()
             if re.match(rf"\s*%\S+ = OpConstant %{ctype} 0$", line) or re.match(rf"\s*%{ctype}_0 = OpConstantNull", line)}
    zeros |= {f"%{ctype}_0"}
    compares = [line.strip() for line in dis.splitlines()
                if re.search(r"Op(FOrd|FUnord)(Equal|NotEqual)\b", line) and any(z in line.split()[4:] for z in zeros)]
    assert not compares, compares
