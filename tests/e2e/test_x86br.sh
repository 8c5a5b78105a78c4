#!/bin/bash
# sim/trace/x86br.c against GNU objdump on real binaries: every instruction
# of every code section of /bin/ls and of the libc it links, decoded by
# objdump, goes through x86br_flags (build/tests/x86br_objdump), and the
# class x86br gives must be the one objdump's mnemonic implies, for every
# instruction. Two decoders written apart agreeing on a few hundred thousand
# instructions a compiler emitted; the hand-written cases, prefixes and
# encodings no compiler emits are tests/unit/test_x86br.c's.
. "$(dirname "$0")/lib.sh"

helper=$(dirname "$QOSIM")/tests/x86br_objdump
if [ ! -x "$helper" ]; then
    notok "x86br_objdump built" "no $helper: make builds it"
    exit 0
fi
if ! command -v objdump >/dev/null; then
    notok "objdump available" "install it: apt-get install binutils"
    exit 0
fi

libc=$(ldd /bin/ls 2>/dev/null | awk '$1 ~ /^libc\.so/ { print $3 }')
for bin in /bin/ls "$libc"; do
    name=$(basename "$bin")
    if [ ! -r "$bin" ] || ! objdump -f "$bin" 2>/dev/null | grep -q 'file format elf64-x86-64'; then
        notok "$name: an x86-64 binary to disassemble" "'$bin' is not one (x86br is x86-64 only)"
        continue
    fi
    # One line per instruction, "ADDR BYTES" for the helper and "ADDR FLAGS
    # CLASS MNEMONIC" as objdump's mnemonic implies. --insn-width keeps each
    # instruction's bytes on one line. Prefixes objdump prints as words
    # (bnd, notrack, rex.W, data16, a segment, ",pt"/",pn" hints) are
    # dropped to find the mnemonic; suffixes (w, l, q) are accepted.
    objdump -d --insn-width=15 "$bin" 2>"$TMP/err" | awk -F'\t' -v feed="$TMP/in" -v want="$TMP/want" '
        BEGIN {
            F["cond"] = "11"; F["jmp"] = "2b"; F["jmp_ind"] = "31"; F["call"] = "41"
            F["call_ind"] = "51"; F["ret"] = "61"; F["other"] = "01"; F["none"] = "00"
        }
        function class(m, ops) {
            sub(/,p[nt]$/, "", m)
            if (m ~ /^(jmp[wq]?|jmpabs)$/) return ops ~ /^\*/ ? "jmp_ind" : "jmp"
            if (m ~ /^ljmp[wlq]?$/) return "jmp_ind"
            if (m ~ /^(j[a-z]+|loop[a-z]*)$/) return "cond"
            if (m ~ /^call[wq]?$/) return ops ~ /^\*/ ? "call_ind" : "call"
            if (m ~ /^lcall[wlq]?$/) return "call_ind"
            if (m ~ /^l?ret[wlq]?$/) return "ret"
            if (m ~ /^(iret[wdq]?|sysret[lq]?|sysexit[lq]?|uiret|eretu|erets)$/) return "other"
            return "none"
        }
        NF >= 3 && $1 ~ /^ *[0-9a-f]+:$/ {
            addr = $1; gsub(/[ :]/, "", addr)
            bytes = $2; gsub(/ /, "", bytes)
            if (bytes == "") next
            n = split($3, w, " ")
            for (i = 1; i <= n; i++)
                if (w[i] !~ /^(rex(\.[WRXB]+)?|rex2|data16|data32|addr16|addr32|bnd|notrack|rep|repz|repe|repnz|repne|lock|xacquire|xrelease|cs|ds|es|ss|fs|gs)$/)
                    break
            m = i <= n ? w[i] : ""
            c = class(m, i < n ? w[i + 1] : "")
            print addr, bytes > feed
            print addr, F[c], c, (m == "" ? "-" : m) > want
        }'
    if [ ! -s "$TMP/in" ]; then
        notok "$name: objdump disassembles it" "$(head -3 "$TMP/err")"
        continue
    fi
    if ! "$helper" <"$TMP/in" >"$TMP/got" 2>"$TMP/err"; then
        notok "$name: x86br_objdump reads every line" "$(head -3 "$TMP/err")"
        continue
    fi
    # ADDR FLAGS CLASS MNEMONIC, ADDR GOT, ADDR BYTES: count each class,
    # list the first disagreements.
    paste -d' ' "$TMP/want" "$TMP/got" "$TMP/in" | awk '
        { n++; count[$3]++ }
        $1 != $5 || $2 != $6 {
            if (bad++ < 10) print "at " $1 " " $8 ": objdump " $4 ", so " $3 " (" $2 "); x86br at " $5 ": " $6
        }
        END {
            printf "total %d\nbad %d\n", n, bad
            split("cond jmp jmp_ind call call_ind ret other none", k, " ")
            for (i = 1; i <= 8; i++) printf "%s %d\n", k[i], count[k[i]]
        }' >"$TMP/cmp"
    total=$(awk '$1 == "total" { print $2 }' "$TMP/cmp")
    bad=$(awk '$1 == "bad" { print $2 }' "$TMP/cmp")
    counts=$(awk '$1 ~ /^(cond|jmp|jmp_ind|call|call_ind|ret|other|none)$/ { printf "%s%s %s", s, $1, $2; s = ", " }' "$TMP/cmp")
    if [ "$bad" -eq 0 ] && [ "$total" -eq "$(wc -l <"$TMP/in")" ]; then
        ok "$name: x86br agrees with objdump on all $total instructions ($counts)"
    else
        mapfile -t diffs < <(grep '^at ' "$TMP/cmp")
        notok "$name: x86br agrees with objdump ($bad of $total differ)" "${diffs[@]}"
    fi
    # Agreement means something only if objdump's output was understood: a
    # real program has dozens at least of each kind but the rare ones.
    few=$(awk '$1 ~ /^(cond|jmp|jmp_ind|call|call_ind|ret)$/ && $2 < 10 { printf " %s (%d)", $1, $2 }' "$TMP/cmp")
    same "$name: at least 10 of each kind of branch but the rare ones" "$few" ""
done
