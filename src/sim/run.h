/* Running a scenario: builds the machine and the tasks, applies each phase's
 * settings at its start, and reports every task's ground truth for each
 * sampling interval and for each phase (after its settling time). */
#ifndef QOSIM_SIM_RUN_H
#define QOSIM_SIM_RUN_H

#include "sched.h"
#include "scen.h"

struct run_row {
    double t0, t1; /* seconds */
    unsigned phase, task;
    uint64_t instr, cycles;
    double ipc;
    uint64_t ref[PLAT_NLEVEL], miss[PLAT_NLEVEL];
    uint64_t llc_bytes;          /* the task's lines in every LLC at t1 (phase rows: mean over its
                                    intervals): ground truth */
    uint64_t tag_bytes;          /* lines its monitoring tag holds in its LLC at t1: what an exact
                                    occupancy monitor reports */
    uint64_t est_bytes;          /* the set-sampling estimate of the same */
    uint64_t rd_bytes, wr_bytes; /* memory traffic */
    double rd_bw, wr_bw;         /* bytes per second */
};

struct run {
    struct scen *s;
    struct mach m;
    struct sched sch;
    struct sched_task *task;
    struct wl **wl;
    uint64_t now;
    struct mach_tstat *last, *mark; /* snapshots: last interval end; phase statistics start */
    double mark_t;
    double *occ_sum;
    unsigned occ_n;
    struct run_row *phase_row; /* [nphase * ntask], filled as phases end */
    unsigned cur_phase;
};

int run_init(struct run *r, struct scen *s, struct err *e);
void run_free(struct run *r);

typedef void (*run_row_fn)(void *ctx, const struct run_row *row);
typedef void (*run_progress_fn)(void *ctx, double done);
/* Runs the scenario to its end, calling row for each task at each interval. */
int run_all(struct run *r, run_row_fn row, run_progress_fn progress, void *ctx, struct err *e);
/* Applies one phase's settings now (run_all does this at each phase start). */
int run_apply(struct run *r, const struct scen_phase *ph, struct err *e);

#endif
