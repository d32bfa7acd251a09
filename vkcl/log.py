"""Logging: one logger per group (vkcl.api, vkcl.refcount, vkcl.vk, vkcl.compiler, ...).

Warnings and errors always reach stderr; VKCL_LOG=api,vk (or all) turns on debug output of
the named groups.
"""
from __future__ import annotations

import logging
import sys

from vkcl import config

GROUPS = ("api", "refcount", "vk", "compiler", "config", "queue")


def setup() -> None:
    root = logging.getLogger("vkcl")
    if getattr(root, "_vkcl_configured", False):
        return
    root._vkcl_configured = True  # type: ignore[attr-defined]
    path = config.get("log_file")
    handler = logging.FileHandler(path) if path else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("vkcl[%(name)s] %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    root.propagate = False
    wanted = {g.strip() for g in config.get("log").split(",") if g.strip()}
    for group in GROUPS:
        if "all" in wanted or group in wanted:
            logging.getLogger(f"vkcl.{group}").setLevel(logging.DEBUG)
    if "all" in wanted or "config" in wanted:
        logging.getLogger("vkcl.config").debug("effective settings:\n%s", config.describe())


def get(group: str) -> logging.Logger:
    return logging.getLogger(f"vkcl.{group}")
