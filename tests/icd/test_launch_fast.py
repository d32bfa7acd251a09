"""The launch fast path (icd/fast_path.c) through the ICD loader (tests/icd/c/launch_fast.c):
repeated launches recorded by C, and everything that hands the queue back to Python."""
import pytest
from checks import assert_passed

SECTIONS = [
    "repeat",           # 1000 launches + clFinish; 600 more past the batch limit; 2-D and 3-D alternating
    "round_trip",       # enqueue + clFinish 500 times, blocking reads in between
    "args_change",      # ping-pong buffers and a scalar changed between launches: each launch uses its own
    "release_pending",  # buffer and kernel released with launches pending: still right; destructor runs after
    "mixed",            # launches with transfers, markers and an event: in-order across both paths
    "user_event_gate",  # a launch held behind a user event holds the later ones
    "two_queues",       # one kernel alternating between two queues
    "threads",          # four threads, each its own queue, 1500-1800 launches
    "errors",           # bad handles and sizes still get their error codes
    "events",           # launches with events: complete, their queue and type; profiling queues keep times
    "small_writes",     # non-blocking writes from C: every byte, order with launches, sub-buffers, errors
    "events_finish",    # round trips with events (clFinish in C): complete, callbacks, times; 1500 in flight
    "events_wait",      # clWaitForEvents of a fast launch's event (in C): first of two, other queue, released
]


@pytest.mark.parametrize("section", SECTIONS)
def test_launch_fast(c_program, section):
    result = c_program("launch_fast").run(section)
    assert_passed(result)
    assert f"-- {section}" in result.stdout
