"""Fixtures shared by the unit tests: the compiler's (tests/unit/test_compiler_*.py) and the
machine's Vulkan device (tests/unit/test_vulkan_*.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
# Corpus kernels that must not build: they have their own tests.
FAILING_KERNELS = ("syntax_error", "crash_clspv")
# A compute module's start for hand-written control flow tests: its types and the global id
# (MODULE_TYPES), constants of the test's own after it, then FUNCTION_START (%x: the id's x).
MODULE_TYPES = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%v3 = OpTypeVector %uint 3
%pin = OpTypePointer Input %v3
%gid = OpVariable %pin Input
"""
FUNCTION_START = """%main = OpFunction %void None %fn
%entry = OpLabel
%v = OpLoad %v3 %gid
%x = OpCompositeExtract %uint %v 0
"""


@pytest.fixture(scope="session", autouse=True)
def _compiler_cache_dir(tmp_path_factory):
    """Keep every test's compile cache out of ~/.cache, and stop the compiler worker at the end."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VKCL_CACHE_DIR", str(tmp_path_factory.mktemp("vkcl-cache")))
        mp.delenv("VKCL_CACHE", raising=False)
        mp.delenv("VKCL_CLSPV", raising=False)
        mp.delenv("VKCL_COMPILE_TIMEOUT", raising=False)
        yield
    try:
        from vkcl.compiler import shutdown
    except ImportError:
        return
    shutdown()


@pytest.fixture(scope="session")
def corpus():
    """Every buildable kernel of tests/kernels compiled once per variant:
    {(name, variant): CompileResult}, variants "physical" (CL1.2, 64-bit physical addressing),
    "logical" (CL1.2, descriptors) and "cl30" (CL3.0, physical addressing)."""
    from vkcl import compiler
    variants = {
        "physical": ("", compiler.DeviceCaps()),
        "logical": ("", compiler.DeviceCaps(physical_addressing=False)),
        "cl30": ("-cl-std=CL3.0", compiler.DeviceCaps()),
    }
    results = {}
    for path in sorted(KERNELS.glob("*.cl")):
        if path.stem in FAILING_KERNELS:
            continue
        for variant, (options, caps) in variants.items():
            results[(path.stem, variant)] = compiler.compile_source(path.read_text(), options, caps)
    return results


@pytest.fixture(scope="session")
def dev():
    """The LogicalDevice of the machine's first Vulkan device (lavapipe in CI)."""
    from vkcl.vulkan.device import logical_device
    from vkcl.vulkan.instance import instance
    inst = instance()
    if inst is None or not inst.physical_devices:
        pytest.skip("no usable Vulkan device")
    return logical_device(inst.physical_devices[0])


@pytest.fixture
def valid_spirv(tmp_path):
    """A check that a module passes spirv-val for Vulkan 1.3."""
    import subprocess

    def check(data: bytes) -> bool:
        path = tmp_path / "module.spv"
        path.write_bytes(data)
        return subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)]).returncode == 0
    return check


@pytest.fixture
def assemble_spirv(tmp_path):
    """spirv-as for Vulkan 1.3 on a module's text: its words as bytes."""
    import subprocess

    def assemble(text: str) -> bytes:
        (tmp_path / "module.spvasm").write_text(text)
        subprocess.run(["spirv-as", "--target-env", "vulkan1.3", "-o", str(tmp_path / "assembled.spv"),
                        str(tmp_path / "module.spvasm")], check=True)
        return (tmp_path / "assembled.spv").read_bytes()
    return assemble
