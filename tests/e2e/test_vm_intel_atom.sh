#!/bin/bash
# Stock Linux on intel-atom (profiles/intel-atom.yaml) under `qosim vm`: L2
# CAT with CDP and no L3, as resctrl and pqos find it.
source "$(dirname "$0")/vm.sh"
PLAT=intel-atom
vm_boot $PLAT 'sh /tests/qos.sh cdpl2; sh /tests/pqos.sh l2'

has "$PLAT: the boot log shows resctrl's L2 allocation detected" "$TMP/guest" "^fact dmesg resctrl:_L2_allocation_detected"
same "$PLAT: nothing else is detected" "$(grep -c '^fact dmesg' "$TMP/guest")" 1
# Only registers are checked here, so no region of interest is marked
# (--from-mark): the model's caches never ran.
has "$PLAT: the report says simulation was to start at the guest's mark" "$TMP/report.json" '"from": "mark",'
has "$PLAT: ... and, with no mark, that it never did" "$TMP/report.json" '"simulating": false,'
want mount 0
# L2: cbm_len 18, 8 classes; one L2 per module of 4 cores.
want L2/cbm_mask 3ffff
want L2/min_cbm_bits 1
want L2/num_closids 8
want L2/shareable_bits 0
same "$PLAT: no L3, MB or monitoring info" "$(grep -cE '^fact (L3|MB|L3_MON)/' "$TMP/guest")" 0
want mount_cdp 0
want cdp.L2DATA/num_closids 4
want cdp.L2CODE/num_closids 4
want write.l2_wide "1:Mask_out_of_range"
want write.l2_ok "0:ok"
want read.l2 "L2:0=0000c"
want g1.cos 1
same "$PLAT: IA32_L2_QOS_MASK_1" "$(num "$(fact msr.l2mask)")" 12
same "$PLAT: an absent QoS MSR is #GP in the guest (the msr driver's EIO)" "$(fact msr.absent_rc)" 3
check_cpuid
check_pqos 0x3ffff
want os_e.schemata "L2:0=00007"

# Without --cmd: a shell on the terminal, and the console on the running
# guest's model (qosim vm --console, qosim regs --attach), in one boot.
# Typed lines go to the shell once its prompt is there (the terminal echoes
# them, so what is awaited is what only running them prints); what the
# guest's resctrl wrote, the console reads; what the console writes, the
# guest's rdmsr reads: one model behind both; `poweroff N` ends the VM with
# status N.
sock=$TMP/console.sock
mkfifo "$TMP/in"
"$QOSIM" vm --platform $PLAT --console "$sock" <"$TMP/in" >"$TMP/tty" 2>&1 &
pid=$!
exec 7>"$TMP/in"
# seen TEXT: waits (at most 10 minutes) until the terminal shows TEXT.
seen() {
    for _ in $(seq 1200); do
        grep -qF -- "$1" "$TMP/tty" && return 0
        kill -0 $pid 2>/dev/null || return 1
        sleep 0.5
    done
    return 1
}
claim "$PLAT: an interactive shell prompts on the terminal" seen 'qosim-guest:/# '
printf 'echo hi-from-$((6 * 7))\n' >&7
claim "$PLAT: ... runs what is typed" seen 'hi-from-42'
printf 'mount -t resctrl resctrl /sys/fs/resctrl; mkdir /sys/fs/resctrl/g; echo "L2:0=3" > /sys/fs/resctrl/g/schemata; echo guest-wrote-$((1 + 1))\n' >&7
claim "$PLAT: ... the guest's resctrl wrote a schemata" seen 'guest-wrote-2'
claim "$PLAT: ... the console socket is there" test -S "$sock"
printf 'rdmsr 0 0xd11\n# a comment prints nothing\nwrmsr 0 0xd12 0x7\nrdmsr 0 0xdff\n' >"$TMP/script"
expect "$PLAT: qosim regs --attach drives the running guest's model" 0 "$QOSIM" regs --attach "$sock" "$TMP/script"
same "$PLAT: ... it reads the mask the guest's resctrl wrote, a #GP where there is no MSR" \
    "$(tr '\n' ' ' <"$TMP/out")" "0x0000000000000003 ok #GP "
printf 'echo "console-wrote-$(qosim-guest rdmsr 0 0xd12)"\n' >&7
claim "$PLAT: ... and the guest reads the mask the console wrote" seen 'console-wrote-0x0000000000000007'
printf 'poweroff 3\n' >&7
exec 7>&-
wait $pid
same "$PLAT: ... and 'poweroff 3' ends the VM with status 3" "$?" 3
claim "$PLAT: ... and the socket is gone after" test ! -e "$sock"
