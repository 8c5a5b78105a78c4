# Runs inside the guest (qosim vm --cmd 'sh /tests/oci.sh RUNTIME...'):
# Debian's OCI runtimes, unchanged, placing containers in resctrl groups
# through the OCI configuration's linux.intelRdt, and prints what it saw as
# "fact NAME VALUE" lines (tests/e2e/test_vm_intel_xeon.sh compares them;
# nothing here knows the expected values).
#   sh /tests/oci.sh runc crun
# Needs L3 CAT, MBA and L3 monitoring (intel-xeon). The bundle is made
# here: a busybox root file system with qosim-guest (both static), and a
# configuration written out in full, as the guest has no JSON tool to edit
# what `runc spec` writes.
R=/sys/fs/resctrl
B=/tmp/oci
fact() { echo "fact $1 $2"; }
# The first lines of a runtime's error output, as facts.
errs() { tr ' ' _ <"/tmp/oci.err" | head -3 | sed "s/^/fact $1 /"; }
# A group's schemata on one line, spaces removed within each.
schemata() { [ -f "$1/schemata" ] && tr -d ' ' <"$1/schemata" | tr '\n' ' ' | sed 's/ $//'; }

# A fresh resctrl, as a container host has it: unmounting drops every
# group that earlier scripts (pqos's COS1...) left.
grep -q " $R resctrl " /proc/mounts && umount "$R"
mount -t resctrl resctrl "$R"
mkdir -p "$B/rootfs/bin" "$B/rootfs/proc" "$B/rootfs/dev" "$B/rootfs/sys" "$B/rootfs/tmp"
cp /bin/busybox /usr/bin/qosim-guest "$B/rootfs/bin/"
for a in sh sleep taskset touch; do ln -sf busybox "$B/rootfs/bin/$a"; done

# config RDT ARGS: the bundle's config.json; RDT the intelRdt object's
# members, ARGS the process's argv as JSON strings.
config() {
    cat >"$B/config.json" <<EOF
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": [$2],
    "env": ["PATH=/bin"],
    "cwd": "/"
  },
  "root": {"path": "rootfs"},
  "hostname": "c",
  "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"}],
  "linux": {
    "namespaces": [{"type": "pid"}, {"type": "mount"}, {"type": "ipc"}, {"type": "uts"}],
    "intelRdt": {$1}
  }
}
EOF
}
# start RT ID: a detached container of the bundle, its status as a fact;
# the initramfs is the root file system, which pivot_root(2) cannot leave,
# so the runtime is told to chroot instead (--no-pivot).
start() {
    "$1" run -d --no-pivot --pid-file "/tmp/$2.pid" -b "$B" "$2" </dev/null >/dev/null 2>/tmp/oci.err
    rc=$?
    fact "$2.rc" "$rc"
    return $rc
}
# in_group ID GROUP: 1 if the container's first process is in the group's tasks.
in_group() { grep -cx "$(cat "/tmp/$1.pid" 2>/dev/null || echo none)" "$2/tasks" 2>/dev/null || echo 0; }

# occ GROUP: the group's llc_occupancy now (0 when it has none).
occ() { cat "$R/$1/mon_data/mon_L3_00/llc_occupancy" 2>/dev/null || echo 0; }
# class_of ASSOC: the class in a PQR_ASSOC value.
class_of() { echo $(($1 >> 32)); }

