#!/bin/bash
# End-to-end tests of output files (docs/development.md, "Output files"), for
# every command that writes one (run, cachesim, lwp, trace record, sweep
# collect): "-" and
# /dev/stdout are standard output; a FIFO or a device is written through and
# never replaced; a link is followed and stays a link; a regular file is
# replaced whole; two outputs naming one file, an output naming an input, an
# option without its value are usage errors (exit 2); an interrupted run
# leaves nothing behind. Then what is particular to trace record
# (docs/traces.md): --max-records, -o checked before the program starts,
# valgrind stopped with qosim, progress only on a terminal.
. "$(dirname "$0")/lib.sh"
D=$TMP/d # the outputs, and nothing else
mkdir "$D"

cat >"$TMP/tiny.yaml" <<'Y'
name: tiny
vendor: intel
topology: {sockets: 1, modules: 2, threads: 1}
core: {frequency: 1GHz, cpi: 1}
caches:
  L1I: {size: 4K, ways: 4, latency: 2}
  L1D: {size: 4K, ways: 4, latency: 2}
  L2: {size: 16K, ways: 4, latency: 10}
  L3: {size: 64K, ways: 8, latency: 30}
memory: {channels: 1, peak: 10GB/s, latency: 50ns}
Y
tasks='tasks:
  - {name: a, cpu: 0, workload: {pattern: random, wss: 32K}}'
printf 'platform: tiny.yaml\nduration: 200us\ninterval: 50us\n%s\n' "$tasks" >"$TMP/ok.yaml"
# Runs for long enough to be interrupted (minutes), and is.
printf 'platform: tiny.yaml\nduration: 100s\ninterval: 1ms\n%s\n' "$tasks" >"$TMP/long.yaml"
printf 'platform: amd-lwp\nduration: 100s\n%s\n' "$tasks" >"$TMP/lwp-long.yaml"
cp "$DATA/small.lackey" "$TMP/small.lackey"
HAVE_VG=$(command -v valgrind >/dev/null && echo 1)
safe=

# out_CMD FILE: the command with its output (the one under test) on FILE.
out_run() { "$QOSIM" run "$TMP/ok.yaml" --quiet --json "$1"; }
out_cachesim() { "$QOSIM" cachesim --json -o "$1" "$TMP/small.lackey"; }
out_lwp() { "$QOSIM" lwp --trace "$TMP/small.lackey" --event ir:1 --json "$1"; }
out_trace() { "$QOSIM" trace record --max-records 1000 -o "$1" -- /bin/true; }
# qosim sweep collect's CSV, of a two-point sweep of ok.yaml (its JSON Lines
# beside, in $TMP).
printf 'base: ok.yaml\naxes:\n  - {key: seed, values: [1, 2]}\n' >"$TMP/sw.yaml"
"$QOSIM" sweep plan "$TMP/sw.yaml" -o "$TMP/swd" >/dev/null && "$QOSIM" sweep run "$TMP/swd" 2>/dev/null
out_collect() { "$QOSIM" sweep collect "$TMP/swd" --jsonl "$TMP/swd.jsonl" --csv "$1"; }
# body CMD FILE: what must not differ between two runs (valgrind's ==PID==
# lines carry the process id).
body() { if [ "$1" = trace ]; then grep -v '^==' "$2"; else cat "$2"; fi; }
# left: what is in $D besides the named files, temporaries above all.
left() { (cd "$D" && find . -mindepth 1 | sort | tr '\n' ' '); }

