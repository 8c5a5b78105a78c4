# The hostile guest's MSR fuzzing, shared by tests/e2e/test_vm_san.sh and
# bench/hostile.sh (docs/security.md): the guest under the sanitized
# plugin, what to fuzz on a platform, and the replay of the guest's writes
# on the model's own console.

# san_vm PLUGIN CMD...: CMD (a `qosim vm`, or a command that runs one) with
# PLUGIN, the plugin built with ASan and UBSan (make vm-san), and their
# runtimes preloaded into QEMU.
san_vm() {
    local plugin=$1
    shift
    QOSIM_VM_PLUGIN=$plugin ASAN_OPTIONS=detect_leaks=0 \
        LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" "$@"
}

# san_reports FILE: the sanitizer reports in a run's standard error (the
# runtimes' warnings about QEMU's coroutines are not reports).
san_reports() { grep -E 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$1"; }

# msrfuzz_ranges PLATFORM: the ranges for `qosim-guest msrfuzz`: the
# vendor's QoS MSRs as the VM gives them to the model (docs/vm.md), with the
# registers that exist also given as ranges of their own, so that they are
# drawn as often as the wide ranges of absent ones. Written only (":w"):
# IA32_QM_CTR, whose reads move with time, and IA32_QM_EVTSEL, which the
# guest's kernel writes too (its limbo worker selects a removed group's
# RMID there every second until the RMID's lines are gone), so that a
# read-back could be the kernel's value.
msrfuzz_ranges() {
    case $1 in
    amd-*) echo 0xc81 0xc8d:w 0xc8e:w 0xc8f 0xc90-0xca0 0xc0000200-0xc0000210 \
        0xc0000280-0xc0000290 0xc00003fd-0xc00003ff 0xc0000400-0xc0000402 \
        0xc0000200-0xc00004ff 0xc0000108 ;;
    *) echo 0xc81-0xc84 0xc8d:w 0xc8e:w 0xc8f 0xc90-0xca0 0xd10-0xd20 0xd50-0xd60 \
        0xc81-0xdff 0x1a4 ;;
    esac
}

# msrfuzz_replay GUEST_OUT PLATFORM DIR: from the guest's output (msrfuzz's
# lines prefixed "fz "), DIR/fz.regs (the writes and read-backs as console
# commands), DIR/fz.want (the outcomes the guest saw, as the console prints
# them: a write taken is its line "ok") and DIR/fz.got (the console's own, `$QOSIM regs` replaying the
# writes from the state the guest found: its "init" lines, whose answers are
# not compared).
msrfuzz_replay() {
    local out=$1 plat=$2 d=$3
    tr -d '\r' <"$out" >"$d/fz.out"
    awk '$1 == "fz" && $2 == "init" { print "wrmsr 0", $3, $4 }' "$d/fz.out" >"$d/fz.init"
    awk '$1 == "fz" && $2 != "init" { print "wrmsr 0", $2, $3; if ($5 != "-") print "rdmsr 0", $2 }' \
        "$d/fz.out" >"$d/fz.regs"
    awk '$1 == "fz" && $2 != "init" { print ($4 == "gp" ? "#GP" : "ok"); if ($5 != "-") print ($5 == "gp" ? "#GP" : $5) }' \
        "$d/fz.out" >"$d/fz.want"
    cat "$d/fz.init" "$d/fz.regs" | "$QOSIM" regs --platform "$plat" - 2>&1 |
        tail -n +$(($(wc -l <"$d/fz.init") + 1)) >"$d/fz.got"
}
