/* qosim run SCENARIO: runs a scenario and reports each task's ground truth
 * per phase (a table on standard output) and per interval (--json, --csv,
 * --plot). */
#include "cli.h"

#include "cli_qos.h"
#include "drv/qos_scen.h"
#include "drv/rdt.h"
#include "sim/scen/run.h"
#include "util/conf.h"
#include "util/gnuplot.h"
#include "util/json.h"
#include "util/ofile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: qosim run SCENARIO [--json FILE] [--csv FILE] [--plot FILE.svg|FILE.png|-]\n"
    "                          [--only TASK[,TASK...]] [--seed N] [--quiet]\n"
    "Runs a scenario (docs/scenarios.md) and prints, for each phase and task, IPC,\n"
    "LLC misses per kilo-instruction, LLC occupancy and memory bandwidth.\n"
    "  --json FILE   every interval and phase as JSON (docs/scenarios.md gives the shape)\n"
    "  --csv FILE    one row per task per interval\n"
    "  --plot FILE   IPC, LLC occupancy and memory bandwidth of each task over time,\n"
    "                with the bandwidth caps and reservations, through gnuplot\n"
    "  FILE '-' is standard output (then no table); outputs are written whole or not\n"
    "  at all, FIFOs and devices are written through, links followed (docs/outputs.md)\n"
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
    if (s->plat.mon.bmec || s->plat.mon.abmc) {
        /* Ground truth per transaction type, what BMEC's bits select
         * (bit i: MACH_TR i, named as resctrl names them). */
        json_obj_begin(j, "traffic");
        for (int k = 0; k < MACH_NTRAFFIC; k++)
            json_u64(j, rdt_bw_type_name[k], r->traffic[k]);
        json_obj_end(j);
    }
    if (s->plat.core.pf.present) { /* hardware prefetches on the task's behalf */
        json_obj_begin(j, "prefetch");
        json_u64(j, "requests", r->pf_req);
        json_u64(j, "useful", r->pf_useful);
        json_u64(j, "mem_read_bytes", r->pf_bytes);
        json_u64(j, "dropped", r->pf_drop);
        json_obj_end(j);
    }
    if (r->mon) { /* what software read from the monitoring registers */
        json_obj_begin(j, "monitor");
        json_u64(j, s->plat.vendor == PLAT_RISCV ? "mcid" : "rmid", r->mon_id);
        json_u64(j, "occupancy_bytes", r->mon_occ_bytes);
        /* An event without an ABMC counter has no value: null. */
        int tot = !(r->mon_unassigned & 1), loc = !(r->mon_unassigned & 2);
        json_u64_or_null(j, "total_bytes", tot, r->mon_rd_bytes);
        json_u64_or_null(j, "local_bytes", loc, r->mon_local_bytes);
        json_f64_or_null(j, "total_bytes_per_sec", tot, r->mon_rd_bw);
        json_f64_or_null(j, "local_bytes_per_sec", loc, r->mon_local_bw);
        json_u64(j, "unavailable", r->mon_unavail);
        json_obj_end(j);
    }
    json_obj_end(j);
}

/* An I/O agent's row: what its DMA did, beside what a task's row says. */
static void json_io_row(struct json *j, const struct scen *s, const struct run_io_row *r)
{
    json_obj_begin(j, NULL);
    json_str(j, "agent", s->io[r->agent].name);
    json_u64(j, "dma_write_bytes", r->dma_wr_bytes);
    json_u64(j, "dma_read_bytes", r->dma_rd_bytes);
    json_f64(j, "dma_bytes_per_sec", r->dma_bw);
    json_u64(j, "l3_write_hits", r->dma.wr_hit);
    json_u64(j, "l3_write_allocations", r->dma.wr_fill);
    json_u64(j, "writes_to_memory", r->dma.wr_mem);
    json_u64(j, "l3_read_hits", r->dma.rd_hit);
    json_u64(j, "reads_from_memory", r->dma.rd_mem);
    json_u64(j, "llc_occupancy_bytes", r->llc_bytes);
    json_u64(j, "tag_occupancy_bytes", r->tag_bytes);
    json_u64(j, "tag_occupancy_estimate_bytes", r->est_bytes);
    json_u64(j, "mem_read_bytes", r->rd_bytes);
    json_u64(j, "mem_write_bytes", r->wr_bytes);
    json_f64(j, "mem_read_bytes_per_sec", r->rd_bw);
    json_f64(j, "mem_write_bytes_per_sec", r->wr_bw);
    json_obj_end(j);
}