for c in run cachesim lwp trace collect; do
    if [ "$c" = trace ] && [ -z "$HAVE_VG" ]; then
        echo "# valgrind not installed: trace record not tested"
        continue
    fi
    out_$c "$TMP/ref.$c" >/dev/null 2>&1
    ref=$(body $c "$TMP/ref.$c")

    expect "$c: - is standard output" 0 out_$c -
    same "$c: - wrote the output, and only it" "$(body $c "$TMP/out")" "$ref"

    # What /dev/stdout is on Linux, as a link of our own.
    ln -s /proc/self/fd/1 "$D/stdout"
    out_$c "$D/stdout" 2>"$TMP/err" | cat >"$TMP/o"
    same "$c: a link to standard output, a pipe, written through" "$(body $c "$TMP/o")" "$ref"
    expect "$c: a link to standard output, a file" 0 out_$c "$D/stdout"
    same "$c: ... written through" "$(body $c "$TMP/out")" "$ref"
    claim "$c: ... and the link is still a link" test -L "$D/stdout"
    [ "$c" = cachesim ] && [ -L "$D/stdout" ] && [ "$(body $c "$TMP/out")" = "$ref" ] && safe=1

    mkfifo "$D/fifo"
    timeout 20 cat "$D/fifo" >"$TMP/o" &
    reader=$!
    expect "$c: a FIFO" 0 out_$c "$D/fifo"
    wait $reader
    same "$c: the FIFO's reader got the output" "$(body $c "$TMP/o")" "$ref"
    claim "$c: ... and it is still a FIFO" test -p "$D/fifo"

    # Devices of our own, the same as /dev/null and /dev/full: a qosim that
    # replaced what it writes to must not take the machine's with it.
    if mknod "$D/null" c 1 3 2>/dev/null && mknod "$D/full" c 1 7 2>/dev/null; then
        expect "$c: a null device" 0 out_$c "$D/null"
        claim "$c: ... is still a device" test -c "$D/null"
        expect "$c: a full device fails" 1 out_$c "$D/full"
        has "$c: ... saying why" "$TMP/err" "^qosim [a-z]+: $D/full: cannot write: No space left on device$"
        claim "$c: ... and is still a device" test -c "$D/full"
        rm -f "$D/null" "$D/full"
    else
        ok "$c: devices # skip: mknod needs root"
    fi

    mkdir "$D/sub"
    echo old >"$D/sub/target"
    ln -s sub/target "$D/link"
    expect "$c: a link" 0 out_$c "$D/link"
    same "$c: ... its target written" "$(body $c "$D/sub/target")" "$ref"
    claim "$c: ... and the link is still a link" test -L "$D/link"

    head -c 200000 /dev/zero | tr '\0' x >"$D/reg"
    chmod 600 "$D/reg"
    expect "$c: a regular file" 0 out_$c "$D/reg"
    same "$c: ... replaced whole" "$(body $c "$D/reg")" "$ref"
    same "$c: ... keeping its permissions" "$(stat -c %a "$D/reg")" "600"
    same "$c: nothing else left behind" "$(left)" "./fifo ./link ./reg ./stdout ./sub ./sub/target "
    rm -rf "${D:?}"/*
done

# The machine's own /dev/stdout, named only once cachesim was seen to write
# through a link of the same kind above: a broken qosim would replace it.
if [ -n "$safe" ] && [ -L /dev/stdout ]; then
    out_cachesim /dev/stdout 2>/dev/null | cat >"$TMP/o"
    same "/dev/stdout: the output on standard output" "$(cat "$TMP/o")" "$(cat "$TMP/ref.cachesim")"
    claim "/dev/stdout: still a link" test -L /dev/stdout
fi

# ---- two outputs naming one file, an output naming an input: exit 2 ---------
cp /bin/true "$TMP/prog"
refuse() { # refuse NAME MESSAGE CMD...
    local name=$1 msg=$2
    shift 2
    expect "$name" 2 "$@"
    has "$name: said" "$TMP/err" "$msg"
}
refuse "run: --json and --csv on one file" "--json $D/x and --csv $D/x name the same file" \
    "$QOSIM" run "$TMP/ok.yaml" --json "$D/x" --csv "$D/x"
ln -s x "$D/y"
refuse "run: --csv through a link to the --json file" "--json $D/x and --csv $D/y name the same file" \
    "$QOSIM" run "$TMP/ok.yaml" --json "$D/x" --csv "$D/y"
refuse "run: - twice" "--json - and --plot - both write to standard output" \
    "$QOSIM" run "$TMP/ok.yaml" --json - --plot -
refuse "run: --json given twice" "--json given twice" "$QOSIM" run "$TMP/ok.yaml" --json "$D/a" --json "$D/b"
refuse "run: --json over the scenario" "--json $TMP/ok.yaml would overwrite the scenario" \
    "$QOSIM" run "$TMP/ok.yaml" --json "$TMP/ok.yaml"
refuse "run: --csv over the platform profile" "--csv $TMP/tiny.yaml would overwrite the platform profile" \
    "$QOSIM" run "$TMP/ok.yaml" --csv "$TMP/tiny.yaml"
refuse "lwp: --json and --raw on one file" "--raw $D/x and --json $D/x name the same file" \
    "$QOSIM" lwp --trace "$TMP/small.lackey" --event ir:1 --json "$D/x" --raw "$D/x"
refuse "lwp: --raw over the trace" "--raw $TMP/small.lackey would overwrite the trace" \
    "$QOSIM" lwp --trace "$TMP/small.lackey" --event ir:1 --raw "$TMP/small.lackey"
refuse "cachesim: -o over the trace" "-o $TMP/small.lackey would overwrite the trace" \
    "$QOSIM" cachesim -o "$TMP/small.lackey" "$TMP/small.lackey"
refuse "cachesim: -o over the trace on standard input" "would overwrite the trace \(standard input\)" \
    "$QOSIM" cachesim -o "$TMP/small.lackey" - <"$TMP/small.lackey"
refuse "cachesim: -o given twice" "-o given twice" "$QOSIM" cachesim -o "$D/a" -o "$D/b" "$TMP/small.lackey"
refuse "trace: -o over the program" "-o $TMP/prog would overwrite the program" \
    "$QOSIM" trace record -o "$TMP/prog" -- "$TMP/prog"
refuse "trace: -o given twice" "-o given twice" "$QOSIM" trace record -o "$D/a" -o "$D/b" -- /bin/true
claim "the inputs are untouched" cmp -s "$DATA/small.lackey" "$TMP/small.lackey"
claim "the program is untouched" cmp -s /bin/true "$TMP/prog"
same "no output left by a refused command" "$(left)" "./y "
rm -f "$D/y"

# ---- an option without its value: exit 2, naming the option ----------------
refuse "run: --json at the end" "^qosim run: --json needs a value$" "$QOSIM" run "$TMP/ok.yaml" --json
refuse "run: --json before another option" "^qosim run: --json needs a value$" \
    "$QOSIM" run "$TMP/ok.yaml" --json --csv "$D/c"
refuse "run: --plot= empty" "^qosim run: --plot needs a value$" "$QOSIM" run "$TMP/ok.yaml" --plot=
refuse "run: --seed at the end" "^qosim run: --seed needs a value$" "$QOSIM" run "$TMP/ok.yaml" --seed
refuse "cachesim: -o at the end" "^qosim cachesim: -o needs a value$" "$QOSIM" cachesim "$TMP/small.lackey" -o
refuse "cachesim: --policy at the end" "^qosim cachesim: --policy needs a value$" \
    "$QOSIM" cachesim "$TMP/small.lackey" --policy
refuse "lwp: --json at the end" "^qosim lwp: --json needs a value$" \
    "$QOSIM" lwp --trace "$TMP/small.lackey" --event ir:1 --json
refuse "lwp: --raw before another option" "^qosim lwp: --raw needs a value$" \
    "$QOSIM" lwp --trace "$TMP/small.lackey" --raw --event ir:1
refuse "trace: -o before --" "^qosim trace: -o needs a value$" "$QOSIM" trace record -o -- /bin/true
refuse "trace: --max-records before --" "^qosim trace: --max-records needs a value$" \
    "$QOSIM" trace record --max-records -- /bin/true
refuse "regs: --platform at the end" "^qosim regs: --platform needs a value$" "$QOSIM" regs --platform
refuse "profiles show without a name" "^qosim profiles: show needs a NAME \\(shipped: " "$QOSIM" profiles show
same "no output left by a missing value" "$(left)" ""

# ---- interrupted: no file, no temporary, the signal's status ---------------
# interrupt NAME SIGNAL WAIT CMD...: CMD in the background (with the
# signals' default actions and standard input, which a script's background
# job would not have) is sent SIGNAL once its temporary exists (WAIT=any) or
# has something in it (WAIT=data: the program is being recorded).
interrupt() {
    local name=$1 sig=$2 cond=(-name '*.tmp.*') pid t
    [ "$3" = data ] && cond+=(-size +0)
    shift 3
    env --default-signal "$@" <&0 >/dev/null 2>"$TMP/err" &
    pid=$!
    for t in $(seq 300); do
        [ -n "$(find "$D" "${cond[@]}")" ] && break
        sleep 0.1
    done
    kill -s "$sig" $pid
    wait $pid
    same "$name: ended by SIG$sig" "$?" "$((128 + $(kill -l "$sig")))"
    same "$name: left nothing" "$(left)" ""
}
interrupt "run" INT any "$QOSIM" run "$TMP/long.yaml" --json "$D/i.json" --csv "$D/i.csv" --plot "$D/i.svg"
interrupt "lwp" TERM any "$QOSIM" lwp --scenario "$TMP/lwp-long.yaml" --event ir:1 --json "$D/i.json" --raw "$D/i.raw"
# An endless trace on standard input.
yes 'I  04000000,4' | interrupt "cachesim" HUP any "$QOSIM" cachesim -o "$D/i.txt" -
if [ -n "$HAVE_VG" ]; then
    mark=qosim-outputs-$$
    interrupt "trace record" INT data "$QOSIM" trace record -o "$D/i.lackey" -- sh -c "while :; do :; done; : $mark"
    same "trace record: valgrind and the program are gone" "$(pgrep -f "$mark" | wc -l)" "0"
fi

# ---- trace record ------------------------------------------------------------
if [ -z "$HAVE_VG" ]; then
    echo "# valgrind not installed: trace record not tested"
    exit 0
fi
# A record is a line of an access: I, L, S or M.
records() { grep -cE '^(I  | [LSM] )' "$1"; }

expect "--max-records 1000" 0 "$QOSIM" trace record --max-records 1000 -o "$D/m.lackey" -- /bin/true
same "... exactly 1000 records" "$(records "$D/m.lackey")" "1000"
same "... ending at a line's end" "$(tail -c 1 "$D/m.lackey" | od -An -c | tr -d ' ')" '\n'
has "... and says so" "$TMP/err" "^qosim trace: note: '/bin/true' was stopped at --max-records 1000$"
expect "... which cachesim reads" 0 "$QOSIM" cachesim --json "$D/m.lackey"
has "... as 1000 records" "$TMP/out" '"records": 1000,'
has "... its instruction fetches the I lines" "$TMP/out" "\"Ir\": $(grep -c '^I  ' "$D/m.lackey"),"
expect "--max-records to .xz" 0 "$QOSIM" trace record --max-records 1000 -o "$D/m.lackey.xz" -- /bin/true
same "... the same records" "$(xz -dc "$D/m.lackey.xz" | grep -v '^==')" "$(grep -v '^==' "$D/m.lackey")"
for bad in 0 -3 x 1e3; do
    refuse "--max-records $bad" "^qosim trace: --max-records '$bad': expected a positive whole number$" \
        "$QOSIM" trace record --max-records=$bad -- /bin/true
done
# Without --max-records, the whole run; on standard output, the program's
# own output goes to standard error.
expect "a whole recording on standard output" 0 "$QOSIM" trace record -o - -- /bin/echo hello
has "... the program's words on standard error" "$TMP/err" "^hello$"
same "... the trace alone on standard output" "$(grep -vcE '^(==|I  | [LSM] )' "$TMP/out")" "0"
has "... its records reported" "$TMP/err" \
    "^qosim trace: recorded '/bin/echo' into standard output: $(records "$TMP/out") records, "
claim "... more than 1000 of them" ge "$(records "$TMP/out")" 1001 1
# Standard error is no terminal here: no progress line.
same "... no progress line off a terminal" "$(grep -c $'\r' "$TMP/err")" "0"
rm -f "$D"/*

# The output is checked before the program starts: it would leave a mark.
for o in "$D" "$D/none/t.lackey" /proc/t.lackey; do
    expect "-o $o refused at once" 1 "$QOSIM" trace record -o "$o" -- sh -c ": >'$TMP/mark'"
    has "... naming it" "$TMP/err" "^qosim trace: $o: "
    claim "... before the program ran" test ! -e "$TMP/mark"
done
same "nothing left by a refused recording" "$(left)" ""

# On a terminal (script(1) gives one), the progress line is drawn and cleared.
if command -v script >/dev/null; then
    script -qec "'$QOSIM' trace record --max-records 1000 -o '$D/tty.lackey' -- /bin/true" /dev/null \
        >"$TMP/tty" 2>&1
    has "progress on a terminal" "$TMP/tty" $'\rqosim trace: [0-9]+ records, [0-9.]+ MiB, [0-9]+ s'
    has "... cleared at the end" "$TMP/tty" $'\r\033\\[K'
fi
