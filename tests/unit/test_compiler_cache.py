"""The on-disk compile cache and vkcl's program binary format."""
from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import pytest

from vkcl import compiler
from vkcl.compiler import binary as binmod, cache

CAPS = compiler.DeviceCaps()


def _source(tag: str) -> str:
    # Unique per test so that nothing else in the session has cached it.
    return f"kernel void k(global float *p) {{ p[get_global_id(0)] = {len(tag)}.0f; /* {tag} */ }}\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("VKCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VKCL_CACHE", raising=False)
    return tmp_path / "cache"


def _entries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.vkclbin"))


def test_second_compile_is_a_hit(cache_dir):
    compiler.start_worker()
    first = compiler.compile_source(_source("hit"), "-DA=1", CAPS)
    assert first.ok and not first.from_cache
    second = compiler.compile_source(_source("hit"), "-DA=1", CAPS)
    assert second.from_cache and second.ok
    assert second.spirv == first.spirv and second.reflection == first.reflection and second.log == first.log
    assert second.seconds < first.seconds / 3
    assert len(_entries(cache_dir)) == 1
    # Anything in the key changes: options, caps, source.
    assert not compiler.compile_source(_source("hit"), "-DA=2", CAPS).from_cache
    assert not compiler.compile_source(_source("hit"), "-DA=1", compiler.DeviceCaps(fp16=False)).from_cache
    assert not compiler.compile_source(_source("hit2"), "-DA=1", CAPS).from_cache
    assert len(_entries(cache_dir)) == 4


