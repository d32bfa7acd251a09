"""IL programs (cl_khr_il_program, clCreateProgramWithIL): OpenCL-flavoured SPIR-V.

Such SPIR-V (capability Kernel, OpenCL memory model) cannot be given to Vulkan. It is turned
back into LLVM bitcode by the SPIRV-LLVM-Translator (`llvm-spirv -r`), which clspv then
compiles like any other bitcode (`-x ir`).
"""
from __future__ import annotations

import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from vkcl import log
from vkcl.compiler import il_lowering, il_versions, spirv, toolchain
from vkcl.compiler.errors import InvalidILError

CAPABILITY_SHADER, CAPABILITY_KERNEL = 1, 6
MEMORY_MODEL_OPENCL = 2
SOURCE_OPENCL_C = 3
_CL_STD = {100000: "CL1.0", 101000: "CL1.1", 102000: "CL1.2", 200000: "CL2.0", 300000: "CL3.0"}
_log = log.get("compiler")
ADDRESSING = {0: "Logical", 1: "Physical32", 2: "Physical64", 5348: "PhysicalStorageBuffer64"}


@dataclass
class ILInfo:
    version: tuple[int, int]
    addressing_model: str
    capabilities: set[int] = field(default_factory=set)
    source_version: int | None = None  # OpSource OpenCL_C version, e.g. 102000 for 1.2

    @property
    def cl_std(self) -> str:
        """The OpenCL C version to compile the IL as: its OpSource's, else 3.0 (which accepts
        every builtin; compiling as 1.2 a module that uses 2.0 builtins makes clspv crash)."""
        return _CL_STD.get(self.source_version, "CL3.0")

    @property
    def address_bits(self) -> int | None:
        return {"Physical32": 32, "Physical64": 64}.get(self.addressing_model)


def check_il(il: bytes) -> ILInfo:
    """Check that `il` is a whole SPIR-V module of the OpenCL (Kernel) flavour."""
    try:
        words = spirv.to_words(bytes(il))
        major, minor = spirv.version(words)
        if major != 1 or minor > 6:
            raise InvalidILError(f"unsupported SPIR-V version {major}.{minor}")
        if words[3] == 0 or words[4] != 0:
            raise InvalidILError("bad SPIR-V header (id bound 0 or schema not 0)")
        caps: set[int] = set()
        addressing = memory = source = None
        for pos, op, count in spirv.instructions(words):
            if op == spirv.OP_CAPABILITY:
                caps.add(words[pos + 1])
            elif op == spirv.OP_MEMORY_MODEL:
                addressing, memory = words[pos + 1], words[pos + 2]
            elif op == spirv.OP_SOURCE and words[pos + 1] == SOURCE_OPENCL_C:
                source = words[pos + 2]
    except spirv.SpirvFormatError as e:
        raise InvalidILError(f"not a SPIR-V module: {e}") from None
    if memory is None:
        raise InvalidILError("SPIR-V module has no OpMemoryModel")
    if CAPABILITY_KERNEL not in caps or memory != MEMORY_MODEL_OPENCL:
        flavour = "Shader (Vulkan/GLSL)" if CAPABILITY_SHADER in caps else "non-OpenCL"
        raise InvalidILError(f"{flavour} SPIR-V is not an OpenCL program: it needs the Kernel "
                             "capability and the OpenCL memory model")
    return ILInfo((major, minor), ADDRESSING.get(addressing, str(addressing)), caps, source)


def il_supported() -> bool:
    """Whether IL programs can be compiled here (the translator is installed)."""
    try:
        toolchain.llvm_spirv()
        return True
    except toolchain.ToolMissing:
        return False


OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT = 20, 21, 22
OP_SPEC_CONSTANT_TRUE, OP_SPEC_CONSTANT_FALSE, OP_SPEC_CONSTANT = 48, 49, 50
DECORATION_SPEC_ID = 1


def spec_constants(il: bytes) -> dict[int, str]:
    """The IL's specialisation constants: SpecId -> llvm-spirv type name (i1, i32, f64, ...)."""
    words = spirv.to_words(bytes(il))
    ids, types, constant_type = {}, {}, {}
    for pos, op, n in spirv.instructions(words):
        if op == spirv.OP_DECORATE and n >= 4 and words[pos + 2] == DECORATION_SPEC_ID:
            ids[words[pos + 1]] = words[pos + 3]
        elif op == OP_TYPE_BOOL:
            types[words[pos + 1]] = "i1"
        elif op == OP_TYPE_INT:
            types[words[pos + 1]] = f"i{words[pos + 2]}"
        elif op == OP_TYPE_FLOAT:
            types[words[pos + 1]] = f"f{words[pos + 2]}"
        elif op in (OP_SPEC_CONSTANT_TRUE, OP_SPEC_CONSTANT_FALSE, OP_SPEC_CONSTANT):
            constant_type[words[pos + 2]] = types.get(words[pos + 1])
    return {spec_id: constant_type[target] for target, spec_id in ids.items() if constant_type.get(target)}


