"""The compiler worker: crashes, exits and hangs of clspv become failed builds, the next compile
gets a new worker, concurrent compiles are safe, and VKCL_CLSPV runs an executable instead."""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from vkcl import compiler
from vkcl.compiler import toolchain
from vkcl.compiler.worker import Worker, get_worker

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
CAPS = compiler.DeviceCaps()
GOOD = "kernel void k(global int *p) { p[get_global_id(0)] = 7; }\n"


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv("VKCL_CACHE", "0")


def test_crash_is_a_failed_build_and_the_next_compile_works():
    worker = get_worker()
    assert compiler.compile_source(GOOD, "", CAPS).ok
    pid, starts = worker.pid, worker.starts
    result = compiler.compile_source((KERNELS / "crash_clspv.cl").read_text(), "", CAPS)
    assert not result.ok and result.status == "crashed" and result.spirv is None
    assert "clspv crashed (signal 6 SIGABRT) while compiling" in result.log
    assert "Broken module found" in result.log  # what clspv printed on stderr
    assert worker.pid is None
    again = compiler.compile_source(GOOD, "-DX=1", CAPS)
    assert again.ok, again.log
    # a worker for each of the crash's later builds (through the front end's route, then with
    # its pointer variables as integers, without loop rotation, with its calls kept:
    # build_ways.py), which crashed too, and one for this compile
    assert worker.starts == starts + 5 and worker.pid not in (None, pid)


def test_clspv_exit_on_unknown_option_is_survived():
    out = get_worker().compile([GOOD.encode()], ["-no-such-clspv-option"])
    assert out.status == "crashed" and "exited with status 1" in out.log
    assert "Unknown command line argument" in out.log
    assert get_worker().compile([GOOD.encode()], ["-cl-std=CL1.2"]).ok


def test_timeout_stops_the_worker(monkeypatch):
    monkeypatch.setenv("VKCL_COMPILE_TIMEOUT", "0.001")
    slow = "\n".join(f"kernel void k{i}(global float *p) {{ p[{i}] = sin(p[{i}]) * exp(p[{i}]); }}"
                     for i in range(40))
    result = compiler.compile_source(slow, "", CAPS)
    assert not result.ok and result.status == "timeout"
    assert "timed out after 0.001 s" in result.log
    monkeypatch.delenv("VKCL_COMPILE_TIMEOUT")
    assert compiler.compile_source(GOOD, "-DAFTER_TIMEOUT", CAPS).ok


