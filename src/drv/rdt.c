#include "rdt.h"

#include "util/bits.h"

#include <stdlib.h>
#include <string.h>

/* Architectural MSR numbers and fields (SDM 17.16-17.19; AMD 56375); the
 * driver keeps its own copy, as a real one would, rather than include the
 * simulator's model. */
enum {
    MSR_L3_QOS_CFG = 0xC81,
    MSR_L2_QOS_CFG = 0xC82,
    MSR_QM_EVTSEL = 0xC8D,
    MSR_QM_CTR = 0xC8E,
    MSR_PQR_ASSOC = 0xC8F,
    MSR_L3_MASK_0 = 0xC90,
    MSR_L2_MASK_0 = 0xD10,
    MSR_MBA_0 = 0xD50,
    MSR_AMD_BW_0 = 0xC0000200,
    /* AMD's later PQoS (APM vol. 2, 24593, ch. 19; Linux's msr-index.h) */
    MSR_AMD_SMBA_0 = 0xC0000280,    /* L3QOS_SMBW_CONTROL_n (MSR_IA32_SMBA_BW_BASE) */
    MSR_AMD_ABMC_CFG = 0xC00003FD,  /* L3_QOS_ABMC_CFG */
    MSR_AMD_ABMC_DSC = 0xC00003FE,  /* L3_QOS_ABMC_DSC */
    MSR_AMD_EXT_CFG = 0xC00003FF,   /* L3_QOS_EXT_CFG */
    MSR_AMD_EVT_CFG_0 = 0xC0000400, /* QOS_EVT_CFG_n (MSR_IA32_EVT_CFG_BASE) */
};
/* L3_QOS_EXT_CFG (Figure 19-7) */
#define EXT_ABMC_EN   (1ull << 0)
#define EXT_SDCIAE_EN (1ull << 1)
/* L3_QOS_ABMC_CFG (Figure 19-5): BwType [31:0], BwSrc [43:32], IsCOS [47],
 * CtrID [52:48], CtrEn [62], CfgEn [63]; DSC adds CfgErr [63] (Figure 19-6). */
#define ABMC_SRC_SHIFT 32
#define ABMC_IS_COS    (1ull << 47)
#define ABMC_ID_SHIFT  48
#define ABMC_CTR_EN    (1ull << 62)
#define ABMC_CFG_EN    (1ull << 63)
#define ABMC_CFG_ERR   (1ull << 63)
/* QM_EVTSEL.ExtEvtID [31] with EvtID 1, L3CacheABMC (Table 19-6). */
#define EVTSEL_EXT (1ull << 31)
#define EVT_ABMC   1

const char *const rdt_bw_type_name[RDT_NBW_TYPES] = {"local_reads",
                                                     "remote_reads",
                                                     "local_non_temporal_writes",
                                                     "remote_non_temporal_writes",
                                                     "local_reads_slow_memory",
                                                     "remote_reads_slow_memory",
                                                     "dirty_victim_writes_all"};
#define CTR_E (1ull << 63)
#define CTR_U (1ull << 62)

static const char *const res_name[RDT_NRES] = {"L3", "L2"};

static void cpuid(const struct hw_x86_if *r, uint32_t leaf, uint32_t sub, uint32_t o[4])
{
    if (r->cpuid(r->ctx, 0, leaf, sub, o) != HW_OK)
        memset(o, 0, 4 * sizeof *o);
}

/* BE's later members, CPUID 0x80000020 sub-leaf 0 EBX (APM vol. 2, 19.4.4):
 * SMBA [2] with its limit's width and classes in sub-leaf 2 (19.4.6), and
 * SDCIAE [6] (19.4.7). Both sit under 0x80000008 EBX[6], BE. */
static void amd_be(const struct hw_x86_if *r, uint32_t be, struct rdt_caps *c)
{
    uint32_t o[4];
    if ((be >> 2) & 1) {
        cpuid(r, 0x80000020, 2, o);
        c->smba = 1;
        c->smba_len = o[0];
        c->smba_cos = o[3] + 1;
    }
    c->sdciae = (be >> 6) & 1;
}

/* The monitoring members of 0x80000020 sub-leaf 0 EBX (19.3.3): BMEC [3],
 * with sub-leaf 3's event count (EBX[7:0]) and transaction types (ECX), and
 * ABMC [5], with sub-leaf 5's counter count (EBX[15:0] + 1) and by-COS bit
 * (ECX[0]). Linux reads the leaf without 0x80000008's BE bit (it is
 * monitoring, under PQM), and so does this. */
