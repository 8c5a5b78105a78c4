#!/bin/bash
# End-to-end tests of slow (CXL-like) memory nodes and non-temporal stores as
# `qosim run` reports them: a task whose memory is on a slow node gets that
# node's latency (pointer chases: cycles per last-level miss) and bandwidth
# (streams: GB/s read), local or remote by the node it attaches to; a
# non-temporal store stream writes memory at the slow node's peak and reads
# nothing; and the scenario keys that name them are refused when wrong.
. "$(dirname "$0")/lib.sh"

# 2 sockets x 2 cores at 2 GHz: CPUs 0-1 on node 0, 2-3 on node 1. DRAM
# 80 ns, remote +60 ns; one slow node per DRAM node, 250 ns and 4 GB/s:
# node 2 attached to node 0, node 3 to node 1.
cat >"$TMP/slow.yaml" <<'Y'
name: slowbox
vendor: amd
topology: {sockets: 2, modules: 2}
core: {frequency: 2GHz, cpi: 0.5, mlp: 16}
caches:
  L1I: {size: 32K, ways: 8, latency: 4}
  L1D: {size: 32K, ways: 8, latency: 4}
  L2: {size: 256K, ways: 8, latency: 12}
  L3: {size: 1M, ways: 16, latency: 40}
memory:
  channels: 4
  peak: 40GB/s
  latency: 80ns
  remote_penalty: 60ns
  slow: {nodes: 1, peak: 4GB/s, latency: 250ns, channels: 2}
Y
expect "the slow-memory profile is valid" 0 "$QOSIM" profiles check "$TMP/slow.yaml"
has "profiles check names the slow nodes" "$TMP/out" 'valid profile \(4 CPUs, slow memory nodes 2-3\)$'

# sum CSV TASK COLUMN: a column of the task's rows after the settle time, summed.
sum() {
    awk -F, -v t="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
        $4 == t && $1 >= 0.001 { s += $k[c] } END { printf "%.6g\n", s }' "$1"
}
calc() { awk "BEGIN { print $1 }"; }

# ---- latency: pointer chases far beyond the L3 ------------------------------
# Every load misses every level: a miss costs L3's 40 cycles plus the memory's
# latency, at 2 GHz 160 cycles for 80 ns; an instruction 0.5 cycles.
cat >"$TMP/lat.yaml" <<'Y'
platform: slow.yaml
seed: 3
duration: 3ms
interval: 500us
tasks:
  - {name: dram, cpu: 0, node: 0, workload: {pattern: chase, wss: 256M, mem_ratio: 0.3}}
  - {name: slow, cpu: 1, node: 2, workload: {pattern: chase, wss: 256M, mem_ratio: 0.3}}
  - {name: slowfar, cpu: 2, node: 2, workload: {pattern: chase, wss: 256M, mem_ratio: 0.3}}
  - {name: dramfar, cpu: 3, node: 0, workload: {pattern: chase, wss: 256M, mem_ratio: 0.3}}
Y
expect "chases on DRAM and slow nodes run" 0 "$QOSIM" run "$TMP/lat.yaml" --quiet --csv "$TMP/lat.csv"
for x in dram:160 slow:500 slowfar:620 dramfar:280; do
    t=${x%:*} want=${x#*:}
    cyc=$(sum "$TMP/lat.csv" "$t" cycles) ins=$(sum "$TMP/lat.csv" "$t" instructions)
    mis=$(sum "$TMP/lat.csv" "$t" l3_misses)
    got=$(calc "($cyc - 0.5 * $ins) / $mis - 40")
    claim "$t: a miss waits for memory $got cycles, the node's $want within 2%" near "$got" "$want" 0.02
done

# ---- bandwidth: streams from the slow node, and non-temporal stores ---------
# Two streams of node 0's CPUs from slow node 2 ask about twice its 4 GB/s
# and get it together; one of node 1's CPUs from DRAM gets far more than
# either (it waits 100 ns a line rather than 145 and a queue). Then a
# non-temporal store stream into slow node 3 writes at its peak and reads
# nothing (its code stays in L1I after the first fetches).
cat >"$TMP/bw.yaml" <<'Y'
platform: slow.yaml
seed: 3
duration: 3ms
interval: 500us
tasks:
  - {name: s1, cpu: 0, node: 2, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: s2, cpu: 1, node: 2, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: d1, cpu: 2, node: 1, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 0}}
  - {name: nt, cpu: 3, node: 3, workload: {pattern: seq, wss: 256M, mem_ratio: 0.5, write_ratio: 1, nt_ratio: 1}}
