"""The on-disk caches trust nothing (issue 22): a swapped, damaged, oversized, non-regular
or old-format entry is a miss and a correct rebuild; nothing blocks, reads without bound,
writes through a planted symlink, or uses a directory another user controls."""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from vkcl import cache_files, compiler
from vkcl.compiler import cache

CAPS = compiler.DeviceCaps()
ROOT = Path(__file__).resolve().parent.parent.parent
OTHER_UID = 12345


def _source(tag: str, value: int = 7) -> str:
    # Unique per test so that nothing else in the session has cached it.
    return f"kernel void k(global int *p) {{ p[get_global_id(0)] = {value}; /* {tag} */ }}\n"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("VKCL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("VKCL_CACHE", raising=False)
    monkeypatch.delenv("VKCL_CACHE_MAX_FILE_MB", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def warnings_seen():
    """The warnings of vkcl's compiler logger (a handler on it: vkcl's root logger may not propagate)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("vkcl.compiler")
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def _entries(root: Path) -> set[Path]:
    return set(root.rglob("*.vkclbin"))


def _compile_new_entry(root: Path, source: str):
    """Compile `source` (a miss) and return (its result, its entry's path)."""
    before = _entries(root)
    result = compiler.compile_source(source, "", CAPS)
    assert result.ok and not result.from_cache, result.log
    (entry,) = _entries(root) - before
    return result, entry


def _load_in_child(cache_dir: Path, key: str, timeout: float = 60) -> str:
    """cache.load(key) in a child process whose address space is capped at 1.5 GiB, so that a
    read without bound fails fast and a blocking open fails by the timeout, not the test run."""
    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
        from vkcl.compiler import cache
        print("hit" if cache.load({key!r}) is not None else "miss")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VKCL_CACHE_DIR": str(cache_dir)}
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading the cache entry blocked for more than {timeout} s")
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip()


def _key_of(entry: Path) -> str:
    return entry.name.removesuffix(".vkclbin")


def test_swapped_entry_is_a_miss_and_is_rebuilt(cache_dir, warnings_seen):
    mine, my_entry = _compile_new_entry(cache_dir, _source("swap-mine", 1))
    other, other_entry = _compile_new_entry(cache_dir, _source("swap-other", 2))
    assert mine.spirv != other.spirv
    good = my_entry.read_bytes()
    shutil.copyfile(other_entry, my_entry)  # a valid entry, of another program, under my key
    again = compiler.compile_source(_source("swap-mine", 1), "", CAPS)
    assert again.ok and not again.from_cache and again.spirv == mine.spirv
    assert any("another key" in r.getMessage() for r in warnings_seen)
    assert my_entry.read_bytes() == good  # replaced by the rebuild
    assert compiler.compile_source(_source("swap-mine", 1), "", CAPS).from_cache


def test_entry_that_is_a_symlink_to_dev_zero_is_a_miss(cache_dir):
    good, entry = _compile_new_entry(cache_dir, _source("dev-zero"))
    entry.unlink()
    entry.symlink_to("/dev/zero")
    assert _load_in_child(cache_dir, _key_of(entry)) == "miss"
    again = compiler.compile_source(_source("dev-zero"), "", CAPS)
    assert again.ok and not again.from_cache and again.spirv == good.spirv
    assert not entry.is_symlink() and entry.is_file()  # the link itself was replaced
    assert compiler.compile_source(_source("dev-zero"), "", CAPS).from_cache


def test_entry_that_is_a_symlink_to_a_valid_entry_is_a_miss(cache_dir):
    # A symlink is never followed, even to a good entry of the same key kept elsewhere.
    good, entry = _compile_new_entry(cache_dir, _source("symlink-good"))
    elsewhere = cache_dir.parent / "kept.vkclbin"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    assert _load_in_child(cache_dir, _key_of(entry)) == "miss"


def test_entry_that_is_a_fifo_is_a_miss_and_does_not_block(cache_dir):
    good, entry = _compile_new_entry(cache_dir, _source("fifo"))
    entry.unlink()
    os.mkfifo(entry, 0o600)
    assert _load_in_child(cache_dir, _key_of(entry), timeout=30) == "miss"
    again = compiler.compile_source(_source("fifo"), "", CAPS)
    assert again.ok and not again.from_cache and again.spirv == good.spirv
    assert stat.S_ISREG(os.lstat(entry).st_mode)


def test_entry_larger_than_the_cap_is_a_miss(cache_dir, monkeypatch):
    good, entry = _compile_new_entry(cache_dir, _source("cap"))
    with open(entry, "ab") as f:
        f.truncate((1 << 20) + 1)
    monkeypatch.setenv("VKCL_CACHE_MAX_FILE_MB", "1")
    assert cache.load(_key_of(entry)) is None
    again = compiler.compile_source(_source("cap"), "", CAPS)
    assert again.ok and not again.from_cache and again.spirv == good.spirv
    assert compiler.compile_source(_source("cap"), "", CAPS).from_cache
    # An entry over the cap is not written either (it could not be read back).
    monkeypatch.setenv("VKCL_CACHE_MAX_FILE_MB", "0")
    assert not cache.store(_key_of(entry), compiler.unpack(compiler.pack(good.to_binary())))
    assert not entry.exists()


def test_every_truncation_and_flipped_byte_is_a_miss(cache_dir):
    _, entry = _compile_new_entry(cache_dir, _source("damage"))
    key, data = _key_of(entry), entry.read_bytes()
    assert cache.load(key) is not None
    damaged = [data[:n] for n in range(len(data))] + [data + b"\0"]
    damaged += [data[:i] + bytes([data[i] ^ (1 << (i % 8))]) + data[i + 1:] for i in range(len(data))]
    for bad in damaged:  # header, key, metadata, payload and checksum bytes alike
        entry.write_bytes(bad)
        assert cache.load(key) is None


def test_entries_of_the_old_format_are_misses(cache_dir):
    # Format 1 entries were bare program binaries, checksummed but naming no key.
    good, entry = _compile_new_entry(cache_dir, _source("old-format"))
    entry.write_bytes(compiler.pack(good.to_binary()))
    assert cache.load(_key_of(entry)) is None
    again = compiler.compile_source(_source("old-format"), "", CAPS)
    assert not again.from_cache and again.spirv == good.spirv
    assert cache_files.FORMAT_VERSION == 2


def test_store_never_writes_through_a_planted_symlink(cache_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    key = cache.make_key("planted")
    sub = cache_dir / key[:2]
    sub.mkdir(parents=True)
    entry = sub / f"{key}.vkclbin"
    # Names a writer could have predicted: the entry's own, and temporary names next to it.
    planted = [entry, sub / f"{key}.tmp", sub / f"{key}.vkclbin.tmp", sub / f"{key}.{os.getpid()}.tmp",
               sub / f".tmp-{key}"]
    for link in planted:
        link.symlink_to(victim)
    binary = compiler.compile_source(_source("planted"), "", CAPS).to_binary()
    assert cache.store(key, binary)
    assert victim.read_bytes() == b"precious"
    assert stat.S_ISREG(os.lstat(entry).st_mode) and cache.load(key) is not None
    for link in planted[1:]:
        assert link.is_symlink() and os.readlink(link) == str(victim)


def test_directories_are_private_under_umask_000(tmp_path):
    # In a child: the umask is the process's, and other tests must not see it changed.
    root = tmp_path / "made" / "by" / "vkcl"
    code = textwrap.dedent("""
        import os
        os.umask(0)
        from vkcl import compiler
        from vkcl.vulkan.device import logical_device
        from vkcl.vulkan.instance import instance
        from vkcl.vulkan.pipeline import PipelineCache
        r = compiler.compile_source("kernel void k(global int *p) { p[0] = 5; /* umask */ }", "",
                                    compiler.DeviceCaps())
        assert r.ok and not r.from_cache, r.log
        inst = instance()
        if inst is not None and inst.physical_devices:
            PipelineCache(logical_device(inst.physical_devices[0])).save()
        compiler.shutdown()
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VKCL_CACHE_DIR": str(root)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    made = [tmp_path / "made", tmp_path / "made" / "by", root] + [p for p in root.iterdir() if p.is_dir()]
    files = [p for p in root.rglob("*") if p.is_file()]
    assert len(made) == 4 and any(p.name.endswith(".vkclbin") for p in files)
    assert any(p.name.startswith("pipelines-") for p in files)
    for d in made:
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def _owned_by_someone_else(path: Path, monkeypatch) -> None:
    if os.geteuid() == 0:
        os.chown(path, OTHER_UID, OTHER_UID)
    else:  # cannot chown: let vkcl believe it runs as another user
        uid = os.geteuid()
        monkeypatch.setattr(cache_files.os, "geteuid", lambda: uid + 1)


@pytest.mark.parametrize("problem", ["other owner", "mode 0777", "mode 0775", "mode 0702"])
def test_directory_another_user_controls_is_not_used(cache_dir, monkeypatch, warnings_seen, problem):
    cache_dir.mkdir(mode=0o700)
    if problem == "other owner":
        _owned_by_someone_else(cache_dir, monkeypatch)
    else:
        os.chmod(cache_dir, int(problem.split()[1], 8))
    for _ in range(3):
        result = compiler.compile_source(_source("foreign-dir-" + problem), "", CAPS)
        assert result.ok and not result.from_cache
    assert list(cache_dir.iterdir()) == []
    warned = [r.getMessage() for r in warnings_seen if str(cache_dir) in r.getMessage()]
    assert len(warned) == 1 and "without a cache" in warned[0], warned


def test_entry_directory_another_user_controls_is_not_used(cache_dir, monkeypatch, tmp_path):
    good, entry = _compile_new_entry(cache_dir, _source("foreign-subdir"))
    sub = entry.parent
    if os.geteuid() != 0:
        pytest.skip("needs root to give the directory to another user")
    os.chown(sub, OTHER_UID, OTHER_UID)
    assert cache.load(_key_of(entry)) is None
    os.chown(sub, 0, 0)
    os.chmod(sub, 0o777)
    assert cache.load(_key_of(entry)) is None
    # A symlink in place of the directory is not followed.
    os.chmod(sub, 0o700)
    sub.rename(tmp_path / "moved")
    sub.symlink_to(tmp_path / "moved")
    assert cache.load(_key_of(entry)) is None
    assert not cache.store(_key_of(entry), good.to_binary())


def test_cache_file_names_its_key():
    data = cache_files.wrap("a" * 64, b"payload")
    assert cache_files.unwrap(data, "a" * 64) == b"payload"
    for other in ("b" * 64, "a" * 63, "a" * 65, ""):
        with pytest.raises(cache_files.Unusable, match="another key|truncated"):
            cache_files.unwrap(data, other)


def _pipeline_path(dev, root: Path) -> Path:
    pd = dev.physical
    return root / f"pipelines-{hashlib.sha256(pd.device_uuid + pd.driver_uuid + pd.name.encode()).hexdigest()[:16]}.bin"


def test_pipeline_cache_never_writes_through_a_planted_symlink(dev, cache_dir, tmp_path, monkeypatch):
    from vkcl import config
    from vkcl.vulkan.pipeline import PipelineCache
    monkeypatch.setattr(config, "_values", config.load())  # settings read at start-up see VKCL_CACHE_DIR too
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    cache_dir.mkdir(mode=0o700)
    path = _pipeline_path(dev, cache_dir)
    # The temporary name vkcl used to write through (pipelines-<tag>.<pid>.tmp), and others.
    planted = [path.with_suffix(f".{os.getpid()}.tmp"), path.with_suffix(".tmp"), path.with_name(path.name + ".tmp")]
    for link in planted + [path]:
        link.symlink_to(victim)
    pc = PipelineCache(dev)
    pc.save()
    assert victim.read_bytes() == b"precious"
    for link in planted:
        assert link.is_symlink() and os.readlink(link) == str(victim)
    assert stat.S_ISREG(os.lstat(path).st_mode) and stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    assert cache_files.read(path, pc.key) is not None
    assert cache_files.read(path, "0" * 64) is None  # the file names its device


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_pipeline_cache_file_that_is_not_a_regular_file(dev, cache_dir, kind):
    cache_dir.mkdir(mode=0o700)
    path = _pipeline_path(dev, cache_dir)
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    else:
        path.symlink_to("/dev/zero")
    code = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))
        from vkcl.vulkan.device import logical_device
        from vkcl.vulkan.instance import instance
        from vkcl.vulkan.pipeline import PipelineCache
        PipelineCache(logical_device(instance().physical_devices[0])).save()
        print("OK")
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "VKCL_CACHE_DIR": str(cache_dir)}
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("opening the pipeline cache blocked for more than 60 s")
    assert out.returncode == 0 and "OK" in out.stdout, out.stderr[-3000:]
    assert stat.S_ISREG(os.lstat(path).st_mode)  # replaced by the save
