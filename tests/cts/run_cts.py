#!/usr/bin/env python3
"""Run suites of the Khronos OpenCL-CTS against one ICD, each sub-test in its own process.

A developer tool, not part of `make test` (its unit tests are: tests/unit/test_cts_runner.py).
For every suite it lists the sub-tests (`test_<suite> --list`), runs each one as
`test_<suite> <extra args> <sub-test>` in the binary's own directory (some suites read files from
there), with `OCL_ICD_VENDORS` naming only the ICD under test and
`CL_CONFORMANCE_RESULTS_FILENAME` asking the harness for its pass/fail/skip JSON. A sub-test that
runs past the time limit is killed with its whole process group (child processes an ICD
leaves in the group too; vkcl's compiler worker has a session of its own and exits when the
CTS process is gone) and recorded as a timeout; one that ends without writing results (a
crash) is a failure.

Per suite it writes <out>/<suite>.json (status, time, exit status and the first error lines of
every sub-test) and keeps each sub-test's log and CTS results under <out>/<suite>/; at the end it
prints a Markdown table of all suites (`--table` prints it from <out> again without running;
`--beside DIR` adds another run's counts, e.g. PoCL's, to each row).

    tests/cts/run_cts.py --cts ../cts/build --icd build/libvkcl.so --out /tmp/cts \\
        --limit 300 --args=-w atomics select c11_atomics:atomic_init,atomic_fetch_add
    tests/cts/run_cts.py --cts ../cts/build --icd /etc/OpenCL/vendors/pocl.icd \\
        --out /tmp/cts-pocl --args='-w -d' bruteforce:exp10,expm1,pow
    tests/cts/run_cts.py --cts ../cts/build --icd build/libvkcl.so --out /tmp/cts \\
        --table --beside /tmp/cts-pocl atomics select c11_atomics bruteforce

A suite is named as its binary without `test_` (`bruteforce` is math_brute_force's binary);
`suite:a,b` runs only sub-tests a and b; `--skip a,b` leaves sub-tests out of every suite;
`--update` merges the sub-tests run into an earlier <suite>.json instead of replacing it;
`--deadline S` starts no sub-test once S seconds have passed since the runner started and
records those left as `notrun` (for a machine that gives a command a fixed time: the report is
still written, and `--update` with the `notrun` names finishes it later);
`--whole` runs each suite as one process (for binaries whose sub-tests cannot be listed this
happens anyway). test_conversions lists one test, `conversions`, which it cannot take as a
sub-test name: `conversions` alone runs every conversion it knows (1,045: each
`<dst>[_sat][_rte|_rtp|_rtn|_rtz]_<src>`, `_sat` for integer destinations), one process each;
or name conversions (`conversions:float_rtz_int,...`), or use `--whole` (a name it cannot read
is recorded as a failure, not the pass it reports).

Building the CTS, once, beside the checkout (nothing of it belongs in this repository). A fresh
machine cannot reach GitHub, so the sources come as git mirrors copied onto it:
KhronosGroup/OpenCL-CTS, OpenCL-Headers (Debian 12's opencl-headers are too old for the CTS's
head) and SPIRV-Headers. Export each tree (a mirror may lack test_spir's large zip files, at
which `git archive` would stop), configure against the Khronos headers, link Debian's ocl-icd:

    git --git-dir=<OpenCL-CTS mirror> archive HEAD -- . ':(exclude)test_conformance/spir/*.zip' \\
        | tar -x -C ../cts/src    # likewise OpenCL-Headers into ../cts/headers and
                                  # SPIRV-Headers into ../cts/spirv-headers
    cmake -S ../cts/src -B ../cts/build -DCMAKE_BUILD_TYPE=Release \\
        -DCL_INCLUDE_DIR=$PWD/../cts/headers -DSPIRV_INCLUDE_DIR=$PWD/../cts/spirv-headers \\
        -DCL_LIB_DIR=/usr/lib/x86_64-linux-gnu -DOPENCL_LIBRARIES=OpenCL
    make -C ../cts/build -j2 test_api test_basic test_bruteforce ...   # any but test_spir

(all binaries but test_spir build in about 6 minutes on 2 cores).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

STATUSES = ("pass", "fail", "skip", "timeout")
NOT_RUN = "notrun"  # not started: the runner's --deadline had passed
# Lines of a CTS log that say what went wrong (the harness's own summary lines excluded).
_ERROR_LINE = re.compile(r"error|fail|crash|mismatch|wrong|expected|abort|\bassert(ion)?\b|"
                         r"\bdo(es)? not (match|validate)", re.IGNORECASE)
_NOT_ERROR_LINE = re.compile(r"^(PASSED|FAILED|SKIPPED)( \d+ of \d+)? (sub-)?tests?\.?$|"
                             r"^\S+ FAILED$|^Saving results to |\b0 (errors?|failures?)\b")
# test_conversions skips a filter argument it cannot read as a conversion, then reports a pass
# (its only test, `conversions`, as named by --list, is such an argument).
_UNREAD_FILTER = re.compile(r"Unable to parse function name (\S+?)\.? +Skipping")
_RESULT_ENTRY = re.compile(r'"([^"\n]+)"\s*:\s*"(pass|fail|skip)"')
# Process groups of the sub-tests now running, killed when the runner itself is stopped.
_running: set[int] = set()
_stopping = threading.Event()
_started = time.monotonic()


def find_binary(cts_build: Path, suite: str) -> Path:
    """The executable `test_<suite>` somewhere under the CTS build's test_conformance/."""
    name = suite if suite.startswith("test_") else "test_" + suite
    for path in sorted((cts_build / "test_conformance").rglob(name)):
        if path.is_file() and os.access(path, os.X_OK):
            return path
    raise SystemExit(f"run_cts: no binary {name} under {cts_build}/test_conformance")


