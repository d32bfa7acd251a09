"""Repair 12 (vkcl/compiler/spirv_printf.py): printf returns 0 on success, where clspv's
lowering made it 1; a phi of 1 and -1 that is not printf's stays as it is."""
import re
import subprocess

from vkcl import compiler

CAPS = compiler.DeviceCaps()


def _phis(spv: bytes, tmp_path) -> list[str]:
    path = tmp_path / "k.spv"
    path.write_bytes(spv)
    assert subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(path)]).returncode == 0
    dis = subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout
    return [l.strip() for l in dis.splitlines() if re.search(r"OpPhi %uint .*%uint_4294967295", l)]


def test_printf_returns_zero(tmp_path):
    src = ('kernel void k(global int *r, int v) { r[0] = printf("a\\n"); r[1] = printf("b %d %f\\n", v, 1.5f); }')
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    phis = _phis(result.spirv, tmp_path)
    assert len(phis) == 2 and all("%uint_0 " in p + " " and "%uint_1 " not in p + " " for p in phis), phis


def test_other_phis_of_one_and_minus_one_stay(tmp_path):
    src = ("kernel void k(global int *o, global int *flags, uint n) {"
           " uint x = get_global_id(0); int r;"
           " if (atomic_add(flags, 1) + 2u < n) { o[x + 1] = 5; r = 1; } else { r = -1; }"
           ' o[0] = r; if (x == 0) printf("x\\n"); }')
    result = compiler.compile_source(src, "", CAPS)
    assert result.ok, result.log
    phis = _phis(result.spirv, tmp_path)
    assert not phis or all("%uint_1 " in p + " " for p in phis), phis
