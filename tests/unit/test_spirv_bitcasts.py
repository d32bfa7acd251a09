"""Repair 17 (vkcl/compiler/spirv_bitcasts.py): a 64-bit scalar bitcast to a vector of 8- or
16-bit elements goes through a vector of two 32-bit integers; other bitcasts are untouched."""
import subprocess

from vkcl import compiler
from vkcl.compiler import spirv
from vkcl.compiler.spirv_bitcasts import OP_BITCAST, split_wide_bitcasts

SRC = ("kernel void k(global ushort *p, global uchar *c, global uint *u, ulong w, ulong v) {"
       " vstore4(as_ushort4(v), 0, p);"
       " vstore8(as_uchar8(w), 0, c); vstore2(as_uint2(v), 0, u); }")


def _bitcasts(data: bytes) -> list[tuple[int, int]]:
    """(result type's element width, operand's type's width) of each OpBitcast, by walking types."""
    words = spirv.to_words(data)
    widths, vectors, types, found = {}, {}, {}, []
    for pos, op, n in spirv.instructions(words):
        if op in (21, 22):
            widths[words[pos + 1]] = words[pos + 2]
        elif op == 23:
            vectors[words[pos + 1]] = (words[pos + 2], words[pos + 3])
        elif n >= 3 and op not in (62, 71, 72, 246, 247, 250):
            types[words[pos + 2]] = words[pos + 1]
        if op == OP_BITCAST:
            to, src = words[pos + 1], types[words[pos + 3]]
            total = lambda t: widths[vectors[t][0]] * vectors[t][1] if t in vectors else widths.get(t)  # noqa: E731
            found.append((widths[vectors[to][0]] if to in vectors else widths[to], total(src),
                          src in vectors))
    return found


def test_wide_scalars_go_through_two_words(tmp_path):
    result = compiler.compile_source(SRC, "", compiler.DeviceCaps())
    assert result.ok, result.log
    casts = _bitcasts(result.spirv)
    # No bitcast from a 64-bit scalar to 8- or 16-bit elements is left; each became 64 -> 2 x 32
    # then 2 x 32 -> the narrow vector; as_uint2 stays one bitcast.
    assert not [c for c in casts if c[0] < 32 and c[1] == 64 and not c[2]], casts
    assert sum(1 for c in casts if c[0] < 32 and c[1] == 64 and c[2]) >= 2, casts
    path = tmp_path / "k.spv"
    path.write_bytes(result.spirv)
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.3", str(path)]).returncode == 0
    assert split_wide_bitcasts(result.spirv) == result.spirv


def test_other_modules_are_untouched():
    src = "kernel void k(global uint *u, global float *f, ulong w) { vstore2(as_uint2(w), 0, u); f[0] = as_float(u[3]); }"
    result = compiler.compile_source(src, "", compiler.DeviceCaps())
    assert result.ok, result.log
    assert split_wide_bitcasts(result.spirv) == result.spirv
