#!/bin/bash
# Two real programs run live under QEMU on the simulated machine: bzip2 -9
# beside four STREAM triads (examples/live-noisy-neighbour.yaml), then the
# same with L3 way partitioning (examples/live-isolated.yaml), then bzip2
# alone. bzip2 runs to its end in each, so the comparison is its run time
# on the simulated clock. Writes a plot of each run into build/demo/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
out=$top/build/demo
mkdir -p "$out"
cc -O2 -o "$out/triad" "$top/examples/live/triad.c"
# 100,000 lines of numbers, the same on every machine (integer arithmetic).
seq 1 100000 | awk '{ printf "%07d %d\n", ($1 * 7919) % 1000003, $1 * 31 }' >"$out/lines.txt"

run() { # NAME SCENARIO [ARGS...]: the table, and bzip2's end in ms
    local name=$1 scen=$2
    shift 2
    echo "== qosim run examples/$(basename "$scen") $*"
    "$Q" run "$scen" "$@" | tee "$out/live-$name.txt"
    sed -n 's/^bzip2: exited with status 0 at \([0-9.]*\) ms.*/\1/p' "$out/live-$name.txt" >"$out/live-$name.ms"
    echo
}
run shared "$top/examples/live-noisy-neighbour.yaml" --plot "$out/live-shared.svg"
run isolated "$top/examples/live-isolated.yaml" --plot "$out/live-isolated.svg"
run alone "$top/examples/live-noisy-neighbour.yaml" --only bzip2
alone=$(cat "$out/live-alone.ms")
printf '%-34s %12s %10s\n' "bzip2 -9 on 1.5 MB" "run time" "of alone"
for n in alone shared isolated; do
    ms=$(cat "$out/live-$n.ms")
    case $n in alone) what="alone" ;; shared) what="beside 4 triads" ;; *) what="beside 4 triads, 8 of 11 L3 ways" ;; esac
    awk -v w="$what" -v m="$ms" -v a="$alone" 'BEGIN { printf "%-34s %9.2f ms %9.0f%%\n", w, m, 100 * m / a }'
done
echo
echo "plots: $out/live-shared.svg and $out/live-isolated.svg"
