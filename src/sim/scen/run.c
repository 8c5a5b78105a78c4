#include "run.h"

#include "sim/wl/live.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t ticks(const struct run *r, double sec)
{
    return (uint64_t)llround(sec * r->m.ticks_per_sec);
}

/* Task i's program starts: its input opened, its output's temporary made,
 * and QEMU started in the scenario's directory. Its messages name the task
 * and the scenario's line, since the run may be long past loading. */
static int run_live(struct run *r, unsigned i, struct err *e)
{
    const struct scen_task *st = &r->s->task[i];
    struct run_prog *pg = &r->prog[i];
    char label[400];
    snprintf(label, sizeof label, "%s:%u: task %s", r->s->file, st->line, st->name);
    if (st->in[0] && (pg->in_fd = open(st->in, O_RDONLY | O_CLOEXEC)) < 0)
        return err_set(e, -QOSIM_EIO, "%s: stdin: cannot open %s: %s", label, st->in,
                       strerror(errno));
    if (st->out[0] && ofile_open(&pg->out, st->out, e))
        return err_set(e, -QOSIM_EIO, "%s: stdout: %s", label, e->msg);
    struct live_opts o = {.argv = st->argv,
                          .dir = st->dir,
                          .in_fd = pg->in_fd,
                          .out_fd = pg->out.f ? pg->out.fd : -1,
                          .own_group = 1,
                          .label = label};
    if (pg->out.f)
        fflush(pg->out.f);
    int rc = wl_live_new(&o, &r->wl[i], e);
    if (rc)
        return err_set(e, rc, "%s: %s", label, e->msg);
    return 0;
}

const char *run_end_why(const struct run *r, unsigned i)
{
    if (!r->task[i].ended)
        return NULL;
    struct live *l = wl_live(r->wl[i]);
    return l ? live_why(l) : "its trace ended";
}

int run_keep_outputs(struct run *r, struct err *e)
{
    int rc = 0;
    for (unsigned i = 0; r->prog && i < r->s->ntask; i++) {
        struct run_prog *pg = &r->prog[i];
        if (!pg->out.f)
            continue;
        struct live *l = r->wl[i] ? wl_live(r->wl[i]) : NULL;
        if (l && live_status(l) >= 0 && !rc) {
            rc = ofile_commit(&pg->out, e);
            pg->kept = !rc;
        } else {
            ofile_abort(&pg->out);
        }
    }
    return rc;
}

static int io_next_fn(void *ctx, uint64_t *now)
{
    return io_next(&((struct run *)ctx)->io, now);
}

static void io_run_fn(void *ctx, unsigned k, uint64_t until)
{
    io_run(&((struct run *)ctx)->io, k, until);
}

/* The scenario's I/O agents, advancing with the CPUs in time order. */
static int run_io_init(struct run *r, struct err *e)
{
    const struct scen *s = r->s;
    if (!s->nio)
        return 0;
    int rc = io_init(&r->io, &r->m, s->io, s->nio, s->ntask, e);
    if (rc)
        return rc;
    r->io_last = calloc(s->nio, sizeof *r->io_last);
    r->io_mark = calloc(s->nio, sizeof *r->io_mark);
    r->io_occ = calloc(s->nio, sizeof *r->io_occ);
    r->io_phase_row = calloc((size_t)s->nphase * s->nio, sizeof *r->io_phase_row);
    if (!r->io_last || !r->io_mark || !r->io_occ || !r->io_phase_row)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    r->sch.ext = (struct sched_ext){.ctx = r, .next = io_next_fn, .run = io_run_fn};
    return 0;
}

