#!/usr/bin/env bash
# The CTS runner in one command of the device tool (bench/device/README.md), from the
# repository root, with .whl, .gl and .cts carried (.cts/test_conformance/<dir>/test_<suite>:
# binaries built on the development machine, tests/cts/run_cts.py's docstring):
#
#     bash tests/cts/device_cts.sh NAME BUDGET_S [run_cts.py options and suites]
#     e.g. bash tests/cts/device_cts.sh conv 560 -j 15 --limit 120 --args=-w conversions
#
# The device tool gives a command 600 s and brings back only a few files, so the runner's logs
# stay on the machine (/tmp/cts/NAME) and only its <suite>.json files come to $OUT/NAME. No
# sub-test starts after BUDGET_S minus a margin (run_cts.py --deadline): the report is written
# before the command's limit, the sub-tests left recorded as `notrun` (run them next with
# `suite:name,...`). Keep --limit (seconds per sub-test) below what is left.
START=$SECONDS
NAME=$1 BUDGET=$2
shift 2
source bench/device/setup.sh > /tmp/setup-$NAME.log 2>&1 || { tail -20 /tmp/setup-$NAME.log; exit 1; }
chmod +x .cts/test_conformance/*/test_* 2>/dev/null
export XDG_CACHE_HOME=/tmp/xdg-$NAME
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "setup $((SECONDS - START)) s; vkcl $(git rev-parse --short HEAD 2>/dev/null)"
DEADLINE=$(( BUDGET - (SECONDS - START) - ${MARGIN:-60} ))
python3 tests/cts/run_cts.py --cts "$PWD/.cts" --icd build/libvkcl.so --out /tmp/cts/$NAME \
    --deadline $DEADLINE "$@" > /tmp/cts-$NAME.log 2>&1
rc=$?
grep -v ": pass (" /tmp/cts-$NAME.log | tail -40
mkdir -p "$OUT/$NAME"
cp /tmp/cts/$NAME/*.json "$OUT/$NAME/"
echo "$NAME done in $((SECONDS - START)) s, rc $rc"
exit $rc
