#!/bin/bash
# Error of the set-sampling occupancy estimator against the exact count.
# Runs examples/noisy-neighbour.yaml on copies of the default profile whose
# monitor samples 1/2, 1/8, 1/32 and 1/128 of the L3 sets, and compares, at
# every interval and for every task, the estimate of its tag's occupancy
# with the exact count (rows where the exact count is at least 256 KiB).
#
#   bench/occupancy.sh           # needs build/qosim (make)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$Q" profiles show intel-xeon >"$tmp/base.yaml"

echo "| sampled sets | rows | mean abs. error | 95th percentile | max |"
echo "|---|---|---|---|---|"
for share in 0.5 0.125 0.03125 0.0078125; do
    sed "s/^    scale: 64 .*/&\n    sample: $share/" "$tmp/base.yaml" >"$tmp/p.yaml"
    sed "s#^platform: intel-xeon#platform: $tmp/p.yaml#" "$top/examples/noisy-neighbour.yaml" >"$tmp/s.yaml"
    "$Q" run "$tmp/s.yaml" --quiet --csv "$tmp/o.csv"
    awk -F, 'NR > 1 && $13 >= 262144 { e = ($14 - $13) / $13; print (e < 0 ? -e : e) }' \
        "$tmp/o.csv" | sort -g >"$tmp/err"
    awk -v share="$share" '{ err[++n] = $1; sum += $1 } END {
        printf "| 1/%d | %d | %.2f%% | %.2f%% | %.2f%% |\n", 1 / share + 0.5, n, 100 * sum / n,
            100 * err[int(0.95 * n)], 100 * err[n] }' "$tmp/err"
done
