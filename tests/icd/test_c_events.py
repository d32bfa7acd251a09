"""Events of fast launches through the ICD loader (tests/icd/c/c_events.c, sections 1-5, and
c_events_more.c, 6-10): made by C (VKCL_C_EVENTS=1) or by Python (=0), the application sees the
same OpenCL semantics, whether C answers a query itself or Python adopts the event."""
import pytest
from checks import assert_passed

SECTIONS = [  # in c_events.c
    "info",           # clGetEventInfo values, sizes, reference counts (kept through adoption), errors;
                      # plain and profiling queue; complete after clFlush alone
    "profiling",      # NOT_AVAILABLE before completion and on a plain queue; five ordered times, the same
                      # after errors and adoption; errors
    "wait",           # clWaitForEvents of one, ten, two queues', a marker's, complete ones; context/value errors
    "release_early",  # events released before any flush (500 and 200), retained and released twice
    "wait_list",      # a launch's event in another queue's launch, read, marker, barrier, clEnqueueWaitForEvents
]
MORE = [  # in c_events_more.c
    "callback",       # SUBMITTED/RUNNING/COMPLETE callbacks on pending, flushed-only, released and
                      # complete events run once, in order; errors; CL_EVENT_CONTEXT
    "mixed",          # with a fill and a copy in the batch; 200 and 600 (past the batch limit) in flight
    "queue_release",  # events outliving their queue: finished before, or unflushed at the release
    "threads",        # four threads, each its own queue: 300 launches with events, waited for in fives;
                      # three threads waiting for one queue's open batch during a clFinish
    "user_event",     # launches with events held behind a user event: not complete, no times, until set
]


@pytest.mark.parametrize("c_events", ["1", "0"])
@pytest.mark.parametrize("section", SECTIONS + MORE)
def test_c_events(c_program, section, c_events):
    program = "c_events" if section in SECTIONS else "c_events_more"
    result = c_program(program).run(section, timeout=300, env={"VKCL_C_EVENTS": c_events})
    assert_passed(result)
    assert f"-- {section}" in result.stdout
