#include "x86.h"
#include "x86_pf.h"
#include "x86_pmu.h"
#include "x86_reg.h"

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

/* AMD BMEC and ABMC, further down. */
static void mbm_clear(struct x86 *x, unsigned d, unsigned rmid);
static int has_bmec(const struct x86 *x);
static int has_abmc(const struct x86 *x);
static int has_sdciae(const struct x86 *x);
static int has_smba(const struct x86 *x);
static void sdciae_apply(struct x86 *x, unsigned d);
static int abmc_on(const struct x86 *x, unsigned d);
static int abmc_enabled_on(const struct x86 *x, unsigned cpu);
static uint64_t amd_mbm_read(struct x86 *x, unsigned d, unsigned rmid, unsigned n);
static uint64_t abmc_read(const struct x86 *x, unsigned d, unsigned evt, unsigned id);

/* ---- registers as data ---- */

/* The instance of a register's scope that cpu reaches. */
static unsigned inst(const struct x86 *x, enum x86_scope s, unsigned cpu)
{
    switch (s) {
    case SC_THREAD:
        return cpu;
    case SC_CORE: /* threads of a core are adjacent CPUs */
        return cpu / x->p->topo.threads;
    case SC_L3:
        return x->m->cpu[cpu].domain;
    case SC_L2:
        return x->m->cpu[cpu].l2->inst;
    case SC_QOS_DOMAIN: /* QM_EVTSEL: per thread on Intel, per L3 domain on AMD */
        return x->amd ? x->m->cpu[cpu].domain : cpu;
    case SC_PACKAGE: /* the socket: node is numbered across the sockets */
        return x->m->cpu[cpu].node / x->p->topo.nodes;
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
    return x->nrmid || has_cat(x, PLAT_L3) || has_cat(x, PLAT_L2) || x->bw_cos || x->sbw_cos;
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
        mbm_clear(x, d, rmid);
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
    if (x->sbw_cos > lim) /* AMD SMBA's classes */
        lim = x->sbw_cos;
    if (cos >= lim)
        return HW_GP;
    x->assoc[cpu] = v;
    mach_set_assoc(x->m, cpu, p->task, (unsigned)cos, (unsigned)rmid);
    if (x->tracked)
        amd_track(x, p->domain, (unsigned)rmid);
    return HW_OK;
}

/* QM_EVTSEL: EvtID [7:0], RMID [41:32]; other bits reserved (SDM 17.16.7).
 * AMD with ABMC adds ExtEvtID [31], "MBZ unless L3_QOS_EXT_CFG.ABMC_En is
 * set" (APM vol. 2, Figure 19-2), this CPU's copy; with it the RMID field
 * holds a counter ID, to which the same #GP rule applies (project choice:
 * the APM's rule is on the field's value). */
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
    uint64_t ext = has_abmc(x) && abmc_enabled_on(x, cpu) ? HW_FMASK(QM_EVTSEL, ExtEvtID) : 0;
    if (v & ~(HW_FMASK(QM_EVTSEL, EVTID) | HW_FMASK(QM_EVTSEL, RMID) | ext))
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
    if (HW_FGET(sel, QM_EVTSEL, ExtEvtID)) { /* AMD ABMC: RMID is a counter ID */
        *v = abmc_read(x, dom, evt, rmid);
        return HW_OK;
    }
    if (!event_supported(x, evt) || rmid >= x->nrmid) {
        *v = HW_FMASK(QM_CTR, E);
        return HW_OK;
    }
    /* In ABMC mode the assignments, not the tracker, say what is counted:
     * "When enabled, the bandwidth monitoring hardware will only track
     * memory bandwidth used by the sources and Bandwidth Types configured
     * through the L3_QOS_ABMC_CFG_n MSRs" (APM vol. 2, 19.3.3.3). */
    if (evt != X86_EVT_OCCUPANCY && x->amd && !x->tracked[(size_t)dom * x->nrmid + rmid] &&
        !abmc_on(x, dom)) {
        *v = HW_FMASK(QM_CTR, U);
        return HW_OK;
    }
    if (evt != X86_EVT_OCCUPANCY && (has_bmec(x) || has_abmc(x))) {
        *v = amd_mbm_read(x, dom, rmid, evt - X86_EVT_TOTAL);
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
    if (l == PLAT_L3 && n == x->ncos[l] - 1 && has_sdciae(x))
        sdciae_apply(x, i); /* SDCIAE's mask (registers.md 1.6) */
    return HW_OK;
}

/* Intel MBA: delay [15:0] in percent; above the maximum throttle #GP.
 * The hardware throttles in steps of its granularity (resctrl's
 * bandwidth_gran, 100 - the max throttle of CPUID.10H.3 on a linear part):
 * a value between two steps is accepted and read back as written, and
 * throttles as the step below it. Linux refuses such values itself, but its
 * authors note the register takes them and that 11 and 12 throttle alike at
 * a granularity of 10 (LKML, "x86/intel_rdt/mba: Add info directory files for
 * MBA", Vikas Shivappa and Thomas Gleixner, January 2017). Rounding down,
 * not to the nearest step, is a project choice: the less throttling of the
 * two, as when a delay is not supported at all. */
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
    unsigned g = x->p->bw.granularity ? x->p->bw.granularity : 1;
    s.delay_pct = (unsigned)v - (unsigned)v % g;
    mach_set_bw(x->m, d, n, &s);
    return HW_OK;
}

/* IA32_MBA_CFG (MSR 0xC84), MBA 2.0's configuration: MIN_DELAY [0] makes a
 * core take the smallest of its threads' delays instead of the largest (the
 * reset choice), LEGACY [1] is the legacy mode Intel's pqos reports; the
 * rest is reserved (#GP). One register per package, reset 0. No CPUID bit
 * enumerates it (it is model-specific); pqos 4.5 reads it on every package
 * when CPUID.10H.3 reports more than 8 classes and no per-thread control
 * (ECX[0]), so the profile's bandwidth.min_max (default: more than 8 classes,
 * without per_thread) puts it there. MIN_DELAY sets how the package's cores
 * share their throttle (mach_set_throttle_mode); LEGACY changes nothing the
 * machine models (project choice, docs/registers.md 1.2). */
/* A package's cores share their throttle as MIN_DELAY says: the smallest
 * or the largest of their threads' delays (per-thread controls, which have
 * no IA32_MBA_CFG, keep the machine's per-thread mode). */
static void mba_mode_apply(struct x86 *x, unsigned pkg)
{
    if (x->p->bw.kind != BW_DELAY || x->p->bw.per_thread)
        return;
    enum mach_thr mode =
        HW_FGET(x->mba_cfg[pkg], MBA_CFG, MIN_DELAY) ? MACH_THR_CORE_MIN : MACH_THR_CORE_MAX;
    for (unsigned c = 0; c < x->m->ncpu; c++)
        if (inst(x, SC_PACKAGE, c) == pkg)
            mach_set_throttle_mode(x->m, x->m->cpu[c].domain, mode);
}

static unsigned mba_cfg_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return has_mba(x) && x->p->bw.min_max;
}

static enum hw_fault mba_cfg_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                  uint64_t *v)
{
    (void)n;
    *v = x->mba_cfg[inst(x, r->scope, cpu)];
    return HW_OK;
}

static enum hw_fault mba_cfg_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                   uint64_t v)
{
    (void)n;
    if (v & ~(HW_FMASK(MBA_CFG, MIN_DELAY) | HW_FMASK(MBA_CFG, LEGACY)))
        return HW_GP;
    unsigned pkg = inst(x, r->scope, cpu);
    x->mba_cfg[pkg] = v;
    mba_mode_apply(x, pkg);
    return HW_OK;
}

/* AMD L3QOS_BW_CONTROL_n: BW [BW_LEN-1:0] in 1/8 GB/s, U [BW_LEN] unlimited. */
static unsigned l3be_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return has_l3be(x) ? x->bw_cos : 0;
}

/* The limiter setting of an AMD bandwidth limit, L3BE's or SMBA's: BW
 * [len-1:0] in 1/8 GB/s, U [len]. With U set the BW bits have no effect
 * (56375). A limit of 0 is enforced as the smallest one, 1/8 GB/s (project
 * choice: the spec is silent, and a class stopped dead would hang its
 * cores). */
