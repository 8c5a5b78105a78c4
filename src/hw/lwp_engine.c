/* The LWP event engine: what each retired instruction does to the
 * counters, and the record an expired counter gathers (the rules and the
 * project's choices are in lwp.h's header comment). Kept apart from lwp.c,
 * which owns the LWPCB and the ring: this is the per-instruction path, and
 * it only reads the state lwp.c caches and stores through lwp_store. */
#include "lwp.h"

/* Figure 4's data source for what served a load (enum mach_src). */
static const uint8_t src_code[] = {
    [PLAT_L1I] = LWP_SRC_NONE,
    [PLAT_L1D] = LWP_SRC_NONE,
    [PLAT_L2] = LWP_SRC_NONE, /* inside the core: no northbridge status */
    [PLAT_L3] = LWP_SRC_LOCAL_L3,
    [MACH_SRC_MEM_LOCAL] = LWP_SRC_DRAM,
    [MACH_SRC_MEM_REMOTE] = LWP_SRC_DRAM,
};

/* The Filters bit (5.4) that makes a data source eligible under CLF. */
static uint32_t clf_bit(unsigned code)
{
    switch (code) {
    case LWP_SRC_LOCAL_L3:
        return (uint32_t)HW_FMASK(LWPCB_FILTERS, NBC);
    case LWP_SRC_REMOTE:
        return (uint32_t)HW_FMASK(LWPCB_FILTERS, RDC);
    case LWP_SRC_DRAM:
        return (uint32_t)HW_FMASK(LWPCB_FILTERS, RAM);
    case LWP_SRC_OTHER:
        return (uint32_t)HW_FMASK(LWPCB_FILTERS, OTH);
    default:
        return 0; /* no valid status: no bit describes it */
    }
}

/* 4.3.1: counted in steps of 16 cycles, saturating at 2^n - 16. */
static uint32_t latency_cap(const struct lwp *u)
{
    return (uint32_t)((1ull << u->cfg.latency_bits) - 16);
}

static uint32_t latency_of(const struct lwp *u, uint32_t cycles)
{
    uint32_t l = cycles & ~15u, cap = latency_cap(u);
    return l < cap ? l : cap;
}

/* The LWPCB's cache filters (5.4), each only where CPUID says the
 * hardware has it (Table 2 ECX). MinLatency x 16, at most the cap; 0: no
 * latency filter. */
static uint32_t min_latency(const struct lwp *u, const struct lwp_cpu *c)
{
    if (!u->cfg.cache_latency)
        return 0;
    uint32_t min = (uint32_t)HW_FGET(c->filters, LWPCB_FILTERS, MinLatency) * 16;
    return min < latency_cap(u) ? min : latency_cap(u);
}

/* CLF: whether a miss from the data source code may count. */
static int source_ok(const struct lwp *u, const struct lwp_cpu *c, unsigned code)
{
    return !u->cfg.cache_level || !HW_FGET(c->filters, LWPCB_FILTERS, CLF) ||
           (c->filters & clf_bit(code));
}

/* Whether a load's miss of latency lat (rounded) from source code counts. */
static int dc_eligible(const struct lwp *u, const struct lwp_cpu *c, uint32_t lat, unsigned code)
{
    return lat >= min_latency(u, c) && source_ok(u, c, code);
}

/* One occurrence of a counter's event: 1 when it is the one to record. */
static inline int expire(struct lwp_ctr *k)
{
    if (k->counter > 1) {
        k->counter--;
        return 0;
    }
    k->counter = 0; /* frozen until the record is stored (3 "Gather") */
    return 1;
}

static int counting(const struct lwp_cpu *c)
{
    return c->state == LWP_ACTIVE && HW_FGET(c->msr0, LWPMSR0, Enabled);
}

/* A counter n occurrences down that the core did not show one by one:
 * lwp_ask let them go only while the counter stayed above zero. */
static void count_down(struct lwp_cpu *c, unsigned id, uint64_t n)
{
    int s = c->slot[id];
    if (!n || s < 0)
        return;
    struct lwp_ctr *k = &c->ctr[s];
    k->counter = k->counter > n ? k->counter - (uint32_t)n : 1;
}

static void catch_up(struct lwp_cpu *c, const struct core_skip *n)
{
    count_down(c, LWP_EV_INSTR, n->instr);
    count_down(c, LWP_EV_BRANCH, n->branches);
    count_down(c, LWP_EV_DCMISS, n->misses);
}

enum hw_fault lwp_retire(struct lwp *u, unsigned cpu, const struct core_insn *in)
{
    if (cpu >= u->ncpu)
        return HW_OK; /* also an absent unit: ncpu 0 */
    struct lwp_cpu *c = &u->cpu[cpu];
    if (!counting(c))
        return HW_OK;
    catch_up(c, &in->skipped);
    int s;
    unsigned due = 0;
    const struct core_acc *miss = NULL;
    uint32_t miss_lat = 0;