def test_hung_worker_is_killed(tmp_path):
    """A worker that never answers (here: a fake interpreter that sleeps) times out."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    worker = Worker(python=str(fake))
    out = worker.compile([GOOD.encode()], [], timeout=0.5)
    assert out.status == "timeout" and not out.ok
    assert worker.pid is None


def test_worker_that_cannot_start():
    worker = Worker(python="/nonexistent/python")
    out = worker.compile([GOOD.encode()], [], timeout=5)
    assert out.status == "unavailable" and "could not be started" in out.log


def test_concurrent_compiles():
    results = [None] * 6

    def build(i):
        results[i] = compiler.compile_source(GOOD.replace("7", str(i + 100)), "", CAPS)

    threads = [threading.Thread(target=build, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.ok for r in results)
    assert len({r.spirv for r in results}) == len(results)


def test_worker_interpreter_choice(monkeypatch):
    monkeypatch.setenv("VKCL_COMPILER_PYTHON", "/opt/some/python3")
    assert toolchain.worker_python() == "/opt/some/python3"
    monkeypatch.delenv("VKCL_COMPILER_PYTHON")
    monkeypatch.setitem(sys.modules, "vkcl._build_info", type(sys)("vkcl._build_info"))
    sys.modules["vkcl._build_info"].PYTHON = sys.executable
    assert toolchain.worker_python() == sys.executable
    sys.modules["vkcl._build_info"].PYTHON = "/nonexistent/python"
    monkeypatch.setattr(sys, "executable", "/usr/bin/some-c-program")  # an embedded interpreter
    assert Path(toolchain.worker_python()).name.startswith("python")


def test_start_and_shutdown():
    pid = compiler.start_worker()
    assert pid == get_worker().pid
    compiler.shutdown()
    assert get_worker().pid is None
    assert compiler.compile_source(GOOD, "-DAFTER_SHUTDOWN", CAPS).ok


FAKE_CLSPV = '''#!{python}
"""A stand-in for the clspv executable: `clspv ARGS -o OUT -- INPUTS`, through the C API."""
import shlex, sys
sys.path.insert(0, {worker_dir!r})
import _worker_main
argv = sys.argv[1:]
split = argv.index("--")
opts, inputs = argv[:split], argv[split + 1:]
out = opts[opts.index("-o") + 1]
del opts[opts.index("-o"):opts.index("-o") + 2]
lib = _worker_main._load({library!r})
rc, binary, log = lib.compile([open(p, "rb").read() for p in inputs], shlex.join(opts))
sys.stderr.write(log)
if rc == 0:
    open(out, "wb").write(binary)
sys.exit(0 if rc == 0 else 1)
'''


def test_external_clspv_executable(tmp_path, monkeypatch):
    fake = tmp_path / "clspv"
    fake.write_text(FAKE_CLSPV.format(python=sys.executable, library=toolchain.clspv_library(),
                                      worker_dir=str(Path(compiler.__file__).parent)))
    fake.chmod(0o755)
    monkeypatch.setenv("VKCL_CLSPV", str(fake))
    assert "clspv-exe=" in compiler.compiler_version()
    result = compiler.compile_source(GOOD, "-DVIA_EXE", CAPS)
    assert result.ok, result.log
    assert list(result.reflection.kernels) == ["k"]
    bad = compiler.compile_source((KERNELS / "syntax_error.cl").read_text(), "", CAPS)
    assert not bad.ok and bad.status == "error" and "undeclared_thing" in bad.log
    obj = compiler.compile_object("int twice(int x) { return 2 * x; }", "", CAPS)
    main = compiler.compile_object("int twice(int x);\nkernel void k(global int *p) { p[0] = twice(p[1]); }", "", CAPS)
    linked = compiler.link([obj, main], "", CAPS)
    assert linked.ok, linked.log
    crash = compiler.compile_source((KERNELS / "crash_clspv.cl").read_text(), "", CAPS)
    assert crash.status == "crashed" and "SIGABRT" in crash.log


def test_worker_inherits_pythonpath(monkeypatch):
    """PYTHONPATH/PYTHONHOME reach the worker unchanged (it may need them to find cffi)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), "/vkcl-test-marker"])))
    worker = Worker()
    try:
        worker.ping()
        environ = Path(f"/proc/{worker.pid}/environ").read_bytes().split(b"\0")
        assert any(e.startswith(b"PYTHONPATH=") and b"/vkcl-test-marker" in e for e in environ)
    finally:
        worker.stop()


def test_an_orphaned_worker_exits():
    """The application dies while its worker's input stays open (a compile in progress does not
    read it): the worker ends by itself within seconds."""
    import subprocess
    import time
    from vkcl.compiler.worker import WORKER_SCRIPT
    read_end, write_end = os.pipe()  # kept open here: the worker never sees end-of-input
    parent = subprocess.run(
        [sys.executable, "-c", "import os, subprocess, sys; os.environ['VKCL_WORKER_PARENT'] = str(os.getpid());"
         " p = subprocess.Popen([sys.executable, sys.argv[1], sys.argv[2]],"
         f" stdin={read_end}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=({read_end},));"
         " print(p.pid)", str(WORKER_SCRIPT), toolchain.clspv_library()],
        capture_output=True, text=True, timeout=60, pass_fds=(read_end,))
    pid = int(parent.stdout.strip())
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split()[2] == "Z":
                    break
            time.sleep(0.2)
        else:
            pytest.fail("the orphaned worker is still running")
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_long_compile_says_so_once(monkeypatch, caplog):
    """VKCL_BUILD_PROGRESS_S: a compile still running by then logs one line; a quick one none."""
    import logging
    import time
    from vkcl.compiler import driver
    monkeypatch.setenv("VKCL_CACHE", "0")

    def slow_run(inputs, args):
        time.sleep(0.6)
        return real_run(inputs, args)

    real_run = driver._run
    src = "kernel void k(global int *a) { a[0] = 1; }"
    with caplog.at_level(logging.WARNING, logger="vkcl.compiler"):
        monkeypatch.setenv("VKCL_BUILD_PROGRESS_S", "0.2")
        monkeypatch.setattr(driver, "_run", slow_run)
        assert compiler.compile_source(src, "", compiler.DeviceCaps()).ok
        monkeypatch.setattr(driver, "_run", real_run)
        monkeypatch.setenv("VKCL_BUILD_PROGRESS_S", "5")
        assert compiler.compile_source(src + " ", "", compiler.DeviceCaps()).ok
    lines = [r.getMessage() for r in caplog.records if "still compiling" in r.getMessage()]
    assert len(lines) == 1 and "OpenCL C" in lines[0], lines
