"""Build vkcl's ICD: build/libvkcl.so, the front the loader opens (icd/front.c), and beside it one
library per Python minor version, build/python<X.Y>/libvkcl.so (cffi embedding of the generated
glue and icd/vkcl_icd.c), and build/vendors/vkcl.icd.

vkcl runs in the Python already in its host process, or embeds one in a process without Python
(design brief, facts 1-4). The interpreter running this script is the embedded one: its
libpython, its home and its virtualenv's site-packages are recorded in its library. Every other
Python 3.10+ found on the machine (on PATH, or pyenv's) gets a library that runs only inside its
own interpreter, with vkcl's run-time packages for it installed by its own pip into
build/python<X.Y>/site. A Python for which that fails gets no library (the front says so).

For an install (icd/install.py): --root (where the vkcl package will be), --site (its
packages), --python (the interpreter of its helper processes) and --output (the directory to
write the libraries and the package's _build_info.py to) describe the installed layout instead;
the other Pythons' packages must already be at OUTPUT/python<X.Y>/site.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cffi

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
MODULE = "_vkcl_icd"
SUPPORTED = ("3.10", "3.11", "3.12", "3.13", "3.14")
# What vkcl imports in its host's interpreter: the bindings, and cffi's backend under them.
RUNTIME_PACKAGES = ("cffi", "vulkan")
CFLAGS = ["-O2", "-fPIC", "-fwrapv", "-fno-strict-aliasing", "-fvisibility=hidden", "-Wall",
          "-Wno-unused-function", "-Wno-array-parameter", "-Wno-deprecated-declarations"]

FACTS = """import json, sys, sysconfig
print(json.dumps({"version": "%d.%d" % sys.version_info[:2], "include": sysconfig.get_paths()["include"],
                  "libdir": sysconfig.get_config_var("LIBDIR"), "ldlibrary": sysconfig.get_config_var("LDLIBRARY"),
                  "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED")), "executable": sys.executable}))"""


def python_facts(python: str) -> dict | None:
    try:
        out = subprocess.run([python, "-c", FACTS], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return json.loads(out.stdout) if out.returncode == 0 else None


def other_pythons(embedded: str) -> dict[str, str]:
    """version -> interpreter, for the supported versions other than the embedded one."""
    found = {}
    for v in SUPPORTED:
        if v == embedded:
            continue
        candidates = [shutil.which(f"python{v}")] + sorted(map(str, Path.home().glob(f".pyenv/versions/{v}.*/bin/python{v}")))
        for c in filter(None, candidates):
            facts = python_facts(c)
            if facts and facts["version"] == v and Path(facts["include"], "Python.h").is_file():
                found[v] = c
                break
    return found


def install_runtime_packages(python: str, target: Path) -> bool:
    """vkcl's run-time packages, at this interpreter's versions, for another Python (its pip)."""
    wanted = [f"{name}=={importlib.metadata.version(name)}" for name in RUNTIME_PACKAGES]
    stamp = target / ".requirements"
    if stamp.is_file() and stamp.read_text().split() == wanted:
        return True
    shutil.rmtree(target, ignore_errors=True)
    pip = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--only-binary=:all:",
                          "--retries", "1", "--timeout", "20", "--target", str(target), *wanted], capture_output=True, text=True, timeout=600)
    if pip.returncode != 0:
        print(f"vkcl: no library for {python}: pip could not install {' '.join(wanted)}:\n{pip.stderr[-1500:]}",
              file=sys.stderr)
        shutil.rmtree(target, ignore_errors=True)
        return False
    stamp.write_text("\n".join(wanted) + "\n")
    return True


def embedded_info(root: Path, site_packages: str | None, python: str | None) -> dict:
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        sys.exit(f"vkcl: {sys.executable} has no shared libpython; the ICD needs one to embed Python")
    libdir = sysconfig.get_config_var("LIBDIR")
    return {
        "PYTHON": python or sys.executable,
        "PYTHONHOME": sys.base_prefix,
        "LIBPYTHON": str(Path(libdir) / sysconfig.get_config_var("LDLIBRARY")),
        "LIBDIR": libdir,
        "SITE_PACKAGES": site_packages or site.getsitepackages()[0],
        "ROOT": str(root),
        # Packages installed beside the interpreter's own (a machine without a registry, where
        # wheels were unpacked to a directory on PYTHONPATH) are found the same way at run time.
        "EXTRA_PATHS": [] if site_packages else [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p],
        "VERSION": f"{sys.version_info[0]}.{sys.version_info[1]}",
    }


# Runs once, in the interpreter vkcl runs in. vkcl's package and its dependencies are imported
# without adding to sys.path, so the host's modules stay what they were (vkcl/vulkan/bindings.py).
INIT_CODE = '''
import os, sys
_INFO = {info!r}
if "%d.%d" % sys.version_info[:2] != _INFO["VERSION"]:
    sys.stderr.write("vkcl: this library was built for Python %s but is loaded into Python %d.%d\\n"
                     % (_INFO["VERSION"], sys.version_info[0], sys.version_info[1]))
    raise ImportError("vkcl: Python version mismatch")
from {module} import ffi, lib
if lib.vkcl_set_pythonhome:
    os.environ.pop("PYTHONHOME", None)  # set only to start us; keep it from child processes
if "vkcl" not in sys.modules:  # else the host imported vkcl itself (tools, tests)
    import importlib.util
    _package = os.path.join(_INFO["ROOT"], "vkcl")
    _spec = importlib.util.spec_from_file_location("vkcl", os.path.join(_package, "__init__.py"),
                                                   submodule_search_locations=[_package])
    _vkcl = importlib.util.module_from_spec(_spec)
    sys.modules["vkcl"] = _vkcl
    _spec.loader.exec_module(_vkcl)
sys.modules["vkcl"].DEPENDENCY_PATHS = [_INFO["SITE_PACKAGES"]] + _INFO["EXTRA_PATHS"]
from vkcl import icd_entry
icd_entry.start(ffi, lib, _INFO)
'''


def emit_c(info: dict, path: Path) -> None:
    ffi = cffi.FFI()
    ffi.cdef((ROOT / "icd" / "_gen" / "cdef.h").read_text())
    ffi.embedding_api("")
    ffi.embedding_init_code(INIT_CODE.format(info=info, module=MODULE))
    ffi.set_source(MODULE, (ROOT / "icd" / "vkcl_icd.c").read_text())
    path.parent.mkdir(parents=True, exist_ok=True)
    ffi.emit_c_code(str(path))


def compile_library(info: dict, facts: dict, output: Path, embeds: bool) -> None:
    """The library for one Python. Only the embedding one links libpython: the others run where
    their interpreter is already loaded (a host may even be a static python binary)."""
    source = BUILD / "icd" / f"python{info['VERSION']}" / f"{MODULE}.c"
    emit_c(info, source)
    defines = {"VKCL_PYTHON_VERSION": info["VERSION"], "VKCL_SITE_PACKAGES": info["SITE_PACKAGES"]}
    link = ["-ldl", "-lpthread"]
    if embeds:
        defines.update(VKCL_LIBPYTHON=info["LIBPYTHON"], VKCL_PYTHONHOME=info["PYTHONHOME"])
        link = [f"-L{facts['libdir']}", f"-lpython{info['VERSION']}", f"-Wl,-rpath,{facts['libdir']}", *link]
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_suffix(".so.tmp")
    cmd = ["gcc", "-shared", *CFLAGS, f"-I{facts['include']}", f"-I{ROOT / 'icd'}",
           *[f"-D{k}={json.dumps(v)}" for k, v in defines.items()], "-o", str(tmp), str(source),
           "-Wl,-Bsymbolic", *link]
    subprocess.run(cmd, check=True)
    os.replace(tmp, output)


def compile_front(output: Path, embedded: str, versions: list[str]) -> None:
    tmp = output.with_suffix(".so.tmp")
    subprocess.run(["gcc", "-shared", *CFLAGS, f"-DVKCL_EMBEDDED_PYTHON=\"{embedded}\"",
                    f"-DVKCL_PYTHONS=\"{', '.join(versions)}\"", "-o", str(tmp), str(ROOT / "icd" / "front.c"),
                    "-Wl,-Bsymbolic", "-ldl", "-lpthread"], check=True)
    os.replace(tmp, output)


def main() -> None:
    ap = argparse.ArgumentParser(description="build vkcl's ICD libraries")
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--site")
    ap.add_argument("--python")
    ap.add_argument("--output", type=Path, help="install layout: where libvkcl.so and vkcl/ go")
    args = ap.parse_args()
    out = args.output or BUILD
    at_run_time = args.root if args.output else BUILD  # where `out` is when vkcl runs
    info = embedded_info(args.root, args.site, args.python)
    embedded = info["VERSION"]
    jobs = {embedded: (info, python_facts(sys.executable), True)}
    for version, python in other_pythons(embedded).items():
        site_dir = out / f"python{version}" / "site"
        if args.output and not site_dir.is_dir():
            continue  # the checkout's build had no library for it either
        if args.output or install_runtime_packages(python, site_dir):
            other = {**info, "VERSION": version, "PYTHONHOME": "", "LIBPYTHON": "", "LIBDIR": "", "EXTRA_PATHS": [],
                     "SITE_PACKAGES": str(at_run_time / f"python{version}" / "site")}
            jobs[version] = (other, python_facts(python), False)
    with ThreadPoolExecutor(max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
        done = [pool.submit(compile_library, i, facts, out / f"python{v}" / "libvkcl.so", embeds)
                for v, (i, facts, embeds) in jobs.items()]
        for d in done:
            d.result()
    compile_front(out / "libvkcl.so", embedded, sorted(jobs))
    if not args.output:
        vendors = BUILD / "vendors"
        vendors.mkdir(exist_ok=True)
        (vendors / "vkcl.icd").write_text(f"{out / 'libvkcl.so'}\n")
    package = (args.output or ROOT) / "vkcl"
    (package / "_build_info.py").write_text(
        '"""Written by icd/build.py: the interpreter the ICD embeds."""\n'
        + "".join(f"{k} = {v!r}\n" for k, v in info.items()))
    print(f"built {out / 'libvkcl.so'} for Python {', '.join(sorted(jobs))} (embeds {embedded})")


if __name__ == "__main__":
    main()
