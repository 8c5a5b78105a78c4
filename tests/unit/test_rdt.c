/* Unit tests for drv/rdt.c, the x86 QoS driver, and drv/qos.c, the OS
 * side that carries out a scenario's qos section with it. It is driven through
 * struct hw_x86_if only: here over the simulated model of each x86 profile
 * (enumeration must find what the profile has), and over a recording proxy
 * that logs every MSR access and can script QM_CTR, to check the order of
 * the specs' sequences and the counter arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "drv/qos.h"
#include "drv/qos_scen.h"
#include "drv/rdt.h"
#include "hw/x86.h"

static struct mach M;
static struct x86 X;

/* The proxy: forwards to the model, logs writes, scripts QM_CTR reads. */
struct op {
    unsigned cpu;
    uint32_t msr;
    uint64_t val;
};
static struct {
    struct op log[4096];
    unsigned n;
    const uint64_t *ctr; /* scripted QM_CTR values, or NULL */
    unsigned nctr, ictr;
} P;

static enum hw_fault px_cpuid(void *ctx, unsigned cpu, uint32_t leaf, uint32_t sub, uint32_t out[4])
{
    return x86_cpuid(ctx, cpu, leaf, sub, out);
}
static enum hw_fault px_rdmsr(void *ctx, unsigned cpu, uint32_t msr, uint64_t *v)
{
    if (msr == X86_QM_CTR && P.ctr) {
        *v = P.ctr[P.ictr < P.nctr ? P.ictr++ : P.nctr - 1];
        return HW_OK;
    }
    return x86_rdmsr(ctx, cpu, msr, v);
}
static enum hw_fault px_wrmsr(void *ctx, unsigned cpu, uint32_t msr, uint64_t v)
{
    if (P.n < 4096)
        P.log[P.n++] = (struct op){cpu, msr, v};
    return x86_wrmsr(ctx, cpu, msr, v);
}

static struct hw_x86_if boot(const char *profile)
{
    struct plat p;
    struct err e = {0};
    if (M.cpu) {
        x86_free(&X);
        mach_free(&M);
    }
    assert_int_equal(plat_load(&p, profile, &e), 0);
    assert_int_equal(mach_init(&M, &p, 0, &e), 0);
    assert_int_equal(x86_init(&X, &M, &e), 0);
    struct hw_x86_if r;
    x86_regif(&X, &r);
    r.cpuid = px_cpuid;
    r.rdmsr = px_rdmsr;
    r.wrmsr = px_wrmsr;
    memset(&P, 0, sizeof P);
    return r;
}

static uint64_t msr(struct x86 *x, unsigned cpu, uint32_t a)
{
    uint64_t v = ~0ull;
    assert_int_equal(x86_rdmsr(x, cpu, a, &v), HW_OK);
    return v;
}

static int teardown(void **state)
{
    (void)state;
    if (M.cpu) {
        x86_free(&X);
        mach_free(&M);
    }
    return 0;
}

static void test_enumerate_xeon(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt_caps c;
    struct err e;
    assert_int_equal(rdt_enumerate(&r, &c, &e), 0);
    assert_false(c.amd);
    assert_true(c.pqm && c.pqe);
    assert_int_equal(c.num_rmid, 176);
    assert_int_equal(c.scale, 64);
    assert_int_equal(c.width, 24);
    assert_true(c.occupancy && c.total && c.local);
    assert_true(c.cat[RDT_L3].present && c.cat[RDT_L3].cdp && !c.cat[RDT_L3].sparse);
    assert_int_equal(c.cat[RDT_L3].cbm_len, 11);
    assert_int_equal(c.cat[RDT_L3].num_cos, 16);
    assert_int_equal(c.cat[RDT_L3].shareable, 0x600);
    assert_true(c.cat[RDT_L2].present && c.cat[RDT_L2].cdp);
    assert_int_equal(c.cat[RDT_L2].cbm_len, 16);
    assert_int_equal(c.cat[RDT_L2].num_cos, 8);
    assert_true(c.mba && c.mba_linear);
    assert_int_equal(c.mba_max, 90);
    assert_int_equal(c.mba_cos, 8);
    assert_false(c.l3be);
    /* Enumeration only reads: no MSR was written. */
    assert_int_equal(P.n, 0);
}

static void test_enumerate_atom(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-atom");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_false(d.caps.cat[RDT_L3].present);
    assert_true(d.caps.cat[RDT_L2].present && d.caps.cat[RDT_L2].cdp);
    assert_int_equal(d.caps.cat[RDT_L2].cbm_len, 18);
    assert_int_equal(d.caps.num_rmid, 0);
    assert_false(d.caps.mba);
    assert_int_equal(d.ndom[RDT_L2], 6); /* six 4-core modules */
    assert_int_equal(d.num_cos, 8);
    rdt_free(&d);
}

