# Helpers for end-to-end tests: TAP-like "ok NAME" / "not ok NAME" lines that
# tests/run.sh counts. $QOSIM is the binary under test.
: "${QOSIM:?QOSIM must name the qosim binary}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# other_user: as root, makes a user of this test's own (qosim-tPID: a
# system user with no home and no login shell), removed when the test
# ends, and sets OTHER_UID and OTHER, the prefix that runs a command as
# that user. Status 1, and nothing made, where it cannot (not root, no
# useradd or setpriv).
other_user() {
    [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null || return 1
    local name=qosim-t$$ _
    for _ in $(seq 20); do # another test file may hold /etc/passwd's lock
        useradd --system --no-create-home --shell /usr/sbin/nologin --user-group "$name" 2>/dev/null && break
        sleep 0.2
    done
    OTHER_UID=$(id -u "$name" 2>/dev/null) || return 1
    trap 'rm -rf "$TMP"; userdel "'"$name"'" 2>/dev/null' EXIT
    OTHER="setpriv --reuid=$OTHER_UID --regid=$(id -g "$name") --clear-groups"
}
DATA=$(cd "$(dirname "${BASH_SOURCE[0]}")/../data" && pwd)

# xeon_bytes DIR: DIR/xeon-bytes.yaml, intel-xeon with MBM's conversion
# factor 1 (bytes), the profile tests/e2e/qos/mbm-xeon.yaml names.
xeon_bytes() { "$QOSIM" profiles show intel-xeon | sed 's/^\(    scale:\) *64.*/\1 1/' >"$1/xeon-bytes.yaml"; }

ok() { echo "ok $*"; }
notok() { echo "not ok $1"; shift; [ $# -gt 0 ] && printf '  %s\n' "$@"; }

# expect NAME WANT_RC CMD... : runs CMD, keeps stdout in $TMP/out and stderr in $TMP/err.
expect() {
    local name=$1 want=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$name"; else notok "$name" "exit $rc, wanted $want" "$(head -5 "$TMP/err")"; fi
}

# has NAME FILE REGEX : FILE contains a line matching REGEX.
has() {
    if grep -qE -- "$3" "$2"; then ok "$1"; else notok "$1" "no line matching '$3' in:" "$(head -5 "$2")"; fi
}

# same NAME A B : A equals B.
same() {
    if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "got '$2'" "want '$3'"; fi
}

# ge A B FACTOR: A >= B * FACTOR.   near A B TOL: |A - B| <= TOL * B.
ge() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a >= b * f) }'; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * b) }'; }
# claim NAME CMD...: ok when CMD succeeds.
claim() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else notok "$name"; fi
}
# col TABLE PHASE TASK N: the Nth figure after the task's name in its row of
# the table `qosim run` prints (1 IPC, 2 LLC MPKI, 3 LLC MiB, 4 rd GB/s,
# 5 wr GB/s, then with monitoring 6 RMID, 7 CMT MiB, 8 MBM GB/s).
col() {
    awk -v ph="$2" -v t="$3" -v n="$4" 'NR > 3 && NF >= 6 {
        if ($2 ~ /^[0-9.]+$/) o = 1; else { cur = $1; o = 2 }
        if (cur == ph && $o == t) print $(o + n) }' "$1"
}

# For the tests that compare two runs of an outside program (valgrind, QEMU),
# which must see the same world to run the same instructions:
# fixed ENV IN OUT ERR CMD...: CMD with descriptors 0-2 only (IN, OUT, ERR;
# nothing inherited from whoever started the test), in $TMP/cwd, with
# exactly the environment in the array named ENV.
fixed() {
    local -n e=$1
    local in=$2 out=$3 err=$4
    shift 4
    (
        for f in "/proc/$BASHPID/fd/"*; do
            fd=${f##*/}
            [ "$fd" -gt 2 ] && [ -e "$f" ] && exec {fd}>&-
        done
        cd "$TMP/cwd" || exit 1
        exec env -i "${e[@]}" "$@" <"$in" >"$out" 2>"$err"
    )
}
# The nine counts of a cachegrind output file, and of cachesim --json, in
# the same order.
cg_counts() { sed -n 's/^summary: //p' "$1" | awk '{ $1 = $1; print }'; }
q_counts() {
    awk -F'[":, ]+' '{ v[$2] = $3 } END {
        print v["Ir"], v["I1mr"], v["ILmr"], v["Dr"], v["D1mr"], v["DLmr"], v["Dw"], v["D1mw"], v["DLmw"] }'
}
