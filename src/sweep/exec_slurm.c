/* The SLURM executor: the points to run go to the cluster as job arrays,
 * one array task a point, through SLURM's own commands (sbatch, squeue,
 * scancel, scontrol), never its library, so that qosim runs with whatever
 * SLURM the cluster has and builds without one. The sweep folder must be
 * shared with the compute nodes, and so must the qosim binary.
 *
 *   DIR/slurm/batch-K.list   the points of array K, one index a line: task
 *                            T runs the point on line T (from 0)
 *   DIR/slurm/batch-K.sh     the array's script: `qosim sweep point DIR
 *                            --list DIR/slurm/batch-K.list`
 *   DIR/slurm/J_T.out        what array J's task T printed
 *
 * K counts on from the arrays of earlier runs, whose tasks may still be
 * reading their lists. Each task writes its point's record.json itself;
 * this process only submits, follows the queue, and reads the records once
 * the arrays have left it.
 *
 * QOSIM_SLURM_POLL_MS sets how often the queue is asked (milliseconds;
 * default 1000): the tests set it lower. */
#include "exec.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The array size when the cluster does not say: SLURM's default. */
#define SLURM_MAX_ARRAY_DEFAULT 1001
/* Seconds the queue may stay unreadable (a controller restarting) before
 * the executor gives up. */
#define SLURM_QUEUE_GRACE 120
/* Records read per poll for the progress line, at most: more points are
 * read over several polls, sparing a shared file system. */
#define SLURM_READS_PER_POLL 1000
/* Polls after the arrays have left the queue in which a missing record may
 * still appear: a shared file system (NFS) can show a file written on
 * another host a few seconds late. */
#define SLURM_LATE_POLLS 3
/* Array tasks without a record named on standard error, at most. */
#define SLURM_NAMED 5

/* The signal that interrupted the run, and how many came: a command or a
 * wait is cut short by a signal that comes while it runs. */
static volatile sig_atomic_t slurm_sig, slurm_nsig;

static void on_signal(int sig)
{
    slurm_sig = sig;
    slurm_nsig++;
}

/* A command's outcome: its standard output whole, the end of its
 * standard error (for messages), its wait status. */
struct cmd {
    char *out;
    size_t nout, capout;
    char err[512];
    size_t nerr;
    int ws;
};

static void cmd_free(struct cmd *c)
{
    free(c->out);
    memset(c, 0, sizeof *c);
}

static int cmd_keep(struct cmd *c, const char *buf, size_t n)
{
    if (c->nout + n + 1 > c->capout) {
        size_t cap = c->capout ? c->capout : 4096;
        while (cap < c->nout + n + 1)
            cap *= 2;
        char *p = realloc(c->out, cap);
        if (!p)
            return -1;
        c->out = p;
        c->capout = cap;
    }
    memcpy(c->out + c->nout, buf, n);
    c->nout += n;
    c->out[c->nout] = '\0';
    return 0;
}

/* Keeps the last bytes of standard error (where a failure says why). */
static void cmd_keep_err(struct cmd *c, const char *buf, size_t n)
{
    size_t cap = sizeof c->err - 1;
    if (n >= cap) {
        buf += n - cap;
        n = cap;
    }
    if (c->nerr + n > cap) {
        size_t drop = c->nerr + n - cap;
        memmove(c->err, c->err + drop, c->nerr - drop);
        c->nerr -= drop;
    }
    memcpy(c->err + c->nerr, buf, n);
    c->nerr += n;
    c->err[c->nerr] = '\0';
}

/* What a command's failure says: its last line of standard error, else
 * how it ended. */
static const char *cmd_why(struct cmd *c)
{
    char *s = c->err;
    while (c->nerr && (s[c->nerr - 1] == '\n' || s[c->nerr - 1] == ' '))
        s[--c->nerr] = '\0';
    char *nl = strrchr(s, '\n');
    if (nl && nl[1])
        s = nl + 1;
    if (*s)
        return s;
    if (WIFSIGNALED(c->ws))
        snprintf(c->err, sizeof c->err, "killed by signal %d", WTERMSIG(c->ws));
    else
        snprintf(c->err, sizeof c->err, "exit status %d", WEXITSTATUS(c->ws));
    return c->err;
}

