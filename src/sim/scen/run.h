/* Running a scenario: builds the machine and the tasks, applies each phase's
 * settings at its start, and reports every task's ground truth for each
 * sampling interval and for each phase (after its settling time). */
#ifndef QOSIM_SIM_RUN_H
#define QOSIM_SIM_RUN_H

#include "sim/cpu/sched.h"
#include "scen.h"
#include "util/ofile.h"

struct run_row {
    double t0, t1; /* seconds */
    unsigned phase, task;
    uint64_t instr, cycles;
    double ipc;
    uint64_t ref[PLAT_NLEVEL], miss[PLAT_NLEVEL];
    /* Occupancy in bytes at t1; phase rows: the mean of the values at the
     * ends of the phase's intervals after its settling time, truncated. */
    uint64_t llc_bytes;          /* the task's lines in every LLC: ground truth */
    uint64_t tag_bytes;          /* lines its monitoring tag holds in its LLC: what an exact
                                    occupancy monitor reports */
    uint64_t est_bytes;          /* the set-sampling estimate of the same */
    uint64_t rd_bytes, wr_bytes; /* memory traffic */
    double rd_bw, wr_bw;         /* bytes per second */
    /* What software reads from the monitoring registers for the task's
     * monitoring ID, when a driver monitors (run_hooks.mon): */
    int mon;                         /* these fields are filled */
    unsigned mon_id;                 /* the RMID */
    uint64_t mon_occ_bytes;          /* occupancy at t1 (phase rows: mean) */
    uint64_t mon_rd_bytes;           /* total-bandwidth event bytes in [t0, t1) */
    uint64_t mon_local_bytes;        /* local-bandwidth event bytes */
    double mon_rd_bw, mon_local_bw;  /* bytes per second */
    unsigned mon_unavail;            /* reads that found no data (U) in the row's time */
    unsigned mon_unassigned;         /* AMD ABMC: bit 0 total, bit 1 local had no counter */
    uint64_t traffic[MACH_NTRAFFIC]; /* memory traffic by class (BMEC's types): ground truth */

    /* Hardware prefetches on the task's behalf (mach_tstat's): ground truth. */
    uint64_t pf_req, pf_useful, pf_bytes, pf_drop;
};

/* An I/O agent's figures for an interval or a phase, as run_row's for a
 * task: DMA by the agent, its L3 hits, occupancy and memory traffic. */
struct run_io_row {
    double t0, t1; /* seconds */
    unsigned phase, agent;
    struct io_stat dma; /* lines: written, read, and what each did */
    uint64_t dma_wr_bytes, dma_rd_bytes;
    double dma_bw;               /* DMA bytes per second, writes and reads */
    uint64_t l3_ref, l3_miss;    /* its lines that looked the L3 up, and missed there */
    uint64_t llc_bytes;          /* its lines in its L3 at t1 (phase rows: mean, as run_row's) */
    uint64_t tag_bytes;          /* lines of its monitoring tag there */
    uint64_t est_bytes;          /* the set-sampling estimate of the same */
    uint64_t rd_bytes, wr_bytes; /* memory traffic: reads of lines the L3 lacked; its lines
                                    written to memory (victims, writes that did not allocate) */
    double rd_bw, wr_bw;
};

/* What run rows are the difference of, for an agent. */
struct run_io_snap {
    struct io_stat dma;
    struct mach_tstat ts;
};

/* One monitoring read for a task: occupancy now, and the bandwidth events'
 * running 64-bit totals, which software keeps across counter wraps. */
struct run_mon_val {
    unsigned id;
    uint64_t occ, total, local;
    unsigned unavail;    /* reads answered U so far (running count) */
    unsigned unassigned; /* AMD ABMC: bit 0 total, bit 1 local have no counter now */
};

/* What a QoS driver adds to a run (drv/qos.h): its phase settings, its
 * monitoring reads, and a poll often enough that no counter wraps twice
 * between reads (Linux's MBM overflow worker). */
struct run;
struct run_hooks {
    void *ctx;
    int (*phase)(void *ctx, struct run *r, const struct scen_phase *ph, struct err *e);
    int (*mon)(void *ctx, struct run *r, unsigned task, struct run_mon_val *v, struct err *e);
    double poll; /* seconds between mon reads of every task at least; 0: at intervals only */
};

/* Running sums of every occupancy a phase row reports as a mean. */
struct run_occ_sum {
    double llc, tag, est, mon;
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
    struct run_occ_sum *occ_sum; /* per task, over the phase's intervals after the mark */
    unsigned occ_n;
    struct run_row *phase_row; /* [nphase * ntask], filled as phases end */
    unsigned cur_phase;
    struct run_hooks hooks;
    struct run_mon_val *mon_last, *mon_mark, *mon_now; /* with hooks.mon: as last and mark */
    struct run_prog *prog; /* [ntask]: live programs' standard input and output */
    /* I/O agents (the scenario's io section): machine tasks ntask, ntask + 1, ... */
    struct io io;
    struct run_io_snap *io_last, *io_mark; /* [nio] as last and mark */
    struct run_occ_sum *io_occ;            /* [nio] as occ_sum */
    struct run_io_row *io_phase_row;       /* [nphase * nio] */
    struct run_io_row *io_rows;            /* every interval's rows, nio per interval */
    size_t nio_rows, cap_io_rows;
};

/* A live program's files: its output is kept (renamed into place) only
 * when the program ended by itself, since otherwise it is cut short. */
struct run_prog {
    int in_fd;
    struct ofile out; /* open when the task names a stdout */
    int kept;         /* run_free committed it */
};

int run_init(struct run *r, struct scen *s, struct err *e);
void run_free(struct run *r);
/* How task i ended, if it did before the run's end: "exited with status 0"
 * (a live program), "its trace ended"; NULL while it runs. */
const char *run_end_why(const struct run *r, unsigned i);
/* Live programs' standard outputs, after a run that succeeded: kept where
 * the program ended by itself, dropped where it was cut short. After a run
 * that failed, run_free drops them all. */
int run_keep_outputs(struct run *r, struct err *e);

typedef void (*run_row_fn)(void *ctx, const struct run_row *row);
typedef void (*run_progress_fn)(void *ctx, double done);
/* Runs the scenario to its end, calling row for each task at each interval. */
int run_all(struct run *r, run_row_fn row, run_progress_fn progress, void *ctx, struct err *e);
/* Applies one phase's settings now (run_all does this at each phase start). */
int run_apply(struct run *r, const struct scen_phase *ph, struct err *e);

#endif
