"""vkcl.compiler.spirv_nesting: how deep conditionals nest as llvmpipe counts them, and the
driver's answer where they nest past DeviceCaps.max_nesting (built again rolled, or refused)."""
from pathlib import Path

import pytest

from vkcl import compiler
from vkcl.compiler import spirv_nesting

from conftest import FUNCTION_START, MODULE_TYPES

HEAD = MODULE_TYPES + "%c0 = OpConstant %uint 0\n" + FUNCTION_START + "%c = OpINotEqual %bool %x %c0\n"


def nested_ifs(n: int) -> str:
    text = "".join(f"OpSelectionMerge %m{k} None\nOpBranchConditional %c %b{k} %m{k}\n%b{k} = OpLabel\n"
                   for k in range(n))
    text += f"OpBranch %m{n - 1}\n"
    for k in reversed(range(n)):
        text += f"%m{k} = OpLabel\n" + (f"OpBranch %m{k - 1}\n" if k else "OpReturn\n")
    return HEAD + text + "OpFunctionEnd\n"


def returns_in_a_row(n: int) -> str:
    # if (c) return; if (c) return; ...: nir_lower_returns nests the rest under each one.
    text = "".join(f"OpSelectionMerge %j{k} None\nOpBranchConditional %c %r{k} %j{k}\n"
                   f"%r{k} = OpLabel\nOpReturn\n%j{k} = OpLabel\n" for k in range(n))
    return HEAD + text + "OpReturn\nOpFunctionEnd\n"


def loop(body: str, after: str = "OpReturn\n") -> str:
    return HEAD + ("OpBranch %h\n%h = OpLabel\nOpLoopMerge %lm %lc None\nOpBranch %l0\n%l0 = OpLabel\n" + body
                   + "%lc = OpLabel\nOpBranch %h\n%lm = OpLabel\n" + after + "OpFunctionEnd\n")


def test_each_selection_is_a_level(assemble_spirv):
    for n in (1, 5, 40):
        assert spirv_nesting.deepest(assemble_spirv(nested_ifs(n))) == n


def test_code_after_a_return_is_a_level_deeper(assemble_spirv):
    for n in (1, 4, 30):
        assert spirv_nesting.deepest(assemble_spirv(returns_in_a_row(n))) == n


def test_breaks_and_loops_add_no_level(assemble_spirv):
    breaks = "".join(f"OpBranchConditional %c %lm %l{k + 1}\n%l{k + 1} = OpLabel\n" for k in range(20))
    assert spirv_nesting.deepest(assemble_spirv(loop(breaks + "OpBranch %lc\n"))) == 0
    # a return inside the loop: one level inside its if, one for what follows the loop
    inner = "OpSelectionMerge %s None\nOpBranchConditional %c %r %s\n%r = OpLabel\nOpReturn\n%s = OpLabel\nOpBranch %lc\n"
    after = nested_ifs(1)[nested_ifs(1).index("OpSelectionMerge"):nested_ifs(1).index("OpFunctionEnd")]
    assert spirv_nesting.deepest(assemble_spirv(loop(inner))) == 1
    assert spirv_nesting.deepest(assemble_spirv(loop(inner, after))) == 2


def test_switch_cases_are_a_level(assemble_spirv):
    text = ("OpSelectionMerge %sm None\nOpSwitch %x %d 1 %a 2 %b\n%a = OpLabel\nOpBranch %sm\n"
            "%b = OpLabel\nOpBranch %sm\n%d = OpLabel\nOpBranch %sm\n%sm = OpLabel\nOpReturn\n")
    assert spirv_nesting.deepest(assemble_spirv(HEAD + text + "OpFunctionEnd\n")) == 1


def test_the_walk_stops_counting_at_its_ceiling(assemble_spirv):
    deep = spirv_nesting.deepest(assemble_spirv(nested_ifs(spirv_nesting.CEILING + 40)))
    assert spirv_nesting.CEILING < deep <= spirv_nesting.CEILING + 1


def return_chain(n: int) -> str:
    conds = " ".join(f"if (((a[g] ^ {k * 2654435761 % 2**32}u) * 2654435761u >> 24) < 4u) {{ o[g] = {k}u; return; }}"
                     for k in range(n))
    return f"kernel void k(global uint *o, global const uint *a) {{ uint g = get_global_id(0); {conds} o[g] = 5000u; }}"


@pytest.mark.parametrize("n", [10, 60])
def test_clspv_output_counts_as_llvmpipe_ran_it(n):
    # Measured on lavapipe: n returns in a row (counted n) ran right up to 80, wrong from 81
    # (tests/icd/test_deep_conditionals.py has them running).
    r = compiler.compile_source(return_chain(n), "", compiler.DeviceCaps())
    assert r.ok, r.log
    assert spirv_nesting.deepest(r.spirv) == n


# A `return` out of three nested loops: LLVM's forced unrolling (llvmpipe's) nests one level per
# exit of each copy, past 80 (tests/icd/test_long_loops.py runs it).
NESTED_RETURNS = (Path(__file__).resolve().parent.parent / "kernels" / "nested_returns.cl").read_text()
UNROLLED = dict(loop_unroll_count=16, loop_unroll_size=1000)


def test_too_deep_unrolled_program_is_built_again_rolled(monkeypatch):
    monkeypatch.setenv("VKCL_CACHE", "0")
    unlimited = compiler.compile_source(NESTED_RETURNS, "", compiler.DeviceCaps(**UNROLLED))
    assert unlimited.ok and spirv_nesting.deepest(unlimited.spirv) > 78
    limited = compiler.compile_source(NESTED_RETURNS, "", compiler.DeviceCaps(**UNROLLED, max_nesting=78))
    assert limited.ok, limited.log
    assert spirv_nesting.deepest(limited.spirv) <= 78
    assert len(limited.spirv) < len(unlimited.spirv) / 4  # its loops rolled


def test_program_too_deep_even_rolled_is_refused(monkeypatch):
    monkeypatch.setenv("VKCL_CACHE", "0")
    r = compiler.compile_source(return_chain(100), "", compiler.DeviceCaps(**UNROLLED, max_nesting=78))
    assert not r.ok and r.status == "error"
    assert "nests 100 conditionals deep" in r.log and "llvmpipe" in r.log
    assert compiler.compile_source(return_chain(100), "", compiler.DeviceCaps(**UNROLLED)).ok
