#!/bin/bash
# End-to-end tests of the qosim command line: results on hand-made traces,
# every kind of bad input, and trace recording.
. "$(dirname "$0")/lib.sh"

G="--I1=1024,2,64 --D1=1024,2,64 --LL=4096,4,64"

# counts FILE: the nine cachegrind events of a --json output, space-separated.
counts() {
    awk -F'[":, ]+' '{ v[$2] = $3 } END {
        print v["Ir"], v["I1mr"], v["ILmr"], v["Dr"], v["D1mr"], v["DLmr"], v["Dw"], v["D1mw"], v["DLmw"] }' "$1"
}

# small.lackey, by hand with 64-byte lines and empty caches:
#   I 1000 miss, I 1004 hit, I 1008 hit, I 103e,4 straddles 1000/1040: one
#   ref, one miss (1040), in I1 and LL: Ir 4 I1mr 2 ILmr 2.
#   L 2000 miss, S 2000 hit, M 3000 miss (counted as a read), L 203c,8
#   straddles 2000/2040: one miss: Dr 3 D1mr 3 DLmr 3 Dw 1 D1mw 0 DLmw 0.
want_small="4 2 2 3 3 3 1 0 0"
expect "lackey trace runs" 0 "$QOSIM" cachesim --json $G "$DATA/small.lackey"
same "lackey counts by hand" "$(counts "$TMP/out")" "$want_small"
has "json has the record count" "$TMP/out" '"records": 8'
expect "din trace runs" 0 "$QOSIM" cachesim --json $G "$DATA/small.din"
same "din counts by hand (same accesses, M written as r)" "$(counts "$TMP/out")" "$want_small"
has "format guessed from .din" "$TMP/out" '"format": "din"'
# small.champsim: I 1000, L 2000, I 1004 (taken branch), I 1040, L 3000, S 2000:
#   Ir 3 I1mr 2 ILmr 2; Dr 2 D1mr 2 DLmr 2; Dw 1, a hit.
expect "champsim trace runs" 0 "$QOSIM" cachesim --json $G "$DATA/small.champsim"
same "champsim counts by hand" "$(counts "$TMP/out")" "3 2 2 2 2 2 1 0 0"
expect "champsim .xz runs" 0 "$QOSIM" cachesim --json $G "$DATA/small.champsim.xz"
same "champsim .xz = plain" "$(counts "$TMP/out")" "3 2 2 2 2 2 1 0 0"
# small.lackey as qtr, encoded by hand (docs/traces.md, "qtr"): 24 80 40 is
# I 1000 (zigzag 0x2000 from 0), 59 80 80 01 L 2000 from an empty slot, 04 I
# 1004, 9a 00 S 2000 at the previous data address, 04 I 1008, da 80 40 M 3000
# (+0x1000), 24 64 I 103e (+0x32), 5a 87 3f L 203c (-0xfc4).
printf 'QTR\032\001\044\200\100\131\200\200\001\004\232\000\004\332\200\100\044\144\132\207\077' >"$TMP/small.qtr"
expect "qtr trace runs" 0 "$QOSIM" cachesim --json $G "$TMP/small.qtr"
same "qtr counts = lackey" "$(counts "$TMP/out")" "$want_small"
has "format guessed from .qtr" "$TMP/out" '"format": "qtr"'
zstd -q -c "$TMP/small.qtr" >"$TMP/small.qtr.zst"
expect "zstd qtr runs" 0 "$QOSIM" cachesim --json $G "$TMP/small.qtr.zst"
same "zstd qtr = plain" "$(counts "$TMP/out")" "$want_small"
head -c 20 "$TMP/small.qtr" >"$TMP/trunc.qtr"
expect "truncated qtr" 1 "$QOSIM" cachesim --skip-bad "$TMP/trunc.qtr"
has "qtr truncation located" "$TMP/err" 'trunc.qtr:byte 19: truncated qtr item \(tag 0x24\): the stream ends after 1 of its bytes'
"$QOSIM" cachesim --json $G - <"$DATA/small.lackey" >"$TMP/stdin.json"
same "standard input via -" "$(counts "$TMP/stdin.json")" "$want_small"
xz -c "$DATA/small.lackey" | "$QOSIM" cachesim --json $G - >"$TMP/xzstdin.json"
same "xz on standard input" "$(counts "$TMP/xzstdin.json")" "$want_small"
zstd -q -c "$DATA/small.lackey" | "$QOSIM" cachesim --json $G - >"$TMP/zststdin.json"
same "zstd on standard input" "$(counts "$TMP/zststdin.json")" "$want_small"
expect "--format=din on a file named otherwise" 0 "$QOSIM" cachesim --json --format din $G - <"$DATA/small.din"
same "--format din counts" "$(counts "$TMP/out")" "$want_small"

