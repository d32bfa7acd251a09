"""The compiler's output on a real Vulkan driver (the first device; lavapipe in CI): every corpus
kernel becomes a compute pipeline with the layout its reflection implies, and the built-in
shaders (shaders/fill.cl, shaders/copy_rect.cl) are run and their results checked.

Uses the `vulkan` package directly. Constants the package lacks are spelled out below."""
from __future__ import annotations

import struct

import pytest

from vkcl import compiler

vk = pytest.importorskip("vulkan")
ffi = vk.ffi

BUFFER_USAGE_SHADER_DEVICE_ADDRESS = 0x20000
MEMORY_ALLOCATE_DEVICE_ADDRESS = 0x2
DESCRIPTOR_TYPES = {
    "storage_buffer": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, "uniform_buffer": vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
    "sampled_image": vk.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, "storage_image": vk.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
    "sampler": vk.VK_DESCRIPTOR_TYPE_SAMPLER, "storage_texel_buffer": vk.VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
    "uniform_texel_buffer": vk.VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
}


class Device:
    """One logical device with the features clspv's output uses, and helpers to run kernels."""

    def __init__(self):
        app = vk.VkApplicationInfo(sType=vk.VK_STRUCTURE_TYPE_APPLICATION_INFO, pApplicationName="vkcl-tests",
                                   apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
        self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pApplicationInfo=app), None)
        self.physical = vk.vkEnumeratePhysicalDevices(self.instance)[0]
        props = vk.vkGetPhysicalDeviceProperties(self.physical)
        self.api = props.apiVersion
        self.max_push_constants = props.limits.maxPushConstantsSize
        self.queue_family = next(i for i, q in enumerate(vk.vkGetPhysicalDeviceQueueFamilyProperties(self.physical))
                                 if q.queueFlags & vk.VK_QUEUE_COMPUTE_BIT)
        f12 = vk.VkPhysicalDeviceVulkan12Features(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, bufferDeviceAddress=True, shaderInt8=True,
            storageBuffer8BitAccess=True, uniformAndStorageBuffer8BitAccess=True, storagePushConstant8=True,
            shaderFloat16=True, uniformBufferStandardLayout=True)
        f11 = vk.VkPhysicalDeviceVulkan11Features(
            sType=vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, pNext=f12, variablePointers=True,
            variablePointersStorageBuffer=True, storageBuffer16BitAccess=True,
            uniformAndStorageBuffer16BitAccess=True, storagePushConstant16=True)
        queue = vk.VkDeviceQueueCreateInfo(sType=vk.VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                           queueFamilyIndex=self.queue_family, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(self.physical, vk.VkDeviceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, pNext=f11, queueCreateInfoCount=1,
            pQueueCreateInfos=[queue], pEnabledFeatures=vk.VkPhysicalDeviceFeatures(
                shaderInt64=True, shaderFloat64=True, shaderInt16=True)), None)
        self.queue = vk.vkGetDeviceQueue(self.device, self.queue_family, 0)
        self.pool = vk.vkCreateCommandPool(self.device, vk.VkCommandPoolCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, queueFamilyIndex=self.queue_family), None)

    def close(self):
        vk.vkDestroyCommandPool(self.device, self.pool, None)
        vk.vkDestroyDevice(self.device, None)
        vk.vkDestroyInstance(self.instance, None)

    # -- pipelines ------------------------------------------------------------------------------
    def pipeline(self, spirv: bytes, kernel, spec: dict[int, int] | None = None):
        """(pipeline, layout, objects to destroy) for `kernel`, laid out from its reflection."""
        module = vk.vkCreateShaderModule(self.device, vk.VkShaderModuleCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, codeSize=len(spirv), pCode=spirv), None)
        sets = []
        for s in range(max((b.descriptor_set for b in kernel.bindings), default=-1) + 1):
            bindings = [vk.VkDescriptorSetLayoutBinding(binding=b.binding,
                                                        descriptorType=DESCRIPTOR_TYPES[b.descriptor_type],
                                                        descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT)
                        for b in kernel.bindings if b.descriptor_set == s]
            sets.append(vk.vkCreateDescriptorSetLayout(self.device, vk.VkDescriptorSetLayoutCreateInfo(
                sType=vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, bindingCount=len(bindings),
                pBindings=bindings or None), None))
        ranges = [vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0,
                                         size=kernel.push_constant_size)] if kernel.push_constant_size else []
        layout = vk.vkCreatePipelineLayout(self.device, vk.VkPipelineLayoutCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, setLayoutCount=len(sets), pSetLayouts=sets or None,
            pushConstantRangeCount=len(ranges), pPushConstantRanges=ranges or None), None)
        spec = spec or {}
        spec_info = None
        if spec:
            data = ffi.new("uint32_t[]", list(spec.values()))
            entries = [vk.VkSpecializationMapEntry(constantID=cid, offset=4 * i, size=4) for i, cid in enumerate(spec)]
            spec_info = vk.VkSpecializationInfo(mapEntryCount=len(entries), pMapEntries=entries,
                                                dataSize=4 * len(spec), pData=data)
        stage = vk.VkPipelineShaderStageCreateInfo(sType=vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                   stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module,
                                                   pName=kernel.name, pSpecializationInfo=spec_info)
        pipeline = vk.vkCreateComputePipelines(self.device, None, 1, [vk.VkComputePipelineCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, stage=stage, layout=layout)], None)[0]
        vk.vkDestroyShaderModule(self.device, module, None)
        return pipeline, layout, sets

    def destroy(self, pipeline, layout, sets):
        vk.vkDestroyPipeline(self.device, pipeline, None)
        vk.vkDestroyPipelineLayout(self.device, layout, None)
        for s in sets:
            vk.vkDestroyDescriptorSetLayout(self.device, s, None)

    # -- buffers with device addresses ------------------------------------------------------------
    def buffer(self, size: int):
        buf = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, size=size,
            usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | BUFFER_USAGE_SHADER_DEVICE_ADDRESS,
            sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE), None)
        req = vk.vkGetBufferMemoryRequirements(self.device, buf)
        mem_props = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        wanted = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        index = next(i for i in range(mem_props.memoryTypeCount)
                     if req.memoryTypeBits & (1 << i) and mem_props.memoryTypes[i].propertyFlags & wanted == wanted)
        flags = vk.VkMemoryAllocateFlagsInfo(sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                             flags=MEMORY_ALLOCATE_DEVICE_ADDRESS)
        mem = vk.vkAllocateMemory(self.device, vk.VkMemoryAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, pNext=flags, allocationSize=req.size,
            memoryTypeIndex=index), None)
        vk.vkBindBufferMemory(self.device, buf, mem, 0)
        info = ffi.new("VkBufferDeviceAddressInfo *", {"sType": vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
                                                       "buffer": buf})
        address = vk.lib.vkGetBufferDeviceAddress(self.device, info)
        view = vk.vkMapMemory(self.device, mem, 0, size, 0)
        return buf, mem, address, view

    def free(self, buf, mem, *_):
        vk.vkUnmapMemory(self.device, mem)
        vk.vkDestroyBuffer(self.device, buf, None)
        vk.vkFreeMemory(self.device, mem, None)

    def run(self, pipeline, layout, push: bytes, groups: tuple[int, int, int]):
        cmd = vk.vkAllocateCommandBuffers(self.device, vk.VkCommandBufferAllocateInfo(
            sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, commandPool=self.pool,
            level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1))[0]
        vk.vkBeginCommandBuffer(cmd, vk.VkCommandBufferBeginInfo(sType=vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO))
        vk.vkCmdBindPipeline(cmd, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
        data = ffi.new("char[]", push)
        vk.vkCmdPushConstants(cmd, layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, len(push), data)
        vk.vkCmdDispatch(cmd, *groups)
        vk.vkEndCommandBuffer(cmd)
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(sType=vk.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(sType=vk.VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                                         commandBufferCount=1, pCommandBuffers=[cmd])], fence)
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, 10 ** 10)
        vk.vkDestroyFence(self.device, fence, None)
        vk.vkFreeCommandBuffers(self.device, self.pool, 1, [cmd])


