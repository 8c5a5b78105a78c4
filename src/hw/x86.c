#include "x86.h"

#include "util/bits.h"

#include <stdlib.h>
#include <string.h>

#define X86_LWP_SEED 0x4c5750ull /* "LWP" */

/* ---- enumeration facts derived from the profile ---- */

static int has_l3_mon(const struct x86 *x)
{
    return x->p->mon.tags && x->p->cache[PLAT_L3].present && x->p->cache[PLAT_L3].monitored;
}

static int has_cat(const struct x86 *x, enum plat_level l)
{
    return x->ncos[l] != 0;
}

static int has_cdp(const struct x86 *x, enum plat_level l)
{
    return has_cat(x, l) && x->p->cache[l].alloc.cdp;
}

static int has_mba(const struct x86 *x)
{
    return !x->amd && x->p->bw.kind == BW_DELAY;
}

static int has_l3be(const struct x86 *x)
{
    return x->amd && x->p->bw.kind == BW_RATE;
}

/* ---- registers as data ---- */

enum x86_scope { SC_THREAD, SC_L3, SC_L2, SC_QOS_DOMAIN };

struct x86_reg {
    const char *name;
    uint32_t base;
    enum x86_scope scope;
    enum plat_level level; /* the cache a CFG or mask register belongs to */
    const char *cite;
    /* Registers in the bank (1 for a single MSR); 0 when the feature is absent. */
    unsigned (*count)(const struct x86 *x, const struct x86_reg *r);
    enum hw_fault (*read)(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                          uint64_t *v);
    enum hw_fault (*write)(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                           uint64_t v);
};

/* The instance of a register's scope that cpu reaches. */
static unsigned inst(const struct x86 *x, enum x86_scope s, unsigned cpu)
{
    switch (s) {
    case SC_THREAD:
        return cpu;
    case SC_L3:
        return x->m->cpu[cpu].domain;
    case SC_L2:
        return x->m->cpu[cpu].l2->inst;
    case SC_QOS_DOMAIN: /* QM_EVTSEL: per thread on Intel, per L3 domain on AMD */
        return x->amd ? x->m->cpu[cpu].domain : cpu;
    }
    return 0;
}

/* Effective COS_MAX of a level: halved while its CDP is on (L2 CDP paper). */
static unsigned cos_limit(const struct x86 *x, enum plat_level l, unsigned instance)
{
    if (!has_cat(x, l))
        return 0;
    int cdp = HW_FGET(x->cfg[l][instance], QOS_CFG, CDP);
    return cdp ? x->ncos[l] / 2 : x->ncos[l];
}

/* Pushes a cache instance's masks into the machine: COS n's mask, or with
 * CDP on, data mask 2n and code mask 2n+1 (docs/registers.md 1). */
static void apply_masks(struct x86 *x, enum plat_level l, unsigned i)
{
    const uint64_t *mk = &x->mask[l][(size_t)i * x->ncos[l]];
    int cdp = HW_FGET(x->cfg[l][i], QOS_CFG, CDP);
    for (unsigned c = 0; c < x->ncos[l]; c++) {
        /* A COS past COS_MAX_CDP (valid for another resource) gets COS 0's
         * masks, as a COS a resource lacks does (mach.c). */
        unsigned j = cdp && 2 * c + 1 >= x->ncos[l] ? 0 : c;
        uint64_t d = cdp ? mk[2 * j] : mk[c];
        uint64_t k = cdp ? mk[2 * j + 1] : mk[c];
        mach_set_mask(x->m, l, i, c, MACH_DATA, mach_cbm_ways(x->m, l, d));
        mach_set_mask(x->m, l, i, c, MACH_CODE, mach_cbm_ways(x->m, l, k));
    }
}

/* PQR_ASSOC: RMID [9:0], reserved [31:10], COS [63:32] (SDM 17.16.6, 17.17). */

