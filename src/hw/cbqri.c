#include "cbqri.h"

#include "util/bits.h"

#include <stdlib.h>
#include <string.h>

const char *const cbqri_mode_name[CBQRI_NMODE] = {"M", "S", "U", "VS", "VU", "secure-M"};

/* ---- what the controller implements ---- */

/* Bits that hold values 0..n-1 (sqoscfg implements no more, spec 5.1). */
static unsigned bits_for(unsigned n)
{
    return n <= 1 ? 0 : 64 - (unsigned)__builtin_clzll((uint64_t)n - 1);
}

/* Set sampling on: the capacity count is an estimate (spec 3.3). */
static const struct mach_cache *sampled_cache(const struct cbqri *q, const struct cbqri_ctl *c)
{
    const struct mach_cache *x = &q->m->cache[c->level][c->inst];
    return x->samp_period > 1 ? x : NULL;
}

/* ---- counting sources: what the machine saw, per window ---- */

/* The access types a counter sees: with ATV 0 both; with ATV 1 the one it
 * names, where the controller tells ATs apart -- where it does not, every
 * request is handled as AT 0 (spec 2.2), code included. */
static int at_filter(const struct cbqri_ctl *c, const struct cbqri_ctr *k)
{
    return k->atv && c->nat > 1 ? (int)k->at : MACH_ANY;
}

/* Occupancy in lines of an MCID at this cache instance, of the requests the
 * window sees: the secure window counts requests with C set, the normal
 * window the others (spec 5.2.2). */
static uint64_t occ_now(const struct cbqri *q, const struct cbqri_ctl *c, const struct cbqri_win *w,
                        const struct cbqri_ctr *k, unsigned mcid)
{
    return mach_occupancy_sel(q->m, c->level, c->inst, mcid, at_filter(c, k), (unsigned)w->secure,
                              sampled_cache(q, c) != NULL);
}

/* Bytes of an MCID's requests (of the window's C) that this node's memory
 * served: event 1 reads and writebacks, 2 reads, 3 writebacks (spec Table 10). */
static uint64_t evt_bytes(const struct cbqri *q, const struct cbqri_ctl *c,
                          const struct cbqri_win *w, const struct cbqri_ctr *k, unsigned mcid,
                          unsigned evt)
{
    int at = at_filter(c, k);
    unsigned conf = (unsigned)w->secure;
    uint64_t rd = evt != CBQRI_EVT_WR_BYTES ? mach_node_bytes(q->m, c->inst, mcid, at, conf, 0) : 0;
    uint64_t wr = evt != CBQRI_EVT_RD_BYTES ? mach_node_bytes(q->m, c->inst, mcid, at, conf, 1) : 0;
    return rd + wr;
}

/* ---- monitoring counters (spec 3.2-3.3, 4.2-4.3) ---- */

/* A capacity counter: reset to 0 by CONFIG_EVENT, up and down with the
 * MCID's lines, saturating at 0 -- occupancy minus the lowest it has been
 * since, which the machine follows at every eviction. */
static uint64_t cc_value(struct cbqri *q, const struct cbqri_ctl *c, const struct cbqri_win *w,
                         struct cbqri_ctr *k, unsigned mcid)
{
    const struct mach_cache *x = sampled_cache(q, c);
    uint64_t occ = occ_now(q, c, w, k, mcid);
    uint64_t low = mach_occupancy_low(q->m, c->level, c->inst, mcid, at_filter(c, k),
                                      (unsigned)w->secure, x != NULL);
    /* Draft: underflowed (lines from before the reset left); exact again
     * once the MCID held nothing at all. 1.0 just holds at 0 (CC_MCTR). */
    int invalid = !c->v10 && low > 0 && low < k->base;
    if (x && (occ * x->nsampled + x->c.sets / 2) / x->c.sets < CBQRI_MIN_SAMPLES)
        invalid = 1; /* too few sampled lines behind the estimate */
    uint64_t v = HW_FSET(0, CC_CTR, CTR, occ - low);
    return HW_FSET(v, CC_CTR, INVALID, invalid);
}

static uint64_t bc_value(struct cbqri *q, const struct cbqri_ctl *c, const struct cbqri_win *w,
                         struct cbqri_ctr *k, unsigned mcid)
{
    uint64_t n = evt_bytes(q, c, w, k, mcid, k->evt) - k->base;
    uint64_t v = HW_FSET(0, BC_CTR, CTR, n & bits_mask(q->ctr_width));
    return HW_FSET(v, BC_CTR, OVF, (n >> q->ctr_width) != 0);
}

/* The counter as *_mon_ctr_val would show it now. */
static uint64_t ctr_value(struct cbqri *q, const struct cbqri_ctl *c, const struct cbqri_win *w,
                          unsigned mcid)
{
    struct cbqri_ctr *k = &w->ctr[mcid];
    if (!k->evt) /* event None: "retains its current value" */
        return k->frozen;
    return c->kind == CBQRI_CAPACITY ? cc_value(q, c, w, k, mcid) : bc_value(q, c, w, k, mcid);
}

static int evt_ok(const struct cbqri_ctl *c, unsigned evt)
{
    return c->kind == CBQRI_CAPACITY ? evt <= CBQRI_EVT_OCCUPANCY : evt <= CBQRI_EVT_WR_BYTES;
}

static void config_event(struct cbqri *q, const struct cbqri_ctl *c, struct cbqri_win *w,
                         unsigned mcid, unsigned evt, unsigned atv, unsigned at)
{
    struct cbqri_ctr *k = &w->ctr[mcid];
    if (!evt) { /* stop, keeping the value (and OVF/INVALID) */
        k->frozen = ctr_value(q, c, w, mcid);
        k->evt = 0;
        return;
    }
    *k = (struct cbqri_ctr){.evt = (uint8_t)evt, .atv = (uint8_t)atv, .at = (uint8_t)at};
    if (c->kind == CBQRI_CAPACITY) {
        k->base = occ_now(q, c, w, k, mcid);
        mach_occupancy_low_reset(q->m, c->level, c->inst, mcid, at_filter(c, k),
                                 (unsigned)w->secure);
    } else
        k->base = evt_bytes(q, c, w, k, mcid, evt); /* counter and OVF start from 0 */
}

