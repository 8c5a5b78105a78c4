/* Tasks on logical CPUs: each CPU runs the tasks pinned to it round robin,
 * switching every `slice` ticks when it has more than one; at each switch
 * the task's QoS identifiers are loaded into the CPU's association state
 * (the switch hook: by default straight into the machine; a driver can
 * install one that writes the association register instead, as an OS does).
 * CPUs advance in global time order: the one furthest behind runs next, for
 * at most `quantum` ticks, so shared caches and memory see requests in
 * nearly the order they happen, and a run is deterministic. */
#ifndef QOSIM_SIM_SCHED_H
#define QOSIM_SIM_SCHED_H

#include "core.h"

struct sched_task {
    struct core_task ct;
    unsigned cpu;
    unsigned cls, tag; /* QoS identifiers it carries */
    int ended;
    uint64_t end_at; /* when it ended (ticks) */
};

struct sched;
typedef void (*sched_switch_fn)(void *ctx, struct sched *s, unsigned cpu, int task);

struct sched_cpu {
    unsigned *queue; /* tasks pinned here */
    unsigned n, cur;
    int running; /* task index, -1 idle */
    uint64_t slice_end;
};

/* Other agents that advance in global time order with the CPUs (I/O
 * agents, sim/io): next gives the one furthest behind and its time, -1
 * when there is none; run advances it to `until`. */
struct sched_ext {
    void *ctx;
    int (*next)(void *ctx, uint64_t *now);
    void (*run)(void *ctx, unsigned which, uint64_t until);
};

struct sched {
    struct mach *m;
    struct sched_task *task;
    unsigned ntask;
    struct sched_cpu *cpu;
    uint64_t quantum, slice; /* ticks */
    sched_switch_fn on_switch;
    void *ctx;
    uint64_t switches;
    struct sched_ext ext; /* none while ext.next is NULL */
};

/* Tasks must have ct and cpu set; the scheduler takes ownership of neither. */
int sched_init(struct sched *s, struct mach *m, struct sched_task *tasks, unsigned ntask,
               uint64_t quantum, uint64_t slice, struct err *e);
void sched_free(struct sched *s);
/* The default hook: the task's identifiers go straight into the machine. */
void sched_switch_default(void *ctx, struct sched *s, unsigned cpu, int task);
/* Reloads the association of the CPU running task (its identifiers changed). */
void sched_reload(struct sched *s, unsigned task);
/* Runs every CPU up to time until. */
int sched_run(struct sched *s, uint64_t until, struct err *e);

#endif