    if ((s = c->slot[LWP_EV_INSTR]) >= 0 && expire(&c->ctr[s]))
        due |= 1u << LWP_EV_INSTR;
    if ((in->flags & TREC_F_BRANCH) && (s = c->slot[LWP_EV_BRANCH]) >= 0 &&
        !((in->flags & TREC_F_DIRECT) && HW_FGET(c->filters, LWPCB_FILTERS, NDB)) &&
        expire(&c->ctr[s]))
        due |= 1u << LWP_EV_BRANCH;
    if ((s = c->slot[LWP_EV_DCMISS]) >= 0) {
        for (unsigned i = 0; i < in->nacc; i++) {
            const struct core_acc *a = &in->acc[i];
            if (a->kind == TREC_S || a->src <= PLAT_L1D || a->src >= sizeof src_code)
                continue; /* a store, or a hit */
            uint32_t lat = latency_of(u, a->lat);
            if (!dc_eligible(u, c, lat, src_code[a->src]))
                continue;
            if (expire(&c->ctr[s])) {
                miss = a;
                miss_lat = lat;
                due |= 1u << LWP_EV_DCMISS;
                break; /* frozen: the instruction's later misses cannot count */
            }
        }
    }
    if (!due)
        return HW_OK;

    /* One record: the rarest event first (lwp.h). */
    struct lwp_rec r = {.ip = in->ip};
    if (miss) {
        r.event_id = LWP_EV_DCMISS;
        r.data = miss_lat;
        r.flags = (uint32_t)HW_FSET(0, LWP_REC_DC, Source, src_code[miss->src]);
        if (u->cfg.data_address) {
            r.flags |= (uint32_t)HW_FMASK(LWP_REC_DC, AddrValid);
            r.addr = miss->addr;
        }
    } else if (due & 1u << LWP_EV_BRANCH) {
        r.event_id = LWP_EV_BRANCH;
        r.addr = in->next;
        if (in->flags & (TREC_F_TAKEN | TREC_F_DIRECT)) /* a jump is always taken (4.2) */
            r.flags |= (uint32_t)HW_FMASK(LWP_REC_BR, Taken);
        if (u->cfg.branch_prediction && (in->pred & CORE_PRD_VALID)) {
            r.flags |= (uint32_t)HW_FMASK(LWP_REC_BR, PrdValid);
            if (in->pred & CORE_PRD_OK)
                r.flags |= (uint32_t)HW_FMASK(LWP_REC_BR, Predicted);
        }
    } else {
        r.event_id = LWP_EV_INSTR;
    }
    return lwp_store(u, cpu, &r);
}

/* Occurrences that may go by before counter k must see one. */
static uint64_t quiet_of(const struct lwp_cpu *c, unsigned id)
{
    int s = c->slot[id];
    return s < 0 ? UINT64_MAX : c->ctr[s].counter ? c->ctr[s].counter - 1 : 0;
}

struct core_ask lwp_ask(const struct lwp *u, unsigned cpu)
{
    struct core_ask a = {.quiet = UINT64_MAX}; /* nothing to count */
    if (cpu >= u->ncpu || !counting(&u->cpu[cpu]))
        return a;
    const struct lwp_cpu *c = &u->cpu[cpu];
    a.quiet = quiet_of(c, LWP_EV_INSTR);
    if (c->slot[LWP_EV_BRANCH] >= 0) {
        a.want |= CORE_WANT_BRANCH;
        if (HW_FGET(c->filters, LWPCB_FILTERS, NDB))
            a.want |= CORE_WANT_NO_DIRECT;
        a.quiet_br = quiet_of(c, LWP_EV_BRANCH);
    }
    if (c->slot[LWP_EV_DCMISS] >= 0) {
        /* dc_eligible on the core's terms: a latency rounded down to 16
         * and capped reaches a threshold that is a multiple of 16 and at
         * most the cap exactly when the raw cycles do. */
        a.want |= CORE_WANT_LOAD_MISS;
        a.quiet_miss = quiet_of(c, LWP_EV_DCMISS);
        a.miss_lat = min_latency(u, c);
        for (unsigned src = PLAT_L2; src < sizeof src_code; src++)
            if (source_ok(u, c, src_code[src]))
                a.miss_src |= 1u << src;
    }
    return a;
}

struct core_ask lwp_observe(void *ctx, const struct mach_cpu *p, const struct core_insn *in)
{
    struct lwp *u = ctx;
    if (lwp_retire(u, p->id, in) == HW_PF)
        u->cpu[p->id].pf_pending = 1;
    return lwp_ask(u, p->id);
}

struct core_ask lwp_observe_sync(void *ctx, const struct mach_cpu *p, const struct core_skip *n)
{
    struct lwp *u = ctx;
    if (p->id < u->ncpu && counting(&u->cpu[p->id]))
        catch_up(&u->cpu[p->id], n);
    return lwp_ask(u, p->id);
}

int lwp_take_pf(struct lwp *u, unsigned cpu, struct vmem_fault *f)
{
    if (!u->present || cpu >= u->ncpu || !u->cpu[cpu].pf_pending)
        return 0;
    u->cpu[cpu].pf_pending = 0;
    *f = u->cpu[cpu].pf;
    return 1;
}
