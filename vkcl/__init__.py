"""vkcl: OpenCL on Vulkan, as an ICD (see docs/architecture.md)."""

__version__ = "0.1.0"
