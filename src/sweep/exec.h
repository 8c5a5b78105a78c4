/* Running a sweep's points: the point runner every executor shares, and the
 * executors as an ops table (the local pool; SLURM through its commands).
 * A point runs exactly what `qosim run` runs: the qosim binary, as a child,
 * on the point's scenario.yaml, writing result.json; its exit status or
 * signal and its standard error's tail go into record.json. */
#ifndef QOSIM_SWEEP_EXEC_H
#define QOSIM_SWEEP_EXEC_H

#include "sweep.h"

#include <signal.h>
#include <sys/types.h>

/* Executor options: from the command line, else the sweep file's `slurm:`
 * section (DIR/sweep.yaml), else these defaults (zero). */
struct sweep_run_opts {
    const char *qosim;     /* absolute path of the qosim binary points run */
    unsigned jobs;         /* local: workers at once (0: the processors) */
    int progress;          /* a progress line on standard error */
    const char *partition; /* slurm: sbatch --partition (NULL: the default) */
    const char *time;      /* slurm: --time per array task */
    const char *mem;       /* slurm: --mem per array task */
    unsigned throttle;     /* slurm: the array's %N (0: none) */
    unsigned max_array;    /* slurm: tasks per array (0: the cluster's MaxArraySize) */
};

struct sweep_tally {
    size_t done, failed, interrupted;
    int signal; /* the signal that stopped the executor, or 0 */
};

struct sweep_exec {
    const char *name;
    /* Runs points todo[0..n) and waits for them; tallies what became of
     * each. 0 when every point ran (done or failed); a negative code with e
     * when the executor itself failed or was interrupted (finished points
     * are kept). */
    int (*run)(const struct sweep *sw, const size_t *todo, size_t n, const struct sweep_run_opts *o,
               struct sweep_tally *t, struct err *e);
};

extern const struct sweep_exec sweep_exec_local, sweep_exec_slurm;

/* Starts point i's run (standard error into its stderr file; the child
 * dies with its parent). *pid is the child's. */
int sweep_point_start(const struct sweep *sw, size_t i, const char *qosim, pid_t *pid,
                      struct err *e);
/* After that child ended with wait status ws, wall seconds after it
 * started: writes record.json for key (SLURM's job and task ids are taken
 * from the environment when set); *ok (when not NULL) says whether the
 * record says "ok". */
int sweep_point_finish(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX], int ws,
                       double wall, int *ok, struct err *e);
/* A failed record for a point whose run left none, though it was started
 * (an array task killed, out of memory, or its node lost): why says so. */
int sweep_point_lost(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX],
                     const char *why, struct err *e);
/* Both, waiting: what an array task does. 0 when the record is written
 * (whatever the run's outcome). */
int sweep_point_run(const struct sweep *sw, size_t i, const char *qosim, struct err *e);

/* Seconds on a monotonic clock. */
double sweep_now(void);

/* SIGINT and SIGTERM to handler h, without SA_RESTART (so that a wait
 * ends when one comes); old keeps what they were, for sweep_uncatch. */
void sweep_catch(void (*h)(int), struct sigaction old[2]);
void sweep_uncatch(const struct sigaction old[2]);

#endif
