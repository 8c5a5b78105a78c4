/* qosim trace record: any real program becomes a trace with one command. The
 * program runs under valgrind's lackey tool; its log arrives through a pipe
 * and is written (plain or .xz) to the output (util/ofile.h: a regular file
 * through a temporary renamed into place only when the recording
 * succeeded). valgrind and everything the program starts form one process
 * group, stopped as one when the recording is interrupted or long enough. */
#include "cli.h"

#include "sim/trace/twrite.h"
#include "sim/wl/live.h"
#include "util/conf.h"
#include "util/err.h"
#include "util/ofile.h"
#include "util/path.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REC_CHUNK (1u << 20)

static const char trace_help[] =
    "usage: qosim trace record [--engine lackey|qemu] [-o FILE] [--max-records N]\n"
    "                          -- PROGRAM [ARGS...]\n"
    "\n"
    "Runs PROGRAM and writes its instruction and memory trace to FILE. Engines:\n"
    "  lackey  (default) valgrind --tool=lackey --trace-mem=yes: the counts\n"
    "          cachegrind sees, exactly; slow (about 0.5 M records/s)\n"
    "  qemu    QEMU's user-mode emulator with the qosim plugin: a hundred times\n"
    "          faster, exact branches; counts differ from valgrind's slightly\n"
    "          (docs/traces.md says where)\n"
    "FILE decides the format: NAME.qtr is qosim's compact format (zstd),\n"
    "NAME.champsim or NAME.champsim.xz ChampSim's, anything else Lackey text\n"
    "(.xz compressed); '-' is Lackey text on standard output (the program's own\n"
    "output then goes to standard error). The default FILE is PROGRAM's base\n"
    "name + .lackey (lackey) or .qtr (qemu). Replay with 'qosim cachesim FILE'.\n"
    "  --max-records N   stop the program after N records (instructions and\n"
    "                    accesses), keeping a valid trace of exactly N\n"
    "Ctrl-C, SIGTERM or SIGHUP stop the program and leave no file. On a terminal,\n"
    "progress is shown on standard error. docs/traces.md gives typical sizes.\n"
    "QOSIM_VALGRIND names another valgrind, QOSIM_QEMU another qemu-x86_64.\n"
    "\n"
    "usage: qosim trace dump [--format F] FILE\n"
    "Prints every record of a trace in any format as Lackey-like lines, each\n"
    "branch followed by its kind and outcome (\"cond taken\").\n";

/* The first executable NAME on PATH, as execvp would find it; NULL if none. */
static char *find_on_path(const char *name)
{
    char buf[4096];
    return path_which(name, buf, sizeof buf) ? NULL : strdup(buf);
}

/* The valgrind to run: $QOSIM_VALGRIND, or the first on PATH; NULL if none. */
static char *find_valgrind(void)
{
    const char *env = getenv("QOSIM_VALGRIND");
    if (env && *env)
        return access(env, X_OK) ? NULL : strdup(env);
    return find_on_path("valgrind");
}

struct sink {
    struct ofile o;
    int xz;
    lzma_stream lz;
    uint8_t out[REC_CHUNK];
};

static int sink_write_all(struct sink *s, const uint8_t *p, size_t n)
{
    return n && fwrite(p, 1, n, s->o.f) != n ? -1 : 0;
}

static int sink_put(struct sink *s, const uint8_t *p, size_t n, lzma_action act)
{
    if (!s->xz)
        return sink_write_all(s, p, n);
    s->lz.next_in = p;
    s->lz.avail_in = n;
    for (;;) {
        s->lz.next_out = s->out;
        s->lz.avail_out = sizeof s->out;
        lzma_ret r = lzma_code(&s->lz, act);
        if (r != LZMA_OK && r != LZMA_STREAM_END)
            return -1;
        if (sink_write_all(s, s->out, sizeof s->out - s->lz.avail_out))
            return -1;
        if (act == LZMA_FINISH ? r == LZMA_STREAM_END : !s->lz.avail_in)
            return 0;
    }
}

