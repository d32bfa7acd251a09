"""Compiling programs: OpenCL C to SPIR-V, to bitcode objects, linking, IL, with the cache.

Every clspv run goes to the worker process (or to VKCL_CLSPV's executable). A failed build is
a CompileResult with ok=False and the reason in its log, never an exception; exceptions are
for bad arguments (InvalidOptionsError, InvalidILError, ValueError).
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import hashlib
import re
import shlex
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Union

from vkcl import log, trace
from vkcl.compiler import (argument_layout, build_ways, byvalue_args, cache, diagnostics, il as il_mod, loop_exits,
                           packed_locals, pointer_arrays, pointer_compares, pointer_units, pointer_variables, prelude, private_volatile, settings, spirv, spirv_args, spirv_bounds,
                           spirv_fixes, spirv_merge_access, spirv_nesting, spirv_odd_widths, spirv_printf,
                           spirv_single_pass_loops, struct_copies, toolchain, vector_inserts)
from vkcl.compiler.binary import ProgramBinary
from vkcl.compiler.prelude import includes
from vkcl.compiler.caps import PHYSICAL_STORAGE_BUFFERS, REWRITE_PACKED_STRUCTS, DeviceCaps
from vkcl.compiler.external import compile_with_executable
from vkcl.compiler.options import CL_STD_VERSIONS, INLINE_ENTRY_POINTS, BuildOptions, parse_options
from vkcl.compiler.reflection import ProgramReflection, ReflectionError, parse_reflection
from vkcl.compiler.worker import CompileOutput, get_worker

_log = log.get("compiler")
BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")
_LINK_CRASH_HINT = ("(when linking, a function that no object defines makes clspv crash: "
                    "every function a kernel calls must be defined in one of the linked programs)\n")


@dataclass
class CompileResult:
    ok: bool
    log: str = ""
    spirv: bytes | None = None
    bitcode: bytes | None = None
    reflection: ProgramReflection | None = None
    from_cache: bool = False
    seconds: float = 0.0
    binary_type: str = "executable"  # "executable" (SPIR-V), "object" or "library" (bitcode)
    status: str = "ok"               # "ok", "error", "crashed", "timeout", "unavailable"
    options: str = ""
    caps_key: str = ""
    compiler_version: str = ""
    cl_std: str = ""                       # OpenCL C version of the sources
    uniform_work_group_size: bool = False  # compiled with -cl-uniform-work-group-size

    def to_binary(self) -> ProgramBinary:
        payload = self.spirv if self.binary_type == "executable" else self.bitcode
        if not self.ok or payload is None:
            raise ValueError("only a successful compile has a binary")
        return ProgramBinary(self.binary_type, payload, self.options, self.caps_key,
                             self.compiler_version, self.reflection, self.log, self.cl_std,
                             self.uniform_work_group_size)

    @classmethod
    def from_binary(cls, binary: ProgramBinary, *, from_cache: bool = False, seconds: float = 0.0) -> "CompileResult":
        return cls(ok=True, log=binary.log, spirv=binary.spirv, bitcode=binary.bitcode,
                   reflection=binary.reflection, from_cache=from_cache, seconds=seconds,
                   binary_type=binary.binary_type, options=binary.options, caps_key=binary.caps_key,
                   compiler_version=binary.compiler_version, cl_std=binary.cl_std,
                   uniform_work_group_size=binary.uniform_work_group_size)


def _options(options: BuildOptions | str | None, mode: str) -> BuildOptions:
    if options is None or isinstance(options, str):
        return parse_options(options, mode)
    if (mode == "link") != (options.mode == "link"):
        raise ValueError(f"options parsed for {options.mode!r} cannot be used to {mode}")
    return options


# A build's first attempt, with every call inlined into its kernels, ends by this time.monotonic()
# deadline (see INLINED_SHARE); None: each clspv run gets VKCL_COMPILE_TIMEOUT.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("vkcl_compile_deadline", default=None)
# The share of VKCL_COMPILE_TIMEOUT (at least INLINED_MIN_S) a build gets with -inline-entry-points
# before it is built again without (_inlining_optional).
INLINED_SHARE, INLINED_MIN_S = 0.25, 30.0


def _run(inputs: list[bytes], args: list[str]) -> CompileOutput:
    timeout = float(settings.get("compile_timeout"))
    deadline = _DEADLINE.get()
    if deadline is not None:
        timeout = min(timeout, max(deadline - time.monotonic(), 0.5))
    exe = toolchain.external_clspv()
    if exe:
        return compile_with_executable(exe, inputs, args, timeout)
    return get_worker().compile(inputs, args, timeout)


def _run_cl(source: bytes, args: list[str], include_dirs=(), headers: dict | None = None,
            front_args: tuple[str, ...] = (), front_route: bool = False, exits: bool = False,
            pointer_ints: bool = False) -> CompileOutput:
    """clspv on one OpenCL C source (the prelude already in front). A source that declares a
    struct or union, or whose user part names a 3-, 8- or 16-element vector type or casts to a
    pointer type (`front_route`: vector_inserts.may_insert, pointer_units.may_narrow), goes
    through clspv's front end alone first (`--output-format=ll`, with `front_args`), and clspv
    then compiles that IR (`-x ir`: the same SPIR-V as from the source) with its aggregate
    copies through local or private memory typed (struct_copies), its `__local` arrays of packed
    structs indexed as words (packed_locals), its narrowing pointer arithmetic in the narrowest
    unit (pointer_units) and its dynamic inserts into such vectors written per element
    (vector_inserts). With `exits`, every program goes that way, and its exits out of several
    loops at once are taken through the loops' headers (loop_exits). With `pointer_ints`, its
    private variables of global pointers are kept as integers (pointer_variables)."""
    if not (front_route or exits or pointer_ints or struct_copies.may_copy(source, include_dirs, headers)
            or pointer_arrays.may_index(source) or spirv_merge_access.may_be_volatile(source, include_dirs, headers)):
        return _run([source], args)
    front = _run([source], [a for a in args if not a.startswith("--output-format=")]
                 + [*front_args, "--output-format=ll"])
    if not front.ok:
        return front
    ir = front.binary.rstrip(b"\0").decode("utf-8", "surrogateescape")
    ir = private_volatile.rewrite(ir) or ir
    ir = struct_copies.rewrite(ir) or ir
    ir = packed_locals.rewrite(ir) or ir
    ir = pointer_units.rewrite(ir) or ir
    ir = vector_inserts.rewrite(ir) or ir
    ir = pointer_arrays.rewrite(ir) or ir
    if PHYSICAL_STORAGE_BUFFERS in args:
        ir = pointer_compares.rewrite(ir) or ir
    if exits:
        ir = loop_exits.rewrite(ir) or ir
    if pointer_ints:
        ir = pointer_variables.rewrite(ir) or ir
    if REWRITE_PACKED_STRUCTS in args and not packed_locals.uses_packed(ir):
        # clspv's pass rewrites the accesses of natural structs too, and got member offsets
        # wrong: in pyopencl's GPU scans, whose `struct __attribute__((packed)) { cfloat_t
        # value; int dummy; }` has its natural layout, each imaginary part copied from the
        # input buffer was read from byte 32i + 16 instead of 8i + 4.
        args = [a for a in args if a != REWRITE_PACKED_STRUCTS]
    out = _run([ir.encode("utf-8", "surrogateescape")], ["-x", "ir", *args])
    out.log = front.log + out.log
    return out


def _run_routed_il(bitcode: bytes, args: list[str]) -> CompileOutput:
    """clspv on an IL program's bitcode (from llvm-spirv: SSA, phis) with its exits out of several
    loops at once taken through the loops' headers (loop_exits), its phis demoted first
    (il.demote_phis) to the locals loop_exits works on."""
    timeout = float(settings.get("compile_timeout"))
    try:
        ir, log = il_mod.demote_phis(bitcode, timeout)
        routed = loop_exits.rewrite(ir) if ir is not None else None
        if routed is None:
            return CompileOutput("error", log=log or "vkcl: no exit out of several loops could be routed\n")
        again, log = il_mod.to_bitcode_again(routed, timeout)
    except toolchain.ToolMissing as e:
        return CompileOutput("unavailable", log=f"vkcl: {e}\n")
    if again is None:
        return CompileOutput("error", log=log)
    return _run([again], args)


def _run_source(sources: list[bytes], args: list[str], include_dirs=(), headers: dict | None = None,
                front_args: tuple[str, ...] = (), exits: bool = False,
                pointer_ints: bool = False) -> tuple[CompileOutput, dict]:
    """clspv on OpenCL C (with the prelude; `include_dirs` and `headers`: where it finds what
    the source includes). Where its front end refuses a by-value kernel argument's type, that
    type is passed as bytes and the source built again (byvalue_args); also returns the names
    the reflection must then be given back."""
    def with_prelude(source: bytes) -> bytes:
        return prelude.with_prelude(source, include_dirs, headers)

    defines = " ".join(a for a in args if a.startswith("-D"))
    front_route = (vector_inserts.may_insert(sources[0], include_dirs, headers, defines) or
                   pointer_units.may_narrow(sources[0], include_dirs, headers, defines))
    if len(sources) == 1:
        out = _run_cl(with_prelude(sources[0]), args, include_dirs, headers, front_args, front_route, exits, pointer_ints)
    else:
        out = _run([with_prelude(s) for s in sources], args)
    current, refused, renamed = sources[0], set(), {}
    for _ in range(byvalue_args.MAX_ROUNDS):
        if out.ok or len(sources) != 1:
            break
        before = with_prelude(current).count(b"\n") - current.count(b"\n")
        more = byvalue_args.refused_types(current, out.log, (before, 0)) - refused
        if not more:
            break
        refused |= more
        rewrite = byvalue_args.pass_as_bytes(sources[0], refused)
        current, renamed = rewrite.source, rewrite.names
        out = _run_cl(with_prelude(current), args, include_dirs, headers, front_args, front_route, exits, pointer_ints)
    if len(sources) == 1:
        before = with_prelude(current).count(b"\n") - current.count(b"\n")
        out.log = diagnostics.shift_source_lines(out.log, before)
    return out, renamed


def _write_headers(root: Path, headers: dict[str, str | bytes]) -> None:
    for name, text in headers.items():
        rel = PurePosixPath(name)
        if not name or rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"bad header name {name!r}: it must be a relative path inside the program")
        path = root.joinpath(*rel.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else bytes(text))


def _compile(inputs: list[bytes], opts: BuildOptions, caps: DeviceCaps, *, input_kind: str,
             binary_type: str, headers: dict | None = None, cacheable: bool = True,
             check_bounds: bool | None = None, from_il: bool = False) -> CompileResult:
    start = time.perf_counter()
    bounds = settings.get("check_bounds") if check_bounds is None else check_bounds
    version = _safe_version()
    more = shlex.split(settings.get("clspv_options") or "")
    key = None
    if cacheable:
        # The repairs' version and the prelude's digest too: programs cached before either
        # changed are not reused.
        parts: list[bytes | str] = [binary_type, input_kind, opts.canonical(), caps.key(), version,
                                    f"fixes{spirv_fixes.VERSION}", f"prelude{prelude.DIGEST}", *more]
        if bounds:  # instrumented and plain binaries never mix
            parts.append(f"bounds{spirv_bounds.VERSION}")
        for name in sorted(headers or {}):
            parts += [name, headers[name]]
        parts += inputs
        key = cache.make_key(*parts)
        hit = cache.load(key)
        if hit is not None and hit.binary_type == binary_type:
            result = CompileResult.from_binary(hit, from_cache=True, seconds=time.perf_counter() - start)
            result.options = opts.text  # the key is the normalized options, not their spelling
            # Cleaned again: a program cached before a warning group joined OFF_BY_DEFAULT
            # keeps that warning in its stored log otherwise.
            result.log = diagnostics.clean(result.log)
            if trace.ENABLED:
                _trace_compile(result, input_kind)
            return result
    output_kind = "spirv" if binary_type == "executable" else "bitcode"
    renamed: dict = {}
    with tempfile.TemporaryDirectory(prefix="vkcl-headers-") as tmp:
        extra: tuple[str, ...] = ()
        if headers:
            _write_headers(Path(tmp), headers)
            extra = (tmp,)
        # Struct accesses as bytes only where a packed struct needs them (struct_copies.declares_packed);
        # the front end alone may still skip the layout check that option skips (struct_copies).
        packed = input_kind != "cl" or any(struct_copies.declares_packed(s, opts.include_dirs, headers) for s in inputs)
        front_args = (REWRITE_PACKED_STRUCTS,) if caps.int8 and not packed else ()

        def build(unroll_loops: bool = True, inline: bool = True, rotate: bool = True, closed_forms: bool = True,
                  exits: bool = False, pointer_ints: bool = False):
            args = opts.clspv_args(caps, input_kind=input_kind, output_kind=output_kind, extra_include_dirs=extra,
                                   packed_structs=packed, unroll_loops=unroll_loops)
            if not inline:
                args = [a for a in args if a != INLINE_ENTRY_POINTS]
            if not rotate:
                args.append(spirv_single_pass_loops.NO_ROTATION)
            if not closed_forms:
                args.append(spirv_odd_widths.NO_CLOSED_FORMS)
            with _progress(sum(len(i) for i in inputs), input_kind):
                if input_kind == "cl":
                    return (*_run_source(inputs, args + more, opts.include_dirs, headers, front_args, exits,
                                         pointer_ints), args)
                if exits:
                    return _run_routed_il(inputs[0], args + more), {}, args
                return _run(inputs, args + more), {}, args

        optional = _inlining_optional(opts, caps)
        budget = max(INLINED_MIN_S, INLINED_SHARE * float(settings.get("compile_timeout")))
        token = _DEADLINE.set(time.monotonic() + budget if optional else None)
        try:
            out, renamed, args = build(True)
        finally:
            _DEADLINE.reset(token)
        # clspv inlines every call into the kernels (-inline-entry-points), and a program calling
        # many heavy builtins then grew past what its passes finish: pyopencl's bessel_jn (its
        # fp64 sin, cos, log and pow from the prelude at dozens of call sites) ran for more than
        # 400 s, and built in 0.6 s with its functions kept (results within 1e-15 of mpmath's).
        # Where the language allows (no generic address space, which needs the inlining), a build
        # that outlasts its share of the timeout is made again without it.
        # The first build, or another way of it where that one cannot be used (build_ways).
        (out, renamed, args), shape = build_ways.settle(
            build, (out, renamed, args), caps, input_kind=input_kind, output_kind=output_kind, optional=optional,
            routable=input_kind == "cl" or (from_il and len(inputs) == 1),
            mentions=lambda pattern: any(includes.mentions(pattern, s, opts.include_dirs, headers) for s in inputs))
        volatile = input_kind == "cl" and any(spirv_merge_access.may_be_volatile(
            s, opts.include_dirs, headers, " ".join(a for a in args + more if a.startswith("-D"))) for s in inputs)
        finish = functools.partial(_result, opts=opts, caps=caps, binary_type=binary_type, version=version,
                                   merge=(caps.merge_narrow_accesses or caps.roll_copies) and input_kind == "cl"
                                   and not volatile, volatile=volatile, bounds=bounds)
        result = finish(out, renamed)
        # llvmpipe runs conditionals nested past caps.max_nesting wrong (spirv_nesting.py), and
        # LLVM's forced unrolling nests one level per exit of each copy: such a program is built
        # again with its loops rolled, and refused if it still nests too deep.
        if result.ok and caps.max_nesting and output_kind == "spirv":
            depth = spirv_nesting.deepest(result.spirv)
            if depth > caps.max_nesting and shape["unroll_loops"] and caps.loop_unroll_count:
                _log.info("conditionals nest %d deep; building again with loops rolled", depth)
                rolled, rolled_renamed, _ = build(**{**shape, "unroll_loops": False})
                if (rolled.ok and not spirv_single_pass_loops.single_pass_loops(rolled.binary)
                        and not spirv_odd_widths.uncarried(rolled.binary)):
                    again = finish(rolled, rolled_renamed)
                    if again.ok:
                        result, depth = again, spirv_nesting.deepest(again.spirv)
            if depth > caps.max_nesting:
                result.ok, result.status, result.spirv = False, "error", None
                result.log += spirv_nesting.refusal(depth, caps.max_nesting)
    result.seconds = time.perf_counter() - start
    if result.ok and key is not None:
        cache.store(key, result.to_binary())
    if trace.ENABLED:
        _trace_compile(result, input_kind)
    return result


def _result(out: CompileOutput, renamed: dict, *, opts: BuildOptions, caps: DeviceCaps, binary_type: str,
            version: str, merge: bool, bounds: bool, volatile: bool = False) -> CompileResult:
    """The CompileResult of clspv's output `out`: its log cleaned, -Werror applied, the binary
    repaired and reflected (_attach_output) where it built."""
    ok, status, log = out.ok, out.status, diagnostics.clean(out.log)
    if ok and opts.has("-Werror") and not opts.has("-w") and diagnostics.has_warnings(log):
        ok, status, log = False, "error", diagnostics.warnings_as_errors(log)
    result = CompileResult(ok=ok, log=log, status=status, binary_type=binary_type,
                           options=opts.text, caps_key=caps.key(), compiler_version=version,
                           cl_std=opts.language_version,
                           uniform_work_group_size=opts.has("-cl-uniform-work-group-size"))
    if ok:
        _attach_output(result, out.binary, opts, caps, bounds, merge, volatile)
        if renamed and result.reflection is not None:
            byvalue_args.restore_names(result.reflection, renamed)
    return result


@contextlib.contextmanager
def _progress(size: int, input_kind: str):
    """One line on stderr (a warning of the compiler group) when a compile is still running after
    VKCL_BUILD_PROGRESS_S seconds; nothing for the quick compiles of a normal run."""
    after = float(settings.get("build_progress_s"))
    if after <= 0:
        yield
        return
    start = time.monotonic()
    timer = threading.Timer(after, lambda: _log.warning(
        "still compiling %d bytes of %s after %.0f s (clspv)", size,
        "OpenCL C" if input_kind == "cl" else "LLVM bitcode", time.monotonic() - start))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _trace_compile(result: CompileResult, input_kind: str) -> None:
    end = time.monotonic_ns()
    trace.span(f"compile ({input_kind} -> {result.binary_type})", "compile", end - int(result.seconds * 1e9), end,
               {"cache": "hit" if result.from_cache else "miss", "status": result.status})


def output_version(caps: DeviceCaps) -> str:
    """A short digest of everything that decides the SPIR-V made for a device with `caps`:
    clspv's version, the repairs', the prelude's text and the caps themselves."""
    parts = (_safe_version(), f"fixes{spirv_fixes.VERSION}", f"prelude{prelude.DIGEST}", caps.key())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


