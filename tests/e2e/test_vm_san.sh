#!/bin/bash
# The whole guest with the model under ASan and UBSan: the sanitizer build's
# test boots intel-xeon and amd-epyc-turin (BMEC, ABMC, SMBA, and a CXL
# node the guest sees as NUMA node 1) with the plugin built sanitized
# (make vm-san), the sanitizer runtimes preloaded into QEMU, and a guest
# that exercises the QoS registers, CPUID and the caches, then writes
# random values to every QoS MSR as a hostile guest would (qosim-guest
# msrfuzz, docs/security.md). Any sanitizer report fails it; the runtimes'
# warnings about QEMU's coroutines do not. The caches run under the
# sanitizers for the streams (the region the guest marks, --from-mark);
# pqos and the fuzzer's MSR accesses, which only the registers answer, run
# at QEMU's speed. Every outcome the guest saw
# (each write's #GP or not, each read-back) is what the model's own console
# answers to the same writes (qosim regs).
source "$(dirname "$0")/lib.sh"
case $QOSIM in */san/*) ;; *)
    echo "# the sanitized whole guest runs in the sanitizer build's pass only"
    exit 0 ;;
esac
top=$(cd "$(dirname "$0")/../.." && pwd)
plugin=$top/build/vm/san/qosim-vm.so
[ -f "$plugin" ] || { notok "the sanitized plugin is built (make vm-san)" "no $plugin"; exit 0; }
source "$(dirname "$0")/msrfuzz.sh"
for p in intel-xeon amd-epyc-turin; do
    guest='qosim-guest sim on; R=/sys/fs/resctrl; mount -t resctrl -o cdp resctrl $R; mkdir $R/g
echo "L3DATA:0=3" > $R/g/schemata; echo "MB:0=50" > $R/g/schemata
taskset -c 1 sh -c "echo \$\$ > $R/g/tasks; exec qosim-guest stream --size 8M --passes 2 --write"
[ ! -d /sys/devices/system/node/node1 ] || qosim-guest stream --size 4M --passes 1 --node 1
cat $R/g/mon_data/mon_L3_00/*; qosim-guest sim off; umount $R; modprobe msr
qosim-guest rdmsr 0 0xdff; qosim-guest wrmsr 0 0xc9f 0x10000; pqos --iface=msr -d >/dev/null
qosim-guest msrfuzz 0 7 1000 '$(msrfuzz_ranges $p)' | sed "s/^/fz /"
exit 6'
    san_vm "$plugin" timeout -k 10 900 "$QOSIM" vm --platform $p --from-mark --cmd "$guest" \
        >"$TMP/out" 2>"$TMP/err"
    same "$p: the sanitized model runs the guest to its exit status" "$?" 6
    if san_reports "$TMP/err" >"$TMP/reports"; then
        notok "$p: no sanitizer report" "$(head -3 "$TMP/reports")"
    else
        ok "$p: no sanitizer report"
    fi
    # The guest's 1000 writes and read-backs, replayed on the console.
    msrfuzz_replay "$TMP/out" $p "$TMP"
    same "$p: the MSR fuzzer made its 1000 writes" "$(grep -c '^wrmsr' "$TMP/fz.regs")" 1000
    n_ok=$(grep -c '^ok' "$TMP/fz.want")
    claim "$p: ... of which some are taken ($n_ok) and some #GP" test "$n_ok" -ge 100 -a "$n_ok" -le 900
    if cmp -s "$TMP/fz.want" "$TMP/fz.got"; then
        ok "$p: every outcome the hostile guest saw is the model console's own for the same writes"
    else
        notok "$p: every outcome the hostile guest saw is the model console's own for the same writes" \
            "$(diff "$TMP/fz.want" "$TMP/fz.got" | head -4)"
    fi
done
