# Computes each point's model figure and compares it with the measurement.
#
#   awk -v runs=RUNS.tsv -f eval.awk POINTS.tsv > RESULTS.tsv
#
# RUNS.tsv: RUNKEY <tab> STATUS (ok, or the reason it did not run) <tab>
# FLAT (flatjson.awk's output of the run); the run key is EXPERIMENT|VARS.
# POINTS.tsv: meas.awk's output. RESULTS.tsv, one line a point:
#   id effect held_out value model unit diff target verdict experiment
#   plot x series xlabel part
# verdict: "ok" (within target), "off" (outside), "not runnable: REASON" or
# "error: MESSAGE". diff is model - value in percentage points for "%"
# units, else (model - value) / value in percent; target is the bound it is
# held to: 5 (pp) for rates, 10 (%) otherwise, or the point's own target.
BEGIN {
    FS = "\t"
    OFS = "\t"
    while ((getline l < runs) > 0) {
        split(l, r, "\t")
        rstat[r[1]] = r[2]
        rflat[r[1]] = r[3]
    }
    close(runs)
}

function load(file,   l, f) {
    if (file in loaded)
        return
    loaded[file] = 1
    while ((getline l < file) > 0) {
        split(l, f, "\t")
        J[file, f[1], f[2], f[3]] = f[4]
    }
    close(file)
}

# --- a small expression language: numbers, FIELD[@PHASE[:ROW]], + - * / ( )
function tokenize(s,   n, c, t) {
    n = 0
    while (s != "") {
        if (match(s, /^[ \t]+/)) {
            s = substr(s, RLENGTH + 1)
            continue
        }
        if (match(s, /^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/) ||
            match(s, /^[A-Za-z_][A-Za-z0-9_.]*(@[A-Za-z0-9_.-]*(:[A-Za-z0-9_.-]+)?)?/) ||
            match(s, /^[-+*\/()]/)) {
            T[++n] = substr(s, 1, RLENGTH)
            s = substr(s, RLENGTH + 1)
            continue
        }
        eerr = "cannot read '" s "'"
        return 0
    }
    return n
}

function peek() { return tpos <= ntok ? T[tpos] : "" }

function expr(   v, op) {
    v = term()
    while (peek() == "+" || peek() == "-") {
        op = T[tpos++]
        v = op == "+" ? v + term() : v - term()
    }
    return v
}

function term(   v, op, d) {
    v = factor()
    while (peek() == "*" || peek() == "/") {
        op = T[tpos++]
        d = factor()
        if (op == "*")
            v = v * d
        else if (d == 0) {
            if (eerr == "")
                eerr = "division by zero"
            v = 0
        } else
            v = v / d
    }
    return v
}

function factor(   t, v, name, ph, rw, at, co) {
    t = peek()
    tpos++
    if (t == "-")
        return -factor()
    if (t == "(") {
        v = expr()
        if (peek() != ")" && eerr == "")
            eerr = "missing )"
        tpos++
        return v
    }
    if (t ~ /^[0-9]/)
        return t + 0
    if (t ~ /^[A-Za-z_]/) {
        name = t
        ph = cphase
        rw = crow
        at = index(t, "@")
        if (at) {
            name = substr(t, 1, at - 1)
            ph = substr(t, at + 1)
            co = index(ph, ":")
            if (co) {
                rw = substr(ph, co + 1)
                ph = substr(ph, 1, co - 1)
            }
            if (ph == "")
                ph = cphase
        }
        if (!((cfile, ph, rw, name) in J)) {
            if (eerr == "")
                eerr = "the run has no " name " for phase " ph ", row " rw
            return 0
        }
        return J[cfile, ph, rw, name] + 0
    }
    if (eerr == "")
        eerr = t == "" ? "unexpected end" : "unexpected '" t "'"
    return 0
}

function evaluate(s, file, phase, row,   v) {
    eerr = ""
    ntok = tokenize(s)
    if (eerr != "")
        return 0
    tpos = 1
    cfile = file
    cphase = phase
    crow = row
    v = expr()
    if (tpos <= ntok && eerr == "")
        eerr = "unexpected '" T[tpos] "'"
    return v
}

# Fields of POINTS.tsv (meas.awk's order).
{
    id = $1; effect = $2; part = $4; value = $7; unit = $8; held = $9
    exp_ = $10; vars = $11; phase = $12; row = $13; model = $14
    plot = $15; x = $16; series = $17; xlabel = $18; target = $20
    key = exp_ "|" vars
    if (target == "")
        target = unit == "%" ? 5 : 10
    m = ""; diff = ""
    if (!(key in rstat))
        verdict = "error: no run of " key
    else if (rstat[key] != "ok")
        verdict = "not runnable: " rstat[key]
    else {
        load(rflat[key])
        m = evaluate(model, rflat[key], phase, row)
        if (eerr != "") {
            verdict = "error: " eerr
            m = ""
        } else {
            if (unit == "%")
                diff = m - value
            else
                diff = value != 0 ? 100 * (m - value) / value : 0
            verdict = (diff <= target && diff >= -target) ? "ok" : "off"
            m = sprintf("%.4g", m)
            diff = sprintf("%.1f", diff)
        }
    }
    print id, effect, held, value, m, unit, diff, target, verdict, exp_, plot, x, series, xlabel, part
}
