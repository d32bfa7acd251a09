"""Probe: can anything add to Vulkan's ~51 GB/s host -> device and ~52 device -> host copies on a
discrete GPU, where NVIDIA's OpenCL and CUDA move ~55?

1. The memory types and heaps: is device-local memory host-visible (a BAR over all of VRAM)?
2. CPU threads writing into / reading out of device-local host-visible memory (mtcopy.c's modes:
   memcpy, non-temporal stores, streaming loads), from and to each kind of host memory.
3. The copy engine and CPU threads at once, 256 MiB split (wall time, checked byte for byte).
4. CUDA's copies (cuMemcpyHtoD/DtoH from cuMemHostAlloc'd memory) into its own memory and into
   memory Vulkan allocated and exported (VK_KHR_external_memory_fd): is the cap the way Vulkan's
   driver maps host memory, or Vulkan's copies?

    gcc -O2 -mavx2 -msse4.1 -shared -fPIC -pthread -o /tmp/mtcopy.so bench/probes/mtcopy.c
    python3 bench/probes/barcopy.py /tmp/mtcopy.so [parts, e.g. 24: which of 2-4 to run; default all]

On the H200 (tenth session): the BAR spans all of VRAM; CPU writes over it reach 32.8 GB/s but
lower the copy engine's rate when run beside it; reads over it 0.3-2 GB/s (part 3's device ->
host rows take minutes).
"""
import ctypes, os, sys, time
import vulkan as vk

ffi, lib = vk.ffi, vk.lib
SIZE = 256 << 20
REPS = 5
mt = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "/tmp/mtcopy.so")
mt.copy_mt.restype = ctypes.c_double
mt.copy_mt.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
libc = ctypes.CDLL(None)
libc.memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
PARTS = sys.argv[2] if len(sys.argv) > 2 else "234"
MODES = {0: "memcpy", 1: "nt-store", 2: "stream-load", 3: "stream+nt"}

app = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
pd = vk.vkEnumeratePhysicalDevices(inst)[0]
props = vk.vkGetPhysicalDeviceProperties(pd)
print("device", props.deviceName, flush=True)
mp = vk.vkGetPhysicalDeviceMemoryProperties(pd)
heaps = [(mp.memoryHeaps[i].size, mp.memoryHeaps[i].flags) for i in range(mp.memoryHeapCount)]
types = [(mp.memoryTypes[i].propertyFlags, mp.memoryTypes[i].heapIndex) for i in range(mp.memoryTypeCount)]
print("heaps", [(f"{s / 2**30:.1f} GiB", hex(f)) for s, f in heaps])
print("types", [(i, hex(f), h) for i, (f, h) in enumerate(types)], flush=True)
exts = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)}
use_ext = [e for e in ("VK_KHR_external_memory_fd", "VK_EXT_external_memory_host") if e in exts]
fam = 0
dev = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(
    queueCreateInfoCount=1,
    pQueueCreateInfos=[vk.VkDeviceQueueCreateInfo(queueFamilyIndex=fam, queueCount=1, pQueuePriorities=[1.0])],
    enabledExtensionCount=len(use_ext), ppEnabledExtensionNames=use_ext), None)
queue = vk.vkGetDeviceQueue(dev, fam, 0)
USAGE = vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
OPAQUE_FD = 0x1


def buffer(size, export=False):
    nxt = vk.VkExternalMemoryBufferCreateInfo(handleTypes=OPAQUE_FD) if export else None
    return vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(pNext=nxt, size=size, usage=USAGE, sharingMode=0), None)


