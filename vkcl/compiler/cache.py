"""The on-disk compile cache.

Key: SHA-256 over the inputs (sources, headers, or bitcode), the normalized options, the
device caps key, the compiler version and what was asked for (executable, object, library).
An entry, root/<key[:2]>/<key>.vkclbin, is a program binary (vkcl.compiler.binary) in a cache
file (vkcl.cache_files) that names its key and carries a checksum: an entry of another key,
or a corrupt, truncated, oversized or non-regular one, reads as a miss and is replaced by the
next compile. The directory is used only when it is this user's and nobody else can write it.

Location: VKCL_CACHE_DIR, else $XDG_CACHE_HOME/vkcl, else ~/.cache/vkcl. VKCL_CACHE=0 turns it off.
"""
from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from vkcl import cache_files
from vkcl.compiler.binary import ProgramBinary, pack, unpack

_log = logging.getLogger("vkcl.compiler")
_KEY = re.compile(r"[0-9a-f]{64}")


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off."""
    return cache_files.cache_dir()


def make_key(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _entry_dir(key: str, create: bool) -> Path | None:
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a cache key: {key!r}")
    root = cache_dir()
    if root is None or not cache_files.usable_root(root):
        return None
    return cache_files.subdir(root, key[:2], create)


def load(key: str) -> ProgramBinary | None:
    where = _entry_dir(key, create=False)
    if where is None:
        return None
    path = where / f"{key}.vkclbin"
    payload = cache_files.read(path, key)
    if payload is None:
        return None
    try:
        return unpack(payload)
    except Exception as e:  # anything wrong with a checksummed entry is a miss, never an error
        _log.warning("ignoring corrupt cache entry %s: %s", path, e)
        return None


def store(key: str, binary: ProgramBinary) -> bool:
    where = _entry_dir(key, create=True)
    if where is None:
        return False
    return cache_files.write(where / f"{key}.vkclbin", key, pack(binary))
