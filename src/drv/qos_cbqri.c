/* A scenario's `qos:` section on a RISC-V platform, through the CBQRI
 * driver (cbq.h): what Linux's resctrl does on CBQRI, and on the 2023
 * draft a TSM for the confidential half.
 *
 *   - Boot: on 1.0 the M-mode side first lets S-mode reach srmcfg
 *     (mstateen0 bit 55, where harts have Smstateen).
 *   - Discovery: the controllers the platform describes (its firmware
 *     tables: base, kind, text, counter width), probed by cbq_init; the
 *     OS's driver on the normal windows in S-mode and, on the draft, the
 *     TSM's on the secure windows in secure M-mode (5.2.1), both from hart
 *     0.
 *   - Groups: RCID 1.. in order, the default group RCID 0; MCIDs 1.. per
 *     group or per task, MCID 0 the default's. Masks go to every controller
 *     of the level, per AT where it has per-AT limits (AT 1's mask is the
 *     code mask); reservations to every bandwidth controller, AT 1 sharing
 *     AT 0's (the reset arrangement, spec 4.5).
 *   - Reservations: at reset RCID 0 reserves MRBWB (4.5), so nothing else
 *     could reserve; the default group keeps whatever the groups leave, at
 *     least one block, and each change is ordered so the sum never passes
 *     MRBWB (the hardware refuses a CONFIG_LIMIT that would, STATUS 5).
 *   - Context switch: sqoscfg (draft) or srmcfg (1.0) of the hart, written
 *     only when it changes.
 *   - Monitoring: occupancy at the L3 capacity controller of the task's
 *     hart (capacity units are lines), read bytes (event 2) at every memory
 *     controller -- total the sum, local the task's node's -- as running
 *     64-bit counts across wraps. In RCID-prefixed mode (1.0 RPFX) a
 *     counter belongs to (RCID, low P bits of the MCID): a group's tasks
 *     carry MCID 0 (group monitoring) or 1, 2, ... in order within their
 *     group (task monitoring, at most 2^P - 1 per group), and every
 *     effective MCID's counters run from the start, since a moved task's
 *     counter follows its new RCID. */