def _safe_version() -> str:
    try:
        return toolchain.compiler_version()
    except toolchain.ToolMissing:
        return "unavailable"


# OpenCL C versions with only the 1.x atomic functions, which are relaxed (OpenCL C 1.2, 6.12.11).
_RELAXED_ATOMICS_ONLY = ("CL1.0", "CL1.1", "CL1.2")


def _attach_output(result: CompileResult, binary: bytes, opts: BuildOptions, caps: DeviceCaps,
                   check_bounds: bool = False, merge_accesses: bool = False, volatile_local: bool = False) -> None:
    if result.binary_type != "executable":
        if binary[:4] not in BITCODE_MAGICS:
            result.ok, result.status = False, "error"
            result.log += "clspv returned something that is not LLVM bitcode\n"
        else:
            result.bitcode = binary
        return
    try:
        private = spirv.private_memory_sizes(spirv.to_words(binary))  # before vkcl adds its own
        unsafe = opts.has("-cl-unsafe-math-optimizations") or opts.has("-cl-fast-relaxed-math")
        binary = spirv_fixes.repair(binary, mad_enable=opts.has("-cl-mad-enable"), unsafe_math=unsafe,
                                    relaxed_atomics=opts.language_version in _RELAXED_ATOMICS_ONLY,
                                    float_modes=(caps.preserve_inf_nan, caps.preserve_denorms, caps.rounding_mode_rte),
                                    narrow_scopes=caps.narrow_memory_scopes, zero_operands=caps.negate_zero_operands,
                                    round_even=caps.round_even_from_floor,
                                    merge_accesses=merge_accesses and caps.merge_narrow_accesses,
                                    roll_copies=merge_accesses and caps.roll_copies,
                                    barrier_loops=(caps.loop_unroll_count, caps.loop_unroll_size),
                                    loop_cuts=caps.loop_unroll_count > 0, volatile_local=volatile_local, resume_limit=caps.resume_limit)
        reflection = parse_reflection(binary)
        refused = argument_layout.reconcile(binary, reflection)
        # Conversions to double need the arguments' true places, and add members after them.
        converted = spirv_args.convert_arguments_on_host(binary, caps.max_push_constant_size,
                                                         argument_layout.by_value_ranges(reflection))
        if converted is not binary:
            binary, reflection = converted, parse_reflection(converted)
            refused = argument_layout.reconcile(binary, reflection)
        result.reflection = reflection
        for name, kernel in reflection.kernels.items():
            kernel.private_mem_size = private.get(name, 0)
        result.log += "".join(line + "\n" for line in refused)
        result.spirv = spirv_printf.fix_printf_return(binary, result.reflection.printf_buffer)
        if check_bounds:
            result.spirv, result.log = _check_bounds(result.spirv, result.reflection, caps, result.log)
    except (ReflectionError, spirv.SpirvFormatError) as e:
        result.ok, result.status = False, "error"
        result.log += f"clspv's output could not be read: {e}\n"


