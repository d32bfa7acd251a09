"""`__local` arrays of packed structs, and of structs viewed through narrower pointers, as arrays
of words (LLVM IR, before clspv's passes).

pyopencl's scans on a GPU keep `struct __attribute__((packed)) { double value; int dummy; }` in
a `__local` array (12 bytes: its bank-conflict padding) and write their results out 32 bits at a
time, through `(__local int *) &ldata[i][j].value` indexed by 0 and 1. clspv (pyclspv 0.0.1)
keeps the array typed as structs and folds such an int index into the struct's units: an offset
of 4 bytes in a 12-byte element came out as element `4 / 12`, word 0 (SimplifyPointerBitcastPass:
"the math used to calculate the index is (1 / 12) which loses resolution", clspv issue 1113), and
the high word of every double read as its low word; pyopencl's float64 cumsum gave zeros. A
`(__local char *)` offset fared no better (bytes taken for words), with or without
`-rewrite-packed-structs`. Only pointer arithmetic whose unit is no larger than every unit the
program indexes by came out right.

So a `__local` global whose type holds a packed struct, and whose members all lie at multiples
of 4 bytes, becomes `[N x i32]`, and every `getelementptr` rooted at it (instructions, constant
expressions, chains of them) becomes one `getelementptr i32` from the global with the word index
worked out here (the GEP's own arithmetic: the first index times its type's size, the others
descending into arrays and struct members). clspv then indexes words only: a double is two
32-bit loads or stores, a member or int pointer anywhere lands on its own word. A global some GEP
of which cannot be expressed in words (a byte offset not known to be a multiple of 4), or through
which a struct or array is loaded or stored whole (clspv looped for ever on a struct loaded from
words), is left as it is. The other uses of the global and its pointers (loads, stores, pointers kept in variables)
are unchanged: they hold the same addresses.

An array of unpacked structs is taken too where a GEP of a scalar type indexes into it from a
place whose first scalar is wider: `((local int *)&l[i].v)[1]` for the double `v` of `struct {
double v; int d; }` crashed clspv (SIGSEGV); as words it is right.

So is a `__local` struct holding an array (_array_in_struct), whose members each start a word of their
own (_own_words: a `bool` or `char` member then padding is taken, a `char` array is not).
Rodinia's dwt2d keeps `struct { int SIZE_X, ...; int data[2182]; }` in a `__local` struct and
reads `buffer->data[prev + i * buffer->SIZE_X + get_local_id(0)]` in a loop: clspv's
optimizations split that into a word GEP from the array's place, by the local id, hoisted out of
the loop, and one in the loop by the rest; SimplifyPointerBitcastPass then folded the pair into
an index of whole structs (`fdwt53[rest].WIN_SIZE_X`: the hoisted part divided by the struct's
2,199 words, and dropped), and llvmpipe's code read 68 structs past the variable (SIGSEGV).
"""
from __future__ import annotations

import re
from math import gcd

from vkcl.compiler.llvm_types import Module, ParseError, Reader, Type, gep_operands, matching_paren

