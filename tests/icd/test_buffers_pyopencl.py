"""Buffer commands checked against numpy through pyopencl (which loads vkcl via its ICD loader).

Each test runs a script in a fresh interpreter: a numpy 'shadow' of every buffer follows each
command, and every read (and the final contents) is compared with it. Regions, offsets,
pitches, patterns and blocking flags are random with a fixed seed, so a failure reproduces.
"""
import pytest

pytest.importorskip("pyopencl")

PRELUDE = r"""
import sys
import numpy as np
import pyopencl as cl

MF, MAP = cl.mem_flags, cl.map_flags
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
dev = plat.get_devices()[0]
ctx = cl.Context([dev])
ALIGN = dev.mem_base_addr_align // 8
rng = np.random.default_rng(SEED)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def rand_bytes(n):
    return rng.integers(0, 256, n, dtype=np.uint8)


def rect_index(origin, region, row, slc):
    # Byte offsets of a 3-D region, shaped (depth, height, width), as the spec lays them out.
    x, y, z = (np.arange(r) for r in region)
    return ((origin[2] + z)[:, None, None] * slc + (origin[1] + y)[None, :, None] * row
            + (origin[0] + x)[None, None, :])


def rand_rect(total, fixed=None):
    # A random origin, region (unless fixed) and pitches (0 = the spec's default) that fit in
    # `total` bytes.
    while True:
        region = fixed or tuple(int(rng.integers(1, m + 1)) for m in (40, 12, 5))
        row = int(region[0] + rng.integers(0, 24)) if rng.random() < 0.7 else 0
        r = row or region[0]
        slc = int(r * (region[1] + rng.integers(0, 4))) if rng.random() < 0.7 else 0
        s = slc or r * region[1]
        origin = (int(rng.integers(0, 16)), int(rng.integers(0, 4)), int(rng.integers(0, 3)))
        end = (origin[2] + region[2] - 1) * s + (origin[1] + region[1] - 1) * r + origin[0] + region[0]
        if end <= total:
            return origin, region, row, slc, r, s


def finish():
    print("checked", len(failures), "failures")
    sys.exit(1 if failures else 0)
"""


def run(python_with_icd, body: str, seed: int = 1234, timeout: float = 120):
    result = python_with_icd(PRELUDE.replace("SEED", str(seed)) + body, timeout=timeout)
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in out, out[-6000:]
    return out


