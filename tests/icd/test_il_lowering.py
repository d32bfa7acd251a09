"""IL programs that llvm-spirv-15 or clspv could not compile, or compiled wrong, before
il_lowering rewrote their SPIR-V (each module here failed without it: llvm-spirv aborted, clspv
crashed, lavapipe crashed, or the results were wrong). Hand-written SPIR-V, results exact."""
import math
import shutil
import struct
import subprocess

import pytest

pytest.importorskip("pyopencl")
pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in ("spirv-as", "llvm-spirv-15")),
                                reason="needs spirv-as and llvm-spirv-15")

HEAD = """OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpCapability Int8
OpCapability Int16
OpCapability Float16
OpCapability Float64
OpCapability Vector16
OpMemoryModel Physical64 OpenCL
"""
GID = """%ulong = OpTypeInt 64 0
%v3ulong = OpTypeVector %ulong 3
%pgid = OpTypePointer Input %v3ulong
%c32 = OpConstant %ulong 32
%gid = OpVariable %pgid Input
"""
# The work-item's index as the CTS's modules write it: (long)(int)get_global_id(0), by shifts.
INDEX = """%g = OpLoad %v3ulong %gid
%g0 = OpCompositeExtract %ulong %g 0
%sh = OpShiftLeftLogical %ulong %g0 %c32
%i = OpShiftRightArithmetic %ulong %sh %c32
"""
PRELUDE = """
import numpy as np, pyopencl as cl, struct, math
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
def program(path):
    return cl.Program(ctx, open(path, "rb").read()).build()
def buf(a):
    return cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
def read(b, like):
    r = np.empty_like(like); cl.enqueue_copy(q, r, b); q.finish(); return r
"""


def assemble(tmp_path, name: str, text: str, env: str = "spv1.0") -> str:
    (tmp_path / f"{name}.spvasm").write_text(text)
    out = tmp_path / f"{name}.spv"
    subprocess.run(["spirv-as", "--target-env", env, str(tmp_path / f"{name}.spvasm"), "-o", str(out)], check=True)
    return str(out)


def run(python_with_icd, code: str) -> str:
    result = python_with_icd(PRELUDE + code + "\nprint('OK')\n")
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout + result.stderr
    return result.stdout


STRUCTS = HEAD + """OpEntryPoint Kernel %k "structs" %gid
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %gid Constant
""" + GID + """%uint = OpTypeInt 32 0
%uchar = OpTypeInt 8 0
%v2uint = OpTypeVector %uint 2
%void = OpTypeVoid
%S = OpTypeStruct %uint %uchar
%T = OpTypeStruct %v2uint %S
%pT = OpTypePointer CrossWorkgroup %T
%fn = OpTypeFunction %void %pT %pT %pT
%a = OpConstant %uint 2100483600
%b = OpConstant %uchar 128
%c = OpConstant %uint 7
%cv = OpConstantComposite %v2uint %c %a
%cs = OpConstantComposite %S %a %b
%ct = OpConstantComposite %T %cv %cs
%k = OpFunction %void None %fn
%src = OpFunctionParameter %pT
%dst = OpFunctionParameter %pT
%cst = OpFunctionParameter %pT
%l = OpLabel
""" + INDEX + """%ps = OpInBoundsPtrAccessChain %pT %src %i
%v = OpLoad %T %ps
%cp = OpCopyObject %T %v
%pd = OpInBoundsPtrAccessChain %pT %dst %i
OpStore %pd %cp
%pc = OpInBoundsPtrAccessChain %pT %cst %i
%cc = OpCopyObject %T %ct
OpStore %pc %cc
OpReturn
OpFunctionEnd
"""