# The text summary: cachegrind's lines.
expect "text summary" 0 "$QOSIM" cachesim $G "$DATA/small.lackey"
has "summary I refs" "$TMP/out" '^I   refs:      4$'
has "summary D refs split" "$TMP/out" '^D   refs:      4  \(3 rd   \+ 1 wr\)$'
has "summary LL misses" "$TMP/out" '^LL misses:     5  \(5 rd   \+ 0 wr\)$'
has "summary D1 miss rate" "$TMP/out" '^D1  miss rate: 75.0% \(100.0%     \+ 0.0%  \)$'

# Writebacks: a store's line evicted dirty from a 1-set 2-way D1 is one writeback.
printf ' S 00001000,8\n L 00002000,8\n L 00003000,8\n' >"$TMP/wb.lackey"
expect "writeback counted" 0 "$QOSIM" cachesim --json --I1=1024,2,64 --D1=128,2,64 --LL=4096,4,64 "$TMP/wb.lackey"
has "D1 writebacks = 1" "$TMP/out" '"writebacks": 1'

# Other models run and say so.
for p in plru srrip; do
    expect "--policy=$p runs" 0 "$QOSIM" cachesim --json --policy=$p $G "$DATA/small.lackey"
    has "--policy=$p reported" "$TMP/out" "\"policy\": \"$p\""
done
expect "--L2 adds a level" 0 "$QOSIM" cachesim --json --L2=2048,4,64 $G "$DATA/small.lackey"
has "L2 misses reported" "$TMP/out" '"D2mr": 3'
expect "--inclusion=inclusive runs" 0 "$QOSIM" cachesim --inclusion=inclusive --writeback=propagate $G "$DATA/small.lackey"

# Bad flags and geometry: exit 2 with the reason.
expect "unknown option" 2 "$QOSIM" cachesim --bogus "$DATA/small.lackey"
has "unknown option named" "$TMP/err" "unknown option '--bogus'"
expect "set count not a power of two" 2 "$QOSIM" cachesim --I1=3072,2,64 "$DATA/small.lackey"
has "set count reason" "$TMP/err" 'I1.*not a power-of-two number of sets'
expect "line not a power of two" 2 "$QOSIM" cachesim --D1=3072,1,48 "$DATA/small.lackey"
has "line reason" "$TMP/err" 'line size 48 is not a power of two|power-of-two number of sets'
expect "line below 16" 2 "$QOSIM" cachesim --LL=4096,4,8 "$DATA/small.lackey"
has "line below 16 reason" "$TMP/err" 'line size 8 is below 16'
expect "geometry syntax" 2 "$QOSIM" cachesim --D1=32768,8 "$DATA/small.lackey"
has "geometry syntax reason" "$TMP/err" 'expected SIZE,ASSOC,LINE'
# cachegrind checks the set count first, so more ways than lines fails there.
expect "assoc > size/line" 2 "$QOSIM" cachesim --D1=1024,32,64 "$DATA/small.lackey"
has "assoc reason" "$TMP/err" 'D1: size 1024 / \(line 64 x assoc 32\) is not a power-of-two number of sets'
expect "unknown policy" 2 "$QOSIM" cachesim --policy=fifo "$DATA/small.lackey"
expect "plru needs power-of-two ways" 2 "$QOSIM" cachesim --policy=plru --LL=6144,3,64 "$DATA/small.lackey"
has "plru reason" "$TMP/err" 'power-of-two associativity'
expect "inclusion needs one line size" 2 "$QOSIM" cachesim --inclusion=inclusive --D1=1024,2,32 "$DATA/small.lackey"
expect "unknown format" 2 "$QOSIM" cachesim --format=pin "$DATA/small.lackey"
expect "missing value" 2 "$QOSIM" cachesim "$DATA/small.lackey" --format
expect "no trace file" 2 "$QOSIM" cachesim --json
expect "two trace files" 2 "$QOSIM" cachesim "$DATA/small.lackey" "$DATA/small.din"
expect "missing file" 1 "$QOSIM" cachesim "$TMP/nope.lackey"
has "missing file named" "$TMP/err" 'nope.lackey: cannot open'
expect "unknown command" 2 "$QOSIM" frobnicate
expect "--version" 0 "$QOSIM" --version
has "version printed" "$TMP/out" '^qosim [0-9]+\.[0-9]+\.[0-9]+$'
expect "cachesim --help" 0 "$QOSIM" cachesim --help
has "help names the options" "$TMP/out" '--skip-bad'