static void amd_bw_set(const struct x86 *x, uint64_t v, unsigned len, struct bw_class_set *s)
{
    bw_class_reset(BW_RATE, s);
    uint64_t bw = v & bits_mask(len);
    if (!((v >> len) & 1))
        s->rate = (double)(bw ? bw : 1) * 0.125e9 / x->m->ticks_per_sec;
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
    amd_bw_set(x, v, x->bw_len, &s);
    mach_set_bw(x->m, d, n, &s);
    return HW_OK;
}

/* ---- AMD BMEC, ABMC and SDCIAE (APM vol. 2, 24593, ch. 19; registers.md 1.6) ---- */

/* The transaction types an implementation can count, CPUID 0x80000020.3
 * ECX (APM vol. 2, 19.3.3.2): all seven here (project choice: the profile
 * has no key for fewer; a type the machine never sees counts 0). */
#define AMD_BW_TYPES 0x7Fu
/* What QOS_EVT_CFG_0 and _1 reset to: total and local bandwidth (APM vol.
 * 2, Table 19-9); resctrl.rst ("mbm_total_bytes_config") gives the values
 * Linux finds there, 0x7F and 0x15. Without BMEC the events' types are
 * fixed, and assignable counters match these (project choice). */
static const uint64_t evt_cfg_reset[2] = {0x7F, 0x15};

static int has_bmec(const struct x86 *x)
{
    return x->amd && x->nrmid && x->p->mon.bmec;
}

static int has_abmc(const struct x86 *x)
{
    return x->amd && x->nrmid && x->p->mon.abmc;
}

static int has_sdciae(const struct x86 *x)
{
    return x->amd && has_cat(x, PLAT_L3) && x->p->cache[PLAT_L3].alloc.io;
}

/* L3_QOS_EXT_CFG exists with ABMC (19.3.3.3, "L3_QOS_EXT_CFG MSR"), and
 * with SDCIAE, which it enables (19.4.7; project choice for a part that has
 * SDCIAE alone). Its bits for absent features read as zero, as [63:2] do. */
static uint64_t ext_cfg_bits(const struct x86 *x)
{
    return (has_abmc(x) ? HW_FMASK(L3_QOS_EXT_CFG, ABMC_En) : 0) |
           (has_sdciae(x) ? HW_FMASK(L3_QOS_EXT_CFG, SDCIAE_En) : 0);
}

static int abmc_on(const struct x86 *x, unsigned d)
{
    return has_abmc(x) && HW_FGET(x->ext_mode[d], L3_QOS_EXT_CFG, ABMC_En);
}

/* The transaction types event n (0: EvtID 2, 1: EvtID 3) counts in domain d. */
static uint32_t evt_types(const struct x86 *x, unsigned d, unsigned n)
{
    return (uint32_t)(has_bmec(x) ? x->evt_cfg[(size_t)d * 2 + n] : evt_cfg_reset[n]);
}

static size_t mbm_at(const struct x86 *x, unsigned d, unsigned rmid, unsigned n)
{
    return ((size_t)d * x->nrmid + rmid) * 2 + n;
}

/* The bandwidth counters of RMID rmid in domain d start again from zero
 * (BMEC keeps its own base: its events count other types than mach_bytes). */
static void mbm_clear(struct x86 *x, unsigned d, unsigned rmid)
{
    mach_bytes_clear(x->m, d, rmid);
    if (!has_bmec(x))
        return;
    for (unsigned n = 0; n < 2; n++)
        x->mbm_base[mbm_at(x, d, rmid, n)] = mach_traffic(x->m, d, rmid, evt_types(x, d, n));
}

/* A count of raw bytes in QM_CTR's units and width. */
static uint64_t ctr_units(const struct x86 *x, uint64_t bytes)
{
    return bytes / x->p->mon.scale & bits_mask(x->p->mon.width);
}

static uint64_t abmc_source_bytes(const struct x86 *x, unsigned d, uint64_t dsc)
{
    unsigned src = (unsigned)HW_FGET(dsc, L3_QOS_ABMC_CFG, BwSrc);
    uint32_t types = (uint32_t)HW_FGET(dsc, L3_QOS_ABMC_CFG, BwType);
    return HW_FGET(dsc, L3_QOS_ABMC_CFG, IsCOS) ? mach_traffic_cls(x->m, d, src, types)
                                                : mach_traffic(x->m, d, src, types);
}

/* An assignable counter's count: zero while CtrEn is clear ("When cleared,
 * the selected counter is also zero", Figure 19-6). */
static uint64_t abmc_count(const struct x86 *x, unsigned d, const struct x86_abmc *a)
{
    if (!HW_FGET(a->dsc, L3_QOS_ABMC_CFG, CtrEn))
        return 0;
    return ctr_units(x, abmc_source_bytes(x, d, a->dsc) - a->base);
}

/* QM_CTR of EvtID 2 or 3 (n = 0, 1) on AMD with BMEC or ABMC, for an RMID
 * the legacy tracker follows (ctr_read has dealt with the others).
 * ABMC on: "If an assignable bandwidth counter is monitoring that RMID with
 * a BwType bitmask that matches a QOS_EVT_CFG_n, that counter's value will
 * be returned", the lowest CtrID of several (19.3.3.3, "Reading the ABMC
 * Counters"); with none, U (project choice: the APM says nothing, and U is
 * its "count not available"; resctrl reports such an event Unavailable).
 * BMEC: the configured types since the last clear; after a configuration
 * change the first read of each RMID and event is U (resctrl.rst,
 * "mbm_total_bytes_config"). */
static uint64_t amd_mbm_read(struct x86 *x, unsigned d, unsigned rmid, unsigned n)
{
    if (abmc_on(x, d)) {
        uint32_t want = evt_types(x, d, n);
        const struct x86_abmc *a = &x->abmc[(size_t)d * x->p->mon.abmc];
        for (unsigned i = 0; i < x->p->mon.abmc; i++) {
            uint64_t c = a[i].dsc;
            if (HW_FGET(c, L3_QOS_ABMC_CFG, CtrEn) && !HW_FGET(c, L3_QOS_ABMC_CFG, IsCOS) &&
                HW_FGET(c, L3_QOS_ABMC_CFG, BwSrc) == rmid &&
                HW_FGET(c, L3_QOS_ABMC_CFG, BwType) == want)
                return abmc_count(x, d, &a[i]);
        }
        return HW_FMASK(QM_CTR, U);
    }
    if (!has_bmec(x))
        return mach_bytes(x->m, d, rmid, n ? MACH_CTR_LOCAL : MACH_CTR_TOTAL);
    size_t k = mbm_at(x, d, rmid, n);
    if (x->mbm_unavail[k]) {
        x->mbm_unavail[k] = 0;
        return HW_FMASK(QM_CTR, U);
    }
    return ctr_units(x, mach_traffic(x->m, d, rmid, evt_types(x, d, n)) - x->mbm_base[k]);
}

/* QM_CTR with ExtEvtID: the assignable counter whose CtrID is in the RMID
 * field; E for another EvtID than L3CacheABMC, a counter the domain lacks or
 * one whose configuration was invalid (19.3.3.3), and while the domain is
 * not in ABMC mode (project choice: ExtEvtID cannot be written then, Figure
 * 19-2, but ABMC may be turned off after it was). */
static uint64_t abmc_read(const struct x86 *x, unsigned d, unsigned evt, unsigned id)
{
    if (!abmc_on(x, d) || evt != X86_EXT_EVT_ABMC || id >= x->p->mon.abmc)
        return HW_FMASK(QM_CTR, E);
    const struct x86_abmc *a = &x->abmc[(size_t)d * x->p->mon.abmc + id];
    if (HW_FGET(a->dsc, L3_QOS_ABMC_DSC, CfgErr))
        return HW_FMASK(QM_CTR, E);
    return abmc_count(x, d, a);
}

/* QOS_EVT_CFG_n: BwType [6:0]; the bits CPUID 0x80000020.3 ECX does not
 * list, and [63:7], are MBZ: setting one is #GP (APM vol. 2, Figure 19-4,
 * and "MBZ" in its notation). One register pair per L3 domain ("The event
 * configuration settings are domain specific and affect all the CPUs in the
 * domain", resctrl.rst). A write clears the bandwidth counters of every RMID
 * of both events in the domain, and the next read of each reports U
 * (resctrl.rst) - also when the value does not change (project choice:
 * Linux skips such writes, mbm_config_write_domain, which suggests they
 * would clear). */
