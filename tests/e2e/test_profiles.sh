#!/bin/bash
# End-to-end tests of platform profiles: the shipped ones list, show and
# check; broken ones fail with exit 2 and a message that names the file, the
# line and the key path of what is wrong.
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHIPPED="amd-epyc amd-epyc-turin amd-lwp intel-atom intel-xeon intel-xeon-skx intel-xeon-spr riscv-edge riscv-soc riscv-soc-draft"

# ---- the shipped profiles ------------------------------------------------------

expect "profiles lists" 0 "$QOSIM" profiles
same "profiles lists all nine, sorted" "$(awk '{ print $1 }' "$TMP/out" | tr '\n' ' ')" "$SHIPPED "
has "intel-xeon listed with its topology" "$TMP/out" \
    '^intel-xeon +intel +sockets 2, NUMA nodes 2, L3 domains 2, cores 16, CPUs 32$'
has "intel-atom listed with its topology" "$TMP/out" \
    '^intel-atom +intel +sockets 1, NUMA nodes 1, L3 domains 0, cores 24, CPUs 24$'
has "amd-epyc listed with its topology" "$TMP/out" \
    '^amd-epyc +amd +sockets 2, NUMA nodes 2, L3 domains 8, cores 64, CPUs 128$'
has "riscv-edge listed with its topology" "$TMP/out" \
    '^riscv-edge +riscv +sockets 1, NUMA nodes 1, L3 domains 1, cores 8, CPUs 8$'
has "riscv-soc listed with its topology" "$TMP/out" \
    '^riscv-soc +riscv +sockets 1, NUMA nodes 1, L3 domains 2, cores 16, CPUs 16$'
has "amd-epyc-turin listed with its topology and CXL node" "$TMP/out" \
    '^amd-epyc-turin +amd +sockets 1, NUMA nodes 1, L3 domains 8, cores 32, CPUs 64, slow memory node 1$'
has "amd-lwp listed with its topology" "$TMP/out" \
    '^amd-lwp +amd +sockets 1, NUMA nodes 1, L3 domains 1, cores 8, CPUs 8$'

for p in $SHIPPED; do
    expect "profiles show $p" 0 "$QOSIM" profiles show "$p"
    if cmp -s "$TMP/out" "$ROOT/profiles/$p.yaml"; then
        ok "profiles show $p prints profiles/$p.yaml as it is"
    else
        notok "profiles show $p prints profiles/$p.yaml as it is" "$(diff "$TMP/out" "$ROOT/profiles/$p.yaml" | head -5)"
    fi
    expect "profiles check $p (by name)" 0 "$QOSIM" profiles check "$p"
    has "check by name says valid" "$TMP/out" "^$p: $p is a valid profile \([0-9]+ CPUs(, slow memory nodes? [0-9-]+)?\)$"
    expect "profiles check profiles/$p.yaml (by path)" 0 "$QOSIM" profiles check "$ROOT/profiles/$p.yaml"
done
# What the shipped profiles contain, as the simulator reads it.
"$QOSIM" profiles show intel-atom >"$TMP/atom.yaml"
has "intel-atom: L2 shared by a module" "$TMP/atom.yaml" '^    shared_by: module'
if grep -q '^  L3:' "$TMP/atom.yaml"; then notok "intel-atom has no L3"; else ok "intel-atom has no L3"; fi

expect "profiles show: unknown name" 1 "$QOSIM" profiles show nosuch
has "profiles show: unknown name said" "$TMP/err" "no shipped profile called 'nosuch'"
expect "profiles check: unknown name" 2 "$QOSIM" profiles check nosuch
same "profiles check: unknown name lists the shipped ones" "$(head -1 "$TMP/err")" \
    "qosim profiles: no platform profile called 'nosuch' (shipped: amd-epyc, amd-epyc-turin, amd-lwp, intel-atom, intel-xeon, intel-xeon-skx, intel-xeon-spr, riscv-edge, riscv-soc, riscv-soc-draft)"
