#!/bin/bash
# qosim vm's launcher: its usage errors name what is wrong, exit 2 and start
# nothing; the QEMU command line it builds follows the profile.
source "$(dirname "$0")/lib.sh"
V="$QOSIM vm"
expect "an unknown option is refused" 2 $V --bogus
has "... and named" "$TMP/err" "unknown argument '--bogus'"
expect "--cpus 0 is refused" 2 $V --cpus 0
has "... and named" "$TMP/err" "^qosim vm: --cpus 0: not a whole number >= 1"
expect "--cpus beyond the profile is refused" 2 $V --platform intel-atom --cpus 25 --print-cmd
has "... and says how many there are" "$TMP/err" "intel-atom has 24 logical CPUs"
expect "--memory beyond 2G is refused" 2 $V --memory 3G
has "... and says why" "$TMP/err" "below the PCI hole"
expect "--pace must be a number" 2 $V --pace fast
expect "a value is required" 2 $V --cmd
has "... and named" "$TMP/err" "^qosim vm: --cmd needs a value"
expect "a RISC-V profile is refused" 2 $V --platform riscv-soc
has "... and named" "$TMP/err" "riscv-soc is a RISC-V platform"
expect "an unknown profile is refused" 2 $V --platform nosuch
echo "not a kernel" >"$TMP/k"
chmod 000 "$TMP/k"
if [ "$(id -u)" -ne 0 ]; then
    expect "an unreadable --kernel is refused" 2 $V --kernel "$TMP/k" --print-cmd
fi
expect "a missing --kernel is refused" 2 $V --kernel "$TMP/none" --print-cmd
has "... and named" "$TMP/err" "$TMP/none: No such file"
expect "--report naming a directory is refused" 2 $V --report "$TMP" --print-cmd
expect "--report - is refused (standard output is the guest's console)" 2 $V --report - --print-cmd
expect "--report in a missing folder is refused" 2 $V --report "$TMP/no/r.json" --print-cmd
has "... and named" "$TMP/err" "cannot write in $TMP/no"
expect "--console naming an existing file is refused" 2 $V --console "$TMP/k" --print-cmd
has "... and nothing is replaced" "$TMP/err" "nothing is replaced"
expect "regs --attach to no guest is refused" 2 $QOSIM regs --attach "$TMP/none.sock" /dev/null
has "... and says what to run" "$TMP/err" "qosim vm --console"
expect "regs --attach with --platform is refused" 2 $QOSIM regs --attach "$TMP/s" --platform intel-xeon
expect "--no-model with --report is refused" 2 $V --no-model --report "$TMP/r.json"
expect "--no-model with --from-boot is refused" 2 $V --no-model --from-boot
has "... naming what needs the model" "$TMP/err" "--from-boot and --from-mark need one"
expect "--no-model with --from-mark is refused" 2 $V --no-model --from-mark
expect "--from-boot with --from-mark is refused" 2 $V --from-boot --from-mark --print-cmd
has "... naming both" "$TMP/err" "^qosim vm: --from-boot and --from-mark: simulation starts at one of them"
# Slow memory: amd-epyc with a slow node per DRAM node (docs/profiles.md, memory.slow).
"$QOSIM" profiles show amd-epyc |
    sed 's/^name: amd-epyc$/name: amd-epyc-slow/
         s/^\(  remote_penalty: 60ns\).*$/\1\n  slow: {nodes: 1, peak: 64GB\/s, latency: 250ns, channels: 2}/' \
        >"$TMP/slow.yaml"
has "the slow-memory profile has its slow node" "$TMP/slow.yaml" "^  slow: \{nodes: 1,"
expect "--slow-memory on a profile without slow memory is refused" 2 $V --platform amd-epyc --slow-memory 256M --print-cmd
has "... and says why" "$TMP/err" "^qosim vm: --slow-memory: amd-epyc has no slow memory \(memory.slow"
expect "--slow-memory 0 on a profile without slow memory is refused too" 2 $V --slow-memory 0 --print-cmd
expect "--slow-memory in less than whole MiB is refused" 2 $V --platform "$TMP/slow.yaml" --slow-memory 100K
has "... and named" "$TMP/err" "^qosim vm: --slow-memory 100K: 0, or whole MiB from 64M"
expect "--slow-memory below 64M is refused" 2 $V --platform "$TMP/slow.yaml" --slow-memory 32M
expect "--memory and --slow-memory beyond 2G together are refused" 2 $V --platform "$TMP/slow.yaml" \
    --memory 1G --slow-memory 1025M
