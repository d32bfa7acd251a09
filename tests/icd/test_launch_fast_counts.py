"""The fast path is really taken: launches and small writes without an event, through a second
ICD loader (ctypes, the system's libOpenCL) on pyopencl's objects, counted by icd/fast_path.c."""
import pytest

pytest.importorskip("pyopencl")

CODE = r"""
import ctypes
from ctypes import POINTER, c_size_t, c_uint, c_void_p
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(p.get_devices())
q = cl.CommandQueue(ctx)
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
host = np.zeros(1024, np.int32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
k.set_arg(0, buf)
ocl = ctypes.CDLL("libOpenCL.so.1")
enqueue, finish = ocl.clEnqueueNDRangeKernel, ocl.clFinish
enqueue.argtypes = [c_void_p, c_void_p, c_uint, c_void_p, POINTER(c_size_t), c_void_p, c_uint, c_void_p, c_void_p]
finish.argtypes = [c_void_p]
size = (c_size_t * 1)(1024)
for i in range(1000):
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
assert finish(q.int_ptr) == 0
for i in range(200):  # round trips
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
    assert finish(q.int_ptr) == 0
for i in range(100):  # pyopencl's own launches, which always ask for an event
    cl.enqueue_nd_range_kernel(q, k, (1024,), None)
q.finish()
cl.enqueue_copy(q, host, buf)
assert (host == 1300).all(), host[:8]
write = ocl.clEnqueueWriteBuffer
write.argtypes = [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p, c_uint, c_void_p, c_void_p]
values = np.arange(1024, dtype=np.int32)
for i in range(256):  # small non-blocking writes, no event
    assert write(q.int_ptr, buf.int_ptr, 0, 16 * i, 16, values[4 * i:].ctypes.data, 0, None, None) == 0
assert finish(q.int_ptr) == 0
cl.enqueue_copy(q, host, buf)
assert (host == values).all(), host[:8]

from vkcl.api import handles  # the ICD's own modules, in this interpreter
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
print("launches", fast.launches, "finishes", fast.finishes, "writes", fast.writes)
"""


def test_launches_without_events_take_the_fast_path(python_with_icd):
    result = python_with_icd(CODE)
    assert result.returncode == 0, result.stdout + result.stderr
    words = result.stdout.split()
    launches, finishes, writes = (int(words[words.index(w) + 1]) for w in ("launches", "finishes", "writes"))
    # the first launches and write prepare it; one in every 256 commands goes to Python to submit
    assert launches >= 1250 and finishes >= 195 and writes >= 250, result.stdout  # seen: 1295, 200, 255


EVENTS_CODE = r"""
import numpy as np
import pyopencl as cl

p = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(p.get_devices())
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
host = np.zeros(1024, np.int32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
k.set_arg(0, buf)
for i in range(300):  # pyopencl's launches ask for an event; round trips on a profiling queue
    ev = cl.enqueue_nd_range_kernel(q, k, (1024,), None)
    q.finish()
    assert ev.command_execution_status == cl.command_execution_status.COMPLETE
    assert ev.profile.end >= ev.profile.start >= ev.profile.submit >= ev.profile.queued > 0
cl.enqueue_copy(q, host, buf)
assert (host == 300).all(), host[:8]

from vkcl.api import handles
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
print("launches", fast.launches, "finishes", fast.finishes)
"""


def test_profiled_round_trips_with_events_take_the_fast_path(python_with_icd):
    result = python_with_icd(EVENTS_CODE)
    assert result.returncode == 0, result.stdout + result.stderr
    words = result.stdout.split()
    launches, finishes = (int(words[words.index(w) + 1]) for w in ("launches", "finishes"))
    # C records each launch with its timestamps and runs each clFinish; Python makes the events
    assert launches >= 290 and finishes >= 290, result.stdout  # seen: 298, 298


WAIT_CODE = EVENTS_CODE.replace("    q.finish()\n", "    ev.wait()  # clWaitForEvents\n").replace(
    '"finishes", fast.finishes', '"waits", fast.waits')


def test_profiled_waits_for_events_take_the_fast_path(python_with_icd):
    result = python_with_icd(WAIT_CODE)
    assert result.returncode == 0, result.stdout + result.stderr
    words = result.stdout.split()
    launches, waits = (int(words[words.index(w) + 1]) for w in ("launches", "waits"))
    # C records each launch with its timestamps and runs each clWaitForEvents
    assert launches >= 290 and waits >= 290, result.stdout
