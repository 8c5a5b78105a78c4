#!/bin/bash
# End-to-end tests of `qosim lwp` (docs/lwp.md): a workload profiled through
# AMD LWP on amd-lwp, the profile built only from the records the hardware
# stored. The workloads are lackey traces written here, so every count is
# known: a hot loop of five instructions at 0x401000 with one load that
# always misses, and every 100 iterations a ten-instruction excursion to
# 0x402000.
. "$(dirname "$0")/lib.sh"

awk 'BEGIN { for (i = 0; i < 200000; i++) {
        printf "I  00401000,4\n L %08x,8\n", 268435456 + (i * 64) % 16777216
        printf "I  00401004,4\nI  00401008,4\nI  0040100c,4\nI  00401010,4\n"
        if (i % 100 == 99) for (k = 0; k < 10; k++) printf "I  %08x,4\n", 4202496 + 4 * k } }' \
    >"$TMP/hot.lackey"
# 1,020,000 instructions; 202,000 branches (the loop's back edge, and the
# jumps to and from the excursion: lackey's taken branches, inferred);
# 200,000 loads that miss.
N=1020000 BR=202000 DCM=200000

# field LABEL: the number after "LABEL" on the records line of $TMP/out.
recs() { sed -n 's/^records: \([0-9]*\) stored and drained, \([0-9]*\) missed.*; \([0-9]*\) interrupts$/\1 \2 \3/p' "$TMP/out"; }

# ---- counts are exact: records + MissedEvents = occurrences / interval -------
expect "hot loop under LWP (threshold interrupt)" 0 "$QOSIM" lwp --trace "$TMP/hot.lackey" \
    --event ir:997 --event br:13 --event dcm:7 --threshold 32K --json "$TMP/p.json" --raw "$TMP/p.raw"
has "the head names the workload and its instructions" "$TMP/out" "hot.lackey on amd-lwp, task trace: $N instructions"
read -r stored missed irqs < <(recs)
same "records: instructions/997 + branches/13 + misses/7, none missed" \
    "$stored $missed" "$((N / 997 + BR / 13 + DCM / 7)) 0"
claim "the threshold interrupt drained the ring ($irqs interrupts)" ge "$irqs" 1 1
same "--raw holds the 32-byte records as stored" "$(stat -c %s "$TMP/p.raw")" "$((stored * 32))"
same "--raw: the first record is LWP version 1's (EventId 1, 2 or 3; CPU 0)" \
    "$(od -An -tu1 -N2 "$TMP/p.raw" | awk '{ print ($1 >= 1 && $1 <= 3) " " $2 }')" "1 0"
has "--json: the record count" "$TMP/p.json" "\"records\": $stored,"
has "--json: the hottest branch" "$TMP/p.json" '"ip": 4198416,'

# The sampled profile names the hot loop: its five instructions take nearly
# all samples (the excursion is 10 of every 510 instructions: 2%).
loop=$(awk '/^Hottest instructions/ { on = 1; next } on && /^$/ { exit }
    on && $3 ~ /^0x40100[0-9a-f]$|^0x401010$/ { s += $2 } END { print s + 0 }' "$TMP/out")
claim "the hottest instructions are the loop's five, $loop% of samples (>= 97%)" ge "$loop" 97 1
top5=$(awk '/^Hottest instructions/ { on = 1; getline; next } on && n < 5 { print $3; n++ }' "$TMP/out" | sort | tr '\n' ' ')
same "the five hottest addresses are the loop's" "$top5" "0x401000 0x401004 0x401008 0x40100c 0x401010 "
# Branches: the back edge is the hottest; gshare learns it (always taken).
read -r bs bpct btaken bmis bip < <(awk '/^Branches/ { getline; getline; print; exit }' "$TMP/out")
same "the hottest branch is the loop's back edge" "$bip" 0x401010
claim "the back edge is mispredicted in $bmis% of samples (< 1%)" ge 1 "$bmis" 1
same "every lackey branch is taken" "$btaken" 100.00
# DCache misses: every one from DRAM, at the memory's latency; and the one
# instruction that loads.
has "DCache misses all come from DRAM" "$TMP/out" "by source: DRAM $((DCM / 7)) \\(100.00%\\)"
has "the missing instruction is the loop's load" "$TMP/out" "^ +$((DCM / 7)) +100.00  0x401000$"

# ---- filters ------------------------------------------------------------------
lat=$(awk '/latency, cycles/ { getline; split($1, a, "-"); print a[1]; exit }' "$TMP/out")
claim "misses take $lat cycles, a multiple of 16" [ $((lat % 16)) -eq 0 ]
expect "MinLatency above the latency" 0 "$QOSIM" lwp --trace "$TMP/hot.lackey" --event "dcm:7,minlat=$((lat / 16 + 1))"
same "MinLatency: no miss qualifies" "$(recs)" "0 0 0"
expect "MinLatency at the latency" 0 "$QOSIM" lwp --trace "$TMP/hot.lackey" --event "dcm:7,minlat=$((lat / 16))"
same "MinLatency: every miss qualifies" "$(recs | cut -d' ' -f1-2)" "$((DCM / 7)) 0"
expect "CLF: only the L3" 0 "$QOSIM" lwp --trace "$TMP/hot.lackey" --event dcm:7,levels=nbc
same "CLF NBC: no miss was served by the L3" "$(recs)" "0 0 0"
expect "CLF: RAM" 0 "$QOSIM" lwp --trace "$TMP/hot.lackey" --event dcm:7,levels=ram+nbc
same "CLF RAM: all of them" "$(recs | cut -d' ' -f1-2)" "$((DCM / 7)) 0"

# ---- the ring: polling, and a ring too small -----------------------------------
expect "polled" 0 "$QOSIM" lwp --trace "$TMP/hot.lackey" --event ir:997 --buffer 4K
same "polled: every record, no interrupt" "$(recs)" "$((N / 997)) 0 0"
expect "a 4 KiB ring polled every 100 us while every instruction records" 0 \
    "$QOSIM" lwp --trace "$TMP/hot.lackey" --event ir:1 --buffer 4K
read -r stored missed irqs < <(recs)
same "records + MissedEvents = every instruction" "$((stored + missed))" "$N"
claim "the full ring counted MissedEvents ($missed)" ge "$missed" 1 1

# ---- context switches: each thread sees only its own --------------------------
awk 'BEGIN { for (i = 0; i < 100000; i++) { printf "I  00501000,4\n L %08x,8\n", 536870912 + (i * 64) % 1048576
        printf "I  00501004,4\nI  00501008,4\n" } }' >"$TMP/other.lackey"
