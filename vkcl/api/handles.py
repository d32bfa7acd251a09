"""The handle table: C handles (struct vkcl_handle *) to the Python objects they stand for.

A handle is a small C struct whose first member is the dispatch table; the table maps its
address to the object in O(1) and never dereferences a pointer the application passed,
so a foreign or stale handle is simply not found.

An event C made (icd/fast_events.c) is not in the table until something needs Python's Event
for it: a lookup that misses asks the fast path to adopt it (vkcl/core/fastpath.py), and the
Event then keeps C's handle, whose slot C frees when the handle is dropped.
"""
from __future__ import annotations

from vkcl.core import fastpath
from vkcl.errors import CLError

ffi = None  # the ICD module's cffi instance, bound at start-up
_objects: dict = {}  # void * handle -> object: cdata pointers hash and compare by address
_owners: dict = {}  # void * handle -> the cffi allocation it points to (None: a C event's slot)
NULL = None
_DISPATCH = None
MAGIC = 0x6C636B76  # "vkcl"


_free_c_event = None


def bind(ffi_, lib) -> None:
    global ffi, NULL, _DISPATCH, _free_c_event
    ffi, NULL, _DISPATCH, _free_c_event = ffi_, ffi_.NULL, lib.vkcl_dispatch_table(), lib.vkcl_cev_free
    fastpath.register_adopted = adopted


def new(obj):
    """Give `obj` a C handle (stored as obj.handle) and return it."""
    owner = ffi.new("vkcl_handle_t *", (_DISPATCH, MAGIC))
    h = ffi.cast("void *", owner)
    _owners[h] = owner
    _objects[h] = obj
    obj.handle = h
    return h


def adopted(obj, h) -> None:
    """Python's Event for the C event at `h` takes its handle."""
    _owners[h] = None
    _objects[h] = obj
    obj.handle = h


def drop(obj) -> None:
    """Forget obj's handle: called when its reference count reaches zero."""
    h = obj.handle
    if h is not None and _objects.pop(h, None) is obj:
        obj.handle = None
        owner = _owners.pop(h)
        if owner is None:
            _free_c_event(h)
        else:
            owner.magic = 0


def release(obj) -> None:
    """clReleaseXxx: drop one reference, and the handle with the last one."""
    if obj.release():
        drop(obj)


def _lookup(ptr):
    """The object behind ptr, adopting a C event on the way; None when there is none."""
    obj = _objects.get(ptr)
    if obj is None and ptr != NULL:
        fastpath.adopt_event(ptr)  # registers it (or another thread did meanwhile)
        obj = _objects.get(ptr)
    return obj


def get(ptr, cls, code: int):
    """The object of type cls behind ptr, or CLError(code)."""
    obj = _lookup(ptr)
    if obj is None or not isinstance(obj, cls):
        raise CLError(code)
    return obj


def find(ptr):
    """The object behind ptr of any type, or None."""
    return _lookup(ptr)


def get_list(count: int, ptrs, cls, code: int) -> list:
    """Resolve an array of `count` handles; a NULL array with count > 0 is CLError(code)."""
    if ptrs == NULL:
        raise CLError(code)
    return [get(ptrs[i], cls, code) for i in range(count)]
