"""The fast path is really taken: launches and small writes without an event, through a second
ICD loader (ctypes, the system's libOpenCL) on pyopencl's objects, counted by icd/fast_path.c."""
import pytest
from checks import CONTEXT, LOADER

pytest.importorskip("pyopencl")


def _counts(result, *names: str) -> list[int]:
    """The fast path's counters the snippet printed ("name value" pairs)."""
    assert result.returncode == 0, result.stdout + result.stderr
    words = result.stdout.split()
    return [int(words[words.index(n) + 1]) for n in names]

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
    launches, finishes, writes = _counts(result, "launches", "finishes", "writes")
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
    launches, finishes = _counts(result, "launches", "finishes")
    # C records each launch with its timestamps and runs each clFinish; Python makes the events
    assert launches >= 290 and finishes >= 290, result.stdout  # seen: 298, 298


WAIT_CODE = EVENTS_CODE.replace("    q.finish()\n", "    ev.wait()  # clWaitForEvents\n").replace(
    '"finishes", fast.finishes', '"waits", fast.waits')


def test_profiled_waits_for_events_take_the_fast_path(python_with_icd):
    result = python_with_icd(WAIT_CODE)
    launches, waits = _counts(result, "launches", "waits")
    # C records each launch with its timestamps and runs each clWaitForEvents
    assert launches >= 290 and waits >= 290, result.stdout


TRANSFER_CODE = CONTEXT + r"""
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
n = 1 << 20  # ints: 4 MiB, so that the whole buffer goes through C's staging memory at once
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
wo = cl.Buffer(ctx, mf.READ_WRITE | mf.HOST_WRITE_ONLY, 4 * n)
""" + LOADER + r"""current = []
def launch(b, items):
    if current != [b]:  # a new argument: the next launch is Python's, which prepares C's
        k.set_arg(0, b)
        current[:] = [b]
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, (c_size_t * 1)(items), None, 0, None, None) == 0
want = np.arange(n, dtype=np.int32)
assert write(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, want.ctypes.data, 0, None, None) == 0  # Python's; prepares C's
rng = np.random.default_rng(1)
for i in range(60):
    launch(buf, n)  # C records it; the blocking transfer then runs the batch
    want += 1
    off = int(rng.integers(0, n - 1)) if i % 3 else 0
    count = int(rng.integers(1, n - off + 1)) if i % 3 else n
    got = np.zeros(count, np.int32)
    assert read(q.int_ptr, buf.int_ptr, 1, 4 * off, 4 * count, got.ctypes.data, 0, None, None) == 0
    assert (got == want[off:off + count]).all(), (i, off, count)
    if i % 2:  # a blocking write after a launch, checked by the next read
        part = rng.integers(0, 1 << 30, size=count, dtype=np.int32)
        launch(buf, n)
        want += 1
        assert write(q.int_ptr, buf.int_ptr, 1, 4 * off, 4 * count, part.ctypes.data, 0, None, None) == 0
        want[off:off + count] = part
# past the buffer, and reads of a host-write-only buffer: Python's errors, whichever path
launch(buf, n)
want += 1
assert read(q.int_ptr, buf.int_ptr, 1, 4 * n - 4, 8, got.ctypes.data, 0, None, None) == -30  # CL_INVALID_VALUE
assert write(q.int_ptr, wo.int_ptr, 1, 0, 16, want.ctypes.data, 0, None, None) == 0
launch(buf, n)
want += 1
assert read(q.int_ptr, wo.int_ptr, 1, 0, 16, got.ctypes.data, 0, None, None) == -59  # CL_INVALID_OPERATION
# a new buffer's first transfer is Python's (it prepares C's)
big = cl.Buffer(ctx, mf.READ_WRITE, 8 * n)
ones = np.ones(2 * n, np.int32)
assert write(q.int_ptr, big.int_ptr, 1, 0, 8 * n, ones.ctypes.data, 0, None, None) == 0
launch(big, 2 * n)
out = np.zeros(2 * n, np.int32)
assert read(q.int_ptr, big.int_ptr, 1, 0, 8 * n, out.ctypes.data, 0, None, None) == 0
assert (out == 2).all()
# the host side in vkcl's own mapped memory (an ALLOC_HOST_PTR buffer): one copy, any size
from vkcl.api import handles
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 8 * n)
mapped, _ = cl.enqueue_map_buffer(q, pin, cl.map_flags.READ | cl.map_flags.WRITE, 0, (2 * n,), np.int32)
launch(big, 2 * n)
launch(big, 2 * n)  # the second in a row prepares C's
assert finish(q.int_ptr) == 0
launch(big, 2 * n)
before = fast.transfers
assert read(q.int_ptr, big.int_ptr, 1, 0, 8 * n, mapped.ctypes.data, 0, None, None) == 0
assert (mapped == 5).all() and fast.transfers == before + 1, (mapped[:4], fast.transfers - before)
mapped[:] = np.arange(2 * n, dtype=np.int32)
launch(big, 2 * n)
assert write(q.int_ptr, big.int_ptr, 1, 4, 8 * n - 8, mapped[1:].ctypes.data, 0, None, None) == 0
assert fast.transfers == before + 2
assert read(q.int_ptr, big.int_ptr, 1, 0, 8 * n, out.ctypes.data, 0, None, None) == 0
assert out[0] == 6 and out[-1] == 6 and (out[1:-1] == np.arange(1, 2 * n - 1)).all(), out[:4]
assert finish(q.int_ptr) == 0
final = np.zeros(n, np.int32)
cl.enqueue_copy(q, final, buf)
assert (final == want).all()

print("launches", fast.launches, "transfers", fast.transfers)
"""


