"""A launch whose later pass cannot run fails; it never hangs (core/queue.py _next_pass).

On lavapipe a kernel whose loops suspend runs again in passes, each with a pipeline that resumes
one loop (compiler/spirv_resume.py). When such a pipeline could not be made (llvmpipe refused
one with VK_ERROR_UNKNOWN during the twenty-third session's work), the exception left the queue
waiting for a pass that never came, and the application hung. The pipeline is now made before
the pass is recorded: the launch fails with CL_OUT_OF_RESOURCES and what follows runs."""
import pytest

from checks import run_ok
from test_long_loops import HEADER

pytest.importorskip("pyopencl")


def test_a_pass_whose_pipeline_cannot_be_made_fails_the_launch(python_with_icd):
    run_ok(python_with_icd, HEADER + r"""
from vkcl.core import ndrange
made = ndrange.KernelPlan.pipeline
def refused(self, *args, resuming=0, **kw):
    if resuming:
        raise RuntimeError("vkCreateComputePipelines failed: VkResult -13 (injected)")
    return made(self, *args, resuming=resuming, **kw)
ndrange.KernelPlan.pipeline = refused
llvmpipe = "llvmpipe" in dev.name
src = "kernel void k(global uint *o, uint n) { uint s = get_global_id(0);\n#pragma nounroll\n for (uint i = 0; i < n; i++) s = STEP(s, i); o[get_global_id(0)] = s; }"
prg = cl.Program(ctx, STEP + src).build()
o = cl.Buffer(ctx, mf.READ_WRITE, 4 * 8)
ev = prg.k(q, (8,), (8,), o, np.uint32(200000))  # past the budget: it suspends on lavapipe
after = prg.k(q, (8,), (8,), o, np.uint32(10))   # held behind it until it is resolved
q.finish()
want = cl.status_code.OUT_OF_RESOURCES if llvmpipe else cl.command_execution_status.COMPLETE
assert ev.command_execution_status == want, ev.command_execution_status
assert after.command_execution_status == cl.command_execution_status.COMPLETE
r = np.empty(8, np.uint32); cl.enqueue_copy(q, r, o)
assert list(r) == [lcg(10, g) for g in range(8)], r
print("OK")
""", env={"VKCL_LOG": "error"})
