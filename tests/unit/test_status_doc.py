"""docs/status.md lists exactly the entry points that return an error on purpose."""
import re
from pathlib import Path

from vkcl._gen.cl_api import ENTRIES
from vkcl.api import registry

ROOT = Path(__file__).resolve().parents[2]
C_NATIVE = {"clGetExtensionFunctionAddress", "clGetExtensionFunctionAddressForPlatform"}


def test_status_lists_every_unimplemented_entry():
    implemented = set(registry.implementations())
    expected = {e[1] for e in ENTRIES if e[4] is not None and e[1] not in C_NATIVE and e[1] not in implemented}
    text = (ROOT / "docs" / "status.md").read_text()
    section = text.split("## Not implemented yet", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`(cl[A-Z]\w+)`", section))
    assert listed == expected, f"missing from docs: {sorted(expected - listed)}; implemented now: {sorted(listed - expected)}"
