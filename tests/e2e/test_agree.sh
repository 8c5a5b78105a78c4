#!/bin/bash
# Agreement with valgrind: the QEMU engine's records of a run against the
# Lackey engine's records of the same run, and qosim cachesim on the QEMU
# trace against cachegrind's own nine counts (docs/traces.md, "How the two
# engines' counts differ", has the measurements behind every figure here).
#
# Two emulators only run the same instructions when the program sees the
# same world, so every run here goes through the settings that page found:
#   - the environment valgrind gives its client (its preload library in
#     LD_PRELOAD, Debian's wrapper's LD_LIBRARY_PATH and the rest), taken
#     from valgrind itself and given to the QEMU run in the order QEMU
#     passes it on (it reverses it), so the dynamic loader does the same
#     work under both;
#   - QEMU_CPU: QEMU shows glibc an Intel Haswell as valgrind does (QEMU's
#     default CPU is AMD-like, which sends glibc's CPU and cache detection,
#     the xsave area of lazy binding and the library search path elsewhere),
#     and GLIBC_TUNABLES sets the two cache sizes whose CPUID leaves still
#     differ; both variables are in both environments (valgrind ignores the
#     first);
#   - VALGRIND_OPTS=--vex-guest-chase=no: by default valgrind joins two
#     conditional branches to one target into one and then counts the
#     instructions between them even when the first branch skips them;
#   - AGREE_PAD, empty for valgrind and as long as needed for QEMU, puts the
#     initial stack at the same offset in its page under both, so stack
#     lines fall in the same L1 sets and string routines that test for a
#     page crossing take the same path.
# Like tests/e2e/test_cachegrind.sh, every run has descriptors 0-2 only,
# stdin from a fixed file, stdout to /dev/null, one working directory, and
# inputs made here; each program's cachegrind Ir must equal the Lackey
# recording's instruction count, or nothing of it is compared.
. "$(dirname "$0")/lib.sh"

for t in valgrind qemu-x86_64 cc; do
    if ! command -v $t >/dev/null; then
        notok "$t available" "install it: scripts/install-deps"
        exit 0
    fi
done
LDSO=/lib64/ld-linux-x86-64.so.2
[ -x $LDSO ] || { notok "$LDSO available" "an x86-64 glibc system is needed"; exit 0; }

# qfixed ENV IN OUT ERR CMD...: CMD (a qosim command running QEMU) with a
# plain environment, and QEMU, so the program, with exactly the one in the
# array named ENV. (Given to qosim itself, valgrind's LD_PRELOAD would load
# its preload library into qosim, which the sanitizer build refuses.)
QWRAP=$TMP/qemu-env
printf '#!/bin/bash\nmapfile -t E <"$QENV"\nexec env -i "${E[@]}" %s "$@"\n' "$(command -v qemu-x86_64)" >"$QWRAP"
chmod +x "$QWRAP"
qfixed() {
    local -n q=$1
    printf '%s\n' "${q[@]}" >"$TMP/qenv.$1"
    # shellcheck disable=SC2034
    local QBASE=(PATH=/usr/bin:/bin "QOSIM_QEMU=$QWRAP" "QENV=$TMP/qenv.$1")
    fixed QBASE "${@:2}"
}
# The records of a Lackey-text trace by kind: "I L S M".
kinds() { awk '{ n[$1]++ } END { print n["I"] + 0, n["L"] + 0, n["S"] + 0, n["M"] + 0 }' "$1"; }
# The first store's offset in its page: the return address the dynamic
# loader's entry pushes, just below the initial stack pointer.
stack_off() { awk '$1 == "S" { split($2, a, ","); print substr(a[1], length(a[1]) - 2); exit }' "$1"; }
# within NAME Q V TOL: |Q - V| <= TOL * V, figure by figure.
within() {
    local name=$1 tol=$4 i bad="" qa va
    read -r -a qa <<<"$2"
    read -r -a va <<<"$3"
    local names=("${@:5}")
    for i in "${!va[@]}"; do
        near "${qa[i]}" "${va[i]}" "$tol" ||
            bad+="${names[i]}: QEMU ${qa[i]}, valgrind ${va[i]} ($(awk -v a="${qa[i]}" -v b="${va[i]}" \
                'BEGIN { printf "%+.2f%%", b ? 100 * (a - b) / b : 0 }'))  "
    done
    if [ -z "$bad" ]; then ok "$name"; else notok "$name" "$bad"; fi
}

mkdir "$TMP/cwd" "$TMP/bin"
awk 'BEGIN { for (i = 1; i <= 800; i++)
    printf "%05d line %d %s\n", (i * 7919) % 10007, i, substr("the quick brown fox jumps over the lazy dog", 1 + i % 20) }' \
    >"$TMP/lines.txt"
