#!/bin/sh
# Totals the per-suite results that tests/run.sh and tests/fuzz/smoke.sh
# wrote to build/results/ (one file per suite, rewritten by each run; or
# $RESULTS), and prints the closing line CI reads.
set -u
cd "$(dirname "$0")/.." || exit 2
set -- "${RESULTS:-build/results}"/*
[ -f "$1" ] || { echo "0 passed, 1 failed"; exit 1; }
cat "$@" | awk '{p += $1; f += $2} END {printf "%d passed, %d failed\n", p, f; exit f > 0}'
