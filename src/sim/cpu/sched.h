/* Tasks on logical CPUs: each CPU runs the tasks pinned to it round robin,
 * switching every `slice` ticks when it has more than one; at each switch
 * the task's QoS identifiers are loaded into the CPU's association state
 * (the switch hook: by default straight into the machine; a driver can
 * install one that writes the association register instead, as an OS does).
 * CPUs advance in global time order: the one furthest behind runs next, for
 * at most `quantum` ticks (a turn), so shared caches and memory see requests
 * in nearly the order they happen, and a run is deterministic. A turn ends
 * a quantum after it started, at a task switch (`slice`) or at a hard stop
 * (sched_run), never where the run is only paused to be looked at
 * (sched_pause): observing a run does not change it.
 *
 * Direction of calls: the scenario's run (sim/scen/run.c) and the consoles
 * call the scheduler; the scheduler calls the core (core_run) and the
 * machine. It calls up only through hooks handed to it (on_switch, ext). */
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

/* A task running workload wl (not owned) from physical base, pinned to cpu,
 * carrying QoS identifiers cls and tag. */
void sched_task_init(struct sched_task *t, struct wl *wl, uint64_t base, unsigned cpu, unsigned cls,
                     unsigned tag);
/* Tasks must have ct and cpu set; the scheduler takes ownership of neither. */
int sched_init(struct sched *s, struct mach *m, struct sched_task *tasks, unsigned ntask,
               uint64_t quantum, uint64_t slice, struct err *e);
void sched_free(struct sched *s);
/* The default hook: the task's identifiers go straight into the machine. */
void sched_switch_default(void *ctx, struct sched *s, unsigned cpu, int task);
/* Reloads the association of the CPU running task (its identifiers changed). */
void sched_reload(struct sched *s, unsigned task);
/* Runs every CPU up to time until exactly (at an instruction boundary):
 * for settings that act at a time (a phase's start, the run's end), at
 * which every CPU stops. */
int sched_run(struct sched *s, uint64_t until, struct err *e);
/* Runs until every running CPU and agent has reached time at, without
 * cutting a turn there: for observation (a row, a monitor read, a
 * console's run step). Each CPU stops at the end of the turn it was in at
 * `at`, less than a quantum later (plus its last instruction); turns are
 * still cut at hard, the next time a setting acts (UINT64_MAX: none
 * known). The turns that run, CPU by CPU and in order, are the same whether
 * or not the run pauses at `at`. */
int sched_pause(struct sched *s, uint64_t at, uint64_t hard, struct err *e);

#endif