int run_init(struct run *r, struct scen *s, struct err *e)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    /* I/O agents are tasks of the machine after the scenario's tasks. */
    int rc = mach_init(&r->m, &s->plat, s->ntask + s->nio, e);
    if (rc)
        return rc;
    r->task = calloc(s->ntask, sizeof *r->task);
    r->wl = calloc(s->ntask, sizeof *r->wl);
    r->last = calloc(s->ntask, sizeof *r->last);
    r->mark = calloc(s->ntask, sizeof *r->mark);
    r->occ_sum = calloc(s->ntask, sizeof *r->occ_sum);
    r->phase_row = calloc((size_t)s->nphase * s->ntask, sizeof *r->phase_row);
    r->mon_last = calloc(s->ntask, sizeof *r->mon_last);
    r->mon_mark = calloc(s->ntask, sizeof *r->mon_mark);
    r->mon_now = calloc(s->ntask, sizeof *r->mon_now);
    r->prog = calloc(s->ntask, sizeof *r->prog);
    if (!r->prog || !r->task || !r->wl || !r->last || !r->mark || !r->occ_sum || !r->phase_row ||
        !r->mon_last || !r->mon_mark || !r->mon_now) {
        run_free(r);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < s->ntask; i++)
        r->prog[i].in_fd = -1;
    for (unsigned i = 0; i < s->ntask; i++) {
        const struct scen_task *st = &s->task[i];
        uint64_t seed = s->seed * 0x9e3779b97f4a7c15ull + i + 1;
        if (st->is_live)
            rc = run_live(r, i, e);
        else
            rc = st->is_trace ? wl_trace_new(st->trace, st->fmt, st->loop, &r->wl[i], e)
                              : wl_synth_new(&st->wp, seed, &r->wl[i], e);
        if (rc) {
            if (st->is_trace)
                err_set(e, rc, "task %s: %s", st->name, e->msg);
            run_free(r);
            return rc;
        }
        unsigned node = st->node >= 0 ? (unsigned)st->node : r->m.cpu[st->cpu].node;
        sched_task_init(&r->task[i], r->wl[i], mach_phys_base(node, i), st->cpu, st->cls, st->tag);
        if (st->tee_len)
            mach_set_tee(&r->m, i, mach_phys_base(node, i) | st->tee_va, st->tee_len);
    }
    rc = sched_init(&r->sch, &r->m, r->task, s->ntask, s->quantum * MACH_TICK, ticks(r, s->slice),
                    e);
    if (!rc)
        rc = run_io_init(r, e);
    if (rc)
        run_free(r);
    return rc;
}

void run_free(struct run *r)
{
    if (r->sch.cpu)
        sched_free(&r->sch);
    for (unsigned i = 0; r->wl && i < r->s->ntask; i++)
        if (r->wl[i])
            wl_free(r->wl[i]);
    for (unsigned i = 0; r->prog && i < r->s->ntask; i++) {
        if (r->prog[i].in_fd >= 0)
            close(r->prog[i].in_fd);
        ofile_abort(&r->prog[i].out);
    }
    free(r->prog);
    if (r->m.cpu)
        mach_free(&r->m);
    free(r->task);
    free(r->wl);
    free(r->last);
    free(r->mark);
    free(r->occ_sum);
    free(r->phase_row);
    free(r->mon_last);
    free(r->mon_mark);
    free(r->mon_now);
    io_free(&r->io);
    free(r->io_last);
    free(r->io_mark);
    free(r->io_occ);
    free(r->io_phase_row);
    free(r->io_rows);
    memset(r, 0, sizeof *r);
}

int run_apply(struct run *r, const struct scen_phase *ph, struct err *e)
{
    struct mach *m = &r->m;
    for (unsigned i = 0; i < ph->nset; i++) {
        const struct scen_set *x = &ph->set[i];
        int rc = 0;
        if (x->kind == SCEN_MASK) {
            uint64_t ways = mach_cbm_ways(m, x->level, x->cbm);
            for (unsigned k = 0; k < m->ncache[x->level] && !rc; k++)
                for (int t = MACH_DATA; t <= MACH_CODE && !rc; t++)
                    if ((x->inst < 0 || (unsigned)x->inst == k) && (x->type < 0 || x->type == t))
                        rc = mach_set_mask(m, x->level, k, x->cls, (enum mach_type)t, ways);
        } else if (x->kind == SCEN_BW) {
            struct bw_class_set b;
            bw_class_reset(m->p.bw.kind, &b);
            b.delay_pct = x->delay_pct;
            b.rate = x->rate / m->ticks_per_sec;
            b.rbwb = x->rbwb;
            b.weight = x->weight;
            for (unsigned k = 0; k < m->nbw && !rc; k++)
                if (x->ctl < 0 || (unsigned)x->ctl == k)
                    rc = mach_set_bw(m, k, x->cls, &b);
        } else if (x->kind == SCEN_ASSOC) {
            r->task[x->task].cls = x->new_cls;
            r->task[x->task].tag = x->new_tag;
            sched_reload(&r->sch, x->task);
        } else if (x->kind == SCEN_PF) { /* every thread of the task's core */
            unsigned nthr = m->p.topo.threads, core = r->s->task[x->task].cpu / nthr;
            for (unsigned t = 0; t < nthr && !rc; t++)
                rc = mach_set_prefetch(m, core * nthr + t, x->pf_on);
        } else if (!r->hooks.phase) /* qos settings are the driver's */
            return err_set(e, -QOSIM_EINVAL, "phase %s: qos settings need a QoS driver", ph->name);
        if (rc)
            return err_set(e, rc, "phase %s: setting %u could not be applied", ph->name, i + 1);
    }
    return r->hooks.phase ? r->hooks.phase(r->hooks.ctx, r, ph, e) : 0;
}