cat >"$TMP/two.yaml" <<Y
platform: amd-lwp
duration: 3ms
slice: 100us
tasks:
  - {name: a, cpu: 0, workload: {trace: hot.lackey, loop: true}}
  - {name: b, cpu: 0, workload: {trace: other.lackey, loop: true}}
Y
for t in a b; do
    expect "two threads time-slice CPU 0: profiling $t" 0 "$QOSIM" lwp --scenario "$TMP/two.yaml" \
        --task $t --event ir:1000 --threshold 16K
    n=$(sed -n 's/.*task '$t': \([0-9]*\) instructions$/\1/p' "$TMP/out")
    read -r stored missed irqs < <(recs)
    same "$t: one record per 1000 of its own instructions ($n)" "$stored $missed" "$((n / 1000)) 0"
    want=$([ $t = a ] && echo 0x40 || echo 0x50)
    same "$t: every sampled address is $t's" \
        "$(awk '/^Hottest instructions/ { on = 1; getline; next } on && /^$/ { exit } on { print substr($3, 1, 4) }' "$TMP/out" | sort -u)" "$want"
done

# ---- bad input: a message, exit 2, no output file -------------------------------
bad() { # bad NAME MESSAGE-REGEX ARGS...
    local name=$1 msg=$2
    shift 2
    expect "refused: $name" 2 "$QOSIM" lwp "$@" --json "$TMP/bad.json" --raw "$TMP/bad.raw"
    has "message: $name" "$TMP/err" "$msg"
    claim "no output file: $name" [ ! -e "$TMP/bad.json" -a ! -e "$TMP/bad.raw" ]
}
T=(--trace "$TMP/hot.lackey")
bad "no event" 'give at least one --event' "${T[@]}"
bad "an interval of 0" "--event ir:0: the interval '0' is not 1 to 67108863" "${T[@]}" --event ir:0
bad "an interval too wide" "is not 1 to 67108863" "${T[@]}" --event br:67108864
bad "an unknown event" '--event tlb:5: expected ir:N, br:N or dcm:N' "${T[@]}" --event tlb:5
bad "an event twice" '--event ir:6: ir given twice' "${T[@]}" --event ir:5 --event ir:6
bad "MinLatency too large" "minlat '256' is not 0 to 255" "${T[@]}" --event dcm:5,minlat=256
bad "an unknown level" "level 'l2' is not nbc, rdc, ram or oth" "${T[@]}" --event dcm:5,levels=l2
bad "a setting of another event" "unknown setting 'ndb'" "${T[@]}" --event ir:5,ndb
bad "a ring of one record" '--buffer: 32 bytes hold fewer than two' "${T[@]}" --event ir:5 --buffer 32
# The smallest ring is the CPU's (CPUID 0x8000001C ECX[23:16], 2 x 32 records
# on amd-lwp): the library reads it and refuses a smaller ring, naming it,
# rather than leaving LLWPCB to turn LWP off with Flags 0.
"$QOSIM" lwp "${T[@]}" --event ir:5 --buffer 2016 >"$TMP/out" 2>"$TMP/err"
same "a ring one record under CPUID's minimum: exit 1, the minimum named" "$? $(cat "$TMP/err")" \
    "1 qosim lwp: LWP: a ring of 2016 bytes: this CPU takes at least 64 records (2048 bytes; CPUID 0x8000001C ECX[23:16] LwpMinBufferSize 2 x 32)"
bad "a threshold past the ring" "--threshold: must be below the ring's size" "${T[@]}" --event ir:5 --threshold 64K
bad "Random too wide" "--random: '16' is not 0 to 15" "${T[@]}" --event ir:5 --random 16
bad "a platform without LWP" 'amd-epyc has no LWP' "${T[@]}" --event ir:5 --platform amd-epyc
bad "trace and scenario" 'give one of --trace and --scenario' "${T[@]}" --scenario "$TMP/two.yaml" --event ir:5
bad "an unknown task" "no task called 'c'" --scenario "$TMP/two.yaml" --task c --event ir:5
bad "an unknown option" "unknown argument '--colour'" "${T[@]}" --event ir:5 --colour
printf 'platform: amd-lwp\nduration: 1ms\ntasks:\n  - {name: t, cpu: 0, workload: {pattern: seq}}\nphases:\n  - {at: 0.5ms, assoc: [{task: t, class: 0, tag: 0}]}\n' >"$TMP/phases.yaml"
bad "a scenario with phase settings" 'applies no qos section or phase settings' --scenario "$TMP/phases.yaml" --event ir:5
expect "a trace that is not there fails" 1 "$QOSIM" lwp --trace "$TMP/none.lackey" --event ir:5 --raw "$TMP/bad.raw"
claim "no output file: a missing trace" [ ! -e "$TMP/bad.raw" ]
