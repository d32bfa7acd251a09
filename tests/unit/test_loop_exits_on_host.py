"""compiler/loop_exits.py changes no result: random nested-loop kernels
(tests/differential/nested_loops.py) run on the host before and after the rewrite
(tests/host_kernels.py), with their `return`s, `goto`s, `break`s and `continue`s out of `for`,
`while` and do-while loops. The exits of the do-while loops go through their latches; where
the block after an inner loop is that latch (a do-while whose body ends in the inner loop), an
exit going on from the inner loop once dispatched back into that same block, forever: seeds 678,
679, 684, 687, 711, 713 and 714 (lavapipe gave wrong values for 678 and 711, and a launch that
never ended)."""
import random
import sys
from pathlib import Path

import pytest

from host_kernels import build, front_ir, run
from vkcl import compiler
from vkcl.compiler import loop_exits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "differential"))
import nested_loops  # noqa: E402

CAPS = compiler.DeviceCaps(loop_unroll_count=16, loop_unroll_size=1000, max_nesting=78)  # llvmpipe's
SEEDS = (678, 679, 684, 687, 711, 713, 714, 100, 119, 641, 700, 701)
# n and m: the loops' counts, none (0) and more than the hits need
COUNTS = ((40, 7), (3, 0), (0, 5), (100, 100))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_rewrite_computes_what_the_kernel_did(seed, tmp_path):
    ir = front_ir(nested_loops.kernel(random.Random(seed)), compiler.parse_options("").clspv_args(CAPS))
    rewritten = loop_exits.rewrite(ir)
    assert rewritten is not None, "the kernel has exits out of several loops"
    before, after = build(ir, tmp_path, "before"), build(rewritten, tmp_path, "after")
    for n, m in COUNTS:
        expected = run(before, n, m)
        assert expected != "hang"
        assert run(after, n, m) == expected, (n, m)
