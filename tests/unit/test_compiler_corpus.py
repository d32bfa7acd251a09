"""The kernel corpus (tests/kernels): every kernel builds, its SPIR-V validates for Vulkan 1.2
with and without reflection, and the reflection matches hand-written expectations."""
from __future__ import annotations

import shutil
import subprocess
from array import array
import pytest

from vkcl import compiler
from vkcl.compiler import spirv as spv
from vkcl.compiler.reflection import ProgramReflection

from conftest import FAILING_KERNELS, KERNELS

NAMES = sorted(p.stem for p in KERNELS.glob("*.cl") if p.stem not in FAILING_KERNELS)
VARIANTS = ("physical", "logical", "cl30")
GLOBAL, LOCAL, PRIVATE = 0x119B, 0x119C, 0x119E          # CL_KERNEL_ARG_ADDRESS_*
READ_ONLY, WRITE_ONLY, NO_ACCESS = 0x11A0, 0x11A1, 0x11A3  # CL_KERNEL_ARG_ACCESS_*
CONST, VOLATILE = 1, 4                                    # CL_KERNEL_ARG_TYPE_*


def spirv_val(tmp_path: Path, data: bytes) -> subprocess.CompletedProcess:
    path = tmp_path / "module.spv"
    path.write_bytes(data)
    return subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(path)], capture_output=True, text=True)


def test_corpus_is_complete():
    assert {"vector_add", "reduction", "struct_arg", "int64_double", "vload_vstore", "atomics",
            "barriers", "printf", "multi_kernel", "images"} <= set(NAMES)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", NAMES)
def test_builds_and_validates(corpus, name, variant, tmp_path):
    result = corpus[(name, variant)]
    assert result.ok, result.log
    assert result.status == "ok" and result.binary_type == "executable" and result.bitcode is None
    assert "error:" not in result.log
    assert result.reflection.kernels
    if shutil.which("spirv-val") is None:
        pytest.skip("spirv-val is not installed")
    full = spirv_val(tmp_path, result.spirv)
    assert full.returncode == 0, full.stderr
    stripped = compiler.strip_nonsemantic(result.spirv)
    assert len(stripped) < len(result.spirv)
    check = spirv_val(tmp_path, stripped)
    assert check.returncode == 0, check.stderr


def test_strip_removes_all_reflection(corpus):
    for result in corpus.values():
        stripped = compiler.strip_nonsemantic(result.spirv)
        assert b"NonSemantic" not in stripped and b"SPV_KHR_non_semantic_info" not in stripped
        assert compiler.parse_reflection(stripped).kernels == {}
        assert compiler.strip_nonsemantic(stripped) == stripped
        words = spv.to_words(stripped)
        assert list(words[:5]) == list(spv.to_words(result.spirv)[:5])


def test_spirv_for_device(corpus):
    spirv = corpus[("vector_add", "physical")].spirv
    assert compiler.spirv_for_device(spirv, compiler.DeviceCaps()) == spirv
    assert compiler.spirv_for_device(spirv, compiler.DeviceCaps(non_semantic_info=False)) == \
        compiler.strip_nonsemantic(spirv)


def _args(result, kernel):
    return [(a.name, a.kind, a.offset, a.size) for a in result.reflection.kernels[kernel].args]


