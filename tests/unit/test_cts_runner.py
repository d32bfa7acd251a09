"""The pure-Python parts of tests/cts/run_cts.py (the CTS runner): reading the harness's listing
and results files, picking error lines, classifying a finished process, the summary table.
Nothing here needs the CTS or an OpenCL device."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "cts" / "run_cts.py"
_SPEC = importlib.util.spec_from_file_location("run_cts", _PATH)
run_cts = importlib.util.module_from_spec(_SPEC)
sys.modules["run_cts"] = run_cts
_SPEC.loader.exec_module(run_cts)

# As the harness writes it (testHarness.cpp's saveResultsToJson), tabs and all.
RESULTS = ('{\n\t"cmd": "./test_select",\n\t"args": "-w select_int_int",\n\t"results": {\n'
           '\t\t"select_int_int": "pass",\n\t\t"select_float_int": "fail",\n'
           '\t\t"select_half_short": "skip"\n\t}\n}\n')


def test_parse_results_valid_json():
    assert run_cts.parse_results(RESULTS) == {
        "select_int_int": "pass", "select_float_int": "fail", "select_half_short": "skip"}


def test_parse_results_unescaped_arguments():
    """The harness escapes nothing: a quote or backslash in the arguments breaks the JSON,
    and the entries must still be read."""
    broken = RESULTS.replace('"-w select_int_int"', '"-w "a\\b" select_int_int"')
    with pytest.raises(ValueError):
        json.loads(broken)
    assert run_cts.parse_results(broken)["select_float_int"] == "fail"
    assert len(run_cts.parse_results(broken)) == 3


def test_parse_listing_takes_only_tab_indented_names():
    text = "Some banner\n\tatomic_add\n\tatomic_and\n\n\tnot a name\nTrailer\n"
    assert run_cts.parse_listing(text) == ["atomic_add", "atomic_and"]


def test_error_lines_skip_summaries_and_repeats():
    log = ("Platform Version: OpenCL 3.0 PoCL 3.1  Linux, None+Asserts, RELOC\n"
           "atomic_cmpxchg...\n"
           "ERROR: Result 0 from kernel does not validate! (should be 4, was 3)\n"
           "ERROR: Result 0 from kernel does not validate! (should be 4, was 3)\n"
           "sin: 0 errors\nFAILED 1 of 2 tests.\nFAILED 1 of 2 sub-tests.\nFAILED test.\n"
           "atomic_cmpxchg FAILED\n"
           "ERROR: sinf: 5.1 ulp error at 0x1p+0\n"
           "Values do not match at location 0\nPASSED sub-test.\n")
    assert run_cts.error_lines(log) == [
        "ERROR: Result 0 from kernel does not validate! (should be 4, was 3)",
        "ERROR: sinf: 5.1 ulp error at 0x1p+0", "Values do not match at location 0"]
    assert len(run_cts.error_lines("error\n" * 3 + "".join(f"fail {i}\n" for i in range(9)),
                                   limit=4)) == 4


def test_classify_results_file_wins():
    got = run_cts.classify({"a": "pass", "b": "fail"}, ["a", "b"], 1, "ERROR: b broke\n", 2.0)
    assert got["a"]["status"] == "pass" and got["a"]["messages"] == []
    assert got["b"] == {"status": "fail", "seconds": 2.0, "returncode": 1,
                        "messages": ["ERROR: b broke"]}


def test_classify_timeout_crash_and_silent_failure():
    timed_out = run_cts.classify({}, ["slow"], None, "", 600.04)["slow"]
    assert timed_out["status"] == "timeout"
    assert timed_out["messages"] == ["timed out after 600 s"]
    crashed = run_cts.classify({}, ["bad"], -11, "running bad\n", 1.0)["bad"]
    assert crashed["status"] == "fail"
    assert crashed["messages"][0] == "killed by signal 11"
    # A results file saying "pass" from a process that exited non-zero is not a pass.
    assert run_cts.classify({"x": "pass"}, ["x"], 1, "", 1.0)["x"]["status"] == "fail"
    assert run_cts.classify({"x": "skip"}, ["x"], 0, "", 1.0)["x"]["status"] == "skip"


def test_summary_and_table():
    records = {
        "a": {"status": "pass"}, "b": {"status": "fail"}, "c": {"status": "skip"},
        "d": {"status": "timeout"}, "e": {"status": "pass"}}
    summary = run_cts.summarize("select", records)
    assert summary == {"suite": "select", "pass": 2, "fail": 1, "skip": 1, "timeout": 1,
                       "failing": ["b", "d"]}
    clean = run_cts.summarize("atomics", {"x": {"status": "pass"}})
    table = run_cts.format_table([summary, clean]).splitlines()
    assert table[0] == "| suite | pass | fail | skip | timeout | failing sub-tests |"
    assert table[2] == "| select | 2 | 1 | 1 | 1 | b, d |"
    assert table[3] == "| atomics | 1 | 0 | 0 | 0 | - |"


def test_vendors_dir_from_library(tmp_path):
    lib = tmp_path / "libfoo.so"
    lib.write_bytes(b"")
    vendors = run_cts.vendors_dir(lib, tmp_path / "v")
    assert [p.read_text() for p in vendors.iterdir()] == [f"{lib}\n"]
    assert run_cts.vendors_dir(vendors, tmp_path / "unused") == vendors


def test_args_split_like_a_shell():
    opts = run_cts.parse_args(["--cts", "c", "--icd", "i", "--out", "o", "--args=-w -d",
                               "bruteforce:sin,cos"])
    assert opts.extra == ["-w", "-d"] and opts.suites == ["bruteforce:sin,cos"]


def test_table_beside_another_run():
    ours = [run_cts.summarize("select", {"a": {"status": "pass"}, "b": {"status": "fail"}}),
            run_cts.summarize("half", {"a": {"status": "pass"}})]
    theirs = {"select": run_cts.summarize("select", {"a": {"status": "pass"},
                                                     "b": {"status": "timeout"}})}
    table = run_cts.format_table(ours, theirs, "pocl").splitlines()
    assert table[0].endswith("| failing sub-tests | pocl pass / fail / skip / timeout |")
    assert table[1] == "|---|---|---|---|---|---|---|"
    assert table[2] == "| select | 1 | 1 | 0 | 0 | b | 1 / 0 / 0 / 1 |"
    assert table[3] == "| half | 1 | 0 | 0 | 0 | - | not run |"


# A stand-in for a CTS binary: lists three sub-tests; `quick` passes, `broken` fails (exit 1),
# `slow` outlives any time limit the tests give it.
FAKE_SUITE = """#!/bin/sh
if [ "$1" = --list ]; then printf 'Test names:\\n\\tquick\\n\\tbroken\\n\\tslow\\n'; exit 0; fi
for a; do name=$a; done
case $name in
quick) printf '{"results": {"quick": "pass"}}' > "$CL_CONFORMANCE_RESULTS_FILENAME";;
broken) echo "ERROR: broken did not validate"
        printf '{"results": {"broken": "fail"}}' > "$CL_CONFORMANCE_RESULTS_FILENAME"; exit 1;;
