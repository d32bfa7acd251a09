"""Kernel arguments arrive where the kernel reads them (compiler/argument_layout.py) and by-value
structs and unions of any layout OpenCL C allows arrive as the host laid them out
(compiler/byvalue_args.py).

The matrix (argument_matrix.py): every scalar and vector type, padded, nested and packed structs,
unions such as pyopencl's complex types, 1-16 by value among global, constant and local pointers,
in programs whose other kernels use module constants, printf or program-scope constant data, or
OpenCL C 3.0 (region offsets); each kernel writes back every argument, checked byte for byte.
"""
import re
from pathlib import Path

import pytest

pytest.importorskip("pyopencl")

from argument_matrix import VARIANTS  # noqa: E402

HERE = Path(__file__).resolve().parent
RUN = f"import sys; sys.path.insert(0, {str(HERE)!r}); import argument_matrix; sys.exit(argument_matrix.main({{!r}}))"


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_argument_arrives_byte_for_byte(python_with_icd, variant):
    result = python_with_icd(RUN.format(variant))
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in result.stdout, text[-6000:]
    checked = re.search(r"checked (\d+) arguments in (\d+) kernels", result.stdout)
    assert checked and int(checked.group(1)) >= 150 and int(checked.group(2)) >= 60, text[-3000:]
    if variant in ("printf", "everything"):
        assert "printf-says 42 2.50" in result.stdout


ISSUE = r"""
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(p.get_devices())
q = cl.CommandQueue(ctx)
# The issue's program: module constants (sqrt/exp/sin/pow) beside float4 by value. clspv's
# reflection put v at 16 and m at 32; the kernel reads them at 8 and 24.
src = '''
kernel void mathk(global float *o, float x) { o[0] = sqrt(x) + exp(x) + sin(x) + pow(x, 1.5f); }
kernel void vec4k(global float4 *v, float4 m) { v[get_global_id(0)] = m * (float)(get_global_id(0) + 1); }
'''
prg = cl.Program(ctx, src).build()
v = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64 * 16)
m = np.array([1.5, -2.0, 3.25, 1e30], np.float32)
prg.vec4k(q, (64,), None, v, m)
got = np.empty((64, 4), np.float32)
cl.enqueue_copy(q, got, v)
assert np.array_equal(got, m[None, :] * np.arange(1, 65, dtype=np.float32)[:, None]), got[:2]
print("ok")
"""


def test_float4_beside_module_constants(python_with_icd):
    result = python_with_icd(ISSUE)
    assert result.returncode == 0 and "ok" in result.stdout, result.stdout + result.stderr


COMPLEX = r"""
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(p.get_devices())
q = cl.CommandQueue(ctx)
dev = ctx.devices[0]
# pyopencl's own header: its complex types are unions of two anonymous structs
src = '''
#define PYOPENCL_DEFINE_CDOUBLE
#include <pyopencl-complex.h>
kernel void axpb(global cfloat_t *o, cfloat_t a,
                 cdouble_t b) {
    int i = get_global_id(0);
    o[i] = cfloat_add(cfloat_mul(o[i], a), cfloat_new((float)b.real, (float)b.imag));
}
'''
prg = cl.Program(ctx, src).build("-cl-kernel-arg-info")
k = cl.Kernel(prg, "axpb")
x = (np.arange(16) - 1j * np.arange(16)).astype(np.complex64)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
a, b = np.complex64(2 - 0.5j), np.complex128(0.25 + 4j)
k(q, (16,), None, buf, a, b)
got = np.empty_like(x)
cl.enqueue_copy(q, got, buf)
# each product and sum rounds once in float, as numpy's complex64 does here (exact small values)
assert np.array_equal(got, x * a + np.complex64(b)), (got[:3], (x * a + np.complex64(b))[:3])
names = [k.get_arg_info(i, cl.kernel_arg_info.NAME) for i in range(3)]
types = [k.get_arg_info(i, cl.kernel_arg_info.TYPE_NAME) for i in range(3)]
assert names == ["o", "a", "b"], names
assert types == ["cfloat_t*", "cfloat_t", "cdouble_t"], types
print("ok")
"""


def test_pyopencl_complex_arguments(python_with_icd):
    result = python_with_icd(COMPLEX)
    assert result.returncode == 0 and "ok" in result.stdout, result.stdout + result.stderr


REFUSED = r"""
import numpy as np
import pyopencl as cl
from vkcl import compiler

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = p.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
src = '''
kernel void good(global int *o, int x) { o[0] = x; }
kernel void bad(global int *o, char c, float4 m) { o[0] = c + (int)m.w; }
'''
prg = cl.Program(ctx, src).build()
binary = compiler.unpack(prg.get_info(cl.program_info.BINARIES)[0])
# A reflection that disagrees with the SPIR-V: m starts 4 bytes late, where no member starts.
m = binary.reflection.kernels["bad"].args[2]
m.offset += 4
tampered = compiler.pack(binary)
prg2 = cl.Program(ctx, [dev], [tampered]).build()
assert "kernel bad:" in prg2.get_build_info(dev, cl.program_build_info.LOG)
o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16)
prg2.good(q, (1,), None, o, np.int32(7))
got = np.empty(1, np.int32)
cl.enqueue_copy(q, got, o)
assert got[0] == 7
try:
    prg2.bad(q, (1,), None, o, np.int8(1), np.zeros(4, np.float32))
except cl.LogicError as e:
    assert e.code == cl.status_code.INVALID_PROGRAM_EXECUTABLE, e
    print("refused")
"""


def test_a_kernel_whose_arguments_cannot_be_placed_is_refused(python_with_icd):
    result = python_with_icd(REFUSED)
    assert result.returncode == 0 and "refused" in result.stdout, result.stdout + result.stderr
