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
    <n x elem_bits> vector `v`, each way."""
    kern, size = Kernel(), elem_bits // 8
    for c in range(n):
        comp = f"v.s{COMPONENTS[c]}"
        for width in (w for w in (1, 2, 4) if w < size):
            kind = NARROW[width]
            for j in range(size // width):
                kern.store(width, f"({kind})({comp} >> {8 * width * j})", c * size + width * j)
            kern.store_loop(width, size // width, f"({kind})({comp} >> ({8 * width} * k))", c * size, width)
    # 16-byte pieces (and 8-byte ones for uint2) reinterpreted and taken apart.
    per_piece = 16 // size
    for first in range(0, n - per_piece + 1, per_piece):
        piece = "v.s" + COMPONENTS[first:first + per_piece] if per_piece < n else "v"
        for width, count in PIECE_CASTS:
            if width >= size:
                continue
            name = f"p{first}_{width}"
            kern.lines.append(f"{NARROW[width]}{count} {name} = as_{NARROW[width]}{count}({piece});")
            for j in range(count):
                kern.store(width, f"{name}.s{COMPONENTS[j]}", first * size + width * j)
            kern.store_loop(width, count, f"{name}[k]", first * size, width)
            # Swizzles: shuffles of the reinterpreted vector.
            even, odd = f"{name}.even", f"{name}.odd"
            kern.lines.append(f"vstore{count // 2}({even}, 0, out{width} + {len(kern.offsets[width])});")
            kern.offsets[width] += [first * size + width * 2 * j for j in range(count // 2)]
            kern.lines.append(f"vstore{count // 2}({odd}, 0, out{width} + {len(kern.offsets[width])});")
            kern.offsets[width] += [first * size + width * (2 * j + 1) for j in range(count // 2)]
    if n == 2 and size == 4:  # uint2: one 8-byte piece
        kern.lines.append("uchar8 q = as_uchar8(v); ushort4 r = as_ushort4(v);")
        for j in range(8):
            kern.store(1, f"q.s{j}", j)
        for j in range(4):
            kern.store(2, f"r.s{j}", 2 * j)
    return kern


def program(type_name: str, kern: Kernel) -> str:
    body = "\n    ".join(kern.lines)
    return (f"kernel void k(global const {type_name} *src, global uchar *out1, global ushort *out2, "
            f"global uint *out4) {{\n    {type_name} v = src[0];\n    {body}\n}}\n")


SNIPPET = """
src = {src!r}
offsets = {offsets!r}
nbytes, padded = {nbytes}, {padded}
data = bytearray((37 * i + 11) & 0xff for i in range(padded))  # every byte different
p = cl.Program(ctx, src).build()
outs = {{w: out(np.zeros(max(1, len(o)), np.dtype('u%d' % w))) for w, o in offsets.items()}}
p.k(q, (1,), None, buf(np.frombuffer(bytes(data), np.uint8).copy()), outs[1], outs[2], outs[4])
wrong = {{}}
for w, offs in offsets.items():
    got = get(outs[w], np.zeros(max(1, len(offs)), np.dtype('u%d' % w)))[:len(offs)]
    want = np.array([int.from_bytes(data[o:o + w], 'little') for o in offs], np.dtype('u%d' % w))
    bad = np.nonzero(got != want)[0]
    if len(bad):  # (output index, byte offset in the vector, got, want)
        wrong[w] = (len(bad), [(int(i), offs[i], hex(got[i]), hex(want[i])) for i in bad[:16]])
assert not wrong, wrong
print("OK")
"""

VECTORS = [("ulong", 64, n) for n in (2, 3, 4, 8, 16)] + [("uint", 32, n) for n in (2, 4, 8, 16)] + [("long", 64, 2)]


@pytest.mark.parametrize("scalar,bits,n", VECTORS, ids=[f"{s}{n}" for s, _, n in VECTORS])
def test_every_narrow_part_of_every_component(python_with_icd, scalar, bits, n):
    kern = vector_kernel(bits, n)
    size = bits // 8
    padded = size * (4 if n == 3 else n)
    run(python_with_icd, SNIPPET.format(src=program(f"{scalar}{n}", kern), offsets=kern.offsets,
                                        nbytes=size * n, padded=padded))


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