/* The I/O agents' rows of phase or interval p, if the scenario has any
 * (without them there is no row array: no pointer into it may be formed). */
static void json_io_rows(struct json *j, const struct scen *s, const struct run_io_row *rows,
                         unsigned p)
{
    if (!s->nio)
        return;
    const struct run_io_row *r = &rows[(size_t)p * s->nio];
    json_arr_begin(j, "io");
    for (unsigned k = 0; k < s->nio; k++)
        json_io_row(j, s, &r[k]);
    json_arr_end(j);
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
        /* A live program or a trace that ended before the run did. */
        const char *why = run_end_why(run, i);
        if (why) {
            json_f64(&j, "ended_at", (double)run->task[i].end_at / run->m.ticks_per_sec);
            json_str(&j, "end", why);
        }
        if (s->qos.present)
            json_str(&j, "group",
                     s->qos.task_grp[i] < 0 ? "default" : s->qos.grp[s->qos.task_grp[i]]);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    if (s->nio) {
        json_arr_begin(&j, "io");
        for (unsigned k = 0; k < s->nio; k++) {
            const struct io_params *a = &s->io[k];
            json_obj_begin(&j, NULL);
            json_str(&j, "name", a->name);
            json_u64(&j, "domain", a->domain);
            json_u64(&j, "node", a->node);
            json_f64(&j, "rate", a->rate);
            json_u64(&j, "buffer", a->buffer);
            json_f64(&j, "write_ratio", a->write_ratio);
            json_u64(&j, "class", a->cls);
            json_u64(&j, "tag", a->tag);
            json_obj_end(&j);
        }
        json_arr_end(&j);
    }
    json_arr_begin(&j, "phases");
    for (unsigned p = 0; p < s->nphase; p++) {
        json_obj_begin(&j, NULL);
        json_str(&j, "name", s->phase[p].name);
        json_f64(&j, "at", s->phase[p].at);
        json_arr_begin(&j, "tasks");
        for (unsigned i = 0; i < s->ntask; i++)
            json_row(&j, s, &run->phase_row[(size_t)p * s->ntask + i]);
        json_arr_end(&j);
        json_io_rows(&j, s, run->io_phase_row, p);
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
        if ((k / s->ntask + 1) * s->nio <= run->nio_rows)
            json_io_rows(&j, s, run->io_rows, (unsigned)(k / s->ntask));
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    fputc('\n', f);
}

/* The monitoring columns of a row; an event without an ABMC counter is an
 * empty field. */
static void csv_mon(FILE *f, const struct run_row *r)
{
    fprintf(f, ",%u,%llu", r->mon_id, (unsigned long long)r->mon_occ_bytes);
    for (unsigned k = 0; k < 2; k++)
        if (r->mon_unassigned >> k & 1)
            fputc(',', f);
        else
            fprintf(f, ",%llu", (unsigned long long)(k ? r->mon_local_bytes : r->mon_rd_bytes));
    for (unsigned k = 0; k < 2; k++)
        if (r->mon_unassigned >> k & 1)
            fputc(',', f);
        else
            fprintf(f, ",%.6g", k ? r->mon_local_bw : r->mon_rd_bw);
    fprintf(f, ",%u", r->mon_unavail);
}

/* An agent's CSV row: the columns a task's row has that apply to it (no
 * instructions, cycles or misses above the L3; no monitoring reads),
 * then its DMA bytes. */
static void csv_io_row(FILE *f, const struct scen *s, const struct run_io_row *r, int mon)
{
    fprintf(f, "%.9g,%.9g,%s,%s,0,0,0.0000,0,0,0,%llu,%llu,%llu,%llu,%llu,%llu,%.6g,%.6g", r->t0,
            r->t1, s->phase[r->phase].name, s->io[r->agent].name, (unsigned long long)r->l3_miss,
            (unsigned long long)r->llc_bytes, (unsigned long long)r->tag_bytes,
            (unsigned long long)r->est_bytes, (unsigned long long)r->rd_bytes,
            (unsigned long long)r->wr_bytes, r->rd_bw, r->wr_bw);
    fputs(mon ? ",,,,,,," : "", f);
    fprintf(f, ",%llu,%llu\n", (unsigned long long)r->dma_wr_bytes,
            (unsigned long long)r->dma_rd_bytes);
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
                "mon_total_bytes_per_sec,mon_local_bytes_per_sec,mon_unavailable"
              : "",
          f);
    /* I/O agents: rows of their own after each interval's tasks, and two
     * columns only they fill. */
    fputs(s->nio ? ",dma_write_bytes,dma_read_bytes\n" : "\n", f);
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
            csv_mon(f, r);
        fputs(s->nio ? ",0,0\n" : "\n", f);
        size_t iv = k / s->ntask; /* the interval's agents after its last task */
        if (s->nio && k % s->ntask == s->ntask - 1 && (iv + 1) * s->nio <= run->nio_rows)
            for (unsigned a = 0; a < s->nio; a++)
                csv_io_row(f, s, &run->io_rows[iv * s->nio + a], mon);
    }
}

