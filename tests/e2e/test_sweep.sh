#!/bin/bash
# End-to-end tests of qosim sweep (docs/sweeps.md) with the local executor:
# expansion (product, zip, exclude, ranges, globs), the sweep file's errors,
# keys (a changed input reruns its points, an unchanged one does not; a
# plan made again keeps what did not change), resume after SIGINT and
# SIGKILL, failed points and --retry-failed, collect's refusals and rows,
# plot, and the usage errors. The SLURM executor: test_sweep_slurm.sh.
. "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMP" || exit 1

cp "$DATA/tiny.yaml" tiny.yaml
cat >scen.yaml <<'Y'
platform: tiny.yaml
duration: 100us
interval: 50us
tasks:
  - {name: a, cpu: 0, class: 1, workload: {pattern: random, wss: 32K}}
phases:
  - name: one
    at: 0us
    alloc:
      - {cache: L3, class: 1, mask: 0xff}
Y

# ---- expansion ----------------------------------------------------------------
cat >sw.yaml <<'Y'
base: scen.yaml
axes:
  - name: wss
    key: tasks[a].workload.wss
    values: [8K, 16K, 32K]
  - key: seed
    range: {from: 1, to: 3}
  - name: mask
    key: phases[one].alloc[0].mask
    values: [0x1, 0xf]
exclude:
  - {wss: 8K, mask: 0x1}
Y
expect "plan: a product" 0 "$QOSIM" sweep plan sw.yaml -o s1
same "plan: its count, less the excluded" "$(cat "$TMP/out")" "15 points planned in s1"
same "plan: the manifest's header" "$(head -1 s1/manifest.tsv)" "$(printf 'point\twss\tseed\tmask')"
same "plan: the first axis varies slowest" "$(sed -n '2p;3p;4p;$p' s1/manifest.tsv | tr '\t' ' ')" \
    "0000 8K 1 0xf
0001 8K 2 0xf
0002 8K 3 0xf
0014 32K 3 0xf"
has "plan: a point's scenario has its values" s1/points/0005/scenario.yaml '^ *mask: 0x1$'
has "plan: ... and its seed" s1/points/0005/scenario.yaml '^seed: 2$'
has "plan: ... and the profile's absolute path" s1/points/0004/scenario.yaml "^platform: \"$TMP/tiny.yaml\"\$"
same "plan: the inputs it reads" "$(cat s1/points/0004/inputs)" "$TMP/tiny.yaml"
expect "plan: a point reruns alone with qosim run" 0 "$QOSIM" run s1/points/0004/scenario.yaml --quiet

mkdir traces
cp "$DATA/small.lackey" traces/b.lackey
cp "$DATA/small.lackey" traces/a.lackey
cat >zip.yaml <<'Y'
base:
  platform: tiny.yaml
  duration: 50us
  tasks:
    - name: t
      cpu: 0
      workload: {trace: traces/a.lackey}
