#!/bin/bash
# End-to-end tests of `qosim regs`: the documented example scripts give their
# golden outputs line for line (docs/regs.md), and bad commands, options and
# files are reported as the console promises.
. "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
GOLD=$TOP/tests/e2e/golden

golden() { # golden NAME[:OUT] ARGS...: examples/regs/NAME.regs against golden/OUT.out (OUT: NAME)
    local name=${1%%:*} out=${1#*:} rc=0
    shift
    "$QOSIM" regs "$@" "$TOP/examples/regs/$name.regs" >"$TMP/$out.out" 2>"$TMP/err" || rc=$?
    # A script that shows a refused command ends in exit 1, as documented.
    if [ "$rc" -eq "${RC:-0}" ] && cmp -s "$TMP/$out.out" "$GOLD/$out.out"; then ok "regs example $out"; else
        notok "regs example $out" "exit $rc" "$(diff "$GOLD/$out.out" "$TMP/$out.out" | head -6)"; fi
    # One output line per command.
    same "regs example $out: one line per command" "$(wc -l <"$TMP/$out.out")" \
        "$(sed 's/#.*//' "$TOP/examples/regs/$name.regs" | grep -c '[^[:space:]]')"
}
golden intel-cat-cdp
golden intel-cmt-mbm --scenario "$TOP/examples/noisy-neighbour.yaml"
golden rdt-groups --scenario "$TOP/examples/rdt-noisy-neighbour.yaml"
golden intel-pmu --scenario "$TOP/examples/noisy-neighbour.yaml"
golden intel-l2-cdp --platform intel-atom
golden amd-pqos --platform amd-epyc
golden intel-topology
golden amd-topology --platform amd-epyc
golden cbqri-capacity --platform riscv-soc
golden cbqri-bandwidth --platform riscv-soc
golden cbqri-privilege --platform riscv-soc-draft
golden cbqri-busy --platform riscv-soc
RC=1 golden cbqri-srmcfg --platform riscv-soc
golden cbqri-cunits --platform riscv-soc
golden cbqri-split --platform riscv-soc
golden cbqri-split:cbqri-split-draft --platform riscv-soc-draft
golden cbqri-monitor --scenario "$TOP/examples/regs/cbqri-tasks.yaml"
golden cbqri-groups --scenario "$TOP/examples/regs/cbqri-groups.yaml"
golden lwp --scenario "$TOP/examples/regs/lwp-task.yaml"
golden intel-prefetch --platform "$TOP/examples/regs/xeon-prefetch.yaml"

# Malformed commands: one error line each, the console goes on, exit 1.
printf 'frob\nrdmsr 0\nrdmsr 32 0xc8f\nwrmsr 0 0xc8f -1\ncpuid\ncpuid 0 0 cpu 99\nrun x\nrdmsr 0 0x1ffffffff\nrdmsr 0 0xc8f\n' >"$TMP/bad.regs"
expect "malformed commands exit 1" 1 "$QOSIM" regs "$TMP/bad.regs"
same "each gets one error line, then the console goes on" "$(cat "$TMP/out")" "error: line 1: unknown command 'frob' (cpuid, rdmsr, wrmsr, llwpcb, slwpcb, mem, run)
error: line 2: usage: rdmsr CPU MSR
error: line 3: CPU '32': expected a CPU number 0..31
error: line 4: value '-1': expected a 64-bit number
error: line 5: usage: cpuid LEAF [SUBLEAF] [cpu N]
error: line 6: cpu '99': expected a CPU number 0..31
error: line 7: usage: run NS (nanoseconds, up to 1000 s)
error: line 8: MSR '0x1ffffffff': expected a 32-bit number
0x0000000000000000"
# A line is a line whatever its bytes: one longer than 1022 characters, or
# holding a NUL byte, gets one error line and is not run, the whole of it
# (here a NUL inside a line of 1115 bytes, then a NUL in a short one); the
# next command is answered, and the line numbers count them.
{ printf 'rdmsr 0 0xc90\nwrmsr 0 0xc90 0x1 \0'; head -c 1100 /dev/zero | tr '\0' x
  printf '\nrdmsr 0 0xc90\nwrmsr\0 0 0xc90 0x1\nrdmsr 0 0xc90\ncpuid 0'; } >"$TMP/nul.regs"
expect "a NUL byte in an overlong line: exit 1" 1 "$QOSIM" regs "$TMP/nul.regs"
same "a NUL byte in an overlong line: one error line, then the console goes on" "$(cat "$TMP/out")" \
    "0x00000000000007ff
error: line 2: line longer than 1022 characters
0x00000000000007ff
error: line 4: a NUL byte in the line
0x00000000000007ff
eax=0x0000001f ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69"
printf '# only comments\n\n   # and blanks\n' | "$QOSIM" regs - >"$TMP/out" 2>&1
same "comments and blank lines print nothing" "$(cat "$TMP/out")" ""
printf 'rdmsr 0 0xc8f\n' | "$QOSIM" regs >"$TMP/out" 2>&1
same "standard input by default" "$(cat "$TMP/out")" "0x0000000000000000"

# IA32_MBA_CFG comes with more than 8 MBA classes (Intel's pqos reads it for
# MBA 2.0): one per package, bits 0 and 1, the rest #GP.
"$QOSIM" profiles show intel-xeon | sed 's/^    classes: 8$/    classes: 16/' >"$TMP/mba16.yaml"
printf 'cpuid 0x10 3
rdmsr 0 0xc84
wrmsr 3 0xc84 1
rdmsr 15 0xc84
rdmsr 16 0xc84
wrmsr 0 0xc84 4
wrmsr 16 0xc84 3
rdmsr 31 0xc84
' >"$TMP/mba.regs"
expect "IA32_MBA_CFG: 16 MBA classes run" 0 "$QOSIM" regs --platform "$TMP/mba16.yaml" "$TMP/mba.regs"
same "IA32_MBA_CFG: reset 0, per package, reserved bits #GP" "$(cat "$TMP/out")" "eax=0x00000059 ebx=0x00000000 ecx=0x00000004 edx=0x0000000f
0x0000000000000000
ok
0x0000000000000001
0x0000000000000000
#GP
ok
0x0000000000000003"

# The controllers' timing comes from the profile: with busy_cycles 0 an
# operation is done when its write is; with 1000, still BUSY after 20 reads.
"$QOSIM" profiles show riscv-soc | sed 's/^  cbqri:$/  cbqri:\n    busy_cycles: 0/' >"$TMP/rv0.yaml"
"$QOSIM" profiles show riscv-soc | sed 's/^  cbqri:$/  cbqri:\n    busy_cycles: 1000/' >"$TMP/rv1000.yaml"
printf 'mmio write64 0x04828018 0x2\nmmio read64 0x04828018\n' >"$TMP/busy.regs"
for i in $(seq 20); do echo 'mmio read64 0x04828018' >>"$TMP/busy.regs"; done
expect "busy_cycles 0 runs" 0 "$QOSIM" regs --platform "$TMP/rv0.yaml" "$TMP/busy.regs"
same "busy_cycles 0: STATUS 1 at the first read" "$(sed -n 2p "$TMP/out")" 0x0000000100000002
expect "busy_cycles 1000 runs" 0 "$QOSIM" regs --platform "$TMP/rv1000.yaml" "$TMP/busy.regs"
same "busy_cycles 1000: BUSY after 20 reads of 16 cycles" "$(tail -1 "$TMP/out")" 0x0000008000000002

# The LWP commands: the same rules.
printf 'llwpcb\nllwpcb 99 0\nllwpcb 0 x\nslwpcb 0 1\nmem\nmem read16 0\nmem read32\nmem write32 0 0x100000000\nmem map 0 0\nmem map 0 4096 shared\nmem read64 0x1000\nmem map 0x1000 0x1000 ro\nmem write32 0x1000 1\nmem read32 0x1000\nmem map 0x1000 0x1000 kernel\nmem read32 0x1000\nllwpcb 0 0x1000\n' >"$TMP/bad-lwp.regs"
expect "LWP: malformed commands exit 1" 1 "$QOSIM" regs --platform amd-lwp "$TMP/bad-lwp.regs"
same "LWP: each gets one error line; faults are answers" "$(cat "$TMP/out")" "error: line 1: usage: llwpcb CPU ADDR
error: line 2: CPU '99': expected a CPU number 0..7
error: line 3: address 'x': expected a 64-bit number
error: line 4: usage: slwpcb CPU
error: line 5: usage: mem read32|read64 ADDR, mem write32|write64 ADDR VALUE, or mem map
error: line 6: usage: mem read32|read64 ADDR, mem write32|write64 ADDR VALUE, or mem map
error: line 7: usage: mem read32|read64 ADDR, mem write32|write64 ADDR VALUE, or mem map
error: line 8: value '0x100000000': expected a 32-bit number
error: line 9: usage: mem map ADDR LEN [user|kernel] [rw|ro] (LEN 1 to 64 GiB)
error: line 10: usage: mem map ADDR LEN [user|kernel] [rw|ro] (LEN 1 to 64 GiB)
#PF
ok
#PF
0x00000000
ok
#PF
#UD"

# The RISC-V console: the same rules over the CBQRI commands.
printf 'frob\nmmio\nmmio read16 0x04820000\nmmio read64\nmmio read64 0x04820000 hart 16\nmmio write32 0x04820020 0x100000000\nmmio write64 0x04820020 -1\nmmio read64 x\ncsr read 0\ncsr read 0 satp\ncsr write 0 sqoscfg\ncsr read 16 sqoscfg\ncsr write 0 sqoscfg 0x100000000\nmode 0\nmode 0 HS\nmode 16 S\nrun x\nrdmsr 0 0xc81\nmmio read64 0x04820000 extra\nmmio read64 0x04820000\n' >"$TMP/bad-rv.regs"
expect "RISC-V: malformed commands exit 1" 1 "$QOSIM" regs --platform riscv-soc-draft "$TMP/bad-rv.regs"
same "RISC-V: each gets one error line, then the console goes on" "$(cat "$TMP/out")" "error: line 1: unknown command 'frob' (mmio, csr, mode, run)
error: line 2: usage: mmio read32|read64 ADDR [hart N] or mmio write32|write64 ADDR VALUE [hart N]
error: line 3: usage: mmio read32|read64 ADDR [hart N] or mmio write32|write64 ADDR VALUE [hart N]
error: line 4: usage: mmio read32|read64 ADDR [hart N] or mmio write32|write64 ADDR VALUE [hart N]
error: line 5: hart '16': expected a hart number 0..15
error: line 6: value '0x100000000': expected a 32-bit number
error: line 7: value '-1': expected a 64-bit number
error: line 8: address 'x': expected a 64-bit number
error: line 9: usage: csr read HART CSR or csr write HART CSR VALUE (CSR: sqoscfg)
error: line 10: CSR 'satp': riscv-soc-draft's harts have sqoscfg (the 2023 draft's, by name)
error: line 11: usage: csr read HART CSR or csr write HART CSR VALUE (CSR: sqoscfg)
error: line 12: hart '16': expected a hart number 0..15
error: line 13: value '0x100000000': expected a 32-bit number
error: line 14: usage: mode HART M|S|U|VS|VU|secure-M
error: line 15: mode 'HS': expected M, S, U, VS, VU or secure-M
error: line 16: hart '16': expected a hart number 0..15
error: line 17: usage: run NS (nanoseconds, up to 1000 s)
error: line 18: unknown command 'rdmsr' (mmio, csr, mode, run)
error: line 19: usage: mmio read32|read64 ADDR [hart N] or mmio write32|write64 ADDR VALUE [hart N]
0x0000000001000801"
printf 'csr read 0 sqoscfg\n' | "$QOSIM" regs --platform riscv-soc-draft >"$TMP/out" 2>&1
same "RISC-V: a RISC-V platform gets the CBQRI console" "$(cat "$TMP/out")" "0x00000000"
# CBQRI 1.0's CSRs: by name or number, XLEN-wide values; what the harts lack is named.
printf 'csr read 0 satp\ncsr read 0 0x1000\ncsr write 0 srmcfg 0x10000000000000000\ncsr read 0 mstateen0h\ncsr write 0 0x30c 0x0080000000000000\ncsr read 0 0x30c\n' >"$TMP/bad10.regs"
expect "RISC-V 1.0: CSR errors exit 1" 1 "$QOSIM" regs --platform riscv-soc "$TMP/bad10.regs"
same "RISC-V 1.0: each error names what exists" "$(cat "$TMP/out")" "error: line 1: CSR 'satp': riscv-soc's harts have srmcfg (0x181), mstateen0 (0x30c)
error: line 2: CSR '0x1000': riscv-soc's harts have srmcfg (0x181), mstateen0 (0x30c)
error: line 3: value '0x10000000000000000': expected a 64-bit number
error: line 4: CSR 'mstateen0h': riscv-soc's harts have srmcfg (0x181), mstateen0 (0x30c)
ok
0x0080000000000000"
"$QOSIM" profiles show riscv-soc | sed 's/^  xlen: 64 .*/  xlen: 32/' >"$TMP/rv32.yaml"
printf 'csr write 0 srmcfg 0xffffffff\ncsr read 0 srmcfg\ncsr write 0 mstateen0h 0xffffffff\ncsr read 0 mstateen0h\ncsr read 0 mstateen0\ncsr write 0 srmcfg 0x100000000\n' >"$TMP/rv32.regs"
expect "RISC-V 1.0, RV32: runs" 1 "$QOSIM" regs --platform "$TMP/rv32.yaml" "$TMP/rv32.regs"
same "RISC-V 1.0, RV32: 32-bit srmcfg, bit 55 in mstateen0h" "$(cat "$TMP/out")" "ok
0x003f000f
ok
0x00800000
0x00000000
error: line 6: value '0x100000000': expected a 32-bit number"
printf 'cpuid 0\n' | "$QOSIM" regs --platform intel-xeon >"$TMP/out" 2>&1
same "x86 keeps its console" "$(cat "$TMP/out")" "eax=0x0000001f ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69"
expect "RISC-V: unknown option" 2 "$QOSIM" regs --platform riscv-soc --frob
expect "RISC-V: platform and scenario together" 2 "$QOSIM" regs --platform riscv-soc \
    --scenario "$TOP/examples/regs/cbqri-tasks.yaml"
