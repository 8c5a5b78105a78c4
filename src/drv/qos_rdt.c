/* A scenario's qos section on x86: the RDT / PQoS driver (rdt.h) through
 * struct hw_x86_if, COS and RMID in PQR_ASSOC (SDM 17.19.2 usage flow). */
#include "qos.h"

#include "pfctl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const enum plat_level res_level[RDT_NRES] = {[RDT_L3] = PLAT_L3, [RDT_L2] = PLAT_L2};

/* ---- AMD BMEC and ABMC ---- */

/* The transaction types event k (0 total, 1 local) counts in domain dom:
 * QOS_EVT_CFG_k with BMEC, else the fixed ones (APM vol. 2, Table 19-9;
 * resctrl.rst: 0x7F and 0x15). */
static uint32_t evt_types(struct qos *q, unsigned dom, unsigned k, struct err *e)
{
    uint32_t t = k ? 0x15 : 0x7F;
    if (q->d.caps.bmec && rdt_get_evt_cfg(&q->d, dom, RDT_EVT_TOTAL + k, &t, e))
        t = k ? 0x15 : 0x7F;
    return t;
}

/* Counter c of every domain to (rmid, event k) with the event's types,
 * from zero, as resctrl_arch_config_cntr does per domain. */
static int assign(struct qos *q, unsigned c, unsigned rmid, unsigned k, struct err *e)
{
    int rc = 0;
    for (unsigned dom = 0; dom < q->d.ndom[RDT_L3] && !rc; dom++) {
        rc = rdt_abmc_assign(&q->d, dom, c, 0, rmid, evt_types(q, dom, k, e), e);
        q->cmbm[(size_t)dom * q->d.caps.abmc_ctrs + c] = (struct rdt_mbm){0};
    }
    return rc;
}

/* BMEC: the events' types in every domain. In mbm_event mode the counters
 * of a changed event take its new types and restart, as Linux's
 * event_filter write re-configures the assigned counters. */
static int set_events(struct qos *q, unsigned has, const uint32_t evt[2], struct err *e)
{
    int rc = 0;
    for (unsigned k = 0; k < 2 && !rc; k++)
        for (unsigned dom = 0; has >> k & 1 && dom < q->d.ndom[RDT_L3] && !rc; dom++)
            rc = rdt_set_evt_cfg(&q->d, dom, RDT_EVT_TOTAL + k, evt[k], e);
    for (unsigned r = 0; q->d.abmc_on && r < q->d.caps.num_rmid && !rc; r++)
        for (unsigned k = 0; k < 2 && !rc; k++)
            if (has >> k & 1 && q->cntr[r * 2 + k] >= 0)
                rc = assign(q, (unsigned)q->cntr[r * 2 + k], r, k, e);
    return rc;
}

/* mbm_event mode: counters go to the monitoring IDs in order - RMID 0 (the
 * default group's) first with monitor: group, as resctrl assigns the
 * default group's at mount, then the groups' or the tasks' - an event at a
 * time, until a domain has none left (mbm_assign_on_mkdir); a group with
 * counters: false gets none. The others read as unassigned. */
static int abmc_init(struct qos *q, struct err *e)
{
    const struct scen *s = q->run->s;
    const struct scen_qos *sq = &s->qos;
    struct rdt *d = &q->d;
    size_t n = (size_t)(d->caps.num_rmid ? d->caps.num_rmid : 1) * 2;
    if (!(q->cntr = malloc(n * sizeof *q->cntr)))
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        q->cntr[i] = -1;
    if (!d->caps.abmc)
        return 0;
    int rc = rdt_set_abmc(d, sq->mbm_event, e);
    if (rc || !sq->mbm_event)
        return rc;
    if (!(q->cmbm = calloc((size_t)d->ndom[RDT_L3] * d->caps.abmc_ctrs, sizeof *q->cmbm)))
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    unsigned next = 0, nid = sq->monitor == SCEN_MON_GROUP ? sq->ngrp + 1 : s->ntask;
    for (unsigned i = 0; i < nid && !rc; i++) {
        unsigned rmid;
        int g;
        if (sq->monitor == SCEN_MON_GROUP) {
            g = i ? (int)i - 1 : -1;
            rmid = i ? q->rmid[i - 1] : 0;
        } else {
            g = sq->task_grp[i];
            rmid = q->run->task[i].tag;
        }
        if (g >= 0 && sq->init[g].no_counters)
            continue;
        for (unsigned k = 0; k < 2 && !rc; k++)
            if (sq->assign_evts >> k & 1 && q->cntr[rmid * 2 + k] < 0 && next < d->caps.abmc_ctrs) {
                q->cntr[rmid * 2 + k] = (int)next;
                rc = assign(q, next++, rmid, k, e);
            }
    }
    return rc;
}

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
        if (!rc && x->has_smba)
            rc = rdt_set_smba(d, dom, cos, x->smba, e);
    }
    if (!rc && x->has_evt)
        rc = set_events(q, x->has_evt, x->evt, e);
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

