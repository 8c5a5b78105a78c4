#!/bin/bash
# End-to-end experiments through the registers: scenarios whose qos section
# the x86 driver carries out as MSR writes (masks, CDP, MBA, L3BE, and
# PQR_ASSOC at every context switch), with monitoring read from QM_CTR;
# and the CBQRI driver as MMIO and sqoscfg writes (block masks, bandwidth
# reservations and weights, confidential allocations through the secure
# windows), with monitoring read from the controllers' counters.
# The scenarios are in tests/e2e/qos/; each states what it sets up.
. "$(dirname "$0")/lib.sh"
Q="$(cd "$(dirname "$0")" && pwd)/qos"
EX="$(cd "$(dirname "$0")/../.." && pwd)/examples"

# table NAME SCENARIO [ARGS...]: runs it, keeping the table in $TMP/NAME.
table() {
    local name=$1
    shift
    expect "$name runs" 0 "$QOSIM" run "$@"
    cp "$TMP/out" "$TMP/$name"
}

# ---- cache allocation isolates the victim -----------------------------------
# Victim LLC misses per kilo-instruction beside the aggressors with disjoint
# masks are within 10% of the victim alone under the same masks, and at
# least twice that without masks: on L3 (Intel, AMD sparse masks) and L2.
for p in xeon:L3 epyc:L3 atom:L2; do
    plat=${p%%:*} lvl=${p#*:}
    table "cat-$plat" "$Q/cat-$plat.yaml"
    table "alone-$plat" "$Q/cat-$plat.yaml" --only victim
    table "shared-$plat" "$Q/shared-$plat.yaml"
    iso=$(col "$TMP/cat-$plat" start victim 2) alone=$(col "$TMP/alone-$plat" start victim 2)
    sh=$(col "$TMP/shared-$plat" start victim 2)
    claim "$plat $lvl CAT: victim MPKI $iso within 10% of alone $alone" near "$iso" "$alone" 0.10
    claim "$plat $lvl CAT: victim MPKI $sh without masks >= 2 x alone $alone" ge "$sh" "$alone" 2
    claim "$plat: the victim has a steady miss rate to compare (MPKI $alone > 10)" ge "$alone" 10 1
done

# ---- L2 CDP: code that fits its code mask stays while data streams ------------
# Data lines are all new, so L2 misses minus L1D misses are code misses.
code_share() { # CSV: code L2 misses / L1I misses after the settling time
    awk -F, 'NR > 1 && $1 >= 0.006 { i += $8; d += $9; l2 += $10 } END { printf "%.6f", (l2 - d) / i }' "$1"
}
expect "cdp-atom runs" 0 "$QOSIM" run "$Q/cdp-atom.yaml" --csv "$TMP/cdp.csv"
cp "$TMP/out" "$TMP/cdp"
expect "nocdp-atom runs" 0 "$QOSIM" run "$Q/nocdp-atom.yaml" --csv "$TMP/nocdp.csv"
with=$(code_share "$TMP/cdp.csv") without=$(code_share "$TMP/nocdp.csv")
claim "L2 CDP: code L2 misses are $with of L1I misses (<= 0.001)" ge 0.001 "$with" 1
claim "no CDP: code L2 misses are $without of L1I misses (>= 0.05)" ge "$without" 0.05 1
mpki=$(col "$TMP/cdp" start app 2)
claim "L2 CDP: L2 MPKI $mpki is the stream's 250 within 1%" near "$mpki" 250 0.01

# ---- CMT and MBM equal ground truth, across many counter wraps ---------------
xeon_bytes "$TMP"
cp "$Q/mbm-xeon.yaml" "$TMP/"
expect "mbm-xeon runs (30 ms)" 0 "$QOSIM" run "$TMP/mbm-xeon.yaml" --csv "$TMP/mbm.csv" \
    --json "$TMP/mbm.json"
has "csv has the monitoring columns" "$TMP/mbm.csv" ',rmid,mon_occupancy_bytes,mon_total_bytes,'
has "json rows carry what software read" "$TMP/mbm.json" '"rmid": 1,'
same "CMT: occupancy read at every interval equals the RMID's lines, and the task's" \
    "$(awk -F, 'NR > 1 && ($13 != $20 || $12 != $20) { n++ } END { print n + 0 }' "$TMP/mbm.csv")" 0
for t in stream remote; do
    read -r truth mon wraps < <(awk -F, -v t=$t 'NR > 1 && $4 == t { g += $15; m += $21 }
        END { printf "%d %d %d", g, m, m / 16777216 }' "$TMP/mbm.csv")
    claim "MBM $t: $mon bytes read within 1% of ground truth $truth" near "$mon" "$truth" 0.01
    claim "MBM $t: the 24-bit counter wrapped $wraps times (>= 5)" ge "$wraps" 5 1
done
same "MBM local: the remote task's reads are not local" \
    "$(awk -F, 'NR > 1 && $4 == "remote" { s += $22 } END { print s + 0 }' "$TMP/mbm.csv")" 0
same "MBM local: the local task's reads are all local" \
    "$(awk -F, 'NR > 1 && $4 == "stream" && $21 != $22 { n++ } END { print n + 0 }' "$TMP/mbm.csv")" 0

# ---- AMD L3BE holds a limit; Intel MBA is monotone --------------------------
table limit "$Q/limit-epyc.yaml"
for x in s1:1.00 s2:2.50; do
    t=${x%%:*} want=${x#*:} got=$(col "$TMP/limit" start "${x%%:*}" 4)
    claim "L3BE: $t reads $got GB/s, its limit $want within 5%" near "$got" "$want" 0.05
    claim "L3BE: $t's MBM reading equals it" [ "$(col "$TMP/limit" start "$t" 8)" = "$got" ]
done
free=$(col "$TMP/limit" start s3 4)
claim "L3BE: the unlimited stream shows the demand exceeds both limits ($free GB/s)" ge "$free" 2.5 1.5
# intel-xeon's MBA is the request model (docs/mechanisms.md, "Bandwidth
# limiters"): each request leaving L2 waits its class's delay, latency and
# not occupancy, so the group's bandwidth (the two streams share the memory
# unevenly while memory limits them: their sum is what MBA throttles) never
# rises as the throttle tightens, delays below about 70 barely throttle it,
# and MB 10% (delay 90) still leaves about 30% (issue 23's real parts), not
# the link model's 10%.
table mba "$Q/mba-xeon.yaml"
grp() { awk -v a="$(col "$1" "$2" s1 4)" -v b="$(col "$1" "$2" s2 4)" 'BEGIN { print a + b }'; }
prev=1e9
for p in 100 40 30 20 10; do
    got=$(grp "$TMP/mba" "mb$p")
    claim "MBA $p%: the group reads $got GB/s, no more than at the step before ($prev)" \
        ge "$prev" "$got" 0.98
    prev=$got
done
full=$(grp "$TMP/mba" mb100) mb40=$(grp "$TMP/mba" mb40) mb10=$(grp "$TMP/mba" mb10)
a10=$(col "$TMP/mba" mb10 s1 4) b10=$(col "$TMP/mba" mb10 s2 4)
claim "MBA 40% (delay 60) barely throttles: $mb40 GB/s >= 90% of $full" ge "$mb40" "$full" 0.90
claim "MBA 10% (delay 90) throttles: $mb10 GB/s <= 45% of $full" ge "$full" "$mb10" 2.2222
claim "MBA 10% still leaves about 30%, not 10%: $mb10 GB/s >= 20% of $full" ge "$mb10" "$full" 0.20
claim "MBA 10%: the group's two streams, each delayed alike, read alike ($a10 vs $b10 GB/s, within 5%)" \
    near "$a10" "$b10" 0.05

# ---- the register path is the same mechanism as the direct one ---------------
# examples/rdt-noisy-neighbour.yaml programs through the driver what
# examples/noisy-neighbour.yaml sets directly: the ground truth is identical.
# Both at a fifth of their length (phases of 2 ms, 1 ms settling): equality
# holds at any length, and test_run.sh runs the whole demo.
short() { sed 's/^duration: 30ms/duration: 6ms/; s/^settle: 4ms/settle: 1ms/; s/at: 10ms/at: 2ms/; s/at: 20ms/at: 4ms/' "$1"; }
short "$EX/rdt-noisy-neighbour.yaml" >"$TMP/rdt-nn.yaml"
short "$EX/noisy-neighbour.yaml" >"$TMP/nn.yaml"
same "both shortened alike" "$(grep -hcE '^duration: 6ms|^settle: 1ms|at: [24]ms' "$TMP/rdt-nn.yaml" "$TMP/nn.yaml" | tr '\n' ' ')" "4 4 "
table rdt-nn "$TMP/rdt-nn.yaml"
table nn "$TMP/nn.yaml"
truth() { awk 'NR > 3 { NF = $2 ~ /^[0-9.]+$/ ? 6 : 7; print }' "$1"; }
same "rdt-noisy-neighbour's ground truth equals noisy-neighbour's" "$(truth "$TMP/rdt-nn")" \
    "$(truth "$TMP/nn")"

# ---- bad qos sections --------------------------------------------------------
bad() { # bad NAME MESSAGE-REGEX YAML-TAIL [PLATFORM]
    printf 'platform: %s\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\n%s\n' \
        "${4:-intel-xeon}" "$3" >"$TMP/bad.yaml"
    expect "refused: $1" 2 "$QOSIM" run "$TMP/bad.yaml" --json "$TMP/bad.json"
    has "message: $1" "$TMP/err" "$2"
    claim "no output file: $1" [ ! -e "$TMP/bad.json" ]
}
bad "Intel sparse mask" 'bad.yaml:5: qos.groups\[0\].L3: 0x101: L3 of intel-xeon takes only non-zero masks whose bits are contiguous' \
    'qos: {groups: [{name: a, L3: 0x101}]}'
bad "Intel empty mask" 'qos.groups\[0\].L3: 0x0: ' 'qos: {groups: [{name: a, L3: 0}]}'
bad "mask wider than the CBM" 'qos.groups\[0\].L3: .*out of range' 'qos: {groups: [{name: a, L3: 0x800}]}'
bad "code/data masks without CDP" 'need CDP: add L3 to qos.cdp' 'qos: {groups: [{name: a, L3: {code: 1}}]}'
bad "CDP where there is none" 'qos.cdp\[0\]: L3 of intel-atom has no code/data prioritization' 'qos: {cdp: [L3]}' intel-atom
bad "an L3BE limit on Intel" 'intel-xeon has no bandwidth rate limit \(it throttles by MBA percent: use mba\)' \
    'qos: {groups: [{name: a, limit: 1GB/s}]}'
bad "MBA on AMD" 'amd-epyc has no MBA throttle \(it limits bandwidth by rate: use limit\)' \
    'qos: {groups: [{name: a, mba: 50}]}' amd-epyc
bad "MBA off its steps" 'mba: 15%: intel-xeon takes steps of 10%' 'qos: {groups: [{name: a, mba: 15}]}'
bad "MBA below the granularity" 'qos.groups\[0\].mba: .*out of range' 'qos: {groups: [{name: a, mba: 5}]}'
bad "a limit under one step" 'the smallest limit is 0.125GB/s' 'qos: {groups: [{name: a, limit: 100MB/s}]}' amd-epyc
bad "an unknown task" "qos.groups\\[0\\].tasks\\[0\\]: no task called 'nope'" \
    'qos: {groups: [{name: a, tasks: [nope]}]}'
bad "a task in two groups" "task 't' is already in group 'a'" \
    'qos: {groups: [{name: a, tasks: [t]}, {name: b, tasks: [t]}]}'
bad "the default group's name" "'default' is class 0's" 'qos: {groups: [{name: default}]}'
bad "more groups than classes" 'qos.groups: 8 groups and the default group need 9 classes; intel-xeon offers 8' \
    'qos: {groups: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, {name: f}, {name: g}, {name: h}]}'
bad "an unknown qos key" 'qos.colour: unknown key$' 'qos: {colour: red}'
bad "a misspelt group name key" "qos.groups\\[0\\].nmae: unknown key \\(did you mean 'name'\\?\\)$" \
    'qos: {groups: [{nmae: a}]}'
bad "a misspelt key of a mask" "qos.groups\\[0\\].L3.dat: unknown key \\(did you mean 'data'\\?\\)$" \
    'qos: {cdp: [L3], groups: [{name: a, L3: {code: 1, dat: 2}}]}'
bad "monitoring where there is none" 'monitoring by task needs 2 RMIDs; intel-atom has 0' \
    'qos: {monitor: task}' intel-atom
bad "CBQRI: an empty block mask" 'qos.groups\[0\].L3: 0x0: L3 of riscv-soc takes only non-zero masks \(a CBQRI capacity allocation needs at least one block\)' \
    'qos: {groups: [{name: a, L3: 0}]}' riscv-soc
bad "CBQRI: a mask past NCBLKS" 'qos.groups\[0\].L2: .*out of range' 'qos: {groups: [{name: a, L2: 0x100}]}' riscv-soc
bad "CBQRI: per-AT masks without per-AT limits" 'L3 capacity controllers of riscv-soc have one allocation for code and data' \
    'qos: {groups: [{name: a, L3: {code: 1, data: 2}}]}' riscv-soc
bad "CBQRI: no CDP switch" 'qos.cdp: CBQRI has no CDP switch' 'qos: {cdp: [L3]}' riscv-soc
bad "CBQRI: MBA keys" 'riscv-soc reserves bandwidth blocks: use reserve \(percent\) and weight' \
    'qos: {groups: [{name: a, mba: 50}]}' riscv-soc
bad "CBQRI: a reservation on x86" 'intel-xeon has no bandwidth reservations' \
    'qos: {groups: [{name: a, reserve: 10%}]}'
bad "CBQRI: a reservation under one block" '0.1% is 0 of 256 blocks; a reservation is 1 to 224 blocks' \
    'qos: {groups: [{name: a, reserve: 0.1%}]}' riscv-soc
bad "CBQRI: reservations past MRBWB" 'qos.groups\[1\].reserve: groups would reserve 230 of 256 blocks; at most 223 may be' \
    'qos: {groups: [{name: a, reserve: 50%}, {name: b, reserve: 40%}]}' riscv-soc
bad "CBQRI: confidential on x86" 'intel-xeon has no confidential \(C bit\) configuration' \
    'qos: {groups: [{name: a, confidential: {L3: 1}}]}'
bad "CBQRI: tasks inside confidential" "a group's tasks are its tasks in both worlds" \
    'qos: {groups: [{name: a, confidential: {tasks: [t]}}]}' riscv-soc-draft
bad "CBQRI: confidential reservations past MRBWB" 'confidential groups would reserve 231 of 256 blocks' \
    'qos: {groups: [{name: a, confidential: {reserve: 80%}}, {name: b, confidential: {reserve: 10%}}]}' riscv-soc-draft
bad "CBQRI 1.0: no confidential settings" "riscv-soc has no confidential \\(C bit\\) configuration: CBQRI 1.0 dropped the 2023 draft's secure windows" \
    'qos: {groups: [{name: a, confidential: {L3: 1}}]}' riscv-soc
bad "CBQRI: weight out of range" 'qos.groups\[0\].weight: .*out of range' \
    'qos: {groups: [{name: a, weight: 256}]}' riscv-soc
printf 'platform: intel-xeon\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, tee: true, workload: {pattern: seq}}\n' >"$TMP/bad.yaml"
expect "refused: a TEE region on x86" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: no C bit" "$TMP/err" 'tasks\[0\].tee: intel-xeon has no C bit'
printf 'platform: riscv-soc\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, tee: true, workload: {pattern: seq}}\n' >"$TMP/bad.yaml"
expect "refused: a TEE region on CBQRI 1.0" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: 1.0 has no C bit" "$TMP/err" 'tasks\[0\].tee: riscv-soc has no C bit: CBQRI 1.0 dropped'
printf 'platform: riscv-soc-draft\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, tee: {base: 0x7fffffffffff, size: 4K}, workload: {pattern: seq}}\n' >"$TMP/bad.yaml"
expect "refused: a TEE region past the task's space" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: past the top" "$TMP/err" 'tasks\[0\].tee: the region passes the top of the task'
printf 'platform: intel-xeon\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, class: 1, workload: {pattern: seq}}\nqos: {}\n' >"$TMP/bad.yaml"
expect "refused: a task's own class beside a qos section" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: the driver assigns classes" "$TMP/err" 'tasks\[0\].class: with a qos section the driver assigns'
printf 'platform: intel-xeon\nduration: 2ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nqos: {}\nphases:\n  - {at: 1ms, alloc: [{cache: L3, class: 1, mask: 3}]}\n' >"$TMP/bad.yaml"
expect "refused: a direct setting beside a qos section" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: settings go through the driver" "$TMP/err" 'phases\[0\].alloc: with a qos section, settings go through the driver'
printf 'platform: intel-xeon\nduration: 2ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nphases:\n  - {at: 1ms, qos: [{group: a}]}\n' >"$TMP/bad.yaml"
expect "refused: phase qos without a qos section" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: needs a qos section" "$TMP/err" 'phases\[0\].qos: phase qos settings need a top-level qos section'
printf 'platform: intel-xeon\nduration: 2ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nqos: {}\nphases:\n  - {at: 1ms, qos: [{group: b}]}\n' >"$TMP/bad.yaml"
expect "refused: an unknown group in a phase" 2 "$QOSIM" run "$TMP/bad.yaml"
has "message: no qos group" "$TMP/err" "phases\\[0\\].qos\\[0\\].group: no qos group called 'b'"

# ---- MBA on the threads of one core -----------------------------------------
# intel-xeon's CPUs 0 and 1 are one core: without per-thread controls (MBA
# 1.0) its threads share one throttle at the larger delay (Linux's
# thread_throttle_mode "max"), so a group at MB 100 beside one at MB 10 is
# held to the MB 10 one's pace; with per_thread (MBA 3.0) each thread has its
# own throttle. On two cores the groups are apart whatever the mode. With
# the request model (docs/mechanisms.md, "Bandwidth limiters") MB 10 leaves a
# lone streaming core about 30% of what it reads unthrottled (issue 23), and
# SMT siblings share the core's misses in flight, so a thread beside a
# throttled sibling reads less than on a core of its own: the per-thread
# claims compare with the "max" mode, where the same thread is throttled.
# The first millisecond, from cold caches, is not measured: there the two
# threads' starts differ (2 ms measured from the start read 2.12 and 1.82
# GB/s at one core once the prefetchers' queues were bounded; 1.98 and 1.97
# after 1 ms of settling).
cat >"$TMP/mba-core.yaml" <<'EOF'
platform: intel-xeon
duration: 3ms
settle: 1ms
interval: 500us
tasks:
  - {name: slow, cpu: 0, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: fast, cpu: 1, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
qos:
  groups:
    - {name: s, tasks: [slow], mba: 10}
    - {name: f, tasks: [fast], mba: 100}
EOF
"$QOSIM" profiles show intel-xeon | sed 's/^    classes: 8$/    classes: 8\n    per_thread: true/' >"$TMP/xeon-pt.yaml"
sed "s|^platform: intel-xeon$|platform: $TMP/xeon-pt.yaml|" "$TMP/mba-core.yaml" >"$TMP/mba-thread.yaml"
sed 's/cpu: 1,/cpu: 2,/' "$TMP/mba-core.yaml" >"$TMP/mba-apart.yaml"
table mba-core "$TMP/mba-core.yaml"
table mba-thread "$TMP/mba-thread.yaml"
table mba-apart "$TMP/mba-apart.yaml"
s1=$(col "$TMP/mba-core" start slow 4) f1=$(col "$TMP/mba-core" start fast 4)
s2=$(col "$TMP/mba-thread" start slow 4) f2=$(col "$TMP/mba-thread" start fast 4)
s3=$(col "$TMP/mba-apart" start slow 4) f3=$(col "$TMP/mba-apart" start fast 4)
claim "MBA, two cores: MB 10 leaves a stream about 30% ($s3 GB/s, 20% to 45% of $f3 unthrottled)" \
    [ "$(awk -v s="$s3" -v f="$f3" 'BEGIN { print (s >= 0.2 * f && s <= 0.45 * f) }')" = 1 ]
claim "MBA, one core: the MB 100 thread is held to the MB 10 one's pace ($f1 vs $s1 GB/s, within 10%)" \
    near "$f1" "$s1" 0.10
claim "MBA, one core: ... less than half of what it reads on a core of its own ($f1 vs $f3 GB/s)" \
    ge "$f3" "$f1" 2
claim "MBA per thread: the MB 10 thread gets what its delay gives, as in max mode ($s2 vs $s1 GB/s, within 10%)" \
    near "$s2" "$s1" 0.10
claim "MBA per thread: the MB 100 thread is not held back ($f2 >= 2 x $s2 GB/s)" ge "$f2" "$s2" 2
claim "MBA per thread: it reads at least twice what the max mode leaves it ($f2 vs $f1 GB/s)" \
    ge "$f2" "$f1" 2

# ---- RISC-V CBQRI through the driver -----------------------------------------
# Capacity isolation through cc_block_mask, as for x86 above, and counters
# against ground truth, on both CBQRI texts (docs/cbqri-versions.md):
# riscv-narrow follows 1.0; its draft twin differs only in qos.cbqri.spec.
sed 's/^  cbqri:$/  cbqri:\n    spec: draft-2023/' "$Q/riscv-narrow.yaml" >"$TMP/riscv-narrow-draft.yaml"
on() { # on TEXT SCENARIO: the scenario's path, on riscv-narrow's draft twin for TEXT draft
    if [ "$1" = 1.0 ]; then echo "$2"; return; fi
    sed "s|^platform: riscv-narrow.yaml$|platform: $TMP/riscv-narrow-draft.yaml|" "$2" >"$TMP/draft-${2##*/}"
    echo "$TMP/draft-${2##*/}"
}
for text in 1.0 draft; do
    table "$text cat-riscv" "$(on $text "$Q/cat-riscv.yaml")" --csv "$TMP/cat-riscv.csv"
    table "$text alone-riscv" "$(on $text "$Q/cat-riscv.yaml")" --only victim
    table "$text shared-riscv" "$(on $text "$Q/shared-riscv.yaml")"
    iso=$(col "$TMP/$text cat-riscv" start victim 2) alone=$(col "$TMP/$text alone-riscv" start victim 2)
    sh=$(col "$TMP/$text shared-riscv" start victim 2)
    claim "$text: riscv-soc L3 blocks: victim MPKI $iso within 10% of alone $alone" near "$iso" "$alone" 0.10
    claim "$text: riscv-soc L3 blocks: victim MPKI $sh without masks >= 2 x alone $alone" ge "$sh" "$alone" 2
    claim "$text: riscv-soc: the victim has a steady miss rate to compare (MPKI $alone > 10)" ge "$alone" 10 1
    # Counters equal ground truth: occupancy read through cc_mon_ctr_val is the
    # MCID's lines and the task's at every interval; bytes read through
    # bc_mon_ctr_val, across wraps of the 24-bit counter, are the task's reads.
    has "$text: csv names the MCID" "$TMP/cat-riscv.csv" ',mcid,mon_occupancy_bytes,'
    same "$text: CBQRI occupancy equals the MCID's lines and the task's at every reading" \
        "$(awk -F, 'NR > 1 && ($13 != $20 || $12 != $20) { n++ } END { print n + 0 }' "$TMP/cat-riscv.csv")" 0
    for t in victim stream1; do
        read -r truth mon wraps < <(awk -F, -v t=$t 'NR > 1 && $4 == t { g += $15; m += $21 }
            END { printf "%d %d %d", g, m, m / 16777216 }' "$TMP/cat-riscv.csv")
        same "$text: CBQRI bytes of $t equal ground truth ($truth)" "$mon" "$truth"
        claim "$text: CBQRI bytes of $t: the 24-bit counter wrapped ($wraps times)" ge "$wraps" 1 1
    done
done

# Bandwidth reservations and Mweight under saturation (share-riscv.yaml):
# each group gets at least its reservation, the spare splits 1:2:5 within
# 5% of the spare, and a group alone gets the whole controller.
expect "share-riscv runs" 0 "$QOSIM" run "$Q/share-riscv.yaml" --csv "$TMP/share.csv"
gbw() { # gbw CSV GROUP-LETTER: the group's read GB/s after settling
    awk -F, -v g="$2" 'NR > 1 && $1 >= 0.002 && substr($4, 1, 1) == g { b += $15; t[$1] = $2 }
        END { for (k in t) s += t[k] - k; printf "%.4f", b / s / 1e9 }' "$1"
}
cap=12.8 spare=3.2 # 256 - 192 reserved blocks of 12.8 GB/s
for x in a:40:1 b:25:2 c:10:5; do
    IFS=: read -r g pct w <<<"$x"
    got=$(gbw "$TMP/share.csv" $g)
    rbwb=$(awk -v p=$pct 'BEGIN { printf "%d", p / 100 * 256 + 0.5 }')
    resv=$(awk -v r=$rbwb -v c=$cap 'BEGIN { print r / 256 * c }')
    claim "CBQRI share: group $g gets $got GB/s, at least its reservation $resv" ge "$got" "$resv" 1
    want=$(awk -v r=$resv -v s=$spare -v w=$w 'BEGIN { print r + s * w / 8 }')
    claim "CBQRI share: group $g's $got GB/s is its reservation plus ${w}/8 of the spare ($want) within 5% of the spare" \
        awk -v a="$got" -v b="$want" -v s=$spare 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * s) }'
done
expect "share-riscv: group c alone" 0 "$QOSIM" run "$Q/share-riscv.yaml" --only c1,c2,c3 --csv "$TMP/alone.csv"
got=$(gbw "$TMP/alone.csv" c)
claim "CBQRI share: a lone group gets the whole controller ($got of $cap GB/s, within 2%)" near "$got" $cap 0.02
same "CBQRI share: the controller's counts equal the groups' reads" \
    "$(awk -F, 'NR > 1 { g[$19] += $15; if (!($19 SUBSEP $1 in seen)) { seen[$19, $1] = 1; m[$19] += $21 } }
        END { for (k in g) if (g[k] != m[k]) n++; print n + 0 }' "$TMP/share.csv")" 0

# Confidential requests (conf-riscv.yaml): the TEE task is confined by the
# allocation the secure windows hold, and the normal windows' counters see
# none of its traffic; the same task outside a TEE is neither.
table conf "$Q/conf-riscv.yaml"
sed 's/ tee: true,//' "$Q/conf-riscv.yaml" >"$TMP/notee.yaml"
table notee "$TMP/notee.yaml"
llc=$(col "$TMP/conf" start secret 3) rd=$(col "$TMP/conf" start secret 4)
claim "C=1: secret holds $llc MiB, within its 4 confidential blocks (1 MiB)" ge 1.0 "$llc" 1
claim "C=1: secret does read memory ($rd GB/s)" ge "$rd" 1 1
same "C=1: the normal window's occupancy counter of its MCID reads 0" "$(col "$TMP/conf" start secret 7)" 0.00
same "C=1: the normal window's byte counter of its MCID reads 0" "$(col "$TMP/conf" start secret 8)" 0.00
claim "C=1: the stream stays out of the confidential blocks ($(col "$TMP/conf" start noisy 3) MiB <= 3)" \
    ge 3.0 "$(col "$TMP/conf" start noisy 3)" 1
llc=$(col "$TMP/notee" start secret 3)
claim "C=0: the same task outside a TEE spreads over the normal allocation ($llc MiB > 2)" ge "$llc" 2 1
# riscv-soc's counters estimate from one L3 set in ten: within 5% of the
# exact occupancy.
claim "C=0: and the normal counters see it ($(col "$TMP/notee" start secret 7) MiB)" \
    near "$(col "$TMP/notee" start secret 7)" "$llc" 0.05

# examples/cbqri-noisy-neighbour.yaml: the README's RISC-V demo. Sharing the
# L3 with the streams costs the victim over half its IPC; its 12 blocks give
# it back within 5% of what it gets alone.
table cbqri-nn "$EX/cbqri-noisy-neighbour.yaml"
table cbqri-alone "$EX/cbqri-noisy-neighbour.yaml" --only victim
alone=$(col "$TMP/cbqri-alone" partitioned victim 1)
sh=$(col "$TMP/cbqri-nn" shared victim 1) part=$(col "$TMP/cbqri-nn" partitioned victim 1)
claim "cbqri-noisy-neighbour: shared, the victim's IPC $sh is under half of alone $alone" ge "$alone" "$sh" 2
claim "cbqri-noisy-neighbour: partitioned, $part within 5% of alone $alone" near "$part" "$alone" 0.05
# riscv-soc samples one L3 set in ten: occupancy is an estimate (within
# 2%, or 0.02 MiB); bytes are exact.
claim "cbqri-noisy-neighbour: the MCID columns match the ground truth" [ \
    "$(awk 'NR > 3 { o = $2 ~ /^[0-9.]+$/ ? 0 : 1; d = $(o + 4) - $(o + 8); if (d < 0) d = -d
        if (d > 0.02 * $(o + 4) && d > 0.02 || $(o + 5) != $(o + 9)) n++ } END { print n + 0 }' "$TMP/cbqri-nn")" = 0 ]
