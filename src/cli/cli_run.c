/* qosim run SCENARIO: runs a scenario and reports each task's ground truth
 * per phase (a table on standard output) and per interval (--json, --csv,
 * --plot). */
#include "cli.h"

#include "cli_qos.h"
#include "drv/qos_scen.h"
#include "sim/scen/run.h"
#include "util/conf.h"
#include "util/json.h"
#include "util/ofile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
    "usage: qosim run SCENARIO [--json FILE] [--csv FILE] [--plot FILE.svg|FILE.png|-]\n"
    "                          [--only TASK[,TASK...]] [--seed N] [--quiet]\n"
    "Runs a scenario (docs/scenarios.md) and prints, for each phase and task, IPC,\n"
    "LLC misses per kilo-instruction, LLC occupancy and memory bandwidth.\n"
    "  --json FILE   every interval and phase as JSON (docs/scenarios.md gives the shape)\n"
    "  --csv FILE    one row per task per interval\n"
    "  --plot FILE   IPC and LLC occupancy of each task over time, through gnuplot\n"
    "  FILE '-' is standard output (then no table); outputs are written whole or not\n"
    "  at all, FIFOs and devices are written through, links followed (docs/scenarios.md)\n"
    "  --only LIST   run only these tasks (for example the victim alone)\n"
    "  --seed N      override the scenario's seed\n"
    "  --quiet       no table, no progress bar\n";

#define RUN_NOUT 3 /* --json, --csv, --plot */

struct rows {
    struct run_row *v;
    size_t n, cap;
    int fail;
    int bar; /* progress bar shown */
};

static void keep_row(void *ctx, const struct run_row *r)
{
    struct rows *rs = ctx;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 256;
        struct run_row *v = realloc(rs->v, cap * sizeof *v);
        if (!v) {
            rs->fail = 1;
            return;
        }
        rs->v = v;
        rs->cap = cap;
    }
    rs->v[rs->n++] = *r;
}

static void progress(void *ctx, double done)
{
    struct rows *rs = ctx;
    if (!rs->bar)
        return;
    int w = 40, k = (int)(done * w + 0.5);
    fprintf(stderr, "\r[%.*s%*s] %3d%%", k, "========================================", w - k, "",
            (int)(done * 100 + 0.5));
    if (done >= 1)
        fputs("\r\033[K", stderr);
    fflush(stderr);
}

static void json_row(struct json *j, const struct scen *s, const struct run_row *r)
{
    json_obj_begin(j, NULL);
    json_str(j, "task", s->task[r->task].name);
    json_u64(j, "instructions", r->instr);
    json_u64(j, "cycles", r->cycles);
    json_f64(j, "ipc", r->ipc);
    json_obj_begin(j, "references");
    for (int l = 0; l < PLAT_NLEVEL; l++)
        if (s->plat.cache[l].present)
            json_u64(j, plat_level_name[l], r->ref[l]);
    json_obj_end(j);
    json_obj_begin(j, "misses");
    for (int l = 0; l < PLAT_NLEVEL; l++)
        if (s->plat.cache[l].present)
            json_u64(j, plat_level_name[l], r->miss[l]);
    json_obj_end(j);
    json_u64(j, "llc_occupancy_bytes", r->llc_bytes);
    json_u64(j, "tag_occupancy_bytes", r->tag_bytes);
    json_u64(j, "tag_occupancy_estimate_bytes", r->est_bytes);
    json_u64(j, "mem_read_bytes", r->rd_bytes);
    json_u64(j, "mem_write_bytes", r->wr_bytes);
    json_f64(j, "mem_read_bytes_per_sec", r->rd_bw);
    json_f64(j, "mem_write_bytes_per_sec", r->wr_bw);
    if (r->mon) { /* what software read from the monitoring registers */
        json_obj_begin(j, "monitor");
        json_u64(j, s->plat.vendor == PLAT_RISCV ? "mcid" : "rmid", r->mon_id);
        json_u64(j, "occupancy_bytes", r->mon_occ_bytes);
        json_u64(j, "total_bytes", r->mon_rd_bytes);
        json_u64(j, "local_bytes", r->mon_local_bytes);
        json_f64(j, "total_bytes_per_sec", r->mon_rd_bw);
        json_f64(j, "local_bytes_per_sec", r->mon_local_bw);
        json_u64(j, "unavailable", r->mon_unavail);
        json_obj_end(j);
    }
    json_obj_end(j);
}

