"""The compiler worker: a separate process that calls clspv's C API.

Run by file path (`python _worker_main.py LIBRARY`), so it needs nothing from vkcl: only the
standard library, and cffi when present (ctypes otherwise). clspv may call exit() or abort();
that kills this process, never the application.

Protocol on stdin/stdout: frames of an 8-byte little-endian length then the bytes.
  request:  frame(JSON {"op": "compile", "options": str, "count": n}), then n frames (inputs)
            frame(JSON {"op": "ping"})  -> frame(JSON {"ok": true, "pid": ...})
  response: frame(JSON {"rc": int, "log": str}), frame(binary output; empty on failure)
End of input (the application went away) ends the worker.
"""
from __future__ import annotations

import json
import os
import signal
import struct
import sys

_LEN = struct.Struct("<Q")
MAX_FRAME = 1 << 31

_DECL = ("int clspvCompileFromSourcesString(size_t count, const size_t *sizes, const char **programs,"
         " const char *options, char **binary, size_t *binary_size, char **log);")


def read_exact(stream, n: int) -> bytes | None:
    chunks = []
    while n:
        data = stream.read(n)
        if not data:
            return None
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)


def read_frame(stream) -> bytes | None:
    head = read_exact(stream, _LEN.size)
    if head is None:
        return None
    (n,) = _LEN.unpack(head)
    if n > MAX_FRAME:
        raise ValueError(f"frame of {n} bytes")
    return read_exact(stream, n) if n else b""


def write_frame(stream, data: bytes) -> None:
    stream.write(_LEN.pack(len(data)))
    stream.write(data)


class _CffiClspv:
    def __init__(self, library: str):
        import cffi
        self.ffi = cffi.FFI()
        self.ffi.cdef(_DECL)
        self.lib = self.ffi.dlopen(library)
        libc = cffi.FFI()
        libc.cdef("void free(void *ptr);")
        self.libc = libc.dlopen(None)

    def compile(self, inputs: list[bytes], options: str) -> tuple[int, bytes, str]:
        ffi = self.ffi
        # Every buffer stays referenced until the call returns: clspv copies nothing itself.
        bufs = [ffi.new("char[]", data) for data in inputs]
        sizes = ffi.new("size_t[]", [len(data) for data in inputs])
        programs = ffi.new("const char *[]", bufs)
        opts = ffi.new("char[]", options.encode())
        binary = ffi.new("char **")
        size = ffi.new("size_t *")
        log = ffi.new("char **")
        rc = self.lib.clspvCompileFromSourcesString(len(inputs), sizes, programs, opts, binary, size, log)
        out = bytes(ffi.buffer(binary[0], size[0])) if binary[0] != ffi.NULL and size[0] else b""
        text = ffi.string(log[0]).decode("utf-8", "replace") if log[0] != ffi.NULL else ""
        for ptr in (binary[0], log[0]):
            if ptr != ffi.NULL:
                self.libc.free(ptr)
        del bufs
        return rc, out, text


class _CtypesClspv:
    def __init__(self, library: str):
        import ctypes
        self.ct = ctypes
        self.lib = ctypes.CDLL(library)
        f = self.lib.clspvCompileFromSourcesString
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_char_p),
                      ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                      ctypes.POINTER(ctypes.c_void_p)]
        self.libc = ctypes.CDLL(None)
        self.libc.free.argtypes = [ctypes.c_void_p]

    def compile(self, inputs: list[bytes], options: str) -> tuple[int, bytes, str]:
        ct = self.ct
        bufs = [ct.create_string_buffer(data, len(data) + 1) for data in inputs]
        programs = (ct.c_char_p * len(inputs))(*[ct.cast(b, ct.c_char_p) for b in bufs])
        sizes = (ct.c_size_t * len(inputs))(*[len(data) for data in inputs])
        opts = ct.create_string_buffer(options.encode())
        binary, log, size = ct.c_void_p(), ct.c_void_p(), ct.c_size_t()
        rc = self.lib.clspvCompileFromSourcesString(len(inputs), sizes, programs, opts,
                                                    ct.byref(binary), ct.byref(size), ct.byref(log))
        out = ct.string_at(binary, size.value) if binary.value and size.value else b""
        text = ct.string_at(log).decode("utf-8", "replace") if log.value else ""
        for ptr in (binary, log):
            if ptr.value:
                self.libc.free(ptr)
        del bufs
        return rc, out, text


def _load(library: str):
    try:
        return _CffiClspv(library)
    except ImportError:
        return _CtypesClspv(library)


def _exit_with_parent() -> None:
    """End this process once the application is gone: while clspv compiles, the worker does not
    read its input, so it would not see end-of-input (seen: an orphaned worker compiling for 20
    minutes at full CPU). A thread checks the parent every second; compiles release the GIL.
    VKCL_WORKER_PARENT names the parent (it may be gone before this runs)."""
    import threading
    import time
    parent = int(os.environ.get("VKCL_WORKER_PARENT") or os.getppid())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)

    threading.Thread(target=watch, name="vkcl-worker-parent", daemon=True).start()


def serve(library: str) -> int:
    _exit_with_parent()
    # The protocol gets its own descriptor; anything clspv prints on stdout goes to stderr.
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    clspv = None
    while True:
        head = read_frame(inp)
        if head is None:
            return 0
        request = json.loads(head)
        op = request.get("op")
        if op == "ping":
            write_frame(out, json.dumps({"ok": True, "pid": os.getpid()}).encode())
            continue
        if op != "compile":
            write_frame(out, json.dumps({"rc": -1, "log": f"worker: unknown op {op!r}"}).encode())
            write_frame(out, b"")
            continue
        inputs = []
        for _ in range(int(request["count"])):
            data = read_frame(inp)
            if data is None:
                return 1
            inputs.append(data)
        if clspv is None:
            clspv = _load(library)
        rc, binary, log = clspv.compile(inputs, request["options"])
        write_frame(out, json.dumps({"rc": rc, "log": log}).encode())
        write_frame(out, binary)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write("usage: _worker_main.py LIBRARY\n")
        sys.exit(2)
    sys.exit(serve(sys.argv[1]))