static void amd_mon(const struct hw_x86_if *r, struct rdt_caps *c)
{
    uint32_t o[4];
    cpuid(r, 0x80000000, 0, o);
    if (o[0] < 0x80000020)
        return;
    cpuid(r, 0x80000020, 0, o);
    uint32_t b = o[1];
    if ((b >> 3) & 1 || (b >> 5) & 1) {
        cpuid(r, 0x80000020, 3, o);
        c->bmec = (b >> 3) & 1;
        c->bmec_evts = c->bmec ? o[1] & 0xff : 0;
        c->bw_types = o[2];
    }
    if ((b >> 5) & 1) {
        cpuid(r, 0x80000020, 5, o);
        c->abmc = 1;
        c->abmc_ctrs = (o[1] & 0xffff) + 1;
        c->abmc_by_cos = o[2] & 1;
    }
}

int rdt_enumerate(const struct hw_x86_if *r, struct rdt_caps *c, struct err *e)
{
    uint32_t o[4];
    memset(c, 0, sizeof *c);
    cpuid(r, 0, 0, o);
    c->amd = !memcmp(&o[1], "Auth", 4);
    uint32_t max_basic = o[0];
    if (max_basic >= 7) {
        cpuid(r, 7, 0, o);
        c->pqm = (o[1] >> 12) & 1;
        c->pqe = (o[1] >> 15) & 1;
    }
    /* Monitoring (SDM 17.16.3-4): PQM, then leaf 0xF.0 for the resources,
     * then 0xF.1 for L3's RMIDs, events, factor and counter width. */
    if (c->pqm && max_basic >= 0xF) {
        cpuid(r, 0xF, 0, o);
        if ((o[3] >> 1) & 1) {
            cpuid(r, 0xF, 1, o);
            c->num_rmid = o[2] + 1;
            c->scale = o[1];
            /* Intel: 24 + EAX[7:0]. AMD reports 0 here; its counters are
             * 44 bits (docs/registers.md 1, project choice). */
            c->width = c->amd && !(o[0] & 0xff) ? 44 : 24 + (o[0] & 0xff);
            c->occupancy = o[3] & 1;
            c->total = (o[3] >> 1) & 1;
            c->local = (o[3] >> 2) & 1;
        }
    }
    /* Allocation: PQE, then leaf 0x10.0's resource bits, then a sub-leaf each. */
    if (c->pqe && max_basic >= 0x10) {
        cpuid(r, 0x10, 0, o);
        uint32_t res = o[1];
        for (int k = 0; k < RDT_NRES; k++) {
            if (!((res >> (k == RDT_L3 ? 1 : 2)) & 1))
                continue;
            struct rdt_cat *t = &c->cat[k];
            cpuid(r, 0x10, k == RDT_L3 ? 1 : 2, o);
            t->present = 1;
            t->cbm_len = (o[0] & 0x1f) + 1;
            t->shareable = o[1];
            t->cdp = (o[2] >> 2) & 1;
            t->sparse = c->amd || ((o[2] >> 3) & 1); /* AMD takes any mask */
            t->num_cos = (o[3] & 0xffff) + 1;
        }
        if (!c->amd && ((res >> 3) & 1)) {
            cpuid(r, 0x10, 3, o);
            c->mba = 1;
            c->mba_max = (o[0] & 0xfff) + 1;
            c->mba_linear = (o[2] >> 2) & 1;
            c->mba_cos = (o[3] & 0xffff) + 1;
        }
    }
    /* AMD bandwidth enforcement: BE in 0x80000008, then 0x80000020. */
    if (c->amd && c->pqe) {
        cpuid(r, 0x80000000, 0, o);
        uint32_t max_ext = o[0];
        if (max_ext >= 0x80000008) {
            cpuid(r, 0x80000008, 0, o);
            if (((o[1] >> 6) & 1) && max_ext >= 0x80000020) {
                cpuid(r, 0x80000020, 0, o);
                uint32_t be = o[1];
                if ((be >> 1) & 1) {
                    cpuid(r, 0x80000020, 1, o);
                    c->l3be = 1;
                    c->bw_len = o[0];
                    c->l3be_cos = o[3] + 1;
                }
                amd_be(r, be, c);
            }
        }
    }
    if (c->amd && c->num_rmid)
        amd_mon(r, c);
    if (!c->num_rmid && !c->cat[RDT_L3].present && !c->cat[RDT_L2].present && !c->mba && !c->l3be)
        return err_set(e, -QOSIM_EUNSUP,
                       "no platform QoS: CPUID enumerates neither monitoring "
                       "nor allocation");
    return 0;
}