static void write_json(FILE *f, const struct run *run, const struct rows *rs)
{
    const struct scen *s = run->s;
    struct json j;
    json_init(&j, f);
    json_obj_begin(&j, NULL);
    json_str(&j, "scenario", s->file);
    json_str(&j, "platform", s->plat.name);
    json_u64(&j, "seed", s->seed);
    json_f64(&j, "duration", s->duration);
    json_f64(&j, "interval", s->interval);
    json_f64(&j, "settle", s->settle);
    json_arr_begin(&j, "tasks");
    for (unsigned i = 0; i < s->ntask; i++) {
        json_obj_begin(&j, NULL);
        json_str(&j, "name", s->task[i].name);
        json_u64(&j, "cpu", s->task[i].cpu);
        json_u64(&j, "class", run->task[i].cls);
        json_u64(&j, "tag", run->task[i].tag);
        if (s->qos.present)
            json_str(&j, "group",
                     s->qos.task_grp[i] < 0 ? "default" : s->qos.grp[s->qos.task_grp[i]]);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_arr_begin(&j, "phases");
    for (unsigned p = 0; p < s->nphase; p++) {
        json_obj_begin(&j, NULL);
        json_str(&j, "name", s->phase[p].name);
        json_f64(&j, "at", s->phase[p].at);
        json_arr_begin(&j, "tasks");
        for (unsigned i = 0; i < s->ntask; i++)
            json_row(&j, s, &run->phase_row[(size_t)p * s->ntask + i]);
        json_arr_end(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_arr_begin(&j, "intervals");
    for (size_t k = 0; k < rs->n; k += s->ntask) {
        json_obj_begin(&j, NULL);
        json_f64(&j, "t0", rs->v[k].t0);
        json_f64(&j, "t1", rs->v[k].t1);
        json_str(&j, "phase", s->phase[rs->v[k].phase].name);
        json_arr_begin(&j, "tasks");
        for (unsigned i = 0; i < s->ntask && k + i < rs->n; i++)
            json_row(&j, s, &rs->v[k + i]);
        json_arr_end(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    fputc('\n', f);
}

static void write_csv(FILE *f, const struct run *run, const struct rows *rs)
{
    const struct scen *s = run->s;
    fputs("t0,t1,phase,task,instructions,cycles,ipc,l1i_misses,l1d_misses,l2_misses,l3_misses,"
          "llc_occupancy_bytes,tag_occupancy_bytes,tag_occupancy_estimate_bytes,mem_read_bytes,"
          "mem_write_bytes,mem_read_bytes_per_sec,mem_write_bytes_per_sec",
          f);
    int mon = run->hooks.mon != NULL;
    fputs(!mon ? "" : s->plat.vendor == PLAT_RISCV ? ",mcid" : ",rmid", f);
    fputs(mon ? ",mon_occupancy_bytes,mon_total_bytes,mon_local_bytes,"
                "mon_total_bytes_per_sec,mon_local_bytes_per_sec,mon_unavailable\n"
              : "\n",
          f);
    for (size_t k = 0; k < rs->n; k++) {
        const struct run_row *r = &rs->v[k];
        fprintf(f,
                "%.9g,%.9g,%s,%s,%llu,%llu,%.4f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6g,"
                "%.6g",
                r->t0, r->t1, s->phase[r->phase].name, s->task[r->task].name,
                (unsigned long long)r->instr, (unsigned long long)r->cycles, r->ipc,
                (unsigned long long)r->miss[0], (unsigned long long)r->miss[1],
                (unsigned long long)r->miss[2], (unsigned long long)r->miss[3],
                (unsigned long long)r->llc_bytes, (unsigned long long)r->tag_bytes,
                (unsigned long long)r->est_bytes, (unsigned long long)r->rd_bytes,
                (unsigned long long)r->wr_bytes, r->rd_bw, r->wr_bw);
        if (mon)
            fprintf(f, ",%u,%llu,%llu,%llu,%.6g,%.6g,%u", r->mon_id,
                    (unsigned long long)r->mon_occ_bytes, (unsigned long long)r->mon_rd_bytes,
                    (unsigned long long)r->mon_local_bytes, r->mon_rd_bw, r->mon_local_bw,
                    r->mon_unavail);
        fputc('\n', f);
    }
}

/* A string in gnuplot's single quotes, where '' stands for one quote. */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        fprintf(f, *s == '\'' ? "''" : "%c", *s);
    fputc('\'', f);
}

static void gp_phase_labels(FILE *f, const struct scen *s)
{
    for (unsigned p = 0; p < s->nphase; p++) {
        fputs("set label ", f);
        gp_str(f, s->phase[p].name);
        fprintf(f, " at %.9g, graph 1.04 tc rgb 'gray20'\n", s->phase[p].at * 1e3);
    }
}

/* A gnuplot program with the data inline: IPC above, LLC occupancy below,
 * phase starts as dashed lines. */
static void write_gnuplot(FILE *f, const struct run *run, const struct rows *rs, int png)
{
    const struct scen *s = run->s;
    for (unsigned i = 0; i < s->ntask; i++) {
        fprintf(f, "$t%u << EOD\n", i);
        for (size_t k = i; k < rs->n; k += s->ntask)
            fprintf(f, "%.9g %.6f %.6f\n", rs->v[k].t1 * 1e3, rs->v[k].ipc,
                    rs->v[k].llc_bytes / 1048576.0);
        fputs("EOD\n", f);
    }
    fprintf(f, "set terminal %s size 1000,700 font ',11'\n", png ? "pngcairo" : "svg");
    fputs("set output", f); /* standard output: plot() gives it the output file */
    fputs("\nset multiplot layout 2,1\nset grid\nset key outside right\n", f);
    fprintf(f, "set xrange [0:%.9g]\n", s->duration * 1e3);
    for (unsigned p = 0; p < s->nphase; p++)
        fprintf(f, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 lc rgb 'gray40'\n",
                s->phase[p].at * 1e3, s->phase[p].at * 1e3);
    gp_phase_labels(f, s);
    const char *base = strrchr(s->file, '/') ? strrchr(s->file, '/') + 1 : s->file;
    char title[512];
    snprintf(title, sizeof title, "%s on %s: IPC", base, s->plat.name);
    fputs("set title ", f);
    gp_str(f, title);
    fputs(" offset 0,0.6\nset ylabel 'IPC'\nset yrange [0:*]\n", f);
    for (int panel = 0; panel < 2; panel++) {
        if (panel) {
            fputs("unset label\nset title 'LLC occupancy' offset 0,0.6\n"
                  "set ylabel 'MiB'\nset xlabel 'time (ms)'\n",
                  f);
            gp_phase_labels(f, s);
        }
        fputs("plot ", f);
        for (unsigned i = 0; i < s->ntask; i++) {
            fprintf(f, "%s$t%u using 1:%d with lines lw 2 title ", i ? ", " : "", i, panel ? 3 : 2);
            gp_str(f, s->task[i].name);
        }
        fputc('\n', f);
    }
    fputs("unset multiplot\n", f);
}

/* gnuplot draws into the output's file descriptor (its standard output):
 * a regular file's temporary, a FIFO, or qosim's standard output for
 * "--plot -". The caller commits or drops the output. */
static int plot(const struct run *run, const struct rows *rs, struct ofile *o)
{
    size_t n = strlen(o->path);
    int png = n > 4 && !strcmp(o->path + n - 4, ".png"); /* the suffix was checked; "-": SVG */
    const char *gp = getenv("QOSIM_GNUPLOT") ? getenv("QOSIM_GNUPLOT") : "gnuplot";
    int p[2];
    fflush(stdout);
    if (pipe2(p, O_CLOEXEC)) {
        cli_error("run", "cannot start gnuplot: %s", strerror(errno));
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(p[0], 0) < 0 || dup2(o->fd, 1) < 0)
            _exit(127);
        execl("/bin/sh", "sh", "-c", gp, (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    FILE *g = pid < 0 ? NULL : fdopen(p[1], "w");
    if (!g) {
        cli_error("run", "cannot start gnuplot: %s", strerror(errno));
        close(p[1]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return 1;
    }
    /* A plotter that dies early must not kill qosim with SIGPIPE: its exit
     * status says what happened, and the output must be dropped. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ign, &old);
    write_gnuplot(g, run, rs, png);
    fclose(g);
    sigaction(SIGPIPE, &old, NULL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (st == 0)
        return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        cli_error("run", "--plot needs gnuplot, which was not found (apt-get install "
                         "gnuplot-nox)");
    else
        cli_error("run", "gnuplot failed to draw %s", o->path);
    return 1;
}

static void print_table(const struct run *run)
{
    const struct scen *s = run->s;
    enum plat_level llc = run->m.llc;
    printf("%s on %s, %g ms, statistics after %g ms of each phase\n\n", s->file, s->plat.name,
           s->duration * 1e3, s->settle * 1e3);
    int mon = run->hooks.mon != NULL;
    printf("%-14s %-14s %7s %9s %9s %9s %9s", "phase", "task", "IPC", "LLC MPKI", "LLC MiB",
           "rd GB/s", "wr GB/s");
    /* Beside the ground truth, what software reads for the task's RMID
     * (x86: CMT occupancy, MBM bytes) or MCID (CBQRI: capacity and
     * bandwidth controllers' counters). */
    if (s->plat.vendor == PLAT_RISCV)
        printf(mon ? " %5s %9s %9s\n" : "\n", "MCID", "CC MiB", "BC GB/s");
    else
        printf(mon ? " %5s %9s %9s\n" : "\n", "RMID", "CMT MiB", "MBM GB/s");
    for (unsigned p = 0; p < s->nphase; p++)
        for (unsigned i = 0; i < s->ntask; i++) {
            const struct run_row *r = &run->phase_row[(size_t)p * s->ntask + i];
            printf("%-14s %-14s %7.3f %9.2f %9.2f %9.2f %9.2f", i ? "" : s->phase[p].name,
                   s->task[i].name, r->ipc,
                   r->instr ? 1000.0 * (double)r->miss[llc] / (double)r->instr : 0,
                   r->llc_bytes / 1048576.0, r->rd_bw / 1e9, r->wr_bw / 1e9);
            if (mon)
                printf(" %5u %9.2f %9.2f", r->mon_id, r->mon_occ_bytes / 1048576.0,
                       r->mon_rd_bw / 1e9);
            putchar('\n');
        }
}

/* An output option names one file: a second one is a mistake, not an override. */
static int set_once(const char *opt, const char **slot, const char *v)
{
    if (*slot) {
        cli_error("run", "%s given twice ('%s' and '%s')", opt, *slot, v);
        return 2;
    }
    *slot = v;
    return 0;
}

/* No output may name another, or a file the run reads: the scenario, its
 * platform profile, a task's trace. */
static int check_outputs(const struct ofile_name *out, size_t nout, const struct scen *s)
{
    struct ofile_name *in = calloc(s->ntask + 2, sizeof *in);
    if (!in) {
        cli_error("run", "out of memory");
        return 1;
    }
    size_t nin = 0;
    in[nin++] = (struct ofile_name){"the scenario", s->file};
    if (s->plat.file[0])
        in[nin++] = (struct ofile_name){"the platform profile", s->plat.file};
    for (unsigned i = 0; i < s->ntask; i++)
        if (s->task[i].is_trace)
            in[nin++] = (struct ofile_name){"the trace", s->task[i].trace};
    struct err e;
    int rc = ofile_distinct(out, nout, in, nin, &e);
    free(in);
    if (rc)
        cli_error("run", "%s", e.msg);
    return rc ? 2 : 0;
}

/* Opened before the run, so that an output that cannot be written fails at
 * once rather than after a long simulation. */
static int open_outputs(const struct ofile_name *out, struct ofile *of, size_t n)
{
    struct err e;
    for (size_t i = 0; i < n; i++) {
        if (out[i].path && ofile_open(&of[i], out[i].path, &e)) {
            cli_error("run", "%s", e.msg);
            for (size_t k = 0; k < i; k++)
                ofile_abort(&of[k]);
            return 1;
        }
    }
    return 0;
}

int cli_run(int argc, char **argv)
{
    const char *path = NULL, *json = NULL, *csv = NULL, *plotf = NULL, *only = NULL, *seed = NULL;
    int quiet = 0, rc2 = 0;
    for (int i = 1; i < argc; i++) {
        int missing = 0;
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if ((v = cli_optval(argc, argv, &i, "--json", &missing)))
            rc2 = set_once("--json", &json, v);
        else if ((v = cli_optval(argc, argv, &i, "--csv", &missing)))
            rc2 = set_once("--csv", &csv, v);
        else if ((v = cli_optval(argc, argv, &i, "--plot", &missing)))
            rc2 = set_once("--plot", &plotf, v);
        else if ((v = cli_optval(argc, argv, &i, "--only", &missing)))
            only = v;
        else if ((v = cli_optval(argc, argv, &i, "--seed", &missing)))
            seed = v;
        else if (missing) {
            cli_error("run", "%.*s needs a value", (int)strcspn(argv[i], "="), argv[i]);
            return 2;
        } else if (!strcmp(argv[i], "--quiet"))
            quiet = 1;
        else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("run", "unknown option '%s'\n%s", argv[i], usage);
            return 2;
        } else if (path) {
            cli_error("run", "one scenario at a time ('%s' and '%s')", path, argv[i]);
            return 2;
        } else
            path = argv[i];
        if (rc2)
            return rc2;
    }
    if (!path) {
        cli_error("run", "no scenario given\n%s", usage);
        return 2;
    }
    if (plotf && strcmp(plotf, "-")) {
        size_t n = strlen(plotf);
        if (n < 5 || (strcmp(plotf + n - 4, ".svg") && strcmp(plotf + n - 4, ".png"))) {
            cli_error("run",
                      "--plot %s: the name must end in .svg or .png (or be - for SVG on "
                      "standard output)",
                      plotf);
            return 2;
        }
    }
    struct scen s;
    struct err e;
    if (scen_load(&s, path, &qos_scen, &e)) {
        cli_error("run", "%s", e.msg);
        return 2;
    }
    if (seed) {
        if (conf_parse_u64(seed, &s.seed)) {
            cli_error("run", "--seed '%s': expected a non-negative integer", seed);
            scen_free(&s);
            return 2;
        }
    }
    if (only && scen_only(&s, only, &e)) {
        cli_error("run", "%s", e.msg);
        scen_free(&s);
        return 2;
    }
    /* The order they are written in; the plot is last, being the slowest. */
    const struct ofile_name outs[RUN_NOUT] = {{"--json", json}, {"--csv", csv}, {"--plot", plotf}};
    static struct ofile of[RUN_NOUT];
    int bad = check_outputs(outs, RUN_NOUT, &s);
    if (!bad) {
        ofile_trap_signals(NULL);
        bad = open_outputs(outs, of, RUN_NOUT);
    }
    if (bad) {
        scen_free(&s);
        return bad;
    }
    /* The table would be mixed into an output sent to standard output. */
    for (int k = 0; k < RUN_NOUT; k++)
        quiet |= ofile_is_stdout(&of[k]);
    struct run run;
    struct rows rs = {.bar = !quiet && isatty(2)};
    /* A qos section is carried out by the driver, through the registers of
     * the platform's model, as an OS would on the real machine. */
    static struct cli_qos hq;
    int rc = run_init(&run, &s, &e);
    if (!rc && s.qos.present && (rc = cli_qos_init(&hq, &run, &e))) {
        cli_error("run", "%s", e.msg);
        for (int k = 0; k < RUN_NOUT; k++)
            ofile_abort(&of[k]);
        run_free(&run);
        scen_free(&s);
        return 2;
    }
    if (!rc)
        rc = run_all(&run, keep_row, progress, &rs, &e);
    int status = 0;
    if (rc || rs.fail) {
        cli_error("run", "%s", rs.fail ? "out of memory" : e.msg);
        status = 1;
    }
    if (!status && json)
        write_json(of[0].f, &run, &rs);
    if (!status && csv)
        write_csv(of[1].f, &run, &rs);
    if (!status && plotf)
        status = plot(&run, &rs, &of[2]);
    struct ofile *const ofs[RUN_NOUT] = {&of[0], &of[1], &of[2]};
    if (status) {
        for (int k = 0; k < RUN_NOUT; k++)
            ofile_abort(&of[k]);
    } else if (ofile_commit_all(ofs, RUN_NOUT, &e)) {
        cli_error("run", "%s", e.msg);
        status = 1;
    }
    if (!status && !quiet)
        print_table(&run);
    cli_qos_free(&hq);
    if (run.m.cpu)
        run_free(&run);
    free(rs.v);
    scen_free(&s);
    return status;
}