axes:
  - {name: ways, values: [1, 2, 4]}
  - name: cap
    key: tasks[0].class
    values: [1, 2, 3]
  - name: trace
    key: tasks[0].workload.trace
    glob: traces/*.lackey
  - key: duration
    range: {from: 0.05, to: 0.15, step: 0.05, unit: ms}
zip: [[ways, cap]]
Y
expect "plan: zip, glob, a range with a unit, an inline base" 0 "$QOSIM" sweep plan zip.yaml -o zout
same "plan: zipped axes move together" "$(sed 1d zout/manifest.tsv | cut -f2,3 | uniq | tr '\t\n' ' ')" \
    "1 1 2 2 4 3 "
same "plan: glob values as written, sorted" "$(cut -f4 zout/manifest.tsv | sed 1d | sort -u | tr '\n' ' ')" \
    "traces/a.lackey traces/b.lackey "
same "plan: range values" "$(sed -n '2,4p' zout/manifest.tsv | cut -f5 | tr '\n' ' ')" "0.05ms 0.1ms 0.15ms "
same "plan: 3 x 2 x 3 points" "$(sed 1d zout/manifest.tsv | wc -l)" 18
has "plan: a glob's file by its absolute path" zout/points/0003/scenario.yaml "trace: \"?$TMP/traces/b.lackey\"?$"
has "plan: an inline base's path from the sweep file" zout/points/0000/scenario.yaml "platform: \"$TMP/tiny.yaml\""

# The shipped example plans: 11 ways x 5 delays, the masks zipped with the ways.
expect "the example plans" 0 "$QOSIM" sweep plan "$TOP/examples/sweep-ways-mba.yaml" -o ex
same "the example: 55 points" "$(cat "$TMP/out")" "55 points planned in ex"
same "the example: 11 ways, 90 delay" "$(tail -1 ex/manifest.tsv | tr '\t' ' ')" "0054 11 0x7ff 0x001 90"
has "the example: ... in the point's scenario" ex/points/0054/scenario.yaml '^ *delay: 90$'

# ---- the sweep file's errors: FILE:LINE: key, and nothing written ------------------
badsw() { # badsw NAME WANT (the sweep file on stdin)
    cat >bad.yaml
    rm -rf bout
    "$QOSIM" sweep plan bad.yaml -o bout >"$TMP/out" 2>"$TMP/err"
    local rc=$? got
    got=$(head -1 "$TMP/err")
    if [ "$rc" -eq 2 ] && [ "$got" = "qosim sweep: $2" ] && [ ! -e bout ] && [ ! -s "$TMP/out" ]; then
        ok "bad sweep: $1"
    else notok "bad sweep: $1" "exit $rc" "got:  $got" "want: qosim sweep: $2"; fi
}
badsw "a misspelt top key" "bad.yaml:2: axis: unknown key (did you mean 'axes'?)" <<'Y'
base: scen.yaml
axis: []
Y
badsw "no axes" "bad.yaml:1: missing key 'axes' (what the sweep varies)" <<'Y'
base: scen.yaml
Y
badsw "a path past a list's end" \
    "bad.yaml:3: axes[0].key: 'tasks[3].cpu': tasks has 1 items, so no [3]" <<'Y'
base: scen.yaml
axes:
  - key: tasks[3].cpu
    values: [0]
Y
badsw "an item name that is not there" \
    "bad.yaml:3: axes[0].key: 'phases[two].at': phases has no item named 'two'" <<'Y'
base: scen.yaml
axes:
  - key: phases[two].at
    values: [0us]
Y
badsw "a misspelt scenario key, through the scenario's check" \
    "bad.yaml:3: axes[0]: point 0000 (wsss=8K): tasks[0].workload.wsss: unknown key (did you mean 'wss'?)" <<'Y'
base: scen.yaml
axes:
  - key: tasks[0].workload.wsss
    values: [8K]
Y
badsw "a value the platform cannot take" \
    "bad.yaml:3: axes[0]: point 0001 (mask=0x100): phases[0].alloc[0].mask: 0x100 is out of range (0..255)" <<'Y'
base: scen.yaml
axes:
  - key: phases[0].alloc[0].mask
    values: [0x1, 0x100]
Y
badsw "an exclusion naming no axis" "bad.yaml:7: exclude[0].wsss: no axis named 'wsss' (did you mean 'wss'?)" <<'Y'
base: scen.yaml
axes:
  - key: tasks[0].workload.wss
    values: [8K]
  - {key: seed, values: [1, 2]}
exclude:
  - {wsss: 8K}
Y
badsw "an exclusion of a value the axis lacks" "bad.yaml:6: exclude[0].seed: '3' is not a value of axis 'seed'" <<'Y'
base: scen.yaml
axes:
  - {key: seed, values: [1, 2]}
  - {key: duration, values: [50us, 60us]}
exclude:
  - {seed: 3}
Y
badsw "zipped axes of different lengths" \
    "bad.yaml:5: zip[0][1]: axis 'duration' has 3 values and 'seed' 2: zipped axes have as many" <<'Y'
base: scen.yaml
axes:
  - {key: seed, values: [1, 2]}
  - {key: duration, values: [50us, 60us, 70us]}
zip: [[seed, duration]]
Y
badsw "a glob that matches nothing" "bad.yaml:4: axes[0].glob: 'nothing/*.xz' matches no file" <<'Y'
base: scen.yaml
axes:
  - key: tasks[0].workload.trace
    glob: nothing/*.xz
Y
badsw "a repeated value" "bad.yaml:3: axes[0].values[1]: '1' is already a value of axis 'seed'" <<'Y'
base: scen.yaml
axes:
  - {key: seed, values: [1, 1]}
Y
badsw "an axis with two kinds of values" "bad.yaml:3: axes[0]: an axis has one of values, range or glob" <<'Y'
base: scen.yaml
axes:
  - {key: seed, values: [1], range: {from: 1, to: 2}}
Y
badsw "two axes setting one key" \
    "bad.yaml:4: axes[1].key: 'seed' (seed) overlaps what axis 'seed' sets (line 3, seed): a key has one axis" <<'Y'
base: scen.yaml
axes:
  - {key: seed, values: [1, 2]}
  - {name: s2, key: seed, values: [3, 4]}
Y
badsw "an axis setting what holds another's key" \
    "bad.yaml:6: axes[1].key: 'tasks[a].workload' (tasks[0].workload) overlaps what axis 'wss' sets (line 4, tasks[0].workload.wss): a key has one axis" <<'Y'
base: scen.yaml
axes:
  - name: wss
    key: tasks[a].workload.wss
    values: [8K]
  - key: tasks[a].workload
    values: [{pattern: seq}]
Y
badsw "a label axis zipped with nothing" \
    "bad.yaml:3: axes[0]: axis 'label' sets no key, so its points would all be the same: zip it with the axes it labels (zip: [[label, ...]]) or give it a key" <<'Y'
base: scen.yaml
axes:
  - {name: label, values: [1, 2]}
Y
badsw "a bracketed path unquoted in a flow mapping" \
    "bad.yaml:3: did not find expected ',' or '}' (a key path with brackets in a {...} mapping is quoted: {key: \"tasks[0].cpu\", ...})" <<'Y'
base: scen.yaml
axes:
  - {key: tasks[0].cpu, values: [0, 1]}
Y
badsw "a misspelt step of a path" \
    "bad.yaml:3: axes[0].key: 'tasks[a].worklod.wss': tasks[0] has no key 'worklod' (did you mean 'workload'?)" <<'Y'
base: scen.yaml
axes:
  - key: tasks[a].worklod.wss
    values: [8K]
Y
badsw "a key no axis sets, made wrong by one that does: the base's line" \
    "bad.yaml:1: base: point 0000 (duration=40us): phases[1].at: starts at or after the end of the run" <<'Y'
base:
  platform: tiny.yaml
  duration: 100us
  tasks: [{name: a, cpu: 0, workload: {pattern: seq}}]
  phases: [{name: one, at: 0us}, {name: two, at: 50us}]
axes:
  - {key: duration, values: [40us]}
Y
mkdir -p unfinished/points/0000
expect "plan: a folder an interrupted plan left is planned again" 0 "$QOSIM" sweep plan sw.yaml -o unfinished
mkdir notsweep && echo keep >notsweep/mine
expect "plan: a folder that is not a sweep is refused" 2 "$QOSIM" sweep plan sw.yaml -o notsweep
same "plan: ... and left as it was" "$(ls notsweep)" mine

# ---- running, keys ------------------------------------------------------------------
expect "run: every point" 0 "$QOSIM" sweep run s1 -j 2
has "run: says what it ran" "$TMP/err" '^15 points: 0 done, 0 failed, 15 to run \(local\)$'
expect "status: all done exits 0" 0 "$QOSIM" sweep status s1
same "status: counts" "$(cat "$TMP/out")" "15 points: 15 done, 0 failed, 0 pending"
has "run: a record per point" s1/points/0007/record.json '"status": "ok"'
has "run: ... with the inputs' hashes" s1/points/0007/record.json "\"$TMP/tiny.yaml\": \"$(sha256sum tiny.yaml | cut -c1-64)\""
"$QOSIM" run s1/points/0007/scenario.yaml --quiet --json alone.json
same "run: a point's result is what qosim run gives" "$(sed 's/"scenario": "[^"]*"//' alone.json | md5sum)" \
    "$(sed 's/"scenario": "[^"]*"//' s1/points/0007/result.json | md5sum)"
expect "run again: nothing to do" 0 "$QOSIM" sweep run s1
has "run again: ... says so" "$TMP/err" '15 done, 0 failed, 0 to run'
touch tiny.yaml
expect "run: an input touched but not changed reruns nothing" 0 "$QOSIM" sweep run s1
has "run: ... (content, not time)" "$TMP/err" '15 done, 0 failed, 0 to run'
echo "# a change" >>tiny.yaml
expect "status: a changed input makes its points pending" 1 "$QOSIM" sweep status s1
same "status: ... every one" "$(head -1 "$TMP/out")" "15 points: 0 done, 0 failed, 15 pending"
expect "run: ... and they run again" 0 "$QOSIM" sweep run s1
expect "zip: run" 0 "$QOSIM" sweep run zout
echo "I  00001008,4" >>traces/b.lackey
"$QOSIM" sweep run zout 2>"$TMP/err"
has "run: a changed trace reruns only its points" "$TMP/err" '^18 points: 9 done, 0 failed, 9 to run'
# A plan made again with a value added at the end of the first axis: the
# points before keep their number, scenario and result.
sed -i 's/values: \[8K, 16K, 32K\]/values: [8K, 16K, 32K, 64K]/' sw.yaml
expect "plan again: into the same folder" 0 "$QOSIM" sweep plan sw.yaml -o s1
"$QOSIM" sweep run s1 2>"$TMP/err"
has "plan again: only the new points run" "$TMP/err" '^21 points: 15 done, 0 failed, 6 to run'
sed -i 's/values: \[8K, 16K, 32K, 64K\]/values: [8K, 16K]/' sw.yaml
"$QOSIM" sweep plan sw.yaml -o s1 >/dev/null
same "plan again: fewer points remove the others' folders" "$(ls s1/points | wc -l)" 9
expect "plan again: ... and those left are done" 0 "$QOSIM" sweep status s1

# ---- interrupted, failed ---------------------------------------------------------------
cat >long.yaml <<'Y'
base: scen.yaml
axes:
  - {key: duration, values: [30ms, 31ms]}
  - {key: seed, range: {from: 1, to: 4}}
Y
for sig in INT KILL; do
    rm -rf lout
    "$QOSIM" sweep plan long.yaml -o lout >/dev/null
    "$QOSIM" sweep run lout -j 2 >/dev/null 2>&1 &
    pid=$!
    # Stopped once some points are done and others are not.
    for _ in $(seq 300); do
        [ "$(ls lout/points/*/record.json 2>/dev/null | wc -l)" -ge 2 ] && break
        sleep 0.05
    done
    expect "SIG$sig: a second run of the folder meanwhile is refused" 1 "$QOSIM" sweep run lout
    has "SIG$sig: ... saying why" "$TMP/err" "another 'qosim sweep run' is running on this folder"
    kill -$sig $pid
    { wait $pid; } 2>/dev/null
    rc=$?
    want=$([ $sig = INT ] && echo 130 || echo 137)
    same "SIG$sig: the executor's status" "$rc" "$want"
    sleep 0.5 # SIGKILL: the runs end when their parent does
    same "SIG$sig: no run is left" "$(pgrep -f "$TMP/lout/" | wc -l)" 0
    "$QOSIM" sweep status lout >"$TMP/st"
    claim "SIG$sig: some points done, some pending, none failed" \
        awk 'NR == 1 { exit !($3 >= 2 && $3 < 8 && $5 == 0 && $7 > 0) }' "$TMP/st"
    expect "SIG$sig: run again finishes the sweep" 0 "$QOSIM" sweep run lout
    has "SIG$sig: ... running only what was left" "$TMP/err" "^8 points: $(awk 'NR == 1 { print $3 }' "$TMP/st") done"
    # (SIGKILL may catch a record being written: the next run removes what
    # it left.)
    same "SIG$sig: no temporary file is left" "$(find lout -name '*.tmp*' -o -name '.*' -type f | wc -l)" 0
