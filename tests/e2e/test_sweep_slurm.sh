#!/bin/bash
# End-to-end tests of qosim sweep's SLURM executor (docs/sweeps.md, "On a
# SLURM cluster") on a one-node cluster of the test's own (slurm.sh): a
# sweep split into arrays of MaxArraySize tasks, every point done with its
# array task in its record; a point that fails on the cluster, named by
# status and run again by --retry-failed alone; an array task killed while
# its point runs, recorded as failed and finished by --retry-failed; an
# interrupted run that
# cancels its arrays and leaves the points it stopped to run again; and
# results equal, byte for byte, to the local executor's. Skipped where
# SLURM or munge is missing or the test is not root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm.sh"
cd "$TMP" || exit 1

# Arrays of at most 16 tasks: the 20 points below take two.
slurm_start MaxArraySize=16
case $? in
1)
    ok "sweep on SLURM # skip: $SLURM_SKIP"
    exit 0
    ;;
2)
    notok "a one-node SLURM cluster starts" "$(slurm_log)"
    exit 1
    ;;
esac
ok "a one-node SLURM cluster starts"
export QOSIM_SLURM_POLL_MS=200 # the queue asked 5 times a second, not once

cp "$DATA/tiny.yaml" tiny.yaml
cat >scen.yaml <<'Y'
platform: tiny.yaml
duration: 200us
interval: 50us
tasks:
  - {name: a, cpu: 0, workload: {pattern: random, wss: 32K}}
Y
cat >sw.yaml <<'Y'
base: scen.yaml
axes:
  - name: wss
    key: tasks[0].workload.wss
    values: [8K, 16K, 32K, 64K]
  - name: seed
    key: seed
    range: {from: 1, to: 5}
slurm: {partition: debug, time: "5", throttle: 16}
Y

# ---- a sweep on the cluster ----------------------------------------------------
expect "plan" 0 "$QOSIM" sweep plan sw.yaml -o s1
same "plan: 20 points" "$(cat "$TMP/out")" "20 points planned in s1"
expect "run --executor slurm" 0 "$QOSIM" sweep run s1 --executor slurm
expect "status: every point done" 0 "$QOSIM" sweep status s1
same "status: ... counted" "$(head -1 "$TMP/out")" "20 points: 20 done, 0 failed, 0 pending"
same "two arrays (MaxArraySize=16): their lists" "$(wc -l <s1/slurm/batch-0.list) $(wc -l <s1/slurm/batch-1.list)" "16 4"
same "... the second from point 16" "$(tr '\n' ' ' <s1/slurm/batch-1.list)" "16 17 18 19 "
has "a record names its array task" s1/points/0017/record.json '"slurm_array_task_id": "1"'
has "... and its array" s1/points/0017/record.json '"slurm_job_id": "[0-9]+"'
same "the queue is empty" "$(squeue --noheader)" ""
expect "run again: nothing to run" 0 "$QOSIM" sweep run s1 --executor slurm
claim "... and no array submitted" test ! -e s1/slurm/batch-2.list

# ---- a point that fails on the cluster, and --retry-failed ---------------------
# The failure: point 0003's result.json made a directory, which `qosim run
# --json` refuses to replace, so that run exits with an error on the cluster
# and its array task records the point as failed. It does not touch the
# point's key (the scenario and its inputs), so the same point is retried
# once the directory is gone; and unlike killing the run while it runs
# (a few milliseconds), it cannot miss.
expect "plan again into another folder" 0 "$QOSIM" sweep plan sw.yaml -o s2
mkdir s2/points/0003/result.json
expect "run: a failed point fails the run" 1 "$QOSIM" sweep run s2 --executor slurm
has "run: ... counted" "$TMP/err" "^this run: 19 done, 1 failed, 0 not finished$"
expect "status: exits 1" 1 "$QOSIM" sweep status s2
same "status: ... counted" "$(head -1 "$TMP/out")" "20 points: 19 done, 1 failed, 0 pending"
has "status: ... naming the point" "$TMP/out" "^failed 0003"
has "the record was written on the cluster" s2/points/0003/record.json '"slurm_job_id": "[0-9]+"'
rmdir s2/points/0003/result.json
expect "run --retry-failed" 0 "$QOSIM" sweep run s2 --executor slurm --retry-failed
same "... one array, of the failed point alone" "$(find s2/slurm -name '*.list' | wc -l) $(cat s2/slurm/batch-2.list)" "3 3"
expect "status: every point done" 0 "$QOSIM" sweep status s2