/* The recording: valgrind's process group, and what has arrived. */
struct rec {
    pid_t pid;        /* valgrind, leader of its process group */
    uint64_t records; /* lines of an access seen whole */
    uint64_t max;     /* --max-records; 0: no limit */
    uint64_t bytes;   /* of trace kept */
    int bol, isrec;   /* at a line's start; the current line is a record */
    int bar;          /* progress shown (standard error is a terminal) */
    double t0, shown;
};

static struct rec rec;
static volatile sig_atomic_t rec_group; /* for the signal handler; 0: none */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Kills valgrind, the program and whatever it started, and reaps valgrind;
 * also ofile's signal hook, so async-signal-safe calls only. SIGKILL: a
 * program under lackey can take seconds to act on a polite signal. */
static void rec_stop(int sig)
{
    if (sig && rec.bar) /* the progress line goes, as at a normal end */
        if (write(2, "\r\033[K", 4) < 0) {
            /* nothing to be done about it in a signal handler */
        }
    pid_t pg = rec_group;
    if (pg > 0) {
        kill(-pg, SIGKILL);
        while (waitpid(pg, NULL, 0) < 0 && errno == EINTR)
            ;
        rec_group = 0;
    }
}

/* Counts the records in buf, a line being counted at its end: lackey's
 * "I  ", " L ", " S " and " M " lines, not valgrind's "==PID==" lines.
 * Returns how much of buf to keep: all of it, or up to the end of the
 * record that makes --max-records. */
static size_t rec_count(struct rec *r, const uint8_t *buf, size_t n)
{
    size_t k = 0;
    while (k < n) {
        if (r->bol) {
            r->isrec = buf[k] == 'I' || buf[k] == ' ';
            r->bol = 0;
        }
        const uint8_t *nl = memchr(buf + k, '\n', n - k);
        if (!nl)
            return n;
        k = (size_t)(nl - buf) + 1;
        r->bol = 1;
        if (r->isrec && ++r->records == r->max)
            return k;
    }
    return n;
}

/* The progress line is shown when standard error is a terminal: at once,
 * then a few times a second. */
static void rec_begin(struct rec *r)
{
    r->bar = isatty(2);
    r->t0 = now();
    r->shown = r->t0 - 1;
}

/* One line on the terminal, redrawn a few times a second, cleared at the
 * end: the records and bytes of trace so far, and xz, when not 0, what
 * they were compressed to. */
static void rec_progress(struct rec *r, uint64_t xz, int done)
{
    if (!r->bar)
        return;
    double t = now();
    if (done) {
        fputs("\r\033[K", stderr);
    } else if (t - r->shown >= 0.25) {
        r->shown = t;
        fprintf(stderr, "\rqosim trace: %llu records, %.1f MiB", (unsigned long long)r->records,
                r->bytes / 1048576.0);
        if (xz)
            fprintf(stderr, " (%.1f MiB .xz)", xz / 1048576.0);
        fprintf(stderr, ", %.0f s\033[K", t - r->t0);
    }
}

/* The child: valgrind in a process group of its own, which qosim stops as
 * one. That group is in the terminal's background: Ctrl-C reaches qosim
 * alone, which stops valgrind at once (valgrind itself takes seconds to act
 * on a signal), and a program reading the terminal from there would hang,
 * so a terminal on standard input is replaced by /dev/null. */
static void rec_child(char *const *av, int out_is_stdout, const sigset_t *mask, pid_t parent)
{
    setpgid(0, 0);
    /* However qosim ends (even SIGKILL), valgrind must not run on alone. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
        _exit(127);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (!sigaction(sigs[i], NULL, &old) && old.sa_handler != SIG_IGN)
            signal(sigs[i], SIG_DFL);
    }
    sigprocmask(SIG_SETMASK, mask, NULL);
    if (isatty(0)) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0 || dup2(fd, 0) < 0)
            _exit(127);
        close(fd);
    }
    /* The trace owns standard output: the program's output goes beside it. */
    if (out_is_stdout && dup2(2, 1) < 0)
        _exit(127);
    execv(av[0], av);
    fprintf(stderr, "qosim trace: cannot run %s: %s\n", av[0], strerror(errno));
    _exit(127);
}

