/* Intel architectural performance monitoring (x86_pmu.h): the counters of
 * each logical CPU, what their event selects count, overflow and PMIs. */
#include "x86_pmu.h"

#include "x86.h"
#include "x86_reg.h"

#include <stdlib.h>
#include <string.h>

/* ---- enumeration, per CPU model ---- */

/* What a part's core PMU has (SDM vol. 3B, the microarchitecture sections
 * of "Performance Monitoring": Skylake has 4 general-purpose counters per
 * logical processor with Hyper-Threading on and 8 with it off; Ice Lake
 * and Sapphire Rapids 8 per logical processor; Tremont 4). */
struct pmu_part {
    unsigned model;
    unsigned gp_ht, gp_single; /* counters with 2 threads a core, with 1 */
    int core_events;           /* the big-core events of core_events[] below */
    uint64_t offcore;          /* MSR_OFFCORE_RSP_x's writable bits, in the Skylake
                                  layout (x86_pmu.h); 0: not modelled */
};

/* The off-core response masks are the bits Linux lets software set on
 * those parts (intel_skl_extra_regs, intel_icl_extra_regs in
 * arch/x86/events/intel/core.c); Sapphire Rapids and Tremont lay the MSR
 * out otherwise and are left without it. */
static const struct pmu_part parts[] = {
    {0x55, 4, 8, 1, 0x3FFFFF8FFFull}, /* Skylake-SP, Cascade Lake */
    {0x6A, 8, 8, 1, 0x3FFFFFBFFFull}, /* Ice Lake-SP */
    {0x8F, 8, 8, 1, 0},               /* Sapphire Rapids */
    {0x86, 4, 4, 0, 0},               /* Tremont (Snow Ridge) */
};

/* An event select (EventSelect, UMask) the machine can count. */
struct pmu_event {
    uint8_t sel, umask;
    uint8_t ev; /* enum x86_pmu_ev */
};

/* The architectural events (SDM vol. 3B, table "UMask and Event Select
 * Encodings for Pre-Defined Architectural Performance Events"); reference
 * cycles are core cycles: the machine runs its cores at one frequency. */
static const struct pmu_event arch_events[] = {
    {0x3C, 0x00, X86_EV_CYCLES},   /* UnHalted Core Cycles */
    {0xC0, 0x00, X86_EV_INSTR},    /* Instructions Retired */
    {0x3C, 0x01, X86_EV_CYCLES},   /* UnHalted Reference Cycles */
    {0x2E, 0x4F, X86_EV_LLC_REF},  /* LLC Reference */
    {0x2E, 0x41, X86_EV_LLC_MISS}, /* LLC Misses */
    {0xC4, 0x00, X86_EV_BRANCH},   /* Branch Instructions Retired */
    {0xC5, 0x00, X86_EV_BR_MISS},  /* Branch Misses Retired */
};

/* Model-specific events of the big cores (Skylake, Ice Lake and Golden
 * Cove share these encodings; Intel's event lists for those parts, and
 * the SDM's model-specific event tables). */
static const struct pmu_event core_events[] = {
    {0x51, 0x01, X86_EV_L1D_MISS},  /* L1D.REPLACEMENT */
    {0x24, 0xFF, X86_EV_L2_REF},    /* L2_RQSTS.REFERENCES */
    {0x24, 0x3F, X86_EV_L2_MISS},   /* L2_RQSTS.MISS */
    {0xD0, 0x81, X86_EV_LOADS},     /* MEM_INST_RETIRED.ALL_LOADS */
    {0xD0, 0x82, X86_EV_STORES},    /* MEM_INST_RETIRED.ALL_STORES */
    {0xD1, 0x02, X86_EV_LD_L2_HIT}, /* MEM_LOAD_RETIRED.L2_HIT */
    {0xD1, 0x04, X86_EV_LD_L3_HIT}, /* MEM_LOAD_RETIRED.L3_HIT */
};

/* MEM_LOAD_RETIRED.L3_MISS (both nodes), and OFFCORE_RESPONSE_0 and _1,
 * which count by their MSR (offcore_count). */
enum { EV_L3_MISS = X86_PMU_NEV, EV_OFFCORE_0, EV_OFFCORE_1 };
static const struct pmu_event core_sums[] = {
    {0xD1, 0x20, EV_L3_MISS},
    {0xB7, 0x01, EV_OFFCORE_0},
    {0xBB, 0x01, EV_OFFCORE_1},
};

