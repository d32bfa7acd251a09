"""Float arithmetic with a constant zero operand (repair 21, vkcl/compiler/spirv_zero_operands.py):
lavapipe's code generator folded `x * 0.0f` to 0 (inf * 0 and NaN * 0 included), `0.0f / x` to
0, `x / 0.0f` to garbage, `x + 0.0f` and `0.0f + x` to x (-0 for x = -0) and `0.0f - x` to -x
(-0 for x = +0). Every operation here has a literal +0.0 or -0.0 (scalar, or a component of a
vector constant) and inputs the compiler cannot see: inf, NaN, +-0, +-5, the largest value and a
denormal. Results are compared bit for bit with numpy's IEEE arithmetic (any NaN for a NaN; for
a denormal input on a device without CL_FP_DENORM, also the result of that input flushed)."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")

# (expression of x (scalar) or v (2-vector of x and -x), numpy expression of the same)
SCALAR = [
    ("x * Z", "x * Z"), ("Z * x", "Z * x"), ("x * -Z", "x * -Z"),
    ("Z / x", "Z / x"), ("x / Z", "x / Z"), ("x / -Z", "x / -Z"), ("-Z / x", "-Z / x"),
    ("x + Z", "x + Z"), ("Z + x", "Z + x"), ("x + -Z", "x + -Z"),
    ("Z - x", "Z - x"), ("x - Z", "x - Z"), ("-Z - x", "-Z - x"),
    ("fmod(x, Z)", "np.fmod(x, Z)"), ("Z * x + Z", "(Z * x) + Z"),
]
VECTOR = [  # lane 0 of each constant is +0, lane 1 is not
    ("v * (T2)(Z, 2)", "v * np.array([Z, 2], T)"), ("v / (T2)(Z, 2)", "v / np.array([Z, 2], T)"),
    ("(T2)(Z, 3) / v", "np.array([Z, 3], T) / v"), ("v + (T2)(Z, 1)", "v + np.array([Z, 1], T)"),
    ("(T2)(Z, 1) + v", "np.array([Z, 1], T) + v"), ("(T2)(Z, -3) - v", "np.array([Z, -3], T) - v"),
    ("v * Z", "v * Z"), ("v + (T2)(Z, Z)", "v + Z"), ("(T2)(Z, Z) - v", "Z - v"),
]


def _program(ctype: str) -> str:
    lines = [f"o[{i}] = {expr};" for i, (expr, _) in enumerate(SCALAR)]
    base = len(SCALAR)
    lines += [f"vstore2({expr}, 0, o + {base + 2 * i});" for i, (expr, _) in enumerate(VECTOR)]
    body = "\n  ".join(lines).replace("T2", f"{ctype}2").replace("Z", f"(({ctype})0.0)")
    return f"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void k(global const {ctype} *in, global {ctype} *out) {{
  size_t i = get_global_id(0);
  {ctype} x = in[i];
  {ctype}2 v = ({ctype}2)(x, -x);
  global {ctype} *o = out + i * {len(SCALAR) + 2 * len(VECTOR)};
  {body}
}}"""


CONFIG = {"float16": "HALF", "float32": "SINGLE", "float64": "DOUBLE"}


def _check(dtype: str, ctype: str) -> str:
    reference = [f"np.array([{ref}], T).ravel()" for _, ref in SCALAR]
    reference += [f"np.array({ref}, T).ravel()" for _, ref in VECTOR]
    return f"""
T = np.{dtype}
Z = T(0.0)
tiny = np.finfo(T).smallest_subnormal
inputs = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 5.0, -5.0, np.finfo(T).max, tiny, -tiny], T)
per = {len(SCALAR) + 2 * len(VECTOR)}
p = cl.Program(ctx, '''{_program(ctype)}''').build()
O = out(np.zeros(per * len(inputs), T))
p.k(q, (len(inputs),), None, buf(inputs), O)
got = get(O, np.zeros(per * len(inputs), T)).reshape(len(inputs), per)
denorm = bool(dev.get_info(cl.device_info.{CONFIG[dtype]}_FP_CONFIG) & cl.device_fp_config.DENORM)
def reference(x):
    v = np.array([x, -x], T)
    with np.errstate(all="ignore"):
        return np.concatenate([{", ".join(reference)}])
uint = {{"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}}["{dtype}"]
for n, x in enumerate(inputs):
    wants = [reference(x)]
    if not denorm and x != 0 and abs(x) < np.finfo(T).tiny:
        wants.append(reference(T(0.0) * np.sign(x)))
        wants = [np.where((np.abs(w) < np.finfo(T).tiny) & (w != 0), T(0.0) * np.sign(w), w) for w in wants] + wants
    ok = np.zeros(per, bool)
    for want in wants:
        ok |= (got[n].view(uint) == want.view(uint)) | (np.isnan(got[n]) & np.isnan(want))
    assert ok.all(), (x, [i for i in np.flatnonzero(~ok)], got[n][~ok], wants[0][~ok])
print("OK")
"""


def test_float_operations_on_constant_zero(python_with_icd):
    run(python_with_icd, _check("float32", "float"))


def test_double_operations_on_constant_zero(python_with_icd):
    run(python_with_icd, """
if "cl_khr_fp64" not in dev.extensions:
    print("OK"); raise SystemExit
""" + _check("float64", "double"))


def test_half_operations_on_constant_zero(python_with_icd):
    run(python_with_icd, """
if "cl_khr_fp16" not in dev.extensions:
    print("OK"); raise SystemExit
""" + _check("float16", "half"))