/* Runs av (looked up on PATH) with no shell between, standard input
 * /dev/null, and collects its outputs into c. The command runs in a process
 * group of its own, so that Ctrl-C at the terminal reaches this process
 * alone and no sbatch dies between submitting an array and saying its id;
 * a query (stoppable) is stopped when a signal comes while it runs, a
 * submission or a cancellation is let finish. 0 when it ran (whatever its
 * status, in c->ws). */
static int cmd_run(char *const *av, int stoppable, struct cmd *c, struct err *e)
{
    memset(c, 0, sizeof *c);
    sig_atomic_t nsig = slurm_nsig;
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
        int er = errno;
        for (int k = 0; k < 2; k++) {
            if (po[k] >= 0)
                close(po[k]);
            if (pe[k] >= 0)
                close(pe[k]);
        }
        return err_set(e, -QOSIM_EIO, "%s: cannot make a pipe: %s", av[0], strerror(er));
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawnattr_init(&at);
    sigset_t def, none;
    sigemptyset(&def);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    sigaddset(&def, SIGPIPE);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int sr = posix_spawnp(&pid, av[0], &fa, &at, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(po[1]);
    close(pe[1]);
    if (sr) {
        close(po[0]);
        close(pe[0]);
        if (sr == ENOENT)
            return err_set(e, -QOSIM_ENOTOOL,
                           "%s: not found on PATH (the SLURM executor needs SLURM's commands)",
                           av[0]);
        return err_set(e, -QOSIM_ECHILD, "cannot run %s: %s", av[0], strerror(sr));
    }
    struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    int open_fds = 2, stopped = 0, nomem = 0;
    while (open_fds) {
        if (stoppable && slurm_nsig != nsig && !stopped++)
            kill(pid, SIGTERM);
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            /* Not to wait below for a child blocked on a full pipe. */
            kill(pid, SIGKILL);
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (pf[k].fd < 0 || !pf[k].revents)
                continue;
            char buf[4096];
            ssize_t n = read(pf[k].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(pf[k].fd);
                pf[k].fd = -1;
                open_fds--;
            } else if (k == 0) {
                nomem |= cmd_keep(c, buf, (size_t)n);
            } else {
                cmd_keep_err(c, buf, (size_t)n);
            }
        }
    }
    for (int k = 0; k < 2; k++)
        if (pf[k].fd >= 0)
            close(pf[k].fd);
    while (waitpid(pid, &c->ws, 0) < 0)
        if (errno != EINTR) {
            cmd_free(c);
            return err_set(e, -QOSIM_ECHILD, "waiting for %s: %s", av[0], strerror(errno));
        }
    if (nomem) {
        cmd_free(c);
        return err_set(e, -QOSIM_ENOMEM, "%s: out of memory for its output", av[0]);
    }
    if (!c->out && cmd_keep(c, "", 0))
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    return 0;
}

static int cmd_ok(const struct cmd *c)
{
    return WIFEXITED(c->ws) && !WEXITSTATUS(c->ws);
}

/* Tasks in one array: what the options say, else the cluster's
 * MaxArraySize (task ids run from 0 to MaxArraySize - 1), else SLURM's
 * default. */
static size_t array_size(const struct sweep_run_opts *o)
{
    if (o->max_array)
        return o->max_array;
    char *av[] = {"scontrol", "show", "config", NULL};
    struct cmd c;
    struct err e;
    size_t n = SLURM_MAX_ARRAY_DEFAULT;
    if (cmd_run(av, 1, &c, &e))
        return n;
    for (char *l = c.out; cmd_ok(&c) && l && *l;) {
        char *nl = strchr(l, '\n');
        unsigned long v;
        if (!strncmp(l, "MaxArraySize", 12) && sscanf(l + 12, " = %lu", &v) == 1 && v > 0)
            n = v;
        l = nl ? nl + 1 : NULL;
    }
    cmd_free(&c);
    return n;
}

