"""The runtime's own kernels (shaders/*.cl: fill, rectangular copies), compiled like any
program, through the same worker and cache.

The directory is VKCL_SHADER_DIR if set, else `shaders/` next to the vkcl package (the
repository layout), else `vkcl/shaders/` inside an installed package.
"""
from __future__ import annotations

from pathlib import Path

from vkcl.compiler import settings
from vkcl.compiler.caps import DeviceCaps
from vkcl.compiler.driver import CompileResult, compile_source
from vkcl.compiler.options import parse_options

# The built-in kernels need nothing newer than OpenCL C 1.2 (so: uniform work-groups); -w
# because clspv enables every clang warning (-Weverything) and their casts are deliberate.
BUILTIN_OPTIONS = "-cl-std=CL1.2 -w"


def shader_dir() -> Path:
    named = settings.get("shader_dir")
    if named:
        return Path(named)
    package = Path(__file__).resolve().parent.parent  # .../vkcl
    for candidate in (package.parent / "shaders", package / "shaders"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vkcl's shaders/ directory is not next to {package} (set VKCL_SHADER_DIR)")


def builtin_source(name: str) -> str:
    stem = name[:-3] if name.endswith(".cl") else name
    if not stem or "/" in stem or stem.startswith("."):
        raise ValueError(f"bad built-in shader name {name!r}")
    return (shader_dir() / f"{stem}.cl").read_text()


def builtin_shader(name: str, caps: DeviceCaps) -> CompileResult:
    """Compile built-in shader `name` ("fill" or "fill.cl", "copy_rect") for `caps`."""
    # Never bounds-checked: the runtime pushes their constants itself, with no table address.
    return compile_source(builtin_source(name), parse_options(BUILTIN_OPTIONS), caps, check_bounds=False)
