#!/usr/bin/env python3
"""Draw the vkcl / native ratio of every measurement of a saved bench result as a PNG.

    python3 bench/chart.py bench/results/<stem>.json [-o out.png]

One horizontal bar per measurement: the value on vkcl divided by the value on the native
platform (NVIDIA when present, else PoCL), on a log scale with a line at 1.0. Green bars
are measurements where vkcl does better (a higher rate, or a lower time for ms/us), red
ones where it does worse. Needs matplotlib (bench/requirements.txt).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

LOWER_IS_BETTER = {"ms", "us"}


def _rows(data: dict) -> list[tuple[str, str, float | None, str]]:
    """(name, unit, ratio or None, note) in table order."""
    vk = data["platforms"].get("vkcl", {}).get("results", {})
    native = data["platforms"].get(data.get("native") or "", {}).get("results", {})
    rows = []
    for name in data["order"]:
        v, n = vk.get(name), native.get(name)
        if not v and not n:
            continue
        unit = (v or n).get("unit", "")
        if v and v["status"] == "fail":
            rows.append((name, unit, None, "vkcl FAILED"))
        elif v and n and v["status"] == n["status"] == "ok" and n["value"] > 0 and v["value"] > 0:
            rows.append((name, unit, v["value"] / n["value"], ""))
        elif v and v["status"] == "skip":
            rows.append((name, unit, None, "skipped on vkcl"))
        else:
            rows.append((name, unit, None, "no native value"))
    return rows


def draw(data: dict, png: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    native = data.get("native")
    if "vkcl" not in data["platforms"] or not native:
        print("chart: needs vkcl and a native platform", file=sys.stderr)
        return None
    rows = _rows(data)
    ratios = [r for _, _, r, _ in rows if r]
    lo = min(ratios + [0.5]) / 2
    hi = max(ratios + [2.0]) * 2
    fig, ax = plt.subplots(figsize=(10, 0.28 * len(rows) + 1.8))
    for y, (name, unit, r, note) in enumerate(rows):
        if r is None:
            ax.text(1.0, y, "  " + note, va="center", ha="left", fontsize=8,
                    color="firebrick" if "FAIL" in note else "gray")
            continue
        better = r < 1 if unit in LOWER_IS_BETTER else r > 1
        ax.barh(y, r - 1.0, left=1.0, color="seagreen" if better else "indianred", height=0.7)
        ax.text(r, y, f" {r:.3g} " if r >= 1 else f" {r:.3g} ", va="center", ha="left" if r >= 1 else "right",
                fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{n} [{u}]" for n, u, _, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.axvline(1.0, color="black", linewidth=1)
    plats = data["platforms"]
    vdev = plats["vkcl"].get("device", {}).get("device_name", "?")
    ndev = plats[native].get("device", {}).get("device_name", "?")
    ax.set_title(f"vkcl / {native}: {vdev} vs {ndev} ({data.get('mode', '')} sizes, {data.get('created', '')[:10]})\n"
                 "value on vkcl divided by value on native; green: vkcl better "
                 "(for ms and us lower is better)", fontsize=9)
    ax.set_xlabel("vkcl / native (log scale)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="a result file written by bench/run.py")
    ap.add_argument("-o", "--output", help="PNG path (default: beside the JSON)")
    args = ap.parse_args()
    src = Path(args.json)
    data = json.loads(src.read_text())
    try:
        png = draw(data, Path(args.output) if args.output else src.with_suffix(".png"))
    except ImportError as e:
        print(f"chart.py needs matplotlib ({e}): pip install -r bench/requirements.txt, "
              "or run it with .venv/bin/python", file=sys.stderr)
        return 2
    if png:
        print(png)
    return 0 if png else 1


if __name__ == "__main__":
    sys.exit(main())