done

# A trace whose later record is bad: the plan opens it, the run fails.
{ cat "$DATA/small.lackey"; echo " Q zz"; } >traces/c.lackey
expect "failed: planned" 0 "$QOSIM" sweep plan zip.yaml -o zout
expect "failed: run exits 1" 1 "$QOSIM" sweep run zout
has "failed: run names them" "$TMP/err" "^9 points failed: 'qosim sweep status zout' says why; --retry-failed runs them again$"
expect "failed: status exits 1" 1 "$QOSIM" sweep status zout
same "failed: status counts" "$(head -1 "$TMP/out")" "27 points: 18 done, 9 failed, 0 pending"
has "failed: status says why" "$TMP/out" "^failed 0006 \(ways=1, cap=1, trace=traces/c.lackey, duration=0.05ms\): exit status 1: qosim run: .*c.lackey:11: "
has "failed: the record keeps standard error's end" zout/points/0006/record.json '"stderr_tail": "qosim run: .*c.lackey:11: '
expect "failed: run again does not rerun them" 1 "$QOSIM" sweep run zout
has "failed: ... says so" "$TMP/err" '^27 points: 18 done, 9 failed, 0 to run'
expect "collect: refuses while points failed" 1 "$QOSIM" sweep collect zout
has "collect: ... naming them" "$TMP/err" "9 of 27 points are not done \(failed: 0006, "
claim "collect: ... and writes nothing" test ! -e zout/results.csv -a ! -e zout/results.jsonl
expect "collect: --allow-missing takes the others" 0 "$QOSIM" sweep collect zout --allow-missing
same "collect: ... a row per done point (one task, one phase)" "$(sed 1d zout/results.csv | wc -l)" 18
same "collect: ... and a JSON line per done point" "$(wc -l <zout/results.jsonl)" 18
expect "failed: --retry-failed runs them again" 1 "$QOSIM" sweep run zout --retry-failed
has "failed: ... (the same failures: the run is deterministic)" "$TMP/err" '^this run: 0 done, 9 failed, 0 not finished$'
# Its input fixed, and one done point made pending: --retry-failed runs the
# failed ones only, plain run the pending one.
cp "$DATA/small.lackey" traces/c.lackey
rm zout/points/0000/record.json
expect "failed: --retry-failed after the fix" 0 "$QOSIM" sweep run zout --retry-failed
has "failed: ... runs only the failed points" "$TMP/err" '^27 points: 17 done, 0 failed, 9 to run'
expect "failed: ... the pending one is left" 1 "$QOSIM" sweep status zout
same "failed: ... to plain run" "$(head -1 "$TMP/out")" "27 points: 26 done, 0 failed, 1 pending"
expect "failed: ... which runs it" 0 "$QOSIM" sweep run zout
cp zout/manifest.tsv manifest.before
expect "collect: an output on the sweep's own manifest is refused" 2 "$QOSIM" sweep collect zout --jsonl zout/manifest.tsv
claim "collect: ... and the manifest is intact" cmp zout/manifest.tsv manifest.before
expect "collect: ... as is one on a point's result" 2 "$QOSIM" sweep collect zout --csv zout/points/0000/result.json
has "collect: ... naming it" "$TMP/err" "would replace the sweep's own points/0000/result.json"
expect "collect: all done" 0 "$QOSIM" sweep collect zout
same "collect: a row per point" "$(sed 1d zout/results.csv | wc -l)" 27
same "collect: the header" "$(head -1 zout/results.csv | cut -d, -f1-9)" "point,ways,cap,trace,duration,phase,task,instructions,cycles"
# The row of point 4 is the run of its scenario alone, figure for figure.
"$QOSIM" run zout/points/0004/scenario.yaml --quiet --json p4.json
want=$(awk -F'[:,]' '/"instructions"/ { gsub(/ /, ""); print $2; exit }' p4.json)
same "collect: a row's figures are its run's" "$(awk -F, '$1 == "0004" { print $8 }' zout/results.csv)" "$want"