static unsigned assoc_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->nrmid || has_cat(x, PLAT_L3) || has_cat(x, PLAT_L2) || x->bw_cos;
}

static enum hw_fault assoc_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                uint64_t *v)
{
    (void)r;
    (void)n;
    *v = x->assoc[cpu];
    return HW_OK;
}

/* Whether rmid is in PQR_ASSOC of a CPU of L3 domain d. */
static int rmid_in_use(const struct x86 *x, unsigned d, unsigned rmid)
{
    for (unsigned c = 0; c < x->m->ncpu; c++)
        if (x->m->cpu[c].domain == d && HW_FGET(x->assoc[c], PQR_ASSOC, RMID) == rmid)
            return 1;
    return 0;
}

/* AMD bandwidth tracking (56375, "Platform QOS Monitoring of L3 External
 * Bandwidth"): a domain may count the bandwidth of fewer RMIDs than exist
 * (mon.tracked), but of at least one per processor and always of every RMID
 * in use there; an RMID written to PQR_ASSOC is tracked from then on, and
 * its QM_CTR is cleared when tracking begins. When the tracker is full, the
 * least recently associated RMID no CPU of the domain uses is dropped
 * (project choice: the spec does not say which) and reads U until it is
 * associated again. Called with the writing CPU's new RMID already in
 * x->assoc, so its old one may go; as mon.tracked >= CPUs per domain
 * (plat.c), an RMID not in use is always there to drop. */
static void amd_track(struct x86 *x, unsigned d, unsigned rmid)
{
    uint64_t *t = &x->tracked[(size_t)d * x->nrmid];
    if (!t[rmid]) {
        unsigned n = 0, drop = x->nrmid;
        for (unsigned r = 0; r < x->nrmid; r++)
            n += t[r] != 0;
        for (unsigned r = 0; n >= x->p->mon.tracked && r < x->nrmid; r++)
            if (t[r] && (drop == x->nrmid || t[r] < t[drop]) && !rmid_in_use(x, d, r))
                drop = r;
        if (drop < x->nrmid)
            t[drop] = 0;
        mach_bytes_clear(x->m, d, rmid);
    }
    t[rmid] = ++x->seq;
}

static enum hw_fault assoc_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                 uint64_t v)
{
    (void)r;
    (void)n;
    uint64_t rmid = HW_FGET(v, PQR_ASSOC, RMID), cos = HW_FGET(v, PQR_ASSOC, COS);
    if (v & ~(HW_FMASK(PQR_ASSOC, RMID) | HW_FMASK(PQR_ASSOC, COS)))
        return HW_GP;
    if (rmid >= (x->nrmid ? x->nrmid : 1))
        return HW_GP;
    /* COS beyond what any resource accepts, with CDP halving the space
     * (project choice for what the spec calls undefined). */
    unsigned lim = 1;
    const struct mach_cpu *p = &x->m->cpu[cpu];
    if (has_cat(x, PLAT_L3) && cos_limit(x, PLAT_L3, p->domain) > lim)
        lim = cos_limit(x, PLAT_L3, p->domain);
    if (has_cat(x, PLAT_L2) && cos_limit(x, PLAT_L2, p->l2->inst) > lim)
        lim = cos_limit(x, PLAT_L2, p->l2->inst);
    if (x->bw_cos > lim)
        lim = x->bw_cos;
    if (cos >= lim)
        return HW_GP;
    x->assoc[cpu] = v;
    mach_set_assoc(x->m, cpu, p->task, (unsigned)cos, (unsigned)rmid);
    if (x->tracked)
        amd_track(x, p->domain, (unsigned)rmid);
    return HW_OK;
}

/* QM_EVTSEL: EvtID [7:0], RMID [41:32]; other bits reserved (SDM 17.16.7). */
static unsigned mon_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->nrmid && has_l3_mon(x);
}

static enum hw_fault evtsel_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                 uint64_t *v)
{
    (void)r;
    (void)n;
    *v = x->evtsel[inst(x, SC_QOS_DOMAIN, cpu)];
    return HW_OK;
}