def allocate(want, avoid=0, size=SIZE, export=False):
    """A buffer in the first type with all `want` bits and none of `avoid`: (buffer, memory,
    pointer or None, type index)."""
    b = buffer(size, export)
    bits = vk.vkGetBufferMemoryRequirements(dev, b).memoryTypeBits
    avoid = 0 if os.environ.get("PROBE_ANY") else avoid   # PROBE_ANY=1: a UMA device (lavapipe), to try the probe
    t = next((i for i, (f, h) in enumerate(types) if bits >> i & 1 and f & want == want and not f & avoid), None)
    if t is None:
        return None
    nxt = None
    if export:
        nxt = vk.VkExportMemoryAllocateInfo(handleTypes=OPAQUE_FD,
                                            pNext=vk.VkMemoryDedicatedAllocateInfo(buffer=b))
    mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(pNext=nxt, allocationSize=size, memoryTypeIndex=t), None)
    vk.vkBindBufferMemory(dev, b, mem, 0)
    ptr = None
    if types[t][0] & 2:
        p = ffi.new("void **")
        lib.vkMapMemory(dev, mem, 0, size, 0, p)
        ptr = int(ffi.cast("uintptr_t", p[0]))
    return b, mem, ptr, t


pool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=fam, flags=2), None)
cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=pool, level=0, commandBufferCount=1))[0]
fence = vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)
cbp = ffi.new("VkCommandBuffer[1]", [cb])
submit = ffi.new("VkSubmitInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SUBMIT_INFO, "commandBufferCount": 1,
                                    "pCommandBuffers": cbp})
fencep = ffi.new("VkFence[1]", [fence])


def record(src, dst, off, size):
    vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo(flags=1))
    if size:
        vk.vkCmdCopyBuffer(cb, src, dst, 1, [vk.VkBufferCopy(srcOffset=off, dstOffset=off, size=size)])
    vk.vkEndCommandBuffer(cb)


def ce_then_cpu(src, dst, ce_bytes, cpu_job):
    """Copy [0, ce_bytes) on the GPU while cpu_job() runs on the host; wall seconds."""
    t0 = time.perf_counter()
    lib.vkResetFences(dev, 1, fencep)
    lib.vkQueueSubmit(queue, 1, submit, fence)
    if cpu_job:
        cpu_job()
    lib.vkWaitForFences(dev, 1, fencep, 1, 10**10)
    return time.perf_counter() - t0


def best(fn):
    """The shortest of REPS runs of fn() (seconds); one run when it is slow."""
    t = fn()
    return t if t > 0.3 else min([t] + [fn() for _ in range(REPS - 1)])


def gbps(seconds, size=SIZE):
    return size / seconds / 1e9


def fill(ptr, seed):
    block = os.urandom(1 << 20)
    for i in range(SIZE >> 20):
        ctypes.memmove(ptr + (i << 20), block if i % 2 == seed % 2 else block[::-1], 1 << 20)


def malloc_pages():
    m = ctypes.create_string_buffer(SIZE + 4096)
    return m, (ctypes.addressof(m) + 4095) & ~4095


# 1-2: the BAR, and CPU copies over it.
local_visible = allocate(0x1 | 0x2)
device = allocate(0x1, 0x2)
staging = allocate(0x2 | 0x4, 0x8 | 0x1)      # vkcl's STAGING (CL_MEM_ALLOC_HOST_PTR buffers)
cached = allocate(0x2 | 0x8, 0x1)             # vkcl's READBACK
keep, heap_ptr = malloc_pages()
hosts = {"staging": staging[2] if staging else None, "cached": cached[2] if cached else None, "malloc": heap_ptr}
hosts = {k: v for k, v in hosts.items() if v}
print("device-local host-visible:", f"type {local_visible[3]}" if local_visible else "none", flush=True)
for name, p in hosts.items():
    fill(p, 0)
