"""vkcl's settings, declared once: name, type, default, doc.

Each setting reads the environment variable VKCL_<NAME>; a file named by VKCL_CONFIG_FILE
(lines `name = value`) supplies values the environment does not. `VKCL_LOG=config`
prints the effective settings at start-up.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable


def _bool(text: str) -> bool:
    return text.strip().lower() not in ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class Setting:
    name: str
    parse: Callable[[str], Any]
    default: Any
    doc: str


SETTINGS = [
    Setting("log", str, "", "comma-separated log groups: api, refcount, vk, compiler, config, queue, all"),
    Setting("log_file", str, "", "write the log to this file instead of stderr"),
    Setting("cache", _bool, True, "use the on-disk program cache"),
    Setting("cache_dir", str, "", "program cache directory (default $XDG_CACHE_HOME/vkcl)"),
    Setting("cache_max_file_mb", int, 64, "the largest program-cache entry or pipeline-cache file vkcl reads or "
            "writes (MiB); larger ones are misses, so a planted or damaged file costs at most this much memory"),
    Setting("clspv", str, "", "an external clspv executable to compile with instead of pyclspv"),
    Setting("clspv_library", str, "", "a shared object exporting clspv's C API (default: pyclspv's module)"),
    Setting("clspv_options", str, "", "more clspv options for every compile (tuning and diagnosis; part of "
            "the program cache key)"),
    Setting("llvm_spirv", str, "", "the SPIRV-LLVM-Translator for IL programs (default llvm-spirv-15)"),
    Setting("llvm_opt", str, "", "LLVM's opt, which demotes the phis of IL programs whose exits out of several "
            "loops at once are routed (default opt-15)"),
    Setting("shader_dir", str, "", "where vkcl's built-in OpenCL C kernels are (default: shaders/)"),
    Setting("compiler_python", str, "", "the interpreter that runs the compiler worker"),
    Setting("compile_timeout", float, 120.0, "seconds before a compile is abandoned"),
    Setting("build_progress_s", float, 5.0, "a compile still running after this many seconds says so, once, on "
            "stderr (0: never)"),
    Setting("devices", str, "", "comma-separated substrings: only Vulkan devices whose name matches one"),
    Setting("validation", _bool, False, "enable the Vulkan validation layer when it is installed"),
    Setting("batch_commands", int, 256, "commands recorded before a batch is submitted anyway"),
    Setting("resume_loops", _bool, True, "on llvmpipe, the long loops of kernels without barriers suspend before "
            "its 65,535 back-edges and later dispatches resume them (off: they are cut there and their launches "
            "fail; for comparisons)"),
    Setting("resume_limit", int, 0, "the loop back-edges of a work-item after which its loops suspend there (0: "
            "llvmpipe's budget over its lanes; smaller values make tests take many passes)"),
    Setting("memory_block_mb", int, 64, "size of the memory blocks buffers are carved from (MiB)"),
    Setting("map_device_memory", _bool, True, "map memory objects' memory where the device's memory is "
            "host-visible (lavapipe, integrated GPUs); off, it is left unmapped as a discrete GPU's (tests "
            "of those paths)"),
    Setting("copy_threads", int, 0, "threads for large host copies of staged transfers (0: half the CPUs, "
            "up to 8)"),
    Setting("c_events", _bool, True, "the events of launches and transfers C records are made and answered "
            "for in C (off: Python makes every event; tests of both)"),
    Setting("hold_clocks", _bool, True, "on an NVIDIA GPU with libcuda, keep its clocks up while vkcl uses it, as "
            "NVIDIA's OpenCL does, by retaining its CUDA context (costs ~0.1 s and ~0.5 GiB of device memory)"),
    Setting("cuda_copies", int, 1, "transfers between vkcl's pinned memory and buffers by CUDA's copy engine, "
            "which moves ~55 GB/s where NVIDIA's Vulkan driver moves ~50 (1: on NVIDIA GPUs with libcuda, 0: never, "
            "2: on any device, for tests with a stand-in cuda_library)"),
    Setting("cuda_copy_min_kb", int, 64, "the smallest transfer CUDA copies (KiB)"),
    Setting("cuda_library", str, "", "the libcuda CUDA copies load (default libcuda.so.1)"),
    Setting("trace", str, "", "write a Chrome trace / Perfetto JSON timeline of API calls, compiles, submissions and "
            "GPU execution to this file at exit (python -m vkcl trace sets it; vkcl/trace.py)"),
    Setting("kernel_timeout", float, 0.0, "seconds a wait for the GPU may last before the device is taken as "
            "hung: the commands fail with CL_OUT_OF_RESOURCES and a new context gets a new device (0: no limit; "
            "set, waits go through Python, not the C fast path)"),
    Setting("check_bounds", _bool, False, "check every global-memory access of kernels against their buffers: a "
            "faulting access is skipped and fails its command with CL_OUT_OF_RESOURCES (part of the program cache key)"),
    Setting("inject_device_lost", int, 0, "tests only: the N-th queue submission loses its device (every later "
            "submission and wait fails with VK_ERROR_DEVICE_LOST; vulkan/faults.py)"),
    Setting("wait_spin_us", int, -1, "how long a blocking wait polls the GPU before it sleeps (-1: 10000 on a "
            "discrete GPU, 100 elsewhere)"),
]
_BY_NAME = {s.name: s for s in SETTINGS}


def _file_values() -> dict[str, str]:
    path = os.environ.get("VKCL_CONFIG_FILE")
    values: dict[str, str] = {}
    if path and os.path.isfile(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if "=" in line:
                    k, v = line.split("=", 1)
                    values[k.strip().lower()] = v.strip()
    return values


def load() -> dict[str, Any]:
    from_file = _file_values()
    values = {}
    for s in SETTINGS:
        text = os.environ.get("VKCL_" + s.name.upper(), from_file.get(s.name))
        try:
            values[s.name] = s.default if text is None else s.parse(text)
        except ValueError:
            values[s.name] = s.default
    return values


_values = load()


def get(name: str) -> Any:
    return _values[name] if name in _BY_NAME else None


def current(name: str) -> Any:
    """A setting read afresh (the environment may have changed since start-up)."""
    s = _BY_NAME[name]
    text = os.environ.get("VKCL_" + name.upper())
    if text is None:
        text = _file_values().get(name)
    try:
        return s.default if text is None else s.parse(text)
    except ValueError:
        return s.default


def reload() -> None:
    global _values
    _values = load()


def describe() -> str:
    return "\n".join(f"  VKCL_{s.name.upper()} = {_values[s.name]!r}  ({s.doc})" for s in SETTINGS)