expect "RISC-V: --platform without a value" 2 "$QOSIM" regs --platform
expect "platform and scenario together" 2 "$QOSIM" regs --platform intel-xeon --scenario x.yaml
expect "a missing script" 2 "$QOSIM" regs "$TMP/none.regs"
has "names it" "$TMP/err" "none.regs: cannot open"
expect "an unknown platform" 2 "$QOSIM" regs --platform nope "$TMP/bad.regs"
expect "unknown option" 2 "$QOSIM" regs --frob

# ---- --attach, the client's side (docs/regs.md) -----------------------------
# Against a stand-in for the guest's console (qosim vm --console; the VM
# tests drive the real one), which answers a line with "ok", a blank one
# with nothing, each then with an empty line, and keeps what it was sent;
# given a count, it goes away after that many lines.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
cat >"$TMP/serve.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
c, _ = s.accept()
rd, wr, log = c.makefile("rb"), c.makefile("wb"), open(sys.argv[2], "wb")
for n, line in enumerate(rd, 1):
    log.write(line)
    log.flush()
    wr.write(b"ok\n\n" if line.strip() else b"\n")
    wr.flush()
    if len(sys.argv) > 3 and n == int(sys.argv[3]):
        break
EOF
serve() { # serve SOCK LOG [CMD...]: the stand-in (run by CMD...), once its socket is there
    local sock=$1 log=$2
    shift 2
    "$@" "$PY" "$TMP/serve.py" "$sock" "$log" $STOP &
    for _ in $(seq 100); do [ -S "$sock" ] && return; sleep 0.05; done
}
{ printf 'rdmsr 0 0xc8f\nrdmsr 0 0xc8f \0'; head -c 1100 /dev/zero | tr '\0' x
  printf '\n\nrdmsr\0 0 0xc90\nrdmsr 0 0xc90'; } >"$TMP/attach.regs"