expect "profiles check: missing file" 2 "$QOSIM" profiles check "$TMP/none.yaml"
has "profiles check: missing file said" "$TMP/err" "$TMP/none.yaml: cannot open"
# A name ending in .yml is a file too, as one ending in .yaml is: checked
# by name from its directory, and named by a scenario beside it.
mkdir -p "$TMP/yml"
cp "$TMP/atom.yaml" "$TMP/yml/board.yml"
(cd "$TMP/yml" && "$QOSIM" profiles check board.yml >"$TMP/out" 2>"$TMP/err")
same "profiles check board.yml reads the file" "$(cat "$TMP/out" "$TMP/err")" \
    "board.yml: intel-atom is a valid profile (24 CPUs)"
printf 'platform: board.yml\nduration: 20us\ntasks:\n  - {name: a, cpu: 0, workload: {pattern: seq}}\n' \
    >"$TMP/yml/s.yaml"
expect "a scenario naming board.yml runs" 0 "$QOSIM" run "$TMP/yml/s.yaml" --quiet --json "$TMP/yml/s.json"
has "the run is on the board's platform" "$TMP/yml/s.json" '"platform": "intel-atom"'
# Neither shipped nor there: a name lists the shipped profiles, a file says
# it is not there (relative to the scenario).
printf 'platform: nosuch.yml\nduration: 20us\ntasks:\n  - {name: a, cpu: 0, workload: {pattern: seq}}\n' \
    >"$TMP/yml/missing.yaml"
expect "a missing .yml profile: exit 2" 2 "$QOSIM" run "$TMP/yml/missing.yaml"
same "a missing .yml profile: the file is named, with why" "$(cat "$TMP/err")" \
    "qosim run: $TMP/yml/missing.yaml:1: platform: $TMP/yml/nosuch.yml: cannot open: No such file or directory"
expect "profiles check of a missing .yml: exit 2" 2 "$QOSIM" profiles check "nosuch.yml"
same "profiles check of a missing .yml: a file, not a name" "$(cat "$TMP/err")" \
    "qosim profiles: nosuch.yml: cannot open: No such file or directory"

expect "profiles: bad arguments" 2 "$QOSIM" profiles frobnicate
same "profiles: an unknown command is named" "$(head -1 "$TMP/err")" \
    "qosim profiles: unknown command 'frobnicate' (show NAME, check FILE)"
# A command without its argument says what it needs, and shows the usage.
expect "profiles check without a FILE" 2 "$QOSIM" profiles check
same "profiles check without a FILE says it needs one" "$(head -1 "$TMP/err")" \
    "qosim profiles: check needs a FILE (a profile's path or a shipped name)"
has "profiles check without a FILE shows the usage" "$TMP/err" '^usage: qosim profiles '
claim "profiles check without a FILE prints nothing on stdout" [ ! -s "$TMP/out" ]
expect "profiles show without a NAME" 2 "$QOSIM" profiles show
same "profiles show without a NAME says it needs one, and which" "$(head -1 "$TMP/err")" \
    "qosim profiles: show needs a NAME (shipped: amd-epyc, amd-epyc-turin, amd-lwp, intel-atom, intel-xeon, intel-xeon-skx, intel-xeon-spr, riscv-edge, riscv-soc, riscv-soc-draft)"
expect "profiles check with two FILEs" 2 "$QOSIM" profiles check a.yaml b.yaml
same "profiles check with two FILEs names the extra" "$(head -1 "$TMP/err")" \
    "qosim profiles: check takes one FILE; unexpected 'b.yaml'"
expect "profiles show with two NAMEs" 2 "$QOSIM" profiles show intel-xeon amd-epyc
same "profiles show with two NAMEs names the extra" "$(head -1 "$TMP/err")" \
    "qosim profiles: show takes one NAME; unexpected 'amd-epyc'"
expect "profiles --help" 0 "$QOSIM" profiles --help

# ---- broken profiles -----------------------------------------------------------
# Each is the valid base below with lines edited (sed, keeping line numbers)
# or appended; each must give exit 2 and exactly the message wanted.