@pytest.fixture(scope="module")
def device():
    try:
        dev = Device()
    except Exception as e:  # no Vulkan driver here
        pytest.skip(f"no usable Vulkan device: {e}")
    yield dev
    dev.close()


def _spec_for(result, kernel) -> dict[int, int]:
    spec = {}
    for name in ("workgroup_size_x", "workgroup_size_y", "workgroup_size_z"):
        if name in result.reflection.spec_constants:
            spec[result.reflection.spec_constants[name]] = 8 if name.endswith("x") else 1
    for arg in kernel.args:
        if arg.kind == "local":
            spec[arg.spec_id] = 16
    return spec


def test_every_corpus_kernel_makes_a_pipeline(device, corpus):
    made = 0
    for (name, variant), result in sorted(corpus.items()):
        assert result.ok, (name, variant, result.log)
        stripped = compiler.strip_nonsemantic(result.spirv)
        for kernel in result.reflection.kernels.values():
            assert kernel.push_constant_size <= device.max_push_constants
            for spirv, spec in ((stripped, None), (stripped, _spec_for(result, kernel))):
                device.destroy(*device.pipeline(spirv, kernel, spec))
                made += 1
    assert made >= 2 * len(corpus)


def test_pipeline_from_unstripped_spirv_on_vulkan_13(device, corpus):
    """NonSemantic instructions are core in Vulkan 1.3: the module can keep its reflection."""
    if device.api < vk.VK_MAKE_VERSION(1, 3, 0):
        pytest.skip("device is older than Vulkan 1.3")
    result = corpus[("vector_add", "physical")]
    device.destroy(*device.pipeline(result.spirv, result.reflection.kernels["vector_add"]))


