"""`v[k] = x` with k not a constant, on 3-, 8- and 16-element vectors in OpenCL C: clspv left
8- and 16-element vectors unchanged and crashed on 3-element ones until vector_inserts wrote
the insert per element. Private, global and local vectors; every position; bit-exact."""
import pytest

pytest.importorskip("pyopencl")

CASES = [("half", 8), ("half", 16), ("float", 8), ("float", 16), ("float", 3), ("int", 3), ("int", 8), ("uint", 16),
         ("char", 16), ("uchar", 3), ("short", 8), ("double", 8), ("double", 3), ("long", 16)]
NUMPY = {"half": "float16", "float": "float32", "double": "float64", "char": "int8", "uchar": "uint8",
         "short": "int16", "int": "int32", "uint": "uint32", "long": "int64"}


def test_dynamic_inserts(python_with_icd):
    result = python_with_icd(f"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
EDGES = {{"float16": [np.nan, np.inf, -0.0, 6e-8, 65504], "float32": [np.nan, -np.inf, -0.0, 1e-45, 3.4e38],
          "float64": [np.nan, np.inf, -0.0, 5e-324, 1.7e308]}}
for t, n in {CASES!r}:
    dtype = np.dtype({NUMPY!r}[t])
    stride = 4 if n == 3 else n
    load = f"vload3(i, (global {{t}} *)v)" if n == 3 else "v[i]"
    store = f"vstore3(x, i, (global {{t}} *)v)" if n == 3 else "v[i] = x"
    src = ("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\\n" if t == "half" else "") + f'''
kernel void private_(global {{t}} *in, global {{t}}{{n}} *v, uint k) {{{{
    size_t i = get_global_id(0); {{t}}{{n}} x = {{load}}; x[k] = in[i]; {{store}}; }}}}
kernel void global_(global {{t}} *in, global {{t}}{{n}} *v, uint k) {{{{
    size_t i = get_global_id(0); v[i][k] = in[i]; }}}}
kernel void local_(global {{t}} *in, global {{t}}{{n}} *v, uint k) {{{{
    local {{t}}{{n}} l[4]; size_t i = get_global_id(0), j = get_local_id(0);
    l[j] = v[i]; l[j][(k + j) % {{n}}] = in[i]; barrier(CLK_LOCAL_MEM_FENCE); v[i] = l[j]; }}}}
'''
    prg = cl.Program(ctx, src).build()
    m = 4
    if dtype.kind == "f":
        x = np.array(EDGES[dtype.name][:m], dtype)
    else:
        info = np.iinfo(dtype); x = np.array([info.min, info.max, -1 if info.min else 0, 0], dtype)
    rows = (np.arange(m * stride) + 1).astype(dtype).reshape(m, stride)
    if n == 3:
        rows = rows[:, :3]
    for name in ("private_", "global_", "local_"):
        kern = getattr(prg, name)
        if n == 3 and name != "private_":
            continue  # a 3-element vector in memory takes 4 elements' room: only via vload3/vstore3
        for k in range(n):
            bx, bv = (cl.Buffer(ctx, cl.mem_flags.COPY_HOST_PTR, hostbuf=a) for a in (x, np.ascontiguousarray(rows)))
            kern(q, (m,), (m,), bx, bv, np.uint32(k))
            r = np.empty_like(rows); cl.enqueue_copy(q, r, bv); q.finish()
            want = rows.copy()
            for j in range(m):
                want[j, (k + j) % n if name == "local_" else k] = x[j]
            assert r.tobytes() == want.tobytes(), (t, n, name, k, r, want)
print("OK")
""", timeout=600)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout + result.stderr
