#!/bin/bash
# The README's main job: the noisy-neighbour scenario on the default
# platform. A cache-sensitive victim runs beside six streaming aggressors in
# three phases (no isolation; L3 way partitioning; partitioning plus an MBA
# throttle on the aggressors); then the victim runs alone with the same
# phases, for comparison. Writes a plot of IPC, LLC occupancy and memory
# bandwidth over time.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
out=$top/build/demo
mkdir -p "$out"
scenario=$top/examples/noisy-neighbour.yaml

echo "== qosim run examples/noisy-neighbour.yaml --plot build/demo/noisy-neighbour.svg"
"$Q" run "$scenario" --plot "$out/noisy-neighbour.svg" --csv "$out/noisy-neighbour.csv" \
    | tee "$out/full.txt"
echo
echo "== qosim run examples/noisy-neighbour.yaml --only victim"
"$Q" run "$scenario" --only victim >"$out/alone.txt"
awk 'NF == 7 { ph = $1 } NF == 7 && $2 == "victim" { print ph, $3 }' "$out/alone.txt" >"$out/alone.ipc"
awk 'NF == 7 { ph = $1 } NF == 7 && $2 == "victim" { print ph, $3 }' "$out/full.txt" >"$out/full.ipc"
echo
printf '%-14s %12s %12s %10s\n' phase "victim IPC" "alone IPC" "of alone"
join "$out/full.ipc" "$out/alone.ipc" | awk '{ printf "%-14s %12.3f %12.3f %9.0f%%\n", $1, $2, $3, 100 * $2 / $3 }'
echo
echo "plot: $out/noisy-neighbour.svg (IPC, LLC occupancy and memory bandwidth of every task over time)"