/* mbm_event mode: the event's counter, or unassigned (resctrl reads
 * "Unassigned", fs/resctrl/ctrlmondata.c), never a number. */
static int abmc_mon(struct qos *q, unsigned dom, unsigned rmid, unsigned k, unsigned task,
                    uint64_t *out, unsigned *unassigned, struct err *e)
{
    int c = q->cntr[rmid * 2 + k];
    if (c < 0) {
        *unassigned |= 1u << k;
        *out = 0;
        return 0;
    }
    struct rdt_mbm *st = &q->cmbm[(size_t)dom * q->d.caps.abmc_ctrs + (unsigned)c];
    int rc = rdt_abmc_update(&q->d, dom, (unsigned)c, st, e);
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
    last->unassigned = 0;
    for (unsigned k = 0; k < 2 && !rc; k++) {
        if (!(k ? c->local : c->total))
            continue;
        uint64_t *out = k ? &last->local : &last->total;
        if (q->d.abmc_on)
            rc = abmc_mon(q, dom, rmid, k, task, out, &last->unassigned, e);
        else
            rc = mbm(q, dom, rmid, (int)k, task, out, e);
    }
    last->unavail = q->unavail[task];
    *v = *last;
    return rc;
}

static void drop(struct qos *q)
{
    rdt_free(&q->d);
    free(q->mbm);
    free(q->cntr);
    free(q->cmbm);
}

/* The core's prefetcher control MSR (drv/pfctl.c). */
static int prefetch(struct qos *q, unsigned cpu, unsigned on, struct err *e)
{
    return pfctl_set(&q->d.r, q->d.caps.amd, cpu, on, e);
}

static const struct qos_ops rdt_ops = {
    .apply = apply, .sw = sw, .mon = mon, .free = drop, .prefetch = prefetch};

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

/* A refusal's message, prefixed with the key that asked for it. */
static int prefixed(int rc, const char *key, struct err *e)
{
    return err_set(e, rc, "qos.%s: %s", key, e->msg); /* err_set formats aside first */
}

/* The section's AMD settings, after the groups have their identifiers:
 * SDCIAE with the I/O mask in every domain (resctrl's io_alloc), BMEC's
 * events, and ABMC's mode and counters. The events come before the
 * counters, which take the events' types. */
static int amd_init(struct qos *q, struct err *e)
{
    const struct scen_qos *sq = &q->run->s->qos;
    int rc = 0;
    if (sq->has_io) {
        rc = rdt_set_sdciae(&q->d, 1, e);
        for (unsigned dom = 0; dom < q->d.ndom[RDT_L3] && !rc; dom++)
            rc = rdt_set_io_cbm(&q->d, dom, sq->io_cbm, e);
        if (rc)
            return prefixed(rc, "io_alloc", e);
    }
    if (sq->has_evt && (rc = set_events(q, sq->has_evt, sq->evt, e)))
        return prefixed(rc, "events", e);
    if ((rc = abmc_init(q, e)))
        return prefixed(rc, "mbm_assign_mode", e);
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
    if (!rc)
        rc = amd_init(q, e);
    if (rc) {
        qos_free(q);
        return rc;
    }
    qos_hooks(q, sq->monitor != SCEN_MON_NONE && q->d.caps.num_rmid, wrap_time(q));
    return 0;
}
