"""Contexts through the ICD loader (tests/icd/c/context.c)."""
from checks import assert_passed


def test_contexts_properties_errors_and_callbacks(c_program):
    assert_passed(c_program("context").run())


def test_exit_is_clean_without_any_release(c_program):
    # The application never releases its context: the process still exits 0, no crash.
    result = c_program("context").run("leak")
    assert_passed(result)