def _check_bounds(binary: bytes, reflection, caps: DeviceCaps, log: str) -> tuple[bytes, str]:
    """VKCL_CHECK_BOUNDS: the module instrumented (spirv_bounds), each kernel told where its
    table address goes; unchanged, with a line in the log, where the push constants are full."""
    instrumented, offsets = spirv_bounds.instrument(binary)
    if not offsets:
        return binary, log
    if max(offsets.values()) + 8 > caps.max_push_constant_size:
        return binary, log + "warning: VKCL_CHECK_BOUNDS: no push-constant room for the bounds table; not checked\n"
    for name, offset in offsets.items():
        kernel = reflection.kernels.get(name)
        if kernel is not None:
            kernel.bounds_table_offset = offset
            kernel.push_constant_size = max(kernel.push_constant_size, offset + 8)
    return instrumented, log


_INCLUDE = re.compile(rb"#\s*include")


def _inlining_optional(opts: BuildOptions, caps: DeviceCaps) -> bool:
    """Whether clspv may compile the program without -inline-entry-points: it refuses to for
    languages with the generic address space (OpenCL C 2.0, C++ for OpenCL, 3.0 with the feature)."""
    version = opts.language_version
    if version in ("CL1.0", "CL1.1", "CL1.2"):
        return True
    return version == "CL3.0" and "__opencl_c_generic_address_space" not in caps.features