/* A *_mon_ctl operation completes (spec Tables 3, 5, 9, 11). */
static unsigned mon_op(struct cbqri *q, const struct cbqri_ctl *c, struct cbqri_win *w)
{
    uint64_t v = w->mon_ctl;
    unsigned op = (unsigned)HW_FGET(v, MON_CTL, OP), mcid = (unsigned)HW_FGET(v, MON_CTL, MCID);
    unsigned evt = (unsigned)HW_FGET(v, MON_CTL, EVT_ID), at = (unsigned)HW_FGET(v, MON_CTL, AT);
    unsigned atv = (unsigned)HW_FGET(v, MON_CTL, ATV);
    if (op != CBQRI_CONFIG_EVENT && op != CBQRI_READ_COUNTER)
        return CBQRI_ST_BAD_OP;
    if (mcid >= c->pc->mcids)
        return CBQRI_ST_BAD_ID;
    if (op == CBQRI_READ_COUNTER) { /* EVT_ID, AT and ATV are not used */
        w->ctr_val = ctr_value(q, c, w, mcid);
        return CBQRI_ST_SUCCESS;
    }
    if (!evt_ok(c, evt))
        return CBQRI_ST_MON_BAD_EVT;
    if (atv && at >= c->nat) /* with ATV 0 the AT is ignored */
        return CBQRI_ST_MON_BAD_AT;
    config_event(q, c, w, mcid, evt, atv, at);
    return CBQRI_ST_SUCCESS;
}

/* ---- allocation (spec 3.4-3.5, 4.4-4.5) and its mechanisms ---- */

static uint64_t *limit_of(const struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid,
                          unsigned at)
{
    return &w->limit[(size_t)rcid * c->nat + at];
}

/* An RCID's block masks become its class's way masks at this cache, in the
 * window's world: the secure window programs what requests with C set use
 * (spec 5.2.2). With one AT its mask serves code as well (spec 2.2:
 * unsupported AT as AT 0). */
static void cap_apply(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid)
{
    uint64_t d = *limit_of(c, w, rcid, CBQRI_AT_DATA);
    uint64_t k = c->nat > 1 ? *limit_of(c, w, rcid, CBQRI_AT_CODE) : d;
    unsigned conf = (unsigned)w->secure;
    mach_set_mask_conf(q->m, c->level, c->inst, conf, rcid, MACH_DATA,
                       mach_cbm_ways(q->m, c->level, d));
    mach_set_mask_conf(q->m, c->level, c->inst, conf, rcid, MACH_CODE,
                       mach_cbm_ways(q->m, c->level, k));
    if (!c->v10 || !c->pc->cunits)
        return;
    /* cc_cunits (1.0 CC_CUNITS): per AT where ATs have limits of their
     * own, else one limit over the RCID's lines of every AT. */
    if (c->nat > 1)
        for (unsigned at = 0; at < c->nat; at++)
            mach_set_units(q->m, c->level, c->inst, conf, rcid, (int)at,
                           w->units[(size_t)rcid * c->nat + at]);
    else
        mach_set_units(q->m, c->level, c->inst, conf, rcid, MACH_ANY, w->units[rcid]);
}

/* Blocks the window's (RCID, AT)s with an allocation of their own reserve. */
static unsigned bw_reserved(const struct cbqri_ctl *c, struct cbqri_win *w)
{
    unsigned sum = 0;
    for (unsigned r = 0; r < c->pc->rcids; r++)
        for (unsigned a = 0; a < c->nat; a++) {
            uint64_t v = *limit_of(c, w, r, a);
            if (!HW_FGET(v, BW_ALLOC, useShared))
                sum += (unsigned)HW_FGET(v, BW_ALLOC, Rbwb);
        }
    return sum;
}

/* Every (C, RCID, AT) has a limiter class of its own; one with useShared
 * sends its requests to its sharedAT's class (spec 4.5). Each window checks
 * its own reservations against MRBWB (5.2.1: same behaviour), so the two
 * worlds together may reserve more than the controller carries. Project
 * choice, as the draft does not say how the tables share a controller: the
 * limiter keeps every reservation as written; a reservation binds only
 * while its class asks for bandwidth (an idle class's goes to the others),
 * so this matters only when both worlds' reserving classes are busy at
 * once, and then the excess waits at memory. Scaling one world down would
 * let the other observe it, or disturb the TEE (5.2). */
static void bw_apply(struct cbqri *q, struct cbqri_ctl *c)
{
    for (unsigned conf = 0; conf < c->nwin; conf++) {
        struct cbqri_win *w = &c->win[conf];
        for (unsigned r = 0; r < c->pc->rcids; r++)
            for (unsigned at = 0; at < c->nat; at++) {
                uint64_t v = *limit_of(c, w, r, at);
                unsigned own = mach_bw_class(q->m, conf, r, at), use = own;
                struct bw_class_set s;
                bw_class_reset(BW_SHARE, &s);
                s.rbwb = 0;
                if (HW_FGET(v, BW_ALLOC, useShared)) {
                    use = mach_bw_class(q->m, conf, r, (unsigned)HW_FGET(v, BW_ALLOC, sharedAT));
                } else {
                    s.rbwb = (unsigned)HW_FGET(v, BW_ALLOC, Rbwb);
                    s.weight = (unsigned)HW_FGET(v, BW_ALLOC, Mweight);
                    s.hard = c->v10; /* 1.0: Mweight 0 is a hard limit (BC_BMASK) */
                }
                mach_set_bw(q->m, c->inst, own, &s);
                mach_set_bw_map(q->m, conf, r, at, use);
            }
    }
}

static void apply(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid)
{
    if (c->kind == CBQRI_CAPACITY)
        cap_apply(q, c, w, rcid);
    else
        bw_apply(q, c);
}

static unsigned cap_limit(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid,
                          unsigned at)
{
    /* "at least one capacity block must be allocated" (3.5): plat_mask_ok
     * holds the rule for every way a mask enters the machine. */
    if (!plat_mask_ok(q->p, c->level, w->operand, NULL))
        return CBQRI_ST_ALLOC_BAD_LIMIT;
    *limit_of(c, w, rcid, at) = w->operand;
    if (c->v10) /* and the unit limit with it (CC_ALLOC CONFIG_LIMIT) */
        w->units[(size_t)rcid * c->nat + at] = w->cunits;
    return CBQRI_ST_SUCCESS;
}

