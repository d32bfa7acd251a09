"""Every entry point docs/status.md lists as not implemented returns its documented error (and
sets errcode_ret, returning NULL, where it has one), called through vkcl's exported symbols on
real handles; nothing returns CL_SUCCESS."""
import json
import sys
from pathlib import Path

import pytest

from test_kernels_pyopencl import HEADER

pytest.importorskip("pyopencl")
# The library the loader's front (build/libvkcl.so) picked for this Python: it exports every entry.
LIB = Path(__file__).resolve().parents[2] / "build" / "python{0}.{1}".format(*sys.version_info[:2]) / "libvkcl.so"

SNIPPET = HEADER + """
import ctypes, json
from vkcl._gen.cl_api import ENTRIES
from vkcl.api import registry
from vkcl._gen import cl as C
lib = ctypes.CDLL(LIB)
buf_ = cl.Buffer(ctx, mf.READ_WRITE, 64)
prg = cl.Program(ctx, "kernel void k(global int *a) { a[0] = 1; }").build()
knl = cl.Kernel(prg, "k")
ev = cl.UserEvent(ctx)
handle_of = {"cl_context": ctx, "cl_command_queue": q, "cl_mem": buf_, "cl_program": prg, "cl_kernel": knl,
             "cl_event": ev, "cl_device_id": dev, "cl_platform_id": plat}
implemented = set(registry.implementations())
out = {}
for _, name, _, ret, params in ENTRIES:
    if params is None or name in implemented or name.startswith("clGetExtensionFunctionAddress"):
        continue
    args, err = [], ctypes.c_int(12345)
    for i, (ctype, pname) in enumerate(params):
        base = ctype.replace("const ", "").strip()
        if i == 0 and base in handle_of:
            args.append(ctypes.c_void_p(handle_of[base].int_ptr))
        elif pname == "errcode_ret":
            args.append(ctypes.byref(err))
        else:
            args.append(ctypes.c_void_p(0))
    fn = getattr(lib, name)
    fn.restype = ctypes.c_void_p if ret not in ("cl_int", "void") else (ctypes.c_int if ret == "cl_int" else None)
    result = fn(*args)
    has_err = any(p == "errcode_ret" for _, p in params)
    out[name] = {"ret": ret, "result": result, "errcode": err.value if has_err else None,
                 "expected": registry.NOT_IMPLEMENTED.get(name, C.CL_INVALID_OPERATION)}
print("RESULTS" + json.dumps(out))
"""


def test_unimplemented_entries_return_their_errors(python_with_icd):
    result = python_with_icd(f"LIB = {str(LIB)!r}\n" + SNIPPET, timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    rows = json.loads(result.stdout.split("RESULTS", 1)[1])
    assert len(rows) > 40  # images, samplers, SVM, pipes, GL/EGL, native kernels...
    for name, r in rows.items():
        if r["ret"] == "cl_int":
            assert r["result"] == r["expected"], (name, r)
        elif r["ret"] == "void":  # clSVMFree: nothing to report, nothing done
            continue
        else:  # a pointer: NULL, with the error in errcode_ret when the entry has one
            assert r["result"] is None, (name, r)
            if r["errcode"] is not None:
                assert r["errcode"] == r["expected"], (name, r)
