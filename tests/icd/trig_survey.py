"""Survey of the trigonometric and hyperbolic builtins on vkcl: the largest ulp error of each
function for float, double (and half), over trig_reference's inputs, against mpmath.

Run with vkcl as the OpenCL platform (OCL_ICD_VENDORS, PYTHONPATH, VKCL_CACHE=0):
    python tests/icd/trig_survey.py [-n 4000] [-t float,double,half] [-f sin,cos] [--vector 4]
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import trig_reference as ref  # noqa: E402

TYPES = {"float": np.float32, "double": np.float64, "half": np.float16}
PRAGMA = {"double": "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
          "half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"}


def source(name: str, ctype: str, width: int = 1, ieee: bool = False) -> str:
    """A kernel applying the builtin to each element (width > 1: through vectors)."""
    t = ctype if width == 1 else f"{ctype}{width}"
    if width == 1:
        load = lambda p: f"{p}[i]"  # noqa: E731
        store = "o[i] = {};"
    else:
        load = lambda p: f"vload{width}(i, {p})"  # noqa: E731
        store = f"vstore{width}({{}}, i, o);"
    if name in ref.BINARY:
        call = f"{name}({load('x')}, {load('y')})"
    elif name == "sincos":
        call = None
    else:
        call = f"{name}({load('x')})"
    body = store.format(call)
    return (PRAGMA.get(ctype, "") + ("#pragma OPENCL FP_CONTRACT OFF\n" if ieee else "") +
            f"kernel void k(global const {ctype} *x, global const {ctype} *y, global {ctype} *o)"
            f" {{ size_t i = get_global_id(0); {body} }}\n")


def run(ctx, queue, name, ctype, x, y, width=1, ieee=False):
    dtype = TYPES[ctype]
    n = len(x)
    pad = (-n) % width
    xs = np.concatenate([x, np.zeros(pad, dtype)]).astype(dtype)
    ys = np.concatenate([y if y is not None else np.zeros(n, dtype), np.zeros(pad, dtype)]).astype(dtype)
    prog = cl.Program(ctx, source(name, ctype, width, ieee)).build()
    mf = cl.mem_flags
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
    by = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ys)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, xs.nbytes)
    prog.k(queue, (len(xs) // width,), None, bx, by, bo)
    out = np.empty_like(xs)
    cl.enqueue_copy(queue, out, bo)
    queue.finish()
    return out[:n]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=3000)
    ap.add_argument("-t", default="float,double")
    ap.add_argument("-f", default=",".join(ref.LIMITS))
    ap.add_argument("--vector", type=int, default=1)
    ap.add_argument("--ieee", action="store_true", help="#pragma OPENCL FP_CONTRACT OFF in the kernel")
    args = ap.parse_args()
    plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
    print(f"{'function':10} {'type':7} {'max ulp':>12} {'limit':>5} {'bad specials':>12}  worst input")
    for ctype in args.t.split(","):
        dtype = TYPES[ctype]
        for name in args.f.split(","):
            rng = np.random.default_rng(20)
            x, y = ref.inputs(name, dtype, rng, args.n)
            t0 = time.time()
            try:
                got = run(ctx, queue, name, ctype, x, y, args.vector, args.ieee)
            except Exception as e:  # a failed build is a result of the survey
                print(f"{name:10} {ctype:7} {'build fails':>12}  {str(e).splitlines()[0][:80]}")
                continue
            errs, wrong = ref.errors(name, dtype, x, got, y, flush=flush and ctype != "double")
            finite = errs[np.isfinite(errs)]
            worst = int(np.argmax(np.where(np.isfinite(errs), errs, -1))) if len(finite) else 0
            limit = (ref.HALF_LIMITS if ctype == "half" else ref.LIMITS)[name]
            args_txt = f"{x[worst]!r}" + (f", {y[worst]!r}" if y is not None else "")
            bad = ", ".join(f"{name}({x[i]!r}{', ' + repr(y[i]) if y is not None else ''})={got[i]!r}"
                            for i in wrong[:2])
            mark = "" if (len(finite) == 0 or finite.max() <= limit) and not wrong else "  WRONG"
            print(f"{name:10} {ctype:7} {finite.max() if len(finite) else math.nan:12.4g} {limit:5} "
                  f"{len(wrong):12}  ({args_txt}) -> {got[worst]!r} {bad}{mark}  [{time.time() - t0:.1f}s]",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
