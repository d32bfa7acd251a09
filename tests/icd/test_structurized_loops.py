"""Loops with more than one exit, each checked against the host (issue 21).

clspv's structurizer (LLVM StructurizeCFG) once turned a rotated loop that leaves by two exits
into a loop whose back-edge is never taken: the body ran once and neither store happened
(vkcl/compiler/spirv_single_pass_loops.py). Such programs are now built again without loop
rotation. Each kernel here runs with trip counts that stop early, at the end, at once and
never, and the float one carries NaN, infinities, -0 and denormals through its state."""
import random
import sys
from pathlib import Path

import pytest

import host_kernels

pytest.importorskip("pyopencl")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "differential"))
import nested_loops  # noqa: E402

TWO_EXIT_LOOP = (Path(__file__).resolve().parent.parent / "kernels" / "two_exit_loop.cl").read_text()
# o and rec of one work-item of a loop that stores s at its stop-th trip, or at its end
STOPS_REF = """
def ref(g, n, stop):
    s = g
    for i in range(n):
        if i + 1 >= stop:
            return 7, s
        s = lcg(s, i)
    return s, 7
"""

HEADER = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
N = 48
M = 0xFFFFFFFF

def lcg(s, i):
    return (s * 1103515245 + (i ^ 12345)) & M

def launch(src, n, stop, extra=(), local=None):
    prog = cl.Program(ctx, src).build()
    o = np.full(N, 7, np.uint32); rec = np.full(N, 7, np.uint32)
    bo = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=o)
    br = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=rec)
    prog.k(q, (N,), local, bo, br, np.uint32(n), np.uint32(stop), *extra)
    cl.enqueue_copy(q, o, bo); cl.enqueue_copy(q, rec, br)
    return o, rec

def check_floats(name, f, want):
    w = np.array(want, np.float32)
    same = (f.view(np.uint32) == w.view(np.uint32)) | (np.isnan(f) & np.isnan(w))
    if not same.all():
        i = int(np.argmin(same)); print("FAIL", name, "float state at", i, f[i], w[i])

def check(name, got, want):
    for g, w, what in zip(got, want, ("o", "rec")):
        w = np.asarray(w, np.uint32)
        if not (g == w).all():
            i = int(np.argmax(g != w))
            print("FAIL", name, what, "at", i, int(g[i]), int(w[i]))
            return
"""

# (name, kernel, Python computing (o, rec) for one work-item: f(gid, n, stop) -> (o, rec))
CASES = {
    # the reproducer (tests/kernels/two_exit_loop.cl): flag set at the break, return on the flag
    "flag_then_return": (TWO_EXIT_LOOP, STOPS_REF),
    # the store and the return inside the loop
    "return_inside": ("""
kernel void k(global uint *o, global uint *rec, uint n, uint stop) {
  uint s = get_global_id(0);
  for (uint i = 0; i < n; i++) {
    if (i + 1 >= stop) { rec[get_global_id(0)] = s; return; }
    s = s * 1103515245u + (i ^ 12345u);
  }
  o[get_global_id(0)] = s; }""", STOPS_REF),
    # two breaks that leave different codes, then a switch on the code
    "coded_breaks": ("""
kernel void k(global uint *o, global uint *rec, uint n, uint stop) {
  uint s = get_global_id(0); int code = 0; uint i = 0;
  while (i < n) {
    if ((s & 255u) == 17u) { code = 1; break; }
    if (i + 1 >= stop) { code = 2; break; }
    s = s * 1103515245u + (i ^ 12345u); i++;
  }
  switch (code) {
    case 1: rec[get_global_id(0)] = i; return;
    case 2: rec[get_global_id(0)] = s; o[get_global_id(0)] = i; return;
    default: o[get_global_id(0)] = s; }}""", """
def ref(g, n, stop):
    s, i = g, 0
    while i < n:
        if s & 255 == 17:
            return 7, i
        if i + 1 >= stop:
            return i, s
        s = lcg(s, i); i += 1
    return s, 7
"""),
    # a flagged break in an inner loop that continues the outer one
    "nested_flag": ("""
kernel void k(global uint *o, global uint *rec, uint n, uint stop) {
  uint s = get_global_id(0); uint hits = 0;
  for (uint j = 0; j < 4; j++) {
    bool brk = false;
    for (uint i = 0; i < n; i++) {
      if (i + j + 1 >= stop) { brk = true; break; }
      s = s * 1103515245u + (i ^ 12345u);
    }
    if (brk) { hits++; continue; }
    s ^= j;
  }
  if (hits == 4u) { rec[get_global_id(0)] = s; return; }
  o[get_global_id(0)] = s + hits; }""", """
