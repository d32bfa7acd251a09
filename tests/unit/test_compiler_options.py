"""Build/compile/link options (OpenCL 3.0 API 5.8.6, 5.8.7), device caps, and the clspv
arguments they produce. No compiles here, except one that checks every produced argument
is known to clspv."""
from __future__ import annotations

import pytest

from vkcl.compiler import DeviceCaps, InvalidOptionsError, parse_options
from vkcl.compiler.options import COMPILE_FLAGS, LINK_ONLY_OPTIONS, MATH_LINK_OPTIONS

STANDARD_COMPILE = [
    "-D FOO", "-DFOO", "-DFOO=1", "-D FOO=1", "-D 'MSG=hello world'", "-DF(x)=x", "-I /tmp", "-I/tmp",
    "-w", "-Werror", "-cl-std=CL1.0", "-cl-std=CL1.1", "-cl-std=CL1.2", "-cl-std=CL2.0", "-cl-std=CL3.0",
    "-cl-opt-disable", "-cl-mad-enable", "-cl-fast-relaxed-math", "-cl-finite-math-only",
    "-cl-unsafe-math-optimizations", "-cl-no-signed-zeros", "-cl-denorms-are-zero",
    "-cl-single-precision-constant", "-cl-fp32-correctly-rounded-divide-sqrt", "-cl-kernel-arg-info",
    "-cl-uniform-work-group-size", "-cl-no-subgroup-ifp", "-g", "-cl-strict-aliasing",
]
STANDARD_LINK = ["-create-library", "-create-library -enable-link-options", *sorted(MATH_LINK_OPTIONS)]


@pytest.mark.parametrize("mode", ["build", "compile"])
@pytest.mark.parametrize("text", STANDARD_COMPILE)
def test_standard_compile_options_accepted(text, mode):
    opts = parse_options(text, mode)
    assert opts.text == text and opts.mode == mode


@pytest.mark.parametrize("text", STANDARD_LINK)
def test_standard_link_options_accepted(text):
    assert parse_options(text, "link").mode == "link"


@pytest.mark.parametrize("text", [
    "-bogus", "-O2", "-cl-std", "-cl-std=CL4.0", "-cl-std=", "-cl-stdx=CL1.2", "-D", "-I", "-D 1FOO",
    "-D=3", "-DFOO-BAR", "'unterminated", "-cl-fast-relaxed-math -x", "-x spir", "-spir-std=1.2",
    "foo.cl", "--help", "-create-library", "-enable-link-options",
])
def test_bad_compile_options_rejected(text):
    with pytest.raises(InvalidOptionsError):
        parse_options(text, "build")


@pytest.mark.parametrize("text", [
    "-DFOO", "-I/tmp", "-cl-std=CL1.2", "-w", "-Werror", "-cl-mad-enable", "-cl-opt-disable",
    "-cl-kernel-arg-info", "-g", "-enable-link-options", "-cl-single-precision-constant", "-bogus",
])
def test_bad_link_options_rejected(text):
    with pytest.raises(InvalidOptionsError):
        parse_options(text, "link")


def test_option_sets_are_consistent():
    assert MATH_LINK_OPTIONS <= COMPILE_FLAGS and not (LINK_ONLY_OPTIONS & COMPILE_FLAGS)
    with pytest.raises(ValueError):
        parse_options("", "execute")


def test_parsed_fields():
    opts = parse_options("-D A -DB=2 -D 'C=x y' -I inc -Iother -cl-std=cl3.0 -cl-kernel-arg-info -w", "build")
    assert opts.defines == (("A", None), ("B", "2"), ("C", "x y"))
    assert opts.include_dirs == ("inc", "other")
    assert opts.cl_std == "CL3.0" and opts.language_version == "CL3.0"
    assert opts.kernel_arg_info and opts.has("-w") and not opts.create_library
    assert parse_options("").language_version == "CL1.2" and not parse_options(None).kernel_arg_info
    lib = parse_options("-create-library -enable-link-options -cl-fast-relaxed-math", "link")
    assert lib.create_library and lib.enable_link_options and lib.has("-cl-fast-relaxed-math")
    assert parse_options("-cl-mad-enable -w").canonical() == parse_options(" -w  -cl-mad-enable").canonical()


def test_clspv_args_physical():
    args = parse_options("-DFOO=1 -cl-mad-enable -cl-uniform-work-group-size -g -cl-std=CL3.0").clspv_args(DeviceCaps())
    for expected in ["-cl-std=CL3.0", "-inline-entry-points", "-cl-kernel-arg-info", "-arch=spir64",
                     "-physical-storage-buffers", "-spv-version=1.5", "-max-pushconstant-size=128",
                     "-enable-printf", "-printf-buffer-size=1048576", "-long-vector", "-global-offset",
                     "-module-constants-in-storage-buffer", "-uniform-workgroup-size", "-cl-mad-enable",
                     "-DFOO=1", "-rewrite-packed-structs"]:
        assert expected in args
    assert "-g" not in args and "-fp64=0" not in args and "-x" not in args
    assert args.count("-cl-kernel-arg-info") == 1


