#!/usr/bin/env bash
# pyopencl's own test files on the lent GPU machine, several at once, from the repository root
# with .whl, .gl and .pyocl carried (.pyocl: pyopencl's `test/` directory from its repository at
# the version vkcl installs; docs/conformance.md says which):
#     bash bench/device/run_pyopencl_tests.sh [test files; default every .pyocl/test_*.py]
# JOBS files run at once (6), each for at most LIMIT seconds (500) with pytest's per-test
# --timeout of TEST_LIMIT (120), against vkcl alone (PYOPENCL_TEST=vkcl). Each file's result
# line goes to $OUT/pyopencl_summary.txt as soon as it ends (a command the device tool stops
# still brings back what finished); $OUT/pyopencl_failures.txt then holds the failing tests'
# lines and $OUT/pyopencl_logs.tgz every log.
source bench/device/setup.sh > /tmp/setup.log 2>&1 || { tail -20 /tmp/setup.log; exit 1; }
export PYTHONUNBUFFERED=1 LIMIT=${LIMIT:-500} TEST_LIMIT=${TEST_LIMIT:-120}
export OCL_ICD_VENDORS=$PWD/build/vendors PYOPENCL_TEST=vkcl
mkdir -p /tmp/pyocl "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/pyopencl_summary.txt"
start=$SECONDS
files=("$@")
[ ${#files[@]} -gt 0 ] || files=($(cd .pyocl && ls test_*.py))
printf '%s\n' "${files[@]}" | xargs -P "${JOBS:-6}" -I{} sh -c '
    b=$(basename {} .py)
    (cd .pyocl && XDG_CACHE_HOME=/tmp/xdg-$b timeout $LIMIT python3 -m pytest -q -p no:cacheprovider -rfE \
        --timeout $TEST_LIMIT $(basename {}) > /tmp/pyocl/$b.log 2>&1)
    echo "$b rc=$? $(tail -1 /tmp/pyocl/$b.log)" >> "$OUT/pyopencl_summary.txt"'
echo "elapsed $((SECONDS - start)) s" >> "$OUT/pyopencl_summary.txt"
grep -h -E "^(FAILED|ERROR)" /tmp/pyocl/*.log > "$OUT/pyopencl_failures.txt"
tar czf "$OUT/pyopencl_logs.tgz" -C /tmp pyocl
cat "$OUT/pyopencl_summary.txt"
