/* qosim sweep: a scenario over axes of settings, planned into a folder,
 * run there by an executor (this machine's processors, or SLURM array
 * jobs), then collected into one table (docs/sweeps.md). */
#include "cli.h"

#include "sweep/collect.h"
#include "sweep/exec.h"
#include "sweep/plan.h"
#include "sweep/plot.h"
#include "util/conf.h"

#include <json-c/json.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static const char usage[] =
    "usage: qosim sweep plan FILE -o DIR\n"
    "       qosim sweep run DIR [--executor local|slurm] [-j N] [--retry-failed] [--quiet]\n"
    "                           [--partition P] [--time T] [--mem M] [--throttle N]\n"
    "                           [--max-array N]\n"
    "       qosim sweep status DIR\n"
    "       qosim sweep collect DIR [--csv FILE] [--jsonl FILE] [--allow-missing]\n"
    "       qosim sweep plot DIR [--metric M] [--x AXIS] [--y AXIS] [--task T] [--phase P]\n"
    "                            [--where AXIS=VALUE]... [--logx] -o FILE.svg|FILE.png|-\n"
    "       qosim sweep point DIR INDEX | --list FILE   (what each SLURM array task runs)\n"
    "A sweep file (docs/sweeps.md) sets scenario keys over axes; plan writes each\n"
    "point as a complete scenario into DIR; run runs the points not done yet (a\n"
    "point is redone when its scenario, an input file or qosim changes); status\n"
    "counts and names them; collect writes DIR/results.csv and DIR/results.jsonl;\n"
    "plot draws a metric over one axis (lines) or two (a heatmap).\n"
    "  -j N            local: points at once (default: the processors)\n"
    "  --retry-failed  run only the points that failed\n"
    "  --partition, --time, --mem, --throttle (the array's %N), --max-array\n"
    "                  slurm: sbatch's options (else the sweep file's slurm: keys)\n";

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("qosim sweep: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n", stderr);
    fputs(usage, stderr);
    return 2;
}

/* The sweep folder, once; anything else that is not an option's value is
 * bad usage (said, and 1 returned). */
static int operand(const char *a, const char **dir)
{
    if (a[0] == '-')
        return bad_usage("unknown option '%s'", a) != 0;
    if (*dir)
        return bad_usage("one sweep folder, not also '%s'", a) != 0;
    *dir = a;
    return 0;
}

static int parse_count(const char *s, unsigned *out)
{
    uint64_t v;
    if (conf_parse_u64(s, &v) || !v || v > UINT_MAX)
        return -1;
    *out = (unsigned)v;
    return 0;
}

static int cmd_plan(int argc, char **argv)
{
    const char *file = NULL, *dir = NULL;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if ((v = cli_optval(argc, argv, &i, "-o", &missing)))
            dir = v;
        else if (missing)
            return bad_usage("%s needs a folder", argv[i]);
        else if (argv[i][0] == '-')
            return bad_usage("unknown option '%s'", argv[i]);
        else if (file)
            return bad_usage("one sweep file, not also '%s'", argv[i]);
        else
            file = argv[i];
    }
    if (!file || !dir)
        return bad_usage("%s", "plan needs a sweep file and -o DIR");
    struct err e;
    size_t n = 0;
    if (sweep_plan(file, dir, &n, &e)) {
        cli_error("sweep", "%s", e.msg);
        /* A bad sweep file is bad input as a bad scenario is to run. */
        return e.code == -QOSIM_EIO || e.code == -QOSIM_ENOMEM ? 1 : 2;
    }
    printf("%zu point%s planned in %s\n", n, n == 1 ? "" : "s", dir);
    return 0;
}

/* This binary's own path, which the points (and array tasks on other
 * hosts sharing the folder) run. */
static int self_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    return 0;
}

/* The sweep file's slurm: keys as planned (DIR/sweep.yaml), under what the
 * command line gave. */