/* Every task's monitoring reads now, into v. */
static int mon_read(struct run *r, struct run_mon_val *v, struct err *e)
{
    for (unsigned i = 0; r->hooks.mon && i < r->s->ntask; i++) {
        int rc = r->hooks.mon(r->hooks.ctx, r, i, &v[i], e);
        if (rc)
            return rc;
    }
    return 0;
}

/* The software view between two reads. */
static void row_mon(struct run_row *row, const struct run_mon_val *a, const struct run_mon_val *b)
{
    double dt = row->t1 > row->t0 ? row->t1 - row->t0 : 1;
    row->mon = 1;
    row->mon_id = b->id;
    row->mon_occ_bytes = b->occ;
    row->mon_rd_bytes = b->total - a->total;
    row->mon_local_bytes = b->local - a->local;
    row->mon_rd_bw = (double)row->mon_rd_bytes / dt;
    row->mon_local_bw = (double)row->mon_local_bytes / dt;
    row->mon_unavail = b->unavail - a->unavail;
    row->mon_unassigned = a->unassigned | b->unassigned;
}

/* Fills row with the counts between two snapshots. */
static void row_delta(struct run_row *row, const struct mach_tstat *a, const struct mach_tstat *b,
                      double t0, double t1)
{
    row->t0 = t0;
    row->t1 = t1;
    row->instr = b->instr - a->instr;
    /* Whole cycles elapsed between the two points, so that rows add up to
     * the run's total however the run is cut into rows. */
    row->cycles = b->ticks / MACH_TICK - a->ticks / MACH_TICK;
    row->ipc = row->cycles ? (double)row->instr / (double)row->cycles : 0;
    for (int l = 0; l < PLAT_NLEVEL; l++) {
        row->ref[l] = b->ref[l] - a->ref[l];
        row->miss[l] = b->miss[l] - a->miss[l];
    }
    row->rd_bytes = b->rd_bytes - a->rd_bytes;
    row->wr_bytes = b->wr_bytes - a->wr_bytes;
    for (int k = 0; k < MACH_NTRAFFIC; k++)
        row->traffic[k] = b->traffic[k] - a->traffic[k];
    row->pf_req = b->pf_req - a->pf_req; /* hardware prefetches */
    row->pf_useful = b->pf_useful - a->pf_useful;
    row->pf_bytes = b->pf_bytes - a->pf_bytes;
    row->pf_drop = b->pf_drop - a->pf_drop;
    double dt = t1 > t0 ? t1 - t0 : 1;
    row->rd_bw = (double)row->rd_bytes / dt;
    row->wr_bw = (double)row->wr_bytes / dt;
}

/* Agent k's counts now. */
static void io_snap(const struct run *r, unsigned k, struct run_io_snap *o)
{
    const struct io_agent *a = &r->io.a[k];
    o->dma = a->st;
    o->ts = r->m.ts[a->task];
}

/* Fills an agent's row with the counts between two snapshots. */
static void io_delta(const struct run *r, struct run_io_row *row, const struct run_io_snap *a,
                     const struct run_io_snap *b, double t0, double t1)
{
    const uint64_t line = r->m.line;
    double dt = t1 > t0 ? t1 - t0 : 1;
    row->t0 = t0;
    row->t1 = t1;
    row->dma = (struct io_stat){b->dma.wr - a->dma.wr,         b->dma.rd - a->dma.rd,
                                b->dma.wr_hit - a->dma.wr_hit, b->dma.wr_fill - a->dma.wr_fill,
                                b->dma.wr_mem - a->dma.wr_mem, b->dma.rd_hit - a->dma.rd_hit,
                                b->dma.rd_mem - a->dma.rd_mem};
    row->dma_wr_bytes = row->dma.wr * line;
    row->dma_rd_bytes = row->dma.rd * line;
    row->dma_bw = (double)(row->dma_wr_bytes + row->dma_rd_bytes) / dt;
    row->l3_ref = b->ts.ref[PLAT_L3] - a->ts.ref[PLAT_L3];
    row->l3_miss = b->ts.miss[PLAT_L3] - a->ts.miss[PLAT_L3];
    row->rd_bytes = b->ts.rd_bytes - a->ts.rd_bytes;
    row->wr_bytes = b->ts.wr_bytes - a->ts.wr_bytes;
    row->rd_bw = (double)row->rd_bytes / dt;
    row->wr_bw = (double)row->wr_bytes / dt;
}

