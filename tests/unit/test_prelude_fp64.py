"""The double-precision prelude parts (vkcl/compiler/prelude/fp64*.py): which sources get them,
and that they compile in every OpenCL C version, with -Werror, and in objects linked together.
(Their results: tests/icd/test_math_fp64.py.)"""
from __future__ import annotations

import pytest

from vkcl import compiler
from vkcl.compiler import prelude
from vkcl.compiler.prelude import fp64

CAPS = compiler.DeviceCaps()
NAMES = [n for part in fp64.PARTS for n in part.NAMES]


def _names_in(source: bytes) -> set[str]:
    """The fp64 builtins whose parts come in front of `source`."""
    texts = set(prelude.parts_for(source))
    return {part.NAMES[0] for part in fp64.PARTS if part.TEXT in texts}


def test_a_part_comes_only_with_its_builtin():
    assert _names_in(b"kernel void k(global double *x) { x[0] = pow(x[0], 2.0); }") == {"pow"}
    # a name inside a longer word, another builtin sharing a prefix, or a member of a vector
    assert _names_in(b"kernel void k(global double *x) { x[0] = powr(x[0], 2.0) + exp10(x[1]); }") == \
        {"powr", "exp10"}
    assert _names_in(b"kernel void k(global double *x) { double power = x[0], exp_ = 1; x[0] = power; }") == set()
    assert _names_in(b"kernel void k(global int *x) { x[0] = x[1] + 1; }") == set()
    assert _names_in(b"kernel void k(global double *x) { int e; x[0] = frexp(x[0], &e) + fma(x[1], x[2], 1.0); }") \
        == {"frexp", "fma"}
    # a source that includes a header gets every part (the header may call them)
    assert _names_in(b'#include "a.h"\nkernel void k() {}') == set(NAMES)


def test_each_builtin_is_one_part():
    assert len(NAMES) == len(set(NAMES)) == len(fp64.PARTS)
    for name in ("copysign", "signbit", "round", "ilogb", "logb", "frexp", "modf", "fma", "pow", "pown",
                 "powr", "rootn", "cbrt", "erf", "erfc", "exp10", "hypot", "fmod", "remainder", "remquo",
                 "nextafter", "fdim", "maxmag", "minmag", "ldexp", "lgamma", "lgamma_r", "tgamma", "exp", "log"):
        assert name in NAMES, name
    # fabs(double) is fabs.py's part (one definition of __vkcl_fabs)
    assert "fabs" not in NAMES and any("fabs" in part.NAMES for part in prelude.PARTS)


# Every builtin of the parts for double, a double vector and every address space of a pointer;
# float beside them, which stays clspv's.
_CALLS = """
  double d = x[0], e = x[1];
  double3 v = vload3(0, x + 2);
  int n = (int)x[5], i;
  int3 ni;
  local int li[1];
  local double ld[1];
  double s = 0.0;
  double3 sv = (double3)(0.0);
  float f = (float)d;
"""


def _program(version: str) -> str:
    unary = [n for n in ("fabs", "sign", "round", "logb", "cbrt", "exp", "exp10", "expm1", "log", "log2", "log10",
                         "log1p", "erf", "erfc", "tgamma", "lgamma")]
    binary = ["copysign", "nextafter", "fdim", "maxmag", "minmag", "fmod", "remainder", "pow", "powr", "hypot"]
    body = [f"  s += {n}(d); sv += {n}(v); f += {n}(f);" for n in unary]
    body += [f"  s += {n}(d, e); sv += {n}(v, v); f += {n}(f, f);" for n in binary]
    body += [
        "  s += ilogb(d) + signbit(d) + signbit(v).x + ilogb(v).y + ilogb(f);",
        "  s += frexp(d, &i) + frexp(v, &ni).x + frexp(d, li) + frexp(f, &i);",
        "  s += modf(d, &e) + modf(d, ld) + fract(v, &sv).y + fract(d, ld);",
        "  s += remquo(d, e, &i) + remquo(d, e, li) + remquo(v, v, &ni).z + lgamma_r(d, &i) + lgamma_r(v, &ni).x;",
        "  s += ldexp(d, n) + ldexp(v, n).x + ldexp(v, ni).y + pown(d, n) + rootn(v, ni).x + fma(d, e, s);",
        "  s += fma(v, v, v).x + fma(f, f, f);",
    ]
    pragma = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if version == "CL1.1" else ""
    return (pragma + "kernel void k(global double *x) {" + _CALLS + "\n".join(body) +
            "\n  x[0] = s + sv.x + f;\n}\n")


@pytest.mark.parametrize("version", ["CL1.1", "CL1.2", "CL2.0", "CL3.0"])
def test_every_builtin_compiles_in_each_language_version(version):
    result = compiler.compile_source(_program(version), f"-cl-std={version} -Werror", CAPS)
    assert result.ok, result.log[-4000:]


def test_objects_that_both_use_a_part_link():
    """Two objects each with pow's and frexp's overloads: nothing of them is an external symbol
    (OpenCL C 1.2 on), so the link finds no duplicates."""
    a = compiler.compile_object("double twice(double x) { int e; return pow(x, 2.0) + frexp(x, &e); }", "", CAPS)
    b = compiler.compile_object("double twice(double x);\n"
                                "kernel void k(global double *x) { int e; x[0] = twice(pow(x[1], 3.0)) + frexp(x[2], &e); }",
                                "", CAPS)
    assert a.ok and b.ok, a.log + b.log
    linked = compiler.link([a, b], "", CAPS)
    assert linked.ok, linked.log[-4000:]


def test_fma_is_the_native_instruction_where_the_device_fuses_it(tmp_path):
    """With fma among the device's native builtins (NVIDIA), fma(double) is one GLSL Fma; on other
    devices it is the prelude's integer arithmetic (many instructions)."""
    import subprocess
    src = "kernel void k(global double *x) { x[0] = fma(x[1], x[2], x[3]); }"
    sizes, dis = {}, {}
    for native in ((), ("fma",)):
        result = compiler.compile_source(src, "", compiler.DeviceCaps(native_builtins=native))
        assert result.ok, result.log
        (tmp_path / "k.spv").write_bytes(result.spirv)
        dis[native] = subprocess.run(["spirv-dis", str(tmp_path / "k.spv")], capture_output=True, text=True,
                                     check=True).stdout
        sizes[native] = len(result.spirv)
    assert dis[("fma",)].count(" Fma ") == 1 and "FindUMsb" in dis[()] and "FindUMsb" not in dis[("fma",)]
    assert sizes[("fma",)] * 3 < sizes[()], sizes
