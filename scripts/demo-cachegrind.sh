#!/bin/bash
# The README's main job: record a real program with valgrind, replay its
# trace through qosim's caches, and show that cachegrind, run on the same
# program, counts exactly the same.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
case $Q in /*) ;; *) Q=$PWD/$Q ;; esac # the runs below start in $out
out=$top/build/demo
mkdir -p "$out"
G="--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d line %d\n", (i * 7919) % 10007, i }' >"$out/input.txt"
# The two runs must execute the very same instructions at the very same
# addresses, so both get the same conditions (tests/e2e/test_cachegrind.sh
# says why each one matters): descriptors 0-2 only, the input on stdin (no
# path on the command line), stdout to /dev/null, one working directory, one
# environment, and an empty LD_PRELOAD (valgrind then extends it in place
# instead of appending it next to the kernel's random bytes, which the
# loader's strcspn would otherwise read). sort gets -S and --parallel so that
# free memory and the CPU count do not size its buffers.
fixed() {
    (
        for f in "/proc/$BASHPID/fd/"*; do
            fd=${f##*/}
            [ "$fd" -gt 2 ] && [ -e "$f" ] && exec {fd}>&-
        done
        cd "$out"
        exec env -i LD_PRELOAD= PATH=/usr/bin:/bin LC_ALL=C TZ=UTC "$@" <"$out/input.txt" >/dev/null
    )
}
SORT="sort -n -S 1M --parallel=1"

echo "== qosim trace record -o $out/sort.lackey -- $SORT <input.txt"
# shellcheck disable=SC2086
fixed "$Q" trace record -o "$out/sort.lackey" -- $SORT
echo
echo "== qosim cachesim $G $out/sort.lackey"
# shellcheck disable=SC2086
"$Q" cachesim $G "$out/sort.lackey"
echo
echo "== the same program under valgrind --tool=cachegrind --cache-sim=yes"
# shellcheck disable=SC2086
fixed valgrind --tool=cachegrind --cache-sim=yes $G --cachegrind-out-file="$out/cachegrind.out" \
    --log-file="$out/cachegrind.log" $SORT
cg=$(sed -n 's/^summary: *//p' "$out/cachegrind.out" | awk '{$1=$1; print}')
# shellcheck disable=SC2086
q=$("$Q" cachesim --json $G "$out/sort.lackey" | awk -F'[":, ]+' '{ v[$2] = $3 } END {
    print v["Ir"], v["I1mr"], v["ILmr"], v["Dr"], v["D1mr"], v["DLmr"], v["Dw"], v["D1mw"], v["DLmw"] }')
echo "events:     Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"
echo "cachegrind: $cg"
echo "qosim:      $q"
if [ "$cg" = "$q" ]; then echo "identical."; else echo "DIFFERENT" >&2; exit 1; fi