def test_cache_can_be_disabled(cache_dir, monkeypatch):
    monkeypatch.setenv("VKCL_CACHE", "0")
    assert cache.cache_dir() is None
    for _ in range(2):
        assert not compiler.compile_source(_source("off"), "", CAPS).from_cache
    assert not cache_dir.exists()


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("VKCL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "vkcl"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "vkcl"


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_entry_is_a_miss_and_is_rewritten(cache_dir, damage):
    source = _source("corrupt-" + damage)
    good = compiler.compile_source(source, "", CAPS)
    (entry,) = _entries(cache_dir)
    data = entry.read_bytes()
    entry.write_bytes({"truncate": data[: len(data) // 2], "flip": data[:100] + bytes([data[100] ^ 1]) + data[101:],
                       "garbage": b"not a cache entry", "empty": b""}[damage])
    again = compiler.compile_source(source, "", CAPS)
    assert again.ok and not again.from_cache and again.spirv == good.spirv
    assert entry.read_bytes() == data
    assert compiler.compile_source(source, "", CAPS).from_cache


def test_failed_builds_are_not_cached(cache_dir):
    bad = "kernel void k(global int *p) { p[0] = nope; }"
    assert not compiler.compile_source(bad, "", CAPS).ok
    assert _entries(cache_dir) == []


def test_programs_that_include_files_are_not_cached(cache_dir, tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "value.h").write_text("#define VALUE 3\n")
    src = '#include "value.h"\nkernel void k(global int *p) { p[0] = VALUE; }\n'
    for _ in range(2):
        result = compiler.compile_source(src, f"-I {tmp_path / 'inc'}", CAPS)
        assert result.ok and not result.from_cache
    assert _entries(cache_dir) == []


def test_include_dirs_do_not_matter_when_nothing_is_included(cache_dir, tmp_path):
    # pyopencl adds -I <its include dir> to every build: such programs are still cached.
    first = compiler.compile_source(_source("with-I"), f"-I {tmp_path}", CAPS)
    second = compiler.compile_source(_source("with-I"), f"-I {tmp_path}", CAPS)
    assert first.ok and not first.from_cache and second.from_cache
    # "# include" (a space after the '#') is an include too
    (tmp_path / "v.h").write_text("#define V 1\n")
    src = '#  include "v.h"\nkernel void k(global int *p) { p[0] = V; }\n'
    for _ in range(2):
        result = compiler.compile_source(src, f"-I {tmp_path}", CAPS)
        assert result.ok and not result.from_cache
    assert len(_entries(cache_dir)) == 1


def test_binary_round_trip():
    result = compiler.compile_source(_source("binary"), "-cl-kernel-arg-info", CAPS)
    blob = compiler.pack(result.to_binary())
    assert compiler.is_vkcl_binary(blob)
    pb = compiler.unpack(blob)
    assert (pb.binary_type, pb.spirv, pb.bitcode) == ("executable", result.spirv, None)
    assert pb.options == "-cl-kernel-arg-info"
    assert pb.reflection == result.reflection and pb.caps_key == CAPS.key()
    assert pb.compiler_version == compiler.compiler_version() and pb.cl_std == "CL1.2"
    assert pb.incompatibility(CAPS, compiler.compiler_version()) is None
    assert "different capabilities" in pb.incompatibility(compiler.DeviceCaps(fp64=False), compiler.compiler_version())
    assert "another compiler" in pb.incompatibility(CAPS, "other")  # it may lack later repairs
    back = compiler.CompileResult.from_binary(pb)
    assert back.ok and back.spirv == result.spirv and back.reflection == result.reflection

    obj = compiler.compile_object(_source("binary-object"), "", CAPS)
    pb = compiler.unpack(compiler.pack(obj.to_binary()))
    assert pb.binary_type == "object" and pb.bitcode == obj.bitcode and pb.reflection is None
    assert pb.incompatibility(CAPS, compiler.compiler_version()) is None
    assert "another compiler" in pb.incompatibility(CAPS, "other")
    assert "32-bit" in pb.incompatibility(compiler.DeviceCaps(physical_addressing=False, address_bits=32),
                                          compiler.compiler_version())


def _repack(blob: bytes, fmt: int | None = None, meta: bytes | None = None) -> bytes:
    magic, version, meta_len, data_len = struct.unpack_from("<8sIIQ", blob)
    old_meta = blob[24:24 + meta_len]
    payload = blob[24 + meta_len:24 + meta_len + data_len]
    meta = old_meta if meta is None else meta
    body = struct.pack("<8sIIQ", magic, version if fmt is None else fmt, len(meta), len(payload)) + meta + payload
    return body + hashlib.sha256(body).digest()


def test_foreign_and_corrupt_binaries_rejected():
    blob = compiler.pack(compiler.compile_source(_source("reject"), "", CAPS).to_binary())
    cases = {
        "empty": b"", "short": blob[:20], "spirv": compiler.compile_source(_source("reject"), "", CAPS).spirv,
        "truncated": blob[:-1], "padded": blob + b"\0", "flipped": blob[:40] + bytes([blob[40] ^ 0x80]) + blob[41:],
        "foreign": b"\x7fELF" + blob[4:], "future": _repack(blob, fmt=99), "bad meta": _repack(blob, meta=b"{not json"),
        "bad type": _repack(blob, meta=b'{"binary_type":"x","options":"","caps_key":"","compiler_version":"",'
                                        b'"reflection":null}'),
    }
    for name, data in cases.items():
        with pytest.raises(compiler.InvalidBinaryError):
            compiler.unpack(data)
        assert name
    assert binmod.FORMAT_VERSION == 1


def test_only_successful_results_have_binaries():
    with pytest.raises(ValueError):
        compiler.CompileResult(ok=False).to_binary()


def test_a_cached_log_is_cleaned_with_todays_filter(cache_dir, monkeypatch):
    """A program cached while a default-off warning group was still logged (before it joined
    diagnostics.OFF_BY_DEFAULT) comes back from the cache without that warning."""
    from vkcl.compiler import diagnostics
    src = "kernel void k(global int *a) {\n    if (a[0])\n        a[1] = 1;\n        a[2] = 2; /* cached-log */\n}\n"
    full = diagnostics.OFF_BY_DEFAULT
    monkeypatch.setattr(diagnostics, "OFF_BY_DEFAULT", tuple(p for p in full if "misleading" not in p.pattern))
    first = compiler.compile_source(src, "", CAPS)
    assert first.ok and not first.from_cache and "misleading indentation" in first.log, first.log
    monkeypatch.setattr(diagnostics, "OFF_BY_DEFAULT", full)
    second = compiler.compile_source(src, "", CAPS)
    assert second.from_cache and second.log == "", second.log
