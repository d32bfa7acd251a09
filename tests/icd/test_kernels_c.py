"""Real kernels through the ICD loader (tests/icd/c/kernels.c, one section per test). Every
result is checked on the host: exactly for integers, within tolerances derived from a double
reference for floats."""
import ctypes.util

import pytest
from checks import assert_passed

SECTIONS = [
    "vector_add",      # float c = a + b over 100003 elements (exact: IEEE addition)
    "saxpy",           # float saxpy; double daxpy where CL_DEVICE_EXTENSIONS has cl_khr_fp64
    "reduction",       # int sums with a __local argument and barriers (local 64/256/1024); float sum+max, 2 locals
    "scan",            # work-group inclusive scan, a second pass over the block sums, a third adding bases
    "sgemm",           # 256x224 * 224x192, 16x16 tiles: local float tile[16][16] and flat local arrays
    "histogram",       # atomic_inc into 256 bins; atomic_inc tickets unique; atomic min/max/add/xor
    "nbody",           # float4 accelerations, tiled in local memory
    "mandelbrot",      # iteration counts against the host's float loop, < 1% mismatches
    "stencil_offset",  # 2-D 5-point stencil enqueued on the interior with a global offset (1, 1)
    "struct_arg",      # structs by value: {float, int, float2}; one with padding, between scalars
    "struct_arg_shared_program",  # two kernels, one taking a padded struct: one push-constant block each
    "printf",          # kernel printf reaches stdout before clFinish returns (checked below)
    "ndrange_3d",      # every id and size in 3 dimensions, NULL local size, with and without offsets
    "big_grid",        # 65535*2+7 work-groups of 1, every element; again with an offset
    "non_uniform",     # -cl-std=CL2.0: the last group's local size, group id, enqueued local size (1-D, 2-D)
    "task",            # clEnqueueTask: a serial loop, and the ids and sizes of the single work-item
    "arg_capture",     # arguments (buffer, scalars, __local size) captured at enqueue time
    "many_args",       # 12, 16 and 32 buffers + 6 ints (beyond push constants: a uniform buffer); 18 mixed
    "errors",          # the error codes of clEnqueueNDRangeKernel and clEnqueueTask
    "local_mem_other_kernel",  # a kernel's __local budget ignores other kernels' static arrays
    "empty_range",     # a global size with a 0 dimension completes without running (OpenCL 2.1+)
]

PRINTF_LINES = [
    "vkcl-printf item 0 of 4: value=10 half=5.00",
    "vkcl-printf item 1 of 4: value=21 half=10.50",
    "vkcl-printf item 2 of 4: value=32 half=16.00",
    "vkcl-printf item 3 of 4: value=43 half=21.50",
    "vkcl-printf literal 4000000000 ff Z|   42|7   |",
]


@pytest.mark.parametrize("section", SECTIONS)
def test_kernels(c_program, section):
    result = c_program("kernels").run(section)
    assert_passed(result)
    assert f"-- {section}" in result.stdout
    if section == "printf":  # written by vkcl to fd 1 after the kernel, before clFinish returns
        lines = result.stdout.splitlines()
        for want in PRINTF_LINES:
            assert want in lines, result.stdout
        before, after = lines.index("host: before enqueue"), lines.index("host: after finish")
        assert all(before < lines.index(want) < after for want in PRINTF_LINES), result.stdout



@pytest.mark.parametrize("hold", [None, "0"])
def test_hold_clocks(c_program, hold):
    """hold_clocks (on unless VKCL_HOLD_CLOCKS=0): kernels and transfers run as without it; on an
    NVIDIA GPU with libcuda (the GPU machine) vkcl's holder process retains the GPU's CUDA
    primary context (it says so on the stderr it shares with the application, and outlives the
    application by no more than its own start-up: the run returns once it closed that stderr);
    elsewhere, or with VKCL_HOLD_CLOCKS=0, no holder starts."""
    env = {"VKCL_LOG": "vk", **({"VKCL_HOLD_CLOCKS": hold} if hold else {})}
    result = c_program("kernels").run("vector_add", "sgemm", env=env)
    assert_passed(result)
    devices = next((line for line in result.stderr.splitlines() if "usable Vulkan devices" in line), "")
    if hold is None and "NVIDIA" in devices and ctypes.util.find_library("cuda"):
        assert "hold_clocks: retained the CUDA primary context" in result.stderr, result.stderr[-2000:]
    else:
        assert "hold_clocks: holder started" not in result.stderr