static void test_enumerate_epyc(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_true(d.caps.amd);
    assert_int_equal(d.caps.num_rmid, 256);
    assert_int_equal(d.caps.width, 44); /* CPUID.F.1 EAX reads 0 on AMD */
    assert_true(d.caps.cat[RDT_L3].sparse);
    assert_int_equal(d.caps.cat[RDT_L3].num_cos, 16);
    assert_true(d.caps.l3be);
    assert_int_equal(d.caps.bw_len, 11);
    assert_int_equal(d.caps.l3be_cos, 16);
    assert_false(d.caps.mba);
    assert_int_equal(d.ndom[RDT_L3], 8);
    rdt_free(&d);
}

static void test_enumerate_none(void **state)
{
    (void)state;
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, "amd-lwp", &e), 0);
    assert_int_equal(mach_init(&M, &p, 0, &e), 0);
    assert_int_equal(x86_init(&X, &M, &e), 0);
    struct hw_x86_if r;
    x86_regif(&X, &r);
    struct rdt d;
    assert_int_equal(rdt_init(&d, &r, &e), -QOSIM_EUNSUP);
    assert_non_null(strstr(e.msg, "no platform QoS"));
}

/* Context switches write PQR_ASSOC, and only when it changes. */
static void test_switch(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_switch(&d, 3, 5, 7, &e), 0);
    assert_int_equal(P.n, 1);
    assert_int_equal(P.log[0].msr, X86_PQR_ASSOC);
    assert_int_equal(P.log[0].val, 5ull << 32 | 7);
    assert_int_equal(M.cpu[3].cls, 5);
    assert_int_equal(M.cpu[3].tag, 7);
    assert_int_equal(rdt_switch(&d, 3, 5, 7, &e), 0);
    assert_int_equal(P.n, 1); /* unchanged: not rewritten */
    /* MBA has 8 classes: usable COS are those every resource has. */
    assert_int_equal(d.num_cos, 8);
    assert_int_equal(rdt_switch(&d, 3, 8, 0, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_switch(&d, 3, 0, 176, &e), -QOSIM_EINVAL);
    assert_int_equal(P.n, 1);
    rdt_free(&d);
}

static void test_alloc_ids(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    for (int i = 1; i < 8; i++)
        assert_int_equal(rdt_alloc_cos(&d), i);
    assert_int_equal(rdt_alloc_cos(&d), -1);
    rdt_free_cos(&d, 3);
    assert_int_equal(rdt_alloc_cos(&d), 3);
    for (int i = 1; i < 176; i++)
        assert_int_equal(rdt_alloc_rmid(&d), i);
    assert_int_equal(rdt_alloc_rmid(&d), -1);
    rdt_free_rmid(&d, 100);
    assert_int_equal(rdt_alloc_rmid(&d), 100);
    rdt_free(&d);
}

/* Masks are checked before any write, then land at n, or 2n / 2n+1 under CDP. */
static void test_cbm_and_cdp_sequence(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 1, RDT_BOTH, 0x0f1, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 1, RDT_BOTH, 0, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 1, RDT_BOTH, 0x800, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 1, RDT_DATA, 0x0f, &e), -QOSIM_EINVAL);
    assert_int_equal(P.n, 0);
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 1, 1, RDT_BOTH, 0x7f0, &e), 0);
    assert_int_equal(P.n, 1);
    assert_int_equal(P.log[0].msr, X86_L3_MASK_0 + 1);
    assert_int_equal(P.log[0].cpu, 16); /* the first CPU of socket 1's L3 */
    /* Put CPU 2 in COS 3, RMID 9, then turn L3 CDP on. */
    assert_int_equal(rdt_switch(&d, 2, 3, 9, &e), 0);
    P.n = 0;
    assert_int_equal(rdt_set_cdp(&d, RDT_L3, 1, &e), 0);
    /* 2 domains x 16 masks to all ones, then 32 CPUs to COS 0 (only CPU 2
     * changes, keeping RMID 9), then CFG on each domain: in that order. */
    assert_int_equal(P.n, 32 + 1 + 2);
    for (unsigned i = 0; i < 32; i++) {
        assert_int_equal(P.log[i].msr, X86_L3_MASK_0 + i % 16);
        assert_int_equal(P.log[i].val, 0x7ff);
    }
    assert_int_equal(P.log[32].msr, X86_PQR_ASSOC);
    assert_int_equal(P.log[32].cpu, 2);
    assert_int_equal(P.log[32].val, 9);
    assert_int_equal(P.log[33].msr, X86_L3_QOS_CFG);
    assert_int_equal(P.log[33].val, 1);
    assert_int_equal(P.log[34].cpu, 16);
    /* With CDP on, COS 7's data and code masks are MSRs 14 and 15. */
    P.n = 0;
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 7, RDT_DATA, 0x00f, &e), 0);
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 7, RDT_CODE, 0x030, &e), 0);
    assert_int_equal(P.log[0].msr, X86_L3_MASK_0 + 14);
    assert_int_equal(P.log[1].msr, X86_L3_MASK_0 + 15);
    assert_int_equal(mach_get_mask(&M, PLAT_L3, 0, 7, MACH_DATA),
                     mach_cbm_ways(&M, PLAT_L3, 0x00f));
    assert_int_equal(mach_get_mask(&M, PLAT_L3, 0, 7, MACH_CODE),
                     mach_cbm_ways(&M, PLAT_L3, 0x030));
    assert_int_equal(rdt_set_cbm(&d, RDT_L3, 0, 8, RDT_DATA, 0x00f, &e), -QOSIM_EINVAL);
    assert_int_equal(d.num_cos, 8); /* L3 now has 8 = MBA's 8 */
    rdt_free(&d);
}

