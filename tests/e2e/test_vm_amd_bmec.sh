#!/bin/bash
# AMD's BMEC and SMBA programmed by a stock kernel whose resctrl knows them:
# bookworm-backports' Linux 6.12 (build/vm/kernel-bp, `make vm`) under
# `qosim vm`, on amd-epyc-turin (BMEC, SMBA, a CXL memory node), with the
# guest's NUMA node 1 on the profile's slow node. tests/vm/bmec.sh is the
# guest half: resctrl's event configurations and what they make
# mbm_total_bytes and mbm_local_bytes count, checked against the model's
# ground truth per RMID and traffic type (--report); the SMBA schemata
# line, its MSR, and the limit's effect on a stream from slow memory.
source "$(dirname "$0")/vm.sh"

dir=${QOSIM_VM_DIR:-$(dirname "$QOSIM")/vm}
KBP=$dir/kernel-bp/vmlinux
if [ ! -f "$KBP" ]; then
    ok "BMEC and SMBA under Linux 6.12 # skip $KBP is missing ('make vm' fetches it)"
    exit 0
fi

# amd-epyc-turin as shipped: its CXL node (memory.slow) and SMBA.
PLAT=amd-epyc-turin
"$QOSIM" profiles show "$PLAT" >"$TMP/$PLAT.yaml"
has "the profile has slow memory" "$TMP/$PLAT.yaml" "^  slow: \{nodes: 1,"
has "the profile has SMBA" "$TMP/$PLAT.yaml" "^  slow_bandwidth: \{classes: 16, max: 11"
has "the profile has BMEC" "$TMP/$PLAT.yaml" "^    bmec: true"
# Pace 10: the limited stream's guest time is then a quarter of what the
# default 30 of vm_boot takes, and still far from the unlimited ones'.
vm_boot "$TMP/$PLAT.yaml" 'sh /tests/bmec.sh' --kernel "$KBP" --pace 10
want uname "$(cat "$(dirname "$KBP")/version")"

# ---- the model's ground truth (--report), per RMID ----
# rfield RMID KEY: a number of that RMID's row.
rfield() { awk -v r="$1" -v k="\"$2\":" '/"rmid":/ { gsub(/[,{}\[\]]/, " "); id = ""; v = ""
    for (i = 1; i <= NF; i++) { if ($i == "\"rmid\":") id = $(i + 1); if ($i == k) v = $(i + 1) }
    if (id == r) print v }' "$TMP/report.json"; }
# traffic RMID MASK: its bytes of the traffic types of a BMEC configuration.
traffic() { awk -v r="$1" -v m=$(($2)) '/"rmid":/ { if ($0 !~ "\"rmid\": " r ",") next
    sub(/.*"traffic": \[/, ""); sub(/\].*/, ""); n = split($0, t, ", "); s = 0
    for (i = 1; i <= n; i++) if (int(m / 2 ^ (i - 1)) % 2) s += t[i]
    print s }' "$TMP/report.json"; }
