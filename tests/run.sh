#!/bin/bash
# Runs the unit tests (cmocka) and the end-to-end CLI tests against one build
# directory, and appends "PASSED FAILED" to build/test-results.
#   tests/run.sh BUILD_DIR
set -u
build=${1:?usage: tests/run.sh BUILD_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p build
pass=0 fail=0

echo "== unit tests ($build)"
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    out=$("$t" 2>&1)
    rc=$?
    # cmocka's stdout and stderr interleave: find its totals anywhere on a line.
    p=$(printf '%s\n' "$out" | grep -o '\[  PASSED  \] [0-9]* test' | tail -1 | tr -dc 0-9)
    f=$(printf '%s\n' "$out" | grep -o '\[  FAILED  \] [0-9]* test' | tail -1 | tr -dc 0-9)
    p=${p:-0} f=${f:-0}
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1   # a crash or abort counts as a failure
    if [ "$f" -ne 0 ]; then printf '%s\n' "$out" | grep -E 'FAIL|ERROR|error|Assert|Sanitizer' | head -20; fi
    echo "$(basename "$t"): $p passed, $f failed"
    pass=$((pass + p)) fail=$((fail + f))
done

echo "== end-to-end tests ($build)"
export QOSIM="$top/$build/qosim"
for t in tests/e2e/test_*.sh; do
    out=$(bash "$t" 2>&1)
    rc=$?
    p=$(printf '%s\n' "$out" | grep -c '^ok ')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    printf '%s\n' "$out" | grep -A8 '^not ok ' | head -40
    echo "$(basename "$t"): $p passed, $f failed"
    pass=$((pass + p)) fail=$((fail + f))
done

echo "$pass $fail" >>build/test-results
echo "$build: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