static void test_mba_and_l3be(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_set_mba(&d, 0, 2, 35, &e), -QOSIM_EINVAL); /* steps of 10 */
    assert_int_equal(rdt_set_mba(&d, 0, 2, 100, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_mba(&d, 0, 2, 30, &e), 0);
    assert_int_equal(M.bw[0].set[2].delay_pct, 30);
    assert_int_equal(rdt_set_l3be(&d, 0, 1, 1e9, &e), -QOSIM_EUNSUP);
    rdt_free(&d);
    r = boot("amd-epyc");
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_set_l3be(&d, 3, 1, 2e9, &e), 0);
    assert_int_equal(P.log[0].msr, X86_AMD_BW_CTL_0 + 1);
    assert_int_equal(P.log[0].val, 16); /* 2 GB/s in 1/8 GB/s */
    assert_int_equal(rdt_set_l3be(&d, 3, 1, 1e6, &e), 0);
    assert_int_equal(P.log[1].val, 1); /* at least one step */
    assert_int_equal(rdt_set_l3be(&d, 3, 1, 0, &e), 0);
    assert_int_equal(P.log[2].val, 0x800); /* U: unlimited */
    assert_int_equal(rdt_set_l3be(&d, 3, 1, 300e9, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_mba(&d, 0, 1, 10, &e), -QOSIM_EUNSUP);
    rdt_free(&d);
}

/* The 64-bit total survives counter wraps; E and U are reported and leave
 * the total as it was. Counts are in units of 64 bytes, 24 bits wide. */
static void test_mbm_wrap_e_u(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    static const uint64_t seq[] = {0xfffff0, 0xfffffa, 0x000005, 1ull << 62, 0x000105, 1ull << 63};
    P.ctr = seq;
    P.nctr = 6;
    struct rdt_mbm st = {0};
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 1, &st, &e), 0);
    assert_int_equal(st.bytes, 0); /* the first reading is the baseline */
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 1, &st, &e), 0);
    assert_int_equal(st.bytes, 10 * 64);
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 1, &st, &e), 0);
    assert_int_equal(st.bytes, (10 + 11) * 64); /* across the wrap: 0xfffffa -> 0x5 */
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 1, &st, &e), -QOSIM_EIO); /* U */
    assert_int_equal(st.bytes, 21 * 64);
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 1, &st, &e), 0);
    assert_int_equal(st.bytes, (21 + 0x100) * 64);
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 1, &st, &e), -QOSIM_EINVAL); /* E */
    assert_int_equal(st.bytes, (21 + 0x100) * 64);
    /* The select came first, on a CPU of the domain: QM_EVTSEL = RMID 1, event 2. */
    assert_int_equal(P.log[0].msr, X86_QM_EVTSEL);
    assert_int_equal(P.log[0].val, 1ull << 32 | 2);
    rdt_free(&d);
}

/* Against the model: occupancy and total bandwidth read through the driver
 * equal the machine's. */
static void test_mon_read_model(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("intel-xeon");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_switch(&d, 0, 0, 4, &e), 0);
    for (uint64_t i = 0; i < 500; i++) /* each load waits for the one before, as a chase */
        M.cpu[0].now +=
            mach_access(&M, &M.cpu[0], HIER_LOAD, mach_phys_base(0, 0) | (0x100000 + i * 64)) +
            MACH_TICK;
    /* intel-xeon's L3 is a victim L3 and its L2 streamer prefetches ahead
     * into the L3: the 500 lines fill the L2, the L3 holds the lines
     * prefetched into it (287; the loads wait for each other, so its
     * requests find room in the L2's queue), and memory was read for the 500 and the
     * lines prefetched past the last (512 in all). These counts are the
     * prefetcher's; what is checked exactly is that the driver reads the
     * machine's ground truth (64-byte lines, 64-byte counter units). */
    uint64_t b = 0, lines = mach_occupancy(&M, PLAT_L3, 0, 4);
    assert_true(lines > 0 && lines <= 500);
    assert_int_equal(rdt_mon_read(&d, 0, RDT_EVT_OCCUPANCY, 4, &b, &e), 0);
    assert_int_equal(b, lines * 64);
    uint64_t units = mach_bytes(&M, 0, 4, MACH_CTR_TOTAL);
    assert_true(units >= 500);
    assert_int_equal(rdt_mon_read(&d, 0, RDT_EVT_TOTAL, 4, &b, &e), 0);
    assert_int_equal(b, units * 64);
    assert_int_equal(rdt_mon_read(&d, 1, RDT_EVT_OCCUPANCY, 4, &b, &e), 0);
    assert_int_equal(b, 0); /* the other socket's L3 */
    assert_int_equal(rdt_mon_read(&d, 0, 9, 4, &b, &e), -QOSIM_EINVAL);
    rdt_free(&d);
}

