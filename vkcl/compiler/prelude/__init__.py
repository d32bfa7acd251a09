"""OpenCL C put in front of a program's source: replacements for clspv builtins that compile
wrongly, one module per family (each module's docstring says what clspv gets wrong and how the
replacement is checked).

A part module has NAMES (the builtins it replaces) and TEXT (OpenCL C: overloadable functions,
then `#define name __vkcl_name`). A part is put in front of a source that names one of its
builtins as a word, or that #includes anything (a header may call them). Parts come in the order
of PARTS, so a later part may use an earlier one's functions.
"""
from __future__ import annotations

import hashlib
import re

from vkcl.compiler.prelude import async_copy, fp64, nan

PARTS = (async_copy, nan, *fp64.PARTS)
_INCLUDE = re.compile(rb"#\s*include")
_WORDS = [(re.compile(rb"\b(?:" + b"|".join(n.encode() for n in part.NAMES) + rb")\b"), part.TEXT)
          for part in PARTS]
# Part of the program cache's key: a program cached before the prelude changed is compiled again.
DIGEST = hashlib.sha256("".join(part.TEXT for part in PARTS).encode()).hexdigest()[:16]


def parts_for(source: bytes) -> list[str]:
    """The prelude texts `source` needs, in PARTS order."""
    include = _INCLUDE.search(source) is not None
    return [text for words, text in _WORDS if include or words.search(source)]


def with_prelude(source: bytes) -> bytes:
    """The source as clspv compiles it: the prelude parts it needs, then the program from its
    line 1."""
    parts = parts_for(source)
    if not parts:
        return source
    return ("".join(parts) + "#line 1\n").encode() + source