serve "$TMP/a.sock" "$TMP/a.log"
expect "--attach: a refused line exits 1" 1 "$QOSIM" regs --attach "$TMP/a.sock" "$TMP/attach.regs"
wait
same "--attach: refused lines are answered here, the others by the guest" "$(cat "$TMP/out")" "ok
error: line 2: line longer than 1022 characters
error: line 4: a NUL byte in the line
ok"
same "--attach: the guest got the other lines, each ended, and a blank one for each refused" \
    "$(od -c "$TMP/a.log")" "$(printf 'rdmsr 0 0xc8f\n\n\n\nrdmsr 0 0xc90\n' | od -c)"
# A guest that goes away mid-script: an error, exit 1, not death by SIGPIPE.
for _ in $(seq 2000); do echo 'rdmsr 0 0xc8f'; done >"$TMP/long.regs"
STOP=1 serve "$TMP/c.sock" "$TMP/c.log"
expect "--attach: a guest that goes away mid-script is an error (exit 1)" 1 \
    "$QOSIM" regs --attach "$TMP/c.sock" "$TMP/long.regs"
wait
has "... saying so" "$TMP/err" "--attach $TMP/c.sock: (the guest went away|Broken pipe)"
# A socket another user serves gets nothing (root's would).
if other_user; then
    mkdir -m 1777 "$TMP/pub"
    chmod o+x "$TMP"
    if $OTHER test -w "$TMP/pub"; then
        serve "$TMP/pub/b.sock" "$TMP/pub/b.log" $OTHER
        expect "--attach to another user's socket (uid $OTHER_UID, made by this test) is refused" 2 \
            "$QOSIM" regs --attach "$TMP/pub/b.sock" "$TMP/attach.regs"
        wait
        has "... naming its uid and ours" "$TMP/err" "b.sock: served by uid $OTHER_UID, not by us \(uid 0\) or root"
        same "... and sending nothing" "$(cat "$TMP/pub/b.log")" ""
    else
        echo "# --attach: uid $OTHER_UID cannot reach $TMP/pub here: another user's socket is not checked"
    fi