slow) sleep 60;;
esac
"""


def test_runs_skips_updates_and_tables(tmp_path, monkeypatch, capsys):
    """The whole run on a stand-in binary: each sub-test's status, --skip, --update, --table."""
    monkeypatch.setattr(run_cts.signal, "signal", lambda *args: None)  # keep pytest's handlers
    binary = tmp_path / "cts" / "test_conformance" / "fake" / "test_fake"
    binary.parent.mkdir(parents=True)
    binary.write_text(FAKE_SUITE)
    binary.chmod(0o755)
    (tmp_path / "libicd.so").write_bytes(b"")
    common = ["--cts", str(tmp_path / "cts"), "--icd", str(tmp_path / "libicd.so"),
              "--out", str(tmp_path / "out"), "--limit", "1"]

    assert run_cts.main(common + ["fake"]) == 1
    report = json.loads((tmp_path / "out" / "fake.json").read_text())
    status = {name: r["status"] for name, r in report["subtests"].items()}
    assert status == {"quick": "pass", "broken": "fail", "slow": "timeout"}
    assert report["subtests"]["broken"]["messages"] == ["ERROR: broken did not validate"]

    # Run again with `slow` skipped: its record from the first run stays.
    assert run_cts.main(common + ["--update", "--skip", "slow", "fake"]) == 1
    report = json.loads((tmp_path / "out" / "fake.json").read_text())
    assert sorted(report["subtests"]) == ["broken", "quick", "slow"]
    assert report["summary"]["timeout"] == 1

    capsys.readouterr()
    assert run_cts.main(["--out", str(tmp_path / "out"), "--table", "fake"]) == 1
    assert "| fake | 1 | 1 | 0 | 1 | broken, slow |" in capsys.readouterr().out


