"""`python -m vkcl trace [-o trace.json] [--plot timeline.svg] -- <command> [args...]`: run any
OpenCL program on vkcl with VKCL_TRACE set (vkcl/trace.py), then optionally draw the timeline
as an SVG picture: a row per host thread and per GPU queue, a bar per API call, compile and
command. Open the JSON in ui.perfetto.dev or chrome://tracing.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from html import escape

USAGE = "usage: python -m vkcl trace [-o trace.json] [--plot timeline.svg] -- <command> [args...]"
COLORS = {"api": "#4e79a7", "compile": "#f28e2b", "gpu": "#59a14f", "queue": "#e15759"}
ROW, LEFT, WIDTH = 22, 220, 1000


def _args(argv: list[str]):
    out, plot, i = "vkcl-trace.json", None, 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] in ("-o", "--output", "--plot") and i + 1 < len(argv):
            if argv[i] == "--plot":
                plot = argv[i + 1]
            else:
                out = argv[i + 1]
            i += 2
        else:
            raise ValueError(f"unknown argument {argv[i]!r}")
    if i >= len(argv) - 1:
        raise ValueError("no command after --")
    return os.path.abspath(out), plot, argv[i + 1:]


def svg(trace: dict) -> str:
    """The timeline as an SVG document."""
    names, rows = {}, {}
    spans = []
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e["name"] in ("thread_name", "process_name"):
            names[(e["pid"], e.get("tid"))] = e["args"]["name"]
        elif e.get("ph") in ("X", "i"):
            spans.append(e)
    if not spans:
        return '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="40"><text x="10" y="25">no events</text></svg>'
    # A row per thread and category: a compile runs inside clBuildProgram, a submit inside a call.
    for e in sorted(spans, key=lambda e: (e["pid"], e["tid"], e.get("cat", ""))):
        rows.setdefault((e["pid"], e["tid"], e.get("cat", "")), len(rows))
    t0 = min(e["ts"] for e in spans)
    t1 = max(e["ts"] + e.get("dur", 0) for e in spans)
    scale = WIDTH / max(t1 - t0, 1.0)
    height = ROW * len(rows) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{LEFT}" y="{height - 8}">0 to {(t1 - t0) / 1000:.3f} ms</text>']
    for (pid, tid, cat), r in rows.items():
        label = names.get((pid, tid)) or f"thread {tid}: {cat}"
        out.append(f'<text x="4" y="{r * ROW + 15}">{escape(str(label))[:34]}</text>')
    for e in spans:
        r = rows[(e["pid"], e["tid"], e.get("cat", ""))]
        x = LEFT + (e["ts"] - t0) * scale
        w = max(e.get("dur", 0) * scale, 1.0)
        color = COLORS.get(e.get("cat"), "#999999")
        out.append(f'<rect x="{x:.2f}" y="{r * ROW + 3}" width="{w:.2f}" height="{ROW - 6}" fill="{color}">'
                   f'<title>{escape(e["name"])} {e.get("dur", 0):.1f} us</title></rect>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else 2
    try:
        out, plot, command = _args(argv)
    except ValueError as e:
        print(f"vkcl trace: {e}\n{USAGE}", file=sys.stderr)
        return 2
    if os.path.exists(out):
        os.remove(out)
    try:
        rc = subprocess.run(command, env={**os.environ, "VKCL_TRACE": out}).returncode
    except OSError as e:
        print(f"vkcl trace: cannot run {command[0]!r}: {e}", file=sys.stderr)
        return 127
    if not os.path.exists(out):
        print(f"vkcl trace: the program wrote no trace (did it use vkcl?): {out}", file=sys.stderr)
        return rc or 1
    with open(out) as f:
        trace = json.load(f)
    n = sum(1 for e in trace["traceEvents"] if e.get("ph") != "M")
    print(f"vkcl trace: {n} events in {out}", file=sys.stderr)
    if plot:
        with open(plot, "w") as f:
            f.write(svg(trace))
        print(f"vkcl trace: timeline in {plot}", file=sys.stderr)
    return rc