else
    echo "# --attach: another user's socket is checked only as root (a user made by the test)"
fi

# ---- `run` steps are observation (docs/regs.md, "run") ----------------------
# The tasks only pause at a step's end, so one `run 1000000` and four
# `run 250000` leave the same machine: every count read afterwards is the
# same. x86: the victim's occupancy and both RMIDs' bandwidth, after the
# steps and once more after a write and another step. RISC-V: the same
# through CBQRI's counters, with a monitoring operation in flight across
# the steps and a limit taking effect in the first.
steps() { # steps FILE HEAD TAIL N: HEAD, N steps that add up to 1 ms, TAIL
    { printf '%b' "$2"; for _ in $(seq "$4"); do echo "run $((1000000 / $4))"; done
      printf '%b' "$3"; } >"$1"
}
x_tail='wrmsr 0 0xc8d 0x100000001\nrdmsr 0 0xc8e\nwrmsr 0 0xc8d 0x100000002\nrdmsr 0 0xc8e\n'
x_tail="${x_tail}wrmsr 0 0xc8d 0x200000002\nrdmsr 0 0xc8e\nwrmsr 2 0xc90 0x1\nrun 300000\n"
x_tail="${x_tail}wrmsr 0 0xc8d 0x100000002\nrdmsr 0 0xc8e\nwrmsr 0 0xc8d 0x200000001\nrdmsr 0 0xc8e\n"
for n in 1 4 5; do
    steps "$TMP/x$n.regs" '' "$x_tail" "$n"
    "$QOSIM" regs --scenario "$TOP/examples/noisy-neighbour.yaml" "$TMP/x$n.regs" 2>&1 |
        grep -v '^ok$' >"$TMP/x$n.out"
