"""Start-up inside the ICD: runs once, from the library's embedded init code."""
from __future__ import annotations


def start(ffi, lib, build_info: dict) -> None:
    from vkcl import log
    from vkcl.api import registry
    from vkcl._gen import thunks

    log.setup()
    registry.bind(ffi, lib)
    thunks.install(ffi, lib, registry.implementation)
    lib.vkcl_set_ready(1)
