"""The conversions prelude part (vkcl/compiler/prelude/conversions.py): a program gets the text of
only the replaced names it or its headers use, and the whole text (what a program gets when a
header cannot be found) compiles in every OpenCL C version. Results are checked by tests/icd/test_conversions.py."""
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


def test_included_headers_are_searched_too(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.h").write_text('#include "sub/b.h"\n')
    (tmp_path / "sub" / "b.h").write_text("#define F(x) convert_double3(x)\n#include \"c.h\"\n")
    (tmp_path / "sub" / "c.h").write_text("#define G(x) vstore_half_rtz(x, 0, p)\n")
    src = b'#include <a.h>\nkernel void k() {}'
    text = "".join(prelude.parts_for(src, (str(tmp_path),)))
    assert "#define convert_double3 " in text and "#define vstore_half_rtz " in text
    assert conversions.TEXT not in text and "__vkcl_awgc" not in text
    memory = "".join(prelude.parts_for(b'#include "m.h"\n', (), {"m.h": "convert_float_rtp(u)"}))
    assert memory.endswith("#define convert_float_rtp __vkcl_convert_float_rtp\n")


def test_names_pasted_by_macros():
    text = _conversion_text(b"#define CVT(T, x) convert_##T(x)\nCVT(double4, v)")
    assert "#define convert_double4 " in text and "#define vstore_half " not in text
    text = _conversion_text(b"#define CAT(a, b) a##b\nCAT(convert_double, 4)(v); CAT(vstore, _half)(v, 0, p);")
    assert "#define convert_double4 " in text and "#define convert_float_rtz " not in text
    assert "#define vstorea_half3_rtn " in text


def test_a_header_not_found_gets_everything():
    assert conversions.TEXT in prelude.parts_for(b'#include "missing.h"\nkernel void k() {}')
    assert conversions.TEXT in prelude.parts_for(b'#define H "x.h"\n#include H\n')


@pytest.mark.parametrize("std", ["CL1.1", "CL1.2", "CL2.0", "CL3.0"])
def test_the_whole_text_compiles_without_warnings(std, monkeypatch):
    # What a program gets when a header it includes cannot be found (here: made so).
    monkeypatch.setattr(prelude.includes, "expand", lambda *args: None)
    src = '#include "empty.h"\nkernel void k(global float *f, global uint *u) { f[0] = convert_float_rtz(u[0]); }'
    result = compiler.compile_source(src, f"-cl-std={std} -Werror", compiler.DeviceCaps(), headers={"empty.h": ""})
    assert result.ok, result.log[:3000]
    assert not result.log.strip(), result.log[:3000]