# rmid NAME: the RMID in PQR_ASSOC of the stream's CPU after it moved into its group.
rmid() { echo $(($(fact "$1.stream" | sed -n 's/.* assoc=\(0x[0-9a-f]*\).*/\1/p') & 0x3ff)); }
# Bytes per simulated second: what an RMID read (all, or from slow memory
# only) over the simulated time its vCPU ran with it.
rate() { awk -v b="$(rfield "$1" "$2")" -v t="$(rfield "$1" simulated_ns)" 'BEGIN { if (t > 0) printf "%.0f", b / t * 1e9; else print 0 }'; }
# within A B TOL: A is a number within TOL of B.
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { if (a !~ /^[0-9]+$/) exit 1; d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
MIB128=$((128 << 20)) # what the two passes of a 64 MiB stream move

# ---- what the kernel found ----
want modprobe_msr 0
for f in L3_allocation MB_allocation SMBA_allocation L3_monitoring; do
    has "$PLAT: the boot log shows resctrl's ${f/_/ } detected" "$TMP/guest" "^fact dmesg resctrl:_${f}_detected"
done
want node1.cpus "[]"
claim "$PLAT: the guest's node 1 has the 256 MiB of --slow-memory's default, less the kernel's own ($(fact node1.kb) kB)" \
    ge "$(fact node1.kb)" $((256 * 1024)) 0.95
want mount 0
want L3_MON/mon_features llc_occupancy,mbm_total_bytes,mbm_total_bytes_config,mbm_local_bytes,mbm_local_bytes_config
want L3_MON/num_rmids 256

# ---- BMEC: configurations through resctrl and QOS_EVT_CFG_n ----
want total_config "0=0x7f"
want local_config "0=0x15"
same "$PLAT: QOS_EVT_CFG_0 resets to 0x7F (all seven types)" "$(num "$(fact msr.evt_cfg0)")" $((0x7f))
same "$PLAT: QOS_EVT_CFG_1 resets to 0x15 (the local types)" "$(num "$(fact msr.evt_cfg1)")" $((0x15))
for w in write_total.0x1 write_local.0x15 write_total.0x40 write_local.0x10 write_total.0x7f; do want "$w" 0; done
want total_config.a "0=0x01"
same "$PLAT: resctrl wrote 0x1 to QOS_EVT_CFG_0" "$(num "$(fact msr.evt_cfg0.a)")" 1
want write_total.0x80 "1:Invalid_event_configuration:_max_valid_mask_is_0x7f"
want total_config.b "0=0x40"
want local_config.b "0=0x10"
same "$PLAT: resctrl wrote 0x40 to QOS_EVT_CFG_0" "$(num "$(fact msr.evt_cfg0.b)")" $((0x40))
same "$PLAT: resctrl wrote 0x10 to QOS_EVT_CFG_1" "$(num "$(fact msr.evt_cfg1.b)")" $((0x10))
want total_config.c "0=0x7f"
want local_config.c "0=0x15"

# What a counter counts is what its configuration selects. Reads of an RMID
# happen only while its stream runs, before its counters are read: those
# must equal the model's bytes of the selected types exactly. A dirty
# victim counts when the line leaves the L3, which may be after the read:
# within 1 MiB (an L2's worth of its lines that stay cached).
check_ctr() { # NAME EVENT CONFIG WHAT
    local r got want tol=0
    r=$(rmid "$1")
    got=$(fact "$1.$2")
    want=$(traffic "$r" "$3")
    [ $(($3 & 0x40)) -ne 0 ] && tol=$((1 << 20))
    claim "$PLAT: $1 (RMID $r) $2 under $3 ($got) is the model's $4 (${want:-none})" \
        within "${got:-x}" "${want:-0}" $tol
}
for n in r1 s1 w40 s10 r40; do
    has "$PLAT: $n's stream moved into its group (RMID in PQR_ASSOC)" <(fact "$n.stream") ' assoc=0x[0-9a-f]+'
done
check_ctr r1 total 0x1 "reads of local DRAM"
check_ctr r1 local 0x15 "local reads"
check_ctr s1 total 0x1 "reads of local DRAM"
check_ctr s1 local 0x15 "local reads, its slow memory's among them"
check_ctr w40 total 0x40 "dirty victims"
check_ctr w40 local 0x10 "reads of local slow memory"
check_ctr s10 total 0x40 "dirty victims"
check_ctr s10 local 0x10 "reads of local slow memory"
check_ctr r40 total 0x40 "dirty victims"
check_ctr r40 local 0x10 "reads of local slow memory"
# ... and what that means for the streams.
claim "$PLAT: under 0x1 a DRAM read stream counts its 128 MiB ($(fact r1.total))" ge "$(fact r1.total)" $MIB128 1
claim "$PLAT: under 0x1 a slow-memory read stream counts almost nothing ($(fact s1.total) < 2% of 128 MiB)" \
    ge $((MIB128 / 50)) "$(fact s1.total)" 1
claim "$PLAT: under 0x15 (local) it counts its 128 MiB ($(fact s1.local))" ge "$(fact s1.local)" $MIB128 1
# A dirty line counts when it leaves the L3; after the second pass up to the
# CCD's 32 MiB L3 and the core's 1 MiB L2 (the L3 is their victim cache)
# may still hold the stream's lines.
claim "$PLAT: under 0x40 a write stream counts the 128 MiB it dirtied, less what the L2 and L3 still hold ($(fact w40.total) >= 95 MiB)" \
    ge "$(fact w40.total)" $((MIB128 - (33 << 20))) 1
claim "$PLAT: ... and no more than it dirtied ($(fact w40.total) <= 128 MiB + 1 MiB)" \
    ge $((MIB128 + (1 << 20))) "$(fact w40.total)" 1
claim "$PLAT: under 0x40 a DRAM read stream counts almost nothing ($(fact r40.total) < 2% of 128 MiB)" \
    ge $((MIB128 / 50)) "$(fact r40.total)" 1
claim "$PLAT: ... nor does a slow-memory read stream ($(fact s10.total) < 2%: the page structures its exit wrote)" \
    ge $((MIB128 / 50)) "$(fact s10.total)" 1
claim "$PLAT: under 0x10 a slow-memory read stream counts its 128 MiB in local ($(fact s10.local))" \
    ge "$(fact s10.local)" $MIB128 1
claim "$PLAT: ... and a DRAM read stream almost nothing ($(fact r40.local))" \
    ge $((MIB128 / 50)) "$(fact r40.local)" 1

# ---- SMBA ----
want SMBA/num_closids 16
want SMBA/min_bandwidth 0
want SMBA/bandwidth_gran 1
want SMBA/delay_linear 0
# Linux's default and maximum are 1 << SMBW_LEN (CPUID 0x80000020.2 EAX):
# 2048, the U bit alone.
want schemata.smba "SMBA:0=2048"
want lim.smba_default "SMBA:0=2048"
want write_smba.high "1:MB_value_99999_out_of_range_[0,2048]"
want write_smba.8 "0:ok"
want lim.smba "SMBA:0=8"
want lim.cos 1
same "$PLAT: L3QOS_SMBW_CONTROL_1 holds the limit, U clear" "$(num "$(fact msr.smbw_lim)")" 8
same "$PLAT: L3QOS_SMBW_CONTROL_0 is still U (unlimited)" "$(num "$(fact msr.smbw0)")" 2048
# The limit: 8/8 GB/s on what the class reads from slow memory. In the
# model's time, the limited stream's RMID read slow memory at that rate
# (within 5%: the rest of its time, exec and exit, is not the stream's);
# the same class's DRAM stream waited at no limiter and ran as fast as an
# unlimited DRAM stream (within 5%), and an unlimited slow-memory stream
# ran at least twice as fast as the limit.
sl=$(rmid sl) dl=$(rmid dl) s1=$(rmid s1) r1=$(rmid r1)
has "$PLAT: the limited stream read slow memory (--node 1)" <(fact sl.stream) ' node=1 '
rsl=$(rate "$sl" slow_read_bytes)
claim "$PLAT: the stream from slow memory in the limited class reads at 1 GB/s ($rsl B/s)" near "$rsl" 1000000000 0.05
claim "$PLAT: ... its requests waited at the limiter ($(rfield "$sl" held_ns) ns)" ge "$(rfield "$sl" held_ns)" 1 1
same "$PLAT: the DRAM stream of the same class waited at no limiter" "$(rfield "$dl" held_ns)" 0
rdl=$(rate "$dl" read_bytes) rr1=$(rate "$r1" read_bytes)
claim "$PLAT: ... and read DRAM as fast as an unlimited one ($rdl vs $rr1 B/s)" near "$rdl" "$rr1" 0.05
rs1=$(rate "$s1" slow_read_bytes)
claim "$PLAT: an unlimited stream from slow memory reads faster than the limit ($rs1 B/s)" ge "$rs1" 1000000000 2
# The guest's own clock is paced (--pace): the limited stream is slow there too.
mb() { fact "$1.stream" | sed -n 's/.* MBps=\([0-9.]*\).*/\1/p'; }
claim "$PLAT: the guest sees the limited stream run at most a quarter as fast as the same class's DRAM one ($(mb sl) vs $(mb dl) MB/s)" \
    ge "$(mb dl)" "$(mb sl)" 4
