#!/usr/bin/env python3
"""Run the vkcl benchmark suite on every OpenCL platform of this machine and compare.

Builds bench/src/*.c into bench/.build/clbench, finds the platforms through the ICD loader
(OCL_ICD_VENDORS: --vendors, else $VKCL_ALL_VENDORS, else a temporary directory with
build/vendors/*.icd and /etc/OpenCL/vendors/*.icd), runs every measurement group on every
platform as its own subprocess with a timeout, and writes <stem>.json, <stem>.txt (the
table), <stem>.log (every subprocess's stderr) and, when matplotlib is importable,
<stem>.png into --out (default bench/results/). Standard library only; see bench/README.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
BINARY = BENCH / ".build" / "clbench"
SCHEMA = "vkcl-bench/1"
LOWER_IS_BETTER = {"ms", "us"}
# Table order of the platforms; the first present after vkcl is the native reference.
KNOWN = [("vkcl", "vkcl"), ("NVIDIA", "NVIDIA CUDA"), ("PoCL", "Portable Computing Language")]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build_binary(cc: str) -> None:
    sources = sorted((BENCH / "src").glob("*.c"))
    headers = sorted((BENCH / "src").glob("*.h"))
    newest = max(p.stat().st_mtime for p in sources + headers)
    if BINARY.exists() and BINARY.stat().st_mtime >= newest:
        return
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    cmd = [cc, "-O2", "-std=c11", "-Wall", "-o", str(BINARY), *map(str, sources), "-lOpenCL", "-lm"]
    log("building: " + " ".join(cmd))
    subprocess.run(cmd, check=True, timeout=300)


def make_vendors_dir(explicit: str | None, tmp: Path) -> str:
    if explicit:
        return explicit
    if os.environ.get("VKCL_ALL_VENDORS"):
        return os.environ["VKCL_ALL_VENDORS"]
    vendors = tmp / "vendors"
    vendors.mkdir()
    icds = [*sorted((ROOT / "build" / "vendors").glob("*.icd")), *sorted(Path("/etc/OpenCL/vendors").glob("*.icd"))]
    for icd in icds:
        if not (vendors / icd.name).exists():
            shutil.copy(icd, vendors / icd.name)
    return str(vendors)


def run_cmd(cmd: list[str], env: dict, timeout: float) -> dict:
    """Run cmd in its own session; on timeout kill the whole group (compiler workers too)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            errors="replace", start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            out, err = "", "(output lost: the process did not die)"
    try:   # anything the process left behind in its group
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return {"rc": proc.returncode, "stdout": out or "", "stderr": err or "", "timed_out": timed_out,
            "seconds": round(time.monotonic() - start, 2)}


def list_platforms(env: dict) -> list[dict]:
    """Every platform, each with the one .icd that provides it: a platform's runs load only its
    own ICD, so no other runtime's start-up (vkcl's Python, a Vulkan instance) lands in them."""
    vendors = Path(env["OCL_ICD_VENDORS"])
    icds = sorted(vendors.glob("*.icd")) if vendors.is_dir() else [vendors]
    platforms: list[dict] = []
    for icd in icds:
        r = run_cmd([str(BINARY), "--list"], dict(env, OCL_ICD_VENDORS=str(icd)), 180)
        if r["rc"] != 0 or r["timed_out"]:
            log(f"clbench --list with {icd} failed (rc {r['rc']}, timed out {r['timed_out']}):\n"
                f"{r['stderr'][-2000:]}")
        for line in r["stdout"].splitlines():
            f = line.split("\t")
            if f[0] == "PLATFORM" and len(f) >= 5:
                platforms.append({"name": f[2], "version": f[3], "vendor": f[4], "icd": str(icd),
                                  "devices": []})
            elif f[0] == "DEVICE" and len(f) >= 7 and platforms:
                platforms[-1]["devices"].append({"name": f[3], "type": f[4], "driver_version": f[5],
                                                 "device_version": f[6]})
    return platforms


