"""Build logs keep clang's default warnings only (clspv turns on -Weverything), and -Werror
applies to those (vkcl.compiler.diagnostics)."""
from __future__ import annotations

from vkcl import compiler
from vkcl.compiler import diagnostics

CAPS = compiler.DeviceCaps()

# The kernel the OpenCL CTS builds with each optimization option, -Werror included.
CTS_SAMPLE = """__kernel void sample_test(__global int *src, __global int *dst)
{
    int  tid = get_global_id(0);

    dst[tid] = src[tid];

}"""
# -Wconstant-conversion and -Wunused-comparison: on by default in clang.
DEFAULT_ON = "kernel void k(global int *d) { int x = 1; x == 2; char c = 300; d[0] = c; }\n"

LOG = """In file included from source:1:
inc/a.h:2:5: warning: no previous prototype for function 'helper'
    2 | int helper(int x) { return x; }
      |     ^
inc/a.h:2:1: note: declare 'static' if the function is not intended to be used outside of this translation unit
    2 | int helper(int x) { return x; }
      | ^
source:3:16: warning: implicit conversion from 'int' to 'char' changes value from 300 to 44
    3 |     char c = 300;
      |          ~   ^~~
source:4:9: warning: implicit conversion loses integer precision: '__size_t' (aka 'unsigned long') to 'int'
    4 | int i = get_global_id(0);
      |     ~   ^~~~~~~~~~~~~~~~
source:5:1: error: use of undeclared identifier 'nope'
    5 | nope;
      | ^
2 warnings and 1 error generated.
"""


def test_clean_keeps_default_warnings_and_errors():
    cleaned = diagnostics.clean(LOG)
    assert cleaned == """source:3:16: warning: implicit conversion from 'int' to 'char' changes value from 300 to 44
    3 |     char c = 300;
      |          ~   ^~~
source:5:1: error: use of undeclared identifier 'nope'
    5 | nope;
      | ^
"""
    assert diagnostics.has_warnings(cleaned) and not diagnostics.has_warnings("source:1:1: error: x\n")
    assert diagnostics.clean("") == "" and diagnostics.clean("clspv crashed\n") == "clspv crashed\n"
    errors = diagnostics.warnings_as_errors(cleaned)
    assert "source:3:16: error: implicit conversion from 'int' to 'char'" in errors and "warning:" not in errors


def test_ordinary_kernels_log_nothing_and_pass_werror():
    result = compiler.compile_source(CTS_SAMPLE + "\n/* plain */", "", CAPS)
    assert result.ok and result.log == "", result.log
    result = compiler.compile_source(CTS_SAMPLE, "-Werror", CAPS)
    assert result.ok and result.log == "", result.log


def test_werror_fails_on_default_warnings():
    result = compiler.compile_source(DEFAULT_ON, "", CAPS)
    assert result.ok and result.log.count("warning:") == 2, result.log
    result = compiler.compile_source(DEFAULT_ON, "-Werror", CAPS)
    assert not result.ok and result.status == "error" and result.spirv is None
    assert result.log.count("error:") == 2 and "warning:" not in result.log, result.log
    result = compiler.compile_source(DEFAULT_ON, "-Werror -w", CAPS)
    assert result.ok and result.log == ""
    obj = compiler.compile_object(DEFAULT_ON, "-Werror", CAPS)
    assert not obj.ok and obj.bitcode is None


def test_log_lines_are_the_programs_own_with_a_prelude():
    """clspv ignores #line: vkcl gives the log the program's line numbers back."""
    from vkcl import compiler
    src = "kernel void k(global float *o) {\n  o[0] = nan(0u);\n  o[1] = undeclared_thing;\n}\n"
    result = compiler.compile_source(src, "", compiler.DeviceCaps())
    assert not result.ok
    assert "source:3:" in result.log and "3 |   o[1] = undeclared_thing;" in result.log, result.log


# Warnings clang (15) gives only with -Wall, -Wextra or -Weverything, in a kernel that PoCL
# builds with an empty log: pyopencl's scan kernels hit the misleading indentation and its
# clmath the reserved macro name (pyopencl warned "Non-empty compiler output" for each build).
# The two on by default (-Wparentheses, -Wunused-comparison) stay.
OFF_BY_DEFAULT_SAMPLE = """#if UNDEFINED_MACRO_X
#endif
#define _RESERVED_MACRO(x) (x)
typedef struct { int n; int z[0]; } Z;
enum E { EA, EB };
int f1(enum E e) { switch (e) { case EA: return 1; case EB: return 2; default: return 3; } }
int f2(int x) { switch (x) { case 0: x++; case 1: return x; } return 0; }
kernel void k(global int *a, global uint *u) {
    int x = a[0];
    if (x != 0)
        a[1] = 1;
        a[2] = 2;
    int y;
    if (x > 3) y = 1;
    a[3] = y;
    int w;
    a[4] = w;
    if (u[0] >= 0) a[5] = 1;
    a[9] = f1(EA) + f2(_RESERVED_MACRO(x));
    if (x = 3) a[10] = 1;
    a[11] == 2;
    a[12] = get_local_id(0) + ((get_local_id(0) == 0) ? x : -3);   // operand of ? (Rodinia's dwt2d)
}
"""


def test_warnings_clang_leaves_off_are_not_logged():
    result = compiler.compile_source(OFF_BY_DEFAULT_SAMPLE, "", CAPS)
    assert result.ok
    kept = sorted(line.split("warning: ")[1] for line in result.log.splitlines() if "warning: " in line)
    assert kept == ["equality comparison result unused",
                    "using the result of an assignment as a condition without parentheses"], result.log