# ---- an array task killed --------------------------------------------------------
# Three points of about a second each; the array task running point 0001
# is killed (its `qosim sweep point` and the run under it, SIGKILL, as an
# OOM kill or a lost node would end it) while the point runs. The task
# leaves no record, so the executor records the point as failed, naming the
# task; --retry-failed runs it again and the sweep is done.
sed 's/duration: 200us/duration: 200ms/; s/interval: 50us/interval: 10ms/' scen.yaml >kill-scen.yaml
printf 'base: kill-scen.yaml\naxes:\n  - {key: seed, range: {from: 1, to: 3}}\n' >kill.yaml
"$QOSIM" sweep plan kill.yaml -o kl >/dev/null
"$QOSIM" sweep run kl --executor slurm >"$TMP/kl.out" 2>"$TMP/kl.err" &
pid=$!
run=
for _ in $(seq 600); do
    run=$(pgrep -f "qosim run $TMP/kl/points/0001/scenario.yaml" | head -1)
    [ -n "$run" ] && break
    sleep 0.05
done
claim "killed: point 0001's run was seen running" test -n "$run"
task=$(ps -o ppid= -p "$run" | tr -d ' ')
kill -KILL "$task" "$run" 2>/dev/null
wait $pid
same "killed: run exits 1" "$?" 1
has "killed: run names the task" "$TMP/kl.err" "point 0001: array task [0-9]+_1 ended without writing the point's record"
expect "killed: status exits 1" 1 "$QOSIM" sweep status kl
same "killed: ... the point failed, the others done" "$(head -1 "$TMP/out")" "3 points: 2 done, 1 failed, 0 pending"
has "killed: ... saying how" "$TMP/out" "^failed 0001 \(seed=2\): array task [0-9]+_1 ended without"
expect "killed: --retry-failed finishes the sweep" 0 "$QOSIM" sweep run kl --executor slurm --retry-failed
has "killed: ... running that point alone" "$TMP/err" "^3 points: 2 done, 1 failed, 1 to run \(slurm\)$"
expect "killed: every point done" 0 "$QOSIM" sweep status kl

# ---- the local executor's results, the same --------------------------------------
expect "plan for the local executor" 0 "$QOSIM" sweep plan sw.yaml -o l1
expect "run --executor local" 0 "$QOSIM" sweep run l1 --executor local
for d in s1 s2 l1; do expect "collect $d" 0 "$QOSIM" sweep collect $d; done
same "results.csv: a header and a row per point" "$(wc -l <l1/results.csv)" 21
claim "results.csv: the cluster's the same as the local one's" cmp s1/results.csv l1/results.csv
claim "... after a retry too" cmp s2/results.csv l1/results.csv

# ---- interrupted -----------------------------------------------------------------
# Points that run for minutes, in two arrays (--max-array); the run is
# stopped once all four are running.
sed 's/duration: 200us/duration: 100s/; s/interval: 50us/interval: 1ms/' scen.yaml >long-scen.yaml
cat >long.yaml <<'Y'
base: long-scen.yaml
axes:
  - {key: seed, range: {from: 1, to: 4}}
Y
"$QOSIM" sweep plan long.yaml -o lg >/dev/null
"$QOSIM" sweep run lg --executor slurm --max-array 2 >"$TMP/lg.out" 2>"$TMP/lg.err" &
pid=$!
for _ in $(seq 100); do
    [ "$(squeue --noheader --states=RUNNING | wc -l)" -eq 4 ] && break
    sleep 0.1
done
same "interrupted: the four points were running" "$(squeue --noheader --states=RUNNING | wc -l)" 4
kill -INT $pid
wait $pid
same "interrupted: exits 130" "$?" 130
has "interrupted: says so, naming both arrays" "$TMP/lg.err" "interrupted: arrays [0-9]+,[0-9]+ cancelled"
same "interrupted: the arrays cancelled" "$(squeue --noheader)" ""
same "interrupted: no run is left" "$(pgrep -f "$TMP/lg/" | wc -l)" 0
same "interrupted: no point recorded (they are not failures)" "$(ls lg/points/*/record.json 2>/dev/null)" ""
expect "interrupted: status exits 1" 1 "$QOSIM" sweep status lg
same "interrupted: ... all pending" "$(head -1 "$TMP/out")" "4 points: 0 done, 0 failed, 4 pending"