def test_blocking_transfers_after_launches_take_the_fast_path(python_with_icd):
    result = python_with_icd(TRANSFER_CODE)
    launches, transfers = _counts(result, "launches", "transfers")
    # every read and write after a launch, but the first ones (which prepare C's) and the big one
    assert launches >= 85 and transfers >= 87, result.stdout  # seen: 91, 89


NONBLOCKING_CODE = CONTEXT + r"""
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
mf = cl.mem_flags
n = 1 << 18
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
buf = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(n, np.int32))
pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 4 * n)
mapped, _ = cl.enqueue_map_buffer(q, pin, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,), np.int32)
k.set_arg(0, buf)
ocl = ctypes.CDLL("libOpenCL.so.1")
enqueue, finish, wait = ocl.clEnqueueNDRangeKernel, ocl.clFinish, ocl.clWaitForEvents
enqueue.argtypes = [c_void_p, c_void_p, c_uint, c_void_p, POINTER(c_size_t), c_void_p, c_uint, c_void_p, c_void_p]
finish.argtypes = [c_void_p]
wait.argtypes = [c_uint, POINTER(c_void_p)]
read, write = ocl.clEnqueueReadBuffer, ocl.clEnqueueWriteBuffer
for f in (read, write):
    f.argtypes = [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p, c_uint, c_void_p, POINTER(c_void_p)]
info, prof, release = ocl.clGetEventInfo, ocl.clGetEventProfilingInfo, ocl.clReleaseEvent
info.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
prof.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
release.argtypes = [c_void_p]
size = (c_size_t * 1)(n)
def launch():
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
launch(); launch()  # the second prepares C's
assert finish(q.int_ptr) == 0
from vkcl.api import handles
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
before = fast.transfers
value = 2
for i in range(20):
    launch()
    value += 1
    ev = c_void_p()
    assert read(q.int_ptr, buf.int_ptr, 0, 0, 4 * n, mapped.ctypes.data, 0, None, byref(ev)) == 0
    assert wait(1, byref(ev)) == 0  # C: the batch with the launch and the read
    assert (mapped == value).all(), (i, mapped[:4])
    kind, times = c_uint(), [c_uint64() for _ in range(4)]
    assert info(ev, 0x11D1, 4, byref(kind), None) == 0 and kind.value == 0x11F3  # CL_COMMAND_READ_BUFFER
    for t, which in zip(times, (0x1280, 0x1281, 0x1282, 0x1283)):  # QUEUED .. END
        assert prof(ev, which, 8, byref(t), None) == 0
    assert 0 < times[0].value <= times[1].value <= times[2].value <= times[3].value, [t.value for t in times]
    assert release(ev) == 0
    mapped[:] = i  # after a launch, a non-blocking write from mapped memory, no event; a launch
    launch()
    assert write(q.int_ptr, buf.int_ptr, 0, 0, 4 * n, mapped.ctypes.data, 0, None, None) == 0
    launch()
    value = i + 1
    assert finish(q.int_ptr) == 0
got = np.zeros(n, np.int32)
cl.enqueue_copy(q, got, buf)
assert (got == value).all()
print("transfers", fast.transfers - before, "waits", fast.waits)
"""