/* Reserved blocks of every (RCID, AT) with an allocation of its own, but
 * one. */
static unsigned bw_reserved_but(const struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid,
                                unsigned at)
{
    uint64_t v = *limit_of(c, w, rcid, at);
    return bw_reserved(c, w) -
           (HW_FGET(v, BW_ALLOC, useShared) ? 0 : (unsigned)HW_FGET(v, BW_ALLOC, Rbwb));
}

/* useShared (spec 4.5): the shared AT must exist and hold an allocation of
 * its own, and none of this RCID's ATs may be sharing the one that gives
 * its own up (sharing a shared allocation is UNSPECIFIED; refused here as
 * an invalid AT, so chains and cycles never form). */
static int share_ok(const struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid, unsigned at,
                    unsigned shared)
{
    if (shared >= c->nat || shared == at ||
        HW_FGET(*limit_of(c, w, rcid, shared), BW_ALLOC, useShared))
        return 0;
    for (unsigned a = 0; a < c->nat; a++) {
        uint64_t v = *limit_of(c, w, rcid, a);
        if (a != at && HW_FGET(v, BW_ALLOC, useShared) && HW_FGET(v, BW_ALLOC, sharedAT) == at)
            return 0;
    }
    return 1;
}

static unsigned bw_limit(struct cbqri_ctl *c, struct cbqri_win *w, unsigned rcid, unsigned at)
{
    uint64_t v = w->operand;
    if (HW_FGET(v, BW_ALLOC, useShared)) { /* Rbwb and Mweight are ignored */
        if (!share_ok(c, w, rcid, at, (unsigned)HW_FGET(v, BW_ALLOC, sharedAT)))
            return CBQRI_ST_ALLOC_BAD_AT;
    } else {
        unsigned rbwb = (unsigned)HW_FGET(v, BW_ALLOC, Rbwb), max = c->pc->mrbwb;
        if (rbwb < 1 || rbwb > max || bw_reserved_but(c, w, rcid, at) + rbwb > max)
            return CBQRI_ST_ALLOC_BAD_LIMIT;
    }
    *limit_of(c, w, rcid, at) = v;
    return CBQRI_ST_SUCCESS;
}

/* A *_alloc_ctl operation completes (spec Tables 6, 7, 12, 13). */
static unsigned alloc_op(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    uint64_t v = w->alloc_ctl;
    unsigned op = (unsigned)HW_FGET(v, ALLOC_CTL, OP), rcid = (unsigned)HW_FGET(v, ALLOC_CTL, RCID);
    unsigned at = (unsigned)HW_FGET(v, ALLOC_CTL, AT);
    int flush = c->kind == CBQRI_CAPACITY && c->pc->frcid;
    if (op != CBQRI_CONFIG_LIMIT && op != CBQRI_READ_LIMIT && !(op == CBQRI_FLUSH_RCID && flush))
        return CBQRI_ST_BAD_OP;
    if (rcid >= c->pc->rcids)
        return CBQRI_ST_BAD_ID;
    if (at >= c->nat)
        return CBQRI_ST_ALLOC_BAD_AT;
    if (op == CBQRI_READ_LIMIT) {
        w->operand = *limit_of(c, w, rcid, at);
        if (c->v10 && c->kind == CBQRI_CAPACITY)
            w->cunits = w->units[(size_t)rcid * c->nat + at];
        return CBQRI_ST_SUCCESS;
    }
    if (op == CBQRI_FLUSH_RCID) { /* the lines (RCID, AT) filled, in the window's world */
        mach_flush_class(q->m, c->level, c->inst, (unsigned)w->secure, rcid,
                         c->nat > 1 ? (int)at : MACH_ANY);
        return CBQRI_ST_SUCCESS;
    }
    unsigned st =
        c->kind == CBQRI_CAPACITY ? cap_limit(q, c, w, rcid, at) : bw_limit(c, w, rcid, at);
    if (st == CBQRI_ST_SUCCESS)
        apply(q, c, w, rcid);
    return st;
}

/* ---- time: operations complete busy_cycles after their write ---- */

/* STATUS and BUSY sit at the same bits of *_mon_ctl and *_alloc_ctl. */
static void finish(uint64_t *ctl, unsigned status)
{
    *ctl = HW_FSET(*ctl, MON_CTL, STATUS, status); /* same bits in alloc_ctl */
    *ctl = HW_FSET(*ctl, MON_CTL, BUSY, 0);
}

static void complete_due(struct cbqri *q)
{
    for (unsigned i = 0; i < q->nctl; i++)
        for (unsigned s = 0; s < q->ctl[i].nwin; s++) {
            struct cbqri_ctl *c = &q->ctl[i];
            struct cbqri_win *w = &c->win[s];
            if (HW_FGET(w->mon_ctl, MON_CTL, BUSY) && w->mon_due <= q->now)
                finish(&w->mon_ctl, mon_op(q, c, w));
            if (HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY) && w->alloc_due <= q->now)
                finish(&w->alloc_ctl, alloc_op(q, c, w));
        }
}

/* Brings the model to time now: the operations due complete. */
static void sync(struct cbqri *q, uint64_t now)
{
    if (now > q->now)
        q->now = now;
    complete_due(q);
}

void cbqri_tick(struct cbqri *q, uint64_t now)
{
    sync(q, now);
}

uint64_t cbqri_next_due(const struct cbqri *q)
{
    uint64_t t = UINT64_MAX;
    for (unsigned i = 0; i < q->nctl; i++)
        for (unsigned s = 0; s < q->ctl[i].nwin; s++) {
            const struct cbqri_win *w = &q->ctl[i].win[s];
            if (HW_FGET(w->mon_ctl, MON_CTL, BUSY) && w->mon_due < t)
                t = w->mon_due;
            if (HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY) && w->alloc_due < t)
                t = w->alloc_due;
        }
    return t;
}

uint64_t cbqri_next_setting_due(const struct cbqri *q)
{
    uint64_t t = UINT64_MAX;
    for (unsigned i = 0; i < q->nctl; i++)
        for (unsigned s = 0; s < q->ctl[i].nwin; s++) {
            const struct cbqri_win *w = &q->ctl[i].win[s];
            if (HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY) && w->alloc_due < t &&
                HW_FGET(w->alloc_ctl, ALLOC_CTL, OP) != CBQRI_READ_LIMIT)
                t = w->alloc_due;
        }
    return t;
}

