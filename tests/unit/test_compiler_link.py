"""Separate compilation (clCompileProgram with headers, clLinkProgram, libraries) and IL
programs (cl_khr_il_program via clang-15 + llvm-spirv-15)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vkcl import compiler

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
CAPS = compiler.DeviceCaps()
HEADER = "#define SCALE 3\nint helper(int x);\n"
MAIN = ('#include "inc/helper.h"\n'
        "kernel void k(global int *p) { size_t i = get_global_id(0); p[i] = helper(p[i]) * SCALE; }\n")
HELPER = '#include "inc/helper.h"\nint helper(int x) { return x + SCALE; }\n'


@pytest.fixture(scope="module")
def objects():
    headers = {"inc/helper.h": HEADER}
    main = compiler.compile_object(MAIN, "-cl-std=CL1.2", CAPS, headers=headers)
    helper = compiler.compile_object(HELPER, "", CAPS, headers=headers)
    return main, helper


def test_compile_object_with_header(objects):
    for obj in objects:
        assert obj.ok, obj.log
        assert obj.binary_type == "object" and obj.spirv is None and obj.reflection is None
        assert obj.bitcode[:4] == b"BC\xc0\xde"


def test_missing_header_is_a_failed_compile():
    result = compiler.compile_object(MAIN, "", CAPS)
    assert not result.ok and "inc/helper.h" in result.log and "not found" in result.log


def test_bad_header_names_rejected():
    for name in ("/etc/passwd", "../up.h", ""):
        with pytest.raises(ValueError):
            compiler.compile_object(MAIN, "", CAPS, headers={name: "x"})


def test_link_objects_to_executable(objects, tmp_path):
    result = compiler.link([objects[0].bitcode, objects[1].bitcode], "", CAPS)
    assert result.ok, result.log
    assert result.binary_type == "executable" and result.bitcode is None
    k = result.reflection.kernels["k"]
    assert [(a.name, a.kind) for a in k.args] == [("p", "pointer_pushconstant")]
    if shutil.which("spirv-val"):
        (tmp_path / "l.spv").write_bytes(result.spirv)
        check = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "l.spv")],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr


def test_link_through_a_library(objects):
    library = compiler.link([objects[1]], "-create-library -enable-link-options", CAPS)
    assert library.ok and library.binary_type == "library" and library.bitcode[:4] == b"BC\xc0\xde"
    packed = compiler.unpack(compiler.pack(library.to_binary()))
    executable = compiler.link([objects[0], packed], "-cl-fast-relaxed-math", CAPS)
    assert executable.ok, executable.log
    assert list(executable.reflection.kernels) == ["k"]


def test_link_needs_every_function():
    """An undefined function makes clspv crash at link: a failed link, with a hint."""
    result = compiler.link([compiler.compile_object(MAIN, "", CAPS, headers={"inc/helper.h": HEADER})], "", CAPS)
    assert not result.ok and result.status == "crashed"
    assert "must be defined" in result.log


def test_link_uses_the_objects_language_version():
    src = "kernel void k(global int *p) { p[get_global_id(0)] = (int)get_enqueued_local_size(0); }\n"
    obj = compiler.compile_object(src, "-cl-std=CL3.0", CAPS)
    assert obj.ok and obj.cl_std == "CL3.0"
    for item in (obj, obj.bitcode):  # bare bitcode: linked as OpenCL C 3.0
        result = compiler.link([item], "", CAPS)
        assert result.ok, result.log
        assert "enqueued_local_size" in result.reflection.push_constants


def test_link_rejects_non_objects(objects):
    assert not compiler.link([], "", CAPS).ok
    assert "not a compiled object" in compiler.link([b"\x03\x02\x23\x07" + b"\0" * 16], "", CAPS).log
    with pytest.raises(compiler.InvalidOptionsError):
        compiler.link([objects[0]], "-DFOO", CAPS)
    with pytest.raises(ValueError):
        compiler.link([objects[0]], compiler.parse_options("", "build"), CAPS)



@pytest.fixture(scope="module")
def il(tmp_path_factory):
    if not (shutil.which("clang-15") and shutil.which("llvm-spirv-15")):
        pytest.skip("clang-15 and llvm-spirv-15 are needed to make OpenCL SPIR-V")
    tmp = tmp_path_factory.mktemp("il")
    subprocess.run(["clang-15", "-x", "cl", "-cl-std=CL1.2", "-target", "spir64-unknown-unknown", "-emit-llvm",
                    "-c", "-O2", str(KERNELS / "vector_add.cl"), "-o", str(tmp / "k.bc")], check=True)
    subprocess.run(["llvm-spirv-15", str(tmp / "k.bc"), "-o", str(tmp / "k.spv")], check=True)
    return (tmp / "k.spv").read_bytes()


def test_il_program(il, tmp_path):
    info = compiler.check_il(il)
    assert info.addressing_model == "Physical64" and info.address_bits == 64
    assert info.source_version == 102000 and info.cl_std == "CL1.2"
    assert compiler.il_supported()
    result = compiler.compile_il(il, "", CAPS)
    assert result.ok, result.log
    k = result.reflection.kernels["vector_add"]
    assert [a.kind for a in k.args] == ["pointer_pushconstant"] * 3 + ["pod_pushconstant"]
    assert result.cl_std == "CL1.2" and result.reflection.push_constants == {}  # uniform work-groups
    if shutil.which("spirv-val"):
        (tmp_path / "il.spv").write_bytes(result.spirv)
        check = subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(tmp_path / "il.spv")],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    assert compiler.compile_il(il, "", CAPS).from_cache


def test_il_address_width_must_match_the_device(il):
    result = compiler.compile_il(il, "", compiler.DeviceCaps(physical_addressing=False, address_bits=32))
    assert not result.ok and "Physical64" in result.log


def test_bad_il_rejected(il):
    vulkan_spirv = compiler.compile_source("kernel void k(global int *p) { p[0] = 1; }", "", CAPS).spirv
    for bad in (b"", b"garbage!" * 4, il[:-2], vulkan_spirv, b"\0" * 20 + il[20:]):
        with pytest.raises(compiler.InvalidILError):
            compiler.compile_il(bad, "", CAPS)
    with pytest.raises(compiler.InvalidILError, match="Shader"):
        compiler.check_il(vulkan_spirv)


def test_il_translation_failure_is_a_failed_build(il, monkeypatch, tmp_path):
    fake = tmp_path / "llvm-spirv"
    fake.write_text("#!/bin/sh\necho 'cannot translate' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("VKCL_LLVM_SPIRV", str(fake))
    monkeypatch.setenv("VKCL_CACHE", "0")
    result = compiler.compile_il(il, "", CAPS)
    assert not result.ok and "cannot translate" in result.log
