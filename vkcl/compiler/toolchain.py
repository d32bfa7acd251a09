"""Where the compiler's tools are, and the version string that identifies their output.

The version string goes into cache keys and program binaries: a different clspv (another
pyclspv wheel, another VKCL_CLSPV executable) or a new vkcl output format makes old entries
miss instead of being reused.
"""
from __future__ import annotations

import os
import shutil
import sys
from functools import lru_cache
from pathlib import Path

from vkcl import interpreter
from vkcl.compiler import settings

# Bump when vkcl changes what it asks clspv for or how it stores results.
FORMAT_VERSION = 18  # 2-6: SPIR-V repaired by spirv_fixes; 7: prelude.py; 8: single-pass loops rebuilt;
# 9: private arrays resumed; 10: barrier-free loops of barrier kernels resumed; 11: one vote per flat barrier loop;
# 12: private_mem_size in the reflection; 13: no vote past another loop; 14: at most MAX_LOOPS resumed;
# 15: extra lanes return at once; 16: a pipeline per resumed loop (SPEC_RESUME_LOOP);
# 17: lost inner back-edges refused (spirv_single_pass_loops), inner loops resumed;
# 18: such programs built again with their exits through the loop headers (loop_exits)


class ToolMissing(Exception):
    """A compiler tool is not installed; the message says which and how to get it."""


def clspv_library() -> str:
    """Path of the shared object that exports clspv's C API: VKCL_CLSPV_LIBRARY, else pyclspv's
    extension module (a cp311 module, but only its C API is used: any Python can dlopen it)."""
    named = settings.get("clspv_library")
    if named:
        return named
    for directory in _package_paths():
        # By name, not by import: the module is built for the worker's Python, maybe not this one.
        found = sorted(Path(directory or ".").glob("pyclspv.cpython-*.so"))
        if found:
            return str(found[0])
    raise ToolMissing("pyclspv is not installed (pip install pyclspv), and VKCL_CLSPV is not set")


def _package_paths() -> list[str]:
    """vkcl's own packages first (inside the ICD they are not on the host's sys.path: see
    vkcl/vulkan/bindings.py), then those of the interpreter vkcl was built with, which runs
    the worker, then the host's."""
    import vkcl
    paths = list(getattr(vkcl, "DEPENDENCY_PATHS", ()))
    try:
        from vkcl import _build_info  # generated at build time
        paths += [_build_info.SITE_PACKAGES, *_build_info.EXTRA_PATHS]
    except (ImportError, AttributeError):
        pass
    return paths + sys.path


def external_clspv() -> str | None:
    """The clspv executable named by VKCL_CLSPV, or None to use pyclspv's C API."""
    path = settings.get("clspv")
    return path or None


def _file_stamp(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_size}:{st.st_mtime_ns}"


@lru_cache(maxsize=8)
def _version_of(path: str, stamp: str, external: bool) -> str:
    if external:
        return f"vkcl-compiler/{FORMAT_VERSION};clspv-exe={path};{stamp}"
    return f"vkcl-compiler/{FORMAT_VERSION};pyclspv/{_wheel_version(path)};{stamp}"


def _wheel_version(library: str) -> str:
    """pyclspv's version, from the .dist-info directory beside its module. Not through
    importlib.metadata: importing it takes ~25 ms, most of a warm build served by the cache."""
    site = Path(library).parent
    for info in sorted(site.glob("pyclspv-*.dist-info")):
        return info.name[len("pyclspv-"):-len(".dist-info")]
    return "unknown"


def compiler_version() -> str:
    """Identifies the compiler that would run now (what the cache and binaries are keyed by)."""
    exe = external_clspv()
    path = exe if exe else clspv_library()
    try:
        stamp = _file_stamp(path)
    except OSError:
        stamp = "missing"
    return _version_of(path, stamp, bool(exe))


def llvm_spirv() -> str:
    """The SPIRV-LLVM-Translator executable (VKCL_LLVM_SPIRV, else llvm-spirv-15, llvm-spirv)."""
    named = settings.get("llvm_spirv")
    candidates = [named] if named else ["llvm-spirv-15", "llvm-spirv"]
    for name in candidates:
        found = shutil.which(name)
        if found:
            return found
    raise ToolMissing("llvm-spirv (SPIRV-LLVM-Translator) is not installed: IL programs cannot be "
                      "compiled (Debian: apt install llvm-spirv-15)")


def llvm_opt() -> str:
    """LLVM's optimizer (VKCL_LLVM_OPT, else opt-15): it must read llvm-spirv-15's bitcode."""
    named = settings.get("llvm_opt") or "opt-15"
    found = shutil.which(named)
    if found:
        return found
    raise ToolMissing("opt-15 (LLVM 15) is not installed: IL programs whose exits leave several loops at "
                      "once cannot be built (Debian: apt install llvm-15)")


def worker_python() -> str:
    """The interpreter that runs the compiler worker: VKCL_COMPILER_PYTHON, else vkcl's
    (vkcl/interpreter.py)."""
    return settings.get("compiler_python") or interpreter.python_executable()