/* A control register write starts an operation: BUSY, STATUS 0 until done. */
static void start(struct cbqri *q, uint64_t *ctl, uint64_t *due, uint64_t v)
{
    *ctl = HW_FSET(HW_FSET(v, MON_CTL, STATUS, 0), MON_CTL, BUSY, 1);
    *due = q->now + q->busy_cycles * MACH_TICK;
    complete_due(q);
}

/* ---- registers as data ---- */

struct cbqri_reg {
    const char *name;
    uint32_t off;
    uint64_t rw;    /* bits software writes (WARL); the rest read-only or WPRI, reading 0 */
    uint64_t rw_at; /* writable only where the controller supports per-AT limits */
    uint64_t reset;
    const char *cite;
    uint64_t (*read)(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w);
    void (*write)(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, uint64_t v);
};

static const struct cbqri_reg *reg_at(const struct cbqri_ctl *c, uint32_t off);

/* The register's writable bits on this controller. */
static uint64_t writable(const struct cbqri_ctl *c, const struct cbqri_reg *r)
{
    uint64_t m = r->rw | (c->nat > 1 ? r->rw_at : 0);
    if (r->off == CBQRI_BLOCK_MASK && c->kind == CBQRI_CAPACITY)
        m &= bits_mask(c->pc->blocks); /* bits NCBLKS..BMW-1 read-only zero (3.5) */
    return m;
}

static uint64_t cc_cap_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)w;
    uint64_t v = HW_FSET(0, CC_CAP, VER, c->v10 ? CBQRI_VER_1_0 : CBQRI_VER);
    v = HW_FSET(v, CC_CAP, NCBLKS, c->pc->blocks);
    v = HW_FSET(v, CC_CAP, FRCID, c->pc->frcid != 0);
    if (!c->v10) /* bits 25 up are reserved in the draft (3.1) */
        return v;
    v = HW_FSET(v, CC_CAP, CUNITS, c->pc->cunits != 0);
    v = HW_FSET(v, CC_CAP, RPFX, q->rpfx);
    return HW_FSET(v, CC_CAP, P, q->pfx); /* 0 unless RPFX (CC_CAP) */
}

static uint64_t bc_cap_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)w;
    uint64_t v = HW_FSET(0, BC_CAP, VER, c->v10 ? CBQRI_VER_1_0 : CBQRI_VER);
    v = HW_FSET(v, BC_CAP, NBWBLKS, c->pc->blocks);
    v = HW_FSET(v, BC_CAP, MRBWB, c->pc->mrbwb);
    if (!c->v10) /* bits 24-31 are reserved in the draft (4.1) */
        return v;
    v = HW_FSET(v, BC_CAP, RPFX, q->rpfx);
    return HW_FSET(v, BC_CAP, P, q->pfx);
}

/* Without monitoring, *_mon_ctl and *_mon_ctr_val are read-only zero (3.2). */
static uint64_t mon_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)q;
    return c->mon ? w->mon_ctl : 0;
}

static uint64_t ctr_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)q;
    return c->mon ? w->ctr_val : 0;
}

static uint64_t alloc_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)q, (void)c;
    return w->alloc_ctl;
}

static uint64_t operand_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)q, (void)c;
    return w->operand;
}

/* Read-only zero without CUNITS (CC_CUNITS). */
static uint64_t cunits_read(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w)
{
    (void)q;
    return c->pc->cunits ? w->cunits : 0;
}

static void ro_write(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, uint64_t v)
{
    (void)q, (void)c, (void)w, (void)v;
}

/* Writes while BUSY are ignored (3.2, 3.4, 4.2: the spec allows it). */
static void mon_write(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, uint64_t v)
{
    if (!c->mon || HW_FGET(w->mon_ctl, MON_CTL, BUSY))
        return;
    start(q, &w->mon_ctl, &w->mon_due, v & writable(c, reg_at(c, CBQRI_MON_CTL)));
}

static void alloc_write(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, uint64_t v)
{
    if (HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY))
        return;
    start(q, &w->alloc_ctl, &w->alloc_due, v & writable(c, reg_at(c, CBQRI_ALLOC_CTL)));
}

static void operand_write(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, uint64_t v)
{
    (void)q;
    if (HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY))
        return;
    w->operand = v & writable(c, reg_at(c, CBQRI_BLOCK_MASK));
}

/* WARL: a limit above the instance's lines is the instance's lines. */
static void cunits_write(struct cbqri *q, struct cbqri_ctl *c, struct cbqri_win *w, uint64_t v)
{
    (void)q;
    if (!c->pc->cunits || HW_FGET(w->alloc_ctl, ALLOC_CTL, BUSY))
        return;
    w->cunits = v < c->lines ? v : c->lines;
}

#define MON_RW   (HW_FMASK(MON_CTL, OP) | HW_FMASK(MON_CTL, MCID) | HW_FMASK(MON_CTL, EVT_ID))
#define MON_AT   (HW_FMASK(MON_CTL, AT) | HW_FMASK(MON_CTL, ATV))
#define ALLOC_RW (HW_FMASK(ALLOC_CTL, OP) | HW_FMASK(ALLOC_CTL, RCID))
#define BW_RW    (HW_FMASK(BW_ALLOC, Rbwb) | HW_FMASK(BW_ALLOC, Mweight))
#define BW_AT    (HW_FMASK(BW_ALLOC, sharedAT) | HW_FMASK(BW_ALLOC, useShared))

/* Per text and kind. Reset values: BUSY 0 in both, STATUS 0 in the draft
 * (3, 4); every other field is UNSPECIFIED (1.0: STATUS too) and 0 here.
 * Capabilities are computed. The draft cites its sections, 1.0 its
 * AsciiDoc anchors (its capacity and bandwidth chapters). */
