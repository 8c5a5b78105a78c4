# Runs inside the guest (qosim vm --cmd 'sh /tests/qos.sh'): drives the
# unmodified kernel's resctrl and Intel's pqos against the model, and prints
# what it saw as "fact NAME VALUE" lines. tests/e2e/test_vm.sh compares them
# with what the profile implies; nothing here knows the expected values.
#   sh /tests/qos.sh [cdp] [cdpl2] [mon] [mba] [stream]
# cdp, cdpl2: the profile has L3 / L2 CDP; mon: L3 monitoring; mba: a
# bandwidth control (MB); stream: run the occupancy, MBM and MBA programs.
R=/sys/fs/resctrl
for a in "$@"; do eval "opt_$a=1"; done
fact() { echo "fact $1 $2"; }

# Each line of a file as one value: "a,b,c".
joined() { tr '\n' ',' <"$1" | sed 's/,$//'; }

# The CPUID leaves the model answers, as vCPU 1 executes them: the host
# side compares them with `qosim regs` (cpuid LEAF SUB cpu 1).
if grep -q AuthenticAMD /proc/cpuinfo; then
    leaves="0:0 1:0 b:0 b:1 f:0 f:1 10:1 80000005:0 80000006:0 8000001d:0 8000001d:1 8000001d:2 8000001d:3 8000001e:0 80000020:1"
else
    leaves="0:0 1:0 4:0 4:1 4:2 4:3 b:0 b:1 1f:0 1f:1 f:0 f:1 10:0 10:1 10:2 10:3"
fi
for l in $leaves; do
    fact "cpuid.$l" "$(taskset -c 1 qosim-guest cpuid "0x${l%:*}" "0x${l#*:}")"
done

dmesg | grep -E 'resctrl: .* detected' | sed 's/^\[[ 0-9.]*\] //; s/ /_/g; s/^/fact dmesg /'

dump_info() { # PREFIX
    for f in "$R"/info/*/*; do
        case ${f##*/} in bit_usage | last_cmd_status) continue ;; esac
        [ -f "$f" ] && fact "$1${f#$R/info/}" "$(joined "$f")"
    done
}

mount -t resctrl resctrl "$R"
fact mount "$?"
dump_info ""
fact schemata "$(grep -v '^ *MB' "$R/schemata" | tr -d ' ' | tr '\n' ' ')"
umount "$R"
if [ -n "$opt_cdp$opt_cdpl2" ]; then
    o=""
    [ -n "$opt_cdp" ] && o=cdp
    [ -n "$opt_cdpl2" ] && o=${o:+$o,}cdpl2
    mount -t resctrl -o "$o" resctrl "$R"
    fact mount_cdp "$?"
    dump_info "cdp."
    umount "$R"
fi

# ---- schemata writes: refused ones leave last_cmd_status; accepted ones read back ----
mount -t resctrl resctrl "$R"
mkdir "$R/g1"
try() { # NAME LINE
    if echo "$2" >"$R/g1/schemata" 2>/dev/null; then r=0; else r=1; fi
    fact "write.$1" "$r:$(tr ' ' '_' <"$R/info/last_cmd_status")"
}
l3=$(cat "$R/info/L3/cbm_mask" 2>/dev/null)
l2=$(cat "$R/info/L2/cbm_mask" 2>/dev/null)
if [ -n "$l3" ]; then
    try l3_wide "L3:0=$(printf %x $((0x$l3 * 2 + 1)))"
    try l3_sparse "L3:0=5"
    try l3_zero "L3:0=0"
    try l3_domain "L3:99=3"
    try l3_ok "L3:0=3"
    fact read.l3 "$(grep '^ *L3:' "$R/g1/schemata" | tr -d ' ')"
fi
if [ -n "$l2" ]; then
    try l2_wide "L2:0=$(printf %x $((0x$l2 * 2 + 1)))"
    try l2_ok "L2:0=c"
    fact read.l2 "$(grep '^ *L2:' "$R/g1/schemata" | tr -d ' ')"
fi
if [ -f "$R/info/MB/min_bandwidth" ]; then
    min=$(cat "$R/info/MB/min_bandwidth")
    if grep -q AuthenticAMD /proc/cpuinfo; then
        try mb_high "MB:0=99999" # beyond 1 << BW_LEN, in 1/8 GB/s
        try mb_ok "MB:0=100"
    else
        try mb_low "MB:0=$((min - 1))"
        try mb_ok "MB:0=$((min * 3))"
    fi
    try mb_word "MB:0=fast"
    fact read.mb "$(grep '^ *MB:' "$R/g1/schemata" | tr -d ' ')"
