"""The headers a program includes, found the way clang finds them, so that the prelude can look
for builtin names in them too: a program that includes a header gets the parts its headers use,
not every part (the conversions part alone costs 0.7 s of compile time).

Quoted names are looked up next to the including header, then (like angle-bracket names) in the
program's in-memory headers (clCompileProgram's), the -I directories and the working directory.
A header that cannot be found, or an #include of a macro, makes `expand` give up (None): the
caller then includes every part.
"""
from __future__ import annotations

import os
import posixpath
import re

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*include\b[ \t]*(.*)$", re.M)
_NAME = re.compile(rb'^(?:"([^"\n]+)"|<([^>\n]+)>)')
_LIMIT = 256  # headers at most: past that, give up


def expand(source: bytes, include_dirs=(), headers: dict | None = None) -> bytes | None:
    """The source followed by the text of every header it includes, directly or not; None if
    one of them cannot be found."""
    headers = headers or {}
    texts, seen = [source], set()
    pending = [(source, None, None)]  # (text, its file's directory, its in-memory name's directory)
    while pending:
        text, file_dir, memory_dir = pending.pop()
        for directive in _DIRECTIVE.finditer(text):
            name = _NAME.match(directive.group(1).strip())
            if name is None:
                return None
            quoted = name.group(1) is not None
            found = _find((name.group(1) or name.group(2)).decode(errors="replace"), quoted, file_dir,
                          memory_dir, include_dirs, headers)
            if found is None:
                return None
            key, data, next_file_dir, next_memory_dir = found
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > _LIMIT:
                return None
            texts.append(data)
            pending.append((data, next_file_dir, next_memory_dir))
    return b"\n".join(texts)


def mentions(pattern: re.Pattern, source: bytes, include_dirs=(), headers: dict | None = None,
             defines: str = "") -> bool:
    """Whether `pattern` occurs in the program's text, its -D values or the headers it includes
    (a header that cannot be found counts as yes)."""
    if pattern.search(source) or pattern.search(defines.encode()):
        return True
    if re.search(rb"#\s*include", source) is None:
        return False
    expanded = expand(source, include_dirs, headers)
    return expanded is None or pattern.search(expanded) is not None


def _find(name: str, quoted: bool, file_dir, memory_dir, include_dirs, headers):
    """(key, text, file directory, in-memory directory) of the header `name`, or None."""
    memory = [posixpath.normpath(posixpath.join(memory_dir, name))] if quoted and memory_dir is not None else []
    for m in memory + [name]:
        if m in headers:
            text = headers[m]
            return ("mem", m), text.encode() if isinstance(text, str) else bytes(text), None, posixpath.dirname(m)
    dirs = ([file_dir] if quoted and file_dir else []) + list(include_dirs) + [os.getcwd()]
    for d in dirs:
        path = os.path.join(d, name)
        if os.path.isfile(path):
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                return None
            real = os.path.realpath(path)
            return ("file", real), data, os.path.dirname(real), None
    return None