def test_classify_names_a_filtered_single_test_by_its_argument():
    """test_conversions has one test, `conversions`; `test_conversions float_rtz_int` runs
    only that conversion, and its record is named so."""
    got = run_cts.classify({"conversions": "fail"}, ["float_rtz_int"], 1, "ERROR: x\n", 1.0)
    assert list(got) == ["float_rtz_int"] and got["float_rtz_int"]["status"] == "fail"
    both = run_cts.classify({"a": "pass", "b": "pass"}, ["a"], 0, "", 1.0)
    assert sorted(both) == ["a", "b"]


def test_classify_fails_a_filter_the_binary_could_not_read():
    """`test_conversions conversions` (the name --list gives) tests nothing and says PASSED:
    the record is a failure that says why."""
    log = ("conversions...\n\t\t**** ERROR:  Unable to parse function name conversions.  Skipping....  *****\n"
           "conversions passed\nPASSED sub-test.\n")
    got = run_cts.classify({"conversions": "pass"}, ["conversions"], 0, log, 0.5)["conversions"]
    assert got["status"] == "fail" and "could not read the sub-test name 'conversions'" in got["messages"][0]


def test_every_conversion_is_named():
    """`conversions` alone runs each conversion test_conversions knows, one process each."""
    names = run_cts.conversion_names()
    assert len(names) == len(set(names)) == 1045
    assert {"float_rtz_int", "int_sat_rte_double", "uchar_sat_half", "double_ulong", "half_rtn_float"} <= set(names)
    assert not any(n.startswith(("float_sat", "half_sat", "double_sat")) for n in names)


def test_deadline_records_the_sub_tests_not_started(tmp_path, monkeypatch):
    """Past --deadline no sub-test starts; the report still comes, naming them `notrun`, and
    the run does not count as clean."""
    monkeypatch.setattr(run_cts.signal, "signal", lambda *args: None)
    binary = tmp_path / "cts" / "test_conformance" / "fake" / "test_fake"
    binary.parent.mkdir(parents=True)
    binary.write_text(FAKE_SUITE)
    binary.chmod(0o755)
    (tmp_path / "libicd.so").write_bytes(b"")
    monkeypatch.setattr(run_cts, "_started", run_cts.time.monotonic() - 100)
    args = ["--cts", str(tmp_path / "cts"), "--icd", str(tmp_path / "libicd.so"),
            "--out", str(tmp_path / "out"), "--limit", "1", "--deadline", "50", "fake:quick"]
    assert run_cts.main(args) == 1
    report = json.loads((tmp_path / "out" / "fake.json").read_text())
    assert report["subtests"]["quick"]["status"] == "notrun"
    assert report["summary"]["not_run"] == ["quick"] and report["summary"]["pass"] == 0
    assert "(1 not run: deadline)" in run_cts.format_table([report["summary"]])
    monkeypatch.setattr(run_cts, "_started", run_cts.time.monotonic())
    assert run_cts.main(args[:-1] + ["--update", "fake:quick"]) == 0
    report = json.loads((tmp_path / "out" / "fake.json").read_text())
    assert report["summary"]["pass"] == 1 and "not_run" not in report["summary"]