if local_visible and "2" in PARTS:
    bar = local_visible[2]
    print("\nCPU copies over the BAR, 256 MiB, best of", REPS, "(GB/s)")
    for name, p in hosts.items():
        for threads in (1, 4, 8, 16):
            w = {m: gbps(best(lambda: mt.copy_mt(bar, p, SIZE, threads, m))) for m in (0, 1, 2, 3)}
            r = {m: gbps(best(lambda: mt.copy_mt(p, bar, SIZE, threads, m))) for m in (2, 3)}
            print(f"  {name:8s} {threads:2d} threads  write " + " ".join(f"{MODES[m]} {v:5.1f}" for m, v in w.items())
                  + "  | read " + " ".join(f"{MODES[m]} {v:5.1f}" for m, v in r.items()), flush=True)

# 3: the copy engine and the CPU at once (the CPU's share of the bytes: the end of the range).
if local_visible and staging and "3" in PARTS:
    src, dst = staging, local_visible
    print("\ncopy engine + CPU over the BAR at once, 256 MiB, wall time, best of", REPS)
    for direction in ("h->d", "d->h"):
        a, b = (src, dst) if direction == "h->d" else (dst, src)
        combos = ((4, 1), (8, 1), (16, 1), (8, 0)) if direction == "h->d" else ((8, 2), (16, 2), (16, 3))
        for frac in (0.0, 0.04, 0.08, 0.12, 0.2, 1.0):
            for threads, mode in combos if frac else ((0, 0),):
                cpu_bytes = int(SIZE * frac) & ~4095
                ce_bytes = SIZE - cpu_bytes
                record(a[0], b[0], 0, ce_bytes)
                job = (lambda: mt.copy_mt(b[2] + ce_bytes, a[2] + ce_bytes, cpu_bytes, threads, mode)) if cpu_bytes else None
                t = best(lambda: ce_then_cpu(a[0], b[0], ce_bytes, job))
                fill(a[2], 1)
                fill(b[2], 0)
                ce_then_cpu(a[0], b[0], ce_bytes, job)
                ok = libc.memcmp(a[2], b[2], SIZE) == 0
                print(f"  {direction} CPU share {frac:4.2f} threads {threads:2d} {MODES[mode] if cpu_bytes else '':11s}"
                      f" {gbps(t):5.1f} GB/s {'ok' if ok else 'WRONG'}", flush=True)
                fill(a[2], 0)

# Reference: the copy engine between pure device memory and each host kind.
print("\ncopy engine alone, device-local (not visible) <-> host, 256 MiB, wall, best of", REPS)
for name, alloc in (("staging", staging), ("cached", cached)):
    if alloc and device:
        record(alloc[0], device[0], 0, SIZE)
        hd = gbps(best(lambda: ce_then_cpu(None, None, SIZE, None)))
        record(device[0], alloc[0], 0, SIZE)
        dh = gbps(best(lambda: ce_then_cpu(None, None, SIZE, None)))
        print(f"  {name:8s} h->d {hd:5.1f}  d->h {dh:5.1f}", flush=True)

# 4: CUDA.
if "4" not in PARTS:
    sys.exit(0)
try:
    cu = ctypes.CDLL("libcuda.so.1")
except OSError:
    print("\nno libcuda: CUDA part skipped")
    sys.exit(0)


def ck(r, what):
    if r:
        raise RuntimeError(f"{what} failed: CUresult {r}")


class MemDesc(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("pad", ctypes.c_int), ("fd", ctypes.c_int), ("pad2", ctypes.c_int),
                ("pad3", ctypes.c_uint64), ("size", ctypes.c_uint64), ("flags", ctypes.c_uint),
                ("reserved", ctypes.c_uint * 16)]


class BufDesc(ctypes.Structure):
    _fields_ = [("offset", ctypes.c_uint64), ("size", ctypes.c_uint64), ("flags", ctypes.c_uint),
                ("reserved", ctypes.c_uint * 16)]


