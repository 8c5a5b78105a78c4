#!/bin/bash
# End-to-end effects of what CBQRI 1.0 adds to the 2023 draft
# (docs/cbqri-versions.md), each run where it exists and, where the draft
# behaves otherwise, on the draft as well:
#   - Mweight 0 is a hard limit (1.0 BC_BMASK): a group alone with 25%
#     reserved and weight 0 gets 25% of the channel, not the idle rest;
#   - RCID-prefixed MCIDs (1.0 EMCID): with P = 2 every (RCID, low MCID)
#     has a counter of its own, and per-task and per-group counters equal
#     the ground truth;
#   - cc_cunits (1.0 CC_CUNITS): a group limited to 1 MiB of the L3 holds
#     no more, whatever its masks allow.
. "$(dirname "$0")/lib.sh"
Q="$(cd "$(dirname "$0")" && pwd)/qos"
calc() { awk "BEGIN { print $1 }"; }
pos() { for x in "$@"; do awk -v a="$x" 'BEGIN { exit !(a > 0) }' || return 1; done; }
near() { pos "$1" "$2" && awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * b) }'; }
ge() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a >= b * f) }'; }

# ---- Mweight 0: a hard limit in 1.0, the last claim on spare in the draft ----
# riscv-edge's one LPDDR channel carries 12.8 GB/s; two streaming harts ask
# for about 14.6. Their group reserves 25% (Rbwb 64 of 256: 3.2 GB/s) with
# weight 0, and nothing else runs.
"$QOSIM" profiles show riscv-edge | sed 's/^    spec: .*/    spec: draft-2023/' >"$TMP/riscv-edge-draft.yaml"
hard() { # hard PLATFORM WEIGHT OUT
    cat >"$TMP/hard.yaml" <<EOF
platform: $1
seed: 1
duration: 4ms
interval: 250us
settle: 1ms
tasks:
  - {name: s1, cpu: 0, workload: {pattern: seq, wss: 256M, access: 64, mem_ratio: 1, write_ratio: 0}}
  - {name: s2, cpu: 1, workload: {pattern: seq, wss: 256M, access: 64, mem_ratio: 1, write_ratio: 0}}
qos:
  groups:
    - {name: capped, tasks: [s1, s2], reserve: 25%, weight: $2}
EOF
    expect "Mweight $2 on $1 runs" 0 "$QOSIM" run "$TMP/hard.yaml"
    cp "$TMP/out" "$3"
}
rd2() { calc "$(col "$1" start s1 4) + $(col "$1" start s2 4)"; }
hard riscv-edge 0 "$TMP/h10"
hard "$TMP/riscv-edge-draft.yaml" 0 "$TMP/hdraft"
hard riscv-edge 1 "$TMP/h10w1"
h10=$(rd2 "$TMP/h10") hdraft=$(rd2 "$TMP/hdraft") hw1=$(rd2 "$TMP/h10w1")
claim "1.0, Mweight 0 alone: the group reads $h10 GB/s, its 25% (3.2) within 5%" near "$h10" 3.2 0.05
claim "draft, Mweight 0 alone: the group reads $hdraft GB/s, the whole channel (12.8) within 5%" \
    near "$hdraft" 12.8 0.05
claim "1.0, Mweight 1 alone: the group reads $hw1 GB/s, the whole channel (12.8) within 5%" \
    near "$hw1" 12.8 0.05

# ---- RCID-prefixed MCIDs -------------------------------------------------------
# riscv-narrow (exact occupancy, 24-bit byte counters) with mcid_prefix 2:
# RCID r's counters are 4r..4r+3, the first the group's. Tasks a1, a2 in
# RCID 1 get MCIDs 1 and 2 in srmcfg, counted at 5 and 6; b1, b2 in RCID 2
# at 9 and 10; d1, in the default group (RCID 0), at 1.
sed '/^  cbqri:/a\    mcid_prefix: 2' "$Q/riscv-narrow.yaml" >"$TMP/riscv-rpfx.yaml"
rpfx() { # rpfx MONITOR
    cat >"$TMP/rpfx.yaml" <<EOF
platform: $TMP/riscv-rpfx.yaml
seed: 2
duration: 5ms
interval: 1ms
tasks:
  - {name: a1, cpu: 0, workload: {pattern: random, wss: 1M, mem_ratio: 0.3, write_ratio: 0.1}}
  - {name: a2, cpu: 1, workload: {pattern: random, wss: 512K, mem_ratio: 0.3, write_ratio: 0.2}}
  - {name: b1, cpu: 4, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 0.3}}
  - {name: b2, cpu: 5, workload: {pattern: random, wss: 2M, mem_ratio: 0.3, write_ratio: 0.1}}
  - {name: d1, cpu: 8, workload: {pattern: random, wss: 768K, mem_ratio: 0.3, write_ratio: 0.1}}
qos:
  monitor: $1
  groups:
    - {name: a, tasks: [a1, a2], L3: 0xff00}
    - {name: b, tasks: [b1, b2], L3: 0x00ff}
EOF
    expect "RCID-prefixed monitoring by $1 runs" 0 "$QOSIM" run "$TMP/rpfx.yaml" --csv "$TMP/rpfx-$1.csv"
}
mcids() { awk -F, 'NR > 1 && $1 == 0 { printf "%s=%s ", $4, $19 }' "$1"; }
rpfx task
same "per task: effective MCIDs RCID << 2 | MCID" "$(mcids "$TMP/rpfx-task.csv")" \
    "a1=5 a2=6 b1=9 b2=10 d1=1 "