/* Task i draws in colour i % 16 (util/gnuplot.h's sixteen), with dash
 * type 1 + i / 16 once they run out. */
static void gp_line(FILE *f, unsigned i, double lw)
{
    fprintf(f, " lc rgb '%s' dt %u lw %g", gnuplot_colour[i % 16], 1 + i / 16, lw);
}

/* Whom a bandwidth cap or reservation applies to, as the plot draws it: a
 * qos group (the default group last) or, without a qos section, a class. */
struct gp_bw {
    unsigned n;        /* groups or classes */
    double *val;       /* [nphase][n] bytes per second in force; < 0: none or not known */
    unsigned *member;  /* [nphase][ntask] the group or class of each task */
    unsigned *nmember; /* [nphase][n] */
    const char *what;  /* "reserve", "limit" or "cap per core" */
    int per_core;      /* the value bounds each core (MBA), not the group's total */
};

static void gp_bw_free(struct gp_bw *g)
{
    free(g->val);
    free(g->member);
    free(g->nmember);
    memset(g, 0, sizeof *g);
}

/* An L3BE limit as the driver programs it: in 1/8 GB/s units, rounded
 * down, at least one; 0 is unlimited (-1 here). */
static double gp_l3be(double limit)
{
    if (limit <= 0)
        return -1;
    return limit < 0.125e9 ? 0.125e9 : (double)(uint64_t)(limit / 0.125e9) * 0.125e9;
}

/* Each phase's groups (or classes), their members and the caps and
 * reservations in force, as the phases' settings leave them: MBA's cap on
 * each core's link (link x (100 - delay)%), L3BE rate limits (per L3
 * domain) and reserved shares (per memory controller, of the node's peak).
 * A class's value is unknown after a setting of one limiter only; the
 * confidential world's settings are left out. Returns 0, with nothing
 * allocated, when there is nothing to draw (no qos section and no caps or
 * reservations). */
