#!/usr/bin/env bash
# tests/icd on the lent GPU machine, several files at once, from the repository root with .whl
# and .gl carried (bench/device/README.md):
#     bash bench/device/run_icd_tests.sh [test files; default all of tests/icd]
# JOBS files run at once (8), each for at most LIMIT seconds (420) in a cache of its own. Each
# file's result line goes to $OUT/icd_summary.txt as soon as the file ends, so a command the
# device tool stops still brings back what finished; at the end $OUT/icd_failures.txt holds
# the failing tests' lines and $OUT/icd_logs.tgz every log.
source bench/device/setup.sh > /tmp/setup.log 2>&1 || { tail -20 /tmp/setup.log; exit 1; }
export PYTHONUNBUFFERED=1 LIMIT=${LIMIT:-420}
mkdir -p /tmp/icd "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/icd_summary.txt"
start=$SECONDS
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(tests/icd/test_*.py)
printf '%s\n' "${files[@]}" | xargs -P "${JOBS:-8}" -I{} sh -c '
    b=$(basename {} .py)
    XDG_CACHE_HOME=/tmp/xdg-$b timeout $LIMIT python3 -m pytest -q -p no:cacheprovider -rfE {} \
        > /tmp/icd/$b.log 2>&1
    echo "$b rc=$? $(tail -1 /tmp/icd/$b.log)" >> "$OUT/icd_summary.txt"'
echo "elapsed $((SECONDS - start)) s" >> "$OUT/icd_summary.txt"
grep -h -E "^(FAILED|ERROR)" /tmp/icd/*.log > "$OUT/icd_failures.txt"
tar czf "$OUT/icd_logs.tgz" -C /tmp icd
cat "$OUT/icd_summary.txt"
