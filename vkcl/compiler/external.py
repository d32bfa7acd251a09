"""Compiling with an external clspv executable (VKCL_CLSPV=/path/to/clspv, as clvk allows).

Each compile writes its inputs to a temporary directory and runs
`clspv ARGS -o OUTPUT -- INPUT...`; the executable's stdout and stderr make the log.
"""
from __future__ import annotations

import signal
import subprocess
import tempfile
from pathlib import Path

from vkcl.compiler.worker import CompileOutput


def compile_with_executable(exe: str, inputs: list[bytes], args: list[str], timeout: float) -> CompileOutput:
    ir = "-x" in args and args[args.index("-x") + 1:args.index("-x") + 2] == ["ir"]
    with tempfile.TemporaryDirectory(prefix="vkcl-clspv-") as tmp:
        names = []
        for i, data in enumerate(inputs):
            path = Path(tmp) / (f"input{i}.bc" if ir else f"source{i}.cl")
            path.write_bytes(data)
            names.append(str(path))
        output = Path(tmp) / "output"
        cmd = [exe, *args, "-o", str(output), "--", *names]
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return CompileOutput("timeout", log=f"clspv timed out after {timeout:g} s (VKCL_COMPILE_TIMEOUT)\n", rc=-1)
        except OSError as e:
            return CompileOutput("unavailable", log=f"could not run VKCL_CLSPV={exe}: {e}\n", rc=-1)
        log = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        if proc.returncode < 0:
            try:
                name = signal.Signals(-proc.returncode).name
            except ValueError:
                name = "unknown signal"
            return CompileOutput("crashed", log=f"clspv crashed (signal {-proc.returncode} {name}) while compiling\n"
                                 + log, rc=-1)
        if proc.returncode != 0 or not output.exists():
            return CompileOutput("error", log=log or f"clspv failed (exit status {proc.returncode})\n",
                                 rc=proc.returncode or -1)
        return CompileOutput("ok", binary=output.read_bytes(), log=log)
