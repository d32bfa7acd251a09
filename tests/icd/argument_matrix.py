"""The argument-layout matrix (tests/icd/test_argument_layout.py), run inside a pyopencl process
on vkcl: kernels generated from tables of argument types, each writing back every argument it
received, byte by byte, checked on the host.

Types: every scalar and vector type (char..double, half where the device has it; widths 1, 2, 3,
4, 8, 16) and structs and unions laid out as the host's C ABI lays them out (natural alignment,
padding), pyopencl's complex unions among them. Each kernel takes 1-16 of them by value among
global, constant and local pointers. A program holds many kernels, and a variant adds what moves
clspv's argument blocks: a kernel calling sqrt/exp/sin/pow (module constants), one calling printf,
program-scope constant data, OpenCL C 3.0 (region offsets for non-uniform work-groups).

    python argument_matrix.py VARIANT   # prints "checked N arguments in K kernels", exits 1 on a failure
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np

SCALARS = (("char", "i1"), ("uchar", "u1"), ("short", "i2"), ("ushort", "u2"), ("int", "i4"), ("uint", "u4"),
           ("long", "i8"), ("ulong", "u8"), ("float", "f4"), ("double", "f8"), ("half", "f2"))
WIDTHS = (1, 2, 3, 4, 8, 16)
VARIANTS = ("plain", "module_constants", "printf", "constant_data", "cl30", "everything")


@dataclass
class Type:
    """An OpenCL C type as the host lays it out: C name, size, alignment, and its valid bytes."""
    name: str
    size: int
    align: int
    fill: object                      # (rng) -> bytes of a value
    mask: np.ndarray                  # which bytes carry the value (not padding)
    definition: str = ""              # C text defining it (structs)
    needs: set = field(default_factory=set)  # "fp16", "fp64"


def _scalar_bytes(code: str, n: int, rng) -> bytes:
    if code[0] == "f":  # finite, normal values of both signs and varied exponents
        exp_range = {"f2": 6, "f4": 60, "f8": 300}[code]
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-exp_range // 2, exp_range // 2, n)
        return v.astype(code).tobytes()
    return rng.integers(0, 256, n * int(code[1]), dtype=np.uint8).tobytes()


def vector(scalar: str, code: str, width: int) -> Type:
    elem = int(code[1])
    stored = 4 if width == 3 else width  # a 3-vector takes a 4-vector's room (OpenCL C 6.1.5)
    size = elem * stored
    mask = np.zeros(size, bool)
    mask[:elem * width] = True

    def fill(rng, code=code, stored=stored):
        return _scalar_bytes(code, stored, rng)
    needs = {"f2": {"fp16"}, "f8": {"fp64"}}.get(code, set())
    return Type(scalar if width == 1 else f"{scalar}{width}", size, size, fill, mask, needs=set(needs))


def _align_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def record(name: str, kind: str, fields: list[tuple[str, Type]], packed: bool = False) -> Type:
    """A struct or union of `fields`, laid out as C does (packed: no padding, alignment 1)."""
    offsets, end, align = [], 0, 1
    for _, t in fields:
        a = 1 if packed else t.align
        at = 0 if kind == "union" else _align_up(end, a)
        offsets.append(at)
        end = max(end, at + t.size)
        align = max(align, a)
    size = _align_up(end, align)
    mask = np.zeros(size, bool)
    if kind == "union":  # the value is written through its largest member, which a copy keeps
        largest = max(range(len(fields)), key=lambda i: fields[i][1].size)
        members = [(0, fields[largest][1])]
    else:
        members = list(zip(offsets, (t for _, t in fields)))
    for at, t in members:
        mask[at:at + t.size] |= t.mask

    def fill(rng):
        data = bytearray(size)
        for at, t in members:
            data[at:at + t.size] = t.fill(rng)
        return bytes(data)
    body = " ".join(f"{t.name} {n};" for n, t in fields)
    attr = " __attribute__((packed))" if packed else ""
    definition = f"typedef {kind}{attr} {{ {body} }} {name};"
    needs = set().union(*(t.needs for _, t in fields))
    return Type(name, size, align, fill, mask, definition, needs)


def anonymous(fields: list[tuple[str, Type]]) -> Type:
    """The layout of an anonymous struct member of a union (whose definition is written out)."""
    return record("", "struct", fields)


def all_types(fp16: bool, fp64: bool) -> list[Type]:
    vectors = {(s, w): vector(s, c, w) for s, c in SCALARS for w in WIDTHS}
    v = lambda s, w=1: vectors[(s, w)]  # noqa: E731
    padded = record("padded_t", "struct", [("c", v("char")), ("i", v("int")), ("f", v("float")), ("s", v("short"))])
    char_vec = record("char_float4_t", "struct", [("c", v("char")), ("v", v("float", 4))])
    doubles = record("doubles_t", "struct", [("c", v("char")), ("d", v("double")), ("e", v("double", 2)),
                                               ("s", v("short"))])
    nested = record("nested_t", "struct", [("p", padded), ("d", v("char")), ("q", char_vec), ("w", v("short", 2)),
                                             ("z", v("double"))])
    vec3 = record("vec3_t", "struct", [("a", v("float", 3)), ("b", v("int")), ("c", v("uchar", 3))])
    array = record("array_t", "struct", [("n", v("char")), ("a", Type("int", 12, 4, lambda r: _scalar_bytes("i4", 3, r),
                                                                       np.ones(12, bool))), ("s", v("short"))])
    array.definition = "typedef struct { char n; int a[3]; short s; } array_t;"
    # pyopencl's complex types (pyopencl-complex.h): a union of two anonymous structs
    cfloat = record("cfloat_t", "union", [(m, anonymous([(a, v("float")), (b, v("float"))]))
                                          for m, (a, b) in (("", ("x", "y")), ("", ("real", "imag")))])
    cfloat.definition = "typedef union { struct { float x, y; }; struct { float real, imag; }; } cfloat_t;"
    cdouble = record("cdouble_t", "union", [("", anonymous([("x", v("double")), ("y", v("double"))]))])
    cdouble.definition = "typedef union { struct { double x, y; }; struct { double real, imag; }; } cdouble_t;"
    mixed = record("mixed_u", "union", [("c", v("char", 3)), ("i", v("int")), ("v", v("float", 4))])
    holder = record("holder_t", "struct", [("tag", v("uchar")), ("z", cfloat), ("n", v("ushort"))])
    packed = record("packed_t", "struct", [("c", v("char")), ("i", v("int")), ("s", v("short"))], packed=True)
    halves = record("halves_t", "struct", [("h", v("half")), ("c", v("char")), ("g", v("half", 2)), ("k", v("half", 3))])
    types = list(vectors.values()) + [padded, char_vec, doubles, nested, vec3, array, cfloat, cdouble, mixed, holder,
                                      packed, halves]
    return [t for t in types if ("fp16" not in t.needs or fp16) and ("fp64" not in t.needs or fp64)]


@dataclass
class Kernel:
    name: str
    params: list[tuple[str, object]]  # ("value", Type) | ("out",) | ("tag",) | ("local", Type) | ("const",)
    slots: list[int] = field(default_factory=list)  # byte offset in `out` of each value


def plan_kernels(types: list[Type], rng) -> list[Kernel]:
    """Kernels covering every type several times: small ones that fit in push constants, up to 16
    values each; long ones that do not (a uniform buffer); and 16 of the smallest types."""
    lists = []
    pool = [types[i] for i in rng.permutation(len(types))]
    current, size = [], 0
    for t in pool:  # push-constant sized
        if current and (size + t.size > 72 or len(current) == 16):
            lists.append(current)
            current, size = [], 0
        current.append(t)
        size = _align_up(size, t.align) + t.size
    lists.append(current)
    pool = [types[i] for i in rng.permutation(len(types))]
    i, count = 0, 16
    while i < len(pool):  # long lists
        lists.append(pool[i:i + count])
        i += count
        count = max(1, count - 5)
    small = [t for t in types if t.size <= 2]
    lists.append([small[k % len(small)] for k in range(16)])
    kernels = []
    scalar = [t for t in types if t.name in ("int", "float", "short")]
    for n, values in enumerate(lists):
        params = [("value", t) for t in values]
        extras = [("out",), ("tag",), ("const",)] + [("local", scalar[(n + k) % len(scalar)]) for k in range(n % 3)]
        for extra in extras:  # pointers among the values, anywhere
            params.insert(int(rng.integers(0, len(params) + 1)), extra)
        kernels.append(Kernel(f"args{n}", params))
    return kernels


def kernel_source(k: Kernel, index: int) -> str:
    decl, body, at = [], [], 0
    for i, p in enumerate(k.params):
        if p[0] == "value":
            t = p[1]
            at = _align_up(at, max(16, t.align))
            k.slots.append(at)
            decl.append(f"{t.name} a{i}")
            body.append(f"*(global {t.name} *)(out + {at}) = a{i};")
            at += t.size
        elif p[0] == "out":
            decl.append("global uchar *out")
        elif p[0] == "tag":
            decl.append("global int *tag")
        elif p[0] == "const":
            decl.append("constant int *cin")
        else:
            decl.append(f"local {p[1].name} *l{i}")
            body.append(f"l{i}[get_local_id(0)] = ({p[1].name})({index * 100 + i});")
    lines = [f"tag[{4 * index}] = {index + 1} + cin[0];"]
    n = 1
    barrier_done = False
    for i, p in enumerate(k.params):
        if p[0] == "local":
            if not barrier_done:
                body.append("barrier(CLK_LOCAL_MEM_FENCE);")
                barrier_done = True
            lines.append(f"tag[{4 * index + n}] = (int)l{i}[0];")
            n += 1
    return (f"kernel void {k.name}({', '.join(decl)}) {{\n    " + "\n    ".join(body + lines) + "\n}\n")


EXTRAS = {
    "module_constants": ("kernel void math4(global float *o, float x) {\n"
                         "    o[0] = sqrt(x); o[1] = exp(x); o[2] = sin(x); o[3] = pow(x, 1.5f);\n}\n"),
    "printf": 'kernel void say(int x, float4 v) { printf("printf-says %d %.2f\\n", x, v.w); }\n',
    "constant_data": ("constant float table[7] = {0.5f, 1.25f, -2.0f, 3.75f, 1e-3f, 6.5f, -7.0f};\n"
                      "kernel void lookup(global float *o, int i, float4 v) { o[0] = table[i] + v.z; }\n"),
}


def program_source(types: list[Type], kernels: list[Kernel], variant: str, fp16: bool, fp64: bool) -> str:
    parts = []
    if fp16:
        parts.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
    if fp64:
        parts.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    parts += [t.definition for t in types if t.definition]
    extras = [name for name in EXTRAS if variant in (name, "everything")]
    for i, k in enumerate(kernels):
        parts.append(kernel_source(k, i))
    for name in extras:
        parts.append(EXTRAS[name])
    return "\n".join(parts)


def _ulps(got: float, want: float) -> float:
    """Error in units of the float's last place at the exact value."""
    return abs(got - want) / float(np.spacing(np.float32(abs(want))))


