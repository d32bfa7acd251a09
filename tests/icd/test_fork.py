"""fork() after vkcl started (icd/vkcl_icd.c, vkcl/icd_entry.py): the child exits at once or
gets an error from every OpenCL call, never a hang; the parent is unaffected; a child forked
before vkcl started uses it normally (tests/icd/c/fork.c, and pyopencl's os.fork)."""
import pytest

from checks import assert_passed
from test_kernels_pyopencl import run


@pytest.mark.parametrize("mode", ["exit", "call", "before"])
def test_fork_in_a_c_program(c_program, mode):
    result = c_program("fork").run(mode, timeout=30)
    assert_passed(result)
    if mode == "call":
        assert "fork" in result.stderr  # the child was told why


def test_fork_in_a_python_program(python_with_icd):
    run(python_with_icd, """
import os
a = np.arange(1024, dtype=np.float32)
p = cl.Program(ctx, "kernel void k(global float *a) { a[get_global_id(0)] *= 2.0f; }").build()
A = buf(a)
p.k(q, a.shape, None, A)
pid = os.fork()
if pid == 0:
    try:
        cl.Context([dev])
        os._exit(5)  # the child got a context: wrong
    except cl.Error:
        os._exit(0)
_, status = os.waitpid(pid, 0)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
p.k(q, a.shape, None, A)
assert np.array_equal(get(A, a), a * 4)
print("OK")
""")
