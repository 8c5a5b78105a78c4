#!/bin/bash
# Live programs (QEMU's user-mode emulator and the qosim plugin): the exact
# records of a hand-written program, scenarios that run real programs,
# their reproducibility, their end, `trace record --engine qemu`, and every
# bad input: a clear message, the exit status, no file left.
. "$(dirname "$0")/lib.sh"
progs=$(cd "$(dirname "$0")/progs" && pwd)
golden=$(cd "$(dirname "$0")/golden" && pwd)
if ! command -v qemu-x86_64 >/dev/null || ! command -v cc >/dev/null; then
    notok "qemu-x86_64 and cc available" "install them: scripts/install-deps"
    exit 0
fi
D=$TMP/d
mkdir -p "$D"
left() { find "$D" -name '*.tmp.*'; }
cc -nostdlib -static -no-pie -o "$TMP/exact" "$progs/exact.S" || notok "build exact.S"

# ---- the exact records of a program known instruction by instruction --------
# Its stack lies where QEMU puts it: addresses from 0x1000000000 up are
# written relative to the first one (the return address of the call).
norm() {
    awk 'function hex(s,  v, i) { v = 0; for (i = 1; i <= length(s); i++)
                                    v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
                                  return v }
         { a = $2; sub(/,.*/, "", a)
           if (length(a) >= 10) { v = hex(a); if (!sp) sp = v; sub(/^[0-9a-f]+/, sprintf("SP%+d", v - sp), $2) }
           print }' "$1"
}
expect "record the exact program (qtr)" 0 "$QOSIM" trace record --engine qemu -o "$D/exact.qtr" -- "$TMP/exact"
has "... 57 records, 36 instructions" "$TMP/err" "^qosim trace: recorded '.*exact' into .*: 57 records, 36 instructions, "
"$QOSIM" trace dump "$D/exact.qtr" >"$TMP/dump" 2>&1
norm "$TMP/dump" >"$TMP/dump.n"
if cmp -s "$TMP/dump.n" "$golden/exact.dump"; then ok "... every record and branch as written"; else
    notok "... every record and branch as written" "$(diff "$golden/exact.dump" "$TMP/dump.n" | head -10)"; fi
expect "the same to lackey text" 0 "$QOSIM" trace record --engine qemu -o "$D/exact.lackey" -- "$TMP/exact"
same "... the same records, without branch kinds" "$(norm "$D/exact.lackey")" \
    "$(sed 's/ [a-z-]* \(not-\)\{0,1\}taken$//' "$golden/exact.dump")"
expect "the same to ChampSim" 0 "$QOSIM" trace record --engine qemu -o "$D/exact.champsim" -- "$TMP/exact"
"$QOSIM" trace dump "$D/exact.champsim" >"$TMP/cdump" 2>&1
same "... one ChampSim record per instruction" "$(grep -c '^I' "$TMP/cdump")" 36
same "... every branch's kind and outcome back" "$(grep -o ' [a-z-]* \(not-\)\{0,1\}taken$' "$TMP/cdump")" \
    "$(grep -o ' [a-z-]* \(not-\)\{0,1\}taken$' "$golden/exact.dump")"
# The same program twice gives the same file, byte for byte.
"$QOSIM" trace record --engine qemu -o "$D/exact2.qtr" -- "$TMP/exact" 2>/dev/null
claim "two recordings are the same bytes" cmp -s "$D/exact.qtr" "$D/exact2.qtr"

# ---- a real program: records, --max-records, standard output ----------------
seq 1 5000 | awk '{ printf "%07d line %d of the input\n", ($1 * 7919) % 20000, $1 }' >"$TMP/in.txt"
expect "record sort" 0 "$QOSIM" trace record --engine qemu -o "$D/sort.qtr" -- sort -S 16M --parallel=1 "$TMP/in.txt"
ins=$("$QOSIM" trace dump "$D/sort.qtr" | grep -c '^I')
claim "... millions of instructions" ge "$ins" 5000000 1
has "... as many as it says" "$TMP/err" " records, $ins instructions, "
# (Its output to a file again: glibc buffers a file and /dev/null alike,
# but a terminal or a pipe differently.)
"$QOSIM" trace record --engine qemu -o "$D/sort2.qtr" -- sort -S 16M --parallel=1 "$TMP/in.txt" 2>/dev/null >"$TMP/out2"
claim "... again the same bytes" cmp -s "$D/sort.qtr" "$D/sort2.qtr"
expect "--max-records 1000" 0 "$QOSIM" trace record --engine qemu --max-records 1000 -o "$D/m.qtr" -- sort "$TMP/in.txt"
same "... exactly 1000 records" "$("$QOSIM" trace dump "$D/m.qtr" | wc -l)" 1000
has "... and says so" "$TMP/err" "^qosim trace: note: 'sort' was stopped at --max-records 1000$"
expect "on standard output" 0 "$QOSIM" trace record --engine qemu -o - -- /bin/echo hello
has "... the program's words on standard error" "$TMP/err" "^hello$"
same "... the trace alone on standard output (Lackey text)" "$(grep -vcE '^(I  | [LSM] )' "$TMP/out")" 0
expect "a program that fails is kept" 0 "$QOSIM" trace record --engine qemu -o "$D/f.qtr" -- sh -c 'exit 3'
has "... with a note" "$TMP/err" "^qosim trace: note: 'sh' exited with status 3; the trace is kept$"

