# Writes a runnable copy of an experiment or profile: sets the values its
# "# fidelity-var: key=NAME [scale=A/B]" lines name from `vars` ("NAME=VALUE
# ..."), and turns the relative paths of `platform:` and `trace:` into paths
# from `srcdir` (the original file's folder), so that the copy runs from any
# folder. With `platform` set, the platform value becomes that instead.
# A var the file names but `vars` lacks keeps the file's value; a NAME in
# `vars` that no line of the file uses is fine (it may be the profile's).
# A scaled value is a size (bytes, or K/M/G, powers of 1024): scaled and
# rounded down to whole 64-byte lines, it is written in bytes.
#
#   awk -v vars="A=1 B=2" -v srcdir=DIR [-v platform=FILE] -f subst.awk FILE
BEGIN {
    n = split(vars, kv, " ")
    for (i = 1; i <= n; i++) {
        eq = index(kv[i], "=")
        V[substr(kv[i], 1, eq - 1)] = substr(kv[i], eq + 1)
    }
}

function bytes(s,   m, u) {
    m = 1
    u = substr(s, length(s))
    if (u == "K") m = 1024
    else if (u == "M") m = 1048576
    else if (u == "G") m = 1073741824
    if (m > 1)
        s = substr(s, 1, length(s) - 1)
    return s * m
}

# Replaces the value of `key:` on the line (up to , } # or the end).
function setkey(line, key, val,   pre, rest, p) {
    p = match(line, "(^|[ {,])" key ":[ \t]*")
    if (!p) {
        printf "subst.awk: %s:%d: no '%s:' on a fidelity-var line\n", FILENAME, FNR, key > "/dev/stderr"
        bad = 1
        return line
    }
    pre = substr(line, 1, RSTART + RLENGTH - 1)
    rest = substr(line, RSTART + RLENGTH)
    match(rest, /^[^,}# \t]*/)
    return pre val substr(rest, RLENGTH + 1)
}

function abspath(line, key,   pre, rest, v) {
    if (!match(line, "(^|[ {,])" key ":[ \t]*"))
        return line
    pre = substr(line, 1, RSTART + RLENGTH - 1)
    rest = substr(line, RSTART + RLENGTH)
    match(rest, /^[^,}# \t]*/)
    v = substr(rest, 1, RLENGTH)
    if (key == "platform" && platform != "")
        v = platform
    else if (v !~ /^\// && (v ~ /\// || v ~ /\.ya?ml$/ || key == "trace"))
        v = srcdir "/" v
    return pre v substr(rest, RLENGTH + 1)
}

{
    line = $0
    if (line ~ /^[ \t]*#/) {
        print line
        next
    }
    if (match(line, /# fidelity-var:.*$/)) {
        spec = substr(line, RSTART + 15)
        m = split(spec, w, " ")
        scale = ""
        for (j = 1; j <= m; j++)
            if (w[j] ~ /^scale=[0-9]+\/[0-9]+$/)
                scale = substr(w[j], 7)
        for (j = 1; j <= m; j++) {
            if (w[j] !~ /^[a-z_]+=[A-Z_][A-Z0-9_]*$/)
                continue
            eq = index(w[j], "=")
            key = substr(w[j], 1, eq - 1)
            name = substr(w[j], eq + 1)
            if (!(name in V))
                continue
            val = V[name]
            if (scale != "") {
                split(scale, ab, "/")
                val = int(bytes(val) * ab[1] / ab[2] / 64) * 64
            }
            line = setkey(line, key, val)
        }
    }
    line = abspath(line, "platform")
    line = abspath(line, "trace")
    print line
}

END { exit bad }
