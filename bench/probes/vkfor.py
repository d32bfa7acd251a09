"""Probe: host<->device copy rate of host memory imported as VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_
MAPPED_FOREIGN_MEMORY_BIT_EXT (which a driver may map without snooping) against HOST_ALLOCATION
imports and the driver's own host-visible types. 256 MiB, vkCmdCopyBuffer, GPU timestamps."""
import ctypes, sys, time
import vulkan as vk
ffi, lib = vk.ffi, vk.lib
SIZE = 256 << 20
app = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
inst = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
pd = vk.vkEnumeratePhysicalDevices(inst)[0]
props = vk.vkGetPhysicalDeviceProperties(pd)
period = props.limits.timestampPeriod
print("device", props.deviceName)
mp = vk.vkGetPhysicalDeviceMemoryProperties(pd)
types = [(mp.memoryTypes[i].propertyFlags, mp.memoryTypes[i].heapIndex) for i in range(mp.memoryTypeCount)]
print("types", [(hex(f), h) for f, h in types])
fams = [(f.queueFlags, f.queueCount) for f in vk.vkGetPhysicalDeviceQueueFamilyProperties(pd)]
exts = {e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(pd, None)}
use_ext = [e for e in ("VK_EXT_external_memory_host",) if e in exts]
print("ext", use_ext)
qinfos = [vk.VkDeviceQueueCreateInfo(queueFamilyIndex=i, queueCount=1, pQueuePriorities=[1.0]) for i in range(len(fams))]
dev = vk.vkCreateDevice(pd, vk.VkDeviceCreateInfo(queueCreateInfoCount=len(qinfos), pQueueCreateInfos=qinfos,
                        enabledExtensionCount=len(use_ext), ppEnabledExtensionNames=use_ext), None)
USAGE = vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
HA = vk.VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT
HF = vk.VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_MAPPED_FOREIGN_MEMORY_BIT_EXT

def buffer(size, handle=0):
    nxt = vk.VkExternalMemoryBufferCreateInfo(handleTypes=handle) if handle else None
    return vk.vkCreateBuffer(dev, vk.VkBufferCreateInfo(pNext=nxt, size=size, usage=USAGE, sharingMode=0), None)

def bind(buf, size, tidx, ptr=None, handle=0):
    nxt = vk.VkImportMemoryHostPointerInfoEXT(handleType=handle, pHostPointer=ffi.cast("void*", ptr)) if ptr else None
    mem = vk.vkAllocateMemory(dev, vk.VkMemoryAllocateInfo(pNext=nxt, allocationSize=size, memoryTypeIndex=tidx), None)
    vk.vkBindBufferMemory(dev, buf, mem, 0)

bits = vk.vkGetBufferMemoryRequirements(dev, buffer(SIZE)).memoryTypeBits
dbuf = buffer(SIZE)
bind(dbuf, SIZE, next((i for i, (f, h) in enumerate(types) if f & 1 and not f & 2 and bits >> i & 1), 0))
qp = vk.vkCreateQueryPool(dev, vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2), None)

def measure(fam, src, dst, reps=5):
    pool = vk.vkCreateCommandPool(dev, vk.VkCommandPoolCreateInfo(queueFamilyIndex=fam), None)
    cb = vk.vkAllocateCommandBuffers(dev, vk.VkCommandBufferAllocateInfo(commandPool=pool, level=0, commandBufferCount=1))[0]
    vk.vkBeginCommandBuffer(cb, vk.VkCommandBufferBeginInfo())
    vk.vkCmdResetQueryPool(cb, qp, 0, 2)
    vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0)
    vk.vkCmdCopyBuffer(cb, src, dst, 1, [vk.VkBufferCopy(srcOffset=0, dstOffset=0, size=SIZE)])
    vk.vkCmdWriteTimestamp(cb, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1)
    vk.vkEndCommandBuffer(cb)
    q = vk.vkGetDeviceQueue(dev, fam, 0)
    fence = vk.vkCreateFence(dev, vk.VkFenceCreateInfo(), None)
    best = 0
    for r in range(reps):
        vk.vkResetFences(dev, 1, [fence])
        vk.vkQueueSubmit(q, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[cb])], fence)
        vk.vkWaitForFences(dev, 1, [fence], True, 10**10)
        out = ffi.new("uint64_t[2]")
        lib.vkGetQueryPoolResults(dev, qp, 0, 2, 16, out, 8, vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT)
        best = max(best, SIZE / ((out[1] - out[0]) * period * 1e-9) / 1e9)
    vk.vkDestroyFence(dev, fence, None); vk.vkDestroyCommandPool(dev, pool, None)
    return best

hosts = {}
for i, (f, h) in enumerate(types):
    if f & 2 and (not f & 1 or len(types) == 1) and bits >> i & 1:
        b = buffer(SIZE); bind(b, SIZE, i); hosts[f"type{i}({hex(f)})"] = b
libc = ctypes.CDLL(None)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
getp = vk.vkGetDeviceProcAddr(dev, "vkGetMemoryHostPointerPropertiesEXT")
for handle, hname in ((HA, "alloc"), (HF, "foreign")):
    for thp in (0, 1):
        p = libc.mmap(None, SIZE + (2 << 20), 3, 0x22, -1, 0)
        p = (p + (2 << 20) - 1) & ~((2 << 20) - 1)
        if thp: libc.madvise(ctypes.c_void_p(p), ctypes.c_size_t(SIZE), 14)
        ctypes.memset(p, 1, SIZE)
        try:
            hp = getp(dev, handle, ffi.cast("void*", p))
        except Exception as e:
            print(hname, "thp" if thp else "", "properties failed:", e); continue
        b = buffer(SIZE, handle)
        tb = vk.vkGetBufferMemoryRequirements(dev, b).memoryTypeBits & hp.memoryTypeBits
        print(hname, "thp" if thp else "", "memoryTypeBits", hex(hp.memoryTypeBits), "usable", hex(tb), flush=True)
        if not tb: continue
        t = next(i for i in range(len(types)) if tb >> i & 1)
        try:
            bind(b, SIZE, t, p, handle)
        except Exception as e:
            print(hname, "import failed:", e); continue
        hosts[f"import-{hname}{'-thp' if thp else ''}(type{t})"] = b
for name, hb in hosts.items():
    row = []
    for fam, (flags, count) in enumerate(fams):
        if flags & 7:
            row.append(f"fam{fam}: h->d {measure(fam, hb, dbuf):5.1f} d->h {measure(fam, dbuf, hb):5.1f}")
    print(f"{name:28s} " + " | ".join(row), flush=True)
