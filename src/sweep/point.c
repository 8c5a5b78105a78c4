/* Running one point (exec.h): `qosim run` as a child on the point's
 * scenario, then record.json saying what became of it. */
#include "exec.h"

#include "util/json.h"
#include "util/ofile.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What of a failed run's standard error the record keeps: its end, where
 * the reason is. */
#define POINT_TAIL 2048

/* Temporaries a run or a record write left when it was killed outright
 * (SIGKILL): the point is about to be written again, by this process
 * alone. */
static void remove_stale(const struct sweep *sw, size_t i)
{
    char pat[4300];
    glob_t g;
    sweep_point_path(sw, i, "*.json.tmp.??????", pat, sizeof pat);
    if (glob(pat, 0, NULL, &g))
        return;
    for (size_t k = 0; k < g.gl_pathc; k++)
        unlink(g.gl_pathv[k]);
    globfree(&g);
}

int sweep_point_start(const struct sweep *sw, size_t i, const char *qosim, pid_t *pid,
                      struct err *e)
{
    remove_stale(sw, i);
    char rel[4300], scen[PATH_MAX + 4300], res[4300], errf[4300];
    sweep_point_path(sw, i, "scenario.yaml", rel, sizeof rel);
    /* Absolute, as the result's "scenario" names it: the same wherever
     * the sweep was run from. */
    if (!realpath(rel, scen))
        snprintf(scen, sizeof scen, "%s", rel);
    sweep_point_path(sw, i, "result.json", res, sizeof res);
    sweep_point_path(sw, i, "stderr", errf, sizeof errf);
    int fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return err_set(e, -QOSIM_EIO, "%s: %s", errf, strerror(errno));
    pid_t parent = getpid();
    pid_t c = fork();
    if (c < 0) {
        int er = errno;
        close(fd);
        return err_set(e, -QOSIM_EIO, "cannot start a point: %s", strerror(er));
    }
    if (!c) {
        /* A point must not outlive the sweep that started it (a killed
         * executor would leave runs writing into the folder). */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        dup2(fd, 2);
        execl(qosim, "qosim", "run", scen, "--json", res, "--quiet", (char *)NULL);
        dprintf(2, "qosim sweep: cannot run %s: %s\n", qosim, strerror(errno));
        _exit(127);
    }
    close(fd);
    *pid = c;
    return 0;
}

/* The last POINT_TAIL bytes of the point's standard error, from a line's
 * start. */
static void stderr_tail(const struct sweep *sw, size_t i, char *out, size_t cap)
{
    char path[4300];
    out[0] = '\0';
    sweep_point_path(sw, i, "stderr", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    long end = fseek(f, 0, SEEK_END) ? 0 : ftell(f);
    long from = end > (long)cap - 1 ? end - (long)cap + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
    char *nl = from ? strchr(out, '\n') : NULL;
    if (nl)
        memmove(out, nl + 1, strlen(nl + 1) + 1);
}

static void json_env(struct json *j, const char *key, const char *var)
{
    const char *v = getenv(var);
    if (v && *v)
        json_str(j, key, v);
}

/* record.json for key: ok or failed; how the run ended (ws, or -1 when
 * there was no run to wait for); what its standard error ended with. */
static int write_record(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX], int ok,
                        int ws, const char *tail, double wall, struct err *e)
{
    char path[4300], host[256] = "";
    gethostname(host, sizeof host - 1);
    sweep_point_path(sw, i, "record.json", path, sizeof path);
    struct ofile o;
    int rc = ofile_open(&o, path, e);
    if (rc)
        return rc;
    struct json j;
    json_init(&j, o.f);
    json_obj_begin(&j, NULL);
    json_str(&j, "key", key);
    json_str(&j, "status", ok ? "ok" : "failed");
    if (ws >= 0 && WIFEXITED(ws))
        json_u64(&j, "exit_code", (uint64_t)WEXITSTATUS(ws));
    else if (ws >= 0 && WIFSIGNALED(ws))
        json_u64(&j, "signal", (uint64_t)WTERMSIG(ws));
    json_str(&j, "stderr_tail", tail);
    json_obj_begin(&j, "provenance");
    json_str(&j, "qosim_version", QOSIM_VERSION);
    json_str(&j, "commit", sweep_commit());
    json_obj_begin(&j, "inputs");
    sweep_point_path(sw, i, "inputs", path, sizeof path);
    FILE *in = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    while (in && getline(&line, &cap, in) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char h[SWEEP_KEY_HEX];
        struct err scratch;
        if (sweep_hash_file(line, h, &scratch))
            json_null(&j, line);
        else
            json_str(&j, line, h);
    }
    free(line);
    if (in)
        fclose(in);
    json_obj_end(&j);
    json_str(&j, "host", host);
    json_f64(&j, "wall_seconds", wall);
    /* Where SLURM ran it: the array's job and this task (sbatch's
     * environment). */
    json_env(&j, "slurm_job_id", "SLURM_ARRAY_JOB_ID");
    json_env(&j, "slurm_array_task_id", "SLURM_ARRAY_TASK_ID");
    json_obj_end(&j);
    json_obj_end(&j);
    fputc('\n', o.f);
    return ofile_commit(&o, e);
}