static const struct cbqri_reg cc_regs_draft[CBQRI_NREG] = {
    {"cc_capabilities", CBQRI_CAPABILITIES, 0, 0, 0, "draft 3.1, Figure 2", cc_cap_read, ro_write},
    {"cc_mon_ctl", CBQRI_MON_CTL, MON_RW, MON_AT, 0, "draft 3.2, Figure 3, Tables 3-5", mon_read,
     mon_write},
    {"cc_mon_ctr_val", CBQRI_MON_CTR_VAL, 0, 0, 0, "draft 3.3, Figure 4", ctr_read, ro_write},
    {"cc_alloc_ctl", CBQRI_ALLOC_CTL, ALLOC_RW, HW_FMASK(ALLOC_CTL, AT), 0,
     "draft 3.4, Figure 5, Tables 6-7", alloc_read, alloc_write},
    {"cc_block_mask", CBQRI_BLOCK_MASK, ~0ull, 0, 0, "draft 3.5", operand_read, operand_write},
};

static const struct cbqri_reg cc_regs_10[CBQRI_NREG] = {
    {"cc_capabilities", CBQRI_CAPABILITIES, 0, 0, 0, "1.0 CC_CAP", cc_cap_read, ro_write},
    {"cc_mon_ctl", CBQRI_MON_CTL, MON_RW, MON_AT, 0,
     "1.0 CC_MCTL, CC_MON_OP, CC_EVT_ID, CC_MON_STS", mon_read, mon_write},
    {"cc_mon_ctr_val", CBQRI_MON_CTR_VAL, 0, 0, 0, "1.0 CC_MCTR", ctr_read, ro_write},
    {"cc_alloc_ctl", CBQRI_ALLOC_CTL, ALLOC_RW, HW_FMASK(ALLOC_CTL, AT), 0,
     "1.0 CC_ALLOC, CC_ALLOC_OP, CC_ALLOC_STS", alloc_read, alloc_write},
    {"cc_block_mask", CBQRI_BLOCK_MASK, ~0ull, 0, 0, "1.0 CC_BMASK", operand_read, operand_write},
    {"cc_cunits", CBQRI_CUNITS, ~0ull, 0, 0, "1.0 CC_CUNITS", cunits_read, cunits_write},
};

static const struct cbqri_reg bc_regs_draft[CBQRI_NREG] = {
    {"bc_capabilities", CBQRI_CAPABILITIES, 0, 0, 0, "draft 4.1, Figure 6", bc_cap_read, ro_write},
    {"bc_mon_ctl", CBQRI_MON_CTL, MON_RW, MON_AT, 0, "draft 4.2, Figure 7, Tables 9-11", mon_read,
     mon_write},
    {"bc_mon_ctr_val", CBQRI_MON_CTR_VAL, 0, 0, 0, "draft 4.3, Figure 8", ctr_read, ro_write},
    {"bc_alloc_ctl", CBQRI_ALLOC_CTL, ALLOC_RW, HW_FMASK(ALLOC_CTL, AT), 0,
     "draft 4.4, Figure 9, Tables 12-13", alloc_read, alloc_write},
    {"bc_bw_alloc", CBQRI_BW_ALLOC, BW_RW, BW_AT, 0, "draft 4.5, Figure 10", operand_read,
     operand_write},
};

static const struct cbqri_reg bc_regs_10[CBQRI_NREG] = {
    {"bc_capabilities", CBQRI_CAPABILITIES, 0, 0, 0, "1.0 BC_CAP", bc_cap_read, ro_write},
    {"bc_mon_ctl", CBQRI_MON_CTL, MON_RW, MON_AT, 0,
     "1.0 BC_MCTL, BC_MON_OP, BC_EVT_ID, BC_MON_STS", mon_read, mon_write},
    {"bc_mon_ctr_val", CBQRI_MON_CTR_VAL, 0, 0, 0, "1.0 BC_MCTR", ctr_read, ro_write},
    {"bc_alloc_ctl", CBQRI_ALLOC_CTL, ALLOC_RW, HW_FMASK(ALLOC_CTL, AT), 0,
     "1.0 BC_ALLOC, BC_ALLOC_OP, BC_ALLOC_STS", alloc_read, alloc_write},
    {"bc_bw_alloc", CBQRI_BW_ALLOC, BW_RW, BW_AT, 0, "1.0 BC_BMASK", operand_read, operand_write},
};

static const struct cbqri_reg *reg_at(const struct cbqri_ctl *c, uint32_t off)
{
    const struct cbqri_reg *t = c->kind == CBQRI_CAPACITY ? c->v10 ? cc_regs_10 : cc_regs_draft
                                : c->v10                  ? bc_regs_10
                                                          : bc_regs_draft;
    for (int i = 0; i < CBQRI_NREG; i++)
        if (t[i].name && t[i].off == off)
            return &t[i];
    return NULL;
}

/* ---- decoding an access ---- */

struct access {
    struct cbqri_ctl *c;
    struct cbqri_win *w;
    const struct cbqri_reg *r;
    unsigned slot; /* register index in the window, for split writes */
};

/* The controller whose window holds addr, and which window (secure: the
 * draft's second one). */
static struct cbqri_ctl *find_window(const struct cbqri *q, uint64_t addr, int *secure)
{
    for (unsigned i = 0; i < q->nctl; i++) {
        const struct cbqri_ctl *c = &q->ctl[i];
        *secure = 0;
        if (addr - c->base < c->size)
            return &q->ctl[i];
        *secure = 1;
        if (c->nwin > 1 && addr - (c->base + CBQRI_SECURE_OFFSET) < c->size)
            return &q->ctl[i];
    }
    *secure = 0;
    return NULL;
}

/* The privilege that may reach each window (project choice, cbqri.h). */
static int may_reach(enum cbqri_mode md, int secure)
{
    if (secure)
        return md == CBQRI_SECURE_M;
    return md == CBQRI_M || md == CBQRI_S || md == CBQRI_SECURE_M;
}

/* The offset of addr in its controller's window. */
static uint32_t win_off(const struct cbqri_ctl *c, uint64_t addr, int secure)
{
    return (uint32_t)(addr - c->base - (secure ? CBQRI_SECURE_OFFSET : 0));
}

/* Everything that makes an access fault, checked before anything changes. */
static enum hw_fault decode(struct cbqri *q, unsigned hart, enum cbqri_mode md, uint64_t addr,
                            unsigned size, struct access *a)
{
    int secure = 0;
    if (hart >= q->m->ncpu || (unsigned)md >= CBQRI_NMODE || (size != 4 && size != 8) ||
        addr % size)
        goto fault;
    a->c = find_window(q, addr, &secure);
    if (!a->c || !may_reach(md, secure))
        goto fault;
    uint32_t off = win_off(a->c, addr, secure);
    a->r = reg_at(a->c, off & ~7u);
    if (!a->r)
        goto fault;
    a->w = &a->c->win[secure];
    a->slot = off / 8;
    return HW_OK;
fault:
    q->faults++;
    q->fault_addr = addr;
    return HW_ACCESS_FAULT;
}

