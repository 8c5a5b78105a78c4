/* The x86 register table's entry (x86.c, x86_regs[]), for the modules
 * whose MSRs it lists (x86_pf.c, x86_pmu.c). */
#ifndef QOSIM_HW_X86_REG_H
#define QOSIM_HW_X86_REG_H

#include "hw.h"
#include "sim/scen/plat.h"

#include <stdint.h>

struct x86;

enum x86_scope { SC_THREAD, SC_CORE, SC_L3, SC_L2, SC_QOS_DOMAIN, SC_PACKAGE };

struct x86_reg {
    const char *name;
    uint32_t base;
    enum x86_scope scope;
    enum plat_level level; /* the cache a CFG or mask register belongs to */
    const char *cite;
    /* Registers in the bank (1 for a single MSR); 0 when the feature is absent. */
    unsigned (*count)(const struct x86 *x, const struct x86_reg *r);
    enum hw_fault (*read)(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                          uint64_t *v);
    enum hw_fault (*write)(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                           uint64_t v);
};

#endif