# ---- plot ------------------------------------------------------------------------------
if command -v gnuplot >/dev/null; then
    expect "plot: lines over an axis" 0 "$QOSIM" sweep plot zout --metric ipc --x duration \
        --where trace=traces/a.lackey --where ways=1 -o p.svg
    has "plot: ... an SVG" p.svg '<svg'
    expect "plot: axes zipped together are one series" 0 "$QOSIM" sweep plot zout --metric ipc \
        --x duration --where trace=traces/a.lackey -o z.svg
    has "plot: ... named by the first of them" z.svg '>ways<'
    expect "plot: a heatmap over two" 0 "$QOSIM" sweep plot zout --metric misses.L1D --x ways \
        --y duration --where trace=traces/b.lackey -o h.svg
    has "plot: ... an SVG" h.svg '<svg'
    expect "plot: two points at one place are refused" 2 "$QOSIM" sweep plot zout --metric ipc \
        --x duration -o x.svg
    claim "plot: ... and nothing written" test ! -e x.svg
else
    ok "plot: skipped (no gnuplot)"
fi

# ---- the point subcommand, usage -----------------------------------------------------------
rm s1/points/0003/record.json
expect "point: runs one point" 0 "$QOSIM" sweep point s1 3
has "point: ... and records it" s1/points/0003/record.json '"status": "ok"'
expect "point: --list needs an array task" 2 env -u SLURM_ARRAY_TASK_ID "$QOSIM" sweep point s1 --list /dev/null
expect "point: a point the sweep lacks" 1 "$QOSIM" sweep point s1 99
expect "usage: run needs a folder" 2 "$QOSIM" sweep run
expect "usage: -j 0" 2 "$QOSIM" sweep run s1 -j 0
expect "usage: -j2 as make takes it" 0 "$QOSIM" sweep run s1 -j2
expect "usage: a SLURM option with the local executor" 2 "$QOSIM" sweep run s1 --partition batch
expect "usage: --help of a subcommand" 0 "$QOSIM" sweep plan --help
expect "usage: an unknown executor" 2 "$QOSIM" sweep run s1 --executor pbs
has "usage: ... names it" "$TMP/err" "--executor is local or slurm, not 'pbs'"
expect "usage: an unknown subcommand" 2 "$QOSIM" sweep launch out
expect "usage: not a sweep folder" 1 "$QOSIM" sweep status notsweep
has "usage: ... says so" "$TMP/err" "notsweep: not a planned sweep"
