#!/bin/bash
# Fuzz smoke test: runs each libFuzzer harness built by `make fuzz` over a
# scratch copy of its seed corpus for a short time (FUZZ_TIME seconds each,
# 5 by default; JOBS harnesses at once, default the processors), prints
# "fuzz_X: ok" or what went wrong, one line per harness, and writes "PASSED
# FAILED" (counts of harnesses) to build/results/fuzz (or $FUZZ_RESULTS). A
# harness that is not built counts as failed. A crash input is kept under
# build/fuzz/artifacts/. Exits non-zero if any failed.
#   tests/fuzz/smoke.sh [HARNESS...]     (default: lackey champsim din qtr champsim_rt geom config
#                                          regs cbqri console sweep)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
time=${FUZZ_TIME:-5}
results=${FUZZ_RESULTS:-build/results/fuzz}
harnesses=${*:-lackey champsim din qtr champsim_rt geom config regs cbqri console sweep}
mkdir -p build/results
pass=0 fail=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/qosim-fuzz-smoke.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT

jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
echo "== fuzz smoke (${time}s per harness, $jobs at a time)"
# Every harness that is built runs over its scratch corpus; the reports
# follow in the order given, once all have finished.
for h in $harnesses; do
    bin=build/fuzz/fuzz_$h
    [ -x "$bin" ] || continue
    corpus=$scratch/$h
    mkdir -p "$corpus" "$scratch/art-$h"
    if [ -d "tests/fuzz/corpus/$h" ]; then
        cp -r "tests/fuzz/corpus/$h/." "$corpus/"
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    ("$bin" -max_total_time="$time" -print_final_stats=1 \
        -artifact_prefix="$scratch/art-$h/" "$corpus" >"$scratch/$h.log" 2>&1
     echo $? >"$scratch/$h.rc") &
done
wait

for h in $harnesses; do
    bin=build/fuzz/fuzz_$h
    if [ ! -x "$bin" ]; then
        echo "fuzz_$h: FAILED (skipped: $bin is not built; run 'make fuzz')"
        fail=$((fail + 1))
        continue
    fi
    log=$scratch/$h.log
    rc=$(cat "$scratch/$h.rc")
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        echo "fuzz_$h: ok (${runs:-?} runs, cov ${cov:-?})"
        pass=$((pass + 1))
        continue
    fi
    fail=$((fail + 1))
    why=$(grep -m1 -E 'fuzz check failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY' "$log")
    keep=""
    for a in "$scratch/art-$h"/*; do
        [ -f "$a" ] || continue
        mkdir -p build/fuzz/artifacts
        cp "$a" "build/fuzz/artifacts/fuzz_$h-$(basename "$a")"
        keep="build/fuzz/artifacts/fuzz_$h-$(basename "$a")"
    done
    echo "fuzz_$h: FAILED (exit $rc: ${why:-see below}${keep:+; input kept in $keep})"
    grep -E 'fuzz check failed|ERROR|runtime error|SUMMARY|^    #[0-9]' "$log" | head -12 | sed 's/^/    /'
done

echo "$pass $fail" >"$results"
echo "fuzz smoke: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
