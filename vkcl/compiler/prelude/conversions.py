"""Explicit conversions (convert_<dst><n>[_sat][_rnd]) and vstore_half / vstorea_half where
clspv's builtins are wrong. Found by a survey of every (destination, source, _sat, rounding,
width) on lavapipe against an exact host reference (tests/icd/conversion_reference.py):

- convert_double<n> and convert_double<n>_rte, from every source type, and vstore_half* of
  double: clspv's builtin library has no definition for them, and clspv crashes (SIGSEGV) on any
  call to an undefined function (a one-line kernel calling a declared, undefined function crashes
  it the same way). The replacement converts with a cast, which is exact or correctly rounded.
- convert_{int,uint,long,ulong}<n>_sat* of half, float or double: NaN gives the type's minimum
  or maximum; the spec says 0. The char and short ones were right on lavapipe, but on the H200
  convert_char_sat(double NaN) gave -128: all are replaced.
- Directed rounding (_rtz, _rtp, _rtn) of integers to float (uint, ulong), to half (ushort and
  wider) and to double (long _rtz; ulong), double to float _rtz, and double to half (rte: it
  rounds twice, through float; rtz): results one step off, and infinity for the largest values.
  On the H200 float_rtp_double gave a denormal one step off and half_rtp_float -inf for values
  below -65504 (CTS conversions): every directed narrowing of a float type is replaced.
- Every _rtz conversion with an inexact case (int, long and double to float; short, float and
  double to half; long to double) steps toward zero by multiplying with -2^-128, a float denormal:
  wrong where denormals are flushed (vkcl's devices report no float denormals). Those are replaced
  too, where right on lavapipe.
- vstore_half<n> of float into local memory: clspv hangs (vstore_half2 with offset 0 at a
  computed local pointer) or writes garbage (widths 3 and 16); global and private are right.
  vload_half16 and vloada_half16 from local memory read garbage; other widths are right.

A replacement rounds with integer arithmetic (rounding.py); the right overloads of a replaced
name forward to clspv's builtin. A program gets only the names it uses: `text_for(names)`.
tests/icd/test_conversions.py checks every replaced overload and a sample of the rest.
"""
from __future__ import annotations

from vkcl.compiler.prelude.common import OVERLOAD, SCALARS, WIDTHS, guarded
from vkcl.compiler.prelude.rounding import HALF_TO_FLOAT, HELPERS, from_int, narrow

FLOATS = ("half", "float", "double")
MODES = ("", "_rte", "_rtz", "_rtp", "_rtn")
DIRECTED = ("_rtz", "_rtp", "_rtn")

# (destinations, _sat, modes, sources, how): the overloads vkcl implements (module docstring).
_ROWS = (
    (("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong"), True, MODES, FLOATS, "nan_sat"),
    (("float",), False, DIRECTED, ("uint", "ulong"), "int"),
    (("float",), False, ("_rtz",), ("int", "long"), "int"),
    (("float",), False, DIRECTED, ("double",), "narrow"),
    (("half",), False, DIRECTED, ("ushort", "int", "uint", "long", "ulong"), "int"),
    (("half",), False, ("_rtz",), ("short",), "int"),
    (("half",), False, MODES, ("double",), "narrow"),
    (("half",), False, DIRECTED, ("float",), "narrow"),
    (("double",), False, ("_rtz",), ("long",), "int"),
    (("double",), False, DIRECTED, ("ulong",), "int"),
    (("double",), False, ("", "_rte"), SCALARS, "cast"),
)
OWN: dict[tuple[str, bool, str], dict[str, str]] = {}
for _dsts, _sat, _modes, _srcs, _how in _ROWS:
    for _d in _dsts:
        for _m in _modes:
            OWN.setdefault((_d, _sat, _m), {}).update({s: _how for s in _srcs})

# OpIsNan. (A test of the bits, `(as_ulong(x) & 0x7FFF...) > 0x7FF0...`, becomes fabs, which
# clspv compiles with a 32-bit mask for double, or a compare of an i63 that clspv cannot lower.)
_NAN_TEST = "isnan(x)"
_SPACES = ("__global", "__local", "__private")
_COMPONENTS = "0123456789abcdef"


def _guard(types, body: str) -> str:
    for t in dict.fromkeys(types):
        body = guarded(t, body)
    return body


def _name(dst: str, w: str, sat: bool, mode: str) -> str:
    return f"convert_{dst}{w}{'_sat' if sat else ''}{mode}"


def _scalar_name(dst: str, src: str, sat: bool, mode: str) -> str:
    return f"__vkcl_cv_{dst}_{src}{'_sat' if sat else ''}{mode}"


def _scalar(dst: str, src: str, sat: bool, mode: str) -> str:
    """The scalar replacement of convert_<dst>[_sat]<mode>(src)."""
    how = OWN[(dst, sat, mode)][src]
    if how == "nan_sat":
        expr = f"{_NAN_TEST} ? ({dst})0 : {_name(dst, '', sat, mode)}(x)"
    elif how == "int":
        expr = f"as_{dst}({from_int(dst, src in ('char', 'short', 'int', 'long'), mode, 'x')})"
    elif how == "narrow":
        expr = f"as_{dst}({narrow(dst, src, mode, 'x')})"
    else:
        expr = "(double)x"
    return _guard((dst, src), f"{OVERLOAD} {dst} {_scalar_name(dst, src, sat, mode)}({src} x) {{ return {expr}; }}\n")


def _half_bits_name(src: str, mode: str) -> str:
    return f"__vkcl_hb_{src}{mode}"