def test_reflection_physical(corpus):
    def r(name):
        return corpus[(name, "physical")]
    assert _args(r("vector_add"), "vector_add") == [
        ("a", "pointer_pushconstant", 0, 8), ("b", "pointer_pushconstant", 8, 8),
        ("c", "pointer_pushconstant", 16, 8), ("scale", "pod_pushconstant", 24, 4)]
    k = r("vector_add").reflection.kernels["vector_add"]
    assert k.push_constant_size == 28 and k.bindings == [] and k.reqd_work_group_size is None
    a = k.args[0]
    assert (a.ordinal, a.type_name, a.address_qualifier, a.access_qualifier, a.type_qualifier) == \
        (0, "float*", GLOBAL, NO_ACCESS, CONST)
    assert k.args[3].address_qualifier == PRIVATE and k.args[3].type_name == "float"
    assert r("vector_add").reflection.spec_constants == {
        "workgroup_size_x": 0, "workgroup_size_y": 1, "workgroup_size_z": 2,
        "global_offset_x": 3, "global_offset_y": 4, "global_offset_z": 5}

    red = r("reduction").reflection.kernels["reduce_sum"]
    assert red.reqd_work_group_size == (64, 1, 1) and red.attributes == "reqd_work_group_size(64,1,1)"
    scratch = red.args[2]
    assert (scratch.name, scratch.kind, scratch.spec_id, scratch.elem_size, scratch.address_qualifier) == \
        ("scratch", "local", 3, 4, LOCAL)
    assert _args(r("reduction"), "reduce_sum")[3] == ("n", "pod_pushconstant", 16, 4)
    assert "workgroup_size_x" not in r("reduction").reflection.spec_constants  # fixed by the attribute

    assert _args(r("struct_arg"), "apply_params") == [
        ("data", "pointer_pushconstant", 0, 8), ("p", "pod_pushconstant", 16, 32)]
    assert r("struct_arg").reflection.kernels["apply_params"].args[1].type_name == "params_t"
    assert _args(r("int64_double"), "int64_double")[2:] == [
        ("mul", "pod_pushconstant", 16, 8), ("add", "pod_pushconstant", 24, 8)]
    hist = r("atomics").reflection.kernels["histogram"]
    assert hist.args[1].type_qualifier == VOLATILE and hist.args[2].kind == "local"

    multi = r("multi_kernel").reflection
    assert list(multi.kernels) == ["first", "second", "third"]
    assert multi.kernels["second"].args[2].name == "k"
    assert [(c.storage, c.offset, c.size, c.data) for c in multi.constant_data] == [
        ("pushconstant", 0, 8, bytes([1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]))]
    assert multi.push_constants["module_constants_pointer"].offset == 0

    pr = r("printf").reflection
    assert pr.kernels["say_hello"].may_use_printf and not hist.may_use_printf
    formats = {info.format: info.arg_sizes for info in pr.printf_infos.values()}
    assert formats == {"hello %d %f\n": [4, 8], "item %u of %u: %s\n": [4, 4, 4], "ok": []}
    buf = pr.printf_buffer
    assert (buf.storage, buf.buffer_size, buf.size) == ("pushconstant", 1 << 20, 8)
    assert pr.push_constants["printf_buffer_pointer"].offset == pr.printf_buffer.offset


def test_reflection_logical(corpus):
    vadd = corpus[("vector_add", "logical")].reflection.kernels["vector_add"]
    assert [(a.kind, a.descriptor_set, a.binding) for a in vadd.args[:3]] == [("buffer", 0, 0),
        ("buffer", 0, 1), ("buffer", 0, 2)]
    assert (vadd.args[3].kind, vadd.args[3].offset, vadd.args[3].size) == ("pod_pushconstant", 0, 4)
    assert [(b.descriptor_set, b.binding, b.descriptor_type) for b in vadd.bindings] == [
        (0, 0, "storage_buffer"), (0, 1, "storage_buffer"), (0, 2, "storage_buffer")]
    multi = corpus[("multi_kernel", "logical")].reflection
    assert [(c.storage, c.descriptor_set, c.binding) for c in multi.constant_data] == [("storage_buffer", 1, 0)]
    assert (1, 0, "storage_buffer", "constant_data") in [
        (b.descriptor_set, b.binding, b.descriptor_type, b.source) for b in multi.kernels["first"].bindings]
    pr = corpus[("printf", "logical")].reflection
    buf = pr.printf_buffer
    assert (buf.storage, buf.descriptor_set, buf.binding) == ("storage_buffer", 1, 0)
    img = corpus[("images", "logical")].reflection
    assert [(a.kind, a.access_qualifier) for a in img.kernels["blur"].args] == [
        ("ro_image", READ_ONLY), ("wo_image", WRITE_ONLY), ("sampler", NO_ACCESS)]
    assert [(s.descriptor_set, s.binding, s.mask) for s in img.literal_samplers] == [(0, 0, 0x12)]
    assert [b.descriptor_type for b in img.kernels["blur"].bindings] == [
        "sampler", "sampled_image", "storage_image", "sampler"]


def test_reflection_cl30_push_constants(corpus):
    vadd = corpus[("vector_add", "cl30")].reflection
    assert {k: (v.offset, v.size) for k, v in vadd.push_constants.items()} == {
        "global_offset": (0, 12), "region_offset": (16, 12)}
    assert vadd.kernels["vector_add"].args[0].offset == 32
    assert vadd.kernels["vector_add"].push_constant_size == 64