_LOCAL_GLOBAL = re.compile(r'^(@(?:[-\w.$]+|"[^"]*")) = ((?:[a-z_]+ )*)addrspace\(3\) global (.*)$')
_GEP_INST = re.compile(r'^(\s*)(%(?:[-\w.$]+|"[^"]*")) = getelementptr ((?:(?:inbounds|nuw|nusw)\s+)*)(.*)$')
_GEP_CONST = re.compile(r'getelementptr ((?:(?:inbounds|nuw|nusw|inrange\([^)]*\))\s+)*)\(')
_NAMED_TYPE_LINE = re.compile(r'^(?:%(?:[-\w.$]+|"[^"]*")) = type ')
_STORE_LOCAL_PTR = re.compile(r'^\s*store ptr addrspace\(3\) (%(?:[-\w.$]+|"[^"]*")|[^%\s,]+), ptr (%(?:[-\w.$]+|"[^"]*"))[,\s]')
_LOAD_LOCAL_PTR = re.compile(r'^\s*(%(?:[-\w.$]+|"[^"]*")) = load ptr addrspace\(3\), ptr (%(?:[-\w.$]+|"[^"]*"))[,\s]')
_INDEX = re.compile(r'^(i\d+) (-?\d+|%(?:[-\w.$]+|"[^"]*"))$')
_BASE = re.compile(r'^ptr addrspace\(3\) (.*)$', re.S)
_AGGREGATE_ACCESS = re.compile(r'(?:= load (?:volatile )?|^\s*store (?:volatile )?)(?:%[-\w.$"]+|\{|<\{|\[)[^=]*?, '
                               r'ptr addrspace\(3\) (?:([%@](?:[-\w.$]+|"[^"]*"))|getelementptr inbounds \(i32, '
                               r'ptr addrspace\(3\) (@(?:[-\w.$]+|"[^"]*")), i64 \d+\))(?:,|$)')
_BASE_NAME = re.compile(r'^[^(]*?, ptr(?: addrspace\(\d+\))? ([%@](?:[-\w.$]+|"[^"]*"))[,\s]')
_WORD = 4
# A `__local` load or store of a char or short (scalar or vector).
_NARROW_LOCAL_ACCESS = re.compile(r'(?:= load (?:volatile )?|^\s*store (?:volatile )?)(?:<\d+ x )?i(?:8|16)\b[^\n]*'
                                  r'ptr addrspace\(3\)', re.M)
# A `__local` global whose type is or holds a named struct: the quick test for _array_in_struct.
_LOCAL_STRUCT_HINT = re.compile(r'^@\S+ = (?:[a-z_]+ )*addrspace\(3\) global (?:\[\d+ x )*%', re.M)
# A GEP of a scalar type narrower than a double on a local pointer: the quick test for _viewed_narrower.
_NARROW_HINT = re.compile(r'= getelementptr (?:(?:inbounds|nuw|nusw) )*(?:i8|i16|i32|half|bfloat|float), '
                          r'ptr addrspace\(3\) [%@]')


