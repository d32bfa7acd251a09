"""The one exception type vkcl raises for OpenCL errors, and the fallback for the rest."""
from __future__ import annotations

import logging

from vkcl._gen import cl

_log = logging.getLogger("vkcl")


class CLError(Exception):
    """An OpenCL error: `code` is what the entry point returns (or stores in errcode_ret)."""

    __slots__ = ("code", "result")

    def __init__(self, code: int, message: str = "", result=None):
        super().__init__(message or error_name(code))
        self.code = code
        # What a creating entry point still returns with the error (clLinkProgram's program).
        self.result = result

    def __repr__(self) -> str:
        return f"CLError({error_name(self.code)}: {self})"


def error_name(code: int) -> str:
    return cl.ERROR_NAMES.get(code, f"CL error {code}")


def unexpected(entry: str) -> int:
    """A bug or an unexpected failure inside an entry point: log it, never report success."""
    _log.exception("vkcl: unexpected error in %s", entry)
    return cl.CL_OUT_OF_HOST_MEMORY