/* The time of an access: the model's clock, or the hart's if later. */
static void begin(struct cbqri *q, unsigned hart)
{
    sync(q, q->m->cpu[hart].now);
}

static void end(struct cbqri *q)
{
    q->now += q->access_cycles * MACH_TICK;
}

enum hw_fault cbqri_mmio_read(struct cbqri *q, unsigned hart, enum cbqri_mode md, uint64_t addr,
                              unsigned size, uint64_t *val)
{
    struct access a;
    *val = 0;
    enum hw_fault f = decode(q, hart, md, addr, size, &a);
    if (f)
        return f;
    begin(q, hart);
    uint64_t v = a.r->read(q, a.c, a.w);
    *val = size == 8 ? v : (addr & 4) ? v >> 32 : v & 0xffffffffu;
    end(q);
    return HW_OK;
}

/* A 4-byte write. Draft: the halves meet in the register's slot and take
 * effect together, in either order. 1.0: the half takes effect at once,
 * the other half as the register holds it; a half with no writable bit (a
 * control register's STATUS/BUSY half, bc_bw_alloc's WPRI half) changes
 * nothing and starts nothing (the rules are in cbqri.h). */
static void write_half(struct cbqri *q, struct access *a, uint64_t addr, uint64_t val)
{
    struct cbqri_win *w = a->w;
    unsigned sh = addr & 4 ? 32 : 0;
    uint64_t part = (val & 0xffffffffu) << sh, keep = ~(0xffffffffull << sh);
    if (a->c->v10) {
        if (writable(a->c, a->r) & ~keep)
            a->r->write(q, a->c, w, (a->r->read(q, a->c, w) & keep) | part);
        return;
    }
    w->half[a->slot] = (w->half[a->slot] & keep) | part;
    w->have[a->slot] |= sh ? 2 : 1;
    if (w->have[a->slot] == 3) {
        w->have[a->slot] = 0;
        a->r->write(q, a->c, w, w->half[a->slot]);
    }
}

enum hw_fault cbqri_mmio_write(struct cbqri *q, unsigned hart, enum cbqri_mode md, uint64_t addr,
                               unsigned size, uint64_t val)
{
    struct access a;
    enum hw_fault f = decode(q, hart, md, addr, size, &a);
    if (f)
        return f;
    begin(q, hart);
    if (size == 4) {
        write_half(q, &a, addr, val);
    } else {
        a.w->have[a.slot] = 0;
        a.r->write(q, a.c, a.w, val);
    }
    end(q);
    return HW_OK;
}

const char *cbqri_reg_name(const struct cbqri *q, uint64_t addr, const struct cbqri_ctl **ctl,
                           int *secure)
{
    int s = 0;
    const struct cbqri_ctl *c = find_window(q, addr, &s);
    const struct cbqri_reg *r = c ? reg_at(c, win_off(c, addr, s) & ~7u) : NULL;
    if (ctl)
        *ctl = r ? c : NULL;
    if (secure)
        *secure = s;
    return r ? r->name : NULL;
}

/* ---- the hart CSRs (draft 2.1.1; Ssqosid ch. 2; docs/registers.md 2) ---- */

static int m_mode(enum cbqri_mode md)
{
    return md == CBQRI_M || md == CBQRI_SECURE_M;
}

/* Which CSRs exist, and who may reach them. sqoscfg and srmcfg are S-mode
 * CSRs: M and S reach them, U may not (illegal instruction), and with V=1
 * they raise a virtual-instruction exception (draft 2.1.1, Ssqosid ch. 2);
 * Ssqosid adds that with Smstateen, mstateen0 bit 55 clear makes every
 * mode below M take an illegal instruction, V=1 included. mstateen0 is an
 * M-mode CSR (Smstateen); mstateen0h its high half on RV32. */
int cbqri_csr_exists(const struct cbqri *q, unsigned csr)
{
    if (!q->v10)
        return csr == CBQRI_CSR_SQOSCFG;
    if (csr == CBQRI_CSR_SRMCFG)
        return 1;
    return q->smstateen &&
           (csr == CBQRI_CSR_MSTATEEN0 || (csr == CBQRI_CSR_MSTATEEN0H && q->xlen == 32));
}

static enum hw_fault csr_check(const struct cbqri *q, unsigned hart, enum cbqri_mode md,
                               unsigned csr)
{
    if (hart >= q->m->ncpu || (unsigned)md >= CBQRI_NMODE || !cbqri_csr_exists(q, csr))
        return HW_ILLEGAL;
    if (csr == CBQRI_CSR_MSTATEEN0 || csr == CBQRI_CSR_MSTATEEN0H)
        return m_mode(md) ? HW_OK : HW_ILLEGAL;
    if (csr == CBQRI_CSR_SRMCFG && !m_mode(md) && q->smstateen &&
        !HW_FGET(q->mstateen0[hart], MSTATEEN0, SRMCFG))
        return HW_ILLEGAL;
    if (md == CBQRI_U)
        return HW_ILLEGAL;
    return md == CBQRI_VS || md == CBQRI_VU ? HW_VIRTUAL : HW_OK;
}

/* A CSR's value as the hart reads it: XLEN bits. */
static uint64_t csr_value(const struct cbqri *q, unsigned hart, unsigned csr)
{
    uint64_t xmask = bits_mask(q->xlen);
    if (csr == CBQRI_CSR_MSTATEEN0)
        return q->mstateen0[hart] & xmask;
    if (csr == CBQRI_CSR_MSTATEEN0H)
        return q->mstateen0[hart] >> 32;
    return q->csr[hart];
}

enum hw_fault cbqri_csr_read(struct cbqri *q, unsigned hart, enum cbqri_mode md, unsigned csr,
                             uint64_t *val)
{
    enum hw_fault f = csr_check(q, hart, md, csr);
    *val = f ? 0 : csr_value(q, hart, csr);
    return f;
}

