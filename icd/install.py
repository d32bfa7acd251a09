"""Install vkcl self-contained under one directory (`make install`): the Python package, its
built-in kernels, the Python packages it needs at run time (copied from this interpreter's
environment, and for every other Python `make build` found, from build/python<X.Y>/site), and
the ICD libraries built to use them (icd/build.py), so that the checkout can go.

    python icd/install.py --libdir /usr/local/lib/vkcl [--destdir STAGING] [--uninstall]

LIBDIR is where the files will be at run time (recorded in the library); DESTDIR, as packagers
expect, is prepended where they are written now. The library embeds this interpreter's base
Python (its libpython and standard library, not a virtualenv's), which the install does not copy.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What vkcl imports at run time, and what those import.
RUNTIME_DISTRIBUTIONS = ("vulkan", "cffi", "pycparser", "pyclspv")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "_build_info.py")


def copy_distribution(name: str, site: Path) -> None:
    """Every file pip installed for distribution `name`, at the same place under `site`."""
    dist = importlib.metadata.distribution(name)
    for f in dist.files or ():
        src = Path(dist.locate_file(f)).resolve()
        rel = Path(f)
        if rel.parts[0] == ".." or "__pycache__" in rel.parts or not src.is_file():
            continue  # files outside site-packages (scripts), and bytecode
        dst = site / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)


def install(libdir: Path, destdir: str) -> None:
    target = Path(destdir + str(libdir)) if destdir else libdir
    if target.exists():
        shutil.rmtree(target)
    site = target / "site"
    site.mkdir(parents=True)
    shutil.copytree(ROOT / "vkcl", target / "vkcl", ignore=IGNORED)
    shutil.copytree(ROOT / "shaders", target / "shaders", ignore=IGNORED)
    for name in RUNTIME_DISTRIBUTIONS:
        copy_distribution(name, site)
    # The run-time packages of the other Pythons `make build` made a library for (icd/build.py).
    for other in sorted((ROOT / "build").glob("python3.*/site")):
        shutil.copytree(other, target / other.parent.name / "site", ignore=IGNORED)
    python = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run([sys.executable, str(ROOT / "icd" / "build.py"), "--root", str(libdir), "--site", str(libdir / "site"),
                    "--python", str(python), "--output", str(target)], check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(target / "vkcl"), str(site)], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libdir", required=True, type=Path)
    ap.add_argument("--destdir", default="")
    ap.add_argument("--uninstall", action="store_true")
    args = ap.parse_args()
    if not args.libdir.is_absolute():
        ap.error("--libdir must be absolute")
    if args.uninstall:
        shutil.rmtree(args.destdir + str(args.libdir), ignore_errors=True)
    else:
        install(args.libdir, args.destdir)


if __name__ == "__main__":
    main()
