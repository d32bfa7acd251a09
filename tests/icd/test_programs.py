"""Programs through the ICD loader (tests/icd/c/programs.c and program_link.c, one section
per test).

build     a syntax error (CL_BUILD_PROGRAM_FAILURE, CL_BUILD_ERROR, clang's message in the
          log), a good build (status, options echoed, binary type), rebuilds, argument errors
options   unknown and misplaced options: CL_INVALID_BUILD/COMPILER/LINKER_OPTIONS, then good builds
crash     a kernel that makes clspv abort: the application lives, the log says so, builds go on
binaries  executables, compiled objects and libraries through CL_PROGRAM_BINARIES and
          clCreateProgramWithBinary (then built, linked and run); corrupt and foreign binaries
il        clCreateProgramWithIL of clang-15 + llvm-spirv-15 output: built, compiled + linked, run;
          CL_PROGRAM_IL; bad IL
include   -I DIR: headers on disk, a changed header seen by the next build
link      clCompileProgram with embedded headers, clLinkProgram of objects and libraries
async     pfn_notify builds, compiles and links: called once, on another thread, status final;
          no kernels, rebuilds or links while an asynchronous rebuild runs
threads   builds from four threads at once
info      every clGetProgramInfo / clGetProgramBuildInfo param, rebuilds with kernels
          attached, clCreateProgramWithSource / WithBuiltInKernels errors, compiler unloading
cache     (test_warm_rebuild_hits_the_cache) build timings in two processes sharing a cache
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from checks import assert_passed

IL_SOURCE = "kernel void scale(global int *out, int k) { size_t i = get_global_id(0); out[i] = (int)i * k + 11; }\n"


@pytest.mark.parametrize("section", ["build", "options", "crash", "binaries"])
def test_programs(c_program, section):
    assert_passed(c_program("programs").run(section))


@pytest.mark.parametrize("section", ["link", "async", "threads", "info"])
def test_compile_link_async_and_queries(c_program, section):
    assert_passed(c_program("program_link").run(section))


def test_il_program(c_program, tmp_path):
    if not (shutil.which("clang-15") and shutil.which("llvm-spirv-15")):
        pytest.skip("clang-15 and llvm-spirv-15 are needed to make OpenCL SPIR-V")
    src, bc, spv = tmp_path / "il.cl", tmp_path / "il.bc", tmp_path / "il.spv"
    src.write_text(IL_SOURCE)
    subprocess.run(["clang-15", "-x", "cl", "-cl-std=CL1.2", "-target", "spir64-unknown-unknown", "-emit-llvm",
                    "-c", "-O2", str(src), "-o", str(bc)], check=True, timeout=60)
    subprocess.run(["llvm-spirv-15", str(bc), "-o", str(spv)], check=True, timeout=60)
    assert_passed(c_program("programs").run("il", str(spv)))


def test_include_directory(c_program, tmp_path):
    assert_passed(c_program("programs").run("include", str(tmp_path)))


def _timings(result: subprocess.CompletedProcess) -> dict[str, float]:
    assert_passed(result)
    return {k: float(v) for k, v in re.findall(r"^(\w+_ms) ([\d.]+)$", result.stdout, re.M)}


def test_warm_rebuild_hits_the_cache(c_program, tmp_path):
    """The same build in two processes with one XDG_CACHE_HOME: the second is served from the
    on-disk cache. Each process prints first_ms (its first build, compiler worker start
    included), miss_ms (another build, not cached) and again_ms (the first one again)."""
    env = {"XDG_CACHE_HOME": str(tmp_path), "VKCL_CACHE_DIR": "", "VKCL_CACHE": "1"}
    prog = c_program("programs")
    cold = _timings(prog.run("cache", env=env))
    warm = _timings(prog.run("cache", env=env))
    print(f"\ncold process: {cold}\nwarm process: {warm}")
    assert list((tmp_path / "vkcl").glob("*/*.vkclbin")), "nothing was written to the cache"
    assert warm["first_ms"] < cold["first_ms"] / 3 or warm["first_ms"] < 20, (cold, warm)
    assert cold["again_ms"] < cold["first_ms"] / 3 or cold["again_ms"] < 20, cold