static unsigned count_doms(const struct hw_x86_if *r, const unsigned *of)
{
    unsigned n = 0;
    for (unsigned c = 0; c < r->ncpu; c++)
        if (of[c] + 1 > n)
            n = of[c] + 1;
    return n;
}

/* The classes every allocation resource present accepts now. */
static unsigned usable_cos(const struct rdt *d)
{
    unsigned n = 0;
    const struct rdt_caps *c = &d->caps;
    for (int k = 0; k < RDT_NRES; k++)
        if (c->cat[k].present) {
            unsigned m = d->cdp_on[k] ? c->cat[k].num_cos / 2 : c->cat[k].num_cos;
            n = n && n < m ? n : m;
        }
    if (c->mba)
        n = n && n < c->mba_cos ? n : c->mba_cos;
    if (c->l3be)
        n = n && n < c->l3be_cos ? n : c->l3be_cos;
    if (c->smba)
        n = n && n < c->smba_cos ? n : c->smba_cos;
    return n ? n : 1;
}

int rdt_init(struct rdt *d, const struct hw_x86_if *r, struct err *e)
{
    memset(d, 0, sizeof *d);
    d->r = *r;
    int rc = rdt_enumerate(r, &d->caps, e);
    if (rc)
        return rc;
    d->ndom[RDT_L3] = count_doms(r, r->l3_of);
    d->ndom[RDT_L2] = count_doms(r, r->l2_of);
    d->num_cos = usable_cos(d);
    d->rmid_used = calloc(1024 / 64, sizeof *d->rmid_used);
    d->cos_used = calloc(65536 / 64, sizeof *d->cos_used);
    d->assoc = calloc(r->ncpu, sizeof *d->assoc);
    if (!d->rmid_used || !d->cos_used || !d->assoc) {
        rdt_free(d);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    d->rmid_used[0] = d->cos_used[0] = 1; /* the defaults */
    for (int k = 0; k < RDT_NRES; k++) {
        uint64_t v = 0;
        if (d->caps.cat[k].cdp &&
            r->rdmsr(r->ctx, 0, k == RDT_L3 ? MSR_L3_QOS_CFG : MSR_L2_QOS_CFG, &v) == HW_OK)
            d->cdp_on[k] = v & 1;
    }
    d->num_cos = usable_cos(d);
    return 0;
}

void rdt_free(struct rdt *d)
{
    free(d->rmid_used);
    free(d->cos_used);
    free(d->assoc);
    d->rmid_used = d->cos_used = d->assoc = NULL;
}

static int alloc_bit(uint64_t *map, unsigned n)
{
    for (unsigned i = 1; i < n; i++)
        if (!((map[i / 64] >> (i % 64)) & 1)) {
            map[i / 64] |= 1ull << (i % 64);
            return (int)i;
        }
    return -1;
}

int rdt_alloc_cos(struct rdt *d)
{
    return alloc_bit(d->cos_used, d->num_cos);
}

void rdt_free_cos(struct rdt *d, unsigned cos)
{
    if (cos && cos < 65536)
        d->cos_used[cos / 64] &= ~(1ull << (cos % 64));
}

int rdt_alloc_rmid(struct rdt *d)
{
    return alloc_bit(d->rmid_used, d->caps.num_rmid < 1024 ? d->caps.num_rmid : 1024);
}

void rdt_free_rmid(struct rdt *d, unsigned rmid)
{
    if (rmid && rmid < 1024)
        d->rmid_used[rmid / 64] &= ~(1ull << (rmid % 64));
}

static int wr(struct rdt *d, unsigned cpu, uint32_t msr, uint64_t v, struct err *e)
{
    enum hw_fault f = d->r.wrmsr(d->r.ctx, cpu, msr, v);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "wrmsr CPU %u MSR 0x%x value 0x%llx: %s", cpu, msr,
                       (unsigned long long)v, hw_fault_name(f));
    return 0;
}

static int rd(struct rdt *d, unsigned cpu, uint32_t msr, uint64_t *v, struct err *e)
{
    enum hw_fault f = d->r.rdmsr(d->r.ctx, cpu, msr, v);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "rdmsr CPU %u MSR 0x%x: %s", cpu, msr, hw_fault_name(f));
    return 0;
}