/* s with every ' closed, escaped and reopened: inside '...' for sh. */
static void sh_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

/* Writes f and closes it; 0 or -1 with errno. */
static int close_checked(FILE *f)
{
    int bad = ferror(f);
    int er = errno;
    if (fclose(f) || bad) {
        if (bad)
            errno = er ? er : EIO;
        return -1;
    }
    return 0;
}

/* One array: the points pts[0..n), its list and its script, named by the
 * first K free in DIR/slurm (dir: DIR as an absolute path, which is what
 * the tasks are given: they start in a folder of SLURM's choosing). */
static int write_batch(const char *dir, const size_t *pts, size_t n, const char *qosim, char *list,
                       char *script, size_t cap, struct err *e)
{
    FILE *f = NULL;
    for (unsigned k = 0; !f; k++) {
        snprintf(list, cap, "%s/slurm/batch-%u.list", dir, k);
        int fd = open(list, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            int er = errno;
            if (fd >= 0)
                close(fd);
            return err_set(e, -QOSIM_EIO, "%s: %s", list, strerror(er));
        }
        snprintf(script, cap, "%s/slurm/batch-%u.sh", dir, k);
    }
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%zu\n", pts[i]);
    if (close_checked(f))
        return err_set(e, -QOSIM_EIO, "%s: %s", list, strerror(errno));
    if (!(f = fopen(script, "we")))
        return err_set(e, -QOSIM_EIO, "%s: %s", script, strerror(errno));
    fputs("#!/bin/sh\n"
          "# qosim sweep: array task T runs the point on line T (from 0) of the list.\n"
          "exec ",
          f);
    sh_quote(f, qosim);
    fputs(" sweep point ", f);
    sh_quote(f, dir);
    fputs(" --list ", f);
    sh_quote(f, list);
    fputc('\n', f);
    if (close_checked(f))
        return err_set(e, -QOSIM_EIO, "%s: %s", script, strerror(errno));
    return 0;
}

/* Submits an array of n tasks running script; its job id into *id. */
static int submit(const char *dir, const char *script, size_t n, const struct sweep_run_opts *o,
                  unsigned long *id, struct err *e)
{
    char array[64], part[512], tlim[128], mem[128], chdir[4200];
    int w = snprintf(array, sizeof array, "--array=0-%zu", n - 1);
    if (o->throttle)
        snprintf(array + w, sizeof array - (size_t)w, "%%%u", o->throttle);
    snprintf(chdir, sizeof chdir, "--chdir=%s", dir);
    char *av[16];
    int a = 0;
    av[a++] = "sbatch";
    av[a++] = "--parsable";
    av[a++] = array;
    av[a++] = "--job-name=qosim-sweep";
    if (o->partition && *o->partition) {
        snprintf(part, sizeof part, "--partition=%s", o->partition);
        av[a++] = part;
    }
    if (o->time && *o->time) {
        snprintf(tlim, sizeof tlim, "--time=%s", o->time);
        av[a++] = tlim;
    }
    if (o->mem && *o->mem) {
        snprintf(mem, sizeof mem, "--mem=%s", o->mem);
        av[a++] = mem;
    }
    /* Relative to --chdir, so that no '%' or '\' in the folder's name is
     * taken for one of sbatch's file name patterns. */
    av[a++] = "--output=slurm/%A_%a.out";
    av[a++] = chdir;
    av[a++] = (char *)script;
    av[a] = NULL;
    struct cmd c;
    int rc = cmd_run(av, 0, &c, e);
    if (rc)
        return rc;
    /* --parsable: "ID" or "ID;CLUSTER". */
    char *end;
    errno = 0;
    *id = strtoul(c.out, &end, 10);
    if (!cmd_ok(&c) || end == c.out || errno || (*end && *end != ';' && *end != '\n'))
        rc = err_set(e, -QOSIM_ECHILD, "sbatch of %s: %s%s", script,
                     cmd_ok(&c) ? "no job id in its output" : cmd_why(&c),
                     strstr(c.err, "configuration source")
                         ? " (no SLURM here? sbatch reads $SLURM_CONF or /etc/slurm/slurm.conf)"
                         : "");
    else if (c.nerr)
        fputs(c.err, stderr); /* its warnings: a site's submit filter may say something */
    cmd_free(&c);
    return rc;
}

