"""The clock holder: vkcl/vulkan/_clock_hold_main.py (which GPU's CUDA context it retains, and
when it will not) against a stand-in for libcuda, and vkcl/vulkan/clock_hold.py (one holder per
GPU, alive exactly as long as the processes that hold its pipe) with a stand-in holder script.
The real libcuda is on the GPU machine only: there tests/icd/test_kernels_c.py sees the holder
retain the context."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from vkcl.vulkan import _clock_hold_main as holder_main
from vkcl.vulkan import clock_hold

UUID_A = bytes(range(16))
UUID_B = bytes(range(16, 32))


class FakeCuda:
    """Two CUDA devices, UUID_A and UUID_B, called as ctypes calls libcuda."""

    def __init__(self):
        self.retained: list[int] = []
        self.init_result = self.retain_result = 0
        self.compute_mode = 0  # CU_COMPUTEMODE_DEFAULT

    def cuInit(self, flags):
        return self.init_result

    def cuDeviceGetCount(self, count):
        count._obj.value = 2
        return 0

    def cuDeviceGet(self, dev, ordinal):
        dev._obj.value = ordinal
        return 0

    def cuDeviceGetUuid(self, uuid, dev):
        ctypes.memmove(uuid, UUID_A if dev.value == 0 else UUID_B, 16)
        return 0

    def cuDeviceGetAttribute(self, value, attribute, dev):
        assert attribute == 20  # CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
        value._obj.value = self.compute_mode
        return 0

    def cuDevicePrimaryCtxRetain(self, ctx, dev):
        self.retained.append(dev.value)
        return self.retain_result


def test_the_gpu_with_the_same_uuid_is_retained():
    cuda = FakeCuda()
    assert holder_main.retain(cuda, UUID_B) == ""
    assert cuda.retained == [1]


@pytest.mark.parametrize("change, why", [
    (lambda c: None, "no CUDA device has this GPU's UUID"),
    (lambda c: setattr(c, "compute_mode", 3), "compute mode 3"),  # exclusive-process
    (lambda c: setattr(c, "retain_result", 2), "cuDevicePrimaryCtxRetain returned 2"),
    (lambda c: setattr(c, "init_result", 100), "cuInit failed"),
])
def test_what_is_not_retained_says_why(change, why):
    cuda = FakeCuda()
    change(cuda)
    uuid = bytes(16) if why.startswith("no CUDA") else UUID_A
    assert why in holder_main.retain(cuda, uuid)
    assert cuda.retained == ([0] if "Retain" in why else [])


def test_without_libcuda_the_holder_exits_2(monkeypatch, capsys):
    def no_library(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(holder_main.ctypes, "CDLL", no_library)
    assert holder_main.main(["holder", UUID_A.hex(), "-v"]) == 2
    assert "hold_clocks: libcuda.so.1: cannot open" in capsys.readouterr().err


def test_main_runs_in_its_callers_process():
    """Only the script forks (its process exits, the child holds): main() called in a process
    returns there. When main() forked, this test's own pytest process exited 0 at that call and
    its child ran the rest of the suite detached, so `make test` passed whatever came after."""
    code = textwrap.dedent(f"""
        import ctypes, os
        from vkcl.vulkan import _clock_hold_main as m
        def no_library(name):
            raise OSError("no libcuda")
        m.ctypes.CDLL = no_library
        rc = m.main(["holder", {UUID_A.hex()!r}])
        print("returned", rc, os.getpid(), flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.split() == ["returned", "2", str(proc.pid)], out


FAKE_HOLDER = """
import os, sys
if os.fork() != 0:  # as _clock_hold_main.py: the process started exits, its child holds
    os._exit(0)
with open(MARK + ".pid", "w") as f:
    f.write(str(os.getpid()))
with open(MARK + ".started", "w") as f:
    f.write(sys.argv[1])
while sys.stdin.buffer.read(4096):
    pass
open(MARK + ".done", "w").close()
"""


def _fake_script(tmp_path):
    """FAKE_HOLDER, marking its start (with the UUID it was given) and its end in files named
    after tmp_path / "mark"."""
    script = tmp_path / "holder.py"
    script.write_text(FAKE_HOLDER.replace("MARK", repr(str(tmp_path / "mark"))))
    return script


@pytest.fixture
def fake_holder(tmp_path, monkeypatch):
    monkeypatch.setattr(clock_hold, "HOLDER_SCRIPT", _fake_script(tmp_path))
    monkeypatch.setattr(clock_hold, "_holders", {})
    yield tmp_path
    clock_hold.let_go()


def _wait_for(path, seconds=20.0):
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.02)


def test_other_vendors_get_no_holder(fake_holder):
    assert clock_hold.hold(0x1002, UUID_A) is None
    assert clock_hold._holders == {}


def test_one_holder_per_gpu_until_its_pipe_closes(fake_holder):
    first = clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A)
    assert first is not None
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A) is first
    _wait_for(fake_holder / "mark.started")
    assert (fake_holder / "mark.started").read_text() == UUID_A.hex()
    first.wait(timeout=20)  # the process started has gone; its child holds the pipe
    assert clock_hold._holding(first) and not (fake_holder / "mark.done").exists()
    assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A) is first
    clock_hold.let_go()
    _wait_for(fake_holder / "mark.done")
    assert first.returncode == 0 and not clock_hold._holding(first)


def test_a_holder_that_ended_is_started_again(fake_holder):
    """A holder that could not hold (no libcuda: it exits) is no holder: the next device of that
    GPU starts another."""
    first = clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A)
    _wait_for(fake_holder / "mark.started")
    (fake_holder / "mark.started").unlink()
    os.kill(int((fake_holder / "mark.pid").read_text()), signal.SIGKILL)
    end = time.monotonic() + 20
    while clock_hold._holding(first):
        assert time.monotonic() < end
        time.sleep(0.01)
    second = clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, UUID_A)
    assert second is not first
    _wait_for(fake_holder / "mark.started")


def test_a_python_hosts_exit_leaves_no_running_child(tmp_path):
    """The process started has exited and is reaped at the host's exit (let_go), so Python's
    finalization finds no Popen of a running process: no ResourceWarning (pytest showed
    "subprocess ... is still running" at the end of pyopencl's suite on the H200)."""
    child = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from vkcl.vulkan import clock_hold
        clock_hold.HOLDER_SCRIPT = Path({str(_fake_script(tmp_path))!r})
        proc = clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, bytes(16))
        while not Path({str(tmp_path / "mark.started")!r}).exists():
            time.sleep(0.01)
        clock_hold.let_go()
    """)
    result = subprocess.run([sys.executable, "-W", "always::ResourceWarning", "-c", child], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "ResourceWarning" not in result.stderr, result.stderr
    _wait_for(tmp_path / "mark.done")


def test_the_holder_outlives_no_vkcl_process(tmp_path):
    """A process that started a holder exits without a word: the holder sees end-of-input."""
    child = textwrap.dedent(f"""
        from pathlib import Path
        from vkcl.vulkan import clock_hold
        clock_hold.HOLDER_SCRIPT = Path({str(_fake_script(tmp_path))!r})
        assert clock_hold.hold(clock_hold.NVIDIA_VENDOR_ID, bytes(16)) is not None
        while not Path({str(tmp_path / "mark.started")!r}).exists():
            pass
    """)
    subprocess.run([sys.executable, "-c", child], check=True, timeout=60)
    _wait_for(tmp_path / "mark.done")
    assert (tmp_path / "mark.started").read_text() == "00" * 16