def test_descriptor_map_csv(corpus):
    csv = compiler.descriptor_map_csv(corpus[("vector_add", "physical")].reflection)
    assert csv.splitlines() == [
        "kernel_decl,vector_add",
        "kernel,vector_add,arg,a,argOrdinal,0,offset,0,argKind,pointer_pushconstant,argSize,8",
        "kernel,vector_add,arg,b,argOrdinal,1,offset,8,argKind,pointer_pushconstant,argSize,8",
        "kernel,vector_add,arg,c,argOrdinal,2,offset,16,argKind,pointer_pushconstant,argSize,8",
        "kernel,vector_add,arg,scale,argOrdinal,3,offset,24,argKind,pod_pushconstant,argSize,4",
        "spec_constant,workgroup_size_x,spec_id,0", "spec_constant,workgroup_size_y,spec_id,1",
        "spec_constant,workgroup_size_z,spec_id,2", "spec_constant,global_offset_x,spec_id,3",
        "spec_constant,global_offset_y,spec_id,4", "spec_constant,global_offset_z,spec_id,5"]
    logical = compiler.descriptor_map_csv(corpus[("reduction", "logical")].reflection).splitlines()
    assert "kernel,reduce_sum,arg,in,argOrdinal,0,descriptorSet,0,binding,0,offset,0,argKind,buffer" in logical
    assert "kernel,reduce_sum,arg,scratch,argOrdinal,2,argKind,local,arrayElemSize,4,arrayNumElemSpecId,3" in logical
    cl30 = compiler.descriptor_map_csv(corpus[("vector_add", "cl30")].reflection).splitlines()
    assert cl30[:2] == ["pushconstant,name,global_offset,offset,0,size,12",
                        "pushconstant,name,region_offset,offset,16,size,12"]
    img = compiler.descriptor_map_csv(corpus[("images", "physical")].reflection).splitlines()
    assert img[0] == ('sampler,18,samplerExpr,"CLK_NORMALIZED_COORDS_FALSE|CLK_ADDRESS_CLAMP_TO_EDGE|'
                      'CLK_FILTER_NEAREST",descriptorSet,0,binding,0')
    pr = compiler.descriptor_map_csv(corpus[("printf", "physical")].reflection)
    assert 'printf,id,0,argSizes,4:8,format,"hello %d %f\\n"' in pr.splitlines()
    multi = compiler.descriptor_map_csv(corpus[("multi_kernel", "logical")].reflection)
    assert "constant,descriptorSet,1,binding,0,kind,buffer,hexbytes,01000000020000000300000004000000" in multi


def test_reflection_serializes(corpus):
    for result in corpus.values():
        plain = result.reflection.to_dict()
        assert ProgramReflection.from_dict(plain) == result.reflection


def test_unknown_reflection_instruction_is_kept_raw(corpus):
    data = corpus[("vector_add", "physical")].spirv
    words = spv.to_words(data)
    set_id = next(words[p + 1] for p, op, n in spv.instructions(words) if op == spv.OP_EXT_INST_IMPORT
                  and spv.literal_string(words, p + 2, p + n)[0].startswith("NonSemantic.ClspvReflection"))
    void = next(words[p + 1] for p, op, n in spv.instructions(words) if op == 19)  # OpTypeVoid
    bound = words[3]
    words[3] = bound + 1
    extra = array("I", [(6 << 16) | spv.OP_EXT_INST, void, bound, set_id, 999, set_id])
    refl = compiler.parse_reflection(spv.to_bytes(words) + spv.to_bytes(extra))
    assert [(u.number, u.operands) for u in refl.unknown] == [(999, [["id", set_id]])]
    assert refl.kernels == corpus[("vector_add", "physical")].reflection.kernels


def test_syntax_error_is_a_failed_build(tmp_path):
    result = compiler.compile_source((KERNELS / "syntax_error.cl").read_text(), "", compiler.DeviceCaps())
    assert not result.ok and result.status == "error" and result.spirv is None
    assert "use of undeclared identifier 'undeclared_thing'" in result.log


def test_not_spirv_is_rejected():
    with pytest.raises(spv.SpirvFormatError):
        compiler.parse_reflection(b"\0" * 40)
    with pytest.raises(spv.SpirvFormatError):
        compiler.strip_nonsemantic(b"\x03\x02\x23\x07" + b"\0" * 15)


def test_source_strings_make_one_program():
    """clCreateProgramWithSource's strings are one translation unit, not several."""
    result = compiler.compile_source(["#define VALUE 5\n", "kernel void k(global int *p) { p[0] = VALUE; }\n"],
                                     "", compiler.DeviceCaps())
    assert result.ok, result.log
    assert list(result.reflection.kernels) == ["k"]
