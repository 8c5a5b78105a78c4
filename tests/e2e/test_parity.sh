#!/bin/bash
# The release build and the sanitized build give the same results. `make
# check` runs each end-to-end file once, against the sanitized build
# (tests/run.sh --e2e-once); this file holds the release build to exactly
# its outputs: every example scenario and every scenario of tests/e2e/qos,
# at a tenth of its length (times in duration, interval, settle and at
# divided by 10), their JSON compared byte for byte. A difference would be
# code whose result depends on optimisation: undefined behaviour UBSan does
# not see, or a read of memory never written.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(cd "$(dirname "$QOSIM")" && pwd)
case $dir in
*/san) other=${dir%/san}/qosim ;;
*) other=$dir/san/qosim ;;
esac
if [ ! -x "$other" ]; then
    echo "# no second build beside $QOSIM ($other): nothing to compare"
    exit 0
fi
# tenth FILE: FILE with every duration, interval, settle and at divided by
# 10 (in nanoseconds), in block and in flow style.
tenth() {
    perl -pe 's{\b(duration|interval|settle|at):(\s*)([0-9.]+)(ns|us|ms|s)?\b}{
        my %f = (ns => 1, us => 1e3, ms => 1e6, s => 1e9);
        "$1:$2" . int($3 * $f{$4 // "s"} / 10) . "ns" }ge' "$1"
}
# The scenarios and, beside them, the profiles they name (tests/e2e/qos,
# and xeon-bytes.yaml, which the tests make).
for f in "$top"/tests/e2e/qos/*.yaml; do
    grep -q '^name:' "$f" && cp "$f" "$TMP/"
done
xeon_bytes "$TMP"
n=0
for f in "$top"/examples/*.yaml "$top"/tests/e2e/qos/*.yaml; do
    grep -q '^name:' "$f" && continue                 # a profile
    grep -q 'program:\|live:' "$f" && continue        # real programs: not repeatable
    grep -q '^axes:' "$f" && continue                 # a sweep file (test_sweep.sh)
    b=$(basename "$f" .yaml)
    tenth "$f" >"$TMP/$b.yaml"
    "$QOSIM" run "$TMP/$b.yaml" --quiet --json "$TMP/$b.a.json" 2>"$TMP/$b.a.err"
    ra=$?
    "$other" run "$TMP/$b.yaml" --quiet --json "$TMP/$b.b.json" 2>"$TMP/$b.b.err"
    rb=$?
    if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
        notok "$b at a tenth: both builds run it" "exit $ra and $rb" "$(head -3 "$TMP/$b.a.err")"
    elif cmp -s "$TMP/$b.a.json" "$TMP/$b.b.json"; then
        ok "$b at a tenth: $QOSIM and $other write the same JSON"
    else
        notok "$b at a tenth: $QOSIM and $other write the same JSON" \
            "$(diff "$TMP/$b.a.json" "$TMP/$b.b.json" | head -6)"
    fi
    n=$((n + 1))
done
claim "every scenario was compared ($n of them)" ge "$n" 25 1