/* What fixed counter i counts: INST_RETIRED.ANY, CPU_CLK_UNHALTED.THREAD
 * and CPU_CLK_UNHALTED.REF_TSC (SDM vol. 3B, "Association of Fixed-Function
 * Performance Counters with Architectural Performance Events"). */
static const uint8_t fixed_ev[X86_PMU_NFIXED] = {X86_EV_INSTR, X86_EV_CYCLES, X86_EV_CYCLES};

static const struct pmu_part *part_of(const struct x86 *x)
{
    if (x->amd || x->p->core.family != 6)
        return NULL;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].model == x->p->core.model)
            return &parts[i];
    return NULL;
}

/* The event an event select counts; -1 for one the machine does not know,
 * which counts nothing (project choice: a part counts an undefined
 * encoding as whatever its logic gives, which nothing can rely on). */
static int event_of(const struct x86 *x, uint64_t sel)
{
    unsigned es = (unsigned)HW_FGET(sel, PERFEVTSEL, EventSelect);
    unsigned um = (unsigned)HW_FGET(sel, PERFEVTSEL, UMask);
    for (size_t i = 0; i < sizeof arch_events / sizeof arch_events[0]; i++)
        if (arch_events[i].sel == es && arch_events[i].umask == um)
            return arch_events[i].ev;
    const struct pmu_part *pt = x->pmu.part;
    for (size_t i = 0; pt && pt->core_events && i < sizeof core_events / sizeof core_events[0]; i++)
        if (core_events[i].sel == es && core_events[i].umask == um)
            return core_events[i].ev;
    for (size_t i = 0; pt && pt->core_events && i < sizeof core_sums / sizeof core_sums[0]; i++)
        if (core_sums[i].sel == es && core_sums[i].umask == um &&
            (core_sums[i].ev == EV_L3_MISS || pt->offcore))
            return core_sums[i].ev;
    return -1;
}

/* An OFFCORE_RESPONSE count with MSR value rsp: demand data reads that
 * left the core (L1D and L2 misses) with a response rsp selects. A
 * response matches when one of its supplier bits is set (ANY_RESPONSE:
 * every one) and, without ANY_RESPONSE, one snoop bit too: the machine's
 * lines come with no snoop, which every snoop bit Linux sets admits
 * (project choice). */
static uint64_t offcore_count(uint64_t rsp, const uint64_t ev[X86_PMU_NEV])
{
    if (!HW_FGET(rsp, OFFCORE_RSP, DEMAND_DATA_RD))
        return 0;
    uint64_t hit = ev[X86_EV_LD_L3_HIT], local = ev[X86_EV_LD_MEM_LOCAL],
             remote = ev[X86_EV_LD_MEM_REMOTE];
    if (HW_FGET(rsp, OFFCORE_RSP, ANY_RESPONSE))
        return hit + local + remote;
    if (!HW_FGET(rsp, OFFCORE_RSP, SNOOP))
        return 0;
    return (HW_FGET(rsp, OFFCORE_RSP, L3_HIT) ? hit : 0) +
           (HW_FGET(rsp, OFFCORE_RSP, L3_MISS_LOCAL) ? local : 0) +
           (HW_FGET(rsp, OFFCORE_RSP, L3_MISS_REMOTE) ? remote : 0);
}

/* What counter sel counts of ev[] on CPU c. */
static uint64_t count_of(const struct x86 *x, const struct x86_pmu_cpu *c, uint64_t sel,
                         const uint64_t ev[X86_PMU_NEV])
{
    int k = event_of(x, sel);
    if (k < 0)
        return 0;
    if (k < X86_PMU_NEV)
        return ev[k];
    if (k == EV_L3_MISS)
        return ev[X86_EV_LD_MEM_LOCAL] + ev[X86_EV_LD_MEM_REMOTE];
    return offcore_count(c->offcore[k - EV_OFFCORE_0], ev);
}

int x86_pmu_init(struct x86 *x)
{
    struct x86_pmu *u = &x->pmu;
    const struct pmu_part *pt = part_of(x);
    memset(u, 0, sizeof *u);
    u->threads = x->p->topo.threads ? x->p->topo.threads : 1;
    u->ncpu = x->m->ncpu;
    if (!pt)
        return 0;
    u->part = pt;
    u->ngp = u->threads > 1 ? pt->gp_ht : pt->gp_single;
    u->offcore_bits = pt->offcore;
    u->width = X86_PMU_WIDTH;
    u->cpu = calloc(u->ncpu, sizeof *u->cpu);
    return u->cpu ? 0 : -1;
}

