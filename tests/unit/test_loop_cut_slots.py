"""vkcl.core.loop_cuts: the slots that batches capture llvmpipe's loop-cut flag into (one per
open batch, never two batches at once, more blocks as more batches are open), with a stand-in
for the device's allocator (tests/icd/test_long_loops.py runs the capture on lavapipe)."""
from __future__ import annotations

import ctypes

import pytest

from vkcl.compiler import spirv_loop_cuts
from vkcl.core import loop_cuts


class FakeAllocation:
    def __init__(self, size: int, buffer: int):
        self.memory = ctypes.create_string_buffer(size)
        self.buffer, self.offset, self.size = buffer, 64, size
        self.host_ptr = loop_cuts.ffi.cast("void *", ctypes.addressof(self.memory))
        self.address = 0x1000_0000 * buffer + 64
        self.coherent = True


class FakeAllocator:
    def __init__(self):
        self.made: list[FakeAllocation] = []

    def allocate(self, size, kind):
        self.made.append(FakeAllocation(size, len(self.made) + 1))
        return self.made[-1]


@pytest.fixture
def word(monkeypatch):
    allocator = FakeAllocator()
    monkeypatch.setattr(loop_cuts, "allocator_for", lambda vkdev: allocator)
    w = loop_cuts.LoopWord(object())
    w.fake = allocator
    return w


def test_the_word_holds_the_flag_the_probe_trips_and_a_zero(word):
    words = ctypes.cast(ctypes.addressof(word.alloc.memory), ctypes.POINTER(ctypes.c_uint32))
    assert [words[i] for i in range(4)] == [0, spirv_loop_cuts.PROBE_TRIPS, 0, 0]
    spec = word.spec()
    assert spec[spirv_loop_cuts.SPEC_WORD[0]] | spec[spirv_loop_cuts.SPEC_WORD[1]] << 32 == word.alloc.address


def test_slots_are_distinct_while_taken_and_reused_once_given_back(word):
    n = 3 * loop_cuts.SLOTS_PER_BLOCK + 5     # more batches open at once than one block holds
    slots = [word.take_slot() for _ in range(n)]
    places = {(s.buffer, s.offset) for s in slots}
    assert len(places) == n and len(word.fake.made) == 1 + 4   # the word, then 4 blocks of slots
    assert all(s.offset % 4 == 0 for s in slots)
    for s in slots[:10]:
        s.host[0] = 1                      # as a batch's capture of a set flag
    assert all(loop_cuts.LoopWord.cut(s) for s in slots[:10])
    assert not any(loop_cuts.LoopWord.cut(s) for s in slots)   # read once: cleared
    slots[3].host[0] = 1
    word.give_back(slots[3])               # a slot comes back clear, whatever it held
    again = word.take_slot()
    assert (again.buffer, again.offset) == (slots[3].buffer, slots[3].offset)
    assert not loop_cuts.LoopWord.cut(again)
    assert len(word.fake.made) == 5