static unsigned evt_cfg_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return has_bmec(x) ? 2 : 0;
}

static enum hw_fault evt_cfg_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                  uint64_t *v)
{
    (void)r;
    *v = x->evt_cfg[(size_t)x->m->cpu[cpu].domain * 2 + n];
    return HW_OK;
}

static enum hw_fault evt_cfg_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                   uint64_t v)
{
    (void)r;
    if (v & ~(uint64_t)AMD_BW_TYPES)
        return HW_GP;
    unsigned d = x->m->cpu[cpu].domain;
    x->evt_cfg[(size_t)d * 2 + n] = v;
    for (unsigned rmid = 0; rmid < x->nrmid; rmid++) {
        mbm_clear(x, d, rmid);
        x->mbm_unavail[mbm_at(x, d, rmid, 0)] = x->mbm_unavail[mbm_at(x, d, rmid, 1)] = 1;
    }
    return HW_OK;
}

/* SDCIAE (19.4.7): while on, "SDCIAE forces all SDCI lines to be placed
 * into the L3 cache partitions identified by the highest-supported
 * L3_MASK_n register", n = COS_MAX of CPUID 0x10.1 whether or not CDP is on
 * (with CDP that is the code mask of the highest COS, as resctrl.rst's
 * io_alloc says). Off, I/O allocates as the platform does without it, the
 * profile's caches.L3.io_ways. */
static void sdciae_apply(struct x86 *x, unsigned d)
{
    if (!has_sdciae(x))
        return;
    unsigned n = x->ncos[PLAT_L3];
    uint64_t cbm = HW_FGET(x->ext_mode[d], L3_QOS_EXT_CFG, SDCIAE_En)
                       ? x->mask[PLAT_L3][(size_t)d * n + n - 1]
                       : x->p->cache[PLAT_L3].io_ways;
    mach_set_io_ways(x->m, d, mach_cbm_ways(x->m, PLAT_L3, cbm));
}

/* The domain's modes change when one of its CPUs writes a new value: the
 * APM asks software to write every CPU of the domain alike ("When the state
 * of ABMC_En is changed, it must be changed to the updated value on all
 * logical processors in the QOS Domain") and says nothing of a domain whose
 * CPUs disagree; the last value written is the domain's (project choice:
 * the first write of such a sweep switches, the rest change nothing).
 * A transition of ABMC_En resets every assignable counter (to unassigned:
 * project choice, for "reset to 0"), the default-mode bandwidth counters,
 * and L3_QOS_ABMC_CFG of the domain's CPUs (19.3.3.3, "Enabling ABMC"). */
static void ext_mode_set(struct x86 *x, unsigned d, uint64_t v)
{
    uint64_t old = x->ext_mode[d];
    x->ext_mode[d] = v;
    if (HW_FGET(old ^ v, L3_QOS_EXT_CFG, ABMC_En)) {
        memset(&x->abmc[(size_t)d * x->p->mon.abmc], 0, x->p->mon.abmc * sizeof *x->abmc);
        for (unsigned rmid = 0; rmid < x->nrmid; rmid++)
            mbm_clear(x, d, rmid);
        for (unsigned c = 0; c < x->m->ncpu; c++)
            if (x->m->cpu[c].domain == d)
                x->abmc_cfg[c] = 0;
    }
    if (HW_FGET(old ^ v, L3_QOS_EXT_CFG, SDCIAE_En))
        sdciae_apply(x, d);
}

/* L3_QOS_EXT_CFG: ABMC_En [0], SDCIAE_En [1], [63:2] RAZ (Figure 19-7):
 * written ones there (and in the bit of a feature the part lacks) are
 * dropped, not #GP. One copy per logical processor, as Linux treats it
 * (resctrl_abmc_set_one_amd on every CPU of each domain). */
static unsigned ext_cfg_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return ext_cfg_bits(x) != 0;
}

static enum hw_fault ext_cfg_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                  uint64_t *v)
{
    (void)r, (void)n;
    *v = x->ext_cfg[cpu];
    return HW_OK;
}

static enum hw_fault ext_cfg_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                   uint64_t v)
{
    (void)r, (void)n;
    v &= ext_cfg_bits(x);
    x->ext_cfg[cpu] = v;
    ext_mode_set(x, x->m->cpu[cpu].domain, v);
    return HW_OK;
}

/* L3_QOS_ABMC_CFG and L3_QOS_ABMC_DSC: one copy per logical processor; an
 * access while this CPU's ABMC_En is clear is #GP (19.3.3.3). */
static unsigned abmc_msr_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return has_abmc(x);
}

static int abmc_enabled_on(const struct x86 *x, unsigned cpu)
{
    return HW_FGET(x->ext_cfg[cpu], L3_QOS_EXT_CFG, ABMC_En);
}

static enum hw_fault abmc_cfg_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                   uint64_t *v)
{
    (void)r, (void)n;
    if (!abmc_enabled_on(x, cpu))
        return HW_GP;
    *v = x->abmc_cfg[cpu]; /* "the last value written" */
    return HW_OK;
}

/* The classes a COS-sourced counter may name: those PQR_ASSOC.COS may hold. */
static unsigned abmc_ncos(const struct x86 *x)
{
    unsigned n = x->bw_cos > 1 ? x->bw_cos : 1;
    if (x->sbw_cos > n)
        n = x->sbw_cos;
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        if (x->ncos[l] > n)
            n = x->ncos[l];
    return n;
}

/* Fields MBZ: [61:53], [46:44] (Figure 19-5): #GP. With CfgEn the counter
 * CtrID of the domain takes the configuration and restarts from zero ("The
 * value of the specified Counter ID is cleared to zero upon
 * configuration"); counting starts with CtrEn. A configuration the part
 * cannot count - a BwSrc past the largest RMID (or COS, with IsCOS), IsCOS
 * without CPUID 0x80000020.5 ECX[0], BwType bits CPUID 0x80000020.3 ECX
 * lacks - leaves the counter disabled with CfgErr set ("the last
 * configuration ... was invalid and consequently the specified counter was
 * not enabled", Figure 19-6); which configurations are invalid is a project
 * choice, the APM lists none. A CtrID past the counters configures nothing. */
static enum hw_fault abmc_cfg_write(struct x86 *x, const struct x86_reg *r, unsigned cpu,
                                    unsigned n, uint64_t v)
{
    (void)r, (void)n;
    if (!abmc_enabled_on(x, cpu))
        return HW_GP;
    uint64_t valid = HW_FMASK(L3_QOS_ABMC_CFG, BwType) | HW_FMASK(L3_QOS_ABMC_CFG, BwSrc) |
                     HW_FMASK(L3_QOS_ABMC_CFG, IsCOS) | HW_FMASK(L3_QOS_ABMC_CFG, CtrID) |
                     HW_FMASK(L3_QOS_ABMC_CFG, CtrEn) | HW_FMASK(L3_QOS_ABMC_CFG, CfgEn);
    if (v & ~valid)
        return HW_GP;
    x->abmc_cfg[cpu] = v;
    unsigned id = (unsigned)HW_FGET(v, L3_QOS_ABMC_CFG, CtrID), d = x->m->cpu[cpu].domain;
    if (!HW_FGET(v, L3_QOS_ABMC_CFG, CfgEn) || id >= x->p->mon.abmc)
        return HW_OK;
    int cos = (int)HW_FGET(v, L3_QOS_ABMC_CFG, IsCOS);
    uint64_t src = HW_FGET(v, L3_QOS_ABMC_CFG, BwSrc);
    int bad = src >= (cos ? abmc_ncos(x) : x->nrmid) || (cos && !x->p->mon.abmc_by_class) ||
              (HW_FGET(v, L3_QOS_ABMC_CFG, BwType) & ~(uint64_t)AMD_BW_TYPES);
    struct x86_abmc *a = &x->abmc[(size_t)d * x->p->mon.abmc + id];
    a->dsc = v & ~(HW_FMASK(L3_QOS_ABMC_CFG, CfgEn) | (bad ? HW_FMASK(L3_QOS_ABMC_CFG, CtrEn) : 0));
    a->dsc = HW_FSET(a->dsc, L3_QOS_ABMC_DSC, CfgErr, bad);
    a->base = bad ? 0 : abmc_source_bytes(x, d, a->dsc);
    return HW_OK;
}

