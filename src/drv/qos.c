#include "qos.h"

#include "util/bits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum plat_level res_level[RDT_NRES] = {[RDT_L3] = PLAT_L3, [RDT_L2] = PLAT_L2};

/* A driver refusal, placed at the scenario line that asked for it. */
int qos_at_line(const struct qos *q, unsigned line, int rc, struct err *e)
{
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    return err_set(e, rc, "%s:%u: qos: %s", q->run->s->file, line, msg);
}

unsigned qos_grp_cls(const struct qos *q, unsigned grp)
{
    return grp < q->run->s->qos.ngrp ? q->cos[grp] : 0;
}

/* One group's settings in every domain, as resctrl writes a schemata line
 * per domain. */
static int apply_set(struct qos *q, const struct scen_qos_set *x, struct err *e)
{
    if (q->cbqri)
        return qos_cbqri_apply(q, x, e);
    struct rdt *d = &q->d;
    unsigned cos = qos_grp_cls(q, x->grp);
    int rc = 0;
    for (int k = 0; k < RDT_NRES && !rc; k++) {
        enum plat_level l = res_level[k];
        unsigned has = x->has_mask[l];
        for (unsigned dom = 0; has && dom < d->ndom[k] && !rc; dom++) {
            if (!d->cdp_on[k])
                rc = rdt_set_cbm(d, k, dom, cos, RDT_BOTH, x->mask[l][MACH_DATA], e);
            else {
                if (has & 1u << MACH_DATA)
                    rc = rdt_set_cbm(d, k, dom, cos, RDT_DATA, x->mask[l][MACH_DATA], e);
                if (!rc && has & 1u << MACH_CODE)
                    rc = rdt_set_cbm(d, k, dom, cos, RDT_CODE, x->mask[l][MACH_CODE], e);
            }
        }
    }
    for (unsigned dom = 0; dom < d->ndom[RDT_L3] && !rc; dom++) {
        if (x->has_mba)
            rc = rdt_set_mba(d, dom, cos, 100 - x->mba, e); /* share left -> delay */
        if (!rc && x->has_limit)
            rc = rdt_set_l3be(d, dom, cos, x->limit, e);
    }
    return rc ? qos_at_line(q, x->line, rc, e) : 0;
}

static void switch_hook(void *ctx, struct sched *s, unsigned cpu, int task)
{
    struct qos *q = ctx;
    const struct sched_task *t = task >= 0 ? &s->task[task] : NULL;
    struct err e;
    unsigned cls = t ? t->cls : 0, mon = t ? t->tag : 0;
    int rc =
        q->cbqri ? qos_cbqri_switch(q, cpu, cls, mon, &e) : rdt_switch(&q->d, cpu, cls, mon, &e);
    if (rc && !q->failed) {
        q->failed = 1;
        q->fail = e;
    }
}

static int phase_hook(void *ctx, struct run *r, const struct scen_phase *ph, struct err *e)
{
    struct qos *q = ctx;
    const struct scen_qos *sq = &r->s->qos;
    for (unsigned i = 0; i < ph->nset; i++) {
        const struct scen_set *x = &ph->set[i];
        if (x->kind == SCEN_QOS) {
            int rc = apply_set(q, &x->q, e);
            if (rc)
                return rc;
        } else if (x->kind == SCEN_QOS_MOVE) {
            /* Moving a task re-associates it at once if it is running, as
             * resctrl's IPI to the task's CPU does. */
            struct sched_task *t = &r->task[x->task];
            t->cls = qos_grp_cls(q, x->q.grp);
            if (sq->monitor == SCEN_MON_GROUP)
                t->tag = q->rmid[x->q.grp < sq->ngrp ? x->q.grp : sq->ngrp];
            sched_reload(&r->sch, x->task);
        }
    }
    return q->failed ? err_set(e, q->fail.code, "context switch: %s", q->fail.msg) : 0;
}

/* A U reading (-QOSIM_EIO: no data now) is counted, not an error. */
int qos_unavailable(struct qos *q, unsigned task, int rc)
{
    if (rc != -QOSIM_EIO)
        return rc;
    q->unavail[task]++;
    return 0;
}

/* One event into the running count of (domain, RMID). */
static int mbm(struct qos *q, unsigned dom, unsigned rmid, int local, unsigned task, uint64_t *out,
               struct err *e)
{
    struct rdt_mbm *st = &q->mbm[((size_t)dom * q->d.caps.num_rmid + rmid) * 2 + local];
    int rc = rdt_mbm_update(&q->d, dom, local ? RDT_EVT_LOCAL : RDT_EVT_TOTAL, rmid, st, e);
    *out = st->bytes;
    return qos_unavailable(q, task, rc);
}

static int mon_hook(void *ctx, struct run *r, unsigned task, struct run_mon_val *v, struct err *e)
{
    struct qos *q = ctx;
    if (q->cbqri) {
        int rc = qos_cbqri_mon(q, task, v, e);
        if (!rc && q->failed)
            rc = err_set(e, q->fail.code, "context switch: %s", q->fail.msg);
        return rc;
    }
    const struct rdt_caps *c = &q->d.caps;
    const struct sched_task *t = &r->task[task];
    unsigned dom = q->d.r.l3_of[t->cpu], rmid = t->tag;
    struct run_mon_val *last = &q->v[task];
    int rc = 0;
    last->id = rmid;
    if (c->occupancy) {
        uint64_t b;
        rc = rdt_mon_read(&q->d, dom, RDT_EVT_OCCUPANCY, rmid, &b, e);
        if (!rc)
            last->occ = b;
        rc = qos_unavailable(q, task, rc);
    }
    if (!rc && c->total)
        rc = mbm(q, dom, rmid, 0, task, &last->total, e);
    if (!rc && c->local)
        rc = mbm(q, dom, rmid, 1, task, &last->local, e);
    last->unavail = q->unavail[task];
    *v = *last;
    if (!rc && q->failed)
        rc = err_set(e, q->fail.code, "context switch: %s", q->fail.msg);
    return rc;
}

