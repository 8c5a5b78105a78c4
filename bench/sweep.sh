#!/bin/bash
# What the local executor of `qosim sweep run` costs beyond the runs it
# starts (issue "Sweeps": under 50 ms a point; every processor busy while
# points remain). Side by side in one run, on the same N planned points:
#
#   loop     a shell loop running each point's scenario with `qosim run`,
#            one after the other: the runs themselves;
#   -j 1     `qosim sweep run -j 1`: the same runs through the executor
#            (keys, records, one fork and exec a point);
#   -j P     `qosim sweep run` on all P processors: how busy they were, as
#            the sum of the points' own wall times (record.json) over
#            P x the sweep's elapsed time.
#
# Two sizes of point: tiny ones (50 us simulated, a few ms a run), where
# the executor's cost shows most, and ones of about 0.3 s.
#
#   bench/sweep.sh              # needs build/qosim (make)
#   N=400 bench/sweep.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
N=${N:-200}
P=$(nproc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

cp "$top/tests/data/tiny.yaml" tiny.yaml
now() { date +%s.%N; }
# bench NAME DURATION: the three measurements on N points of DURATION.
bench() {
    local name=$1 dur=$2 d=$tmp/$1
    cat >"sw-$name.yaml" <<Y
base:
  platform: tiny.yaml
  duration: $dur
  tasks:
    - {name: a, cpu: 0, workload: {pattern: random, wss: 32K}}
axes:
  - {key: seed, range: {from: 1, to: $N}}
Y
    "$Q" sweep plan "sw-$name.yaml" -o "$d" >/dev/null
    local t0 t1 t2 t3
    t0=$(now)
    for f in "$d"/points/*/scenario.yaml; do
        "$Q" run "$f" --quiet --json "$tmp/loop.json"
    done
    t1=$(now)
    "$Q" sweep run "$d" -j 1 --quiet 2>/dev/null
    t2=$(now)
    rm -f "$d"/points/*/record.json
    local t4
    t4=$(now)
    "$Q" sweep run "$d" --quiet 2>/dev/null
    t3=$(now)
    local walls
    walls=$(cat "$d"/points/*/record.json | awk -F': ' '/"wall_seconds"/ { s += $2 } END { print s }')
    awk -v n="$N" -v p="$P" -v name="$name ($dur)" -v l="$t0 $t1" -v j1="$t1 $t2" -v jp="$t4 $t3" \
        -v w="$walls" 'function span(s, a) { split(s, a, " "); return a[2] - a[1] }
        BEGIN { l = span(l); j1 = span(j1); jp = span(jp)
        printf "| %s | %d | %.2f s | %.2f s | **%.1f ms** | %.2f s | **%.0f%%** |\n",
            name, n, l, j1, (j1 - l) / n * 1000, jp, 100 * w / (p * jp) }'
}
echo "| points | N | loop of qosim run | sweep run -j 1 | executor's cost a point | sweep run -j $P | processors busy |"
echo "|---|---|---|---|---|---|---|"
bench tiny 50us
N=$((N / 10)) bench long 60ms