static int slurm_defaults(const struct sweep *sw, struct sweep_run_opts *o, struct conf *c,
                          struct err *e)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/sweep.yaml", sw->dir);
    int rc = conf_load_file(c, path, e);
    struct conf_node *s = rc ? NULL : conf_get(c->root, "slurm");
    if (rc || !s)
        return rc;
    uint64_t u = 0, m = 0;
    if (!o->partition)
        rc = conf_str(c, s, "partition", CONF_OPT, &o->partition, e);
    if (!rc && !o->time)
        rc = conf_str(c, s, "time", CONF_OPT, &o->time, e);
    if (!rc && !o->mem)
        rc = conf_str(c, s, "mem", CONF_OPT, &o->mem, e);
    if (!rc)
        rc = conf_u64(c, s, "throttle", CONF_OPT, 1, UINT_MAX, &u, e);
    if (!rc)
        rc = conf_u64(c, s, "max_array", CONF_OPT, 1, UINT_MAX, &m, e);
    if (!o->throttle)
        o->throttle = (unsigned)u;
    if (!o->max_array)
        o->max_array = (unsigned)m;
    return rc;
}

/* Each point's state now; the count of each. */
static enum sweep_state *states(const struct sweep *sw, size_t cnt[3])
{
    enum sweep_state *st = calloc(sw->npoint, sizeof *st);
    cnt[0] = cnt[1] = cnt[2] = 0;
    for (size_t i = 0; st && i < sw->npoint; i++)
        cnt[st[i] = sweep_state_now(sw, i)]++;
    return st;
}

/* An output that would replace one of the sweep's own files (its
 * manifest, its sweep file, anything under points/ or slurm/) is refused. */
static int own_file(const struct sweep *sw, const char *opt, const char *path, struct err *e)
{
    char top[PATH_MAX], dir[PATH_MAX], rp[PATH_MAX * 2 + 2];
    if (!path || !strcmp(path, "-") || !realpath(sw->dir, top))
        return 0;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(rp, sizeof rp, "%.*s", slash ? (int)(slash - path + (slash == path)) : 1,
             slash ? path : ".");
    if (!realpath(rp, dir))
        return 0; /* the output's own check says why */
    snprintf(rp, sizeof rp, "%s/%s", dir, base);
    size_t n = strlen(top);
    if (strncmp(rp, top, n) || rp[n] != '/')
        return 0;
    const char *in = rp + n + 1;
    if (!strcmp(in, "manifest.tsv") || !strcmp(in, "sweep.yaml") || !strcmp(in, "run.lock") ||
        !strcmp(in, "points") || !strncmp(in, "points/", 7) || !strcmp(in, "slurm") ||
        !strncmp(in, "slurm/", 6))
        return err_set(e, -QOSIM_EINVAL, "%s %s would replace the sweep's own %s", opt, path, in);
    return 0;
}

/* One run of a sweep folder at a time (two would run every point twice):
 * an exclusive lock on DIR/run.lock, held until the command ends. */
static int lock_sweep(const struct sweep *sw, struct err *e)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/run.lock", sw->dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        close(fd);
        return err_set(e, -QOSIM_EINVAL,
                       "%s: another 'qosim sweep run' is running on this folder (%s is locked)",
                       sw->dir, path);
    }
    return fd; /* closed at exit, which ends the lock */
}

/* The point's last run failed, under this key or an older one (its input
 * changed since, as when the input is what was fixed). */
static int record_failed(const struct sweep *sw, size_t i)
{
    char path[4300];
    struct err e;
    sweep_point_path(sw, i, "record.json", path, sizeof path);
    struct json_object *r = access(path, R_OK) ? NULL : sweep_json_read(path, &e), *v;
    int failed = r && json_object_object_get_ex(r, "status", &v) &&
                 !strcmp(json_object_get_string(v), "failed");
    json_object_put(r);
    return failed;
}