head -c 12000 "$TMP/lines.txt" >"$TMP/12k.txt"
head -c 4000 "$TMP/lines.txt" >"$TMP/4k.txt"
progs_src=$(cd "$(dirname "$0")/progs" && pwd)
for c in matmul hash; do
    cc -O2 -o "$TMP/bin/$c" "$progs_src/$c.c" 2>"$TMP/err" || notok "build $c" "$(head -5 "$TMP/err")"
done

# The settings, for valgrind's runs (lib.sh's fixed reads the arrays by name).
# shellcheck disable=SC2034
VG=(LD_PRELOAD= PATH=/usr/bin:/bin LC_ALL=C TZ=UTC
    "QEMU_CPU=Haswell-noTSX,stepping=3,-pcid,-x2apic,-tsc-deadline,-invpcid,-xsaveopt"
    GLIBC_TUNABLES=glibc.cpu.x86_shared_cache_size=0x800000:glibc.cpu.x86_non_temporal_threshold=0x200000
    VALGRIND_OPTS=--vex-guest-chase=no AGREE_PAD=)
# What valgrind makes of it: the QEMU runs' environment, reversed.
fixed VG /dev/null "$TMP/vgenv" "$TMP/err" valgrind -q --tool=none /usr/bin/env
mapfile -t QE < <(tac "$TMP/vgenv")
qfixed QE /dev/null "$TMP/qenv" "$TMP/err" "$QOSIM" trace record --engine qemu -o "$TMP/env.qtr" -- /usr/bin/env
if [ -s "$TMP/vgenv" ] && cmp -s "$TMP/vgenv" "$TMP/qenv"; then
    ok "the program sees the same environment under both engines"
else
    notok "the program sees the same environment under both engines" \
        "$(diff "$TMP/vgenv" "$TMP/qenv" | head -10)" "$(head -3 "$TMP/err")"
fi
# ... and the same CPU, as far as glibc's choices go.
fixed VG /dev/null "$TMP/vgdiag" "$TMP/err" valgrind -q --tool=none $LDSO --list-diagnostics
qfixed QE /dev/null "$TMP/qdiag" "$TMP/err" "$QOSIM" trace record --engine qemu -o "$TMP/diag.qtr" -- \
    $LDSO --list-diagnostics
pick='^(dl_platform|dl_hwcap|dl_hwcaps_subdirs_active|x86\.cpu_features\.(basic\.|preferred\.|isa_1|xsave_state|data_cache_size|shared_cache_size|non_temporal_threshold|rep_))'
grep -E "$pick" "$TMP/vgdiag" >"$TMP/vgcpu"
grep -E "$pick" "$TMP/qdiag" >"$TMP/qcpu"
if [ -s "$TMP/vgcpu" ] && cmp -s "$TMP/vgcpu" "$TMP/qcpu"; then
    ok "glibc sees the same CPU under both engines ($(grep -c . "$TMP/vgcpu") properties)"
else
    notok "glibc sees the same CPU under both engines" \
        "valgrind presents the CPU of its own table for this host; QEMU_CPU above matches the" \
        "AVX2 one (Intel Haswell). Differences (valgrind <, QEMU >):" "$(diff "$TMP/vgcpu" "$TMP/qcpu" | head -10)"
fi