done
claim "run steps, x86: the five counts moved (a victim and a stream counted)" \
    awk '/^0x/ && $1 != "0x0000000000000000" { n++ } END { exit n < 5 }' "$TMP/x1.out"
claim "run steps, x86: run 1000000 and 4 x run 250000 read the same counts" \
    cmp -s "$TMP/x1.out" "$TMP/x4.out"
claim "run steps, x86: and 5 x run 200000" cmp -s "$TMP/x1.out" "$TMP/x5.out"
c_head='mmio write64 0x04828008 0x100101\nrun 100\nmmio write64 0x04830008 0x200201\n'
c_head="${c_head}mmio write64 0x04828008 0x100201\n"
# With it, a CONFIG_LIMIT (the stream's RCID 2 to blocks 0-3): a setting,
# which stops the harts at its completion, inside the first step.
c_limit='mmio write64 0x04828020 0x000f\nmmio write64 0x04828018 0x201\n'
c_tail='mmio write64 0x04828008 0x102\nrun 1000\nmmio read64 0x04828010\n'
c_tail="${c_tail}mmio write64 0x04830008 0x202\nrun 1000\nmmio read64 0x04830010\n"
for v in c l; do
    head=$c_head
    [ $v = l ] && head="$c_head$c_limit"
    for n in 1 4; do
        steps "$TMP/$v$n.regs" "$head" "$c_tail" "$n"
        "$QOSIM" regs --scenario "$TOP/examples/regs/cbqri-tasks.yaml" "$TMP/$v$n.regs" 2>&1 |
            grep -v '^ok$' >"$TMP/$v$n.out"
    done
