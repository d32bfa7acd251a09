"""Bytes, shorts and words taken out of the components of 32- and 64-bit integer vectors (issue
21): by constant shifts, by shifts in loops that unroll, by as_ucharN/as_ushortN/as_uintN and
their components and swizzles. clspv's UndoInstCombine pass rewrote InstCombine's
`extractelement (bitcast <2 x i64> to <16 x i8>), 2` as byte 0 of element 0 (it drops the
offset inside the wide element), so every even, non-aligned byte or short came out wrong; vkcl
runs clspv with that pass disabled (vkcl/compiler/options.py). Each kernel is generated from
the tables below; every value is compared exactly with the same bytes on the host."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")

NARROW = {1: "uchar", 2: "ushort", 4: "uint"}
# as_<type>N() targets of a 16-byte piece (two 64-bit or four 32-bit components).
PIECE_CASTS = ((1, 16), (2, 8), (4, 4))
COMPONENTS = "0123456789abcdef"


class Kernel:
    """One generated kernel: statements that write out{1,2,4}[i], and for each output the byte
    offset inside the source vector that its value starts at."""

    def __init__(self):
        self.lines: list[str] = []
        self.offsets: dict[int, list[int]] = {1: [], 2: [], 4: []}

    def store(self, width: int, expr: str, offset: int) -> None:
        self.lines.append(f"out{width}[{len(self.offsets[width])}] = {expr};")
        self.offsets[width].append(offset)

    def store_loop(self, width: int, count: int, expr_of_k: str, first_offset: int, step: int) -> None:
        base = len(self.offsets[width])
        self.lines.append(f"for (int k = 0; k < {count}; k++) out{width}[{base} + k] = {expr_of_k};")
        self.offsets[width] += [first_offset + step * k for k in range(count)]


def vector_kernel(elem_bits: int, n: int) -> Kernel:
    """Every byte, short (and, for 64-bit elements, word) of every component of an
    <n x elem_bits> integer vector `v`, each way."""
    kern, size = Kernel(), elem_bits // 8
    for c in range(n):
        add_shifts(kern, f"v.s{COMPONENTS[c]}", size, c * size)
    add_casts(kern, "v", size, n)
    for width in (w for w in (1, 2, 4) if w < size):  # vector conversions of shifted vectors
        for j in range(size // width):
            vec = f"convert_{NARROW[width]}{n}(v >> {8 * width * j})"
            kern.lines.append(f"vstore{n}({vec}, 0, out{width} + {len(kern.offsets[width])});")
            kern.offsets[width] += [c * size + width * j for c in range(n)]
    return kern


def add_shifts(kern: Kernel, comp: str, size: int, at: int) -> None:
    """Each narrower part of the `size`-byte integer `comp` (at byte `at` of the vector), by
    constant shifts and by a shift in a loop that unrolls."""
    for width in (w for w in (1, 2, 4) if w < size):
        kind = NARROW[width]
        for j in range(size // width):
            kern.store(width, f"({kind})({comp} >> {8 * width * j})", at + width * j)
        kern.store_loop(width, size // width, f"({kind})({comp} >> ({8 * width} * k))", at, width)


def add_casts(kern: Kernel, v: str, size: int, n: int) -> None:
    """`v` (n elements of `size` bytes) reinterpreted as vectors of narrower elements: 16-byte
    pieces, the whole vector where a type of its size exists, each component; every element
    taken by .sN, by [k] in a loop that unrolls, and by the .even/.odd swizzles."""
    per_piece = 16 // size
    for first in range(0, n - per_piece + 1, per_piece):
        piece = f"{v}.s" + COMPONENTS[first:first + per_piece] if per_piece < n else v
        for width, count in PIECE_CASTS:
            if width < size:
                add_cast(kern, piece, f"p{first}_{width}", width, count, first * size)
    for width, count in WHOLE_CASTS.get((size, n), ()):
        add_cast(kern, v, f"w{width}", width, count, 0)
    for c in range(n):
        for width in (w for w in (1, 2, 4) if w < size):
            add_cast(kern, f"{v}.s{COMPONENTS[c]}", f"c{c}_{width}", width, size // width, c * size)


def add_cast(kern: Kernel, value: str, name: str, width: int, count: int, at: int) -> None:
    kern.lines.append(f"{NARROW[width]}{count} {name} = as_{NARROW[width]}{count}({value});")
    for j in range(count):
        kern.store(width, f"{name}.s{COMPONENTS[j]}", at + width * j)
    kern.store_loop(width, count, f"{name}[k]", at, width)
    for half, first in ((f"{name}.even", 0), (f"{name}.odd", 1)):
        if count // 2 == 1:
            kern.store(width, half, at + width * first)
            continue
        kern.lines.append(f"vstore{count // 2}({half}, 0, out{width} + {len(kern.offsets[width])});")
        kern.offsets[width] += [at + width * (2 * j + first) for j in range(count // 2)]


# as_<type>N() of whole vectors larger than 16 bytes: (element bytes, count) -> (width, count).
WHOLE_CASTS = {(8, 4): ((4, 8), (2, 16)), (8, 8): ((4, 16),), (4, 8): ((2, 16),), (4, 2): ((1, 8), (2, 4))}


def program(type_name: str, kern: Kernel) -> str:
    body = "\n    ".join(kern.lines)
    return (f"kernel void k(global const {type_name} *src, global uchar *out1, global ushort *out2, "
            f"global uint *out4) {{\n    {type_name} v = src[0];\n    {body}\n}}\n")


SNIPPET = """
src = {src!r}
offsets = {offsets!r}
p = cl.Program(ctx, src).build()
outs = {{w: out(np.zeros(max(1, len(o)), np.dtype('u%d' % w))) for w, o in offsets.items()}}
wrong = {{}}
for data in {datas!r}:
    p.k(q, (1,), None, buf(np.frombuffer(data, np.uint8).copy()), outs[1], outs[2], outs[4])
    for w, offs in offsets.items():
        got = get(outs[w], np.zeros(max(1, len(offs)), np.dtype('u%d' % w)))[:len(offs)]
        want = np.array([int.from_bytes(data[o:o + w], 'little') for o in offs], np.dtype('u%d' % w))
        bad = np.nonzero(got != want)[0]
        if len(bad):  # (output index, byte offset in the vector, got, want)
            wrong[data.hex(), w] = (len(bad), [(int(i), offs[i], hex(got[i]), hex(want[i])) for i in bad[:16]])