def main(variant: str) -> int:
    import pyopencl as cl
    platform = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
    dev = platform.get_devices()[0]
    fp16, fp64 = "cl_khr_fp16" in dev.extensions, "cl_khr_fp64" in dev.extensions
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    rng = np.random.default_rng(sorted(VARIANTS).index(variant))
    types = all_types(fp16, fp64)
    kernels = plan_kernels(types, rng)
    src = program_source(types, kernels, variant, fp16, fp64)
    options = "-cl-std=CL3.0" if variant in ("cl30", "everything") else ""
    prg = cl.Program(ctx, src).build(options)
    mf = cl.mem_flags
    out = cl.Buffer(ctx, mf.READ_WRITE, 8192)
    tag = cl.Buffer(ctx, mf.READ_WRITE, 4 * 4 * len(kernels))
    cin = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.array([1000], np.int32))
    failures, checked = [], 0
    size = (3,) if variant in ("cl30", "everything") else (1,)  # 3 of 2: a second, partial group
    local = (2,) if size == (3,) else (1,)
    for index, k in enumerate(kernels):
        cl.enqueue_fill_buffer(q, out, np.uint8(0xA5), 0, 8192)
        args, values = [], []
        for p in k.params:
            if p[0] == "value":
                data = p[1].fill(rng)
                values.append((p[1], data))
                args.append(np.frombuffer(data, np.uint8))
            elif p[0] == "out":
                args.append(out)
            elif p[0] == "tag":
                args.append(tag)
            elif p[0] == "const":
                args.append(cin)
            else:
                args.append(cl.LocalMemory(p[1].size * 4))
        try:
            getattr(prg, k.name)(q, size, local, *args)
        except cl.Error as e:
            failures.append(f"{k.name}({', '.join(p[1].name if len(p) > 1 else p[0] for p in k.params)}): {e}")
            continue
        got = np.empty(8192, np.uint8)
        cl.enqueue_copy(q, got, out)
        for (t, data), at in zip(values, k.slots):
            want = np.frombuffer(data, np.uint8)
            if not np.array_equal(got[at:at + t.size][t.mask], want[t.mask]):
                failures.append(f"{k.name} {t.name} at {at}: got {got[at:at + t.size].tobytes().hex()} "
                                f"want {data.hex()}")
            checked += 1
    tags = np.empty(4 * len(kernels), np.int32)
    cl.enqueue_copy(q, tags, tag)
    for index, k in enumerate(kernels):
        want = [index + 1 + 1000] + [index * 100 + i for i, p in enumerate(k.params) if p[0] == "local"]
        if list(tags[4 * index:4 * index + len(want)]) != want:
            failures.append(f"{k.name}: pointers gave {tags[4 * index:4 * index + len(want)]}, want {want}")
    if variant in ("module_constants", "everything"):
        o = cl.Buffer(ctx, mf.READ_WRITE, 16)
        x = np.float32(0.7)
        prg.math4(q, (1,), None, o, x)
        got4 = np.empty(4, np.float32)
        cl.enqueue_copy(q, got4, o)
        xd = float(x)
        for got1, want, limit in zip(got4, (math.sqrt(xd), math.exp(xd), math.sin(xd), xd ** 1.5), (3, 3, 4, 16)):
            if _ulps(float(got1), want) > limit:
                failures.append(f"math4: {got1} vs {want} ({_ulps(float(got1), want):.1f} ulp > {limit})")
    if variant in ("constant_data", "everything"):
        o = cl.Buffer(ctx, mf.READ_WRITE, 4)
        prg.lookup(q, (1,), None, o, np.int32(3), np.array([0, 0, 0.5, 0], np.float32))
        got1 = np.empty(1, np.float32)
        cl.enqueue_copy(q, got1, o)
        if got1[0] != np.float32(4.25):
            failures.append(f"lookup: {got1[0]} != 4.25")
    if variant in ("printf", "everything"):
        prg.say(q, (1,), None, np.int32(42), np.array([0, 0, 0, 2.5], np.float32))
    q.finish()
    for f in failures:
        print("FAIL", f)
    print(f"checked {checked} arguments in {len(kernels)} kernels", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
