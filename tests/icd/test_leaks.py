"""Create/release cycles leave resident memory and live Vulkan objects where they were: at most
0.5 kB per queue cycle and 2 kB per context-with-a-run cycle over 1,000 cycles (after 1,000 cycles of warm-up,
so that caches of pyopencl's and the allocator's first blocks are filled), and every Vulkan object
a cycle made is destroyed (vkcl/vulkan/lifetime.py counts them)."""
import pytest

from test_kernels_pyopencl import run

pytest.importorskip("pyopencl")

CYCLES = """
import gc
from vkcl.vulkan import lifetime

def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 1024

src = "kernel void k(global float *a) { a[get_global_id(0)] += 1.0f; }"

def queue_cycle():
    cl.CommandQueue(ctx).finish()
    cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE).finish()

def context_cycle():
    c = cl.Context([dev]); qq = cl.CommandQueue(c)
    p = cl.Program(c, src).build(); b = cl.Buffer(c, mf.READ_WRITE, 4096)
    p.k(qq, (1024,), None, b); qq.finish()

def measure(cycle, n, warmup=1000):
    for _ in range(warmup):
        cycle()
    gc.collect()
    objects, r0 = lifetime.live_objects(), rss_kib()
    for _ in range(n):
        cycle()
    gc.collect()
    return (rss_kib() - r0) * 1024 / n, objects, lifetime.live_objects()
"""


def test_queue_cycles_leak_nothing(python_with_icd):
    run(python_with_icd, CYCLES + """
per_cycle, before, after = measure(queue_cycle, 1000)
assert after == before, (before, after)
assert per_cycle <= 2 * 512, per_cycle  # two queues a cycle
print("OK", per_cycle)
""")


def test_context_cycles_leak_nothing(python_with_icd):
    run(python_with_icd, CYCLES + """
per_cycle, before, after = measure(context_cycle, 1000)
assert after == before, (before, after)
assert per_cycle <= 2048, per_cycle
print("OK", per_cycle)
""")
