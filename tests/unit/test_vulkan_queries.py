"""Timestamp query pairs (vkcl/vulkan/commands.py, QueryPool) on the machine's Vulkan device:
written by the GPU, read back, and reset on the host when they come back (hostQueryReset), so
that no command before a profiled one has to reset them."""
from __future__ import annotations

import pytest
import vulkan as vk

from vkcl.vulkan import commands as vkc

lib, ffi = vk.lib, vk.ffi


def _status(pool: vkc.QueryPool, pair: int) -> int:
    """vkGetQueryPoolResults of the pair, without waiting: VK_SUCCESS once written, VK_NOT_READY
    while reset (unavailable)."""
    out = ffi.new("uint64_t[2]")
    return lib.vkGetQueryPoolResults(pool.device, pool.handle, 2 * pair, 2, 16, out, 8, vk.VK_QUERY_RESULT_64_BIT)


def _run(dev, record) -> None:
    """Record into one command buffer, submit it and wait."""
    pool = vkc.CommandPool(dev)
    timeline = vkc.Timeline(dev)
    try:
        cb = pool.begin()
        record(cb)
        vkc.end(cb)
        vkc.submit(dev, [cb], [], timeline, 1)
        assert timeline.wait(1, 10 * 10**9)
    finally:
        timeline.destroy()
        pool.destroy()


def test_pairs_come_back_reset_on_the_host(dev):
    pool = vkc.QueryPool(dev, pairs=4)
    try:
        if not pool.host_reset:
            pytest.skip("the device cannot reset queries on the host")
        taken = [pool.take() for _ in range(4)]
        assert sorted(taken) == [0, 1, 2, 3] and pool.take() is None
        assert all(_status(pool, p) == vk.VK_NOT_READY for p in taken)  # reset when the pool is made

        def record(cb):
            for p in taken:
                pool.reset(cb, p)  # records nothing: the pool resets on the host
                pool.write(cb, p, False)
                vkc.full_barrier(cb)
                pool.write(cb, p, True)
        for round_ in range(3):  # the same pairs again: each time written afresh
            _run(dev, record)
            for p in taken:
                assert _status(pool, p) == vk.VK_SUCCESS
                start, end = pool.read_ns(p)
                assert 0 < start <= end, (round_, p, start, end)
                pool.give_back(p)
                assert _status(pool, p) == vk.VK_NOT_READY  # reset as it came back
            taken = [pool.take() for _ in range(4)]
    finally:
        pool.destroy()


def test_lent_pairs_go_back_to_their_owner(dev):
    pool = vkc.QueryPool(dev, pairs=8)
    try:
        back = []
        first = pool.lend(3, back.append)
        assert first == 5
        mine = [pool.take() for _ in range(5)]
        assert sorted(mine) == [0, 1, 2, 3, 4] and pool.take() is None
        pool.give_back(6)
        pool.give_back(2)
        assert back == [6] and pool.take() == 2
    finally:
        pool.destroy()
