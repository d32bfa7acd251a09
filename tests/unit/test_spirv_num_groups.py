"""Repair 16 (vkcl/compiler/spirv_num_groups.py): loads of NumWorkgroups become selections
between the builtin and vkcl's specialization constants; modules without it are untouched."""
import subprocess

from vkcl import compiler
from vkcl.compiler import spirv
from vkcl.compiler import spirv_num_groups as ng

USES = ("kernel void k(global uint *o) { o[get_global_id(0)] = get_global_size(0); }\n"
        "kernel void g(global uint *o) { o[0] = get_num_groups(1); o[1] = get_num_groups(2); }")


def _spec_ids(data: bytes) -> set[int]:
    words = spirv.to_words(data)
    return {words[pos + 3] for pos, op, n in spirv.instructions(words)
            if op == spirv.OP_DECORATE and n == 4 and words[pos + 2] == ng.DECORATION_SPEC_ID}


def test_loads_of_the_work_group_count_are_selected(tmp_path):
    result = compiler.compile_source(USES, "", compiler.DeviceCaps())
    assert result.ok, result.log
    assert ng.overridable(result.spirv)
    assert {ng.SPEC_FLAG, *ng.SPEC_COUNTS} <= _spec_ids(result.spirv)
    words = spirv.to_words(result.spirv)
    selects = [pos for pos, op, _ in spirv.instructions(words) if op == ng.OP_SELECT]
    assert len(selects) == 3, selects  # one per load: k's x, g's y and z
    path = tmp_path / "k.spv"
    path.write_bytes(result.spirv)
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)]).returncode == 0
    assert ng.num_groups_from_spec_constants(result.spirv) == result.spirv  # nothing left to do


def test_modules_without_the_builtin_are_untouched():
    result = compiler.compile_source("kernel void k(global uint *o) { o[get_global_id(0)] = 1; }", "",
                                     compiler.DeviceCaps())
    assert result.ok, result.log
    assert not ng.overridable(result.spirv)
    assert not {ng.SPEC_FLAG, *ng.SPEC_COUNTS} & _spec_ids(result.spirv)
