# A one-node SLURM cluster of a test's own, for the tests of `qosim sweep
# run --executor slurm` (sourced after lib.sh). Everything lives in
# $TMP/slurm: the configuration, a munge key and munged's socket, the
# controller's state, slurmd's spool, the logs and the job outputs; the
# daemons run as root (SLURM's own default user) from this shell, with no
# systemd and nothing of the machine's (/etc/slurm, /etc/munge, a running
# munged) touched or used.
#
# slurm_start [LINE...]: starts munged, slurmctld and slurmd, the extra
#   LINEs appended to slurm.conf (MaxArraySize=8, ...), and waits until the
#   node is idle (at most 30 s). Exports SLURM_CONF, which every SLURM
#   command (and qosim's calls of them) then uses. Status 1, with why in
#   SLURM_SKIP, when there is no SLURM or munge or the test is not root;
#   2 when the cluster did not come up (its logs are in $SLURM_DIR/log).
#   Installs slurm_stop into the EXIT trap ahead of what was there (so a
#   test that also calls lib.sh's other_user, which sets the trap anew,
#   calls it first).
# slurm_stop: cancels the jobs and stops every process of the cluster;
#   safe to call twice.
#
# Starting takes about a second, stopping less. The controller schedules
# about once a second, so an array's first tasks start a second or two
# after sbatch (the first array after a start, two or three).

# The daemons are in sbin, which a non-login root shell may not have.
PATH=$PATH:/usr/sbin:/sbin