void x86_pmu_free(struct x86 *x)
{
    free(x->pmu.cpu);
    x->pmu.cpu = NULL;
}

/* Power-up values: all zero but IA32_PERF_GLOBAL_CTRL, which enables every
 * general-purpose counter, so that version 1 software counts (SDM vol. 4,
 * IA32_PERF_GLOBAL_CTRL: "sets bits n-1:0 and clears the upper bits"). */
void x86_pmu_reset(struct x86 *x)
{
    struct x86_pmu *u = &x->pmu;
    for (unsigned c = 0; u->ngp && c < u->ncpu; c++) {
        memset(&u->cpu[c], 0, sizeof u->cpu[c]);
        u->cpu[c].global_ctrl = (1ull << u->ngp) - 1;
    }
}

void x86_pmu_leaf(const struct x86 *x, uint32_t out[4])
{
    const struct x86_pmu *u = &x->pmu;
    out[0] = out[1] = out[2] = out[3] = 0;
    if (!u->ngp)
        return;
    /* EAX: version, counters, width, EBX's length; EBX: a set bit is an
     * architectural event that is not available (none); EDX: fixed
     * counters and their width. */
    out[0] = X86_PMU_VERSION | u->ngp << 8 | u->width << 16 |
             (uint32_t)(sizeof arch_events / sizeof arch_events[0]) << 24;
    out[3] = X86_PMU_NFIXED | u->width << 5;
}

/* ---- registers ---- */

static uint64_t width_mask(const struct x86_pmu *u)
{
    return (1ull << u->width) - 1;
}

/* The counters' bits in the global MSRs: general-purpose i at i, fixed i
 * at 32 + i. */
static uint64_t ctr_bits(const struct x86_pmu *u)
{
    return ((1ull << u->ngp) - 1) | ((1ull << X86_PMU_NFIXED) - 1) << 32;
}

/* Status bits beyond the counters that software can reset (SDM vol. 4,
 * IA32_PERF_GLOBAL_STATUS_RESET: LBR_Frz 58, CTR_Frz 59, Ovf_Uncore 61,
 * OvfBuf 62, CondChgd 63) and set (IA32_PERF_GLOBAL_STATUS_SET: the same
 * but CondChgd). The machine sets none of them itself. */
#define STATUS_RESET_EXTRA (3ull << 58 | 7ull << 61)
#define STATUS_SET_EXTRA   (3ull << 58 | 3ull << 61)

static uint64_t inuse(const struct x86_pmu *u, const struct x86_pmu_cpu *c)
{
    uint64_t v = 0;
    int pmi = 0;
    for (unsigned i = 0; i < u->ngp; i++) {
        /* In use: an event is selected (project choice: the SDM names
         * the bit per IA32_PERFEVTSELx without saying which fields). */
        if (HW_FGET(c->evtsel[i], PERFEVTSEL, EventSelect))
            v |= 1ull << i;
        pmi |= (int)HW_FGET(c->evtsel[i], PERFEVTSEL, INT);
    }
    for (unsigned i = 0; i < X86_PMU_NFIXED; i++) {
        uint64_t f = c->fixed_ctrl >> (4 * i);
        if (HW_FGET(f, FIXED_CTR_CTRL, EN))
            v |= 1ull << (32 + i);
        pmi |= (int)HW_FGET(f, FIXED_CTR_CTRL, PMI);
    }
    return pmi ? v | HW_FMASK(PERF_GLOBAL_INUSE, PMI) : v;
}

unsigned x86_pmu_count_gp(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->pmu.ngp;
}

unsigned x86_pmu_count_fixed(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->pmu.ngp ? X86_PMU_NFIXED : 0;
}

unsigned x86_pmu_count_one(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->pmu.ngp ? 1 : 0;
}

unsigned x86_pmu_count_offcore(const struct x86 *x, const struct x86_reg *r)
{
    (void)r;
    return x->pmu.offcore_bits ? 2 : 0;
}

/* Which register of the PMU a callback serves: its MSR. */
static uint32_t msr_of(const struct x86_reg *r, unsigned n)
{
    return r->base + n;
}

