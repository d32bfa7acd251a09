#!/usr/bin/env python3
"""A differential run of random nested loops: the same OpenCL C kernel on vkcl and on a peer
platform, outputs compared word for word (a developer tool, not part of `make test`).

Each kernel has two or three nested loops (`for`, `while`, `do`, with or without `#pragma
nounroll`; constant, argument and per-work-item trip counts), optionally a second nest after
the first, and `return`, `goto`, `break` and `continue` on an LCG state; 16 work-items store the
state and a step count. The kernels stress clspv's structurizer (compiler/loop_exits.py,
spirv_single_pass_loops.py) and llvmpipe's control flow (spirv_nesting.py, the long-loop passes).

    OCL_ICD_VENDORS=<dir with vkcl.icd and pocl.icd> python tests/differential/nested_loops.py 100 150
    NESTED_LOOPS_PEER=nvidia ... python tests/differential/nested_loops.py 100 150   # on the H200
    NESTED_LOOPS_SHAPES=extended ...    # also `while (++i < n)` loops and `switch` exits
    NESTED_LOOPS_IL=O2 ...    # vkcl gets each kernel as SPIR-V: clang-15 at -O2, llvm-spirv-15
    NESTED_LOOPS_IL_DIR=dir ...   # that SPIR-V kept in (and, without clang-15, read from) dir

Arguments: the first seed, the number of kernels, and optionally n (the `n` argument, 40).
Prints each kernel vkcl refused, cut or computed differently (with its source), then the
counts. A refusal is CL_BUILD_PROGRAM_FAILURE and a cut CL_OUT_OF_RESOURCES (a loop llvmpipe
cut short, with n in the hundreds: honest failures); a difference is a bug to reduce.
"""
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pyopencl as cl

PEER = os.environ.get("NESTED_LOOPS_PEER", "portable")  # a platform name's start: PoCL's "Portable ..."
# NESTED_LOOPS_SHAPES=extended adds loops whose condition takes the value its block's increment
# made (`while (++i < n)`, `do ... while (++i < n)`) and exits from a `switch` (other kernels for
# the same seeds; without it, each seed's kernel is the one earlier runs recorded).
EXTENDED = os.environ.get("NESTED_LOOPS_SHAPES") == "extended"
# NESTED_LOOPS_IL=O0 or O2: vkcl gets each kernel as an IL program (clCreateProgramWithIL), the
# SPIR-V clang-15 at that level and llvm-spirv-15 make of it; the peer still gets the source.
IL = os.environ.get("NESTED_LOOPS_IL")
# NESTED_LOOPS_IL_DIR: where that SPIR-V is kept, one file per kernel and level, so that a machine
# without clang-15 (the GPU machine) runs the same modules.
IL_DIR = os.environ.get("NESTED_LOOPS_IL_DIR")
G = 16


def spirv_of(src: str, level: str) -> bytes | None:
    """The kernel as OpenCL SPIR-V: clang-15 (-`level`) to bitcode, llvm-spirv-15 to SPIR-V; None
    where llvm-spirv refuses the bitcode (LLVM's optimizer makes integers of widths SPIR-V lacks)."""
    if IL_DIR:
        kept = os.path.join(IL_DIR, f"{level}-{hashlib.sha1(src.encode()).hexdigest()[:16]}.spv")
        if not os.path.exists(kept) and not shutil.which("clang-15"):
            raise SystemExit(f"{kept} is missing and clang-15 is not installed to make it")
        if os.path.exists(kept):
            return open(kept, "rb").read() if os.path.getsize(kept) else None
        made = _made_spirv(src, level)
        os.makedirs(IL_DIR, exist_ok=True)
        with open(kept, "wb") as f:
            f.write(made or b"")  # (empty: llvm-spirv refused it)
        return made
    return _made_spirv(src, level)


def _made_spirv(src: str, level: str) -> bytes | None:
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "k.cl"), "w") as f:
            f.write(src)
        subprocess.run(["clang-15", "-cl-std=CL1.2", "-target", "spir64", f"-{level}", "-emit-llvm", "-c", "-w",
                        "-Xclang", "-finclude-default-header", "k.cl", "-o", "k.bc"], cwd=tmp, check=True)
        if subprocess.run(["llvm-spirv-15", "k.bc", "-o", "k.spv"], cwd=tmp, capture_output=True).returncode:
            return None
        with open(os.path.join(tmp, "k.spv"), "rb") as f:
            return f.read()


def platform(name: str):
    return next(p for p in cl.get_platforms() if p.name.lower().startswith(name))


