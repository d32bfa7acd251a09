"""vkcl.core.bounds: the table a checked kernel reads, and the report of what it recorded
(the message goes to the context's pfn_notify and the launch fails with CL_OUT_OF_RESOURCES)."""
import struct

import pytest

from vkcl._gen import cl
from vkcl.compiler import spirv_bounds as sb
from vkcl.core import bounds
from vkcl.vulkan import commands as vkc


class _Alloc:
    def __init__(self, size):
        self.memory = vkc.ffi.new("char[]", size)
        self.host_ptr, self.address, self.coherent = self.memory, 0x10000, True


class _Allocator:
    def allocate(self, size, kind):
        self.a = _Alloc(size)
        return self.a

    def free(self, a):
        self.freed = a


class _Context:
    def __init__(self):
        self.messages = []

    def report(self, message, private=b""):
        self.messages.append(message)


def test_table_layout_and_fault_report():
    allocator = _Allocator()
    table = bounds.BoundsTable(allocator, [(0x1000, 0x2000, "argument 0 'a'"), (0x8000, 0x8000, "empty"),
                                           (0x9000, 0x9100, "argument 2 'c'")])
    raw = bytes(vkc.ffi.buffer(allocator.a.host_ptr, sb.RANGES_AT + 32))
    assert struct.unpack_from("<II", raw, 0) == (0, 2)  # the empty range is left out
    assert struct.unpack_from("<4Q", raw, sb.RANGES_AT) == (0x1000, 0x2000, 0x9000, 0x9100)
    context = _Context()
    bounds.raise_if_faulted(table, "k", context)          # no fault: nothing said
    assert context.messages == []
    memory = vkc.ffi.buffer(allocator.a.host_ptr, sb.SCRATCH_AT)
    struct.pack_into("<I", memory, 0, 3)
    struct.pack_into("<QIIII", memory, sb.RECORDS_AT, 0x9104, 2, 7, 1, 0)
    struct.pack_into("<QIIII", memory, sb.RECORDS_AT + sb.RECORD_SIZE, 0xff8, 0, 3, 0, 0)
    with pytest.raises(bounds.KernelFault) as e:
        bounds.raise_if_faulted(table, "k", context)
    assert e.value.code == cl.CL_OUT_OF_RESOURCES
    [message] = context.messages
    assert "kernel 'k': 3 out-of-bounds" in message
    assert "access 2 by work-item (7, 1, 0): argument 2 'c': byte offset 260 (its size is 256 bytes)" in message
    assert "access 0 by work-item (3, 0, 0): argument 0 'a': byte offset -8" in message
    table.free()
    assert allocator.freed is not None and table.alloc is None