/* Starts valgrind on prog, logging to logw; 0 or -1 (errno set). */
static int rec_spawn(char *vg, char **prog, int nprog, int logw, int out_is_stdout)
{
    char logfd[32];
    snprintf(logfd, sizeof logfd, "--log-fd=%d", logw);
    char **av = calloc((size_t)nprog + 7, sizeof *av);
    if (!av)
        return -1;
    av[0] = vg;
    av[1] = "--tool=lackey";
    av[2] = "--trace-mem=yes";
    av[3] = "--vgdb=no"; /* else a killed valgrind leaves its FIFOs in /tmp */
    av[4] = logfd;
    av[5] = "--";
    memcpy(av + 6, prog, (size_t)nprog * sizeof *av);
    /* No signal between the fork and rec_group naming the child: the
     * handler would miss it. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGPIPE);
    sigprocmask(SIG_BLOCK, &block, &old);
    pid_t self = getpid(), pid = fork();
    if (pid == 0)
        rec_child(av, out_is_stdout, &old, self);
    int en = errno;
    free(av);
    if (pid > 0) {
        setpgid(pid, pid); /* whichever of the two runs first */
        rec.pid = pid;
        rec_group = pid;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = en;
    return pid > 0 ? 0 : -1;
}

/* Reads the log until valgrind ends, the limit is reached or the output
 * fails; -1 on an output error. *stopped: the limit was reached. */