@pytest.fixture(scope="module")
def shaders():
    caps = compiler.DeviceCaps()
    out = {name: compiler.builtin_shader(name, caps) for name in ("fill", "copy_rect")}
    for name, result in out.items():
        assert result.ok, (name, result.log)
    return out


def _push(kernel, values: dict[str, bytes]) -> bytes:
    data = bytearray(kernel.push_constant_size)
    for arg in kernel.args:
        raw = values[arg.name]
        assert len(raw) == arg.size, arg
        data[arg.offset:arg.offset + arg.size] = raw
    return bytes(data)


def _run_shader(device, result, kernel_name, values, groups, local=(64, 1, 1)):
    kernel = result.reflection.kernels[kernel_name]
    spec = {result.reflection.spec_constants[f"workgroup_size_{d}"]: n for d, n in zip("xyz", local)}
    pipeline, layout, sets = device.pipeline(compiler.strip_nonsemantic(result.spirv), kernel, spec)
    try:
        device.run(pipeline, layout, _push(kernel, values), groups)
    finally:
        device.destroy(pipeline, layout, sets)


Q = struct.Struct("<Q")


FILL_CASES = [(ps, offset, size) for ps in (1, 2, 4, 8, 16)
              for offset, size in ((0, 256), (16, 64), (48, 800), (8, 8), (2, 38), (4, 4), (0, 4096), (6, 4000))
              if offset % ps == 0 and size % ps == 0]


