#!/bin/bash
# Throughput of `qosim cachesim` on a lackey trace of a real program, next to
# the trace's read-only floor. Reproducible: the trace is gzip compressing a
# generated text, recorded with `qosim trace record`, cut to RECORDS records.
#
#   bench/cachesim.sh            # needs build/qosim (make), valgrind, awk
#   RECORDS=30000000 RUNS=10 bench/cachesim.sh
#
# Uses hyperfine when installed (apt-get install hyperfine), else bash's time.
# Prints a Markdown table for docs/performance.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
RECORDS=${RECORDS:-25000000}
RUNS=${RUNS:-5}
DIR=${QOSIM_BENCH_DIR:-/tmp/qosim-bench}
GEOM="--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
mkdir -p "$DIR"
trace=$DIR/gzip-$RECORDS.lackey
din=$DIR/gzip-$RECORDS.din

if [ ! -s "$trace" ]; then
    echo "bench: recording gzip under valgrind (about a minute)..." >&2
    awk 'BEGIN { for (i = 1; i <= 5000; i++) printf "%d %x %o\n", (i * 7919) % 100003, i, i }' >"$DIR/input.txt"
    env -i PATH=/usr/bin:/bin "$Q" trace record -o "$DIR/full.lackey" -- gzip -6 -c "$DIR/input.txt" >/dev/null
    awk -v n="$RECORDS" '!/^==/ { print; if (++k == n) exit }' "$DIR/full.lackey" >"$trace"
    rm -f "$DIR/full.lackey"
    n=$(wc -l <"$trace")
    [ "$n" -ge "$RECORDS" ] || { echo "bench: only $n records; raise the input size" >&2; exit 1; }
fi
if [ ! -s "$din" ]; then
    # The same accesses in DineroIV's extended din (M is a read, as cachegrind counts it).
    awk -F'[ ,]+' '/^I/ { printf "i %s %x\n", $2, $3; next }
                   { printf "%s %s %x\n", ($2 == "S" ? "w" : "r"), $3, $4 }' "$trace" >"$din"
fi
cat "$trace" "$din" >/dev/null # page cache warm

time_of() { # median wall seconds of RUNS runs of "$@"
    if command -v hyperfine >/dev/null; then
        local cmd
        cmd=$(printf '%q ' "$@")
        hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$DIR/h.json" "$cmd" >/dev/null
        sed -n 's/.*"median": *\([0-9.e-]*\).*/\1/p' "$DIR/h.json" | head -1
    else
        local ts=()
        for _ in $(seq "$RUNS"); do
            local s e
            s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N)
            ts+=("$(echo "$e - $s" | bc -l)")
        done
        printf '%s\n' "${ts[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
    fi
}

n=$(wc -l <"$trace")
t_awk=$(time_of awk 'END{print NR}' "$trace")
t_wc=$(time_of wc -l "$trace")
t_q=$(time_of "$Q" cachesim $GEOM "$trace")
t_din=$(time_of "$Q" cachesim --format=din $GEOM "$din")

rate() { awk -v n="$n" -v t="$1" 'BEGIN { printf "%.1f", n / t / 1e6 }'; }
t_awk=$(printf '%.3f' "$t_awk") t_wc=$(printf '%.3f' "$t_wc") t_q=$(printf '%.3f' "$t_q") t_din=$(printf '%.3f' "$t_din")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "| measurement | median time (s) | million records/s | vs awk floor |"
echo "|---|---|---|---|"
echo "| awk 'END{print NR}' (read-only floor) | $t_awk | $(rate "$t_awk") | 1.00 |"
echo "| wc -l | $t_wc | $(rate "$t_wc") | $(ratio "$t_wc" "$t_awk") |"
echo "| qosim cachesim, lackey | $t_q | $(rate "$t_q") | $(ratio "$t_q" "$t_awk") |"
echo "| qosim cachesim, din | $t_din | $(rate "$t_din") | $(ratio "$t_din" "$t_awk") |"
echo
echo "trace: $n records, $(du -m "$trace" | cut -f1) MiB lackey; geometry $GEOM; $RUNS runs each"
echo "host: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
