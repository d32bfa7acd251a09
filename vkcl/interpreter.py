"""The Python interpreter vkcl starts its helper processes with (the compiler worker, the
clock holder).

Inside an ICD loaded by a C program, sys.executable is that C program, hence the order: the
interpreter vkcl was built with (vkcl._build_info), else sys.executable when it is a Python,
else python3 on PATH.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def python_executable() -> str:
    try:
        from vkcl import _build_info  # generated at build time
        built = getattr(_build_info, "PYTHON", "")
        if built and os.access(built, os.X_OK):
            return built
    except Exception:
        pass
    if sys.executable and _looks_like_python(sys.executable):
        return sys.executable
    return shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}") or shutil.which("python3") or "python3"


def _looks_like_python(path: str) -> bool:
    return os.access(path, os.X_OK) and Path(path).name.startswith("python")