class _NotWords(Exception):
    """A GEP on a global that cannot be written in words: that global is left as it is."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def rewrite(ir: str) -> str | None:
    """The IR with its `__local` arrays of packed structs, and of structs viewed through narrower
    pointers, indexed as words, or None when it has none."""
    if "addrspace(3) global" not in ir or ("<{" not in ir and not _NARROW_HINT.search(ir)
                                           and not _LOCAL_STRUCT_HINT.search(ir)):
        return None
    module = Module(ir)
    candidates = _candidates(ir, module)
    while candidates:
        try:
            return _rewrite(ir, module, candidates)
        except _NotWords as e:
            del candidates[e.name]
    return None


def uses_packed(ir: str) -> bool:
    """Whether an instruction, global or declaration of the IR names a packed struct type (written
    `<{ }>`, or a named type holding one): what clspv's `-rewrite-packed-structs` is for. A packed
    struct whose layout is its natural one is written `{ }` by clang; one held only in `__local`
    arrays that rewrite() turned into words is left named by its type definition alone."""
    if "<{" not in ir:
        return False
    module = Module(ir)
    names = [name for name, t in module.named.items() if has_packed(module, t)]
    mention = re.compile("|".join([r"<\{", *(re.escape(n) + r"(?![-\w.$])" for n in names)]))
    for line in ir.splitlines():
        if line.startswith((";", "!")) or _NAMED_TYPE_LINE.match(line):
            continue
        if mention.search(line):
            return True
    return False


def _candidates(ir: str, module: Module) -> dict[str, Type]:
    """`__local` globals whose scalars all lie on words and that hold a packed struct, or a struct
    into which a narrower pointer indexes (_viewed_narrower): name -> type."""
    out, others = {}, {}
    for line in ir.splitlines():
        if not line.startswith("@"):
            continue
        m = _LOCAL_GLOBAL.match(line)
        if not m:
            continue
        try:
            t = Reader(m.group(3)).type()
            uninitialized = re.match(r'\s*(?:undef|poison)\b', m.group(3)[len(t.text):])
            if not uninitialized:
                continue
            whole_words = _unit(module, t, 0) % _WORD == 0  # no scalar narrower than a word, none astride
            if whole_words and module.size(t) % _WORD == 0:
                if has_packed(module, t):
                    out[m.group(1)] = t
                    continue
                if _holds_struct(module, t):
                    others[m.group(1)] = t
            if module.resolve(t).kind == "struct" and _array_in_struct(module, t) and _own_words(module, t) \
                    and (whole_words or not _NARROW_LOCAL_ACCESS.search(ir)):
                # One struct, as dwt2d's: arrays of such structs (pyopencl's layouts in
                # test_structs, copied whole into them) made clspv loop as words, and so did a
                # `char` or `short` member read from words and copied out; such a member that
                # no `__local` access of its width reaches is taken (dwt2d's unused `bool`s).
                out[m.group(1)] = t
        except ParseError:
            continue
    if others and _NARROW_HINT.search(ir):
        out.update((name, others[name]) for name in _viewed_narrower(ir, module, others))
    return out


def _holds_struct(module: Module, t: Type, depth: int = 0) -> bool:
    t = module.resolve(t)
    if t.kind == "array" and depth < 32:
        return _holds_struct(module, t.elem, depth + 1)
    return t.kind == "struct"


def _array_in_struct(module: Module, t: Type, inside: bool = False, depth: int = 0) -> bool:
    """Whether a struct in `t` has an array member (at any depth)."""
    t = module.resolve(t)
    if depth > 32:
        return False
    if t.kind == "array":
        return inside or _array_in_struct(module, t.elem, False, depth + 1)
    if t.kind == "struct":
        return any(_array_in_struct(module, f, True, depth + 1) for f in t.fields)
    return False


def _own_words(module: Module, t: Type, depth: int = 0) -> bool:
    """Whether every scalar of `t` starts a word that holds no other scalar, and `t` fills whole
    words: as words its scalars then stay apart (a narrower one is read and written in its own
    word, never merged with a neighbour another work-item writes)."""
    t = module.resolve(t)
    if depth > 32:
        return False
    if t.kind in ("int", "float", "ptr"):
        return True
    try:
        size = module.size(t)
        if size % _WORD:
            return False
        if t.kind in ("array", "vector"):
            elem = module.resolve(t.elem)
            if elem.kind in ("int", "float", "ptr"):
                return module.size(elem) % _WORD == 0
            return _own_words(module, elem, depth + 1)
        if t.kind == "struct":
            if t.packed:
                return False
            for f, offset in zip(t.fields, module.offsets(t)):
                f = module.resolve(f)
                if offset % _WORD:
                    return False
                if f.kind not in ("int", "float", "ptr") and not _own_words(module, f, depth + 1):
                    return False
            return True
    except ParseError:
        return False
    return False


def _viewed_narrower(ir: str, module: Module, globals_: dict[str, Type]) -> set[str]:
    """Those of `globals_` into which a GEP of a scalar type indexes from a place whose first
    scalar is wider: `((local int *)&l[i].v)[1]` for a double `v` (clspv crashed on these), also
    through a pointer variable every store to which gives it the same place (`local int *p =
    (local int *)&l[i].v; p[1]`: pyopencl's scans store their results so; clspv read the odd
    words as the even ones)."""
    out: set[str] = set()
    for body in _function_bodies(ir):
        given: dict[str, list[str]] = {}  # pointer variable -> the values stored to it
        for line in body:
            if line.lstrip().startswith("store ptr addrspace(3) ") and (m := _STORE_LOCAL_PTR.match(line)):
                given.setdefault(m.group(2), []).append(m.group(1))
        places: dict[str, tuple[str, Type | None]] = {}  # GEPs rooted at them: (global, type there)
        for last in (False, False, True):  # a variable may be loaded above the store that gives it (a loop)
            variables = {var: found.pop() for var, values in given.items()
                         if len(found := {places.get(v) for v in values}) == 1 and None not in found}
            for line in body:
                if "getelementptr" in line and "addrspace(3)" in line and (m := _GEP_INST.match(line)):
                    place = _gep_place(_split_metadata(m.group(4))[0], module, globals_, places)
                    if place is not None:
                        places[m.group(2)] = place[:2]
                        if last and place[2]:
                            out.add(place[0])
                elif "= load ptr addrspace(3), ptr " in line and (m := _LOAD_LOCAL_PTR.match(line)):
                    if m.group(2) in variables:
                        places[m.group(1)] = variables[m.group(2)]
    return out


def _function_bodies(ir: str):
    body = None
    for line in ir.splitlines():
        if line.startswith("define "):
            body = []
        elif body is not None:
            if line.startswith("}"):
                yield body
                body = None
            else:
                body.append(line)


def _gep_place(body: str, module: Module, globals_, places) -> tuple[str, Type | None, bool] | None:
    """For a GEP's `T, ptr addrspace(3) base, indices` rooted at one of `globals_`: the global,
    the type it points to, and whether T is a scalar narrower than the first scalar at the base,
    or a scalar stepped through from a place in a struct."""
    gep = _gep_parts(body)
    if gep is None:
        return None
    t, parts, base_text = gep
    if base_text in globals_:
        root, at = base_text, globals_[base_text]
    elif base_text in places:
        root, at = places[base_text]
    elif (inner := _GEP_CONST.match(base_text)) and base_text.endswith(")"):
        found = _gep_place(base_text[inner.end():-1], module, globals_, places)
        if found is None:
            return None
        root, at = found[:2]
    else:
        return None
    result: Type | None = t
    for index in parts[3:]:
        value = _INDEX.match(index.strip())
        constant = value is not None and not value.group(2).startswith("%")
        result = module.indexed(result, int(value.group(2)) if constant else None) if result else None
    first = at
    while first is not None and module.resolve(first).kind in ("struct", "array", "vector"):
        first = module.first_member(first)
    kind = module.resolve(t).kind
    try:
        narrower = first is not None and kind in ("int", "float") and module.size(t) < module.size(first)
    except ParseError:
        narrower = False
    # Pointer arithmetic in scalars from a place in a struct (`((local int *)&l[i].v)[rem]` for a
    # `struct { float x, y; } v`) steps over its members: clspv wrote an OpPtrAccessChain from a
    # pointer to member x, which Vulkan's logical addressing does not define (only from an array
    # element); lavapipe stepped to y, NVIDIA's driver read zeros. Through words it is an index.
    first_index = _INDEX.match(parts[2].strip()) if len(parts) == 3 else None
    steps = (kind in ("int", "float") and first_index is not None and first_index.group(2) != "0"
             and at is not None and module.resolve(at).kind == "struct")
    return root, result, narrower or steps


def has_packed(module: Module, t: Type, depth: int = 0) -> bool:
    t = module.resolve(t)
    if depth > 32:
        return False
    if t.kind == "struct":
        return t.packed or any(has_packed(module, f, depth + 1) for f in t.fields)
    if t.kind == "array":
        return has_packed(module, t.elem, depth + 1)
    return False


def _unit(module: Module, t: Type, offset: int) -> int:
    """The largest power of two up to 4 dividing every scalar's offset and size in `t` (at
    `offset`) and its size: the unit it can be indexed in."""
    t = module.resolve(t)
    g = gcd(offset, module.size(t))
    if t.kind == "struct":
        for f, o in zip(t.fields, module.offsets(t)):
            g = gcd(g, _unit(module, f, offset + o))
    elif t.kind in ("array", "vector") and t.count:
        g = gcd(g, _unit(module, t.elem, offset))
    elif t.kind not in ("int", "float", "ptr"):
        raise ParseError("a type without layout")
    return gcd(g, _WORD) if g else _WORD


def _rewrite(ir: str, module: Module, globals_: dict[str, Type]) -> str:
    out, serial = [], [0]
    words: dict[str, tuple[str, str | int]] = {}  # this function's rewritten GEPs -> (global, word index)
    unrooted: set[str] = set()  # the bases of this function's GEPs left as they are
    whole: set[str] = set()  # the pointers this function loads or stores aggregates through
    for line in ir.splitlines():
        if line.startswith("define "):
            words, unrooted, whole = {}, set(), set()
        elif line.startswith("}"):
            for name in unrooted & words.keys():
                # a GEP written before the one its base is (blocks out of order): not followed
                raise _NotWords(words[name][0])
            for name in whole:
                # a struct or array copied whole (struct_copies' typed copies): clspv looped
                # for ever on a struct loaded from words, so the global keeps its type
                raise _NotWords(words[name][0] if name in words else name)
        if "addrspace(3)" in line and (m := _AGGREGATE_ACCESS.search(line)):
            name = m.group(1) or m.group(2)
            if name in words or name in globals_:
                whole.add(name)
        if line.startswith("@") and (m := _LOCAL_GLOBAL.match(line)) and m.group(1) in globals_:
            t = globals_[m.group(1)]
            rest = m.group(3)[len(t.text):]
            rest = re.sub(r", align \d+", f", align {_WORD}", rest) if ", align " in rest else rest
            out.append(f"{m.group(1)} = {m.group(2)}addrspace(3) global [{module.size(t) // _WORD} x i32]{rest}")
            continue
        if "getelementptr" not in line:
            out.append(line)
            continue
        line = _constant_geps(line, module, globals_)
        inst = _GEP_INST.match(line)
        if inst:
            new = _instruction(inst, module, globals_, words, serial, unrooted)
            if new is not None:
                out.extend(new)
                continue
        out.append(line)
    return "\n".join(out) + "\n"


def _instruction(m, module: Module, globals_, words, serial, unrooted: set) -> list[str] | None:
    """A GEP instruction rooted at one of `globals_` as arithmetic and one word GEP (None: not rooted)."""
    indent, name, body = m.group(1), m.group(2), m.group(4)
    quick = _BASE_NAME.search(body)  # most GEPs are not on these globals: seen without parsing
    if quick and quick.group(1) not in globals_ and quick.group(1) not in words:
        unrooted.add(quick.group(1))
        return None
    body, tail = _split_metadata(body)
    gep = _gep_parts(body)
    if gep is None:
        return None
    t, parts, base_text = gep
    root, start = _root(base_text, globals_, words)
    if root is None:
        unrooted.add(base_text)
        return None
    lines: list[str] = []

    def fresh() -> str:
        serial[0] += 1
        return f"%__vkcl_word{serial[0]}"

    constant, terms = _offsets(module, t, [p.strip() for p in parts[2:]], root)
    if isinstance(start, int):
        constant += start * _WORD
    else:
        terms.append((start, "i64", _WORD))
    if constant % _WORD:
        raise _NotWords(root)
    total: str | int = constant // _WORD
    for value, ty, stride in terms:
        if stride % _WORD:
            raise _NotWords(root)
        if ty != "i64":
            wide = fresh()
            lines.append(f"{indent}{wide} = sext {ty} {value} to i64")
            value = wide
        if stride != _WORD:
            scaled = fresh()
            lines.append(f"{indent}{scaled} = mul i64 {value}, {stride // _WORD}")
            value = scaled
        if total == 0:
            total = value
        else:
            summed = fresh()
            lines.append(f"{indent}{summed} = add i64 {value}, {total}")
            total = summed
    words[name] = (root, total)
    lines.append(f"{indent}{name} = getelementptr inbounds i32, ptr addrspace(3) {root}, i64 {total}{tail}")
    return lines


def _root(base: str, globals_, words) -> tuple[str | None, str | int]:
    """The global a GEP's base is rooted at and the base's word index (None: not rooted)."""
    if base in globals_:
        return base, 0
    if base in words:
        return words[base]
    m = re.fullmatch(r'getelementptr inbounds \(i32, ptr addrspace\(3\) (@\S+), i64 (\d+)\)', base)
    if m and m.group(1) in globals_:
        return m.group(1), int(m.group(2))
    return None, 0


def _offsets(module: Module, t: Type, indices: list[str], root: str) -> tuple[int, list[tuple[str, str, int]]]:
    """A GEP's byte offset as a constant and (value, its type, bytes per unit) terms."""
    constant, terms = 0, []
    current = t
    for k, text in enumerate(indices):
        m = _INDEX.match(text)
        if not m:
            raise _NotWords(root)
        ty, value = m.group(1), m.group(2)
        try:
            if k == 0:
                stride, next_t = module.size(current), current
            else:
                resolved = module.resolve(current)
                if resolved.kind == "struct":
                    if value.startswith("%"):
                        raise _NotWords(root)
                    field = int(value)
                    constant += module.offsets(resolved)[field]
                    current = resolved.fields[field]
                    continue
                if resolved.kind not in ("array", "vector"):
                    raise _NotWords(root)
                stride, next_t = module.size(resolved.elem), resolved.elem
        except (ParseError, IndexError):
            raise _NotWords(root) from None
        if value.startswith("%"):
            terms.append((value, ty, stride))
        else:
            constant += int(value) * stride
        current = next_t
    return constant, terms


