"""The clock holder (vkcl/vulkan/clock_hold.py starts it): a process of its own that retains the
CUDA primary context of one GPU, then waits for end-of-input on stdin, which comes when every
vkcl process that started it has exited.

    python _clock_hold_main.py DEVICE_UUID_HEX [-v]

The process started forks the holder and exits at once (status 0). The holder's exit status: 0
after holding the clocks; 2 when it could not (no libcuda, no CUDA device with that UUID, a
compute mode other than the default, a CUDA error). With -v it says which on stderr.
Standalone (the standard library only): it runs under whatever Python vkcl was built with.
"""
from __future__ import annotations

import ctypes
import os
import sys

_COMPUTE_MODE = 20      # CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
_COMPUTEMODE_DEFAULT = 0


def retain(cuda, device_uuid: bytes) -> str:
    """Retain the primary context of the CUDA device whose UUID is `device_uuid` through `cuda`
    (libcuda's functions); '' when done, else why not."""
    if cuda.cuInit(0) != 0:
        return "cuInit failed"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return "cuDeviceGetCount failed"
    dev, uuid, mode = ctypes.c_int(0), ctypes.create_string_buffer(16), ctypes.c_int(0)
    for ordinal in range(count.value):
        if cuda.cuDeviceGet(ctypes.byref(dev), ordinal) != 0 or cuda.cuDeviceGetUuid(uuid, dev) != 0:
            continue
        if uuid.raw != device_uuid:
            continue
        if cuda.cuDeviceGetAttribute(ctypes.byref(mode), _COMPUTE_MODE, dev) != 0:
            return "cuDeviceGetAttribute failed"
        if mode.value != _COMPUTEMODE_DEFAULT:  # exclusive-process: other processes' CUDA would be shut out
            return f"CUDA device {ordinal} is in compute mode {mode.value}"
        ctx = ctypes.c_void_p()
        result = cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
        if result != 0:
            return f"cuDevicePrimaryCtxRetain returned {result}"
        return ""
    return "no CUDA device has this GPU's UUID"


def main(argv: list[str]) -> int:
    verbose = "-v" in argv[2:]
    try:
        why = retain(ctypes.CDLL("libcuda.so.1"), bytes.fromhex(argv[1]))
    except OSError as e:  # no libcuda: a Vulkan-only install
        why = str(e)
    if verbose:
        print(f"vkcl[vkcl.vk] hold_clocks: {why or 'retained the CUDA primary context'} (pid {os.getpid()})",
              file=sys.stderr, flush=True)
    if why:
        return 2
    while sys.stdin.buffer.read(4096):  # until every process holding the pipe's other end has gone
        pass
    return 0


if __name__ == "__main__":
    # The process vkcl started exits at once; its child holds. vkcl reaps the first right away
    # at its exit (a holder's own exit takes 0.1-1.2 s on the H200: CUDA's teardown), and a
    # Python host's finalization finds no running child of its own to warn about. The holder
    # keeps the pipe's read end: vkcl's process sees it alive from its end of the pipe. (Here,
    # not in main(): a caller of main() in its own process must not be forked and ended.)
    if os.fork() != 0:
        os._exit(0)
    sys.exit(main(sys.argv))
