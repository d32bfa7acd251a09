"""Aggregate copies through local or private memory as typed loads and stores (LLVM IR, before
clspv's passes).

clang writes every struct assignment (`l[i] = b[i]`, `S s = l[j]`, a struct returned by value)
as `llvm.memcpy`. clspv (pyclspv 0.0.1) miscompiles such copies where one side is `__local` or
private:
- 8 bytes (`struct { float x, y; }`): LLVM's InstCombine turns the copy into an i64 load and
  store; clspv splits the i64 into the struct's floats and folds an i64 index into a struct index
  (`getelementptr [64 x %T], @l, 0, 1, i64 1`), which its SPIR-V writer dies on (SIGSEGV).
- where the two sides' types differ (a wrapper struct and its member: pyopencl's scans keep
  `struct { scan_t value; }` in local memory and copy `.value`), clspv's pointer-cast repair
  treats the memcpy as a cast, reaches `llvm_unreachable` in `PointerOperandNum`, and in its
  release build loops for ever printing "Instruction: call void @llvm.memcpy.p0.p3..." (vkcl's
  compile timeout then ended the build after 120 s).
- a struct with padding copied between global and private memory (`T t = in[i]; out[j] = t;`
  for `struct { char c; int i; double d; short s; }`): invalid SPIR-V (an OpPtrAccessChain past
  a byte; an OpStore of a mistyped value), which lavapipe crashed on or refused to run. (Such
  copies of structs without padding into a private array's element clspv compiles right at an
  index it does not fold, and typed they came out as float pointer arithmetic in Function
  memory, which Vulkan does not allow: they stay memcpys.)
A typed copy, `load %T` then `store %T`, is what clspv compiles right (LLVM splits it into one
load and store per member). So for a program that declares a struct or union, vkcl has clspv
write the front end's IR as text (`--output-format=ll`, before any of its passes; ~2 ms for a
small kernel), rewrites those memcpys here, and has clspv compile the IR (`-x ir`; unchanged IR
gives the same SPIR-V as the source).

The copy's type comes from the pointers' definitions in the IR: an alloca, a global, or a typed
`getelementptr` (instruction or constant expression). clang folds leading zero indices, so a
side may name an enclosing aggregate (`[9 x %W]` for `l[1][0].v`); the copy uses the first type
both sides reach through members at offset 0 whose size is the copy's. A memcpy whose sides give
no such type, or whose size is not a constant, is left as it is.

Some copies go member by member instead (one load and store per scalar or vector, each through
a GEP of the copy's type; _by_members). Copies between global and local memory, and between
global or local memory and a private variable of the copy's type: at an index LLVM folds into
bytes (`T t = in[n + i - 1]; out[i] = t;`) clspv gave SPIR-V that lavapipe crashed on (a -1
element index written as 2^31 - 1: `struct { double a[2]; }`, `half h[3]`, `float3` beside an
int) or looped for ever (a `double2` member, padded structs, a union of a struct and a
`double2`); and once global-to-local copies went member by member, a local-to-private copy
typed whole read a struct whose first member is an array from the wrong words. Copies between
two buffers, where LLVM folds an index such as
`in[n + i - 1]` into a byte offset and clspv's memcpy lowering then punned the struct through
integers (a 16-byte wrapper, pyopencl's `cdouble_t`, became an i128 with an invalid constant that
lavapipe refused; other shapes came out wrong or crashed), and, in a module with a `__local`
array holding a packed struct, the copies with a local side, so that packed_locals can index the
array as words (a whole copy stops it; clspv then read narrower views of it wrong).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from vkcl.compiler.llvm_types import (Module, ParseError, Type, Reader, alignment_at, gep_operands, matching_paren,
                                      pointer_type, split_operands, type_key)
from vkcl.compiler import private_elements
from vkcl.compiler.packed_locals import has_packed
from vkcl.compiler.prelude import includes

_LOCAL, _PRIVATE, _GLOBAL_SPACE = 3, 0, 1
_NAME = r'(?:%|@)(?:[-\w.$]+|"[^"]*")'
_DEF = re.compile(rf'^\s*(%(?:[-\w.$]+|"[^"]*")) = (alloca|getelementptr) (.*)$')
_GLOBAL = re.compile(rf'^(@(?:[-\w.$]+|"[^"]*")) = [^=]*?\b(?:global|constant) (.*)$')
_CALL = re.compile(r'^(\s*)(?:(?:tail|musttail|notail) )?call void @llvm\.memcpy\.p(\d+)\.p(\d+)\.i(?:32|64)\(')
_ATTR = re.compile(r'^(?:align (\d+)|dereferenceable(?:_or_null)?\(\d+\)|captures\([^)]*\)|noundef|nonnull|'
                   r'noalias|nocapture|readonly|writeonly|nofree)\s+')
_GEP_FLAGS = re.compile(r'^(?:(?:inbounds|nuw|nusw|inrange\([^)]*\))\s+)*')
_INT = re.compile(r'^i\d+ (-?\d+)$')
_CANDIDATE = re.compile(r'call void @llvm\.memcpy\.p(?:[03]\.p\d+|\d+\.p[03]|1\.p1)\.i')


@dataclass
class _Operand:
    space: int
    align: int
    value: str  # as written: %x, @g, getelementptr (...)


def rewrite(ir: str) -> str | None:
    """The IR with its aggregate copies to or from local or private memory, or between buffers,
    rewritten, or None when it has none."""
    if _CANDIDATE.search(ir) is None:  # most IR has none: found without reading it line by line
        return None
    module = Module(ir)
    globals_ = {}  # name -> its type's text; pointees: name -> (kind, text), typed when a copy asks
    for line in ir.splitlines():
        if line.startswith("@"):
            m = _GLOBAL.match(line)
            if m:
                globals_[m.group(1)] = ("alloca", m.group(2))
    packed_local = "<{" in ir and _packed_local(module, ir)
    out, changed, serial, pointees = [], False, 0, {}
    for line in ir.splitlines():
        if line.startswith("define "):
            pointees = _byval_parameters(line)
        elif "= alloca " in line or "= getelementptr " in line:
            m = _DEF.match(line)
            if m:
                pointees[m.group(1)] = (m.group(2), m.group(3))
        new = None
        if "@llvm.memcpy.p" in line:
            call = _CALL.match(line)
            if call and _needs_rewrite(int(call.group(2)), int(call.group(3))):
                new = _typed_copy(module, line, call, globals_, pointees, serial, packed_local)
        if new is None:
            out.append(line)
        else:
            out.extend(new)
            serial += 1
            changed = True
    return "\n".join(out) + "\n" if changed else None


def _needs_rewrite(dst_space: int, src_space: int) -> bool:
    return (_LOCAL in (dst_space, src_space) or _PRIVATE in (dst_space, src_space)
            or dst_space == src_space == _GLOBAL_SPACE)


def _typed_copy(module: Module, line: str, call, globals_, pointees, serial: int,
                packed_local: bool = False) -> list[str] | None:
    open_at = call.end() - 1
    close_at = matching_paren(line, open_at)
    if close_at < 0:
        return None
    args = split_operands(line[open_at + 1:close_at])
    if len(args) != 4:
        return None
    dst, src = _operand(args[0]), _operand(args[1])
    size, volatile = _INT.match(args[2].strip()), args[3].strip()
    if dst is None or src is None or size is None or volatile not in ("i1 false", "i1 true"):
        return None
    n = int(size.group(1))
    dst_t, src_t = (_pointee(o.value, module, globals_, pointees) for o in (dst, src))
    chosen = _common_type(module, dst_t, src_t, n)
    if chosen is None:
        return None
    copy_t, dst_depth, src_depth = chosen
    indent, name = call.group(1), f"%__vkcl_copy{serial}"
    if volatile == "i1 false":
        by_elements = _element_copy(module, indent, name, copy_t, (src, src_t, src_depth), (dst, dst_t, dst_depth),
                                    pointees)
        if by_elements is not None:
            return by_elements
    between_buffers = dst.space == src.space == _GLOBAL_SPACE
    if _LOCAL not in (dst.space, src.space) and not between_buffers:
        if dst_t is None or src_t is None:
            return None  # a side whose type clspv infers from its uses: punning it could break more
    members = None
    if (_by_members(dst, src, dst_depth, src_depth, pointees, packed_local)
            or (dst.space == src.space == _PRIVATE and _holds_pointer(module, copy_t))):
        members = _members(module, copy_t)
    if members is None and (between_buffers or (dst.space != src.space and _LOCAL not in (dst.space, src.space)
                                                 and not _padded(module, copy_t))):
        # between buffers, and for a struct without padding between private and global or
        # constant memory, a copy typed whole went wrong or is not needed: the memcpy stays
        return None
    vol = "volatile " if volatile == "i1 true" else ""
    lines = []
    src_ptr = _member(lines, indent, f"{name}.src", src, src_t, src_depth)
    dst_ptr = _member(lines, indent, f"{name}.dst", dst, dst_t, dst_depth)
    if members is not None:
        _copy_members(lines, indent, name, copy_t, members, vol, (src, src_ptr), (dst, dst_ptr))
        return lines
    lines.append(f"{indent}{name} = load {vol}{copy_t.text}, {pointer_type(src.space)} {src_ptr}, align {src.align}")
    lines.append(f"{indent}store {vol}{copy_t.text} {name}, {pointer_type(dst.space)} {dst_ptr}, align {dst.align}")
    return lines


def _element_copy(module: Module, indent: str, name: str, copy_t: Type, src, dst, pointees) -> list[str] | None:
    """A copy into or out of a private array's element at a run-time index, as selects over
    its elements (private_elements), or None where neither side is one or the copy is not of
    the whole element."""
    elements = []
    for op, t, depth in (src, dst):
        e = private_elements.element(module, op.value, pointees) if op.space == _PRIVATE else None
        if e is not None and (depth != e.depth or type_key(e.elem) != type_key(copy_t)):
            if e.depth == 0:
                return None  # a part of an element: the copy stays as it was
            e = None  # a private array copied whole, or a part of its element 0: not an element copy
        elements.append(e)
    if not any(elements):
        return None
    members = _members(module, copy_t)
    if members is None:
        return None
    lines: list[str] = []
    ends = []
    for (op, t, depth), e, side in zip((src, dst), elements, ("src", "dst")):
        ptr = _member(lines, indent, f"{name}.{side}", op, t, depth) if e is None else None
        ends.append((op.space, op.align, ptr, e))
    if not private_elements.copy(lines, indent, name, module, copy_t, members, *ends):
        return None
    return lines


def _by_members(dst: _Operand, src: _Operand, dst_depth: int, src_depth: int, pointees, packed_local: bool) -> bool:
    """Whether a copy goes member by member: between buffers, between global and local memory,
    between global memory and a private variable of the copy's type (`T t = in[n + i - 1];
    out[i] = t;`), and, where a local array holds a packed struct, every copy with a local side.
    Not into or out of a private array's element: clspv wrote such member accesses as pointer
    arithmetic in Function memory, which Vulkan does not allow."""
    spaces = {dst.space, src.space}
    if dst.space == src.space == _GLOBAL_SPACE or spaces == {_LOCAL, _GLOBAL_SPACE}:
        return True
    if packed_local and _LOCAL in spaces:
        return True
    if spaces not in ({_PRIVATE, _GLOBAL_SPACE}, {_PRIVATE, _LOCAL}):
        return False
    private, depth = (dst, dst_depth) if dst.space == _PRIVATE else (src, src_depth)
    found = pointees.get(private.value)
    return depth == 0 and isinstance(found, tuple) and found[0] == "alloca"


def _holds_pointer(module: Module, t: Type | None, depth: int = 0) -> bool:
    """Whether a type holds a pointer. clspv copied a private struct holding one and a `ulong`
    typed whole with its members one byte off (CLSmith's structs of globals: `s1 = s2;` then
    `s1.d` read 0x700 for 7): such a copy goes member by member."""
    if t is None or depth > 8:
        return False
    if t.kind == "named":
        return _holds_pointer(module, module.named.get(t.name), depth + 1)
    if t.kind == "ptr":
        return True
    return any(_holds_pointer(module, f, depth + 1) for f in (*t.fields, *((t.elem,) if t.elem else ())))


def _packed_local(module: Module, ir: str) -> bool:
    """Whether a `__local` global of the module holds a packed struct (packed_locals then indexes
    it as words, which a copy of a struct, or of its member, typed whole would stop)."""
    for line in ir.splitlines():
        if line.startswith("@") and "addrspace(3) global " in line:
            try:
                if has_packed(module, Reader(line.split("addrspace(3) global ", 1)[1]).type()):
                    return True
            except ParseError:
                continue
    return False


def _copy_members(lines: list, indent: str, name: str, copy_t: Type, members, vol: str, src, dst) -> None:
    """The copy as one load and store per scalar or vector member, each through a typed GEP."""
    (src_op, src_ptr), (dst_op, dst_ptr) = src, dst
    for k, (path, t, offset) in enumerate(members):
        for side, op, ptr in (("s", src_op, src_ptr), ("d", dst_op, dst_ptr)):
            lines.append(f"{indent}{name}.{side}{k} = getelementptr inbounds {copy_t.text}, "
                         f"{pointer_type(op.space)} {ptr}, i32 0{path}")
        lines.append(f"{indent}{name}.v{k} = load {vol}{t.text}, {pointer_type(src_op.space)} {name}.s{k}, "
                     f"align {alignment_at(src_op.align, offset)}")
        lines.append(f"{indent}store {vol}{t.text} {name}.v{k}, {pointer_type(dst_op.space)} {name}.d{k}, "
                     f"align {alignment_at(dst_op.align, offset)}")


_MAX_MEMBERS = 64


def _members(module: Module, t: Type) -> list[tuple[str, Type, int]] | None:
    """(GEP indices after the leading 0, type, byte offset) of every scalar and vector in `t`;
    None for more than _MAX_MEMBERS of them, a type without layout, or a union some of whose
    bytes the type LLVM gave it leaves out (its other members may use them)."""
    out: list[tuple[str, Type, int]] = []

    def walk(t: Type, path: str, offset: int, depth: int) -> None:
        r = module.resolve(t)
        if len(out) > _MAX_MEMBERS or depth > 32:
            raise ParseError("too many members")
        if r.kind in ("int", "float", "ptr", "vector"):
            out.append((path, t, offset))
        elif r.kind == "struct":
            for i, (f, o) in enumerate(zip(r.fields, module.offsets(r))):
                walk(f, f"{path}, i32 {i}", offset + o, depth + 1)
        elif r.kind == "array":
            for i in range(r.count):
                walk(r.elem, f"{path}, i64 {i}", offset + i * module.size(r.elem), depth + 1)
        else:
            raise ParseError("a type without layout")
    try:
        walk(t, "", 0, 0)
        if len(out) > _MAX_MEMBERS or (_padded(module, t) and _has_union(module, t)):
            return None
    except ParseError:
        return None
    return out


def _has_union(module: Module, t: Type, depth: int = 0) -> bool:
    if t.kind == "named" and t.name.startswith(("%union.", '%"union.')):
        return True
    r = module.resolve(t)
    if r.kind == "struct":
        return depth > 32 or any(_has_union(module, f, depth + 1) for f in r.fields)
    if r.kind == "array":
        return depth > 32 or _has_union(module, r.elem, depth + 1)
    return False


def _member(lines: list, indent: str, name: str, op: _Operand, t: Type | None, depth: int) -> str:
    """A pointer to the member `depth` levels in at offset 0 (the operand itself for 0)."""
    if depth == 0:
        return op.value
    zeros = ", ".join(["i32 0"] * (depth + 1))
    lines.append(f"{indent}{name} = getelementptr inbounds {t.text}, {pointer_type(op.space)} {op.value}, {zeros}")
    return name


def _padded(module: Module, t: Type) -> bool:
    """Whether `t` has bytes no scalar of it covers (between members, at the end, in 3-vectors)."""
    try:
        return _scalar_bytes(module, t) < module.size(t)
    except ParseError:
        return True


def _scalar_bytes(module: Module, t: Type) -> int:
    t = module.resolve(t)
    if t.kind in ("int", "float", "ptr"):
        return module.size(t)
    if t.kind in ("array", "vector"):
        return t.count * _scalar_bytes(module, t.elem)
    if t.kind == "struct":
        return sum(_scalar_bytes(module, f) for f in t.fields)
    raise ParseError("a type without layout")


def _common_type(module: Module, dst_t, src_t, n: int):
    """(copy type, members in from dst's type, from src's type), or None."""
    dst_chain = _chain(module, dst_t, n) if dst_t else []
    src_chain = _chain(module, src_t, n) if src_t else []
    if (dst_t and not dst_chain) or (src_t and not src_chain):
        return None  # a side whose type has no member of the copy's size: not a struct assignment
    if dst_chain and src_chain:
        dst_keys = {type_key(t): depth for t, depth in dst_chain}
        for t, depth in src_chain:
            if type_key(t) in dst_keys:
                return t, dst_keys[type_key(t)], depth
        return None
    if dst_chain:
        t, depth = dst_chain[0]
        return t, depth, 0
    if src_chain:
        t, depth = src_chain[0]
        return t, 0, depth
    return None


def _chain(module: Module, t: Type, n: int) -> list[tuple[Type, int]]:
    """The types at offset 0 of `t` (itself, its first member, that one's...) of `n` bytes, each
    with how many members in it is."""
    out, depth = [], 0
    try:
        while t is not None and depth < 32:
            if module.resolve(t).kind == "opaque":
                break
            if module.size(t) == n:
                out.append((t, depth))
            elif module.size(t) < n:
                break
            t, depth = module.first_member(t), depth + 1
    except ParseError:
        return out
    return out


def _pointee(value: str, module: Module, globals_, pointees) -> Type | None:
    value = value.strip()
    if value.startswith("getelementptr"):
        body = _GEP_FLAGS.sub("", value[len("getelementptr"):].strip())
        if body.startswith("(") and body.endswith(")"):
            return _gep_type(module, body[1:-1])
        return None
    found = globals_.get(value) if value.startswith("@") else pointees.get(value)
    if found is None or isinstance(found, Type):
        return found
    kind, text = found
    return _leading_type(text) if kind == "alloca" else _gep_type(module, text)


def _gep_type(module: Module, text: str) -> Type | None:
    """The result element type of `getelementptr [flags] T, ptr base, idx...` (from its T on)."""
    gep = gep_operands(_GEP_FLAGS.sub("", text.strip()))
    if gep is None:
        return None  # `T,` must come first
    t, parts = gep
    for index in parts[3:]:  # parts: "", base, first index, then the indices that descend
        m = _INT.match(index.strip())
        t = module.indexed(t, int(m.group(1)) if m else None) if t is not None else None
        if t is None:
            return None
    return t


def _byval_parameters(define: str) -> dict:
    """The pointee types of a function's `byval(T)` parameters (structs passed by value)."""
    out = {}
    for m in re.finditer(r"byval\(", define):
        try:
            reader = Reader(define[m.end():])
            t = reader.type()
        except ParseError:
            continue
        name = re.match(r'\)[^,%]*(%(?:[-\w.$]+|"[^"]*"))', define[m.end() + reader.pos:])
        if name:
            out[name.group(1)] = t
    return out


def _leading_type(text: str) -> Type | None:
    try:
        return Reader(text).type()
    except ParseError:
        return None


def _operand(text: str) -> _Operand | None:
    text = text.strip()
    m = re.match(r'^ptr(?: addrspace\((\d+)\))?\s+', text)
    if not m:
        return None
    space, rest, align = int(m.group(1) or 0), text[m.end():], 1
    while True:
        a = _ATTR.match(rest)
        if not a:
            break
        if a.group(1):
            align = int(a.group(1))
        rest = rest[a.end():]
    if not re.match(rf'^(?:{_NAME}|getelementptr\b)', rest):
        return None
    return _Operand(space, align, rest.strip())


_WORD = re.compile(rb"\b(?:struct|union)\b")


def may_copy(source: bytes, include_dirs=(), headers: dict | None = None) -> bool:
    """Whether the program (with the headers it includes) declares a struct or union: only then
    can its IR hold an aggregate copy."""
    return includes.mentions(_WORD, source, include_dirs, headers)


_PACKED = re.compile(rb"__attribute__\s*\(\([^()]*(?:\([^()]*\)[^()]*)*\b(?:__)?packed(?:__)?\b|#\s*pragma\s+pack\b")


def declares_packed(source: bytes, include_dirs=(), headers: dict | None = None) -> bool:
    """Whether the program (with its headers) may declare a packed struct (an attribute `packed`
    or `#pragma pack`); a header that cannot be found counts as yes. Only such programs get
    clspv's `-rewrite-packed-structs`, which their layout needs: it also rewrites the struct
    accesses of every function whose pointers' types disagree as byte arrays, and clspv then
    miscompiles copies from global memory of structs whose first member is an array (word k
    read from word 4k: pyopencl's test_struct_with_array_fields). The front end alone may still
    be given it (`_run_cl` in driver.py): there it only skips clspv's layout check of `global`
    and `constant` pointer parameters, which refuses unions such as pyopencl's complex types."""
    return includes.mentions(_PACKED, source, include_dirs, headers)