ck(cu.cuInit(0), "cuInit")
cdev, ctx = ctypes.c_int(), ctypes.c_void_p()
ck(cu.cuDeviceGet(ctypes.byref(cdev), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), cdev), "cuDevicePrimaryCtxRetain")
ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
hp, dp = ctypes.c_void_p(), ctypes.c_uint64()
ck(cu.cuMemHostAlloc(ctypes.byref(hp), ctypes.c_size_t(SIZE), 0), "cuMemHostAlloc")
ck(cu.cuMemAlloc_v2(ctypes.byref(dp), ctypes.c_size_t(SIZE)), "cuMemAlloc")
fill(hp.value, 0)


def cuda_rates(dptr, host):
    def once(h2d):
        t0 = time.perf_counter()
        if h2d:
            ck(cu.cuMemcpyHtoD_v2(ctypes.c_uint64(dptr), ctypes.c_void_p(host), ctypes.c_size_t(SIZE)), "HtoD")
        else:
            ck(cu.cuMemcpyDtoH_v2(ctypes.c_void_p(host), ctypes.c_uint64(dptr), ctypes.c_size_t(SIZE)), "DtoH")
        ck(cu.cuCtxSynchronize(), "sync")
        return time.perf_counter() - t0
    return gbps(min(once(True) for _ in range(REPS))), gbps(min(once(False) for _ in range(REPS)))


print("\nCUDA copies, 256 MiB, wall, best of", REPS)
print("  cuMemHostAlloc <-> cuMemAlloc:  h->d %5.1f  d->h %5.1f" % cuda_rates(dp.value, hp.value), flush=True)


def cuda_import(alloc):
    """The CUdeviceptr of a Vulkan allocation exported as an opaque fd."""
    get_fd = vk.vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR")
    fd = get_fd(dev, vk.VkMemoryGetFdInfoKHR(memory=alloc[1], handleType=OPAQUE_FD))
    req = vk.vkGetBufferMemoryRequirements(dev, alloc[0])
    ext_mem, ptr = ctypes.c_void_p(), ctypes.c_uint64()
    ck(cu.cuImportExternalMemory(ctypes.byref(ext_mem), ctypes.byref(MemDesc(type=1, fd=fd, size=req.size, flags=1))),
       "cuImportExternalMemory")
    ck(cu.cuExternalMemoryGetMappedBuffer(ctypes.byref(ptr), ext_mem, ctypes.byref(BufDesc(offset=0, size=SIZE))),
       "cuExternalMemoryGetMappedBuffer")
    return ptr.value


def cuda_dtod(dst, src):
    def once():
        t0 = time.perf_counter()
        ck(cu.cuMemcpyDtoD_v2(ctypes.c_uint64(dst), ctypes.c_uint64(src), ctypes.c_size_t(SIZE)), "DtoD")
        ck(cu.cuCtxSynchronize(), "sync")
        return time.perf_counter() - t0
    return gbps(best(once))


if "VK_KHR_external_memory_fd" in use_ext:
    try:
        exported = allocate(0x1, 0x2, export=True)
        vdp = cuda_import(exported)
        print("  cuMemHostAlloc <-> Vulkan's device memory: h->d %5.1f  d->h %5.1f" % cuda_rates(vdp, hp.value))
        # What CUDA wrote is what Vulkan reads.
        fill(hp.value, 1)
        ck(cu.cuMemcpyHtoD_v2(ctypes.c_uint64(vdp), ctypes.c_void_p(hp.value), ctypes.c_size_t(SIZE)), "HtoD")
        ck(cu.cuCtxSynchronize(), "sync")
        record(exported[0], cached[0], 0, SIZE)
        ce_then_cpu(None, None, SIZE, None)
        print("  Vulkan reads what CUDA wrote:", "ok" if libc.memcmp(cached[2], hp.value, SIZE) == 0 else "WRONG")
    except Exception as e:
        print("  Vulkan's device memory in CUDA failed:", e)
    try:
        host_exported = allocate(0x2 | 0x4, 0x8 | 0x1, export=True)
        hdp = cuda_import(host_exported)
        print("  CUDA's copy engine, Vulkan's host memory (exported) <-> cuMemAlloc: h->d %5.1f  d->h %5.1f"
              % (cuda_dtod(dp.value, hdp), cuda_dtod(hdp, dp.value)), flush=True)
    except Exception as e:
        print("  Vulkan's host memory in CUDA failed:", e)
