"""Conditionals nested deep run right, or are refused where the device would run them wrong.

llvmpipe (lavapipe) keeps one execution mask per nested `if`, 80 at most; past that, branches run
for every work-item of the level above (compiler/spirv_nesting.py). LLVM's forced unrolling
(llvmpipe's) nests one level per exit of each unrolled copy, so such programs are built again
rolled; a program nested too deep in its own source is refused on lavapipe with a build log.
Every result is exact against the host; other devices build and run every kernel here."""
import pytest

from checks import run_ok

pytest.importorskip("pyopencl")

HEADER = r"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
M = 0xFFFFFFFF
llvmpipe = "llvmpipe" in dev.name
def step(s, x):
    return (s * 1103515245 + x) & M
def launch(prg, size, local, *args, n_out=2):
    o = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.full(n_out * size, 7, np.uint32))
    cl.Kernel(prg, "k")(q, (size,), local, o, *args)
    got = np.empty(n_out * size, np.uint32); cl.enqueue_copy(q, got, o)
    return got
"""


def run(python_with_icd, body: str):
    return run_ok(python_with_icd, HEADER + body)


def test_goto_continue_and_returns_out_of_three_loops(python_with_icd):
    # A differential run against PoCL found this kernel wrong on lavapipe (work-items returning
    # from the innermost loops stored nothing): unrolled, it nested 81 conditionals deep.
    run(python_with_icd, r"""
src = '''kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, t = 0; uint i0, i1, i2;
  i0 = 0;
  while (i0 < m) { i0++; s = s * 1103515245u + (i0 ^ 70602u); t++; if ((s % 7u) == 0u) goto out;
    for (i1 = 0; i1 < n; i1++) { s = s * 1103515245u + (i1 ^ 82664u); t++;
      for (i2 = 0; i2 < 3u; i2++) { s = s * 1103515245u + (i2 ^ 36499u); t++;
        if ((s % 1009u) == 19u) continue;
        if ((s % 211u) == 191u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; } }
      if ((s % 13u) == 7u) { o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return; } }
    if ((s % 211u) == 97u) continue; }
  out: o[2 * g] = s; o[2 * g + 1] = t; }'''
def ref(g, n, m):
    s, t, i0 = g, 0, 0
    while i0 < m:
        i0 += 1; s = step(s, i0 ^ 70602); t += 1
        if s % 7 == 0:
            break
        for i1 in range(n):
            s = step(s, i1 ^ 82664); t += 1
            for i2 in range(3):
                s = step(s, i2 ^ 36499); t += 1
                if s % 1009 == 19:
                    continue
                if s % 211 == 191:
                    return [s ^ 0xABCD, t]
            if s % 13 == 7:
                return [s ^ 0xABCD, t]
        if s % 211 == 97:
            continue
    return [s, t]
prg = cl.Program(ctx, src).build()
for size, local, n, m in ((16, None, 40, 7), (64, (4,), 40, 7), (64, (8,), 3, 50), (13, (13,), 0, 9)):
    got = launch(prg, size, local, np.uint32(n), np.uint32(m))
    want = [w for g in range(size) for w in ref(g, n, m)]
    assert list(got) == want, (local, n, m, [g for g in range(size) if list(got[2 * g:2 * g + 2]) != want[2 * g:2 * g + 2]])
print("OK")
""")


CHAINS = r"""
KS = [(k * 2654435761) & M for k in range(120)]
def hit(x, k):
    return (((x ^ KS[k]) * 2654435761) & M) >> 24 < 4
def cond(k):
    return f"((((a[g] ^ {KS[k]}u) * 2654435761u) >> 24) < 4u)"
def first_hit(x, n):
    return next((k for k in range(n) if hit(x, k)), 5000)
def returns(n):  # if (...) { o[g] = k; return; } n times in a row
    body = " ".join(f"if ({cond(k)}) {{ o[g] = {k}u; return; }}" for k in range(n))
    return f"kernel void k(global uint *o, global const uint *a) {{ uint g = get_global_id(0); {body} o[g] = 5000u; }}"
def nested(n):  # n ifs inside each other, each counting
    body = "o[g] = 1000u;"
    for k in reversed(range(n)):
        body = f"if (a[g] > {k}u) {{ o[g] += 1u; {body} }}"
    return f"kernel void k(global uint *o, global const uint *a) {{ uint g = get_global_id(0); o[g] = 0u; {body} }}"
a = (np.arange(1024, dtype=np.uint64) * 7919 % 2**32).astype(np.uint32)
A = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
small = np.arange(1024, dtype=np.uint32) % 100
S = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=small)
"""


def test_conditionals_nested_as_deep_as_llvmpipe_keeps(python_with_icd):
    run(python_with_icd, CHAINS + r"""
for n in (40, 78):
    got = launch(cl.Program(ctx, returns(n)).build(), 1024, (8,), A, n_out=1)
    want = np.array([first_hit(int(x), n) for x in a], np.uint32)
    assert (got == want).all(), (n, int((got != want).sum()))
    got = launch(cl.Program(ctx, nested(n)).build(), 1024, (8,), S, n_out=1)
    want = np.array([1000 if x >= n else x for x in small], np.uint32)
    assert (got == want).all(), (n, int((got != want).sum()))
print("OK")
""")


def test_conditionals_nested_deeper_are_refused_on_llvmpipe_only(python_with_icd):
    # 100 levels: lavapipe ran 316 of 1,024 work-items wrong (each returning where its first
    # hit was past the 80th test); it refuses the program now, with the reason in the log.
    run(python_with_icd, CHAINS + r"""
for n in (100, 120):
    for src, data, want in ((returns(n), A, np.array([first_hit(int(x), n) for x in a], np.uint32)),
                            (nested(n), S, np.array([1000 if x >= n else x for x in small], np.uint32))):
        prg = cl.Program(ctx, src)
        try:
            prg.build()
        except cl.RuntimeError as e:
            assert llvmpipe and "BUILD_PROGRAM_FAILURE" in str(e), e
            log = prg.get_build_info(dev, cl.program_build_info.LOG)
            assert "conditionals deep" in log and "llvmpipe" in log, log
            continue
        assert not llvmpipe, n
        got = launch(prg, 1024, (8,), data, n_out=1)
        assert (got == want).all(), (n, int((got != want).sum()))
print("OK")
""")