/* How soon an MBM counter can wrap, at the platform's peak memory bandwidth
 * (Linux polls MBM once a second for the same reason, its counters being
 * wide enough for that). */
static double wrap_time(const struct qos *q)
{
    const struct plat *p = &q->run->s->plat;
    double peak = p->mem.peak * p->nnodes;
    return ldexp((double)q->d.caps.scale, (int)q->d.caps.width) / peak;
}

/* The arrays both drivers keep per group and per task. */
int qos_alloc(struct qos *q, unsigned ngrp, unsigned ntask, struct err *e)
{
    q->cos = calloc(ngrp + 1, sizeof *q->cos);
    q->rmid = calloc(ngrp + 1, sizeof *q->rmid);
    q->unavail = calloc(ntask, sizeof *q->unavail);
    q->v = calloc(ntask, sizeof *q->v);
    if (!q->cos || !q->rmid || !q->unavail || !q->v)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    return 0;
}

/* The scheduler's context switch, the phases' settings and, with mon, the
 * monitoring reads go through the driver from now on. */
void qos_hooks(struct qos *q, int mon, double wrap)
{
    double poll = wrap / 2 < q->run->s->interval ? wrap / 2 : 0;
    struct run *run = q->run;
    run->sch.on_switch = switch_hook;
    run->sch.ctx = q;
    run->hooks = (struct run_hooks){.ctx = q, .phase = phase_hook};
    if (mon) {
        run->hooks.mon = mon_hook;
        run->hooks.poll = poll;
    }
}

int qos_assign(struct qos *q, int mon, qos_next_id_fn next, struct err *e)
{
    const struct scen *s = q->run->s;
    const struct scen_qos *sq = &s->qos;
    int rc = 0;
    for (unsigned g = 0; mon && sq->monitor == SCEN_MON_GROUP && g < sq->ngrp && !rc; g++)
        rc = next(q, "group", sq->grp[g], &q->rmid[g], e);
    for (unsigned i = 0; i < s->ntask && !rc; i++) {
        int g = sq->task_grp[i];
        struct sched_task *t = &q->run->task[i];
        t->cls = g < 0 ? 0 : q->cos[g];
        t->tag = sq->monitor == SCEN_MON_GROUP && g >= 0 ? q->rmid[g] : 0;
        if (mon && sq->monitor == SCEN_MON_TASK)
            rc = next(q, "task", s->task[i].name, &t->tag, e);
    }
    return rc;
}

static int next_rmid(struct qos *q, const char *what, const char *name, unsigned *out,
                     struct err *e)
{
    int m = rdt_alloc_rmid(&q->d);
    if (m < 0)
        return err_set(e, -QOSIM_EINVAL, "%s %s: no free RMID", what, name);
    *out = (unsigned)m;
    return 0;
}

int qos_init(struct qos *q, const struct hw_x86_if *r, struct run *run, struct err *e)
{
    memset(q, 0, sizeof *q);
    q->run = run;
    const struct scen *s = run->s;
    const struct scen_qos *sq = &s->qos;
    int rc = rdt_init(&q->d, r, e);
    if (rc)
        return rc;
    size_t nmbm = (size_t)q->d.ndom[RDT_L3] * (q->d.caps.num_rmid ? q->d.caps.num_rmid : 1) * 2;
    q->mbm = calloc(nmbm, sizeof *q->mbm);
    if ((rc = qos_alloc(q, sq->ngrp, s->ntask, e)) || !q->mbm) {
        qos_free(q);
        return rc ? rc : err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    for (int k = 0; k < RDT_NRES && !rc; k++)
        if (sq->cdp[res_level[k]] && !q->d.cdp_on[k])
            rc = rdt_set_cdp(&q->d, (enum rdt_res)k, 1, e);
    for (unsigned g = 0; g < sq->ngrp && !rc; g++) {
        int c = rdt_alloc_cos(&q->d);
        if (c < 0)
            rc = err_set(e, -QOSIM_EINVAL, "group %s: no free class of service", sq->grp[g]);
        else {
            q->cos[g] = (unsigned)c;
            rc = apply_set(q, &sq->init[g], e);
        }
    }
    if (!rc)
        rc = qos_assign(q, sq->monitor != SCEN_MON_NONE, next_rmid, e);
    if (rc) {
        qos_free(q);
        return rc;
    }
    qos_hooks(q, sq->monitor != SCEN_MON_NONE && q->d.caps.num_rmid, wrap_time(q));
    return 0;
}

void qos_free(struct qos *q)
{
    if (q->cbqri)
        qos_cbqri_free(q);
    else
        rdt_free(&q->d);
    free(q->cos);
    free(q->rmid);
    free(q->mbm);
    free(q->unavail);
    free(q->v);
    memset(q, 0, sizeof *q);
}
