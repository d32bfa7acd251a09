"""By-value kernel arguments clspv's front end refuses, passed as their bytes
(vkcl/compiler/byvalue_args.py): finding the kernels' parameters in source text, the rewrite, and
builds that succeed with the reflection naming the parameters as the source does."""
import pytest

from vkcl import compiler
from vkcl.compiler import byvalue_args

CAPS = compiler.DeviceCaps(fp64=True, int8=True, int64=True, ubo_std430=True, spirv_version="1.6")
COMPLEX = "typedef union { struct { float x, y; }; struct { float real, imag; }; } cfloat_t;\n"
UNION_ERROR = ("a structure member must not be placed between the end of a structure or array and the next "
               "multiple of the base alignment of that structure or array")


def test_the_refused_parameter_is_found_from_the_log():
    src = (COMPLEX + "/* kernel void fake(cfloat_t z) {} */\n"
           "__attribute__((reqd_work_group_size(1, 1, 1))) kernel void f(global cfloat_t *o,\n"
           "        const cfloat_t a, int n) { o[n] = a; }\n").encode()
    log = f"source:4:9: error: {UNION_ERROR}\nsource:1:1: note: here\n"
    assert byvalue_args.refused_types(src, log) == {"cfloat_t"}
    # the prelude's lines come first: the same error 7 lines later
    log7 = f"source:11:9: error: {UNION_ERROR}\n"
    assert byvalue_args.refused_types(src, log7, (7, 0)) == {"cfloat_t"}
    # an error elsewhere, or another message, finds nothing
    assert byvalue_args.refused_types(src, f"source:4:10: error: {UNION_ERROR}\n") == set()
    assert byvalue_args.refused_types(src, "source:4:9: error: use of undeclared identifier 'q'\n") == set()


def test_the_rewrite_keeps_lines_and_rewrites_prototypes_and_every_kernel():
    src = (COMPLEX + "#define SCALE 2\n"
           "kernel void f(global cfloat_t *o, cfloat_t a);\n"
           "kernel void f(global cfloat_t *o, cfloat_t a)\n{ o[0] = a; }\n"
           "kernel void g(int n,\n  cfloat_t b, global float *p) { p[n] = b.imag * SCALE; }\n"
           "void helper(cfloat_t c) {}\n").encode()
    rewrite = byvalue_args.pass_as_bytes(src, {"cfloat_t"})
    text = rewrite.source.decode()
    assert text.count("\n") == src.decode().count("\n")
    assert text.count("typedef struct __attribute__((aligned(__alignof__(cfloat_t))))") == 1
    assert "void helper(cfloat_t c)" in text  # not a kernel
    assert rewrite.names == {("f", 1): ("a", "cfloat_t"), ("g", 1): ("b", "cfloat_t")}
    lines = text.splitlines()
    assert lines[1] == "#define SCALE 2" and lines[5].startswith("kernel void g(int n,")


def test_unions_and_packed_structs_build_and_keep_their_names():
    # named members (no C11 anonymous structs), so that -Werror shows the rewrite warns of nothing
    src = ("typedef union { struct { float x, y; } xy; struct { float real, imag; } ri; } cfloat_t;\n"
           "typedef struct __attribute__((packed)) { char c; int i; short s; } packed_t;\n"
           "typedef struct { uchar tag; cfloat_t z; } holder_t;\n"
           "kernel void k(global float *o, cfloat_t a, packed_t p, const holder_t h, float4 v) {\n"
           "    o[0] = a.ri.real + a.xy.y + (float)p.i + (float)p.s + h.z.xy.y + (float)h.tag + v.w; }\n")
    result = compiler.compile_source(src, "-Werror", CAPS)
    assert result.ok, result.log
    k = result.reflection.kernels["k"]
    assert [(a.name, a.type_name, a.size) for a in k.args[1:]] == [
        ("a", "cfloat_t", 8), ("p", "packed_t", 7), ("h", "holder_t", 12), ("v", "float4", 16)]
    assert not k.layout_error


def test_line_numbers_of_other_errors_stay():
    src = COMPLEX + "kernel void k(global cfloat_t *o, cfloat_t a) { o[0] = a; }\nkernel void j(global int *o) {\n" \
        "    o[0] = undefined_name; }\n"
    result = compiler.compile_source(src, "", CAPS)
    assert not result.ok and "source:4:12: error: use of undeclared identifier 'undefined_name'" in result.log, \
        result.log


@pytest.mark.parametrize("signature", ["kernel void k(global cfloat_t *o, ARG)", "KERNEL_K"])
def test_a_kernel_written_by_a_macro_keeps_its_error(signature):
    src = COMPLEX + "#define ARG cfloat_t a\n#define KERNEL_K kernel void k(global cfloat_t *o, cfloat_t a)\n" \
        + signature + " { o[0] = a; }\n"
    result = compiler.compile_source(src, "", CAPS)
    assert not result.ok and UNION_ERROR in result.log
