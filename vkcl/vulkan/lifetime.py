"""Vulkan objects destroyed with the Python object that owns them.

Nothing that can still use a Vulkan object outlives its owner: a pending command holds its
kernel, queue and buffers (and through them pipelines, layouts, modules, pools), so when the
owner is garbage the GPU is done with the object. VkDevices are never destroyed (one per
physical device for the process), so a device handle is always valid here.
"""
from __future__ import annotations

import weakref

from vkcl.vulkan.bindings import vk


# Vulkan objects alive now, by the name of the call that destroys them: tests check that a
# workload's create/release cycles leave these counts where they were.
_live: dict[str, int] = {}


def live_objects() -> dict[str, int]:
    return {k: v for k, v in _live.items() if v}


def created(kind: str, n: int = 1) -> None:
    _live[kind] = _live.get(kind, 0) + n


def destroyed_with(owner, destroy: str, device, *handles) -> weakref.finalize:
    """Call `destroy(device, handle, NULL)` (`destroy`: the name of a vkDestroy* function) for
    each handle once `owner` is garbage, or when the returned finalizer is called (it runs once).
    Not at interpreter exit: the driver may be going too, and vkcl's exit handler settles the
    GPU without it."""
    fin = weakref.finalize(owner, destroy_all, destroy, device, handles)
    fin.atexit = False
    created(destroy, len(handles))
    return fin


def destroy_all(destroy: str, device, handles) -> None:
    """`destroy(device, handle, NULL)` for each of `handles` (any iterable of them)."""
    fn, n = getattr(vk.lib, destroy), 0
    for h in handles:
        fn(device, h, vk.ffi.NULL)
        n += 1
    created(destroy, -n)
