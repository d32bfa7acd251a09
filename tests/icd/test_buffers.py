"""Buffers through the ICD loader: exact error codes and semantics (tests/icd/c/buffers.c),
and memory use (tests/icd/c/memory.c). Data checks on random regions against numpy are in
test_buffers_pyopencl.py."""
import pytest
from checks import assert_passed


@pytest.mark.parametrize("part", [
    "flags",           # all 512 combinations of the nine flags; CL_MEM_FLAGS of the valid ones
    "create_errors",   # host_ptr rules, sizes, unknown flags and properties
    "mem_info",        # clGetMemObjectInfo, every param, of a buffer and a sub-buffer
    "sub_buffers",     # alignment, range, sub-buffer of a sub-buffer; every parent x sub-buffer flag set
    "host_pointers",   # USE_HOST_PTR (map is host_ptr + offset, coherent), COPY_HOST_PTR
    "host_access",     # HOST_* flags on reads, writes, maps, rects, sub-buffers
    "command_errors",  # argument errors, CL_MEM_COPY_OVERLAP, fill patterns, unmap, wait lists, contexts
    "destructors",     # reverse order, after the last release, not while a command uses the buffer
    "queue_info",      # clGetCommandQueueInfo, every param
    "event_info",      # clGetEventInfo, every param, the command type of each command
])
def test_buffers(c_program, part):
    result = c_program("buffers").run(part)
    assert_passed(result)
    assert f"-- {part}" in result.stdout


def test_create_release_cycles_leave_rss_flat(c_program):
    # 10,000 create/command/release cycles; VmRSS measured inside the program.
    assert_passed(c_program("memory").run("churn", timeout=240))


def test_one_gib_buffer_round_trip(c_program):
    assert_passed(c_program("memory").run("big", timeout=240))


def test_one_gib_round_trip_copied_on_threads(c_program):
    # Staged transfers copied on 4 threads (icd/host_copy.c), as on a GPU machine's host.
    assert_passed(c_program("memory").run("big", timeout=240, env={"VKCL_COPY_THREADS": "4"}))
