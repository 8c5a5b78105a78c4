# Runs inside the guest (qosim vm --cmd 'sh /tests/rdtset.sh'): Intel's
# rdtset, unchanged, starting a program with an L3 mask on a CPU, through
# the MSR interface and through resctrl; prints what it saw as "fact NAME
# VALUE" lines (tests/e2e/test_vm_intel_xeon.sh compares them). Needs L3
# CAT (intel-xeon).
R=/sys/fs/resctrl
fact() { echo "fact $1 $2"; }
# What the program rdtset starts prints: its CPU's PQR_ASSOC and the L3
# mask of the class in it, read on its own CPU.
probe='a=$(qosim-guest rdmsr 1 0xc8f); echo "$a $(qosim-guest rdmsr 1 $((0xc90 + ((a >> 32) & 0xffffffff))))"'

modprobe msr
grep -q " $R resctrl " /proc/mounts && umount "$R"
for iface in msr os; do
    [ $iface = os ] && mount -t resctrl resctrl "$R"
    out=$(rdtset -F $iface -t 'l3=0x3;cpu=1' -c 1 sh -c "$probe" 2>/tmp/rdtset.err)
    fact "rdtset_$iface.rc" "$?"
    fact "rdtset_$iface.out" "$(echo "$out" | tail -1 | tr ' ' _)"
    tr ' ' _ </tmp/rdtset.err | head -2 | sed "s/^/fact rdtset_$iface.err /"
done
umount "$R"
true