static int gp_bw_init(struct gp_bw *g, const struct scen *s)
{
    const struct plat_bw *b = &s->plat.bw;
    const int qos = s->qos.present, lim = b->kind != BW_NONE;
    memset(g, 0, sizeof *g);
    if (!qos && !lim)
        return 0;
    const unsigned n = qos ? s->qos.ngrp + 1 : b->classes, np = s->nphase, nt = s->ntask;
    g->n = n;
    g->what = b->kind == BW_SHARE ? "reserve" : b->kind == BW_RATE ? "limit" : "cap per core";
    g->per_core = b->kind == BW_DELAY;
    const double link = s->plat.core.link * s->plat.core.freq; /* bytes per second */
    g->val = malloc((size_t)np * n * sizeof *g->val);
    g->member = malloc(((size_t)np * nt + 1) * sizeof *g->member);
    g->nmember = calloc((size_t)np * n, sizeof *g->nmember);
    double *cur = malloc(n * sizeof *cur);
    unsigned *rbwb = calloc(n, sizeof *rbwb), *who = malloc((nt + 1) * sizeof *who);
    int any = 0;
    if (g->val && g->member && g->nmember && cur && rbwb && who) {
        const double block = s->plat.mem.peak / (b->nblks ? b->nblks : 1);
        for (unsigned k = 0; k < n; k++)
            cur[k] = -1;
        for (unsigned i = 0; i < nt; i++) {
            unsigned c = s->task[i].cls < b->classes ? s->task[i].cls : 0;
            who[i] = !qos ? c : s->qos.task_grp[i] < 0 ? n - 1 : (unsigned)s->qos.task_grp[i];
        }
        for (unsigned k = 0; qos && k + 1 < n; k++) {
            const struct scen_qos_set *q = &s->qos.init[k];
            rbwb[k] = q->has_share ? q->rbwb : 0;
            if (q->has_limit)
                cur[k] = gp_l3be(q->limit);
            if (q->has_mba && q->mba < 100)
                cur[k] = link * q->mba / 100;
        }
        for (unsigned p = 0; p < np; p++) {
            const struct scen_phase *ph = &s->phase[p];
            for (unsigned i = 0; i < ph->nset; i++) {
                const struct scen_set *x = &ph->set[i];
                unsigned k = x->q.grp < n - 1 ? x->q.grp : n - 1; /* qos: the default is last */
                if (qos && x->kind == SCEN_QOS && !x->q.secure && k < n - 1) {
                    if (x->q.has_share)
                        rbwb[k] = x->q.rbwb;
                    if (x->q.has_limit)
                        cur[k] = gp_l3be(x->q.limit);
                    if (x->q.has_mba)
                        cur[k] = x->q.mba < 100 ? link * x->q.mba / 100 : -1;
                } else if (qos && x->kind == SCEN_QOS_MOVE) {
                    who[x->task] = k;
                } else if (!qos && x->kind == SCEN_BW && x->cls < n) {
                    double v = b->kind == BW_SHARE  ? x->rbwb * block
                               : b->kind == BW_RATE ? x->rate
                                                    : link * (100 - x->delay_pct) / 100;
                    if (b->kind == BW_DELAY && !x->delay_pct)
                        v = 0; /* unthrottled */
                    cur[x->cls] = x->ctl >= 0 || v <= 0 ? -1 : v;
                } else if (!qos && x->kind == SCEN_ASSOC) {
                    who[x->task] = x->new_cls < b->classes ? x->new_cls : 0;
                }
            }
            if (qos && b->kind == BW_SHARE) { /* RCID 0 keeps what the groups leave */
                unsigned sum = 0;
                for (unsigned k = 0; k + 1 < n; k++) {
                    cur[k] = rbwb[k] ? rbwb[k] * block : -1;
                    sum += rbwb[k];
                }
                cur[n - 1] = b->mrbwb > sum ? (b->mrbwb - sum) * block : -1;
            }
            for (unsigned i = 0; i < nt; i++) {
                g->member[(size_t)p * nt + i] = who[i];
                g->nmember[(size_t)p * n + who[i]]++;
            }
            for (unsigned k = 0; k < n; k++) {
                g->val[(size_t)p * n + k] = cur[k];
                any |= cur[k] >= 0 && g->nmember[(size_t)p * n + k];
                any |= qos && k + 1 < n && g->nmember[(size_t)p * n + k] > 1;
            }
        }
    }
    free(cur);
    free(rbwb);
    free(who);
    if (!any)
        gp_bw_free(g);
    return any;
}

/* Group k's setting is drawn: it has one while some task is under it. */
static int gp_bw_limited(const struct gp_bw *g, const struct scen *s, unsigned k)
{
    for (unsigned p = 0; p < s->nphase; p++)
        if (g->val[(size_t)p * g->n + k] >= 0 && g->nmember[(size_t)p * g->n + k])
            return 1;
    return 0;
}

