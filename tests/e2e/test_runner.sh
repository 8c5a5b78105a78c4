#!/bin/bash
# The suite's own runner: totals are replaced at every run, never added to
# what an earlier run left (make test twice printed twice the count), a
# failing or crashing test file counts as failed, and the closing line is
# the sum over the suites.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

# A build folder with two fake unit tests: one passes 3, one fails 1 of 2.
mkdir -p "$TMP/b/tests"
printf '#!/bin/sh\necho "[  PASSED  ] 3 test(s)."\n' >"$TMP/b/tests/test_good"
printf '#!/bin/sh\necho "[  PASSED  ] 1 test(s)."\necho "[  FAILED  ] 1 test(s)."\nexit 1\n' \
    >"$TMP/b/tests/test_bad"
chmod +x "$TMP/b/tests/test_good" "$TMP/b/tests/test_bad"
res=$TMP/res/$(printf '%s' "$TMP/b" | tr / -)
for n in 1 2; do
    RESULTS=$TMP/res E2E= JOBS=2 "$top/tests/run.sh" "$TMP/b" >"$TMP/run$n.out" 2>&1
    rc=$?
    same "run $n exits 1 (a test failed)" "$rc" 1
    same "run $n: the build's totals" "$(cat "$res")" "4 1"
    same "run $n: the closing line" "$(RESULTS=$TMP/res "$top/tests/summary.sh")" "4 passed, 1 failed"
done
has "each file's count is printed" "$TMP/run2.out" '^test_bad: 1 passed, 1 failed'

# A crash with no cmocka totals is a failure, not a silent zero.
printf '#!/bin/sh\nkill -SEGV $$\n' >"$TMP/b/tests/test_crash"
chmod +x "$TMP/b/tests/test_crash"
RESULTS=$TMP/res E2E= "$top/tests/run.sh" "$TMP/b" >"$TMP/run3.out" 2>&1
same "a crash counts as a failed test" "$(cat "$res")" "4 2"

# A build with no test at all is a failure, not "0 passed, 0 failed".
mkdir -p "$TMP/empty"
RESULTS=$TMP/res2 E2E= "$top/tests/run.sh" "$TMP/empty" >"$TMP/run4.out" 2>&1
same "a build with no test fails" "$?" 1
same "its closing line counts a failure" "$(RESULTS=$TMP/res2 "$top/tests/summary.sh")" "0 passed, 1 failed"

# --e2e-once: unit tests against every build, each end-to-end file against
# one: a guest's (a file sourcing vm.sh) against the first build with a
# guest, the others against the last build named. Fake files count 2 and 5.
for d in a b; do
    mkdir -p "$TMP/o/$d/tests"
    cp "$TMP/b/tests/test_good" "$TMP/o/$d/tests/"
done
mkdir -p "$TMP/o/a/vm" "$TMP/o/e2e"
printf '#!/bin/sh\n' >"$TMP/o/a/vm/qemu-system-x86_64"
chmod +x "$TMP/o/a/vm/qemu-system-x86_64"
printf ': vm.sh\necho "ok 1 $QOSIM"; echo "ok 2 $QOSIM"\n' >"$TMP/o/e2e/test_vm_x.sh"
printf 'for i in 1 2 3 4 5; do echo "ok $i $QOSIM"; done\n' >"$TMP/o/e2e/test_y.sh"
once() { # [--e2e-once]: the totals of builds a and b
    RESULTS=$TMP/res3 E2E="$TMP/o/e2e/test_vm_x.sh $TMP/o/e2e/test_y.sh" JOBS=2 \
        "$top/tests/run.sh" "$@" "$TMP/o/a" "$TMP/o/b" >"$TMP/run5.out" 2>&1
    echo "$(cat "$TMP/res3/$(printf '%s' "$TMP/o/a" | tr / -)") $(cat "$TMP/res3/$(printf '%s' "$TMP/o/b" | tr / -)")"
}
same "without --e2e-once every file runs against both builds" "$(once)" "10 0 10 0"
same "--e2e-once: the guest's file against a (it has one), the other against b (last)" \
    "$(once --e2e-once)" "5 0 8 0"
rm -rf "$TMP/o/a/vm"
same "--e2e-once with no guest anywhere: every end-to-end file against the last build" \
    "$(once --e2e-once)" "3 0 10 0"
