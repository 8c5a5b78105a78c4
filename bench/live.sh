#!/bin/bash
# Real programs through QEMU: how fast `qosim trace record --engine qemu`
# captures them (against the lackey engine), how fast a live program
# simulates (against its own recording replayed), the whole of "record and
# simulate" against cachegrind, and the ChampSim reader against main's
# 64c3a19 one. Every figure is printed with the command that made it.
#
#   bench/live.sh                # needs build/qosim and its plugin (make),
#                                # qemu-user, valgrind, git; perf optional
#   RUNS=5 LACKEY_CAP=0 OLD=/path/to/old/qosim bench/live.sh
#
# RUNS       runs of each short command (median wall time; default 5)
# BIG_RUNS   runs of each long one (default 3)
# LACKEY_CAP lackey records of the large programs (default 50000000; 0: the
#            whole run, about 15 minutes for gzip on 3 MB alone)
# OLD        a qosim binary with the old ChampSim reader; by default main's
#            commit 64c3a19 is built (git archive) into $QOSIM_BENCH_DIR
#
# Times are wall-clock seconds from bash's `time` (user and system time, of
# qosim and every process it waited for, QEMU included, are in the logs).
# Prints Markdown for docs/performance.md; exits 1 if a check fails (a
# live run and its replay simulating different instructions, old and new
# readers disagreeing), not when a target is missed.
# shellcheck disable=SC2016 # the backquotes in printf formats are Markdown
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
case $Q in /*) ;; *) Q=$PWD/$Q ;; esac
RUNS=${RUNS:-5}
BIG_RUNS=${BIG_RUNS:-3}
LACKEY_CAP=${LACKEY_CAP:-50000000}
CACHE=${QOSIM_BENCH_DIR:-/tmp/qosim-bench}
OLD_COMMIT=64c3a19
W=$(mktemp -d "${TMPDIR:-/tmp}/qosim-live.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
for t in qemu-x86_64 valgrind git; do
    command -v $t >/dev/null || { echo "bench: $t missing (scripts/install-deps)" >&2; exit 1; }
done
if [ ! -x "$Q" ] || [ ! -f "$(dirname "$Q")/qemu/qosim-plugin.so" ]; then
    echo "bench: $Q or its plugin missing: run make first" >&2
    exit 1
fi

# The inputs: the text of bench/cachesim.sh, at three sizes.
text() { awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "%d %x %o\n", (i * 7919) % 100003, i, i }'; }
text 4200 >in62k.txt     # 61,894 bytes
text 165000 >in3m.txt    # 3,009,339 bytes
text 220000 >in4m.txt    # 4,048,229 bytes
GZIP=(gzip -6 -c in62k.txt)
GZIP3=(gzip -6 -c in3m.txt)
SORT4=(sort -S 64M --parallel=1 in4m.txt)
# shellcheck disable=SC2054 # the commas are the options' own
GEOM=(--I1=32768,8,64 --D1=32768,8,64 --LL=8388608,16,64)

# Every program, recorded or live or under cachegrind, runs in the same
# conditions, so that the same instructions run at the same addresses:
# descriptors 0-2 only, one directory, one environment (PWD included: a
# scenario's live program gets it set to the scenario's directory).
fixed() {
    (
        for f in "/proc/$BASHPID/fd/"*; do
            fd=${f##*/}
            [ "$fd" -gt 2 ] && [ -e "$f" ] && exec {fd}>&-
        done
        exec env -i PATH=/usr/bin:/bin LC_ALL=C TZ=UTC PWD="$W" "$@" </dev/null >/dev/null
    )
}