@pytest.mark.parametrize("pattern_size,offset,size", FILL_CASES)
def test_fill_16(device, shaders, pattern_size, offset, size):
    pattern = bytes(range(0xA0, 0xA0 + pattern_size))
    unit = pattern * (16 // pattern_size)
    total = offset + size + 40
    buf = device.buffer(total)
    try:
        buf[3][:] = b"\x11" * total
        values = {"dst": Q.pack(buf[2]), "offset": Q.pack(offset), "size": Q.pack(size), "pattern": unit}
        _run_shader(device, shaders["fill"], "fill_16", values, (2, 1, 1))  # 128 items stride over the range
        expected = bytearray(b"\x11" * total)
        expected[offset:offset + size] = (pattern * (size // pattern_size + 1))[:size]
        assert bytes(buf[3][:]) == bytes(expected)
    finally:
        device.free(*buf)


@pytest.mark.parametrize("pattern_size", [32, 64, 128, 4])
def test_fill_pattern(device, shaders, pattern_size):
    pattern = bytes((7 * i + 3) & 0xFF for i in range(pattern_size))
    offset, size, total = 2 * pattern_size, 5 * pattern_size, 8 * pattern_size + 40
    dst, pat = device.buffer(total), device.buffer(pattern_size)
    try:
        dst[3][:] = b"\xee" * total
        pat[3][:] = pattern
        values = {"dst": Q.pack(dst[2]), "offset": Q.pack(offset), "size": Q.pack(size),
                  "pattern": Q.pack(pat[2]), "pattern_size": struct.pack("<I", pattern_size)}
        _run_shader(device, shaders["fill"], "fill_pattern", values, (1, 1, 1))
        expected = bytearray(b"\xee" * total)
        expected[offset:offset + size] = pattern * 5
        assert bytes(dst[3][:]) == bytes(expected)
    finally:
        device.free(*dst)
        device.free(*pat)


@pytest.mark.parametrize("src_origin,dst_origin,region,src_pitch,dst_pitch", [
    ((0, 0, 0), (0, 0, 0), (64, 4, 2), (64, 256), (64, 256)),       # 16-byte units
    ((16, 1, 0), (32, 2, 1), (32, 3, 2), (80, 400), (96, 480)),      # 16-byte units, offsets
    ((4, 1, 1), (8, 0, 0), (12, 5, 2), (36, 200), (20, 100)),        # 4-byte units
    ((3, 2, 1), (1, 1, 0), (13, 4, 3), (29, 150), (17, 70)),         # bytes
])
def test_copy_rect(device, shaders, src_origin, dst_origin, region, src_pitch, dst_pitch):
    def offset(origin, pitch):
        return origin[0] + origin[1] * pitch[0] + origin[2] * pitch[1]

    so, do = offset(src_origin, src_pitch), offset(dst_origin, dst_pitch)
    last = (region[0], region[1] - 1, region[2] - 1)  # one past the region's last byte
    src_size, dst_size = so + offset(last, src_pitch) + 8, do + offset(last, dst_pitch) + 8
    src, dst = device.buffer(src_size), device.buffer(dst_size)
    try:
        src_bytes = bytes((i * 31 + 7) & 0xFF for i in range(src_size))
        src[3][:] = src_bytes
        dst[3][:] = b"\0" * dst_size
        values = {"src": Q.pack(src[2]), "dst": Q.pack(dst[2]), "src_offset": Q.pack(so),
                  "src_row_pitch": Q.pack(src_pitch[0]), "src_slice_pitch": Q.pack(src_pitch[1]),
                  "dst_offset": Q.pack(do), "dst_row_pitch": Q.pack(dst_pitch[0]),
                  "dst_slice_pitch": Q.pack(dst_pitch[1]), "width": Q.pack(region[0]),
                  "height": struct.pack("<I", region[1]), "depth": struct.pack("<I", region[2])}
        _run_shader(device, shaders["copy_rect"], "copy_rect", values, (1, 2, 1), local=(4, 2, 2))
        expected = bytearray(dst_size)
        for z in range(region[2]):
            for y in range(region[1]):
                s = so + z * src_pitch[1] + y * src_pitch[0]
                d = do + z * dst_pitch[1] + y * dst_pitch[0]
                expected[d:d + region[0]] = src_bytes[s:s + region[0]]
        assert bytes(dst[3][:]) == bytes(expected)
    finally:
        device.free(*src)
        device.free(*dst)
