"""Holding an NVIDIA GPU's clocks up while vkcl uses it (setting `hold_clocks`, on by default).

NVIDIA's driver lowers a GPU's clocks whenever its graphics/compute engine is idle, and a
Vulkan device's copy engines do not count as work. On an H200: after a few seconds of copies
only, the SM clock falls from 1980 to 345 MHz, and short transfers run at that clock; a kernel
after 3 s of idle runs at 0.42 of its speed. While a CUDA context exists, in any process, the
driver keeps the clocks up; NVIDIA's OpenCL, built on CUDA, holds them while an OpenCL context
lives. So vkcl starts a holder process (_clock_hold_main.py) that retains the CUDA primary
context of the same GPU (matched by UUID) and lives until vkcl's process exits (end-of-input on
a pipe only vkcl's process holds). It does no CUDA work; the context takes ~515 MiB of an
H200's memory. Only in CUDA's default compute mode. The process started forks the holder and
exits at once, so that a Python host's exit can reap it (let_go) without waiting for CUDA's
teardown in the holder (0.1-1.2 s on the H200).

Not in vkcl's own process: CUDA's start-up (~0.15 s) would delay the first context, on a thread
it met libcuda's exit handlers at exit() (short programs hung or died on a glibc assertion on
the H200), and an application process with CUDA initialised cannot use CUDA in a fork()ed child.
(CUDA copies, cuda_copy.py, start CUDA in vkcl's process only for pinned memory, on the calling
thread; the holder stays then too.)
"""
from __future__ import annotations

import logging
import os
import select
import subprocess
import threading
from pathlib import Path

from vkcl import interpreter, log

_log = log.get("vk")

NVIDIA_VENDOR_ID = 0x10DE
HOLDER_SCRIPT = Path(__file__).with_name("_clock_hold_main.py")

# device UUID -> its holder (stdin: our end of the pipe) and the pid of the process that started
# it. A child of fork() shares its parent's holder: the pipe stays open in it, so it starts none.
_holders: dict[bytes, tuple[subprocess.Popen, int]] = {}
_lock = threading.Lock()


def hold(vendor_id: int, device_uuid: bytes) -> subprocess.Popen | None:
    """Start the holder of the GPU whose UUID is `device_uuid` unless one runs: the holder, or
    None for another vendor's GPU. Nothing waits for it; it never raises (a GPU whose clocks
    cannot be held runs as without the setting, the holder exits, and `VKCL_LOG=vk` says why)."""
    if vendor_id != NVIDIA_VENDOR_ID:
        return None
    with _lock:
        proc, owner = _holders.get(device_uuid, (None, 0))
        if proc is not None and (owner != os.getpid() or _holding(proc)):
            return proc
        argv = [interpreter.python_executable(), str(HOLDER_SCRIPT), device_uuid.hex()]
        verbose = _log.isEnabledFor(logging.DEBUG)
        try:
            proc = subprocess.Popen(argv + (["-v"] if verbose else []), stdin=subprocess.PIPE,
                                    stdout=subprocess.DEVNULL, stderr=None if verbose else subprocess.DEVNULL,
                                    close_fds=True, start_new_session=True)
        except OSError as e:
            _log.debug("hold_clocks: cannot start the holder (%s)", e)
            return None
        # The process started forks the holder and exits (_clock_hold_main.py): it is reaped at
        # the next hold() or at exit (let_go), nothing waits for it now.
        _holders[device_uuid] = (proc, os.getpid())
        _log.debug("hold_clocks: holder started, pid %d", proc.pid)
        return proc


def _holding(proc: subprocess.Popen) -> bool:
    """Whether a holder still reads the pipe (the process started has exited: a pipe whose
    read ends are all closed polls as an error at its write end)."""
    proc.poll()  # reaps the process started once it has exited
    if proc.stdin.closed:
        return False
    poller = select.poll()
    poller.register(proc.stdin.fileno(), select.POLLOUT)
    return not any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))


def let_go(timeout_s: float = 1.0) -> None:
    """A Python host's exit: end of input for this process's holders, and the processes started
    reaped (they exited right after forking the holders, so this waits only when the host ends
    within their start-up). Python's finalization would otherwise collect a Popen of a running
    process and an open pipe, and warn for both (ResourceWarning, shown under pytest)."""
    with _lock:
        holders = [proc for proc, owner in _holders.values() if owner == os.getpid()]
    for proc in holders:
        try:
            proc.stdin.close()
            proc.wait(timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired):
            pass

