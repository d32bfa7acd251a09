"""Loops of run-time trip count compiled as on a discrete GPU (clspv's -unroll-runtime, with the
repair of the phis it leaves, vkcl/compiler/spirv_phis.py) compute what numpy does, for trip
counts that leave every remainder of the unrolled loop; and so do loops that exit in the middle
(whose OpUndef phi inputs spirv_phis.fill_undef_phi_inputs replaces)."""
import pytest

pytest.importorskip("pyopencl")

CODE = r"""
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = p.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
types = [("float", np.float32), ("int", np.int32)] + ([("double", np.float64)] if dev.double_fp_config else [])
src = ""
for t, _ in types:
    step = "{x} * a + b" if t == "int" else "mad({x}, a, b)"  # mad(): the form whose loop LLVM leaves unrotated
    src += f'''
kernel void chains_{t}(global {t} *o, {t} a, {t} b, int n) {{
    {t} x0 = o[0], x1 = o[1], x2 = o[2], x3 = o[3], x4 = o[4], x5 = o[5], x6 = o[6], x7 = o[7];
    for (int i = 0; i < n; i++) {{
        x0 = x0 * a + b; x1 = x1 * a + b; x2 = x2 * a + b; x3 = x3 * a + b;
        x4 = x4 * a + b; x5 = x5 * a + b; x6 = x6 * a + b; x7 = x7 * a + b;
    }}
    o[0] = x0; o[1] = x1; o[2] = x2; o[3] = x3; o[4] = x4; o[5] = x5; o[6] = x6; o[7] = x7;
}}'''
    src += f'''
#define STEP8_{t} {" ".join(f"x{j} = {step.format(x=f'x{j}')};" for j in range(8))}
kernel void midexit_{t}(global {t} *o, {t} a, {t} b, int n) {{
    {" ".join(f"{t} x{j} = ({t})(get_local_id(0) + {j});" for j in range(8))}
    int i = 0;
    for (;;) {{ STEP8_{t} if (i >= n) break; STEP8_{t} i++; }}
    o[0] = x0; o[1] = x1; o[2] = x2; o[3] = x3; o[4] = x4; o[5] = x5; o[6] = x6; o[7] = x7;
}}'''
src += '''
kernel void chains_float4(global float4 *o, float a, float b, int n) {
    float4 x0 = o[0], x1 = o[1];
    for (int i = 0; i < n; i++) { x0 = mad(x0, a, b); x1 = mad(x1, a, b); }
    o[0] = x0; o[1] = x1;
}'''
if dev.double_fp_config:
    src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + src
prg = cl.Program(ctx, src).build()
checked = 0
for t, dt in types + [("float4", np.float32)]:
    k = getattr(prg, "chains_" + t)
    for n in (0, 1, 2, 3, 5, 7, 8, 9, 13, 100):
        x = np.arange(8, dtype=dt) if t != "float4" else np.arange(8, dtype=np.float32)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
        a, b = dt(1), dt(3)  # exact: each step adds 3
        k(q, (1,), (1,), buf, a, b, np.int32(n))
        got = np.empty_like(x)
        cl.enqueue_copy(q, got, buf)
        want = x + dt(3) * n
        assert (got == want).all(), (t, n, got, want)
        checked += 1
for t, dt in types:
    k = getattr(prg, "midexit_" + t)
    for n in (0, 1, 2, 7, 100):
        x = np.arange(8, dtype=dt)
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
        k(q, (1,), (1,), buf, dt(1), dt(3), np.int32(n))
        got = np.empty_like(x)
        cl.enqueue_copy(q, got, buf)
        want = x + dt(3) * (2 * n + 1)
        assert (got == want).all(), ("midexit", t, n, got, want)
        checked += 1
print("checked", checked)
"""


def test_runtime_unrolled_loops_compute_right(python_with_icd):
    # lavapipe leaves loops rolled (DeviceCaps.unroll_runtime_loops): ask clspv for it
    result = python_with_icd(CODE, env={"VKCL_CLSPV_OPTIONS": "-unroll-runtime"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked" in result.stdout
