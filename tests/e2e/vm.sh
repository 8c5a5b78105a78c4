# The whole-guest tests' shared part (sourced by tests/e2e/test_vm_*.sh):
# one boot of Debian's kernel on a profile under `qosim vm`, running the
# guest-side scripts of tests/vm/ (qos.sh, pqos.sh), whose "fact NAME VALUE"
# lines are then compared with what the profile implies. The boots are slow
# (a minute each on 2 cores), so only the normal build boots; the sanitizer
# build's qosim is only the launcher, whose checks are in test_vm_cli.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case $QOSIM in */san/*)
    echo "# whole-guest boots run against the normal build only"
    exit 0 ;;
esac

# vm_boot PLATFORM CMD [OPTION...]: boots once, with more options of qosim
# vm if given (--kernel FILE, ...); the guest's output in $TMP/guest, the
# model's ground truth in $TMP/report.json. The caches and memory simulate
# only what the guest scripts mark (--from-mark: qosim-guest sim on/off
# around their streams); everything else (init, pqos, the runtimes) checks
# registers, which are the model's throughout, and runs at QEMU's speed.
# VM_FROM='' boots with the default instead (from the first user-space
# instruction).
vm_boot() {
    local plat=$1 cmd=$2
    shift 2
    # Time-boxed: a guest that hangs fails the test instead of the run.
    # Pace 30 (not the default 10) so that a limit's effect on the guest's
    # clock stands well clear of what a loaded machine does to the rest.
    # shellcheck disable=SC2086 # VM_FROM is one option or none
    timeout -k 10 900 "$QOSIM" vm --platform "$plat" --pace 30 --report "$TMP/report.json" \
        ${VM_FROM---from-mark} --cmd "$cmd" "$@" >"$TMP/guest" 2>"$TMP/guest.err"
    local rc=$?
    if [ $rc -eq 0 ]; then ok "$plat: the guest boots, runs the scripts and powers off with status 0"; else
        notok "$plat: the guest boots, runs the scripts and powers off with status 0" "exit $rc" \
            "$(tail -5 "$TMP/guest.err")" "$(grep -v '^| ' "$TMP/guest" | tail -5)"
    fi
}
# fact NAME: the value the guest printed for NAME.
fact() { awk -v k="$1" '$1 == "fact" && $2 == k { sub(/^fact [^ ]* ?/, ""); print; exit }' "$TMP/guest" | tr -d '\r'; }
# want NAME VALUE: the guest saw VALUE for NAME.
want() { same "$PLAT: $1" "$(fact "$1")" "$2"; }
# hex: a value of rdmsr as a number.
num() { printf '%d' "$1" 2>/dev/null || echo -1; }
# The model's ground truth: bytes an RMID's requests read from memory
# (what its MBM total counter counts).
truth_reads() { rmid_figure "$1" read_bytes; }
# rmid_figure RMID KEY: the report's figure KEY (instructions,
# simulated_ns, read_bytes...) for RMID.
rmid_figure() { awk -v r="$1" -v k="\"$2\":" '/"rmid":/ { gsub(/[,{}]/, " "); id = v = ""; for (i = 1; i <= NF; i++) { if ($i == "\"rmid\":") id = $(i + 1); if ($i == k) v = $(i + 1) } if (id == r) print v }' "$TMP/report.json"; }
# per_ns RMID KEY: the RMID's KEY per simulated ns (instructions per ns
# are its IPC times the clock in GHz; read_bytes per ns, GB/s).
per_ns() { awk -v a="$(rmid_figure "$1" "$2")" -v t="$(rmid_figure "$1" simulated_ns)" 'BEGIN { printf "%.4f\n", (t > 0 ? a / t : 0) }'; }

# instr cpu|rmid: the instructions the report counts, summed over its
# vCPUs' lines or over its RMIDs' lines.
# (%.0f: awk prints a sum past 2^31 in %g otherwise.)
instr() { awk -v k="{\"$1\":" '$1 == k { sub(/.*"instructions": /, ""); n += $0 + 0 } END { printf "%.0f\n", n }' "$TMP/report.json"; }