def test_struct_loads_stores_and_copies(python_with_icd, tmp_path):
    """A struct {uint2, {uint, uchar}} loaded from and stored to global memory at p[i] (i from
    shifts), copied (OpCopyObject), and a struct constant stored: clspv crashed on each."""
    path = assemble(tmp_path, "structs", STRUCTS)
    run(python_with_icd, f"""
T = np.dtype({{"names": ["v", "a", "b"], "formats": [("<u4", 2), "<u4", "u1"], "offsets": [0, 8, 12], "itemsize": 16}})
n = 64
rng = np.random.default_rng(5)
src = np.frombuffer(rng.integers(0, 256, n * 16, dtype=np.uint8).tobytes(), T).copy()
src["a"][:4] = [0, 0xFFFFFFFF, 0x80000000, 1]; src["b"][:4] = [0, 255, 128, 1]
bs, bd, bc = buf(src), buf(np.zeros(n, T)), buf(np.zeros(n, T))
program({path!r}).structs(q, (n,), None, bs, bd, bc)
d, c = read(bd, src), read(bc, src)
for f in ("v", "a", "b"):
    assert (d[f] == src[f]).all(), f
assert (c["v"] == [7, 2100483600]).all() and (c["a"] == 2100483600).all() and (c["b"] == 128).all()
""")


def _insert_module(elem_decl: str, count: int) -> str:
    return HEAD + """OpEntryPoint Kernel %k "insert" %gid
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %gid Constant
""" + GID + f"""%uint = OpTypeInt 32 0
%void = OpTypeVoid
%e = {elem_decl}
%ve = OpTypeVector %e {count}
%pe = OpTypePointer CrossWorkgroup %e
%pv = OpTypePointer CrossWorkgroup %ve
%fn = OpTypeFunction %void %pe %pv %uint
%k = OpFunction %void None %fn
%in = OpFunctionParameter %pe
%vs = OpFunctionParameter %pv
%at = OpFunctionParameter %uint
%l = OpLabel
""" + INDEX + """%px = OpInBoundsPtrAccessChain %pe %in %i
%x = OpLoad %e %px
%pvi = OpInBoundsPtrAccessChain %pv %vs %i
%v = OpLoad %ve %pvi
%r = OpVectorInsertDynamic %ve %v %x %at
OpStore %pvi %r
OpReturn
OpFunctionEnd
"""


def test_dynamic_vector_inserts(python_with_icd, tmp_path):
    """OpVectorInsertDynamic into half8, float16 and int3 (the CTS's op_vector_half8_insert):
    clspv left the vector unchanged (8, 16) or crashed (3). Every position, edge values."""
    cases = [("OpTypeFloat 16", 8, "float16", 8), ("OpTypeFloat 32", 16, "float32", 16),
             ("OpTypeInt 32 0", 3, "int32", 4)]
    paths = [assemble(tmp_path, f"insert{n}", _insert_module(decl, n)) for decl, n, _, _ in cases]
    run(python_with_icd, f"""
for path, (_, n, dtype, stride) in zip({paths!r}, {[c for c in cases]!r}):
    prg = program(path); kern = prg.insert
    m = 6
    if dtype == "int32":
        x = np.array([0, -1, 2**31 - 1, -2**31, 5, 7], np.int32)
    else:
        x = np.array([np.nan, np.inf, -np.inf, -0.0, 6e-8 if dtype == "float16" else 1e-45, 65504], dtype)
    v = (np.arange(m * stride) + 1).astype(dtype)
    for k in range(n):
        bx, bv = buf(x), buf(v)
        kern(q, (m,), None, bx, bv, np.uint32(k))
        r = read(bv, v).reshape(m, stride)
        want = v.reshape(m, stride).copy(); want[:, k] = x
        same = (r.view(np.uint8) == want.view(np.uint8)).reshape(m, -1)
        assert same[:, :n * x.itemsize].all(), (dtype, k, r, want)
""")


