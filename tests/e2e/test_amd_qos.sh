#!/bin/bash
# End-to-end experiments with AMD's later PQoS on amd-epyc-turin (Zen 5),
# through the driver and the registers: BMEC's event configurations
# (QOS_EVT_CFG_n) against the machine's ground truth per transaction type,
# ABMC's assignable counters beside the default mode's tracked RMIDs,
# SMBA's limit on a group's CXL reads, SDCIAE's io_alloc beside a latency
# task's partition, and the scenario keys refused where a profile lacks
# the feature. Each run is
# deterministic (fixed seed); the comparisons with ground truth are exact,
# since the counters count the same transfers the ground truth does.
. "$(dirname "$0")/lib.sh"

# rows JSON SECTION: one line per task row of the JSON's phases or
# intervals: "PHASE TASK T0 ... T6 TOTAL LOCAL UNAVAILABLE", T0-T6 the
# ground-truth bytes of BMEC's seven transaction types (bit order), TOTAL
# and LOCAL what the driver read ("null" when unassigned).
rows() {
    awk -v want="$2" '
        /^  "phases": \[/ { sec = "phases" }
        /^  "intervals": \[/ { sec = "intervals" }
        sec == "phases" && /^      "name": / { ph = $2; gsub(/[",]/, "", ph) }
        sec == "intervals" && /^      "phase": / { ph = $2; gsub(/[",]/, "", ph) }
        sec != want { next }
        /"task": / { t = $2; gsub(/[",]/, "", t); n = 0; tot = loc = un = "-" }
        /"(local_reads|remote_reads|local_non_temporal_writes|remote_non_temporal_writes|local_reads_slow_memory|remote_reads_slow_memory|dirty_victim_writes_all)": / {
            v = $2; gsub(/,/, "", v); tr[n++] = v }
        /"total_bytes": / { tot = $2; gsub(/,/, "", tot) }
        /"local_bytes": / { loc = $2; gsub(/,/, "", loc) }
        /"unavailable": / { un = $2; gsub(/,/, "", un)
            printf "%s %s", ph, t; for (i = 0; i < 7; i++) printf " %s", tr[i]
            printf " %s %s %s\n", tot, loc, un }' "$1"
}

# A two-socket Turin (remote DRAM needs a second node) with 4 MiB of L3 per
# CCD, so that a store stream makes dirty victims within a millisecond.
"$QOSIM" profiles show amd-epyc-turin | sed -e 's/^  sockets: 1.*/  sockets: 2/' \
    -e 's/^    size: 32M .*/    size: 4M/' -e 's/^name: .*/name: turin2/' >"$TMP/turin2.yaml"
expect "the two-socket variant is a valid profile" 0 "$QOSIM" profiles check "$TMP/turin2.yaml"

# ---- BMEC: each transaction type alone, and the defaults ---------------------
# One task per CCD, each its own RMID: reads of local DRAM, reads of the
# other socket's DRAM, and a store stream that also writes dirty victims
# back. Each phase sets the total event to one type; statistics start one
# interval into it, after the configuration's U.
cat >"$TMP/bmec.yaml" <<YAML
platform: $TMP/turin2.yaml
seed: 7
duration: 6ms
interval: 250us
settle: 250us
tasks:
  - {name: loc, cpu: 0, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: rem, cpu: 8, node: 1, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: dirty, cpu: 16, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 1}}
qos:
  monitor: task
  mbm_assign_mode: default
  events: {total: [local_reads], local: [local_reads]}
phases:
  - {name: b0, at: 0ms}
  - {name: b1, at: 1.5ms, qos: [{events: {total: [remote_reads]}}]}
  - {name: b6, at: 3ms, qos: [{events: {total: [dirty_victim_writes_all]}}]}
  - {name: all, at: 4.5ms, qos: [{events: {total: 0x7F, local: 0x15}}]}
YAML
expect "bmec runs" 0 "$QOSIM" run "$TMP/bmec.yaml" --json "$TMP/bmec.json"
rows "$TMP/bmec.json" phases >"$TMP/bmec.rows"
for b in 0 1 6; do
    for t in loc rem dirty; do
        read -r truth mon < <(awk -v p=b$b -v t=$t -v k=$((b + 3)) '$1 == p && $2 == t { print $k, $10 }' "$TMP/bmec.rows")
        same "BMEC bit $b alone: $t's total event reads $mon bytes, its ground truth of that type" \
            "$mon" "$truth"
    done
done
for t in loc rem dirty; do
    read -r sum lsum mon lmon < <(awk -v t=$t '$1 == "all" && $2 == t {
        print $3 + $4 + $5 + $6 + $7 + $8 + $9, $3 + $5 + $7, $10, $11 }' "$TMP/bmec.rows")
    same "BMEC 0x7F: $t's total event is the sum of the seven types ($sum)" "$mon" "$sum"
    same "BMEC 0x15: $t's local event is the sum of the local types ($lsum)" "$lmon" "$lsum"
done
# The experiment has each type to count: not all zeros.
claim "the remote task reads remote DRAM" [ "$(awk '$1 == "b1" && $2 == "rem" { print $4 }' "$TMP/bmec.rows")" -gt 100000 ]
claim "the store stream writes dirty victims" [ "$(awk '$1 == "b6" && $2 == "dirty" { print $9 }' "$TMP/bmec.rows")" -gt 100000 ]
claim "the local task reads local DRAM" [ "$(awk '$1 == "b0" && $2 == "loc" { print $3 }' "$TMP/bmec.rows")" -gt 100000 ]
# A configuration write clears the counters, and the first read after it
# is U, for both events (a write clears the domain's counters of both,
# docs/registers.md 1.6): the interval ending 250 us into a phase saw two.
rows "$TMP/bmec.json" intervals >"$TMP/bmec.iv"
same "after each change the next read of every task is U (one per changed event)" \
    "$(awk '$1 != "b0" { n[$1 " " $2]++; if (n[$1 " " $2] == 1) printf "%s:%s ", $1, $12 }' "$TMP/bmec.iv")" \
    "b1:2 b1:2 b1:2 b6:2 b6:2 b6:2 all:2 all:2 all:2 "
same "and no read is U after that" \
    "$(awk '$1 != "b0" { n[$1 " " $2]++; if (n[$1 " " $2] > 1) s += $12 } END { print s + 0 }' "$TMP/bmec.iv")" 0

# ---- BMEC: the other four types (non-temporal writes, slow memory reads) ------
# The two-socket variant has a CXL node per socket: node 2 attached to node
# 0, node 3 to node 1. One task per CCD on socket 0: non-temporal stores
# (nt_ratio 1) into local and into remote DRAM, and reads of the local and
# of the remote CXL node. Each phase sets the total event to one of bits
# 2-5; the last to all seven, the local event to 0x15. Phases of 1 ms: the
# counts are exact at any length, and the smallest a task makes of its own
# type in the last phase is 1,634,816 bytes, where 100,000 are asked
# (2,723,840 in phases of 1.5 ms, at 1.6 times the time).
cat >"$TMP/bmec2.yaml" <<YAML
platform: $TMP/turin2.yaml
seed: 7
duration: 5ms
interval: 250us
settle: 250us
tasks:
  - {name: ntl, cpu: 0, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 1, nt_ratio: 1}}
  - {name: ntr, cpu: 8, node: 1, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 1, nt_ratio: 1}}
  - {name: sl, cpu: 16, node: 2, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: sr, cpu: 24, node: 3, workload: {pattern: seq, wss: 64M, mem_ratio: 0.5, write_ratio: 0}}
qos:
  monitor: task
  mbm_assign_mode: default
  events: {total: [local_non_temporal_writes], local: [local_non_temporal_writes]}
phases:
  - {name: b2, at: 0ms}
  - {name: b3, at: 1ms, qos: [{events: {total: [remote_non_temporal_writes]}}]}
  - {name: b4, at: 2ms, qos: [{events: {total: [local_reads_slow_memory]}}]}
  - {name: b5, at: 3ms, qos: [{events: {total: [remote_reads_slow_memory]}}]}
  - {name: all, at: 4ms, qos: [{events: {total: 0x7F, local: 0x15}}]}
YAML
expect "bmec with nt stores and slow memory runs" 0 "$QOSIM" run "$TMP/bmec2.yaml" --json "$TMP/bmec2.json"
rows "$TMP/bmec2.json" phases >"$TMP/bmec2.rows"
for b in 2 3 4 5; do
    for t in ntl ntr sl sr; do
        read -r truth mon < <(awk -v p=b$b -v t=$t -v k=$((b + 3)) '$1 == p && $2 == t { print $k, $10 }' "$TMP/bmec2.rows")
        same "BMEC bit $b alone: $t's total event reads $mon bytes, its ground truth of that type" \
            "$mon" "$truth"
    done
done
for t in ntl ntr sl sr; do
    read -r sum lsum mon lmon < <(awk -v t=$t '$1 == "all" && $2 == t {
        print $3 + $4 + $5 + $6 + $7 + $8 + $9, $3 + $5 + $7, $10, $11 }' "$TMP/bmec2.rows")
    same "BMEC 0x7F: $t's total event is the sum of the seven types ($sum)" "$mon" "$sum"
    same "BMEC 0x15: $t's local event is the sum of the local types ($lsum)" "$lmon" "$lsum"
done
# Each task makes its type, and only its own among bits 2-5.
for x in ntl:2 ntr:3 sl:4 sr:5; do
    t=${x%:*} b=${x#*:}
    claim "$t makes transaction type $b" [ "$(awk -v t=$t -v k=$((b + 3)) '$1 == "all" && $2 == t { print $k }' "$TMP/bmec2.rows")" -gt 100000 ]
    same "$t makes none of the other three of bits 2-5" \
        "$(awk -v t=$t -v b=$b '$1 == "all" && $2 == t { s = 0; for (i = 2; i <= 5; i++) if (i != b) s += $(i + 3); print s }' "$TMP/bmec2.rows")" 0
done

# ---- SMBA: a group's slow-memory reads held to its limit ----------------------
# On the shipped Turin (one socket, CXL node 1): three streams of the cxl
# group read the CXL node from three cores of CCD 0, a fourth core's
# stream (group fast) reads DRAM. Unlimited, the three ask about 7.7 GB/s
# of the CXL node; then the group's SMBA limit is 4 GB/s, then 1.5 GB/s,
# written by phases as resctrl's SMBA line would be.
cat >"$TMP/smba.yaml" <<YAML
platform: amd-epyc-turin
seed: 5
duration: 6ms
interval: 250us
settle: 250us
tasks:
  - {name: c0, cpu: 0, node: 1, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: c1, cpu: 2, node: 1, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: c2, cpu: 4, node: 1, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: dram, cpu: 6, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
qos:
  monitor: task
  groups:
    - {name: cxl, tasks: [c0, c1, c2]}
    - {name: fast, tasks: [dram]}
phases:
  - {name: free, at: 0ms}
  - {name: lim4, at: 2ms, qos: [{group: cxl, smba: 4GB/s}]}
  - {name: lim1, at: 4ms, qos: [{group: cxl, smba: 1.5GB/s}]}
YAML
expect "smba runs" 0 "$QOSIM" run "$TMP/smba.yaml" --json "$TMP/smba.json"
cp "$TMP/out" "$TMP/smba.table"
expect "the DRAM stream alone runs" 0 "$QOSIM" run "$TMP/smba.yaml" --only dram --json "$TMP/smba1.json"
rows "$TMP/smba.json" phases >"$TMP/smba.rows"
rows "$TMP/smba1.json" phases >"$TMP/smba1.rows"
# gbs ROWS PHASE TASKS COL: GB/s of ground-truth type column COL (3 + bit)
# summed over the tasks (a regex), over the 1.75 ms each 2 ms phase is
# measured after its 250 us settling time.
gbs() { awk -v p="$2" -v t="^($3)\$" -v k="$4" '$1 == p && $2 ~ t { s += $k }
    END { printf "%.4f", s / 1.75e-3 / 1e9 }' "$1"; }
free=$(gbs "$TMP/smba.rows" free 'c0|c1|c2' 7)
claim "unlimited, the cxl group reads the CXL node at $free GB/s, above both limits" ge "$free" 4 1.5
for x in lim4:4 lim1:1.5; do
    p=${x%:*} lim=${x#*:}
    got=$(gbs "$TMP/smba.rows" $p 'c0|c1|c2' 7)
    claim "SMBA $lim GB/s: the cxl group reads slow memory at $got GB/s, within 5%" near "$got" "$lim" 0.05
    same "SMBA $lim GB/s: the group reads nothing but slow memory" \
        "$(awk -v p=$p '$1 == p && $2 ~ /^c/ { s += $3 + $4 + $5 + $6 + $8 + $9 } END { print s }' "$TMP/smba.rows")" 0
done
# The DRAM stream shares CCD 0's L3 (32 MiB, which streams never reuse)
# and its L3BE limiter (unlimited) with the group, and no memory channel:
# SMBA holds slow reads only, so nothing of the group's limit may reach
# it. 1% allows for the L3's replacement order changing with the group's
# pace (measured: 6.84 GB/s in every phase and alone).
alone=$(gbs "$TMP/smba1.rows" free dram 3)
for p in free lim4 lim1; do
    got=$(gbs "$TMP/smba.rows" $p dram 3)
    claim "$p: the fast group's DRAM stream keeps its rate alone ($got GB/s, $alone within 1%)" \
        near "$got" "$alone" 0.01
done
has "the table: the group's streams at a third of 4 GB/s" "$TMP/smba.table" '^lim4 +c0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1\.3[34] '

# ---- ABMC: counters are exact; more IDs than counters leave some unassigned --
# Eight counters per CCD and eight tracked RMIDs (one per CPU, the least
# 56375 allows); twelve tasks on the eight CPUs of one CCD, each its own
# RMID, with a counter for the total event only: the first eight tasks get
# one, the last four none.
"$QOSIM" profiles show amd-epyc-turin | sed -e 's/^    abmc: 32.*/    abmc: 8/' \
    -e 's/^    tracked: 32.*/    tracked: 8/' -e 's/^    size: 32M .*/    size: 4M/' \
    -e 's/^name: .*/name: turin4/' >"$TMP/turin4.yaml"
abmc_yaml() { # MODE
    cat <<YAML
platform: $TMP/turin4.yaml
seed: 3
duration: 2ms
interval: 250us
settle: 0ms
tasks:
$(for i in $(seq 0 11); do echo "  - {name: t$i, cpu: $((i % 8)), workload: {pattern: seq, wss: 32M, mem_ratio: 0.4, write_ratio: 0.2}}"; done)
qos:
  monitor: task
  mbm_assign_mode: $1
$([ "$1" = mbm_event ] && echo "  mbm_assign_events: [total]")
YAML
}
abmc_yaml mbm_event >"$TMP/abmc.yaml"
abmc_yaml default >"$TMP/noabmc.yaml"
expect "abmc runs" 0 "$QOSIM" run "$TMP/abmc.yaml" --json "$TMP/abmc.json" --csv "$TMP/abmc.csv"
cp "$TMP/out" "$TMP/abmc.table"
expect "the same without ABMC runs" 0 "$QOSIM" run "$TMP/noabmc.yaml" --json "$TMP/noabmc.json"
# Over the whole run (every interval from the first): total bytes read and ground truth.
sums() { rows "$1" intervals | awk '{ g[$2] += $3 + $4 + $5 + $6 + $7 + $8 + $9
    if ($10 == "null") m[$2] = "null"; else if (m[$2] != "null") m[$2] += $10; u[$2] += $12 }
    END { for (t in g) print t, g[t], m[t], u[t] }' | sort; }
sums "$TMP/abmc.json" >"$TMP/abmc.sums"
sums "$TMP/noabmc.json" >"$TMP/noabmc.sums"
for i in 0 1 2 3 4 5 6 7; do
    read -r _ truth mon un < <(grep "^t$i " "$TMP/abmc.sums")
    same "ABMC: t$i's counter reads $mon bytes, its ground truth" "$mon" "$truth"
done
for i in 8 9 10 11; do
    same "ABMC: t$i has no counter and reports none (null)" "$(awk -v t=t$i '$1 == t { print $3 }' "$TMP/abmc.sums")" null
done
has "ABMC: the table shows - for an unassigned task" "$TMP/abmc.table" '^ +t11 .* - *$'
has "ABMC: the CSV leaves the unassigned event empty" "$TMP/abmc.csv" ',t11,.*,12,[0-9]+,,,,,0$'
claim "ABMC: no read was U" [ "$(awk '{ s += $4 } END { print s }' "$TMP/abmc.sums")" -eq 0 ]
lost=0
for i in $(seq 0 11); do
    read -r _ truth mon un < <(grep "^t$i " "$TMP/noabmc.sums")
    [ "$mon" -lt "$truth" ] && lost=$((lost + 1))
done
claim "default mode: twelve RMIDs on eight tracked lose counts ($lost of 12 tasks below ground truth)" [ $lost -ge 4 ]
claim "default mode: some reads were U" [ "$(awk '{ s += $4 } END { print s }' "$TMP/noabmc.sums")" -gt 0 ]

# ---- ABMC with BMEC: a phase's events re-configure the assigned counters ------
sed -e 's/^duration: 2ms/duration: 3ms/' -e '/mbm_assign_events/d' "$TMP/abmc.yaml" >"$TMP/abmc2.yaml"
cat >>"$TMP/abmc2.yaml" <<YAML
  events: {total: [local_reads]}
phases:
  - {name: reads, at: 0ms}
  - {name: victims, at: 1.5ms, qos: [{events: {total: [dirty_victim_writes_all]}}]}
YAML
expect "abmc with events runs" 0 "$QOSIM" run "$TMP/abmc2.yaml" --json "$TMP/abmc2.json"
rows "$TMP/abmc2.json" phases >"$TMP/abmc2.rows"
same "ABMC + BMEC: t0 and t1 (two counters each) count exactly the configured type" \
    "$(awk '$2 == "t0" || $2 == "t1" { k = $1 == "reads" ? 3 : 9; printf "%s ", $k == $10 }' "$TMP/abmc2.rows")" \
    "1 1 1 1 "

# ---- SDCIAE: io_alloc confines an I/O agent's fills to the highest COS's ways ---
# examples/amd-sdciae.yaml: a task with 6 MiB of random data in a 4-way
# (8 MiB) partition of CCD 0's L3 (ways 4-7, each 2 MiB), and a NIC
# writing 10 GB/s into an 8 MiB ring, its fills confined by SDCIAE to
# io_alloc's two ways: 0x00c0 (ways 6-7, inside the task's partition) or
# 0xc000 (ways 14-15, apart). Turin's io_ways are 0: without SDCIAE the
# NIC's writes allocate nowhere.
EX="$(cd "$(dirname "$0")/../.." && pwd)/examples"
# csv_sum CSV TASK COLUMN: a column summed over the task's rows (every interval).
# csv_max / csv_min CSV TASK COLUMN [T]: its largest, its smallest from time T.
csv_sum() { awk -F, -v t="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
    $4 == t { s += $k[c] } END { printf "%d", s }' "$1"; }
csv_max() { awk -F, -v t="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
    $4 == t && $k[c] > m { m = $k[c] } END { printf "%d", m }' "$1"; }
csv_min() { awk -F, -v t="$2" -v c="$3" -v t0="$4" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
    $4 == t && $1 >= t0 && (!n++ || $k[c] < m) { m = $k[c] } END { printf "%d", m }' "$1"; }
IO_WAYS_BYTES=$((2 * 32768 * 64)) # two ways of 32,768 sets
DMA_BYTES=200000000                # 10 GB/s for 20 ms
expect "sdciae overlapping runs" 0 "$QOSIM" run "$EX/amd-sdciae.yaml" --csv "$TMP/io-a.csv"
cp "$TMP/out" "$TMP/io-a"
# Under the sanitizers this run covers io_alloc's path (the DMA path's own
# are test_io.sh's, the register's test_x86_amd's); the comparisons, four
# runs more, are the normal build's.
case $QOSIM in */san/*) echo "# SDCIAE's comparisons run in the normal build" ;; *)
    # The variants compared with each other run 8 ms, not the example's 20:
    # the 4 ms of settling, then 16 intervals. Every figure compared below
    # was the same at 20 ms (kvs's L3 misses alone, apart and off each its
    # 98,368 lines once; the NIC's largest and smallest occupancy) or moved
    # by 0.1% (overlapping, LLC MPKI 21.73 at 20 ms, 21.70 at 8 ms), at 40%
    # of the time. The example itself, as shipped, ran above.
    sed 's/^duration: 20ms$/duration: 8ms/' "$EX/amd-sdciae.yaml" >"$TMP/io-8ms.yaml"
    SHORT_BYTES=80000000 # 10 GB/s for 8 ms
    expect "sdciae: the task alone runs" 0 "$QOSIM" run "$TMP/io-8ms.yaml" --only kvs --csv "$TMP/io-0.csv"
    cp "$TMP/out" "$TMP/io-0"
    sed 's/io_alloc: 0x00c0/io_alloc: 0xc000/' "$TMP/io-8ms.yaml" >"$TMP/io-apart.yaml"
    expect "sdciae apart runs" 0 "$QOSIM" run "$TMP/io-apart.yaml" --csv "$TMP/io-b.csv"
    cp "$TMP/out" "$TMP/io-b"
    sed '/^  io_alloc:/d' "$TMP/io-8ms.yaml" >"$TMP/io-off.yaml"
    expect "without io_alloc runs" 0 "$QOSIM" run "$TMP/io-off.yaml" --csv "$TMP/io-z.csv"
    cp "$TMP/out" "$TMP/io-z"
    # The overlapping case at 8 ms too, for the one comparison that needs it
    # (io_ways against io_alloc, below).
    expect "sdciae overlapping, 8 ms, runs" 0 "$QOSIM" run "$TMP/io-8ms.yaml"
    ms=$(col "$TMP/out" start kvs 2)
    ma=$(col "$TMP/io-a" start kvs 2) mb=$(col "$TMP/io-b" start kvs 2) m0=$(col "$TMP/io-0" start kvs 2)
    same "alone: kvs's 6 MiB fit its 8 MiB partition (LLC MPKI $m0)" "$m0" "0.00"
    # Overlapping, each of the NIC's fills into ways 6-7 may evict a line of kvs's.
    claim "SDCIAE overlapping: kvs's LLC MPKI $ma >= 10 above alone's $m0" ge "$ma" 10 1
    # Apart, the NIC's fills replace only lines in ways 14-15, where kvs never
    # fills: kvs misses exactly the lines it misses alone (no tolerance; any
    # eviction by the NIC would be a miss alone has not).
    same "SDCIAE apart: kvs's LLC MPKI $mb is the alone level" "$mb" "$m0"
    same "SDCIAE apart: kvs's L3 misses over the run equal alone's" \
        "$(csv_sum "$TMP/io-b.csv" kvs l3_misses)" "$(csv_sum "$TMP/io-0.csv" kvs l3_misses)"
    same "alone: those are its data and code lines, once each" \
        "$(csv_sum "$TMP/io-0.csv" kvs l3_misses)" $(((6 * 1048576 + 4096) / 64))
    for v in a:20:$DMA_BYTES b:8:$SHORT_BYTES; do
        IFS=: read -r v d want <<<"$v"
        claim "SDCIAE $v: the NIC's lines never exceed io_alloc's two ways ($IO_WAYS_BYTES bytes)" \
            ge "$IO_WAYS_BYTES" "$(csv_max "$TMP/io-$v.csv" nic llc_occupancy_bytes)" 1
        same "SDCIAE $v: the NIC moved 10 GB/s for $d ms" "$(csv_sum "$TMP/io-$v.csv" nic dma_write_bytes)" "$want"
    done
    # Apart, once its ring has wrapped (0.8 ms), the NIC holds both ways of every set.
    same "SDCIAE apart: the NIC fills io_alloc's ways exactly" \
        "$(csv_min "$TMP/io-b.csv" nic llc_occupancy_bytes 0.001)" "$IO_WAYS_BYTES"
    # SDCIAE off: the profile's io_ways (0 on Turin) decide, so nothing allocates
    # and every line goes to memory, and kvs is back at the alone level.
    same "without io_alloc: the NIC holds no line, ever" "$(csv_max "$TMP/io-z.csv" nic llc_occupancy_bytes)" 0
    same "without io_alloc: all its writes went to memory" "$(csv_sum "$TMP/io-z.csv" nic mem_write_bytes)" "$SHORT_BYTES"
    same "without io_alloc: kvs misses what it misses alone" \
        "$(csv_sum "$TMP/io-z.csv" kvs l3_misses)" "$(csv_sum "$TMP/io-0.csv" kvs l3_misses)"
    # ... and with io_ways set in the profile (SDCI's ways without enforcement),
    # SDCIAE off lets the NIC fill those: ways 6-7 leak again, the io_alloc mask
    # (which only the register's SDCIAE_En would apply) left out.
    "$QOSIM" profiles show amd-epyc-turin | sed -e 's/^    allocation: .*/&\n    io_ways: 0x00c0/' \
        -e 's/^name: .*/name: turin-sdci/' >"$TMP/turin-sdci.yaml"
    sed -e "s|^platform: amd-epyc-turin|platform: $TMP/turin-sdci.yaml|" "$TMP/io-off.yaml" >"$TMP/io-w.yaml"
    expect "SDCIAE off, io_ways 0x00c0 runs" 0 "$QOSIM" run "$TMP/io-w.yaml" --csv "$TMP/io-w.csv"
    cp "$TMP/out" "$TMP/io-w"
    same "SDCIAE off, io_ways 0x00c0: kvs leaks as with io_alloc 0x00c0 (LLC MPKI)" "$(col "$TMP/io-w" start kvs 2)" "$ms"
    claim "SDCIAE off, io_ways 0x00c0: the NIC holds lines, within its two ways" \
        ge "$IO_WAYS_BYTES" "$(csv_max "$TMP/io-w.csv" nic llc_occupancy_bytes)" 1
    claim "SDCIAE off, io_ways 0x00c0: the NIC holds lines" [ "$(csv_max "$TMP/io-w.csv" nic llc_occupancy_bytes)" -gt 0 ]
    ;;
esac

# ---- scenario keys refused where the profile lacks the feature --------------
bad() { # bad NAME MESSAGE-REGEX YAML-TAIL [PLATFORM]
    printf 'platform: %s\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\n%s\n' \
        "${4:-amd-epyc-turin}" "$3" >"$TMP/bad.yaml"
    expect "refused: $1" 2 "$QOSIM" run "$TMP/bad.yaml" --json "$TMP/bad.json"
    has "message: $1" "$TMP/err" "$2"
    claim "no output file: $1" [ ! -e "$TMP/bad.json" ]
}
bad "events without BMEC" 'bad.yaml:5: qos.events: amd-epyc has no bandwidth event configuration \(BMEC' \
    'qos: {events: {total: 1}}' amd-epyc
bad "events on Intel" 'qos.events: intel-xeon has no bandwidth event configuration' \
    'qos: {events: {total: 1}}' intel-xeon
bad "an unknown transaction type" "qos.events.total\\[0\\]: 'local_writes' is not a transaction type" \
    'qos: {events: {total: [local_writes]}}'
bad "a type mask past the seven" 'qos.events.total: .*out of range' 'qos: {events: {total: 0x80}}'
bad "an unknown event" "qos.events.occupancy: unknown key" 'qos: {events: {occupancy: 1}}'
bad "an empty events map" 'qos.events: give total, local or both' 'qos: {events: {}}'
bad "mbm_event without ABMC" 'qos.mbm_assign_mode: amd-epyc has no assignable counters \(ABMC' \
    'qos: {mbm_assign_mode: mbm_event}' amd-epyc
bad "an unknown assign mode" 'qos.mbm_assign_mode: ' 'qos: {mbm_assign_mode: legacy}'
bad "mbm_event with nothing monitored" 'counters count monitoring IDs, and monitor is none' \
    'qos: {monitor: none, mbm_assign_mode: mbm_event}'
bad "assign events in default mode" 'qos.mbm_assign_events: events get counters in mbm_event mode only' \
    'qos: {mbm_assign_mode: default, mbm_assign_events: [total]}'
bad "an unknown assign event" "qos.mbm_assign_events\\[0\\]: 'mbm_total_bytes': the events are total and local" \
    'qos: {mbm_assign_events: [mbm_total_bytes]}'
bad "counters in default mode" "qos.groups\\[0\\].counters: counters are assigned in ABMC's mbm_event mode only" \
    'qos: {mbm_assign_mode: default, groups: [{name: a, counters: false}]}'
bad "io_alloc without SDCIAE" 'qos.io_alloc: amd-epyc has no I/O allocation control \(SDCIAE' \
    'qos: {io_alloc: 0xc000}' amd-epyc
bad "io_alloc past the CBM" 'qos.io_alloc: .*out of range' 'qos: {io_alloc: 0x10000}'
bad "io_alloc takes a class" 'qos.groups: 15 groups and the default group need 16 classes; amd-epyc-turin offers 15 beside io_alloc' \
    "qos: {io_alloc: 3, groups: [$(for i in $(seq 1 15); do printf '{name: g%d}, ' $i; done | sed 's/, $//')]}"
bad "smba without SMBA" 'bad.yaml:5: qos.groups\[0\].smba: amd-epyc has no slow memory bandwidth allocation \(SMBA, the profile.s qos.slow_bandwidth\)' \
    'qos: {groups: [{name: a, smba: 1GB/s}]}' amd-epyc
bad "smba on Intel" 'qos.groups\[0\].smba: intel-xeon has no slow memory bandwidth allocation' \
    'qos: {groups: [{name: a, smba: 1GB/s}]}' intel-xeon
bad "smba on CBQRI" 'qos.groups\[0\].smba: riscv-soc has no slow memory bandwidth allocation' \
    'qos: {groups: [{name: a, smba: 1GB/s}]}' riscv-soc
bad "smba past BW_LEN" 'qos.groups\[0\].smba: .*out of range' 'qos: {groups: [{name: a, smba: 300GB/s}]}'
bad "smba below a step" 'qos.groups\[0\].smba: the smallest limit is 0.125GB/s \(0 means unlimited\)' \
    'qos: {groups: [{name: a, smba: 100MB/s}]}'
bad "smba in confidential settings" 'qos.groups\[0\].confidential.smba: riscv-soc-draft has no slow memory bandwidth allocation' \
    'qos: {groups: [{name: a, confidential: {smba: 1GB/s}}]}' riscv-soc-draft
bad "smba not a rate" 'qos.groups\[0\].smba: expected a bandwidth' 'qos: {groups: [{name: a, smba: fast}]}'
bad "smba in a phase without SMBA" 'bad.yaml:7: phases\[0\].qos\[0\].smba: amd-epyc has no slow memory bandwidth allocation' \
    'qos: {groups: [{name: a}]}
phases:
  - {at: 0ms, qos: [{group: a, smba: 1GB/s}]}' amd-epyc
bad "smba for the default group" 'phases\[0\].qos\[0\]: the default group \(class 0\) keeps its reset settings' \
    'qos: {groups: [{name: a}]}
phases:
  - {at: 0ms, qos: [{group: default, smba: 1GB/s}]}'
bad "events beside a group in a phase" 'phases\[0\].qos\[0\].group: events configure every domain, not a group' \
    'qos: {groups: [{name: a}]}
phases:
  - {at: 0ms, qos: [{group: a, events: {total: 1}}]}'