cat >"$TMP/base.yaml" <<'EOF'
name: t
vendor: intel
topology:
  sockets: 1
  modules: 2
  cores: 2
  threads: 2
core:
  frequency: 2GHz
  cpi: 0.5
caches:
  L1I: {size: 32K, ways: 8, latency: 4}
  L1D: {size: 32K, ways: 8, latency: 4}
  L2:
    size: 1M
    ways: 16
    latency: 14
    shared_by: core
    allocation: {classes: 8, cbm_len: 16}
  L3:
    size: 8M
    ways: 16
    latency: 40
    monitored: true
    allocation: {classes: 16, cbm_len: 16, shareable: 0xc000}
memory:
  channels: 2
  peak: 25.6GB/s
  latency: 80ns
qos:
  monitoring: {ids: 64, occupancy: true, total: true}
  bandwidth: {kind: delay, classes: 8, max: 90, granularity: 10}
EOF
# The base itself and a CBQRI variant of it are valid.
expect "test base profile is valid" 0 "$QOSIM" profiles check "$TMP/base.yaml"
cp "$TMP/base.yaml" "$TMP/cbqri.yaml"
sed -i -e '2s/.*/vendor: riscv/' \
    -e '32s/.*/  bandwidth: {kind: share, classes: 16, blocks: 64, mrbwb: 48}/' "$TMP/cbqri.yaml"
cat >>"$TMP/cbqri.yaml" <<'EOF'
  cbqri:
    capacity:
      - {at: L3, base: 0x4820000, rcids: 16, mcids: 64, blocks: 16, frcid: true}
      - {at: L2, base: 0x4810000, rcids: 8, mcids: 64, blocks: 16}
    bandwidth:
      - {at: memory, base: 0x4830000, rcids: 16, mcids: 64, blocks: 64, mrbwb: 48}
EOF
expect "test CBQRI profile is valid" 0 "$QOSIM" profiles check "$TMP/cbqri.yaml"

# broken NAME FROM SED-SCRIPT WANT: profile NAME is FROM (base or cbqri)
# edited by SED-SCRIPT; checking it must exit 2 saying "FILE:WANT".
broken() {
    local name=$1 from=$2 script=$3 want=$4 f="$TMP/$1.yaml"
    sed -e "$script" "$TMP/$from.yaml" >"$f"
    expect "broken: $name exits 2" 2 "$QOSIM" profiles check "$f"
    same "broken: $name message" "$(cat "$TMP/err")" "qosim profiles: $f:$want"
}

broken unknown-key base '7s/threads/thread/' \
    "7: topology.thread: unknown key (did you mean 'threads'?)"
# A misspelt required key or section is named itself, not as the one missing.
broken misspelt-required-key base '10s/cpi/cip/' \
    "10: core.cip: unknown key (did you mean 'cpi'?)"
broken misspelt-section base '8s/core/cores/' \
    "8: cores: unknown key (did you mean 'core'?)"
broken misspelt-deep base '25s/classes/clases/' \
    "25: caches.L3.allocation.clases: unknown key (did you mean 'classes'?)"
broken misspelt-kind base '32s/kind/knid/' \
    "32: qos.bandwidth.knid: unknown key (did you mean 'kind'?)"
broken misspelt-list-item cbqri '36s/rcids/rcid/' \
    "36: qos.cbqri.capacity[1].rcid: unknown key (did you mean 'rcids'?)"
# Another kind's key is unknown, but is no misspelling.
broken other-kind base '32s/granularity: 10/granularity: 10, blocks: 4/' \
    "32: qos.bandwidth.blocks: unknown key"
broken unknown-section base '$a\
extras: {turbo: true}' \
    "33: extras: unknown key"
broken missing-key base '10s/.*/  # cpi left out/' \
    "8: core: missing required key 'cpi'"
broken missing-section base '26,29s/^/#/' \
    "1: memory: missing section"
broken missing-L2 base '14,19s/^/#/' \
    "11: caches: L2: missing (L1I, L1D and L2 are required)"