# The occupancy and MBM checks shared by the profiles that monitor L3:
# WAY bytes per L3 way.
# pmu.sh's checks (docs/vm.md, "Measuring in the guest"): Linux takes the
# model's PMU as the part's, perf's counts of a program equal the model's
# own counts exactly, perf record's samples fall in the missing loop; with
# "all" (pmu.sh all) also CAT's effect on LLC misses and pqos -p. $1: the
# boot log's "Performance Events:" line; $2: all (default) or perf.
check_pmu() {
    want pmu.dmesg "$1"
    want pmu.cpu_pmu yes
    local runs=count a b
    # Debian's perf is made from the kernel's source: the one in the guest
    # is the booted kernel's version (6.1.x with 6.1.y, 6.12.x with 6.12.y).
    a=$(fact pmu.uname) b=$(fact pmu.perf)
    claim "$PLAT: the guest's perf ($b) is the running kernel's ($a)" [ -n "$a" -a "${b#perf_version_}" != "$b" -a \
        "$(echo "$a" | cut -d. -f1,2)" = "$(echo "${b#perf_version_}" | cut -d. -f1,2)" ]
    [ "${2:-all}" = all ] && runs="count catff cat3"
    for n in $runs; do
        want $n.rc 0
        want $n.perf_rc 0
        for ev in instructions cycles cache-misses branches branch-misses LLC-load-misses; do
            same "$PLAT: $n: perf's $ev:u equals the model's count ($(fact $n.$ev.truth))" \
                "$(fact $n.$ev.perf)" "$(fact $n.$ev.truth)"
            want $n.$ev.running 100.00
        done
        # A chase: an instruction a line per pass at least (its misses
        # depend on what the caches held; the CAT runs' are checked below).
        claim "$PLAT: $n: the program ran ($(fact $n.instructions.truth) instructions)" \
            [ "$(num "$(fact $n.instructions.truth)")" -gt 300000 ]
    done
    want rec.rc 0
    a=$(num "$(fact rec.samples)") b=$(num "$(fact rec.chase)")
    claim "$PLAT: perf record took samples ($a)" [ "$a" -ge 100 ]
    claim "$PLAT: at least 90% of them in the missing loop, chase() ($b of $a)" [ $((10 * b)) -ge $((9 * a)) ]
    [ "${2:-all}" = all ] || return 0
    # 5 MiB walked in 8 ways (and the L2) fits; in 2 it does not.
    a=$(num "$(fact catff.LLC-load-misses.perf)") b=$(num "$(fact cat3.LLC-load-misses.perf)")
    claim "$PLAT: 2 L3 ways give perf at least twice the LLC load misses of 8 ($b, $a)" [ "$b" -ge $((2 * a)) ]
    # pqos -I -p on a PID (issue 26): its samples ran, on the program's
    # core, with an IPC perf read from the model's PMU within 5% of the
    # model's own over the same time; its group's occupancy, which grows
    # as the walk refills the L3 under the group's new RMID, somewhere
    # between a quarter of a MiB and the L3 (11 MiB); and bandwidth.
    want pqos_p.rc 0
    claim "$PLAT: pqos -p printed its samples ($(fact pqos_p.rows))" [ "$(num "$(fact pqos_p.rows)")" -ge 3 ]
    want pqos_p.core 3
    a=$(fact pqos_p.ipc) b=$(fact pqos_p.truth_ipc)
    claim "$PLAT: pqos -p's IPC is the model's within 5% ($a, $b)" near "${a:--1}" "${b:-0}" 0.05
    a=$(fact pqos_p.llc_kb) b=$(fact pqos_p.mbl)
    claim "$PLAT: pqos -p's LLC occupancy is the walk's lines ($a KB)" \
        awk -v a="${a:--1}" 'BEGIN { exit !(a >= 256 && a <= 11264) }'
    claim "$PLAT: pqos -p's local bandwidth is the walk's misses ($b MB/s)" awk -v b="${b:-0}" 'BEGIN { exit !(b > 0) }'
}

check_monitoring() {
    local way=$1 occ two def delta rmid truth
    occ=$(fact two.occupancy)
    claim "$PLAT: a 32 MiB stream in a group with 2 L3 ways keeps its llc_occupancy ($occ) within 2 ways (+5%)" \
        ge $((2 * way)) "$occ" 0.952
    claim "$PLAT: ... and fills more than that ($occ > 1.9 ways)" ge "$occ" $((2 * way)) 0.95
    def=$(fact default.occupancy)
    claim "$PLAT: the same stream in the default group grows beyond 2 ways ($def)" ge "$def" $((2 * way)) 1.5
    delta=$(fact two.mbm_delta)
    has "$PLAT: the stream moved 64 MiB (two passes)" <(fact two.stream) '^bytes=67108864 '
    claim "$PLAT: mbm_total_bytes grew by at least the 64 MiB the stream read ($delta)" ge "$delta" 67108864 1
    rmid=$(($(num "$(fact two.assoc)") & 0x3ff))
    truth=$(truth_reads "$rmid")
    claim "$PLAT: ... within 5% of the model's ground truth for RMID $rmid (${truth:-none})" \
        near "$delta" "${truth:-0}" 0.05
}

# The region of interest (--from-mark, QOSIM_SIM_CTL in docs/vm.md) as
# qos.sh's stream section marks it: off until the guest's switch, so a
# stream before it moves no MBM count; reserved bits are #GP; on after.
check_sim() {
    want sim.before off
    want sim.off_mbm_delta 0
    same "$PLAT: a QOSIM_SIM_CTL write with a reserved bit is #GP in the guest" "$(fact sim.reserved_rc)" 3
    want sim.after on
    has "$PLAT: the report says simulation started at the guest's mark" "$TMP/report.json" '"from": "mark",'
    has "$PLAT: ... and that it did" "$TMP/report.json" '"simulating": true,'
    local v r
    v=$(instr cpu) r=$(instr rmid)
    claim "$PLAT: the report's instructions per RMID add up to its vCPUs' ($r, $v)" \
        test "$v" -gt 0 -a "$r" -eq "$v"
}

# The bandwidth control check: the throttled group's MBM bytes per guest
# second fall below half the unthrottled one's.
check_bandwidth() {
    local fast slow
    fast=$(fact fast.mbm_rate) slow=$(fact slow.mbm_rate)
    claim "$PLAT: a bandwidth limit lowers the group's counted bandwidth ($slow vs $fast B/s)" \
        ge "${fast:-0}" "${slow:-1}" 2
}

# pqos's round trips, through the MSR interface and resctrl, on class 1 of
# a cache whose full mask is FULL.
check_pqos() {
    local full=$1
    for i in msr_d msr_e msr_a msr_s msr_R os_d os_e os_a os_s; do want "$i.rc" 0; done
    same "$PLAT: pqos -e (MSR) wrote class 1's mask" "$(num "$(fact msr_e.mask)")" 3
    same "$PLAT: pqos -a (MSR) put core 2 in class 1 (its PQR_ASSOC)" "$(fact msr_a.cos2)" 1
    want msr_s.core2 COS1
    same "$PLAT: pqos -R (MSR) reset the mask to all ones" "$(num "$(fact msr_R.mask)")" "$((full))"
    same "$PLAT: pqos -R (MSR) put core 2 back in class 0" "$(fact msr_R.cos2)" 0
    same "$PLAT: pqos -I -e wrote the mask through resctrl" "$(num "$(fact os_e.mask)")" 7
    want os_a.cpus 2
    same "$PLAT: pqos -I -a: the kernel loads class 1 on core 2" "$(fact os_a.cos2)" 1
    want os_s.core2 COS1
}

# The guest's CPUID, as vCPU 1 executes it, against the console's answer
# for logical CPU 1 of the same profile: one model behind both. Leaf 1 only
# in EAX (the signature): its feature bits are QEMU's.
check_cpuid() {
    local l leaf sub got want
    claim "$PLAT: the guest printed its CPUID leaves" ge "$(grep -c '^fact cpuid\.' "$TMP/guest")" 10 1
    for l in $(grep -o '^fact cpuid\.[0-9a-f]*:[0-9a-f]*' "$TMP/guest" | cut -d. -f2); do
        leaf=${l%:*} sub=${l#*:}
        got=$(fact "cpuid.$l")
        want=$(echo "cpuid 0x$leaf 0x$sub cpu 1" | "$QOSIM" regs --platform "$PLAT" |
            sed -n 's/^eax=\(0x[0-9a-f]*\) ebx=\(0x[0-9a-f]*\) ecx=\(0x[0-9a-f]*\) edx=\(0x[0-9a-f]*\).*/\1 \2 \3 \4/p')
        if [ "$leaf" = 1 ]; then got=${got%% *} want=${want%% *}; fi
        same "$PLAT: CPUID $leaf.$sub in the guest is the console's" "$got" "$want"
    done
}