def ref(g, n, stop):
    s, hits = g, 0
    for j in range(4):
        brk = False
        for i in range(n):
            if i + j + 1 >= stop:
                brk = True; break
            s = lcg(s, i)
        if brk:
            hits += 1; continue
        s ^= j
    if hits == 4:
        return 7, s
    return (s + hits) & M, 7
"""),
}

RUN = """
exec(REF)
for n, stop in ((3000, 785), (40, 40), (40, 41), (40, 1), (0, 5), (17, 3), (70000, 69999)):
    got = launch(SRC, n, stop)
    want = list(zip(*[ref(g, n, stop) for g in range(N)]))
    check(f"{NAME} n={n} stop={stop}", got, want)
"""


@pytest.mark.parametrize("case", list(CASES))
def test_loop_with_two_exits(python_with_icd, case):
    src, ref = CASES[case]
    code = HEADER + f"NAME, SRC, REF = {case!r}, {src!r}, {ref!r}\n" + RUN + "print('OK')\n"
    result = python_with_icd(code, timeout=300)
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in result.stdout and "OK" in result.stdout, text[-5000:]


# The float kernels' inputs: NaN, infinities, signed zeros, denormals and the largest floats.
FLOAT_HEADER = HEADER + """
import math, struct
specials = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.17e-38, 3.4e38, -3.4e38]
a = np.array((specials * 4)[:N], np.float32)
f32 = lambda x: struct.unpack('f', struct.pack('f', x))[0]

def launch_floats(src, n, x):
    fb = cl.Buffer(ctx, mf.READ_WRITE, 4 * N)
    ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    got = launch(src, n, x, (ab, fb))
    f = np.empty(N, np.float32); cl.enqueue_copy(q, f, fb)
    return got, f
"""

FLOAT_CASE = FLOAT_HEADER + """
src = '''
kernel void k(global uint *o, global uint *rec, uint n, uint stop, global const float *a, global float *f) {
  size_t g = get_global_id(0); float s = a[g]; bool brk = false; uint i = 0;
  for (; i < n; i++) {
    if (isnan(s) || i + 1 >= stop) { brk = true; break; }
    s = (s + a[(g + i) % 48]) * 0.5f;
  }
  if (brk) { f[g] = s; rec[g] = i; return; }
  f[g] = -s; o[g] = i; }'''
for n, stop in ((30, 12), (10, 40), (5, 1)):
    got, f = launch_floats(src, n, stop)
    want_o, want_rec, want_f = [], [], []
    for g in range(N):
        s, brk, i = float(a[g]), False, 0
        while i < n:
            if math.isnan(s) or i + 1 >= stop:
                brk = True; break
            s = f32(f32(s + float(a[(g + i) % 48])) * 0.5); i += 1
        want_o.append(7 if brk else i); want_rec.append(i if brk else 7)
        want_f.append(s if brk else -s)
    check(f"float n={n} stop={stop}", got, (want_o, want_rec))
    check_floats(f"float n={n} stop={stop}", f, want_f)
