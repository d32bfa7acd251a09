"""The conversions prelude part (vkcl/compiler/prelude/conversions.py): a program gets the text of
only the replaced names it uses, and the whole text (what a program that #includes anything
gets) compiles in every OpenCL C version. Results are checked by tests/icd/test_conversions.py."""
from __future__ import annotations

import pytest

from vkcl import compiler
from vkcl.compiler import prelude
from vkcl.compiler.prelude import conversions


def _conversion_text(source: bytes) -> str:
    return "".join(t for t in prelude.parts_for(source) if "__vkcl_convert_" in t or "__vkcl_vstore" in t)


def test_a_program_gets_only_the_replaced_names_it_uses():
    text = _conversion_text(b"kernel void k(global float4 *f, global uint4 *u) { f[0] = convert_float4_rtz(u[0]); }")
    assert "#define convert_float4_rtz __vkcl_convert_float4_rtz\n" in text
    assert text.count("#define ") == 1 and "__vkcl_cv_float_uint_rtz" in text
    assert "__vkcl_cv_half" not in text  # helpers of other names stay out


def test_names_clspv_gets_right_add_nothing():
    assert _conversion_text(b"kernel void k(global int *i, global float *f) { i[0] = convert_int(f[0]); "
                            b"f[1] = convert_float(i[1]); vstore_halfx(1); }") == ""


def test_half_stores_and_every_width():
    text = _conversion_text(b"vstorea_half3_rtn(v, 0, p); convert_double16(x); convert_long_sat_rte(y);")
    assert {line.split()[1] for line in text.splitlines() if line.startswith("#define")} == \
        {"vstorea_half3_rtn", "convert_double16", "convert_long_sat_rte"}
    assert len(conversions.NAMES) == len(set(conversions.NAMES)) > 200


def test_an_include_gets_everything():
    assert conversions.TEXT in prelude.parts_for(b'#include "x.h"\nkernel void k() {}')


@pytest.mark.parametrize("std", ["CL1.1", "CL1.2", "CL2.0", "CL3.0"])
def test_the_whole_text_compiles_without_warnings(std):
    src = '#include "empty.h"\nkernel void k(global float *f, global uint *u) { f[0] = convert_float_rtz(u[0]); }'
    result = compiler.compile_source(src, f"-cl-std={std} -Werror", compiler.DeviceCaps(), headers={"empty.h": ""})
    assert result.ok, result.log[:3000]
    assert not result.log.strip(), result.log[:3000]
