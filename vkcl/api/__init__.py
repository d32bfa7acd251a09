"""OpenCL entry points: handle resolution, argument validation and error codes, nothing else.

One module per object, each function named after its C call in snake_case
(clGetPlatformInfo -> get_platform_info). registry.py binds them to the generated thunks.
"""
