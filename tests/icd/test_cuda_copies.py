"""CUDA copies (vkcl/vulkan/cuda_copy.py, icd/cuda_copy.c): transfers between vkcl's pinned memory
and buffers by CUDA's copy engine. On an NVIDIA GPU against libcuda itself; elsewhere (lavapipe)
against a stand-in (c/cuda_standin.c) whose copies are memcpy between lavapipe's exported memory
and the host, so that the whole path runs and its results are checked with numpy."""
import subprocess

import pytest
from checks import CONTEXT, LOADER

pytest.importorskip("pyopencl")

NVIDIA = 0x10DE

VENDOR_CODE = CONTEXT + "print('vendor', ctx.devices[0].vendor_id)\n"


@pytest.fixture(scope="module")
def on_nvidia(python_with_icd) -> bool:
    result = python_with_icd(VENDOR_CODE)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1]) == NVIDIA


@pytest.fixture(scope="module")
def standin(tmp_path_factory, on_nvidia):
    """The environment that gives vkcl the stand-in libcuda (none on an NVIDIA GPU: its own)."""
    if on_nvidia:
        return {}
    lib = tmp_path_factory.mktemp("cuda") / "libcuda_standin.so"
    subprocess.run(["gcc", "-O1", "-Wall", "-Werror", "-shared", "-fPIC", "-o", str(lib),
                    "tests/icd/c/cuda_standin.c"], check=True)
    # lavapipe's buffer memory unmapped, as a discrete GPU's: CUDA then copies into it
    return {"VKCL_CUDA_COPIES": "2", "VKCL_CUDA_LIBRARY": str(lib), "VKCL_MAP_DEVICE_MEMORY": "0"}


CODE = CONTEXT + LOADER + r"""
import os
info, prof, release = ocl.clGetEventInfo, ocl.clGetEventProfilingInfo, ocl.clReleaseEvent
for f in (info, prof):
    f.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
release.argtypes = [c_void_p]
read_ev = ocl.clEnqueueReadBuffer
read_ev.argtypes = [c_void_p, c_void_p, c_uint, c_size_t, c_size_t, c_void_p, c_uint, c_void_p, POINTER(c_void_p)]
map_buffer, unmap = ocl.clEnqueueMapBuffer, ocl.clEnqueueUnmapMemObject
map_buffer.restype = c_void_p
map_buffer.argtypes = [c_void_p, c_void_p, c_uint, c_uint64, c_size_t, c_size_t, c_uint, c_void_p, c_void_p,
                       POINTER(ctypes.c_int)]
unmap.argtypes = [c_void_p, c_void_p, c_void_p, c_uint, c_void_p, c_void_p]
get_info = ocl.clGetDeviceInfo
get_info.argtypes = [c_void_p, c_uint, c_size_t, c_void_p, c_void_p]
uuid = ctypes.create_string_buffer(16)
assert get_info(ctx.devices[0].int_ptr, 0x106A, 16, uuid, None) == 0  # CL_DEVICE_UUID_KHR
os.environ["CUDA_STANDIN_UUID"] = uuid.raw.hex()  # read when CUDA starts, with the first pinned memory

from vkcl.vulkan import cuda_copy  # the ICD's own modules, in this interpreter
from vkcl.api import handles
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
fast = handles.find(handles.ffi.cast("void *", q.int_ptr)).fast.c
mf = cl.mem_flags
n = 1 << 20  # ints: 4 MiB
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
buf = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
k.set_arg(0, buf)
def launch():
    assert enqueue(q.int_ptr, k.int_ptr, 1, None, (c_size_t * 1)(n), None, 0, None, None) == 0
cl.enqueue_copy(q, buf, np.zeros(n, np.int32))  # Python's; prepares C's transfers of buf
launch(); launch()  # the second prepares C's launches
assert finish(q.int_ptr) == 0
pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 4 * n)
mapped, _ = cl.enqueue_map_buffer(q, pin, cl.map_flags.READ | cl.map_flags.WRITE, 0, (n,), np.int32)
copies = cuda_copy._all[0]
state = copies.state
expected = state == "on" and "CUDA_STANDIN_FAIL" not in os.environ  # copies CUDA should make
def cuda_copies():
    return copies.copies if state == "on" else 0
rng = np.random.default_rng(7)

# a blocking write from pinned memory, a launch, a blocking read into it
want = rng.integers(0, 1 << 30, size=n, dtype=np.int32)
mapped[:] = want
before = cuda_copies()
assert write(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, mapped.ctypes.data, 0, None, None) == 0
launch()
mapped[:] = 0
assert read(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, mapped.ctypes.data, 0, None, None) == 0
assert (mapped == want + 1).all(), mapped[:4]
assert cuda_copies() == before + 2 * expected, (cuda_copies(), before)

# part of the buffer, at an offset
off, count = 4096 + 12, 300000
part = rng.integers(0, 1 << 30, size=count, dtype=np.int32)
mapped[:count] = part
assert write(q.int_ptr, buf.int_ptr, 1, 4 * off, 4 * count, mapped.ctypes.data, 0, None, None) == 0
want += 1
want[off:off + count] = part
assert read(q.int_ptr, buf.int_ptr, 1, 0, 4 * n, mapped.ctypes.data, 0, None, None) == 0
assert (mapped == want).all()

# non-blocking with an event: after a launch (earlier work) through Vulkan, on an idle queue by CUDA;
# either way the event's times are in order
for idle in (False, True):
    if not idle:
        launch()
        want += 1
    before = cuda_copies()
    ev = c_void_p()
    assert read_ev(q.int_ptr, buf.int_ptr, 0, 0, 4 * n, mapped.ctypes.data, 0, None, byref(ev)) == 0
    status = ctypes.c_int()
    assert info(ev, 0x11D3, 4, byref(status), None) == 0  # CL_EVENT_COMMAND_EXECUTION_STATUS
    if idle and expected:
        assert status.value == 0 and cuda_copies() == before + 1, (status.value, cuda_copies() - before)
    assert finish(q.int_ptr) == 0
    assert (mapped == want).all(), (idle, mapped[:4], want[:4])
    times = [c_uint64() for _ in range(4)]
    for t, which in zip(times, (0x1280, 0x1281, 0x1282, 0x1283)):  # QUEUED .. END
        assert prof(ev, which, 8, byref(t), None) == 0
    assert 0 < times[0].value <= times[1].value <= times[2].value <= times[3].value, [t.value for t in times]
    assert release(ev) == 0

# a sub-buffer (its first transfer is Python's), and a transfer below the smallest CUDA copies
sub = buf.get_sub_region(1 << 20, 1 << 20)
cl.enqueue_copy(q, sub, np.full(1 << 18, 5, np.int32))
want[1 << 18:1 << 19] = 5
before = cuda_copies()
mapped[:1 << 18] = 9
assert write(q.int_ptr, sub.int_ptr, 1, 0, 1 << 20, mapped.ctypes.data, 0, None, None) == 0
want[1 << 18:1 << 19] = 9
assert write(q.int_ptr, buf.int_ptr, 1, 0, 1024, mapped.ctypes.data, 0, None, None) == 0
want[:256] = 9
assert cuda_copies() == before + expected, (cuda_copies(), before)

# a blocking map of the buffer: its copy into the map's staging memory (pinned: CUDA's)
err = ctypes.c_int()
ptr = map_buffer(q.int_ptr, buf.int_ptr, 1, 1, 0, 4 * n, 0, None, None, byref(err))  # CL_MAP_READ
assert err.value == 0 and ptr
view = np.ctypeslib.as_array(ctypes.cast(ptr, POINTER(ctypes.c_int32)), (n,))
assert (view == want).all()
assert unmap(q.int_ptr, buf.int_ptr, ptr, 0, None, None) == 0
assert finish(q.int_ptr) == 0
final = np.zeros(n, np.int32)
cl.enqueue_copy(q, final, buf)
assert (final == want).all()
print("state", state, "copies", cuda_copies(), "transfers", fast.transfers)
lib = os.environ.get("VKCL_CUDA_LIBRARY")
if lib and os.path.exists(lib):
    counts = (ctypes.c_int * 3)()
    ctypes.CDLL(lib).standin_counts(counts)
    print("registered", counts[0], "imported", counts[1], "standin_copies", counts[2])
"""


