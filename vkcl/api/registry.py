"""Binds each OpenCL entry point to its implementation in vkcl.api, or to its spec error.

Entries vkcl does not implement yet return the error listed in NOT_IMPLEMENTED (default
CL_INVALID_OPERATION); docs/status.md lists them, and a test keeps the two in step.
"""
from __future__ import annotations

import importlib
from typing import Callable

from vkcl import log, native, trace
from vkcl._gen import cl
from vkcl._gen.cl_api import ENTRIES
from vkcl.api import handles
from vkcl.errors import CLError, error_name

API_MODULES = ("platform", "device", "context", "memory", "queue", "event", "transfer", "program", "kernel", "ndrange")

# Spec errors for entries that have no implementation yet, where CL_INVALID_OPERATION is not it.
NOT_IMPLEMENTED: dict[str, int] = {}

_api_log = log.get("api")


def implementations() -> dict[str, Callable]:
    found = {}
    names = {e[2]: e[1] for e in ENTRIES}
    for mod in API_MODULES:
        m = importlib.import_module(f"vkcl.api.{mod}")
        for attr, fn in vars(m).items():
            if attr in names and callable(fn) and getattr(fn, "__module__", "") == m.__name__:
                found[names[attr]] = fn
    return found


_IMPLEMENTED: dict[str, Callable] = {}


def bind(ffi, lib) -> None:
    native.bind(ffi, lib)
    handles.bind(ffi, lib)
    _IMPLEMENTED.update(implementations())


def _not_implemented(name: str) -> Callable:
    code = NOT_IMPLEMENTED.get(name, cl.CL_INVALID_OPERATION)

    def entry(*args):
        raise CLError(code, f"{name} is not implemented by vkcl yet")

    entry.__name__ = name
    return entry


def _traced(name: str, fn: Callable) -> Callable:
    def entry(*args):
        try:
            result = fn(*args)
        except CLError as e:
            _api_log.debug("%s -> %s", name, error_name(e.code))
            raise
        _api_log.debug("%s -> CL_SUCCESS", name)
        return result

    return entry


def implementation(name: str) -> Callable:
    fn = _IMPLEMENTED.get(name) or _not_implemented(name)
    fn = _traced(name, fn) if _api_log.isEnabledFor(10) else fn
    return trace.api(name, fn) if trace.ENABLED else fn