static enum hw_fault evtsel_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                  uint64_t v)
{
    (void)r;
    (void)n;
    if (v & ~(HW_FMASK(QM_EVTSEL, EVTID) | HW_FMASK(QM_EVTSEL, RMID)))
        return HW_GP;
    if (HW_FGET(v, QM_EVTSEL, RMID) >= x->nrmid)
        return HW_GP;
    x->evtsel[inst(x, SC_QOS_DOMAIN, cpu)] = v;
    return HW_OK;
}

static int event_supported(const struct x86 *x, unsigned evt)
{
    const struct plat_mon *mo = &x->p->mon;
    return (evt == X86_EVT_OCCUPANCY && mo->occupancy) || (evt == X86_EVT_TOTAL && mo->total) ||
           (evt == X86_EVT_LOCAL && mo->local);
}

/* QM_CTR: the count of the selected event and RMID in this CPU's L3
 * domain, in units of the conversion factor, COUNT [width-1:0]; E for an
 * unsupported event; U when there is no data (AMD: an untracked RMID). */
static enum hw_fault ctr_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                              uint64_t *v)
{
    (void)r;
    (void)n;
    uint64_t sel = x->evtsel[inst(x, SC_QOS_DOMAIN, cpu)];
    unsigned evt = (unsigned)HW_FGET(sel, QM_EVTSEL, EVTID),
             rmid = (unsigned)HW_FGET(sel, QM_EVTSEL, RMID), dom = x->m->cpu[cpu].domain;
    if (!event_supported(x, evt) || rmid >= x->nrmid) {
        *v = HW_FMASK(QM_CTR, E);
        return HW_OK;
    }
    if (evt != X86_EVT_OCCUPANCY && x->amd && !x->tracked[(size_t)dom * x->nrmid + rmid]) {
        *v = HW_FMASK(QM_CTR, U);
        return HW_OK;
    }
    uint64_t c;
    if (evt == X86_EVT_OCCUPANCY)
        c = mach_occupancy_est(x->m, PLAT_L3, dom, rmid) * x->m->line / x->p->mon.scale;
    else
        c = mach_bytes(x->m, dom, rmid, evt == X86_EVT_TOTAL ? MACH_CTR_TOTAL : MACH_CTR_LOCAL);
    *v = c & bits_mask(x->p->mon.width);
    return HW_OK;
}

static enum hw_fault read_only(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                               uint64_t v)
{
    (void)r;
    (void)x, (void)cpu, (void)n, (void)v;
    return HW_GP;
}

/* L3_QOS_CFG / L2_QOS_CFG: bit 0 CDP enable; present only with CDP. */
static unsigned cfg_count(const struct x86 *x, const struct x86_reg *r)
{
    return has_cdp(x, r->level);
}

static enum hw_fault cfg_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                              uint64_t *v)
{
    (void)n;
    *v = x->cfg[r->level][inst(x, r->scope, cpu)];
    return HW_OK;
}

static enum hw_fault cfg_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                               uint64_t v)
{
    (void)n;
    if (v & ~HW_FMASK(QOS_CFG, CDP))
        return HW_GP;
    unsigned i = inst(x, r->scope, cpu);
    x->cfg[r->level][i] = v;
    apply_masks(x, r->level, i);
    return HW_OK;
}

/* Mask banks: a mask the vendor's rule refuses (plat_mask_ok: bits beyond
 * cbm_len; on Intel an empty or, without CPUID.10H ECX[3], non-contiguous
 * one) is #GP. */
static int mask_ok(const struct x86 *x, enum plat_level l, uint64_t v)
{
    return plat_mask_ok(x->p, l, v, NULL);
}

static unsigned mask_count(const struct x86 *x, const struct x86_reg *r)
{
    return x->ncos[r->level];
}