/* AMD: a U reading means the RMID is not tracked; tracking restarts its
 * count at zero, so the next difference starts from zero (Intel: untouched,
 * test_mbm_wrap_e_u). */
static void test_mbm_amd_untracked(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    static const uint64_t seq[] = {0x100, 1ull << 62, 0x20, 0x30};
    P.ctr = seq;
    P.nctr = 4;
    struct rdt_mbm st = {0};
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 5, &st, &e), 0);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 5, &st, &e), -QOSIM_EIO);
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 5, &st, &e), 0);
    assert_int_equal(st.bytes, 0x20 * 64); /* from zero, not from 0x100 */
    assert_int_equal(rdt_mbm_update(&d, 0, RDT_EVT_TOTAL, 5, &st, &e), 0);
    assert_int_equal(st.bytes, 0x30 * 64);
    rdt_free(&d);
}

/* Zen 5 (amd-epyc-turin): CPUID 0x80000020's later members. */
static void test_enumerate_turin(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc-turin");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    const struct rdt_caps *c = &d.caps;
    assert_true(c->amd && c->l3be && c->bmec && c->abmc && c->sdciae);
    assert_int_equal(c->bmec_evts, 2);   /* QOS_EVT_CFG_0 and _1 */
    assert_int_equal(c->bw_types, 0x7F); /* all seven transaction types */
    assert_int_equal(c->abmc_ctrs, 32);  /* 0x80000020.5 EBX + 1 */
    assert_false(c->abmc_by_cos);
    /* SMBA over its CXL node: 0x80000020.2, BW_LEN 11 and COS_MAX 15. */
    assert_true(c->smba);
    assert_int_equal(c->smba_len, 11);
    assert_int_equal(c->smba_cos, 16);
    assert_int_equal(d.ndom[RDT_L3], 8);
    assert_int_equal(r.ncpu, 64);
    assert_int_equal(P.n, 0); /* enumeration only reads */
    rdt_free(&d);
    /* Zen 3 has none of them. */
    r = boot("amd-epyc");
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_false(d.caps.bmec || d.caps.abmc || d.caps.sdciae || d.caps.smba);
    assert_int_equal(rdt_set_evt_cfg(&d, 0, RDT_EVT_TOTAL, 1, &e), -QOSIM_EUNSUP);
    assert_int_equal(rdt_set_abmc(&d, 1, &e), -QOSIM_EUNSUP);
    assert_int_equal(rdt_set_sdciae(&d, 1, &e), -QOSIM_EUNSUP);
    assert_int_equal(rdt_set_smba(&d, 0, 1, 1e9, &e), -QOSIM_EUNSUP);
    assert_int_equal(P.n, 0);
    rdt_free(&d);
}

/* n loads of distinct lines of node 0's memory by CPU cpu under RMID rmid
 * (given to the CPU through the driver, so the model tracks it). */
static void load_lines(struct rdt *d, unsigned cpu, unsigned rmid, uint64_t base, unsigned n)
{
    struct err e;
    unsigned p0 = P.n;
    assert_int_equal(rdt_switch(d, cpu, 0, rmid, &e), 0);
    P.n = p0;
    for (uint64_t i = 0; i < n; i++)
        mach_access(&M, &M.cpu[cpu], HIER_LOAD, mach_phys_base(0, 0) | (base + i * 64));
}

/* BMEC: QOS_EVT_CFG_n on a CPU of the domain, only when it changes; the
 * counters then restart and the next read is U; types the part lacks are
 * refused before any write. */