# ---- trace record's bad input -------------------------------------------------
refuse() { # NAME STATUS REGEX CMD...
    local name=$1 st=$2 re=$3
    shift 3
    expect "$name" "$st" "$@"
    has "... says: $re" "$TMP/err" "$re"
}
refuse "--engine bogus" 2 "^qosim trace: --engine 'bogus': expected lackey or qemu$" \
    "$QOSIM" trace record --engine bogus -o "$D/x.qtr" -- /bin/true
refuse "a program not on PATH" 1 "^qosim trace: program 'no-such-prog' not found on PATH$" \
    "$QOSIM" trace record --engine qemu -o "$D/x.qtr" -- no-such-prog
refuse "an output in a missing directory" 1 "no-dir" \
    "$QOSIM" trace record --engine qemu -o "$D/no-dir/x.qtr" -- /bin/true
printf '#!/bin/sh\necho hi\n' >"$TMP/script.sh"
chmod +x "$TMP/script.sh"
refuse "a script" 1 "is a script; name its interpreter first" \
    "$QOSIM" trace record --engine qemu -o "$D/x.qtr" -- "$TMP/script.sh"
same "no file left by any of them" "$(ls "$D" | grep -c '^x\.')" 0

# A thread: refused, since one trace is one core's instruction stream.
cat >"$TMP/thr.c" <<'EOF'
#include <pthread.h>
static void *run(void *p) { return p; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); return pthread_join(t, 0); }
EOF
cc -O1 -pthread -o "$TMP/thr" "$TMP/thr.c"
refuse "a second thread" 1 "^qosim trace: the program started a second thread \(guest CPU 1\); qosim runs one thread per program$" \
    "$QOSIM" trace record --engine qemu -o "$D/x.qtr" -- "$TMP/thr"
same "... no file" "$(ls "$D" | grep -c '^x\.')" 0

# Interrupted: the program is stopped and nothing is left.
mark=qosim-live-$$
env --default-signal "$QOSIM" trace record --engine qemu -o "$D/i.qtr" -- sh -c "while :; do :; done; : $mark" \
    >/dev/null 2>"$TMP/err" &
pid=$!
for t in $(seq 100); do [ -n "$(find "$D" -name '*.tmp.*' -size +0)" ] && break; sleep 0.1; done
kill -s INT $pid
wait $pid
same "SIGINT ends the recording by SIGINT" "$?" 130
same "... no file, no temporary" "$(ls "$D" | grep -c '^i\.')" 0
sleep 0.2
same "... the program is gone" "$(pgrep -f "$mark" | wc -l)" 0

# ---- live programs in a scenario ---------------------------------------------
cat >"$D/live.yaml" <<'EOF'
platform: intel-xeon
seed: 1
duration: 6ms
interval: 500us
settle: 1ms
tasks:
  - name: gzip
    cpu: 0
    workload: {program: [gzip, -6, -n, -c, big.txt], stdout: big.txt.gz}
  - name: sort
    cpu: 2
    workload: {program: [sort, -S, 16M, --parallel=1], stdin: in.txt, stdout: sorted.txt}
EOF
cp "$TMP/in.txt" "$D/in.txt"
cat "$D/in.txt" "$D/in.txt" "$D/in.txt" "$D/in.txt" >"$D/big.txt"
expect "two live programs" 0 "$QOSIM" run "$D/live.yaml" --json "$D/a.json"
cp "$TMP/out" "$TMP/table"
has "... sort ends, its task idle after" "$TMP/table" "^sort: exited with status 0 at [0-9.]+ ms; idle from then on; its output is in .*sorted.txt$"
claim "... and its output is sort's" cmp -s "$D/sorted.txt" <(sort -S 1M "$TMP/in.txt")
has "... gzip still runs at the end" "$TMP/table" "^gzip: still running at the end, stopped there; its output, cut short, was not kept \(.*big.txt.gz\)$"
same "... so no gzip output" "$(ls "$D" | grep -c 'big.txt.gz')" 0
has "... the JSON says when sort ended" "$D/a.json" '"end": "exited with status 0"'
expect "the same run again" 0 "$QOSIM" run "$D/live.yaml" --json "$D/b.json"
claim "... the same figures, to the last digit" cmp -s "$D/a.json" "$D/b.json"
sed -i 's/duration: 6ms/duration: 30ms/' "$D/live.yaml"
expect "long enough for gzip to end" 0 "$QOSIM" run "$D/live.yaml"
claim "... its output is gzip's" cmp -s <(gzip -dc "$D/big.txt.gz") "$D/big.txt"

