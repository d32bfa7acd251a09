"""The eighteenth session's experiment for vkcl/compiler/spirv_loop_cuts.py (branch h-loopcut): the pass
and the runtime side patched in by hand, on lavapipe. Run from the main checkout:
    PYOPENCL_NO_CACHE=1 VKCL_CACHE=0 OCL_ICD_VENDORS=$PWD/build/vendors python <this file>
Expected: word 0 for n = 1,000 and 60,000 (right), word 1 for 2 and 30 million (wrong)."""
import sys, numpy as np
sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])
import vkcl.compiler.spirv_fixes as f
from vkcl.compiler import spirv_loop_cuts as lc
orig = f.repair
def _rep(data, **k):
    out = lc.instrument(orig(data, **k)); print("instrumented", len(data), len(out), file=sys.stderr); open("/tmp/lc_rt.spv", "wb").write(out); return out
f.repair = _rep
import pyopencl as cl
from vkcl.core import ndrange
from vkcl.vulkan.memory import MemoryKind, allocator_for
word = {}
orig_cp = ndrange.vkp.compute_pipeline
def cp(vk, module, layout, name, spec):
    if vk not in word:
        word[vk] = allocator_for(vk).allocate(8, MemoryKind.STAGING)
        ndrange.vkc.ffi.memmove(word[vk].host_ptr, b"\0\0\0\0\2\0\0\0", 8)
    a = word[vk].address
    spec = dict(spec or {}); spec[lc.SPEC_WORD[0]] = a & 0xFFFFFFFF; spec[lc.SPEC_WORD[1]] = a >> 32
    return orig_cp(vk, module, layout, name, spec)
ndrange.vkp.compute_pipeline = cp
def read_word():
    w = next(iter(word.values()))
    v = bytes(ndrange.vkc.ffi.buffer(w.host_ptr, 4)); ndrange.vkc.ffi.memmove(w.host_ptr, b"\0" * 4, 4)
    return int.from_bytes(v, "little")
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx); mf = cl.mem_flags
src = """kernel void k(global uint *o, uint n, global const float *a) {
    uint s = get_global_id(0);
    for (uint i = 0; i < n; i++) { s = s * 1103515245u + (i ^ 12345u); if (a[i % 5] > 3.0f + (float)i) break; }
    o[get_global_id(0)] = s; }"""
p = cl.Program(ctx, src).build()
a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.zeros(8, np.float32))
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 64)
for n in (1000, 60000, 2000000, 30000000):
    p.k(q, (64,), (64,), o, np.uint32(n), a).wait()
    r = np.empty(64, np.uint32); cl.enqueue_copy(q, r, o); q.finish()
    s = 5
    for i in range(n):
        s = (s * 1103515245 + (i ^ 12345)) & 0xFFFFFFFF
    print(n, "word", read_word(), "lane5 right" if r[5] == s else "lane5 WRONG", flush=True)
