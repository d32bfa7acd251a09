"""Command queues through the ICD loader: properties and their errors, several queues at
once (tests/icd/c/events.c), 8 threads x 1,000 commands (tests/icd/c/threads.c), and a
process that exits with work in flight (tests/icd/c/memory.c exit)."""
import pytest
from checks import assert_passed


@pytest.mark.parametrize("part", ["queue_properties", "several_queues"])
def test_queues(c_program, part):
    result = c_program("events").run(part)
    assert_passed(result)
    assert f"-- {part}" in result.stdout


def test_eight_threads_thousand_commands_each(c_program):
    assert_passed(c_program("threads").run(timeout=120))


def test_exit_with_work_in_flight(c_program):
    # Non-blocking work in flight, a command held on a user event never set, callbacks
    # registered: returning from main without clFinish or any release exits 0, at once.
    for _ in range(3):
        assert_passed(c_program("memory").run("exit", timeout=60))


EXIT_WITH_WORK = r"""
import numpy as np
import pyopencl as cl

plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices())
q = cl.CommandQueue(ctx)
ooo = cl.CommandQueue(ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 << 20)
b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 << 20)
host, out = np.ones(4 << 20, np.uint8), np.zeros(4 << 20, np.uint8)
gate = cl.UserEvent(ctx)
for i in range(20):
    cl.enqueue_copy(q, a, host, is_blocking=False)
    cl.enqueue_copy(q, b, a)
    cl.enqueue_copy(q, out, b, is_blocking=False)
    cl.enqueue_fill_buffer(ooo, b, np.uint32(i), 0, 4 << 20)
cl.enqueue_copy(ooo, a, b, byte_count=4096, wait_for=[gate])  # never runs
ooo.flush()
print("leaving")
"""


def test_python_host_exits_with_work_in_flight(python_with_icd):
    # Inside a Python host the interpreter is finalised while vkcl's threads still work: no
    # crash, no hang. (No Python event callbacks here: pyopencl runs each on a C++ thread that
    # aborts the process if it reaches for the GIL during finalisation, whatever the driver;
    # vkcl stops delivering callbacks at exit, which narrows but cannot close that window.)
    pytest.importorskip("pyopencl")
    for _ in range(5):
        result = python_with_icd(EXIT_WITH_WORK, timeout=60)
        assert result.returncode == 0 and "leaving" in result.stdout, result.stdout + result.stderr