# The noisy neighbour in containers (docs/containers.md, "Two containers").
# A cache-sensitive container walks 7 MiB on CPU 2 (a walk in a random
# cycle through its lines, qosim-guest stream --chase). It runs alone, then
# beside a streaming container (two 64 MiB streams, on CPUs 4 and 5) with
# the whole L3 each, then with the L3 split (10 ways for the walk, 1 for
# the streams), then with the split and MB:0=10 on the streams. Each
# program sets its buffer up with the simulation off and starts its passes
# when /tmp/go appears, so the simulation holds the passes and little else;
# the streams stop when the walk is done. Every phase has groups of its
# own, so its RMIDs are its own, and the model's report gives each RMID's
# instructions, time and bytes. The groups' occupancy, and PQR_ASSOC on
# CPUs 2 and 4 (which names the RMIDs), are sampled every second while the
# walk runs. Needs CPUs 0-5 (qosim vm --cpus 6).
# effect RT PHASE DEFAULT_L3 WALK_L3 [STREAM_L3 [STREAM_MB]]: DEFAULT_L3
# is the default group's mask during the phase (the guest's shell, the
# kernel's threads: a partition is the walk's alone only if they do not
# fill it either).
effect() {
    rt=$1 ph=$2
    rm -f "$B/rootfs/tmp/"*
    # A cold start: the walk's buffer may get the physical pages of the
    # phase before, whose lines would still be in the caches and count for
    # the RMID that filled them. A walk over twice the L3, on the walk's
    # core with every way, leaves none of them.
    qosim-guest sim on
    taskset -c 3 qosim-guest stream --chase --size 24M --passes 1 >/dev/null
    qosim-guest sim off
    echo "L3:0=$3" >"$R/schemata"
    config "\"closID\": \"s_$ph\", \"l3CacheSchema\": \"L3:0=$4\", \"enableCMT\": true" \
        '"/bin/taskset", "-c", "2", "/bin/sh", "-c",
         "qosim-guest stream --chase --size 7M --passes 40 --ready /tmp/ready.w --start-on /tmp/go >/tmp/out; touch /tmp/done; exec sleep 600"'
    start "$rt" "$rt.s_$ph" || return
    if [ -n "${5-}" ]; then
        mb=
        [ -n "${6-}" ] && mb=", \"memBwSchema\": \"MB:0=$6\""
        s="qosim-guest stream --size 64M --passes 1000000 --start-on /tmp/go --stop-on /tmp/done"
        config "\"closID\": \"n_$ph\", \"l3CacheSchema\": \"L3:0=$5\"$mb, \"enableMBM\": true" \
            "\"/bin/taskset\", \"-c\", \"4\", \"/bin/sh\", \"-c\", \"taskset -c 5 $s --ready /tmp/ready.5 & exec $s --ready /tmp/ready.4\""
        start "$rt" "$rt.n_$ph" || return
    fi
    # Every program has set its buffer up (at most 30 s).
    n=0
    while [ $n -lt 30 ] && { [ ! -f "$B/rootfs/tmp/ready.w" ] ||
        { [ -n "${5-}" ] && { [ ! -f "$B/rootfs/tmp/ready.4" ] || [ ! -f "$B/rootfs/tmp/ready.5" ]; }; }; }; do
        sleep 1
        n=$((n + 1))
    done
    so=0 no=0 n=0 wa= na=
    qosim-guest sim on
    touch "$B/rootfs/tmp/go"
    while [ ! -f "$B/rootfs/tmp/done" ] && [ $n -lt 300 ]; do
        sleep 1
        n=$((n + 1))
        o=$(occ "s_$ph") && [ "$o" -gt "$so" ] && so=$o
        o=$(occ "n_$ph") && [ "$o" -gt "$no" ] && no=$o
        a=$(taskset -c 0 qosim-guest rdmsr 2 0xc8f) && [ "$(class_of "$a")" -ne 0 ] && wa=$a
        a=$(taskset -c 0 qosim-guest rdmsr 4 0xc8f) && [ "$(class_of "$a")" -ne 0 ] && na=$a
    done
    qosim-guest sim off
    fact "$rt.$ph.walk" "$(cat "$B/rootfs/tmp/out" 2>/dev/null)"
    fact "$rt.$ph.walk_assoc" "$wa"
    fact "$rt.$ph.n_assoc" "$na"
    fact "$rt.$ph.s_occ_max" "$so"
    fact "$rt.$ph.n_occ_max" "$no"
    # Nothing more is counted once the simulation is off.
    fact "$rt.$ph.n_mbm" "$(cat "$R/n_$ph/mon_data/mon_L3_00/mbm_total_bytes" 2>/dev/null)"
    fact "$rt.$ph.schemata" "$(schemata "$R/s_$ph")/$(schemata "$R/n_$ph")"
    for c in s n; do
        [ -f "/tmp/$rt.${c}_$ph.pid" ] && kill -9 "$(cat "/tmp/$rt.${c}_$ph.pid")" 2>/dev/null
    done
    sleep 1
    # Each phase's groups go, so the next phase has classes to take; its
    # groups get new RMIDs (Linux hands out a freed RMID only after every
    # other one).
    rmdir "$R/s_$ph" "$R/n_$ph" 2>/dev/null
    echo "L3:0=7ff" >"$R/schemata"
    rm -rf "/run/$rt"
}

rdt='"closID": "web", "l3CacheSchema": "L3:0=3", "memBwSchema": "MB:0=50"'
# Container a spins on CPU 1 until /tmp/go appears in its root, then
# streams 16 MiB twice there and sleeps.
work='"/bin/taskset", "-c", "1", "/bin/sh", "-c",
      "while [ ! -f /tmp/go ]; do :; done; qosim-guest stream --size 16M --passes 2 >/tmp/out; touch /tmp/done; exec sleep 600"'