def _constant_geps(line: str, module: Module, globals_) -> str:
    """`line` with its constant-expression GEPs rooted at `globals_` as word GEPs (innermost first)."""
    pos = 0
    while True:
        m = _GEP_CONST.search(line, pos)
        if not m:
            return line
        close = matching_paren(line, m.end() - 1)
        if close < 0:
            return line
        inner = _constant_geps(line[m.end():close], module, globals_)
        new = _constant_gep(inner, module, globals_)
        if new is None:
            line = line[:m.end()] + inner + line[close:]
            pos = m.end() + len(inner)
        else:
            line = line[:m.start()] + new + line[close + 1:]
            pos = m.start() + len(new)


def _constant_gep(inner: str, module: Module, globals_) -> str | None:
    gep = _gep_parts(inner)
    if gep is None:
        return None
    t, parts, base_text = gep
    root, start = _root(base_text, globals_, {})
    if root is None:
        return None
    constant, terms = _offsets(module, t, [p.strip() for p in parts[2:]], root)
    constant += start * _WORD
    if terms or constant % _WORD:
        raise _NotWords(root)
    return f"getelementptr inbounds (i32, ptr addrspace(3) {root}, i64 {constant // _WORD})"


def _gep_parts(body: str) -> tuple[Type, list[str], str] | None:
    """A GEP's `T, ptr addrspace(3) base, indices...`: T, its operands after T (the first empty)
    and the base (None: not a GEP on a local pointer)."""
    gep = gep_operands(body)
    if gep is None or len(gep[1]) < 3:
        return None
    t, parts = gep
    base = _BASE.match(parts[1].strip())
    return (t, parts, base.group(1).strip()) if base else None


def _split_metadata(body: str) -> tuple[str, str]:
    """An instruction's operands and its trailing `, !kind !n` attachments."""
    m = re.search(r'(,\s*![-\w.]+\s+!.*)$', body)
    return (body[:m.start()], m.group(1)) if m else (body, "")