def _cacheable(opts: BuildOptions, sources: list[bytes], headers: dict | None) -> bool:
    # Files found through the user's -I directories (or in the working directory) are not part
    # of the key: a program that includes anything is cached only when its headers were given
    # in memory and no -I directory could shadow them. A program that includes nothing is
    # cached whatever its -I options (pyopencl adds one to every build).
    if not any(_INCLUDE.search(s) for s in sources):
        return True
    return bool(headers) and not opts.include_dirs


def _source_bytes(source: str | bytes | list) -> list[bytes]:
    # clCreateProgramWithSource's strings make one program (one translation unit): joined.
    items = source if isinstance(source, list) else [source]
    return [b"".join(s.encode() if isinstance(s, str) else bytes(s) for s in items)]


def compile_source(source: str | bytes | list, options: BuildOptions | str | None, caps: DeviceCaps,
                   headers: dict[str, str] | None = None, check_bounds: bool | None = None) -> CompileResult:
    """clBuildProgram of OpenCL C source (a list of strings is joined into one program):
    SPIR-V and its reflection. `check_bounds`: instrument it (spirv_bounds); None: as
    VKCL_CHECK_BOUNDS says."""
    opts = _options(options, "build")
    sources = _source_bytes(source)
    return _compile(sources, opts, caps, input_kind="cl", binary_type="executable", headers=headers,
                    cacheable=_cacheable(opts, sources, headers), check_bounds=check_bounds)