geom="--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
progs=(
    "matmul|/dev/null|$TMP/bin/matmul"
    "hash|/dev/null|$TMP/bin/hash"
    "gzip|$TMP/12k.txt|gzip -n -6 -c"
    "bzip2|$TMP/4k.txt|bzip2 -c"
    "xz|$TMP/4k.txt|xz -0 -T1 -c"
    "sort|$TMP/lines.txt|sort -S 1M --parallel=1 -k3,3n"
    "sed|$TMP/12k.txt|sed -e s/e/E/g"
)
for spec in "${progs[@]}"; do
    IFS='|' read -r name in cmd <<<"$spec"
    read -r -a argv <<<"$cmd"
    if [ ! -x "${argv[0]}" ] && ! command -v "${argv[0]}" >/dev/null; then
        notok "$name available" "'${argv[0]}' was not built or is not installed"
        continue
    fi
    # Lackey (the slow part) on one core, everything else on the other.
    fixed VG "$in" /dev/null "$TMP/lk.err" "$QOSIM" trace record -o "$TMP/$name.lackey" -- "${argv[@]}" &
    lk=$!
    # shellcheck disable=SC2086
    fixed VG "$in" /dev/null "$TMP/cg.err" valgrind --tool=cachegrind --cache-sim=yes $geom \
        --cachegrind-out-file="$TMP/cg.out" "${argv[@]}"
    # The stacks' offsets in their pages, from the first records of each.
    fixed VG "$in" /dev/null "$TMP/err" "$QOSIM" trace record --max-records 20 -o "$TMP/vp.lackey" -- "${argv[@]}"
    qfixed QE "$in" /dev/null "$TMP/err" "$QOSIM" trace record --engine qemu --max-records 20 \
        -o "$TMP/qp.lackey" -- "${argv[@]}"
    v=$(stack_off "$TMP/vp.lackey")
    pad=$(((0x$(stack_off "$TMP/qp.lackey") - 0x$v) & 4095))
    QP=()
    for kv in "${QE[@]}"; do
        [ "$kv" = AGREE_PAD= ] && kv=AGREE_PAD=$(printf "%${pad}s" "" | tr ' ' x)
        QP+=("$kv")
    done
    qfixed QP "$in" /dev/null "$TMP/qm.err" "$QOSIM" trace record --engine qemu -o "$TMP/$name.q.lackey" -- "${argv[@]}"
    qrc=$?
    wait "$lk"
    lrc=$?
    if [ "$lrc" -ne 0 ] || [ "$qrc" -ne 0 ]; then
        notok "record $name with both engines" "$(head -3 "$TMP/lk.err")" "$(head -3 "$TMP/qm.err")"
        continue
    fi
    ok "record $name with both engines"
    same "$name: the initial stack at one offset in its page (AGREE_PAD $pad bytes)" \
        "$(stack_off "$TMP/$name.q.lackey")" "$v"

    read -r -a lkc <<<"$(kinds "$TMP/$name.lackey")"
    ref=$(cg_counts "$TMP/cg.out")
    if [ "${ref%% *}" != "${lkc[0]}" ]; then
        notok "$name: the Lackey recording repeats cachegrind's run" \
            "cachegrind counted ${ref%% *} instructions, the recording ${lkc[0]}: the run is not" \
            "repeatable, so nothing of it can be compared."
        continue
    fi

    # Instructions and accesses: QEMU's within 0.5% of Lackey's, M within
    # 0.1% (or 8, below). What differs under these settings, measured on all seven
    # programs (docs/traces.md): glibc's cache detection, which still reads
    # different CPUID leaves 2 and 4 and, under valgrind, the HTT bit
    # (about 2,030 instructions, 40 loads, 80 stores at start-up); auxv
    # parsing (40 instructions); the loads valgrind adds for xchg and
    # lock-prefixed instructions, the load and store it makes of a
    # register-register bt, and one access more or less per lazy binding's
    # xsave or xrstor. Together at most 0.35% of the instructions and
    # 0.41% of the loads (sed: 1,290 xchg and 773 bt), and no M. A doubled
    # instruction, a lost access kind, 16- or 32-byte accesses left in
    # 8-byte pieces (matmul: +79% loads) or loads and stores not joined
    # into modifies are far outside.
    read -r -a qc <<<"$(kinds "$TMP/$name.q.lackey")"
    within "$name: instructions, loads, stores within 0.5% of Lackey's" \
        "${qc[0]} ${qc[1]} ${qc[2]}" "${lkc[0]} ${lkc[1]} ${lkc[2]}" 0.005 I L S
    # M within 0.1% or 8, whichever is more: sort modifies only about 1,850
    # times, and one run of the suite counted 1,852 under QEMU against
    # Lackey's 1,850 (cause not found), which 0.1% (1.85) called a failure.
    # Loads and stores not joined into modifies would differ by thousands.
    mtol=$(awk -v m="${lkc[3]}" 'BEGIN { t = m ? 8 / m : 1; print (t > 0.001 ? t : 0.001) }')
    within "$name: modifies within 0.1% (or 8) of Lackey's" "${qc[3]}" "${lkc[3]}" "$mtol" M

    # The nine counts: with these settings, within 1% in geometry 1 for all
    # seven programs (the largest: I1mr and ILmr, -0.95%, ten 64-byte lines
    # of glibc's cache detection that only the HTT bit sends valgrind's
    # runs through). Geometries with a small, low-associativity LL differ
    # more: the two emulators lay the libraries out differently modulo the
    # LL's way size (docs/traces.md).
    # shellcheck disable=SC2086
    got=$("$QOSIM" cachesim --json $geom "$TMP/$name.q.lackey" | q_counts)
    within "$name: cachesim on the QEMU trace within 1% of cachegrind (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw)" \
        "$got" "$ref" 0.01 Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
    rm -f "$TMP/$name.lackey" "$TMP/$name.q.lackey"
done