SPIRV14 = """OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k1 "copylogical"
OpEntryPoint Kernel %k2 "ptrops"
OpEntryPoint Kernel %k3 "copymemory"
OpDecorateString %var UserSemantic "FOO? BAR."
OpMemberDecorateString %S2 0 UserSemantic "foo"
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%float = OpTypeFloat 32
%void = OpTypeVoid
%bool = OpTypeBool
%S1 = OpTypeStruct %uint %float
%S2 = OpTypeStruct %uint %float
%pS2 = OpTypePointer CrossWorkgroup %S2
%puint = OpTypePointer CrossWorkgroup %uint
%fuint = OpTypePointer Function %uint
%P = OpTypeStruct %ulong %uint
%pP = OpTypePointer CrossWorkgroup %P
%fn1 = OpTypeFunction %void %pS2
%fn2 = OpTypeFunction %void %puint %puint %puint %pP %pP
%fn3 = OpTypeFunction %void %puint
%u1024 = OpConstant %uint 1024
%fneg = OpConstant %float -2.75
%cs1 = OpConstantComposite %S1 %u1024 %fneg
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u42 = OpConstant %uint 42
%l1 = OpConstant %ulong 1
%l2 = OpConstant %ulong 2
%l3 = OpConstant %ulong 3
%l4 = OpConstant %ulong 4
%l5 = OpConstant %ulong 5
%k1 = OpFunction %void None %fn1
%o1 = OpFunctionParameter %pS2
%b1 = OpLabel
%c1 = OpCopyLogical %S2 %cs1
OpStore %o1 %c1
OpReturn
OpFunctionEnd
%k2 = OpFunction %void None %fn2
%out = OpFunctionParameter %puint
%a = OpFunctionParameter %puint
%b = OpFunctionParameter %puint
%p = OpFunctionParameter %pP
%r = OpFunctionParameter %pP
%b2 = OpLabel
%e1 = OpPtrEqual %bool %a %b
%s1 = OpSelect %uint %e1 %u1 %u0
OpStore %out %s1
%e2 = OpPtrNotEqual %bool %a %b
%s2 = OpSelect %uint %e2 %u1 %u0
%o2 = OpInBoundsPtrAccessChain %puint %out %l1
OpStore %o2 %s2
%e3 = OpPtrEqual %bool %a %a
%s3 = OpSelect %uint %e3 %u1 %u0
%o3 = OpInBoundsPtrAccessChain %puint %out %l2
OpStore %o3 %s3
%d1 = OpPtrDiff %ulong %a %b
%t1 = OpUConvert %uint %d1
%o4 = OpInBoundsPtrAccessChain %puint %out %l3
OpStore %o4 %t1
%d2 = OpPtrDiff %ulong %b %a
%t2 = OpUConvert %uint %d2
%o5 = OpInBoundsPtrAccessChain %puint %out %l4
OpStore %o5 %t2
%d3 = OpPtrDiff %uint %p %r
%o6 = OpInBoundsPtrAccessChain %puint %out %l5
OpStore %o6 %d3
OpReturn
OpFunctionEnd
%k3 = OpFunction %void None %fn3
%dst = OpFunctionParameter %puint
%b3 = OpLabel
%var = OpVariable %fuint Function %u42
OpCopyMemory %dst %var Aligned 4 Volatile
%q1 = OpInBoundsPtrAccessChain %puint %dst %l1
OpCopyMemory %q1 %var Volatile Volatile
%q2 = OpInBoundsPtrAccessChain %puint %dst %l2
OpCopyMemory %q2 %var
%q3 = OpInBoundsPtrAccessChain %puint %dst %l3
OpCopyMemorySized %q3 %var %l4 Aligned 4 Aligned 4
OpReturn
OpFunctionEnd
"""


def test_spirv14_instructions(python_with_icd, tmp_path):
    """OpCopyLogical, OpPtrEqual / OpPtrNotEqual / OpPtrDiff (16-byte pointees, a 32-bit
    result, negative differences), OpCopyMemory with one and two memory-operand masks, a
    function variable's initializer, OpDecorateString / OpMemberDecorateString: llvm-spirv-15
    aborted on each (on the initializer lavapipe crashed)."""
    path = assemble(tmp_path, "spv14", SPIRV14, "spv1.4")
    run(python_with_icd, f"""
prg = program({path!r})
o = buf(np.zeros(2, np.uint32))
prg.copylogical(q, (1,), None, o)
r = read(o, np.zeros(2, np.uint32))
assert r[0] == 1024 and r[1] == np.float32(-2.75).view(np.uint32), r
whole = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
a = whole.get_sub_region(0, 1024); b = whole.get_sub_region(512, 1024)
p = whole.get_sub_region(1024, 1024); pr = whole.get_sub_region(2048, 1024)
out = buf(np.zeros(6, np.uint32))
prg.ptrops(q, (1,), None, out, a, b, p, pr)
r = read(out, np.zeros(6, np.uint32))
want = np.array([0, 1, 1, -128, 128, -64], np.int64).astype(np.uint32)
assert (r == want).all(), (r, want)
d = buf(np.zeros(4, np.uint32))
prg.copymemory(q, (1,), None, d)
assert (read(d, np.zeros(4, np.uint32)) == 42).all()
""")