def compile_object(source: str | bytes, options: BuildOptions | str | None, caps: DeviceCaps,
                   headers: dict[str, str] | None = None) -> CompileResult:
    """clCompileProgram: OpenCL C to an LLVM bitcode object (`headers`: name -> text)."""
    opts = _options(options, "compile")
    sources = _source_bytes(source)
    return _compile(sources, opts, caps, input_kind="cl", binary_type="object", headers=headers,
                    cacheable=_cacheable(opts, sources, headers))


LinkInput = Union[bytes, bytearray, memoryview, CompileResult, ProgramBinary]


def _link_language(objects: list[LinkInput]) -> tuple[str, bool]:
    """The OpenCL C version for the link (the highest of the inputs') and whether every input
    asked for uniform work-groups. Bare bitcode says neither: CL3.0 links any object (a CL1.2
    link of objects that use OpenCL 2.0 builtins makes clspv crash), non-uniform allowed."""
    versions = [getattr(obj, "cl_std", "") or "CL3.0" for obj in objects]
    uniform = all(getattr(obj, "uniform_work_group_size", False) for obj in objects)
    return max(versions, key=CL_STD_VERSIONS.index), uniform


def _link_payload(obj: LinkInput) -> bytes | None:
    if isinstance(obj, CompileResult):
        return obj.bitcode
    if isinstance(obj, ProgramBinary):
        return obj.bitcode
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    raise TypeError(f"cannot link a {type(obj).__name__}")


