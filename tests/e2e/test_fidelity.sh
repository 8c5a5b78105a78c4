#!/bin/bash
# The fidelity harness itself (fidelity/run, docs/fidelity.md), not the
# model's fidelity: measurements.yaml is well formed, every point has a
# source and an experiment that exists, a broken file is refused at its
# line, the trace generator reads the selftests' order, and the runner's
# table logic (vars, the model's expression, the difference, the target,
# held-out points apart, "not runnable", plots) on a tiny experiment.
. "$(dirname "$0")/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
run=$top/fidelity/run

# --- the shipped measurements ---------------------------------------------
expect "fidelity/run --check accepts fidelity/measurements.yaml" 0 "$run" --check --out "$TMP/chk"
pts=$TMP/chk/points.tsv
n=$(wc -l < "$pts")
claim "measurements.yaml has at least 40 points ($n)" test "$n" -ge 40
held=$(awk -F'\t' '$9 == "true"' "$pts" | wc -l)
claim "some points are held out, most are not ($held of $n)" test "$held" -ge 10 -a "$held" -lt "$n"
nosrc=$(awk -F'\t' '$3 == "" || $4 == "" || $5 == "" || $7 == "" || $8 == "" { print $1 }' "$pts")
same "every point has a source, part, setup, value and unit" "$nosrc" ""
noexp=$(cut -f10 "$pts" | sort -u | while read -r e; do [ -f "$top/fidelity/$e.yaml" ] || echo "$e"; done)
same "every point's experiment is a file in fidelity/" "$noexp" ""
# Every effect of the issue has points, or facts saying why not.
for e in cat mba prefetch ddio l3be cbqri; do
    if grep -qE "^    effect: $e\$" "$top/fidelity/measurements.yaml"; then ok "effect $e is covered"; else notok "effect $e is covered"; fi
done
cited=$(awk -F'\t' '{ print $3 }' "$pts" | sort -u | while read -r s; do
    grep -q "^  $s:\$" "$top/fidelity/measurements.yaml" || echo "$s"; done)
