"""Helpers for the tests that run programs through the ICD loader."""
import subprocess


def assert_passed(result: subprocess.CompletedProcess) -> None:
    """A harness program prints 'FAIL ...' lines and exits non-zero on any failure."""
    text = result.stdout + result.stderr
    assert result.returncode == 0 and "FAIL" not in text, text[-6000:]