def _words(result) -> dict:
    assert result.returncode == 0, result.stdout + result.stderr
    words = result.stdout.split()
    return {words[i]: words[i + 1] for i in range(len(words) - 1)}


def test_pinned_transfers_are_cuda_copies(python_with_icd, standin, on_nvidia):
    got = _words(python_with_icd(CODE, env=standin))
    assert got["state"] == "on", got
    # 2 blocking, 2 at an offset, 1 non-blocking on an idle queue, 1 of a sub-buffer, 1 map
    assert int(got["copies"]) >= 7, got
    if not on_nvidia:
        assert int(got["standin_copies"]) == int(got["copies"])
        assert int(got["registered"]) >= 1 and int(got["imported"]) >= 1, got


@pytest.mark.parametrize("failing", ["cuInit", "cuImportExternalMemory", "cuExternalMemoryGetMappedBuffer",
                                     "cuMemHostRegister_v2", "cuMemcpyHtoDAsync_v2", "no library"])
def test_without_cuda_vulkan_copies(python_with_icd, standin, on_nvidia, failing):
    """Whatever of CUDA fails, the results are the same: Vulkan copies what CUDA does not."""
    if on_nvidia:
        pytest.skip("the stand-in's failures")
    env = dict(standin, CUDA_STANDIN_FAIL=failing)
    if failing == "no library":
        env["VKCL_CUDA_LIBRARY"] = "/nonexistent/libcuda.so.1"
    got = _words(python_with_icd(CODE, env=env))
    if failing in ("cuInit", "no library"):
        assert got["state"] == "off" and got["copies"] == "0", got
    elif failing.startswith("cuImport") or failing.startswith("cuExternal"):  # no buffer memory in CUDA
        assert got["state"] == "on" and got["copies"] == "0" and got["imported"] == "0", got
    else:  # no pinned memory in CUDA, or its first copy failed (then CUDA copies no more)
        assert got["state"] == "on" and got["copies"] == "0", got


NO_PINNED_CODE = CONTEXT + r"""
from vkcl.vulkan import cuda_copy
q = cl.CommandQueue(ctx)
k = cl.Program(ctx, "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }").build().bump
host = np.zeros(1 << 20, np.int32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
for i in range(3):
    k(q, host.shape, None, buf)
    cl.enqueue_copy(q, host, buf)  # pageable: through C's or Python's staging memory, never CUDA
assert (host == 3).all()
print("state", cuda_copy._all[0].state)
"""


def test_no_cuda_without_pinned_memory(python_with_icd, standin):
    """CUDA starts with pinned memory CUDA could copy (an ALLOC_HOST_PTR buffer, a map's staging),
    not with the staging memory of pageable transfers: a process that launches kernels and reads
    their results keeps CUDA out (on the H200, a CUDA context replacing the clock holder made
    some processes' round trips slow)."""
    got = _words(python_with_icd(NO_PINNED_CODE, env=standin))
    assert got["state"] == "idle", got