# A live program and its recording replayed are one instruction stream: the
# simulated figures are the same. The program's environment is part of its
# input (it lies on its stack), so both runs get the same one: what a
# shell's cd gives (PWD), nothing from the caller.
clean() { (cd "$D" && env -i PATH=/usr/bin:/bin PWD="$(pwd -P)" "$@"); }
clean "$QOSIM" trace record --engine qemu -o sort.qtr -- sort -S 16M --parallel=1 <"$D/in.txt" >/dev/null 2>&1
cat >"$D/one.yaml" <<'EOF'
platform: intel-xeon
duration: 3ms
interval: 500us
settle: 0ms
tasks:
  - name: t
    cpu: 0
    workload: {program: [sort, -S, 16M, --parallel=1], stdin: in.txt}
EOF
sed 's/workload: .*/workload: {trace: sort.qtr, loop: false}/' "$D/one.yaml" >"$D/two.yaml"
clean "$QOSIM" run one.yaml --csv one.csv >/dev/null 2>&1
clean "$QOSIM" run two.yaml --csv two.csv >/dev/null 2>&1
claim "live and replayed: the same intervals" cmp -s "$D/one.csv" "$D/two.csv"
same "... of a program that ran" "$(awk -F, 'NR == 2 { print ($5 > 100000) }' "$D/one.csv")" 1

# ---- a scenario's bad programs ----------------------------------------------
bad() { # NAME WORKLOAD REGEX: the task's workload replaced; exit 2 at its line
    sed "s|workload: .*|workload: $2|" "$D/one.yaml" >"$D/bad.yaml"
    expect "$1" 2 "$QOSIM" run "$D/bad.yaml" --json "$D/bad.json"
    has "... at the workload's line: $3" "$TMP/err" "^qosim run: .*bad.yaml:8: .*$3"
}
bad "a program not on PATH" "{program: [no-such-prog, -x]}" "program 'no-such-prog' not found on PATH"
bad "a script" "{program: $TMP/script.sh}" "is a script; name its interpreter first"
printf 'not a program\n' >"$D/text.bin"
chmod +x "$D/text.bin"
bad "not an executable file" "{program: ./text.bin}" "is not an x86-64 ELF executable"
bad "an empty list" "{program: []}" "expected the program and its arguments"
bad "a map" "{program: {a: 1}}" "expected the program and its arguments"
bad "a missing stdin" "{program: [cat], stdin: nothing.txt}" "stdin: cannot open .*nothing.txt"
bad "a misspelt key" "{program: [cat], stdn: in.txt}" "stdn: unknown key \\(did you mean 'stdin'\\?\\)"
sed "s|workload: .*|workload: {program: [cat], stdout: no-dir/out.txt}|" "$D/one.yaml" >"$D/bad.yaml"
expect "a stdout in a missing directory" 1 "$QOSIM" run "$D/bad.yaml" --json "$D/bad.json"
has "... names the task and its line" "$TMP/err" "^qosim run: .*bad.yaml:8: task t: stdout: .*no-dir/out.txt"
same "... no JSON" "$(ls "$D" | grep -c 'bad.json')" 0
# Looks like a program, but QEMU cannot load it: an error naming the task.
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\002\000\076\000' >"$D/broken"
head -c 200 /dev/zero >>"$D/broken"
chmod +x "$D/broken"
sed "s|workload: .*|workload: {program: ./broken}|" "$D/one.yaml" >"$D/bad.yaml"
expect "a program QEMU cannot load" 1 "$QOSIM" run "$D/bad.yaml" --json "$D/bad.json"
has "... did not start, names the task" "$TMP/err" "^qosim run: .*bad.yaml:8: task t: the program did not start"
same "... no JSON" "$(ls "$D" | grep -c 'bad.json')" 0
sed "s|workload: .*|workload: {program: $TMP/thr}|" "$D/one.yaml" >"$D/bad.yaml"
expect "a second thread in a scenario" 1 "$QOSIM" run "$D/bad.yaml"
has "... names the task" "$TMP/err" "^qosim run: .*bad.yaml:8: task t: the program started a second thread"
# A program killed by a signal ends its task, with the signal in the table.
printf 'int main(void) { return *(volatile int *)0; }\n' >"$TMP/segv.c"
cc -O0 -o "$TMP/segv" "$TMP/segv.c"
sed "s|workload: .*|workload: {program: $TMP/segv}|" "$D/one.yaml" >"$D/bad.yaml"
expect "a program that crashes" 0 "$QOSIM" run "$D/bad.yaml"
has "... ended by its signal" "$TMP/out" "^t: killed by signal 11 \(Segmentation fault\) at [0-9.]+ ms; idle from then on$"
same "no temporaries left" "$(left)" ""