# Vulkan's copy engine from memory CUDA allocated (imported as a host allocation).
if "VK_EXT_external_memory_host" in use_ext:
    try:
        HA = vk.VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
        getp = vk.vkGetDeviceProcAddr(dev, "vkGetMemoryHostPointerPropertiesEXT")
        hpp = getp(dev, HA, ffi.cast("void *", hp.value))
        b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(
            pNext=vk.VkExternalMemoryBufferCreateInfo(handleTypes=HA), size=SIZE, usage=USAGE, sharingMode=0), None)
        tb = vk.vkGetBufferMemoryRequirements(dev, b).memoryTypeBits & hpp.memoryTypeBits
        t = next(i for i in range(len(types)) if tb >> i & 1)
        mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(
            pNext=vk.VkImportMemoryHostPointerInfoEXT(handleType=HA, pHostPointer=ffi.cast("void *", hp.value)),
            allocationSize=SIZE, memoryTypeIndex=t), None)
        vk.vkBindBufferMemory(dev, b, mem, 0)
        record(b, device[0], 0, SIZE)
        hd = gbps(best(lambda: ce_then_cpu(None, None, SIZE, None)))
        record(device[0], b, 0, SIZE)
        dh = gbps(best(lambda: ce_then_cpu(None, None, SIZE, None)))
        print(f"  Vulkan's copy engine, cuMemHostAlloc'd memory (imported, type {t}) <-> device: h->d {hd:5.1f}  d->h {dh:5.1f}")
    except Exception as e:
        print("  cuMemHostAlloc'd memory in Vulkan failed:", type(e).__name__, e)