/* RCID and MCID are WARL over the bits that name the platform's IDs; the
 * WPRI fields and the bits above read zero. The machine tags the hart's
 * requests with the MCID the controllers count by: in RCID-prefixed mode
 * RCID << P | (MCID & (2^P - 1)) (1.0 EMCID). */
static void csr_load(struct cbqri *q, unsigned hart, uint64_t v)
{
    uint64_t rcid = HW_FGET(v, SRMCFG, RCID) & bits_mask(q->rcid_bits);
    uint64_t mcid = HW_FGET(v, SRMCFG, MCID) & bits_mask(q->mcid_bits);
    q->csr[hart] = HW_FSET(HW_FSET(0, SRMCFG, RCID, rcid), SRMCFG, MCID, mcid);
    uint64_t tag = q->rpfx ? rcid << q->pfx | (mcid & bits_mask(q->pfx)) : mcid;
    mach_set_assoc(q->m, hart, q->m->cpu[hart].task, (unsigned)rcid, (unsigned)tag);
}

enum hw_fault cbqri_csr_write(struct cbqri *q, unsigned hart, enum cbqri_mode md, unsigned csr,
                              uint64_t val)
{
    enum hw_fault f = csr_check(q, hart, md, csr);
    if (f)
        return f;
    val &= bits_mask(q->xlen);                       /* the register is XLEN bits wide */
    const uint64_t se = HW_FMASK(MSTATEEN0, SRMCFG); /* the one bit implemented */
    if (csr == CBQRI_CSR_MSTATEEN0)
        q->mstateen0[hart] = (q->mstateen0[hart] & ~bits_mask(q->xlen)) | (val & se);
    else if (csr == CBQRI_CSR_MSTATEEN0H)
        q->mstateen0[hart] = (q->mstateen0[hart] & 0xffffffffu) | ((val << 32) & se);
    else
        csr_load(q, hart, val);
    return HW_OK;
}

unsigned cbqri_id_csr(const struct cbqri *q)
{
    return q->v10 ? CBQRI_CSR_SRMCFG : CBQRI_CSR_SQOSCFG;
}

/* ---- the register interface for drivers ---- */

static enum hw_fault if_mmio_read(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t addr,
                                  unsigned size, uint64_t *val)
{
    return cbqri_mmio_read(ctx, hart, md, addr, size, val);
}

static enum hw_fault if_mmio_write(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t addr,
                                   unsigned size, uint64_t val)
{
    return cbqri_mmio_write(ctx, hart, md, addr, size, val);
}

static enum hw_fault if_csr_read(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                                 uint64_t *val)
{
    return cbqri_csr_read(ctx, hart, md, csr, val);
}

static enum hw_fault if_csr_write(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                                  uint64_t val)
{
    return cbqri_csr_write(ctx, hart, md, csr, val);
}

void cbqri_regif(struct cbqri *q, struct cbqri_regif *out)
{
    *out = (struct cbqri_regif){.ctx = q,
                                .mmio_read = if_mmio_read,
                                .mmio_write = if_mmio_write,
                                .csr_read = if_csr_read,
                                .csr_write = if_csr_write};
}

/* ---- life cycle ---- */

/* Reset of the allocation tables (draft 3, 4; 1.0 CC_REG, BC_QOS): every
 * RCID may use all the capacity for every AT, without a unit limit (RCID 0
 * must; the others are UNSPECIFIED, and the machine's own reset is the
 * same); RCID 0's AT 0 reserves all it may (MRBWB), other RCIDs nothing;
 * AT 1 shares AT 0's (1.0 names AT 0 as the one holding it, the draft "one
 * of the supported access-types"). Weights 1, the limiter's reset weight. */
static void reset_limits(struct cbqri_ctl *c, struct cbqri_win *w)
{
    for (unsigned r = 0; r < c->pc->rcids; r++)
        for (unsigned at = 0; at < c->nat; at++) {
            uint64_t v;
            if (c->kind == CBQRI_CAPACITY)
                v = bits_mask(c->pc->blocks);
            else if (at == CBQRI_AT_DATA)
                v = HW_FSET(HW_FSET(0, BW_ALLOC, Rbwb, r ? 0 : c->pc->mrbwb), BW_ALLOC, Mweight, 1);
            else
                v = HW_FSET(HW_FSET(0, BW_ALLOC, useShared, 1), BW_ALLOC, sharedAT, CBQRI_AT_DATA);
            *limit_of(c, w, r, at) = v;
            if (w->units)
                w->units[(size_t)r * c->nat + at] = 0;
        }
}

static void reset_window(struct cbqri_ctl *c, struct cbqri_win *w)
{
    w->mon_ctl = reg_at(c, CBQRI_MON_CTL)->reset;
    w->ctr_val = reg_at(c, CBQRI_MON_CTR_VAL)->reset;
    w->alloc_ctl = reg_at(c, CBQRI_ALLOC_CTL)->reset;
    w->operand = reg_at(c, CBQRI_BLOCK_MASK)->reset; /* or bc_bw_alloc, same offset */
    w->cunits = 0;
    w->mon_due = w->alloc_due = 0;
    memset(w->half, 0, sizeof w->half);
    memset(w->have, 0, sizeof w->have);
    memset(w->ctr, 0, c->pc->mcids * sizeof *w->ctr);
    reset_limits(c, w);
}

void cbqri_reset(struct cbqri *q)
{
    for (unsigned i = 0; i < q->nctl; i++) {
        struct cbqri_ctl *c = &q->ctl[i];
        for (unsigned s = 0; s < c->nwin; s++) {
            reset_window(c, &c->win[s]);
            for (unsigned r = 0; c->kind == CBQRI_CAPACITY && r < c->pc->rcids; r++)
                cap_apply(q, c, &c->win[s], r);
        }
        if (c->kind == CBQRI_BANDWIDTH)
            bw_apply(q, c); /* every (world, RCID, AT) at once */
    }
    for (unsigned h = 0; h < q->m->ncpu; h++) {
        csr_load(q, h, 0);   /* RCID 0 at reset (2.1.1, Ssqosid); MCID 0, a legal value */
        q->mstateen0[h] = 0; /* Smstateen: writable bits reset to 0 */
    }
}

