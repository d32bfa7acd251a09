"""Reference counting shared by every OpenCL object."""
from __future__ import annotations

import threading

from vkcl import log

_log = log.get("refcount")
# One lock for every object's count: objects are made on every enqueue (events), and a
# lock each would cost more than the rare contention on a shared one.
_REF_LOCK = threading.Lock()


class CLObject:
    """An OpenCL object: `refcount` is the application's count (CL_*_REFERENCE_COUNT).

    When it reaches zero, `_last_release` runs (destructor callbacks, freeing); the api
    layer then drops the handle. Internal users hold plain Python references, so Vulkan
    objects live as long as pending work needs them.
    """

    handle = None  # set by vkcl.api.handles

    _ref_lock = _REF_LOCK

    def __init__(self) -> None:
        self.refcount = 1

    def retain(self) -> None:
        with self._ref_lock:
            self.refcount += 1
            n = self.refcount
        _log.debug("retain %s -> %d", self, n)

    def release(self) -> bool:
        """Drop one reference; True when this was the last one."""
        with self._ref_lock:
            self.refcount -= 1
            n = self.refcount
        _log.debug("release %s -> %d", self, n)
        if n == 0:
            self._last_release()
            return True
        return False

    def _last_release(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {id(self):#x}>"