# tm LABEL CMD...: one timed run of CMD in fixed conditions; appends
# "real user sys" to LABEL.t, keeps its standard error in LABEL.err.
tm() {
    local label=$1
    shift
    local TIMEFORMAT='%R %U %S'
    { time fixed "$@" 2>"$label.err"; } 2>>"$label.t" ||
        { echo "bench: failed: $*" >&2; cat "$label.err" >&2; exit 1; }
}
# med LABEL [FIELD]: the median of a field of LABEL.t (1 real, 2 user,
# 3 sys, 4 user + sys).
med() {
    awk -v f="${2:-1}" '{ $4 = $2 + $3; print $f }' "$1.t" | sort -g |
        awk '{ a[NR] = $1 } END { printf "%.3f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# yl WORDS...: a YAML flow list of the words.
yl() {
    local s
    printf -v s '%s, ' "$@"
    echo "[${s%, }]"
}
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# The record count `qosim trace record` printed (either engine).
records() { sed -n 's/^qosim trace: recorded .*: \([0-9]*\) records.*/\1/p' "$1.err"; }
insns() { sed -n 's/^qosim trace: recorded .* records, \([0-9]*\) instructions.*/\1/p' "$1.err"; }
verdict() { awk "BEGIN { exit !($1) }" && echo "met" || echo "**not met**"; }
fail=0
# The machine may be shared: the load average is printed with each part.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
host="$(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"

echo "bench: 1/4 capture speed (lackey takes a few minutes)..." >&2
load1=$(loadavg)
rm -f ./*.t
tm lk62 "$Q" trace record -o g.lackey -- "${GZIP[@]}"
for _ in $(seq "$RUNS"); do
    tm q62 "$Q" trace record --engine qemu -o g.qtr -- "${GZIP[@]}"
done
# A GiB each: fewer runs, and the disk given time to take them.
for _ in $(seq "$BIG_RUNS"); do
    rm -f g.champsim
    sync
    tm c62 "$Q" trace record --engine qemu -o g.champsim -- "${GZIP[@]}"
done
rm -f g.champsim.xz
tm x62 "$Q" trace record --engine qemu -o g.champsim.xz -- "${GZIP[@]}"
for _ in $(seq "$BIG_RUNS"); do
    tm qg3 "$Q" trace record --engine qemu -o g3.qtr -- "${GZIP3[@]}"
    tm qs4 "$Q" trace record --engine qemu -o s4.qtr -- "${SORT4[@]}"
done
cap=() capnote="whole run"
if [ "$LACKEY_CAP" != 0 ]; then
    cap=(--max-records "$LACKEY_CAP")
    capnote="first $LACKEY_CAP records"
    # The same prefix under QEMU, for a like-for-like ratio.
    for _ in $(seq "$RUNS"); do
        tm qg3c "$Q" trace record --engine qemu "${cap[@]}" -o g3c.qtr -- "${GZIP3[@]}"
        tm qs4c "$Q" trace record --engine qemu "${cap[@]}" -o s4c.qtr -- "${SORT4[@]}"
    done
fi
tm lg3 "$Q" trace record "${cap[@]}" -o g3.lackey -- "${GZIP3[@]}"
rm -f g3.lackey
tm ls4 "$Q" trace record "${cap[@]}" -o s4.lackey -- "${SORT4[@]}"
rm -f s4.lackey

rate() { calc "%.2f" "$(records "$1") / $(med "$1" "${2:-1}") / 1e6"; }
row() { # LABEL WHAT FILE COMMAND
    local size
    size=$(stat -c %s "$3")
    printf '| %s | `%s` | %s | %s | %s | %s | %s | %s |\n' "$2" "$4" "$(calc "%.2f" "$(records "$1") / 1e6")" \
        "$(med "$1")" "$(med "$1" 4)" "$(rate "$1")" "$(calc "%.1f" "$size / 1048576")" \
        "$(calc "%.2f" "$size / $(insns "$1")")"
}
echo "### Capture: \`qosim trace record\`"
echo
echo "Load average (1, 5, 15 min) when this part started: $load1; when it ended: $(loadavg)."
echo
echo "| program | command | M records | median wall s | CPU s | M records/s | MiB | bytes/instr. |"
echo "|---|---|---|---|---|---|---|---|"
printf '| gzip 62 KB, lackey (1 run) | `%s` | %s | %s | %s | %s | %s | %s |\n' "qosim trace record -o g.lackey -- ${GZIP[*]}" \
    "$(calc "%.2f" "$(records lk62) / 1e6")" "$(med lk62)" "$(med lk62 4)" "$(rate lk62)" \
    "$(calc "%.1f" "$(stat -c %s g.lackey) / 1048576")" \
    "$(calc "%.2f" "$(stat -c %s g.lackey) / $(grep -c '^I' g.lackey)")"
row q62 "gzip 62 KB, qemu, qtr" g.qtr "qosim trace record --engine qemu -o g.qtr -- ${GZIP[*]}"
row c62 "gzip 62 KB, qemu, ChampSim" g.champsim "qosim trace record --engine qemu -o g.champsim -- ${GZIP[*]}"
row x62 "gzip 62 KB, qemu, ChampSim .xz (1 run)" g.champsim.xz "qosim trace record --engine qemu -o g.champsim.xz -- ${GZIP[*]}"
row qg3 "gzip 3 MB, qemu, qtr" g3.qtr "qosim trace record --engine qemu -o g3.qtr -- ${GZIP3[*]}"
row qs4 "sort 4 MB, qemu, qtr" s4.qtr "qosim trace record --engine qemu -o s4.qtr -- ${SORT4[*]}"
lrow() { # LABEL WHAT COMMAND
    printf '| %s | `%s` | %s | %s | %s | %s | | |\n' "$2" "$3" "$(calc "%.2f" "$(records "$1") / 1e6")" \
        "$(med "$1")" "$(med "$1" 4)" "$(rate "$1")"
}
if [ "$LACKEY_CAP" != 0 ]; then
    lrow qg3c "gzip 3 MB, qemu, $capnote" "qosim trace record --engine qemu ${cap[*]} -o g3c.qtr -- ${GZIP3[*]}"
    lrow qs4c "sort 4 MB, qemu, $capnote" "qosim trace record --engine qemu ${cap[*]} -o s4c.qtr -- ${SORT4[*]}"
fi
lrow lg3 "gzip 3 MB, lackey, $capnote (1 run)" "qosim trace record ${cap[*]} -o g3.lackey -- ${GZIP3[*]}"
lrow ls4 "sort 4 MB, lackey, $capnote (1 run)" "qosim trace record ${cap[*]} -o s4.lackey -- ${SORT4[*]}"
echo
if [ "$LACKEY_CAP" != 0 ]; then rg=qg3c rs=qs4c; else rg=qg3 rs=qs4; fi
x() { calc "%.1f" "$(rate "$1" "${3:-1}") / $(rate "$2" "${3:-1}")"; } # the speed-up of $1 over $2
r62=$(x q62 lk62) rg3=$(x "$rg" lg3) rs4=$(x "$rs" ls4)
echo "qemu engine (qtr) vs lackey engine, records per wall second (target: at least 50x):"
echo "gzip 62 KB **${r62}x** ($(verdict "$r62 >= 50")); gzip 3 MB, $capnote, **${rg3}x** ($(verdict "$rg3 >= 50"));"
echo "sort 4 MB, $capnote, **${rs4}x** ($(verdict "$rs4 >= 50")). Per CPU second (both processes of each engine):"
echo "$(x q62 lk62 4)x, $(x "$rg" lg3 4)x and $(x "$rs" ls4 4)x. Against the lackey baseline of 0.52 M records/s: the qemu"
echo "engine's $(rate q62), $(rate qg3) and $(rate qs4) M records/s (62 KB, 3 MB, 4 MB, whole runs) are"
echo "$(calc "%.0f" "$(rate q62) / 0.52")x, $(calc "%.0f" "$(rate qg3) / 0.52")x and $(calc "%.0f" "$(rate qs4) / 0.52")x."
echo
echo "Runs: $RUNS (short) and $BIG_RUNS (ChampSim, and 3 MB and 4 MB under qemu); medians. CPU: user + system"
echo "time of qosim and the processes it waited for (QEMU or valgrind). Each program"
echo "in \`env -i PATH=/usr/bin:/bin LC_ALL=C TZ=UTC PWD=\$dir\`, stdin and stdout /dev/null."
echo
rm -f g.lackey g.champsim.xz s4.qtr g3c.qtr s4c.qtr # g.champsim: for part 4

echo "bench: 2/4 live vs replay..." >&2
load2=$(loadavg)
scen() { # NAME DURATION WORKLOAD
    cat >"$1.yaml" <<EOF
platform: intel-xeon
duration: $2
interval: 1ms
settle: 0ms
tasks:
  - name: t
    cpu: 0
    workload: $3
EOF
}
scen live62 5ms "{program: $(yl "${GZIP[@]}")}"
scen replay62 5ms "{trace: g.qtr, loop: false}"
scen live3 100ms "{program: $(yl "${GZIP3[@]}")}"
scen replay3 100ms "{trace: g3.qtr, loop: false}"
cat g.qtr g3.qtr >/dev/null
for _ in $(seq "$RUNS"); do
    tm live62 "$Q" run live62.yaml --quiet --csv "$W/live62.csv"
    tm replay62 "$Q" run replay62.yaml --quiet --csv "$W/replay62.csv"
done
for _ in $(seq "$BIG_RUNS"); do
    tm live3 "$Q" run live3.yaml --quiet --csv "$W/live3.csv"
    tm replay3 "$Q" run replay3.yaml --quiet --csv "$W/replay3.csv"
done
echo "### Live vs replay: \`qosim run\`, one task on intel-xeon"
echo
echo "Load average (1, 5, 15 min) when this part started: $load2; when it ended: $(loadavg)."
echo
echo "| workload | command | simulated instr. | median wall s | M instr./s | median CPU s | M instr./CPU s |"
echo "|---|---|---|---|---|---|---|"
lr() { # LIVE REPLAY WHAT DURATION
    local n same
    n=$(awk -F, 'NR > 1 { n += $5 } END { print n }' "$1.csv")
    if cmp -s "$1.csv" "$2.csv"; then same="identical"; else same="**DIFFERENT**"; fail=1; fi
    for x in "$1" "$2"; do
        printf '| %s | `qosim run %s.yaml` | %s | %s | %s | %s | %s |\n' \
            "$3, $([ "$x" = "$1" ] && echo "live, $4" || echo "replayed from qtr, CSV $same")" "$x" \
            "$(calc "%.1f M" "$n / 1e6")" "$(med "$x")" "$(calc "%.1f" "$n / $(med "$x") / 1e6")" \
            "$(med "$x" 4)" "$(calc "%.1f" "$n / $(med "$x" 4) / 1e6")"
    done
}
lr live62 replay62 "gzip 62 KB" "whole run (5 ms)"
lr live3 replay3 "gzip 3 MB" "first 100 ms"
echo
echo "Scenarios: \`platform: intel-xeon\`, one task on cpu 0, \`interval: 1ms\`, \`settle: 0ms\`,"
echo "\`workload: {program: $(yl "${GZIP[@]}")}\` (5 ms: the whole run) or"
echo "\`{program: $(yl "${GZIP3[@]}")}\` (100 ms: it is still running at the end), and the same"
echo "with \`workload: {trace: g.qtr, loop: false}\` / \`{trace: g3.qtr, loop: false}\`, recorded above;"
echo "$RUNS and $BIG_RUNS runs, interleaved. CPU: user + system time of qosim and, live, QEMU; a live run's"
echo "CPU time near its wall time means that its two processes had one core between them."
echo "Live as a share of replay, simulated instructions per host second (target: at least 80%):"
for p in "live62 replay62 gzip 62 KB" "live3 replay3 gzip 3 MB"; do
    # shellcheck disable=SC2086 # five words
    set -- $p
    wr=$(calc "%.0f" "100 * $(med "$2") / $(med "$1")") cr=$(calc "%.0f" "100 * $(med "$2" 4) / $(med "$1" 4)")
    echo "$3 $4 $5: **$wr%** of wall time ($(verdict "$wr >= 80")), $cr% of CPU time."
done
echo
if command -v perf >/dev/null; then
    # Where a live run's time goes: both processes, by symbol.
    fixed perf record -q -e cpu-clock -F 2999 -o "$W/live.perf" -- "$Q" run live3.yaml --quiet 2>/dev/null
    echo "Profile of one live run (\`perf record -e cpu-clock -F 2999 -- qosim run live3.yaml --quiet\`,"
    echo "\`perf report --no-children --sort comm\`, then \`comm,dso\`, then \`comm,dso,symbol\`), what is above 1% of all samples:"
    echo
    echo '```'
    for k in comm comm,dso comm,dso,symbol; do
        perf report -i "$W/live.perf" --stdio --no-children --sort $k 2>/dev/null |
            awk '/%/ && $1 + 0 >= 1' | sed 's/ *- *- *$//; s/ *$//'
        echo
    done
    echo '```'
    echo
fi
rm -f g3.qtr

echo "bench: 3/4 record + cachesim vs cachegrind..." >&2
load3=$(loadavg)
for _ in $(seq "$RUNS"); do
    tm e2e_rec "$Q" trace record --engine qemu -o e.qtr -- "${GZIP[@]}"
    tm e2e_sim "$Q" cachesim "${GEOM[@]}" e.qtr
    tm e2e_cg valgrind --tool=cachegrind --cache-sim=yes "${GEOM[@]}" --cachegrind-out-file=/dev/null "${GZIP[@]}"
done
tsum=$(calc "%.3f" "$(med e2e_rec) + $(med e2e_sim)")
echo "### End to end: record and simulate vs cachegrind (gzip 62 KB)"
echo
echo "Load average (1, 5, 15 min) when this part started: $load3; when it ended: $(loadavg)."
echo
echo "| step | command | median wall s | CPU s |"
echo "|---|---|---|---|"
echo "| record | \`qosim trace record --engine qemu -o e.qtr -- ${GZIP[*]}\` | $(med e2e_rec) | $(med e2e_rec 4) |"
echo "| simulate | \`qosim cachesim ${GEOM[*]} e.qtr\` | $(med e2e_sim) | $(med e2e_sim 4) |"
echo "| **qosim, both** | | **$tsum** | $(calc "%.3f" "$(med e2e_rec 4) + $(med e2e_sim 4)") |"
echo "| cachegrind | \`valgrind --tool=cachegrind --cache-sim=yes ${GEOM[*]} --cachegrind-out-file=/dev/null ${GZIP[*]}\` | $(med e2e_cg) | $(med e2e_cg 4) |"
echo
ratio=$(calc "%.2f" "$tsum / $(med e2e_cg)")
echo "qosim / cachegrind: **${ratio}x** (target: below 2x): $(verdict "$ratio < 2"); $RUNS runs each, interleaved."
echo
rm -f e.qtr

echo "bench: 4/4 the ChampSim reader, old and new..." >&2
load4=$(loadavg)
OLDQ=${OLD:-}
if [ -z "$OLDQ" ]; then
    OLDQ=$CACHE/qosim-$OLD_COMMIT/build/qosim
    if [ ! -x "$OLDQ" ]; then
        echo "bench: building $OLD_COMMIT into $CACHE/qosim-$OLD_COMMIT..." >&2
        rm -rf "$CACHE/qosim-$OLD_COMMIT"
        mkdir -p "$CACHE/qosim-$OLD_COMMIT"
        git -C "$top" archive "$OLD_COMMIT" | tar -x -C "$CACHE/qosim-$OLD_COMMIT"
        make -C "$CACHE/qosim-$OLD_COMMIT" -j"$(nproc)" build/qosim >/dev/null
    fi
fi
scen champ 5ms "{trace: g.champsim, loop: false}"
cat g.champsim >/dev/null
for _ in $(seq "$RUNS"); do
    tm cs_old "$OLDQ" cachesim "${GEOM[@]}" g.champsim
    tm cs_new "$Q" cachesim "${GEOM[@]}" g.champsim
    tm run_old "$OLDQ" run champ.yaml --quiet --csv "$W/champ-old.csv"
    tm run_new "$Q" run champ.yaml --quiet --csv "$W/champ-new.csv"
done
same=identical
(cd "$W" && "$OLDQ" cachesim "${GEOM[@]}" g.champsim >cs-old.txt && "$Q" cachesim "${GEOM[@]}" g.champsim >cs-new.txt)
cmp -s cs-old.txt cs-new.txt || { same="**DIFFERENT**"; fail=1; }
rsame=identical
cmp -s champ-old.csv champ-new.csv || { rsame="**DIFFERENT**"; fail=1; }
n=$(awk -F, 'NR > 1 { n += $5 } END { print n }' champ-new.csv)
share() { # BINARY ARGS...: champsim_read's share of cpu-clock samples
    perf record -q -e cpu-clock -F 2999 -o "$W/perf.data" -- "$@" >/dev/null 2>&1 || return 0
    perf report -i "$W/perf.data" --stdio --no-children --sort symbol 2>/dev/null |
        awk '/ champsim_read *$/ || / champsim_read / { sub(/%/, "", $1); print $1 "%"; exit }'
}
p_old="" p_new="" c_old="" c_new=""
if command -v perf >/dev/null; then
    p_old=$(share "$OLDQ" run champ.yaml --quiet) p_new=$(share "$Q" run champ.yaml --quiet)
    c_old=$(share "$OLDQ" cachesim "${GEOM[@]}" g.champsim) c_new=$(share "$Q" cachesim "${GEOM[@]}" g.champsim)
fi
echo "### The ChampSim reader, $OLD_COMMIT vs now"
echo
echo "Load average (1, 5, 15 min) when this part started: $load4; when it ended: $(loadavg)."
echo
echo "Trace: the ChampSim recording above (\`qosim trace record --engine qemu -o g.champsim -- ${GZIP[*]}\`),"
echo "$(calc "%.1f" "$(stat -c %s g.champsim) / 1048576") MiB, $(calc "%.2f" "$(stat -c %s g.champsim) / 64 / 1e6") M instructions (page cache warm)."
echo
echo "| command | $OLD_COMMIT s | now s | speed-up | champsim_read, $OLD_COMMIT | now | output |"
echo "|---|---|---|---|---|---|---|"
echo "| \`qosim cachesim ${GEOM[*]} g.champsim\` | $(med cs_old) | $(med cs_new) | $(calc "%.2fx" "$(med cs_old) / $(med cs_new)") | ${c_old:-n/a} | ${c_new:-n/a} | $same |"
echo "| \`qosim run champ.yaml --quiet\` | $(med run_old) | $(med run_new) | $(calc "%.2fx" "$(med run_old) / $(med run_new)") | ${p_old:-n/a} | ${p_new:-n/a} | CSV $rsame |"
echo
echo "champ.yaml: one task on intel-xeon, \`workload: {trace: g.champsim, loop: false}\`, 5 ms"
echo "($(calc "%.1f" "$n / 1e6") M instructions simulated). Shares: \`perf record -e cpu-clock -F 2999\`,"
echo "\`perf report --no-children --sort symbol\`, one run each. $RUNS runs each, interleaved."
echo
echo "host: $host"
[ "$fail" = 0 ] || { echo "bench: a check failed (see **DIFFERENT** above)" >&2; exit 1; }