def test_transfers_from_mapped_memory_with_events_take_the_fast_path(python_with_icd):
    result = python_with_icd(NONBLOCKING_CODE)
    transfers, waits = _counts(result, "transfers", "waits")
    # every read (its event made by Python, the wait in C) but the first, which prepares C's, and
    # every write (no event)
    assert transfers >= 38 and waits >= 19, result.stdout  # seen: 39, 19


SUB_BUFFER_CODE = CONTEXT + r"""
q = cl.CommandQueue(ctx)
n = 1 << 16
align = p.get_devices()[0].mem_base_addr_align // 8
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
sub = buf.get_sub_region(align * 4, 4 * 1024)
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
k.set_arg(0, sub)
""" + LOADER + r"""base = np.arange(n, dtype=np.int32)
assert write(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, base.ctypes.data, 0, None, None) == 0
size = (c_size_t * 1)(1024)
vals = np.arange(1024, dtype=np.int32) * 7
assert write(q.int_ptr, sub.int_ptr, 1, 0, 4096, vals.ctypes.data, 0, None, None) == 0  # python, prepares
for i in range(5):
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
    got = np.zeros(1000, np.int32)
    assert read(q.int_ptr, sub.int_ptr, 1, 96, 4000, got.ctypes.data, 0, None, None) == 0
    assert (got == vals[24:1024] + 1).all(), (i, got[:4])
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
    assert write(q.int_ptr, sub.int_ptr, 1, 0, 4096, vals.ctypes.data, 0, None, None) == 0
finish(q.int_ptr)
whole = np.zeros(n, np.int32); cl.enqueue_copy(q, whole, buf)
expect = base.copy(); expect[align:align + 1024] = vals
assert (whole == expect).all()
from vkcl.api import handles
print("transfers", handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c.transfers)
"""


def test_transfers_of_a_sub_buffer_take_the_fast_path(python_with_icd):
    (transfers,) = _counts(python_with_icd(SUB_BUFFER_CODE), "transfers")
    # the reads and writes of the sub-buffer after its launches, at its offset in the parent
    assert transfers >= 6, transfers  # seen: 8