broken bad-size base '15s/1M/1X/' \
    "15: caches.L2.size: expected a size in bytes such as 32K or 11M, got '1X'"
broken bad-geometry base '15s/1M/3M/' \
    "14: caches.L2: size 3145728 / (line 64 x assoc 16) is not a power-of-two number of sets"
broken bad-unit-time base '29s/80ns/80/' \
    "29: memory.latency: expected a time such as 80ns or 1.5us, got '80'"
broken bad-unit-freq base '9s/2GHz/2GB/' \
    "9: core.frequency: expected a frequency such as 2.4GHz or 800MHz, got '2GB'"
broken bad-unit-rate base '28s/25.6GB\/s/25.6GHz/' \
    "28: memory.peak: expected a bandwidth such as 25.6GB/s or 800MB/s, got '25.6GHz'"
broken rate-range base '28s/25.6GB\/s/100KB\/s/' \
    "28: memory.peak: 100KB/s is out of range (1MB/s..10000GB/s)"
broken ways-range base '16s/16/300/' \
    "16: caches.L2.ways: 300 is out of range (1..256)"
broken bad-vendor base '2s/intel/arm/' \
    "2: vendor: expected one of intel, amd, riscv, got 'arm'"
broken cbm-len-divides base '19s/cbm_len: 16/cbm_len: 12/' \
    "19: caches.L2.allocation.cbm_len: cbm_len 12 must divide the 16 ways"
broken shareable-beyond base '25s/0xc000/0x18000/' \
    "25: caches.L3.allocation.shareable: 0x18000 has bits beyond cbm_len 16"
broken bad-bool base '25s/shareable: 0xc000/cdp: maybe/' \
    "25: caches.L3.allocation.cdp: expected true or false (also yes/no, on/off), got 'maybe'"
broken L2-latency base '17s/14/4/' \
    "14: caches.L2: latency 4 must exceed the L1s' 4"
broken L3-latency base '23s/40/14/' \
    "20: caches.L3: latency 14 must exceed L2's 14"
broken L3-shared-by-core base '24s/.*/    shared_by: core/' \
    "24: caches.L3.shared_by: L3 cannot be shared by a core"
broken L2-shared-by-domain base '18s/core/domain/' \
    "18: caches.L2.shared_by: L2 cannot be shared by a domain"
broken bad-scope base '18s/core/socket/' \
    "18: caches.L2.shared_by: expected one of core, module, domain, got 'socket'"
broken L1-inclusive base '13s/latency: 4/latency: 4, inclusion: inclusive/' \
    "13: caches.L1D.inclusion: an L1 has no level above it"
broken line-sizes base '13s/ways: 8/ways: 8, line: 32/' \
    "13: caches.L1D: line size 32 differs from L1I's 64: every level needs one line size"
broken bad-policy base '18s/.*/    policy: fifo/' \
    "18: caches.L2.policy: unknown replacement policy 'fifo' (lru, plru, srrip, qlru_H_M_R_U[_umo], adaptive_qlru_H_M_R_U)"
broken plru-ways base '21s/8M/6M/; 22s/16/12/; 24s/.*/    policy: plru/' \
    "24: caches.L3.policy: tree-PLRU needs a power-of-two associativity of at most 64"
# caches.L3.io_ways: a CBM of the L3's cbm_len bits, and on the L3 only.
broken io-ways-beyond base '25s/$/\n    io_ways: 0x10000/' \
    "26: caches.L3.io_ways: 0x10000 is out of range (0..65535)"
broken io-ways-on-L2 base '19s/$/\n    io_ways: 0x3/' \
    "20: caches.L2.io_ways: only an L3 takes I/O writes (DMA allocates into the last level shared by a domain)"
broken io-ways-without-L3 base '20,25s/^/#/; 19s/$/\n    io_ways: 0x3/' \
    "20: caches.L2.io_ways: only an L3 takes I/O writes (DMA allocates into the last level shared by a domain); this profile has no L3"