#include "qos.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The platform's controllers as firmware would list them. */
static int describe(struct qos *q, const struct plat *p, struct cbq_desc **out, unsigned *n,
                    struct err *e)
{
    unsigned k = 0, max = 0;
    for (unsigned i = 0; i < p->n_cbqri_cap; i++)
        max += plat_cache_count(p, p->cbqri_cap[i].level);
    max += p->n_cbqri_bw * p->nnodes;
    struct cbq_desc *d = calloc(max ? max : 1, sizeof *d);
    q->ctl_level = calloc(max ? max : 1, sizeof *q->ctl_level);
    q->ctl_inst = calloc(max ? max : 1, sizeof *q->ctl_inst);
    if (!d || !q->ctl_level || !q->ctl_inst) {
        free(d);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    unsigned ver = p->cbqri_spec == PLAT_CBQRI_1_0 ? CBQRI_VER_1_0 : CBQRI_VER;
    for (unsigned i = 0; i < p->n_cbqri_cap; i++)
        for (unsigned j = 0; j < plat_cache_count(p, p->cbqri_cap[i].level); j++, k++) {
            const struct plat_cbqri_ctl *pc = &p->cbqri_cap[i];
            d[k] = (struct cbq_desc){CBQRI_CAPACITY, pc->base + j * pc->stride, 0, ver};
            q->ctl_level[k] = (int)p->cbqri_cap[i].level;
            q->ctl_inst[k] = j;
        }
    unsigned width = p->mon.width < 62 ? p->mon.width : 62; /* CTR[61:0] */
    for (unsigned i = 0; i < p->n_cbqri_bw; i++)
        for (unsigned j = 0; j < p->nnodes; j++, k++) {
            const struct plat_cbqri_ctl *pc = &p->cbqri_bw[i];
            d[k] = (struct cbq_desc){CBQRI_BANDWIDTH, pc->base + j * pc->stride, width, ver};
            q->ctl_level[k] = -1;
            q->ctl_inst[k] = j;
        }
    *out = d;
    *n = k;
    return 0;
}

static struct cbq *drv(struct qos *q, int secure)
{
    return secure ? &q->cs : &q->c;
}

/* One (RCID, AT)'s capacity allocation at controller k: a CONFIG_LIMIT
 * sets the block mask and, on 1.0 with CUNITS, the unit limit together
 * (CC_ALLOC), so what the section leaves out is read back and kept. */
static int set_cap(struct cbq *d, unsigned k, unsigned rcid, unsigned at, int new_mask,
                   uint64_t mask, int new_units, uint64_t units, struct err *e)
{
    int rc = 0;
    if (!new_mask)
        rc = cbq_get_cbm(d, k, rcid, at, &mask, e);
    if (!rc && !new_units && d->ctl[k].cunits)
        rc = cbq_get_cunits(d, k, rcid, at, &units, e);
    return rc ? rc : cbq_set_cap(d, k, rcid, at, mask, d->ctl[k].cunits ? units : 0, e);
}

static int set_masks(struct qos *q, const struct scen_qos_set *x, unsigned rcid, struct err *e)
{
    struct cbq *d = drv(q, x->secure);
    int rc = 0;
    for (unsigned k = 0; k < d->nctl && !rc; k++) {
        int l = q->ctl_level[k];
        if (l < 0 || (!x->has_mask[l] && !(x->has_units >> l & 1)))
            continue;
        unsigned has = x->has_mask[l], nu = x->has_units >> l & 1;
        if (d->ctl[k].nat < 2) /* one allocation for code and data */
            rc = set_cap(d, k, rcid, CBQRI_AT_DATA, has != 0, x->mask[l][MACH_DATA], nu,
                         x->units[l], e);
        else /* AT 0 is data, AT 1 code (Table 1, AT_ENC); the unit limit for each */
            for (unsigned t = MACH_DATA; t <= MACH_CODE && !rc; t++)
                if (has & 1u << t || nu)
                    rc = set_cap(d, k, rcid, t, (has & 1u << t) != 0, x->mask[l][t], nu,
                                 x->units[l], e);
    }
    return rc;
}

/* A group's reservation and weight at every memory controller, the
 * default group (RCID 0) giving up or taking back the difference first or
 * last so that the sum stays within MRBWB at every step. */
static int set_share(struct qos *q, const struct scen_qos_set *x, unsigned rcid, struct err *e)
{
    struct cbq *d = drv(q, x->secure);
    unsigned ngrp = q->run->s->qos.ngrp, *resv = &q->resv[x->secure ? ngrp : 0];
    unsigned old = resv[x->grp], sum = 0;
    for (unsigned g = 0; g < ngrp; g++)
        sum += g == x->grp ? x->rbwb : resv[g];
    int rc = 0;
    for (unsigned k = 0; k < d->nctl && !rc; k++) {
        const struct cbq_ctl *c = &d->ctl[k];
        if (c->kind != CBQRI_BANDWIDTH)
            continue;
        if (sum >= c->mrbwb)
            return err_set(e, -QOSIM_EINVAL,
                           "groups would reserve %u of the %u blocks memory controller 0x%llx "
                           "lets be reserved, leaving none for the default group",
                           sum, c->mrbwb, (unsigned long long)c->base);
        uint64_t v = 0;
        unsigned w0 = 1;
        if (!(rc = cbq_get_bw(d, k, 0, CBQRI_AT_DATA, &v, e)))
            w0 = (unsigned)HW_FGET(v, BW_ALLOC, Mweight);
        if (!rc && x->rbwb > old)
            rc = cbq_set_bw(d, k, 0, CBQRI_AT_DATA, c->mrbwb - sum, w0, e);
        if (!rc)
            rc = cbq_set_bw(d, k, rcid, CBQRI_AT_DATA, x->rbwb, x->weight, e);
        if (!rc && c->nat > 1)
            rc = cbq_share_bw(d, k, rcid, CBQRI_AT_CODE, CBQRI_AT_DATA, e);
        if (!rc && x->rbwb <= old)
            rc = cbq_set_bw(d, k, 0, CBQRI_AT_DATA, c->mrbwb - sum, w0, e);
    }
    if (!rc)
        resv[x->grp] = x->rbwb;
    return rc;
}

static int apply(struct qos *q, const struct scen_qos_set *x, struct err *e)
{
    unsigned rcid = qos_grp_cls(q, x->grp);
    int rc = set_masks(q, x, rcid, e);
    if (!rc && x->has_share && x->grp < q->run->s->qos.ngrp)
        rc = set_share(q, x, rcid, e);
    return rc;
}

static int sw(struct qos *q, unsigned cpu, unsigned cls, unsigned mon, struct err *e)
{
    uint32_t v = (uint32_t)HW_FSET(HW_FSET(0, SRMCFG, RCID, cls), SRMCFG, MCID, mon);
    if (q->sq[cpu] == v) /* as resctrl skips an unchanged PQR_ASSOC */
        return 0;
    int rc = cbq_assoc(&q->c, cpu, cls, mon, e);
    if (!rc)
        q->sq[cpu] = v;
    return rc;
}

/* The controller of a cache level and instance, or the memory controller
 * of a node (level -1); -1 when there is none. */
static int ctl_of(const struct qos *q, int level, unsigned inst)
{
    for (unsigned k = 0; k < q->c.nctl; k++)
        if (q->ctl_level[k] == level && q->ctl_inst[k] == inst)
            return (int)k;
    return -1;
}

static int mon(struct qos *q, unsigned task, struct run_mon_val *v, struct err *e)
{
    const struct run *r = q->run;
    const struct plat *p = &r->s->plat;
    const struct sched_task *t = &r->task[task];
    unsigned mcid = cbq_emcid(&q->c, t->cls, t->tag);
    struct run_mon_val *last = &q->v[task];
    struct plat_place pl;
    plat_place(p, t->cpu, &pl);
    last->id = mcid;
    int rc = 0, k = ctl_of(q, PLAT_L3, plat_cache_inst(p, PLAT_L3, t->cpu));
    if (k >= 0 && q->c.ctl[k].mon) {
        uint64_t lines = 0;
        rc = cbq_mon_read(&q->c, (unsigned)k, mcid, &lines, NULL, e);
        if (!rc)
            last->occ = lines * p->cache[PLAT_L3].geom.line; /* the unit is a line */
        rc = qos_unavailable(q, task, rc);
    }
    uint64_t total = 0, local = 0;
    int counted = 0;
    for (unsigned j = 0; j < q->c.nctl && !rc; j++) {
        const struct cbq_ctl *c = &q->c.ctl[j];
        if (c->kind != CBQRI_BANDWIDTH || !c->mon)
            continue;
        struct cbq_mbm *st = &q->bmbm[(size_t)j * q->c.nmcid + mcid];
        rc = qos_unavailable(q, task, cbq_mbm_update(&q->c, j, mcid, st, e));
        total += st->bytes;
        local += q->ctl_inst[j] == pl.node ? st->bytes : 0;
        counted = 1;
    }
    if (counted) {
        last->total = total;
        last->local = local;
    }
    last->unavail = q->unavail[task];
    *v = *last;
    return rc;
}

/* RCID-prefixed mode: a group's counter is its RCID's first (low bits 0);
 * a task of RCID cls gets the next low bits free in that RCID. */
static int next_low(struct qos *q, const char *what, const char *name, unsigned cls, unsigned *out,
                    struct err *e)
{
    if (!strcmp(what, "group")) {
        *out = 0;
        return 0;
    }
    unsigned n = cls < q->c.nrcid ? ++q->nlow[cls] : 1u << q->c.p;
    if (n >= 1u << q->c.p)
        return err_set(e, -QOSIM_EINVAL,
                       "%s %s: no free MCID in RCID %u: RCID-prefixed mode with P %u gives each "
                       "RCID %u counters, the first the group's",
                       what, name, cls, q->c.p, 1u << q->c.p);
    *out = n;
    return 0;
}

/* Counting starts for an MCID: occupancy at every L3 controller, reads at
 * every memory controller. */
static int mon_start(struct qos *q, unsigned mcid, struct err *e)
{
    int rc = 0;
    for (unsigned k = 0; k < q->c.nctl && !rc; k++) {
        const struct cbq_ctl *c = &q->c.ctl[k];
        if (!c->mon || (c->kind == CBQRI_CAPACITY && q->ctl_level[k] != PLAT_L3))
            continue;
        unsigned evt = c->kind == CBQRI_CAPACITY ? CBQRI_EVT_OCCUPANCY : CBQRI_EVT_RD_BYTES;
        rc = cbq_mon_config(&q->c, k, mcid, evt, 0, 0, e);
        if (!rc && c->kind == CBQRI_BANDWIDTH) /* the running count's starting point */
            rc = cbq_mbm_update(&q->c, k, mcid, &q->bmbm[(size_t)k * q->c.nmcid + mcid], e);
    }
    return rc;
}

static int next_mcid(struct qos *q, const char *what, const char *name, unsigned cls, unsigned *out,
                     struct err *e)
{
    if (q->c.rpfx)
        return next_low(q, what, name, cls, out, e);
    if (q->nmon + 1 >= q->c.nmcid)
        return err_set(e, -QOSIM_EINVAL, "%s %s: no free MCID (%u)", what, name, q->c.nmcid);
    *out = ++q->nmon;
    return mon_start(q, *out, e);
}

static void drop(struct qos *q)
{
    cbq_free(&q->c);
    cbq_free(&q->cs);
    free(q->bmbm);
    free(q->resv);
    free(q->ctl_level);
    free(q->ctl_inst);
    free(q->sq);
    free(q->nlow);
}

static const struct qos_ops cbqri_ops = {.apply = apply, .sw = sw, .mon = mon, .free = drop};

/* How soon a byte counter can wrap: each controller sees its node's memory. */
static double wrap_time(const struct qos *q)
{
    const struct plat *p = &q->run->s->plat;
    unsigned width = p->mon.width < 62 ? p->mon.width : 62;
    return ldexp(1, (int)width) / p->mem.peak;
}

int qos_cbqri_init(struct qos *q, const struct cbqri_regif *r, struct run *run, struct err *e)
{
    memset(q, 0, sizeof *q);
    q->ops = &cbqri_ops;
    q->run = run;
    const struct scen *s = run->s;
    const struct scen_qos *sq = &s->qos;
    struct cbq_desc *desc = NULL;
    unsigned n = 0;
    int draft = s->plat.cbqri_spec == PLAT_CBQRI_DRAFT;
    int rc = describe(q, &s->plat, &desc, &n, e);
    if (!rc && !draft)
        rc = cbq_boot(r, run->m.ncpu, e);
    if (!rc)
        rc = cbq_init(&q->c, r, 0, CBQRI_S, 0, desc, n, e);
    if (!rc && draft)
        rc = cbq_init(&q->cs, r, 0, CBQRI_SECURE_M, 1, desc, n, e);
    free(desc);
    if (!rc)
        rc = qos_alloc(q, sq->ngrp, s->ntask, e);
    if (!rc) {
        q->bmbm = calloc((size_t)q->c.nctl * (q->c.nmcid ? q->c.nmcid : 1), sizeof *q->bmbm);
        q->resv = calloc(2 * (size_t)sq->ngrp + 1, sizeof *q->resv);
        q->sq = calloc(run->m.ncpu, sizeof *q->sq);
        q->nlow = calloc(q->c.nrcid ? q->c.nrcid : 1, sizeof *q->nlow);
        if (!q->bmbm || !q->resv || !q->sq || !q->nlow)
            rc = err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    if (!rc && sq->ngrp + 1 > q->c.nrcid)
        rc = err_set(e, -QOSIM_EINVAL,
                     "%u groups and the default group need %u RCIDs; the "
                     "controllers take %u",
                     sq->ngrp, sq->ngrp + 1, q->c.nrcid);
    for (unsigned g = 0; g < sq->ngrp && !rc; g++) {
        q->cos[g] = g + 1;
        rc = qos_apply(q, &sq->init[g], e);
        if (!rc && draft)
            rc = qos_apply(q, &sq->tinit[g], e);
    }
    int mon = sq->monitor != SCEN_MON_NONE && (q->c.nmcid > 1 || q->c.rpfx);
    for (unsigned m = 0; !rc && mon && m < (q->c.rpfx ? q->c.nmcid : 1); m++)
        rc = mon_start(q, m, e); /* the default group's; in RCID-prefixed mode every one */
    if (!rc)
        rc = qos_assign(q, mon, next_mcid, e);
    for (unsigned h = 0; h < run->m.ncpu && !rc; h++) /* what every hart holds now */
        rc = cbq_assoc(&q->c, h, 0, 0, e);
    if (rc) {
        qos_free(q);
        return rc;
    }
    qos_hooks(q, mon, wrap_time(q));
    return 0;
}
