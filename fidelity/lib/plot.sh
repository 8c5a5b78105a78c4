#!/bin/bash
# Draws one plot per `plot` name of the results (eval.awk's RESULTS.tsv):
# for each series, the hardware's points (filled; hollow where held out)
# and the model's line through the same x, against x. Writes OUT/PLOT.svg
# (and PLOT.dat, PLOT.gp beside it).
#
#   bash plot.sh RESULTS.tsv OUT
set -u
results=$1
out=$2
for p in $(cut -f11 "$results" | sort -u); do
    dat=$out/$p.dat
    # One gnuplot data block per series, sorted by x: x, measured (tuning),
    # model, measured (held out); "NaN" where there is none.
    awk -F'\t' -v p="$p" '
        $11 == p {
            if (!($13 in s)) { s[$13] = ++ns; name[ns] = $13 }
            k = s[$13]; i = ++n[k]
            X[k, i] = $12 + 0
            held = ($3 == "true")
            L[k, i] = sprintf("%s %s %s %s", $12, held ? "NaN" : $4, $5 == "" ? "NaN" : $5, held ? $4 : "NaN")
            if (xl == "") xl = $14
            if (yl == "") yl = $6
        }
        END {
            for (k = 1; k <= ns; k++) {
                for (i = 2; i <= n[k]; i++)          # insertion sort by x
                    for (j = i; j > 1 && X[k, j - 1] > X[k, j]; j--) {
                        t = X[k, j]; X[k, j] = X[k, j - 1]; X[k, j - 1] = t
                        t = L[k, j]; L[k, j] = L[k, j - 1]; L[k, j - 1] = t
                    }
                printf "# %s\n", name[k]
                for (i = 1; i <= n[k]; i++)
                    print L[k, i]
                printf "\n\n"
            }
            printf "#xlabel %s\n#ylabel %s\n", xl, yl
            for (k = 1; k <= ns; k++)
                printf "#series %s\n", name[k]
        }' "$results" > "$dat"
    xlabel=$(sed -n 's/^#xlabel //p' "$dat")
    ylabel=$(sed -n 's/^#ylabel //p' "$dat")
    logx=$(awk '!/^#/ && NF { if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 }
        END { print (min > 0 && max / min >= 16) ? 1 : 0 }' "$dat")
    {
        echo "set terminal svg size 900,600 dynamic font 'sans,12'"
        echo "set output '$out/$p.svg'"
        echo "set title 'qosim fidelity: $p' noenhanced"
        echo "set xlabel '$xlabel' noenhanced"
        echo "set ylabel '$ylabel' noenhanced"
        echo "set key below noenhanced"
        echo "set grid"
        echo "set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05"
        [ "$logx" = 1 ] && echo "set logscale x 2"
        printf 'plot '
        k=0
        sep=""
        while IFS= read -r s; do
            s=${s//\'/}
            c=$((k + 1))
            printf "%s'%s' index %d using 1:2 with points pt 7 ps 1.3 lc %d title '%s: hardware', " "$sep" "$dat" $k $c "$s"
            printf "'' index %d using 1:4 with points pt 6 ps 1.3 lc %d title '%s: hardware, held out', " $k $c "$s"
            printf "'' index %d using 1:3 with linespoints pt 5 ps 0.6 dt 2 lc %d title '%s: model'" $k $c "$s"
            sep=", "
            k=$c
        done < <(sed -n 's/^#series //p' "$dat")
        echo
    } > "$out/$p.gp"
    gnuplot "$out/$p.gp" 2> "$out/$p.gperr" || { cat "$out/$p.gperr" >&2; exit 1; }
    rm -f "$out/$p.gperr"
done
echo "plots: $(cut -f11 "$results" | sort -u | sed "s|^|$out/|; s|$|.svg|" | tr '\n' ' ')"
