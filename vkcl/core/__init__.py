"""The OpenCL object model on plain Python types: platform, device, context, queue, ..."""