static int cmd_run(int argc, char **argv)
{
    const char *dir = NULL, *ex = "local";
    struct sweep_run_opts o = {.progress = isatty(2)};
    int retry = 0;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if ((v = cli_optval(argc, argv, &i, "--executor", &missing)))
            ex = v;
        else if ((v = !strncmp(argv[i], "-j", 2) && argv[i][2] && argv[i][2] != '='
                          ? argv[i] + 2 /* -j2, as make and xargs take it */
                          : cli_optval(argc, argv, &i, "-j", &missing))) {
            if (parse_count(v, &o.jobs))
                return bad_usage("-j wants a count above 0, not '%s'", v);
        } else if ((v = cli_optval(argc, argv, &i, "--partition", &missing)))
            o.partition = v;
        else if ((v = cli_optval(argc, argv, &i, "--time", &missing)))
            o.time = v;
        else if ((v = cli_optval(argc, argv, &i, "--mem", &missing)))
            o.mem = v;
        else if ((v = cli_optval(argc, argv, &i, "--throttle", &missing))) {
            if (parse_count(v, &o.throttle))
                return bad_usage("--throttle wants a count above 0, not '%s'", v);
        } else if ((v = cli_optval(argc, argv, &i, "--max-array", &missing))) {
            if (parse_count(v, &o.max_array))
                return bad_usage("--max-array wants a count above 0, not '%s'", v);
        } else if (missing)
            return bad_usage("%s needs a value", argv[i]);
        else if (!strcmp(argv[i], "--retry-failed"))
            retry = 1;
        else if (!strcmp(argv[i], "--quiet"))
            o.progress = 0;
        else if (operand(argv[i], &dir))
            return 2;
    }
    if (!dir)
        return bad_usage("%s", "run needs the sweep folder");
    const struct sweep_exec *exec = !strcmp(ex, "local")   ? &sweep_exec_local
                                    : !strcmp(ex, "slurm") ? &sweep_exec_slurm
                                                           : NULL;
    if (!exec)
        return bad_usage("--executor is local or slurm, not '%s'", ex);
    if (exec == &sweep_exec_local && (o.partition || o.time || o.mem || o.throttle || o.max_array))
        return bad_usage("%s", "--partition, --time, --mem, --throttle and --max-array are "
                               "--executor slurm's");
    char self[PATH_MAX];
    if (self_path(self, sizeof self)) {
        cli_error("sweep", "cannot find the qosim binary (/proc/self/exe)");
        return 1;
    }
    o.qosim = self;
    struct sweep sw;
    struct err e;
    struct conf c = {0};
    if (sweep_open(&sw, dir, &e) || lock_sweep(&sw, &e) < 0 ||
        (exec == &sweep_exec_slurm && slurm_defaults(&sw, &o, &c, &e))) {
        cli_error("sweep", "%s", e.msg);
        conf_free(&c);
        return 1;
    }
    size_t cnt[3];
    enum sweep_state *st = states(&sw, cnt);
    size_t *todo = calloc(sw.npoint, sizeof *todo), n = 0;
    if (!st || !todo) {
        cli_error("sweep", "out of memory");
        return 1;
    }
    for (size_t i = 0; i < sw.npoint; i++)
        if (retry ? st[i] != SWEEP_DONE && record_failed(&sw, i) : st[i] == SWEEP_PENDING)
            todo[n++] = i;
    fprintf(stderr, "%zu points: %zu done, %zu failed, %zu to run (%s)\n", sw.npoint,
            cnt[SWEEP_DONE], cnt[SWEEP_FAILED], n, exec->name);
    struct sweep_tally t = {0};
    int rc = n ? exec->run(&sw, todo, n, &o, &t, &e) : 0;
    if (rc)
        cli_error("sweep", "%s", e.msg);
    size_t failed = (retry ? 0 : cnt[SWEEP_FAILED]) + t.failed;
    fprintf(stderr, "this run: %zu done, %zu failed, %zu not finished\n", t.done, t.failed,
            t.interrupted);
    if (failed && !rc)
        fprintf(stderr,
                "%zu point%s failed: 'qosim sweep status %s' says why; --retry-failed runs "
                "them again\n",
                failed, failed == 1 ? "" : "s", dir);
    free(todo);
    free(st);
    conf_free(&c);
    sweep_close(&sw);
    if (t.signal)
        return 128 + t.signal;
    return rc || failed || t.interrupted ? 1 : 0;
}

static void point_axes(const struct sweep *sw, size_t i, FILE *f)
{
    fputs(" (", f);
    for (unsigned a = 0; a < sw->naxis; a++)
        fprintf(f, "%s%s=%s", a ? ", " : "", sw->axis[a], sw->val[i][a]);
    fputs(")", f);
}

/* Why a failed point failed, from its record: "exit status 1: <its last
 * line of standard error>". */
