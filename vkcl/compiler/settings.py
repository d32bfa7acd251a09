"""The compiler's settings, read at the time of each call.

The environment (VKCL_<NAME>) wins, so that a test or an application can change a setting
between two compiles; otherwise the file named by VKCL_CONFIG_FILE (through vkcl.config),
and failing that the default below.
"""
from __future__ import annotations

import os
from typing import Any

_DEFAULTS: dict[str, Any] = {
    "cache": True,
    "cache_dir": "",
    "clspv": "",
    "compiler_python": "",
    "compile_timeout": 120.0,
    "shader_dir": "",
    "llvm_spirv": "",
}


def _parse(name: str, text: str) -> Any:
    default = _DEFAULTS[name]
    if isinstance(default, bool):
        return text.strip().lower() not in ("0", "false", "no", "off", "")
    if isinstance(default, float):
        return float(text)
    return text


def get(name: str) -> Any:
    text = os.environ.get("VKCL_" + name.upper())
    if text is not None:
        try:
            return _parse(name, text)
        except ValueError:
            return _DEFAULTS[name]
    try:
        from vkcl import config
        values = config.load()  # fresh: the environment now, and VKCL_CONFIG_FILE
    except Exception:  # the runtime's config module is optional for the compiler
        values = {}
    value = values.get(name)
    return _DEFAULTS[name] if value is None else value
