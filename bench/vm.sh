#!/bin/bash
# The whole guest (qosim vm, docs/vm.md): seconds to boot Debian's kernel and
# run a command, with the model and with QEMU alone (--no-model); guest
# instructions per host second of a memory-bound loop (qosim-guest stream
# over 64 MiB), with and without the model; QEMU's peak memory. Every
# figure is printed with the command that made it.
#
#   bench/vm.sh            # needs make vm
#   RUNS=3 PLATS="intel-xeon amd-epyc intel-atom" bench/vm.sh
#
# Times are wall-clock seconds (the median of RUNS); memory is the peak
# resident set of the largest process, QEMU, from GNU time's %M. Prints
# Markdown for docs/performance.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
RUNS=${RUNS:-3}
PLATS=${PLATS:-intel-xeon amd-epyc intel-atom}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# timed ARGS...: wall seconds and peak KiB of `qosim vm ARGS`, as "S K".
timed() {
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$Q" vm "$@" >"$tmp/out" 2>"$tmp/err" ||
        { echo "bench/vm.sh: qosim vm $* failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    cat "$tmp/t"
}
# med ARGS...: the median over RUNS of timed's two figures.
med() {
    for _ in $(seq "$RUNS"); do timed "$@"; done >"$tmp/runs"
    echo "$(cut -d' ' -f1 "$tmp/runs" | median) $(cut -d' ' -f2 "$tmp/runs" | median)"
}

echo "### Boot, with and without the model"
echo
echo "Median of $RUNS runs of \`qosim vm --platform P --cmd true\` (boot, run \`true\`, power off), 4 vCPUs, 1 GiB:"
echo
echo "| platform | with the model (s) | QEMU alone, \`--no-model\` (s) | ratio | peak memory with / without (MiB) |"
echo "|---|---|---|---|---|"
for p in $PLATS; do
    read -r a am < <(med --platform "$p" --cmd true)
    read -r b bm < <(med --platform "$p" --cmd true --no-model)
    printf '| %s | %.1f | %.1f | %.1f | %d / %d |\n' "$p" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')" \
        $((am / 1024)) $((bm / 1024))
done
echo

# Instructions of one pass of the stream: the model counts them (report);
# two runs that differ only in passes give a pass's instructions.
stream() { echo "taskset -c 1 qosim-guest stream --size 64M --passes $1"; }
instr_cpu1() { grep '"cpu": 1,' "$1" | sed 's/.*"instructions": \([0-9]*\).*/\1/'; }
"$Q" vm --platform intel-xeon --report "$tmp/r2.json" --cmd "$(stream 2)" >/dev/null
"$Q" vm --platform intel-xeon --report "$tmp/r6.json" --cmd "$(stream 6)" >/dev/null
per_pass=$((($(instr_cpu1 "$tmp/r6.json") - $(instr_cpu1 "$tmp/r2.json")) / 4))
rate() { # ARGS...: the stream's own seconds for 8 passes, median of RUNS
    for _ in $(seq "$RUNS"); do
        "$Q" vm --platform intel-xeon "$@" --cmd "$(stream 8)" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'
    done | median
}
with=$(rate)
without=$(rate --no-model)
echo "### A memory-bound loop"
echo
echo "\`qosim-guest stream --size 64M --passes 8\` on vCPU 1 of intel-xeon; one pass is"
echo "$per_pass guest instructions (the model's count: 6 passes less 2, over 4)."
echo "Seconds are the loop's own (the guest's clock is the host's), median of $RUNS:"
echo
echo "| | loop (s) | guest instructions per host second |"
echo "|---|---|---|"
printf '| with the model | %.2f | %.1f M |\n' "$with" "$(awk -v n="$per_pass" -v s="$with" 'BEGIN { print n * 8 / s / 1e6 }')"
printf '| QEMU alone (`--no-model`) | %.2f | %.1f M |\n' "$without" "$(awk -v n="$per_pass" -v s="$without" 'BEGIN { print n * 8 / s / 1e6 }')"
printf '| ratio | %.1f | |\n' "$(awk -v a="$with" -v b="$without" 'BEGIN { print a / b }')"
echo

# The PMU (docs/vm.md, "Measuring in the guest"): the same loop with no
# counter enabled and under perf stat with four general-purpose counters
# counting (and the NMI watchdog's fixed counter, always on).
pmu_rate() { # PERF-PREFIX: the stream's own seconds for 8 passes, median of RUNS
    for _ in $(seq "$RUNS"); do
        "$Q" vm --platform intel-xeon --cmd "$1 $(stream 8)" 2>&1 | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p'
    done | median
}
plain=$(pmu_rate "")
counting=$(pmu_rate "perf stat -e instructions,cycles,cache-misses,branch-misses --")
echo "### The PMU"
echo
echo "The same loop, median of $RUNS, with no counter enabled and with four counting"
echo "(\`perf stat -e instructions,cycles,cache-misses,branch-misses -- qosim-guest stream ...\`):"
echo
echo "| | loop (s) |"
echo "|---|---|"
printf '| no counter enabled | %.2f |\n' "$plain"
printf '| four counters counting | %.2f |\n' "$counting"
printf '| ratio | %.3f |\n' "$(awk -v a="$counting" -v b="$plain" 'BEGIN { print a / b }')"
