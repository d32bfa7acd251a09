"""Events through the ICD loader (tests/icd/c/events.c): user events gating two queues,
error propagation, callbacks, markers and barriers, profiling."""
import pytest
from checks import assert_passed


@pytest.mark.parametrize("part", [
    "user_event_gates",   # commands on two queues wait for a user event; data unchanged before
    "error_propagation",  # a negative status fails dependents; blocking calls report it
    "user_event_errors",  # clSetUserEventStatus and clWaitForEvents errors
    "callbacks",          # SUBMITTED/RUNNING/COMPLETE on a vkcl thread, late, released, failed
    "markers_barriers",   # with and without wait lists in out-of-order queues; clEnqueueWaitForEvents
    "profiling",          # ordered timestamps; CL_PROFILING_INFO_NOT_AVAILABLE; device and host timer
])
def test_events(c_program, part):
    result = c_program("events").run(part)
    assert_passed(result)
    assert f"-- {part}" in result.stdout
