#!/bin/bash
# An Intel profile with more than 8 MBA classes (MBA 2.0) under `qosim vm`:
# Intel's pqos then reads IA32_MBA_CFG (0xC84), which the model has for it
# (docs/profiles.md, min_max); pqos and resctrl both find the 16 classes,
# and resctrl reports the core-wide "max" throttling. The same profile with
# per-thread controls (MBA 3.0, CPUID.10H.3 ECX[0]): resctrl reports
# "per-thread", and IA32_MBA_CFG is not there. The first boot is
# fast-forwarded to user space (the default), the second simulates the boot
# too (--from-boot): its model sees the kernel's boot as well. Neither
# waits for a mark (VM_FROM=, tests/e2e/vm.sh); both switch simulation off
# when their command starts.
source "$(dirname "$0")/vm.sh"
PLAT=intel-xeon-mba16
"$QOSIM" profiles show intel-xeon | sed 's/^    classes: 8$/    classes: 16/; s/^name: intel-xeon$/name: intel-xeon-mba16/' \
    >"$TMP/$PLAT.yaml"
same "the profile has 16 MBA classes" "$(grep -c "^    classes: 16$" "$TMP/$PLAT.yaml")" 1
VM_FROM= vm_boot "$TMP/$PLAT.yaml" 'qosim-guest sim off; modprobe msr
qosim-guest rdmsr 0 0xc84 | sed "s/^/fact mba_cfg /"
pqos --iface=msr -d >/tmp/d 2>&1; echo "fact pqos_d.rc $?"; sed "s/^/| /" /tmp/d
grep -A3 "Memory Bandwidth Allocation" /tmp/d | grep -o "Num COS: [0-9]*" | head -1 | sed "s/Num COS: /fact pqos_mba_cos /"
mount -t resctrl resctrl /sys/fs/resctrl; echo "fact MB/num_closids $(cat /sys/fs/resctrl/info/MB/num_closids)"
echo "fact MB/thread_throttle_mode $(cat /sys/fs/resctrl/info/MB/thread_throttle_mode)"'
same "$PLAT: IA32_MBA_CFG is there and reads its reset value" "$(num "$(fact mba_cfg)")" 0
want pqos_d.rc 0
want pqos_mba_cos 16
want MB/num_closids 16
want MB/thread_throttle_mode max
has "$PLAT: the report says simulation started at user space" "$TMP/report.json" '"from": "user",'
has "$PLAT: ... and that it did" "$TMP/report.json" '"simulating": true,'
ff=$(instr cpu)

PLAT=intel-xeon-mba16-pt
sed 's/^name: intel-xeon-mba16$/name: intel-xeon-mba16-pt/; s/^    classes: 16$/    classes: 16\n    per_thread: true/' \
    "$TMP/intel-xeon-mba16.yaml" >"$TMP/$PLAT.yaml"
same "the profile has per-thread MBA" "$(grep -c "^    per_thread: true$" "$TMP/$PLAT.yaml")" 1
VM_FROM= vm_boot "$TMP/$PLAT.yaml" 'qosim-guest sim off; modprobe msr
qosim-guest rdmsr 0 0xc84 >/dev/null 2>&1; echo "fact mba_cfg.rc $?"
mount -t resctrl resctrl /sys/fs/resctrl; echo "fact MB/num_closids $(cat /sys/fs/resctrl/info/MB/num_closids)"
echo "fact MB/thread_throttle_mode $(cat /sys/fs/resctrl/info/MB/thread_throttle_mode)"' --from-boot
want mba_cfg.rc 3
want MB/num_closids 16
want MB/thread_throttle_mode per-thread
has "$PLAT: with --from-boot the report says simulation started at QEMU's first instruction" \
    "$TMP/report.json" '"from": "boot",'
# The kernel's boot is about 550 M instructions on these profiles; each
# boot's command switches simulation off first (only registers are checked
# here), so what either simulated after the boot is the init's start.
claim "--from-boot simulates the kernel's boot: $(instr cpu) instructions >= the fast-forwarded boot's $ff + 300 M" \
    ge "$(instr cpu)" "$((ff + 300000000))" 1
