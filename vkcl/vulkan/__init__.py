"""The thin layer over the Vulkan bindings: instance and devices, memory, command recording.

Set-up uses the `vulkan` package's wrappers; hot paths call `vk.lib` directly.
"""
