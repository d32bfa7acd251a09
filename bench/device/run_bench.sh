#!/usr/bin/env bash
# The benchmark suite on the lent GPU machine: vkcl, NVIDIA's OpenCL and PoCL, full sizes.
# From the repository root, with .whl and .gl carried (bench/device/README.md):
#     bash bench/device/run_bench.sh [run.py options, e.g. --only sgemm,bandwidth]
# Results (<stem>.json, .txt, .log, setup.log) go to $OUT, which the device tool copies back;
# draw the chart on the development machine with bench/chart.py.
START=$SECONDS
OUT=${OUT:-$PWD/bench/results}
mkdir -p "$OUT"
# setup.sh stops at its first failing step (set -e): show why, then.
trap 'echo "setup failed; the end of $OUT/setup.log:" >&2; tail -30 "$OUT/setup.log" >&2' EXIT
source bench/device/setup.sh > "$OUT/setup.log" 2>&1
trap - EXIT
set +e
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.csv" 2>&1
# A device command may run 600 s: what setup took, and a margin to copy $OUT back, come off.
BUDGET=$(( ${BENCH_BUDGET:-570} - (SECONDS - START) ))
echo "setup took $((SECONDS - START)) s; benchmark budget ${BUDGET} s" >&2
python3 bench/run.py --full --out "$OUT" --budget "$BUDGET" --timeout 240 "$@"
