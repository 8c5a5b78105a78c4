#!/bin/bash
# Runs the unit tests (cmocka) and the end-to-end CLI tests against one or
# more build directories, in one pool of test files run several at a time,
# and writes each build's "PASSED FAILED" to build/results/NAME (NAME: the
# build directory with / as -), replacing what an earlier run of the same
# build left there, so totals never pile up.
#   tests/run.sh [--e2e-once] BUILD_DIR...
# --e2e-once: the unit tests still run against every build, but each
# end-to-end file against one: a file that boots the release build's guest
# (it sources tests/e2e/vm.sh, which skips itself in a sanitized build)
# against the first build with a guest (BUILD_DIR/vm/qemu-system-x86_64),
# every other file against the last build named. `make check` names the
# sanitized build last, so each end-to-end check runs once, with ASan and
# UBSan watching; test_parity.sh there holds the release build to the
# sanitized build's outputs.
# JOBS sets how many test files run at once (default: the processors);
# RESULTS another folder for the totals; E2E the end-to-end files to run
# (default: tests/e2e/test_*.sh).
# Every file's output is kept and printed in a fixed order, so the log reads
# the same however the jobs were scheduled.
set -u
once=0
[ "${1-}" = --e2e-once ] && { once=1; shift; }
[ $# -gt 0 ] || { echo "usage: tests/run.sh [--e2e-once] BUILD_DIR..." >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
results=${RESULTS:-build/results}
mkdir -p "$results"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/qosim-tests.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT
# Each job is "BUILD FILE". The slow files first, longest first as a fresh
# clone's suite timed them (a sanitizer build's run of a file before the
# normal one's), then the rest, sanitizer builds first, so the pool does
# not end waiting on one of them.
slow="tests/e2e/test_vm_intel_xeon.sh tests/e2e/test_qos.sh tests/e2e/test_bandwidth.sh tests/e2e/test_vm_amd_bmec.sh tests/e2e/test_vm_amd_epyc.sh tests/e2e/test_vm_cli.sh tests/e2e/test_run.sh tests/e2e/test_cachegrind.sh tests/e2e/test_agree.sh tests/e2e/test_vm_mba_cfg.sh tests/e2e/test_amd_qos.sh tests/e2e/test_io.sh tests/e2e/test_sweep.sh tests/e2e/test_sweep_slurm.sh tests/e2e/test_vm_san.sh tests/e2e/test_parity.sh"
last=${!#} guest=
for b in "$@"; do [ -z "$guest" ] && [ -x "$b/vm/qemu-system-x86_64" ] && guest=$b; done
# runs_here BUILD FILE: whether an end-to-end FILE runs against BUILD.
runs_here() {
    [ $once -eq 1 ] || return 0
    if grep -q 'vm\.sh' "$2"; then [ "$1" = "${guest:-$last}" ]; else [ "$1" = "$last" ]; fi
}
list=()
for b in "$@"; do
    # shellcheck disable=SC2086
    for t in ${E2E-$slow tests/e2e/test_*.sh} "$b"/tests/test_*; do
        [ -f "$t" ] && { [ "${t%.sh}" != "$t" ] || [ -x "$t" ]; } || continue
        [ "${t%.sh}" = "$t" ] || runs_here "$b" "$t" || continue
        case " ${list[*]-} " in *" $b:$t "*) continue ;; esac
        list+=("$b:$t")
    done
done
order=()
builds=$(printf '%s\n' "$@" | sort -r) # build/san before build
for t in $slow; do
    for b in $builds; do
        case " ${list[*]-} " in *" $b:$t "*) order+=("$b:$t") ;; esac
    done
done
for b in $builds; do
    for j in "${list[@]}"; do
        [ "${j%%:*}" = "$b" ] || continue
        case " ${order[*]-} " in *" $j "*) ;; *) order+=("$j") ;; esac
    done
done

run_one() { # BUILD FILE OUT: one test file against BUILD's qosim; output in OUT, status in OUT.rc
    local b=$1 t=$2 out=$3 start=$SECONDS
    if [ "${t%.sh}" != "$t" ]; then
        case $b in /*) q=$b/qosim ;; *) q=$top/$b/qosim ;; esac
        QOSIM=$q bash "$t" >"$out" 2>&1
    else
        "$t" >"$out" 2>&1
    fi
    echo "$? $((SECONDS - start))" >"$out.rc"
}

declare -A slot
i=0
for j in "${order[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run_one "${j%%:*}" "${j#*:}" "$scratch/$i" &
    slot[$j]=$i
    i=$((i + 1))
done
wait

status=0
for b in "$@"; do
    pass=0 fail=0
    printf '== %s: test files run %d at a time\n' "$b" "$jobs"
    for j in "${list[@]}"; do
        [ "${j%%:*}" = "$b" ] || continue
        t=${j#*:}
        out=$scratch/${slot[$j]}
        read -r rc secs <"$out.rc"
        if [ "${t%.sh}" != "$t" ]; then
            p=$(grep -c '^ok ' "$out")
            f=$(grep -c '^not ok ' "$out")
            grep -A8 '^not ok ' "$out" | head -40
        else
            # cmocka's stdout and stderr interleave: find its totals anywhere on a line.
            p=$(grep -o '\[  PASSED  \] [0-9]* test' "$out" | tail -1 | tr -dc 0-9)
            f=$(grep -o '\[  FAILED  \] [0-9]* test' "$out" | tail -1 | tr -dc 0-9)
            p=${p:-0} f=${f:-0}
            [ "$f" -ne 0 ] || [ "$rc" -ne 0 ] && grep -E 'FAIL|ERROR|error|Assert|Sanitizer' "$out" | head -20
        fi
        [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 # a crash or abort counts as a failure
        echo "$(basename "$t"): $p passed, $f failed (${secs}s)"
        pass=$((pass + p)) fail=$((fail + f))
    done

    if [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ]; then
        echo "$b: no test ran (is it built?)"
        fail=1
    fi
    echo "$pass $fail" >"$results/$(printf '%s' "$b" | tr / -)"
    echo "$b: $pass passed, $fail failed"
    [ "$fail" -eq 0 ] || status=1
done
exit $status