static void test_bmec(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc-turin");
    struct rdt d;
    struct err e;
    uint32_t t = 0;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_get_evt_cfg(&d, 2, RDT_EVT_TOTAL, &t, &e), 0);
    assert_int_equal(t, 0x7F); /* reset: every type */
    assert_int_equal(rdt_get_evt_cfg(&d, 2, RDT_EVT_LOCAL, &t, &e), 0);
    assert_int_equal(t, 0x15); /* the local ones */
    assert_int_equal(rdt_set_evt_cfg(&d, 2, RDT_EVT_TOTAL, 0x7F, &e), 0);
    assert_int_equal(P.n, 0); /* unchanged: not written */
    assert_int_equal(rdt_set_evt_cfg(&d, 2, RDT_EVT_TOTAL, 0x80, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_evt_cfg(&d, 2, RDT_EVT_OCCUPANCY, 1, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_evt_cfg(&d, 8, RDT_EVT_TOTAL, 1, &e), -QOSIM_EINVAL);
    assert_int_equal(P.n, 0);
    assert_int_equal(rdt_set_evt_cfg(&d, 2, RDT_EVT_LOCAL, 1u << RDT_BW_LOCAL_READS, &e), 0);
    assert_int_equal(P.n, 1);
    assert_int_equal(P.log[0].cpu, 16); /* CCD 2: CPUs 16-23 */
    assert_int_equal(P.log[0].msr, 0xC0000401);
    assert_int_equal(P.log[0].val, 1);
    assert_int_equal(msr(&X, 23, 0xC0000401), 1); /* one register for the domain */
    assert_int_equal(msr(&X, 24, 0xC0000401), 0x15);
    /* The first read after the change is U; later ones count local reads. */
    uint64_t b = 0;
    load_lines(&d, 16, 3, 0x200000, 100);
    assert_int_equal(rdt_mon_read(&d, 2, RDT_EVT_LOCAL, 3, &b, &e), -QOSIM_EIO);
    assert_int_equal(rdt_mon_read(&d, 2, RDT_EVT_LOCAL, 3, &b, &e), 0);
    assert_int_equal(b, mach_traffic(&M, 2, 3, 1u << MACH_TR_RD_LOCAL));
    assert_int_equal(b, 100 * 64);
    rdt_free(&d);
}

/* ABMC: on and off on every CPU (read, set, write back), a counter
 * configured with one write on a CPU of its domain, read through
 * ExtEvtID, exactly the ground truth of its source and types. */
static void test_abmc(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc-turin");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_abmc_assign(&d, 1, 3, 0, 5, 0x7F, &e), -QOSIM_EUNSUP); /* off */
    assert_int_equal(P.n, 0);
    assert_int_equal(rdt_set_abmc(&d, 1, &e), 0);
    assert_int_equal(P.n, 64);
    for (unsigned i = 0; i < 64; i++) {
        assert_int_equal(P.log[i].cpu, i);
        assert_int_equal(P.log[i].msr, 0xC00003FF);
        assert_int_equal(P.log[i].val, 1); /* ABMC_En */
    }
    P.n = 0;
    assert_int_equal(rdt_abmc_assign(&d, 1, 32, 0, 5, 0x7F, &e), -QOSIM_EINVAL); /* 32 counters */
    assert_int_equal(rdt_abmc_assign(&d, 1, 3, 1, 5, 0x7F, &e), -QOSIM_EINVAL);  /* no by-COS */
    assert_int_equal(rdt_abmc_assign(&d, 1, 3, 0, 256, 0x7F, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_abmc_assign(&d, 1, 3, 0, 5, 0x80, &e), -QOSIM_EINVAL);
    assert_int_equal(P.n, 0);
    assert_int_equal(rdt_abmc_assign(&d, 1, 3, 0, 5, 0x7F, &e), 0);
    assert_int_equal(rdt_abmc_assign(&d, 1, 4, 0, 5, 1u << RDT_BW_REMOTE_READS, &e), 0);
    assert_int_equal(P.n, 2);
    assert_int_equal(P.log[0].cpu, 8);
    assert_int_equal(P.log[0].msr, 0xC00003FD);
    /* CfgEn [63], CtrEn [62], CtrID [52:48], BwSrc [43:32], BwType [31:0] */
    assert_int_equal(P.log[0].val, 1ull << 63 | 1ull << 62 | 3ull << 48 | 5ull << 32 | 0x7F);
    load_lines(&d, 9, 5, 0x400000, 300);
    load_lines(&d, 9, 6, 0x800000, 50); /* another RMID: not counted */
    P.n = 0;
    uint64_t b = 0;
    assert_int_equal(rdt_abmc_read(&d, 1, 3, &b, &e), 0);
    assert_int_equal(P.log[0].msr, X86_QM_EVTSEL);
    assert_int_equal(P.log[0].val,
                     1ull << 31 | 3ull << 32 | 1); /* ExtEvtID, counter, L3CacheABMC */
    assert_int_equal(b, mach_traffic(&M, 1, 5, 0x7F));
    assert_true(b >= 300 * 64);
    assert_int_equal(rdt_abmc_read(&d, 1, 4, &b, &e), 0);
    assert_int_equal(b, 0); /* one node: no remote reads */
    assert_int_equal(rdt_abmc_read(&d, 0, 3, &b, &e), 0);
    assert_int_equal(b, 0); /* CCD 0's counter 3 is its own, never configured */
    /* The running total follows the counter. */
    struct rdt_mbm st = {0};
    assert_int_equal(rdt_abmc_update(&d, 1, 3, &st, &e), 0);
    load_lines(&d, 9, 5, 0xc00000, 10);
    assert_int_equal(rdt_abmc_update(&d, 1, 3, &st, &e), 0);
    assert_int_equal(st.bytes, 10 * 64);
    /* Unassigned: CfgEn alone; the counter reads zero. */
    P.n = 0;
    assert_int_equal(rdt_abmc_unassign(&d, 1, 3, &e), 0);
    assert_int_equal(P.log[0].val, 1ull << 63 | 3ull << 48);
    assert_int_equal(rdt_abmc_read(&d, 1, 3, &b, &e), 0);
    assert_int_equal(b, 0);
    /* Off again: every CPU's ABMC_En cleared, the counters gone. */
    P.n = 0;
    assert_int_equal(rdt_set_abmc(&d, 0, &e), 0);
    assert_int_equal(P.n, 64);
    assert_int_equal(P.log[63].val, 0);
    assert_int_equal(rdt_abmc_read(&d, 1, 4, &b, &e), -QOSIM_EUNSUP);
    rdt_free(&d);
}

/* SDCIAE: SDCIAE_En set beside ABMC_En (read-modify-write), the highest
 * CLOS reserved for I/O and its mask in L3_MASK_15, with CDP too. */
static void test_sdciae(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc-turin");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_io_cos(&d), 15);
    for (int i = 1; i < 16; i++)
        assert_int_equal(rdt_alloc_cos(&d), i);
    assert_int_equal(rdt_set_sdciae(&d, 1, &e), -QOSIM_EINVAL); /* COS 15 is a group's */
    assert_int_equal(P.n, 0);
    rdt_free_cos(&d, 15);
    assert_int_equal(rdt_set_abmc(&d, 1, &e), 0);
    P.n = 0;
    assert_int_equal(rdt_set_sdciae(&d, 1, &e), 0);
    assert_int_equal(P.n, 64);
    assert_int_equal(P.log[0].msr, 0xC00003FF);
    assert_int_equal(P.log[0].val, 3);       /* ABMC_En kept */
    assert_int_equal(rdt_alloc_cos(&d), -1); /* COS 15 is I/O's now */
    P.n = 0;
    assert_int_equal(rdt_set_io_cbm(&d, 7, 0xC000, &e), 0);
    assert_int_equal(P.log[0].cpu, 56);
    assert_int_equal(P.log[0].msr, X86_L3_MASK_0 + 15);
    assert_int_equal(rdt_set_io_cbm(&d, 7, 0x10000, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_sdciae(&d, 0, &e), 0);
    assert_int_equal(rdt_alloc_cos(&d), 15); /* free again */
    assert_int_equal(msr(&X, 5, 0xC00003FF), 1);
    rdt_free(&d);
    /* With CDP on, the I/O CLOS is the highest pair (COS 7), its mask still MSR 15. */
    r = boot("amd-epyc-turin");
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_set_cdp(&d, RDT_L3, 1, &e), 0);
    assert_int_equal(rdt_io_cos(&d), 7);
    P.n = 0;
    assert_int_equal(rdt_set_io_cbm(&d, 0, 0x3, &e), 0);
    assert_int_equal(P.log[0].msr, X86_L3_MASK_0 + 15);
    rdt_free(&d);
}

/* SMBA on amd-epyc-turin (its CXL node): rdt_set_smba writes
 * L3QOS_SMBW_CONTROL_n (MSR 0xC0000280 + COS, APM vol. 2, 19.4.6) on a CPU
 * of the domain, in L3BE's 1/8 GB/s units, U (bit BW_LEN) for unlimited;
 * the model keeps it per domain, so another domain still reads its reset
 * U, and its cap on the domain's slow reads follows. */
static void test_smba(void **state)
{
    (void)state;
    struct hw_x86_if r = boot("amd-epyc-turin");
    struct rdt d;
    struct err e;
    assert_int_equal(rdt_init(&d, &r, &e), 0);
    assert_int_equal(rdt_set_smba(&d, 3, 2, 4e9, &e), 0);
    assert_int_equal(P.log[0].cpu, 24); /* the first CPU of CCD 3 */
    assert_int_equal(P.log[0].msr, X86_AMD_SMBW_CTL_0 + 2);
    assert_int_equal(P.log[0].val, 32);                          /* 4 GB/s in 1/8 GB/s */
    assert_int_equal(msr(&X, 31, X86_AMD_SMBW_CTL_0 + 2), 32);   /* any CPU of the CCD reads it */
    assert_int_equal(msr(&X, 0, X86_AMD_SMBW_CTL_0 + 2), 0x800); /* CCD 0: reset, U */
    assert_int_equal(msr(&X, 24, X86_AMD_SMBW_CTL_0 + 1), 0x800);
    assert_true(M.sbw[3].set[2].rate > 0);
    assert_true(M.sbw[0].set[2].rate == 0);
    assert_int_equal(rdt_set_smba(&d, 3, 2, 1e8, &e), 0); /* below a step: one step */
    assert_int_equal(msr(&X, 24, X86_AMD_SMBW_CTL_0 + 2), 1);
    assert_int_equal(rdt_set_smba(&d, 3, 2, 0, &e), 0);
    assert_int_equal(msr(&X, 24, X86_AMD_SMBW_CTL_0 + 2), 0x800); /* unlimited */
    assert_true(M.sbw[3].set[2].rate == 0);
    /* 2047 steps is the largest limit; COS 16 and domain 8 do not exist. */
    assert_int_equal(rdt_set_smba(&d, 3, 2, 2047 * 0.125e9, &e), 0);
    assert_int_equal(msr(&X, 24, X86_AMD_SMBW_CTL_0 + 2), 2047);
    assert_int_equal(rdt_set_smba(&d, 3, 2, 2048 * 0.125e9, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_smba(&d, 3, 16, 1e9, &e), -QOSIM_EINVAL);
    assert_int_equal(rdt_set_smba(&d, 8, 2, 1e9, &e), -QOSIM_EINVAL);
    assert_int_equal(P.n, 4);
    rdt_free(&d);
}

/* A scenario's groups[].smba and a phase's, through drv/qos.c: the group's
 * COS in every CCD, as resctrl writes an SMBA schemata line per domain. */
static const char smba_yaml[] =
    "platform: amd-epyc-turin\n"
    "duration: 100us\n"
    "tasks:\n"
    "  - {name: a, cpu: 0, node: 1, workload: {pattern: seq}}\n"
    "qos:\n"
    "  groups:\n"
    "    - {name: g1, tasks: [a], smba: 2.5GB/s}\n"
    "    - {name: g2, smba: 0, limit: 1GB/s}\n"
    "phases:\n"
    "  - {at: 50us, qos: [{group: g1, smba: 0}, {group: g2, smba: 0.3GB/s}]}\n";

static void test_smba_scenario(void **state)
{
    (void)state;
    static struct scen s;
    static struct run run;
    static struct x86 x;
    static struct qos q;
    struct conf c;
    struct err e;
    assert_int_equal(conf_load_mem(&c, "smba.yaml", smba_yaml, sizeof smba_yaml - 1, &e), 0);
    assert_int_equal(scen_from_conf(&s, &c, "", &qos_scen, &e), 0);
    conf_free(&c);
    assert_true(s.qos.init[0].has_smba && s.qos.init[0].smba == 2.5e9);
    assert_true(s.qos.init[1].has_smba && s.qos.init[1].smba == 0);
    assert_int_equal(run_init(&run, &s, &e), 0);
    assert_int_equal(x86_init(&x, &run.m, &e), 0);
    struct hw_x86_if r;
    x86_regif(&x, &r);
    assert_int_equal(qos_rdt_init(&q, &r, &run, &e), 0);
    for (unsigned cpu = 0; cpu < 64; cpu += 8) {                       /* every CCD */
        assert_int_equal(msr(&x, cpu, X86_AMD_SMBW_CTL_0 + 1), 20);    /* g1, COS 1: 2.5 GB/s */
        assert_int_equal(msr(&x, cpu, X86_AMD_SMBW_CTL_0 + 2), 0x800); /* g2: unlimited */
        assert_int_equal(msr(&x, cpu, X86_AMD_BW_CTL_0 + 2), 8);       /* its L3BE limit */
        assert_int_equal(msr(&x, cpu, X86_AMD_SMBW_CTL_0 + 3), 0x800);
    }
    assert_int_equal(run_all(&run, NULL, NULL, NULL, &e), 0);
    for (unsigned cpu = 0; cpu < 64; cpu += 8) {
        assert_int_equal(msr(&x, cpu, X86_AMD_SMBW_CTL_0 + 1), 0x800);
        assert_int_equal(msr(&x, cpu, X86_AMD_SMBW_CTL_0 + 2),
                         2); /* 0.3 GB/s: 2 steps, rounded down */
    }
    qos_free(&q);
    x86_free(&x);
    run_free(&run);
    scen_free(&s);
}

/* drv/qos.c over a scenario: CDP, classes and masks in every domain, MBA,
 * identifiers per group, PQR_ASSOC written by the driver at context switch
 * only when it changes, and a task moved by a phase re-associated at once. */
static const char qos_yaml[] =
    "platform: intel-xeon\n"
    "duration: 1ms\n"
    "slice: 100us\n"
    "tasks:\n"
    "  - {name: a, cpu: 0, workload: {pattern: seq}}\n"
    "  - {name: b, cpu: 0, workload: {pattern: seq}}\n"
    "  - {name: c, cpu: 2, workload: {pattern: random}}\n"
    "  - {name: d, cpu: 16, workload: {pattern: seq}}\n"
    "qos:\n"
    "  cdp: [L3]\n"
    "  monitor: group\n"
    "  groups:\n"
    "    - {name: g1, tasks: [a, b], L3: {data: 0x7f0, code: 0x00f}, mba: 60}\n"
    "    - {name: g2, tasks: [c, d], L3: 0x00f, L2: 0xff}\n"
    "phases:\n"
    "  - {at: 500us, qos: [{group: default, tasks: [c]}]}\n";

static void test_qos_scenario(void **state)
{
    (void)state;
    static struct scen s;
    static struct run run;
    static struct x86 x;
    static struct qos q;
    struct conf c;
    struct err e;
    assert_int_equal(conf_load_mem(&c, "qos.yaml", qos_yaml, sizeof qos_yaml - 1, &e), 0);
    assert_int_equal(scen_from_conf(&s, &c, "", &qos_scen, &e), 0);
    conf_free(&c);
    assert_int_equal(run_init(&run, &s, &e), 0);
    assert_int_equal(x86_init(&x, &run.m, &e), 0);
    struct hw_x86_if r;
    x86_regif(&x, &r);
    r.rdmsr = px_rdmsr;
    r.wrmsr = px_wrmsr;
    memset(&P, 0, sizeof P);
    assert_int_equal(qos_rdt_init(&q, &r, &run, &e), 0);
    for (unsigned cpu = 0; cpu < 32; cpu += 16) { /* both sockets' L3 domains */
        assert_int_equal(msr(&x, cpu, X86_L3_QOS_CFG), 1);
        assert_int_equal(msr(&x, cpu, X86_L3_MASK_0 + 2), 0x7f0); /* COS 1 data: 2n */
        assert_int_equal(msr(&x, cpu, X86_L3_MASK_0 + 3), 0x00f); /* COS 1 code: 2n + 1 */
        assert_int_equal(msr(&x, cpu, X86_L3_MASK_0 + 4), 0x00f);
        assert_int_equal(msr(&x, cpu, X86_L3_MASK_0 + 5), 0x00f);
        assert_int_equal(msr(&x, cpu, X86_MBA_THRTL_0 + 1), 40); /* MB 60: delay 40 */
        assert_int_equal(msr(&x, cpu, X86_MBA_THRTL_0 + 2), 0);
    }
    for (unsigned cpu = 0; cpu < 32; cpu += 2) /* every core's L2 */
        assert_int_equal(msr(&x, cpu, X86_L2_MASK_0 + 2), 0xff);
    assert_int_equal(run.task[0].cls, 1);
    assert_int_equal(run.task[1].tag, 1);
    assert_int_equal(run.task[2].cls, 2);
    assert_int_equal(run.task[3].tag, 2);
    unsigned n0 = P.n;
    assert_int_equal(run_all(&run, NULL, NULL, NULL, &e), 0);
    /* CPU 0 switched between a and b every 100 us, but both are COS 1,
     * RMID 1: the driver wrote PQR_ASSOC there once. */
    unsigned w0 = 0, w2 = 0;
    for (unsigned i = n0; i < P.n; i++) {
        w0 += P.log[i].msr == X86_PQR_ASSOC && P.log[i].cpu == 0;
        w2 += P.log[i].msr == X86_PQR_ASSOC && P.log[i].cpu == 2;
    }
    assert_true(run.sch.switches >= 10);
    assert_int_equal(w0, 1);
    assert_int_equal(msr(&x, 0, X86_PQR_ASSOC), 1ull << 32 | 1);
    assert_int_equal(msr(&x, 16, X86_PQR_ASSOC), 2ull << 32 | 2);
    /* c went to the default group at 500 us: COS 0, RMID 0, written then. */
    assert_int_equal(w2, 2);
    assert_int_equal(msr(&x, 2, X86_PQR_ASSOC), 0);
    assert_int_equal(run.task[2].cls, 0);
    qos_free(&q);
    x86_free(&x);
    run_free(&run);
    scen_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_enumerate_xeon, teardown),
        cmocka_unit_test_teardown(test_enumerate_atom, teardown),
        cmocka_unit_test_teardown(test_enumerate_epyc, teardown),
        cmocka_unit_test_teardown(test_enumerate_none, teardown),
        cmocka_unit_test_teardown(test_switch, teardown),
        cmocka_unit_test_teardown(test_alloc_ids, teardown),
        cmocka_unit_test_teardown(test_cbm_and_cdp_sequence, teardown),
        cmocka_unit_test_teardown(test_mba_and_l3be, teardown),
        cmocka_unit_test_teardown(test_mbm_wrap_e_u, teardown),
        cmocka_unit_test_teardown(test_mon_read_model, teardown),
        cmocka_unit_test_teardown(test_mbm_amd_untracked, teardown),
        cmocka_unit_test_teardown(test_enumerate_turin, teardown),
        cmocka_unit_test_teardown(test_bmec, teardown),
        cmocka_unit_test_teardown(test_abmc, teardown),
        cmocka_unit_test_teardown(test_sdciae, teardown),
        cmocka_unit_test_teardown(test_smba, teardown),
        cmocka_unit_test(test_smba_scenario),
        cmocka_unit_test(test_qos_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