/* The submitted arrays, for messages: "ID1,ID2,...". */
static char *id_list(const unsigned long *ids, size_t nid)
{
    char *s = malloc(nid * 21 + 1);
    if (!s)
        return NULL;
    size_t w = 0;
    s[0] = '\0';
    for (size_t k = 0; k < nid; k++)
        w += (size_t)sprintf(s + w, "%s%lu", k ? "," : "", ids[k]);
    return s;
}

/* Tasks of our arrays still in the queue: pending and the rest (running,
 * completing, suspended). -1 when squeue failed (why in e). This user's
 * jobs are asked for, and ours picked out by id here: squeue --jobs fails
 * on an id the controller has already forgotten, and a site's submit
 * filter may rename jobs. */
static int queue_count(const unsigned long *ids, size_t nid, size_t *pending, size_t *running,
                       struct err *e)
{
    char user[64];
    snprintf(user, sizeof user, "--user=%u", (unsigned)getuid());
    char *av[] = {"squeue", "--noheader", "--array", user, "--format=%F %t", NULL};
    struct cmd c;
    if (cmd_run(av, 1, &c, e))
        return -1;
    if (!cmd_ok(&c)) {
        err_set(e, -QOSIM_ECHILD, "squeue: %s", cmd_why(&c));
        cmd_free(&c);
        return -1;
    }
    *pending = *running = 0;
    for (char *l = c.out; *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = '\0';
        unsigned long id;
        char st[16];
        if (sscanf(l, "%lu %15s", &id, st) == 2)
            for (size_t k = 0; k < nid; k++)
                if (ids[k] == id)
                    ++*(strcmp(st, "PD") ? running : pending);
        if (!nl)
            break;
        l = nl + 1;
    }
    cmd_free(&c);
    return 0;
}

/* Cancels our arrays so that the points they were running have no record
 * (interrupted, not failed: they run again next time, as the local
 * executor's interrupted runs do). A plain scancel would send SIGTERM, which
 * the array task takes for a time limit and records as a failure; a
 * SIGKILL reaches the task's processes one at a time, and a run that died
 * first was recorded as failed by its point process, which was still
 * alive. So: the pending tasks first (nothing more starts), then
 * SIGUSR1 to every process of the running ones (--full: the batch step,
 * which is the point process, and its run), which `qosim sweep point`
 * takes for "interrupted: no record" (point.c), then, once those tasks
 * have ended (drain), a plain cancel of whatever is left. */
static void scancel(const unsigned long *ids, size_t nid, const char *const *how);

/* Sleeps ms, or less when a signal comes (none when one came since nsig). */
static void nap(unsigned ms, sig_atomic_t nsig)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    if (slurm_nsig == nsig)
        nanosleep(&ts, NULL);
}

static unsigned poll_ms(void)
{
    const char *s = getenv("QOSIM_SLURM_POLL_MS");
    char *end;
    unsigned long v = s && *s ? strtoul(s, &end, 10) : 0;
    return s && *s && !*end && v > 0 && v <= 60000 ? (unsigned)v : 1000;
}

/* Polls the queue every poll_ms until no task of our arrays is running
 * (nor, with pending, pending), at most polls times, less if another
 * signal comes than the nsig-th. */
static void drain(const unsigned long *ids, size_t nid, sig_atomic_t nsig, unsigned polls,
                  int pending)
{
    unsigned ms = poll_ms();
    size_t p = 1, r = 1;
    struct err qe;
    for (unsigned k = 0; k < polls && ((pending && p) || r) && slurm_nsig == nsig; k++)
        if (queue_count(ids, nid, &p, &r, &qe) || (pending && p) || r)
            nap(ms, nsig);
}