/* Every agent's row of the interval ending at t. */
static int io_interval(struct run *r, double t0, double t1, int settled, struct err *e)
{
    const struct scen *s = r->s;
    if (r->nio_rows + s->nio > r->cap_io_rows) {
        size_t cap = r->cap_io_rows ? r->cap_io_rows * 2 : 64 * s->nio;
        struct run_io_row *v = realloc(r->io_rows, cap * sizeof *v);
        if (!v)
            return err_set(e, -QOSIM_ENOMEM, "out of memory");
        r->io_rows = v;
        r->cap_io_rows = cap;
    }
    for (unsigned k = 0; k < s->nio; k++) {
        const struct io_agent *a = &r->io.a[k];
        struct run_io_row *row = &r->io_rows[r->nio_rows++];
        struct run_io_snap now;
        io_snap(r, k, &now);
        memset(row, 0, sizeof *row);
        io_delta(r, row, &r->io_last[k], &now, t0, t1);
        row->phase = r->cur_phase;
        row->agent = k;
        row->llc_bytes = mach_task_lines(&r->m, PLAT_L3, a->task) * r->m.line;
        row->tag_bytes = mach_occupancy(&r->m, PLAT_L3, a->port.l3->inst, a->p.tag) * r->m.line;
        row->est_bytes = mach_occupancy_est(&r->m, PLAT_L3, a->port.l3->inst, a->p.tag) * r->m.line;
        if (settled) {
            r->io_occ[k].llc += (double)row->llc_bytes;
            r->io_occ[k].tag += (double)row->tag_bytes;
            r->io_occ[k].est += (double)row->est_bytes;
        }
        r->io_last[k] = now;
    }
    return 0;
}

/* Every agent's row of the phase ending at t. */
static void io_phase_end(struct run *r, double t)
{
    const struct scen *s = r->s;
    for (unsigned k = 0; k < s->nio; k++) {
        struct run_io_row *row = &r->io_phase_row[(size_t)r->cur_phase * s->nio + k];
        struct run_io_snap now;
        io_snap(r, k, &now);
        io_delta(r, row, &r->io_mark[k], &now, r->mark_t, t);
        row->phase = r->cur_phase;
        row->agent = k;
        double n = r->occ_n ? r->occ_n : 1;
        row->llc_bytes = (uint64_t)(r->io_occ[k].llc / n);
        row->tag_bytes = (uint64_t)(r->io_occ[k].tag / n);
        row->est_bytes = (uint64_t)(r->io_occ[k].est / n);
    }
}

static int phase_end(struct run *r, double t, struct err *e)
{
    struct scen *s = r->s;
    int rc = mon_read(r, r->mon_now, e);
    for (unsigned i = 0; i < s->ntask && !rc; i++) {
        struct run_row *row = &r->phase_row[(size_t)r->cur_phase * s->ntask + i];
        row_delta(row, &r->mark[i], &r->m.ts[i], r->mark_t, t);
        row->phase = r->cur_phase;
        row->task = i;
        /* Occupancy is a level, not a count: a phase's is the mean of its
         * settled interval rows', the same for every occupancy a row has. */
        const struct run_occ_sum *o = &r->occ_sum[i];
        double n = r->occ_n ? r->occ_n : 1;
        row->llc_bytes = (uint64_t)(o->llc / n);
        row->tag_bytes = (uint64_t)(o->tag / n);
        row->est_bytes = (uint64_t)(o->est / n);
        if (r->hooks.mon) {
            row_mon(row, &r->mon_mark[i], &r->mon_now[i]);
            row->mon_occ_bytes = (uint64_t)(o->mon / n);
        }
    }
    if (!rc)
        io_phase_end(r, t);
    return rc;
}

static int mark(struct run *r, double t, struct err *e)
{
    memcpy(r->mark, r->m.ts, r->s->ntask * sizeof *r->mark);
    r->mark_t = t;
    memset(r->occ_sum, 0, r->s->ntask * sizeof *r->occ_sum);
    r->occ_n = 0;
    for (unsigned k = 0; k < r->s->nio; k++) {
        io_snap(r, k, &r->io_mark[k]);
        r->io_occ[k] = (struct run_occ_sum){0};
    }
    return mon_read(r, r->mon_mark, e);
}