static int add_ctl(struct cbqri *q, const struct plat_cbqri_ctl *pc, enum cbqri_kind kind,
                   unsigned inst)
{
    struct cbqri_ctl *c = &q->ctl[q->nctl++];
    const struct plat *p = q->p;
    c->kind = kind;
    c->pc = pc;
    c->level = kind == CBQRI_CAPACITY ? pc->level : PLAT_NLEVEL;
    c->inst = inst;
    c->base = pc->base + inst * pc->stride;
    c->size = pc->stride;
    c->v10 = q->v10;
    c->nwin = q->v10 ? 1 : 2; /* 1.0 has no secure interface */
    c->nat = kind == CBQRI_BANDWIDTH || p->cache[c->level].alloc.cdp ? 2 : 1;
    c->mon =
        p->mon.tags &&
        (kind == CBQRI_CAPACITY ? p->mon.occupancy && p->cache[c->level].monitored : p->mon.total);
    if (kind == CBQRI_CAPACITY) {
        const struct cache_geom *g = &p->cache[c->level].geom;
        c->lines = g->size / g->line;
    }
    for (unsigned s = 0; s < c->nwin; s++) {
        struct cbqri_win *w = &c->win[s];
        w->secure = (int)s;
        w->limit = calloc((size_t)pc->rcids * c->nat, sizeof *w->limit);
        w->ctr = calloc(pc->mcids, sizeof *w->ctr);
        if (q->v10 && kind == CBQRI_CAPACITY &&
            !(w->units = calloc((size_t)pc->rcids * c->nat, sizeof *w->units)))
            return -1;
        if (!w->limit || !w->ctr)
            return -1;
    }
    return 0;
}

/* No secure window may land on a normal one (they alias at a constant
 * offset) or pass the top of the address space. */
static int windows_bad(const struct cbqri *q)
{
    for (unsigned i = 0; i < q->nctl && !q->v10; i++)
        for (unsigned j = 0; j < q->nctl; j++) {
            if (q->ctl[i].base > UINT64_MAX - CBQRI_SECURE_OFFSET - CBQRI_WINDOW)
                return 1;
            uint64_t s = q->ctl[i].base + CBQRI_SECURE_OFFSET, n = q->ctl[j].base;
            if (s < n + CBQRI_WINDOW && n < s + CBQRI_WINDOW)
                return 1;
        }
    return 0;
}

static int build(struct cbqri *q, struct err *e)
{
    const struct plat *p = q->p;
    unsigned n = 0, maxr = 0;
    for (unsigned k = 0; k < p->n_cbqri_cap; k++)
        n += q->m->ncache[p->cbqri_cap[k].level];
    for (unsigned k = 0; k < p->n_cbqri_bw; k++)
        n += p->nnodes;
    if (!(q->ctl = calloc(n ? n : 1, sizeof *q->ctl)))
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate the CBQRI controllers");
    for (unsigned k = 0; k < p->n_cbqri_cap; k++) {
        const struct plat_cbqri_ctl *pc = &p->cbqri_cap[k];
        if (pc->blocks > 64) /* the machine's way masks are 64 bits */
            return err_set(e, -QOSIM_EUNSUP, "NCBLKS %u: qosim models at most 64", pc->blocks);
        for (unsigned i = 0; i < q->m->ncache[pc->level]; i++)
            if (add_ctl(q, pc, CBQRI_CAPACITY, i))
                return err_set(e, -QOSIM_ENOMEM, "cannot allocate the CBQRI tables");
        maxr = pc->rcids > maxr ? pc->rcids : maxr;
    }
    for (unsigned k = 0; k < p->n_cbqri_bw; k++) {
        for (unsigned i = 0; i < p->nnodes; i++)
            if (add_ctl(q, &p->cbqri_bw[k], CBQRI_BANDWIDTH, i))
                return err_set(e, -QOSIM_ENOMEM, "cannot allocate the CBQRI tables");
        maxr = p->cbqri_bw[k].rcids > maxr ? p->cbqri_bw[k].rcids : maxr;
    }
    if (windows_bad(q))
        return err_set(e, -QOSIM_EINVAL,
                       "a CBQRI secure window (normal + 0x%llx) lands on a normal window or "
                       "past the top of the address space",
                       (unsigned long long)CBQRI_SECURE_OFFSET);
    q->rcid_bits = bits_for(maxr);
    q->mcid_bits = bits_for(p->mon.tags);
    return 0;
}

static int alloc_state(struct cbqri *q, struct err *e)
{
    q->csr = calloc(q->m->ncpu, sizeof *q->csr);
    q->mstateen0 = calloc(q->m->ncpu, sizeof *q->mstateen0);
    if (!q->csr || !q->mstateen0)
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate the CBQRI state");
    return 0;
}

int cbqri_init(struct cbqri *q, struct mach *m, struct err *e)
{
    memset(q, 0, sizeof *q);
    q->m = m;
    q->p = &m->p;
    if (q->p->vendor != PLAT_RISCV)
        return err_set(e, -QOSIM_EUNSUP, "%s is not a RISC-V platform: it has no CBQRI",
                       q->p->name);
    q->v10 = q->p->cbqri_spec == PLAT_CBQRI_1_0;
    q->xlen = q->v10 ? q->p->core.xlen : 32; /* sqoscfg is 32 bits (draft 2.1.1) */
    q->smstateen = q->v10 && q->p->core.smstateen;
    q->rpfx = q->v10 && q->p->cbqri_rpfx;
    q->pfx = q->rpfx ? q->p->cbqri_p : 0;
    q->busy_cycles = q->p->cbqri_busy;
    q->access_cycles = q->p->cbqri_access;
    q->ctr_width = q->p->mon.width < 62 ? q->p->mon.width : 62; /* CTR[61:0] */
    int rc = build(q, e);
    if (!rc)
        rc = alloc_state(q, e);
    if (rc) {
        cbqri_free(q);
        return rc;
    }
    cbqri_reset(q);
    return 0;
}

void cbqri_free(struct cbqri *q)
{
    for (unsigned i = 0; q->ctl && i < q->nctl; i++)
        for (int s = 0; s < 2; s++) {
            free(q->ctl[i].win[s].limit);
            free(q->ctl[i].win[s].units);
            free(q->ctl[i].win[s].ctr);
        }
    free(q->ctl);
    free(q->csr);
    free(q->mstateen0);
    memset(q, 0, sizeof *q);
}
