#!/bin/bash
# Stock Linux on intel-xeon (profiles/intel-xeon.yaml) under `qosim vm`: what
# resctrl and pqos find and do, against what the profile implies.
source "$(dirname "$0")/vm.sh"
PLAT=intel-xeon
vm_boot $PLAT 'sh /tests/qos.sh cdp cdpl2 mon mba stream; sh /tests/pqos.sh l3'

for f in L3_allocation L2_allocation MB_allocation L3_monitoring; do
    has "$PLAT: the boot log shows resctrl's ${f/_/ } detected" "$TMP/guest" "^fact dmesg resctrl:_${f}_detected"
done
want mount 0
# L3: cbm_len 11, 16 classes, shareable 0x600; L2: cbm_len 16, 8 classes.
want L3/cbm_mask 7ff
want L3/min_cbm_bits 1
want L3/num_closids 16
want L3/shareable_bits 600
want L2/cbm_mask ffff
want L2/min_cbm_bits 1
want L2/num_closids 8
want L2/shareable_bits 0
# 176 RMIDs; the threshold is the L3 (leaf 4: 11 MiB) over the RMIDs.
want L3_MON/num_rmids 176
want L3_MON/mon_features llc_occupancy,mbm_total_bytes,mbm_local_bytes
want L3_MON/max_threshold_occupancy $((11 * 1024 * 1024 / 176))
# MBA: 8 classes, max delay 90 in steps of 10, linear: at least 100 - 90.
want MB/num_closids 8
want MB/min_bandwidth 10
want MB/bandwidth_gran 10
want MB/delay_linear 1
# CDP halves the classes of each level.
want mount_cdp 0
want cdp.L3DATA/num_closids 8
want cdp.L3CODE/num_closids 8
want cdp.L2DATA/num_closids 4
want cdp.L2CODE/num_closids 4
want cdp.L3DATA/cbm_mask 7ff

# Schemata: Intel masks must be contiguous, non-empty, within cbm_mask.
want write.l3_wide "1:Mask_out_of_range"
want write.l3_sparse "1:The_mask_5_has_non-consecutive_1-bits"
want write.l3_zero "1:Mask_out_of_range"
same "$PLAT: write.l3_domain is refused" "$(fact write.l3_domain | cut -d: -f1)" 1
want write.l3_ok "0:ok"
want read.l3 "L3:0=0003"
want write.l2_wide "1:Mask_out_of_range"
want write.l2_ok "0:ok"
want read.l2 "L2:0=000c;1=ffff"
want write.mb_low "1:MB_value_9_out_of_range_[10,100]"
want write.mb_word "1:Invalid_MB_value_fast"
want write.mb_ok "0:ok"
want read.mb "MB:0=30"
# The MSRs behind the group's class (SDM 17.19): masks as written; MBA
# holds the delay, 100 - 30 (linear).
want modprobe_msr 0
want g1.cos 1
same "$PLAT: IA32_L3_QOS_MASK_1" "$(num "$(fact msr.l3mask)")" 3
same "$PLAT: IA32_L2_QOS_MASK_1" "$(num "$(fact msr.l2mask)")" 12
same "$PLAT: IA32_L2_QoS_Ext_BW_Thrtl_1 (delay)" "$(num "$(fact msr.mb)")" 70
same "$PLAT: an absent QoS MSR is #GP in the guest (the msr driver's EIO)" "$(fact msr.absent_rc)" 3
same "$PLAT: WRMSR of a mask beyond cbm_len is #GP in the guest" "$(fact msr.wr_wide_rc)" 3
same "$PLAT: WRMSR of a sparse mask is #GP on Intel" "$(fact msr.wr_sparse_rc)" 3
same "$PLAT: ... and the mask keeps its reset value" "$(num "$(fact msr.c9f)")" $((0x7ff))
check_cpuid

check_monitoring $((11 * 1024 * 1024 / 11))
want slow.schemata "MB:0=10"
check_bandwidth
check_pqos 0x7ff
want os_e.schemata "L3:0=0007"