assert not wrong, wrong
print("OK")
"""

VECTORS = [("ulong", 64, n) for n in (2, 3, 4, 8, 16)] + [("uint", 32, n) for n in (2, 4, 8, 16)] + [("long", 64, 2)]


@pytest.mark.parametrize("scalar,bits,n", VECTORS, ids=[f"{s}{n}" for s, _, n in VECTORS])
def test_every_narrow_part_of_every_component(python_with_icd, scalar, bits, n):
    kern = vector_kernel(bits, n)
    padded = bits // 8 * (4 if n == 3 else n)
    data = bytes((37 * i + 11) & 0xFF for i in range(padded))  # every byte different
    run(python_with_icd, SNIPPET.format(src=program(f"{scalar}{n}", kern), offsets=kern.offsets, datas=[data]))


# Bit patterns that a float path could change: quiet and signalling NaNs with payloads, both
# infinities and zeros, the smallest and largest denormals, negative normals.
DOUBLE_BITS = [0x7FF8000000000000, 0xFFF8000000000123, 0x7FF0000000000001, 0xFFF7FFFFFFFFFFFF,
               0x7FF0000000000000, 0xFFF0000000000000, 0x8000000000000000, 0x0000000000000000,
               0x0000000000000001, 0x000FFFFFFFFFFFFF, 0x800FFFFFFFFFFFFE, 0xC00921FB54442D18]
FLOAT_BITS = [0x7FC00000, 0xFFC00123, 0x7F800001, 0xFFBFFFFF, 0x7F800000, 0xFF800000, 0x80000000,
              0x00000000, 0x00000001, 0x007FFFFF, 0x807FFFFE, 0xC0490FDB]
FLOATS = [("double", 8, 2), ("double", 8, 4), ("float", 4, 4), ("float", 4, 2)]


@pytest.mark.parametrize("ftype,size,n", FLOATS, ids=[f"{t}{n}" for t, _, n in FLOATS])
def test_float_bits_pass_through_exactly(python_with_icd, ftype, size, n):
    """as_uint2/as_ushort4/as_uchar8 of each double (as_ushort2/as_uchar4 of each float), of
    16-byte pieces and whole vectors, and shifts of as_ulongN/as_uintN: NaN payloads, infinities,
    -0 and denormals come out bit for bit."""
    kern, bits = Kernel(), ftype == "double" and "ulong" or "uint"
    kern.lines.append(f"{bits}{n} u = as_{bits}{n}(v);")
    for c in range(n):
        add_shifts(kern, f"u.s{COMPONENTS[c]}", size, c * size)
    add_casts(kern, "v", size, n)
    patterns = DOUBLE_BITS if size == 8 else FLOAT_BITS
    datas = [b"".join(x.to_bytes(size, "little") for x in patterns[i:i + n]) for i in range(0, len(patterns), n)]
    run(python_with_icd, SNIPPET.format(src=program(f"{ftype}{n}", kern), offsets=kern.offsets, datas=datas))


def test_issue_reproducer_by_value(python_with_icd):
    run(python_with_icd, """
src = '''kernel void k3(global uchar *dst, ulong2 value) {
    dst[0] = (uchar)(value.x >> 16); dst[1] = (uchar)(value.x >> 32); dst[2] = (uchar)(value.y >> 48);
    dst[3] = (uchar)(value.x >> 8);
    uchar16 b = as_uchar16(value); dst[4] = b.s2; dst[5] = b.s4; dst[6] = b.sa;
    ushort8 h = as_ushort8(value); dst[7] = (uchar)h.s1; dst[8] = (uchar)h.s5; }'''
p = cl.Program(ctx, src).build()
val = np.zeros(1, cl.cltypes.ulong2); val[0]['x'] = 0x0807060504030201; val[0]['y'] = 0x100f0e0d0c0b0a09
o = out(np.zeros(16, np.uint8))
p.k3(q, (1,), None, o, val)
got = list(get(o, np.zeros(16, np.uint8))[:9])
assert got == [3, 5, 15, 2, 3, 5, 11, 3, 11], got
print("OK")
""")