def group_names() -> list[tuple[str, list[tuple[str, str]]]]:
    out = subprocess.run([str(BINARY), "--names"], capture_output=True, text=True, timeout=60, check=True).stdout
    groups = []
    for line in out.splitlines():
        _, group, *items = line.split()
        groups.append((group, [tuple(item.split(":", 1)) for item in items]))
    return groups


def parse_output(text: str) -> tuple[dict, dict]:
    """INFO key=value lines and RESULT / SKIP lines (reason= runs to the end of the line)."""
    info, results = {}, {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "INFO":
            key, _, value = rest.partition("=")
            info[key] = value
        elif kind in ("RESULT", "SKIP"):
            reason = None
            if " reason=" in " " + rest:
                rest, _, reason = (" " + rest).partition(" reason=")
            fields = dict(f.split("=", 1) for f in rest.split() if "=" in f)
            name = fields.pop("name", None)
            if not name:
                continue
            if kind == "SKIP":
                results[name] = {"status": "skip", "reason": reason}
                continue
            entry = {"status": "ok" if fields.pop("ok", "0") == "1" else "fail", "unit": fields.pop("unit", ""),
                     "value": float(fields.pop("value", "nan"))}
            if reason is not None:
                entry["reason"] = reason
            if fields:
                entry["extra"] = fields
            results[name] = entry
    return info, results


def short_key(name: str) -> str:
    for key, full in KNOWN:
        if name == full or (key == "NVIDIA" and "NVIDIA" in name):
            return key
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "platform"


def select_platforms(found: list[dict], wanted: str | None) -> list[dict]:
    chosen, keys = [], set()
    for p in found:
        p["key"] = short_key(p["name"])
        names = (p["name"].lower(), p["key"].lower())
        if wanted and not any(w.lower() in n for w in wanted.split(",") for n in names):
            continue
        if p["key"] in keys:
            log(f"ignoring a second {p['name']} platform (from {p['icd']})")
            continue
        keys.add(p["key"])
        chosen.append(p)
    order = [k for k, _ in KNOWN]
    chosen.sort(key=lambda p: order.index(p["key"]) if p["key"] in order else len(order))
    return chosen


def listed_device(p: dict) -> dict:
    """The device clbench picks (the first GPU, else the first), as the listing saw it."""
    devs = sorted(p["devices"], key=lambda d: d["type"] != "GPU")
    if not devs:
        return {}
    d = devs[0]
    return {"device_name": d["name"], "device_type": d["type"], "driver_version": d["driver_version"],
            "device_version": d["device_version"]}


def native_key(platforms: list[dict]) -> str | None:
    keys = [p["key"] for p in platforms]
    return next((k for k in ("NVIDIA", "PoCL") if k in keys), next((k for k in keys if k != "vkcl"), None))


def compute_ratios(data: dict) -> dict:
    plats, native = data["platforms"], data.get("native")
    ratios = {}
    if "vkcl" not in plats or not native:
        return ratios
    for name in data["order"]:
        v, n = plats["vkcl"]["results"].get(name), plats[native]["results"].get(name)
        if v and n and v["status"] == n["status"] == "ok" and n["value"] > 0:
            ratios[name] = v["value"] / n["value"]
    return ratios


def fmt(entry: dict | None) -> str:
    if not entry:
        return "-"
    if entry["status"] != "ok":
        return entry["status"].upper()
    v = entry["value"]
    return f"{v:.4g}" if abs(v) < 1e6 else f"{v:.3e}"


def table(data: dict) -> str:
    plats = data["platforms"]
    keys = list(plats)
    native = data.get("native")
    units = {}
    for p in plats.values():
        for name, e in p["results"].items():
            units.setdefault(name, e.get("unit", ""))
    head = ["measurement", "unit", *keys]
    if "vkcl" in plats and native:
        head.append(f"vkcl/{native}")
    rows = []
    for name in data["order"]:
        unit = units.get(name, "")
        row = [name, unit + (" (lower=better)" if unit in LOWER_IS_BETTER else ""),
               *[fmt(plats[k]["results"].get(name)) for k in keys]]
        if len(head) > len(row):
            r = data["ratios"].get(name)
            row.append(f"{r:.3g}" if r is not None else "-")
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    devs = [f"{k}: {p['name']} / {p['device'].get('device_name', '?')} / driver "
            f"{p['device'].get('driver_version', '?')}" for k, p in plats.items()]
    notes = []
    for k, p in plats.items():
        for name in data["order"]:
            e = p["results"].get(name)
            if e and e["status"] in ("fail", "skip"):
                notes.append(f"{k} {name} {e['status'].upper()}: {e.get('reason')}")
    return "\n".join(devs + [""] + lines + ([""] + notes if notes else [])) + "\n"


def save(data: dict, stem: Path) -> None:
    data["ratios"] = compute_ratios(data)
    tmp = stem.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(stem.with_suffix(".json"))


def clbench_args(args) -> list[str]:
    extra = ["--quick"] if args.mode == "quick" else []
    if args.runs:
        extra += ["--runs", str(args.runs)]
    return extra + (args.clbench_args.split() if args.clbench_args else [])


def choose_mode(args, platforms: list[dict]) -> str:
    if args.quick:
        return "quick"
    if args.full:
        return "full"
    gpu = any(d["type"] == "GPU" for p in platforms for d in p["devices"])
    if not gpu:
        log("no GPU among the platforms: quick sizes (--full to override)")
    return "full" if gpu else "quick"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small sizes (default when no platform has a GPU)")
    size.add_argument("--full", action="store_true", help="full sizes (default when a GPU is present)")
    ap.add_argument("--out", help="directory for the results (default bench/results)")
    ap.add_argument("--platforms", help="comma-separated substrings of platform names or keys (vkcl, NVIDIA, "
                    "PoCL) to run (default all)")
    ap.add_argument("--only", help="comma-separated groups (see bench/README.md)")
    ap.add_argument("--runs", type=int, help="timed runs per measurement")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per group and platform (default 300)")
    ap.add_argument("--budget", type=float, default=0, help="seconds for the whole run; 0: no limit")
    ap.add_argument("--vendors", help="OCL_ICD_VENDORS directory with every ICD to compare")
    ap.add_argument("--clbench-args", help="more options for clbench, e.g. '--bw-mib 512 --sgemm-n 2048'")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--show", metavar="JSON", help="print the table of a saved result file and exit")
    args = ap.parse_args()
    if args.show:
        print(table(json.loads(Path(args.show).read_text())), end="")
        return 0
    t_start = time.monotonic()
    build_binary(args.cc)
    tmp = Path(tempfile.mkdtemp(prefix="vkcl-bench-"))
    try:
        return run_all(args, tmp, t_start)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def new_record(p: dict) -> dict:
    return {"name": p["name"], "version": p["version"], "vendor": p["vendor"], "icd": p["icd"],
            "devices": p["devices"], "device": listed_device(p), "results": {}, "runs": []}


def result_stem(args, platforms: list[dict]) -> Path:
    """<out>/<date>-<host>-<vkcl's device, else the first platform's>"""
    tagged = next((p for p in platforms if p["key"] == "vkcl"), platforms[0])
    device = listed_device(tagged).get("device_name", "nodevice")
    tag = re.sub(r"[^A-Za-z0-9]+", "-", device.split("(")[0]).strip("-")[:40]
    host = socket.gethostname().split(".")[0]
    out_dir = Path(args.out) if args.out else BENCH / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir / f"{dt.datetime.now():%Y%m%d-%H%M%S}-{host}-{tag}"


def run_group(p: dict, group: str, items: list, record: dict, env: dict, extra: list, timeout: float,
              logf) -> None:
    """One clbench process: `group` on platform `p`, its results into `record`."""
    cmd = [str(BINARY), "--platform", p["name"], "--only", group, *extra]
    log(f"[{p['key']}] {group} ...")
    r = run_cmd(cmd, env, timeout)
    logf.write(f"==== {p['key']} {group}: {' '.join(cmd)}\n{r['stderr']}\n")
    logf.flush()
    info, results = parse_output(r["stdout"])
    if info:
        record["device"] = info
    why = (f"timed out after {timeout:.0f} s" if r["timed_out"] else
           f"clbench exited with {'signal ' + str(-r['rc']) if r['rc'] < 0 else 'status ' + str(r['rc'])}")
    tail = " | ".join(r["stderr"].strip().splitlines()[-3:])
    for name, unit in items:
        if name not in results:
            results[name] = {"status": "fail", "unit": unit, "value": 0.0,
                             "reason": f"{why} before reporting; stderr: {tail[-400:]}"}
        e = results[name]
        log(f"    {name:28s} {fmt(e):>10s} {e.get('unit', '')}"
            + (f"  ({e.get('reason')})" if e["status"] != "ok" else ""))
    record["results"].update(results)
    record["runs"].append({"group": group, "seconds": r["seconds"], "rc": r["rc"], "timed_out": r["timed_out"],
                           "command": cmd})


def run_all(args, tmp: Path, t_start: float) -> int:
    env = dict(os.environ, OCL_ICD_VENDORS=make_vendors_dir(args.vendors, tmp))
    env.pop("VKCL_CACHE_DIR", None)
    log(f"OCL_ICD_VENDORS={env['OCL_ICD_VENDORS']}")
    platforms = select_platforms(list_platforms(env), args.platforms)
    if not platforms:
        log("no OpenCL platform found")
        return 1
    args.mode = choose_mode(args, platforms)
    groups = [g for g in group_names() if not args.only or g[0] in args.only.split(",")]
    extra = clbench_args(args)
    stem = result_stem(args, platforms)
    data = {
        "schema": SCHEMA, "created": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "command": [sys.executable, *sys.argv], "cwd": os.getcwd(),
        "mode": args.mode, "clbench_args": extra, "native": native_key(platforms),
        "order": [name for _, items in groups for name, _ in items],
        "platforms": {p["key"]: new_record(p) for p in platforms},
    }
    log(f"platforms: {', '.join(p['key'] + ' (' + p['name'] + ')' for p in platforms)}; "
        f"native reference: {data['native']}; sizes: {args.mode}; results: {stem}.json")
    with open(stem.with_suffix(".log"), "w") as logf:
        for group, items in groups:
            for p in platforms:
                record = data["platforms"][p["key"]]
                remaining = args.budget - (time.monotonic() - t_start) - 10 if args.budget else float("inf")
                if remaining < 5:
                    for name, unit in items:
                        record["results"][name] = {"status": "fail", "unit": unit, "value": 0.0,
                                                   "reason": "not run: the --budget time ran out"}
                    continue
                # Each platform's build_cold starts with an empty cache, which build_warm then reuses;
                # the other groups share a second one.
                cache = tmp / f"cache-{p['key']}{'-build' if group.startswith('build_') else ''}"
                cache.mkdir(exist_ok=True)
                penv = dict(env, OCL_ICD_VENDORS=p["icd"], XDG_CACHE_HOME=str(cache),
                            CUDA_CACHE_PATH=str(cache / "nv"), POCL_CACHE_DIR=str(cache / "pocl"))
                run_group(p, group, items, record, penv, extra, min(args.timeout, remaining), logf)
                save(data, stem)
    save(data, stem)
    text = table(data)
    stem.with_suffix(".txt").write_text(text)
    print(text, end="")
    try:
        sys.path.insert(0, str(BENCH))
        import chart
        png = chart.draw(data, stem.with_suffix(".png"))
        if png:
            log(f"chart: {png}")
    except ImportError as e:
        log(f"no chart ({e}); draw it later with: python3 bench/chart.py {stem}.json")
    log(f"results: {stem}.json ({time.monotonic() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