print('OK')
"""


def _passes(python_with_icd, code: str) -> None:
    result = python_with_icd(code, timeout=300)
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in result.stdout and "OK" in result.stdout, text[-5000:]


def test_float_state_through_two_exits(python_with_icd):
    _passes(python_with_icd, FLOAT_CASE)


# A search out of nested loops: for r < m, for i < n, step s; at a hit store (s, r * n + i) and
# stop. Written with a `return`, a `goto`, a flag, with the loops rolled by pragmas or not,
# three deep, and as do-while loops. clspv's structurizer lost a loop of most of them (before loop_exits, the flagged
# and pragma forms returned wrong values silently and the others were refused).
STEP = "s = s * 1103515245u + (i ^ 12345u); "
HIT = "s % 4093u == 1000u"
NOUNROLL = "\n#pragma nounroll\n"
STORE = "o[2 * g] = s; o[2 * g + 1] = r * n + i; return;"
SEARCHES = {
    "return": f"for (uint r = 0; r < m; r++) for (uint i = 0; i < n; i++) {{ {STEP} if ({HIT}) {{ {STORE} }} }}",
    "return_rolled": f"{NOUNROLL}for (uint r = 0; r < m; r++) {{ {NOUNROLL}for (uint i = 0; i < n; i++) "
                     f"{{ {STEP} if ({HIT}) {{ {STORE} }} }} }}",
    "goto_rolled": f"{NOUNROLL}for (uint r = 0; r < m; r++) for (uint i = 0; i < n; i++) "
                   f"{{ {STEP} if ({HIT}) {{ found = r * n + i; goto out; }} }} out:",
    "flag_then_break": f"uint ex = 0; for (uint r = 0; r < m; r++) {{ for (uint i = 0; i < n; i++) {{ {STEP} "
                       f"if ({HIT}) {{ found = r * n + i; ex = 1; break; }} }} if (ex) break; }}",
    "three_deep": f"for (uint q = 0; q < 1u; q++) {{ {NOUNROLL}for (uint r = 0; r < m; r++) {{ {NOUNROLL}"
                  f"for (uint i = 0; i < n; i++) {{ {STEP} if ({HIT}) {{ {STORE} }} }} }} }}",
    "flag_in_conditions": f"for (uint r = 0; r < m && found == 0xffffffffu; r++) for (uint i = 0; i < n; i++) "
                          f"{{ {STEP} if ({HIT}) {{ found = r * n + i; break; }} }}",
    # do-while loops leave at their latch, which loop_exits routes the exits through
    "do_while_return": f"uint r = 0; if (m) {{ {NOUNROLL}do {{ uint i = 0; if (n) {{ {NOUNROLL}do {{ {STEP} "
                       f"if ({HIT}) {{ {STORE} }} i++; }} while (i < n); }} r++; }} while (r < m); }}",
    "do_while_goto": f"uint r = 0; if (m) {{ {NOUNROLL}do {{ uint i = 0; if (n) {{ do {{ {STEP} "
                     f"if ({HIT}) {{ found = r * n + i; goto out; }} i++; }} while (i < n); }} r++; }} while (r < m); }} out:",
}
SEARCH = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]]); q = cl.CommandQueue(ctx)
M = 0xFFFFFFFF
src = ("kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, found = 0xffffffffu;\\n"
       + BODY + "\\n o[2 * g] = s; o[2 * g + 1] = found; }")
def ref(g, n, m):
    s = g
    for r in range(m):
        for i in range(n):
            s = (s * 1103515245 + (i ^ 12345)) & M
            if s % 4093 == 1000:
                return s, r * n + i
    return s, M
prg = cl.Program(ctx, src).build()
G = 16
for n, m in ((3000, 4), (3000, 2), (5, 3), (0, 3), (3000, 0)):
    o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8 * G)
    prg.k(q, (G,), None, o, np.uint32(n), np.uint32(m))
    got = np.empty(2 * G, np.uint32); cl.enqueue_copy(q, got, o)
    want = [ref(g, n, m) for g in range(G)]
    assert [tuple(int(x) for x in got[2 * g:2 * g + 2]) for g in range(G)] == want, (n, m, got, want)
print("OK")
"""


@pytest.mark.parametrize("case", sorted(SEARCHES))
def test_a_search_out_of_nested_loops(python_with_icd, case):
    _passes(python_with_icd, f"BODY = {SEARCHES[case]!r}\n" + SEARCH)


FLOAT_SEARCH = FLOAT_HEADER + """
src = '''
kernel void k(global uint *o, global uint *rec, uint n, uint m, global const float *a, global float *f) {
  size_t g = get_global_id(0); float s = a[g];
  for (uint r = 0; r < m; r++)
    for (uint i = 0; i < n; i++) {
      s = (s + a[(g + i) % 48]) * 0.5f;
      if (isnan(s) || s == 0.5f) { f[g] = s; rec[g] = r * n + i; return; }
    }
  f[g] = -s; o[g] = m * n; }'''
for n, m in ((30, 3), (10, 1), (5, 4), (1, 0)):
    got, f = launch_floats(src, n, m)
    want_o, want_rec, want_f = [], [], []
    for g in range(N):
        s, hit = float(a[g]), None
        for r in range(m):
            for i in range(n):
                s = f32(f32(s + float(a[(g + i) % 48])) * 0.5)
                if math.isnan(s) or s == 0.5:
                    hit = r * n + i
                    break
            if hit is not None:
                break
        want_o.append(7 if hit is not None else m * n); want_rec.append(hit if hit is not None else 7)
        want_f.append(s if hit is not None else -s)
    check(f"float n={n} m={m}", got, (want_o, want_rec))
    check_floats(f"float n={n} m={m}", f, want_f)
print('OK')
"""


def test_float_state_through_a_return_out_of_nested_loops(python_with_icd):
    # the rerouted exits (loop_exits) carry NaN, infinities, -0, denormals and the largest
    # floats bit for bit to the stores they delay past the loops' headers
    _passes(python_with_icd, FLOAT_SEARCH)


STUCK = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
M = 0xFFFFFFFF
def step(s, x):
    return (s * 1103515245 + x) & M
def ref(g, n):
    s, t, i1 = g, 0, 0
    while True:
        i1 += 1; s = step(s, i1 ^ 25861); t += 1
        if s % 13 == 9:
            return [s ^ 0xABCD, t]
        for i2 in range(g % 5 + 1):
            s = step(s, i2 ^ 59248); t += 1
            if s % 7 == 2:
                return [s ^ 0xABCD, t]
        if i1 >= n:
            return [s, t]
