"""Probe: what do resumable loops (compiler/spirv_resume.py, core/resume.py) cost on lavapipe
where nothing suspends? A launch of a kernel that may suspend is submitted at once and holds the
commands after it until the host has seen it complete.

Measured with VKCL_RESUME_LOOPS=1 and =0 (each in its own process, through the ICD loader), a
kernel of 4,096 work-items looping 64 times (no pass ever suspends); `--kernel barrier`: the
same loop then a reduction in local memory with barriers (the loop votes after it,
compiler/spirv_resume_sync.py):
  - round trip: one launch + clFinish, best of 5 runs of 200;
  - stream: 500 launches in a row, then clFinish (the hold makes them one batch each);
  - build: the program's build and first launch.
    python3 bench/probes/resume_cost.py [--kernel plain|barrier] [--out result.json]
"""
import json
import os
import subprocess
import sys

CHILD = r"""
import time, numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context([plat.get_devices()[0]]); q = cl.CommandQueue(ctx)
src = SOURCE
o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 4096)
t = time.perf_counter()
k = cl.Program(ctx, src).build().k
k.set_arg(0, o)
if k.num_args > 2:
    k.set_arg(2, cl.LocalMemory(4 * 64))
def launch(n):
    k.set_arg(1, np.uint32(n)); cl.enqueue_nd_range_kernel(q, k, (4096,), (64,))
launch(64); q.finish()
build = time.perf_counter() - t
rt = []
for _ in range(5):
    t = time.perf_counter()
    for _ in range(200):
        launch(64); q.finish()
    rt.append((time.perf_counter() - t) / 200)
st = []
for _ in range(5):
    t = time.perf_counter()
    for _ in range(500):
        launch(64)
    q.finish()
    st.append((time.perf_counter() - t) / 500)
print(json.dumps({"round_trip_ms": min(rt) * 1e3, "stream_ms": min(st) * 1e3, "build_s": build}))
"""


KERNELS = {
    "plain": "kernel void k(global uint *o, uint n) { uint s = get_global_id(0);"
             " for (uint i = 0; i < n; i++) s = s * 1103515245u + i; o[get_global_id(0)] = s; }",
    "barrier": "kernel void k(global uint *o, uint n, local uint *l) { uint s = get_global_id(0);"
               " for (uint i = 0; i < n; i++) s = s * 1103515245u + i; l[get_local_id(0)] = s;"
               " for (uint h = 32; h > 0; h >>= 1) { barrier(CLK_LOCAL_MEM_FENCE);"
               " if (get_local_id(0) < h) l[get_local_id(0)] += l[get_local_id(0) + h]; }"
               " o[get_global_id(0)] = l[0]; }",
}


def measure(resume: str, kernel: str) -> dict:
    env = dict(os.environ, VKCL_RESUME_LOOPS=resume, VKCL_CACHE="0", PYOPENCL_NO_CACHE="1")
    child = "import json\nSOURCE = " + repr(KERNELS[kernel]) + "\n" + CHILD
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True,
                         check=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    kernel = sys.argv[sys.argv.index("--kernel") + 1] if "--kernel" in sys.argv else "plain"
    rows = {label: measure(flag, kernel) for label, flag in (("resume on", "1"), ("resume off", "0"))}
    print(f"{'':12} {'round trip (ms)':>16} {'per launch, stream (ms)':>24} {'build + first (s)':>18}")
    for label, r in rows.items():
        print(f"{label:12} {r['round_trip_ms']:16.3f} {r['stream_ms']:24.3f} {r['build_s']:18.3f}")
    on, off = rows["resume on"], rows["resume off"]
    print(f"ratio on/off: round trip {on['round_trip_ms'] / off['round_trip_ms']:.2f}, "
          f"stream {on['stream_ms'] / off['stream_ms']:.2f}")
    if "--out" in sys.argv:
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