enum hw_fault x86_pmu_read(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                           uint64_t *v)
{
    const struct x86_pmu *u = &x->pmu;
    const struct x86_pmu_cpu *c = &u->cpu[cpu];
    uint32_t msr = msr_of(r, n);
    if (msr - X86_PMC_0 < u->ngp)
        *v = c->pmc[msr - X86_PMC_0];
    else if (msr - X86_PERFEVTSEL_0 < u->ngp)
        *v = c->evtsel[msr - X86_PERFEVTSEL_0];
    else if (msr - X86_FIXED_CTR_0 < X86_PMU_NFIXED)
        *v = c->fixed[msr - X86_FIXED_CTR_0];
    else if (msr == X86_FIXED_CTR_CTRL)
        *v = c->fixed_ctrl;
    else if (msr == X86_PERF_GLOBAL_STATUS)
        *v = c->global_status;
    else if (msr == X86_PERF_GLOBAL_CTRL)
        *v = c->global_ctrl;
    else if (msr == X86_PERF_GLOBAL_INUSE)
        *v = inuse(u, c);
    else if (msr - X86_OFFCORE_RSP_0 < 2)
        *v = c->offcore[msr - X86_OFFCORE_RSP_0];
    else /* STATUS_RESET and STATUS_SET read 0 (project choice: the SDM
            gives them only as write controls) */
        *v = 0;
    return HW_OK;
}

enum hw_fault x86_pmu_write(struct x86 *x, const struct x86_reg *r, unsigned cpu, unsigned n,
                            uint64_t v)
{
    const struct x86_pmu *u = &x->pmu;
    struct x86_pmu_cpu *c = &u->cpu[cpu];
    uint32_t msr = msr_of(r, n);
    if (msr - X86_PMC_0 < u->ngp) {
        /* Without full-width writes (IA32_PERF_CAPABILITIES.FW_WRITE, not
         * enumerated) a write gives bits 31:0, sign-extended to the
         * counter's width; the written bits 63:32 are ignored (SDM vol.
         * 3B, "Full-Width Writes to Performance Counter Registers"). */
        c->pmc[msr - X86_PMC_0] = (uint64_t)(int64_t)(int32_t)(uint32_t)v & width_mask(u);
    } else if (msr - X86_PERFEVTSEL_0 < u->ngp) {
        if (v >> 32) /* reserved */
            return HW_GP;
        c->evtsel[msr - X86_PERFEVTSEL_0] = v;
    } else if (msr - X86_FIXED_CTR_0 < X86_PMU_NFIXED) {
        if (v & ~width_mask(u)) /* beyond the width: reserved (project choice) */
            return HW_GP;
        c->fixed[msr - X86_FIXED_CTR_0] = v;
    } else if (msr == X86_FIXED_CTR_CTRL) {
        if (v & ~((1ull << (4 * X86_PMU_NFIXED)) - 1))
            return HW_GP;
        c->fixed_ctrl = v;
    } else if (msr == X86_PERF_GLOBAL_CTRL) {
        if (v & ~ctr_bits(u))
            return HW_GP;
        c->global_ctrl = v;
    } else if (msr == X86_PERF_GLOBAL_STATUS_RESET) {
        if (v & ~(ctr_bits(u) | STATUS_RESET_EXTRA))
            return HW_GP;
        c->global_status &= ~v;
    } else if (msr - X86_OFFCORE_RSP_0 < 2) {
        /* Bits Linux does not let software set are #GP (project choice:
         * the SDM lists the fields without saying what the others do). */
        if (v & ~u->offcore_bits)
            return HW_GP;
        c->offcore[msr - X86_OFFCORE_RSP_0] = v;
    } else if (msr == X86_PERF_GLOBAL_STATUS_SET) {
        /* Sets the bits as an overflow would, without a PMI (a VMM
         * restoring a guest's status). */
        if (v & ~(ctr_bits(u) | STATUS_SET_EXTRA))
            return HW_GP;
        c->global_status |= v;
    } else { /* GLOBAL_STATUS and GLOBAL_INUSE are read-only */
        return HW_GP;
    }
    return HW_OK;
}

enum hw_fault x86_pmu_rdpmc(const struct x86 *x, unsigned cpu, uint32_t ecx, uint64_t *val)
{
    const struct x86_pmu *u = &x->pmu;
    *val = 0;
    if (!u->ngp || cpu >= u->ncpu)
        return HW_GP;
    const struct x86_pmu_cpu *c = &u->cpu[cpu];
    /* ECX[30] selects the fixed counters, ECX[29:0] the counter. */
    if (ecx & (1u << 30)) {
        unsigned i = ecx & ~(1u << 30);
        if (i >= X86_PMU_NFIXED)
            return HW_GP;
        *val = c->fixed[i];
    } else {
        if (ecx >= u->ngp)
            return HW_GP;
        *val = c->pmc[ecx];
    }
    return HW_OK;
}

/* ---- counting ---- */

/* Adds d to counter *ctr; returns 1 when it passed the width (the
 * overflow sets the status bit whatever the interrupt setting). */
