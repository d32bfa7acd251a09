"""Which Vulkan memory type each kind of vkcl memory lives in: pure functions of the device's tables.

Kept apart from the allocator so the choice can be tested against other devices' tables
(an NVIDIA H200's device-local memory is not host-visible; lavapipe has one all-purpose type).
"""
from __future__ import annotations

import enum

DEVICE_LOCAL = 0x1
HOST_VISIBLE = 0x2
HOST_COHERENT = 0x4
HOST_CACHED = 0x8
LAZILY_ALLOCATED = 0x10
PROTECTED = 0x20
DEVICE_COHERENT_AMD = 0x40
DEVICE_UNCACHED_AMD = 0x80
_NEVER = LAZILY_ALLOCATED | PROTECTED
_AVOID = DEVICE_COHERENT_AMD | DEVICE_UNCACHED_AMD


class MemoryKind(enum.Enum):
    """What a range of memory is for."""

    DEVICE = 0    # cl_mem data: device-local (host-visible too on UMA devices such as lavapipe)
    STAGING = 1   # host -> device copies: host-visible and coherent, write-combined is fine
    READBACK = 2  # device -> host copies: host-visible, host-cached when the device has it

    # Members are singletons: identity hashing keeps dict look-ups on the hot path in C.
    __hash__ = object.__hash__


def _penalty(kind: MemoryKind, flags: int, uma: bool) -> int | None:
    """How poorly a type with `flags` suits `kind` (0 = ideal); None if it cannot serve it."""
    local, visible = flags & DEVICE_LOCAL, flags & HOST_VISIBLE
    coherent, cached = flags & HOST_COHERENT, flags & HOST_CACHED
    if kind is MemoryKind.DEVICE:
        if not local:
            return None
        if uma:  # everything is system memory: take the type that is also mapped, coherent, cached
            p = (0 if visible else 8) + (0 if coherent else 2) + (0 if cached else 1)
        else:    # a discrete GPU: pure VRAM, not the small or slow BAR window
            p = 8 if visible else 0
    elif kind is MemoryKind.STAGING:
        if not (visible and coherent):
            return None
        p = (8 if local and not uma else 0) + (1 if cached else 0)
    else:
        if not visible:
            return None
        # Host reads of uncached (write-combined) or BAR memory are an order of magnitude slower.
        p = (0 if cached else 4) + (0 if coherent else 2) + (8 if local and not uma else 0)
    return p + (16 if flags & _AVOID else 0)


def candidate_types(kind: MemoryKind, memory_types: list, memory_heaps: list, allowed_bits: int,
                    uma: bool) -> list[int]:
    """Memory type indices that can hold `kind`, best first.

    memory_types: [(propertyFlags, heapIndex)], memory_heaps: [(size, flags)], allowed_bits:
    VkMemoryRequirements.memoryTypeBits of the buffers the allocator creates.
    """
    ranked = []
    for i, (flags, heap) in enumerate(memory_types):
        if not allowed_bits >> i & 1 or flags & _NEVER:
            continue
        p = _penalty(kind, flags, uma)
        if p is not None:
            ranked.append((p, -memory_heaps[heap][0], i))
    if not ranked and kind is MemoryKind.DEVICE:
        # No device-local type the buffer may use (not seen in practice): any memory will do.
        ranked = [(0, -memory_heaps[heap][0], i) for i, (flags, heap) in enumerate(memory_types)
                  if allowed_bits >> i & 1 and not flags & _NEVER]
    return [i for _, _, i in sorted(ranked)]


def import_type(memory_types: list, allowed_bits: int) -> int | None:
    """The type to import host memory as: among `allowed_bits`, host-coherent ones only (imported
    memory is not mapped, so it cannot be flushed), cached first."""
    best = None
    for i, (flags, _) in enumerate(memory_types):
        if allowed_bits >> i & 1 and flags & HOST_COHERENT and not flags & _NEVER:
            score = (0 if flags & HOST_CACHED else 1) + (2 if flags & _AVOID else 0)
            if best is None or score < best[0]:
                best = (score, i)
    return None if best is None else best[1]