def _string_constant(name: str, text: str) -> str:
    """A nul-terminated UniformConstant char array `%name`, as the CTS's printf modules hold
    their formats, and its declarations."""
    data = text.encode() + b"\0"
    chars = " ".join(f"%ch{c}" for c in data)
    return (f"%len_{name} = OpConstant %uint {len(data)}\n%arr_{name} = OpTypeArray %uchar %len_{name}\n"
            f"%parr_{name} = OpTypePointer UniformConstant %arr_{name}\n"
            f"%init_{name} = OpConstantComposite %arr_{name} {chars}\n"
            f"%{name} = OpVariable %parr_{name} UniformConstant %init_{name}\n")


def _printf_module(formats: dict[str, str]) -> str:
    chars = sorted({c for text in formats.values() for c in text.encode() + b"\0"})
    return (HEAD + 'OpEntryPoint Kernel %k "show"\n%std = OpExtInstImport "OpenCL.std"\n'
            "%uint = OpTypeInt 32 0\n%uchar = OpTypeInt 8 0\n%ulong = OpTypeInt 64 0\n%float = OpTypeFloat 32\n"
            "%double = OpTypeFloat 64\n%void = OpTypeVoid\n%pchar = OpTypePointer UniformConstant %uchar\n"
            "%fn = OpTypeFunction %void %float %uint %ulong %double\n"
            + "".join(f"%ch{c} = OpConstant %uchar {c}\n" for c in chars)
            + "".join(_string_constant(name, text) for name, text in formats.items())
            + "%k = OpFunction %void None %fn\n%x = OpFunctionParameter %float\n%y = OpFunctionParameter %uint\n"
              "%z = OpFunctionParameter %ulong\n%w = OpFunctionParameter %double\n%l = OpLabel\n"
              "%cf = OpBitcast %pchar %fmt_f\n%pf = OpExtInst %uint %std printf %cf %x %x\n"
              "%ci = OpBitcast %pchar %fmt_i\n%pi = OpExtInst %uint %std printf %ci %y %z\n"
              "%cd = OpBitcast %pchar %fmt_d\n%pd = OpExtInst %uint %std printf %cd %w\n"
              "OpReturn\nOpFunctionEnd\n")


def test_printf_operands(python_with_icd, tmp_path):
    """printf of float, int, long and double operands with the format cast to a char pointer in
    the function (the CTS's extinst_printf_operands_*): clspv crashed. Output exact."""
    formats = {"fmt_f": "f %g %.2e\n", "fmt_i": "i %d %ld\n", "fmt_d": "d %.17g\n"}
    path = assemble(tmp_path, "printf", _printf_module(formats))
    values = [(2.0, 0, 0, 0.1), (-0.0, 2**31, 2**63, -0.0), (math.inf, 2**32 - 1, 2**64 - 1, -math.inf),
              (1e-45, 7, 1, 5e-324), (3.4028234663852886e38, 123456, 9007199254740993, 1.7976931348623157e308)]
    want = []
    for x, y, z, w in values:
        f = struct.unpack("<f", struct.pack("<f", x))[0]
        sy, sz = y - 2**32 if y >= 2**31 else y, z - 2**64 if z >= 2**63 else z
        want += [f"f {f:g} {f:.2e}", f"i {sy} {sz}", f"d {w:.17g}"]
    import numpy as np
    np.save(tmp_path / "f.npy", np.array([v[0] for v in values], np.float32))
    np.save(tmp_path / "w.npy", np.array([v[3] for v in values], np.float64))
    out = run(python_with_icd, f"""
prg = program({path!r}); kern = prg.show
fs, ws = np.load({str(tmp_path / "f.npy")!r}), np.load({str(tmp_path / "w.npy")!r})
for x, (y, z), w in zip(fs, {[(v[1], v[2]) for v in values]!r}, ws):
    kern(q, (1,), None, x, np.uint32(y), np.uint64(z), w); q.finish()
""")
    got = [line for line in out.splitlines() if line[:2] in ("f ", "i ", "d ")]
    assert got == want