fi
# The registers behind g1: its class is in PQR_ASSOC of a CPU running one
# of its tasks (read there: the msr driver reads on the CPU it names).
modprobe msr
fact modprobe_msr "$?"
assoc=$(taskset -c 0 sh -c "echo \$\$ > $R/g1/tasks; exec qosim-guest rdmsr 0 0xc8f")
fact g1.assoc "$assoc"
cos=$(((assoc >> 32) & 0xffffffff))
fact g1.cos "$cos"
[ -n "$l3" ] && fact msr.l3mask "$(qosim-guest rdmsr 0 $((0xc90 + cos)))"
[ -n "$l2" ] && fact msr.l2mask "$(qosim-guest rdmsr 0 $((0xd10 + cos)))"
if [ -f "$R/info/MB/min_bandwidth" ]; then
    if grep -q AuthenticAMD /proc/cpuinfo; then
        fact msr.mb "$(qosim-guest rdmsr 0 $((0xc0000200 + cos)))"
    else
        fact msr.mb "$(qosim-guest rdmsr 0 $((0xd50 + cos)))"
    fi
fi
# A QoS MSR the profile lacks faults (#GP), reported by the msr driver as EIO.
qosim-guest rdmsr 0 0xdff >/dev/null 2>&1
fact msr.absent_rc "$?"
# Values the model refuses fault too: a mask beyond cbm_len; a sparse one
# (Intel only), on class 15's L3 mask, which no group uses.
if [ -n "$l3" ]; then
    qosim-guest wrmsr 0 0xc9f 0x10000 >/dev/null 2>&1
    fact msr.wr_wide_rc "$?"
    qosim-guest wrmsr 0 0xc9f 0x5 >/dev/null 2>&1
    fact msr.wr_sparse_rc "$?"
    fact msr.c9f "$(qosim-guest rdmsr 0 0xc9f)"
fi
rmdir "$R/g1"

# ---- occupancy, MBM and bandwidth control seen by the guest's own programs ----
if [ -n "$opt_stream" ]; then
    mkdir "$R/two"
    echo "L3:0=3" >"$R/two/schemata"
    # A 32 MiB stream on CPU 1 in the two-way group (8 to 16 times what
    # two ways hold on these profiles), then in the default one.
    run_in() { # GROUP ARGS...: a stream program on CPU 1 in GROUP; prints its line
        g=$1
        shift
        taskset -c 1 sh -c "echo \$\$ > $R/$g/tasks; exec qosim-guest stream $*"
    }
    # The streams are the region of interest (qosim vm --from-mark, which
    # the tests' boots use): before the switch a stream is not simulated,
    # so its group's MBM counts none of it.
    fact sim.before "$(qosim-guest sim state)"
    b0=$(cat "$R/two/mon_data/mon_L3_00/mbm_total_bytes")
    run_in two --size 4M --passes 1 >/dev/null
    b1=$(cat "$R/two/mon_data/mon_L3_00/mbm_total_bytes")
    fact sim.off_mbm_delta "$((b1 - b0))"
    qosim-guest wrmsr 0 0x400000f0 3 >/dev/null 2>&1
    fact sim.reserved_rc "$?"
    qosim-guest sim on
    fact sim.after "$(qosim-guest sim state)"
    b0=$(cat "$R/two/mon_data/mon_L3_00/mbm_total_bytes")
    out=$(run_in two --size 32M --passes 2)
    b1=$(cat "$R/two/mon_data/mon_L3_00/mbm_total_bytes")
    fact two.stream "$out"
    fact two.mbm_delta "$((b1 - b0))"
    fact two.occupancy "$(cat "$R/two/mon_data/mon_L3_00/llc_occupancy")"
    fact two.assoc "$(taskset -c 0 sh -c "echo \$\$ > $R/two/tasks; exec qosim-guest rdmsr 0 0xc8f")"
    out=$(run_in . --size 32M --passes 1)
    fact default.occupancy "$(cat "$R/mon_data/mon_L3_00/llc_occupancy")"
    if [ -n "$opt_mba" ]; then
        mkdir "$R/slow"
        if grep -q AuthenticAMD /proc/cpuinfo; then
            echo "MB:0=1" >"$R/slow/schemata" # 1/8 GB/s, AMD's unit
        else
            echo "MB:0=$(cat "$R/info/MB/min_bandwidth")" >"$R/slow/schemata"
        fi
        fact slow.schemata "$(grep '^ *MB:' "$R/slow/schemata" | tr -d ' ')"
        mkdir "$R/fast"
        # The guest's clock is the host's, paced by the model's limiters
        # (qosim vm --pace): each group's MBM bytes per guest second.
        for g in fast slow; do
            b0=$(cat "$R/$g/mon_data/mon_L3_00/mbm_total_bytes")
            t0=$(cut -d' ' -f1 /proc/uptime)
            run_in "$g" --size 32M --passes 1 >/dev/null
            t1=$(cut -d' ' -f1 /proc/uptime)
            b1=$(cat "$R/$g/mon_data/mon_L3_00/mbm_total_bytes")
            fact "$g.mbm_rate" "$(awk -v b=$((b1 - b0)) -v a="$t0" -v c="$t1" 'BEGIN { printf "%.0f", b / (c - a) }')"
        done
    fi
    qosim-guest sim off
fi
umount "$R"
exit 0