MAP_CODE = CONTEXT + r"""
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
mf = cl.mem_flags
n = 1 << 18
prog = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build()
buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
other = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)  # launched on while `buf` is mapped
kernels = {}
for b in (buf, other):
    kernels[b] = prog.bump
    kernels[b].set_arg(0, b)
""" + LOADER + r"""mapb, unmap = ocl.clEnqueueMapBuffer, ocl.clEnqueueUnmapMemObject
mapb.argtypes = [c_void_p, c_void_p, c_uint, c_uint64, c_size_t, c_size_t, c_uint, c_void_p, POINTER(c_void_p),
                 POINTER(ctypes.c_int)]
mapb.restype = c_void_p
unmap.argtypes = [c_void_p, c_void_p, c_void_p, c_uint, c_void_p, POINTER(c_void_p)]
info, prof, release = ocl.clGetEventInfo, ocl.clGetEventProfilingInfo, ocl.clReleaseEvent
info.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
prof.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
release.argtypes = [c_void_p]
READ, WRITE, INVALIDATE = 1, 2, 4
def launch(b):
    assert enqueue(q.int_ptr, kernels[b].int_ptr, 1, None, (c_size_t * 1)(n), None, 0, None, None) == 0
def check_event(ev, command_type):
    kind, status, times = c_uint(), ctypes.c_int(), [c_uint64() for _ in range(4)]
    assert info(ev, 0x11D1, 4, byref(kind), None) == 0 and kind.value == command_type, hex(kind.value)
    assert info(ev, 0x11D3, 4, byref(status), None) == 0 and status.value == 0  # CL_COMPLETE
    for t, which in zip(times, (0x1280, 0x1281, 0x1282, 0x1283)):  # QUEUED .. END
        assert prof(ev, which, 8, byref(t), None) == 0
    assert 0 < times[0].value <= times[1].value <= times[2].value <= times[3].value, [t.value for t in times]
    assert release(ev) == 0
want = np.arange(n, dtype=np.int32)
assert write(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, want.ctypes.data, 0, None, None) == 0  # Python's; prepares C's
for b in (buf, other, buf, other):  # the second launch of each prepares C's
    launch(b)
want += 2
assert finish(q.int_ptr) == 0
from vkcl.api import handles
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
before = fast.transfers
rng = np.random.default_rng(2)
err = ctypes.c_int()
for i in range(24):
    launch(buf)  # C's launch: the map's copy follows it in the batch
    want += 1
    off = int(rng.integers(0, n - 1)) if i % 3 else 0
    count = int(rng.integers(1, n - off + 1)) if i % 3 else n
    ev = c_void_p()
    ptr = mapb(q.int_ptr, buf.int_ptr, 1, READ | WRITE, 4 * off, 4 * count, 0, None, byref(ev) if i % 2 else None,
               byref(err))
    assert err.value == 0 and ptr
    got = np.ctypeslib.as_array(ctypes.cast(ptr, POINTER(ctypes.c_int32)), (count,))
    assert (got == want[off:off + count]).all(), (i, off, count, got[:4])
    if i % 2:
        check_event(ev, 0x11FB)  # CL_COMMAND_MAP_BUFFER
    got[:] = rng.integers(0, 1 << 30, size=count, dtype=np.int32)
    want[off:off + count] = got
    launch(other)  # the open batch is not empty: on a device whose memory the host sees, C copies only then
    ev = c_void_p()
    assert unmap(q.int_ptr, buf.int_ptr, ptr, 0, None, byref(ev) if i % 4 == 1 else None) == 0
    if i % 4 == 1:
        assert finish(q.int_ptr) == 0
        check_event(ev, 0x11FD)  # CL_COMMAND_UNMAP_MEM_OBJECT
    if i % 5 == 4:  # a write-invalidate map has nothing to copy in; its unmap copies out
        assert finish(q.int_ptr) == 0
        ptr = mapb(q.int_ptr, buf.int_ptr, 1, INVALIDATE, 0, 4 * n, 0, None, None, byref(err))
        assert err.value == 0 and ptr
        got = np.ctypeslib.as_array(ctypes.cast(ptr, POINTER(ctypes.c_int32)), (n,))
        got[:] = want = rng.integers(0, 1 << 30, size=n, dtype=np.int32)
        launch(other)
        assert unmap(q.int_ptr, buf.int_ptr, ptr, 0, None, None) == 0
assert finish(q.int_ptr) == 0
final = np.zeros(n, np.int32)
assert read(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, final.ctypes.data, 0, None, None) == 0
assert (final == want).all()
print("transfers", fast.transfers - before)
"""


def test_maps_of_a_device_buffer_copy_through_the_fast_path(python_with_icd):
    """A map's copy in and an unmap's copy out are C's transfers into and out of the mapping's
    staging memory; the map is then complete, with its event's times."""
    # lavapipe's memory is host-visible: unmapped, as a discrete GPU's, maps go through staging
    (transfers,) = _counts(python_with_icd(MAP_CODE, env={"VKCL_MAP_DEVICE_MEMORY": "0"}), "transfers")
    # each map (24) and unmap (24, and 4 of write-invalidated maps)
    assert transfers >= 50, transfers  # seen: 52


