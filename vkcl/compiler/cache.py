"""The on-disk compile cache.

Key: SHA-256 over the inputs (sources, headers, or bitcode), the normalized options, the
device caps key, the compiler version and what was asked for (executable, object, library).
Entries are program binaries (vkcl.compiler.binary), so each carries its own checksum: a
corrupt or truncated entry reads as a miss and is rewritten by the next compile.

Location: VKCL_CACHE_DIR, else $XDG_CACHE_HOME/vkcl, else ~/.cache/vkcl. VKCL_CACHE=0 turns it off.
Writes go to a temporary file that is renamed into place, so readers never see half an entry.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from vkcl.compiler import settings
from vkcl.compiler.binary import ProgramBinary, pack, unpack
from vkcl.compiler.errors import InvalidBinaryError

_log = logging.getLogger("vkcl.compiler")


def cache_dir() -> Path | None:
    """The cache directory, or None when caching is off."""
    if not settings.get("cache"):
        return None
    named = settings.get("cache_dir")
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vkcl"


def make_key(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else bytes(part)
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _path(root: Path, key: str) -> Path:
    return root / key[:2] / f"{key}.vkclbin"


def load(key: str) -> ProgramBinary | None:
    root = cache_dir()
    if root is None:
        return None
    path = _path(root, key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return unpack(data)
    except InvalidBinaryError as e:
        _log.warning("ignoring corrupt cache entry %s: %s", path, e)
        return None


def store(key: str, binary: ProgramBinary) -> bool:
    root = cache_dir()
    if root is None:
        return False
    path = _path(root, key)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(pack(binary))
        os.replace(tmp, path)
        return True
    except OSError as e:
        _log.debug("could not write cache entry %s: %s", path, e)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
