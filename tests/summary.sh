#!/bin/sh
# Totals the per-suite results that tests/run.sh and tests/fuzz/smoke.sh
# appended to build/test-results, and prints the closing line CI reads.
f=build/test-results
[ -f "$f" ] || { echo "0 passed, 1 failed"; exit 1; }
awk '{p += $1; f += $2} END {printf "%d passed, %d failed\n", p, f; exit f > 0}' "$f"