Y
expect "streams on a slow node run" 0 "$QOSIM" run "$TMP/bw.yaml" --quiet --csv "$TMP/bw.csv"
rd() { calc "$(sum "$TMP/bw.csv" "$1" mem_read_bytes) / 0.002 / 1e9"; }
wr() { calc "$(sum "$TMP/bw.csv" "$1" mem_write_bytes) / 0.002 / 1e9"; }
slow=$(calc "$(rd s1) + $(rd s2)")
claim "two streams read the slow node at its peak ($slow GB/s, 4 within 5%)" near "$slow" 4 0.05
claim "a DRAM stream reads far more ($(rd d1) GB/s >= 2 x $(rd s1))" ge "$(rd d1)" "$(rd s1)" 2
claim "non-temporal stores write the slow node at its peak ($(wr nt) GB/s, 4 within 5%)" \
    near "$(wr nt)" 4 0.05
claim "non-temporal stores read nothing ($(rd nt) GB/s)" ge 0.001 "$(rd nt)" 1
# The table shows the same.
expect "the table" 0 "$QOSIM" run "$TMP/bw.yaml"
claim "the table: nt writes about 4 GB/s" near "$(col "$TMP/out" start nt 5)" 4 0.05

# ---- bad input -------------------------------------------------------------
bad() { # bad NAME WANT_MESSAGE BODY (stdin): qosim run refuses it, exit 2
    local name=$1 want=$2
    { cat; echo "platform: slow.yaml"; echo "duration: 100us"; } >"$TMP/bad.yaml"
    "$QOSIM" run "$TMP/bad.yaml" >"$TMP/out" 2>"$TMP/err"
    local rc=$? got
    got=$(head -1 "$TMP/err")
    if [ "$rc" -eq 2 ] && [ "$got" = "qosim run: $TMP/bad.yaml:$want" ] && [ ! -s "$TMP/out" ]; then
        ok "bad scenario: $name"
    else
        notok "bad scenario: $name" "exit $rc" "got:  $got" "want: qosim run: $TMP/bad.yaml:$want"
    fi
}
bad "nt_ratio above 1" "2: tasks[0].workload.nt_ratio: 1.5 is out of range (0..1)" <<'Y'
tasks:
  - {name: a, cpu: 0, workload: {pattern: seq, nt_ratio: 1.5}}
Y
bad "nt_ratio below 0" "2: tasks[0].workload.nt_ratio: -0.1 is out of range (0..1)" <<'Y'
tasks:
  - {name: a, cpu: 0, workload: {pattern: seq, nt_ratio: -0.1}}
Y
bad "nt_ratio not a number" "2: tasks[0].workload.nt_ratio: expected a number such as 0.5 or 2, got 'most'" <<'Y'
tasks:
  - {name: a, cpu: 0, workload: {pattern: seq, nt_ratio: most}}
Y
bad "a node past the slow ones" "2: tasks[0].node: 4 is out of range (0..3)" <<'Y'
tasks:
  - {name: a, cpu: 0, node: 4, workload: {pattern: seq}}
Y
sed -i '/slow:/d' "$TMP/slow.yaml"
bad "a slow node on a profile without them" "2: tasks[0].node: 2 is out of range (0..1)" <<'Y'
tasks:
  - {name: a, cpu: 0, node: 2, workload: {pattern: seq}}
Y
