"""Programs and kernels through pyopencl (which loads vkcl via its own ICD loader): build
errors as exceptions, pyopencl's binary cache across processes, compile + link with headers,
and the kernel queries pyopencl exposes."""
import pytest

pytest.importorskip("pyopencl")

HEADER = """
import numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
def run(prg, name, n=64, *args):
    out = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    getattr(prg, name)(q, (n,), None, out, *args)
    r = np.empty(n, np.int32); cl.enqueue_copy(q, r, out); q.finish(); return r
"""


def run(python_with_icd, body: str, env: dict | None = None):
    result = python_with_icd(HEADER + body, timeout=300, env={"PYOPENCL_COMPILER_OUTPUT": "0", **(env or {})})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "OK" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_build_error_raises_with_the_log(python_with_icd):
    # PYOPENCL_CACHE_FAILURE_FATAL: pyopencl's cache code reads it (os.environ[...]) for errors
    # other than CL_BUILD_PROGRAM_FAILURE, and fails with a KeyError when it is unset.
    run(python_with_icd, """
try:
    cl.Program(ctx, "kernel void k(global int *a) { a[0] = undeclared_thing }").build()
except cl.RuntimeError as e:
    assert e.code == cl.status_code.BUILD_PROGRAM_FAILURE, e.code
    assert "use of undeclared identifier 'undeclared_thing'" in str(e), str(e)
else:
    raise AssertionError("the build did not fail")
try:
    cl.Program(ctx, "kernel void k(global int *a) { a[0] = 1; }").build(options=["-no-such-option"])
except cl.Error as e:
    assert e.code == cl.status_code.INVALID_BUILD_OPTIONS, e.code
else:
    raise AssertionError("bad options were accepted")
prg = cl.Program(ctx, "kernel void k(global int *a) { a[get_global_id(0)] = 4; }").build()
assert (run(prg, "k") == 4).all()
print("OK")
""", env={"PYOPENCL_CACHE_FAILURE_FATAL": "1"})


def test_pyopencl_binary_cache_across_processes(python_with_icd, tmp_path):
    # pyopencl keeps CL_PROGRAM_BINARIES in its own cache and rebuilds from them with
    # clCreateProgramWithBinary in the next process.
    body = f"""
src = "kernel void k(global int *a, int v) {{ a[get_global_id(0)] = (int)get_global_id(0) * v; }}"
prg = cl.Program(ctx, src).build(cache_dir={str(tmp_path)!r})
print("BUILD", prg._build_duration_info[0])  # cleared by the first kernel lookup
assert (run(prg, "k", 64, np.int32(3)) == np.arange(64) * 3).all()
print("OK")
"""
    env = {"PYOPENCL_NO_CACHE": "0"}
    first = run(python_with_icd, body, env)
    assert "BUILD source build resulting from a binary cache miss" in first.stdout, first.stdout
    assert list(tmp_path.rglob("*")), "pyopencl cached nothing"
    second = run(python_with_icd, body, env)
    assert "BUILD cache retrieval" in second.stdout, second.stdout + second.stderr[-3000:]
    assert "caching failed" not in second.stderr, second.stderr[-3000:]


def test_binaries_compile_link_and_queries(python_with_icd):
    run(python_with_icd, """
src = '''
__attribute__((reqd_work_group_size(16, 1, 1)))
kernel void first(global int *a) { a[get_global_id(0)] = 1; }
kernel void second(global int *a, constant float *c, local int *l, uint n) { a[get_global_id(0)] = (int)n; }
'''
prg = cl.Program(ctx, src).build(options=["-cl-kernel-arg-info"])
assert prg.num_kernels == 2 and sorted(prg.kernel_names.split(";")) == ["first", "second"]
assert sorted(k.function_name for k in prg.all_kernels()) == ["first", "second"]
k = cl.Kernel(prg, "second")
first = cl.Kernel(prg, "first")
assert k.num_args == 4 and k.attributes == ""
assert [k.get_arg_info(i, cl.kernel_arg_info.NAME) for i in range(4)] == ["a", "c", "l", "n"]
assert k.get_arg_info(1, cl.kernel_arg_info.ADDRESS_QUALIFIER) == cl.kernel_arg_address_qualifier.CONSTANT
assert k.get_arg_info(3, cl.kernel_arg_info.TYPE_NAME) == "uint"
wg = first.get_work_group_info(cl.kernel_work_group_info.COMPILE_WORK_GROUP_SIZE, dev)
assert list(wg) == [16, 1, 1], wg
assert first.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev) >= 16
assert prg.get_build_info(dev, cl.program_build_info.STATUS) == 0  # CL_BUILD_SUCCESS
assert prg.get_build_info(dev, cl.program_build_info.OPTIONS).startswith("-cl-kernel-arg-info")

# binaries round trip
binary = prg.get_info(cl.program_info.BINARIES)[0]
again = cl.Program(ctx, [dev], [binary]).build()
assert (run(again, "first") == 1).all()

# clCompileProgram with a header, clLinkProgram of two objects
header = cl.Program(ctx, "#define SCALE 7\\nint helper(int x);\\n")
main = cl.Program(ctx, '#include "my.h"\\n'
                  'kernel void k(global int *a) { int i = get_global_id(0); a[i] = helper(i) * SCALE; }')
main.compile(headers=[("my.h", header)])
helper = cl.Program(ctx, "int helper(int x) { return x + 1; }").compile()
linked = cl.link_program(ctx, [main, helper])
assert (run(linked, "k") == (np.arange(64) + 1) * 7).all()
print("OK")
""")
