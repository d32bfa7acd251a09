"""The compiler's exceptions: plain Python errors that the runtime maps to CL error codes.

Build failures (clang diagnostics, a crashed or hung clspv) are not exceptions: they come back
as a CompileResult with ok=False and the reason in its log.
"""
from __future__ import annotations


class CompilerError(Exception):
    """Base class of the compiler's exceptions."""


class InvalidOptionsError(CompilerError):
    """Build, compile or link options that are unknown, malformed or not allowed in that mode."""


class InvalidILError(CompilerError):
    """An intermediate-language program that is not OpenCL-flavoured SPIR-V."""


class InvalidBinaryError(CompilerError):
    """A program binary that is not vkcl's, is corrupt or truncated, or does not fit the device."""