def vendors_dir(icd: Path, scratch: Path) -> Path:
    """A directory for OCL_ICD_VENDORS holding only the ICD named by `icd` (a vendors directory,
    an .icd file or the library itself), so no other installed driver answers."""
    if icd.is_dir():
        return icd
    scratch.mkdir(parents=True, exist_ok=True)
    text = icd.read_text() if icd.suffix == ".icd" else str(icd.resolve()) + "\n"
    (scratch / "under_test.icd").write_text(text)
    return scratch


_INTEGERS = ("uchar", "char", "ushort", "short", "uint", "int", "ulong", "long")


def conversion_names() -> list[str]:
    """Every conversion test_conversions takes as a sub-test name."""
    types = _INTEGERS + ("half", "float", "double")
    return [f"{dst}{sat}{rnd}_{src}" for dst in types for src in types
            for sat in (("", "_sat") if dst in _INTEGERS else ("",))
            for rnd in ("", "_rte", "_rtp", "_rtn", "_rtz")]


def parse_listing(text: str) -> list[str]:
    """Sub-test names from `--list`: the harness prints each one on a line of its own, indented
    by a tab."""
    return [line.strip() for line in text.splitlines()
            if line.startswith("\t") and line.strip() and " " not in line.strip()]


def parse_results(text: str) -> dict[str, str]:
    """The per-sub-test results of a CL_CONFORMANCE_RESULTS_FILENAME file.

    The harness writes it with printf and escapes nothing, so an argument with a quote or a
    backslash makes it invalid JSON: then the entries are read line by line."""
    try:
        results = json.loads(text).get("results", {})
        return {str(k): str(v) for k, v in results.items()}
    except (ValueError, AttributeError):
        section = text.split('"results"', 1)[-1]
        return dict(_RESULT_ENTRY.findall(section))


def error_lines(log: str, limit: int = 6) -> list[str]:
    """The first distinct lines of a log that report an error, each cut to 200 characters."""
    found: list[str] = []
    for line in log.splitlines():
        line = line.strip()[:200]
        if (line and line not in found and _ERROR_LINE.search(line)
                and not _NOT_ERROR_LINE.search(line)):
            found.append(line)
            if len(found) == limit:
                break
    return found


