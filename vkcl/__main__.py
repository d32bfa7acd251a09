"""`python -m vkcl`: command-line tools.

  python -m vkcl compile foo.cl [-o foo.spv] [--descriptor-map foo.csv] [--device-caps CAPS]
                         [--strip-reflection] [BUILD OPTIONS...]
  python -m vkcl info [--json]
  python -m vkcl trace [-o trace.json] [--plot timeline.svg] -- <command> [args...]

compile: OpenCL C to Vulkan SPIR-V through vkcl's compiler (clspv in a worker process), and
optionally clspv's CSV descriptor map. BUILD OPTIONS are OpenCL build options (-D, -I,
-cl-std=..., ...). CAPS is JSON (or a file holding JSON) overriding the default device: 64-bit
physical addressing, 128 bytes of push constants, fp16/fp64/int8/int64 on (the keys are the
fields of vkcl.compiler.DeviceCaps). Exits 1 with the build log when the build fails, 2 on
bad usage.

info: what clinfo says of vkcl's devices, plus the Vulkan device and driver behind each, the
Vulkan features each OpenCL feature rests on, what is emulated, what is missing and why, and
the program cache (vkcl/info_report.py); --json for scripts.

trace: runs any OpenCL program on vkcl and writes a Chrome trace / Perfetto JSON of its API
calls, compiles, submissions and GPU execution (vkcl/trace.py, trace_view.py).
"""
from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

USAGE = __doc__.split("\n\n")[1]


class UsageError(Exception):
    pass


def _parse_compile_args(argv: list[str]) -> dict:
    args = {"source": None, "output": None, "descriptor_map": None, "device_caps": None,
            "strip": False, "options": []}
    valued = {"-o": "output", "--output": "output", "--descriptor-map": "descriptor_map",
              "--device-caps": "device_caps"}
    i = 0
    while i < len(argv):
        tok = argv[i]
        i += 1
        name, eq, value = tok.partition("=")
        if name in valued and tok.startswith("--") and eq:
            args[valued[name]] = value
        elif tok in valued:
            if i >= len(argv):
                raise UsageError(f"{tok} needs a value")
            args[valued[tok]] = argv[i]
            i += 1
        elif tok == "--strip-reflection":
            args["strip"] = True
        elif tok in ("-D", "-I"):
            if i >= len(argv):
                raise UsageError(f"{tok} needs a value")
            args["options"] += [tok, argv[i]]
            i += 1
        elif tok.startswith("-"):
            args["options"].append(tok)
        elif args["source"] is None:
            args["source"] = tok
        else:
            raise UsageError(f"unexpected argument {tok!r} (one source file at a time)")
    if args["source"] is None:
        raise UsageError("no source file")
    return args


def _device_caps(text: str | None):
    from vkcl.compiler import DeviceCaps
    if not text:
        return DeviceCaps()
    if not text.lstrip().startswith("{"):
        text = Path(text).read_text()
    values = json.loads(text)
    if not isinstance(values, dict):
        raise ValueError("--device-caps must be a JSON object")
    return DeviceCaps.from_dict({**DeviceCaps().to_dict(), **values})


def cmd_compile(argv: list[str]) -> int:
    from vkcl import compiler
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    try:
        args = _parse_compile_args(argv)
        caps = _device_caps(args["device_caps"])
        options = compiler.parse_options(shlex.join(args["options"]), "build")
        source = Path(args["source"]).read_text()
    except (UsageError, compiler.InvalidOptionsError, ValueError, OSError) as e:
        print(f"vkcl compile: {e}", file=sys.stderr)
        return 2
    result = compiler.compile_source(source, options, caps)
    if result.log:
        sys.stderr.write(result.log if result.log.endswith("\n") else result.log + "\n")
    if not result.ok:
        print(f"vkcl compile: build of {args['source']} failed ({result.status})", file=sys.stderr)
        return 1
    output = Path(args["output"] or Path(args["source"]).with_suffix(".spv"))
    spirv = compiler.strip_nonsemantic(result.spirv) if args["strip"] else result.spirv
    output.write_bytes(spirv)
    if args["descriptor_map"]:
        Path(args["descriptor_map"]).write_text(compiler.descriptor_map_csv(result.reflection))
    return 0


def cmd_info(argv: list[str]) -> int:
    from vkcl import info_report
    return info_report.main(argv)


def cmd_trace(argv: list[str]) -> int:
    from vkcl import trace_view
    return trace_view.main(argv)


COMMANDS = {"compile": cmd_compile, "info": cmd_info, "trace": cmd_trace}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage:\n" + USAGE, file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])  # the compiler worker is stopped at exit


if __name__ == "__main__":
    sys.exit(main())
