"""Build vkcl's ICD library (build/libvkcl.so) and its loader file (build/vendors/vkcl.icd).

The library embeds the interpreter that runs this script: its libpython, its home and
the virtualenv's site-packages are recorded in the library (design brief, facts 1-2).

For an install (icd/install.py): --root (where the vkcl package will be), --site (its
packages), --python (the interpreter of its helper processes) and --output (the directory to
write libvkcl.so and the package's _build_info.py to) describe the installed layout instead.
"""
from __future__ import annotations

import argparse
import os
import site
import sys
import sysconfig
from pathlib import Path

import cffi

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
MODULE = "_vkcl_icd"


def build_info(root: Path = ROOT, site_packages: str | None = None, python: str | None = None) -> dict[str, str]:
    libdir = sysconfig.get_config_var("LIBDIR")
    ldlibrary = sysconfig.get_config_var("LDLIBRARY")
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        sys.exit(f"vkcl: {sys.executable} has no shared libpython; the ICD needs one to embed Python")
    return {
        "PYTHON": python or sys.executable,
        "PYTHONHOME": sys.base_prefix,
        "LIBPYTHON": str(Path(libdir) / ldlibrary),
        "LIBDIR": libdir,
        "SITE_PACKAGES": site_packages or site.getsitepackages()[0],
        "ROOT": str(root),
        # Packages installed beside the interpreter's own (a machine without a registry, where
        # wheels were unpacked to a directory on PYTHONPATH) are found the same way at run time.
        "EXTRA_PATHS": [] if site_packages else [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p],
        "VERSION": f"{sys.version_info[0]}.{sys.version_info[1]}",
    }


INIT_CODE = '''
import os, sys
_INFO = {info!r}
if "%d.%d" % sys.version_info[:2] != _INFO["VERSION"]:
    sys.stderr.write("vkcl: this ICD was built for Python %s but is loaded into Python %d.%d; "
                     "rebuild vkcl with that Python (make build PYTHON=...)\\n"
                     % (_INFO["VERSION"], sys.version_info[0], sys.version_info[1]))
    raise ImportError("vkcl: Python version mismatch")
from {module} import ffi, lib
if lib.vkcl_set_pythonhome:
    os.environ.pop("PYTHONHOME", None)  # set only to start us; keep it from child processes
if _INFO["ROOT"] not in sys.path:
    sys.path.insert(0, _INFO["ROOT"])
if _INFO["SITE_PACKAGES"] not in sys.path:
    import site
    site.addsitedir(_INFO["SITE_PACKAGES"])  # appended: a host Python keeps its own packages first
for _p in _INFO["EXTRA_PATHS"]:
    if _p not in sys.path:
        sys.path.append(_p)
from vkcl import icd_entry
icd_entry.start(ffi, lib, _INFO)
'''


def main() -> None:
    ap = argparse.ArgumentParser(description="build vkcl's ICD library")
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--site")
    ap.add_argument("--python")
    ap.add_argument("--output", type=Path, help="install layout: where libvkcl.so and vkcl/ go")
    args = ap.parse_args()
    info = build_info(args.root, args.site, args.python)
    gen = ROOT / "icd" / "_gen"
    ffi = cffi.FFI()
    ffi.cdef((gen / "cdef.h").read_text())
    ffi.embedding_api("")
    ffi.embedding_init_code(INIT_CODE.format(info=info, module=MODULE))
    ffi.set_source(
        MODULE,
        (ROOT / "icd" / "vkcl_icd.c").read_text(),
        include_dirs=[str(ROOT / "icd")],
        define_macros=[("VKCL_LIBPYTHON", f'"{info["LIBPYTHON"]}"'), ("VKCL_PYTHONHOME", f'"{info["PYTHONHOME"]}"'),
                       ("VKCL_PYTHON_VERSION", f'"{info["VERSION"]}"'),
                       ("VKCL_SITE_PACKAGES", f'"{info["SITE_PACKAGES"]}"')],
        extra_compile_args=["-fvisibility=hidden", "-O2", "-Wno-unused-function", "-Wno-array-parameter"],
        extra_link_args=["-Wl,-Bsymbolic", f"-Wl,-rpath,{info['LIBDIR']}"],
        libraries=["dl"],
    )
    BUILD.mkdir(exist_ok=True)
    tmpdir = BUILD / ("icd-install" if args.output else "icd")
    lib = ffi.compile(tmpdir=str(tmpdir), target="libvkcl.so", verbose=bool(os.environ.get("V")))
    out = args.output or BUILD
    lib_path = out / "libvkcl.so"
    os.replace(lib, lib_path)
    if not args.output:
        vendors = BUILD / "vendors"
        vendors.mkdir(exist_ok=True)
        (vendors / "vkcl.icd").write_text(f"{lib_path}\n")
    package = (args.output or ROOT) / "vkcl"
    (package / "_build_info.py").write_text(
        '"""Written by icd/build.py: the interpreter the ICD embeds."""\n'
        + "".join(f"{k} = {v!r}\n" for k, v in info.items()))
    print(f"built {lib_path}")


if __name__ == "__main__":
    main()
