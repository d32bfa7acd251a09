"""IL programs (clCreateProgramWithIL) with a `return` out of nested loops: clspv's structurizer
lost a loop of them (spirv_single_pass_loops) and vkcl refused them on every device until the
twenty-seventh session, since loop_exits, which routes such exits for OpenCL C, worked only on
the front end's IR. Their bitcode now has its phis demoted (il.demote_phis: LLVM's reg2mem) and
its exits routed as OpenCL C's are. Results exact, against the host."""
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import host_kernels

pytest.importorskip("pyopencl")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "differential"))
import nested_loops  # noqa: E402

pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in ("spirv-as", "llvm-spirv-15", "opt-15")),
                                reason="needs spirv-as, llvm-spirv-15 and opt-15")
FROM_SOURCE = pytest.mark.skipif(not shutil.which("clang-15"), reason="needs clang-15 (SPIR-V from OpenCL C)")

# for (r < m) for (i < n) { s = s * 1103515245 + (i ^ 12345); if (s % 4093 == 1000) return; }
# as clang-15 -O2 and llvm-spirv-15 write it: SSA values in phis, both loops rotated (each tests
# its condition at its end), the outer loop's test at the end of a block that stores nothing,
# the return's values meeting the others' in a phi after the loops.
SEARCH = """OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k" %gid
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %gid Constant
%ulong = OpTypeInt 64 0
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%void = OpTypeVoid
%c0 = OpConstant %uint 0
%c1 = OpConstant %uint 1
%lcg = OpConstant %uint 1103515245
%salt = OpConstant %uint 12345
%mod = OpConstant %uint 4093
%hit = OpConstant %uint 1000
%none = OpConstant %uint 4294967295
%v3ulong = OpTypeVector %ulong 3
%pgid = OpTypePointer Input %v3ulong
%puint = OpTypePointer CrossWorkgroup %uint
%fn = OpTypeFunction %void %puint %uint %uint
%gid = OpVariable %pgid Input
%k = OpFunction %void None %fn
%o = OpFunctionParameter %puint
%n = OpFunctionParameter %uint
%m = OpFunctionParameter %uint
%entry = OpLabel
%g3 = OpLoad %v3ulong %gid Aligned 32
%g64 = OpCompositeExtract %ulong %g3 0
%g = OpUConvert %uint %g64
%no_r = OpIEqual %bool %m %c0
OpBranchConditional %no_r %end %outer_pre
%outer_pre = OpLabel
%no_i = OpIEqual %bool %n %c0
OpBranch %outer
%outer = OpLabel
%r = OpPhi %uint %c0 %outer_pre %r1 %outer_latch
%s_outer = OpPhi %uint %g %outer_pre %s_out %outer_latch
OpBranchConditional %no_i %outer_latch %inner
%inner = OpLabel
%i = OpPhi %uint %i1 %inner_latch %c0 %outer
%s_in = OpPhi %uint %s %inner_latch %s_outer %outer
%mul = OpIMul %uint %s_in %lcg
%x = OpBitwiseXor %uint %i %salt
%s = OpIAdd %uint %x %mul
%rem = OpUMod %uint %s %mod
%found = OpIEqual %bool %rem %hit
OpBranchConditional %found %returned %inner_latch
%inner_latch = OpLabel
%i1 = OpIAdd %uint %i %c1
%more_i = OpULessThan %bool %i1 %n
OpBranchConditional %more_i %inner %outer_latch
%outer_latch = OpLabel
%s_out = OpPhi %uint %s_outer %outer %s %inner_latch
%r1 = OpIAdd %uint %r %c1
%more_r = OpULessThan %bool %r1 %m
OpBranchConditional %more_r %outer %end
%returned = OpLabel
%rn = OpIMul %uint %r %n
%step = OpIAdd %uint %i %rn
OpBranch %end
%end = OpLabel
%s_end = OpPhi %uint %s %returned %g %entry %s_out %outer_latch
%step_end = OpPhi %uint %step %returned %none %entry %none %outer_latch
%at = OpShiftLeftLogical %uint %g %c1
%at64 = OpUConvert %ulong %at
%p0 = OpInBoundsPtrAccessChain %puint %o %at64
OpStore %p0 %s_end Aligned 4
%at1 = OpBitwiseOr %uint %at %c1
%at164 = OpUConvert %ulong %at1
%p1 = OpInBoundsPtrAccessChain %puint %o %at164
OpStore %p1 %step_end Aligned 4
OpReturn
OpFunctionEnd
"""
RUN = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]]); q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, open(PATH, "rb").read()).build()
k = cl.Kernel(prg, "k")
for (n, m), want in WANT.items():
    o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.array(START, np.uint32))
    ev = k(q, (len(START) // 2,), None, o, np.uint32(n), np.uint32(m))
    got = np.empty(len(START), np.uint32); cl.enqueue_copy(q, got, o)
    if got.tolist() != want or ev.command_execution_status != 0:  # (CL_OUT_OF_RESOURCES: cut short)
        print("FAIL", n, m, ev.command_execution_status, got.tolist(), want)
print("OK")
"""
M = 0xFFFFFFFF


def search(g: int, n: int, m: int) -> list[int]:
    s = g
    for r in range(m):
        for i in range(n):
            s = (s * 1103515245 + (i ^ 12345)) & M
            if s % 4093 == 1000:
                return [s, r * n + i]
    return [s, M]


def _passes(python_with_icd, path: Path, want: dict, start: list[int] = [7] * 32) -> None:
    result = python_with_icd(f"PATH, WANT, START = {str(path)!r}, {want!r}, {start!r}\n" + RUN)
    assert result.returncode == 0 and "OK" in result.stdout and "FAIL" not in result.stdout, \
        result.stdout + result.stderr


def test_an_optimized_il_search_out_of_nested_loops(python_with_icd, tmp_path):
    (tmp_path / "k.spvasm").write_text(SEARCH)
    subprocess.run(["spirv-as", "--target-env", "spv1.0", str(tmp_path / "k.spvasm"), "-o", str(tmp_path / "k.spv")],
                   check=True)
    want = {(n, m): [x for g in range(16) for x in search(g, n, m)]
            for n, m in ((3000, 4), (3000, 2), (5, 3), (0, 3), (3000, 0))}
    _passes(python_with_icd, tmp_path / "k.spv", want)


def test_without_opt_such_il_programs_are_refused_with_a_log_that_says_why(python_with_icd, tmp_path):
    (tmp_path / "k.spvasm").write_text(SEARCH)
    subprocess.run(["spirv-as", "--target-env", "spv1.0", str(tmp_path / "k.spvasm"), "-o", str(tmp_path / "k.spv")],
                   check=True)
    code = f"""
import pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]])
prg = cl.Program(ctx, open({str(tmp_path / "k.spv")!r}, "rb").read())
try:
    prg.build()
    print("BUILT")
