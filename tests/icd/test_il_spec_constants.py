"""clSetProgramSpecializationConstant on an IL program (through pyopencl; its high-level
Program does not expose the call, its _Program does)."""
import shutil
import subprocess

import pytest

pytest.importorskip("pyopencl")
TOOLS = ("llvm-spirv-15", "spirv-as")
# `kernel void k(global int *o) { o[get_global_id(0)] = 12345; }` with the literal as
# specialisation constant 7 (default 12345), written as SPIR-V assembly.
SPEC_MODULE = """OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k" %gid
OpSource OpenCL_C 102000
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %gid Constant
OpDecorate %c SpecId 7
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%v3ulong = OpTypeVector %ulong 3
%pgid = OpTypePointer Input %v3ulong
%pint = OpTypePointer CrossWorkgroup %uint
%void = OpTypeVoid
%fn = OpTypeFunction %void %pint
%c = OpSpecConstant %uint 12345
%gid = OpVariable %pgid Input
%k = OpFunction %void None %fn
%o = OpFunctionParameter %pint
%entry = OpLabel
%g = OpLoad %v3ulong %gid Aligned 32
%g0 = OpCompositeExtract %ulong %g 0
%p = OpInBoundsPtrAccessChain %pint %o %g0
OpStore %p %c Aligned 4
OpReturn
OpFunctionEnd
"""


@pytest.fixture(scope="module")
def il_with_spec_constant(tmp_path_factory):
    if not all(shutil.which(t) for t in TOOLS):
        pytest.skip("needs " + ", ".join(TOOLS))
    d = tmp_path_factory.mktemp("il")
    (d / "s.spvasm").write_text(SPEC_MODULE)
    subprocess.run(["spirv-as", "--target-env", "spv1.0", str(d / "s.spvasm"), "-o", str(d / "s.spv")], check=True)
    return (d / "s.spv").read_bytes()


def test_specialisation_constant_set_and_errors(python_with_icd, il_with_spec_constant, tmp_path):
    (tmp_path / "il.spv").write_bytes(il_with_spec_constant)
    result = python_with_icd(f"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
il = open({str(tmp_path / "il.spv")!r}, "rb").read()
def run(value=None):
    p = cl.Program(ctx, il)
    if value is not None:
        p._get_prg().set_specialization_constant(7, np.int32(value))
    p = p.build()
    o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 64)
    p.k(q, (16,), None, o)
    r = np.empty(16, np.int32); cl.enqueue_copy(q, r, o); q.finish()
    return r
assert (run() == 12345).all()
assert (run(-7) == -7).all()
p = cl.Program(ctx, il)
for bad, code in ((lambda: p._get_prg().set_specialization_constant(8, np.int32(1)), "INVALID_SPEC_ID"),
                  (lambda: p._get_prg().set_specialization_constant(7, np.int64(1)), "INVALID_VALUE")):
    try:
        bad(); raise SystemExit("no error")
    except cl.Error as e:
        assert code in str(e), e
src = cl.Program(ctx, "kernel void k(global int *o) {{}}")
try:
    src._get_prg().set_specialization_constant(7, np.int32(1)); raise SystemExit("no error")
except cl.Error as e:
    assert "INVALID_PROGRAM" in str(e), e
print("OK")
""")
    assert result.returncode == 0 and "OK" in result.stdout, result.stdout + result.stderr


def test_no_il_is_claimed_without_the_translator(python_with_icd, il_with_spec_constant, tmp_path):
    """Where llvm-spirv is missing (the H200 machine has none) no IL program could be built:
    the device claims no cl_khr_il_program and no IL version, and clCreateProgramWithIL says
    CL_INVALID_OPERATION (no device of the context takes IL), so the CTS skips instead of
    failing every spirv_new sub-test; with the translator the same IL builds and runs."""
    (tmp_path / "il.spv").write_bytes(il_with_spec_constant)
    code = f"""
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev]); q = cl.CommandQueue(ctx)
il = open({str(tmp_path / "il.spv")!r}, "rb").read()
print("ext", "cl_khr_il_program" in dev.extensions.split(), repr(dev.il_version), len(dev.ils_with_version))
try:
    prog = cl.Program(ctx, il).build()
    out = np.zeros(4, np.int32); b = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    prog.k(q, (4,), None, b); cl.enqueue_copy(q, out, b); print("ran", out.tolist())
except cl.Error as e:
    print("error", e.code)
"""
    missing = python_with_icd(code, env={"VKCL_LLVM_SPIRV": str(tmp_path / "no-llvm-spirv")})
    assert missing.returncode == 0, missing.stderr[-3000:]
    assert "ext False '' 0" in missing.stdout and "error -59" in missing.stdout, missing.stdout + missing.stderr[-2000:]
    present = python_with_icd(code)
    assert present.returncode == 0, present.stderr[-3000:]
    assert "ext True 'SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2 SPIR-V_1.3 SPIR-V_1.4 SPIR-V_1.5 SPIR-V_1.6' 7" in present.stdout, \
        present.stdout
    assert "ran [12345, 12345, 12345, 12345]" in present.stdout, present.stdout + present.stderr[-2000:]
