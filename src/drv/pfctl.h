/* Hardware prefetcher control as system software does it on x86: one
 * write of the core's control MSR (Intel MSR_MISC_FEATURE_CONTROL, 0x1A4;
 * AMD PrefetchControl, MSRC000_0108; docs/registers.md 1.7), as
 * `wrmsr -p CPU 0x1a4 0xf` turns a core's prefetchers off. Neither register
 * is enumerated by CPUID: a part without it answers #GP, which is the
 * error returned. */
#ifndef QOSIM_DRV_PFCTL_H
#define QOSIM_DRV_PFCTL_H

#include "hw/hw.h"
#include "util/err.h"

/* Leaves the prefetchers in `on` (1 << enum pf_kind, sim/cache/pf.h) on and
 * turns the others off, for the core of logical CPU cpu. */
int pfctl_set(const struct hw_x86_if *r, int amd, unsigned cpu, unsigned on, struct err *e);

#endif