def test_clspv_args_device_dependent():
    caps = DeviceCaps(fp16=False, fp64=False, int8=False, physical_addressing=False, address_bits=32,
                      max_push_constant_size=256, spirv_version="1.6", printf_buffer_size=4096,
                      non_uniform_workgroups=False, global_offset_push_constant=True, images=False,
                      no_8bit_storage=("pushconstant",), rounding_mode_rte=(32, 16), ubo_std430=True,
                      features=("__opencl_c_images",), unroll_runtime_loops=True, unroll_partial_threshold=300)
    args = parse_options("-cl-std=CL3.0 -I inc").clspv_args(caps, input_kind="ir", output_kind="bitcode",
                                                            extra_include_dirs=("/hdrs",))
    for expected in ["-x", "ir", "--output-format=bc", "-arch=spir", "-fp16=0", "-fp64=0", "-int8=0",
                     "-max-pushconstant-size=256", "-spv-version=1.6", "-printf-buffer-size=4096",
                     "-uniform-workgroup-size", "-global-offset-push-constant", "-images=0",
                     "-no-8bit-storage=pushconstant", "-rounding-mode-rte=32", "-std430-ubo-layout",
                     "-enable-feature-macros=__opencl_c_images", "-unroll-runtime",
                     "-unroll-partial-threshold=300", "-I/hdrs"]:
        assert expected in args
    assert "-physical-storage-buffers" not in args
    assert any(a.startswith("-I/") and a.endswith("/inc") for a in args)  # made absolute
    assert args[:2] == ["-x", "ir"]


def test_loop_unroll_caps_give_llvm_unroll_options_and_nothing_otherwise():
    """llvmpipe's caps (core/device.py LLVMPIPE_LOOP_UNROLL) unroll every loop 16 times within a
    size budget; caps without them (NVIDIA's, the defaults) give exactly the options they gave
    before, so their SPIR-V is unchanged."""
    from vkcl.core.device import LLVMPIPE_LOOP_UNROLL
    args = DeviceCaps(**LLVMPIPE_LOOP_UNROLL).clspv_args()
    assert [a for a in args if "unroll" in a] == ["-unroll-count=16", "-unroll-threshold=1000",
                                                  "-unroll-partial-threshold=1000"]
    nvidia = dict(unroll_runtime_loops=True, unroll_partial_threshold=300, native_builtins=("fma",))
    assert [a for a in DeviceCaps(**nvidia).clspv_args() if "unroll" in a] == ["-unroll-runtime",
                                                                               "-unroll-partial-threshold=300"]
    assert not [a for a in DeviceCaps().clspv_args() if "unroll" in a]
    assert DeviceCaps(**LLVMPIPE_LOOP_UNROLL).key() != DeviceCaps().key()
    for bad in [dict(loop_unroll_count=-1), dict(loop_unroll_count=16, unroll_runtime_loops=True)]:
        with pytest.raises(ValueError):
            DeviceCaps(**bad)


def test_loop_unroll_caps_unroll_a_loop_16_times():
    """A loop of run-time trip count: 16 copies of its multiply (and a remainder LLVM unrolls
    too) with llvmpipe's caps, one without."""
    from vkcl.compiler import compile_source
    from vkcl.core.device import LLVMPIPE_LOOP_UNROLL
    src = "kernel void k(global uint *o, uint n) { uint s = 0; for (uint i = 0; i < n; i++) s = s * 3u + i; o[0] = s; }"
    counts = []
    for caps in (DeviceCaps(), DeviceCaps(**LLVMPIPE_LOOP_UNROLL)):
        result = compile_source(src, "", caps)
        assert result.ok and not result.log, result.log
        counts.append(_op_count(result.spirv, 132))  # OpIMul
    assert counts[0] == 1 and counts[1] >= 16, counts


def test_device_caps():
    caps = DeviceCaps()
    assert caps.key() == DeviceCaps().key() and caps.key() != DeviceCaps(fp64=False).key()
    assert DeviceCaps.from_dict(caps.to_dict()) == caps
    assert hash(caps) == hash(DeviceCaps())
    for bad in [dict(spirv_version="1.7"), dict(address_bits=16), dict(address_bits=32),
                dict(no_8bit_storage=("x",)), dict(rounding_mode_rte=(8,))]:
        with pytest.raises(ValueError):
            DeviceCaps(**bad)
    with pytest.raises(ValueError):
        DeviceCaps.from_dict({"nonsense": 1})


def test_every_generated_argument_is_known_to_clspv():
    """clspv exit()s on an unknown option: compile with everything switched on at once."""
    from vkcl.compiler import compile_source
    everything = " ".join(t for t in STANDARD_COMPILE if not t.startswith("-cl-std") and "-Werror" not in t)
    caps = DeviceCaps(fp16=False, rounding_mode_rte=(16, 32, 64), no_8bit_storage=("ubo",),
                      no_16bit_storage=("pushconstant",), ubo_std430=True, decorate_nonuniform=True,
                      global_offset_push_constant=True, native_builtins=("fma",), spirv_version="1.6",
                      unroll_runtime_loops=True, unroll_partial_threshold=300)
    result = compile_source("kernel void k(global int *p) { p[0] = FOO; }", everything, caps)
    assert result.ok, result.log
    result = compile_source("kernel void k(global int *p) { p[0] = 1; }", "-cl-std=CL3.0",
                            DeviceCaps(features=("__opencl_c_fp64",), non_uniform_workgroups=False))
    assert result.ok, result.log
    result = compile_source("kernel void k(global int *p) { p[0] = 2; }", "",
                            DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000))
    assert result.ok, result.log