def classify(results: dict[str, str], names: list[str], returncode: int | None, log: str,
             seconds: float) -> dict[str, dict]:
    """One record per sub-test from a finished (or killed: returncode None) process."""
    if len(names) == 1 and len(results) == 1 and names[0] not in results:
        # A binary of one test that takes a filter argument (test_conversions float_rtz_int):
        # its result is the argument's.
        results = {names[0]: next(iter(results.values()))}
    if returncode is None:
        status_of = {name: "timeout" for name in names}
    elif results:
        status_of = dict(results)
    else:  # no results file: the process died before the harness wrote it
        status_of = {name: "fail" for name in names}
    if returncode and results and all(s == "pass" for s in results.values()):
        status_of = {name: "fail" for name in status_of}  # passes reported, yet it failed
    unread = _UNREAD_FILTER.search(log)
    if unread:  # nothing was tested: never a pass
        status_of = {name: "fail" for name in status_of}
    records = {}
    for name, status in status_of.items():
        messages = []
        if status == "fail":
            messages = error_lines(log)
            if unread:
                messages.insert(0, f"the binary could not read the sub-test name {unread.group(1)!r}: nothing tested"
                                   " (test_conversions: name conversions, e.g. float_rtz_int, or use --whole)")
            if returncode and returncode < 0:
                messages.insert(0, f"killed by signal {-returncode}")
            elif not results:
                messages.insert(0, f"exit status {returncode} and no results file")
            if not messages:
                messages = log.strip().splitlines()[-3:]
        elif status == "timeout":
            messages = [f"timed out after {seconds:.0f} s"]
        records[name] = {"status": status, "seconds": round(seconds, 1),
                         "returncode": returncode, "messages": messages}
    return records