done
claim "run steps, CBQRI: the counters moved" \
    awk '/^0x/ && $1 != "0x0000000000000000" { n++ } END { exit n < 2 }' "$TMP/c1.out"
claim "run steps, CBQRI: run 1000000 and 4 x run 250000 read the same counts" \
    cmp -s "$TMP/c1.out" "$TMP/c4.out"
claim "run steps, CBQRI: the limit acted (the victim holds more of the L3)" \
    [ $(($(sed -n 1p "$TMP/l1.out"))) -gt $(($(sed -n 1p "$TMP/c1.out"))) ]
claim "run steps, CBQRI: with the limit too" cmp -s "$TMP/l1.out" "$TMP/l4.out"
# A READ_COUNTER in the middle of the steps only looks: it completes where
# the harts pause, and the counts after are those of the script without it.
{ printf '%b' "$c_head"; echo "run 500000"; echo "mmio write64 0x04828008 0x102"
  echo "run 500000"; printf '%b' "$c_tail"; } >"$TMP/m.regs"
"$QOSIM" regs --scenario "$TOP/examples/regs/cbqri-tasks.yaml" "$TMP/m.regs" 2>&1 |
    grep -v '^ok$' >"$TMP/m.out"
claim "run steps, CBQRI: a counter read between steps changes nothing" cmp -s "$TMP/c1.out" "$TMP/m.out"

# The PMU counts what the tasks ran: its counters after one 1 ms step are
# those after two 0.5 ms steps (a step's end only reads), and the fixed
# instruction counter equals the general-purpose one.
pmu_head='wrmsr 0 0x186 0x4100c0\nwrmsr 0 0x187 0x41412e\nwrmsr 0 0x38d 0x22\nwrmsr 0 0x38f 0x300000003\n'
pmu_tail='rdmsr 0 0xc1\nrdmsr 0 0xc2\nrdmsr 0 0x309\nrdmsr 0 0x30a\nrdmsr 2 0xc1\n'
printf "${pmu_head}run 1000000\n${pmu_tail}" >"$TMP/p1.regs"
printf "${pmu_head}run 500000\nrdmsr 0 0xc1\nrun 500000\n${pmu_tail}" >"$TMP/p2.regs"
"$QOSIM" regs --scenario "$TOP/examples/noisy-neighbour.yaml" "$TMP/p1.regs" | grep -v '^ok$' >"$TMP/p1.out"
"$QOSIM" regs --scenario "$TOP/examples/noisy-neighbour.yaml" "$TMP/p2.regs" | grep -v '^ok$' | sed 1d >"$TMP/p2.out"
claim "run steps, PMU: two half steps count what one whole step counts" cmp -s "$TMP/p1.out" "$TMP/p2.out"
same "PMU: IA32_PMC0 (instructions) equals IA32_FIXED_CTR0" "$(sed -n 1p "$TMP/p1.out")" "$(sed -n 3p "$TMP/p1.out")"
claim "PMU: the victim ran instructions and missed L3" [ $(($(sed -n 1p "$TMP/p1.out"))) -gt 100000 -a $(($(sed -n 2p "$TMP/p1.out"))) -gt 1000 ]