CHUNKED_CODE = CONTEXT + r"""
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
n = 10 * (1 << 20) + 3  # ints: 40 MiB and 12 bytes, several chunks of half C's staging memory
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
k.set_arg(0, buf)
""" + LOADER + r"""wait, prof, release = ocl.clWaitForEvents, ocl.clGetEventProfilingInfo, ocl.clReleaseEvent
wait.argtypes = [c_uint, POINTER(c_void_p)]
prof.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
release.argtypes = [c_void_p]
for f in (read, write):  # with an event pointer
    f.argtypes = [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p, c_uint, c_void_p, POINTER(c_void_p)]
def check_times(ev):
    times = [c_uint64() for _ in range(5)]
    for t, which in zip(times, (0x1280, 0x1281, 0x1282, 0x1283, 0x1284)):  # QUEUED .. COMPLETE
        assert prof(ev, which, 8, byref(t), None) == 0
    assert 0 < times[0].value <= times[1].value <= times[2].value <= times[3].value <= times[4].value, times
rng = np.random.default_rng(3)
want = rng.integers(-1 << 30, 1 << 30, size=n, dtype=np.int32)
assert write(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, want.ctypes.data, 0, None, None) == 0  # Python's; prepares C's
ITEMS = 1 << 16  # the launches bump the first 64 Ki ints (one dispatch: C's launches)
def launch():
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, (c_size_t * 1)(ITEMS), None, 0, None, None) == 0
    want[:ITEMS] += 1
launch(); launch()  # the second prepares C's
from vkcl.api import handles
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
before = fast.transfers
for i in range(6):
    launch()  # in the open batch: the transfer runs it first, in order
    off = int(rng.integers(0, n // 3)) if i % 2 else 0
    count = n - off - (int(rng.integers(0, 1000)) if i % 2 else 0)
    got = np.zeros(count, np.int32)
    ev = c_void_p()  # every third one non-blocking with an event: done in the call, its times set
    blocking = i % 3 != 2
    assert read(q.int_ptr, buf.int_ptr, blocking, 4 * off, 4 * count, got.ctypes.data, 0, None,
                None if blocking else byref(ev)) == 0
    if not blocking:
        assert wait(1, byref(ev)) == 0
        check_times(ev)
        assert release(ev) == 0
    assert (got == want[off:off + count]).all(), (i, off, count, np.flatnonzero(got != want[off:off + count])[:4])
    launch()
    part = rng.integers(-1 << 30, 1 << 30, size=count, dtype=np.int32)
    want[off:off + count] = part
    assert write(q.int_ptr, buf.int_ptr, blocking, 4 * off, 4 * count, part.ctypes.data, 0, None,
                 None if blocking else byref(ev)) == 0
    if not blocking:
        check_times(ev)  # complete: the host memory is the application's again
        assert release(ev) == 0
        part[:] = 0
launch()
final = np.zeros(n, np.int32)
assert read(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, final.ctypes.data, 0, None, None) == 0
assert (final == want).all()
print("transfers", fast.transfers - before)
"""


def test_large_blocking_transfers_go_through_staging_in_chunks(python_with_icd):
    """Transfers larger than half C's staging memory: in chunks, in order after the launches
    before them, the last chunk partial, at offsets; non-blocking ones complete in the call,
    with their events' profiling times."""
    (transfers,) = _counts(python_with_icd(CHUNKED_CODE), "transfers")
    # every read and write after a launch but the first read (Python's launch before it): 12
    assert transfers >= 12, transfers


HOST_BARRIER_CODE = CONTEXT + r"""
q = cl.CommandQueue(ctx)
mf = cl.mem_flags
n = 4096
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
dev = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(n, np.int32))
pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 4 * n)
cl.enqueue_fill_buffer(q, pin, np.int32(0), 0, 4 * n)
q.finish()
""" + LOADER + r"""
from vkcl.api import handles
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
vkdev = handles.find(handles.ffi.cast("void *", q.int_ptr)).vk
size = (c_size_t * 1)(n)
counts = []
for b in (dev, pin):
    k.set_arg(0, b)
    for i in range(2):  # the second prepares C's
        assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
    assert finish(q.int_ptr) == 0
    launches, before = fast.launches, fast.host_barriers
    for i in range(50):  # round trips C runs itself
        assert enqueue(q.int_ptr, k.int_ptr, 1, None, size, None, 0, None, None) == 0
        assert finish(q.int_ptr) == 0
    assert fast.launches == launches + 50
    counts.append(fast.host_barriers - before)
    # what the host sees of it afterwards, mapped without a copy where the memory is the host's
    got, _ = cl.enqueue_map_buffer(q, b, cl.map_flags.READ, 0, (n,), np.int32)
    assert (got == 52).all(), got[:4]
    del got
visible = [handles.find(handles.ffi.cast("void *", b.int_ptr)).region(vkdev).host_ptr is not None for b in (dev, pin)]
print("device_buffer", counts[0], "host_buffer", counts[1], "visible", *map(int, visible))
"""


def test_round_trips_end_with_a_host_barrier_only_on_host_visible_memory(python_with_icd):
    """C's clFinish makes a batch's writes visible to the host only when its launches wrote
    memory the host reads directly (an ALLOC_HOST_PTR buffer; every buffer on a device whose
    memory is the host's): on NVIDIA that barrier costs each round trip ~3.5 us."""
    result = python_with_icd(HOST_BARRIER_CODE)
    device_buffer, host_buffer = _counts(result, "device_buffer", "host_buffer")
    words = result.stdout.split()
    dev_visible, pin_visible = (int(w) for w in words[words.index("visible") + 1:][:2])
    assert pin_visible and host_buffer == 50, result.stdout
    assert device_buffer == (50 if dev_visible else 0), result.stdout