# 5: which host memory CUDA can register (cuMemHostRegister) and copy at its own rate, and how a
# CUDA copy's latency compares at small sizes.
if "5" in PARTS:
    cu.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
    exported = allocate(0x1, 0x2, export=True)
    vdp = cuda_import(exported)
    stream = ctypes.c_void_p()
    ck(cu.cuStreamCreate(ctypes.byref(stream), 1), "cuStreamCreate")

    def async_rate(dptr, host, size, h2d):
        def once():
            t0 = time.perf_counter()
            if h2d:
                ck(cu.cuMemcpyHtoDAsync_v2(ctypes.c_uint64(dptr), ctypes.c_void_p(host), ctypes.c_size_t(size), stream), "HtoDAsync")
            else:
                ck(cu.cuMemcpyDtoHAsync_v2(ctypes.c_void_p(host), ctypes.c_uint64(dptr), ctypes.c_size_t(size), stream), "DtoHAsync")
            ck(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")
            return time.perf_counter() - t0
        return sorted(once() for _ in range(15))[7]

    candidates = {"vulkan-mapped staging (type %d)" % staging[3]: staging[2],
                  "vulkan-mapped cached (type %d)" % cached[3]: cached[2]}
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    anon = libc.mmap(None, SIZE, 3, 0x22, -1, 0)
    ctypes.memset(anon, 1, SIZE)
    if "VK_EXT_external_memory_host" in use_ext:
        HA = vk.VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
        getp = vk.vkGetDeviceProcAddr(dev, "vkGetMemoryHostPointerPropertiesEXT")
        bits = getp(dev, HA, ffi.cast("void *", anon)).memoryTypeBits
        b = vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(
            pNext=vk.VkExternalMemoryBufferCreateInfo(handleTypes=HA), size=SIZE, usage=USAGE, sharingMode=0), None)
        t = max(i for i in range(len(types)) if (bits & vk.vkGetBufferMemoryRequirements(dev, b).memoryTypeBits) >> i & 1)
        mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(
            pNext=vk.VkImportMemoryHostPointerInfoEXT(handleType=HA, pHostPointer=ffi.cast("void *", anon)),
            allocationSize=SIZE, memoryTypeIndex=t), None)
        vk.vkBindBufferMemory(dev, b, mem, 0)
        candidates[f"anonymous pages imported into Vulkan (type {t})"] = anon
    for name, host in candidates.items():
        t0 = time.perf_counter()
        r = cu.cuMemHostRegister_v2(ctypes.c_void_p(host), ctypes.c_size_t(SIZE), 0)
        reg_ms = (time.perf_counter() - t0) * 1e3
        if r:
            print(f"  cuMemHostRegister of {name}: CUresult {r}", flush=True)
            continue
        hd = SIZE / async_rate(vdp, host, SIZE, True) / 1e9
        dh = SIZE / async_rate(vdp, host, SIZE, False) / 1e9
        print(f"  {name}: registered in {reg_ms:.1f} ms; CUDA async copy h->d {hd:5.1f} d->h {dh:5.1f} GB/s", flush=True)
        if host == anon:
            record(b, device[0], 0, SIZE)
            vhd = gbps(best(lambda: ce_then_cpu(None, None, SIZE, None)))
            print(f"    the same pages, Vulkan's copy engine h->d {vhd:5.1f} GB/s")
            print("  latency, median of 15 (us): size  CUDA h->d  d->h  | Vulkan h->d  d->h (submit + fence wait)")
            for size in (64 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20, 64 << 20):
                ch, cd = (async_rate(vdp, host, size, d) * 1e6 for d in (True, False))
                vt = []
                for src_, dst_ in ((b, device[0]), (device[0], b)):
                    record(src_, dst_, 0, size)
                    vt.append(sorted(ce_then_cpu(None, None, size, None) for _ in range(15))[7] * 1e6)
                print(f"    {size >> 10:6d} KiB  {ch:7.1f} {cd:7.1f}  | {vt[0]:7.1f} {vt[1]:7.1f}", flush=True)

# 6: one large copy split over several streams (copy engines): past one stream's rate?
if "6" in PARTS:
    cu.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
    exported = allocate(0x1, 0x2, export=True)
    vdp = cuda_import(exported)
    ck(cu.cuMemHostRegister_v2(ctypes.c_void_p(staging[2]), ctypes.c_size_t(SIZE), 0), "cuMemHostRegister")
    streams = []
    for _ in range(4):
        s = ctypes.c_void_p()
        ck(cu.cuStreamCreate(ctypes.byref(s), 1), "cuStreamCreate")
        streams.append(s)

    def split_rate(h2d, k):
        part = SIZE // k
        def once():
            t0 = time.perf_counter()
            for i in range(k):
                d, h = ctypes.c_uint64(vdp + i * part), ctypes.c_void_p(staging[2] + i * part)
                if h2d:
                    ck(cu.cuMemcpyHtoDAsync_v2(d, h, ctypes.c_size_t(part), streams[i]), "HtoDAsync")
                else:
                    ck(cu.cuMemcpyDtoHAsync_v2(h, d, ctypes.c_size_t(part), streams[i]), "DtoHAsync")
            for i in range(k):
                ck(cu.cuStreamSynchronize(streams[i]), "sync")
            return time.perf_counter() - t0
        times = sorted(once() for _ in range(21))
        return SIZE / times[10] / 1e9, SIZE / times[0] / 1e9

    print("\none 256 MiB copy over k streams, registered staging <-> Vulkan's device memory (GB/s median / best of 21)")
    for k in (1, 2, 4, 1, 2):
        hm, hb = split_rate(True, k)
        dm, db = split_rate(False, k)
        print(f"  k={k}: h->d {hm:5.1f} / {hb:5.1f}   d->h {dm:5.1f} / {db:5.1f}", flush=True)