def _half_bits(src: str, mode: str) -> str:
    """The bits of a float or double rounded to half (vstore_half's conversion)."""
    return _guard((src,), f"{OVERLOAD} ushort {_half_bits_name(src, mode)}({src} x) "
                          f"{{ return {narrow('half', src, mode or '_rte', 'x')}; }}\n")


def _components(fn: str, w: str, var: str = "x") -> list[str]:
    return [f"{fn}({var})"] if not w else [f"{fn}({var}.s{_COMPONENTS[i]})" for i in range(int(w))]


def _convert_block(dst: str, w: str, sat: bool, mode: str, needs: dict) -> str:
    name = _name(dst, w, sat, mode)
    own = OWN[(dst, sat, mode)]
    out = []
    for src in SCALARS:
        if src in own:
            needs[("cv", dst, src, sat, mode)] = own[src] in ("int", "narrow")
            parts = _components(_scalar_name(dst, src, sat, mode), w)
            value = parts[0] if not w else f"({dst}{w})({', '.join(parts)})"
        else:
            value = f"{name}(x)"
        out.append(_guard((dst, src), f"{OVERLOAD} {dst}{w} __vkcl_{name}({src}{w} x) {{ return {value}; }}\n"))
    return "".join(out)


def _store_name(w: str, mode: str, aligned: bool) -> str:
    return f"vstore{'a' if aligned else ''}_half{w}{mode}"


def _store_block(w: str, mode: str, aligned: bool, needs: dict) -> str:
    """vstore[a]_half<w><mode> for float and double data in every address space of the
    language version (named spaces, or the generic one)."""
    name = _store_name(w, mode, aligned)
    n = int(w or 1)
    stride = 4 if aligned and n == 3 else n

    def overload(src: str, space: str) -> str:
        head = f"{OVERLOAD} void __vkcl_{name}({src}{w} v, size_t o, {space} half *p)"
        if src == "float" and space in ("__global", "__private"):
            return f"{head} {{ {name}(v, o, p); }}\n"
        needs[("hb", src, mode)] = True
        q = f"{space} ushort *q = ({space} ushort *)p + o * {stride};"
        stores = " ".join(f"q[{i}] = {c};" for i, c in enumerate(_components(_half_bits_name(src, mode), w, "v")))
        return f"{head} {{ {q} {stores} }}\n"

    named = "".join(overload("float", s) for s in _SPACES) + guarded("double", "".join(overload("double", s) for s in _SPACES))
    generic = overload("float", "") + guarded("double", overload("double", ""))
    return (f"#if defined(__opencl_c_named_address_space_builtins)\n{named}#endif\n"
            f"#if defined(__opencl_c_generic_address_space)\n{generic}#endif\n")


def _load_name(w: str, aligned: bool) -> str:
    return f"vload{'a' if aligned else ''}_half{w}"


def _load_block(w: str, aligned: bool, needs: dict) -> str:
    """vload[a]_half<w> from every address space: vkcl's own from local (and generic) memory."""
    name = _load_name(w, aligned)
    n = int(w or 1)
    stride = 4 if aligned and n == 3 else n

    def overload(space: str) -> str:
        head = f"{OVERLOAD} float{w} __vkcl_{name}(size_t o, const {space} half *p)"
        if space in ("__constant", "__global", "__private"):
            return f"{head} {{ return {name}(o, p); }}\n"
        needs[("hf",)] = False
        parts = [f"__vkcl_half_to_float(q[{i}])" for i in range(n)]
        value = parts[0] if n == 1 else f"(float{w})({', '.join(parts)})"
        return f"{head} {{ const {space} ushort *q = (const {space} ushort *)p + o * {stride}; return {value}; }}\n"

    return (overload("__constant") +
            f"#if defined(__opencl_c_named_address_space_builtins)\n{''.join(overload(s) for s in _SPACES)}#endif\n"
            f"#if defined(__opencl_c_generic_address_space)\n{overload('')}#endif\n")


_BLOCKS = {}  # name -> (block kind, arguments)
for (_d, _sat, _m) in OWN:
    for _w in WIDTHS:
        _BLOCKS[_name(_d, _w, _sat, _m)] = ("convert", (_d, _w, _sat, _m))
for _w in WIDTHS:
    for _m in MODES:
        for _aligned in ((False, True) if _w else (False,)):
            _BLOCKS[_store_name(_w, _m, _aligned)] = ("store", (_w, _m, _aligned))
for _aligned in (False, True):  # the only loads clspv gets wrong: 16 halves from local memory
    _BLOCKS[_load_name("16", _aligned)] = ("load", ("16", _aligned))

NAMES = tuple(_BLOCKS)
# What __init__ searches a source for (a regex, since NAMES has hundreds of names), the starts of
# names included (`convert_ ## T`).
PATTERN = r"convert_\w*|v(?:load|store)a?(?:_half)?\w*"


def text_for(names) -> str:
    """The prelude for the replaced names among `names` (in NAMES order): the helpers their
    overloads need, the overloads, then the #defines that rename the builtins."""
    wanted = [n for n in NAMES if n in set(names)]
    if not wanted:
        return ""
    needs: dict = {}
    make = {"convert": _convert_block, "store": _store_block, "load": _load_block}
    blocks = [make[_BLOCKS[n][0]](*_BLOCKS[n][1], needs) for n in wanted]
    helpers = [_scalar(*k[1:]) if k[0] == "cv" else _half_bits(*k[1:]) if k[0] == "hb" else HALF_TO_FLOAT
               for k in needs]
    rounding = HELPERS if any(v for v in needs.values()) else ""
    return rounding + "".join(helpers) + "".join(blocks) + "".join(f"#define {n} __vkcl_{n}\n" for n in wanted)


TEXT = text_for(NAMES)