same "per task: occupancy read through cc_mon_ctr_val equals the task's L3 lines at every reading" \
    "$(awk -F, 'NR > 1 && $20 != $12 { n++ } END { print n + 0 }' "$TMP/rpfx-task.csv")" 0
for t in a1 a2 b1 b2 d1; do
    read -r truth mon < <(awk -F, -v t=$t 'NR > 1 && $4 == t { g += $15; m += $21 }
        END { printf "%d %d", g, m }' "$TMP/rpfx-task.csv")
    claim "per task: $t's bytes through its effective MCID ($mon) equal its reads ($truth > 0)" \
        [ "$mon" = "$truth" -a "$truth" -gt 0 ]
done
rpfx group
same "per group: a group's counter is its RCID's first, RCID << 2" "$(mcids "$TMP/rpfx-group.csv")" \
    "a1=4 a2=4 b1=8 b2=8 d1=0 "
for g in a:a1:a2 b:b1:b2; do
    IFS=: read -r name x y <<<"$g"
    same "per group: $name's occupancy counter equals its tasks' L3 lines at every reading" \
        "$(awk -F, -v x=$x -v y=$y 'NR > 1 && ($4 == x || $4 == y) { o[$1] += $12; m[$1] = $20 }
            END { for (k in o) if (o[k] != m[k]) n++; print n + 0 }' "$TMP/rpfx-group.csv")" 0
    read -r truth mon < <(awk -F, -v x=$x -v y=$y 'NR > 1 && ($4 == x || $4 == y) { g += $15 }
        NR > 1 && $4 == x { m += $21 } END { printf "%d %d", g, m }' "$TMP/rpfx-group.csv")
    claim "per group: $name's bytes ($mon) equal its tasks' reads ($truth > 0)" \
        [ "$mon" = "$truth" -a "$truth" -gt 0 ]
done
printf 'platform: %s\nduration: 1ms\ntasks:\n' "$TMP/riscv-rpfx.yaml" >"$TMP/many.yaml"
for i in 0 1 2 3; do
    printf '  - {name: t%s, cpu: %s, workload: {pattern: seq}}\n' $i $i >>"$TMP/many.yaml"
done
printf 'qos:\n  monitor: task\n  groups:\n    - {name: g, tasks: [t0, t1, t2, t3]}\n' >>"$TMP/many.yaml"
expect "four tasks in one RCID with P 2 are refused" 2 "$QOSIM" run "$TMP/many.yaml"
has "the refusal says why" "$TMP/err" \
    'task t3: no free MCID in RCID 1: RCID-prefixed mode with P 2 gives each RCID 4 counters, the first the group'

# ---- cc_cunits -------------------------------------------------------------------
# riscv-soc's L3 (4 MiB, 16 blocks of 256 KiB): a random 3 MiB working set
# in a group allowed every block holds about 3 MiB; limited to 1 MiB of
# capacity units it holds at most 1 MiB, and misses more.
units() { # units EXTRA OUT
    cat >"$TMP/units.yaml" <<EOF
platform: riscv-soc
seed: 3
duration: 6ms
interval: 1ms
settle: 3ms
tasks:
  - {name: big, cpu: 0, workload: {pattern: random, wss: 3M, mem_ratio: 0.3, write_ratio: 0.1}}
qos:
  monitor: task
  groups:
    - {name: g, tasks: [big], L3: 0xffff$1}
EOF
    expect "cunits scenario ($2) runs" 0 "$QOSIM" run "$TMP/units.yaml" --csv "$TMP/$2.csv"
    cp "$TMP/out" "$TMP/$2"
}
units "" free
units ", units: {L3: 1M}" limited
free=$(col "$TMP/free" start big 3) lim=$(col "$TMP/limited" start big 3)
claim "without a unit limit big holds $free MiB of L3 (its 3 MiB within 10%)" near "$free" 3 0.10
claim "limited to 1 MiB it holds $lim MiB (1 MiB within 5%)" near "$lim" 1 0.05
same "limited: no reading of its L3 lines passes 1 MiB (16384 lines)" \
    "$(awk -F, 'NR > 1 && $12 > 1048576 { n++ } END { print n + 0 }' "$TMP/limited.csv")" 0
m1=$(col "$TMP/free" start big 2) m2=$(col "$TMP/limited" start big 2)
claim "free it hardly misses (LLC MPKI $m1 < 1)" ge 1 "$m1" 1
claim "limited it misses (LLC MPKI $m2 > 50)" ge "$m2" 50 1
printf 'platform: riscv-soc-draft\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nqos:\n  groups:\n    - {name: g, tasks: [t], units: {L3: 1M}}\n' >"$TMP/bad.yaml"
expect "units on the draft are refused" 2 "$QOSIM" run "$TMP/bad.yaml"
has "the refusal names the key" "$TMP/err" "qos.groups\[0\].units: riscv-soc-draft has no capacity-unit limits"
"$QOSIM" profiles show riscv-edge >"$TMP/edge.yaml"
printf 'platform: %s\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nqos:\n  groups:\n    - {name: g, tasks: [t], units: {L3: 1M}}\n' "$TMP/edge.yaml" >"$TMP/bad.yaml"
expect "units without CUNITS are refused" 2 "$QOSIM" run "$TMP/bad.yaml"
has "the refusal says CUNITS" "$TMP/err" "units.L3: the L3 capacity controllers of riscv-edge have no capacity-unit limits \(CUNITS 0\)"
printf 'platform: riscv-soc\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nqos:\n  groups:\n    - {name: g, tasks: [t], units: {L3: 8M}}\n' >"$TMP/bad.yaml"
expect "units past the cache are refused" 2 "$QOSIM" run "$TMP/bad.yaml"
has "the refusal gives the range" "$TMP/err" "units.L3: .*out of range"
