"""`python -m vkcl info`: what clinfo says of vkcl's devices, and what only vkcl knows: the Vulkan
device and driver behind each, the Vulkan features each OpenCL feature rests on, what is
emulated, what is missing and why, and the program cache.

The OpenCL values come from the same info tables clGetDeviceInfo answers from
(vkcl/api/device.py, platform.py), read in this process without the ICD loader.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from vkcl._gen import cl

# (OpenCL feature, the Vulkan features or extensions it needs, whether vkcl needs it to run at all)
FOUNDATIONS = (
    ("buffers as device addresses (pointers, sub-buffers)", ("bufferDeviceAddress",), True),
    ("events, queues and waits", ("timelineSemaphore",), True),
    ("cl_khr_fp64", ("shaderFloat64",), False),
    ("cl_khr_fp16", ("shaderFloat16", "storageBuffer16BitAccess"), False),
    ("8- and 16-bit integers in memory", ("shaderInt8", "storageBuffer8BitAccess", "shaderInt16"), False),
    ("64-bit integers", ("shaderInt64",), False),
    ("cl_khr_int64_base_atomics", ("shaderBufferInt64Atomics",), False),
    ("cl_khr_integer_dot_product", ("shaderIntegerDotProduct",), False),
    ("CL_FP_INF_NAN kept by the driver (float)", ("shaderSignedZeroInfNanPreserveFloat32",), False),
    ("denormals kept by the driver (float: CL_FP_DENORM)", ("shaderDenormPreserveFloat32",), False),
    ("denormals kept by the driver (double)", ("shaderDenormPreserveFloat64",), False),
    ("round to nearest even, guaranteed (float)", ("shaderRoundingModeRTEFloat32",), False),
    ("profiling in host time", ("VK_EXT_calibrated_timestamps|VK_KHR_calibrated_timestamps",), False),
)

MISSING = (
    ("images and samplers", "not implemented yet (CL_DEVICE_IMAGE_SUPPORT is CL_FALSE)"),
    ("shared virtual memory", "not implemented (no SVM capabilities are reported)"),
    ("pipes, device-side enqueue", "optional OpenCL 3.0 features vkcl does not report"),
    ("sub-groups", "not claimed yet (CL_DEVICE_MAX_NUM_SUB_GROUPS is 0)"),
    ("generic address space, program-scope globals", "not claimed (clspv's support is incomplete)"),
    ("atomics beyond relaxed order and work-group scope", "not claimed: C11 atomics keep their order in the "
     "SPIR-V, but device-scope acquire/release did not order plain accesses on the H200"),
)


def _param_names() -> dict[int, str]:
    from vkcl.api.device import DEVICE_INFO
    names: dict[int, str] = {}
    for name in sorted(dir(cl)):
        value = getattr(cl, name)
        if name.startswith("CL_DEVICE_") and isinstance(value, int) and value in DEVICE_INFO:
            names.setdefault(value, name)
    return names


def _plain(value):
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return type(value).__name__  # a handle (the platform, a parent device)


def _cl_values(device) -> dict:
    from vkcl.api.device import DEVICE_INFO
    out = {}
    for param, name in sorted(_param_names().items()):
        _, getter = DEVICE_INFO[param]
        try:
            out[name] = _plain(getter(device))
        except Exception as e:  # a query the device cannot answer: say so
            out[name] = f"<error: {e}>"
    return out


def _has(pd, need: str) -> bool:
    if need.startswith("VK_"):
        return any(n in pd.extensions for n in need.split("|"))
    if need.startswith("shader") and need in pd.float_controls:
        return bool(pd.float_controls[need])
    return bool(pd.features.get(need))


def _vulkan(pd) -> dict:
    from vkcl.vulkan.instance import version_tuple
    return {"device": pd.name, "vendor_id": f"{pd.vendor_id:#06x}", "device_type": pd.device_type,
            "api_version": ".".join(map(str, version_tuple(pd.api_version))), "driver": pd.driver_name,
            "driver_info": pd.driver_info, "driver_version": pd.driver_version,
            "unified_memory": pd.is_uma, "subgroup_size": pd.subgroup_size,
            "max_push_constants": pd.limits["maxPushConstantsSize"]}


def _emulated(device) -> list[str]:
    caps = device.compiler_caps
    out = []
    if "fma" not in caps.native_builtins:
        out.append("fma(): exact software emulation, clspv's for float and half, vkcl's for double "
                   "(Vulkan does not promise a fused Fma)")
    out.append("builtins clspv compiles wrongly: vkcl's own OpenCL C (vkcl/compiler/prelude/)")
    out.append("program-scope __constant data: a buffer vkcl uploads once per program")
    return out


def _cache() -> dict:
    from vkcl.compiler import cache
    root = cache.cache_dir()
    if root is None:
        return {"enabled": False}
    entries = total = 0
    if root.is_dir():
        for dirpath, _, files in os.walk(root):
            for f in files:
                try:
                    total += (Path(dirpath) / f).stat().st_size
                    entries += 1
                except OSError:
                    pass
    return {"enabled": True, "dir": str(root), "files": entries, "bytes": total}


def report() -> dict:
    from vkcl.core.platform import platform
    plat = platform()
    if plat is None:
        return {"platform": None, "devices": [], "cache": _cache(),
                "why": "no usable Vulkan device (see VKCL_LOG=vk)"}
    devices = []
    for d in plat.devices:
        pd = d.physical
        devices.append({
            "opencl": _cl_values(d),
            "vulkan": _vulkan(pd),
            "foundations": [{"feature": f, "rests_on": list(needs), "required": req,
                             "available": all(_has(pd, n) for n in needs)} for f, needs, req in FOUNDATIONS],
            "emulated": _emulated(d),
            "missing": [{"feature": f, "why": why} for f, why in MISSING],
        })
    return {"platform": {"name": plat.name, "version": plat.version, "extensions": plat.extensions},
            "devices": devices, "cache": _cache()}


def text(r: dict) -> str:
    if r["platform"] is None:
        return f"vkcl: {r['why']}\n"
    p = r["platform"]
    lines = [f"Platform  {p['name']}: {p['version']}", f"  extensions: {p['extensions']}"]
    for i, d in enumerate(r["devices"]):
        c, v = d["opencl"], d["vulkan"]
        lines += [f"Device {i}  {c['CL_DEVICE_NAME']}",
                  f"  OpenCL    {c['CL_DEVICE_VERSION']}, compute units {c['CL_DEVICE_MAX_COMPUTE_UNITS']}, "
                  f"work-group {c['CL_DEVICE_MAX_WORK_GROUP_SIZE']}, global memory "
                  f"{c['CL_DEVICE_GLOBAL_MEM_SIZE'] / 2**30:.1f} GiB, local memory {c['CL_DEVICE_LOCAL_MEM_SIZE']} B",
                  f"  float     single {c['CL_DEVICE_SINGLE_FP_CONFIG']:#x}, double {c['CL_DEVICE_DOUBLE_FP_CONFIG']:#x}, "
                  f"half {c['CL_DEVICE_HALF_FP_CONFIG']:#x}",
                  f"  extensions {c['CL_DEVICE_EXTENSIONS']}",
                  f"  Vulkan    {v['device']} ({v['vendor_id']}), Vulkan {v['api_version']}, driver {v['driver']} "
                  f"{v['driver_info']}",
                  "  rests on"]
        for f in d["foundations"]:
            mark = "yes" if f["available"] else ("MISSING (required)" if f["required"] else "no")
            lines.append(f"    {f['feature']:<52} {' + '.join(f['rests_on'])}: {mark}")
        lines.append("  emulated")
        lines += [f"    {e}" for e in d["emulated"]]
        lines.append("  missing")
        lines += [f"    {m['feature']}: {m['why']}" for m in d["missing"]]
    c = r["cache"]
    lines.append(f"Cache     {c['dir']}: {c['files']} files, {c['bytes'] / 2**20:.1f} MiB" if c["enabled"]
                 else "Cache     off (VKCL_CACHE=0)")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if any(a in ("-h", "--help") for a in argv):
        print("usage: python -m vkcl info [--json]")
        return 0
    unknown = [a for a in argv if a != "--json"]
    if unknown:
        print(f"vkcl info: unknown argument {unknown[0]!r}", file=__import__("sys").stderr)
        return 2
    r = report()
    print(json.dumps(r, indent=1) if "--json" in argv else text(r), end="" if "--json" not in argv else "\n")
    return 0 if r["platform"] is not None else 1
