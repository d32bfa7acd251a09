"""Adjacent narrow global accesses merged for llvmpipe (vkcl/compiler/spirv_merge_access.py): a
run of 8/16/32-bit loads or stores of consecutive elements becomes 64-bit accesses; volatile
ones, runs cut by a global access that may alias, and other devices' SPIR-V are untouched.
The results (edge values, aliasing pointers) are checked on the device in
tests/icd/test_merged_accesses.py."""
from vkcl import compiler
from vkcl.compiler import spirv
from vkcl.compiler.spirv_merge_access import merge_narrow_accesses

OP_LOAD, OP_STORE = 61, 62
COPIES = """
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void copies(global const char *c, global char16 *c16, global const short *s, global short8 *s8,
                   global const float *f, global float16 *f16, global const half *h, global half16 *h16) {
  size_t i = get_global_id(0);
  c16[i] = vload16(i, c);
  s8[i] = vload8(i, s);
  f16[i] = vload16(i, f);
  h16[i] = vload16(i, h);
}"""
# Each element access is cut from the next by a possibly aliasing global access: nothing merges.
INTERLEAVED = """
kernel void shift(global char *p, int off) {
  global char *a = p, *b = p + off;
  b[0] = a[0]; b[1] = a[1]; b[2] = a[2]; b[3] = a[3]; b[4] = a[4]; b[5] = a[5]; b[6] = a[6]; b[7] = a[7];
}"""
VOLATILE = """
kernel void v(volatile global char *p, global const char *q) {
  p[0] = 1; p[1] = 2; p[2] = 3; p[3] = 4; p[4] = 5; p[5] = 6; p[6] = 7; p[7] = 8;
}"""


def _accesses(data: bytes) -> dict[str, dict[int, int]]:
    """Global (physical storage buffer) loads and stores by the bit width of what they move."""
    words = spirv.to_words(data)
    types, pointers, type_of = {}, {}, {}
    found = {"load": {}, "store": {}}
    for pos, op, n in spirv.instructions(words):
        if op in (spirv.OP_TYPE_INT, 22):
            types[words[pos + 1]] = words[pos + 2]
        elif op == spirv.OP_TYPE_POINTER and words[pos + 2] == spirv.SC_PHYSICAL_STORAGE_BUFFER:
            pointers[words[pos + 1]] = words[pos + 3]
        elif n >= 3 and words[pos + 1] in pointers and op not in (OP_STORE,):
            type_of[words[pos + 2]] = words[pos + 1]
        if op == OP_LOAD and words[pos + 3] in type_of:
            width = types.get(words[pos + 1], 0)
            found["load"][width] = found["load"].get(width, 0) + 1
        elif op == OP_STORE and words[pos + 1] in type_of:
            width = types.get(pointers[type_of[words[pos + 1]]], 0)
            found["store"][width] = found["store"].get(width, 0) + 1
    return found


def test_llvmpipe_gets_merged_accesses(valid_spirv):
    plain = compiler.compile_source(COPIES, "", compiler.DeviceCaps())
    merged = compiler.compile_source(COPIES, "", compiler.DeviceCaps(merge_narrow_accesses=True))
    assert plain.ok and merged.ok, plain.log + merged.log
    before, after = _accesses(plain.spirv), _accesses(merged.spirv)
    # clspv: one access per element of the long vectors (16 chars, 8 shorts, 16 floats, 16 halves)
    assert before["load"].get(8) == before["store"].get(8) == 16, before
    assert before["store"].get(16) == 8 + 16 and before["store"].get(32) == 16, before
    # merged: the same 16 + 16 + 64 + 32 bytes each way in 64-bit accesses, nothing narrow left
    assert after["load"] == after["store"] == {64: 2 + 2 + 8 + 4}, after
    assert valid_spirv(merged.spirv)
    assert merge_narrow_accesses(merged.spirv) == merged.spirv  # nothing left to merge


def test_accesses_that_may_alias_or_are_volatile_stay_apart(valid_spirv):
    caps = compiler.DeviceCaps(merge_narrow_accesses=True)
    for src in (INTERLEAVED, VOLATILE):
        result = compiler.compile_source(src, "", caps)
        assert result.ok, result.log
        assert 64 not in _accesses(result.spirv)["load"] and 64 not in _accesses(result.spirv)["store"]
        assert _accesses(result.spirv)["store"].get(8) == 8
        assert valid_spirv(result.spirv)


def test_other_devices_keep_clspv_accesses():
    plain = compiler.compile_source(COPIES, "", compiler.DeviceCaps())
    assert 64 not in _accesses(plain.spirv)["store"]
    assert merge_narrow_accesses(plain.spirv) != plain.spirv  # what llvmpipe would get
