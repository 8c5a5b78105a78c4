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
};
#define CTR_E (1ull << 63)
#define CTR_U (1ull << 62)

static const char *const res_name[RDT_NRES] = {"L3", "L2"};

static void cpuid(const struct hw_x86_if *r, uint32_t leaf, uint32_t sub, uint32_t o[4])
{
    if (r->cpuid(r->ctx, 0, leaf, sub, o) != HW_OK)
        memset(o, 0, 4 * sizeof *o);
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
                if ((o[1] >> 1) & 1) {
                    cpuid(r, 0x80000020, 1, o);
                    c->l3be = 1;
                    c->bw_len = o[0];
                    c->l3be_cos = o[3] + 1;
                }
            }
        }
    }
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

int rdt_set_l3be(struct rdt *d, unsigned dom, unsigned cos, double bytes_per_sec, struct err *e)
{
    const struct rdt_caps *c = &d->caps;
    int cpu = cpu_of(d, RDT_L3, dom);
    if (!c->l3be)
        return err_set(e, -QOSIM_EUNSUP, "L3 bandwidth enforcement is not enumerated");
    if (cpu < 0 || cos >= c->l3be_cos)
        return err_set(e, -QOSIM_EINVAL, "L3BE domain %u COS %u does not exist", dom, cos);
    uint64_t v = 1ull << c->bw_len; /* U: unlimited */
    if (bytes_per_sec > 0) {
        double steps = bytes_per_sec / 0.125e9; /* 1/8 GB/s units (56375) */
        if (steps >= (double)bits_mask(c->bw_len) + 1)
            return err_set(e, -QOSIM_EINVAL, "%.3g GB/s is above the largest limit, %.3f GB/s",
                           bytes_per_sec / 1e9, (double)bits_mask(c->bw_len) / 8);
        v = steps < 1 ? 1 : (uint64_t)steps;
    }
    return wr(d, (unsigned)cpu, MSR_AMD_BW_0 + cos, v, e);
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
