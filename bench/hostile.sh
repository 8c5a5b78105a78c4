#!/bin/bash
# A hostile guest against the model (docs/security.md, "The guest"): what
# it can make the host's QEMU process do, measured.
#
#   bench/hostile.sh            # needs make vm vm-san (QEMU, both plugins)
#   PARTS=fuzz SAN_FUZZ=300000 bench/hostile.sh
#
# 1. Peak resident memory of QEMU (VmHWM, read from /proc while it runs) for
#    intel-xeon with 1 GiB of guest RAM: without the model; with it, the
#    guest idle; the guest writing QoS MSRs in a tight loop (FUZZ random
#    writes, default 20000); the guest touching all but 256 MiB of its RAM
#    (what its kernel and initramfs need) three times over (qosim-guest
#    stream --write); and once more with --memory 2G, to show what grows
#    with what.
# 2. The MSR fuzzer for longer, under the sanitizer build of the plugin, on
#    intel-xeon and amd-epyc-turin (SAN_FUZZ writes each, default 100000,
#    a few minutes each): no sanitizer report,
#    and every outcome the guest saw equal to the model console's own
#    (qosim regs) for the same writes, from the state the guest found.
# PARTS says which to run (default: "memory fuzz"). Prints Markdown for
# docs/performance.md; exits 1 if a check fails.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
Q=${QOSIM:-$top/build/qosim}
FUZZ=${FUZZ:-20000}
SAN_FUZZ=${SAN_FUZZ:-100000}
PARTS=${PARTS:-memory fuzz}
san=$top/build/vm/san/qosim-vm.so
[ -f "$san" ] || { echo "bench: $san missing (make vm-san)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/qosim-hostile.XXXXXX")
trap 'rm -rf "$W"' EXIT
source "$top/tests/e2e/msrfuzz.sh"
QOSIM=$Q
fail=0

# peak ARGS...: runs qosim vm ARGS, prints QEMU's peak RSS in MiB and the
# wall seconds, "-" when the run failed.
peak() {
    local t0 hwm=0 h q
    t0=$(date +%s)
    "$Q" vm "$@" >"$W/out" 2>"$W/err" &
    local pid=$!
    while kill -0 $pid 2>/dev/null; do
        q=$(pgrep -P $pid -f qemu-system-x86_64 | head -1)
        if [ -n "$q" ]; then
            h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$q/status" 2>/dev/null)
            [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
        fi
        sleep 0.2
    done
    if wait $pid; then
        echo "$((hwm / 1024)) $(($(date +%s) - t0))"
    else
        echo "- -"
        tail -5 "$W/out" "$W/err" >&2
    fi
}

case " $PARTS " in *" memory "*)
    echo "## A hostile guest: QEMU's peak memory"
    echo
    echo "intel-xeon, 4 vCPUs, \`qosim vm --platform intel-xeon --cmd ...\`; peak RSS is QEMU's VmHWM."
    echo
    echo "| guest | --memory | model | peak RSS (MiB) | wall (s) |"
    echo "|---|---|---|---|---|"
    row() { # row LABEL MEM MODEL ARGS...
        local label=$1 mem=$2 model=$3
        shift 3
        read -r mib secs < <(peak --platform intel-xeon --memory "$mem" "$@")
        echo "| $label | $mem | $model | $mib | $secs |"
        [ "$mib" != - ] || fail=1
    }
    row "idle (\`true\`)" 1G no --no-model --cmd true
    row "idle (\`true\`)" 1G yes --cmd true
    row "$FUZZ MSR writes in a loop" 1G yes \
        --cmd "modprobe msr; qosim-guest msrfuzz 0 1 $FUZZ $(msrfuzz_ranges intel-xeon) >/dev/null"
    row "touches 768 MiB, 3 passes" 1G yes --cmd 'qosim-guest stream --size 768M --passes 3 --write'
    row "touches 1792 MiB, 3 passes" 2G yes --cmd 'qosim-guest stream --size 1792M --passes 3 --write'
    echo

;; esac

case " $PARTS " in *" fuzz "*)
    echo "## A hostile guest: the MSR fuzzer under the sanitizers"
    echo
    echo "| platform | writes | taken | #GP | equal to qosim regs | sanitizer reports | wall (s) |"
    echo "|---|---|---|---|---|---|---|"
    for p in intel-xeon amd-epyc-turin; do
        t0=$(date +%s)
        san_vm "$san" "$Q" vm --platform $p --cmd "modprobe msr; qosim-guest msrfuzz 0 3 $SAN_FUZZ $(msrfuzz_ranges $p) | sed 's/^/fz /'" \
            >"$W/out" 2>"$W/err"
        rc=$?
        secs=$(($(date +%s) - t0))
        msrfuzz_replay "$W/out" $p "$W"
        n=$(grep -c '^wrmsr' "$W/fz.regs")
        taken=$(grep -c '^ok' "$W/fz.want")
        same=no
        cmp -s "$W/fz.want" "$W/fz.got" && same=yes
        reports=$(san_reports "$W/err" | wc -l)
        echo "| $p | $n | $taken | $((n - taken)) | $same | $reports | $secs |"
        [ $rc -eq 0 ] && [ "$n" -eq "$SAN_FUZZ" ] && [ $same = yes ] && [ "$reports" -eq 0 ] || fail=1
    done
;; esac
exit $fail
