"""The compiler's settings, read afresh at each call so that a test or an application can
change one between two compiles. They are declared, with their defaults, in vkcl.config."""
from __future__ import annotations

from typing import Any

from vkcl import config


def get(name: str) -> Any:
    return config.current(name)