int rdt_switch(struct rdt *d, unsigned cpu, unsigned cos, unsigned rmid, struct err *e)
{
    if (cpu >= d->r.ncpu)
        return err_set(e, -QOSIM_EINVAL, "CPU %u does not exist", cpu);
    if (cos >= d->num_cos || (rmid && rmid >= d->caps.num_rmid))
        return err_set(e, -QOSIM_EINVAL, "COS %u / RMID %u out of range (%u classes, %u RMIDs)",
                       cos, rmid, d->num_cos, d->caps.num_rmid);
    uint64_t v = (uint64_t)cos << 32 | rmid;
    if (d->assoc[cpu] == v)
        return 0;
    int rc = wr(d, cpu, MSR_PQR_ASSOC, v, e);
    if (!rc)
        d->assoc[cpu] = v;
    return rc;
}

/* A CPU of domain dom of resource res, for domain-scoped registers. */
static int cpu_of(const struct rdt *d, enum rdt_res res, unsigned dom)
{
    const unsigned *of = res == RDT_L3 ? d->r.l3_of : d->r.l2_of;
    for (unsigned c = 0; c < d->r.ncpu; c++)
        if (of[c] == dom)
            return (int)c;
    return -1;
}

int rdt_set_cbm(struct rdt *d, enum rdt_res res, unsigned dom, unsigned cos, enum rdt_type type,
                uint64_t cbm, struct err *e)
{
    const struct rdt_cat *t = &d->caps.cat[res];
    int cpu = cpu_of(d, res, dom);
    if (!t->present)
        return err_set(e, -QOSIM_EUNSUP, "%s allocation is not enumerated", res_name[res]);
    if (cpu < 0)
        return err_set(e, -QOSIM_EINVAL, "%s domain %u does not exist", res_name[res], dom);
    unsigned ncos = d->cdp_on[res] ? t->num_cos / 2 : t->num_cos;
    if (cos >= ncos)
        return err_set(e, -QOSIM_EINVAL, "%s has COS 0..%u%s", res_name[res], ncos - 1,
                       d->cdp_on[res] ? " with CDP on" : "");
    if (type != RDT_BOTH && !d->cdp_on[res])
        return err_set(e, -QOSIM_EINVAL, "code and data masks need CDP on");
    if (cbm & ~bits_mask(t->cbm_len))
        return err_set(e, -QOSIM_EINVAL, "mask 0x%llx is wider than %u bits",
                       (unsigned long long)cbm, t->cbm_len);
    if (!t->sparse && (!cbm || ((cbm + (cbm & -cbm)) & cbm)))
        return err_set(e, -QOSIM_EINVAL,
                       "mask 0x%llx: this CPU needs a non-empty run of contiguous bits",
                       (unsigned long long)cbm);
    uint32_t base = res == RDT_L3 ? MSR_L3_MASK_0 : MSR_L2_MASK_0;
    int rc = 0;
    if (!d->cdp_on[res])
        return wr(d, (unsigned)cpu, base + cos, cbm, e);
    if (type != RDT_CODE)
        rc = wr(d, (unsigned)cpu, base + 2 * cos, cbm, e); /* data: 2n */
    if (!rc && type != RDT_DATA)
        rc = wr(d, (unsigned)cpu, base + 2 * cos + 1, cbm, e); /* code: 2n + 1 */
    return rc;
}

int rdt_set_cdp(struct rdt *d, enum rdt_res res, int on, struct err *e)
{
    const struct rdt_cat *t = &d->caps.cat[res];
    if (!t->present || !t->cdp)
        return err_set(e, -QOSIM_EUNSUP, "%s CDP is not enumerated", res_name[res]);
    uint32_t base = res == RDT_L3 ? MSR_L3_MASK_0 : MSR_L2_MASK_0;
    int rc = 0;
    /* The specs' sequence: all masks to ones, every thread to COS 0, then
     * toggle (L2 CDP paper, "L2 CDP Software Considerations"). */
    for (unsigned dom = 0; dom < d->ndom[res] && !rc; dom++) {
        int cpu = cpu_of(d, res, dom);
        for (unsigned n = 0; cpu >= 0 && n < t->num_cos && !rc; n++)
            rc = wr(d, (unsigned)cpu, base + n, bits_mask(t->cbm_len), e);
    }
    for (unsigned c = 0; c < d->r.ncpu && !rc; c++)
        rc = rdt_switch(d, c, 0, (unsigned)(d->assoc[c] & 0x3ff), e);
    for (unsigned dom = 0; dom < d->ndom[res] && !rc; dom++) {
        int cpu = cpu_of(d, res, dom);
        if (cpu >= 0)
            rc = wr(d, (unsigned)cpu, res == RDT_L3 ? MSR_L3_QOS_CFG : MSR_L2_QOS_CFG, on ? 1 : 0,
                    e);
    }
    if (!rc) {
        d->cdp_on[res] = on != 0;
        d->num_cos = usable_cos(d);
    }
    return rc;
}