has "... and says why" "$TMP/err" "at most 2G together"
expect "--slow-memory needs a value" 2 $V --slow-memory

# The command line, where 'make vm' has built what it names.
if $V --print-cmd >/dev/null 2>&1; then
    expect "--print-cmd prints QEMU's command line" 0 $V --platform amd-epyc --print-cmd
    has "amd-epyc: QEMU's topology is the profile's (2 sockets, 4 CCX dies, 8 cores, 2 threads)" \
        "$TMP/out" "-smp cpus=4,maxcpus=128,sockets=2,dies=4,cores=8,threads=2 "
    has "amd-epyc: vendor, signature and CPUID limits are the model's" "$TMP/out" \
        "-cpu max,vendor=AuthenticAMD,family=25,model=1,stepping=1,level=16,xlevel=0x80000020,"
    has "amd-epyc: one TCG thread enters the model" "$TMP/out" "-accel tcg,thread=single"
    has "amd-epyc: the plugin gets the profile, the default pace, and simulates from user space" \
        "$TMP/out" "qosim-vm.so,profile=amd-epyc,pace=10,from=user"
    has "amd-epyc: the kernel skips its crypto self-tests, the W+X walks and the mitigations" \
        "$TMP/out" "-append console=ttyS0 panic=-1 cryptomgr.notests rodata=off mitigations=off -plugin"
    expect "--append" 0 $V --platform amd-epyc --append "mitigations=auto foo=1" --print-cmd
    has "... comes last, so that it can turn one back on" "$TMP/out" \
        " rodata=off mitigations=off mitigations=auto foo=1 -plugin"
    expect "--from-boot" 0 $V --platform amd-epyc --from-boot --print-cmd
    has "... the plugin simulates the boot too" "$TMP/out" "qosim-vm.so,profile=amd-epyc,pace=10,from=boot"
    expect "--from-mark" 0 $V --platform amd-epyc --from-mark --print-cmd
    has "... the plugin waits for the guest's mark" "$TMP/out" "qosim-vm.so,profile=amd-epyc,pace=10,from=mark"
    expect "intel-xeon --cpus 16" 0 $V --cpus 16 --print-cmd
    has "intel-xeon: 16 vCPUs of 32, 8 L2 modules a die" "$TMP/out" \
        "-smp cpus=16,maxcpus=32,sockets=2,dies=1,cores=8,threads=2 "
    has "intel-xeon: Intel's limits reach leaf 1FH" "$TMP/out" "vendor=GenuineIntel,family=6,model=106,stepping=6,level=31,xlevel=0x80000008"
    if grep -q -- "-numa" "$TMP/out"; then notok "a profile without slow memory: one NUMA node"; else
        ok "a profile without slow memory: one NUMA node"; fi
    # Slow memory: node 0 with every CPU and --memory, then node 1, CPU-less,
    # 256M by default; the plugin is told its size.
    expect "a profile with slow memory" 0 $V --platform "$TMP/slow.yaml" --print-cmd
    has "... has two NUMA nodes, the slow one CPU-less and 256M by default" "$TMP/out" \
        "-m 1280M -object memory-backend-ram,id=qosim-ram0,size=1024M -object memory-backend-ram,id=qosim-ram1,size=256M -numa node,nodeid=0,cpus=0-127,memdev=qosim-ram0 -numa node,nodeid=1,memdev=qosim-ram1 "
    has "... and the plugin knows the slow node's size" "$TMP/out" "qosim-vm.so,profile=$TMP/slow.yaml,pace=10,from=user,slow=268435456\$"
    expect "--slow-memory 1G --memory 1G" 0 $V --platform "$TMP/slow.yaml" --slow-memory 1G --memory 1G --print-cmd
    has "... makes 2G in all" "$TMP/out" "-m 2048M .*size=1024M .*size=1024M "
    expect "--slow-memory 0" 0 $V --platform "$TMP/slow.yaml" --slow-memory 0 --print-cmd
    if grep -q -- "-numa\|slow=" "$TMP/out"; then notok "... gives the guest no slow node"; else
        ok "... gives the guest no slow node"; fi

    # Quick boots of QEMU alone (--no-model, seconds each) for what the
    # launcher does around the guest. Time-boxed.
    B="timeout -k 10 300 $V --platform intel-atom --no-model"
    expect "--cmd: the command's exit status is qosim vm's" 7 $B --cmd 'echo hello; exit 7'
    same "... and its output, exactly, is all that reaches standard output" "$(od -c <"$TMP/out")" \
        "$(printf 'hello\n' | od -c)"
    same "... and nothing else reaches standard error" "$(cat "$TMP/err")" ""
    # ttyS1 is a FIFO qosim vm drains, keeping only the end (the status
    # line): a guest writing there without end fills no disk.
    expect "a guest writing 300 KB to ttyS1 still ends with its status" 7 \
        $B --cmd 'head -c 300000 /dev/zero >/dev/ttyS1; exit 7'
    kdir=$(dirname "$(readlink -f "$($V --print-cmd | sed 's/.* -kernel \([^ ]*\) .*/\1/')")")
    expect "--kernel: a bzImage boots too" 0 $B --kernel "$kdir/vmlinuz" --cmd 'uname -r'
    same "... Debian's kernel" "$(cat "$TMP/out")" "$(cat "$kdir/version")"
    # An initramfs of one's own, whose init says nothing of a status.
    mkdir -p "$TMP/rd/bin"
    cp /bin/busybox "$TMP/rd/bin/"
    printf '#!/bin/busybox sh\n/bin/busybox echo own-init\n/bin/busybox poweroff -f\n' >"$TMP/rd/init"
    chmod +x "$TMP/rd/init"
    (cd "$TMP/rd" && find . | cpio -o -H newc 2>/dev/null | gzip) >"$TMP/rd.gz"
    expect "--initrd: one's own init runs; with --cmd and no status: 125" 125 $B --initrd "$TMP/rd.gz" --cmd true
    has "... it said why" "$TMP/err" "stopped without an exit status"
    # QEMU's layout of the two nodes, as the guest's firmware tables give it.
    expect "slow memory: the guest boots" 0 timeout -k 10 300 $V --platform "$TMP/slow.yaml" --no-model \
        --cmd 'echo "cpus [$(cat /sys/devices/system/node/node1/cpulist)]"; dmesg | grep -o "SRAT: Node 1 .*"'
    has "... its node 1 has no CPU" "$TMP/out" "^cpus \[\]$"
    has "... and the 256M after node 0's 1G (ACPI SRAT)" "$TMP/out" "^SRAT: Node 1 PXM 1 \[mem 0x40000000-0x4fffffff\]"

    # The console socket (docs/security.md): 0600 under a umask of 000, out
    # of another user's reach, gone however QEMU or the launcher ends; the
    # run's temporary folder under $TMPDIR, private. Each run is stopped as
    # soon as its socket is there: no guest needs to boot for these.
    # console_vm NAME: starts intel-atom with --console $TMP/c/NAME.sock,
    # umask 000, TMPDIR=$TMP/tmpd; $cpid is the launcher; waits for the socket.
    mkdir -p "$TMP/c" "$TMP/tmpd"
    console_vm() {
        sock=$TMP/c/$1.sock
        (umask 000; TMPDIR=$TMP/tmpd exec $V --platform intel-atom --console "$sock" \
            --cmd 'sleep 600' >"$TMP/c/$1.out" 2>"$TMP/c/$1.err") &
        cpid=$!
        for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
    }
    qemu_of() { pgrep -P "$1" -f qemu-system-x86_64; }
    console_vm kill9
    same "console: the socket is 0600 under a umask of 000" "$(stat -c %a "$sock")" 600
    run_dir=$(echo "$TMP"/tmpd/qosim-vm.*)
    same "the run's temporary folder is made under \$TMPDIR, 0700" "$(stat -c %a "$run_dir")" 700
    same "... and its files are 0600" "$(stat -c '%n %a' "$run_dir"/* | sed 's|.*/||')" \
        "$(printf 'initrd 600\nstatus 600')"
    if other_user; then
        # A user made by the test, with a copy of qosim in a folder it may
        # pass through.
        pub=$(mktemp -d)
        chmod 711 "$pub" "$TMP" "$TMP/c"
        cp "$QOSIM" "$pub/qosim"
        echo 'rdmsr 0 0xc8f' >"$pub/script"
        chmod 644 "$pub/script"
        if $OTHER test -x "$pub/qosim" -a -r "$pub/script" -a -x "$TMP/c"; then
            $OTHER "$pub/qosim" regs --attach "$sock" "$pub/script" >"$TMP/out" 2>"$TMP/err"
            same "console: another user (uid $OTHER_UID, made by this test) cannot connect" "$?" 2
            has "... the socket's mode stops it" "$TMP/err" "--attach $sock: Permission denied"
        else
            echo "# console: uid $OTHER_UID cannot reach $pub or $TMP/c here: another user's connection is not checked"
        fi
        chmod 700 "$TMP"
        rm -rf "$pub"
    else
        echo "# console: another user's connection is checked only as root (a user made by the test)"
    fi
    expect "console: the owner's qosim regs --attach is answered while QEMU runs" 0 \
        "$QOSIM" regs --attach "$sock" <<<'rdmsr 0 0xc8f'
    same "... PQR_ASSOC of CPU 0" "$(cat "$TMP/out")" "0x0000000000000000"
    kill -9 "$(qemu_of $cpid)"
    wait $cpid
    same "kill -9 of QEMU: qosim vm fails" "$?" 2
    has "... and says QEMU was killed" "$TMP/c/kill9.err" "QEMU was killed by signal 9"
    claim "... the socket is removed" test ! -e "$sock"
    same "... and so is the temporary folder" "$(ls -A "$TMP/tmpd")" ""
    for s in TERM INT; do
        console_vm $s
        kill -$s $cpid
        wait $cpid
        same "SIG$s to qosim vm: 128 + the signal" "$?" $((128 + $(kill -l $s)))
        claim "... the socket is removed" test ! -e "$sock"
        same "... and so is the temporary folder" "$(ls -A "$TMP/tmpd")" ""
    done
    console_vm launcher9
    q=$(qemu_of $cpid)
    kill -9 $cpid
    wait $cpid 2>/dev/null
    for _ in $(seq 300); do kill -0 "$q" 2>/dev/null || break; sleep 0.1; done
    claim "kill -9 of qosim vm: QEMU ends too" test ! -d "/proc/$q"
    claim "... and removes the socket" test ! -e "$sock"
    rm -rf "$TMP/tmpd"/*
    chmod 777 "$TMP/c"
    expect "--console in a folder others can write to (0777, not sticky) is refused" 2 \
        $V --console "$TMP/c/x.sock" --print-cmd
    has "... and says why" "$TMP/err" "^qosim vm: --console $TMP/c/x.sock: folder $TMP/c \(mode 0777\) can be written by other users"
    chmod 700 "$TMP/c"
else
    echo "# 'make vm' has not been run: the command-line checks are skipped"
fi

# ---- qosim-guest stream's options, on the host (a static program) ----
G=
for d in "$(dirname "$QOSIM")/vm" "$(dirname "$QOSIM")/../vm"; do [ -x "$d/qosim-guest" ] && G=$d/qosim-guest && break; done
if [ -z "$G" ]; then echo "# 'make vm' has not been run: qosim-guest's checks are skipped"; else
    expect "stream: --write and --chase together are refused" 2 "$G" stream --write --chase
    has "... and named" "$TMP/err" "^qosim-guest: --write and --chase are two patterns; give one$"
    expect "stream: --ready in a missing folder is refused" 2 "$G" stream --size 64K --ready "$TMP/no/r"
    has "... and named" "$TMP/err" "^qosim-guest: --ready $TMP/no/r: No such file or directory$"
    expect "stream: --start-on needs a value" 2 "$G" stream --start-on
    expect "stream: --chase runs its passes" 0 "$G" stream --chase --size 1M --passes 3
    has "... over the buffer's lines, 3 MiB" "$TMP/out" "^bytes=3145728 "
    # --ready, then the passes once the start file is there; none once
    # the stop file is.
    rm -f "$TMP/go" "$TMP/ready"
    (for _ in $(seq 100); do [ -f "$TMP/ready" ] && break; sleep 0.1; done; touch "$TMP/go") &
    expect "stream: --ready, then --start-on: the passes run once the file is there" 0 \
        "$G" stream --size 64K --passes 2 --ready "$TMP/ready" --start-on "$TMP/go"
    wait
    has "... all of them" "$TMP/out" "^bytes=131072 "
    expect "stream: --stop-on a file that is there: no pass" 0 "$G" stream --size 64K --passes 5 --stop-on "$TMP/go"
    has "... and the line says so" "$TMP/out" "^bytes=0 "
fi