/* L3_QOS_ABMC_DSC: the configuration of the counter this CPU's
 * L3_QOS_ABMC_CFG.CtrID names, read-only (Figure 19-6; a write is #GP, as
 * to QM_CTR). For a CtrID the domain lacks, CfgErr and CtrID alone
 * (project choice). */
static enum hw_fault abmc_dsc_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                   uint64_t *v)
{
    (void)r, (void)n;
    if (!abmc_enabled_on(x, cpu))
        return HW_GP;
    unsigned id = (unsigned)HW_FGET(x->abmc_cfg[cpu], L3_QOS_ABMC_CFG, CtrID);
    if (id >= x->p->mon.abmc)
        *v = HW_FMASK(L3_QOS_ABMC_DSC, CfgErr) | HW_FSET(0, L3_QOS_ABMC_CFG, CtrID, id);
    else
        *v = HW_FSET(x->abmc[(size_t)x->m->cpu[cpu].domain * x->p->mon.abmc + id].dsc,
                     L3_QOS_ABMC_CFG, CtrID, id);
    return HW_OK;
}

/* AMD SMBA, L3QOS_SMBW_CONTROL_n (APM vol. 2, 19.4.6, Figure 19-11): SMBW
 * [SMBW_LEN-1:0] in 1/8 GB/s, U [SMBW_LEN] unlimited, reset U; "L3SMBE
 * usage details and operation are the same as L3BE, except that it
 * controls a subset of bandwidth resources related to slow memory", so the
 * model takes L3BE's rules: a bit above U #GP (project choice, as for
 * L3QOS_BW_CONTROL_n; the figure marks them RAZ) and a limit of 0 enforced
 * as 1/8 GB/s. One register per COS and L3 domain ("within the QOS
 * Domain"), a cap on what the domain's requests of the class read from all
 * slow memory together (mach_set_slow_bw). */
static int has_smba(const struct x86 *x)
{
    return x->sbw_cos != 0;
}

static unsigned smba_count(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->sbw_cos;
}

static enum hw_fault smba_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                               uint64_t *v)
{
    (void)r;
    *v = x->sbw[(size_t)x->m->cpu[cpu].domain * x->sbw_cos + n];
    return HW_OK;
}

static void smba_apply(struct x86 *x, unsigned d, unsigned n)
{
    struct bw_class_set s;
    amd_bw_set(x, x->sbw[(size_t)d * x->sbw_cos + n], x->sbw_len, &s);
    mach_set_slow_bw(x->m, d, n, &s);
}

static enum hw_fault smba_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                                uint64_t v)
{
    (void)r;
    if (v & ~bits_mask(x->sbw_len + 1))
        return HW_GP;
    unsigned d = x->m->cpu[cpu].domain;
    x->sbw[(size_t)d * x->sbw_cos + n] = v;
    smba_apply(x, d, n);
    return HW_OK;
}

static unsigned intel_pf_count(const struct x86 *x, const struct x86_reg *r)
{
    return x->amd ? 0 : x86_pf_count(x, r);
}