except cl.RuntimeError as e:
    assert e.code == cl.status_code.BUILD_PROGRAM_FAILURE, e.code
    print(prg.get_build_info(ctx.devices[0], cl.program_build_info.LOG))
"""
    result = python_with_icd(code, env={"VKCL_LLVM_OPT": str(tmp_path / "no-opt"), "VKCL_CACHE": "0"})
    assert result.returncode == 0, result.stderr
    assert "BUILT" not in result.stdout and "never repeat" in result.stdout and "opt-15" in result.stdout, \
        result.stdout


def _il_of_source(source: str, level: str, where: Path) -> Path:
    (where / "k.cl").write_text(source)
    subprocess.run(["clang-15", "-cl-std=CL1.2", "-target", "spir64", f"-{level}", "-emit-llvm", "-c", "-w", "-Xclang",
                    "-finclude-default-header", "k.cl", "-o", "k.bc"], cwd=where, check=True)
    subprocess.run(["llvm-spirv-15", "k.bc", "-o", "k.spv"], cwd=where, check=True)
    return where / "k.spv"


# Random kernels of tests/differential/nested_loops.py (returns, gotos, breaks and continues out
# of for, while and do-while loops), as SPIR-V of clang-15 at -O0 and -O2, against their source
# built for the host.
@FROM_SOURCE
@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("seed", [678, 711, 119])
def test_random_il_nested_loops_compute_what_the_host_does(python_with_icd, seed, level, tmp_path):
    source = nested_loops.kernel(random.Random(seed))
    exe = host_kernels.build_source(source, tmp_path, "host")
    want = {(n, m): [int(x) for x in host_kernels.run(exe, n, m).split()] for n, m in ((40, 7), (3, 0), (100, 9))}
    _passes(python_with_icd, _il_of_source(source, level, tmp_path), want)


# Edge values through the routed exits: NaN, infinities, -0, denormals and the largest floats,
# bit for bit (the phis demoted to locals and the exits' extra passes through the loops' tests
# must carry them unchanged).
FLOAT_SOURCE = """kernel void k(global uint *o, uint n, uint m) {
  uint g = get_global_id(0);
  float s = as_float(o[2 * g]), a = as_float(o[2 * g + 1]);
  for (uint r = 0; r < m; r++)
    for (uint i = 0; i < n; i++) {
      s = s * a;
      if (isnan(s) || isinf(s) || s == 0.0f) { o[2 * g] = as_uint(s); o[2 * g + 1] = r * n + i; return; }
    }
  o[2 * g] = as_uint(s); o[2 * g + 1] = 0xffffffffu;
}"""
F32_MAX, DENORMAL, NEG_ZERO, INF, NAN = 0x7F7FFFFF, 0x00000001, 0x80000000, 0x7F800000, 0x7FC00000
# (start, factor) per work-item, as float bits
FLOAT_STARTS = [(0x3F800000, 0x40000000), (F32_MAX, 0x3F000000), (DENORMAL, 0x3F000000), (NEG_ZERO, 0x40000000),
                (INF, 0x3F000000), (NAN, 0x3F800000), (0xBF800000, 0x4B800000), (0x00800000, 0x3F000000),
                (F32_MAX, 0x3F800001), (0x3F800000, 0x3F7FFFFF), (0xFF7FFFFF, 0x40000000), (0x3F800000, 0xBF800000)]


@FROM_SOURCE
@pytest.mark.parametrize("level", ["O0", "O2"])
def test_edge_floats_through_an_il_return_out_of_nested_loops(python_with_icd, level, tmp_path):
    import numpy as np
    start = [x for pair in FLOAT_STARTS for x in pair]

    def expected(n: int, m: int) -> list[int]:
        out = []
        for s0, a0 in FLOAT_STARTS:
            s, a, step = np.array([s0], np.uint32).view(np.float32), np.array([a0], np.uint32).view(np.float32), M
            with np.errstate(all="ignore"):
                for r in range(m):
                    for i in range(n):
                        s = (s * a).astype(np.float32)
                        if np.isnan(s[0]) or np.isinf(s[0]) or s[0] == 0:
                            step = r * n + i
                            break
                    if step != M:
                        break
            out += [int(s.view(np.uint32)[0]), step]
        return out

    path = _il_of_source(FLOAT_SOURCE, level, tmp_path)
    want = {(n, m): expected(n, m) for n, m in ((30, 3), (200, 2), (1, 0), (0, 4))}
    _passes(python_with_icd, path, want, start)