# Bad trace data: FILE:LINE: what, exit 1, nothing on standard output.
{ head -3 "$DATA/small.lackey"; echo ' X 00001000,4'; tail -n +4 "$DATA/small.lackey"; } >"$TMP/bad.lackey"
expect "malformed lackey line" 1 "$QOSIM" cachesim $G "$TMP/bad.lackey"
has "malformed line located" "$TMP/err" "bad.lackey:4: malformed lackey record \" X 00001000,4\""
same "no partial output" "$(wc -c <"$TMP/out")" "0"
expect "--skip-bad goes on" 0 "$QOSIM" cachesim --json --skip-bad $G "$TMP/bad.lackey"
same "--skip-bad: the good records count" "$(counts "$TMP/out")" "$want_small"
has "--skip-bad reported" "$TMP/out" '"skipped": 1'
has "--skip-bad warns with the first location" "$TMP/err" 'skipped 1 malformed records \(first at .*bad.lackey:4\)'
printf 'r 1000 4\nx 2000 4\n' >"$TMP/bad.din"
expect "malformed din line" 1 "$QOSIM" cachesim "$TMP/bad.din"
has "din error located" "$TMP/err" "bad.din:2: malformed din record"
head -c 100 "$DATA/small.champsim" >"$TMP/trunc.champsim"
expect "truncated champsim record" 1 "$QOSIM" cachesim "$TMP/trunc.champsim"
has "truncation located" "$TMP/err" 'trunc.champsim:record 2: truncated ChampSim record: 36 of 64 bytes at byte offset 64'
expect "truncated champsim with --skip-bad" 0 "$QOSIM" cachesim --skip-bad --json $G "$TMP/trunc.champsim"
has "first record still counted" "$TMP/out" '"Ir": 1,'
head -c 60 "$DATA/small.champsim.xz" >"$TMP/trunc.champsim.xz"
expect "truncated .xz" 1 "$QOSIM" cachesim "$TMP/trunc.champsim.xz"
has "truncated .xz named" "$TMP/err" 'trunc.champsim.xz:.*truncated .xz stream'
{ head -c 40 "$DATA/small.champsim.xz"; printf 'XXXXXXXX'; tail -c +49 "$DATA/small.champsim.xz"; } >"$TMP/corrupt.champsim.xz"
expect "corrupt .xz" 1 "$QOSIM" cachesim "$TMP/corrupt.champsim.xz"
has "corrupt .xz named" "$TMP/err" 'corrupt.champsim.xz:.*(corrupt|truncated) .xz'
head -c 5000 /dev/urandom >"$TMP/noise.lackey"
expect "binary noise as lackey" 1 "$QOSIM" cachesim "$TMP/noise.lackey"

# Recording.
expect "record without valgrind" 1 env PATH=/nonexistent "$QOSIM" trace record -o "$TMP/x.lackey" -- /bin/true
has "missing valgrind explained" "$TMP/err" 'valgrind not found.*apt-get install valgrind'
expect "record a missing program" 1 "$QOSIM" trace record -o "$TMP/y.lackey" -- /nonexistent/prog
same "no trace left behind" "$(ls "$TMP" | grep -c '^y\.lackey')" "0"
expect "record without a program" 2 "$QOSIM" trace record -o "$TMP/z.lackey"
if command -v valgrind >/dev/null; then
    expect "record /bin/true to .xz" 0 "$QOSIM" trace record -o "$TMP/true.lackey.xz" -- /bin/true
    expect "record /bin/true plain" 0 "$QOSIM" trace record -o "$TMP/true.lackey" -- /bin/true
    "$QOSIM" cachesim --json "$TMP/true.lackey" >"$TMP/a.json"
    "$QOSIM" cachesim --json "$TMP/true.lackey.xz" >"$TMP/b.json"
    same ".xz recording replays the same" "$(counts "$TMP/b.json")" "$(counts "$TMP/a.json")"
    has "a real program has instructions" "$TMP/a.json" '"Ir": [1-9][0-9]{4,}'
    expect "record a failing program keeps the trace" 0 "$QOSIM" trace record -o "$TMP/false.lackey" -- /bin/false
    has "failing status reported" "$TMP/err" 'exited with status 1'
fi