def _saturate_module(src: str, dst: str, signed: bool, n: int) -> str:
    vector = f"%vs = OpTypeVector %s {n}\n%vd = OpTypeVector %d {n}\n" if n > 1 else ""
    s, d = ("%vs", "%vd") if n > 1 else ("%s", "%d")
    return HEAD + f"""OpEntryPoint Kernel %k "saturate" %gid
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %gid Constant
OpDecorate %y SaturatedConversion
""" + GID + f"""%void = OpTypeVoid
%s = {src}
%d = {dst}
{vector}%ps = OpTypePointer CrossWorkgroup {s}
%pd = OpTypePointer CrossWorkgroup {d}
%fn = OpTypeFunction %void %ps %pd
%k = OpFunction %void None %fn
%in = OpFunctionParameter %ps
%out = OpFunctionParameter %pd
%l = OpLabel
""" + INDEX + f"""%px = OpInBoundsPtrAccessChain %ps %in %i
%x = OpLoad {s} %px
%y = {'OpConvertFToS' if signed else 'OpConvertFToU'} {d} %x
%py = OpInBoundsPtrAccessChain %pd %out %i
OpStore %py %y
OpReturn
OpFunctionEnd
"""


EDGES = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, 1e-45, 6e-8, 0.5, -0.5, -0.99, -1.0, 1.5,
         127.5, 128.0, -128.5, -129.0, 255.9, 256.0, 32767.9, 32768.0, -32768.9, -32769.0, 65504.0, -65504.0,
         65535.5, 65536.0, 2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0, -2147483648.5,
         -2147483649.0, 4294967295.0, 4294967295.5, 4294967296.0, 2.0**63 - 1024, 2.0**63, -2.0**63,
         -2.0**63 - 2048, 2.0**64 - 2048, 2.0**64, 1e30, -1e30, 1e300, -1e300]


def _saturated(x: float, bits: int, signed: bool) -> int:
    lo, hi = (-2**(bits - 1), 2**(bits - 1) - 1) if signed else (0, 2**bits - 1)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(math.trunc(x), lo), hi)


def test_saturated_conversions(python_with_icd, tmp_path):
    """OpConvertFToS / FToU decorated SaturatedConversion: NaN gives 0 (clspv's
    convert_int_sat(double) gave INT_MIN: the CTS's decorate_saturated_conversion_double_to_int);
    every other value truncated and clamped, scalars and a vector."""
    float_decl = {"float16": "OpTypeFloat 16", "float32": "OpTypeFloat 32", "float64": "OpTypeFloat 64"}
    cases = [("float64", 32, True, 1), ("float64", 32, False, 1), ("float32", 8, False, 1), ("float32", 16, True, 1),
             ("float32", 64, True, 1), ("float64", 64, False, 1), ("float16", 8, True, 1), ("float32", 32, False, 4),
             ("float64", 16, True, 2)]
    import numpy as np
    runs = []
    for src, bits, signed, n in cases:
        name = f"sat_{src}_{bits}_{signed}_{n}"
        path = assemble(tmp_path, name, _saturate_module(float_decl[src], f"OpTypeInt {bits} 0", signed, n))
        with np.errstate(over="ignore"):  # past the type's range: infinity, as meant
            x = np.array(EDGES + [-e for e in EDGES[6:]], src)
        np.save(tmp_path / f"{name}.npy", np.concatenate([x, np.zeros(-len(x) % n, src)]))
        runs.append((path, str(tmp_path / f"{name}.npy"), str(tmp_path / f"{name}.out.npy"), f"{'i' if signed else 'u'}{bits // 8}", n))
    run(python_with_icd, f"""
for path, inp, outp, dst, n in {runs!r}:
    x = np.load(inp)
    b_in, b_out = buf(x), buf(np.zeros(len(x), dst))
    program(path).saturate(q, (len(x) // n,), None, b_in, b_out)
    np.save(outp, read(b_out, np.zeros(len(x), dst)))
""")
    for (src, bits, signed, n), (_, inp, outp, _, _) in zip(cases, runs):
        x, got = np.load(inp), np.load(outp)
        bad = [(float(v), int(g), _saturated(float(v), bits, signed)) for v, g in zip(x, got)
               if int(g) != _saturated(float(v), bits, signed)]
        assert not bad, (src, bits, signed, n, bad)