/* The one task under group k's setting whenever it has one, or -1. */
static int gp_bw_single(const struct gp_bw *g, const struct scen *s, unsigned k)
{
    int one = -1;
    for (unsigned p = 0; p < s->nphase; p++) {
        if (g->val[(size_t)p * g->n + k] < 0 || !g->nmember[(size_t)p * g->n + k])
            continue;
        for (unsigned i = 0; i < s->ntask; i++)
            if (g->member[(size_t)p * s->ntask + i] == k) {
                if (one >= 0 && one != (int)i)
                    return -1;
                one = (int)i;
            }
    }
    return one;
}

/* Group k's total is drawn: a qos group that has more than one task at
 * some time, or a group or class whose setting bounds the total of more
 * than one. */
static int gp_bw_total(const struct gp_bw *g, const struct scen *s, unsigned k)
{
    if (!g->per_core && gp_bw_limited(g, s, k) && gp_bw_single(g, s, k) < 0)
        return 1;
    for (unsigned p = 0; s->qos.present && k + 1 < g->n && p < s->nphase; p++)
        if (g->nmember[(size_t)p * g->n + k] > 1)
            return 1;
    return 0;
}

/* Group k's name for the legend, with a word after it. */
static void gp_bw_name(FILE *f, const struct scen *s, unsigned k, const char *word)
{
    char name[128];
    if (!s->qos.present)
        snprintf(name, sizeof name, "class %u %s", k, word);
    else
        snprintf(name, sizeof name, "%s %s", k < s->qos.ngrp ? s->qos.grp[k] : "default", word);
    gnuplot_str(f, name);
}

static void gp_phase_labels(FILE *f, const struct scen *s)
{
    for (unsigned p = 0; p < s->nphase; p++) {
        fputs("set label ", f);
        gnuplot_str(f, s->phase[p].name);
        fprintf(f, " at %.9g, graph 1.06 tc rgb 'gray20'\n", s->phase[p].at * 1e3);
    }
}

/* A gnuplot program with the data inline: three panels on one time axis,
 * IPC, LLC occupancy and memory read bandwidth, with the phase starts as
 * dashed lines. The bandwidth panel also draws each cap or reservation in
 * force (dashed, in the colour of the one task it applies to, or with the
 * total of the tasks it applies to, in a colour after the tasks'). */
