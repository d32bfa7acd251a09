"""OpenCL build, compile and link options (OpenCL 3.0 API spec 5.8.6 and 5.8.7), checked here
so that nothing unknown ever reaches clspv (an unknown option makes clspv call exit()).

parse_options(text, mode) -> BuildOptions, where mode is
  "build"   clBuildProgram: compile options (the link options -create-library and
            -enable-link-options are not allowed);
  "compile" clCompileProgram: the same set;
  "link"    clLinkProgram: only -create-library, -enable-link-options and the math options
            that the spec lists as link options.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

from vkcl.compiler.caps import DeviceCaps
from vkcl.compiler.errors import InvalidOptionsError

MODES = ("build", "compile", "link")
CL_STD_VERSIONS = ("CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0")
# An LLVM option (LLVM 21 and later): that clspv pass is skipped (see clspv_args).
INLINE_ENTRY_POINTS = "-inline-entry-points"
UNDO_INSTCOMBINE_OFF = "-opt-disable=undo-instcombine"
FAST_RELAXED_MATH = "__FAST_RELAXED_MATH__"  # OpenCL C's macro for -cl-fast-relaxed-math
DEFAULT_CL_STD = "CL1.2"  # "the highest OpenCL C 1.x language version supported" (spec 5.8.6.4)

# Link options that are also compile options (spec 5.8.7).
MATH_LINK_OPTIONS = frozenset({
    "-cl-denorms-are-zero", "-cl-no-signed-zeros", "-cl-unsafe-math-optimizations",
    "-cl-finite-math-only", "-cl-fast-relaxed-math", "-cl-no-subgroup-ifp",
})
LINK_ONLY_OPTIONS = frozenset({"-create-library", "-enable-link-options"})
COMPILE_FLAGS = MATH_LINK_OPTIONS | frozenset({
    "-w", "-Werror", "-cl-opt-disable", "-cl-mad-enable", "-cl-single-precision-constant",
    "-cl-fp32-correctly-rounded-divide-sqrt", "-cl-kernel-arg-info",
    "-cl-uniform-work-group-size", "-g",
    "-cl-strict-aliasing",  # OpenCL 1.0, deprecated since 1.1; the 1.2 CTS still passes it
})

# How each accepted flag reaches clspv: the clspv spelling, or None when clspv gets nothing.
_CLSPV_SPELLING = {
    "-w": "-w",
    "-Werror": None,  # applied by vkcl to the warnings it keeps in the log (diagnostics.py)
    "-cl-opt-disable": "-cl-opt-disable",
    "-cl-mad-enable": "-cl-mad-enable",
    "-cl-single-precision-constant": "-cl-single-precision-constant",
    "-cl-fp32-correctly-rounded-divide-sqrt": "-cl-fp32-correctly-rounded-divide-sqrt",
    "-cl-denorms-are-zero": "-cl-denorms-are-zero",
    "-cl-no-signed-zeros": "-cl-no-signed-zeros",
    "-cl-unsafe-math-optimizations": "-cl-unsafe-math-optimizations",
    # Finite math is a permission vkcl does not take: under it LLVM folded the prelude's
    # double-double builtins wrong for finite inputs (pow(x, 2) of a double gave |x|^3, tgamma
    # and lgamma 40% off: Rodinia's particlefilter). -cl-fast-relaxed-math is then the unsafe
    # math it also means, with its macro (clspv_args).
    "-cl-finite-math-only": None,
    "-cl-fast-relaxed-math": "-cl-unsafe-math-optimizations",
    "-cl-uniform-work-group-size": "-uniform-workgroup-size",  # clspv's own name
    "-cl-kernel-arg-info": None,  # always passed: reflection needs the argument names
    "-cl-no-subgroup-ifp": None,  # not known to the clspv in pyclspv 0.0.1
    "-g": None,                   # accepted and ignored
    "-cl-strict-aliasing": None,
    "-create-library": None,
    "-enable-link-options": None,
}

_MACRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\([A-Za-z0-9_, .]*\))?$")


@dataclass(frozen=True)
class BuildOptions:
    text: str = ""
    mode: str = "build"
    defines: tuple[tuple[str, str | None], ...] = ()
    include_dirs: tuple[str, ...] = ()
    cl_std: str | None = None
    flags: frozenset[str] = field(default_factory=frozenset)

    @property
    def kernel_arg_info(self) -> bool:
        """Whether clGetKernelArgInfo may report argument information (-cl-kernel-arg-info)."""
        return "-cl-kernel-arg-info" in self.flags

    @property
    def create_library(self) -> bool:
        return "-create-library" in self.flags

    @property
    def enable_link_options(self) -> bool:
        return "-enable-link-options" in self.flags

    @property
    def language_version(self) -> str:
        return self.cl_std or DEFAULT_CL_STD

    def has(self, flag: str) -> bool:
        return flag in self.flags

    def canonical(self) -> str:
        """The options in a normal form (order of flags, spelling of -D/-I): for cache keys."""
        parts = [f"mode={self.mode}", f"std={self.language_version}"]
        parts += [f"-D{n}" if v is None else f"-D{n}={v}" for n, v in self.defines]
        parts += [f"-I{d}" for d in self.include_dirs]
        parts += sorted(self.flags)
        return shlex.join(parts)

    def clspv_args(self, caps: DeviceCaps, *, input_kind: str = "cl", output_kind: str = "spirv",
                   extra_include_dirs: tuple[str, ...] = (), packed_structs: bool = True,
                   unroll_loops: bool = True) -> list[str]:
        """The complete clspv argument list for one compile of this program on `caps`.

        input_kind: "cl" (OpenCL C) or "ir" (LLVM bitcode); output_kind: "spirv" or "bitcode";
        packed_structs, unroll_loops: see DeviceCaps.clspv_args.
        """
        if input_kind not in ("cl", "ir") or output_kind not in ("spirv", "bitcode"):
            raise ValueError(f"bad input/output kind {input_kind!r}/{output_kind!r}")
        std = self.language_version
        args: list[str] = []
        if input_kind == "ir":
            args += ["-x", "ir"]
        if output_kind == "bitcode":
            args.append("--output-format=bc")
        args += [f"-cl-std={std}", INLINE_ENTRY_POINTS, "-cl-kernel-arg-info"]
        # clspv's UndoInstCombine pass made byte 2 of a ulong2's element byte 0 (it drops the
        # offset inside the wide element); without it the long-vector lowering and repair 20
        # (spirv_wide_vectors.py) take such elements apart exactly (docs/architecture.md).
        args.append(UNDO_INSTCOMBINE_OFF)
        uniform = "-cl-uniform-work-group-size" in self.flags or not caps.non_uniform_workgroups
        if uniform and std in ("CL2.0", "CL3.0"):
            args.append("-uniform-workgroup-size")
        if std == "CL3.0" and caps.features:
            args.append("-enable-feature-macros=" + ",".join(caps.features))
        elif caps.features:
            # cl_khr_integer_dot_product defines its feature macros for every OpenCL C version,
            # and its built-ins are declared under them.
            args += [f"-D{f}" for f in caps.features if f.startswith("__opencl_c_integer_dot_product")]
        args += caps.clspv_args(packed_structs, unroll_loops)
        for flag in sorted(self.flags):
            spelling = _CLSPV_SPELLING.get(flag)
            if spelling and spelling not in args:
                args.append(spelling)
        if "-cl-fast-relaxed-math" in self.flags:
            args.append(f"-D{FAST_RELAXED_MATH}=1")
        for name, value in self.defines:
            args.append(f"-D{name}" if value is None else f"-D{name}={value}")
        args += [f"-I{os.path.abspath(d)}" for d in self.include_dirs]
        args += [f"-I{d}" for d in extra_include_dirs]
        return args


def parse_options(text: str | None, mode: str = "build") -> BuildOptions:
    """Parse and check an OpenCL options string; raise InvalidOptionsError on anything wrong."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    text = text or ""
    try:
        tokens = shlex.split(text)
    except ValueError as e:
        raise InvalidOptionsError(f"malformed options ({e}): {text!r}") from None
    defines: list[tuple[str, str | None]] = []
    includes: list[str] = []
    flags: set[str] = set()
    cl_std: str | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok.startswith("-D") or tok.startswith("-I"):
            _only_compile(tok[:2], mode)
            value = tok[2:]
            if not value:
                if i >= len(tokens):
                    raise InvalidOptionsError(f"option '{tok}' needs a value")
                value = tokens[i]
                i += 1
            if tok.startswith("-D"):
                defines.append(_parse_define(value))
            else:
                includes.append(value)
        elif tok.startswith("-cl-std"):
            _only_compile("-cl-std", mode)
            cl_std = _parse_cl_std(tok)
        elif tok in LINK_ONLY_OPTIONS:
            if mode != "link":
                raise InvalidOptionsError(f"'{tok}' is a link option (clLinkProgram only)")
            flags.add(tok)
        elif tok in COMPILE_FLAGS:
            if mode == "link" and tok not in MATH_LINK_OPTIONS:
                raise InvalidOptionsError(f"'{tok}' is not a link option")
            flags.add(tok)
        else:
            raise InvalidOptionsError(f"unknown option '{tok}'")
    if "-enable-link-options" in flags and "-create-library" not in flags:
        raise InvalidOptionsError("-enable-link-options needs -create-library")
    return BuildOptions(text=text, mode=mode, defines=tuple(defines), include_dirs=tuple(includes),
                        cl_std=cl_std, flags=frozenset(flags))


def _only_compile(option: str, mode: str) -> None:
    if mode == "link":
        raise InvalidOptionsError(f"'{option}' is not a link option")


def _parse_define(value: str) -> tuple[str, str | None]:
    name, eq, definition = value.partition("=")
    if not _MACRO_NAME.match(name):
        raise InvalidOptionsError(f"-D: bad macro name {name!r}")
    return (name, definition if eq else None)


def _parse_cl_std(tok: str) -> str:
    _, eq, value = tok.partition("=")
    if tok.split("=", 1)[0] != "-cl-std" or not eq:
        raise InvalidOptionsError(f"malformed option '{tok}' (expected -cl-std=CLx.y)")
    value = value.upper()
    if value not in CL_STD_VERSIONS:
        raise InvalidOptionsError(f"unsupported OpenCL C version '{tok}' (one of {', '.join(CL_STD_VERSIONS)})")
    return value
