"""Helpers for the tests that run programs through the ICD loader."""
import subprocess


def assert_passed(result: subprocess.CompletedProcess) -> None:
    """A harness program prints 'FAIL ...' lines and exits non-zero on any failure."""
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in text, text[-6000:]


def run_ok(python_with_icd, script: str, timeout: int = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a pyopencl script through the ICD loader (compiler output off, no pyopencl cache,
    `env` added); it must exit 0 and print OK."""
    result = python_with_icd(script, timeout=timeout,
                             env={"PYOPENCL_COMPILER_OUTPUT": "0", "PYOPENCL_NO_CACHE": "1", **(env or {})})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "OK" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    return result


# What the transfer snippets start with: vkcl's context, through pyopencl.
CONTEXT = r"""
import ctypes
from ctypes import POINTER, byref, c_size_t, c_uint, c_uint64, c_void_p
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(p.get_devices())
"""


# The loader's entry points through ctypes: a second ICD loader in the process, on pyopencl's
# objects, so that calls reach vkcl's C entry points as an application's do.
LOADER = r"""
ocl = ctypes.CDLL("libOpenCL.so.1")
enqueue, finish = ocl.clEnqueueNDRangeKernel, ocl.clFinish
enqueue.argtypes = [c_void_p, c_void_p, c_uint, c_void_p, POINTER(c_size_t), c_void_p, c_uint, c_void_p, c_void_p]
finish.argtypes = [c_void_p]
read, write = ocl.clEnqueueReadBuffer, ocl.clEnqueueWriteBuffer
for f in (read, write):
    f.argtypes = [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p, c_uint, c_void_p, c_void_p]
"""
