"""Kernels run on the host, one work-item after another, built by clang-15 for this machine:
- a kernel's IR before and after an IR rewrite (compiler/loop_exits.py), so that a test
  compares what the two compute without clspv or a device between them (a rewrite that
  changes a result shows here as itself, not as a structurizer fault);
- the OpenCL C source itself, as the exact reference a device's results are checked against
  (the same values as PoCL's for tests/differential/nested_loops.py's kernels)."""
from __future__ import annotations

import glob
import re
import shutil
import subprocess
from pathlib import Path

from vkcl.compiler import driver, loop_exits

# The kernels of tests/differential/nested_loops.py: k(global uint *o, uint n, uint m), the
# global id their only builtin.
HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
static unsigned long gid;
unsigned long _Z13get_global_idj(unsigned d) { return d ? 0 : gid; }
void k(unsigned *o, unsigned n, unsigned m);
int main(int argc, char **argv) {
  unsigned o[2 * WORK_ITEMS];
  for (int i = 0; i < 2 * WORK_ITEMS; i++) o[i] = 7;
  unsigned n = strtoul(argv[1], 0, 10), m = strtoul(argv[2], 0, 10);
  for (gid = 0; gid < WORK_ITEMS; gid++) k(o, n, m);
  for (int i = 0; i < 2 * WORK_ITEMS; i++) printf("%u ", o[i]);
  return 0;
}
"""


def clang() -> str:
    """clang-15 (Debian's, which make installs), else another LLVM's clang (the GPU machine has
    LLVM 16's): any reads OpenCL C and the IR for_host makes."""
    found = shutil.which("clang-15") or next(iter(sorted(glob.glob("/usr/lib/llvm-*/bin/clang"))), None)
    return found or "clang"


def front_ir(source: str, args: list[str]) -> str:
    """The IR clspv's front end makes of `source` (the prelude in front), as loop_exits gets it."""
    seen: list[str] = []
    real = loop_exits.rewrite
    loop_exits.rewrite = lambda ir: seen.append(ir) or None
    try:
        driver._run_source([source.encode()], args, exits=True)
    finally:
        loop_exits.rewrite = real
    return seen[0]


def for_host(ir: str) -> str:
    """The SPIR IR as clang-15 reads it for this machine: the newer LLVM's flags and attributes
    it does not know dropped (none changes what the code computes), SPIR calling conventions
    plain."""
    ir = re.sub(r"^attributes (#\d+) = .*$", r"attributes \1 = { nounwind }", ir, flags=re.M)
    ir = re.sub(r" (?:nuw|nsw|samesign|nneg) (?=i\d|ptr|%|inbounds)", " ", ir)
    ir = ir.replace("inbounds nuw", "inbounds").replace("spir_kernel ", "").replace("spir_func ", "")
    ir = re.sub(r"^target datalayout.*$", "", ir, flags=re.M)
    ir = re.sub(r"^target triple.*$", 'target triple = "x86_64-pc-linux-gnu"', ir, flags=re.M)
    return re.sub(r"^@llvm\.global\.annotations.*$", "", ir, flags=re.M)


def build(ir: str, where: Path, name: str, work_items: int = 16) -> Path:
    """The IR's kernel `k` with the harness."""
    (where / f"{name}.ll").write_text(for_host(ir))
    return _link(where, name, [str(where / f"{name}.ll")], work_items)


def build_source(source: str, where: Path, name: str, work_items: int = 16) -> Path:
    """The OpenCL C source's kernel `k` (clang-15's own OpenCL C front end) with the harness."""
    (where / f"{name}.cl").write_text(source)
    subprocess.run([clang(), "-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header", "-O0", "-w",
                    "-c", str(where / f"{name}.cl"), "-o", str(where / f"{name}.o")],
                   check=True, capture_output=True, text=True)
    return _link(where, name, [str(where / f"{name}.o")], work_items)


def _link(where: Path, name: str, objects: list[str], work_items: int) -> Path:
    (where / "harness.c").write_text(HARNESS)
    exe = where / name
    subprocess.run([clang(), "-O0", "-w", f"-DWORK_ITEMS={work_items}", *objects, str(where / "harness.c"),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    return exe


def run(exe: Path, n: int, m: int) -> str:
    """The outputs, or "hang" for a program still running after 20 s (a loop the rewrite broke)."""
    try:
        return subprocess.run([str(exe), str(n), str(m)], capture_output=True, text=True, timeout=20,
                              check=True).stdout
    except subprocess.TimeoutExpired:
        return "hang"
