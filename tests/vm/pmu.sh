# Runs inside the guest (qosim vm --cmd 'sh /tests/pmu.sh [all|count]'):
# Debian's perf on the model's core PMU (docs/vm.md, "Measuring in the
# guest"). Prints "fact NAME VALUE" lines for the host's test, and perf's
# own output behind "| ".
#
# Each count is perf stat's of one program (qosim-guest stream, on CPU 3),
# compared with the model's own count of the same events on that vCPU
# (QOSIM_EVENT_n, qemu/plugin/simctl.h) read before and after. The program
# sets up, then sleeps in the kernel until SIGUSR1 (--start-signal); perf
# attaches to it (-p) and enables its counters, acknowledged through its
# control FIFO; the model's counts are read; the signal starts the passes;
# perf stops when the program exits; the model's counts are read again.
# Everything else runs on CPU 0, so the user-level events CPU 3 sees
# between the two reads are the program's, all inside perf's window: the
# two agree exactly or the PMU is wrong.
#   perf   that comparison on a chase, and perf record's attribution
#   all    also CAT's effect on LLC misses, and pqos -p
what=${1:-all}
fact() { echo "fact $1 $2"; }
show() { sed 's/^/| /' "$1"; }
modprobe msr
taskset -p -c 0 $$ >/dev/null
C=3
# The counters count simulated execution: the simulation is switched on
# for the measured stretches only (on from perf's enable to the model's
# second read), so the set-up, perf's own start and its report run at
# QEMU's speed, and off after each.
fact pmu.dmesg "$(dmesg | grep -o 'Performance Events: .*' | tr ' ' _)"
fact pmu.cpu_pmu "$([ -d /sys/bus/event_source/devices/cpu ] && echo yes || echo no)"
fact pmu.uname "$(uname -r)"
fact pmu.perf "$(perf --version | tr ' ' _)"

# The model's user-level count of event E on CPU 3 (simctl.h's numbering).
truth() { # E or E+F: the sum
    t=0
    for e in $(echo $1 | tr + ' '); do t=$((t + $(qosim-guest rdmsr $C $((0x400000C0 + 2 * e))))); done
    echo $t
}
EVENTS="instructions:u cycles:u cache-misses:u branches:u branch-misses:u LLC-load-misses:u"
# The same events in the model's numbering, in that order; LLC-load-misses
# is OFFCORE_RESPONSE_0 for demand reads that missed L3 (Linux's
# skl_hw_cache_extra_regs), loads served by either node's memory.
TRUTH="0 1 3 4 5 13+14"

# start TASKS ARGS...: qosim-guest stream ARGS on CPU 3, in the resctrl
# group whose tasks file is TASKS ("-": none) from its start, set up and
# asleep until SIGUSR1; its PID in pid. The set-up is simulated, so the
# program's buffer is in the caches as its own group's ways put it there.
start() {
    tasks=$1
    shift
    rm -f /tmp/ready
    qosim-guest sim on
    if [ "$tasks" = - ]; then
        taskset -c $C qosim-guest stream "$@" --ready /tmp/ready --start-signal >/tmp/prog.out 2>&1 &
    else
        taskset -c $C sh -c "echo \$\$ >$tasks; exec qosim-guest stream $* --ready /tmp/ready --start-signal" \
            >/tmp/prog.out 2>&1 &
    fi
    pid=$!
    until [ -e /tmp/ready ] && grep -q ') S ' /proc/$pid/stat; do sleep 0.1; done
    qosim-guest sim off
}

# attach OUT PERF-COMMAND ARGS...: perf stat or record ARGS on the
# program, started with its counters disabled; returns once perf has
# enabled them (its control FIFO's acknowledgement), with its PID in perf.
attach() {
    out=$1
    shift
    rm -f /tmp/ctl /tmp/ack
    mkfifo /tmp/ctl /tmp/ack
    perf "$@" -p $pid -D -1 --control fifo:/tmp/ctl,/tmp/ack >$out 2>&1 &
    perf=$!
    exec 8>/tmp/ctl 9</tmp/ack
    echo enable >&8
    read -r ack <&9
}

