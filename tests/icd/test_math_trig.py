"""OpenCL C's trigonometric and hyperbolic builtins on vkcl (prelude/trig_*.py), through pyopencl:
the largest ulp error of every function against mpmath stays within OpenCL C 3.0's limits (7.4,
full profile), for float, double and half, over inputs across the whole range (random bit
patterns), values next to multiples of pi/2, and the special values the spec fixes (NaN,
+-inf, +-0, denormals, sinpi of integers, atan2's axes, ...), which must be exact. Vector
widths and sincos must give the scalar functions' results bit for bit.
"""
from pathlib import Path

import pytest

from test_kernels_pyopencl import HEADER as PYOPENCL_HEADER

pytest.importorskip("pyopencl")
pytest.importorskip("mpmath")

HERE = Path(__file__).resolve().parent

HEADER = PYOPENCL_HEADER + f"""
import sys
sys.path.insert(0, {str(HERE)!r})
import trig_reference as ref, trig_survey as survey
flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
"""


def run(python_with_icd, body: str):
    result = python_with_icd(HEADER + body, timeout=600,
                             env={"PYOPENCL_COMPILER_OUTPUT": "0", "PYOPENCL_NO_CACHE": "1"})
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in text and "OK" in result.stdout, text[-6000:]
    return result.stdout


@pytest.mark.parametrize("ctype,n", [("float", 2500), ("double", 1500), ("half", 600)])
def test_ulp_errors_within_spec(python_with_icd, ctype, n):
    """Every function, scalar: max ulp error <= the spec's limit, special values exact."""
    out = run(python_with_icd, f"""
ctype, dtype = {ctype!r}, survey.TYPES[{ctype!r}]
limits = ref.HALF_LIMITS if ctype == "half" else ref.LIMITS
for name in ref.LIMITS:
    x, y = ref.inputs(name, dtype, np.random.default_rng(7), {n})
    got = survey.run(ctx, q, name, ctype, x, y)
    errs, wrong = ref.errors(name, dtype, x, got, y, flush=flush and ctype != "double")
    worst = float(np.max(errs[np.isfinite(errs)], initial=0.0))
    print(f"{{name}} {{ctype}} max {{worst:.3f}} ulp (limit {{limits[name]}}) over {{len(x)}} inputs")
    for i in wrong[:5]:
        print(f"FAIL {{name}}({{x[i]!r}}{{', ' + repr(y[i]) if y is not None else ''}}) = {{got[i]!r}}: special value")
    if worst > limits[name]:
        i = int(np.argmax(np.where(np.isfinite(errs), errs, -1)))
        print(f"FAIL {{name}}({{x[i]!r}}{{', ' + repr(y[i]) if y is not None else ''}}) = {{got[i]!r}}: {{worst:.3f}} ulp")
print("OK")
""")
    print(out)


def test_hard_reduction_cases(python_with_icd):
    """Arguments whose reduction by pi/2 cancels the most (the worst known for double,
    6381956970095103 * 2**797, within 2**-61 of a multiple of pi/2) and huge ones."""
    run(python_with_icd, """
cases = {
    "float": [float.fromhex("0x1.921fb6p+0"), float.fromhex("0x1.921fb6p+1"), 16367173 * 2.0 ** 72,
              float.fromhex("0x1.fffffep+127"), 1e38, 1e30, 8.0 ** 40, 6433.98, 6144.0, 6143.9995],
    "double": [6381956970095103 * 2.0 ** 797, float.fromhex("0x1.921fb54442d18p+0"), 1e300, 1e22,
               float.fromhex("0x1.fffffffffffffp+1023"), 2.0 ** 1000 * 3, 1572864.0, 1647099.0,
               5.319372648326541e+255, 1.8e+308],
}
for ctype in ("float", "double"):
    dtype = survey.TYPES[ctype]
    x = np.array(cases[ctype] + [-v for v in cases[ctype]], dtype)
    for name in ("sin", "cos", "tan"):
        got = survey.run(ctx, q, name, ctype, x, None)
        errs, wrong = ref.errors(name, dtype, x, got, None)
        for i in np.nonzero(errs > ref.LIMITS[name])[0]:
            print(f"FAIL {name}({x[i]!r}) = {got[i]!r}: {errs[i]:.3f} ulp")
print("OK")
""")


def test_vectors_match_scalars(python_with_icd):
    """Each vector width gives the scalar function's result in every component."""
    run(python_with_icd, """
widths = [2, 3, 4, 8, 16]
for ctype in ("float", "double", "half"):
    dtype = survey.TYPES[ctype]
    for k, name in enumerate(ref.LIMITS):
        width = widths[k % len(widths)]
        x, y = ref.inputs(name, dtype, np.random.default_rng(3), 96)
        n = len(x) - len(x) % width
        x, y = x[:n], (y[:n] if y is not None else None)
        scalar = survey.run(ctx, q, name, ctype, x, y)
        vector = survey.run(ctx, q, name, ctype, x, y, width)
        same = (scalar.view(ref.UINT[dtype]) == vector.view(ref.UINT[dtype])) | (np.isnan(scalar) & np.isnan(vector))
        for i in np.nonzero(~same)[0][:3]:
            print(f"FAIL {name} {ctype}{width}: {x[i]!r} gives {vector[i]!r}, scalar {scalar[i]!r}")
print("OK")
""")