def link(objects: list[LinkInput], options: BuildOptions | str | None, caps: DeviceCaps) -> CompileResult:
    """clLinkProgram: objects/libraries (bitcode, or the CompileResult / ProgramBinary holding
    it) to SPIR-V, or to a library with -create-library."""
    opts = _options(options, "link")
    binary_type = "library" if opts.create_library else "executable"
    if not objects:
        return CompileResult(ok=False, log="nothing to link\n", status="error", binary_type=binary_type)
    payloads = [_link_payload(o) for o in objects]
    for i, data in enumerate(payloads):
        if data is None or data[:4] not in BITCODE_MAGICS:
            return CompileResult(ok=False, log=f"input {i} is not a compiled object or library\n",
                                 status="error", binary_type=binary_type)
    cl_std, uniform = _link_language(objects)
    flags = opts.flags | {"-cl-uniform-work-group-size"} if uniform else opts.flags
    opts = dataclasses.replace(opts, cl_std=cl_std, flags=frozenset(flags))
    result = _compile(payloads, opts, caps, input_kind="ir", binary_type=binary_type)
    if result.status == "crashed":
        result.log += _LINK_CRASH_HINT
    return result


def compile_il(il: bytes, options: BuildOptions | str | None, caps: DeviceCaps,
               spec: dict[int, tuple[str, bytes]] | None = None) -> CompileResult:
    """clBuildProgram of an IL program (OpenCL SPIR-V), with the specialisation constants
    {SpecId: (type, value bytes)} set: raises InvalidILError if it is not one."""
    opts = _options(options, "build")
    info = il_mod.check_il(il)
    if opts.cl_std is None:
        opts = dataclasses.replace(opts, cl_std=info.cl_std)
    start = time.perf_counter()
    if info.address_bits and info.address_bits != caps.address_bits:
        return CompileResult(ok=False, status="error", log=f"the IL uses {info.addressing_model} addressing "
                             f"but the device has {caps.address_bits}-bit addresses\n")
    spec_text = il_mod.spec_const_argument(spec) if spec else ""
    key = cache.make_key("il", opts.canonical(), caps.key(), _safe_version(), f"fixes{spirv_fixes.VERSION}",
                         bytes(il), spec_text,
                         *([f"bounds{spirv_bounds.VERSION}"] if settings.get("check_bounds") else []))
    hit = cache.load(key)
    if hit is not None:
        result = CompileResult.from_binary(hit, from_cache=True, seconds=time.perf_counter() - start)
        result.options = opts.text
        result.log = diagnostics.clean(result.log)  # as for programs from source
        return result
    bitcode, log = il_mod.to_bitcode(bytes(il), float(settings.get("compile_timeout")), spec)
    if bitcode is None:
        return CompileResult(ok=False, status="error", log=log, seconds=time.perf_counter() - start)
    result = _compile([bitcode], opts, caps, input_kind="ir", binary_type="executable", cacheable=False,
                      from_il=True)
    result.log = log + result.log
    result.seconds = time.perf_counter() - start
    if result.ok:
        cache.store(key, result.to_binary())
    return result


def spirv_for_device(spirv_bytes: bytes, caps: DeviceCaps) -> bytes:
    """The SPIR-V to give vkCreateShaderModule: reflection stripped unless the device has
    VK_KHR_shader_non_semantic_info."""
    return spirv_bytes if caps.non_semantic_info else spirv.strip_nonsemantic(spirv_bytes)
