#!/bin/bash
# Acceptance: for lackey traces of real programs, qosim cachesim's nine counts
# equal what valgrind --tool=cachegrind --cache-sim=yes reports for the same
# run, for several geometries. Traces are recorded here, at test time.
#
# Two executions of a program can only be compared when its execution is
# repeatable by construction. What a program executes, and where, moves with
# its argv and environment (their length shifts the stack, and with it the
# paths glibc's string routines take), its working directory (Debian's
# valgrind is a /bin/sh wrapper, which exports PWD to the program), its
# descriptors and what stdin and stdout are (a file, a pipe, /dev/null), the
# clock, and for some tools the machine: sort sizes its buffers from free
# memory, rlimits and the CPU count. So every run (the recording and each
# cachegrind run) goes through run_fixed, the programs are small C programs
# built here plus real tools on fixed inputs with options that pin what they
# would otherwise ask the machine, and before its counts are compared each
# program proves that it is repeatable: its cachegrind runs must agree.
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind >/dev/null; then
    notok "valgrind available" "install it: apt-get install valgrind"
    exit 0
fi
if ! command -v cc >/dev/null; then
    notok "cc available" "install it: apt-get install gcc"
    exit 0
fi

# The conditions of every run: descriptors 0-2 only (stdin from a fixed file,
# stdout to /dev/null, stderr to a regular file; nothing inherited from
# whoever started the test), one working directory, one environment (bash's
# "_" would otherwise name the command it started, qosim in one run and
# valgrind in the other), UTC.
#
# LD_PRELOAD is set, empty, on purpose. Valgrind adds its preload library to
# LD_PRELOAD and, when the variable is not there, appends it as the last
# environment string, which the kernel's 16 random AT_RANDOM bytes follow on
# the stack. The dynamic loader splits LD_PRELOAD with a strcspn that reads
# whole 4-byte words and looks every byte up in a 256-byte table on its stack,
# so up to 3 random bytes pick which table entries are loaded: a different
# cache line from run to run, and D1/LL miss counts that differ by one or two.
# An LD_PRELOAD already in the environment is extended where it stands, away
# from the random bytes.
#   run_fixed STDIN STDERR CMD...   (lib.sh's fixed, with this environment)
# shellcheck disable=SC2034 # fixed reads it by name
CG_ENV=(LD_PRELOAD= PATH=/usr/bin:/bin LC_ALL=C TZ=UTC)
run_fixed() { fixed CG_ENV "$1" /dev/null "$2" "${@:3}"; }

# The working directory, which ls lists: fixed names, sizes, modes and
# mtimes (years old, so ls's "recent file" test against the clock always
# says no).
mkdir "$TMP/cwd" "$TMP/bin"
for i in 1 2 3 4 5 6; do
    head -c $((i * 300)) /dev/zero | tr '\0' x >"$TMP/cwd/file$i"
    chmod $((600 + (i % 2) * 44)) "$TMP/cwd/file$i"
