"""OpenCL C put in front of a program's source: replacements for clspv builtins that compile
wrongly, one module per family (each module's docstring says what clspv gets wrong and how the
replacement is checked).

A part module has NAMES (the builtins it replaces) and TEXT (OpenCL C: overloadable functions,
then `#define name __vkcl_name`). A part is put in front of a source that names one of its
builtins as a word, in its own text or in a header it includes (includes.py finds them; if one
cannot be found, every part is). Parts come in the order of PARTS, so a later part may use an
earlier one's functions.

A part with many names (conversions) also has PATTERN, a regex matching its names, the start of
any (for names a macro pastes together with ##) and more, and `text_for(names)`, the text for
only the names a source uses: TEXT is then the text for them all.
"""
from __future__ import annotations

import hashlib
import re

from vkcl.compiler.prelude import (async_copy, atomic_flag, conversions, fabs, fp32, fp64, geometric, includes, mad,
                                   nan, trig)

# fp32's overload sets call the double members as defined before them: after fp64's.
PARTS = (async_copy, conversions, nan, fabs, mad, atomic_flag, *trig.PARTS, *fp64.PARTS, *geometric.PARTS, *fp32.PARTS)
_INCLUDE = re.compile(rb"#\s*include")
_WORDS = [(re.compile(rb"\b(?:" + (getattr(part, "PATTERN", None) or "|".join(part.NAMES)).encode() + rb")\b"), part)
          for part in PARTS]
# Part of the program cache's key: a program cached before the prelude changed is compiled again.
DIGEST = hashlib.sha256("".join(part.TEXT for part in PARTS).encode()).hexdigest()[:16]


def parts_for(source: bytes, include_dirs=(), headers: dict | None = None) -> list[str]:
    """The prelude texts `source` needs, in PARTS order (`include_dirs` and `headers`: where its
    #includes are found)."""
    everything = False
    if _INCLUDE.search(source) is not None:
        expanded = includes.expand(source, include_dirs, headers)
        everything = expanded is None
        source = source if everything else expanded
    out = []
    for words, part in _WORDS:
        if everything:
            out.append(part.TEXT)
        elif hasattr(part, "text_for"):
            found = {w.decode() for w in words.findall(source)}
            if b"##" in source:  # names may be pasted together from the words found: any they begin
                found |= {n for n in part.NAMES if any(n.startswith(w) for w in found)}
            text = part.text_for(found)
            if text:
                out.append(text)
        elif words.search(source):
            out.append(part.TEXT)
    return out


def with_prelude(source: bytes, include_dirs=(), headers: dict | None = None) -> bytes:
    """The source as clspv compiles it: the prelude parts it needs, then the program from its
    line 1."""
    parts = parts_for(source, include_dirs, headers)
    if not parts:
        return source
    return ("".join(parts) + "#line 1\n").encode() + source
