#!/bin/bash
# The README's main job: record a real program with valgrind, replay its
# trace through qosim's caches, and show that cachegrind, run on the same
# program, counts exactly the same.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
out=$top/build/demo
mkdir -p "$out"
G="--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d line %d\n", (i * 7919) % 10007, i }' >"$out/input.txt"
# One fixed environment for both runs, so the program runs identically.
clean() { env -i PATH=/usr/bin:/bin LC_ALL=C "$@"; }

echo "== qosim trace record -o $out/sort.lackey -- sort -n -o /dev/null input.txt"
clean "$Q" trace record -o "$out/sort.lackey" -- sort -n -o /dev/null "$out/input.txt"
echo
echo "== qosim cachesim $G $out/sort.lackey"
"$Q" cachesim $G "$out/sort.lackey"
echo
echo "== the same program under valgrind --tool=cachegrind --cache-sim=yes"
# shellcheck disable=SC2086
clean valgrind --tool=cachegrind --cache-sim=yes $G --cachegrind-out-file="$out/cachegrind.out" \
    sort -n -o /dev/null "$out/input.txt" 2>/dev/null
cg=$(sed -n 's/^summary: *//p' "$out/cachegrind.out" | awk '{$1=$1; print}')
# shellcheck disable=SC2086
q=$("$Q" cachesim --json $G "$out/sort.lackey" | awk -F'[":, ]+' '{ v[$2] = $3 } END {
    print v["Ir"], v["I1mr"], v["ILmr"], v["Dr"], v["D1mr"], v["DLmr"], v["Dw"], v["D1mw"], v["DLmw"] }')
echo "events:     Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"
echo "cachegrind: $cg"
echo "qosim:      $q"
if [ "$cg" = "$q" ]; then echo "identical."; else echo "DIFFERENT" >&2; exit 1; fi