done
mkdir "$TMP/cwd/sub"
touch -d @1577836800 "$TMP/cwd"/* "$TMP/cwd"
# Real inputs, made deterministically. The tools read them on stdin, so no
# path (whose length would move the counts) is on their command line.
awk 'BEGIN { for (i = 1; i <= 800; i++)
    printf "%05d line %d %s\n", (i * 7919) % 10007, i, substr("the quick brown fox jumps over the lazy dog", 1 + i % 20) }' \
    >"$TMP/lines.txt"
head -c 12000 "$TMP/lines.txt" >"$TMP/gz.in"
head -c 4000 "$TMP/lines.txt" >"$TMP/sed.in"

# Small C programs with no input, clock, randomness or heap-address-driven
# control flow (tests/e2e/progs/).
progs_src=$(cd "$(dirname "$0")/progs" && pwd)
for c in matmul chase hash stream; do
    cc -O2 -o "$TMP/bin/$c" "$progs_src/$c.c" 2>"$TMP/err" || notok "build $c" "$(head -5 "$TMP/err")"
done

# NAME|STDIN|COMMAND (words split on blanks). sort: -S and --parallel, so that
# neither free memory nor the CPU count sizes anything; gzip: -n, so that no
# name or time goes into the header; ls: -n (no user database lookups) and a
# fixed time format.
progs=(
    "matmul|/dev/null|$TMP/bin/matmul"
    "chase|/dev/null|$TMP/bin/chase"
    "hash|/dev/null|$TMP/bin/hash"
    "stream|/dev/null|$TMP/bin/stream"
    "sort|$TMP/lines.txt|sort -S 1M --parallel=1 -k3,3n"
    "gzip|$TMP/gz.in|gzip -n -6 -c"
    "sed|$TMP/sed.in|sed -e s/line/LINE/ -e /fox/d"
    "ls|/dev/null|ls -ln --time-style=+%F"
)
geoms=(
    "--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
    "--I1=4096,2,32 --D1=8192,4,64 --LL=262144,8,64"
    "--I1=1024,1,64 --D1=2048,1,32 --LL=65536,4,128"
    "--I1=16384,256,64 --D1=4096,64,64 --LL=131072,16,64"
)

for spec in "${progs[@]}"; do
    IFS='|' read -r name in cmd <<<"$spec"
    read -r -a argv <<<"$cmd"
    if [ ! -x "${argv[0]}" ] && ! command -v "${argv[0]}" >/dev/null; then
        notok "$name available" "'${argv[0]}' was not built or is not installed"
        continue
    fi

    # The recording (lackey is the slow part) runs on the second core while
    # cachegrind runs once per geometry, and the first geometry twice.
    run_fixed "$in" "$TMP/rec.err" "$QOSIM" trace record -o "$TMP/$name.lackey" -- "${argv[@]}" &
    rec=$!
    for gi in 1 2 3 4 1b; do
        # shellcheck disable=SC2086
        run_fixed "$in" "$TMP/cg.err" valgrind --tool=cachegrind --cache-sim=yes ${geoms[${gi%b} - 1]} \
            --cachegrind-out-file="$TMP/cg.$gi" --log-file="$TMP/cg.$gi.log" "${argv[@]}"
    done
    wait "$rec"
    recrc=$?

    # Repeatable: the two runs with one geometry agree on all nine counts, and
    # all runs agree on Ir, Dr and Dw, which no geometry changes. Otherwise
    # nothing of this program is compared: a mismatch would say nothing about
    # qosim.
    ref=$(cg_counts "$TMP/cg.1")
    why=""
    if [ -z "$ref" ]; then
        why="cachegrind produced no counts: $(grep -v '^==' "$TMP/cg.1.log" | head -3)"
    elif [ "$(cg_counts "$TMP/cg.1b")" != "$ref" ]; then
        why="two cachegrind runs of the same command counted '$ref' and '$(cg_counts "$TMP/cg.1b")'"
    else
        for gi in 2 3 4; do
            a=$(cut -d' ' -f1,4,7 <<<"$ref")
            b=$(cg_counts "$TMP/cg.$gi" | cut -d' ' -f1,4,7)
            [ "$a" = "$b" ] || why="cachegrind runs of the same command counted Ir Dr Dw '$a' and '$b'"
        done
    fi
    if [ -n "$why" ]; then
        notok "$name is repeatable" "$why:" \
            "its execution is not repeatable, so no recording of it can be compared with" \
            "cachegrind's counts; its comparisons are skipped. Make it repeatable by construction."
        continue
    fi
    ok "$name is repeatable"

    if [ "$recrc" -ne 0 ]; then
        notok "record $name" "$(head -5 "$TMP/rec.err")"
        continue
    fi
    ok "record $name"
    # The recording is one more execution: one with another instruction
    # count than cachegrind's runs did not repeat them, and its misses say
    # nothing about qosim either.
    # shellcheck disable=SC2086
    got=$("$QOSIM" cachesim --json ${geoms[0]} "$TMP/$name.lackey" | q_counts)
    if [ "${got%% *}" != "${ref%% *}" ]; then
        notok "$name recording repeats cachegrind's runs" \
            "the recording executed ${got%% *} instructions, cachegrind's runs ${ref%% *}: the program's" \
            "execution is not repeatable, so its counts cannot be compared; comparisons skipped."
        continue
    fi
    for gi in 1 2 3 4; do
        g=${geoms[gi - 1]}
        # shellcheck disable=SC2086
        [ "$gi" -eq 1 ] || got=$("$QOSIM" cachesim --json $g "$TMP/$name.lackey" | q_counts)
        same "$name geometry $gi ($g): Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw = cachegrind" \
            "$got" "$(cg_counts "$TMP/cg.$gi")"
    done

    # The text summary has cachegrind's lines, figure for figure.
    sed -n 's/^==[0-9]*== \([IDL][ L1].*\(refs\|misses\|rate\).*\)/\1/p' "$TMP/cg.1.log" >"$TMP/cg.txt"
    # shellcheck disable=SC2086
    "$QOSIM" cachesim ${geoms[0]} "$TMP/$name.lackey" | grep -E 'refs|misses|rate' >"$TMP/q.txt"
    if [ -s "$TMP/cg.txt" ] && diff "$TMP/cg.txt" "$TMP/q.txt" >"$TMP/diff"; then
        ok "$name text summary identical to cachegrind's"
    else
        notok "$name text summary identical to cachegrind's" "$(head -20 "$TMP/diff")"
    fi
    rm -f "$TMP/$name.lackey"
done