int rdt_set_mba(struct rdt *d, unsigned dom, unsigned cos, unsigned percent, struct err *e)
{
    const struct rdt_caps *c = &d->caps;
    int cpu = cpu_of(d, RDT_L3, dom);
    if (!c->mba)
        return err_set(e, -QOSIM_EUNSUP, "MBA is not enumerated");
    if (cpu < 0 || cos >= c->mba_cos)
        return err_set(e, -QOSIM_EINVAL, "MBA domain %u COS %u does not exist", dom, cos);
    /* resctrl's granularity: 100 - max throttle. */
    unsigned gran = 100 - c->mba_max;
    if (percent > c->mba_max || (gran && percent % gran))
        return err_set(e, -QOSIM_EINVAL, "MBA delay %u%%: 0..%u in steps of %u", percent,
                       c->mba_max, gran);
    return wr(d, (unsigned)cpu, MSR_MBA_0 + cos, percent, e);
}

/* An AMD rate limit (L3BE, SMBA) in its register's form: 1/8 GB/s units
 * below 2^len, bit len alone for unlimited (56375; APM vol. 2, 19.4.5-6). */
static int amd_rate(double bytes_per_sec, unsigned len, uint64_t *v, struct err *e)
{
    *v = 1ull << len; /* U: unlimited */
    if (bytes_per_sec > 0) {
        double steps = bytes_per_sec / 0.125e9; /* 1/8 GB/s units (56375) */
        if (steps >= (double)bits_mask(len) + 1)
            return err_set(e, -QOSIM_EINVAL, "%.3g GB/s is above the largest limit, %.3f GB/s",
                           bytes_per_sec / 1e9, (double)bits_mask(len) / 8);
        *v = steps < 1 ? 1 : (uint64_t)steps;
    }
    return 0;
}

/* An AMD bandwidth limit of COS cos in L3 domain dom: L3BE's or SMBA's,
 * which share the format (a BW field of len bits, in 1/8 GB/s, and U). */
static int amd_limit(struct rdt *d, int present, const char *what, unsigned ncos, unsigned len,
                     uint32_t msr0, unsigned dom, unsigned cos, double bytes_per_sec, struct err *e)
{
    int cpu = cpu_of(d, RDT_L3, dom);
    if (!present)
        return err_set(e, -QOSIM_EUNSUP, "%s is not enumerated", what);
    if (cpu < 0 || cos >= ncos)
        return err_set(e, -QOSIM_EINVAL, "%s domain %u COS %u does not exist", what, dom, cos);
    uint64_t v;
    int rc = amd_rate(bytes_per_sec, len, &v, e);
    return rc ? rc : wr(d, (unsigned)cpu, msr0 + cos, v, e);
}

int rdt_set_l3be(struct rdt *d, unsigned dom, unsigned cos, double bytes_per_sec, struct err *e)
{
    const struct rdt_caps *c = &d->caps;
    return amd_limit(d, c->l3be, "L3 bandwidth enforcement", c->l3be_cos, c->bw_len, MSR_AMD_BW_0,
                     dom, cos, bytes_per_sec, e);
}

/* SMBA's limits are per L3 domain and COS, like L3BE's (APM vol. 2, 19.4.6;
 * Linux's SMBA resource has the L3's domains). */
int rdt_set_smba(struct rdt *d, unsigned dom, unsigned cos, double bytes_per_sec, struct err *e)
{
    const struct rdt_caps *c = &d->caps;
    return amd_limit(d, c->smba, "slow memory bandwidth allocation", c->smba_cos, c->smba_len,
                     MSR_AMD_SMBA_0, dom, cos, bytes_per_sec, e);
}

/* ---- AMD BMEC, ABMC, SDCIAE (APM vol. 2, 19.3.3.2-3, 19.4.7) ---- */

