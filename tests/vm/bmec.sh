# Runs inside the guest, on a kernel whose resctrl programs AMD's BMEC and
# SMBA (Linux 6.12, bookworm-backports': qosim vm --kernel
# build/vm/kernel-bp/vmlinux), on a profile with both and with slow memory
# (the guest's NUMA node 1, qosim vm --slow-memory):
#   sh /tests/bmec.sh
# Prints what it saw as "fact NAME VALUE" lines, which
# tests/e2e/test_vm_amd_bmec.sh compares with the profile and with the
# model's ground truth (--report); nothing here knows the expected values.
#
# Streams run on CPU 1 with `--move-to`: the buffer is set up in another
# group, and only the passes run in the group under test, so that group
# reads what they read and dirties what they write.
#
# A dirty victim counts against the RMID whose request filled the line.
# Lines of an exited stream that are still cached belong to its RMID; when
# the kernel gives its pages to the next program, which writes them, they
# leave dirty, as its victims. So the read stream whose victims are
# counted runs last of all, right before the counters are read.
R=/sys/fs/resctrl
M=$R/info/L3_MON
fact() { echo "fact $1 $2"; }
joined() { tr '\n' ',' <"$1" | sed 's/,$//'; }

fact uname "$(uname -r)"
modprobe msr
fact modprobe_msr "$?"
dmesg | grep -E 'resctrl: .* detected' | sed 's/^\[[ 0-9.]*\] //; s/ /_/g; s/^/fact dmesg /'
fact node1.cpus "[$(cat /sys/devices/system/node/node1/cpulist)]"
fact node1.kb "$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node1/meminfo)"