static int rec_pump(struct rec *r, struct sink *s, int fd, int *stopped)
{
    static uint8_t buf[REC_CHUNK];
    *stopped = 0;
    for (;;) {
        if (r->bar) {
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            int pr = poll(&pf, 1, 250);
            rec_progress(r, s->xz ? s->lz.total_out : 0, 0);
            if (pr == 0 || (pr < 0 && errno == EINTR))
                continue;
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        size_t keep = rec_count(r, buf, (size_t)n);
        r->bytes += keep;
        if (sink_put(s, buf, keep, LZMA_RUN))
            return -1;
        if (r->max && r->records == r->max) {
            *stopped = 1;
            return 0;
        }
    }
}

/* The output committed or dropped, and what happened said. */
static int trace_finish(const char *prog, struct sink *s, int werr, int stopped, int status)
{
    if (!werr && s->xz && sink_put(s, NULL, 0, LZMA_FINISH))
        werr = 1;
    if (s->xz)
        lzma_end(&s->lz);
    /* valgrind was interrupted (a signal meant for it, not for qosim): the
     * recording is abandoned, and qosim ends the same way. */
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (sig == SIGINT || sig == SIGQUIT || sig == SIGTERM || sig == SIGHUP) {
        ofile_abort(&s->o);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    struct err e;
    if (werr) {
        int en = s->o.werr ? s->o.werr : EIO;
        ofile_abort(&s->o);
        cli_error("trace", "%s: cannot write: %s", s->o.path, strerror(en));
        return 1;
    }
    if (!rec.records) {
        ofile_abort(&s->o);
        cli_error("trace",
                  "valgrind recorded nothing for '%s' (exit status %d); see its message above",
                  prog, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + sig);
        return 1;
    }
    if (ofile_commit(&s->o, &e)) {
        cli_error("trace", "%s", e.msg);
        return 1;
    }
    fprintf(stderr, "qosim trace: recorded '%s' into %s: %llu records, %.1f MiB of trace%s\n", prog,
            strcmp(s->o.path, "-") ? s->o.path : "standard output", (unsigned long long)rec.records,
            rec.bytes / 1048576.0, s->xz ? ", xz-compressed" : "");
    if (stopped)
        fprintf(stderr, "qosim trace: note: '%s' was stopped at --max-records %llu\n", prog,
                (unsigned long long)rec.max);
    else if (status)
        fprintf(stderr, "qosim trace: note: '%s' exited with status %d; the trace is kept\n", prog,
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + sig);
    return 0;
}

/* The recording from valgrind's start to the output's commit. */
static int trace_run(char *vg, char **prog, int nprog, struct sink *s)
{
    int p[2];
    int out_is_stdout = ofile_is_stdout(&s->o);
    if (pipe(p) || fcntl(p[0], F_SETFD, FD_CLOEXEC) ||
        rec_spawn(vg, prog, nprog, p[1], out_is_stdout)) {
        cli_error("trace", "cannot start valgrind: %s", strerror(errno));
        ofile_abort(&s->o);
        if (s->xz)
            lzma_end(&s->lz);
        free(vg);
        return 1;
    }
    free(vg);
    close(p[1]);
    rec_begin(&rec);
    int stopped = 0, werr = rec_pump(&rec, s, p[0], &stopped);
    close(p[0]); /* a valgrind still writing gets EPIPE, not a full pipe */
    int status = 0;
    if (werr || stopped) {
        rec_stop(0);
    } else {
        while (waitpid(rec.pid, &status, 0) < 0 && errno == EINTR)
            ;
        rec_group = 0; /* what the program left running in the background stays */
    }
    rec_progress(&rec, 0, 1);
    return trace_finish(prog[0], s, werr, stopped, status);
}

/* The qemu engine: the program's records come through the live ring (the
 * recorder is its core, taking them as fast as it can) and go to the
 * writer of the format FILE names. */
static int trace_run_qemu(char **prog, struct ofile *o)
{
    struct err e;
    struct tw *w = NULL;
    struct live *l = NULL;
    int out_is_stdout = ofile_is_stdout(o);
    struct live_opts lo = {
        .argv = prog, .in_fd = isatty(0) ? -1 : 0, .out_fd = out_is_stdout ? 2 : 1, .own_group = 1};
    if (tw_open(&w, NULL, o->f, o->path, &e) || live_start(&l, &lo, &e)) {
        cli_error("trace", "%s", e.msg);
        tw_free(w);
        ofile_abort(o);
        return 1;
    }
    rec_group = live_pid(l);
    rec_begin(&rec);
    static struct trace_rec buf[1 << 16];
    long n;
    int stopped = 0, rc = 0;
    uint64_t insns = 0;
    while ((n = live_read(l, buf, sizeof buf / sizeof buf[0], &e)) > 0) {
        if (rec.max && rec.records + (uint64_t)n >= rec.max) {
            n = (long)(rec.max - rec.records);
            stopped = 1;
        }
        for (long i = 0; i < n; i++)
            insns += buf[i].kind == TREC_I;
        rec.records += (uint64_t)n;
        if ((rc = tw_put(w, buf, (size_t)n, &e)))
            break;
        rec.bytes = tw_out_bytes(w); /* the file's bytes: qtr is compressed as it goes */
        rec_progress(&rec, 0, 0);
        if (stopped)
            break;
    }
    rec_progress(&rec, 0, 1);
    if (n < 0 && !stopped)
        rc = (int)n;
    int status = stopped ? 0 : live_status(l);
    char why[128];
    snprintf(why, sizeof why, "%s", live_why(l));
    uint64_t dropped = tw_dropped(w), bytes = tw_out_bytes(w);
    rec_group = 0;
    live_stop(l);
    if (!rc) {
        rc = tw_close(w, &e);
        /* What the close added, where the output can tell (not a pipe). */
        off_t at = ftello(o->f);
        if (at > 0)
            bytes = (uint64_t)at;
    } else {
        tw_free(w);
    }
    if (!rc && !rec.records)
        rc = err_set(&e, -QOSIM_EINVAL, "'%s' ran no instruction", prog[0]);
    if (rc) {
        ofile_abort(o);
        cli_error("trace", "%s", e.msg);
        return 1;
    }
    if (ofile_commit(o, &e)) {
        cli_error("trace", "%s", e.msg);
        return 1;
    }
    fprintf(stderr,
            "qosim trace: recorded '%s' into %s: %llu records, %llu instructions, %.1f MiB "
            "(%.2f bytes per instruction)\n",
            prog[0], strcmp(o->path, "-") ? o->path : "standard output",
            (unsigned long long)rec.records, (unsigned long long)insns, (double)bytes / 1048576.0,
            insns ? (double)bytes / (double)insns : 0.0);
    if (dropped)
        fprintf(stderr,
                "qosim trace: note: %llu data addresses did not fit ChampSim's slots and were "
                "left out (docs/traces.md)\n",
                (unsigned long long)dropped);
    if (stopped)
        fprintf(stderr, "qosim trace: note: '%s' was stopped at --max-records %llu\n", prog[0],
                (unsigned long long)rec.max);
    else if (status)
        fprintf(stderr, "qosim trace: note: '%s' %s; the trace is kept\n", prog[0], why);
    return 0;
}

static int trace_record(int argc, char **argv)
{
    const char *out = NULL, *max = NULL, *engine = NULL;
    int i = 1;
    for (; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(trace_help, stdout);
            return 0;
        }
        if ((v = cli_optval(argc, argv, &i, "-o", &missing)) ||
            (v = cli_optval(argc, argv, &i, "--output", &missing))) {
            if (out) {
                cli_error("trace", "-o given twice ('%s' and '%s')", out, v);
                return 2;
            }
            out = v;
        } else if ((v = cli_optval(argc, argv, &i, "--max-records", &missing))) {
            max = v;
        } else if ((v = cli_optval(argc, argv, &i, "--engine", &missing))) {
            if (strcmp(v, "lackey") && strcmp(v, "qemu")) {
                cli_error("trace", "--engine '%s': expected lackey or qemu", v);
                return 2;
            }
            engine = v;
        } else if (missing) {
            cli_error("trace", "%.*s needs a value", (int)strcspn(argv[i], "="), argv[i]);
            return 2;
        } else if (argv[i][0] == '-') {
            cli_error("trace", "unknown option '%s' (see qosim trace --help)", argv[i]);
            return 2;
        } else {
            break;
        }
    }
    if (i >= argc) {
        cli_error("trace", "no program to record (usage: qosim trace record [-o FILE] "
                           "[--max-records N] -- PROGRAM [ARGS...])");
        return 2;
    }
    memset(&rec, 0, sizeof rec);
    rec.bol = 1;
    if (max && (conf_parse_u64(max, &rec.max) || !rec.max)) {
        cli_error("trace", "--max-records '%s': expected a positive whole number", max);
        return 2;
    }
    char **prog = argv + i;
    char defname[4096];
    int qemu = engine && !strcmp(engine, "qemu");
    if (!out) {
        const char *base = strrchr(prog[0], '/');
        snprintf(defname, sizeof defname, "%s.%s", base ? base + 1 : prog[0],
                 qemu ? "qtr" : "lackey");
        out = defname;
    }
    /* Recording over the program would replace it with its own trace. */
    char *exe = find_on_path(prog[0]);
    const struct ofile_name on = {"-o", out}, in = {"the program", exe};
    struct err e;
    int rc = ofile_distinct(&on, 1, &in, 1, &e);
    free(exe);
    if (rc) {
        cli_error("trace", "%s", e.msg);
        return 2;
    }
    if (qemu) {
        /* Everything the start needs is checked before the output is made. */
        char path[4096];
        if (live_check(prog[0], path, sizeof path, &e)) {
            cli_error("trace", "%s", e.msg);
            return 1;
        }
        static struct ofile o;
        ofile_trap_signals(rec_stop);
        if (ofile_open(&o, out, &e)) {
            cli_error("trace", "%s", e.msg);
            return 1;
        }
        return trace_run_qemu(prog, &o);
    }
    char *vg = find_valgrind();
    if (!vg) {
        cli_error("trace", "valgrind not found (looked in $QOSIM_VALGRIND and PATH); install it "
                           "with 'apt-get install valgrind'");
        return 1;
    }
    /* The output is checked, and its temporary made, before the program
     * starts: a bad -o fails at once, not after the whole recording. */
    static struct sink s;
    ofile_trap_signals(rec_stop);
    if (ofile_open(&s.o, out, &e)) {
        cli_error("trace", "%s", e.msg);
        free(vg);
        return 1;
    }
    size_t olen = strlen(out);
    s.xz = olen > 3 && !strcmp(out + olen - 3, ".xz");
    lzma_stream init = LZMA_STREAM_INIT;
    s.lz = init;
    if (s.xz && lzma_easy_encoder(&s.lz, 1, LZMA_CHECK_CRC64) != LZMA_OK) {
        cli_error("trace", "cannot set up the .xz encoder");
        ofile_abort(&s.o);
        free(vg);
        return 1;
    }
    return trace_run(vg, prog, argc - i, &s);
}

/* qosim trace dump: every record as a line, with what the format knows of
 * branches, to look inside a binary trace or compare two. */
static int trace_dump(int argc, char **argv)
{
    const char *fmt = NULL, *path = NULL;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if ((v = cli_optval(argc, argv, &i, "--format", &missing)))
            fmt = v;
        else if (missing) {
            cli_error("trace", "--format needs a value");
            return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("trace",
                      "dump: unknown option '%s' (usage: qosim trace dump [--format F] "
                      "FILE)",
                      argv[i]);
            return 2;
        } else if (path) {
            cli_error("trace", "dump: one trace at a time ('%s' and '%s')", path, argv[i]);
            return 2;
        } else
            path = argv[i];
    }
    if (!path) {
        cli_error("trace", "dump: no trace given (usage: qosim trace dump [--format F] FILE)");
        return 2;
    }
    const struct trace_ops *ops = trace_find(fmt ? fmt : trace_guess(path));
    if (!ops) {
        cli_error("trace", "--format '%s': unknown format", fmt);
        return 2;
    }
    static const char *const br[] = {"other", "cond",     "jmp", "jmp-ind",
                                     "call",  "call-ind", "ret", "?"};
    struct trace t;
    struct err e;
    if (trace_open(&t, path, ops, 0, &e)) {
        cli_error("trace", "%s", e.msg);
        trace_close(&t);
        return 1;
    }
    static struct trace_rec r[4096];
    long n;
    /* Whole output or none is not possible on a pipe; an error says where
     * it stopped, and the exit status says it failed. */
    while ((n = trace_read(&t, r, sizeof r / sizeof r[0])) > 0)
        for (long i = 0; i < n; i++) {
            const struct trace_rec *x = &r[i];
            static const char kind[] = "ILSM";
            if (x->kind == TREC_I)
                printf("I  %08llx,%u", (unsigned long long)x->addr, x->size);
            else
                printf(" %c %08llx,%u", kind[x->kind & 3], (unsigned long long)x->addr, x->size);
            if (x->kind == TREC_I && (x->flags & TREC_F_BRANCH))
                printf(" %s %s", br[TREC_BR(x->flags)],
                       x->flags & TREC_F_TAKEN ? "taken" : "not-taken");
            if (x->kind != TREC_I && (x->flags & 4))
                printf(" dep");
            putchar('\n');
        }
    trace_close(&t);
    if (fflush(stdout) || ferror(stdout)) {
        cli_error("trace", "dump: cannot write: %s", strerror(errno));
        return 1;
    }
    if (n < 0) {
        cli_error("trace", "%s", t.err.msg);
        return 1;
    }
    return 0;
}

int cli_trace(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(trace_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "record"))
        return trace_record(argc - 1, argv + 1);
    if (!strcmp(argv[1], "dump"))
        return trace_dump(argc - 1, argv + 1);
    cli_error("trace", "unknown subcommand '%s' (record, dump)", argv[1]);
    return 2;
}
