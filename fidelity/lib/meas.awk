# Reads fidelity/measurements.yaml (the layout its header describes) and
# writes one tab-separated line per point to `points` and per source to
# `sources`; checks every point: its keys, its source, that its experiment
# file exists (in `dir`). Errors name file:line and go to standard error;
# the exit status is 1 if there was any.
#
#   awk -v dir=DIR -v points=FILE -v sources=FILE -f meas.awk measurements.yaml
BEGIN {
    nf = split("id effect source part setup quantity value unit held_out experiment vars phase row model plot x series xlabel note target", F, " ")
    for (i = 1; i <= nf; i++)
        known[F[i]] = i
    nreq = split("id effect source part setup quantity value unit held_out experiment phase row model", R, " ")
    section = ""
    errors = 0
    np = 0
}

function err(line, msg) {
    printf "%s:%d: %s\n", FILENAME, line, msg > "/dev/stderr"
    errors++
}

# A scalar: a plain word or a double-quoted string without escapes.
function scalar(s, line) {
    sub(/^[ \t]+/, "", s)
    sub(/[ \t]+$/, "", s)
    if (s ~ /^"/) {
        if (s !~ /^"[^"]*"$/) {
            err(line, "a quoted value must end with its quote and hold none: " s)
            return ""
        }
        return substr(s, 2, length(s) - 2)
    }
    if (s ~ /[ \t]#/)
        sub(/[ \t]+#.*$/, "", s)
    if (s ~ /\t/)
        err(line, "a tab in a value")
    return s
}

function endpoint(   i, k, line) {
    if (!inpoint)
        return
    inpoint = 0
    line = P["line"]
    for (i = 1; i <= nreq; i++)
        if (!((R[i]) in P) || P[R[i]] == "")
            err(line, "point " P["id"] ": missing key '" R[i] "'")
    if (P["id"] in seen)
        err(line, "duplicate point id '" P["id"] "' (first at line " seen[P["id"]] ")")
    seen[P["id"]] = line
    if (P["value"] !~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/)
        err(line, "point " P["id"] ": value '" P["value"] "' is not a number")
    if (P["held_out"] != "true" && P["held_out"] != "false")
        err(line, "point " P["id"] ": held_out must be true or false")
    if (P["experiment"] !~ /^[A-Za-z0-9_.-]+$/)
        err(line, "point " P["id"] ": experiment '" P["experiment"] "' is not a file name")
    else if (!exists(dir "/" P["experiment"] ".yaml"))
        err(line, "point " P["id"] ": no experiment " dir "/" P["experiment"] ".yaml")
    if (P["vars"] != "" && P["vars"] !~ /^[A-Z_][A-Z0-9_]*=[^ ]+( [A-Z_][A-Z0-9_]*=[^ ]+)*$/)
        err(line, "point " P["id"] ": vars must be NAME=VALUE words")
    if (P["target"] != "" && P["target"] !~ /^[0-9]+(\.[0-9]+)?$/)
        err(line, "point " P["id"] ": target must be a number (percentage points for %, else percent)")
    psrc[P["id"]] = P["source"]
    pline[P["id"]] = line
    np++
    order[np] = P["id"]
    k = ""
    for (i = 1; i <= nf; i++)
        k = k (i > 1 ? "\t" : "") P[F[i]]
    rows[np] = k "\t" line
}

function exists(f,   r, l) {
    r = (getline l < f)
    if (r >= 0)
        close(f)
    return r >= 0
}

/^[ \t]*#/ || /^[ \t]*$/ { next }

/^[A-Za-z_]+:[ \t]*$/ {
    endpoint()
    section = $0
    sub(/:.*/, "", section)
    if (section != "sources" && section != "facts" && section != "points")
        err(NR, "unknown section '" section "'")
    if (section in sections)
        err(NR, "section '" section "' twice")
    sections[section] = NR
    next
}

section == "sources" && /^  [A-Za-z0-9_.-]+:[ \t]*$/ {
    src = $0
    sub(/^  /, "", src)
    sub(/:.*/, "", src)
    if (src in srcline)
        err(NR, "duplicate source '" src "'")
    srcline[src] = NR
    next
}

section == "sources" && /^    [a-z_]+:/ {
    key = $0
    sub(/^    /, "", key)
    sub(/:.*/, "", key)
    val = $0
    sub(/^    [a-z_]+:/, "", val)
    S[src, key] = scalar(val, NR)
    next
}

(section == "points" || section == "facts") && /^  - [a-z_]+:/ {
    endpoint()
    if (section == "points") {
        inpoint = 1
        delete P
        P["line"] = NR
    }
    line = $0
    sub(/^  - /, "    ", line)
    $0 = line
}

section == "facts" && /^    [a-z_]+:/ {
    key = $0
    sub(/^    /, "", key)
    sub(/:.*/, "", key)
    val = $0
    sub(/^    [a-z_]+:/, "", val)
    val = scalar(val, NR)
    if (key == "id")
        fid = val
    if (key == "source")
        fsrc[fid] = val
    if (key == "source")
        fline[fid] = NR
    next
}

section == "points" && /^    [a-z_]+:/ {
    key = $0
    sub(/^    /, "", key)
    sub(/:.*/, "", key)
    val = $0
    sub(/^    [a-z_]+:/, "", val)
    if (!(key in known))
        err(NR, "unknown key '" key "'")
    else if (key in P)
        err(NR, "duplicate key '" key "'")
    else
        P[key] = scalar(val, NR)
    next
}

{ err(NR, "not understood: " $0) }

END {
    endpoint()
    if (!("points" in sections))
        err(NR, "no points section")
    for (s in srcline)
        if (S[s, "cite"] == "" || S[s, "part"] == "")
            err(srcline[s], "source " s ": needs cite and part")
    for (i = 1; i <= np; i++)
        if (!(psrc[order[i]] in srcline))
            err(pline[order[i]], "point " order[i] ": no source '" psrc[order[i]] "'")
    for (f in fsrc)
        if (fsrc[f] != "none" && !(fsrc[f] in srcline))
            err(fline[f], "fact " f ": no source '" fsrc[f] "'")
    if (points != "") {
        printf "" > points
        for (i = 1; i <= np; i++)
            print rows[i] > points
    }
    if (sources != "") {
        printf "" > sources
        for (s in srcline)
            printf "%s\t%s\t%s\n", s, S[s, "cite"], S[s, "part"] > sources
    }
    exit errors > 0
}