static int add(const struct x86_pmu *u, uint64_t *ctr, uint64_t d)
{
    uint64_t v = *ctr + d;
    *ctr = v & width_mask(u);
    return v >> u->width != 0 || d >> u->width != 0;
}

unsigned x86_pmu_count(struct x86 *x, unsigned cpu, int os, const uint64_t ev[X86_PMU_NEV])
{
    const struct x86_pmu *u = &x->pmu;
    if (!u->ngp || cpu >= u->ncpu)
        return 0;
    unsigned pmi = 0, first = cpu / u->threads * u->threads;
    for (unsigned t = 0; t < u->threads; t++) {
        struct x86_pmu_cpu *c = &u->cpu[first + t];
        int own = first + t == cpu;
        for (unsigned i = 0; i < u->ngp; i++) {
            uint64_t s = c->evtsel[i];
            if (!(c->global_ctrl >> i & 1) || !HW_FGET(s, PERFEVTSEL, EN) ||
                !(os ? HW_FGET(s, PERFEVTSEL, OS) : HW_FGET(s, PERFEVTSEL, USR)) ||
                !(own || HW_FGET(s, PERFEVTSEL, ANY)))
                continue;
            uint64_t d = count_of(x, c, s, ev);
            if (!d || !add(u, &c->pmc[i], d))
                continue;
            c->global_status |= 1ull << i;
            if (HW_FGET(s, PERFEVTSEL, INT))
                pmi |= 1u << t;
        }
        for (unsigned i = 0; i < X86_PMU_NFIXED; i++) {
            uint64_t f = c->fixed_ctrl >> (4 * i);
            /* EN: bit 0 counts at CPL 0, bit 1 above it. */
            if (!(c->global_ctrl >> (32 + i) & 1) ||
                !(HW_FGET(f, FIXED_CTR_CTRL, EN) >> (os ? 0 : 1) & 1) ||
                !(own || HW_FGET(f, FIXED_CTR_CTRL, ANY)))
                continue;
            uint64_t d = ev[fixed_ev[i]];
            if (!d || !add(u, &c->fixed[i], d))
                continue;
            c->global_status |= 1ull << (32 + i);
            if (HW_FGET(f, FIXED_CTR_CTRL, PMI))
                pmi |= 1u << t;
        }
    }
    return pmi;
}

int x86_pmu_gp_counting(const struct x86 *x)
{
    const struct x86_pmu *u = &x->pmu;
    for (unsigned c = 0; u->ngp && c < u->ncpu; c++)
        for (unsigned i = 0; i < u->ngp; i++)
            if ((u->cpu[c].global_ctrl >> i & 1) && HW_FGET(u->cpu[c].evtsel[i], PERFEVTSEL, EN))
                return 1;
    return 0;
}

void x86_pmu_events(const struct mach_tstat *b, const struct mach_tstat *a, uint64_t *rem,
                    uint64_t ev[X86_PMU_NEV])
{
    for (unsigned k = 0; k < X86_PMU_NEV; k++)
        ev[k] = 0;
    *rem += a->ticks - b->ticks;
    ev[X86_EV_CYCLES] = *rem / MACH_TICK;
    *rem %= MACH_TICK;
    ev[X86_EV_INSTR] = a->instr - b->instr;
    ev[X86_EV_LLC_REF] = a->ref[PLAT_L3] - b->ref[PLAT_L3];
    ev[X86_EV_LLC_MISS] = a->miss[PLAT_L3] - b->miss[PLAT_L3];
    ev[X86_EV_L1D_MISS] = a->miss[PLAT_L1D] - b->miss[PLAT_L1D];
    ev[X86_EV_L2_REF] = a->ref[PLAT_L2] - b->ref[PLAT_L2];
    ev[X86_EV_L2_MISS] = a->miss[PLAT_L2] - b->miss[PLAT_L2];
    ev[X86_EV_LD_L2_HIT] = a->ld_src[PLAT_L2] - b->ld_src[PLAT_L2];
    ev[X86_EV_LD_L3_HIT] = a->ld_src[PLAT_L3] - b->ld_src[PLAT_L3];
    ev[X86_EV_LD_MEM_LOCAL] = a->ld_src[MACH_SRC_MEM_LOCAL] - b->ld_src[MACH_SRC_MEM_LOCAL];
    ev[X86_EV_LD_MEM_REMOTE] = a->ld_src[MACH_SRC_MEM_REMOTE] - b->ld_src[MACH_SRC_MEM_REMOTE];
}