static enum hw_fault mask_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                               uint64_t *v)
{
    *v = x->mask[r->level][(size_t)inst(x, r->scope, cpu) * x->ncos[r->level] + n];
    return HW_OK;
}

static enum hw_fault mask_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                uint64_t v)
{
    enum plat_level l = r->level;
    if (!mask_ok(x, l, v))
        return HW_GP;
    unsigned i = inst(x, r->scope, cpu);
    x->mask[l][(size_t)i * x->ncos[l] + n] = v;
    apply_masks(x, l, i);
    return HW_OK;
}

/* Intel MBA: delay [15:0] in percent; above the maximum throttle #GP. */
static unsigned mba_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return has_mba(x) ? x->bw_cos : 0;
}

static enum hw_fault bw_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                             uint64_t *v)
{
    (void)r;
    *v = x->bw[(size_t)x->m->cpu[cpu].domain * x->bw_cos + n];
    return HW_OK;
}

static enum hw_fault mba_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                               uint64_t v)
{
    (void)r;
    if (v & ~HW_FMASK(MBA_THRTL, DELAY) || v > x->p->bw.max)
        return HW_GP;
    unsigned d = x->m->cpu[cpu].domain;
    x->bw[(size_t)d * x->bw_cos + n] = v;
    struct bw_class_set s;
    bw_class_reset(BW_DELAY, &s);
    s.delay_pct = (unsigned)v;
    mach_set_bw(x->m, d, n, &s);
    return HW_OK;
}

/* AMD L3QOS_BW_CONTROL_n: BW [BW_LEN-1:0] in 1/8 GB/s, U [BW_LEN] unlimited. */
static unsigned l3be_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return has_l3be(x) ? x->bw_cos : 0;
}

static enum hw_fault l3be_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                uint64_t v)
{
    (void)r;
    if (v & ~bits_mask(x->bw_len + 1))
        return HW_GP;
    unsigned d = x->m->cpu[cpu].domain;
    x->bw[(size_t)d * x->bw_cos + n] = v;
    struct bw_class_set s;
    bw_class_reset(BW_RATE, &s);
    /* With U set the BW bits have no effect (56375). A limit of 0 is
     * enforced as the smallest one, 1/8 GB/s (project choice: the spec is
     * silent, and a class stopped dead would hang its cores). */
    uint64_t bw = v & bits_mask(x->bw_len);
    if (!((v >> x->bw_len) & 1))
        s.rate = (double)(bw ? bw : 1) * 0.125e9 / x->m->ticks_per_sec;
    mach_set_bw(x->m, d, n, &s);
    return HW_OK;
}

static const struct x86_reg x86_regs[] = {
    {"IA32_L3_QOS_CFG", X86_L3_QOS_CFG, SC_L3, PLAT_L3, "SDM 17.19.3; registers.md 1", cfg_count,
     cfg_read, cfg_write},
    {"IA32_L2_QOS_CFG", X86_L2_QOS_CFG, SC_L2, PLAT_L2, "L2 CDP paper, Figure 5", cfg_count,
     cfg_read, cfg_write},
    {"IA32_QM_EVTSEL", X86_QM_EVTSEL, SC_QOS_DOMAIN, PLAT_L3, "SDM 17.16.7; 56375 PQM", mon_count,
     evtsel_read, evtsel_write},
    {"IA32_QM_CTR", X86_QM_CTR, SC_QOS_DOMAIN, PLAT_L3, "SDM 17.16.7; 56375 PQM", mon_count,
     ctr_read, read_only},
    {"IA32_PQR_ASSOC", X86_PQR_ASSOC, SC_THREAD, PLAT_L3, "SDM 17.16.6, 17.19.2", assoc_count,
     assoc_read, assoc_write},
    {"IA32_L3_QOS_MASK_n", X86_L3_MASK_0, SC_L3, PLAT_L3, "SDM 17.19.2; 56375 L3 allocation",
     mask_count, mask_read, mask_write},
    {"IA32_L2_QOS_MASK_n", X86_L2_MASK_0, SC_L2, PLAT_L2, "SDM 17.19.2; L2 CDP paper", mask_count,
     mask_read, mask_write},
    {"IA32_L2_QoS_Ext_BW_Thrtl_n", X86_MBA_THRTL_0, SC_L3, PLAT_L3, "SDM 17.19.7 (MBA)", mba_count,
     bw_read, mba_write},
    {"L3QOS_BW_CONTROL_n", X86_AMD_BW_CTL_0, SC_L3, PLAT_L3, "56375 L3 bandwidth enforcement",
     l3be_count, bw_read, l3be_write},
};

