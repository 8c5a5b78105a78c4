/* A scenario's qos section on x86: the RDT / PQoS driver (rdt.h) through
 * struct hw_x86_if, COS and RMID in PQR_ASSOC (SDM 17.19.2 usage flow). */
#include "qos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const enum plat_level res_level[RDT_NRES] = {[RDT_L3] = PLAT_L3, [RDT_L2] = PLAT_L2};

/* One group's settings in every domain, as resctrl writes a schemata line
 * per domain. */
static int apply(struct qos *q, const struct scen_qos_set *x, struct err *e)
{
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
    return rc;
}

static int sw(struct qos *q, unsigned cpu, unsigned cls, unsigned mon, struct err *e)
{
    return rdt_switch(&q->d, cpu, cls, mon, e);
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

static int mon(struct qos *q, unsigned task, struct run_mon_val *v, struct err *e)
{
    const struct rdt_caps *c = &q->d.caps;
    const struct sched_task *t = &q->run->task[task];
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
    return rc;
}

static void drop(struct qos *q)
{
    rdt_free(&q->d);
    free(q->mbm);
}

static const struct qos_ops rdt_ops = {.apply = apply, .sw = sw, .mon = mon, .free = drop};

/* How soon an MBM counter can wrap, at the platform's peak memory bandwidth
 * (Linux polls MBM once a second for the same reason, its counters being
 * wide enough for that). */
static double wrap_time(const struct qos *q)
{
    const struct plat *p = &q->run->s->plat;
    double peak = p->mem.peak * p->nnodes + p->slow.peak * p->nslow; /* slow memory too */
    return ldexp((double)q->d.caps.scale, (int)q->d.caps.width) / peak;
}

static int next_rmid(struct qos *q, const char *what, const char *name, unsigned cls, unsigned *out,
                     struct err *e)
{
    (void)cls; /* RMIDs are apart from classes */
    int m = rdt_alloc_rmid(&q->d);
    if (m < 0)
        return err_set(e, -QOSIM_EINVAL, "%s %s: no free RMID", what, name);
    *out = (unsigned)m;
    return 0;
}

int qos_rdt_init(struct qos *q, const struct hw_x86_if *r, struct run *run, struct err *e)
{
    memset(q, 0, sizeof *q);
    q->run = run;
    const struct scen *s = run->s;
    const struct scen_qos *sq = &s->qos;
    int rc = rdt_init(&q->d, r, e);
    if (rc)
        return rc;
    q->ops = &rdt_ops;
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
            rc = qos_apply(q, &sq->init[g], e);
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
