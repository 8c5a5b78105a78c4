/* The local executor: N points at once on this machine, each `qosim run`
 * started and waited for by this process (no worker processes between:
 * a point costs one fork and exec beyond its run). Ctrl-C stops the runs
 * (the terminal sends SIGINT to them too) and keeps every finished point. */
#include "exec.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct slot {
    pid_t pid; /* 0: free */
    size_t point;
    char key[SWEEP_KEY_HEX];
    double t0;
};

static volatile sig_atomic_t local_sig;

static void on_signal(int sig)
{
    local_sig = sig;
}

static unsigned processors(void)
{
    cpu_set_t set;
    if (!sched_getaffinity(0, sizeof set, &set) && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static void progress(const struct sweep_tally *t, size_t n, unsigned running, double t0)
{
    size_t fin = t->done + t->failed;
    double el = sweep_now() - t0;
    fprintf(stderr, "\r\033[K%zu/%zu done, %zu failed, %u running", t->done, n, t->failed, running);
    if (fin && fin < n) {
        double eta = el / (double)fin * (double)(n - fin);
        fprintf(stderr, ", about %d:%02d left", (int)eta / 60, (int)eta % 60);
    }
    fflush(stderr);
}

/* A finished child: its record, and its place in the tally. */
static void reap(const struct sweep *sw, struct slot *s, int ws, struct sweep_tally *t)
{
    struct err e;
    int ok = 0;
    /* A run that ended because the sweep was interrupted is not a failed
     * point: it has no record and runs again next time. */
    if (local_sig && !(WIFEXITED(ws) && !WEXITSTATUS(ws))) {
        t->interrupted++;
    } else if (sweep_point_finish(sw, s->point, s->key, ws, sweep_now() - s->t0, &ok, &e)) {
        fprintf(stderr, "\nqosim sweep: %s\n", e.msg);
        t->failed++;
    } else if (ok)
        t->done++;
    else
        t->failed++;
    s->pid = 0;
}

static int local_run(const struct sweep *sw, const size_t *todo, size_t n,
                     const struct sweep_run_opts *o, struct sweep_tally *t, struct err *e)
{
    unsigned jobs = o->jobs ? o->jobs : processors();
    struct slot *sl = calloc(jobs, sizeof *sl);
    if (!sl)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    struct sigaction old[2];
    local_sig = 0;
    sweep_catch(on_signal, old);
    double t0 = sweep_now();
    size_t next = 0;
    unsigned running = 0;
    int rc = 0;
    while (next < n || running) {
        for (unsigned k = 0; k < jobs && next < n && !local_sig; k++) {
            struct slot *s = &sl[k];
            if (s->pid)
                continue;
            struct err pe;
            s->point = todo[next++];
            /* A point that cannot start (an input gone since the plan) is
             * named and counted, and the others go on. */
            if (sweep_key(sw, s->point, s->key, &pe) ||
                sweep_point_start(sw, s->point, o->qosim, &s->pid, &pe)) {
                fprintf(stderr, "%sqosim sweep: %s\n", o->progress ? "\n" : "", pe.msg);
                t->failed++;
                s->pid = 0;
                continue;
            }
            s->t0 = sweep_now();
            running++;
        }
        if (o->progress)
            progress(t, n, running, t0);
        if (!running) {
            if (next < n && !local_sig)
                continue;
            break;
        }
        int ws;
        pid_t pid = waitpid(-1, &ws, 0);
        if (pid < 0) {
            if (errno == EINTR) {
                /* Runs started in another process group (not this
                 * terminal's) are told too. */
                for (unsigned k = 0; k < jobs; k++)
                    if (sl[k].pid && local_sig)
                        kill(sl[k].pid, local_sig);
                continue;
            }
            rc = err_set(e, -QOSIM_ECHILD, "waiting for the points: %s", strerror(errno));
            break;
        }
        for (unsigned k = 0; k < jobs; k++)
            if (sl[k].pid == pid) {
                reap(sw, &sl[k], ws, t);
                running--;
            }
    }
    if (o->progress)
        fputs("\r\033[K", stderr);
    if (!rc && local_sig) {
        t->signal = local_sig;
        t->interrupted += n - next;
        rc = err_set(e, -QOSIM_ECHILD,
                     "interrupted: %zu points finished this time are kept, %zu not run",
                     t->done + t->failed, t->interrupted);
    }
    sweep_uncatch(old);
    free(sl);
    return rc;
}

const struct sweep_exec sweep_exec_local = {"local", local_run};