same "every source a point names is in sources" "$cited" ""
for p in "$top"/fidelity/profiles/*.yaml; do
    expect "$(basename "$p") is a valid profile" 0 "$QOSIM" profiles check "$p"
done

# --- a broken file is refused at its line -----------------------------------
mkdir -p "$TMP/bad"
cp "$top/fidelity/measurements.yaml" "$TMP/bad/"
for e in $(cut -f10 "$pts" | sort -u); do cp "$top/fidelity/$e.yaml" "$TMP/bad/"; done
# The first through fidelity/run, the others through its parser alone
# (fewer processes: the test stays fast on a loaded machine).
broken() { # NAME SED-EXPRESSION REGEX
    sed "$2" "$top/fidelity/measurements.yaml" > "$TMP/bad/measurements.yaml"
    if [ -z "${parser:-}" ]; then
        expect "refused: $1" 1 "$run" --check --measurements "$TMP/bad/measurements.yaml" --out "$TMP/bad/out"
    else
        expect "refused: $1" 1 awk -v dir="$TMP/bad" -f "$top/fidelity/lib/meas.awk" "$TMP/bad/measurements.yaml"
    fi
    has "refused: $1: the message names the line" "$TMP/err" "$3"
    parser=1
}
broken "a point without its source" '0,/^    source: martin-2025$/{//d}' "measurements.yaml:[0-9]+: point cat-4w: missing key 'source'"
broken "an unknown source" '0,/^    source: martin-2025$/s//    source: nobody-1999/' "point cat-4w: no source 'nobody-1999'"
broken "an experiment that does not exist" '0,/^    experiment: cat-ways$/s//    experiment: no-such/' "point cat-4w: no experiment .*no-such.yaml"
broken "a value that is not a number" '0,/^    value: 29.32$/s//    value: lots/' "point cat-4w: value 'lots' is not a number"
broken "a held_out that is not a boolean" '0,/^    held_out: false$/s//    held_out: maybe/' "held_out must be true or false"
broken "a duplicate id" 's/^  - id: cat-3w$/  - id: cat-4w/' "duplicate point id 'cat-4w'"
broken "an unknown key" '0,/^    x: 4$/s//    y: 4/' "unknown key 'y'"

# --- the trace generator: the selftests' order ------------------------------
awk -v span=4096 -v mult=23 -f "$top/fidelity/lib/fillbuf.awk" > "$TMP/fb.lackey"
reads=$(grep -c '^ L ' "$TMP/fb.lackey")
uniq=$(sed -n 's/^ L \([0-9a-f]*\),1$/\1/p' "$TMP/fb.lackey" | sort -u | wc -l)
same "fill_buf: a pass of 4096 bytes is 128 half-line reads" "$reads" 128
same "fill_buf: each half-line once a pass" "$uniq" 128
same "fill_buf: step 23 half-lines (0, 0x2e0, 0x5c0)" "$(sed -n 's/^ L \([0-9a-f]*\),1$/\1/p' "$TMP/fb.lackey" | head -3 | tr '\n' ' ')" "10000000 100002e0 100005c0 "

# --- the runner on a tiny experiment ----------------------------------------
d=$TMP/tiny
mkdir -p "$d"
cat > "$d/tiny.yaml" <<'EOF'
platform: intel-xeon
seed: 1
duration: 1ms
interval: 250us
settle: 250us
tasks:
  - name: t
    cpu: 0
    workload: {pattern: random, wss: 64K, mem_ratio: 0.3, write_ratio: 0}   # fidelity-var: mem_ratio=MR
phases:
  - name: a
    at: 0ms
  - name: b
    at: 500us
    alloc:
      - {cache: L3, class: 0, mask: 0x7ff}   # fidelity-var: mask=MASK
EOF
sed 's/^seed: 1$/seed: 1\nno_such_key: 1/' "$d/tiny.yaml" > "$d/refused.yaml"
cat > "$d/measurements.yaml" <<'EOF'
sources:
  test:
    cite: "the test itself"
    part: "none"
points:
  - id: exact-ok
    effect: cat
    source: test
    part: "none"
    setup: "model 50, measured 52: -2 pp, within 5 pp"
    quantity: "q"
    value: 52
    unit: "%"
    held_out: false
    experiment: tiny
    phase: a
    row: t
    model: "50 * instructions / instructions"
    plot: tiny
    x: 1
    series: "s"
    xlabel: "x"
  - id: exact-off
    effect: cat
    source: test
    part: "none"
    setup: "model 50, measured 60: -10 pp, outside"
    quantity: "q"
    value: 60
    unit: "%"
    held_out: true
    experiment: tiny
    phase: b
    row: t
    model: "100 * (instructions@a - instructions@a) / instructions + 50"
    plot: tiny
    x: 2
    series: "s"
    xlabel: "x"
  - id: relative
    effect: mba
    source: test
    part: "none"
    setup: "model 50, measured 40: +25%, outside 10%; a target of 30 takes it"
    quantity: "q"
    value: 40
    unit: "x"
    held_out: false
    experiment: tiny
    phase: a
    row: t
    model: "50"
    plot: tiny
    x: 3
    series: "s"
    xlabel: "x"
    target: 30
  - id: mem-ratio
    effect: mba
    source: test
    part: "none"
    setup: "the var sets the share of loads"
    quantity: "q"
    value: 50
    unit: "%"
    held_out: false
    experiment: tiny
    vars: "MR=0.5 MASK=0x00f"
    phase: a
    row: t
    model: "100 * references.L1D / instructions"
    plot: tiny
    x: 4
    series: "s"
    xlabel: "x"
  - id: refused
    effect: ddio
    source: test
    part: "none"
    setup: "qosim refuses the scenario"
    quantity: "q"
    value: 1
    unit: "%"
    held_out: false
    experiment: refused
    phase: a
    row: t
    model: "1"
    plot: tiny
    x: 5
    series: "s"
    xlabel: "x"
  - id: missing
    effect: ddio
    source: test
    part: "none"
    setup: "the expression names a field the run has not"
    quantity: "q"
    value: 1
    unit: "%"
    held_out: false
    experiment: tiny
    phase: a
    row: t
    model: "no_such_field + 1"
    plot: tiny
    x: 6
    series: "s"
    xlabel: "x"
EOF
export FIDELITY_NICE=0
expect "fidelity/run on a tiny experiment" 0 "$run" --measurements "$d/measurements.yaml" --out "$d/out"
cp "$TMP/out" "$d/table"
res=$d/out/results.tsv
field() { awk -F'\t' -v id="$1" -v c="$2" '$1 == id { print $c }' "$res"; }
same "exact-ok: model 50" "$(field exact-ok 5)" 50
same "exact-ok: -2.0 pp, ok" "$(field exact-ok 7) $(field exact-ok 9)" "-2.0 ok"
same "exact-off: FIELD@PHASE reads another phase; -10.0 pp, off" "$(field exact-off 7) $(field exact-off 9)" "-10.0 off"
same "relative: +25.0% against its own target 30, ok" "$(field relative 7) $(field relative 8) $(field relative 9)" "25.0 30 ok"
mr=$(field mem-ratio 5)
claim "mem-ratio: the var set mem_ratio 0.5 (model $mr)" near "$mr" 50 0.05
grep -q 'mask: 0x00f' "$d"/out/work/*-tiny/scenario.yaml
claim "the var set the mask in the run's copy" test $? -eq 0
has "refused: not runnable, with qosim's message" "$res" $'^refused\t.*\tnot runnable: refused.yaml:[0-9]+: no_such_key: unknown key'
has "missing: an error naming the field" "$res" $'^missing\t.*\terror: the run has no no_such_field for phase a, row t'
has "the table lists tuning points" "$d/table" '^=== Tuning points ===$'
held=$(awk '/^=== Held-out/ { h = 1 } h && /^  exact-off / { print "held" } !h && /^  exact-off / { print "tuning" }' "$d/table")
same "the held-out point is in the held-out table only" "$held" held
has "the summary counts the held-out point" "$d/table" '^held out: 1 points, 0 within target, 1 outside'
has "the summary counts the rest" "$d/table" '^tuning: 5 points, 3 within target, 0 outside, 1 not runnable, 1 errors'
if command -v gnuplot > /dev/null; then
    has "a plot is drawn" "$d/out/tiny.svg" '<svg'
fi
expect "--strict fails when a point is not within target" 1 "$run" --measurements "$d/measurements.yaml" --out "$d/out2" --no-plot --strict --only exact-off
expect "--strict passes when every point is" 0 "$run" --measurements "$d/measurements.yaml" --out "$d/out3" --no-plot --strict --only exact-ok,relative
expect "--help prints the usage" 0 "$run" --help
has "--help prints the usage: the options" "$TMP/out" '^  --only LIST'
expect "an unknown option is a usage error" 2 "$run" --bogus
has "an unknown option is named" "$TMP/err" "unknown option '--bogus'"
expect "--only that matches nothing is a usage error" 2 "$run" --measurements "$d/measurements.yaml" --out "$d/out4" --only nothing