def kernel(rng: random.Random) -> str:
    decls, uses_label = [], [False]

    def loop(depth: int) -> str:
        v = f"i{depth}"
        decls.append(f"uint {v};")
        kind = rng.choice(["for", "for", "while", "do"] + (["prewhile", "predo"] if EXTENDED else []))
        bound = rng.choice(["n", "m", "3u", "(g % 5u) + 1u", "n + g"])
        pragma = "\n#pragma nounroll\n" if rng.random() < 0.4 else "\n"
        body = [f"s = s * 1103515245u + ({v} ^ {rng.randrange(1, 99999)}u); t++;"]
        returned = "o[2 * g] = s ^ 0xABCDu; o[2 * g + 1] = t; return;"
        if depth < rng.choice([1, 2, 2, 3]):
            body.append(loop(depth + 1))
        for _ in range(rng.choice([0, 1, 1, 2])):
            k = rng.choice([7, 13, 97, 211, 1009])
            cond = f"(s % {k}u) == {rng.randrange(k)}u"
            exit_kind = rng.choice(["ret", "goto", "break", "continue", "nothing"] + (["switch"] if EXTENDED else []))
            if exit_kind == "ret":
                stmt = f"if ({cond}) {{ {returned} }}"
            elif exit_kind == "switch":
                leave = rng.choice([returned, "goto out;", "continue;"])
                uses_label[0] = uses_label[0] or leave == "goto out;"
                hit, other = rng.sample(range(k), 2)
                stmt = f"switch (s % {k}u) {{ case {hit}u: {leave} case {other}u: s ^= 0x55u; break; default: break; }}"
            elif exit_kind == "goto":
                uses_label[0] = True
                stmt = f"if ({cond}) goto out;"
            elif exit_kind in ("break", "continue"):
                stmt = f"if ({cond}) {exit_kind};"
            else:
                stmt = f"if ({cond}) s ^= 0x55u;"
            body.insert(rng.randrange(1, len(body) + 1), stmt)
        inner = " ".join(body)
        if kind == "for":
            return f"{pragma}for ({v} = 0; {v} < {bound}; {v}++) {{ {inner} }}"
        if kind == "while":
            return f"{v} = 0;{pragma}while ({v} < {bound}) {{ {v}++; {inner} }}"
        if kind == "prewhile":
            return f"{v} = 0;{pragma}while (++{v} < {bound}) {{ {inner} }}"
        if kind == "predo":
            return f"{v} = 0;{pragma}do {{ {inner} }} while (++{v} < {bound});"
        return f"{v} = 0;{pragma}do {{ {v}++; {inner} }} while ({v} < {bound});"

    nest = loop(0)
    if rng.random() < 0.5:
        nest += " " + loop(5)
    out = " out: ;" if uses_label[0] else ""
    return ("kernel void k(global uint *o, uint n, uint m) { uint g = get_global_id(0), s = g, t = 0; "
            + " ".join(dict.fromkeys(decls)) + "\n" + nest + out + "\n o[2 * g] = s; o[2 * g + 1] = t; }")


def run(ctx, src: str | bytes, n: int):
    q = cl.CommandQueue(ctx)
    try:
        prg = cl.Program(ctx, src).build()
        o = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.full(2 * G, 7, np.uint32))
        ev = cl.Kernel(prg, "k")(q, (G,), None, o, np.uint32(n), np.uint32(7))
        out = np.empty(2 * G, np.uint32)
        cl.enqueue_copy(q, out, o)
        q.finish()
        # CL_OUT_OF_RESOURCES: a loop llvmpipe cut short (docs/status.md), an honest failure
        return "cut" if ev.command_execution_status == cl.status_code.OUT_OF_RESOURCES else out
    except cl.RuntimeError as e:
        if "OUT_OF_RESOURCES" in str(e):
            return "cut"
        return "refused" if "BUILD_PROGRAM_FAILURE" in str(e) else f"error {e}"


def main() -> int:
    first, count = int(sys.argv[1]), int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    contexts = {name: cl.Context([platform(name).get_devices()[0]]) for name in ("vkcl", PEER)}
    counts = {"same": 0, "refused": 0, "cut": 0, "different": 0, "error": 0, "no SPIR-V": 0}
    for seed in range(first, first + count):
        src = kernel(random.Random(seed))
        program = spirv_of(src, IL) if IL else src
        if program is None:
            counts["no SPIR-V"] += 1
            continue
        ours = run(contexts["vkcl"], program, n)
        theirs = run(contexts[PEER], src, n)
        if isinstance(ours, str) or isinstance(theirs, str):
            what = ours if ours in ("refused", "cut") else "error"
            counts[what] += 1
            print(f"seed {seed}: vkcl {ours if isinstance(ours, str) else 'ok'}, "
                  f"{PEER} {theirs if isinstance(theirs, str) else 'ok'}\n{src}", flush=True)
        elif (ours == theirs).all():
            counts["same"] += 1
        else:
            counts["different"] += 1
            print(f"seed {seed}: DIFFERENT\n{src}\n vkcl {ours}\n {PEER} {theirs}", flush=True)
        if (seed - first + 1) % 25 == 0 and seed + 1 < first + count:
            print(f"after seed {seed}: {counts}", flush=True)  # for runs that a time limit stops
    print(counts, flush=True)
    return 1 if counts["different"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