broken bw-kind base '32s/delay/throttle/' \
    "32: qos.bandwidth.kind: expected one of delay, rate, share, got 'throttle'"
broken delay-granularity base '32s/max: 90/max: 95/' \
    "32: qos.bandwidth.max: 95 is not a multiple of granularity 10"
broken delay-max-range base '32s/max: 90/max: 100/' \
    "32: qos.bandwidth.max: 100 is out of range (1..99)"
broken rate-without-L3 base '20,25s/^/#/; 32s/.*/  bandwidth: {kind: rate, classes: 8, max: 11}/' \
    "32: qos.bandwidth.kind: rate limits L3-to-memory traffic, but there is no L3"
broken share-mrbwb cbqri '32s/mrbwb: 48/mrbwb: 65/' \
    "32: qos.bandwidth.mrbwb: 65 is out of range (1..64)"
# Where the two CBQRI texts differ (docs/cbqri-versions.md): 1.0 asks for
# 8-byte aligned register blocks, the draft for 4 KiB; 1.0's RCID-prefixed
# MCIDs, cc_cunits and Smstateen do not exist in the draft.
broken cbqri-unaligned cbqri '35s/0x4820000/0x4820804/' \
    "35: qos.cbqri.capacity[0].base: 0x4820804 is not 8-byte aligned (CBQRI 1.0 register blocks are)"
broken cbqri-draft-unaligned cbqri '33s/$/\n    spec: draft-2023/; 35s/0x4820000/0x4820800/' \
    "36: qos.cbqri.capacity[0].base: 0x4820800 is not 4 KiB aligned (CBQRI draft-2023 register blocks are)"
broken cbqri-spec-unknown cbqri '33s/$/\n    spec: "0.9"/' \
    "34: qos.cbqri.spec: expected one of 1.0, draft-2023, got '0.9'"
broken cbqri-prefix-range cbqri '33s/$/\n    mcid_prefix: 13/' \
    "34: qos.cbqri.mcid_prefix: 13 is out of range (0..12)"
broken cbqri-prefix-too-wide cbqri '33s/$/\n    mcid_prefix: 3/' \
    "34: qos.cbqri.mcid_prefix: P 3: 16 RCIDs << 3 name effective MCIDs up to 127, but the controller has 64 MCIDs"
broken cbqri-prefix-on-draft cbqri '33s/$/\n    spec: draft-2023\n    mcid_prefix: 2/' \
    "35: qos.cbqri.mcid_prefix: RCID-prefixed MCIDs are CBQRI 1.0's; the 2023 draft has none"
broken cbqri-cunits-on-draft cbqri '33s/$/\n    spec: draft-2023/; 35s/frcid: true/frcid: true, cunits: true/' \
    "36: qos.cbqri.capacity[0].cunits: cc_cunits is CBQRI 1.0's; the 2023 draft has no capacity-unit limits"
broken cbqri-cunits-on-bandwidth cbqri '38s/mrbwb: 48/mrbwb: 48, cunits: true/' \
    "38: qos.cbqri.bandwidth[0].cunits: cunits is a capacity controller's capability"
broken cbqri-stride-small cbqri '35s/frcid: true/frcid: true, stride: 40/' \
    "35: qos.cbqri.capacity[0].stride: 40: instances are at least 48 bytes apart, a multiple of 8 (CBQRI 1.0)"
broken cbqri-smstateen-on-draft cbqri '33s/$/\n    spec: draft-2023/; 10s/$/\n  smstateen: true/' \
    "11: core.smstateen: mstateen0 bit 55 gates Ssqosid's srmcfg (CBQRI 1.0); the 2023 draft's sqoscfg has no such control"
broken cbqri-xlen cbqri '10s/$/\n  xlen: 48/' \
    "11: core.xlen: 48: SXLEN is 32 or 64"
broken xlen-on-intel base '10s/$/\n  xlen: 64/' \
    "11: core.xlen: SXLEN and Smstateen are RISC-V's; this is an intel profile"