mount -t resctrl resctrl "$R"
fact mount "$?"
for f in "$R"/info/SMBA/* "$M"/mon_features "$M"/num_rmids; do
    [ -f "$f" ] && fact "${f#$R/info/}" "$(joined "$f")"
done

# ---- BMEC: the event configurations, through resctrl and the MSRs ----
fact total_config "$(cat "$M/mbm_total_bytes_config")"
fact local_config "$(cat "$M/mbm_local_bytes_config")"
fact msr.evt_cfg0 "$(qosim-guest rdmsr 0 0xc0000400)"
fact msr.evt_cfg1 "$(qosim-guest rdmsr 0 0xc0000401)"

# A counter's value. A configuration write clears every RMID's counters
# and the next read of each reads "Unavailable", once (resctrl.rst): try
# again then.
ctr() { # GROUP EVENT
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        v=$(cat "$R/$1/mon_data/mon_L3_00/$2")
        case $v in [0-9]*) echo "$v"; return ;; esac
        sleep 0.2
    done
    echo "$v"
}
stream() { # NAME GROUP ARGS...: a stream on CPU 1 set up in the default
    # group, whose passes run in GROUP (a monitoring group of another
    # control group through that one: Linux moves a task into a monitoring
    # group only from its parent)
    n=$1 g=$2
    shift 2
    case $g in
    */mon_groups/*) mv="--move-to $R/${g%%/mon_groups/*}/tasks --move-to $R/$g/tasks" ;;
    *) mv="--move-to $R/$g/tasks" ;;
    esac
    last=$(taskset -c 1 qosim-guest stream $mv "$@")
    fact "$n.stream" "$last"
}
# What the stream left in the caches leaves them: its dirty lines are
# written back now, before the counters are read, as victims of its RMID.
flush() { taskset -c 1 qosim-guest stream --size 64M --passes 1 >/dev/null; }
config() { # TOTAL LOCAL: writes both configurations of domain 0
    echo "0=$1" >"$M/mbm_total_bytes_config"
    fact "write_total.$1" "$?"
    echo "0=$2" >"$M/mbm_local_bytes_config"
    fact "write_local.$2" "$?"
}
report() { # NAME GROUP: its counters
    fact "$1.total" "$(ctr "$2" mbm_total_bytes)"
    fact "$1.local" "$(ctr "$2" mbm_local_bytes)"
}

# Phase A: total counts reads of local DRAM only (0x1); local keeps its
# reset configuration (0x15, which includes reads of local slow memory).
config 0x1 0x15
fact total_config.a "$(cat "$M/mbm_total_bytes_config")"
fact msr.evt_cfg0.a "$(qosim-guest rdmsr 0 0xc0000400)"
# A type the hardware lacks is refused (0x80: bit 7, beyond BwType).
echo "0=0x80" >"$M/mbm_total_bytes_config" 2>/dev/null
fact write_total.0x80 "$?:$(tr ' ' '_' <"$R/info/last_cmd_status")"
mkdir "$R/mon_groups/r1" "$R/mon_groups/s1"
# The streams are the region of interest (qosim vm --from-mark): the model's
# caches and memory simulate from here to the end.
qosim-guest sim on
stream r1 mon_groups/r1 --size 64M --passes 2          # DRAM reads
stream s1 mon_groups/s1 --size 64M --passes 2 --node 1 # slow memory reads
report r1 mon_groups/r1
report s1 mon_groups/s1

# ---- SMBA: the schemata line, its MSR, and what a limit does ----
fact schemata.smba "$(grep '^ *SMBA:' "$R/schemata" | tr -d ' ')"
mkdir "$R/lim"
fact lim.smba_default "$(grep '^ *SMBA:' "$R/lim/schemata" | tr -d ' ')"
echo "SMBA:0=99999" >"$R/lim/schemata" 2>/dev/null
fact write_smba.high "$?:$(tr ' ' '_' <"$R/info/last_cmd_status")"
echo "SMBA:0=8" >"$R/lim/schemata" # 8/8 GB/s
fact write_smba.8 "$?:$(tr ' ' '_' <"$R/info/last_cmd_status")"
fact lim.smba "$(grep '^ *SMBA:' "$R/lim/schemata" | tr -d ' ')"
mkdir "$R/lim/mon_groups/sl" "$R/lim/mon_groups/dl"
stream sl lim/mon_groups/sl --size 64M --passes 1 --node 1 # slow memory, limited
stream dl lim/mon_groups/dl --size 64M --passes 1          # DRAM, the same class
# The class behind the group: in PQR_ASSOC [63:32] as the stream read it
# on its CPU after moving there; its L3QOS_SMBW_CONTROL_n holds the limit,
# class 0's is still U (unlimited).
assoc=$(echo "$last" | sed -n 's/.* assoc=\(0x[0-9a-f]*\).*/\1/p')
cos=$(((assoc >> 32) & 0xffffffff))
fact lim.cos "$cos"
fact msr.smbw_lim "$(qosim-guest rdmsr 0 $((0xc0000280 + cos)))"
fact msr.smbw0 "$(qosim-guest rdmsr 0 0xc0000280)"

# Phase B: total counts dirty victims only (0x40), local reads of local
# slow memory only (0x10). The write stream's dirty lines are pushed out
# (flush) before the read streams run.
config 0x40 0x10
fact total_config.b "$(cat "$M/mbm_total_bytes_config")"
fact local_config.b "$(cat "$M/mbm_local_bytes_config")"
fact msr.evt_cfg0.b "$(qosim-guest rdmsr 0 0xc0000400)"
fact msr.evt_cfg1.b "$(qosim-guest rdmsr 0 0xc0000401)"
mkdir "$R/mon_groups/w40" "$R/mon_groups/s10" "$R/mon_groups/r40"
stream w40 mon_groups/w40 --size 64M --passes 2 --write
flush
stream s10 mon_groups/s10 --size 64M --passes 2 --node 1
stream r40 mon_groups/r40 --size 64M --passes 2
report w40 mon_groups/w40
report s10 mon_groups/s10
report r40 mon_groups/r40
config 0x7f 0x15 # back to the reset configurations
fact total_config.c "$(cat "$M/mbm_total_bytes_config")"
fact local_config.c "$(cat "$M/mbm_local_bytes_config")"
umount "$R"
exit 0