static void cancel(const unsigned long *ids, size_t nid, sig_atomic_t nsig)
{
    static const char *const pending[] = {"--state=PENDING", NULL};
    static const char *const usr1[] = {"--full", "--signal=USR1", NULL};
    static const char *const rest[] = {NULL};
    scancel(ids, nid, pending);
    scancel(ids, nid, usr1);
    /* The point processes end by themselves, within a poll or two; the
     * plain cancel, whose SIGTERM a point takes for a time limit, waits for
     * them: up to 30 s (a loaded node delivers signals late), less if
     * another signal comes. */
    drain(ids, nid, nsig, 30000 / poll_ms(), 0);
    scancel(ids, nid, rest);
}

/* scancel --quiet HOW... IDS. */
static void scancel(const unsigned long *ids, size_t nid, const char *const *how)
{
    char **av = calloc(nid + 6, sizeof *av), (*num)[24] = calloc(nid, sizeof *num);
    if (!av || !num) {
        fprintf(stderr, "qosim sweep: out of memory to cancel the arrays\n");
        goto out;
    }
    for (size_t k = 0; k < nid; k++)
        snprintf(num[k], sizeof num[k], "%lu", ids[k]);
    /* --quiet: an array that has already ended is no error. */
    size_t a = 0;
    av[a++] = "scancel";
    av[a++] = "--quiet";
    for (size_t k = 0; how[k]; k++)
        av[a++] = (char *)how[k];
    for (size_t k = 0; k < nid; k++)
        av[a++] = num[k];
    av[a] = NULL;
    struct cmd c;
    struct err e;
    if (cmd_run(av, 0, &c, &e)) {
        fprintf(stderr, "qosim sweep: %s\n", e.msg);
        goto out;
    }
    if (!cmd_ok(&c))
        fprintf(stderr, "qosim sweep: scancel: %s\n", cmd_why(&c));
    cmd_free(&c);
out:
    free(av);
    free(num);
}

/* What is known of one point being run. */
struct pt {
    size_t i;
    char key[SWEEP_KEY_HEX];
    struct stat rec;       /* its record.json before the run (st_ino 0: none) */
    enum sweep_state seen; /* as the new record says; SWEEP_PENDING: none yet */
    int fresh;             /* a record was written since the submission */
    unsigned long job;     /* its array, and its task in it */
    size_t task;
};