int sweep_point_finish(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX], int ws,
                       double wall, int *ok, struct err *e)
{
    char path[4300], tail[POINT_TAIL];
    sweep_point_path(sw, i, "result.json", path, sizeof path);
    int good = WIFEXITED(ws) && !WEXITSTATUS(ws) && !access(path, R_OK);
    stderr_tail(sw, i, tail, sizeof tail);
    if (ok)
        *ok = good;
    return write_record(sw, i, key, good, ws, tail, wall, e);
}

int sweep_point_lost(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX],
                     const char *why, struct err *e)
{
    return write_record(sw, i, key, 0, -1, why, 0, e);
}

static volatile sig_atomic_t point_sig, point_intr;

static void on_signal(int sig)
{
    point_sig = sig;
}

static void on_interrupt(int sig)
{
    (void)sig;
    point_intr = 1;
}

void sweep_catch(void (*h)(int), struct sigaction old[2])
{
    struct sigaction sa = {.sa_handler = h};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
}

void sweep_uncatch(const struct sigaction old[2])
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

double sweep_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int sweep_point_run(const struct sweep *sw, size_t i, const char *qosim, struct err *e)
{
    char key[SWEEP_KEY_HEX];
    int rc = sweep_key(sw, i, key, e);
    if (rc)
        return rc;
    /* A SIGTERM (SLURM's time limit, scancel) or SIGINT reaches the run,
     * and the record says it was killed; this process stays to write it.
     * SIGUSR1 is the SLURM executor's interrupt (exec_slurm.c, cancel): the
     * run is killed and no record is written, so the point stays pending.
     * It comes to every process of the array task, the run among them,
     * which it kills: a run that died of it was interrupted too, whichever
     * process it reached first. */
    struct sigaction old[2], old_usr1, sa = {.sa_handler = on_interrupt};
    sigemptyset(&sa.sa_mask);
    sweep_catch(on_signal, old);
    sigaction(SIGUSR1, &sa, &old_usr1);
    double t0 = sweep_now();
    pid_t pid;
    if ((rc = sweep_point_start(sw, i, qosim, &pid, e)))
        goto out;
    int ws = 0, fwd = 0;
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR) {
            rc = err_set(e, -QOSIM_ECHILD, "waiting for point %zu: %s", i, strerror(errno));
            goto out;
        }
        if (point_intr && fwd != 2) {
            kill(pid, SIGKILL);
            fwd = 2;
        } else if (point_sig && !fwd) {
            kill(pid, point_sig);
            fwd = 1;
        }
    }
    if (point_intr || (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGUSR1))
        rc = err_set(e, -QOSIM_ECHILD, "point %zu: interrupted (SIGUSR1): no record", i);
    else
        rc = sweep_point_finish(sw, i, key, ws, sweep_now() - t0, NULL, e);
out:
    sweep_uncatch(old);
    sigaction(SIGUSR1, &old_usr1, NULL);
    return rc;
}
