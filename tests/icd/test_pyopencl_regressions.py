"""Failures of pyopencl's own test suite on vkcl (issue 21), each reduced to a small case."""
import pytest

pytest.importorskip("pyopencl")

HEADER = """
import numpy as np, pyopencl as cl, pyopencl.array as cla
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]])
q = cl.CommandQueue(ctx)
"""


def run(python_with_icd, body: str):
    result = python_with_icd(HEADER + body, timeout=300, env={"PYOPENCL_COMPILER_OUTPUT": "0"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert "OK" in result.stdout, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_entry_point_called_with_a_python_exception_set(python_with_icd):
    # test_array.py::test_arithmetic_on_non_scalars: while the TypeError of `container + array`
    # unwinds, pyopencl's destructors call clReleaseEvent with that exception still set. vkcl's
    # Python failed at its first attribute lookup ("'Event' object has no attribute 'release'"),
    # answered CL_OUT_OF_HOST_MEMORY, and the host got "SystemError: error return without
    # exception set" instead of the TypeError.
    result = run(python_with_icd, """
from dataclasses import dataclass
@dataclass
class Container:
    data: np.ndarray
    def __eq__(self, other):
        return Container(self.data == other)
for _ in range(3):
    try:
        Container(np.ones(100)) + cla.zeros(q, (10,), dtype=np.float64)
    except TypeError as e:
        assert "unsupported operand" in str(e), e
    else:
        raise AssertionError("no TypeError")
a = np.arange(10, dtype=np.float32)
assert np.array_equal((cla.to_device(q, a) + 1).get(), a + 1)  # the runtime still works
print("OK")
""")
    assert "unexpected error" not in result.stderr, result.stderr[-3000:]
    assert "clean-up operation failed" not in result.stderr, result.stderr[-3000:]
