"""Shader modules, pipeline layouts, specialised compute pipelines, the on-disk pipeline
cache, and descriptor sets for kernels whose arguments do not fit in push constants."""
from __future__ import annotations

import hashlib
import threading
import weakref

from vkcl import cache_files, log
from vkcl.vulkan.bindings import vk
from vkcl.vulkan.check import check
from vkcl.vulkan.device import per_device
from vkcl.vulkan.lifetime import created, destroy_all, destroyed_with

ffi = vk.ffi
lib = vk.lib
_log = log.get("vk")

DISPATCH_BASE = 0x10  # VK_PIPELINE_CREATE_DISPATCH_BASE_BIT: vkCmdDispatchBase splits large grids
DESCRIPTOR_TYPES = {"storage_buffer": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    "uniform_buffer": vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER}
COMPUTE = vk.VK_SHADER_STAGE_COMPUTE_BIT


class ShaderModule:
    """A VkShaderModule (`handle`), destroyed with this object."""

    def __init__(self, device, spirv: bytes):
        self.handle = _create_shader_module(device, spirv)
        destroyed_with(self, "vkDestroyShaderModule", device.handle, self.handle)


def _create_shader_module(device, spirv: bytes):
    words = ffi.new("uint32_t[]", len(spirv) // 4)
    ffi.memmove(words, spirv, len(spirv))
    info = ffi.new("VkShaderModuleCreateInfo *", {"sType": vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                                  "codeSize": len(spirv), "pCode": words})
    out = ffi.new("VkShaderModule *")
    check("vkCreateShaderModule", lib.vkCreateShaderModule(device.handle, info, ffi.NULL, out))
    return out[0]


class KernelLayout:
    """Descriptor-set layouts and the pipeline layout of one kernel."""

    def __init__(self, device, bindings: list[tuple[int, int, str]], push_constant_size: int):
        """bindings: (set, binding, descriptor type name)."""
        self.device = device.handle
        self.set_layouts = []
        self.sets = sorted({s for s, _, _ in bindings})
        for s in range(max(self.sets) + 1 if self.sets else 0):
            mine = [(b, t) for ss, b, t in bindings if ss == s]
            arr = ffi.new("VkDescriptorSetLayoutBinding[]", max(1, len(mine)))
            for i, (b, t) in enumerate(mine):
                arr[i].binding, arr[i].descriptorType = b, DESCRIPTOR_TYPES[t]
                arr[i].descriptorCount, arr[i].stageFlags = 1, COMPUTE
            info = ffi.new("VkDescriptorSetLayoutCreateInfo *", {
                "sType": vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                "bindingCount": len(mine), "pBindings": arr})
            out = ffi.new("VkDescriptorSetLayout *")
            check("vkCreateDescriptorSetLayout", lib.vkCreateDescriptorSetLayout(self.device, info, ffi.NULL, out))
            self.set_layouts.append(out[0])
        self.push_constant_size = (push_constant_size + 3) & ~3
        pc = ffi.new("VkPushConstantRange *", {"stageFlags": COMPUTE, "offset": 0, "size": self.push_constant_size})
        layouts = ffi.new("VkDescriptorSetLayout[]", self.set_layouts) if self.set_layouts else ffi.NULL
        info = ffi.new("VkPipelineLayoutCreateInfo *", {
            "sType": vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
            "setLayoutCount": len(self.set_layouts), "pSetLayouts": layouts,
            "pushConstantRangeCount": 1 if self.push_constant_size else 0,
            "pPushConstantRanges": pc if self.push_constant_size else ffi.NULL})
        out = ffi.new("VkPipelineLayout *")
        check("vkCreatePipelineLayout", lib.vkCreatePipelineLayout(self.device, info, ffi.NULL, out))
        self.handle = out[0]
        destroyed_with(self, "vkDestroyPipelineLayout", self.device, self.handle)
        destroyed_with(self, "vkDestroyDescriptorSetLayout", self.device, *self.set_layouts)


class PipelineCache:
    """A VkPipelineCache per device, loaded from and saved to the program cache directory as a
    cache file (vkcl.cache_files) keyed by the device: another device's file, a damaged one,
    or one that is not a regular file of bounded size is not given to the driver."""

    def __init__(self, device):
        self.device = device.handle
        pd = device.physical
        self.path = self.key = None
        root = cache_files.cache_dir()
        if root is not None and cache_files.usable_root(root):
            self.key = hashlib.sha256(pd.device_uuid + pd.driver_uuid + pd.name.encode()).hexdigest()
            self.path = root / f"pipelines-{self.key[:16]}.bin"
        data = b""
        if self.path is not None:
            data = cache_files.read(self.path, self.key) or b""
        blob = ffi.from_buffer(data) if data else ffi.NULL
        info = ffi.new("VkPipelineCacheCreateInfo *", {"sType": vk.VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                                       "initialDataSize": len(data), "pInitialData": blob})
        out = ffi.new("VkPipelineCache *")
        if lib.vkCreatePipelineCache(self.device, info, ffi.NULL, out) != 0:  # a stale file: start empty
            info.initialDataSize, info.pInitialData = 0, ffi.NULL
            check("vkCreatePipelineCache", lib.vkCreatePipelineCache(self.device, info, ffi.NULL, out))
        self.handle = out[0]
        self.lock = threading.Lock()

    def save(self) -> None:
        if self.path is None:
            return
        with self.lock:
            size = ffi.new("size_t *")
            if lib.vkGetPipelineCacheData(self.device, self.handle, size, ffi.NULL) != 0 or not size[0]:
                return
            buf = ffi.new("char[]", size[0])
            if lib.vkGetPipelineCacheData(self.device, self.handle, size, buf) != 0:
                return
            cache_files.write(self.path, self.key, ffi.buffer(buf, size[0])[:])


def pipeline_cache(device) -> PipelineCache:
    return per_device("pipeline_cache", device, PipelineCache)


def compute_pipeline(device, module, layout: KernelLayout, entry: str, spec: dict[int, int]):
    """A compute pipeline for `entry`, specialised with {spec id: uint32 value}: a VkPipeline
    the caller owns (destroy_pipelines)."""
    cache = pipeline_cache(device)
    n = len(spec)
    entries = ffi.new("VkSpecializationMapEntry[]", max(1, n))
    data = ffi.new("uint32_t[]", max(1, n))
    for i, (sid, value) in enumerate(sorted(spec.items())):
        entries[i].constantID, entries[i].offset, entries[i].size = sid, 4 * i, 4
        data[i] = value & 0xFFFFFFFF
    spec_info = ffi.new("VkSpecializationInfo *", {"mapEntryCount": n, "pMapEntries": entries,
                                                   "dataSize": 4 * n, "pData": data})
    name = ffi.new("char[]", entry.encode())
    stage = {"sType": vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, "stage": COMPUTE,
             "module": module, "pName": name, "pSpecializationInfo": spec_info if n else ffi.NULL}
    info = ffi.new("VkComputePipelineCreateInfo *", {
        "sType": vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, "flags": DISPATCH_BASE,
        "stage": stage, "layout": layout.handle, "basePipelineIndex": -1})
    out = ffi.new("VkPipeline *")
    check("vkCreateComputePipelines", lib.vkCreateComputePipelines(device.handle, cache.handle, 1, info, ffi.NULL, out))
    created("vkDestroyPipeline")
    cache.save()
    return out[0]


def destroy_pipelines(owner, device, pipelines: dict) -> None:
    """Destroy every VkPipeline in `pipelines` (values; the dict may still grow) once `owner`
    is garbage."""
    fin = weakref.finalize(owner, destroy_all, "vkDestroyPipeline", device.handle, pipelines.values())
    fin.atexit = False


class DescriptorSets:
    """Descriptor sets for dispatches, from pools that grow; each set is freed when its command completes."""

    def __init__(self, device):
        self.device = device.handle
        self.lock = threading.Lock()
        self.pools: list = []

    def _new_pool(self):
        sizes = ffi.new("VkDescriptorPoolSize[2]")
        sizes[0].type, sizes[0].descriptorCount = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4096
        sizes[1].type, sizes[1].descriptorCount = vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 4096
        info = ffi.new("VkDescriptorPoolCreateInfo *", {
            "sType": vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
            "flags": vk.VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT,
            "maxSets": 2048, "poolSizeCount": 2, "pPoolSizes": sizes})
        out = ffi.new("VkDescriptorPool *")
        check("vkCreateDescriptorPool", lib.vkCreateDescriptorPool(self.device, info, ffi.NULL, out))
        self.pools.append(out[0])
        return out[0]

    def allocate(self, set_layout):
        """(pool, set) with the layout; buffers are written with `write`."""
        layouts = ffi.new("VkDescriptorSetLayout[1]", [set_layout])
        out = ffi.new("VkDescriptorSet *")
        with self.lock:
            for pool in reversed(self.pools or [self._new_pool()]):
                info = ffi.new("VkDescriptorSetAllocateInfo *", {
                    "sType": vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, "descriptorPool": pool,
                    "descriptorSetCount": 1, "pSetLayouts": layouts})
                if lib.vkAllocateDescriptorSets(self.device, info, out) == 0:
                    return pool, out[0]
            pool = self._new_pool()
            info.descriptorPool = pool
            check("vkAllocateDescriptorSets", lib.vkAllocateDescriptorSets(self.device, info, out))
            return pool, out[0]

    def write(self, dset, writes: list[tuple[int, str, object, int, int]]) -> None:
        """writes: (binding, descriptor type name, VkBuffer, offset, range)."""
        n = len(writes)
        infos = ffi.new("VkDescriptorBufferInfo[]", n)
        arr = ffi.new("VkWriteDescriptorSet[]", n)
        for i, (binding, kind, buf, off, rng) in enumerate(writes):
            infos[i].buffer, infos[i].offset, infos[i].range = buf, off, rng
            w = arr[i]
            w.sType = vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
            w.dstSet, w.dstBinding, w.descriptorCount = dset, binding, 1
            w.descriptorType = DESCRIPTOR_TYPES[kind]
            w.pBufferInfo = infos + i
        lib.vkUpdateDescriptorSets(self.device, n, arr, 0, ffi.NULL)

    def free(self, pool, dset) -> None:
        sets = ffi.new("VkDescriptorSet[1]", [dset])
        with self.lock:
            lib.vkFreeDescriptorSets(self.device, pool, 1, sets)


def descriptor_sets(device) -> DescriptorSets:
    return per_device("descriptor_sets", device, DescriptorSets)
