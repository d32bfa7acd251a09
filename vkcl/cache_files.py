"""The files of vkcl's on-disk caches (program entries, Vulkan pipeline caches), which trust
nothing they read.

The cache directory is used only when it belongs to this process's user and nobody else can
write it (vkcl creates it 0700 whatever the umask); otherwise vkcl warns once and runs without
a cache, since whoever can write it could plant entries. Inside it:
- a file is opened without following a symlink and without blocking (a FIFO), must be a regular
  file of at most VKCL_CACHE_MAX_FILE_MB, and is read with a bounded size;
- a file names the key it was stored under and ends with a SHA-256 of everything before it: an
  entry copied from another key, truncated, damaged or of an older format reads as a miss,
  and the next store replaces it;
- writes go to a temporary file created with O_EXCL under an unpredictable name (mkstemp) in
  the same directory, then renamed into place, so readers never see half a file and a planted
  symlink is never written through. No fsync: a file left half-written by a crash fails its
  checksum and is rebuilt.

Layout, little-endian: magic b"VKCLCACH", format u32, key_len u32, payload_len u64, the key
(ASCII), the payload, SHA-256 of everything before it.
"""
from __future__ import annotations

import hashlib
import logging
import os
import stat
import struct
import tempfile
import threading
from pathlib import Path

from vkcl import config

MAGIC = b"VKCLCACH"
# 2: files name their key and carry a checksum. Format 1 (before it) stored bare program
# binaries and raw pipeline cache data; their different magic makes them misses.
FORMAT_VERSION = 2
_HEAD = struct.Struct("<8sIIQ")
_DIGEST = 32
_CHUNK = 1 << 20

_log = logging.getLogger("vkcl.compiler")
_warned: set[str] = set()
_warned_lock = threading.Lock()


class Unusable(Exception):
    """A cache file that must not be used (the message says why)."""


class OldFormat(Unusable):
    """A file of an older vkcl (or not vkcl's): expected once after an upgrade, so not warned about."""


def cache_dir() -> Path | None:
    """The cache directory named by the settings (read afresh), or None when caching is off."""
    if not config.current("cache"):
        return None
    named = config.current("cache_dir")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vkcl"


def max_file_bytes() -> int:
    return max(0, int(config.current("cache_max_file_mb"))) << 20


def _make_dirs(path: Path) -> None:
    """mkdir -p, each directory it creates 0700 whatever the umask (chmod after mkdir, since
    changing the umask would affect the process's other threads)."""
    if path.is_dir():
        return
    if path.parent != path:
        _make_dirs(path.parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return  # made meanwhile by another process: the caller checks what it is
    os.chmod(path, 0o700)


def _directory_problem(st: os.stat_result) -> str | None:
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if st.st_uid != os.geteuid():
        return f"belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        return f"can be written by other users (mode {stat.S_IMODE(st.st_mode):04o}; chmod go-w to use it)"
    return None


def usable_root(root: Path) -> bool:
    """Create `root` if it is missing; True when it is a directory of this user that nobody
    else can write. Otherwise warn once per directory (the caller then runs without a cache)."""
    try:
        _make_dirs(root)
        problem = _directory_problem(os.stat(root))
    except OSError as e:
        _log.debug("no program cache: %s", e)
        return False
    if problem is None:
        return True
    with _warned_lock:
        first = str(root) not in _warned
        _warned.add(str(root))
    if first:
        _log.warning("not using the cache directory %s: it %s; running without a cache", root, problem)
    return False


def subdir(root: Path, name: str, create: bool) -> Path | None:
    """root/name (made 0700 when `create`), or None if it is missing or is anything but a
    directory of this user that nobody else can write (a symlink included)."""
    path = root / name
    try:
        if create:
            try:
                os.mkdir(path, 0o700)
                os.chmod(path, 0o700)
            except FileExistsError:
                pass
        problem = _directory_problem(os.lstat(path))
    except OSError:
        return None
    if problem is not None:
        _log.warning("ignoring the cache directory %s: it %s", path, problem)
        return None
    return path


def _read_bounded(path: Path, cap: int) -> bytes:
    """The bytes of a regular file of at most `cap` bytes, opened without following a symlink
    or blocking; raise Unusable (or FileNotFoundError) for anything else."""
    if not stat.S_ISREG(os.lstat(path).st_mode):  # not even opened: a device's open may act
        raise Unusable("it is not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:  # ELOOP: replaced by a symlink since the lstat
        if isinstance(e, FileNotFoundError):
            raise
        raise Unusable(f"it cannot be opened safely ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unusable("it is not a regular file")
        if st.st_size > cap:
            raise Unusable(f"it is larger ({st.st_size} bytes) than the cap ({cap} bytes, VKCL_CACHE_MAX_FILE_MB)")
        chunks, total = [], 0
        while total <= cap:  # the size can change after the fstat: never read more than cap + 1
            chunk = os.read(fd, min(_CHUNK, cap + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > cap:
            raise Unusable(f"it grew past the cap ({cap} bytes) while read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def wrap(key: str, payload: bytes) -> bytes:
    k = key.encode("ascii")
    body = _HEAD.pack(MAGIC, FORMAT_VERSION, len(k), len(payload)) + k + bytes(payload)
    return body + hashlib.sha256(body).digest()


def unwrap(data: bytes, key: str) -> bytes:
    """The payload of a file made by wrap(key, ...); raise Unusable for anything else."""
    if len(data) < _HEAD.size + _DIGEST:
        raise Unusable(f"it is too short ({len(data)} bytes)")
    magic, fmt, key_len, payload_len = _HEAD.unpack_from(data)
    if magic != MAGIC:
        raise OldFormat("it is not a vkcl cache file of this format")
    if fmt != FORMAT_VERSION:
        raise OldFormat(f"it has format {fmt}, this vkcl reads {FORMAT_VERSION}")
    end = _HEAD.size + key_len + payload_len
    if end + _DIGEST != len(data):
        raise Unusable(f"it is truncated or padded ({len(data)} bytes, its header says {end + _DIGEST})")
    if hashlib.sha256(data[:end]).digest() != data[end:]:
        raise Unusable("its checksum does not match (corrupt)")
    stored = data[_HEAD.size:_HEAD.size + key_len]
    if stored != key.encode("ascii"):
        raise Unusable("it was stored under another key (a different program's entry)")
    return data[_HEAD.size + key_len:end]


def read(path: Path, key: str) -> bytes | None:
    """The payload stored at `path` under `key`, or None (a miss) for anything else."""
    try:
        return unwrap(_read_bounded(path, max_file_bytes()), key)
    except FileNotFoundError:
        return None
    except OSError as e:
        _log.debug("cannot read cache file %s: %s", path, e)
    except OldFormat as e:
        _log.debug("ignoring cache file %s: %s", path, e)
    except Unusable as e:
        _log.warning("ignoring cache file %s: %s", path, e)
    return None


def write(path: Path, key: str, payload: bytes) -> bool:
    """Store `payload` under `key` at `path` (atomically: a temporary file renamed into place).
    A file larger than the cap is not written, and the one at `path` is removed, so that a
    pipeline cache that outgrew the cap starts again."""
    data = wrap(key, payload)
    tmp = None
    try:
        if len(data) > max_file_bytes():
            _log.debug("cache file %s not written: %d bytes is over the cap", path, len(data))
            path.unlink(missing_ok=True)
            return False
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)  # O_EXCL, mode 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # replaces a symlink or FIFO at `path` itself, never its target
        return True
    except OSError as e:
        _log.debug("could not write cache file %s: %s", path, e)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
