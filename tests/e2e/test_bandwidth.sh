#!/bin/bash
# End-to-end tests of bandwidth reservations a user can see: the shipped
# example (examples/cbqri-bandwidth.yaml on riscv-edge), when a reservation
# acts and when it cannot (tests/e2e/qos/share-*.yaml, figures in
# docs/mechanisms.md), and the plot that shows them: three panels on one
# time axis, memory bandwidth with the caps and reservations in force, and
# sixteen distinct colours.
. "$(dirname "$0")/lib.sh"
Q="$(cd "$(dirname "$0")" && pwd)/qos"
EX="$(cd "$(dirname "$0")/../.." && pwd)/examples"

# rd TABLE PHASE TASK...: the tasks' memory reads, GB/s, summed.
rd() {
    local t=$1 ph=$2 s=0
    shift 2
    for x in "$@"; do s=$(awk -v a="$s" -v b="$(col "$t" "$ph" "$x" 4)" 'BEGIN { print a + b }'); done
    echo "$s"
}
calc() { awk "BEGIN { print $1 }"; }
# near and ge (lib.sh) of figures that must be there: a missing or zero
# figure fails, so a run that produced nothing cannot pass.
pos() { for x in "$@"; do awk -v a="$x" 'BEGIN { exit !(a > 0) }' || return 1; done; }
near() { pos "$1" "$2" && awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t * b) }'; }
ge() { pos "$1" "$2" && awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { exit !(a >= b * f) }'; }
VISION="camera detect" BATCH="batch1 batch2 batch3" BACKUP="backup1 backup2 backup3"

# Every experiment runs on both CBQRI texts (docs/cbqri-versions.md): the
# shipped profiles follow 1.0; the draft's are riscv-soc-draft and riscv-edge
# with qos.cbqri.spec draft-2023. No weight here is 0, where the two differ.
"$QOSIM" profiles show riscv-edge | sed 's/^    spec: .*/    spec: draft-2023/' >"$TMP/riscv-edge-draft.yaml"
on() { # on TEXT SCENARIO: the scenario's path, on the draft's profiles for TEXT draft
    if [ "$1" = 1.0 ]; then echo "$2"; return; fi
    sed -e "s|^platform: riscv-edge\$|platform: $TMP/riscv-edge-draft.yaml|" \
        -e 's|^platform: riscv-soc$|platform: riscv-soc-draft|' "$2" >"$TMP/draft-${2##*/}"
    echo "$TMP/draft-${2##*/}"
}
for text in 1.0 draft; do
    # ---- the example: a reservation protects the vision group --------------------
    # riscv-edge's controller carries 12.8 GB/s; vision reserves 50%, Rbwb 128 of
    # 256 blocks: 6.4 GB/s. The eight harts ask about four times the channel.
    cap=12.8 resv=6.4
    expect "$text: cbqri-bandwidth runs" 0 "$QOSIM" run "$(on "$text" "$EX/cbqri-bandwidth.yaml")" --plot "$TMP/bw-$text.svg"
    cp "$TMP/out" "$TMP/bw"
    for ph in shared reserved weighted; do
        read -r v b k < <(echo "$(rd "$TMP/bw" $ph $VISION) $(rd "$TMP/bw" $ph $BATCH) $(rd "$TMP/bw" $ph $BACKUP)")
        eval "v_$ph=$v b_$ph=$b k_$ph=$k"
        tot=$(calc "$v + $b + $k")
        claim "$text: $ph: the channel is saturated (the groups read $tot of $cap GB/s, within 3%)" near "$tot" $cap 0.03
    done
    # Without a reservation the three groups that want more split it equally.
    claim "$text: shared: vision reads $v_shared GB/s, clearly less than its reservation $resv (<= 80%)" \
        ge "$(calc "0.8 * $resv")" "$v_shared" 1
    for g in vision:$v_shared batch:$b_shared backup:$k_shared; do
        claim "$text: shared: each group gets a third of the channel (${g%:*}: ${g#*:} GB/s within 5% of 4.27)" \
            near "${g#*:}" "$(calc "$cap / 3")" 0.05
    done
    # With it, vision gets its reservation plus a third (Mweight 1 of 3) of the
    # spare 6.4 GB/s; the neighbours share the rest equally.
    claim "$text: reserved: vision reads $v_reserved GB/s, at least its reservation $resv (within 5%)" \
        ge "$v_reserved" $resv 0.95
    want=$(calc "$resv + ($cap - $resv) / 3")
    claim "$text: reserved: vision's $v_reserved GB/s is its reservation plus a third of the spare ($want) within 5% of the controller" \
        near "$v_reserved" "$want" "$(calc "0.05 * $cap / $want")"
    claim "$text: reserved: the neighbours share the rest (batch + backup $(calc "$b_reserved + $k_reserved") = $cap - vision within 3%)" \
        near "$(calc "$b_reserved + $k_reserved")" "$(calc "$cap - $v_reserved")" 0.03
    claim "$text: reserved: batch $b_reserved and backup $k_reserved GB/s equal within 5%" near "$b_reserved" "$k_reserved" 0.05
    # Mweight 3 for batch: the spare splits 1:3:1; the reservation stays.
    claim "$text: weighted: vision keeps its reservation ($v_weighted GB/s >= $resv within 5%)" ge "$v_weighted" $resv 0.95
    claim "$text: weighted: batch (Mweight 3) reads 3 x backup's (Mweight 1) within 10% ($b_weighted, $k_weighted GB/s)" \
        near "$b_weighted" "$(calc "3 * $k_weighted")" 0.10
    i1=$(col "$TMP/bw" shared camera 1) i2=$(col "$TMP/bw" reserved camera 1)
    claim "$text: camera's IPC recovers with the reservation ($i1 -> $i2, x1.5 or more)" ge "$i2" "$i1" 1.5
    expect "$text: vision alone runs" 0 "$QOSIM" run "$(on "$text" "$EX/cbqri-bandwidth.yaml")" --only camera,detect
    alone=$(rd "$TMP/out" shared $VISION)
    claim "$text: vision alone reads $alone GB/s, well above its reservation: the controller is what limits it" \
        ge "$alone" $resv 1.5
    expect "$text: one riscv-edge hart alone runs" 0 "$QOSIM" run "$(on "$text" "$EX/cbqri-bandwidth.yaml")" --only batch1
    one=$(col "$TMP/out" shared batch1 4)
    claim "$text: one streaming riscv-edge hart reads $one GB/s, within 10% of 64 B x 16 / 140 ns (7.31)" \
        near "$one" 7.31 0.10

    # ---- when a reservation cannot act -----------------------------------------
    # riscv-soc: sixteen streaming harts cannot saturate 89.6 GB/s, so nobody is
    # held back and a 30% reservation changes nothing.
    expect "$text: share-soc16 runs" 0 "$QOSIM" run "$(on "$text" "$Q/share-soc16.yaml")"
    cp "$TMP/out" "$TMP/soc"
    tot=$(rd "$TMP/soc" shared s0 s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 s12 s13 s14 s15)
    claim "$text: riscv-soc: 16 streaming harts read $tot GB/s, below 85% of 89.6" ge 76.16 "$tot" 1
    s1=$(col "$TMP/soc" shared s0 4) s2=$(col "$TMP/soc" reserved s0 4)
    claim "$text: riscv-soc: a 30% reservation leaves s0 at $s1 -> $s2 GB/s (within 3%)" near "$s2" "$s1" 0.03
    expect "$text: one riscv-soc hart alone runs" 0 "$QOSIM" run "$(on "$text" "$Q/share-soc16.yaml")" --only s0
    one=$(col "$TMP/out" shared s0 4)
    claim "$text: one streaming riscv-soc hart reads $one GB/s, within 10% of 64 B x 8 / 110 ns (4.65)" \
        near "$one" 4.65 0.10
    # A reservation guarantees admission, not latency: a one-hart group cannot
    # keep enough lines in flight through the saturated channel to ask for it.
    expect "$text: vision of one hart runs" 0 "$QOSIM" run "$(on "$text" "$EX/cbqri-bandwidth.yaml")" \
        --only camera,batch1,batch2,batch3,backup1,backup2,backup3
    c1=$(col "$TMP/out" shared camera 4) c2=$(col "$TMP/out" reserved camera 4)
    claim "$text: one hart's group: 50% reserved leaves camera at $c1 -> $c2 GB/s (within 10%)" near "$c2" "$c1" 0.10
    claim "$text: one hart's group: camera's $c2 GB/s stays far below the 6.4 reserved (< 60%)" \
        ge "$(calc "0.6 * $resv")" "$c2" 1
    # Tasks left in the default group share its reservation: every block the
    # groups leave, up to MRBWB (224 of 256). A group without one gets half the
    # 32 blocks nobody may reserve (0.8 GB/s); with 50% it gets 6.4 + 0.8.
    expect "$text: share-edge-default runs" 0 "$QOSIM" run "$(on "$text" "$Q/share-edge-default.yaml")"
    v1=$(rd "$TMP/out" shared $VISION) v2=$(rd "$TMP/out" reserved $VISION)
    claim "$text: default group: vision without a reservation reads $v1 GB/s, half the unreservable 1.6 (within 15%)" \
        near "$v1" 0.8 0.15
    claim "$text: default group: vision with 50% reads $v2 GB/s, 6.4 + 0.8 within 5%" near "$v2" 7.2 0.05
done
cp "$TMP/bw-1.0.svg" "$TMP/bw.svg"

# ---- the plot ----------------------------------------------------------------
# A plotter that keeps the program it is given.
printf '#!/bin/sh\ncat >"$GP_OUT"\n' >"$TMP/gnuplot"
chmod +x "$TMP/gnuplot"
tasks() { # tasks N: N streaming tasks on riscv-soc's 16 harts, in classes 0-3
    for ((i = 0; i < $1; i++)); do
        echo "  - {name: t$i, cpu: $((i % 16)), class: $((i % 4)), workload: {pattern: seq, wss: 64M, access: 64}}"
    done
}
for n in 16 18; do
    {
        printf 'platform: riscv-soc\nduration: 300us\ninterval: 50us\ntasks:\n'
        tasks $n
        printf 'phases:\n  - {at: 100us, bandwidth: [{class: 1, reserve: 20%%}]}\n'
    } >"$TMP/t$n.yaml"
    GP_OUT="$TMP/t$n.gp" QOSIM_GNUPLOT="$TMP/gnuplot" \
        expect "plot of $n tasks (fake gnuplot)" 0 "$QOSIM" run "$TMP/t$n.yaml" --quiet --plot "$TMP/t$n.png"
done
gp=$TMP/t16.gp
same "plot: three panels" "$(grep -c '^plot ' "$gp")" 3
has "plot: the panels share fixed margins (one time axis)" "$gp" '^set multiplot layout 3,1 .*margins [0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+'
same "plot: time labels on the bottom panel only" \
    "$(awk '/^set format x/ { f = $0 } /^set xlabel/ { l = 1 } /^plot / { printf "%s%s|", f ~ /%g/ ? "x" : "-", l ? "l" : "" }' "$gp")" "-|-|xl|"
has "plot: legend outside right" "$gp" '^set key outside right'
same "plot: 16 tasks in 16 distinct colours" \
    "$(grep -m1 '^plot ' "$gp" | grep -o "lc rgb '#[0-9a-f]*'" | sort -u | wc -l)" 16
same "plot: 18 tasks in 18 distinct line styles (dashes past 16 colours)" \
    "$(grep -m1 '^plot ' "$TMP/t18.gp" | grep -o "lc rgb '#[0-9a-f]*' dt [0-9]*" | sort -u | wc -l)" 18
same "plot: the bottom panel draws every task's memory reads" \
    "$(grep '^plot ' "$gp" | sed -n 3p | grep -o 'using 1:4 ' | wc -l)" 16
# Class 1's 20% reservation (51 of 256 blocks of 89.6 GB/s: 17.85 GB/s) from
# 0.1 ms on, with the total of its four tasks.
same "plot: class 1's reservation drawn where it is in force" \
    "$(sed -n '/^\$l1 << EOD/,/^EOD/p' "$gp" | awk 'NF == 2 { printf "%s %.2f|", $1, $2 }')" "0.1 17.85|0.3 17.85|"
has "plot: class 1's reservation and total in the legend" "$gp" "title 'class 1 \(total\)'.*title 'class 1 reserve'"
# Real drawings.
has "plot: the example draws as SVG" "$TMP/bw.svg" '<svg'
has "plot: the SVG shows vision's reservation" "$TMP/bw.svg" 'vision reserve'
has "plot: the SVG has the bandwidth panel" "$TMP/bw.svg" 'memory reads \(GB/s\)'
expect "plot: 16 tasks draw as PNG" 0 "$QOSIM" run "$TMP/t16.yaml" --quiet --plot "$TMP/t16.png"
same "plot: the PNG is a PNG" "$(head -c 4 "$TMP/t16.png" | od -An -c | tr -d ' ')" '211PNG'
