"""A context: devices, each with its shared VkDevice, and the application's callbacks."""
from __future__ import annotations

from typing import Callable

from vkcl import log
from vkcl.core.object import CLObject
from vkcl.vulkan.device import logical_device

_log = log.get("api")


class Context(CLObject):
    def __init__(self, devices: list, properties: list[int], interop_user_sync: bool,
                 notify: Callable[[str, bytes], None] | None):
        super().__init__()
        self.devices = devices
        self.properties = properties  # as the application passed them, terminated (or [])
        self.interop_user_sync = interop_user_sync
        self.notify = notify
        # A context may span several devices: each keeps its own VkDevice.
        self.vk = {d: logical_device(d.physical) for d in devices}
        self._destructor_callbacks: list[Callable[[], None]] = []

    def report(self, message: str, private: bytes = b"") -> None:
        """An error the application should hear about through its pfn_notify."""
        _log.debug("context notify: %s", message)
        if self.notify is not None:
            self.notify(message, private)

    def add_destructor_callback(self, fn: Callable[[], None]) -> None:
        self._destructor_callbacks.append(fn)

    def _last_release(self) -> None:
        # Spec: called in the reverse order of registration.
        for fn in reversed(self._destructor_callbacks):
            fn()
        self._destructor_callbacks.clear()