def test_clspv_options_setting_reaches_clspv(monkeypatch):
    """VKCL_CLSPV_OPTIONS: more clspv options for every compile, part of the cache key."""
    from vkcl.compiler import compile_source
    src = ("kernel void k(global float *o, int n) { float x = o[0];"
           " for (int i = 0; i < n; i++) x = x * 1.5f + 2.0f; o[0] = x; }")
    monkeypatch.delenv("VKCL_CLSPV_OPTIONS", raising=False)
    rolled = compile_source(src, "", DeviceCaps())
    monkeypatch.setenv("VKCL_CLSPV_OPTIONS", "-unroll-runtime")
    unrolled = compile_source(src, "", DeviceCaps())
    assert rolled.ok and unrolled.ok and not unrolled.from_cache
    assert len(unrolled.spirv) > len(rolled.spirv)


def test_unroll_partial_threshold_unrolls_a_small_loop_further():
    """A loop of 32 multiply-adds: LLVM's budget (150) unrolls it 4 times, 300 unrolls it 8 times."""
    from vkcl.compiler import compile_source
    steps = " ".join(f"x{j % 8} = mad(x{j % 8}, a, b);" for j in range(32))
    src = ("kernel void k(global float *o, float a, float b, int n) {"
           " float x0 = o[0], x1 = o[1], x2 = o[2], x3 = o[3], x4 = o[4], x5 = o[5], x6 = o[6], x7 = o[7];"
           f" for (int i = 0; i < n; i++) {{ {steps} }}"
           " o[0] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7; }")
    caps = dict(native_builtins=("fma",), unroll_runtime_loops=True)
    counts = []
    for threshold in (0, 300):
        result = compile_source(src, "", DeviceCaps(**caps, unroll_partial_threshold=threshold))
        assert result.ok, result.log
        counts.append(_fma_count(result.spirv))
    # the unrolled loop, then the remainder loop of 32
    assert counts == [4 * 32 + 32, 8 * 32 + 32]


def _op_count(module: bytes, opcode: int) -> int:
    from vkcl.compiler import spirv
    return sum(op == opcode for _, op, _ in spirv.instructions(spirv.to_words(module)))


def _fma_count(module: bytes) -> int:
    """GLSL.std.450 Fma instructions of a module (vkcl's own SPIR-V walker)."""
    from vkcl.compiler import spirv
    words = spirv.to_words(module)
    glsl, n = None, 0
    for pos, op, size in spirv.instructions(words):
        if op == spirv.OP_EXT_INST_IMPORT and spirv.literal_string(words, pos + 2, pos + size)[0] == "GLSL.std.450":
            glsl = words[pos + 1]
        elif op == spirv.OP_EXT_INST and words[pos + 3] == glsl and words[pos + 4] == 50:  # Fma
            n += 1
    return n


def test_inlining_is_optional_only_without_the_generic_address_space():
    # clspv refuses to compile a language with the generic address space without
    # -inline-entry-points; the others may be built again without it (driver.py, a build that
    # outlasts its share of the compile timeout)
    from vkcl.compiler import DeviceCaps, driver, parse_options
    plain, generic = DeviceCaps(), DeviceCaps(features=("__opencl_c_generic_address_space",))
    assert driver._inlining_optional(parse_options("", "build"), plain)
    assert driver._inlining_optional(parse_options("-cl-std=CL1.1", "build"), generic)
    assert driver._inlining_optional(parse_options("-cl-std=CL3.0", "build"), plain)
    assert not driver._inlining_optional(parse_options("-cl-std=CL3.0", "build"), generic)
    assert not driver._inlining_optional(parse_options("-cl-std=CL2.0", "build"), plain)


def test_finite_math_is_not_passed_to_clspv():
    # finite math let LLVM fold the prelude's double-double builtins wrong for finite inputs
    # (pow(x, 2) of a double gave |x|^3): vkcl keeps the unsafe math the options also mean and
    # defines -cl-fast-relaxed-math's macro itself
    caps = DeviceCaps()
    fast = parse_options("-cl-fast-relaxed-math").clspv_args(caps)
    assert "-cl-unsafe-math-optimizations" in fast and "-D__FAST_RELAXED_MATH__=1" in fast
    assert not {"-cl-fast-relaxed-math", "-cl-finite-math-only"} & set(fast)
    finite = parse_options("-cl-finite-math-only").clspv_args(caps)
    assert "-cl-finite-math-only" not in finite and not any("FAST_RELAXED" in a for a in finite)