static const struct x86_reg *find(const struct x86 *x, uint32_t msr, unsigned *n)
{
    for (size_t i = 0; i < sizeof x86_regs / sizeof x86_regs[0]; i++) {
        const struct x86_reg *r = &x86_regs[i];
        unsigned c = r->count(x, r);
        if (msr >= r->base && msr - r->base < c) {
            *n = msr - r->base;
            return r;
        }
    }
    return NULL;
}

/* An MSR that does not exist on this platform is #GP, as rdmsr/wrmsr of an
 * unimplemented MSR is. */
enum hw_fault x86_rdmsr(struct x86 *x, unsigned cpu, uint32_t msr, uint64_t *val)
{
    unsigned n;
    if (lwp_owns_msr(msr))
        return lwp_rdmsr(&x->lwp, cpu, msr, val); /* #GP where LWP is absent */
    const struct x86_reg *r = cpu < x->m->ncpu ? find(x, msr, &n) : NULL;
    *val = 0;
    return r ? r->read(x, r, cpu, n, val) : HW_GP;
}

enum hw_fault x86_wrmsr(struct x86 *x, unsigned cpu, uint32_t msr, uint64_t val)
{
    unsigned n;
    if (lwp_owns_msr(msr))
        return lwp_wrmsr(&x->lwp, cpu, msr, val);
    const struct x86_reg *r = cpu < x->m->ncpu ? find(x, msr, &n) : NULL;
    return r ? r->write(x, r, cpu, n, val) : HW_GP;
}

/* ---- CPUID (docs/registers.md 1, "CPUID") ---- */

static void vendor(const struct x86 *x, uint32_t out[4])
{
    /* EBX, EDX, ECX spell the vendor string. */
    const char *s = x->amd ? "AuthenticAMD" : "GenuineIntel";
    memcpy(&out[1], s, 4);
    memcpy(&out[3], s + 4, 4);
    memcpy(&out[2], s + 8, 4);
}

static void cat_leaf(const struct x86 *x, enum plat_level l, uint32_t out[4])
{
    if (!has_cat(x, l))
        return;
    const struct plat_alloc *a = &x->p->cache[l].alloc;
    out[0] = (a->cbm_len - 1) & 0x1f;
    out[1] = (uint32_t)a->shareable;
    out[2] = (a->cdp ? 1u << 2 : 0) | (!x->amd && a->sparse ? 1u << 3 : 0);
    out[3] = (x->ncos[l] - 1) & 0xffff;
}