def test_sincos_every_address_space(python_with_icd):
    """sincos through global, local and private pointers (and generic ones in an OpenCL C 2.0
    program), scalar and vector: sin and cos bit for bit."""
    run(python_with_icd, """
for ctype in ("float", "double", "half"):
    dtype = survey.TYPES[ctype]
    x = np.concatenate([ref.specials(dtype), ref.random_bits(dtype, np.random.default_rng(5), 500),
                        np.random.default_rng(6).uniform(-10, 10, 508).astype(dtype)]).astype(dtype)
    x = x[:len(x) - len(x) % 64]
    s, c = survey.run(ctx, q, "sin", ctype, x, None), survey.run(ctx, q, "cos", ctype, x, None)
    ext = survey.PRAGMA.get(ctype, "")
    for opts in ("", "-cl-std=CL2.0"):
        # mode 3: a generic pointer where the language has them (OpenCL C 2.0)
        src = ext + f'''
kernel void k(global const {ctype} *x, global {ctype} *s, global {ctype} *c, local {ctype} *l) {{
  size_t i = get_global_id(0), li = get_local_id(0);
  {ctype} p;
  {ctype} *g = &p;
  int mode = i % 4;
  if (mode == 0) s[i] = sincos(x[i], c + i);
  if (mode == 1) {{ s[i] = sincos(x[i], l + li); c[i] = l[li]; }}
  if (mode == 2) {{ s[i] = sincos(x[i], &p); c[i] = p; }}
  if (mode == 3) {{ s[i] = sincos(x[i], g); c[i] = *g; }}
}}
kernel void k4(global const {ctype} *x, global {ctype} *s, global {ctype} *c) {{
  size_t i = get_global_id(0);
  {ctype}4 cv;
  vstore4(sincos(vload4(i, x), &cv), i, s);
  vstore4(cv, i, c);
}}
'''
        prog = cl.Program(ctx, src).build(options=opts)
        bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
        bs, bc = cl.Buffer(ctx, mf.READ_WRITE, x.nbytes), cl.Buffer(ctx, mf.READ_WRITE, x.nbytes)
        for name in ("k", "k4"):
            kernel = cl.Kernel(prog, name)
            if name == "k":
                kernel(q, (len(x),), (64,), bx, bs, bc, cl.LocalMemory(64 * x.itemsize))
            else:
                kernel(q, (len(x) // 4,), None, bx, bs, bc)
            gs, gc = np.empty_like(x), np.empty_like(x)
            cl.enqueue_copy(q, gs, bs); cl.enqueue_copy(q, gc, bc); q.finish()
            for got, want, what in ((gs, s, "sin"), (gc, c, "cos")):
                same = (got.view(ref.UINT[dtype]) == want.view(ref.UINT[dtype])) | (np.isnan(got) & np.isnan(want))
                for i in np.nonzero(~same)[0][:3]:
                    print(f"FAIL sincos {ctype} {opts} {name} {what}({x[i]!r}) = {got[i]!r}, not {want[i]!r}")
print("OK")
""")


def test_half_precision_trig(python_with_icd):
    """half_sin, half_cos, half_tan (float, every width): within the spec's 8192 ulp for
    |x| <= 2^16 (clspv's were up to 1e5 ulp off from |x| = 512), NaN for +-inf and NaN."""
    out = run(python_with_icd, """
rng = np.random.default_rng(12)
x = np.concatenate([rng.uniform(-65536, 65536, 3000), rng.uniform(-600, 600, 1000),
                    rng.uniform(-2, 2, 500), [0.0, -0.0, 512.0, -512.0390625, 65536.0, -65536.0,
                    float.fromhex("-0x1.00dp+9"), 1e-30, -1e-40]]).astype(np.float32)
x = x[:len(x) - len(x) % 16]
for name in ("sin", "cos", "tan"):
    for width in (1, 16):
        got = survey.run(ctx, q, "half_" + name, "float", x, None, width)
        errs, wrong = ref.errors(name, np.float32, x, got, None, flush=flush)
        worst = float(np.max(errs[np.isfinite(errs)], initial=0.0))
        print(f"half_{name} float{width} max {worst:.3f} ulp (limit 8192) over {len(x)} inputs")
        for i in np.nonzero(errs > 8192)[0][:3]:
            print(f"FAIL half_{name}({x[i]!r}) = {got[i]!r}: {errs[i]:.1f} ulp")
    special = np.array([np.inf, -np.inf, np.nan], np.float32)
    got = survey.run(ctx, q, "half_" + name, "float", special, None)
    if not np.all(np.isnan(got)):
        print(f"FAIL half_{name}({special}) = {got}")
print("OK")
""")
    print(out)