static void failure(const struct sweep *sw, size_t i, FILE *f)
{
    char path[4300];
    sweep_point_path(sw, i, "record.json", path, sizeof path);
    struct err e;
    struct json_object *r = sweep_json_read(path, &e), *v;
    if (!r) {
        fprintf(f, "%s", e.msg);
        return;
    }
    /* A record without either is of a run that left none (a lost array
     * task): its tail says what happened. */
    const char *sep = "";
    if (json_object_object_get_ex(r, "signal", &v)) {
        fprintf(f, "killed by signal %d", json_object_get_int(v));
        sep = ": ";
    } else if (json_object_object_get_ex(r, "exit_code", &v)) {
        fprintf(f, "exit status %d", json_object_get_int(v));
        sep = ": ";
    }
    if (json_object_object_get_ex(r, "stderr_tail", &v)) {
        char tail[2100];
        snprintf(tail, sizeof tail, "%s", json_object_get_string(v));
        size_t k = strlen(tail);
        while (k && tail[k - 1] == '\n')
            tail[--k] = '\0';
        char *last = strrchr(tail, '\n');
        if (k)
            fprintf(f, "%s%s", sep, last ? last + 1 : tail);
    }
    json_object_put(r);
}

static int cmd_status(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-')
        return bad_usage("%s", "status needs the sweep folder, alone");
    struct sweep sw;
    struct err e;
    if (sweep_open(&sw, argv[1], &e)) {
        cli_error("sweep", "%s", e.msg);
        return 1;
    }
    size_t cnt[3];
    enum sweep_state *st = states(&sw, cnt);
    if (!st) {
        cli_error("sweep", "out of memory");
        return 1;
    }
    printf("%zu points: %zu done, %zu failed, %zu pending\n", sw.npoint, cnt[SWEEP_DONE],
           cnt[SWEEP_FAILED], cnt[SWEEP_PENDING]);
    size_t shown = 0;
    for (size_t i = 0; i < sw.npoint; i++) {
        if (st[i] == SWEEP_DONE || (st[i] == SWEEP_PENDING && shown >= 20))
            continue;
        printf("%s %0*zu", st[i] == SWEEP_FAILED ? "failed" : "pending", (int)sw.width, i);
        point_axes(&sw, i, stdout);
        if (st[i] == SWEEP_FAILED) {
            fputs(": ", stdout);
            failure(&sw, i, stdout);
        } else {
            shown++;
            /* What --retry-failed also takes: its last run failed, and
             * something it reads has changed since. */
            if (record_failed(&sw, i)) {
                fputs(": its last run failed, and an input changed since: ", stdout);
                failure(&sw, i, stdout);
            }
        }
        putchar('\n');
    }
    if (cnt[SWEEP_PENDING] > shown)
        printf("and %zu more pending\n", cnt[SWEEP_PENDING] - shown);
    int rc = cnt[SWEEP_DONE] == sw.npoint ? 0 : 1;
    free(st);
    sweep_close(&sw);
    return rc;
}

static int cmd_collect(int argc, char **argv)
{
    struct sweep_collect_opts o = {0};
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if ((v = cli_optval(argc, argv, &i, "--csv", &missing)))
            o.csv = v;
        else if ((v = cli_optval(argc, argv, &i, "--jsonl", &missing)))
            o.jsonl = v;
        else if (missing)
            return bad_usage("%s needs a file", argv[i]);
        else if (!strcmp(argv[i], "--allow-missing"))
            o.allow_missing = 1;
        else if (operand(argv[i], &dir))
            return 2;
    }
    if (!dir)
        return bad_usage("%s", "collect needs the sweep folder");
    struct sweep sw;
    struct err e;
    if (sweep_open(&sw, dir, &e) || own_file(&sw, "--csv", o.csv, &e) ||
        own_file(&sw, "--jsonl", o.jsonl, &e) || sweep_collect(&sw, &o, &e)) {
        cli_error("sweep", "%s", e.msg);
        sweep_close(&sw);
        /* Outputs that clash are bad usage, as for every command. */
        return e.code == -QOSIM_EINVAL ? 2 : 1;
    }
    sweep_close(&sw);
    return 0;
}

