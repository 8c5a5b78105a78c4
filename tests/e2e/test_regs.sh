#!/bin/bash
# End-to-end tests of `qosim regs`: the documented example scripts give their
# golden outputs line for line (docs/regs.md), and bad commands, options and
# files are reported as the console promises.
. "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
GOLD=$TOP/tests/e2e/golden

golden() { # golden NAME ARGS...: examples/regs/NAME.regs against golden/NAME.out
    local name=$1
    shift
    "$QOSIM" regs "$@" "$TOP/examples/regs/$name.regs" >"$TMP/$name.out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" -eq 0 ] && cmp -s "$TMP/$name.out" "$GOLD/$name.out"; then ok "regs example $name"; else
        notok "regs example $name" "exit $rc" "$(diff "$GOLD/$name.out" "$TMP/$name.out" | head -6)"; fi
    # One output line per command.
    same "regs example $name: one line per command" "$(wc -l <"$TMP/$name.out")" \
        "$(sed 's/#.*//' "$TOP/examples/regs/$name.regs" | grep -c '[^[:space:]]')"
}
golden intel-cat-cdp
golden intel-cmt-mbm --scenario "$TOP/examples/noisy-neighbour.yaml"
golden rdt-groups --scenario "$TOP/examples/rdt-noisy-neighbour.yaml"
golden intel-l2-cdp --platform intel-atom
golden amd-pqos --platform amd-epyc

# Malformed commands: one error line each, the console goes on, exit 1.
printf 'frob\nrdmsr 0\nrdmsr 32 0xc8f\nwrmsr 0 0xc8f -1\ncpuid\ncpuid 0 0 cpu 99\nrun x\nrdmsr 0 0x1ffffffff\nrdmsr 0 0xc8f\n' >"$TMP/bad.regs"
expect "malformed commands exit 1" 1 "$QOSIM" regs "$TMP/bad.regs"
same "each gets one error line, then the console goes on" "$(cat "$TMP/out")" "error: line 1: unknown command 'frob' (cpuid, rdmsr, wrmsr, run)
error: line 2: usage: rdmsr CPU MSR
error: line 3: CPU '32': expected a CPU number 0..31
error: line 4: value '-1': expected a 64-bit number
error: line 5: usage: cpuid LEAF [SUBLEAF] [cpu N]
error: line 6: cpu '99': expected a CPU number 0..31
error: line 7: usage: run NS (nanoseconds, up to 1000 s)
error: line 8: MSR '0x1ffffffff': expected a 32-bit number
0x0000000000000000"
printf '# only comments\n\n   # and blanks\n' | "$QOSIM" regs - >"$TMP/out" 2>&1
same "comments and blank lines print nothing" "$(cat "$TMP/out")" ""
printf 'rdmsr 0 0xc8f\n' | "$QOSIM" regs >"$TMP/out" 2>&1
same "standard input by default" "$(cat "$TMP/out")" "0x0000000000000000"
printf 'rdmsr 0 0xc81\n' | "$QOSIM" regs --platform riscv-soc >"$TMP/out" 2>"$TMP/err"
same "a RISC-V platform has no x86 registers: exit 2" "$?" "2"
has "and says so" "$TMP/err" "riscv-soc is a RISC-V platform"
expect "platform and scenario together" 2 "$QOSIM" regs --platform intel-xeon --scenario x.yaml
expect "a missing script" 2 "$QOSIM" regs "$TMP/none.regs"
has "names it" "$TMP/err" "none.regs: cannot open"
expect "an unknown platform" 2 "$QOSIM" regs --platform nope "$TMP/bad.regs"
expect "unknown option" 2 "$QOSIM" regs --frob