def spec_const_argument(values: dict[int, tuple[str, bytes]]) -> str:
    """llvm-spirv's --spec-const= text for {SpecId: (type, value bytes)}."""
    parts = []
    for spec_id, (kind, raw) in sorted(values.items()):
        if kind.startswith("f"):
            fmt = {"f16": "<e", "f32": "<f", "f64": "<d"}[kind]
            value = repr(struct.unpack(fmt, raw[:struct.calcsize(fmt)])[0])
        else:
            # llvm-spirv reads integers as unsigned: give it the bits
            value = str(int(any(raw)) if kind == "i1" else int.from_bytes(raw, "little"))
        parts.append(f"{spec_id}:{kind}:{value}")
    return "--spec-const=" + " ".join(parts)


def to_bitcode(il: bytes, timeout: float, spec: dict[int, tuple[str, bytes]] | None = None) -> tuple[bytes | None, str]:
    """Translate OpenCL SPIR-V to LLVM bitcode (with specialisation constants set):
    (bitcode, log), bitcode None on failure."""
    try:
        exe = toolchain.llvm_spirv()
    except toolchain.ToolMissing as e:
        return None, f"{e}\n"
    with tempfile.TemporaryDirectory(prefix="vkcl-il-") as tmp:
        src, out = Path(tmp) / "input.spv", Path(tmp) / "output.bc"
        try:
            il = il_versions.to_1_4(il)
        except il_versions.UnsupportedIL as e:
            return None, f"{e}\n"
        except (KeyError, IndexError, ValueError) as e:  # a module it cannot read: llvm-spirv judges
            _log.info("IL version left as it is (%s: %s)", type(e).__name__, e)
        try:
            il = il_lowering.lower(il)
        except (KeyError, IndexError, ValueError) as e:  # a module it cannot read: llvm-spirv judges
            _log.info("IL left as it is (%s: %s)", type(e).__name__, e)
        src.write_bytes(il)
        try:
            extra = [spec_const_argument(spec)] if spec else []
            proc = subprocess.run([exe, "-r", *extra, str(src), "-o", str(out)], capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"{Path(exe).name} -r timed out after {timeout:g} s\n"
        log = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if proc.returncode != 0 or not out.exists():
            return None, f"{Path(exe).name} -r failed (exit status {proc.returncode}):\n{log}"
        return out.read_bytes(), log



def demote_phis(bitcode: bytes, timeout: float) -> tuple[str | None, str]:
    """The IL program's bitcode as text IR with its phis and the values that cross blocks in
    local variables (LLVM's reg2mem), opaque pointers, as loop_exits takes it: (IR, log), IR None
    where opt fails (toolchain.ToolMissing where it is not installed). (Its exits out of several loops are then routed as an OpenCL C
    program's are in the front end's IR, which clang keeps in locals too.)"""
    out, log = _opt(["-passes=reg2mem", "-S"], bitcode, timeout)
    return (out.decode("utf-8", "surrogateescape") if out is not None else None), log


def to_bitcode_again(ir: str, timeout: float) -> tuple[bytes | None, str]:
    """Text IR (demote_phis', rewritten) as bitcode again, checked by LLVM's verifier: clspv then
    reads it as it reads every IL program (text IR of the SPIR data layout made its linker warn)."""
    return _opt([], ir.encode("utf-8", "surrogateescape"), timeout)


def _opt(args: list[str], data: bytes, timeout: float) -> tuple[bytes | None, str]:
    exe = toolchain.llvm_opt()
    try:
        proc = subprocess.run([exe, "-opaque-pointers", *args, "-o", "-", "-"], input=data, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"{Path(exe).name} timed out after {timeout:g} s\n"
    if proc.returncode != 0:
        return None, (f"{Path(exe).name} {' '.join(args)} failed (exit status {proc.returncode}):\n"
                      + proc.stderr.decode("utf-8", "replace"))
    return proc.stdout, ""
