# Prints eval.awk's results as the side-by-side table: the tuning points,
# then the held-out points, each grouped by effect, and a summary line.
#
#   awk -v qosim=PATH -f table.awk RESULTS.tsv
BEGIN {
    FS = "\t"
    name["cat"] = "CAT and replacement (misses and occupancy vs. L3 ways)"
    name["mba"] = "MBA (one core's bandwidth vs. the throttle)"
    name["prefetch"] = "Prefetchers"
    name["ddio"] = "DDIO (receive-ring L3 write hits vs. ways and ring size)"
    name["l3be"] = "AMD L3BE / SMBA"
    name["cbqri"] = "CBQRI"
}

{
    n++
    for (i = 1; i <= NF; i++)
        R[n, i] = $i
    if (!($2 in eseen)) {
        eseen[$2] = 1
        eorder[++ne] = $2
    }
}

function unitstr(u) { return u == "%" ? " %" : " " u }

function show(held,   e, i, shown, t, v, m, d, verdict, tgt) {
    for (e = 1; e <= ne; e++) {
        shown = 0
        for (i = 1; i <= n; i++) {
            if (R[i, 2] != eorder[e] || R[i, 3] != held)
                continue
            if (!shown) {
                t = eorder[e] in name ? name[eorder[e]] : eorder[e]
                printf "\n%s\n", t
                printf "  %-20s %-16s %14s %14s %10s %7s  %s\n", "point", "experiment", "measured", "model", "diff", "target", "verdict"
                shown = 1
            }
            v = R[i, 4] unitstr(R[i, 6])
            m = R[i, 5] == "" ? "-" : R[i, 5] unitstr(R[i, 6])
            tgt = R[i, 6] == "%" ? R[i, 8] " pp" : R[i, 8] "%"
            d = R[i, 7] == "" ? "-" : (R[i, 6] == "%" ? sprintf("%+.1f pp", R[i, 7]) : sprintf("%+.1f%%", R[i, 7]))
            verdict = R[i, 9]
            if (verdict == "ok") {
                cnt[held, "ok"]++
                cnt[held, eorder[e], "ok"]++
            } else if (verdict == "off") {
                verdict = "OFF"
                cnt[held, "off"]++
            } else if (verdict ~ /^not runnable/) {
                cnt[held, "nr"]++
            } else
                cnt[held, "err"]++
            cnt[held, "all"]++
            printf "  %-20s %-16s %14s %14s %10s %7s  %s\n", R[i, 1], R[i, 10], v, m, d, tgt, verdict
        }
    }
}

function summary(held, label) {
    printf "%s: %d points, %d within target, %d outside, %d not runnable, %d errors\n", label, cnt[held, "all"], cnt[held, "ok"], cnt[held, "off"], cnt[held, "nr"], cnt[held, "err"]
}

END {
    printf "qosim fidelity: the model (%s) beside published hardware measurements\n", qosim
    printf "(target: within 5 percentage points for rates, 10%% otherwise; docs/fidelity.md)\n"
    printf "\n=== Tuning points ===\n"
    show("false")
    printf "\n=== Held-out points (never used for tuning) ===\n"
    show("true")
    printf "\n"
    summary("false", "tuning")
    summary("true", "held out")
}
