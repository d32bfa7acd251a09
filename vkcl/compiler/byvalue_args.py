"""By-value kernel arguments that clspv's front end refuses, passed as their bytes.

clspv checks each by-value kernel argument's type against Vulkan's storage-buffer layout rules
in its front-end plugin (FrontendPlugin.cpp, IsSupportedLayout), which no option turns off
(-scalar-block-layout only makes clspv stop: "scalar block layout support unimplemented"). The
rules misjudge valid OpenCL C: a union whose first member is a struct, such as pyopencl's complex
types (`union { struct { float x, y; }; struct { float real, imag; }; }`), fails with "a structure
member must not be placed between the end of a structure or array and the next multiple of the
base alignment of that structure or array" (its members overlap, as a union's do), and a packed
struct with "scalar elements must be aligned to their size". Past that check clspv lays such a
value out as the host's C ABI does, and the runtime passes the application's bytes unchanged.

So when a build fails with one of those errors at a kernel parameter, that parameter's type is
passed as bytes, in every kernel of the program, and the program is built again:

    kernel void k(global T *o, T a) { body }
becomes (on the same lines, so the log's line numbers still hold)
    typedef struct __attribute__((aligned(__alignof__(T)))) { uchar b[sizeof(T)]; } __vkcl_bytes_0;
    kernel void k(global T *o, __vkcl_bytes_0 __vkcl_arg_0) {
        T a; __builtin_memcpy(&a, &__vkcl_arg_0, sizeof(T)); body }

Same size and alignment, so the same bytes at the same place; the reflection's names and type
names are put back (restore_names). Kernels whose signatures a macro writes are not found, and
their error stays.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# The front end's layout errors a by-value kernel argument of a valid OpenCL C type can meet.
LAYOUT_ERRORS = (
    "a structure member must not be placed between the end of a structure or array",
    "scalar elements must be aligned to their size",
    "two-component vectors must be aligned to 2 times their element size",
    "three- and four-component vectors must be aligned to 4 times their element size",
    "vectors with a total size less than or equal to 16 bytes must be placed entirely",
    "vectors with a total size greater than 16 bytes must aligned to 16 bytes",
    "in a SSBO, arrays must be aligned to their element alignment",
    "in a SSBO, structs must be aligned to their largest element alignment",
)
MAX_ROUNDS = 8  # builds again at most this often (one type of argument found per failed build)
_ERROR = re.compile(r"^source:(\d+):(\d+): error: (.*)$", re.M)
_TOKEN = re.compile(r"""(?P<comment>//[^\n]*|/\*.*?\*/)
    |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    |(?P<ident>[A-Za-z_]\w*)
    |(?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
    |(?P<newline>\n)
    |(?P<space>[^\S\n]+)
    |(?P<punct>.)""", re.S | re.X)
_QUALIFIERS = {"const", "volatile", "__private", "private", "restrict", "__restrict"}


@dataclass
class _Param:
    start: int
    end: int
    tokens: list  # (kind, text, start)

    @property
    def by_value(self) -> bool:
        texts = [t for _, t, _ in self.tokens]
        return len(texts) >= 2 and not {"*", "[", "("} & set(texts) and self.tokens[-1][0] == "ident"

    @property
    def name(self) -> str:
        return self.tokens[-1][1]

    def type_key(self) -> str:
        """The parameter's type without its qualifiers, tokens joined by single spaces."""
        return " ".join(t for _, t, _ in self.tokens[:-1] if t not in _QUALIFIERS)


@dataclass
class _Kernel:
    name: str
    decl_start: int         # where its declaration begins (a typedef may go there)
    params: list[_Param]
    body: int | None        # position of its body's "{", None for a prototype


@dataclass
class Rewrite:
    """A source with some parameter types passed as bytes, and what the reflection must say."""
    source: bytes
    names: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)  # (kernel, ordinal) -> (name, type)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """Tokens outside comments, strings and preprocessor lines: (kind, text, position)."""
    out, line_start, directive = [], True, False
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "newline":
            if directive and text[max(m.start() - 2, 0):m.start()].rstrip("\r")[-1:] != "\\":
                directive = False
            line_start = True
            continue
        if kind in ("space", "comment"):
            continue
        if line_start and m.group() == "#":
            directive = True
        line_start = False
        if not directive and kind != "string":
            out.append((kind, m.group(), m.start()))
    return out


def _matching(toks: list, i: int) -> int:
    """Index of the bracket closing the one at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j][1]
        depth += t in "([{"
        depth -= t in ")]}"
        if depth == 0:
            return j
    return len(toks) - 1


def _skip_attributes(toks: list, j: int) -> int:
    while j < len(toks) and toks[j][1] == "__attribute__" and j + 1 < len(toks) and toks[j + 1][1] == "(":
        j = _matching(toks, j + 1) + 1
    return j


def _kernels(text: str) -> list[_Kernel]:
    toks = _tokens(text)
    out, depth, decl_start, i = [], 0, 0, 0
    while i < len(toks):
        kind, t, pos = toks[i]
        if t in "{}" and kind == "punct":
            depth += 1 if t == "{" else -1
            if depth == 0:
                decl_start = pos + 1
        elif t == ";" and depth == 0:
            decl_start = pos + 1
        elif depth == 0 and t in ("kernel", "__kernel"):
            j, name = i + 1, None
            while j < len(toks) and toks[j][1] not in ("(", ";", "{", "}"):
                if toks[j][1] == "__attribute__":
                    j = _skip_attributes(toks, j)
                    continue
                name = toks[j][1] if toks[j][0] == "ident" else name
                j += 1
            if j >= len(toks) or toks[j][1] != "(" or name is None:
                i = j
                continue
            close = _matching(toks, j)
            params, begin, level = [], j + 1, 0
            for k in range(j + 1, close + 1):
                tk = toks[k][1]
                if tk in "([{" and toks[k][0] == "punct":
                    level += 1
                elif tk in ")]}" and toks[k][0] == "punct" and k != close:
                    level -= 1
                if (tk == "," and level == 0) or k == close:
                    span = toks[begin:k]
                    if span:
                        last = span[-1]
                        params.append(_Param(span[0][2], last[2] + len(last[1]), span))
                    begin = k + 1
            after = _skip_attributes(toks, close + 1)
            body = toks[after][2] if after < len(toks) and toks[after][1] == "{" else None
            first = _first_token_at(toks, decl_start)
            out.append(_Kernel(name, first, params, body))
            i = close + 1
            continue
        i += 1
    return out


def _first_token_at(toks: list, start: int) -> int:
    return next((pos for _, _, pos in toks if pos >= start), start)


def refused_types(source: bytes, log: str, line_offsets: tuple[int, ...] = (0,)) -> set[str]:
    """Type keys of the kernel parameters the log's layout errors point at. `line_offsets`: lines
    the compiler saw before the source's first (clspv reports physical lines, and the prelude
    comes first); an error counts where it falls exactly at the start of a by-value parameter."""
    text = source.decode("latin-1")
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    at = set()
    for m in _ERROR.finditer(log):
        if not m.group(3).startswith(LAYOUT_ERRORS):
            continue
        line, column = int(m.group(1)), int(m.group(2))
        for offset in line_offsets:
            if 0 < line - offset <= len(line_starts):
                at.add(line_starts[line - offset - 1] + column - 1)
    return {p.type_key() for kernel in _kernels(text) for p in kernel.params if p.by_value and p.start in at}


def pass_as_bytes(source: bytes, type_keys: set[str]) -> Rewrite:
    """The source with every by-value kernel parameter whose type is one of `type_keys` passed
    as bytes (see the module's docstring)."""
    text = source.decode("latin-1")
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    typedefs: dict[str, str] = {}
    out = Rewrite(source)
    serial = 0
    for kernel in _kernels(text):
        prologue = []
        for ordinal, p in enumerate(kernel.params):
            key = p.type_key()
            if not p.by_value or key not in type_keys:
                continue
            if key not in typedefs:
                typedefs[key] = f"__vkcl_bytes_{len(typedefs)}"
                edits.append((kernel.decl_start, kernel.decl_start,
                              f"typedef struct __attribute__((aligned(__alignof__({key})))) "
                              f"{{ uchar b[sizeof({key})]; }} {typedefs[key]}; "))
            qualifiers = " ".join(t for _, t, _ in p.tokens[:-1] if t in ("const", "volatile"))
            arg = f"__vkcl_arg_{serial}"
            serial += 1
            newlines = text.count("\n", p.start, p.end)
            edits.append((p.start, p.end, f"{qualifiers} {typedefs[key]} {arg}".strip() + "\n" * newlines))
            prologue.append(f" {key} {p.name}; __builtin_memcpy(&{p.name}, &{arg}, sizeof({key}));")
            out.names[(kernel.name, ordinal)] = (p.name, key)
        if prologue and kernel.body is not None:
            edits.append((kernel.body + 1, kernel.body + 1, "".join(prologue)))
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + new + text[end:]
    out.source = text.encode("latin-1")
    return out


def restore_names(reflection, names: dict[tuple[str, int], tuple[str, str]]) -> None:
    """Give the rewritten parameters their own names and type names again in the reflection."""
    for (kernel, ordinal), (name, type_name) in names.items():
        k = reflection.kernels.get(kernel)
        if k is not None and ordinal < len(k.args):
            k.args[ordinal].name, k.args[ordinal].type_name = name, type_name