static void write_gnuplot(FILE *f, const struct run *run, const struct rows *rs, int png)
{
    const struct scen *s = run->s;
    const unsigned nt = s->ntask;
    const double end = s->duration * 1e3;
    for (unsigned i = 0; i < nt; i++) {
        fprintf(f, "$t%u << EOD\n", i);
        for (size_t k = i; k < rs->n; k += nt)
            fprintf(f, "%.9g %.6f %.6f %.6f\n", rs->v[k].t1 * 1e3, rs->v[k].ipc,
                    rs->v[k].llc_bytes / 1048576.0, rs->v[k].rd_bw / 1e9);
        fputs("EOD\n", f);
    }
    struct gp_bw g;
    int grp = gp_bw_init(&g, s);
    for (unsigned k = 0; grp && k < g.n; k++) {
        if (gp_bw_limited(&g, s, k)) {
            /* Its setting: a segment per phase where it has one and tasks under it. */
            fprintf(f, "$l%u << EOD\n", k);
            for (unsigned p = 0; p < s->nphase; p++) {
                double v = g.val[(size_t)p * g.n + k];
                if (v < 0 || !g.nmember[(size_t)p * g.n + k])
                    continue;
                double t1 = p + 1 < s->nphase ? s->phase[p + 1].at * 1e3 : end;
                fprintf(f, "%.9g %.6f\n%.9g %.6f\n\n", s->phase[p].at * 1e3, v / 1e9, t1, v / 1e9);
            }
            fputs("EOD\n", f);
        }
        if (!gp_bw_total(&g, s, k))
            continue;
        /* The total of the tasks under it, interval by interval. */
        fprintf(f, "$g%u << EOD\n", k);
        for (size_t r = 0; r + nt <= rs->n; r += nt) {
            unsigned p = rs->v[r].phase, m = 0;
            double sum = 0;
            for (unsigned i = 0; i < nt; i++)
                if (g.member[(size_t)p * nt + i] == k) {
                    sum += rs->v[r + i].rd_bw;
                    m++;
                }
            if (m)
                fprintf(f, "%.9g %.6f\n", rs->v[r].t1 * 1e3, sum / 1e9);
            else
                fputs("\n", f);
        }
        fputs("EOD\n", f);
    }

    fprintf(f, "set terminal %s size 1000,960 font ',11'\n", png ? "pngcairo" : "svg");
    fputs("set output\n", f); /* standard output: plot() gives it the output file */
    const char *base = strrchr(s->file, '/') ? strrchr(s->file, '/') + 1 : s->file;
    char title[512];
    snprintf(title, sizeof title, "%s on %s", base, s->plat.name);
    /* One time axis: the panels share fixed margins, so their plot areas
     * line up, and only the bottom one labels it. Legends go to the right. */
    fputs("set multiplot layout 3,1 title ", f);
    gnuplot_str(f, title);
    fputs(" margins 0.08,0.76,0.07,0.91 spacing 0,0.045\n", f);
    fputs("set grid\nset key outside right top\nset yrange [0:*]\n", f);
    fprintf(f, "set xrange [0:%.9g]\nset format x ''\n", end);
    for (unsigned p = 0; p < s->nphase; p++)
        fprintf(f, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead dt 2 lc rgb 'gray40'\n",
                s->phase[p].at * 1e3, s->phase[p].at * 1e3);
    gp_phase_labels(f, s);
    for (int panel = 0; panel < 3; panel++) {
        static const char *const ylabel[3] = {"IPC", "LLC occupancy (MiB)", "memory reads (GB/s)"};
        fputs("set ylabel ", f);
        gnuplot_str(f, ylabel[panel]);
        fputc('\n', f);
        if (panel == 1)
            fputs("unset label\n", f); /* phase names above the top panel only */
        if (panel == 2)
            fputs("set format x '%g'\nset xlabel 'time (ms)'\n", f);
        fputs("plot ", f);
        for (unsigned i = 0; i < nt; i++) {
            fprintf(f, "%s$t%u using 1:%d with lines", i ? ", " : "", i, panel + 2);
            gp_line(f, i, 2);
            if (panel) {
                fputs(" notitle", f);
            } else {
                fputs(" title ", f);
                gnuplot_str(f, s->task[i].name);
            }
        }
        unsigned ncol = nt; /* colours taken */
        for (unsigned k = 0; panel == 2 && grp && k < g.n; k++) {
            int total = gp_bw_total(&g, s, k), one = gp_bw_single(&g, s, k);
            if (!total && !gp_bw_limited(&g, s, k))
                continue;
            /* A group's total and setting in a colour after the tasks'; a
             * setting that covers one task in that task's colour. */
            unsigned c = total || one < 0 ? ncol++ : (unsigned)one;
            if (total) {
                fprintf(f, ", $g%u using 1:2 with lines", k);
                gp_line(f, c, 3.5);
                fputs(" title ", f);
                gp_bw_name(f, s, k, "(total)");
            }
            if (gp_bw_limited(&g, s, k)) {
                fprintf(f, ", $l%u using 1:2 with lines lc rgb '%s' dt (8,5) lw 2.5 title ", k,
                        gnuplot_colour[c % 16]);
                gp_bw_name(f, s, k, g.what);
            }
        }
        fputc('\n', f);
    }
    fputs("unset multiplot\n", f);
    gp_bw_free(&g);
}

struct run_gp {
    const struct run *run;
    const struct rows *rs;
    int png;
};

static void run_gp_program(FILE *f, void *ctx)
{
    const struct run_gp *g = ctx;
    write_gnuplot(f, g->run, g->rs, g->png);
}

/* gnuplot draws into the output's file descriptor (util/gnuplot.h): a
 * regular file's temporary, a FIFO, or qosim's standard output for
 * "--plot -". The caller commits or drops the output. */
