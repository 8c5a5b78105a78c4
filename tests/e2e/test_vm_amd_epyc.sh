#!/bin/bash
# Stock Linux on amd-epyc (profiles/amd-epyc.yaml) under `qosim vm`: AMD
# Platform QoS as resctrl and pqos find and program it.
source "$(dirname "$0")/vm.sh"
PLAT=amd-epyc
# Pace 10, not vm.sh's 30: AMD's slowest L3BE limit (1/8 GB/s) holds the
# throttled stream so long that at pace 30 the test slept about a minute;
# at 10 its counted bandwidth is still a seventh of the unthrottled one's
# (678354 against 4937771 B/s), where check_bandwidth asks for a half.
vm_boot $PLAT 'sh /tests/qos.sh cdp mon mba stream; sh /tests/pqos.sh l3' --pace 10

for f in L3_allocation MB_allocation L3_monitoring; do
    has "$PLAT: the boot log shows resctrl's ${f/_/ } detected" "$TMP/guest" "^fact dmesg resctrl:_${f}_detected"
done
want mount 0
# L3: cbm_len 16, 16 classes, any mask (AMD: sparse and empty allowed).
want L3/cbm_mask ffff
want L3/min_cbm_bits 0
want L3/num_closids 16
want L3/shareable_bits 0
# 256 RMIDs; on AMD Linux 6.1 divides the L2 (0x80000006 ECX: 512 KiB).
want L3_MON/num_rmids 256
want L3_MON/mon_features llc_occupancy,mbm_total_bytes,mbm_local_bytes
want L3_MON/max_threshold_occupancy $((512 * 1024 / 256))
# L3BE: 16 classes, limits in 1/8 GB/s with no minimum or granularity.
want MB/num_closids 16
want MB/min_bandwidth 0
want MB/bandwidth_gran 1
want MB/delay_linear 0
want mount_cdp 0
want cdp.L3DATA/num_closids 8
want cdp.L3CODE/num_closids 8

want write.l3_wide "1:Mask_out_of_range"
want write.l3_sparse "0:ok"
want write.l3_zero "0:ok"
want write.l3_ok "0:ok"
want read.l3 "L3:0=0003"
same "$PLAT: write.mb_high is refused" "$(fact write.mb_high | cut -d: -f1)" 1
want write.mb_word "1:Invalid_MB_value_fast"
want write.mb_ok "0:ok"
want read.mb "MB:0=100"
want g1.cos 1
same "$PLAT: L3_MASK_1 (56375)" "$(num "$(fact msr.l3mask)")" 3
same "$PLAT: L3QOS_BW_CONTROL_1 holds the limit, U clear" "$(num "$(fact msr.mb)")" 100
same "$PLAT: an absent QoS MSR is #GP in the guest (the msr driver's EIO)" "$(fact msr.absent_rc)" 3
same "$PLAT: WRMSR of a mask beyond cbm_len is #GP in the guest" "$(fact msr.wr_wide_rc)" 3
same "$PLAT: WRMSR of a sparse mask is accepted on AMD" "$(fact msr.wr_sparse_rc)" 0
same "$PLAT: ... and holds it" "$(num "$(fact msr.c9f)")" 5
check_cpuid

check_monitoring $((32 * 1024 * 1024 / 16))
check_sim
want slow.schemata "MB:0=1"
check_bandwidth
check_pqos 0xffff
want os_e.schemata "L3:0=0007"
