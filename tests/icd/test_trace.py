"""`python -m vkcl trace -- <command>`: a traced run of a program with 3 kernels and a copy
writes valid trace JSON with those calls, the compile, a submission and the commands' GPU
intervals, and --plot draws a non-empty SVG; the application's view of profiling is unchanged."""
import json
import subprocess
import sys

from pathlib import Path

import pytest

from test_kernels_pyopencl import HEADER

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("pyopencl")

PROGRAM = HEADER + """
p = cl.Program(ctx, '''
kernel void a(global float *x) { x[get_global_id(0)] += 1.0f; }
kernel void b(global float *x) { x[get_global_id(0)] *= 2.0f; }
kernel void c(global float *x) { x[get_global_id(0)] -= 3.0f; }''').build()
x = np.arange(1 << 16, dtype=np.float32)
X, Y = buf(x), out(x)
ev = p.a(q, x.shape, None, X); p.b(q, x.shape, None, X); p.c(q, x.shape, None, X)
cl.enqueue_copy(q, Y, X)
assert np.array_equal(get(Y, x), (x + 1) * 2 - 3)
try:  # the queue was made without profiling: the trace's timestamps are not the application's
    ev.profile.end
    raise SystemExit("profiling info on a queue made without profiling")
except cl.Error as e:
    assert e.code == cl.status_code.PROFILING_INFO_NOT_AVAILABLE
print("OK")
"""


def test_trace_of_three_kernels_and_a_copy(icd_env, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    out, svg = tmp_path / "t.json", tmp_path / "t.svg"
    result = subprocess.run([sys.executable, "-m", "vkcl", "trace", "-o", str(out), "--plot", str(svg), "--",
                             sys.executable, str(script)], cwd=ROOT, env=icd_env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout[-2000:] + result.stderr[-4000:]
    events = json.loads(out.read_text())["traceEvents"]
    names = [(e.get("cat"), e["name"]) for e in events if e["ph"] != "M"]
    assert names.count(("api", "clEnqueueNDRangeKernel")) == 3
    assert ("api", "clEnqueueCopyBuffer") in names and ("api", "clBuildProgram") in names
    assert any(cat == "compile" for cat, _ in names)
    assert any(cat == "queue" and n == "submit" for cat, n in names)
    gpu = [e for e in events if e.get("cat") == "gpu"]
    assert [e["name"] for e in gpu].count("NDRangeKernel") == 3 and any(e["name"] == "CopyBuffer" for e in gpu)
    assert all(e["dur"] >= 0 and e["ts"] > 0 for e in gpu)
    picture = svg.read_text()
    assert picture.startswith("<svg") and picture.count("<rect") >= len(names) // 2


def test_trace_usage_errors(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, "-m", "vkcl", "trace", *a], cwd=ROOT, capture_output=True,
                                    text=True, timeout=60)
    assert run("-o", str(tmp_path / "x.json")).returncode == 2  # no command
    assert run("--", str(tmp_path / "missing-program")).returncode == 127