static int plot(const struct run *run, const struct rows *rs, struct ofile *o)
{
    struct run_gp g = {run, rs, gnuplot_png(o)}; /* the suffix was checked; "-": SVG */
    struct err e;
    if (!gnuplot_run(o, "--plot", run_gp_program, &g, &e))
        return 0;
    cli_error("run", "%s", e.msg);
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
            if (mon && (r->mon_unassigned & 1)) /* ABMC: no counter for the total event */
                printf(" %5u %9.2f %9s", r->mon_id, r->mon_occ_bytes / 1048576.0, "-");
            else if (mon)
                printf(" %5u %9.2f %9.2f", r->mon_id, r->mon_occ_bytes / 1048576.0,
                       r->mon_rd_bw / 1e9);
            putchar('\n');
        }
    /* I/O agents: what their DMA moved, how much of it the L3 served
     * (write updates and read hits), the lines they hold and the memory
     * traffic they caused. */
    if (s->nio) {
        printf("\n%-14s %-14s %9s %9s %9s %9s %9s\n", "phase", "I/O agent", "DMA GB/s", "L3 hit %",
               "LLC MiB", "rd GB/s", "wr GB/s");
        for (unsigned p = 0; p < s->nphase; p++)
            for (unsigned k = 0; k < s->nio; k++) {
                const struct run_io_row *r = &run->io_phase_row[(size_t)p * s->nio + k];
                uint64_t n = r->dma.wr + r->dma.rd;
                printf("%-14s %-14s %9.2f %9.2f %9.2f %9.2f %9.2f\n", k ? "" : s->phase[p].name,
                       s->io[k].name, r->dma_bw / 1e9,
                       n ? 100.0 * (double)(r->dma.wr_hit + r->dma.rd_hit) / (double)n : 0,
                       r->llc_bytes / 1048576.0, r->rd_bw / 1e9, r->wr_bw / 1e9);
            }
    }
    /* Tasks that ran out early sat idle after: say when and why. */
    int first = 1;
    for (unsigned i = 0; i < s->ntask; i++) {
        const char *why = run_end_why(run, i);
        const struct run_prog *pg = &run->prog[i];
        if (!why && !(s->task[i].is_live && s->task[i].out[0]))
            continue;
        printf(first ? "\n" : "");
        first = 0;
        if (why)
            printf("%s: %s at %.3f ms; idle from then on", s->task[i].name,
                   s->task[i].is_live ? why : "its trace ended",
                   1e3 * (double)run->task[i].end_at / run->m.ticks_per_sec);
        else
            printf("%s: still running at the end, stopped there", s->task[i].name);
        if (s->task[i].is_live && s->task[i].out[0])
            printf(pg->kept ? "; its output is in %s"
                            : "; its output, cut short, was not kept (%s)",
                   s->task[i].out);
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
    struct ofile_name *in = calloc(2 * s->ntask + 2, sizeof *in);
    struct ofile_name *all = calloc(nout + s->ntask, sizeof *all);
    if (!in || !all) {
        free(in);
        free(all);
        cli_error("run", "out of memory");
        return 1;
    }
    size_t nin = 0, nall = nout;
    memcpy(all, out, nout * sizeof *out);
    in[nin++] = (struct ofile_name){"the scenario", s->file};
    if (s->plat.file[0])
        in[nin++] = (struct ofile_name){"the platform profile", s->plat.file};
    for (unsigned i = 0; i < s->ntask; i++) {
        const struct scen_task *t = &s->task[i];
        if (t->is_trace)
            in[nin++] = (struct ofile_name){"the trace", t->trace};
        /* A live program's files: what it reads, and what it writes. */
        if (t->is_live && t->in[0])
            in[nin++] = (struct ofile_name){"a program's stdin", t->in};
        if (t->is_live && t->out[0])
            all[nall++] = (struct ofile_name){"a program's stdout", t->out};
    }
    struct err e;
    int rc = ofile_distinct(all, nall, in, nin, &e);
    free(in);
    free(all);
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
    /* Programs' outputs first: the notes and the JSON say which were kept. */
    if (!status && run_keep_outputs(&run, &e)) {
        cli_error("run", "%s", e.msg);
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
