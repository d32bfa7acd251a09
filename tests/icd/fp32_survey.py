"""Survey of OpenCL C's float (and half) math builtins on vkcl, other than the trigonometric
ones: the largest ulp error of each function over fp32_reference's inputs, and the special
values it gets wrong.

Run with vkcl as the OpenCL platform (OCL_ICD_VENDORS, PYTHONPATH, VKCL_CACHE=0):
    python tests/icd/fp32_survey.py [-n 100000] [-t float,half] [-f exp,pow] [--vector 4]
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
import fp32_reference as ref  # noqa: E402

TYPES = {"float": np.float32, "half": np.float16}
PRAGMA = {"half": "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"}


def source(name: str, ctype: str, width: int = 1) -> str:
    """A kernel applying the builtin to each element (width > 1: through vectors)."""
    kind = ref.KINDS[name]
    t = ctype if width == 1 else f"{ctype}{width}"
    it = "int" if width == 1 else f"int{width}"
    if width == 1:
        load = lambda p: f"{p}[i]"  # noqa: E731
        store = lambda v, p: f"{p}[i] = {v};"  # noqa: E731
    else:
        load = lambda p: f"vload{width}(i, {p})"  # noqa: E731
        store = lambda v, p: f"vstore{width}({v}, i, {p});"  # noqa: E731
    args = {"f": "x", "ff": "x, y", "fi": "x, n"}[kind]
    if name == "remquo":
        body = f"{it} qv; {t} r = remquo({load('x')}, {load('y')}, &qv); {store('r', 'o')} {store('qv', 'q')}"
    else:
        call = f"{name}({', '.join(load(a.strip()) for a in args.split(','))})"
        body = store(call, "o")
    return (PRAGMA.get(ctype, "") +
            f"kernel void k(global const {ctype} *x, global const {ctype} *y, global const int *n,"
            f" global {ctype} *o, global int *q) {{ size_t i = get_global_id(0); {body} }}\n")


def run(ctx, queue, name, ctype, x, y, width=1, options=""):
    """The builtin's results (and remquo's quotients: (results, quotients))."""
    dtype = TYPES[ctype]
    n = len(x)
    pad = (-n) % width
    kind = ref.KINDS[name]
    xs = np.concatenate([x, np.zeros(pad, dtype)]).astype(dtype)
    fy = y if kind == "ff" else np.zeros(n, dtype)
    iy = y if kind == "fi" else np.zeros(n, np.int32)
    ys = np.concatenate([fy, np.zeros(pad, dtype)]).astype(dtype)
    ns = np.concatenate([iy, np.zeros(pad, np.int32)]).astype(np.int32)
    prog = cl.Program(ctx, source(name, ctype, width)).build(options=options)
    mf = cl.mem_flags
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
    by = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ys)
    bn = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=ns)
    bo = cl.Buffer(ctx, mf.WRITE_ONLY, xs.nbytes)
    bq = cl.Buffer(ctx, mf.WRITE_ONLY, ns.nbytes)
    prog.k(queue, (len(xs) // width,), None, bx, by, bn, bo, bq)
    out, quo = np.empty_like(xs), np.empty_like(ns)
    cl.enqueue_copy(queue, out, bo)
    cl.enqueue_copy(queue, quo, bq)
    queue.finish()
    return (out[:n], quo[:n]) if name == "remquo" else out[:n]


def quotient_errors(x: np.ndarray, y: np.ndarray, quo: np.ndarray, flush: bool = False) -> np.ndarray:
    """Indices where remquo's quotient is not the sign of x/y with the low 7 bits of the
    nearest integer quotient (unspecified where x is infinite, y is 0 or either is NaN).
    `flush`: a denormal argument may act as +-0 (x: quotient 0; y: unspecified)."""
    tiny = 2.0 ** ref.FORMAT[x.dtype.type][1]
    bad = []
    for i in range(len(x)):
        xi, yi = float(x[i]), float(y[i])
        k = ref.remquo_bits(xi, yi)
        if k is None or (flush and 0 < abs(yi) < tiny):
            continue
        want = {(abs(k) % 128) * (-1 if k < 0 else 1)}
        if flush and 0 < abs(xi) < tiny:
            want.add(0)
        if int(quo[i]) not in want:
            bad.append(i)
    return np.array(bad, dtype=np.int64)


def measure(ctx, queue, name, ctype, n, flush, width=1, seed=20, options=""):
    """(max ulp, indices of wrong specials or quotients, x, y, results)."""
    dtype = TYPES[ctype]
    x, y = ref.inputs(name, dtype, np.random.default_rng(seed), n)
    got = run(ctx, queue, name, ctype, x, y, width, options)
    quo = None
    if name == "remquo":
        got, quo = got
    errs, wrong = ref.errors(name, dtype, x, got, y, flush=flush)
    if quo is not None:
        wrong = np.union1d(wrong, quotient_errors(x, y, quo, flush)).astype(np.int64)
    return errs, wrong, x, y, got


def without_float_parts() -> None:
    """Leave out the prelude's float parts (fp32*.py) from every build that follows."""
    import vkcl.compiler.prelude as prelude
    from vkcl.compiler.prelude import fp32
    ours = {id(p) for p in fp32.PARTS}
    prelude._WORDS = [(w, p) for w, p in prelude._WORDS if id(p) not in ours]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("-t", default="float")
    ap.add_argument("-f", default=",".join(ref.KINDS))
    ap.add_argument("--vector", type=int, default=1)
    ap.add_argument("--options", default="", help="build options, e.g. -cl-denorms-are-zero")
    ap.add_argument("--clspv", action="store_true",
                    help="without vkcl's float prelude parts: clspv's builtins (the ICD runs in this process)")
    args = ap.parse_args()
    if args.clspv:
        without_float_parts()
    plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx)
    flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
    print(f"{'function':10} {'type':6} {'inputs':>7} {'max ulp':>10} {'limit':>5} {'bad':>5}  worst input")
    for ctype in args.t.split(","):
        for name in args.f.split(","):
            t0 = time.time()
            try:
                errs, wrong, x, y, got = measure(ctx, queue, name, ctype, args.n, flush, args.vector, options=args.options)
            except Exception as e:  # a failed build is a result of the survey
                print(f"{name:10} {ctype:6} {'build fails':>12}  {str(e).splitlines()[0][:80]}")
                continue
            finite = np.where(np.isfinite(errs), errs, -1)
            worst = int(np.argmax(finite))
            limit = (ref.HALF_LIMITS if ctype == "half" else ref.LIMITS)[name]
            show = lambda i: f"{name}({x[i]!r}" + (f", {y[i]!r}" if y is not None else "") + f") = {got[i]!r}"  # noqa: E731
            bad = "; ".join(show(i) for i in wrong[:3])
            mark = "" if finite.max() <= limit and len(wrong) == 0 else "  WRONG"
            print(f"{name:10} {ctype:6} {len(x):7} {finite.max():10.4g} {limit:5} {len(wrong):5}  "
                  f"{show(worst)} {('| ' + bad) if bad else ''}{mark}  [{time.time() - t0:.1f}s]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
