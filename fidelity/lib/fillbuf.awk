# The read loop of the Linux resctrl selftests' benchmark, as a Lackey trace.
#
# tools/testing/selftests/resctrl/fill_buf.c, fill_one_span_read(), since
# Linux 6.8 ("selftests/resctrl: Read in less obvious order to defeat
# prefetch optimizations", Ilpo Jarvinen, 2023): the buffer is read in halves
# of cache lines, half-line i * MULT mod size at step i, MULT a prime (23 in
# the kernel; 59 in the v2 posting of that patch, which the 2023 logs of a
# Xeon Gold 6254 ran), so every half-line is read once per pass and the
# hardware prefetchers see no stride. The CAT and CMT tests read the buffer
# pass after pass; the MBA and MBM tests read a 250 MB buffer forever.
#
#   awk -v span=BYTES -v mult=23 [-v count=N] [-v seq=1] -f fillbuf.awk
#
# span: buffer bytes (a multiple of 32); count: records to write (default one
# pass, span / 32); seq=1: the pre-6.8 order, half-lines in address order
# (the loop of Linux 6.4, which the hardware prefetchers follow).
# Each read is one instruction fetch and one 1-byte load: the loop's other
# instructions change its timing, not its cache behaviour (project choice:
# it keeps the trace at about 30 bytes a read).
BEGIN {
    if (span == "" || span % 32 != 0) {
        print "fillbuf.awk: span must be a multiple of 32" > "/dev/stderr"
        exit 2
    }
    if (mult == "")
        mult = 23
    size = span / 32
    if (count == "")
        count = size
    base = 268435456          # 0x10000000: where the buffer lies (virtual)
    ip = 4198400              # 0x401000: the loop's load instruction
    idx = 0
    for (i = 0; i < count; i++) {
        printf "I  %x,4\n L %x,1\n", ip, base + idx * 32
        if (seq == 1) {
            idx++
            if (idx >= size)
                idx = 0
        } else {
            idx += mult
            while (idx >= size)
                idx -= size
        }
    }
}
