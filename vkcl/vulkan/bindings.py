"""The `vulkan` bindings package vkcl drives Vulkan with, as `vk`.

Inside the ICD, vkcl runs in its host's interpreter (pyopencl's, say), whose own modules must
not change because of vkcl, nor vkcl's because of them: the host may have no `vulkan` package,
or another version of it. So there vkcl loads the copy from its own packages
(`vkcl.DEPENDENCY_PATHS`, set by the ICD's start-up code) and then takes it out of
`sys.modules` again, putting back whatever the host had: the host's `import vulkan` is
unaffected, and vkcl keeps its module objects. (The bindings import nothing lazily, so they work
under a name no longer in `sys.modules`.) Imported as an ordinary package (tests, tools, the
compiler worker), it is the ordinary `import vulkan`.
"""
from __future__ import annotations

import sys

import vkcl

_PACKAGE = "vulkan"


def _ours(name: str) -> bool:
    return name == _PACKAGE or name.startswith(_PACKAGE + ".")


def _load_private(paths: list[str]):
    hosts = {name: sys.modules.pop(name) for name in [n for n in sys.modules if _ours(n)]}
    saved_path = sys.path[:]
    sys.path[:0] = paths
    try:
        import vulkan
        return vulkan
    finally:
        sys.path[:] = saved_path
        for name in [n for n in sys.modules if _ours(n)]:
            del sys.modules[name]
        sys.modules.update(hosts)


_paths = getattr(vkcl, "DEPENDENCY_PATHS", None)
if _paths is None:
    import vulkan as vk
else:
    vk = _load_private(list(_paths))