RANDOM_COMMANDS = r"""
# One parent buffer, sub-buffers at random aligned origins, and a numpy shadow of the parent.
# Every command goes to a random object (parent or sub-buffer), blocking or not.
N = 1 << 16
props = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE if OOO else 0
q = cl.CommandQueue(ctx, properties=props)
parent = cl.Buffer(ctx, MF.READ_WRITE, N)
shadow = rand_bytes(N)
cl.enqueue_copy(q, parent, shadow)
objs = [(parent, 0, N)]
for _ in range(6):
    origin = int(rng.integers(0, N // ALIGN - 1)) * ALIGN
    size = int(rng.integers(1, N - origin + 1))
    objs.append((parent.get_sub_region(origin, size), origin, size))
pending = []  # (host array, expected bytes, event) of non-blocking reads
keep = []     # host arrays of non-blocking writes: alive until the queue finished
counts = {}


def pick():
    return objs[int(rng.integers(len(objs)))]


def rand_range(size, mult=1):
    n = int(rng.integers(1, min(size, 3000) // mult + 1)) * mult if size >= mult else 0
    off = int(rng.integers(0, (size - n) // mult + 1)) * mult
    return off, n


def sync():
    # In an out-of-order queue each command must see the previous one: wait for it.
    if OOO:
        q.finish()


for step in range(STEPS):
    op = rng.choice(["write", "read", "copy", "fill", "write_rect", "read_rect", "copy_rect", "map",
                     "migrate"])
    counts[op] = counts.get(op, 0) + 1
    blocking = bool(rng.random() < 0.5)
    buf, base, size = pick()
    if op == "write":
        off, n = rand_range(size)
        data = rand_bytes(n)
        ev = cl.enqueue_copy(q, buf, data, dst_offset=off, is_blocking=blocking)
        keep.append((data, ev))
        shadow[base + off:base + off + n] = data
    elif op == "read":
        off, n = rand_range(size)
        out = np.zeros(n, np.uint8)
        ev = cl.enqueue_copy(q, out, buf, src_offset=off, is_blocking=blocking)
        expect = shadow[base + off:base + off + n].copy()
        if blocking:
            check(np.array_equal(out, expect), f"step {step}: read [{off}, +{n}) of object at {base}")
        else:
            pending.append((out, expect, ev, step))
    elif op == "copy":
        sbuf, sbase, ssize = buf, base, size
        dbuf, dbase, dsize = pick()
        n = int(rng.integers(1, min(ssize, dsize, 3000) + 1))
        so, do = int(rng.integers(0, ssize - n + 1)), int(rng.integers(0, dsize - n + 1))
        if sbase + so < dbase + do + n and dbase + do < sbase + so + n:
            try:
                cl.enqueue_copy(q, dbuf, sbuf, byte_count=n, src_offset=so, dst_offset=do)
                check(False, f"step {step}: overlapping copy accepted")
            except cl.Error as e:
                check(e.code == -8, f"step {step}: overlapping copy gave {e.code}")  # CL_MEM_COPY_OVERLAP
            continue
        cl.enqueue_copy(q, dbuf, sbuf, byte_count=n, src_offset=so, dst_offset=do)
        shadow[dbase + do:dbase + do + n] = shadow[sbase + so:sbase + so + n].copy()
    elif op == "fill":
        psize = int(2 ** rng.integers(0, 8))
        off, n = rand_range(size, psize)
        if n == 0:
            continue
        pattern = rand_bytes(psize)
        cl.enqueue_fill_buffer(q, buf, pattern, off, n)
        shadow[base + off:base + off + n] = np.tile(pattern, n // psize)
    elif op == "write_rect":
        origin, region, row, slc, r, s = rand_rect(size)
        horigin, _, hrow, hslc, hr, hs = rand_rect(1 << 30, region)
        hidx = rect_index(horigin, region, hr, hs)
        host = rand_bytes(int(hidx.max()) + 1)
        ev = cl.enqueue_copy(q, buf, host, buffer_origin=origin, host_origin=horigin, region=region,
                             buffer_pitches=(row, slc), host_pitches=(hrow, hslc), is_blocking=blocking)
        keep.append((host, ev))
        shadow[base + rect_index(origin, region, r, s)] = host[hidx]
    elif op == "read_rect":
        origin, region, row, slc, r, s = rand_rect(size)
        horigin, _, hrow, hslc, hr, hs = rand_rect(1 << 30, region)
        hidx = rect_index(horigin, region, hr, hs)
        host = np.zeros(int(hidx.max()) + 1, np.uint8)
        ev = cl.enqueue_copy(q, host, buf, buffer_origin=origin, host_origin=horigin, region=region,
                             buffer_pitches=(row, slc), host_pitches=(hrow, hslc), is_blocking=blocking)
        expect = np.zeros_like(host)
        expect[hidx] = shadow[base + rect_index(origin, region, r, s)]
        if blocking:
            check(np.array_equal(host, expect), f"step {step}: read rect {origin} {region} {row} {slc}")
        else:
            pending.append((host, expect, ev, step))
    elif op == "copy_rect":
        dbuf, dbase, dsize = pick()
        so, region, srow, sslc, sr, ss = rand_rect(size)
        do, _, drow, dslc, dr, ds = rand_rect(dsize, region)
        sidx = base + rect_index(so, region, sr, ss)
        didx = dbase + rect_index(do, region, dr, ds)
        overlap = bool(np.intersect1d(sidx.ravel(), didx.ravel()).size)
        same_pitch_conflict = buf is dbuf and (sr, ss) != (dr, ds)
        try:
            cl.enqueue_copy(q, dbuf, buf, src_origin=so, dst_origin=do, region=region,
                            src_pitches=(srow, sslc), dst_pitches=(drow, dslc))
        except cl.Error as e:
            expected = -30 if same_pitch_conflict else -8  # CL_INVALID_VALUE, CL_MEM_COPY_OVERLAP
            check((overlap or same_pitch_conflict) and e.code == expected,
                  f"step {step}: copy rect gave {e.code}, overlap {overlap}")
            continue
        check(not overlap and not same_pitch_conflict, f"step {step}: overlapping copy rect accepted")
        shadow[didx] = shadow[sidx].copy()
    elif op == "map":
        off, n = rand_range(size)
        kind = rng.choice(["read", "write", "invalidate"])
        flags = {"read": MAP.READ, "write": MAP.WRITE | MAP.READ, "invalidate": MAP.WRITE_INVALIDATE_REGION}[kind]
        arr, ev = cl.enqueue_map_buffer(q, buf, flags, off, (n,), np.uint8, is_blocking=blocking)
        ev.wait()
        check(buf.get_info(cl.mem_info.MAP_COUNT) == 1, f"step {step}: map count")
        if kind != "invalidate":
            check(np.array_equal(arr, shadow[base + off:base + off + n]), f"step {step}: mapped {kind} data")
        if kind != "read":
            data = rand_bytes(n)
            arr[:] = data
            shadow[base + off:base + off + n] = data
        arr.base.release(q)
        del arr
        q.finish()
        check(buf.get_info(cl.mem_info.MAP_COUNT) == 0, f"step {step}: map count after unmap")
    elif op == "migrate":
        flags = [0, cl.mem_migration_flags.HOST][int(rng.integers(2))]
        cl.enqueue_migrate_mem_objects(q, [o[0] for o in objs[:3]], flags)
    sync()

q.finish()
for out, expect, ev, step in pending:
    check(np.array_equal(out, expect), f"step {step}: non-blocking read")
final = np.zeros(N, np.uint8)
cl.enqueue_copy(q, final, parent)
bad = np.flatnonzero(final != shadow)
check(bad.size == 0, f"final contents differ at {bad[:10]} ({bad.size} bytes)")
print(counts)
finish()
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_commands_in_order(python_with_icd, seed):
    run(python_with_icd, RANDOM_COMMANDS.replace("OOO", "False").replace("STEPS", "300"), seed)


def test_random_commands_out_of_order(python_with_icd):
    run(python_with_icd, RANDOM_COMMANDS.replace("OOO", "True").replace("STEPS", "200"), 7)


FILL_EVERY_PATTERN = r"""
# Every pattern size at offsets that are multiples of it, on a buffer and on a sub-buffer.
q = cl.CommandQueue(ctx)
N = 8192
buf = cl.Buffer(ctx, MF.READ_WRITE, N)
sub_origin = 3 * ALIGN
sub = buf.get_sub_region(sub_origin, N - sub_origin)
shadow = np.zeros(N, np.uint8)
cl.enqueue_fill_buffer(q, buf, np.zeros(1, np.uint8), 0, N)
for psize in [1, 2, 4, 8, 16, 32, 64, 128]:
    for target, base, size in [(buf, 0, N), (sub, sub_origin, N - sub_origin)]:
        for _ in range(6):
            k = int(rng.integers(1, 20))
            off = int(rng.integers(0, (size - k * psize) // psize + 1)) * psize
            pattern = rand_bytes(psize)
            cl.enqueue_fill_buffer(q, target, pattern, off, k * psize)
            shadow[base + off:base + off + k * psize] = np.tile(pattern, k)
        out = np.zeros(N, np.uint8)
        cl.enqueue_copy(q, out, buf)
        check(np.array_equal(out, shadow), f"pattern size {psize} on object at {base}")
finish()
"""


def test_fill_every_pattern_size(python_with_icd):
    run(python_with_icd, FILL_EVERY_PATTERN)


HOST_PTR_BUFFERS = r"""
# CL_MEM_USE_HOST_PTR (zero-copy where the pointer can be imported, else a device copy) and
# CL_MEM_COPY_HOST_PTR, with aligned and unaligned host memory.
q = cl.CommandQueue(ctx)
N = 3 * 4096
for misalign in [0, 8]:
    store = np.zeros(N + 4096 + misalign, np.uint8)
    start = (-store.ctypes.data) % 4096 + misalign
    host = store[start:start + N]
    host[:] = rand_bytes(N)
    initial = host.copy()
    buf = cl.Buffer(ctx, MF.READ_WRITE | MF.USE_HOST_PTR, hostbuf=host)
    check(buf.get_host_array((N,), np.uint8).ctypes.data == host.ctypes.data, "CL_MEM_HOST_PTR")
    out = np.zeros(N, np.uint8)
    cl.enqueue_copy(q, out, buf)
    check(np.array_equal(out, initial), f"misalign {misalign}: initial contents")
    # A map returns host_ptr + offset, with the buffer's current contents there.
    data = rand_bytes(1000)
    cl.enqueue_copy(q, buf, data, dst_offset=500)
    arr, _ = cl.enqueue_map_buffer(q, buf, MAP.READ, 256, (2000,), np.uint8)
    check(arr.ctypes.data == host.ctypes.data + 256, f"misalign {misalign}: map pointer is host_ptr + offset")
    check(np.array_equal(host[500:1500], data), f"misalign {misalign}: host_ptr coherent at map")
    arr.base.release(q)
    del arr
    # Data written through a map (into host_ptr) reaches the buffer at unmap.
    arr, _ = cl.enqueue_map_buffer(q, buf, MAP.WRITE, 4096, (4096,), np.uint8)
    check(arr.ctypes.data == host.ctypes.data + 4096, f"misalign {misalign}: write map pointer")
    new = rand_bytes(4096)
    arr[:] = new
    arr.base.release(q)
    del arr
    out = np.zeros(4096, np.uint8)
    cl.enqueue_copy(q, out, buf, src_offset=4096)
    check(np.array_equal(out, new), f"misalign {misalign}: written through the map")
    arr, _ = cl.enqueue_map_buffer(q, buf, MAP.WRITE_INVALIDATE_REGION, 0, (N,), np.uint8)
    arr[:] = 7
    arr.base.release(q)
    del arr
    cl.enqueue_copy(q, out, buf, src_offset=8192)
    check((out == 7).all(), f"misalign {misalign}: write-invalidate map")
    sub = buf.get_sub_region(ALIGN, 2 * ALIGN)
    check(sub.get_host_array((16,), np.uint8).ctypes.data == host.ctypes.data + ALIGN, "sub-buffer CL_MEM_HOST_PTR")
    arr, _ = cl.enqueue_map_buffer(q, sub, MAP.READ, 16, (16,), np.uint8)
    check(arr.ctypes.data == host.ctypes.data + ALIGN + 16, "sub-buffer map pointer")
    arr.base.release(q)
    del arr
    q.finish()

    src = rand_bytes(N)
    cbuf = cl.Buffer(ctx, MF.READ_ONLY | MF.COPY_HOST_PTR, hostbuf=src)
    src_copy = src.copy()
    src[:] = 0  # the buffer holds a copy: later host changes do not reach it
    cl.enqueue_copy(q, out := np.zeros(N, np.uint8), cbuf)
    check(np.array_equal(out, src_copy), "COPY_HOST_PTR initial contents")
    abuf = cl.Buffer(ctx, MF.ALLOC_HOST_PTR | MF.COPY_HOST_PTR, hostbuf=src_copy)
    cl.enqueue_copy(q, out, abuf)
    check(np.array_equal(out, src_copy), "ALLOC_HOST_PTR | COPY_HOST_PTR initial contents")
finish()
"""


def test_host_pointer_buffers(python_with_icd):
    run(python_with_icd, HOST_PTR_BUFFERS)


MAPS = r"""
# Map counts with several live mappings, overlapping maps, and maps of sub-buffers; what a
# write map leaves is visible to reads and copies after unmap; non-blocking maps.
q = cl.CommandQueue(ctx)
N = 1 << 15
buf = cl.Buffer(ctx, MF.READ_WRITE, N)
shadow = rand_bytes(N)
cl.enqueue_copy(q, buf, shadow)
maps = []
for i in range(5):
    off = int(rng.integers(0, N - 1024))
    arr, ev = cl.enqueue_map_buffer(q, buf, MAP.READ, off, (1024,), np.uint8, is_blocking=False)
    ev.wait()
    check(np.array_equal(arr, shadow[off:off + 1024]), f"map {i} contents")
    maps.append(arr)
    check(buf.get_info(cl.mem_info.MAP_COUNT) == i + 1, f"map count {i + 1}")
for i, arr in enumerate(reversed(maps)):
    arr.base.release(q)
q.finish()
check(buf.get_info(cl.mem_info.MAP_COUNT) == 0, "map count back to 0")
del maps, arr

sub = buf.get_sub_region(4 * ALIGN, 8 * ALIGN)
arr, _ = cl.enqueue_map_buffer(q, sub, MAP.WRITE_INVALIDATE_REGION, 64, (512,), np.uint8)
data = rand_bytes(512)
arr[:] = data
shadow[4 * ALIGN + 64:4 * ALIGN + 576] = data
ev = arr.base.release(q)
del arr
# A copy right after the unmap, in the same queue, sees the mapped writes.
dst = cl.Buffer(ctx, MF.READ_WRITE, N)
cl.enqueue_copy(q, dst, buf, byte_count=N)
out = np.zeros(N, np.uint8)
cl.enqueue_copy(q, out, dst)
check(np.array_equal(out, shadow), "copy after unmap of a sub-buffer write map")

# Maps behind pending work (no wait list), in order: a blocking map sees what the kernel before
# it wrote, and the kernel after an unmap sees what the mapping wrote.
inc = cl.Program(ctx, "kernel void inc(global uchar *b) { b[get_global_id(0)] += 1; }").build().inc
for i in range(3):
    inc(q, (N,), None, buf)
    shadow += 1
    flags = MAP.READ | MAP.WRITE if i % 2 else MAP.WRITE_INVALIDATE_REGION
    arr, _ = cl.enqueue_map_buffer(q, buf, flags, 0, (N,), np.uint8)
    if i % 2:
        check(np.array_equal(arr, shadow), f"map after a pending kernel, round {i}")
        arr[:256] = 7
        shadow[:256] = 7
    else:
        arr[:] = shadow = rand_bytes(N)
    arr.base.release(q)
    del arr
    inc(q, (N,), None, buf)
    shadow += 1
out = np.zeros(N, np.uint8)
cl.enqueue_copy(q, out, buf)
check(np.array_equal(out, shadow), "kernels and maps in order")
finish()
"""


def test_maps(python_with_icd):
    run(python_with_icd, MAPS)


def test_maps_through_staging(python_with_icd):
    """The same with lavapipe's buffer memory unmapped, as a discrete GPU's: maps copy through
    staging memory (in C where the queue allows)."""
    run(lambda code, **kw: python_with_icd(code, env={"VKCL_MAP_DEVICE_MEMORY": "0"}, **kw), MAPS)


PROFILING = r"""
# QUEUED <= SUBMIT <= START <= END <= COMPLETE, all non-zero, for each buffer command.
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
N = 1 << 16
a, b = cl.Buffer(ctx, MF.READ_WRITE, N), cl.Buffer(ctx, MF.READ_WRITE, N)
host = rand_bytes(N)
out = np.zeros(N, np.uint8)
events = []
for blocking in [True, False]:
    events.append(("write", cl.enqueue_copy(q, a, host, is_blocking=blocking)))
    events.append(("fill", cl.enqueue_fill_buffer(q, b, np.uint8(3), 0, N)))
    events.append(("copy", cl.enqueue_copy(q, b, a, byte_count=N)))
    events.append(("read", cl.enqueue_copy(q, out, b, is_blocking=blocking)))
    events.append(("write_rect", cl.enqueue_copy(q, a, host, buffer_origin=(0, 0, 0), host_origin=(0, 0, 0),
                                                 region=(64, 8, 2), is_blocking=blocking)))
    events.append(("read_rect", cl.enqueue_copy(q, out, a, buffer_origin=(0, 0, 0), host_origin=(0, 0, 0),
                                                region=(64, 8, 2), is_blocking=blocking)))
    events.append(("copy_rect", cl.enqueue_copy(q, b, a, src_origin=(0, 0, 0), dst_origin=(0, 0, 0),
                                                region=(64, 8, 2))))
    arr, ev = cl.enqueue_map_buffer(q, a, MAP.READ, 0, (N,), np.uint8, is_blocking=blocking)
    events.append(("map", ev))
    ev.wait()
    events.append(("unmap", arr.base.release(q)))
    del arr
    events.append(("marker", cl.enqueue_marker(q)))
    events.append(("migrate", cl.enqueue_migrate_mem_objects(q, [a, b])))
q.finish()
pi = cl.profiling_info
for name, ev in events:
    t = [ev.get_profiling_info(p) for p in (pi.QUEUED, pi.SUBMIT, pi.START, pi.END, pi.COMPLETE)]
    check(all(x > 0 for x in t) and t == sorted(t), f"{name}: {[x - t[0] for x in t]} from {t[0]}")
dev_t, host_t = dev.device_and_host_timer()
check(dev_t > 0 and host_t > 0, "device and host timer")
check(dev.host_timer() >= host_t, "host timer moves forward")
finish()
"""


def test_profiling_timestamps(python_with_icd):
    run(python_with_icd, PROFILING)


KERNEL_DURATION = r"""
# A kernel's START..END is the time it ran: within the host-timed run of it (enqueue to wait's
# return), and most of it when the kernel is long; the five times are measured, in order, on
# both of vkcl's paths (C's events and Python's) over more than one clock calibration (100 ms).
import time
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
k = cl.Kernel(cl.Program(ctx, '''kernel void spin(global float *a, int n) {
    float x = a[get_global_id(0)];
    for (int i = 0; i < n; i++) x = x * 0.999f + 1.0f;
    a[get_global_id(0)] = x; }''').build(), "spin")
size, n = (1 << 20, 400000) if dev.type & cl.device_type.GPU else (1 << 14, 20000)
A = cl.Buffer(ctx, MF.READ_WRITE, 4 * size)
k(q, (size,), None, A, np.int32(1)).wait()
ratios = []
for _ in range(5):
    t0 = time.monotonic_ns()
    ev = k(q, (size,), None, A, np.int32(n))
    ev.wait()
    host = time.monotonic_ns() - t0
    p = ev.profile
    ratios.append((p.end - p.start) / host)
    check(t0 <= p.queued <= p.submit <= p.start <= p.end <= p.complete <= time.monotonic_ns(),
          f"times out of order: {[x - t0 for x in (p.queued, p.submit, p.start, p.end, p.complete)]}")
check(max(ratios) <= 1.0 and min(ratios) > 0.5, f"device time / host-timed run: {ratios}")
for _ in range(3):
    evs = [k(q, (64,), None, A, np.int32(10)) for _ in range(50)]
    q.finish()
    for e in evs:
        p = e.profile
        check(p.queued <= p.submit <= p.start <= p.end <= p.complete, "short kernels' times out of order")
    time.sleep(0.12)  # the next round converts its timestamps with a new calibration
finish()
"""


def test_profiled_kernel_duration_is_what_the_host_timed(python_with_icd):
    run(python_with_icd, KERNEL_DURATION)


# A read or write the host does itself (lavapipe's memory is the host's; an idle queue) has the
# copy's own profiling times: START and END were both its completion, 0 ns apart, until the
# twenty-seventh session (Rodinia's particlefilter printed "HtoD: 0.000000"). On a GPU the
# transfer is a device copy, timed by the device. Either way its duration is positive and within
# the host-timed call, and the times are in order.
TRANSFER_DURATION = r"""
import time
q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
for n in (1 << 12, 1 << 24):
    a = rng.random(n // 8)
    B = cl.Buffer(ctx, MF.READ_WRITE, a.nbytes)
    back = np.empty_like(a)
    for blocking in (True, False):
        for what, dst, src in (("write", B, a), ("read", back, B)):
            t0 = time.monotonic_ns()
            ev = cl.enqueue_copy(q, dst, src, is_blocking=blocking)
            ev.wait()
            host = time.monotonic_ns() - t0
            p = ev.profile
            check(t0 <= p.queued <= p.submit <= p.start < p.end <= p.complete <= time.monotonic_ns(),
                  f"{what} of {n} bytes: times out of order or no duration: "
                  f"{[x - t0 for x in (p.queued, p.submit, p.start, p.end, p.complete)]}")
            check(p.end - p.start <= host, f"{what} of {n} bytes took {p.end - p.start} ns of {host}")
    check(np.array_equal(back, a), "read back")
finish()
"""


def test_profiled_transfers_have_their_copys_duration(python_with_icd):
    run(python_with_icd, TRANSFER_DURATION)