/* The first poll time after a read at t. */
static double poll_after(double t_poll, double t, double poll)
{
    while (t_poll <= t)
        t_poll += poll;
    return t_poll;
}

int run_all(struct run *r, run_row_fn row_fn, run_progress_fn progress, void *ctx, struct err *e)
{
    struct scen *s = r->s;
    const double end = s->duration, poll = r->hooks.mon ? r->hooks.poll : 0;
    unsigned next_phase = 0, k = 1;
    double t = 0, t_interval = s->interval, t_settle = -1, t_poll = poll > 0 ? poll : end * 2;
    int rc = 0;
    if (r->hooks.mon && (rc = mon_read(r, r->mon_last, e)))
        return rc;
    while (!rc) {
        /* Events due now: a phase starts (settings apply, statistics restart
         * after its settling time); the settle mark passes. */
        if (next_phase < s->nphase && s->phase[next_phase].at <= t) {
            if (next_phase > 0 && (rc = phase_end(r, t, e)))
                break;
            r->cur_phase = next_phase;
            if ((rc = run_apply(r, &s->phase[next_phase], e)))
                break;
            double pend = next_phase + 1 < s->nphase ? s->phase[next_phase + 1].at : end;
            t_settle = t + s->settle < pend ? t + s->settle : t;
            next_phase++;
        }
        if (t_settle >= 0 && t_settle <= t) {
            if ((rc = mark(r, t, e)))
                break;
            t_settle = -1;
        }
        /* Reads between intervals keep counters from wrapping unseen. */
        if (t >= t_poll) {
            if ((rc = mon_read(r, r->mon_now, e)))
                break;
            t_poll = poll_after(t_poll, t, poll);
        }
        if (t >= end)
            break;
        double next = t_interval < end ? t_interval : end;
        if (next_phase < s->nphase && s->phase[next_phase].at < next)
            next = s->phase[next_phase].at;
        if (t_settle >= 0 && t_settle < next)
            next = t_settle;
        if (t_poll < next)
            next = t_poll;
        /* Only settings stop every CPU at their time: a phase's start and
         * the end. An interval's end, the settle mark and a poll observe,
         * so the run only pauses there, once every CPU has reached the
         * time, and the rows are read at that point (sched_pause). */
        double hard =
            next_phase < s->nphase && s->phase[next_phase].at < end ? s->phase[next_phase].at : end;
        if (next >= hard)
            rc = sched_run(&r->sch, ticks(r, hard), e);
        else
            rc = sched_pause(&r->sch, ticks(r, next), ticks(r, hard), e);
        if (rc)
            break;
        t = next;
        if (t >= t_interval || t >= end) {
            if ((rc = mon_read(r, r->mon_now, e)))
                break;
            t_poll = poll_after(t_poll, t, poll); /* this read serves as a poll too */
            for (unsigned i = 0; i < s->ntask; i++) {
                struct run_row row = {.phase = r->cur_phase, .task = i};
                row_delta(&row, &r->last[i], &r->m.ts[i], t_interval - s->interval, t);
                row.llc_bytes = mach_task_lines(&r->m, r->m.llc, i) * r->m.line;
                const struct mach_cpu *p = &r->m.cpu[r->task[i].cpu];
                unsigned inst = r->m.llc == PLAT_L3 ? p->l3->inst : p->l2->inst;
                row.tag_bytes = mach_occupancy(&r->m, r->m.llc, inst, r->task[i].tag) * r->m.line;
                row.est_bytes =
                    mach_occupancy_est(&r->m, r->m.llc, inst, r->task[i].tag) * r->m.line;
                if (r->hooks.mon)
                    row_mon(&row, &r->mon_last[i], &r->mon_now[i]);
                if (t_settle < 0) {
                    struct run_occ_sum *o = &r->occ_sum[i];
                    o->llc += (double)row.llc_bytes;
                    o->tag += (double)row.tag_bytes;
                    o->est += (double)row.est_bytes;
                    o->mon += (double)row.mon_occ_bytes;
                }
                if (row_fn)
                    row_fn(ctx, &row);
            }
            if (s->nio && (rc = io_interval(r, t_interval - s->interval, t, t_settle < 0, e)))
                break;
            if (t_settle < 0)
                r->occ_n++;
            memcpy(r->last, r->m.ts, s->ntask * sizeof *r->last);
            memcpy(r->mon_last, r->mon_now, s->ntask * sizeof *r->mon_last);
            k++;
            t_interval = s->interval * k;
            if (progress)
                progress(ctx, t / end);
        }
    }
    if (!rc)
        rc = phase_end(r, end, e);
    return rc;
}