G=$R/web
for rt in "$@"; do
    command -v "$rt" >/dev/null || { fact "$rt.present" 0; continue; }
    fact "$rt.version" "$($rt --version | head -1 | tr ' ' '_')"
    rm -f "$B/rootfs/tmp/go" "$B/rootfs/tmp/done" "$B/rootfs/tmp/out"
    # A container in a new group: its task joins the group, the group's
    # schemata is the configuration's, and CPU 1, where it spins, runs with
    # the group's class in PQR_ASSOC (read on CPU 1 by an interrupt while
    # the container's task is the one running there).
    config "$rdt, \"enableCMT\": true, \"enableMBM\": true" "$work"
    start "$rt" "$rt.a" && n=0 || n=120
    errs "$rt.a.err"
    placed=$(in_group "$rt.a" "$G")
    fact "$rt.a.in_group" "$placed"
    if [ "$placed" != 1 ]; then # the runtime did not act on intelRdt: nothing more to see
        kill -9 "$(cat "/tmp/$rt.a.pid" 2>/dev/null)" 2>/dev/null
        fact "$rt.after.groups" "$(ls "$R" | grep -cE '^(web|bad)$')"
        rm -rf "/run/$rt"
        continue
    fi
    fact "$rt.a.schemata" "$(schemata "$G")"
    assoc=$(taskset -c 0 qosim-guest rdmsr 1 0xc8f)
    fact "$rt.a.assoc_cpu1" "$assoc"
    cos=$(((assoc >> 32) & 0xffffffff))
    fact "$rt.a.l3mask" "$(qosim-guest rdmsr 0 $((0xc90 + cos)))"
    fact "$rt.a.mbdelay" "$(qosim-guest rdmsr 0 $((0xd50 + cos)))"
    # Monitoring asked for: after the stream, the runtime's stats report
    # the group's counts. The stream is the region of interest (qosim vm
    # --from-mark): the runtimes themselves, seconds each under the model,
    # run unsimulated, so what the group counts is the container's stream.
    qosim-guest sim on
    touch "$B/rootfs/tmp/go"
    while [ ! -f "$B/rootfs/tmp/done" ] && [ $n -lt 120 ]; do
        sleep 1
        n=$((n + 1))
    done
    qosim-guest sim off
    fact "$rt.a.stream" "$(cat "$B/rootfs/tmp/out" 2>/dev/null)"
    # Occupancy moves as other work evicts lines: resctrl's own figure is
    # read just before and just after the runtime's.
    fact "$rt.a.llc_before" "$(cat "$G/mon_data/mon_L3_00/llc_occupancy" 2>/dev/null)"
    "$rt" events --stats "$rt.a" 2>/dev/null | tr -d ' \n' >/tmp/oci.stats
    for k in llc_occupancy mbm_total_bytes mbm_local_bytes l3_cache_schema mem_bw_schema; do
        fact "$rt.a.stats.$k" "$(sed -n "s/.*\"$k\":\"*\([^\",}]*\).*/\1/p" /tmp/oci.stats)"
    done
    fact "$rt.a.mbm_total_bytes" "$(cat "$G/mon_data/mon_L3_00/mbm_total_bytes" 2>/dev/null)"
    fact "$rt.a.llc_occupancy" "$(cat "$G/mon_data/mon_L3_00/llc_occupancy" 2>/dev/null)"
    # A second container naming the same closID joins the group.
    config "$rdt" '"/bin/sleep", "600"'
    start "$rt" "$rt.b"
    fact "$rt.b.in_group" "$(in_group "$rt.b" "$G")"
    # A schema the hardware cannot take (Intel's masks are contiguous): the
    # runtime must refuse the container, with the kernel's reason.
    config '"closID": "bad", "l3CacheSchema": "L3:0=5"' '"/bin/sleep", "600"'
    start "$rt" "$rt.c"
    errs "$rt.c.err"
    fact "$rt.c.status" "$(tr ' ' '_' <"$R/info/last_cmd_status")"
    fact "$rt.c.group_left" "$([ -d "$R/bad" ] && echo 1 || echo 0)"
    fact "$rt.c.container_left" "$(ls /run/$rt 2>/dev/null | grep -cx "$rt.c")"
    # The same closID with other schemata than its group has.
    config '"closID": "web", "l3CacheSchema": "L3:0=f"' '"/bin/sleep", "600"'
    start "$rt" "$rt.d"
    errs "$rt.d.err"
    fact "$rt.d.schemata" "$(schemata "$G")"
    # The containers' processes end (no runtime call: each costs seconds
    # under emulation); with no task left in it, the group's RMID counts
    # nothing more, so its total is what the model's ground truth has for
    # that RMID at the end.
    for c in a b c d; do
        [ -f "/tmp/$rt.$c.pid" ] && kill -9 "$(cat "/tmp/$rt.$c.pid")" 2>/dev/null
    done
    sleep 1
    fact "$rt.after.tasks" "$(wc -l <"$G/tasks" 2>/dev/null)"
    fact "$rt.after.mbm_total_bytes" "$(cat "$G/mon_data/mon_L3_00/mbm_total_bytes" 2>/dev/null)"
    fact "$rt.after.groups" "$(ls "$R" | grep -cE '^(web|bad)$')"
    # The runtime's own state goes with its containers: the next runtime
    # starts from the same resctrl.
    rm -rf "/run/$rt"
    rmdir "$R/web" "$R/bad" 2>/dev/null
    if [ -d /sys/devices/system/cpu/cpu5 ]; then
        effect "$rt" alone 7ff 7ff
        effect "$rt" shared 7ff 7ff 7ff
        effect "$rt" part 001 7fe 001
        effect "$rt" mba 001 7fe 001 10
    fi
done
true
