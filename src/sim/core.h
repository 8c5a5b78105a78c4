/* A core running one task: instructions cost the base CPI; an access costs
 * the latency of the level that served it. Independent misses overlap
 * (latency / mlp); a dependent load (pointer chase) and an instruction
 * fetch miss stall for all of it. Instruction fetch looks the cache up once
 * per line the instruction pointer enters, as a fetch unit does. */
#ifndef QOSIM_SIM_CORE_H
#define QOSIM_SIM_CORE_H

#include "mach.h"
#include "wl.h"

#define CORE_BATCH 512

struct core_task {
    struct wl *wl;
    struct trace_rec buf[CORE_BATCH];
    size_t pos, n;
    uint64_t base;        /* physical placement of the task's virtual space */
    uint64_t last_iblock; /* line the last instruction was fetched from */
    int ended;            /* a non-looping trace ran out */
};

void core_task_init(struct core_task *t, struct wl *wl, uint64_t base);
/* Runs t on CPU p until p->now reaches until (at an instruction boundary) or
 * the task ends. Returns 0, 1 when the task ended, or a negative code. */
int core_run(struct mach *m, struct mach_cpu *p, struct core_task *t, uint64_t until,
             struct err *e);

#endif