static int evt_cfg_msr(const struct rdt *d, unsigned dom, unsigned evt, int *cpu, struct err *e)
{
    if (!d->caps.bmec)
        return err_set(e, -QOSIM_EUNSUP, "bandwidth event configuration (BMEC) is not enumerated");
    if (evt != RDT_EVT_TOTAL && evt != RDT_EVT_LOCAL)
        return err_set(e, -QOSIM_EINVAL, "event %u has no configuration (total 2, local 3)", evt);
    if ((*cpu = cpu_of(d, RDT_L3, dom)) < 0)
        return err_set(e, -QOSIM_EINVAL, "L3 domain %u does not exist", dom);
    return 0;
}

int rdt_get_evt_cfg(struct rdt *d, unsigned dom, unsigned evt, uint32_t *types, struct err *e)
{
    int cpu, rc = evt_cfg_msr(d, dom, evt, &cpu, e);
    uint64_t v = 0;
    if (!rc)
        rc = rd(d, (unsigned)cpu, MSR_AMD_EVT_CFG_0 + evt - RDT_EVT_TOTAL, &v, e);
    if (!rc)
        *types = (uint32_t)v;
    return rc;
}

/* QOS_EVT_CFG_0 is the total event's, _1 the local's (Table 19-9). Linux
 * reads the domain's value first and writes only a change
 * (mbm_config_write_domain), since a write restarts every counter. */
int rdt_set_evt_cfg(struct rdt *d, unsigned dom, unsigned evt, uint32_t types, struct err *e)
{
    int cpu, rc = evt_cfg_msr(d, dom, evt, &cpu, e);
    if (rc)
        return rc;
    if (types & ~d->caps.bw_types)
        return err_set(e, -QOSIM_EINVAL,
                       "transaction types 0x%x: this part counts only 0x%x (CPUID 0x80000020.3 "
                       "ECX)",
                       types, d->caps.bw_types);
    uint32_t now;
    if ((rc = rdt_get_evt_cfg(d, dom, evt, &now, e)) || now == types)
        return rc;
    return wr(d, (unsigned)cpu, MSR_AMD_EVT_CFG_0 + evt - RDT_EVT_TOTAL, types, e);
}

/* One bit of L3_QOS_EXT_CFG on every CPU of every L3 domain, read, changed
 * and written back, as Linux's resctrl_abmc_set_one_amd and
 * resctrl_sdciae_set_one_amd do (msr_set_bit / msr_clear_bit): the
 * register holds both enables. */
static int ext_cfg_set(struct rdt *d, uint64_t bit, int on, struct err *e)
{
    int rc = 0;
    for (unsigned cpu = 0; cpu < d->r.ncpu && !rc; cpu++) {
        uint64_t v = 0;
        if ((rc = rd(d, cpu, MSR_AMD_EXT_CFG, &v, e)))
            break;
        uint64_t nv = on ? v | bit : v & ~bit;
        if (nv != v)
            rc = wr(d, cpu, MSR_AMD_EXT_CFG, nv, e);
    }
    return rc;
}

int rdt_set_abmc(struct rdt *d, int on, struct err *e)
{
    if (!d->caps.abmc)
        return err_set(e, -QOSIM_EUNSUP, "assignable bandwidth counters (ABMC) are not enumerated");
    int rc = ext_cfg_set(d, EXT_ABMC_EN, on, e);
    if (!rc)
        d->abmc_on = on != 0;
    return rc;
}

static int abmc_cfg(struct rdt *d, unsigned dom, unsigned cntr, uint64_t v, struct err *e)
{
    int cpu = cpu_of(d, RDT_L3, dom);
    if (!d->caps.abmc || !d->abmc_on)
        return err_set(e, -QOSIM_EUNSUP, "ABMC is %s", d->caps.abmc ? "off" : "not enumerated");
    if (cpu < 0 || cntr >= d->caps.abmc_ctrs)
        return err_set(e, -QOSIM_EINVAL, "L3 domain %u counter %u does not exist (%u counters)",
                       dom, cntr, d->caps.abmc_ctrs);
    return wr(d, (unsigned)cpu, MSR_AMD_ABMC_CFG, v | (uint64_t)cntr << ABMC_ID_SHIFT, e);
}

/* CfgEn, CtrEn, the source and the types in one write on a CPU of the
 * domain (Linux: resctrl_arch_config_cntr through resctrl_abmc_config_one_amd);
 * the counter restarts from zero. Then L3_QOS_ABMC_DSC says whether the
 * part took it (CfgErr, Figure 19-6): the same CPU's CFG.CtrID selects it. */