def run_process(binary: Path, names: list[str], extra: list[str], env: dict, limit: float,
                stem: Path) -> dict[str, dict]:
    """Run the binary on `names` (all of them when empty); its log and results go to stem.*"""
    if _stopping.is_set():
        return {}
    results_file = stem.with_suffix(".results.json")
    results_file.unlink(missing_ok=True)
    env = dict(env, CL_CONFORMANCE_RESULTS_FILENAME=str(results_file))
    start = time.monotonic()
    with open(stem.with_suffix(".log"), "w+b") as log_file:
        proc = subprocess.Popen([str(binary), *extra, *names], cwd=binary.parent, env=env,
                                stdout=log_file, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        _running.add(proc.pid)
        try:
            if _stopping.is_set():
                raise subprocess.TimeoutExpired(binary.name, 0)
            returncode = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:  # the group's other processes may not outlive the sub-test
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            _running.discard(proc.pid)
        log_file.seek(0)
        log = log_file.read().decode(errors="replace")
    seconds = time.monotonic() - start
    results = parse_results(results_file.read_text()) if results_file.exists() else {}
    return classify(results, names or [binary.name], returncode, log, seconds)


def summarize(suite: str, records: dict[str, dict]) -> dict:
    """Counts per status and the failing (or timed out) sub-tests of one suite."""
    counts = {status: 0 for status in STATUSES}
    for record in records.values():
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    failing = sorted(name for name, r in records.items() if r["status"] in ("fail", "timeout"))
    summary = {"suite": suite, **counts, "failing": failing}
    if counts.get(NOT_RUN):
        summary["not_run"] = sorted(n for n, r in records.items() if r["status"] == NOT_RUN)
    return summary


def format_table(summaries: list[dict], beside: dict[str, dict] | None = None,
                 beside_name: str = "") -> str:
    """A Markdown table: suite, pass, fail, skip, timeout, failing sub-tests; with `beside`
    (summaries of another run by suite) a last column of that run's counts."""
    head = "| suite | pass | fail | skip | timeout | failing sub-tests |"
    rule = "|---|---|---|---|---|---|"
    if beside is not None:
        head += f" {beside_name} pass / fail / skip / timeout |"
        rule += "---|"
    lines = [head, rule]
    for s in summaries:
        failing = ", ".join(s["failing"]) or "-"
        if s.get(NOT_RUN):
            failing += f" ({s[NOT_RUN]} not run: deadline)"
        line = (f"| {s['suite']} | {s['pass']} | {s['fail']} | {s['skip']} "
                f"| {s['timeout']} | {failing} |")
        if beside is not None:
            other = beside.get(s["suite"])
            counts = " / ".join(str(other[k]) for k in STATUSES) if other else "not run"
            line += f" {counts} |"
        lines.append(line)
    return "\n".join(lines)


def saved_summaries(out: Path, specs: list[str]) -> dict[str, dict]:
    """The summaries of earlier runs kept in <out>/<suite>.json, by suite (missing ones left
    out)."""
    found = {}
    for spec in specs:
        suite = spec.partition(":")[0].removeprefix("test_")
        path = out / f"{suite}.json"
        if path.exists():
            found[suite] = json.loads(path.read_text())["summary"]
    return found


def run_suite(spec: str, opts, env: dict) -> dict:
    """Run one `suite[:sub,sub]`, write <out>/<suite>.json and return its summary."""
    suite, _, wanted = spec.partition(":")
    suite = suite.removeprefix("test_")
    binary = find_binary(opts.cts, suite)
    names = [n for n in wanted.split(",") if n]
    if not names and not opts.whole and suite == "conversions":
        names = conversion_names()
    elif not names and not opts.whole:
        listing = subprocess.run([str(binary), "--list"], cwd=binary.parent, env=env,
                                 capture_output=True, text=True, timeout=120)
        names = parse_listing(listing.stdout)
    names = [n for n in names if n not in opts.skip]
    workdir = opts.out / suite
    workdir.mkdir(parents=True, exist_ok=True)
    if names and not opts.whole:
        jobs = [([name], workdir / name) for name in names]
    else:  # one process for the whole suite (or the named sub-tests together)
        jobs = [(names, workdir / "_whole")]
    report_path = opts.out / f"{suite}.json"
    records: dict[str, dict] = {}
    if opts.update and report_path.exists():  # sub-tests run now replace their old records
        records = json.loads(report_path.read_text())["subtests"]

    def one(job):
        sub, stem = job
        if opts.deadline is not None and time.monotonic() - _started > opts.deadline:
            return {name: {"status": NOT_RUN, "seconds": 0} for name in sub or [binary.name]}
        got = run_process(binary, sub, opts.extra, env, opts.limit, stem)
        for name, record in got.items():
            print(f"{suite}/{name}: {record['status']} ({record['seconds']} s)", flush=True)
        return got

    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for got in pool.map(one, jobs):
            records.update(got)
    summary = summarize(suite, records)
    report = {"suite": suite, "binary": str(binary), "args": opts.extra,
              "icd": str(opts.icd), "limit_s": opts.limit, "summary": summary,
              "subtests": records}
    report_path.write_text(json.dumps(report, indent=1) + "\n")
    return summary


def parse_args(argv: list[str] | None = None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("suites", nargs="+", metavar="SUITE[:SUB,...]",
                   help="suite (binary without test_), optionally with chosen sub-tests")
    p.add_argument("--cts", type=Path, help="the CTS build directory")
    p.add_argument("--icd", type=Path,
                   help="vendors directory, .icd file or ICD library to test")
    p.add_argument("--out", type=Path, required=True, help="directory for logs and summaries")
    p.add_argument("--limit", type=float, default=600, help="seconds per sub-test (600)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="sub-tests run at once (1)")
    p.add_argument("--args", dest="extra", default="", type=shlex.split,
                   help="extra arguments for every binary, e.g. --args='-w' (wimpy)")
    p.add_argument("--deadline", type=float,
                   help="seconds after which no sub-test starts (the rest: notrun)")
    p.add_argument("--whole", action="store_true", help="run each suite as one process")
    p.add_argument("--skip", default="", type=lambda text: set(filter(None, text.split(","))),
                   help="sub-tests to leave out of every suite, comma-separated")
    p.add_argument("--update", action="store_true",
                   help="merge into <out>/<suite>.json rather than replace it")
    p.add_argument("--table", action="store_true",
                   help="run nothing: print the table of the suites' saved results in <out>")
    p.add_argument("--beside", type=Path,
                   help="another run's <out> (e.g. PoCL's) whose counts the table shows too")
    opts = p.parse_args(argv)
    if not opts.table and not (opts.cts and opts.icd):
        p.error("--cts and --icd are needed to run suites (all but --table)")
    return opts


def _stop(signum, _frame):
    """On SIGINT or SIGTERM: start no more sub-tests and kill the running ones' groups."""
    _stopping.set()
    for pgid in list(_running):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    opts.out = opts.out.resolve()
    if opts.table:
        summaries = list(saved_summaries(opts.out, opts.suites).values())
    else:
        opts.out.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env["OCL_ICD_VENDORS"] = str(vendors_dir(opts.icd.resolve(), opts.out / "_vendors"))
        summaries = [run_suite(spec, opts, env) for spec in opts.suites]
    beside = saved_summaries(opts.beside, opts.suites) if opts.beside else None
    print(format_table(summaries, beside, opts.beside.name if opts.beside else ""))
    return 0 if all(s["fail"] == s["timeout"] == s.get(NOT_RUN, 0) == 0 for s in summaries) else 1


if __name__ == "__main__":
    sys.exit(main())