broken cbqri-capacity-at-memory cbqri '35s/at: L3/at: memory/' \
    "35: qos.cbqri.capacity[0].at: a capacity controller cannot sit at memory"
broken cbqri-bandwidth-at-L3 cbqri '38s/at: memory/at: L3/' \
    "38: qos.cbqri.bandwidth[0].at: a bandwidth controller cannot sit at L3"
broken cbqri-no-such-cache cbqri '20,25s/^/#/; 32s/.*/  bandwidth: {kind: share, classes: 16, blocks: 64}/' \
    "35: qos.cbqri.capacity[0].at: the profile has no L3"
broken cbqri-missing-key cbqri '35s/mcids: 64, //' \
    "35: qos.cbqri.capacity[0]: missing required key 'mcids'"
broken cbqri-not-a-list cbqri '35s/.*/      at: L3/; 36d' \
    "34: qos.cbqri.capacity: expected a sequence, got a mapping"
# Features belong to their vendor, and numbers must fit the registers.
broken cbqri-on-intel cbqri '2s/.*/vendor: intel/; 32s/.*/  bandwidth: {kind: delay, classes: 8, max: 90, granularity: 10}/' \
    "33: qos.cbqri: CBQRI is RISC-V's; this is an intel profile"
broken lwp-on-intel base '$a\
  lwp: {max_events: 3}' \
    "33: qos.lwp: LWP is AMD's; this is an intel profile"
broken lwp-min-buffer base '2s/intel/amd/; $a\
  lwp: {min_buffer: 256}' \
    "33: qos.lwp.min_buffer: 256 x 32 records do not fit CPUID 0x8000001C's 8-bit LwpMinBufferSize field (ECX[23:16])"
broken x86-cbm-len base '22s/16/64/; 25s/cbm_len: 16/cbm_len: 64/' \
    "25: caches.L3.allocation.cbm_len: 64 bits do not fit CPUID.10H's 5-bit length field"
broken x86-rmids base '31s/ids: 64/ids: 2048/' \
    "31: qos.monitoring.ids: 2048 RMIDs do not fit PQR_ASSOC's 10-bit RMID field"
broken x86-share base '32s/.*/  bandwidth: {kind: share, classes: 8, blocks: 64}/' \
    "32: qos.bandwidth.kind: reserved shares are CBQRI's; x86 limits by delay or rate"
# On RISC-V the CBQRI controllers are the QoS resources: their sizes are the levels'.
broken cbqri-rcids cbqri '35s/rcids: 16/rcids: 8/' \
    "35: qos.cbqri.capacity[0].rcids: 8 RCIDs, but caches.L3.allocation has 16 classes"
broken cbqri-ncblks cbqri '36s/blocks: 16/blocks: 8/' \
    "36: qos.cbqri.capacity[1].blocks: NCBLKS 8, but caches.L2.allocation.cbm_len is 16"
broken cbqri-mcids cbqri '35s/mcids: 64/mcids: 32/' \
    "35: qos.cbqri.capacity[0].mcids: 32 MCIDs, but qos.monitoring has 64 ids"
broken cbqri-twice cbqri '36s/at: L2/at: L3/' \
    "36: qos.cbqri.capacity[1].at: L3 already has a capacity controller"
broken cbqri-uncontrolled cbqri '36d' \
    "19: caches.L2.allocation: no CBQRI capacity controller at L2 controls this allocation"
broken cbqri-overlap cbqri '36s/0x4810000/0x481f000/' \
    "36: qos.cbqri.capacity[1].base: registers 0x481f000-0x4822fff overlap another controller's 0x4820000-0x4820fff"
broken cbqri-bw-sizes cbqri '38s/mrbwb: 48/mrbwb: 40/' \
    "38: qos.cbqri.bandwidth[0].rcids: RCIDs 16, NBWBLKS 64, MRBWB 40 differ from qos.bandwidth's classes 16, blocks 64, mrbwb 48"
broken cbqri-no-bw-controller cbqri '37,38d' \
    "32: qos.bandwidth.kind: no CBQRI bandwidth controller at memory controls this"