static unsigned amd_pf_count(const struct x86 *x, const struct x86_reg *r)
{
    return x->amd ? x86_pf_count(x, r) : 0;
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
    {"IA32_MBA_CFG", X86_MBA_CFG, SC_PACKAGE, PLAT_L3, "MBA 2.0, model-specific; registers.md 1.2",
     mba_cfg_count, mba_cfg_read, mba_cfg_write},
    {"L3QOS_BW_CONTROL_n", X86_AMD_BW_CTL_0, SC_L3, PLAT_L3, "56375 L3 bandwidth enforcement",
     l3be_count, bw_read, l3be_write},
    {"L3QOS_SMBW_CONTROL_n", X86_AMD_SMBW_CTL_0, SC_L3, PLAT_L3, "APM vol. 2 19.4.6 (SMBA)",
     smba_count, smba_read, smba_write},
    {"QOS_EVT_CFG_n", X86_AMD_EVT_CFG_0, SC_L3, PLAT_L3, "APM vol. 2 19.3.3.2 (BMEC)",
     evt_cfg_count, evt_cfg_read, evt_cfg_write},
    {"L3_QOS_EXT_CFG", X86_AMD_EXT_CFG, SC_THREAD, PLAT_L3, "APM vol. 2 19.3.3.3, 19.4.7",
     ext_cfg_count, ext_cfg_read, ext_cfg_write},
    {"L3_QOS_ABMC_CFG", X86_AMD_ABMC_CFG, SC_THREAD, PLAT_L3, "APM vol. 2 19.3.3.3 (ABMC)",
     abmc_msr_count, abmc_cfg_read, abmc_cfg_write},
    {"L3_QOS_ABMC_DSC", X86_AMD_ABMC_DSC, SC_THREAD, PLAT_L3, "APM vol. 2 19.3.3.3 (ABMC)",
     abmc_msr_count, abmc_dsc_read, read_only},
    /* Prefetcher control (x86_pf.h): the vendor's one where the part has prefetchers. */
    {"MSR_MISC_FEATURE_CONTROL", X86_MISC_FEATURE_CONTROL, SC_CORE, PLAT_L2,
     "Intel, Disclosure of H/W prefetcher control (2014)", intel_pf_count, x86_pf_read,
     x86_pf_write},
    {"PrefetchControl", X86_AMD_PREFETCH_CONTROL, SC_CORE, PLAT_L2,
     "AMD PPR family 19h, MSRC000_0108", amd_pf_count, x86_pf_read, x86_pf_write},
    /* Intel's core PMU (x86_pmu.h): per logical CPU. */
    {"IA32_PMCx", X86_PMC_0, SC_THREAD, PLAT_L1D, "SDM vol. 3B, arch. perfmon version 1",
     x86_pmu_count_gp, x86_pmu_read, x86_pmu_write},
    {"IA32_PERFEVTSELx", X86_PERFEVTSEL_0, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 1", x86_pmu_count_gp, x86_pmu_read, x86_pmu_write},
    {"IA32_FIXED_CTRx", X86_FIXED_CTR_0, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 2", x86_pmu_count_fixed, x86_pmu_read, x86_pmu_write},
    {"IA32_FIXED_CTR_CTRL", X86_FIXED_CTR_CTRL, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 2", x86_pmu_count_one, x86_pmu_read, x86_pmu_write},
    {"IA32_PERF_GLOBAL_STATUS", X86_PERF_GLOBAL_STATUS, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon versions 2, 4", x86_pmu_count_one, x86_pmu_read, x86_pmu_write},
    {"IA32_PERF_GLOBAL_CTRL", X86_PERF_GLOBAL_CTRL, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 2", x86_pmu_count_one, x86_pmu_read, x86_pmu_write},
    {"IA32_PERF_GLOBAL_STATUS_RESET", X86_PERF_GLOBAL_STATUS_RESET, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 4; vol. 4", x86_pmu_count_one, x86_pmu_read,
     x86_pmu_write},
    {"IA32_PERF_GLOBAL_STATUS_SET", X86_PERF_GLOBAL_STATUS_SET, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 4; vol. 4", x86_pmu_count_one, x86_pmu_read,
     x86_pmu_write},
    {"IA32_PERF_GLOBAL_INUSE", X86_PERF_GLOBAL_INUSE, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, arch. perfmon version 4; vol. 4", x86_pmu_count_one, x86_pmu_read,
     x86_pmu_write},
    {"MSR_OFFCORE_RSP_x", X86_OFFCORE_RSP_0, SC_THREAD, PLAT_L1D,
     "SDM vol. 3B, Skylake and Ice Lake off-core response", x86_pmu_count_offcore, x86_pmu_read,
     x86_pmu_write},
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

/* ---- topology: APIC IDs (docs/registers.md 1.1, "Topology") ---- */

/* Bits a field of count values takes: ceil(log2(count)), 0 for 1. */
static unsigned width_of(unsigned count)
{
    unsigned b = 0;
    while ((1ull << b) < count)
        b++;
    return b;
}

void x86_topo_of(const struct plat *p, struct x86_topo *o)
{
    const struct plat_topo *t = &p->topo;
    o->sockets = t->sockets;
    o->dies = t->nodes * t->domains;
    o->cores = t->modules * t->cores;
    o->threads = t->threads;
    o->thread_bits = width_of(o->threads);
    o->core_bits = width_of(o->cores);
    o->die_bits = width_of(o->dies);
}

/* Where each field starts in an APIC ID: software shifts right by these to
 * get the core, the die and the package (SDM vol. 2A, CPUID leaf 1FH). */
static unsigned die_shift(const struct x86_topo *t)
{
    return t->thread_bits + t->core_bits;
}

static unsigned pkg_shift(const struct x86_topo *t)
{
    return die_shift(t) + t->die_bits;
}

/* The machine numbers CPUs threads first, then the cores of a module, the
 * modules of a domain, the domains of a node and the nodes of a socket
 * (plat_place), which is QEMU's order (thread = i % T, core = i / T % C,
 * die = i / TC % D, socket = i / TCD) with C and D flattened as above. */
uint32_t x86_apic_id(const struct x86 *x, unsigned cpu)
{
    const struct x86_topo *t = &x->topo;
    struct plat_place pl;
    plat_place(x->p, cpu, &pl);
    uint32_t id = pl.socket;
    id = id << t->die_bits | pl.domain % t->dies;
    id = id << t->core_bits | pl.core % t->cores;
    return id << t->thread_bits | pl.thread;
}

/* ---- CPUID (docs/registers.md 1.1) ---- */

/* Fields of the leaves the model builds, as the SDM (vol. 2A, CPUID) and
 * AMD's APM (vol. 3, appendix E) lay them out. */
HW_FIELD(CPUID_1_EAX, STEPPING, 0, 4);
HW_FIELD(CPUID_1_EAX, MODEL, 4, 4);
HW_FIELD(CPUID_1_EAX, FAMILY, 8, 4);
HW_FIELD(CPUID_1_EAX, EXT_MODEL, 16, 4);
HW_FIELD(CPUID_1_EAX, EXT_FAMILY, 20, 8);
HW_FIELD(CPUID_1_EBX, CLFLUSH, 8, 8);  /* CLFLUSH line size, 8-byte units */
HW_FIELD(CPUID_1_EBX, MAX_IDS, 16, 8); /* addressable logical processor IDs in the package */
HW_FIELD(CPUID_1_EBX, APIC_ID, 24, 8); /* initial APIC ID */
HW_FIELD(CPUID_1_EDX, CLFSH, 19, 1);
HW_FIELD(CPUID_1_EDX, HTT, 28, 1);
HW_FIELD(CPUID_4_EAX, TYPE, 0, 5); /* 0 null, 1 data, 2 instruction, 3 unified */
HW_FIELD(CPUID_4_EAX, LEVEL, 5, 3);
HW_FIELD(CPUID_4_EAX, SELF_INIT, 8, 1);
HW_FIELD(CPUID_4_EAX, FULLY_ASSOC, 9, 1);
HW_FIELD(CPUID_4_EAX, SHARING, 14, 12); /* addressable IDs sharing the cache - 1 */
HW_FIELD(CPUID_4_EAX, CORES, 26, 6);    /* addressable core IDs in the package - 1 (Intel) */
HW_FIELD(CPUID_4_EBX, LINE, 0, 12);     /* each - 1 */
HW_FIELD(CPUID_4_EBX, PARTITIONS, 12, 10);
HW_FIELD(CPUID_4_EBX, WAYS, 22, 10);
HW_FIELD(CPUID_4_EDX, INCLUSIVE, 1, 1);
HW_FIELD(CPUID_B_EAX, SHIFT, 0, 5);  /* to the next level's ID */
HW_FIELD(CPUID_B_EBX, COUNT, 0, 16); /* logical processors at this level */
HW_FIELD(CPUID_B_ECX, SUBLEAF, 0, 8);
HW_FIELD(CPUID_B_ECX, TYPE, 8, 8); /* 0 invalid, 1 SMT, 2 core, 5 die */
HW_FIELD(CPUID_80000001_ECX, CMP_LEGACY, 1, 1);
HW_FIELD(CPUID_80000001_ECX, TOPO_EXT, 22, 1);
HW_FIELD(CPUID_80000005_C, LINE, 0, 8); /* ECX L1D, EDX L1I */
HW_FIELD(CPUID_80000005_C, LINES_PER_TAG, 8, 8);
HW_FIELD(CPUID_80000005_C, ASSOC, 16, 8);
HW_FIELD(CPUID_80000005_C, SIZE_KB, 24, 8);
HW_FIELD(CPUID_80000006_ECX, LINE, 0, 8); /* the L2 */
HW_FIELD(CPUID_80000006_ECX, LINES_PER_TAG, 8, 4);
HW_FIELD(CPUID_80000006_ECX, ASSOC, 12, 4);
HW_FIELD(CPUID_80000006_ECX, SIZE_KB, 16, 16);
HW_FIELD(CPUID_80000006_EDX, LINE, 0, 8); /* the L3 (AMD) */
HW_FIELD(CPUID_80000006_EDX, LINES_PER_TAG, 8, 4);
HW_FIELD(CPUID_80000006_EDX, ASSOC, 12, 4);
HW_FIELD(CPUID_80000006_EDX, SIZE_512K, 18, 14);
HW_FIELD(CPUID_80000008_ECX, NC, 0, 8);            /* logical processors in the package - 1 */
HW_FIELD(CPUID_80000008_ECX, APIC_ID_SIZE, 12, 4); /* APIC ID bits below the package */
HW_FIELD(CPUID_8000001E_EBX, CORE_ID, 0, 8);
HW_FIELD(CPUID_8000001E_EBX, THREADS, 8, 8); /* threads per core - 1 */
HW_FIELD(CPUID_8000001E_ECX, NODE_ID, 0, 8);
HW_FIELD(CPUID_8000001E_ECX, NODES, 8, 3); /* nodes per processor - 1 */

enum { CACHE_DATA = 1, CACHE_CODE = 2, CACHE_UNIFIED = 3 };
enum { TOPO_INVALID = 0, TOPO_SMT = 1, TOPO_CORE = 2, TOPO_DIE = 5 };

/* A count in a field too narrow for it reads as the field's largest value
 * (project choice: the specs give no wider form; for the counts of IDs the
 * largest value still rounds up to the right power of two). */
static uint64_t sat(uint64_t v, unsigned bits)
{
    return v > bits_mask(bits) ? bits_mask(bits) : v;
}

static void vendor(const struct x86 *x, uint32_t out[4])
{
    /* EBX, EDX, ECX spell the vendor string. */
    const char *s = x->amd ? "AuthenticAMD" : "GenuineIntel";
    memcpy(&out[1], s, 4);
    memcpy(&out[3], s + 4, 4);
    memcpy(&out[2], s + 8, 4);
}

/* Leaf 0: the highest basic leaf and the vendor. Intel goes up to 1FH so
 * that 0BH and 1FH are there; AMD (no leaves 4, 0BH, 1FH here) stops at
 * 10H, its PQE leaf (56375). */
static void leaf_0(const struct x86 *x, uint32_t out[4])
{
    out[0] = x->amd ? 0x10 : 0x1F;
    vendor(x, out);
}

/* The signature, CPUID 1 EAX (SDM vol. 2A, CPUID, "Version Information";
 * APM vol. 3, Fn0000_0001_EAX, repeated in Fn8000_0001_EAX): a family
 * above 0xF is 0xF plus the extended family; the model's high nibble goes in
 * the extended model, which software reads for family 6 and 0xF and up (the
 * profile refuses a model above 0xF for any other family). */
static uint32_t signature(const struct plat *p)
{
    unsigned fam = p->core.family, model = p->core.model;
    uint64_t v = HW_FSET(0, CPUID_1_EAX, STEPPING, p->core.stepping);
    v = HW_FSET(v, CPUID_1_EAX, MODEL, model & 0xF);
    v = HW_FSET(v, CPUID_1_EAX, EXT_MODEL, model >> 4);
    v = HW_FSET(v, CPUID_1_EAX, FAMILY, fam < 0xF ? fam : 0xF);
    v = HW_FSET(v, CPUID_1_EAX, EXT_FAMILY, fam < 0xF ? 0 : fam - 0xF);
    return (uint32_t)v;
}

/* Leaf 1 (SDM vol. 2A, CPUID, Table "Information Returned", leaf 01H): the
 * signature; EBX the CLFLUSH line (the L1D line, in 8-byte units), the
 * addressable logical processor IDs of the package (a power of two, the IDs
 * below the package field) and the initial APIC ID; EDX CLFSH, and HTT when
 * the package holds more than one logical processor. Every other feature
 * bit reads 0: the model knows nothing of them. */
static void leaf_1(const struct x86 *x, unsigned cpu, uint32_t out[4])
{
    unsigned bits = pkg_shift(&x->topo);
    uint64_t b = HW_FSET(0, CPUID_1_EBX, CLFLUSH, sat(x->p->cache[PLAT_L1D].geom.line / 8, 8));
    b = HW_FSET(b, CPUID_1_EBX, MAX_IDS, sat(1ull << bits, 8));
    b = HW_FSET(b, CPUID_1_EBX, APIC_ID, x86_apic_id(x, cpu) & 0xff);
    out[0] = signature(x->p);
    out[1] = (uint32_t)b;
    out[3] = (uint32_t)(HW_FMASK(CPUID_1_EDX, CLFSH) | HW_FSET(0, CPUID_1_EDX, HTT, bits > 0));
}

/* The cache the n-th subleaf of leaf 4 or 0x8000001D describes, L1D, L1I,
 * L2, then L3 where there is one; PLAT_NLEVEL past the last. */
static enum plat_level cache_at(const struct plat *p, uint32_t n)
{
    static const enum plat_level order[] = {PLAT_L1D, PLAT_L1I, PLAT_L2, PLAT_L3};
    for (unsigned i = 0; i < sizeof order / sizeof *order; i++)
        if (p->cache[order[i]].present && n-- == 0)
            return order[i];
    return PLAT_NLEVEL;
}

/* APIC ID bits below which CPUs share one instance of a cache: a core's
 * threads; a module's cores (a power of two, plat.c), or a die's. */
static unsigned share_bits(const struct x86 *x, enum plat_level l)
{
    const struct x86_topo *t = &x->topo;
    switch (x->p->cache[l].scope) {
    case PLAT_SCOPE_MODULE:
        return t->thread_bits + bits_log2(x->p->topo.cores);
    case PLAT_SCOPE_DOMAIN:
        return die_shift(t);
    default:
        return t->thread_bits;
    }
}

/* Deterministic cache parameters: Intel leaf 4 (SDM vol. 2A, CPUID leaf
 * 04H) and AMD 0x8000001D (APM vol. 3, Fn8000_001D), one format. EAX: type,
 * level, self-initializing, fully associative when there is one set, the
 * addressable IDs sharing the cache - 1 (a power of two: Linux takes the CPUs
 * whose APIC IDs differ only below it to share the cache), and on Intel the
 * addressable core IDs of the package - 1 (reserved on AMD). EBX: ways,
 * partitions (1) and line size, each - 1; ECX: sets - 1; EDX[1]: inclusive
 * of the levels above it (the profile's inclusion); WBINVD [0] and complex
 * indexing [2] read 0 (project choice: the model indexes sets by address
 * bits). A subleaf past the caches is the null one: all zeros. */
static void cache_leaf(const struct x86 *x, uint32_t sub, uint32_t out[4])
{
    enum plat_level l = cache_at(x->p, sub);
    if (l == PLAT_NLEVEL)
        return;
    const struct plat_cache *pc = &x->p->cache[l];
    const struct cache_geom *g = &pc->geom;
    uint64_t sets = g->size / ((uint64_t)g->assoc * g->line);
    unsigned type = l == PLAT_L1D ? CACHE_DATA : l == PLAT_L1I ? CACHE_CODE : CACHE_UNIFIED;
    uint64_t a = HW_FSET(0, CPUID_4_EAX, TYPE, type);
    a = HW_FSET(a, CPUID_4_EAX, LEVEL, l <= PLAT_L1D ? 1 : l == PLAT_L2 ? 2 : 3);
    a = HW_FSET(a, CPUID_4_EAX, SELF_INIT, 1);
    a = HW_FSET(a, CPUID_4_EAX, FULLY_ASSOC, sets == 1);
    a = HW_FSET(a, CPUID_4_EAX, SHARING, sat((1ull << share_bits(x, l)) - 1, 12));
    if (!x->amd)
        a = HW_FSET(a, CPUID_4_EAX, CORES,
                    sat((1ull << (x->topo.core_bits + x->topo.die_bits)) - 1, 6));
    uint64_t b = HW_FSET(0, CPUID_4_EBX, LINE, g->line - 1);
    b = HW_FSET(b, CPUID_4_EBX, WAYS, g->assoc - 1);
    out[0] = (uint32_t)a;
    out[1] = (uint32_t)b;
    out[2] = (uint32_t)(sets - 1);
    out[3] = (uint32_t)HW_FSET(0, CPUID_4_EDX, INCLUSIVE, pc->incl == HIER_INCLUSIVE);
}

/* Extended topology, leaves 0BH and 1FH (SDM vol. 2A, CPUID leaves 0BH and
 * 1FH; vol. 3A, "Hierarchical Mapping of CPUID Extended Topology"), as QEMU
 * 7.2 answers them so that Linux finds what it finds on stock QEMU: the SMT
 * level (shift to the core ID, threads per core), the core level and, in 1FH
 * when a socket has more than one die, the die level (shift to the package,
 * logical processors per package), then levels of type 0 (invalid) with
 * EAX and EBX 0. Without a die level the core level shifts to the package
 * (0BH must reach the package ID); its count is a die's logical processors,
 * as in QEMU (the SDM makes the counts informational only). ECX[7:0] echoes
 * the subleaf and EDX is the x2APIC ID in every subleaf. */
static void topo_leaf(const struct x86 *x, unsigned cpu, uint32_t leaf, uint32_t sub,
                      uint32_t out[4])
{
    const struct x86_topo *t = &x->topo;
    int die = leaf == 0x1F && t->dies > 1;
    const struct {
        unsigned type, shift, count;
    } lv[3] = {
        {TOPO_SMT, t->thread_bits, t->threads},
        {TOPO_CORE, die ? die_shift(t) : pkg_shift(t), t->cores * t->threads},
        {TOPO_DIE, pkg_shift(t), t->dies * t->cores * t->threads},
    };
    unsigned type = TOPO_INVALID;
    if (sub < (die ? 3u : 2u)) {
        type = lv[sub].type;
        out[0] = (uint32_t)HW_FSET(0, CPUID_B_EAX, SHIFT, lv[sub].shift);
        out[1] = (uint32_t)HW_FSET(0, CPUID_B_EBX, COUNT, lv[sub].count);
    }
    out[2] =
        (uint32_t)(HW_FSET(0, CPUID_B_ECX, SUBLEAF, sub) | HW_FSET(0, CPUID_B_ECX, TYPE, type));
    out[3] = x86_apic_id(x, cpu);
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

/* Leaves 7, 0xF and 0x10: monitoring and allocation (registers.md 1.1). */
static void qos_leaf(const struct x86 *x, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    /* PQE covers every enforcement feature: AMD's L3BE is found through it (56375),
     * and SMBA (APM vol. 2, 19.4.1). */
    int pqm = x->nrmid != 0, pqe = has_cat(x, PLAT_L3) || has_cat(x, PLAT_L2) || has_mba(x) ||
                                   has_l3be(x) || has_smba(x);
    if (leaf == 0x7) {
        if (sub == 0)
            out[1] = (pqm ? 1u << 12 : 0) | (pqe ? 1u << 15 : 0);
    } else if (leaf == 0xF && pqm) {
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
    } else if (leaf == 0x10) {
        if (sub == 0)
            out[1] = (has_cat(x, PLAT_L3) ? 1u << 1 : 0) | (has_cat(x, PLAT_L2) ? 1u << 2 : 0) |
                     (has_mba(x) ? 1u << 3 : 0);
        else if (sub == 1)
            cat_leaf(x, PLAT_L3, out);
        else if (sub == 2)
            cat_leaf(x, PLAT_L2, out);
        else if (sub == 3 && has_mba(x)) {
            out[0] = (x->p->bw.max - 1) & 0xfff;
            out[2] = (x->p->bw.linear ? 1u << 2 : 0) | (x->p->bw.per_thread ? 1u : 0);
            out[3] = (x->bw_cos - 1) & 0xffff;
        }
    }
}

/* Associativity as 0x80000006 encodes it (SDM vol. 2A, leaf 80000006H;
 * APM vol. 3, Fn8000_0006, "L2/L3 cache and TLB associativity field
 * encoding"): the ways both tables name, fully associative as 0xF, and any
 * other count as the code that sends software to the deterministic leaf
 * (Intel 7H: see leaf 4; AMD 9H: see Fn8000_001D; project choice, since
 * neither table has a code for, say, 18 ways). */
static unsigned assoc_code(const struct x86 *x, const struct cache_geom *g)
{
    static const unsigned ways[] = {1, 2, 4, 8, 16, 32, 48, 64, 96, 128};
    static const unsigned code[] = {1, 2, 4, 6, 8, 0xA, 0xB, 0xC, 0xD, 0xE};
    if ((uint64_t)g->assoc * g->line == g->size)
        return 0xF;
    for (unsigned i = 0; i < sizeof ways / sizeof *ways; i++)
        if (g->assoc == ways[i])
            return code[i];
    return x->amd ? 9 : 7;
}

/* AMD's L1 caches, 0x80000005 ECX (L1D) and EDX (L1I) (APM vol. 3,
 * Fn8000_0005): size in KiB, ways (0xFF fully associative), lines per tag
 * 1, line size. EAX and EBX, the TLBs, read 0: the model has none. */
static uint32_t l1_desc(const struct plat_cache *pc)
{
    const struct cache_geom *g = &pc->geom;
    int full = (uint64_t)g->assoc * g->line == g->size;
    uint64_t v = HW_FSET(0, CPUID_80000005_C, LINE, g->line);
    v = HW_FSET(v, CPUID_80000005_C, LINES_PER_TAG, 1);
    v = HW_FSET(v, CPUID_80000005_C, ASSOC, full ? 0xFF : sat(g->assoc, 8));
    v = HW_FSET(v, CPUID_80000005_C, SIZE_KB, sat(g->size / 1024, 8));
    return (uint32_t)v;
}

/* 0x80000006 (SDM vol. 2A, leaf 80000006H; APM vol. 3, Fn8000_0006): ECX
 * the L2, size in KiB, associativity code, line size (and on AMD lines per
 * tag 1; Intel reserves those bits); EDX on AMD the L3, size in 512 KiB
 * units (rounded down), code, lines per tag, line size; 0 without an L3.
 * Linux takes its x86_cache_size from this ECX on AMD. */
static void leaf_80000006(const struct x86 *x, uint32_t out[4])
{
    const struct cache_geom *g = &x->p->cache[PLAT_L2].geom;
    uint64_t c = HW_FSET(0, CPUID_80000006_ECX, LINE, sat(g->line, 8));
    c = HW_FSET(c, CPUID_80000006_ECX, LINES_PER_TAG, x->amd);
    c = HW_FSET(c, CPUID_80000006_ECX, ASSOC, assoc_code(x, g));
    c = HW_FSET(c, CPUID_80000006_ECX, SIZE_KB, sat(g->size / 1024, 16));
    out[2] = (uint32_t)c;
    if (!x->amd || !x->p->cache[PLAT_L3].present)
        return;
    g = &x->p->cache[PLAT_L3].geom;
    uint64_t d = HW_FSET(0, CPUID_80000006_EDX, LINE, sat(g->line, 8));
    d = HW_FSET(d, CPUID_80000006_EDX, LINES_PER_TAG, 1);
    d = HW_FSET(d, CPUID_80000006_EDX, ASSOC, assoc_code(x, g));
    d = HW_FSET(d, CPUID_80000006_EDX, SIZE_512K, sat(g->size / (512 * 1024), 14));
    out[3] = (uint32_t)d;
}

/* AMD 0x80000001 (APM vol. 3, Fn8000_0001): EAX the signature again; ECX
 * TopologyExtensions [22] (leaves 0x8000001D and 0x8000001E are there) and
 * CmpLegacy [1] when a package has more than one core. LWP adds its bit
 * afterwards (lwp_cpuid). Intel reserves all of it but feature bits the
 * model does not know. */
static void leaf_80000001(const struct x86 *x, uint32_t out[4])
{
    if (!x->amd)
        return;
    out[0] = signature(x->p);
    out[2] =
        (uint32_t)(HW_FMASK(CPUID_80000001_ECX, TOPO_EXT) |
                   HW_FSET(0, CPUID_80000001_ECX, CMP_LEGACY, x->topo.dies * x->topo.cores > 1));
}

/* 0x80000008: EBX[6] BE, AMD's bandwidth enforcement (56375); on AMD ECX
 * (APM vol. 3, Fn8000_0008) NC, the logical processors of the package - 1,
 * and ApicIdSize, the APIC ID bits below the package field. */
static void leaf_80000008(const struct x86 *x, uint32_t out[4])
{
    /* BE covers L3BE, L3SMBE and SDCIAE (APM vol. 2, 19.4.4). */
    if (has_l3be(x) || has_smba(x) || has_sdciae(x))
        out[1] = 1u << 6;
    if (!x->amd)
        return;
    const struct x86_topo *t = &x->topo;
    uint64_t c =
        HW_FSET(0, CPUID_80000008_ECX, NC, sat((uint64_t)t->dies * t->cores * t->threads - 1, 8));
    c = HW_FSET(c, CPUID_80000008_ECX, APIC_ID_SIZE, sat(pkg_shift(t), 4));
    out[2] = (uint32_t)c;
}

/* AMD 0x8000001E (APM vol. 3, Fn8000_001E): EAX the extended APIC ID; EBX
 * the core ID within the package (the APIC ID's die and core fields, as
 * Linux takes it for the core's ID) and threads per core - 1; ECX the node
 * ID (the APIC ID above the core field: socket and die, as QEMU 7.2 gives it)
 * and nodes (dies) per processor - 1. */
static void leaf_8000001e(const struct x86 *x, unsigned cpu, uint32_t out[4])
{
    const struct x86_topo *t = &x->topo;
    uint32_t id = x86_apic_id(x, cpu);
    uint64_t b =
        HW_FSET(0, CPUID_8000001E_EBX, CORE_ID, (id & bits_mask(pkg_shift(t))) >> t->thread_bits);
    b = HW_FSET(b, CPUID_8000001E_EBX, THREADS, t->threads - 1);
    uint64_t c = HW_FSET(0, CPUID_8000001E_ECX, NODE_ID, id >> die_shift(t));
    c = HW_FSET(c, CPUID_8000001E_ECX, NODES, sat(t->dies - 1, 3));
    out[0] = id;
    out[1] = (uint32_t)b;
    out[2] = (uint32_t)c;
}

/* AMD 0x80000020 (APM vol. 2, Table 19-5 and 19.3.3.2-19.4.7; Linux
 * tools/arch/x86/kcpuid/cpuid.csv), sub-leaf 0 EBX: L3MBE [1], L3SMBE [2],
 * BMEC [3], ABMC [5], SDCIAE [6]. Sub-leaf 1, L3BE: EAX BW_LEN, EDX
 * COS_MAX; 3, BMEC and ABMC: EBX[7:0] EVT_NUM (the QOS_EVT_CFG_n registers,
 * 0 without BMEC), ECX the transaction types either can count; 5, ABMC:
 * EAX[7:0] CounterSize (width - 24; EAX[8], QM_CTR bit 61 an overflow bit,
 * 0: the model's counters wrap), EBX[15:0] the largest counter ID, ECX[0]
 * Select_COS (gz/rust-cpuid, AssignableBandwidthMonitoringCounterInfo;
 * Linux takes EBX + 1 for num_mbm_cntrs). Sub-leaf 2 is SMBA's, with it. */
static void leaf_80000020(const struct x86 *x, uint32_t sub, uint32_t out[4])
{
    if (sub == 0) {
        out[1] = (has_l3be(x) ? 1u << 1 : 0) | (has_smba(x) ? 1u << 2 : 0) |
                 (has_bmec(x) ? 1u << 3 : 0) | (has_abmc(x) ? 1u << 5 : 0) |
                 (has_sdciae(x) ? 1u << 6 : 0);
    } else if (sub == 1 && has_l3be(x)) {
        out[0] = x->bw_len;
        out[3] = x->bw_cos - 1;
    } else if (sub == 2 && has_smba(x)) {
        out[0] = x->sbw_len;
        out[3] = x->sbw_cos - 1;
    } else if (sub == 3 && (has_bmec(x) || has_abmc(x))) {
        out[1] = has_bmec(x) ? 2 : 0;
        out[2] = AMD_BW_TYPES;
    } else if (sub == 5 && has_abmc(x)) {
        out[0] = (x->p->mon.width - 24) & 0xff;
        out[1] = x->p->mon.abmc - 1;
        out[2] = x->p->mon.abmc_by_class ? 1 : 0;
    }
}

/* The basic leaves. */
static void basic_leaf(const struct x86 *x, unsigned cpu, uint32_t leaf, uint32_t sub,
                       uint32_t out[4])
{
    switch (leaf) {
    case 0x0:
        leaf_0(x, out);
        break;
    case 0x1:
        leaf_1(x, cpu, out);
        break;
    case 0x4:
        if (!x->amd)
            cache_leaf(x, sub, out);
        break;
    case 0xB: /* AMD implements 0BH from family 17h (APM vol. 3, Fn0000_000B) */
    case 0x1F:
        if (!x->amd || leaf == 0xB)
            topo_leaf(x, cpu, leaf, sub, out);
        break;
    case 0xA:
        x86_pmu_leaf(x, out);
        break;
    default:
        qos_leaf(x, leaf, sub, out);
        break;
    }
}

/* The extended leaves. */
static void ext_leaf(const struct x86 *x, unsigned cpu, uint32_t leaf, uint32_t sub,
                     uint32_t out[4])
{
    switch (leaf) {
    case 0x80000000:
        out[0] = x->amd ? 0x80000020 : 0x80000008;
        if (x->amd)
            vendor(x, out);
        break;
    case 0x80000001:
        leaf_80000001(x, out);
        break;
    case 0x80000005:
        if (x->amd) {
            out[2] = l1_desc(&x->p->cache[PLAT_L1D]);
            out[3] = l1_desc(&x->p->cache[PLAT_L1I]);
        }
        break;
    case 0x80000006:
        leaf_80000006(x, out);
        break;
    case 0x80000008:
        leaf_80000008(x, out);
        break;
    case 0x8000001D:
        if (x->amd)
            cache_leaf(x, sub, out);
        break;
    case 0x8000001E:
        if (x->amd)
            leaf_8000001e(x, cpu, out);
        break;
    case 0x80000020:
        if (x->amd)
            leaf_80000020(x, sub, out);
        break;
    default:
        break;
    }
}

/* Leaves this model does not implement read as zeros (registers.md 1.1). */
enum hw_fault x86_cpuid(struct x86 *x, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    memset(out, 0, 4 * sizeof *out);
    if (leaf < 0x80000000)
        basic_leaf(x, cpu, leaf, sub, out);
    else
        ext_leaf(x, cpu, leaf, sub, out);
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

/* BMEC's events reset to total and local, counting from now; ABMC and
 * SDCIAE off, with every counter unassigned. */
static void amd_reset(struct x86 *x)
{
    const struct plat *p = x->p;
    if (x->ext_cfg) {
        memset(x->ext_cfg, 0, x->m->ncpu * sizeof *x->ext_cfg);
        memset(x->abmc_cfg, 0, x->m->ncpu * sizeof *x->abmc_cfg);
        for (unsigned d = 0; d < p->ndomains; d++) {
            x->ext_mode[d] = 0;
            sdciae_apply(x, d);
        }
    }
    for (unsigned d = 0; d < p->ndomains && x->sbw_cos; d++)
        for (unsigned c = 0; c < x->sbw_cos; c++) {
            x->sbw[(size_t)d * x->sbw_cos + c] = 1ull << x->sbw_len; /* U */
            smba_apply(x, d, c);
        }
    if (x->abmc)
        memset(x->abmc, 0, (size_t)p->ndomains * p->mon.abmc * sizeof *x->abmc);
    for (unsigned d = 0; has_bmec(x) && d < p->ndomains; d++) {
        x->evt_cfg[(size_t)d * 2] = evt_cfg_reset[0] & AMD_BW_TYPES;
        x->evt_cfg[(size_t)d * 2 + 1] = evt_cfg_reset[1] & AMD_BW_TYPES;
        memset(&x->mbm_unavail[mbm_at(x, d, 0, 0)], 0, (size_t)x->nrmid * 2);
        for (unsigned rmid = 0; rmid < x->nrmid; rmid++)
            for (unsigned n = 0; n < 2; n++)
                x->mbm_base[mbm_at(x, d, rmid, n)] =
                    mach_traffic(x->m, d, rmid, evt_types(x, d, n));
    }
}

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
    memset(x->mba_cfg, 0, x->topo.sockets * sizeof *x->mba_cfg);
    for (unsigned s = 0; s < x->topo.sockets; s++)
        mba_mode_apply(x, s);
    /* PQR_ASSOC.RMID resets to 0 on every CPU: each domain tracks RMID 0. */
    if (x->tracked)
        memset(x->tracked, 0, (size_t)p->ndomains * x->nrmid * sizeof *x->tracked);
    x->seq = 1;
    for (unsigned c = 0; c < x->m->ncpu; c++) {
        mach_set_assoc(x->m, c, x->m->cpu[c].task, 0, 0);
        if (x->tracked)
            x->tracked[(size_t)x->m->cpu[c].domain * x->nrmid] = x->seq;
    }
    amd_reset(x);
    x86_pf_reset(x); /* every prefetcher on */
    x86_pmu_reset(x);
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
    if (x->amd && p->sbw.kind == BW_RATE) {
        x->sbw_cos = p->sbw.classes;
        x->sbw_len = p->sbw.max;
    }
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
    if (!bad && x->sbw_cos)
        bad = !(x->sbw = calloc((size_t)p->ndomains * x->sbw_cos, sizeof *x->sbw));
    if (!bad && has_bmec(x))
        bad = !(x->evt_cfg = calloc((size_t)p->ndomains * 2, sizeof *x->evt_cfg)) ||
              !(x->mbm_base = calloc((size_t)p->ndomains * x->nrmid * 2, sizeof *x->mbm_base)) ||
              !(x->mbm_unavail = calloc((size_t)p->ndomains * x->nrmid * 2, 1));
    if (!bad && has_abmc(x))
        bad = !(x->abmc = calloc((size_t)p->ndomains * p->mon.abmc, sizeof *x->abmc));
    if (!bad && ext_cfg_bits(x))
        bad = !(x->ext_cfg = calloc(m->ncpu, sizeof *x->ext_cfg)) ||
              !(x->abmc_cfg = calloc(m->ncpu, sizeof *x->abmc_cfg)) ||
              !(x->ext_mode = calloc(p->ndomains, sizeof *x->ext_mode));
    x86_topo_of(p, &x->topo);
    if (!bad)
        bad = !(x->l3_of = calloc(m->ncpu, sizeof *x->l3_of)) ||
              !(x->l2_of = calloc(m->ncpu, sizeof *x->l2_of)) ||
              !(x->mba_cfg = calloc(x->topo.sockets, sizeof *x->mba_cfg)) || x86_pf_init(x) ||
              x86_pmu_init(x);
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
    free(x->sbw);
    free(x->evt_cfg);
    free(x->mbm_base);
    free(x->mbm_unavail);
    free(x->ext_cfg);
    free(x->ext_mode);
    free(x->abmc_cfg);
    free(x->abmc);
    free(x->l3_of);
    free(x->l2_of);
    free(x->mba_cfg);
    free(x->pf_ctl);
    x86_pmu_free(x);
    lwp_free(&x->lwp);
    memset(x, 0, sizeof *x);
}
