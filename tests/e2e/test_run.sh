#!/bin/bash
# End-to-end tests of `qosim run`: the noisy-neighbour demo's claims, output
# files, determinism, scheduling, and every kind of bad scenario.
. "$(dirname "$0")/lib.sh"
EX="$(cd "$(dirname "$0")/../.." && pwd)/examples"

# ipc TABLE PHASE TASK: a task's IPC in a phase of the printed table.
ipc() {
    awk -v ph="$2" -v t="$3" 'NF == 7 { cur = $1 } NF == 6 && cur == ph && $1 == t { print $2 }
        NF == 7 && $1 == ph && $2 == t { print $3 }' "$1"
}

# ---- the main job: isolation restores the victim -------------------------
expect "noisy-neighbour runs" 0 "$QOSIM" run "$EX/noisy-neighbour.yaml" --csv "$TMP/nn.csv" \
    --json "$TMP/nn.json" --plot "$TMP/nn.svg"
cp "$TMP/out" "$TMP/full"
expect "victim alone runs" 0 "$QOSIM" run "$EX/noisy-neighbour.yaml" --only victim
cp "$TMP/out" "$TMP/alone"
p1=$(ipc "$TMP/full" shared victim) p2=$(ipc "$TMP/full" partitioned victim)
p3=$(ipc "$TMP/full" limited victim) a3=$(ipc "$TMP/alone" limited victim)
if ge "$p2" "$p1" 1.5; then ok "partitioning: victim IPC $p2 >= 1.5 x $p1"; else
    notok "partitioning: victim IPC $p2 >= 1.5 x $p1"; fi
if near "$p3" "$a3" 0.10; then ok "partitioning + MBA: victim IPC $p3 within 10% of alone $a3"; else
    notok "partitioning + MBA: victim IPC $p3 within 10% of alone $a3"; fi
# intel-xeon's MBA delays each request leaving L2 (docs/mechanisms.md,
# "Bandwidth limiters": latency, not occupancy). Six streams saturating two
# channels wait in the memory's queue far longer than the delay, so the
# throttle barely moves their rate (measured IPC 0.245 -> 0.242) but never
# raises it; one stream alone, limited by its own misses in flight, is cut to
# less than half at MB 10% (delay 90; about 30% on real parts, issue 23;
# measured 1.072 -> 0.313).
s2=$(ipc "$TMP/full" partitioned stream1) s3=$(ipc "$TMP/full" limited stream1)
if ge "$s2" "$s3" 0.98; then ok "MBA throttle never speeds the aggressors up ($s2 -> $s3)"; else
    notok "MBA throttle never speeds the aggressors up ($s2 -> $s3)"; fi
# The lone aggressor on the demo at a fifth of its length (phases of 2 ms,
# 1 ms settling; the demo itself ran as shipped above): a stream alone is
# steady within a millisecond, and its IPCs are those of the whole demo
# (0.796 -> 0.259 at either length).
sed 's/^duration: 30ms/duration: 6ms/; s/^settle: 4ms/settle: 1ms/; s/at: 10ms/at: 2ms/; s/at: 20ms/at: 4ms/' \
    "$EX/noisy-neighbour.yaml" >"$TMP/nn-short.yaml"
expect "one aggressor alone runs" 0 "$QOSIM" run "$TMP/nn-short.yaml" --only stream1
cp "$TMP/out" "$TMP/one"
s2=$(ipc "$TMP/one" partitioned stream1) s3=$(ipc "$TMP/one" limited stream1)
if ge "$s2" "$s3" 2; then ok "MBA throttle slows a lone aggressor ($s2 -> $s3, < 1/2)"; else
    notok "MBA throttle slows a lone aggressor ($s2 -> $s3, < 1/2)"; fi
same "csv: one row per task per interval plus a header" "$(wc -l <"$TMP/nn.csv")" "841"
has "csv header" "$TMP/nn.csv" '^t0,t1,phase,task,instructions,cycles,ipc,'
has "json names the platform" "$TMP/nn.json" '"platform": "intel-xeon"'
same "json has 120 intervals" "$(grep -c '"t0"' "$TMP/nn.json")" "120"
has "plot is an SVG" "$TMP/nn.svg" '<svg'
has "plot names the victim" "$TMP/nn.svg" 'victim'