enum hw_fault x86_cpuid(struct x86 *x, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    (void)cpu;
    memset(out, 0, 4 * sizeof *out);
    /* PQE covers every enforcement feature: AMD's L3BE is found through it (56375). */
    int pqm = x->nrmid != 0,
        pqe = has_cat(x, PLAT_L3) || has_cat(x, PLAT_L2) || has_mba(x) || has_l3be(x);
    switch (leaf) {
    case 0x0:
        out[0] = 0x10;
        vendor(x, out);
        break;
    case 0x7:
        if (sub == 0)
            out[1] = (pqm ? 1u << 12 : 0) | (pqe ? 1u << 15 : 0);
        break;
    case 0xF:
        if (!pqm)
            break;
        if (sub == 0) {
            out[1] = x->nrmid - 1;
            out[3] = 1u << 1;
        } else if (sub == 1) {
            out[0] = x->amd ? 0 : (x->p->mon.width - 24) & 0xff;
            out[1] = (uint32_t)x->p->mon.scale;
            out[2] = x->nrmid - 1;
            out[3] = (x->p->mon.occupancy ? 1u : 0) | (x->p->mon.total ? 2u : 0) |
                     (x->p->mon.local ? 4u : 0);
        }
        break;
    case 0x10:
        if (sub == 0)
            out[1] = (has_cat(x, PLAT_L3) ? 1u << 1 : 0) | (has_cat(x, PLAT_L2) ? 1u << 2 : 0) |
                     (has_mba(x) ? 1u << 3 : 0);
        else if (sub == 1)
            cat_leaf(x, PLAT_L3, out);
        else if (sub == 2)
            cat_leaf(x, PLAT_L2, out);
        else if (sub == 3 && has_mba(x)) {
            out[0] = (x->p->bw.max - 1) & 0xfff;
            out[2] = x->p->bw.linear ? 1u << 2 : 0;
            out[3] = (x->bw_cos - 1) & 0xffff;
        }
        break;
    case 0x80000000:
        out[0] = x->amd ? 0x80000020 : 0x80000008;
        if (x->amd)
            vendor(x, out);
        break;
    case 0x80000008:
        if (has_l3be(x))
            out[1] = 1u << 6;
        break;
    case 0x80000020:
        if (!x->amd || !has_l3be(x))
            break;
        if (sub == 0)
            out[1] = 1u << 1;
        else if (sub == 1) {
            out[0] = x->bw_len;
            out[3] = x->bw_cos - 1;
        }
        break;
    default:
        break; /* leaves this model does not implement read as zeros */
    }
    lwp_cpuid(&x->lwp, cpu, leaf, sub, out); /* 0x80000001 ECX[15], 0x8000001C */
    return HW_OK;
}

/* ---- the register interface for drivers ---- */

static enum hw_fault if_cpuid(void *ctx, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    return x86_cpuid(ctx, cpu, leaf, sub, out);
}
static enum hw_fault if_rdmsr(void *ctx, unsigned cpu, uint32_t msr, uint64_t *v)
{
    return x86_rdmsr(ctx, cpu, msr, v);
}
static enum hw_fault if_wrmsr(void *ctx, unsigned cpu, uint32_t msr, uint64_t v)
{
    return x86_wrmsr(ctx, cpu, msr, v);
}

void x86_regif(struct x86 *x, struct hw_x86_if *out)
{
    *out = (struct hw_x86_if){.ctx = x,
                              .cpuid = if_cpuid,
                              .rdmsr = if_rdmsr,
                              .wrmsr = if_wrmsr,
                              .ncpu = x->m->ncpu,
                              .l3_of = x->l3_of,
                              .l2_of = x->l2_of};
}

/* ---- life cycle ---- */

void x86_reset(struct x86 *x)
{
    const struct plat *p = x->p;
    memset(x->assoc, 0, x->m->ncpu * sizeof *x->assoc);
    memset(x->evtsel, 0, x->m->ncpu * sizeof *x->evtsel);
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++) {
        if (!has_cat(x, l))
            continue;
        unsigned ni = x->m->ncache[l];
        memset(x->cfg[l], 0, ni * sizeof *x->cfg[l]);
        for (size_t k = 0; k < (size_t)ni * x->ncos[l]; k++)
            x->mask[l][k] = bits_mask(x->cbm_len[l]); /* masks reset to all ones */
        for (unsigned i = 0; i < ni; i++)
            apply_masks(x, l, i);
    }
    for (unsigned d = 0; d < p->ndomains && x->bw_cos; d++)
        for (unsigned c = 0; c < x->bw_cos; c++) {
            /* MBA resets to no delay; AMD limits to U = 1, unlimited. */
            x->bw[(size_t)d * x->bw_cos + c] = x->amd ? 1ull << x->bw_len : 0;
            struct bw_class_set s;
            bw_class_reset(p->bw.kind, &s);
            mach_set_bw(x->m, d, c, &s);
        }
    /* PQR_ASSOC.RMID resets to 0 on every CPU: each domain tracks RMID 0. */
    if (x->tracked)
        memset(x->tracked, 0, (size_t)p->ndomains * x->nrmid * sizeof *x->tracked);
    x->seq = 1;
    for (unsigned c = 0; c < x->m->ncpu; c++) {
        mach_set_assoc(x->m, c, x->m->cpu[c].task, 0, 0);
        if (x->tracked)
            x->tracked[(size_t)x->m->cpu[c].domain * x->nrmid] = x->seq;
    }
    lwp_reset(&x->lwp);
}

