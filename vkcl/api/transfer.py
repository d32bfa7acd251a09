"""Buffer commands: read, write, copy, fill (and their rect forms), map, unmap, migrate."""
from __future__ import annotations

from vkcl import native
from vkcl._gen import cl
from vkcl.api import handles
from vkcl.api.event import finish_blocking, give_event, release_event, wait_list
from vkcl.api.memory import resolve as resolve_mem
from vkcl.api.queue import resolve as resolve_queue
from vkcl.core import commands as cmds, fastpath
from vkcl.core.event import Event
from vkcl.core.memory import MemObject, direct_host_access
from vkcl.errors import CLError


def _mem(q, ptr) -> MemObject:
    mem = resolve_mem(ptr)
    if mem.context is not q.context:
        raise CLError(cl.CL_INVALID_CONTEXT, "memory object of another context")
    if mem.parent is not None and mem.origin % (q.device.mem_base_addr_align // 8):
        raise CLError(cl.CL_MISALIGNED_SUB_BUFFER_OFFSET)
    return mem


def _host_access(mem: MemObject, reading: bool) -> None:
    forbidden = cl.CL_MEM_HOST_NO_ACCESS | (cl.CL_MEM_HOST_WRITE_ONLY if reading else cl.CL_MEM_HOST_READ_ONLY)
    if mem.flags & forbidden:
        raise CLError(cl.CL_INVALID_OPERATION, "the buffer's host access flags forbid this")


def _range(mem: MemObject, offset: int, size: int) -> None:
    if size == 0 or offset + size > mem.size:
        raise CLError(cl.CL_INVALID_VALUE, f"region [{offset}, {offset + size}) of a {mem.size}-byte buffer")


def _submit(q, cmd, waits, blocking: bool, event) -> Event:
    ev = q.enqueue(cmd, waits)
    give_event(ev, event)
    if blocking:
        q.flush_for(ev)
        finish_blocking(ev)
    return ev


def _direct(q, mem, waits) -> bool:
    """A transfer the host can do itself, now: nothing is pending and the bytes are
    host-visible. A non-blocking one may complete before the call returns too."""
    return not waits and q.idle() and direct_host_access(mem, q.vk)


def _host_copy(q, command_type: int, dst, src, size: int, event) -> None:
    """The transfer done by the host at once; its event (made first, so that profiling times
    cover the copy) is complete."""
    ev = Event(q.context, q, command_type)
    ev.run_on_host(lambda: native.host_copy(handles.ffi, dst, src, size))
    give_event(ev, event)


def _prepare_fast(q, mem) -> None:
    """After a read or write on this path: C may do the next ones (core/fastpath.py)."""
    if q.fast is not None and (mem.fast_buffer is None or not q.fast.staged):
        fastpath.prepare_transfer(q, mem)


def enqueue_read_buffer(command_queue, buffer, blocking_read, offset, size, ptr, num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    mem = _mem(q, buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    _range(mem, offset, size)
    if ptr == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "ptr is NULL")
    _host_access(mem, True)
    if _direct(q, mem, waits):
        _host_copy(q, cl.CL_COMMAND_READ_BUFFER, ptr, mem.region(q.vk).host_ptr + offset, size, event)
    else:
        _submit(q, cmds.ReadBuffer(q.vk, mem, [(0, offset, size)], ptr), waits, blocking_read, event)
    _prepare_fast(q, mem)


def enqueue_write_buffer(command_queue, buffer, blocking_write, offset, size, ptr, num_events, event_wait_list,
                         event):
    q = resolve_queue(command_queue)
    mem = _mem(q, buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    _range(mem, offset, size)
    if ptr == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "ptr is NULL")
    _host_access(mem, False)
    if _direct(q, mem, waits):
        _host_copy(q, cl.CL_COMMAND_WRITE_BUFFER, mem.region(q.vk).host_ptr + offset, ptr, size, event)
    else:
        _submit(q, cmds.WriteBuffer(q.vk, mem, [(0, offset, size)], ptr), waits, blocking_write, event)
    _prepare_fast(q, mem)


def _overlap(a: MemObject, a_off: int, b: MemObject, b_off: int, size: int) -> bool:
    if a.root is not b.root:
        return False
    x, y = a.origin + a_off, b.origin + b_off
    return x < y + size and y < x + size


def enqueue_copy_buffer(command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, num_events,
                        event_wait_list, event):
    q = resolve_queue(command_queue)
    src, dst = _mem(q, src_buffer), _mem(q, dst_buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    _range(src, src_offset, size)
    _range(dst, dst_offset, size)
    if _overlap(src, src_offset, dst, dst_offset, size):
        raise CLError(cl.CL_MEM_COPY_OVERLAP)
    _submit(q, cmds.CopyBuffer(q, src, dst, [(src_offset, dst_offset, size)]), waits, False, event)


def enqueue_fill_buffer(command_queue, buffer, pattern, pattern_size, offset, size, num_events, event_wait_list,
                        event):
    q = resolve_queue(command_queue)
    mem = _mem(q, buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    if pattern == handles.NULL or pattern_size not in (1, 2, 4, 8, 16, 32, 64, 128):
        raise CLError(cl.CL_INVALID_VALUE, "pattern must be 1, 2, 4, ..., 128 bytes")
    if offset % pattern_size or size % pattern_size:
        raise CLError(cl.CL_INVALID_VALUE, "offset and size must be multiples of the pattern size")
    _range(mem, offset, size)
    data = bytes(handles.ffi.buffer(handles.ffi.cast("char *", pattern), pattern_size))
    _submit(q, cmds.FillBuffer(q, mem, data, offset, size), waits, False, event)


# --- rectangles ------------------------------------------------------------------------------

def _triple(ptr, name: str) -> tuple[int, int, int]:
    if ptr == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, f"{name} is NULL")
    return int(ptr[0]), int(ptr[1]), int(ptr[2])


def _pitches(region, row: int, slice_: int) -> tuple[int, int]:
    row = row or region[0]
    slice_ = slice_ or region[1] * row
    if row < region[0] or slice_ < region[1] * row or slice_ % row:
        raise CLError(cl.CL_INVALID_VALUE, "invalid row or slice pitch")
    return row, slice_


def _rect_end(origin, region, row: int, slice_: int) -> int:
    return (origin[2] + region[2] - 1) * slice_ + (origin[1] + region[1] - 1) * row + origin[0] + region[0]


def rect_rows(a_origin, a_row, a_slice, b_origin, b_row, b_slice, region) -> list[tuple[int, int, int]]:
    """(a offset, b offset, bytes) for each row of a 3-D region, merged where contiguous."""
    w, h, d = region
    rows = []
    for z in range(d):
        for y in range(h):
            a_off = (a_origin[2] + z) * a_slice + (a_origin[1] + y) * a_row + a_origin[0]
            b_off = (b_origin[2] + z) * b_slice + (b_origin[1] + y) * b_row + b_origin[0]
            if rows and rows[-1][0] + rows[-1][2] == a_off and rows[-1][1] + rows[-1][2] == b_off:
                rows[-1] = (rows[-1][0], rows[-1][1], rows[-1][2] + w)
            else:
                rows.append((a_off, b_off, w))
    return rows


def _rect_args(mem, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
               host_slice_pitch, ptr):
    bo, ho, rg = _triple(buffer_origin, "buffer_origin"), _triple(host_origin, "host_origin"), _triple(region, "region")
    if 0 in rg:
        raise CLError(cl.CL_INVALID_VALUE, "empty region")
    brow, bslice = _pitches(rg, buffer_row_pitch, buffer_slice_pitch)
    hrow, hslice = _pitches(rg, host_row_pitch, host_slice_pitch)
    if _rect_end(bo, rg, brow, bslice) > mem.size:
        raise CLError(cl.CL_INVALID_VALUE, "region outside the buffer")
    if ptr == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE, "ptr is NULL")
    # (host offset, buffer offset, size) rows
    return rect_rows(ho, hrow, hslice, bo, brow, bslice, rg)


def _host_rect(reading: bool, command_queue, buffer, blocking, buffer_origin, host_origin, region,
               buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events,
               event_wait_list, event):
    """clEnqueueReadBufferRect and clEnqueueWriteBufferRect: one row of copying per region row."""
    q = resolve_queue(command_queue)
    mem = _mem(q, buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    rows = _rect_args(mem, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch,
                      host_row_pitch, host_slice_pitch, ptr)
    _host_access(mem, reading)
    if reading:
        cmd = cmds.ReadBuffer(q.vk, mem, rows, ptr, cl.CL_COMMAND_READ_BUFFER_RECT)
    else:
        cmd = cmds.WriteBuffer(q.vk, mem, rows, ptr, cl.CL_COMMAND_WRITE_BUFFER_RECT)
    _submit(q, cmd, waits, blocking, event)


def enqueue_read_buffer_rect(command_queue, buffer, blocking_read, buffer_origin, host_origin, region,
                             buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events,
                             event_wait_list, event):
    _host_rect(True, command_queue, buffer, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch,
               buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events, event_wait_list, event)


def enqueue_write_buffer_rect(command_queue, buffer, blocking_write, buffer_origin, host_origin, region,
                              buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events,
                              event_wait_list, event):
    _host_rect(False, command_queue, buffer, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch,
               buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events, event_wait_list, event)


def enqueue_copy_buffer_rect(command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region, src_row_pitch,
                             src_slice_pitch, dst_row_pitch, dst_slice_pitch, num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    src, dst = _mem(q, src_buffer), _mem(q, dst_buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    so, do, rg = _triple(src_origin, "src_origin"), _triple(dst_origin, "dst_origin"), _triple(region, "region")
    if 0 in rg:
        raise CLError(cl.CL_INVALID_VALUE, "empty region")
    srow, sslice = _pitches(rg, src_row_pitch, src_slice_pitch)
    drow, dslice = _pitches(rg, dst_row_pitch, dst_slice_pitch)
    if _rect_end(so, rg, srow, sslice) > src.size or _rect_end(do, rg, drow, dslice) > dst.size:
        raise CLError(cl.CL_INVALID_VALUE, "region outside a buffer")
    if src.root is dst.root:
        if (srow, sslice) != (drow, dslice) and src is dst:
            raise CLError(cl.CL_INVALID_VALUE, "same buffer: pitches must match")
        if _rect_overlap(src.origin, so, srow, sslice, dst.origin, do, drow, dslice, rg):
            raise CLError(cl.CL_MEM_COPY_OVERLAP)
    rows = rect_rows(so, srow, sslice, do, drow, dslice, rg)
    _submit(q, cmds.CopyBuffer(q, src, dst, rows, cl.CL_COMMAND_COPY_BUFFER_RECT), waits, False, event)


def _rect_overlap(src_base, so, srow, sslice, dst_base, do, drow, dslice, rg) -> bool:
    """Do two rectangles of one buffer share a byte? (CL_MEM_COPY_OVERLAP)

    Each rectangle has its own pitches: two sub-buffers of one buffer may be copied between
    with different ones. Rows are in increasing address order (a slice pitch holds all of a
    slice's rows), so one merge-like sweep over both row lists answers in linear time."""
    a = [(src_base + o, n) for o, _, n in rect_rows(so, srow, sslice, so, srow, sslice, rg)]
    b = [(dst_base + o, n) for o, _, n in rect_rows(do, drow, dslice, do, drow, dslice, rg)]
    if a[0][0] >= b[-1][0] + b[-1][1] or b[0][0] >= a[-1][0] + a[-1][1]:
        return False
    i = j = 0
    while i < len(a) and j < len(b):
        (x, n), (y, m) = a[i], b[j]
        if x < y + m and y < x + n:
            return True
        if x + n <= y + m:
            i += 1
        else:
            j += 1
    return False


# --- map, unmap, migrate ----------------------------------------------------------------------

MAP_FLAGS = cl.CL_MAP_READ | cl.CL_MAP_WRITE | cl.CL_MAP_WRITE_INVALIDATE_REGION


def enqueue_map_buffer(command_queue, buffer, blocking_map, map_flags, offset, size, num_events, event_wait_list,
                       event):
    q = resolve_queue(command_queue)
    mem = _mem(q, buffer)
    waits = wait_list(q.context, num_events, event_wait_list)
    if map_flags & ~MAP_FLAGS or (map_flags & cl.CL_MAP_WRITE_INVALIDATE_REGION and
                                  map_flags & (cl.CL_MAP_READ | cl.CL_MAP_WRITE)):
        raise CLError(cl.CL_INVALID_VALUE, f"invalid map flags {map_flags:#x}")
    _range(mem, offset, size)
    if map_flags & cl.CL_MAP_READ:
        _host_access(mem, True)
    if map_flags & (cl.CL_MAP_WRITE | cl.CL_MAP_WRITE_INVALIDATE_REGION):
        _host_access(mem, False)
    cmd = cmds.MapBuffer(q.vk, mem, map_flags, offset, size)
    if waits or not (_at_once(q, cmd, event) or blocking_map and _fast_map_copy(q, mem, cmd, offset, True, event)):
        _submit(q, cmd, waits, blocking_map, event)
        _prepare_fast(q, mem)
    return cmd.pointer


def enqueue_unmap_mem_object(command_queue, memobj, mapped_ptr, num_events, event_wait_list, event):
    q = resolve_queue(command_queue)
    mem = _mem(q, memobj)
    waits = wait_list(q.context, num_events, event_wait_list)
    mapping = mem.take_mapping(int(handles.ffi.cast("uintptr_t", mapped_ptr)))
    if mapping is None:
        raise CLError(cl.CL_INVALID_VALUE, "pointer not mapped from this memory object")
    cmd = cmds.UnmapBuffer(q.vk, mem, mapping)
    if waits or not (_at_once(q, cmd, event) or _fast_map_copy(q, mem, cmd, mapping.offset, False, event)):
        _submit(q, cmd, waits, False, event)


def _at_once(q, cmd, event) -> bool:
    """A map or unmap without a wait list with nothing for the GPU to do (the buffer is
    host-visible, the region invalidated, or the mapping read-only), on a queue with nothing
    pending: done on the host now, without a batch to submit and wait for."""
    if cmd.gpu_work or not q.idle():
        return False
    ev = Event(q.context, q, cmd.command_type)
    ev.run_on_host(cmd.complete)
    give_event(ev, event)
    return True


def _fast_map_copy(q, mem, cmd, offset: int, reading: bool, event) -> bool:
    """A map's or unmap's copy between the buffer and the mapping's staging memory, done by C
    (core/fastpath.py, map_copy); a blocking map's completes before this returns. False when C
    left it to Python."""
    if len(cmd.copies) != 1:
        return False
    size = cmd.copies[0][2]
    # A blocking map is complete when C returns: its host side runs here. An unmap's runs with
    # its batch, through its event's stand-in command: C must make an event, wanted or not.
    own = not reading and event == handles.NULL
    event_ptr = handles.ffi.new("cl_event *") if own else event
    code = fastpath.map_copy(q, mem, cmd.staging, offset, size, reading, reading, event_ptr, cmd.command_type,
                             None if reading else cmd.complete)
    if code is None:
        return False
    if own and event_ptr[0] != handles.NULL:  # the event C needed, which the application did not ask for
        release_event(event_ptr[0])
    if code != cl.CL_SUCCESS:
        if reading and cmd.mem is not None:
            cmd.discard()  # the mapping is not made
        raise CLError(code, "the fast path's copy failed")
    if reading:
        cmd.complete()
    return True


MIGRATE_FLAGS = cl.CL_MIGRATE_MEM_OBJECT_HOST | cl.CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED


def enqueue_migrate_mem_objects(command_queue, num_mem_objects, mem_objects, flags, num_events, event_wait_list,
                                event):
    q = resolve_queue(command_queue)
    if num_mem_objects == 0 or mem_objects == handles.NULL:
        raise CLError(cl.CL_INVALID_VALUE)
    for i in range(num_mem_objects):
        _mem(q, mem_objects[i])
    if flags & ~MIGRATE_FLAGS:
        raise CLError(cl.CL_INVALID_VALUE, f"invalid migration flags {flags:#x}")
    waits = wait_list(q.context, num_events, event_wait_list)
    # One device per buffer allocation: migration is only an ordering point.
    _submit(q, cmds.Marker(cl.CL_COMMAND_MIGRATE_MEM_OBJECTS), waits, False, event)