static void record_stat(const struct sweep *sw, size_t i, struct stat *st)
{
    char path[4300];
    memset(st, 0, sizeof *st);
    sweep_point_path(sw, i, "record.json", path, sizeof path);
    /* open, not stat: on NFS an open revalidates what a stat may take from
     * the cache. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (fstat(fd, st))
            memset(st, 0, sizeof *st);
        close(fd);
    }
}

/* Whether point p has a record written since the submission (a record
 * is replaced whole, so a new one is a new file). */
static void record_check(const struct sweep *sw, struct pt *p)
{
    if (p->fresh)
        return;
    struct stat now;
    record_stat(sw, p->i, &now);
    if (!now.st_ino)
        return;
    if (now.st_ino == p->rec.st_ino && now.st_dev == p->rec.st_dev &&
        now.st_mtim.tv_sec == p->rec.st_mtim.tv_sec &&
        now.st_mtim.tv_nsec == p->rec.st_mtim.tv_nsec)
        return;
    p->fresh = 1;
    p->seen = sweep_state(sw, p->i, p->key);
}

static void tally_seen(const struct pt *pts, size_t n, size_t *done, size_t *failed)
{
    *done = *failed = 0;
    for (size_t k = 0; k < n; k++)
        if (pts[k].fresh && pts[k].seen == SWEEP_DONE)
            ++*done;
        else if (pts[k].fresh && pts[k].seen == SWEEP_FAILED)
            ++*failed;
}

static void progress(const struct sweep_tally *t, size_t done, size_t failed, size_t n,
                     size_t pending, size_t running)
{
    fprintf(stderr, "\r\033[K%zu/%zu done, %zu failed, %zu running, %zu queued", t->done + done, n,
            t->failed + failed, running, pending);
    fflush(stderr);
}

/* Follows the queue until our arrays have left it (or a signal came);
 * then gives missing records a few more polls to show. */
static int follow(const struct sweep *sw, const unsigned long *ids, size_t nid, const char *idstr,
                  struct pt *pts, size_t np, const struct sweep_run_opts *o,
                  const struct sweep_tally *t, size_t n, struct err *e)
{
    unsigned ms = poll_ms();
    size_t pending = 0, running = 0, done, failed, next = 0;
    double bad = 0; /* when the queue became unreadable, or 0 */
    for (;;) {
        struct err qe;
        if (slurm_sig)
            return 0;
        if (queue_count(ids, nid, &pending, &running, &qe)) {
            if (slurm_sig)
                return 0;
            /* A controller restarting or busy: ask again for a while. */
            if (!bad)
                bad = sweep_now();
            else if (sweep_now() - bad > SLURM_QUEUE_GRACE)
                return err_set(e, qe.code, "%s (the arrays %s may still be running)", qe.msg,
                               idstr);
        } else {
            bad = 0;
        }
        if (o->progress) {
            for (size_t k = 0; k < SLURM_READS_PER_POLL && k < np; k++, next++)
                record_check(sw, &pts[next % np]);
            tally_seen(pts, np, &done, &failed);
            progress(t, done, failed, n, pending, running);
        }
        if (!bad && !pending && !running)
            break;
        nap(ms, 0);
    }
    for (unsigned late = 0; late < SLURM_LATE_POLLS && !slurm_sig; late++) {
        size_t missing = 0;
        for (size_t k = 0; k < np; k++) {
            record_check(sw, &pts[k]);
            missing += !pts[k].fresh;
        }
        if (!missing)
            break;
        nap(ms, 0);
    }
    return 0;
}

/* The final count; with name, the tasks that left no record are named
 * with their output files. */
static void tally(const struct sweep *sw, struct pt *pts, size_t np, int name,
                  struct sweep_tally *t)
{
    size_t named = 0, unnamed = 0;
    for (size_t k = 0; k < np; k++) {
        struct pt *p = &pts[k];
        record_check(sw, p);
        if (p->fresh && p->seen == SWEEP_DONE) {
            t->done++;
        } else if (p->fresh && p->seen == SWEEP_FAILED) {
            t->failed++;
        } else if (name && p->job && !p->fresh) {
            /* Its task ran and ended without a record: killed (scancel,
             * out of memory), or its node lost. That is the point's
             * failure, which status shows and --retry-failed runs again. */
            char why[4400];
            struct err le;
            snprintf(why, sizeof why,
                     "array task %lu_%zu ended without writing the point's record (killed, out "
                     "of memory, or its node lost); its output: %s/slurm/%lu_%zu.out",
                     p->job, p->task, sw->dir, p->job, p->task);
            if (sweep_point_lost(sw, p->i, p->key, why, &le)) {
                fprintf(stderr, "qosim sweep: %s\n", le.msg);
                t->interrupted++;
                continue;
            }
            t->failed++;
            if (named++ < SLURM_NAMED)
                fprintf(stderr, "qosim sweep: point %0*zu: %s\n", (int)sw->width, p->i, why);
            else
                unnamed++;
        } else {
            /* Not run (the arrays were cancelled, or not all submitted), or
             * a record for another key (an input changed meanwhile): runs
             * again next time. */
            t->interrupted++;
        }
    }
    if (unnamed)
        fprintf(stderr, "qosim sweep: ... and %zu more tasks ended without a record\n", unnamed);
}

/* The points' keys and records as they are before anything is submitted;
 * a point whose key cannot be made (an input gone) is named, counted as
 * failed, and left out. */
static size_t prepare(const struct sweep *sw, const size_t *todo, size_t n, struct pt *pts,
                      struct sweep_tally *t)
{
    size_t np = 0;
    for (size_t k = 0; k < n; k++) {
        struct pt *p = &pts[np];
        struct err pe;
        memset(p, 0, sizeof *p);
        p->i = todo[k];
        if (sweep_key(sw, p->i, p->key, &pe)) {
            fprintf(stderr, "qosim sweep: %s\n", pe.msg);
            t->failed++;
            continue;
        }
        record_stat(sw, p->i, &p->rec);
        np++;
    }
    return np;
}

/* Writes and submits the arrays, MaxArraySize points each; *nid of them
 * were submitted when it returns, whatever it returns. */
static int submit_all(const char *dir, struct pt *pts, size_t np, const struct sweep_run_opts *o,
                      unsigned long *ids, size_t *nid, struct err *e)
{
    if (!np)
        return 0;
    size_t per = array_size(o);
    size_t *idx = malloc((per < np ? per : np) * sizeof *idx);
    if (!idx)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    char list[4300], script[4300];
    int rc = 0;
    for (size_t from = 0; from < np && !rc && !slurm_sig; from += per) {
        size_t m = np - from < per ? np - from : per;
        for (size_t k = 0; k < m; k++)
            idx[k] = pts[from + k].i;
        unsigned long id;
        if (!(rc = write_batch(dir, idx, m, o->qosim, list, script, sizeof list, e)) &&
            (rc = submit(dir, script, m, o, &id, e))) {
            /* Not submitted: its files would only mislead. */
            unlink(list);
            unlink(script);
        }
        if (!rc) {
            ids[(*nid)++] = id;
            for (size_t k = 0; k < m; k++) {
                pts[from + k].job = id;
                pts[from + k].task = k;
            }
        }
    }
    free(idx);
    return rc;
}

static int slurm_run(const struct sweep *sw, const size_t *todo, size_t n,
                     const struct sweep_run_opts *o, struct sweep_tally *t, struct err *e)
{
    char dir[PATH_MAX], sub[PATH_MAX + 8];
    if (!realpath(sw->dir, dir))
        return err_set(e, -QOSIM_EIO, "%s: %s", sw->dir, strerror(errno));
    snprintf(sub, sizeof sub, "%s/slurm", dir);
    if (mkdir(sub, 0777) && errno != EEXIST)
        return err_set(e, -QOSIM_EIO, "%s: %s", sub, strerror(errno));
    struct pt *pts = calloc(n ? n : 1, sizeof *pts);
    unsigned long *ids = calloc(n ? n : 1, sizeof *ids);
    if (!pts || !ids) {
        free(pts);
        free(ids);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    struct sigaction old[2];
    slurm_sig = slurm_nsig = 0;
    sweep_catch(on_signal, old); /* no SA_RESTART: a signal ends a wait at once */

    size_t np = prepare(sw, todo, n, pts, t), nid = 0;
    char *idstr = NULL;
    int rc = submit_all(dir, pts, np, o, ids, &nid, e), stop = rc || slurm_sig;
    if (nid && !(idstr = id_list(ids, nid)) && !rc)
        rc = err_set(e, -QOSIM_ENOMEM, "out of memory");
    if (!rc && !stop && nid)
        rc = follow(sw, ids, nid, idstr, pts, np, o, t, n, e);
    if (o->progress)
        fputs("\r\033[K", stderr);
    if (idstr && (stop || slurm_sig)) {
        /* Interrupted, or a later array could not be submitted: what was
         * submitted stops, as a local run would. (Not when the queue
         * could not be read: scancel would fail the same way.) */
        sig_atomic_t nsig = slurm_nsig;
        cancel(ids, nid, nsig);
        /* Until the cancelled tasks have left the queue: at most 30 polls,
         * less if another signal comes. */
        drain(ids, nid, nsig, 30, 1);
    }
    tally(sw, pts, np, !rc && !slurm_sig, t);
    t->signal = slurm_sig;
    if (!rc && slurm_sig) {
        if (idstr)
            rc = err_set(e, -QOSIM_ECHILD,
                         "interrupted: arrays %s cancelled; %zu points finished this time are "
                         "kept, %zu not run",
                         idstr, t->done + t->failed, t->interrupted);
        else
            rc = err_set(e, -QOSIM_ECHILD, "interrupted before any array was submitted");
    }
    sweep_uncatch(old);
    free(idstr);
    free(ids);
    free(pts);
    return rc;
}

const struct sweep_exec sweep_exec_slurm = {"slurm", slurm_run};
