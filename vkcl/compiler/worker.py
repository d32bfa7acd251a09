"""The persistent compiler worker, seen from the application's side.

One worker process (vkcl/compiler/_worker_main.py) is started on first use and reused; calls
are serialized by a lock. If clspv kills the worker (exit(), abort(), a signal) or a compile
runs past VKCL_COMPILE_TIMEOUT seconds, the call returns a failed CompileOutput whose log says
what happened, plus what the worker printed on stderr, and the next call starts a new worker.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import select
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from vkcl.compiler import settings, toolchain
from vkcl.compiler._worker_main import MAX_FRAME, _LEN

_log = logging.getLogger("vkcl.compiler")
WORKER_SCRIPT = Path(__file__).with_name("_worker_main.py")
_STDERR_TAIL = 16 * 1024
# clspv's release build turns some `llvm_unreachable`s into endless loops that print one line
# again and again ("Instruction: call void @llvm.memcpy.p0.p3..." from its pointer-cast repair):
# past this much stderr the compile is stopped at once, not at the timeout, its first lines kept.
STDERR_RUNAWAY = 2 << 20
_POLL_S = 0.25


@dataclass
class CompileOutput:
    """What one clspv run gave: status is "ok", "error" (clspv reported failure), "crashed",
    "timeout" or "unavailable" (no compiler could be started)."""
    status: str
    binary: bytes = b""
    log: str = ""
    rc: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class _Died(Exception):
    pass


class _TimedOut(Exception):
    pass


class _Runaway(Exception):
    pass


class Worker:
    def __init__(self, python: str | None = None, library: str | None = None):
        self._python = python
        self._library = library
        self._proc: subprocess.Popen | None = None
        self._stderr = None
        self._owner = 0
        self._lock = threading.Lock()
        self.starts = 0  # how many processes this worker has started (tests look at it)

    # -- life cycle -------------------------------------------------------------------------
    def _alive(self) -> bool:
        return self._proc is not None and self._owner == os.getpid() and self._proc.poll() is None

    def _start(self) -> None:
        if self._proc is not None and self._owner != os.getpid():
            # Inherited across fork(): the parent's worker. Drop our copies of its pipes (so
            # that it still sees end-of-input when the parent goes), and start our own.
            for stream in (self._proc.stdin, self._proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self._proc = None
            self._stderr = None
        self._discard()
        python = self._python or toolchain.worker_python()
        library = self._library or toolchain.clspv_library()
        self._stderr = tempfile.TemporaryFile(prefix="vkcl-clspv-stderr-")
        self._proc = subprocess.Popen(
            [python, str(WORKER_SCRIPT), library],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            close_fds=True, start_new_session=True, env={**os.environ, "VKCL_WORKER_PARENT": str(os.getpid())})
        self._owner = os.getpid()
        self.starts += 1
        _log.debug("compiler worker started: pid %d (%s)", self._proc.pid, python)

    def _discard(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            if proc.poll() is None:
                try:
                    proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def stop(self) -> None:
        with self._lock:
            if self._owner == os.getpid():
                self._discard()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._alive() else None

    # -- requests ---------------------------------------------------------------------------
    def compile(self, inputs: list[bytes], args: list[str], timeout: float | None = None) -> CompileOutput:
        """Run clspv on `inputs` (OpenCL C sources or bitcode modules) with argument list `args`."""
        if timeout is None:
            timeout = float(settings.get("compile_timeout"))
        options = shlex.join(args)
        with self._lock:
            try:
                if not self._alive():
                    self._start()
            except (OSError, toolchain.ToolMissing) as e:
                return CompileOutput("unavailable", log=f"clspv could not be started: {e}\n", rc=-1)
            self._stderr.seek(0)
            self._stderr.truncate()
            deadline = time.monotonic() + timeout
            try:
                self._send({"op": "compile", "options": options, "count": len(inputs)}, inputs)
                head = json.loads(self._receive(deadline))
                binary = self._receive(deadline)
            except _TimedOut:
                self._proc.kill()
                self._proc.wait()
                log = f"clspv timed out after {timeout:g} s (VKCL_COMPILE_TIMEOUT) and was stopped\n"
                # a shorter limit is a first attempt that is made again another way (driver.py)
                quiet = timeout < float(settings.get("compile_timeout"))
                return self._failure("timeout", log, quiet=quiet)
            except _Runaway:
                self._proc.kill()
                self._proc.wait()
                return self._runaway_failure(time.monotonic() - (deadline - timeout))
            except (_Died, OSError, ValueError):
                return self._failure("crashed", self._death_message())
            stderr = self._stderr_text()
        rc, log = int(head["rc"]), str(head["log"]) + stderr
        if rc != 0:
            return CompileOutput("error", log=log or f"clspv failed (error {rc})\n", rc=rc)
        return CompileOutput("ok", binary=binary, log=log)

    def ping(self, timeout: float = 30.0) -> int:
        """Start the worker if needed and wait until it answers; return its pid."""
        with self._lock:
            if not self._alive():
                self._start()
            self._send({"op": "ping"}, [])
            return int(json.loads(self._receive(time.monotonic() + timeout))["pid"])

    def _send(self, head: dict, frames: list[bytes]) -> None:
        stdin = self._proc.stdin
        for data in [json.dumps(head).encode(), *frames]:
            stdin.write(_LEN.pack(len(data)))
            stdin.write(data)
        stdin.flush()

    def _receive(self, deadline: float) -> bytes:
        (n,) = _LEN.unpack(self._read(_LEN.size, deadline))
        if n > MAX_FRAME:
            raise ValueError(f"bad frame length {n}")
        return self._read(n, deadline)

    def _read(self, n: int, deadline: float) -> bytes:
        fd = self._proc.stdout.fileno()
        chunks = []
        while n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _TimedOut
            ready, _, _ = select.select([fd], [], [], min(remaining, _POLL_S))
            if not ready:
                if self._stderr is not None and os.fstat(self._stderr.fileno()).st_size > STDERR_RUNAWAY:
                    raise _Runaway
                continue
            data = os.read(fd, min(n, 1 << 20))
            if not data:
                raise _Died
            chunks.append(data)
            n -= len(data)
        return b"".join(chunks)

    def _death_message(self) -> str:
        proc = self._proc
        try:
            rc = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = "unknown signal"
            return f"clspv crashed (signal {-rc} {name}) while compiling\n"
        return f"clspv exited with status {rc} while compiling\n"

    def _failure(self, status: str, message: str, quiet: bool = False) -> CompileOutput:
        stderr = self._stderr_text()
        self._discard()
        log = message + (f"--- clspv stderr ---\n{stderr}" if stderr.strip() else "")
        (_log.info if quiet else _log.warning)("%s", message.strip())
        return CompileOutput(status, log=log, rc=-1)

    def _runaway_failure(self, seconds: float) -> CompileOutput:
        self._stderr.seek(0)
        head = self._stderr.read(4096).decode("utf-8", "replace")
        lines = head.splitlines()[:8]
        message = (f"clspv was stopped after {seconds:.1f} s: it wrote more than {STDERR_RUNAWAY >> 20} MiB "
                   "to stderr, repeating itself (clspv loops on a construct it cannot compile; "
                   "its first lines name it)\n")
        self._discard()
        _log.warning("%s", message.strip())
        return CompileOutput("error", log=message + "--- clspv stderr (first lines) ---\n"
                             + "".join(line[:400] + "\n" for line in lines), rc=-1)

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        data = self._stderr.read()
        if len(data) > _STDERR_TAIL:
            data = b"...\n" + data[-_STDERR_TAIL:]
        return data.decode("utf-8", "replace")


_worker: Worker | None = None
_worker_lock = threading.Lock()


def get_worker() -> Worker:
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = Worker()
        return _worker


def shutdown() -> None:
    """Stop the worker process (a later compile starts a new one)."""
    with _worker_lock:
        worker = _worker
    if worker is not None:
        worker.stop()


def _forget_in_child() -> None:
    """After os.fork(), the child must not stop the parent's worker (it shares its pipes)."""
    global _worker, _worker_lock
    _worker, _worker_lock = None, threading.Lock()


atexit.register(shutdown)
os.register_at_fork(after_in_child=_forget_in_child)