int rdt_abmc_assign(struct rdt *d, unsigned dom, unsigned cntr, int is_cos, unsigned src,
                    uint32_t types, struct err *e)
{
    const struct rdt_caps *c = &d->caps;
    if (is_cos && c->abmc && !c->abmc_by_cos)
        return err_set(e, -QOSIM_EINVAL, "this part's counters count RMIDs only");
    if (is_cos ? src >= d->num_cos : src >= c->num_rmid)
        return err_set(e, -QOSIM_EINVAL, "%s %u does not exist", is_cos ? "COS" : "RMID", src);
    if (types & ~c->bw_types)
        return err_set(e, -QOSIM_EINVAL, "transaction types 0x%x: this part counts only 0x%x",
                       types, c->bw_types);
    uint64_t v = ABMC_CFG_EN | ABMC_CTR_EN | (is_cos ? ABMC_IS_COS : 0) |
                 (uint64_t)src << ABMC_SRC_SHIFT | types;
    int rc = abmc_cfg(d, dom, cntr, v, e);
    uint64_t dsc = 0;
    if (!rc)
        rc = rd(d, (unsigned)cpu_of(d, RDT_L3, dom), MSR_AMD_ABMC_DSC, &dsc, e);
    if (!rc && (dsc & ABMC_CFG_ERR))
        rc = err_set(e, -QOSIM_EIO,
                     "L3 domain %u counter %u: the configuration was refused (CfgErr)", dom, cntr);
    return rc;
}

/* CfgEn with CtrEn clear: the counter stops and reads zero (Figure 19-6). */
int rdt_abmc_unassign(struct rdt *d, unsigned dom, unsigned cntr, struct err *e)
{
    return abmc_cfg(d, dom, cntr, ABMC_CFG_EN, e);
}

/* Linux's __cntr_id_read: ExtEvtID, EvtID L3CacheABMC and the counter ID in
 * the RMID field, then QM_CTR. */
static int abmc_raw(struct rdt *d, unsigned dom, unsigned cntr, uint64_t *raw, struct err *e)
{
    int cpu = cpu_of(d, RDT_L3, dom);
    if (!d->abmc_on)
        return err_set(e, -QOSIM_EUNSUP, "ABMC is off");
    if (cpu < 0 || cntr >= d->caps.abmc_ctrs)
        return err_set(e, -QOSIM_EINVAL, "L3 domain %u counter %u does not exist", dom, cntr);
    uint64_t v;
    int rc = wr(d, (unsigned)cpu, MSR_QM_EVTSEL, EVTSEL_EXT | (uint64_t)cntr << 32 | EVT_ABMC, e);
    if (!rc)
        rc = rd(d, (unsigned)cpu, MSR_QM_CTR, &v, e);
    if (rc)
        return rc;
    if (v & CTR_E)
        return err_set(e, -QOSIM_EINVAL, "QM_CTR: E (counter %u)", cntr);
    if (v & CTR_U)
        return err_set(e, -QOSIM_EIO, "QM_CTR: U (no data for counter %u now)", cntr);
    *raw = v & bits_mask(d->caps.width);
    return 0;
}

int rdt_abmc_read(struct rdt *d, unsigned dom, unsigned cntr, uint64_t *bytes, struct err *e)
{
    uint64_t raw;
    int rc = abmc_raw(d, dom, cntr, &raw, e);
    if (!rc)
        *bytes = raw * d->caps.scale;
    return rc;
}

int rdt_abmc_update(struct rdt *d, unsigned dom, unsigned cntr, struct rdt_mbm *st, struct err *e)
{
    uint64_t raw;
    int rc = abmc_raw(d, dom, cntr, &raw, e);
    if (rc)
        return rc;
    if (st->valid)
        st->bytes += ((raw - st->prev) & bits_mask(d->caps.width)) * d->caps.scale;
    st->prev = raw;
    st->valid = 1;
    return 0;
}

unsigned rdt_io_cos(const struct rdt *d)
{
    const struct rdt_cat *t = &d->caps.cat[RDT_L3];
    unsigned n = d->cdp_on[RDT_L3] ? t->num_cos / 2 : t->num_cos;
    return n ? n - 1 : 0;
}

/* resctrl's io_alloc takes the highest CLOSID, and refuses while a group
 * uses it (resctrl_io_alloc_closid_supported / "CLOSID ... in use"). */
