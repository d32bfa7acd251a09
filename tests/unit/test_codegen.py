"""The generated glue is current, and its table is what the ICD needs."""
import subprocess
import sys
from pathlib import Path

from vkcl._gen import cl
from vkcl._gen.cl_api import ENTRIES

ROOT = Path(__file__).resolve().parents[2]


def test_generated_files_are_current():
    result = subprocess.run([sys.executable, str(ROOT / "codegen" / "gen_icd.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dispatch_table_has_all_149_entries_in_order():
    assert len(ENTRIES) == 149
    assert [e[0] for e in ENTRIES] == list(range(149))
    assert ENTRIES[0][1] == "clGetPlatformIDs" and ENTRIES[-1][1] == "clSetContextDestructorCallback"


def test_api_names_are_unique_snake_case():
    names = [e[2] for e in ENTRIES]
    assert len(set(names)) == len(names)
    assert "get_platform_ids" in names and "enqueue_nd_range_kernel" in names
    assert all(n == n.lower() and "__" not in n for n in names)


def test_constants():
    assert cl.CL_SUCCESS == 0 and cl.CL_INVALID_VALUE == -30 and cl.CL_PLATFORM_NOT_FOUND_KHR == -1001
    assert cl.ERROR_NAMES[-30] == "CL_INVALID_VALUE"
