# Flattens the per-phase rows of `qosim run --json` (docs/scenarios.md gives
# the shape; qosim writes one key per line) into lines
#   PHASE <tab> ROW <tab> KEY <tab> VALUE
# for every task row ("task") and I/O agent row ("agent") of every phase;
# nested objects give dotted keys (misses.L3, references.L1D, monitor.rmid).
# The per-interval rows are not read.
#
#   awk -f flatjson.awk run.json
/^  "intervals":/ { exit }
/^  "phases":/ { inphases = 1; next }
!inphases { next }

{
    line = $0
    sub(/^[ \t]+/, "", line)
    sub(/,$/, "", line)
}

# A key and a scalar value: "key": value
line ~ /^"[A-Za-z0-9_.]+": [^\[{]/ {
    key = line
    sub(/^"/, "", key)
    sub(/".*/, "", key)
    val = line
    sub(/^"[A-Za-z0-9_.]+": /, "", val)
    if (val ~ /^"/) {
        val = substr(val, 2, length(val) - 2)
        if (depth == 0 && key == "name") {
            phase = val
            next
        }
        if (key == "task" || key == "agent") {
            row = val
            next
        }
    }
    if (row != "")
        printf "%s\t%s\t%s%s\t%s\n", phase, row, prefix, key, val
    next
}

# A nested object in a row: "misses": {
line ~ /^"[A-Za-z0-9_.]+": \{$/ {
    if (row != "") {
        sub_ = line
        sub(/^"/, "", sub_)
        sub(/".*/, "", sub_)
        prefix = sub_ "."
    }
    next
}

# A row's list: "tasks": [ or "io": [
line ~ /^"[A-Za-z0-9_.]+": \[$/ {
    depth = 1
    next
}

line == "}" {
    if (prefix != "")
        prefix = ""
    else
        row = ""
    next
}

line == "]" {
    depth = 0
    row = ""
    next
}
