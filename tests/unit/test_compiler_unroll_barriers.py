"""llvmpipe's forced loop unrolling (DeviceCaps.loop_unroll_count) and kernels that wait at a
barrier (vkcl/compiler/driver.py): llvmpipe compiles such a kernel as a coroutine, whose
splitting took minutes once unrolling had grown the code 35 times (pyopencl's segmented scan:
643 s instead of 0.7 s), so a program with barriers keeps its loops rolled where unrolling grows
it more than UNROLLED_GROWTH_LIMIT times, and is unrolled otherwise (pyopencl's cumsum, whose
long loops need it on lavapipe, grows about 4 times)."""
from vkcl import compiler
from vkcl.compiler import spirv_extra_lanes, spirv_loop_cuts
from vkcl.compiler.build_ways import UNROLLED_GROWTH_LIMIT

UNROLLING = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000)


def _kernel(loops: int, barrier: bool) -> str:
    decl = " ".join(f"float acc{k} = 0;" for k in range(loops))
    body = "\n".join(f"  for (int i = 0; i < n; i++) acc{k} += a[i * {k + 1} + {k}] * {k + 2};"
                     for k in range(loops))
    return f"""kernel void k(global float *a, global float *o, int n, local float *l) {{
  {decl}
{body}
  l[get_local_id(0)] = {" + ".join(f"acc{k}" for k in range(loops))};
  {"barrier(CLK_LOCAL_MEM_FENCE);" if barrier else ""}
  o[get_global_id(0)] = l[get_local_size(0) - 1 - get_local_id(0)];
}}"""


def _sizes(src: str) -> tuple[int, int]:
    rolled = compiler.compile_source(src, "", compiler.DeviceCaps())
    unrolled = compiler.compile_source(src, "", UNROLLING)
    assert rolled.ok and unrolled.ok, rolled.log + unrolled.log
    # llvmpipe's SPIR-V also returns its extra lanes first and carries the loop-cut probe
    # (spirv_extra_lanes, spirv_loop_cuts), the rolled form too
    return len(spirv_loop_cuts.instrument(spirv_extra_lanes.return_extra_lanes(rolled.spirv))), len(unrolled.spirv)


def test_barrier_program_that_unrolling_would_bloat_stays_rolled():
    rolled, chosen = _sizes(_kernel(10, barrier=True))
    assert chosen == rolled
    without_barrier = _sizes(_kernel(10, barrier=False))
    assert without_barrier[1] > UNROLLED_GROWTH_LIMIT * without_barrier[0]  # what it would have been


def test_barrier_program_with_little_growth_is_unrolled():
    rolled, chosen = _sizes(_kernel(1, barrier=True))
    assert rolled < chosen <= UNROLLED_GROWTH_LIMIT * rolled
