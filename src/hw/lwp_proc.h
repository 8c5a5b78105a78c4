/* A simulated process as the LWP hardware and its user library meet it:
 * its address space (sim/cpu/vmem.h), the logical CPU its thread runs on, and
 * what the process can do there -- CPUID, LLWPCB and SLWPCB at ring 3,
 * loads and stores to its own memory, and mmap for fresh memory. struct
 * lwp_procif is that interface as the library (drv/lwpl.h) uses it, so the
 * library drives a real process the same way (docs/architecture.md: drivers reach
 * hardware only through an interface). */
#ifndef QOSIM_HW_LWP_PROC_H
#define QOSIM_HW_LWP_PROC_H

#include "hw.h"
#include "sim/cpu/vmem.h"

#include <stddef.h>
#include <stdint.h>

/* What a process has: CPUID, the two LWP instructions, and its memory. */
struct lwp_procif {
    void *ctx;
    void (*cpuid)(void *ctx, uint32_t leaf, uint32_t sub, uint32_t out[4]);
    enum hw_fault (*llwpcb)(void *ctx, uint64_t addr);
    enum hw_fault (*slwpcb)(void *ctx, uint64_t *addr);
    /* Reads or writes the process's memory as the process (CPL 3); 0, or
     * -1 when it faults. */
    int (*read)(void *ctx, uint64_t addr, void *buf, size_t n);
    int (*write)(void *ctx, uint64_t addr, const void *buf, size_t n);
    /* Maps n bytes of zeroed, writable user memory (mmap); 0 on failure. */
    uint64_t (*map)(void *ctx, uint64_t n);
};

struct x86;

/* The process: its memory, the CPU its thread is on now, and where the
 * next mmap goes. */
struct lwp_proc {
    struct x86 *x; /* the CPU model (CPUID, the LWP unit) */
    struct vmem vm;
    unsigned cpu;
    uint64_t brk;         /* next free mapping address */
    struct vmem_fault pf; /* the last fault of an access through the interface */
};

#define LWP_PROC_MMAP_BASE 0x7f0000000000ull /* where mmap starts handing out memory */

void lwp_proc_init(struct lwp_proc *p, struct x86 *x, unsigned cpu);
void lwp_proc_free(struct lwp_proc *p);
void lwp_proc_if(struct lwp_proc *p, struct lwp_procif *out);

#endif
