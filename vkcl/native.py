"""The ICD library's own C helpers (icd/fast_path.c), when vkcl runs inside the ICD.

`bind` is called at start-up with the library's cffi module. Imported directly (unit tests,
`python -m vkcl`), there is no library: locks are Python's and nothing takes the fast path.
"""
from __future__ import annotations

import os
import threading

from vkcl import config

ffi = None
lib = None


def bind(ffi_, lib_) -> None:
    global ffi, lib
    ffi, lib = ffi_, lib_


class NativeLock:
    """A recursive mutex that C code takes too, used like threading.RLock. Blocking in it
    releases the GIL (cffi does for every C call), so a C holder never waits for Python."""

    __slots__ = ("ptr", "_lock", "_unlock", "__weakref__")

    def __init__(self):
        self.ptr = lib.vkcl_mutex_new()
        if self.ptr == ffi.NULL:
            raise MemoryError("vkcl_mutex_new")
        self._lock, self._unlock = lib.vkcl_mutex_lock, lib.vkcl_mutex_unlock

    def __enter__(self):
        self._lock(self.ptr)
        return self

    def __exit__(self, *exc) -> None:
        self._unlock(self.ptr)

    def acquire(self) -> bool:
        self._lock(self.ptr)
        return True

    def release(self) -> None:
        self._unlock(self.ptr)

    def __del__(self):
        if lib is not None and self.ptr is not None:
            lib.vkcl_mutex_free(self.ptr)
            self.ptr = None


def make_lock():
    """A lock C may share when vkcl runs in the ICD, else a threading.RLock."""
    return NativeLock() if lib is not None else threading.RLock()


# Threads for a large host copy: half the CPUs, up to 8 (a 16-core H200 host: 10 GB/s on one
# thread, 31 GB/s on 8, into pages already mapped), unless VKCL_COPY_THREADS says.
COPY_THREADS = config.get("copy_threads") or max(1, min(8, (os.cpu_count() or 1) // 2))


def host_copy(their_ffi, dst, src, n: int) -> None:
    """memcpy of n bytes between two pointers of `their_ffi` (the `vulkan` package's or the
    ICD's), on several threads when large."""
    if (lib is None or COPY_THREADS == 1 or n < (1 << 20) or not isinstance(dst, their_ffi.CData)
            or not isinstance(src, their_ffi.CData)):  # a Python buffer (bytes): memmove reads it
        their_ffi.memmove(dst, src, n)
        return
    lib.vkcl_host_copy(ffi.cast("void *", int(their_ffi.cast("uintptr_t", dst))),
                       ffi.cast("void *", int(their_ffi.cast("uintptr_t", src))), n, COPY_THREADS)


def pointer(vk_ffi, handle):
    """A handle of the `vulkan` package's cffi as a `void *` of the ICD's cffi."""
    return ffi.cast("void *", int(vk_ffi.cast("uintptr_t", handle)))