int x86_init(struct x86 *x, struct mach *m, struct err *e)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->p = &m->p;
    const struct plat *p = x->p;
    if (p->vendor == PLAT_RISCV)
        return err_set(e, -QOSIM_EUNSUP, "%s is a RISC-V platform: it has no x86 registers",
                       p->name);
    x->amd = p->vendor == PLAT_AMD;
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        if (p->cache[l].present && p->cache[l].alloc.classes) {
            x->ncos[l] = p->cache[l].alloc.classes;
            x->cbm_len[l] = p->cache[l].alloc.cbm_len;
        }
    x->bw_cos = p->bw.kind == BW_DELAY || p->bw.kind == BW_RATE ? p->bw.classes : 0;
    x->bw_len = p->bw.kind == BW_RATE ? p->bw.max : 0;
    x->nrmid = has_l3_mon(x) ? p->mon.tags : 0;
    size_t nev = x->amd ? p->ndomains : m->ncpu;
    int bad = !(x->assoc = calloc(m->ncpu, sizeof *x->assoc)) ||
              !(x->evtsel = calloc(nev > m->ncpu ? nev : m->ncpu, sizeof *x->evtsel));
    for (int l = PLAT_L2; l < PLAT_NLEVEL && !bad; l++)
        if (x->ncos[l])
            bad = !(x->cfg[l] = calloc(m->ncache[l], sizeof *x->cfg[l])) ||
                  !(x->mask[l] = calloc((size_t)m->ncache[l] * x->ncos[l], sizeof *x->mask[l]));
    if (!bad && x->bw_cos)
        bad = !(x->bw = calloc((size_t)p->ndomains * x->bw_cos, sizeof *x->bw));
    if (!bad && x->amd && x->nrmid)
        bad = !(x->tracked = calloc((size_t)p->ndomains * x->nrmid, sizeof *x->tracked));
    if (!bad)
        bad = !(x->l3_of = calloc(m->ncpu, sizeof *x->l3_of)) ||
              !(x->l2_of = calloc(m->ncpu, sizeof *x->l2_of));
    for (unsigned c = 0; !bad && c < m->ncpu; c++) {
        x->l3_of[c] = m->cpu[c].domain;
        x->l2_of[c] = m->cpu[c].l2->inst;
    }
    if (bad) {
        x86_free(x);
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate the x86 register state");
    }
    /* LWP's Random bits come from a generator of the CPU's own, fixed so
     * that runs repeat. */
    int rc = lwp_init(&x->lwp, p, X86_LWP_SEED, e);
    if (rc) {
        x86_free(x);
        return rc;
    }
    x86_reset(x);
    return 0;
}

void x86_free(struct x86 *x)
{
    free(x->assoc);
    free(x->evtsel);
    for (int l = 0; l < PLAT_NLEVEL; l++) {
        free(x->cfg[l]);
        free(x->mask[l]);
    }
    free(x->bw);
    free(x->tracked);
    free(x->l3_of);
    free(x->l2_of);
    lwp_free(&x->lwp);
    memset(x, 0, sizeof *x);
}
