#!/bin/bash
# Acceptance: for lackey traces of real programs, qosim cachesim's nine counts
# equal what valgrind --tool=cachegrind --cache-sim=yes reports for the same
# run, for several geometries. Traces are recorded here, at test time.
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind >/dev/null; then
    notok "valgrind available" "install it: apt-get install valgrind"
    exit 0
fi

# Both runs of a program must see the same environment, byte for byte: its
# size moves the stack, and bash's "_" variable names the command it started
# (qosim in one run, valgrind in the other).
clean() { env -i PATH=/usr/bin:/bin LC_ALL=C "$@"; }

# Real inputs, made deterministically.
seq 1 4000 | awk '{ printf "%08d %s\n", ($1 * 7919) % 10007, $1 }' >"$TMP/lines.txt"
head -c 60000 "$TMP/lines.txt" >"$TMP/gz.in"

progs=(
    "sort:sort $TMP/lines.txt"
    "gzip:gzip -6 -c $TMP/gz.in"
    "ls:ls -l $DATA"
)
geoms=(
    "--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
    "--I1=4096,2,32 --D1=8192,4,64 --LL=262144,8,64"
    "--I1=1024,1,64 --D1=2048,1,32 --LL=65536,4,128"
    "--I1=16384,256,64 --D1=4096,64,64 --LL=131072,16,64"
)

for pg in "${progs[@]}"; do
    name=${pg%%:*}
    cmd=${pg#*:}
    # shellcheck disable=SC2086
    if ! clean "$QOSIM" trace record -o "$TMP/$name.lackey" -- $cmd >/dev/null 2>"$TMP/err"; then
        notok "record $name" "$(cat "$TMP/err")"
        continue
    fi
    ok "record $name"
    gi=0
    for g in "${geoms[@]}"; do
        gi=$((gi + 1))
        # shellcheck disable=SC2086
        clean valgrind --tool=cachegrind --cache-sim=yes $g --cachegrind-out-file="$TMP/cg.out" \
            $cmd >/dev/null 2>"$TMP/cg.err"
        want=$(sed -n 's/^summary: //p' "$TMP/cg.out" | awk '{$1=$1; print}')
        # shellcheck disable=SC2086
        got=$("$QOSIM" cachesim --json $g "$TMP/$name.lackey" |
            awk -F'[":, ]+' '{ v[$2] = $3 } END {
                print v["Ir"], v["I1mr"], v["ILmr"], v["Dr"], v["D1mr"], v["DLmr"], v["Dw"], v["D1mw"], v["DLmw"] }')
        same "$name geometry $gi ($g): Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw = cachegrind" "$got" "$want"
    done
    # The text summary has cachegrind's lines, figure for figure.
    clean valgrind --tool=cachegrind --cache-sim=yes ${geoms[0]} --cachegrind-out-file="$TMP/cg.out" \
        $cmd 2>&1 >/dev/null | sed -n 's/^==[0-9]*== \([IDL][ L1].*\(refs\|misses\|rate\).*\)/\1/p' >"$TMP/cg.txt"
    # shellcheck disable=SC2086
    "$QOSIM" cachesim ${geoms[0]} "$TMP/$name.lackey" | grep -E 'refs|misses|rate' >"$TMP/q.txt"
    if diff "$TMP/cg.txt" "$TMP/q.txt" >"$TMP/diff"; then
        ok "$name text summary identical to cachegrind's"
    else
        notok "$name text summary identical to cachegrind's" "$(head -20 "$TMP/diff")"
    fi
done
