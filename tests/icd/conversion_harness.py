"""Generated kernels that apply many conversions to columns of source values, and the check of
their results against conversion_reference (run in a process that has pyopencl on vkcl).

A case is (dst, src, sat, mode, width). The cases of one (dst, src) pair make one kernel, the
kernels of one destination type one program; a program that fails to build is split until the
failing cases are alone, so one compiler crash names its conversion.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from conversion_inputs import source_values
from conversion_reference import DTYPES, INTS, expected_arrays, mismatches

_PRAGMAS = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"


def name(dst: str, sat: bool, mode: str, width: int) -> str:
    return f"convert_{dst}{width if width > 1 else ''}{'_sat' if sat else ''}{mode}"


def all_cases(dsts, srcs, widths=(1, 2, 3, 4, 8, 16)) -> list[tuple]:
    out = []
    for dst in dsts:
        for src in srcs:
            for sat in ((False, True) if dst in INTS else (False,)):
                for mode in ("", "_rte", "_rtz", "_rtp", "_rtn"):
                    out += [(dst, src, sat, mode, w) for w in widths]
    return out


def _storage(t: str) -> str:
    return "ushort" if t == "half" else t  # half data travels as its bits


def _kernel(kname: str, dst: str, src: str, cases: list[tuple], slots: dict) -> str:
    body = []
    for case in cases:
        _, _, sat, mode, w = case
        v = "" if w == 1 else str(w)
        load = "in[i]" if w == 1 else f"vload{w}(i, in)"
        if src == "half":
            load = f"as_half{v}({load})"
        value = f"{name(dst, sat, mode, w)}({load})"
        if dst == "half":
            value = f"as_ushort{v}({value})"
        base = f"out + {slots[case]}u * n"
        store = f"({base})[i] = {value};" if w == 1 else f"vstore{w}({value}, i, {base});"
        body.append(f"  if (i < n / {w}u) {store}\n")
    return (f"kernel void {kname}(global const {_storage(src)} *in, global {_storage(dst)} *out, uint n) {{\n"
            f"  size_t i = get_global_id(0);\n" + "".join(body) + "}\n")


class Survey:
    """Runs cases on one device and collects what disagrees with the reference."""

    def __init__(self, cl, ctx, queue, flush_float: bool, random_count: int = 256, log=print):
        self.cl, self.ctx, self.q, self.flush, self.log = cl, ctx, queue, flush_float, log
        self.inputs = {}
        self.random_count = random_count
        self.wrong = {}        # case -> (count, [(input, got, want), ...])
        self.build_failed = []  # cases whose program fails to build alone
        self.checked = 0
        self._expected_cache = {}

    def values(self, t: str) -> np.ndarray:
        if t not in self.inputs:
            self.inputs[t] = source_values(t, self.random_count)
        return self.inputs[t]

    def run(self, cases: list[tuple]) -> None:
        by_dst = defaultdict(list)
        for c in cases:
            by_dst[c[0]].append(c)
        for dst, cs in by_dst.items():
            self._program(cs)

    def _program(self, cases: list[tuple]) -> None:
        pairs = defaultdict(list)
        for c in cases:
            pairs[c[1]].append(c)
        slots = {c: i for i, c in enumerate(cases)}
        src = _PRAGMAS + "".join(_kernel(f"k_{s}", cases[0][0], s, cs, slots) for s, cs in pairs.items())
        try:
            prg = self.cl.Program(self.ctx, src).build()
        except self.cl.Error:
            if len(cases) == 1:
                self.build_failed.append(cases[0])
                self.log(f"BUILD FAILED {name(*cases[0][:1], *cases[0][2:])}({cases[0][1]})")
                return
            half = len(cases) // 2
            self._program(cases[:half])
            self._program(cases[half:])
            return
        dst = cases[0][0]
        outs = {}
        for s, cs in pairs.items():
            vals = self.values(s)
            n = len(vals)
            ibuf = self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_ONLY | self.cl.mem_flags.COPY_HOST_PTR,
                                  hostbuf=vals)
            # a byte pattern no result has by chance in every element: an element never written shows
            host = np.frombuffer(b"\xa5" * (len(cases) * n * DTYPES[dst]().itemsize), DTYPES[dst]).copy()
            obuf = self.cl.Buffer(self.ctx, self.cl.mem_flags.READ_WRITE | self.cl.mem_flags.COPY_HOST_PTR,
                                  hostbuf=host)
            getattr(prg, f"k_{s}")(self.q, (n,), None, ibuf, obuf, np.uint32(n))
            self.cl.enqueue_copy(self.q, host, obuf)
            outs[s] = host
        self.q.finish()
        for c in cases:
            _, s, sat, mode, w = c
            vals = self.values(s)
            n = len(vals)
            got = outs[s][slots[c] * n:(slots[c] + 1) * n]
            want, alt, tested = self._expected(dst, s, sat, mode)
            bad = mismatches(dst, got, want, alt, tested)
            self.checked += int(tested.sum())
            if len(bad):
                self.wrong[c] = (len(bad), [(vals[i], got[i], want[i]) for i in bad[:4]])

    def _expected(self, dst, src, sat, mode):
        key = (dst, src, sat, mode)
        if key not in self._expected_cache:
            self._expected_cache[key] = expected_arrays(dst, src, sat, mode, self.values(src), self.flush)
        return self._expected_cache[key]
