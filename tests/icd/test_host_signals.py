"""A signal a Python host handles reaches the host's code after the OpenCL call it arrived in,
as it does with a C driver (icd/vkcl_icd.c, "deferred signals"). Before, Python ran the handler
at vkcl's next bytecode: its exception (KeyboardInterrupt, pytest-timeout's) unwound vkcl
instead of the host, the call failed with CL_OUT_OF_HOST_MEMORY and the interrupt was lost."""
from test_kernels_pyopencl import run

import pytest

# How the signal comes: SIGALRM from a timer to a handler of the host's (pytest-timeout's way),
# or SIGINT sent by another thread to Python's own handler (KeyboardInterrupt, as Ctrl-C).
ALARM = """
class Alarm(Exception):
    pass
def on_alarm(signum, frame):
    fired.append(time.monotonic())
    raise Alarm
signal.signal(signal.SIGALRM, on_alarm)
def arm():
    signal.setitimer(signal.ITIMER_REAL, 0.05)
"""
INTERRUPT = """
import os, threading
Alarm = KeyboardInterrupt
signal.signal(signal.SIGINT, signal.default_int_handler)   # a background job inherits it ignored
def arm():
    threading.Timer(0.05, lambda: (fired.append(time.monotonic()), os.kill(os.getpid(), signal.SIGINT))).start()
"""

BODY = """
import signal, time
fired = []
%s
src = '''
kernel void lcg(global uint *out, uint trips) {
    uint s = (uint)get_global_id(0);
    for (uint i = 0; i < trips; i++)
        s = s * 1103515245u + (i ^ 12345u);
    out[get_global_id(0)] = s;
}
'''
k = cl.Program(ctx, src).build().lcg
n, trips = 1 << 16, 50000
while True:   # work-items enough for a launch of over 0.3 s (lavapipe: 2^16; the H200: 2^26)
    O = out(np.zeros(n, np.uint32))
    k(q, (n,), None, O, np.uint32(trips)).wait()      # the first launch compiles the pipeline
    start = time.monotonic()
    k(q, (n,), None, O, np.uint32(trips)).wait()
    kernel_s = time.monotonic() - start
    if kernel_s > 0.3 or n >= 1 << 28:
        break
    n *= 4
assert kernel_s > 0.2, (n, kernel_s)                  # long enough for the alarm to land inside

arm()
start = time.monotonic()
outcome = "no alarm"
ev = None
try:
    # On lavapipe the enqueue itself waits (a kernel with a loop runs its passes before it
    # returns: core/resume.py), so the alarm may land in either call.
    ev = k(q, (n,), None, O, np.uint32(trips))
    ev.wait()       # Python runs the handler as this call returns (its CALL checks), or after
    outcome = "returned"
    time.sleep(0.5)
    outcome = "no alarm after return"
except Alarm:
    outcome = "alarm"
# The alarm came 0.05 s into a call of more than 0.2 s; its exception reached the host's code,
# and the call it arrived in had done its work (before, it failed with OUT_OF_HOST_MEMORY).
assert outcome == "alarm" and len(fired) == 1, (outcome, fired)
if ev is not None:
    assert ev.command_execution_status == cl.command_execution_status.COMPLETE
q.finish()
got = get(O, np.zeros(n, np.uint32))
for i in (0, 1, 777, n - 1):
    s = i
    for t in range(trips):
        s = (s * 1103515245 + (t ^ 12345)) & 0xFFFFFFFF
    assert got[i] == s, (i, got[i], s)
# vkcl works on: another launch, waited for without a signal
k(q, (n,), None, O, np.uint32(3)).wait()
assert get(O, np.zeros(n, np.uint32))[5] == ((5 * 1103515245 + 12345) * 1103515245 + (1 ^ 12345)) * 1103515245 + (2 ^ 12345) & 0xFFFFFFFF
print("OK", round(kernel_s, 2), round(fired[0] - start, 2))
"""


@pytest.mark.parametrize("how", [ALARM, INTERRUPT], ids=["sigalrm-handler", "sigint-keyboardinterrupt"])
def test_a_signal_during_a_wait_reaches_the_host_after_the_call(python_with_icd, how):
    result = run(python_with_icd, BODY % how)
    assert "unexpected error" not in result.stderr, result.stderr[-3000:]
    print(result.stdout)


# A handler of a C library's for SIGTERM, as LLVM installs (PoCL's ICD loads it beside vkcl's,
# and Mesa's drivers may): it puts the default action back and raises the signal again.
LLVM_LIKE_HANDLER = r"""
#include <signal.h>
static void on_term(int sig) { signal(sig, SIG_DFL); raise(sig); }
void install(void) { signal(SIGTERM, on_term); }
"""

NEVER_FINISHES = r"""
import ctypes, sys, numpy as np, pyopencl as cl
plat = [p for p in cl.get_platforms() if p.name == "vkcl"][0]
ctx = cl.Context(plat.get_devices()); q = cl.CommandQueue(ctx)
src = '''kernel void spin(global uint *o, uint stop) {
    for (uint i = 0; i != stop; i += 2)     // never equal: an odd stop
        atomic_inc(o);                      // a side effect, so the loop may not be removed
    o[1] = 1;
}'''
k = cl.Program(ctx, src).build().spin
ctypes.CDLL(sys.argv[1]).install()
O = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 8)
print("waiting", flush=True)
k(q, (1,), None, O, np.uint32(1))   # on lavapipe the enqueue waits itself (core/resume.py)
q.finish()
print("finished", flush=True)
"""


def test_sigterm_ends_a_process_whose_kernel_never_finishes(icd_env, tmp_path):
    # vkcl defers a handled signal while the host waits in it, and took any plain handler for
    # the host's: with LLVM's for SIGTERM, `timeout` never ended a process whose kernel did not
    # finish (it waited for ever, and so did its caller). Python's own handler is still deferred.
    import signal
    import subprocess
    import sys
    import time
    c, lib = tmp_path / "handler.c", tmp_path / "libhandler.so"
    c.write_text(LLVM_LIKE_HANDLER)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(c)], check=True)
    child = subprocess.Popen([sys.executable, "-c", NEVER_FINISHES, str(lib)], env=icd_env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()     # the build is done: the launch comes next
        assert line.strip() == "waiting", (line, child.stderr.read() if child.poll() is not None else "")
        time.sleep(3.0)
        assert child.poll() is None
        child.send_signal(signal.SIGTERM)
        try:
            rc = child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("SIGTERM did not end the process while it waited in vkcl")
        assert rc == -signal.SIGTERM, (rc, child.stderr.read()[-2000:])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
