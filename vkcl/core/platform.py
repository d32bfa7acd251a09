"""The vkcl platform: one per process, with a device per usable Vulkan physical device."""
from __future__ import annotations

import threading
import time

from vkcl import __version__, log
from vkcl._gen import cl
from vkcl.core.object import CLObject

_log = log.get("api")

NAME = "vkcl"
VENDOR = "vkcl"
ICD_SUFFIX = "vkcl"
CL_VERSION_3_0 = (3 << 22) | (0 << 12) | 0


def make_version(major: int, minor: int, patch: int = 0) -> int:
    return (major << 22) | (minor << 12) | patch


class Platform(CLObject):
    profile = "FULL_PROFILE"
    version = f"OpenCL 3.0 vkcl {__version__}"
    numeric_version = CL_VERSION_3_0
    name = NAME
    vendor = VENDOR
    icd_suffix = ICD_SUFFIX
    # clock_gettime(CLOCK_MONOTONIC) resolution, in nanoseconds
    host_timer_resolution = max(1, round(time.get_clock_info("monotonic").resolution * 1e9))

    def __init__(self, physical_devices) -> None:
        super().__init__()
        from vkcl.core.device import Device
        self.devices = [Device(self, pd) for pd in physical_devices]

    @property
    def extensions_with_version(self) -> list[tuple[str, int]]:
        """cl_khr_icd plus the extensions every device has."""
        common = None
        for d in self.devices:
            names = dict(d.extensions_with_version)
            common = names if common is None else {k: v for k, v in common.items() if k in names}
        out = [("cl_khr_icd", make_version(1, 0, 0))]
        return out + sorted((common or {}).items())

    @property
    def extensions(self) -> str:
        return " ".join(name for name, _ in self.extensions_with_version)

    def retain(self) -> None:  # platforms are not reference counted
        pass

    def release(self) -> bool:
        return False


_platform: Platform | None = None
_lock = threading.Lock()


def platform() -> Platform | None:
    """The platform, found on first use; None when no Vulkan device is usable."""
    global _platform
    with _lock:
        if _platform is None:
            try:
                from vkcl.vulkan.instance import instance
            except OSError as e:  # no libvulkan
                _log.warning("Vulkan loader not found: %s", e)
                return None
            inst = instance()
            if inst is None or not inst.physical_devices:
                return None
            _platform = Platform(inst.physical_devices)
        return _platform