static int cmd_plot(int argc, char **argv)
{
    struct sweep_plot_opts o = {0};
    const char *dir = NULL, **where = calloc((size_t)argc, sizeof *where);
    if (!where)
        return 1;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        int missing = 0;
        const char *v;
        if ((v = cli_optval(argc, argv, &i, "-o", &missing)))
            o.out = v;
        else if ((v = cli_optval(argc, argv, &i, "--metric", &missing)))
            o.metric = v;
        else if ((v = cli_optval(argc, argv, &i, "--task", &missing)))
            o.task = v;
        else if ((v = cli_optval(argc, argv, &i, "--phase", &missing)))
            o.phase = v;
        else if ((v = cli_optval(argc, argv, &i, "--x", &missing)))
            o.x = v;
        else if ((v = cli_optval(argc, argv, &i, "--y", &missing)))
            o.y = v;
        else if ((v = cli_optval(argc, argv, &i, "--where", &missing))) {
            if (!strchr(v, '=') || v[0] == '=')
                rc = bad_usage("--where wants AXIS=VALUE, not '%s'", v);
            where[o.nwhere++] = v;
        } else if (missing)
            rc = bad_usage("%s needs a value", argv[i]);
        else if (!strcmp(argv[i], "--logx"))
            o.logx = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            rc = bad_usage("unknown option '%s'", argv[i]);
        else if (dir)
            rc = bad_usage("one sweep folder, not also '%s'", argv[i]);
        else
            dir = argv[i];
    }
    if (!rc && (!dir || !o.out))
        rc = bad_usage("%s", "plot needs the sweep folder and -o FILE");
    o.where = where;
    struct sweep sw = {0};
    struct err e;
    if (!rc &&
        (sweep_open(&sw, dir, &e) || own_file(&sw, "-o", o.out, &e) || sweep_plot(&sw, &o, &e))) {
        cli_error("sweep", "%s", e.msg);
        rc = e.code == -QOSIM_EINVAL ? 2 : 1;
    }
    sweep_close(&sw);
    free(where);
    return rc;
}

/* qosim sweep point DIR INDEX, or --list FILE: the point at line
 * $SLURM_ARRAY_TASK_ID (from 0) of FILE. */
static int cmd_point(int argc, char **argv)
{
    const char *dir = NULL, *list = NULL, *idx = NULL;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if ((v = cli_optval(argc, argv, &i, "--list", &missing)))
            list = v;
        else if (missing)
            return bad_usage("%s needs a file", argv[i]);
        else if (argv[i][0] == '-')
            return bad_usage("unknown option '%s'", argv[i]);
        else if (!dir)
            dir = argv[i];
        else if (!idx)
            idx = argv[i];
        else
            return bad_usage("unexpected '%s'", argv[i]);
    }
    if (!dir || !!list == !!idx)
        return bad_usage("%s", "point needs the sweep folder and an INDEX or --list FILE");
    char line[64] = "";
    if (list) {
        const char *task = getenv("SLURM_ARRAY_TASK_ID");
        uint64_t t;
        if (!task || conf_parse_u64(task, &t)) {
            cli_error("sweep", "--list needs SLURM_ARRAY_TASK_ID (it is set in an array task)");
            return 2;
        }
        FILE *f = fopen(list, "r");
        for (uint64_t k = 0; f && k <= t; k++)
            if (!fgets(line, sizeof line, f))
                line[0] = '\0';
        if (f)
            fclose(f);
        line[strcspn(line, "\n")] = '\0';
        if (!line[0]) {
            cli_error("sweep", "%s: no line %s (array task id)", list, task);
            return 1;
        }
        idx = line;
    }
    uint64_t i;
    struct sweep sw;
    struct err e;
    if (sweep_open(&sw, dir, &e)) {
        cli_error("sweep", "%s", e.msg);
        return 1;
    }
    if (conf_parse_u64(idx, &i) || i >= sw.npoint) {
        cli_error("sweep", "%s: no point '%s' (the sweep has %zu)", dir, idx, sw.npoint);
        sweep_close(&sw);
        return 1;
    }
    char self[PATH_MAX];
    int rc = self_path(self, sizeof self)
                 ? err_set(&e, -QOSIM_ENOENT, "cannot find the qosim binary")
                 : sweep_point_run(&sw, (size_t)i, self, &e);
    if (rc)
        cli_error("sweep", "%s", e.msg);
    /* The array task succeeds when the record is written: a failed run
     * is the point's outcome, which status and --retry-failed read. */
    sweep_close(&sw);
    return rc ? 1 : 0;
}

int cli_sweep(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } sub[] = {{"plan", cmd_plan},       {"run", cmd_run},   {"status", cmd_status},
               {"collect", cmd_collect}, {"plot", cmd_plot}, {"point", cmd_point}};
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        if (!strcmp(argv[1], sub[i].name))
            return sub[i].run(argc - 1, argv + 1);
    return bad_usage("unknown subcommand '%s'", argv[1]);
}