prg = cl.Program(ctx, SRC).build()
for n in (40, 3, 0):
    o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8 * 16)
    prg.k(q, (16,), None, o, np.uint32(n), np.uint32(0))
    got = np.empty(32, np.uint32); cl.enqueue_copy(q, got, o)
    assert list(got) == [w for g in range(16) for w in ref(g, n)], (n, got)
print("ran OK")
"""


def test_a_loop_stuck_on_its_exit_code_never_runs(python_with_icd):
    # tests/kernels/stuck_loop.cl: every build clspv makes of it but loop_exits' has a lost
    # loop; on lavapipe loop_exits' first do-while routing (a stuck loop,
    # spirv_single_pass_loops.stuck_loops) was taken and the resumed launch never ended, and it
    # was refused from then until the routing's fault was found (twenty-fifth session).
    src = (Path(__file__).resolve().parent.parent / "kernels" / "stuck_loop.cl").read_text()
    _passes(python_with_icd, f"SRC = {src!r}\n" + STUCK)


# Random kernels of tests/differential/nested_loops.py whose exits leave do-while loops
# through the test in their latch (loop_exits), checked against their source built for the
# host (tests/host_kernels.py). Seed 711 came out wrong when such an exit, going on from an
# inner loop that ends the do-while's body, dispatched into the latch again instead of its test.
# Seeds 144 and 186 were refused on lavapipe before (every build kept a lost or stuck loop).
# Seeds 678, 703 and 789 were refused on every device until the twenty-sixth session: LLVM's
# jump threading read the exit local's value where it was stored and took the exit straight
# out of the loops again; the local is volatile now (loop_exits).
RANDOM_SEEDS = (711, 144, 186, 678, 703, 789)
RANDOM = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]]); q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, SRC).build()
for (n, m), want in WANT.items():
    o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.full(32, 7, np.uint32))
    ev = prg.k(q, (16,), None, o, np.uint32(n), np.uint32(m))
    got = np.empty(32, np.uint32); cl.enqueue_copy(q, got, o)
    if got.tolist() != want or ev.command_execution_status != 0:  # (CL_OUT_OF_RESOURCES: cut short)
        print("FAIL", n, m, ev.command_execution_status, got.tolist(), want)
print("OK")
"""


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
def test_random_nested_loops_compute_what_the_host_does(python_with_icd, seed, tmp_path):
    src = nested_loops.kernel(random.Random(seed))
    exe = host_kernels.build_source(src, tmp_path, "k")
    want = {(n, m): [int(x) for x in host_kernels.run(exe, n, m).split()] for n, m in ((40, 7), (3, 0), (100, 9))}
    _passes(python_with_icd, f"SRC, WANT = {src!r}, {want!r}\n" + RANDOM)


# Loops left by a `return` out of the loop around them that loop_exits left alone until the
# twenty-sixth session (the programs were refused on every device): a condition taking its
# block's side effect's value (`while (++i < n)`, a do-while's `while (++i < n)`) and a
# `return` from a `switch`. Against their source built for the host.
@pytest.mark.parametrize("name", ["exit_preincrement_while", "exit_preincrement_do_while", "exit_from_switch"])
def test_exits_loop_exits_once_left_alone_compute_what_the_host_does(python_with_icd, name, tmp_path):
    src = (Path(__file__).resolve().parent.parent / "kernels" / f"{name}.cl").read_text()
    exe = host_kernels.build_source(src, tmp_path, "k")
    want = {(n, m): [int(x) for x in host_kernels.run(exe, n, m).split()] for n, m in ((40, 7), (3, 0), (7, 40))}
    _passes(python_with_icd, f"SRC, WANT = {src!r}, {want!r}\n" + RANDOM)


# Random kernels whose loops, after LLVM's forced unrolling on llvmpipe, outnumbered those that
# may suspend (spirv_resume_plan.MAX_WITH_INNER): with n = 300 their inner loops outran the
# budget and the launches failed as cut (CL_OUT_OF_RESOURCES) until the twenty-sixth session,
# when such programs were first built with their loops rolled (driver; seed 145's loop four
# deep also needed spirv_resume_plan.MIN_COPY_BLOCKS).
@pytest.mark.parametrize("seed", [133, 145])
def test_long_random_nested_loops_run_to_the_end(python_with_icd, seed, tmp_path):
    src = nested_loops.kernel(random.Random(seed))
    exe = host_kernels.build_source(src, tmp_path, "k")
    want = {(n, m): [int(x) for x in host_kernels.run(exe, n, m).split()] for n, m in ((300, 7), (40, 300))}
    _passes(python_with_icd, f"SRC, WANT = {src!r}, {want!r}\n" + RANDOM)
