"""vload_half / vloada_half and vstore_half / vstorea_half[_rnd] of float and double checked
against conversion_reference, in generated kernels (one program for a list of cases).

A store case is ("store", data type, n, mode, aligned, address space); a load case is
("load", "float", n, "", aligned, address space). Every case writes its own region of the output.
"""
from __future__ import annotations

import numpy as np

from conversion_inputs import source_values
from conversion_reference import BITS, from_host, is_denormal, round_to_float, NAN

_PRAGMAS = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"


def store_name(n: int, mode: str, aligned: bool) -> str:
    return f"vstore{'a' if aligned else ''}_half{n if n > 1 else ''}{mode}"


def load_name(n: int, aligned: bool) -> str:
    return f"vload{'a' if aligned else ''}_half{n if n > 1 else ''}"


def _stride(n: int, aligned: bool) -> int:
    return 4 if aligned and n == 3 else n


def _store_kernel(k: int, case: tuple, count: int) -> str:
    _, t, n, mode, aligned, space = case
    load = "in[i]" if n == 1 else f"vload{n}(i, in)"
    call = f"{store_name(n, mode, aligned)}(v, i, {{p}})"
    region = f"out + {k * 2 * count}"
    if space == "global":
        body = f"  {t}{n if n > 1 else ''} v = {load};\n  " + call.format(p=region) + ";\n"
        return (f"kernel void s{k}(global const {t} *in, global half *out, uint n) {{\n"
                f"  size_t i = get_global_id(0);\n  if (i >= n / {n}u) return;\n{body}}}\n")
    # local or private: store into a small array, then copy the halves out as bits
    stride = _stride(n, aligned)
    decl = "local half tmp[64 * 16];" if space == "local" else "half tmp[16];"
    base = "get_local_id(0) * 16" if space == "local" else "0"
    return (f"kernel void s{k}(global const {t} *in, global ushort *out, uint n) {{\n"
            f"  {decl}\n  size_t i = get_global_id(0);\n  if (i >= n / {n}u) return;\n"
            f"  {t}{n if n > 1 else ''} v = {load};\n"
            f"  {call.format(p=f'tmp + {base}').replace('(v, i,', '(v, 0,')};\n"
            f"  for (int j = 0; j < {n}; j++) (out + {k * 2 * count})[i * {stride} + j] = as_ushort(tmp[{base} + j]);\n}}\n")


def _load_kernel(k: int, case: tuple, count: int) -> str:
    _, _, n, _, aligned, space = case
    stride = _stride(n, aligned)
    store = "(out + {o})[i] = {v};" if n == 1 else "vstore{n}({v}, i, out + {o});"
    if space in ("global", "constant"):
        value = f"{load_name(n, aligned)}(i, in)"
        body = store.format(o=k * 2 * count, v=value, n=n)
        return (f"kernel void l{k}({space} const half *in, global float *out, uint n) {{\n"
                f"  size_t i = get_global_id(0);\n  if (i < n / {stride}u) {body}\n}}\n")
    # local or private: copy the vector's halves (as bits) to a small array, load from there
    decl = "local ushort tmp[64 * 16];" if space == "local" else "ushort tmp[16];"
    base = "get_local_id(0) * 16" if space == "local" else "0"
    value = f"{load_name(n, aligned)}(0, ({space} half *)(tmp + {base}))"
    body = store.format(o=k * 2 * count, v=value, n=n)
    return (f"kernel void l{k}(global const ushort *in, global float *out, uint n) {{\n"
            f"  {decl}\n  size_t i = get_global_id(0);\n  if (i >= n / {stride}u) return;\n"
            f"  for (int j = 0; j < {n}; j++) tmp[{base} + j] = in[i * {stride} + j];\n  {body}\n}}\n")


def _want_half(t: str, v, mode: str, flush: bool):
    """(want, alt) half bit patterns or NAN for one data value."""
    x = from_host(t, v)
    if x == NAN:
        return NAN, NAN
    e = np.float16(round_to_float("half", x.neg, x.mag, mode or "_rte")).view(np.uint16)
    a = e
    if flush and t == "float" and is_denormal("float", x):  # the input read as a zero
        a = np.float16(-0.0 if x.neg else 0.0).view(np.uint16)
    return int(e), int(a)


def run_cases(cl, ctx, q, cases: list[tuple], flush: bool, random_count: int = 256) -> dict:
    """{case: (count, examples)} for the cases whose results are wrong; raises if the program
    does not build."""
    data = {t: source_values(t, random_count) for t in ("float", "double")}
    count = min(len(v) for v in data.values())  # a multiple of 48, as each is
    data = {t: v[:count] for t, v in data.items()}
    src = _PRAGMAS + "".join(_store_kernel(k, c, count) if c[0] == "store" else _load_kernel(k, c, count)
                             for k, c in enumerate(cases))
    prg = cl.Program(ctx, src).build()
    # Patterns in every element first, so that one never written shows: no conversion here gives
    # the float 0xA5A5A5A5 (a half's low 13 bits are zero), and none of the data gives 0xA5A5.
    out = np.full(len(cases) * 2 * count, 0xA5A5, np.uint16)
    mf = cl.mem_flags
    obuf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
    ins = {t: cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=v) for t, v in data.items()}
    with np.errstate(over="ignore"):
        halves = np.ascontiguousarray(data["float"].astype(np.float16))
    hbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=halves)
    fout = np.full(len(cases) * 2 * count, 0xA5A5A5A5, np.uint32).view(np.float32)
    fbuf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=fout)
    for k, c in enumerate(cases):
        if c[0] == "store":
            getattr(prg, f"s{k}")(q, (count,), (16,) if c[5] == "local" else None, ins[c[1]], obuf, np.uint32(count))
        else:
            getattr(prg, f"l{k}")(q, (count,), (16,) if c[5] == "local" else None, hbuf, fbuf, np.uint32(count))
    cl.enqueue_copy(q, out, obuf)
    cl.enqueue_copy(q, fout, fbuf)
    q.finish()
    wrong = {}
    for k, c in enumerate(cases):
        kind, t, n, mode, aligned, _ = c
        stride = _stride(n, aligned)
        region = slice(k * 2 * count, (k + 1) * 2 * count)
        bad = []
        vectors = count // (n if kind == "store" else stride)
        for v in range(vectors):
            for j in range(n):
                if kind == "store":  # element v*n+j of the data lands at half v*stride+j
                    got = int(out[region][v * stride + j])
                    want, alt = _want_half(t, data[t][v * n + j], mode, flush)
                    ok = (got & 0x7FFF) > 0x7C00 if want == NAN else got in (want, alt)
                    if not ok:
                        bad.append((data[t][v * n + j], hex(got), want if want == NAN else hex(want)))
                else:  # half v*stride+j lands at float v*n+j
                    got = fout[region][v * n + j]
                    want = np.float32(halves[v * stride + j])
                    if not (got.view(np.uint32) == want.view(np.uint32) or (np.isnan(got) and np.isnan(want))):
                        bad.append((halves[v * stride + j], got, want))
        if bad:
            wrong[c] = (len(bad), bad[:4])
    return wrong