CONSTRUCT = HEAD + """OpEntryPoint Kernel %k "construct"
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%void = OpTypeVoid
%v2 = OpTypeVector %uint 2
%v4 = OpTypeVector %uint 4
%S = OpTypeStruct %uint %float
%pS = OpTypePointer CrossWorkgroup %S
%pv = OpTypePointer CrossWorkgroup %v4
%fn = OpTypeFunction %void %pS %pv %uint %float
%u9 = OpConstant %uint 9
%k = OpFunction %void None %fn
%os = OpFunctionParameter %pS
%ov = OpFunctionParameter %pv
%a = OpFunctionParameter %uint
%b = OpFunctionParameter %float
%l = OpLabel
%h = OpCompositeConstruct %v2 %a %u9
%v = OpCompositeConstruct %v4 %h %u9 %a
OpStore %ov %v
%s = OpCompositeConstruct %S %a %b
OpStore %os %s
OpReturn
OpFunctionEnd
"""


def test_composite_construct_of_values(python_with_icd, tmp_path):
    """OpCompositeConstruct of values that are not constants (a vector from a vector and
    scalars, a struct): llvm-spirv-15 crashed on it."""
    path = assemble(tmp_path, "construct", CONSTRUCT)
    run(python_with_icd, f"""
os_, ov = buf(np.zeros(2, np.uint32)), buf(np.zeros(4, np.uint32))
program({path!r}).construct(q, (1,), None, os_, ov, np.uint32(0xFFFFFFFF), np.float32(-0.0))
assert read(ov, np.zeros(4, np.uint32)).tolist() == [0xFFFFFFFF, 9, 9, 0xFFFFFFFF]
assert read(os_, np.zeros(2, np.uint32)).tolist() == [0xFFFFFFFF, 0x80000000]
""")


# SPIR-V 1.5 and 1.6 modules (il_versions: read as 1.4): a pointer bitcast to and from ulong and
# uint2 (1.5), a value decorated Uniform and UniformId (1.6), under each version's header.
NEWER = HEAD + """OpEntryPoint Kernel %k "newer" %gid
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %gid Constant
OpDecorate %v Uniform
OpDecorateId %w UniformId %scope
""" + GID + """%uint = OpTypeInt 32 0
%v2uint = OpTypeVector %uint 2
%void = OpTypeVoid
%pu = OpTypePointer CrossWorkgroup %ulong
%fn = OpTypeFunction %void %pu %pu
%scope = OpConstant %uint 2
%seven = OpConstant %ulong 7
%k = OpFunction %void None %fn
%out = OpFunctionParameter %pu
%addr = OpFunctionParameter %pu
%l = OpLabel
""" + INDEX + """%p = OpInBoundsPtrAccessChain %pu %out %i
%v = OpBitcast %ulong %p
%w = OpBitcast %v2uint %p
%p1 = OpBitcast %pu %v
%p2 = OpBitcast %pu %w
%x = OpLoad %ulong %p1
%y = OpIAdd %ulong %x %seven
OpStore %p2 %y
%wv = OpBitcast %ulong %w
%d = OpISub %ulong %wv %v
%q = OpInBoundsPtrAccessChain %pu %addr %i
OpStore %q %d
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize("env", ["spv1.5", "spv1.6"])
def test_spirv_1_5_and_1_6_modules(python_with_icd, tmp_path, env):
    """llvm-spirv-15 refused both versions ("unsupported SPIR-V version number"); read as 1.4
    they build: each work-item adds 7 through its pointer made an integer and back (as ulong and
    as uint2), and the two integer forms of one pointer are the same bits."""
    path = assemble(tmp_path, "newer", NEWER, env)
    run(python_with_icd, f"""
p = program({path!r})
x = np.arange(64, dtype=np.uint64) * 1000003
bo, ba = buf(x.copy()), buf(np.ones(64, np.uint64))
p.newer(q, (64,), None, bo, ba)
assert np.array_equal(read(bo, x), x + 7), read(bo, x)
assert not read(ba, x).any(), read(ba, x)
dev = ctx.devices[0]
assert "SPIR-V_1.6" in dev.il_version.split() and "SPIR-V_1.5" in dev.il_version.split(), dev.il_version
""")