int rdt_set_sdciae(struct rdt *d, int on, struct err *e)
{
    if (!d->caps.sdciae || !d->caps.cat[RDT_L3].present)
        return err_set(e, -QOSIM_EUNSUP, "SDCI allocation enforcement (SDCIAE) is not enumerated");
    unsigned cos = rdt_io_cos(d);
    int held = (d->cos_used[cos / 64] >> (cos % 64)) & 1;
    if (on && !d->sdciae_on && held && cos)
        return err_set(e, -QOSIM_EINVAL, "COS %u, SDCIAE's, is in use by a group", cos);
    int rc = ext_cfg_set(d, EXT_SDCIAE_EN, on, e);
    if (rc)
        return rc;
    if (on && cos)
        d->cos_used[cos / 64] |= 1ull << (cos % 64);
    else if (d->sdciae_on && cos)
        d->cos_used[cos / 64] &= ~(1ull << (cos % 64));
    d->sdciae_on = on != 0;
    return 0;
}

/* L3_MASK_n, n = COS_MAX of CPUID 0x10.1, with or without CDP (19.4.7). */
int rdt_set_io_cbm(struct rdt *d, unsigned dom, uint64_t cbm, struct err *e)
{
    const struct rdt_cat *t = &d->caps.cat[RDT_L3];
    int cpu = cpu_of(d, RDT_L3, dom);
    if (!d->caps.sdciae || !t->present)
        return err_set(e, -QOSIM_EUNSUP, "SDCIAE is not enumerated");
    if (cpu < 0)
        return err_set(e, -QOSIM_EINVAL, "L3 domain %u does not exist", dom);
    if (cbm & ~bits_mask(t->cbm_len))
        return err_set(e, -QOSIM_EINVAL, "mask 0x%llx is wider than %u bits",
                       (unsigned long long)cbm, t->cbm_len);
    return wr(d, (unsigned)cpu, MSR_L3_MASK_0 + t->num_cos - 1, cbm, e);
}

static int mon_raw(struct rdt *d, unsigned dom, unsigned evt, unsigned rmid, uint64_t *raw,
                   struct err *e)
{
    int cpu = cpu_of(d, RDT_L3, dom);
    if (cpu < 0)
        return err_set(e, -QOSIM_EINVAL, "L3 domain %u does not exist", dom);
    if (!d->caps.num_rmid)
        return err_set(e, -QOSIM_EUNSUP, "L3 monitoring is not enumerated");
    uint64_t v;
    /* Select, then read, on one CPU of the domain (QM_EVTSEL is per thread
     * on Intel and per domain on AMD: the pair must not be interleaved). */
    int rc = wr(d, (unsigned)cpu, MSR_QM_EVTSEL, (uint64_t)rmid << 32 | evt, e);
    if (!rc)
        rc = rd(d, (unsigned)cpu, MSR_QM_CTR, &v, e);
    if (rc)
        return rc;
    if (v & CTR_E)
        return err_set(e, -QOSIM_EINVAL, "QM_CTR: E (event %u, RMID %u not supported)", evt, rmid);
    if (v & CTR_U)
        return err_set(e, -QOSIM_EIO, "QM_CTR: U (no data for RMID %u now)", rmid);
    *raw = v & bits_mask(d->caps.width);
    return 0;
}

int rdt_mon_read(struct rdt *d, unsigned dom, unsigned evt, unsigned rmid, uint64_t *bytes,
                 struct err *e)
{
    uint64_t raw;
    int rc = mon_raw(d, dom, evt, rmid, &raw, e);
    if (!rc)
        *bytes = raw * d->caps.scale;
    return rc;
}

int rdt_mbm_update(struct rdt *d, unsigned dom, unsigned evt, unsigned rmid, struct rdt_mbm *st,
                   struct err *e)
{
    uint64_t raw;
    int rc = mon_raw(d, dom, evt, rmid, &raw, e);
    if (rc == -QOSIM_EIO && d->caps.amd) {
        /* AMD: U means the domain does not track the RMID now; when it
         * tracks it again its count starts from zero (56375, L3 bandwidth
         * monitoring), so that is where the next difference starts. */
        st->prev = 0;
        st->valid = 1;
    }
    if (rc)
        return rc;
    /* The difference modulo 2^width is the count since the last read, as
     * long as the counter wrapped at most once in between. */
    if (st->valid)
        st->bytes += ((raw - st->prev) & bits_mask(d->caps.width)) * d->caps.scale;
    st->prev = raw;
    st->valid = 1;
    return 0;
}