broken cdp-odd-classes base '25s/classes: 16/classes: 15, cdp: true/' \
    "25: caches.L3.allocation.classes: 15 classes cannot be paired into code and data masks (CDP)"
broken intel-narrow-counter base '31s/ids: 64/ids: 64, width: 20/' \
    "31: qos.monitoring.width: Intel counters are at least 24 bits (CPUID.0FH.1 EAX is width - 24)"
# AMD's BMEC, ABMC and SDCIAE (APM vol. 2, 19.3.3, 19.4.7): AMD's, the
# L3's, within their fields' ranges.
expect "tests/data/amd-bmec.yaml (BMEC, ABMC, SDCIAE) is valid" 0 "$QOSIM" profiles check "$ROOT/tests/data/amd-bmec.yaml"
broken bmec-on-intel base '31s/total: true/total: true, bmec: true/' \
    "31: qos.monitoring.bmec: BMEC is AMD's (CPUID 0x80000020); this is an intel profile"
broken abmc-on-intel base '31s/total: true/total: true, abmc: 8/' \
    "31: qos.monitoring.abmc: ABMC is AMD's (CPUID 0x80000020); this is an intel profile"
broken abmc-counters base '2s/intel/amd/; 31s/total: true/total: true, abmc: 33/' \
    "31: qos.monitoring.abmc: 33 is out of range (1..32)"
broken bmec-without-bandwidth base '2s/intel/amd/; 31s/total: true/bmec: true/' \
    "31: qos.monitoring.bmec: BMEC configures bandwidth events, and neither total nor local is counted"
broken abmc-by-class-alone base '2s/intel/amd/; 31s/total: true/total: true, abmc_by_class: true/' \
    "31: qos.monitoring.abmc_by_class: counting by COS is a capability of ABMC's counters, and abmc gives none"
broken sdciae-on-intel base '25s/shareable: 0xc000/io: true/' \
    "25: caches.L3.allocation.io: SDCIAE is AMD's (CPUID 0x80000020); this is an intel profile"
broken sdciae-on-l2 base '2s/intel/amd/; 19s/cbm_len: 16/cbm_len: 16, io: true/' \
    "19: caches.L2.allocation.io: SDCI allocation enforcement is the L3's (APM vol. 2, 19.4.7)"
broken sdciae-not-bool base '2s/intel/amd/; 25s/shareable: 0xc000/io: 3/' \
    "25: caches.L3.allocation.io: expected true or false (also yes/no, on/off), got '3'"
broken monitored-without-ids base '31s/.*/  # no monitoring/' \
    "24: caches.L3.monitored: L3 is monitored but qos.monitoring gives no ids"
broken monitoring-width base '31s/ids: 64/ids: 64, width: 63/' \
    "31: qos.monitoring.width: 63 is out of range (8..62)"
broken too-many-cpus base '4s/1/2/; 5s/2/64/; 6s/2/8/' \
    "3: topology: 2048 logical CPUs exceed qosim's limit of 1024"
broken topology-range base '6s/2/65/' \
    "6: topology.cores: 65 is out of range (1..64)"
broken lwp-events base '$a\
  lwp: {max_events: 31}' \
    "33: qos.lwp.max_events: 31 is out of range (1..26)"
broken yaml-syntax base '12s/latency: 4}/latency: 4/' \
    "13: did not find expected ',' or '}'"
broken yaml-tab base '10s/^  /\t/' \
    "10: found a tab character that violates indentation"
broken duplicate-key base '10s/cpi: 0.5/frequency: 3GHz/' \
    "10: core: duplicate key 'frequency' (first at line 9)"
broken anchor base '12s/L1I: /L1I: \&l1 /' \
    "12: caches.L1I: aliases and anchors are not supported"
broken alias base '13s/L1D: .*/L1D: *l1/' \
    "13: caches.L1D: aliases and anchors are not supported"
broken two-documents base '$a\
---\
name: u' \
    "33: a second document is not supported"
