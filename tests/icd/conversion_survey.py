"""Survey of every conversion on an OpenCL device (not a test: a tool to run by hand, e.g. on
another GPU): every convert_<dst><n>[_sat][_rnd] of every source type and width, then
vstore_half / vstorea_half of float and double and vload_half in every address space, each
against conversion_reference. Prints the wrong ones and those that do not build.

    OCL_ICD_VENDORS=... PYOPENCL_NO_CACHE=1 python tests/icd/conversion_survey.py [platform] [dsts] [srcs]

(dsts, srcs: comma-separated type names; all by default.) Took 35-50 s on lavapipe with a warm
Mesa shader cache, and about 10 times that with a cold one.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyopencl as cl  # noqa: E402

from conversion_half_io import run_cases  # noqa: E402
from conversion_harness import Survey, all_cases, name  # noqa: E402
from conversion_reference import TYPES  # noqa: E402


def main(argv: list[str]) -> int:
    platform = argv[1] if len(argv) > 1 else "vkcl"
    dsts = argv[2].split(",") if len(argv) > 2 and argv[2] else TYPES
    srcs = argv[3].split(",") if len(argv) > 3 and argv[3] else TYPES
    plat = [p for p in cl.get_platforms() if platform in p.name][0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    flush = not (dev.single_fp_config & cl.device_fp_config.DENORM)
    print(f"{plat.name} / {dev.name}; float denormals {'flushed' if flush else 'kept'}", flush=True)
    start = time.time()
    s = Survey(cl, ctx, q, flush)
    for dst in dsts:
        for src in srcs:
            s.run(all_cases([dst], [src]))
        print(f"  convert_{dst}: {time.time() - start:.1f} s", flush=True)
    for c, (count, examples) in sorted(s.wrong.items()):
        print(f"WRONG {name(c[0], *c[2:])}({c[1]}): {count}, e.g. (input, got, want) {examples[:2]}")
    for c in s.build_failed:
        print(f"DOES NOT BUILD {name(c[0], *c[2:])}({c[1]})")
    wrong = {}
    for data in ("float", "double"):
        for space in ("global", "local", "private"):
            for n in (1, 2, 3, 4, 8, 16):
                cases = [("store", data, n, m, a, space) for m in ("", "_rte", "_rtz", "_rtp", "_rtn")
                         for a in (False, True) if not (a and n == 1)]
                if data == "float":
                    cases += [("load", "float", n, "", a, sp) for a in (False, True) if not (a and n == 1)
                              for sp in ((space, "constant") if space == "global" else (space,))]
                try:
                    wrong.update(run_cases(cl, ctx, q, cases, flush))
                except cl.Error as e:
                    print(f"DOES NOT BUILD {cases[0][:3]} {space}: {str(e)[:200]}")
    for c, (count, examples) in wrong.items():
        print(f"WRONG {c}: {count}, e.g. {examples[:2]}")
    print(f"{s.checked} conversions checked, {len(s.wrong) + len(wrong)} wrong cases, "
          f"{len(s.build_failed)} not built, {time.time() - start:.0f} s")
    return 1 if s.wrong or wrong or s.build_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