# measure NAME TASKS ARGS...: perf stat of qosim-guest stream ARGS (start), and the
# model's counts.
measure() {
    n=$1
    shift
    start "$@"
    attach /tmp/$n.perf stat -x, -o /tmp/$n.stat -e "$(echo $EVENTS | tr ' ' ,)"
    qosim-guest sim on
    before=""
    for e in $TRUTH; do before="$before $(truth $e)"; done
    kill -USR1 $pid
    wait $pid
    fact $n.rc $?
    wait $perf
    fact $n.perf_rc $?
    exec 8>&- 9<&-
    after=""
    for e in $TRUTH; do after="$after $(truth $e)"; done
    qosim-guest sim off
    show /tmp/prog.out
    show /tmp/$n.perf
    show /tmp/$n.stat
    i=1
    for ev in $EVENTS; do
        b=$(echo $before | cut -d' ' -f$i)
        a=$(echo $after | cut -d' ' -f$i)
        k=${ev%:u}
        fact $n.$k.truth $((a - b))
        # perf -x,: count,unit,event,run time,percentage running, ...; a
        # cache event is named without its :u
        fact $n.$k.perf "$(awk -F, -v e=$ev -v k=$k '$3 == e || $3 == k { print $1 }' /tmp/$n.stat)"
        fact $n.$k.running "$(awk -F, -v e=$ev -v k=$k '$3 == e || $3 == k { print $5 }' /tmp/$n.stat)"
        i=$((i + 1))
    done
}

measure count - --chase --size 2M --passes 2

grep -q resctrl /proc/mounts || mount -t resctrl resctrl /sys/fs/resctrl
g=/sys/fs/resctrl/pmu
mkdir -p $g
# CAT: a walk over 5 MiB holds in 8 of the L3's 11 ways (1 MiB each, with
# the 1 MiB L2 before them) and not in 2; perf's LLC misses follow. The
# program runs in the group from its start, after a 24 MiB stream on its
# core has cleared the caches of what ran before.
for m in ff 3; do
    [ "$what" = all ] || break
    echo "L3:0=$m" >$g/schemata
    fact cat$m.schemata "$(grep L3 $g/schemata | tr -d ' ')"
    qosim-guest sim on
    taskset -c $C qosim-guest stream --size 24M --passes 1 >/dev/null
    measure cat$m $g/tasks --chase --size 5M --passes 4
done

# perf record: sampling every 200th L3 load miss of a 4 MiB walk in one
# L3 way, which misses at nearly every load; every sample should fall in
# the walk (qosim-guest's chase()).
echo "L3:0=1" >$g/schemata
# No sample throttling: the guest's clock is the host's, so the time
# perf's interrupts seem to take depends on the host's speed.
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
start $g/tasks --chase --size 4M --passes 3
attach /tmp/rec.out record -e LLC-load-misses -c 200 -o /tmp/perf.data
qosim-guest sim on
kill -USR1 $pid
wait $pid
wait $perf
fact rec.rc $?
qosim-guest sim off
exec 8>&- 9<&-
show /tmp/rec.out
perf report -i /tmp/perf.data --stdio --sort sym >/tmp/rec.report 2>&1
show /tmp/rec.report
sym() { # the samples of symbol $1 ("" for all)
    perf report -i /tmp/perf.data --stdio -F sample,sym 2>/dev/null |
        awk -v s="$1" '$1 ~ /^[0-9]+$/ && (s == "" || $NF == s) { n += $1 } END { print n + 0 }'
}
fact rec.samples "$(sym "")"
fact rec.chase "$(sym chase)"
rmdir $g
[ "$what" = all ] || exit 0

# pqos -I -p (issue 26): Intel's pqos monitoring a PID, its IPC from perf
# on the model's PMU, its LLC occupancy and bandwidth from resctrl. A
# 16 MiB walk on CPU 3, which misses the L3 at every line, runs until
# killed; pqos samples it three times a second for two seconds; the
# model's user-level instructions and cycles on CPU 3 over the same time
# give the IPC pqos should print (pqos's samples are of host time, so only
# the ratio compares).
start - --chase --size 16M --passes 1000000
qosim-guest sim on
kill -USR1 $pid
sleep 1
i0=$(truth 0) c0=$(truth 1)
pqos -I -p "all:$pid" -i 3 -t 2 >/tmp/pqos-p.out 2>&1
fact pqos_p.rc $?
i1=$(truth 0) c1=$(truth 1)
kill $pid
wait $pid
qosim-guest sim off
show /tmp/pqos-p.out
# The last sample's row: PID CORE IPC MISSES LLC[KB] MBL[MB/s] MBR[MB/s].
row=$(awk -v p=$pid '$1 == p { r = $0 } END { print r }' /tmp/pqos-p.out)
fact pqos_p.rows "$(awk -v p=$pid '$1 == p' /tmp/pqos-p.out | wc -l)"
fact pqos_p.core "$(echo $row | cut -d' ' -f2)"
fact pqos_p.ipc "$(echo $row | cut -d' ' -f3)"
fact pqos_p.llc_kb "$(echo $row | cut -d' ' -f5)"
fact pqos_p.mbl "$(echo $row | cut -d' ' -f6)"
fact pqos_p.truth_ipc "$(awk -v i=$((i1 - i0)) -v c=$((c1 - c0)) 'BEGIN { printf "%.4f", c ? i / c : 0 }')"