# shellcheck disable=SC2034 # SLURM_SKIP is the caller's
slurm_start() {
    SLURM_SKIP=
    if [ "$(id -u)" -ne 0 ]; then
        SLURM_SKIP="not root (the daemons run as root)"
        return 1
    fi
    local c
    for c in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
        command -v "$c" >/dev/null || {
            SLURM_SKIP="$c is not installed (scripts/install-deps installs SLURM and munge)"
            return 1
        }
    done
    SLURM_DIR=$TMP/slurm
    local d=$SLURM_DIR
    mkdir -p "$d/state" "$d/spool" "$d/log" "$d/munge" || return 2
    chmod 700 "$d/munge"
    _slurm_trap

    # munge: a key of our own (read by root only, as munged insists), and
    # the socket in our folder. --force: munged wants every folder above
    # its socket searchable by all, which a private $TMP is not; the
    # daemons and jobs are all root here, so that does not matter.
    dd if=/dev/urandom of="$d/munge/key" bs=1024 count=1 status=none && chmod 400 "$d/munge/key"
    munged --force --socket="$d/munge/sock" --key-file="$d/munge/key" \
        --pid-file="$d/munge/pid" --log-file="$d/munge/log" --seed-file="$d/munge/seed" \
        >"$d/log/munged.out" 2>&1 || return 2

    # Two ports no one listens on, from this shell's pid, in 20000-59999,
    # so that two tests at once (each with a cluster) do not meet.
    local p=$((20000 + ($$ * 2) % 40000)) _
    for _ in $(seq 50); do
        _slurm_free $p && _slurm_free $((p + 1)) && break
        p=$((20000 + (p - 20000 + 2) % 40000))
    done

    local host node
    host=$(hostname -s)
    # The node as slurmd finds it (its CPUs, sockets and memory): slurmd
    # refuses a node configured with more than it has.
    node=$(slurmd -C | head -1)
    cat >"$d/slurm.conf" <<EOF
ClusterName=qosimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$p
SlurmdPort=$((p + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
# No cgroups (there may be no writable cgroup tree, and no systemd to
# delegate one): processes are tracked by their parents, nothing is bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
# CPUs are what is allocated, not memory: a job's --mem is checked against
# the node but does not use it up.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# Scheduling at once rather than every few seconds: the default delays a
# batch job up to 3 s.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
$node NodeAddr=127.0.0.1 State=UNKNOWN
# Each CPU shared by up to 8 jobs: the tests' jobs are short, and with
# one job a CPU the controller starts only two of them a second.
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
    [ $# -gt 0 ] && printf '%s\n' "$@" >>"$d/slurm.conf"
    export SLURM_CONF=$d/slurm.conf
    # In the foreground (-D) as this shell's children: their pids are
    # known at once, and whatever they say before their logs open is kept.
    slurmctld -D -i >"$d/log/slurmctld.out" 2>&1 </dev/null &
    _slurm_ctld=$!
    slurmd -D >"$d/log/slurmd.out" 2>&1 </dev/null &
    _slurm_d=$!
    for _ in $(seq 150); do
        # Either daemon gone: it said why in its log.
        if ! kill -0 "$_slurm_ctld" 2>/dev/null || ! kill -0 "$_slurm_d" 2>/dev/null; then
            return 2
        fi
        [ "$(sinfo --noheader --format=%T 2>/dev/null)" = idle ] && return 0
        sleep 0.2
    done
    return 2
}

# _slurm_free PORT: no one listens on TCP PORT (by ss, else by trying to
# connect on the loopback).
_slurm_free() {
    if command -v ss >/dev/null; then
        [ -z "$(ss -Hltn "sport = :$1")" ]
    else
        ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
    fi
}

# slurm_log: the tails of the cluster's logs, for a failure's message.
slurm_log() {
    local f
    for f in "$SLURM_DIR"/log/* "$SLURM_DIR"/munge/log; do
        [ -s "$f" ] && printf '%s\n' "== ${f#"$SLURM_DIR"/}" "$(tail -5 "$f")"
    done
}

# The EXIT trap becomes slurm_stop, then what it was (lib.sh's removal of
# $TMP, which holds the cluster).
_slurm_trap() {
    [ -n "${_slurm_trapped-}" ] && return
    _slurm_trapped=1
    local prev
    prev=$(trap -p EXIT)
    eval "local -a was=($prev)" # trap -- 'COMMAND' EXIT
    # shellcheck disable=SC2064 # what was there, as it is now
    trap "slurm_stop; ${was[2]-}" EXIT
}

slurm_stop() {
    [ -n "${SLURM_DIR-}" ] && [ -d "$SLURM_DIR" ] || return 0
    local d=$SLURM_DIR p _ pids=()
    [ -n "${_slurm_d-}" ] && pids+=("$_slurm_d")
    [ -n "${_slurm_ctld-}" ] && pids+=("$_slurm_ctld")
    if [ -n "${_slurm_ctld-}" ] && kill -0 "$_slurm_ctld" 2>/dev/null; then
        # Jobs first, so that their steps end while slurmd is there to end them.
        scancel --user=root 2>/dev/null
        for _ in $(seq 25); do
            [ -z "$(squeue --noheader 2>/dev/null)" ] && break
            sleep 0.2
        done
    fi
    if [ ${#pids[@]} -gt 0 ]; then
        kill -TERM "${pids[@]}" 2>/dev/null
        for _ in $(seq 50); do
            # Until neither is left (kill -0 succeeds while one is).
            kill -0 "${pids[@]}" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null
    fi
    # What may be left: a slurmstepd and its job, when slurmd went first.
    # Each has our SLURM_CONF in its environment (slurmd's, or the job's,
    # which sbatch took from this shell), and no other process on the
    # machine has.
    local v
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = $$ ] && continue
        while IFS= read -r -d '' v; do
            [ "$v" = "SLURM_CONF=$d/slurm.conf" ] && kill -KILL "$p" && break
        done 2>/dev/null <"/proc/$p/environ"
    done
    [ -f "$d/munge/pid" ] && kill -TERM "$(cat "$d/munge/pid")" 2>/dev/null
    [ ${#pids[@]} -gt 0 ] && wait "${pids[@]}" 2>/dev/null
    unset _slurm_d _slurm_ctld SLURM_CONF
    rm -rf "$d"
}