# ---- a small platform for quick runs ---------------------------------------
cat >"$TMP/tiny.yaml" <<'Y'
name: tiny
vendor: amd
topology: {sockets: 1, modules: 2, threads: 1}
core: {frequency: 1GHz, cpi: 1}
caches:
  L1I: {size: 4K, ways: 4, latency: 2}
  L1D: {size: 4K, ways: 4, latency: 2}
  L2: {size: 16K, ways: 4, latency: 10}
  L3: {size: 64K, ways: 8, latency: 30, monitored: true, allocation: {classes: 4, cbm_len: 8}}
memory: {channels: 1, peak: 10GB/s, latency: 50ns}
qos:
  monitoring: {ids: 4, occupancy: true, total: true}
  bandwidth: {kind: rate, classes: 4, max: 11, window: 1us}
Y
scen() { # scen FILE < BODY: a scenario on tiny.yaml; the body's line numbers stay as written
    cat >"$TMP/$1"
    echo "platform: tiny.yaml" >>"$TMP/$1"
    grep -q '^duration:' "$TMP/$1" || echo "duration: 200us" >>"$TMP/$1"
    echo "interval: 50us" >>"$TMP/$1"
}
scen ok.yaml <<'Y'
tasks:
  - {name: a, cpu: 0, class: 1, tag: 1, workload: {pattern: random, wss: 32K}}
  - {name: b, cpu: 1, class: 2, tag: 2, workload: {pattern: seq, wss: 1M}}
Y
expect "small scenario runs" 0 "$QOSIM" run "$TMP/ok.yaml" --csv "$TMP/a.csv" --quiet
expect "same seed, same result" 0 "$QOSIM" run "$TMP/ok.yaml" --csv "$TMP/b.csv" --quiet
if cmp -s "$TMP/a.csv" "$TMP/b.csv"; then ok "runs are deterministic"; else notok "runs are deterministic"; fi
expect "another seed runs" 0 "$QOSIM" run "$TMP/ok.yaml" --seed 2 --csv "$TMP/c.csv" --quiet
if ! cmp -s "$TMP/a.csv" "$TMP/c.csv"; then ok "the seed changes the run"; else notok "the seed changes the run"; fi
same "4 intervals x 2 tasks" "$(($(wc -l <"$TMP/a.csv") - 1))" "8"

# Per-phase occupancies are the mean of the values at the ends of the phase's
# intervals after its settling time (truncated to whole bytes). Phase two
# confines b to two ways, so occupancies move all through it; one set in ten
# is sampled, so the estimate differs from the exact count.
sed 's/occupancy: true, total: true/occupancy: true, total: true, sample: 0.1/' \
    "$TMP/tiny.yaml" >"$TMP/tiny-s.yaml"
cat >"$TMP/occ.yaml" <<'Y'
platform: tiny-s.yaml
duration: 400us
interval: 25us
settle: 50us
tasks:
  - {name: a, cpu: 0, class: 1, tag: 1, workload: {pattern: random, wss: 48K}}
  - {name: b, cpu: 1, class: 2, tag: 2, workload: {pattern: random, wss: 48K}}
phases:
  - {name: one, at: 0us}
  - {name: two, at: 200us, alloc: [{cache: L3, class: 2, mask: 0x3}]}