broken not-a-mapping base '3s/.*/topology: [1, 2]/; 4,7d' \
    "3: topology: expected a mapping, got a sequence"
broken empty base 'd' \
    "1: empty document"

# ---- slow memory (memory.slow) and AMD SMBA (qos.slow_bandwidth) ------------
cat >"$TMP/slow.yaml" <<'Y'
name: s
vendor: amd
topology: {sockets: 2, modules: 2}
core: {frequency: 2GHz, cpi: 0.5}
caches:
  L1I: {size: 32K, ways: 8, latency: 4}
  L1D: {size: 32K, ways: 8, latency: 4}
  L2: {size: 512K, ways: 8, latency: 12}
  L3: {size: 8M, ways: 16, latency: 40, allocation: {classes: 16, cbm_len: 16}}
memory:
  channels: 2
  peak: 25.6GB/s
  latency: 80ns
  slow: {nodes: 2, peak: 16GB/s, latency: 250ns, channels: 2}
qos:
  bandwidth: {kind: rate, classes: 16, max: 11}
  slow_bandwidth: {classes: 16, max: 11, window: 1us}
Y
expect "slow memory profile is valid" 0 "$QOSIM" profiles check "$TMP/slow.yaml"
same "profiles check names the slow nodes after the DRAM nodes" "$(cat "$TMP/out")" \
    "$TMP/slow.yaml: s is a valid profile (4 CPUs, slow memory nodes 2-5)"
broken slow-unknown-key slow '14s/channels: 2}/chanels: 2}/' \
    "14: memory.slow.chanels: unknown key (did you mean 'channels'?)"
broken slow-no-peak slow '14s/peak: 16GB\/s, //' \
    "14: memory.slow: missing required key 'peak'"
broken slow-no-latency slow '14s/latency: 250ns, //' \
    "14: memory.slow: missing required key 'latency'"
broken slow-nodes-zero slow '14s/nodes: 2/nodes: 0/' \
    "14: memory.slow.nodes: 0 is out of range (1..63)"
broken slow-channels-range slow '14s/channels: 2}/channels: 65}/' \
    "14: memory.slow.channels: 65 is out of range (1..64)"
broken slow-bad-peak slow '14s/16GB\/s/16GHz/' \
    "14: memory.slow.peak: expected a bandwidth such as 25.6GB/s or 800MB/s, got '16GHz'"
broken slow-bad-latency slow '14s/250ns/250/' \
    "14: memory.slow.latency: expected a time such as 80ns or 1.5us, got '250'"
broken slow-not-a-map slow '14s/{.*}/2/' \
    "14: memory.slow: expected a mapping, got '2'"
broken slow-too-many-nodes slow '14s/nodes: 2/nodes: 32/' \
    "14: memory.slow.nodes: 2 DRAM nodes with 32 slow nodes each make 66 memory nodes; qosim places at most 64 (a physical address carries its node in 6 bits)"
broken smba-on-intel slow '2s/amd/intel/; 16d' \
    "16: qos.slow_bandwidth: slow memory bandwidth enforcement (SMBA) is AMD's; this is an intel profile"
broken smba-on-riscv slow '2s/amd/riscv/; 16d' \
    "16: qos.slow_bandwidth: slow memory bandwidth enforcement (SMBA) is AMD's; this is a riscv profile"
broken smba-without-slow slow '14d' \
    "16: qos.slow_bandwidth: SMBA limits slow memory, but memory.slow gives none"
broken smba-without-L3 slow '9d; 16d' \
    "15: qos.slow_bandwidth: SMBA limits what an L3 domain reads, but there is no L3"
broken smba-kind slow '17s/classes: 16/kind: rate, classes: 16/' \
    "17: qos.slow_bandwidth.kind: unknown key"
broken smba-max-range slow '17s/max: 11/max: 33/' \
    "17: qos.slow_bandwidth.max: 33 is out of range (1..32)"
broken smba-no-classes slow '17s/classes: 16, //' \
    "17: qos.slow_bandwidth: missing required key 'classes'"
