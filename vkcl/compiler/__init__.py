"""vkcl's compiler: OpenCL C (or OpenCL SPIR-V, or bitcode) to Vulkan SPIR-V with clspv, run in
a separate worker process, with reflection, program binaries and an on-disk cache.

Modules: options (build options), caps (device capabilities), worker/_worker_main (the clspv
process), external (VKCL_CLSPV), il (IL programs), spirv (word-level SPIR-V), reflection and
reflection_parser (clspv's reflection), descmap (CSV descriptor map), binary (program
binaries), cache (on-disk cache), driver (the compile entry points), builtins (shaders/).
"""
from __future__ import annotations

from vkcl.compiler.binary import ProgramBinary, is_vkcl_binary, pack, unpack
from vkcl.compiler.builtins import builtin_shader, shader_dir
from vkcl.compiler.caps import DeviceCaps
from vkcl.compiler.descmap import descriptor_map_csv
from vkcl.compiler.driver import (
    CompileResult, compile_il, compile_object, compile_source, link, spirv_for_device)
from vkcl.compiler.errors import CompilerError, InvalidBinaryError, InvalidILError, InvalidOptionsError
from vkcl.compiler.il import check_il, il_supported
from vkcl.compiler.il import spec_constants as il_spec_constants
from vkcl.compiler.options import BuildOptions, parse_options
from vkcl.compiler.reflection import (
    ArgReflection, Binding, KernelReflection, ProgramReflection, parse_reflection, strip_nonsemantic)
from vkcl.compiler.toolchain import compiler_version
from vkcl.compiler.worker import get_worker, shutdown


def start_worker() -> int:
    """Start the compiler worker now (it otherwise starts on the first compile); return its pid."""
    return get_worker().ping()


__all__ = [
    "ArgReflection", "Binding", "BuildOptions", "CompileResult", "CompilerError", "DeviceCaps",
    "InvalidBinaryError", "InvalidILError", "InvalidOptionsError", "KernelReflection",
    "ProgramBinary", "ProgramReflection", "builtin_shader", "check_il", "compile_il",
    "compile_object", "compile_source", "compiler_version", "descriptor_map_csv",
    "il_spec_constants", "il_supported", "is_vkcl_binary", "link", "pack", "parse_options", "parse_reflection",
    "shader_dir", "shutdown", "spirv_for_device", "start_worker", "strip_nonsemantic", "unpack",
]