Y
expect "occupancy scenario runs" 0 "$QOSIM" run "$TMP/occ.yaml" --quiet --json "$TMP/occ.json"
# Prints, per phase and task, "PHASE TASK: LLC TAG EST" as the phase row has
# them, then "= LLC TAG EST" as the interval rows give them, how many rows
# that is and the last row's TAG (times compared in whole nanoseconds, so
# that 0.0002 + 0.00005 is 0.00025).
awk -F': ' '
    function ns(x) { return int(x * 1e9 + 0.5) }
    /^  "[a-z]+": \[/ { sec = $1; gsub(/[ "]/, "", sec) }
    { k = $1; gsub(/[ "]/, "", k); v = $2; gsub(/[",]/, "", v) }
    k == "settle" { settle = v }
    sec == "phases" && k == "name" { ph = v; order[++np] = v }
    sec == "phases" && k == "at" { at[ph] = v }
    sec == "intervals" && k == "phase" { ph = v }
    sec == "intervals" && k == "t1" { t1 = v }
    k == "task" { task = v; if (!(task in seen)) { seen[task] = 1; tasks[++nt] = task } }
    k == "llc_occupancy_bytes" { llc = v }
    k == "tag_occupancy_bytes" { tag = v }
    k == "tag_occupancy_estimate_bytes" {
        if (sec == "phases") got[ph, task] = llc " " tag " " v
        else if (ns(t1) > ns(at[ph]) + ns(settle)) {
            n[ph, task]++; sl[ph, task] += llc; st[ph, task] += tag; se[ph, task] += v
            last[ph, task] = tag
        }
    }
    END {
        for (i = 1; i <= np; i++)
            for (j = 1; j <= nt; j++) {
                x = order[i] SUBSEP tasks[j]
                printf "%s %s: %s = %d %d %d %d %d\n", order[i], tasks[j], got[x],
                    int(sl[x] / n[x]), int(st[x] / n[x]), int(se[x] / n[x]), n[x], last[x]
            }
    }' "$TMP/occ.json" >"$TMP/occ.txt"
same "per-phase rows: 2 phases x 2 tasks, each over 6 settled intervals" \
    "$(awk '{ print $10 }' "$TMP/occ.txt" | tr '\n' ' ')" "6 6 6 6 "
same "per-phase occupancies are the means of the settled intervals'" \
    "$(awk '{ print $3, $4, $5 }' "$TMP/occ.txt")" "$(awk '{ print $7, $8, $9 }' "$TMP/occ.txt")"
# The check above could pass on zeros or on a last sample: occupancy is there,
# moves in phase two, and is sampled.
claim "per-phase tag occupancy is not zero" awk '$4 == 0 || $5 == 0 { exit 1 }' "$TMP/occ.txt"
claim "phase two's mean is not its last sample" awk '$1 == "two" && $4 == $11 { exit 1 }' "$TMP/occ.txt"
claim "per-phase estimate is sampled (differs from exact somewhere)" \
    awk '$4 != $5 { d = 1 } END { exit !d }' "$TMP/occ.txt"

# Time slicing: two tasks pinned to one CPU share it.
scen slice.yaml <<'Y'
slice: 10us
tasks:
  - {name: a, cpu: 0, tag: 1, workload: {pattern: random, wss: 8K, mem_ratio: 0}}
  - {name: b, cpu: 0, tag: 2, workload: {pattern: random, wss: 8K, mem_ratio: 0}}
Y
expect "time-sliced scenario runs" 0 "$QOSIM" run "$TMP/slice.yaml" --csv "$TMP/s.csv" --quiet
cyc=$(awk -F, 'NR > 1 { c[$4] += $6 } END { print c["a"], c["b"] }' "$TMP/s.csv")
read -r ca cb <<<"$cyc"
if near "$ca" 100000 0.05 && near "$cb" 100000 0.05; then ok "slices split the CPU evenly ($ca, $cb cycles)"; else
    notok "slices split the CPU evenly ($ca, $cb cycles)"; fi
# Each switch loads the task's tag: both tags own their code lines (4 KiB each).
occ=$(awk -F, 'NR > 1 { o[$4] = $13 } END { print o["a"], o["b"] }' "$TMP/s.csv")
same "the switch loads each task's tag (bytes under tags 1 and 2)" "$occ" "4096 4096"

# A trace as a workload, looping.
scen trace.yaml <<Y
tasks:
  - {name: t, cpu: 0, workload: {trace: $DATA/small.lackey}}
Y
expect "a looping trace workload runs" 0 "$QOSIM" run "$TMP/trace.yaml" --csv "$TMP/t.csv" --quiet
ins=$(awk -F, 'NR > 1 { n += $5 } END { print n }' "$TMP/t.csv")
if [ "${ins:-0}" -gt 1000 ]; then ok "the trace looped ($ins instructions)"; else notok "the trace looped ($ins)"; fi
scen trace1.yaml <<Y
tasks:
  - {name: t, cpu: 0, workload: {trace: $DATA/small.lackey, loop: false}}
Y
expect "a non-looping trace ends" 0 "$QOSIM" run "$TMP/trace1.yaml" --csv "$TMP/t1.csv" --quiet
same "it ran its 4 instructions" "$(awk -F, 'NR > 1 { n += $5 } END { print n }' "$TMP/t1.csv")" "4"

# ---- bad input: FILE:LINE: key: what; exit 2; no output file --------------
bad() { # bad NAME WANT_MESSAGE BODY (stdin)
    local name=$1 want=$2
    scen bad.yaml
    rm -f "$TMP/o.json"
    "$QOSIM" run "$TMP/bad.yaml" --json "$TMP/o.json" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    local got
    got=$(head -1 "$TMP/err")
    if [ "$rc" -eq 2 ] && [ "$got" = "qosim run: $TMP/bad.yaml:$want" ] && [ ! -e "$TMP/o.json" ] &&
        [ ! -s "$TMP/out" ]; then ok "bad scenario: $name"; else
        notok "bad scenario: $name" "exit $rc" "got:  $got" "want: qosim run: $TMP/bad.yaml:$want"; fi
}
T='{name: a, cpu: 0, workload: {pattern: seq}}'
bad "unknown key" "4: tasks[0].colour: unknown key" <<Y
tasks:
  - name: a
    cpu: 0
    colour: red
    workload: {pattern: seq}
Y
# A misspelt key is named, with the key it was likely meant to be, even
# when that key is required (it used to be reported missing), at any depth.
bad "misspelt required key in a task" "3: tasks[0].worklaod: unknown key (did you mean 'workload'?)" <<'Y'
tasks:
  - {name: a, cpu: 0,
     worklaod: {pattern: seq}}
Y
bad "misspelt required key of a workload" "4: tasks[0].workload.patern: unknown key (did you mean 'pattern'?)" <<'Y'
tasks:
  - name: a
    cpu: 0
    workload: {patern: seq}
Y
bad "misspelt key of a phase" "5: phases[0].ta: unknown key (did you mean 'at'?)" <<Y
tasks:
  - $T
phases:
  - name: p
    ta: 0us
Y
bad "misspelt key of an alloc item" "8: phases[0].alloc[0].msak: unknown key (did you mean 'mask'?)" <<Y
tasks:
  - $T
phases:
  - at: 0us
    alloc:
      - cache: L3
        class: 1
        msak: 0x3
Y
bad "cpu out of range" "4: tasks[0].cpu: 2 is out of range (0..1)" <<'Y'
tasks:
  - name: a
    workload: {pattern: seq}
    cpu: 2
Y
bad "class out of range" "4: tasks[0].class: 4 is out of range (0..3)" <<'Y'
tasks:
  - name: a
    cpu: 0
    class: 4
    workload: {pattern: seq}
Y
bad "missing workload" "2: tasks[0]: workload: missing" <<'Y'
tasks:
  - name: a
    cpu: 0
Y
bad "unknown pattern" "5: tasks[0].workload.pattern: expected one of seq, stride, random, chase, zipf, got 'walk'" <<'Y'
tasks:
  - name: a
    cpu: 0
    workload:
      pattern: walk
Y
bad "duplicate task name" "3: tasks[1].name: a task called 'a' already exists" <<Y
tasks:
  - $T
  - name: a
    cpu: 1
    workload: {pattern: seq}
Y
bad "bad duration" "1: duration: expected a time such as 80ns or 1.5us, got '200'" <<Y
duration: 200
tasks:
  - $T
Y
bad "mask too wide" "8: phases[0].alloc[0].mask: 0x100 is out of range (0..255)" <<Y
tasks:
  - $T
phases:
  - at: 0us
    alloc:
      - cache: L3
        class: 1
        mask: 0x100
Y
bad "no allocation on L2" "6: phases[0].alloc[0].cache: L2 of tiny has no allocation control" <<Y
tasks:
  - $T
phases:
  - at: 0us
    alloc:
      - {cache: L2, class: 1, mask: 1}
Y
bad "wrong limiter kind" "6: phases[0].bandwidth[0].delay: tiny limits bandwidth by rate, not by delay" <<Y
tasks:
  - $T
phases:
  - at: 0us
    bandwidth:
      - {class: 1, rate: 1GB/s, delay: 10}
Y
bad "phases out of order" "7: phases[1].at: phases must start in increasing order" <<Y
tasks:
  - $T
phases:
  - name: one
    at: 100us
  - name: two
    at: 50us
Y
bad "phase after the end" "5: phases[0].at: starts at or after the end of the run" <<Y
tasks:
  - $T
phases:
  - name: late
    at: 1ms
Y
bad "assoc of an unknown task" "6: phases[0].assoc[0].task: no task called 'zz'" <<Y
tasks:
  - $T
phases:
  - at: 0us
    assoc:
      - {task: zz, class: 1}
Y
# A phase's masks follow the vendor's rules as the qos section's do: Intel
# takes non-empty contiguous masks (unless the profile says sparse), AMD any
# mask, CBQRI any but the empty one.
direct() { # direct FILE PLATFORM MASK: a scenario setting MASK on L3 at 0
    printf 'platform: %s\nduration: 20us\ntasks:\n  - {name: a, cpu: 0, workload: {pattern: seq}}\nphases:\n  - at: 0us\n    alloc:\n      - {cache: L3, class: 1, mask: %s}\n' \
        "$2" "$3" >"$TMP/$1"
}
direct_bad() { # direct_bad NAME PLATFORM MASK WANT-MESSAGE
    direct dm.yaml "$2" "$3"
    rm -f "$TMP/dm.json"
    "$QOSIM" run "$TMP/dm.yaml" --quiet --json "$TMP/dm.json" >"$TMP/out" 2>"$TMP/err"
    local rc=$? got
    got=$(cat "$TMP/err")
    if [ "$rc" -eq 2 ] && [ "$got" = "qosim run: $TMP/dm.yaml:8: phases[0].alloc[0].mask: $4" ] &&
        [ ! -e "$TMP/dm.json" ]; then ok "direct mask refused: $1"; else
        notok "direct mask refused: $1" "exit $rc" "got:  $got" \
            "want: qosim run: $TMP/dm.yaml:8: phases[0].alloc[0].mask: $4"; fi
}
direct_bad "Intel, non-contiguous" intel-xeon 0x0f1 \
    "0xf1: L3 of intel-xeon takes only non-zero masks whose bits are contiguous"
direct_bad "Intel, empty" intel-xeon 0 \
    "0x0: L3 of intel-xeon takes only non-zero masks whose bits are contiguous"
direct_bad "CBQRI, empty" riscv-soc 0 \
    "0x0: L3 of riscv-soc takes only non-zero masks (a CBQRI capacity allocation needs at least one block)"
direct dm.yaml amd-epyc 0x0f1
expect "direct mask accepted: AMD, non-contiguous" 0 "$QOSIM" run "$TMP/dm.yaml" --quiet
direct dm.yaml amd-epyc 0
expect "direct mask accepted: AMD, empty" 0 "$QOSIM" run "$TMP/dm.yaml" --quiet
direct dm.yaml riscv-soc 0x0f1
expect "direct mask accepted: CBQRI, non-contiguous" 0 "$QOSIM" run "$TMP/dm.yaml" --quiet
direct dm.yaml intel-xeon 0x0f0
expect "direct mask accepted: Intel, contiguous" 0 "$QOSIM" run "$TMP/dm.yaml" --quiet
"$QOSIM" profiles show intel-xeon | sed 's/cdp: true, shareable: 0x600/cdp: true, shareable: 0x600, sparse: true/' \
    >"$TMP/xeon-sparse.yaml"
direct dm.yaml xeon-sparse.yaml 0x0f1
expect "direct mask accepted: Intel with sparse masks (CPUID.10H ECX[3])" 0 "$QOSIM" run "$TMP/dm.yaml" --quiet

# The issue's case: a scenario without duration but with durration.
printf 'tasks:\n  - {name: a, cpu: 0, workload: {pattern: seq}}\ndurration: 1ms\nplatform: tiny.yaml\n' \
    >"$TMP/dur.yaml"
expect "misspelt duration: exit 2" 2 "$QOSIM" run "$TMP/dur.yaml"
same "misspelt duration: named, with duration suggested" "$(cat "$TMP/err")" \
    "qosim run: $TMP/dur.yaml:3: durration: unknown key (did you mean 'duration'?)"

scen bad.yaml <<Y
tasks:
  - $T
Y
sed -i 's/^platform: tiny.yaml/platform: tiny2/' "$TMP/bad.yaml"
"$QOSIM" run "$TMP/bad.yaml" >/dev/null 2>"$TMP/err"
same "unknown shipped profile named" "$(cut -d: -f2- "$TMP/err" | cut -c2- | head -1)" \
    "$TMP/bad.yaml:3: platform: no platform profile called 'tiny2' (shipped: $("$QOSIM" profiles | awk '{printf "%s%s", s, $1; s = ", "}'))"
expect "a missing scenario file" 2 "$QOSIM" run "$TMP/nope.yaml"
has "names the missing file" "$TMP/err" "nope.yaml"

# Usage errors.
expect "no scenario" 2 "$QOSIM" run
expect "unknown option" 2 "$QOSIM" run "$TMP/ok.yaml" --frobnicate
expect "bad plot suffix" 2 "$QOSIM" run "$TMP/ok.yaml" --plot "$TMP/x.pdf"
expect "bad seed" 2 "$QOSIM" run "$TMP/ok.yaml" --seed -1
expect "--only an unknown task" 2 "$QOSIM" run "$TMP/ok.yaml" --only zz
has "names the task" "$TMP/err" "no task called 'zz'"

# A failing plotter leaves no file behind, and no temporary either.
QOSIM_GNUPLOT=false "$QOSIM" run "$TMP/ok.yaml" --quiet --plot "$TMP/p.svg" 2>"$TMP/err"
rc=$?
left=$(ls "$TMP" | grep -c '^p\.svg')
if [ "$rc" -eq 1 ] && [ "$left" -eq 0 ]; then ok "failed plot leaves nothing"; else
    notok "failed plot leaves nothing" "exit $rc, files: $(ls "$TMP" | grep '^p\.svg')"; fi
# An unwritable output is an error, and the run says so.
expect "unwritable json" 1 "$QOSIM" run "$TMP/ok.yaml" --quiet --json /nonexistent/dir/x.json
has "names the output" "$TMP/err" "/nonexistent/dir/x.json"

# ---- the limiters, measured on whole runs ----------------------------------
# One core streaming reads (a miss per instruction, 16 in flight) asks about
# 12 GB/s of a 10 GB/s node.
lim_profile() { # lim_profile FILE QOS-LINES [VENDOR]
    cat >"$TMP/$1" <<Y
name: lim
vendor: ${3:-amd}
topology: {sockets: 1, modules: 2, threads: 1}
core: {frequency: 1GHz, cpi: 1, mlp: 16, link: 8}
caches:
  L1I: {size: 4K, ways: 4, latency: 2}
  L1D: {size: 4K, ways: 4, latency: 2}
  L2: {size: 16K, ways: 4, latency: 10}
  L3: {size: 64K, ways: 8, latency: 30}
memory: {channels: 2, peak: 10GB/s, latency: 50ns}
qos:
  $2
Y
}
lim_scen() { # lim_scen FILE PROFILE PHASE-SETTINGS [TASKS]
    cat >"$TMP/$1" <<Y
platform: $2
duration: 1ms
interval: 100us
settle: 100us
tasks:
  - {name: a, cpu: 0, class: 1, workload: {pattern: seq, wss: 256M, access: 64, mem_ratio: 1, write_ratio: 0}}
${4:-}
phases:
  - name: p
    at: 0ms
    bandwidth:
$3
Y
}
# rdbw TABLE TASK: read GB/s of a task in the one phase.
rdbw() { awk -v t="$2" 'NF == 7 && $2 == t { print $6 } NF == 6 && $1 == t { print $5 }' "$1"; }

lim_profile rate.yaml "bandwidth: {kind: rate, classes: 4, max: 11, window: 1us}"
lim_scen cap.yaml rate.yaml "      - {class: 1, rate: 2GB/s}"
expect "rate cap: run" 0 "$QOSIM" run "$TMP/cap.yaml"
bw=$(rdbw "$TMP/out" a)
if near "$bw" 2 0.05; then ok "rate cap holds over 900 windows: $bw GB/s of 2"; else
    notok "rate cap holds over 900 windows: $bw GB/s of 2"; fi
lim_scen nocap.yaml rate.yaml "      - {class: 1, rate: 0GB/s}"
lim_scen highcap.yaml rate.yaml "      - {class: 1, rate: 50GB/s}"
"$QOSIM" run "$TMP/nocap.yaml" --quiet --csv "$TMP/nocap.csv"
"$QOSIM" run "$TMP/highcap.yaml" --quiet --csv "$TMP/highcap.csv"
if cmp -s "$TMP/nocap.csv" "$TMP/highcap.csv"; then ok "a cap above demand changes nothing"; else
    notok "a cap above demand changes nothing"; fi

lim_profile share.yaml "bandwidth: {kind: share, classes: 4, blocks: 100, window: 1us}
  monitoring: {ids: 4}
  cbqri:
    bandwidth: [{at: memory, base: 0x4000000, rcids: 4, mcids: 4, blocks: 100}]" riscv
lim_scen share2.yaml share.yaml "      - {class: 1, reserve: 20%, weight: 1}
      - {class: 2, reserve: 30%, weight: 3}" \
    "  - {name: b, cpu: 1, class: 2, workload: {pattern: seq, wss: 256M, access: 64, mem_ratio: 1, write_ratio: 0}}"
expect "share: run" 0 "$QOSIM" run "$TMP/share2.yaml"
a=$(rdbw "$TMP/out" a) b=$(rdbw "$TMP/out" b)
# Reservations 2 and 3 GB/s; the spare 5 split 1:3: 3.25 and 6.75 GB/s.
if near "$a" 3.25 0.05 && near "$b" 6.75 0.05; then ok "share: reservations plus spare by weight ($a, $b GB/s)"; else
    notok "share: reservations plus spare by weight ($a, $b GB/s; want 3.25, 6.75)"; fi
expect "share: lone class runs" 0 "$QOSIM" run "$TMP/share2.yaml" --only a
a=$(rdbw "$TMP/out" a)
if ge "$a" 10 0.95; then ok "share: a lone class uses the whole node ($a GB/s)"; else
    notok "share: a lone class uses the whole node ($a GB/s)"; fi

lim_profile delay.yaml "bandwidth: {kind: delay, classes: 4, max: 90, granularity: 10}"
prev=""
mono=1
vals=""
for d in 0 30 60 90; do
    lim_scen d$d.yaml delay.yaml "      - {class: 1, delay: $d}"
    "$QOSIM" run "$TMP/d$d.yaml" >"$TMP/dout"
    v=$(rdbw "$TMP/dout" a)
    vals="$vals $v"
    if [ -n "$prev" ] && ! ge "$prev" "$v" 1.05; then mono=0; fi
    prev=$v
done
if [ "$mono" -eq 1 ]; then ok "delay throttle: bandwidth falls as the delay grows ($vals GB/s)"; else
    notok "delay throttle: bandwidth falls as the delay grows ($vals GB/s)"; fi
# At 30% the link's 8 GB/s becomes 5.6.
if near "$(echo "$vals" | awk '{ print $2 }')" 5.6 0.05; then ok "delay 30% leaves 70% of the link"; else
    notok "delay 30% leaves 70% of the link ($vals)"; fi

# A trace workload that is not there is the scenario's error, with its line.
cat >"$TMP/notrace.yaml" <<Y
platform: $TMP/tiny.yaml
duration: 100us
tasks:
  - name: t
    cpu: 0
    workload: {trace: $TMP/missing.lackey}
Y
expect "missing trace: exit 2" 2 "$QOSIM" run "$TMP/notrace.yaml"
has "missing trace: file, line and key" "$TMP/err" "notrace.yaml:6: tasks\[0\].workload.trace: $TMP/missing.lackey: cannot open"

# ---- hardware prefetchers: counted per task, switched off by a phase --------
cat >"$TMP/pf.yaml" <<'Y'
name: tinypf
vendor: intel
topology: {sockets: 1, modules: 2, threads: 1}
core:
  frequency: 1GHz
  cpi: 1
  prefetch: {l2_stream: true, l2_adjacent: true, l1_next_line: true, l1_ip_stride: true}
caches:
  L1I: {size: 4K, ways: 4, latency: 2}
  L1D: {size: 4K, ways: 4, latency: 2}
  L2: {size: 16K, ways: 4, latency: 10}
  L3: {size: 64K, ways: 8, latency: 30}
memory: {channels: 1, peak: 10GB/s, latency: 50ns}
Y
cat >"$TMP/pfs.yaml" <<Y
platform: $TMP/pf.yaml
duration: 200us
interval: 50us
tasks:
  - {name: a, cpu: 0, workload: {pattern: seq, wss: 1M}}
  - {name: b, cpu: 1, workload: {pattern: random, wss: 1M}}
phases:
  - {name: on, at: 0us}
  - name: off
    at: 100us
    prefetch:
      - {task: a, on: false}
      - {task: b, on: [l2_adjacent]}
Y
expect "prefetch scenario runs" 0 "$QOSIM" run "$TMP/pfs.yaml" --json "$TMP/pf.json"
pfv() { # pfv PHASE TASK FIELD: a phase row's prefetch count
    python3 -c "import json,sys; d=json.load(open(sys.argv[1]))
print([t for p in d['phases'] if p['name']==sys.argv[2] for t in p['tasks'] if t['task']==sys.argv[3]][0]['prefetch'][sys.argv[4]])" "$TMP/pf.json" "$1" "$2" "$3"
}
r_on=$(pfv on a requests) r_off=$(pfv off a requests) u_on=$(pfv on a useful)
if [ "$r_on" -gt 1000 ] && [ "$r_off" -eq 0 ]; then ok "phase turns task a's prefetchers off ($r_on -> $r_off requests)"; else
    notok "phase turns task a's prefetchers off ($r_on -> $r_off requests)"; fi
if ge "$u_on" "$r_on" 0.9; then ok "a stream uses its prefetches ($u_on of $r_on)"; else
    notok "a stream uses its prefetches ($u_on of $r_on)"; fi
b_off=$(pfv off b requests)
if [ "$b_off" -gt 0 ]; then ok "adjacent-line prefetcher left on for b ($b_off requests)"; else
    notok "adjacent-line prefetcher left on for b ($b_off requests)"; fi
pa=$(ipc "$TMP/out" on a) pb=$(ipc "$TMP/out" off a)
if ge "$pa" "$pb" 2; then ok "stream IPC with prefetchers $pa >= 2 x without $pb"; else
    notok "stream IPC with prefetchers $pa >= 2 x without $pb"; fi
sed 's/on: \[l2_adjacent\]/on: [l2_streamer]/' "$TMP/pfs.yaml" >"$TMP/pfbad.yaml"
expect "unknown prefetcher: exit 2" 2 "$QOSIM" run "$TMP/pfbad.yaml"
has "unknown prefetcher: file, line and key" "$TMP/err" "pfbad.yaml:13: phases\[1\].prefetch\[1\].on\[0\]: unknown prefetcher"
sed "s|platform: .*|platform: $TMP/tiny.yaml|" "$TMP/pfs.yaml" >"$TMP/pfnone.yaml"
expect "prefetch on a platform without: exit 2" 2 "$QOSIM" run "$TMP/pfnone.yaml"
has "prefetch on a platform without: says so" "$TMP/err" "pfnone.yaml:12: phases\[1\]\.prefetch\[0\]: platform tiny has no hardware prefetchers"
# Beside a qos section the phase's setting also goes through the driver, as
# a write of MSR 0x1A4 (drv/pfctl.c): the run is the same either way.
sed "s|^platform: intel-xeon|platform: $EX/regs/xeon-prefetch.yaml|; s|^duration: 30ms|duration: 3ms|; s|^settle: 4ms|settle: 100us|; s|at: 10ms|at: 1ms|; s|at: 20ms|at: 2ms|" \
    "$EX/rdt-noisy-neighbour.yaml" >"$TMP/pfqos.yaml"
printf '  - name: nopf\n    at: 2500us\n    prefetch:\n      - {task: victim, on: false}\n' >>"$TMP/pfqos.yaml"
expect "prefetch phase beside a qos section runs" 0 "$QOSIM" run "$TMP/pfqos.yaml" --json "$TMP/pf.json"
v_on=$(pfv limited victim requests) v_off=$(pfv nopf victim requests)
if [ "$v_on" -gt 0 ] && [ "$v_off" -eq 0 ]; then ok "qos run: victim's prefetchers off in nopf ($v_on -> $v_off)"; else
    notok "qos run: victim's prefetchers off in nopf ($v_on -> $v_off)"; fi
