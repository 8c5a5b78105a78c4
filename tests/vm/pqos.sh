# Runs inside the guest (qosim vm --cmd 'sh /tests/pqos.sh'): Intel's pqos,
# unmodified, through its MSR interface and through the kernel's resctrl
# (-I), each with a set (-e), associate (-a), show (-s) round trip. Prints
# "fact NAME VALUE" lines for tests/e2e/test_vm.sh, and pqos's own output
# behind "| " for whoever reads the log.
#   sh /tests/pqos.sh [l3|l2]   the cache whose class 1 is programmed (l3)
lvl=${1:-l3}
if [ "$lvl" = l2 ]; then res=l2 mask=0xd11 line=L2; else res=llc mask=0xc91 line=L3; fi
fact() { echo "fact $1 $2"; }
show() { sed 's/^/| /' "$1"; }
modprobe msr
run() { # NAME ARGS...: pqos ARGS, its output in /tmp/NAME
    n=$1
    shift
    pqos "$@" >"/tmp/$n" 2>&1
    fact "$n.rc" "$?"
    show "/tmp/$n"
}
cos_of() { # CPU: the class in that CPU's PQR_ASSOC
    echo $(($(qosim-guest rdmsr "$1" 0xc8f) >> 32))
}

run msr_d --iface=msr -d
run msr_e --iface=msr -e "$res:1=0x3"
fact msr_e.mask "$(qosim-guest rdmsr 0 $mask)"
run msr_a --iface=msr -a "core:1=2"
fact msr_a.cos2 "$(cos_of 2)"
run msr_s --iface=msr -s
fact msr_s.core2 "$(grep -E '^ *Core 2,' /tmp/msr_s | grep -o 'COS[0-9]*' | head -1)"
run msr_R --iface=msr -R
fact msr_R.mask "$(qosim-guest rdmsr 0 $mask)"
fact msr_R.cos2 "$(cos_of 2)"

mount -t resctrl resctrl /sys/fs/resctrl
run os_d -I -d
run os_e -I -e "$res:1=0x7"
fact os_e.mask "$(qosim-guest rdmsr 0 $mask)"
fact os_e.schemata "$(grep -h "^ *$line:" /sys/fs/resctrl/COS1/schemata | tr -d ' ')"
run os_a -I -a "core:1=2"
fact os_a.cpus "$(cat /sys/fs/resctrl/COS1/cpus_list)"
fact os_a.cos2 "$(cos_of 2)"
run os_s -I -s
fact os_s.core2 "$(grep -E '^ *Core 2,' /tmp/os_s | grep -o 'COS[0-9]*' | head -1)"
exit 0
