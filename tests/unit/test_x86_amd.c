/* Unit tests for AMD's later PQoS registers in hw/x86.c: BMEC
 * (QOS_EVT_CFG_n), ABMC (L3_QOS_ABMC_CFG, L3_QOS_ABMC_DSC, QM_EVTSEL's
 * ExtEvtID), L3_QOS_EXT_CFG and CPUID 0x80000020, as AMD's APM vol. 2
 * (24593) ch. 19 and Linux resctrl define them (docs/registers.md 1.6).
 * The machine is tests/data/amd-bmec.yaml: CPUs 0-3 are L3 domain 0 on node
 * 0, CPUs 4-7 domain 1 on node 1; 16 RMIDs, 4 tracked per domain in default
 * mode; 4 assignable counters per domain; 8 COS. Every count is compared
 * with the machine's per-task ground truth (struct mach_tstat.traffic), in
 * QM_CTR's units of 64 bytes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

#define NTASK             8
#define X86_FIXTURE_NTASK NTASK
#include "x86_fixture.h"

enum { EVTSEL = 0xC8D, QM_CTR = 0xC8E, PQR = 0xC8F, L3M = 0xC90 };
enum { SMBW = 0xC0000280 };
enum { EVT_CFG = 0xC0000400, EXT_CFG = 0xC00003FF, ABMC_CFG = 0xC00003FD, ABMC_DSC = 0xC00003FE };

#define E_BIT     (1ull << 63)
#define U_BIT     (1ull << 62)
#define EXT_EVT   (1ull << 31)
#define CFG_EN    (1ull << 63)
#define CTR_EN    (1ull << 62)
#define CFG_ERR   (1ull << 63)
#define IS_COS    (1ull << 47)
#define ABMC_EN   1ull
#define SDCIAE_EN 2ull

/* ---- the profile, from this file's path (the suite runs from the top) ---- */

static const char *profile_path(void)
{
    static char path[600];
    snprintf(path, sizeof path, "%s", __FILE__);
    char *slash = strrchr(path, '/');
    if (slash)
        snprintf(slash, sizeof path - (size_t)(slash - path), "/../data/amd-bmec.yaml");
    else
        snprintf(path, sizeof path, "../data/amd-bmec.yaml");
    return path;
}

static int setup_bmec(void **state)
{
    (void)state;
    boot(profile_path());
    return 0;
}

/* ---- register access with the failing line in the message ---- */

static void wr_expect(unsigned cpu, uint32_t msr, uint64_t v, enum hw_fault want, int line)
{
    enum hw_fault f = x86_wrmsr(&X, cpu, msr, v);
    if (f != want)
        fail_msg("line %d: wrmsr(cpu %u, 0x%x, 0x%llx) = %s, want %s", line, cpu, msr,
                 (unsigned long long)v, hw_fault_name(f), hw_fault_name(want));
}

static uint64_t rd_at(unsigned cpu, uint32_t msr, enum hw_fault want, int line)
{
    uint64_t v = 0;
    enum hw_fault f = x86_rdmsr(&X, cpu, msr, &v);
    if (f != want)
        fail_msg("line %d: rdmsr(cpu %u, 0x%x) = %s, want %s", line, cpu, msr, hw_fault_name(f),
                 hw_fault_name(want));
    return v;
}

#define WR_OK(cpu, msr, v) wr_expect((cpu), (msr), (v), HW_OK, __LINE__)
#define WR_GP(cpu, msr, v) wr_expect((cpu), (msr), (v), HW_GP, __LINE__)
#define RD(cpu, msr)       rd_at((cpu), (msr), HW_OK, __LINE__)
#define RD_GP(cpu, msr)    rd_at((cpu), (msr), HW_GP, __LINE__)
#define RD_IS(cpu, msr, want)                                                                      \
    do {                                                                                           \
        uint64_t got_ = RD((cpu), (msr)), want_ = (want);                                          \
        if (got_ != want_)                                                                         \
            fail_msg("line %d: rdmsr(cpu %u, 0x%x) = 0x%llx, want 0x%llx", __LINE__,               \
                     (unsigned)(cpu), (unsigned)(msr), (unsigned long long)got_,                   \
                     (unsigned long long)want_);                                                   \
    } while (0)

static void cpuid_is_at(uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                        int line)
{
    uint32_t r[4] = {0xdead, 0xdead, 0xdead, 0xdead};
    assert_int_equal(x86_cpuid(&X, 0, leaf, sub, r), HW_OK);
    if (r[0] != a || r[1] != b || r[2] != c || r[3] != d)
        fail_msg("line %d: cpuid(0x%x, %u) = %08x %08x %08x %08x, want %08x %08x %08x %08x", line,
                 leaf, sub, r[0], r[1], r[2], r[3], a, b, c, d);
}
#define CPUID_IS(leaf, sub, a, b, c, d) cpuid_is_at((leaf), (sub), (a), (b), (c), (d), __LINE__)

/* QM_CTR as cpu reads it for EvtID evt (2 total, 3 local) of rmid. */
static uint64_t counter(unsigned cpu, unsigned evt, unsigned rmid)
{
    WR_OK(cpu, EVTSEL, (uint64_t)rmid << 32 | evt);
    return RD(cpu, QM_CTR);
}

/* QM_CTR of assignable counter id (ExtEvtID, L3CacheABMC). */
static uint64_t abmc_counter(unsigned cpu, unsigned id)
{
    WR_OK(cpu, EVTSEL, (uint64_t)id << 32 | EXT_EVT | 1);
    return RD(cpu, QM_CTR);
}

static uint64_t assign(unsigned id, unsigned src, uint32_t types)
{
    return CFG_EN | CTR_EN | (uint64_t)id << 48 | (uint64_t)src << 32 | types;
}

/* ---- driving the machine ---- */

static uint64_t addr(unsigned node, unsigned task, uint64_t line)
{
    return mach_phys_base(node, task) | (0x100000 + line * 64);
}

/* Task runs on cpu with (cos, rmid) in its PQR_ASSOC. */
static void run(unsigned cpu, int task, unsigned cos, unsigned rmid)
{
    WR_OK(cpu, PQR, (uint64_t)cos << 32 | rmid);
    mach_set_assoc(&M, cpu, task, cos, rmid);
}

/* Traffic of every class by the task on cpu: n local and n/2 remote line
 * reads, stores that later leave the L3 dirty (victims), and, through
 * mach_count (no workload makes them yet), non-temporal writes and slow
 * memory reads of distinct sizes, so that each class has its own count. */
static void mix(unsigned cpu, unsigned task, uint64_t first, uint64_t n)
{
    struct mach_cpu *p = &M.cpu[cpu];
    unsigned other = 1 - p->node;
    for (uint64_t i = 0; i < n; i++)
        mach_access(&M, p, HIER_STORE, addr(p->node, task, first + i));
    for (uint64_t i = 0; i < n / 2; i++)
        mach_access(&M, p, HIER_LOAD, addr(other, task, first + i));
    /* enough new lines to push the dirty ones out of the 1024-line L3 */
    for (uint64_t i = 0; i < 2048; i++)
        mach_access(&M, p, HIER_LOAD, addr(p->node, task, first + n + i));
    static const enum mach_traffic cls[] = {MACH_TR_NT_LOCAL, MACH_TR_NT_REMOTE, MACH_TR_SLOW_LOCAL,
                                            MACH_TR_SLOW_REMOTE};
    for (unsigned k = 0; k < 4; k++)
        mach_count(&M, p->domain, p->tag, p->cls, task, cls[k], (uint64_t)(k + 1) * 64 * 5);
}

/* Ground truth: the task's bytes of the classes in types, in counter units. */
static uint64_t truth(unsigned task, uint32_t types)
{
    uint64_t b = 0;
    for (unsigned t = 0; t < MACH_NTRAFFIC; t++)
        if (types >> t & 1)
            b += M.ts[task].traffic[t];
    return b / 64;
}

/* Every class has traffic (else a bit could count nothing and pass). */
static void all_classes_moved(unsigned task)
{
    for (unsigned t = 0; t < MACH_NTRAFFIC; t++)
        if (!M.ts[task].traffic[t])
            fail_msg("task %u moved no bytes of traffic class %u", task, t);
}

static void enable_abmc(unsigned d, int on)
{
    for (unsigned c = 4 * d; c < 4 * d + 4; c++)
        WR_OK(c, EXT_CFG, on ? ABMC_EN : 0);
}

/* ======================= CPUID ======================= */

/* 0x80000020.0 EBX: L3MBE [1], BMEC [3], ABMC [5], SDCIAE [6] (APM vol. 2,
 * Table 19-5), L3SMBE [2]; .1 L3BE and .2 SMBA: BW_LEN 11, COS_MAX 7; .3:
 * EVT_NUM 2, all seven types; .5: CounterSize 44 - 24 = 20, 4 counters
 * (largest ID 3), Select_COS. */
static void test_cpuid(void **state)
{
    (void)state;
    CPUID_IS(0x80000020, 0, 0, 0x6E, 0, 0);
    CPUID_IS(0x80000020, 1, 11, 0, 0, 7);
    CPUID_IS(0x80000020, 2, 11, 0, 0, 7);
    CPUID_IS(0x80000020, 3, 0, 2, 0x7F, 0);
    CPUID_IS(0x80000020, 4, 0, 0, 0, 0);
    CPUID_IS(0x80000020, 5, 20, 3, 1, 0);
    CPUID_IS(0x80000020, 6, 0, 0, 0, 0);
    uint32_t r[4];
    x86_cpuid(&X, 0, 0x80000008, 0, r);
    assert_int_equal(r[1], 1u << 6); /* BE */
}

/* amd-epyc (Zen 3) has L3BE alone: EBX bit 1, sub-leaves 3 and 5 zero, and
 * none of the new MSRs; neither has intel-xeon. */
static void test_absent(void **state)
{
    (void)state;
    boot("amd-epyc");
    CPUID_IS(0x80000020, 0, 0, 2, 0, 0);
    CPUID_IS(0x80000020, 3, 0, 0, 0, 0);
    CPUID_IS(0x80000020, 5, 0, 0, 0, 0);
    static const uint32_t msrs[] = {EVT_CFG, EVT_CFG + 1, EXT_CFG, ABMC_CFG, ABMC_DSC, SMBW};
    for (int k = 0; k < 2; k++) {
        for (unsigned i = 0; i < sizeof msrs / sizeof *msrs; i++) {
            RD_GP(0, msrs[i]);
            WR_GP(0, msrs[i], 0);
        }
        WR_GP(0, EVTSEL, EXT_EVT | 1); /* no ABMC: ExtEvtID is reserved */
        boot("intel-xeon");
    }
    CPUID_IS(0x80000020, 0, 0, 0, 0, 0);
}

/* ======================= BMEC ======================= */

/* QOS_EVT_CFG_0 and _1 reset to 0x7F and 0x15 (resctrl.rst); [63:7] MBZ:
 * #GP; one pair per L3 domain; there is no QOS_EVT_CFG_2 (EVT_NUM 2). */
static void test_evt_cfg_reset_reserved_scope(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 8; c++) {
        RD_IS(c, EVT_CFG, 0x7F);
        RD_IS(c, EVT_CFG + 1, 0x15);
    }
    for (unsigned b = 7; b < 64; b++) {
        WR_GP(0, EVT_CFG, 1ull << b);
        WR_GP(0, EVT_CFG + 1, 0x33 | 1ull << b);
    }
    RD_IS(0, EVT_CFG, 0x7F); /* a refused write changes nothing */
    RD_GP(0, EVT_CFG + 2);
    WR_GP(0, EVT_CFG + 2, 0);
    WR_OK(0, EVT_CFG, 0x33);
    RD_IS(3, EVT_CFG, 0x33); /* same CCX */
    RD_IS(4, EVT_CFG, 0x7F); /* the other CCX */
    WR_OK(5, EVT_CFG + 1, 0);
    RD_IS(5, EVT_CFG + 1, 0);
    RD_IS(1, EVT_CFG + 1, 0x15);
}

/* Each configuration bit counts exactly its traffic class (APM vol. 2,
 * Figure 19-4): for each bit alone, on both events, the count equals the
 * task's ground truth of that class; the first read after the write is U. */
static void test_bmec_each_bit(void **state)
{
    (void)state;
    unsigned cpu = 1, rmid = 2, task = 3;
    run(cpu, task, 0, rmid);
    for (unsigned bit = 0; bit < 7; bit++)
        for (unsigned n = 0; n < 2; n++) {
            WR_OK(0, EVT_CFG + n, 1u << bit);
            assert_int_equal(counter(cpu, 2 + n, rmid), U_BIT);
            uint64_t before = truth(task, 1u << bit);
            mix(cpu, task, 100000ull * (bit * 2 + n + 1), 300);
            uint64_t got = counter(cpu, 2 + n, rmid), want = truth(task, 1u << bit) - before;
            if (got != want || !want)
                fail_msg("bit %u event %u: QM_CTR %llu, ground truth %llu", bit, 2 + n,
                         (unsigned long long)got, (unsigned long long)want);
        }
    all_classes_moved(task);
}

/* The reset configurations: EvtID 2 all seven classes, EvtID 3 local reads,
 * local NT writes and local slow reads (0x15), from reset on. */
static void test_bmec_defaults(void **state)
{
    (void)state;
    run(5, 1, 0, 3);
    run(4, 0, 0, 0);
    mix(5, 1, 0, 400);
    all_classes_moved(1);
    assert_int_equal(counter(6, 2, 3), truth(1, 0x7F));
    assert_int_equal(counter(6, 3, 3), truth(1, 0x15));
    assert_true(truth(1, 0x15) < truth(1, 0x7F));
    /* domain 0 saw none of it */
    WR_OK(0, PQR, 3);
    assert_int_equal(counter(0, 2, 3), 0);
}

/* A configuration write clears both events of every RMID in the domain; the
 * next read of each (RMID, event) is U, once; then counts restart from zero.
 * The other domain keeps its counts. */
static void test_bmec_write_clears_u_once(void **state)
{
    (void)state;
    run(0, 0, 0, 1);
    run(1, 1, 0, 2);
    run(4, 2, 0, 1);
    mix(0, 0, 0, 200);
    mix(1, 1, 0, 200);
    mix(4, 2, 0, 200);
    assert_int_equal(counter(0, 2, 1), truth(0, 0x7F));
    assert_int_equal(counter(4, 2, 1), truth(2, 0x7F));
    uint64_t t0 = truth(0, 0x15), t1 = truth(1, 0x7F);
    WR_OK(2, EVT_CFG + 1, 0x15); /* the same value: still a write */
    for (unsigned rmid = 1; rmid <= 2; rmid++)
        for (unsigned evt = 2; evt <= 3; evt++)
            assert_int_equal(counter(3, evt, rmid), U_BIT);
    assert_int_equal(counter(3, 2, 1), 0);
    assert_int_equal(counter(3, 3, 2), 0);
    mix(0, 0, 50000, 100);
    assert_int_equal(counter(3, 3, 1), truth(0, 0x15) - t0);
    assert_int_equal(counter(3, 2, 2), 0);
    mix(1, 1, 50000, 100);
    assert_int_equal(counter(2, 2, 2), truth(1, 0x7F) - t1);
    assert_int_equal(counter(4, 2, 1), truth(2, 0x7F)); /* domain 1: untouched, no U */
}

/* Default mode keeps the tracker (56375): an RMID no CPU of the domain
 * associated reads U on both events whatever BMEC says. */
static void test_bmec_untracked_u(void **state)
{
    (void)state;
    assert_int_equal(counter(0, 2, 9), U_BIT);
    assert_int_equal(counter(0, 3, 9), U_BIT);
    WR_OK(0, PQR, 9);
    assert_int_equal(counter(0, 2, 9), 0);
}

/* ======================= L3_QOS_EXT_CFG ======================= */

/* Reset 0; ABMC_En [0] and SDCIAE_En [1] read back; [63:2] RAZ: written
 * ones read 0, no #GP (Figure 19-7); each CPU its own copy. */
static void test_ext_cfg(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 8; c++)
        RD_IS(c, EXT_CFG, 0);
    WR_OK(0, EXT_CFG, ~0ull);
    RD_IS(0, EXT_CFG, 3);
    RD_IS(1, EXT_CFG, 0);
    RD_IS(4, EXT_CFG, 0);
    WR_OK(0, EXT_CFG, 4);
    RD_IS(0, EXT_CFG, 0);
}

/* ======================= ABMC ======================= */

/* L3_QOS_ABMC_CFG and _DSC are #GP while this CPU's ABMC_En is clear, and
 * QM_EVTSEL's ExtEvtID is MBZ then (Figure 19-2). */
static void test_abmc_gp_until_enabled(void **state)
{
    (void)state;
    RD_GP(0, ABMC_CFG);
    WR_GP(0, ABMC_CFG, 0);
    RD_GP(0, ABMC_DSC);
    WR_GP(0, EVTSEL, EXT_EVT | 1);
    WR_OK(0, EXT_CFG, ABMC_EN);
    RD_IS(0, ABMC_CFG, 0);
    RD_IS(0, ABMC_DSC, 0);
    WR_OK(0, EVTSEL, EXT_EVT | 1);
    RD_GP(1, ABMC_CFG); /* CPU 1's copy of EXT_CFG is still 0 */
    WR_GP(1, EVTSEL, EXT_EVT | 1);
    WR_OK(1, EXT_CFG, ABMC_EN);
    RD_IS(1, ABMC_CFG, 0);
}

/* MBZ fields [61:53] and [46:44] #GP; the rest read back as written ("the
 * last value written"), CfgEn or not; DSC is read-only. */
static void test_abmc_cfg_fields(void **state)
{
    (void)state;
    enable_abmc(0, 1);
    for (unsigned b = 53; b <= 61; b++)
        WR_GP(0, ABMC_CFG, 1ull << b);
    for (unsigned b = 44; b <= 46; b++)
        WR_GP(0, ABMC_CFG, 1ull << b);
    uint64_t v = CTR_EN | 2ull << 48 | IS_COS | 5ull << 32 | 0x15;
    WR_OK(0, ABMC_CFG, v);
    RD_IS(0, ABMC_CFG, v);
    RD_IS(1, ABMC_CFG, 0);
    /* without CfgEn nothing was configured: counter 2 still unassigned */
    RD_IS(0, ABMC_DSC, 2ull << 48);
    WR_GP(0, ABMC_DSC, 0);
    WR_OK(0, ABMC_CFG, v | CFG_EN);
    RD_IS(0, ABMC_CFG, v | CFG_EN);
    RD_IS(0, ABMC_DSC, v); /* CfgEn is not reported, CfgErr clear */
    RD_GP(4, ABMC_DSC);    /* domain 1's CPUs have ABMC off */
    WR_OK(4, EXT_CFG, ABMC_EN);
    WR_OK(4, ABMC_CFG, 2ull << 48);
    RD_IS(4, ABMC_DSC, 2ull << 48); /* counters are per domain */
    WR_OK(3, ABMC_CFG, 2ull << 48);
    RD_IS(3, ABMC_DSC, v); /* a CPU of the same domain sees it */
}

/* Six RMIDs in use on four CPUs, four counters: each assigned counter
 * equals its RMID's ground truth of its types exactly; a legacy read finds
 * the lowest counter whose BwType matches QOS_EVT_CFG_n, an RMID without
 * one reads U. */
static void test_abmc_counts_exactly(void **state)
{
    (void)state;
    enable_abmc(0, 1);
    static const uint32_t types[4] = {0x7F, 0x15, 0x03, 0x40};
    for (unsigned i = 0; i < 4; i++)
        WR_OK(i, ABMC_CFG, assign(i, 1 + i, types[i]));
    WR_OK(0, ABMC_CFG, assign(3, 4, 0x7F) & ~CTR_EN); /* re-configured: disabled */
    WR_OK(0, ABMC_CFG, assign(3, 4, 0x40));
    for (unsigned round = 0; round < 3; round++)
        for (unsigned t = 0; t < 6; t++) {
            unsigned cpu = t % 4;
            run(cpu, (int)t, 0, 1 + t);
            mix(cpu, t, 20000ull * (round * 6 + t + 1), 150);
        }
    for (unsigned i = 0; i < 4; i++) {
        uint64_t got = abmc_counter(2, i), want = truth(i, types[i]);
        if (got != want || !want)
            fail_msg("counter %u (RMID %u, 0x%x): %llu, ground truth %llu", i, 1 + i, types[i],
                     (unsigned long long)got, (unsigned long long)want);
    }
    /* legacy reads: RMID 1's counter 0 has 0x7F = QOS_EVT_CFG_0, RMID 2's
     * counter 1 0x15 = QOS_EVT_CFG_1; the others match neither: U */
    assert_int_equal(counter(0, 2, 1), truth(0, 0x7F));
    assert_int_equal(counter(0, 3, 2), truth(1, 0x15));
    assert_int_equal(counter(0, 3, 1), U_BIT);
    assert_int_equal(counter(0, 2, 3), U_BIT);
    assert_int_equal(counter(0, 2, 5), U_BIT);
    assert_int_equal(counter(0, 2, 6), U_BIT);
    /* occupancy is not ABMC's */
    assert_int_equal(counter(0, 1, 5), mach_occupancy_est(&M, PLAT_L3, 0, 5));
    /* two counters with the same configuration: the lowest CtrID's count */
    WR_OK(0, ABMC_CFG, assign(2, 2, 0x15));
    mix(1, 1, 900000, 50);
    assert_int_equal(counter(0, 3, 2), abmc_counter(0, 1));
    assert_true(abmc_counter(0, 1) > abmc_counter(0, 2));
}

/* Configuring a counter resets it ("cleared to zero upon configuration");
 * re-assigned to another RMID it counts only that one from then on. */
static void test_abmc_reassign_resets(void **state)
{
    (void)state;
    enable_abmc(0, 1);
    run(0, 0, 0, 1);
    run(1, 1, 0, 2);
    WR_OK(0, ABMC_CFG, assign(0, 1, 0x7F));
    mix(0, 0, 0, 200);
    assert_int_equal(abmc_counter(0, 0), truth(0, 0x7F));
    WR_OK(0, ABMC_CFG, assign(0, 1, 0x7F));
    assert_int_equal(abmc_counter(0, 0), 0);
    uint64_t t1 = truth(1, 0x03);
    WR_OK(3, ABMC_CFG, assign(0, 2, 0x03));
    RD_IS(3, ABMC_DSC, CTR_EN | 2ull << 32 | 0x03);
    mix(0, 0, 30000, 200);
    mix(1, 1, 30000, 200);
    assert_int_equal(abmc_counter(0, 0), truth(1, 0x03) - t1);
    /* CtrEn clear: configured, not counting, reads 0 */
    WR_OK(3, ABMC_CFG, assign(0, 2, 0x03) & ~CTR_EN);
    mix(1, 1, 60000, 100);
    assert_int_equal(abmc_counter(0, 0), 0);
    RD_IS(3, ABMC_DSC, 2ull << 32 | 0x03);
}

/* The tracker drops an RMID no CPU uses once more than 4 have been
 * associated (default mode: U, and restarts from zero). An assigned counter
 * is not the tracker's: RMID 1 keeps its counter through 40 associations of
 * 12 RMIDs, and it equals ground truth. */
static void test_abmc_survives_tracker(void **state)
{
    (void)state;
    /* default mode first: the drop happens */
    run(0, 0, 0, 1);
    mix(0, 0, 0, 100);
    for (unsigned r = 2; r <= 6; r++)
        run(1 + r % 3, 1, 0, r);
    run(0, 0, 0, 7);
    assert_int_equal(counter(0, 2, 1), U_BIT);
    /* ABMC mode: the counter stays */
    enable_abmc(0, 1);
    run(0, 0, 0, 1);
    WR_OK(0, ABMC_CFG, assign(0, 1, 0x7F));
    uint64_t want = 0; /* task 0's bytes while it runs with RMID 1, the only one to */
    for (unsigned k = 0; k < 40; k++) {
        run(1 + k % 3, (int)(1 + k % 3), 0, 2 + k % 12);
        mix(1 + k % 3, 1 + k % 3, 40000ull * (k + 1), 20);
        run(0, 0, 0, k % 2 ? 1 : 14 + k % 2);
        uint64_t t0 = truth(0, 0x7F);
        mix(0, 0, 40000ull * (k + 1), 20);
        want += k % 2 ? truth(0, 0x7F) - t0 : 0;
    }
    assert_int_equal(abmc_counter(0, 0), want);
    assert_true(want > 0);
    assert_int_equal(counter(0, 2, 1), want);
}

/* IsCOS with Select_COS: the counter counts every request of the class,
 * whatever its RMID: two tasks of COS 3 with different RMIDs. */
static void test_abmc_by_cos(void **state)
{
    (void)state;
    enable_abmc(0, 1);
    WR_OK(0, ABMC_CFG, assign(1, 3, 0x7F) | IS_COS);
    RD_IS(0, ABMC_DSC, CTR_EN | IS_COS | 1ull << 48 | 3ull << 32 | 0x7F);
    run(0, 0, 3, 1);
    run(1, 1, 3, 2);
    run(2, 2, 4, 1);
    mix(0, 0, 0, 100);
    mix(1, 1, 0, 100);
    mix(2, 2, 0, 100);
    assert_int_equal(abmc_counter(0, 1), truth(0, 0x7F) + truth(1, 0x7F));
    assert_true(truth(2, 0x7F) > 0);
}

/* Invalid configurations leave the counter disabled with CfgErr (Figure
 * 19-6), and it reads E; so do a counter ID past the counters and an
 * extended event other than L3CacheABMC. */
static void test_abmc_invalid(void **state)
{
    (void)state;
    enable_abmc(0, 1);
    static const uint64_t bad[] = {
        16ull << 32,         /* RMID 16: past the largest, 15 */
        IS_COS | 8ull << 32, /* COS 8: past COS_MAX 7 */
        0x80,                /* a type CPUID 0x80000020.3 ECX lacks */
        1ull << 31,
    };
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = CFG_EN | CTR_EN | 1ull << 48 | bad[i];
        WR_OK(0, ABMC_CFG, v);
        RD_IS(0, ABMC_DSC, CFG_ERR | 1ull << 48 | bad[i]);
        assert_int_equal(abmc_counter(0, 1), E_BIT);
    }
    WR_OK(0, ABMC_CFG, assign(1, 15, 0x7F)); /* the largest RMID: valid */
    RD_IS(0, ABMC_DSC, CTR_EN | 1ull << 48 | 15ull << 32 | 0x7F);
    assert_int_equal(abmc_counter(0, 1), 0);
    WR_OK(0, ABMC_CFG, assign(4, 1, 0x7F)); /* counter 4 does not exist */
    RD_IS(0, ABMC_DSC, CFG_ERR | 4ull << 48);
    for (unsigned id = 4; id < 16; id++)
        assert_int_equal(abmc_counter(0, id), E_BIT);
    /* the RMID field's rule holds for a counter ID too: past MAX_RMID, #GP */
    WR_GP(0, EVTSEL, 16ull << 32 | EXT_EVT | 1);
    WR_OK(0, EVTSEL, EXT_EVT | 2);
    RD_IS(0, QM_CTR, E_BIT);
}

/* A transition of ABMC_En resets the assignable counters (unassigned), the
 * default-mode counters, and L3_QOS_ABMC_CFG (19.3.3.3); the domain
 * follows the value its CPUs last wrote. ExtEvtID reads E once it is off. */
static void test_abmc_transition(void **state)
{
    (void)state;
    run(0, 0, 0, 1);
    mix(0, 0, 0, 100);
    assert_true(counter(1, 2, 1) > 0);
    WR_OK(3, EXT_CFG, ABMC_EN); /* the first write switches the domain */
    RD_IS(0, EXT_CFG, 0);
    WR_GP(0, ABMC_CFG, assign(0, 1, 0x7F)); /* CPU 0 itself has not */
    WR_OK(0, EXT_CFG, ABMC_EN);
    WR_OK(0, ABMC_CFG, assign(0, 1, 0x7F));
    mix(0, 0, 10000, 100);
    assert_true(abmc_counter(0, 0) > 0);
    RD_IS(0, ABMC_CFG, assign(0, 1, 0x7F));
    WR_OK(0, EVTSEL, EXT_EVT | 1); /* counter 0 selected while ABMC is on */
    enable_abmc(0, 0);
    RD_IS(0, QM_CTR, E_BIT); /* ... and read after it went off */
    RD_IS(0, EXT_CFG, 0);
    WR_GP(0, EVTSEL, EXT_EVT | 1);
    assert_int_equal(counter(1, 2, 1), 0); /* default-mode counter reset */
    mix(0, 0, 20000, 50);
    uint64_t t = truth(0, 0x7F);
    assert_true(counter(1, 2, 1) > 0);
    enable_abmc(0, 1);
    RD_IS(0, ABMC_CFG, 0); /* reset on the transition */
    RD_IS(0, ABMC_DSC, 0); /* counter 0: unassigned */
    assert_int_equal(abmc_counter(0, 0), 0);
    assert_int_equal(counter(1, 2, 1), U_BIT); /* no counter for RMID 1 now */
    enable_abmc(0, 0);
    assert_int_equal(counter(1, 2, 1), 0);
    mix(0, 0, 30000, 50);
    assert_int_equal(counter(1, 2, 1), truth(0, 0x7F) - t);
}

/* ======================= SDCIAE ======================= */

/* The ways I/O may fill in domain d, as a capacity bitmask (one bit a way). */
static uint64_t io_cbm(unsigned d)
{
    return mach_get_io_ways(&M, d);
}

/* The agent's L3 lines after 2000 distinct DMA writes into domain 0 (64
 * sets of 16 ways: every set fills all the ways I/O may use). */
static uint64_t dma_lines(uint64_t first)
{
    struct mach_cpu port;
    assert_int_equal(mach_io_port(&M, &port, 0, 7, 0, 0), 0);
    for (uint64_t i = 0; i < 2000; i++)
        mach_dma_write(&M, &port, addr(0, 7, first + i));
    return mach_task_lines(&M, PLAT_L3, 7);
}

/* SDCIAE_En off: I/O fills the profile's io_ways (0xC000, 2 ways). On:
 * only the ways of L3_MASK_7, COS_MAX's mask (APM vol. 2, 19.4.7), also
 * with CDP on (where MSR 7 is COS 3's code mask); in the writing CPU's
 * domain only; changes of that mask follow while on. */
static void test_sdciae(void **state)
{
    (void)state;
    assert_int_equal(mach_cbm_ways(&M, PLAT_L3, 0xC000), 0xC000);
    assert_int_equal(io_cbm(0), 0xC000);
    assert_int_equal(io_cbm(1), 0xC000);
    assert_int_equal(dma_lines(0), 2 * 64);
    WR_OK(0, L3M + 7, 0x000F);
    assert_int_equal(io_cbm(0), 0xC000); /* not while SDCIAE is off */
    WR_OK(1, EXT_CFG, SDCIAE_EN);
    RD_IS(1, EXT_CFG, SDCIAE_EN);
    assert_int_equal(io_cbm(0), 0x000F);
    assert_int_equal(io_cbm(1), 0xC000);
    assert_int_equal(dma_lines(10000) - 2 * 64, 4 * 64); /* the 2-way lines stay */
    WR_OK(2, L3M + 7, 0x0FF0);
    assert_int_equal(io_cbm(0), 0x0FF0);
    WR_OK(2, L3M + 6, 0x0001); /* another COS's mask: no effect */
    assert_int_equal(io_cbm(0), 0x0FF0);
    WR_OK(0, 0xC81, 1); /* CDP on: MSR 7 is COS 3's code mask, still SDCIAE's */
    assert_int_equal(io_cbm(0), 0x0FF0);
    WR_OK(2, L3M + 7, 0x0300);
    assert_int_equal(io_cbm(0), 0x0300);
    WR_OK(3, EXT_CFG, 0);
    assert_int_equal(io_cbm(0), 0xC000);
    WR_OK(4, EXT_CFG, SDCIAE_EN);
    assert_int_equal(io_cbm(1), 0xFFFF); /* domain 1's L3_MASK_7: reset, all ones */
    x86_reset(&X);
    assert_int_equal(io_cbm(1), 0xC000);
}

/* ======================= SMBA ======================= */

/* L3QOS_SMBW_CONTROL_n (APM vol. 2, 19.4.6): one per COS (8), per L3
 * domain; reset U = 1 (0x800 with SMBW_LEN 11); bits above U #GP (as
 * L3BE's); a limit becomes the domain's slow-memory cap for the class, in
 * 1/8 GB/s; U lifts it. */
static void test_smba_regs(void **state)
{
    (void)state;
    double unit = 0.125e9 / M.ticks_per_sec;
    for (unsigned c = 0; c < 8; c++)
        for (unsigned n = 0; n < 8; n++)
            RD_IS(c, SMBW + n, 0x800);
    RD_GP(0, SMBW + 8);
    WR_GP(0, SMBW + 8, 0x800);
    WR_GP(0, SMBW + 2, 0x1000);
    WR_GP(0, SMBW + 2, 1ull << 63);
    WR_OK(1, SMBW + 2, 16);
    RD_IS(3, SMBW + 2, 16);
    RD_IS(4, SMBW + 2, 0x800);
    assert_near(M.sbw[0].set[2].rate, 16 * unit, 1e-12);
    assert_true(M.sbw[0].set[2].rate > 0);
    assert_true(M.sbw[1].set[2].rate == 0);
    assert_true(M.sbw[0].set[1].rate == 0);
    WR_OK(1, SMBW + 2, 0x800 | 16); /* U: the limit bits have no effect */
    assert_true(M.sbw[0].set[2].rate == 0);
    WR_OK(1, SMBW + 2, 0); /* 0 enforced as 1/8 GB/s */
    assert_near(M.sbw[0].set[2].rate, unit, 1e-12);
    x86_reset(&X);
    RD_IS(1, SMBW + 2, 0x800);
    assert_true(M.sbw[0].set[2].rate == 0);
}

/* CPU 0 streams n reads of node `node` (a read issued each 1/16 of the last
 * one's latency); the rate in GB/s. */
static double stream(unsigned node, uint64_t n)
{
    static uint64_t base;
    struct mach_cpu *p = &M.cpu[0];
    uint64_t t0 = p->now;
    for (uint64_t i = 0; i < n; i++)
        p->now += mach_access(&M, p, HIER_LOAD, addr(node, 0, base + i)) / 16 + 1;
    base += n;
    return (double)n * 64 / ((double)(p->now - t0) / M.ticks_per_sec) / 1e9;
}

/* Measured: COS 2 limited to 8/8 = 1 GB/s reads its socket's slow node (2)
 * and the other socket's (3) at 1 GB/s within 5%; its DRAM reads and COS 0
 * are not held; unlimited, the same stream runs at more than 2 GB/s. */
static void test_smba_effect(void **state)
{
    (void)state;
    run(0, 0, 2, 1);
    double free_slow = stream(2, 20000);
    WR_OK(0, SMBW + 2, 8);
    double local = stream(2, 20000), remote = stream(3, 20000), dram = stream(0, 20000);
    run(0, 0, 0, 1);
    double other = stream(2, 20000);
    print_message("SMBA: unlimited %.3f GB/s; at 1 GB/s: slow %.3f, remote slow %.3f, DRAM "
                  "%.3f, COS 0 %.3f\n",
                  free_slow, local, remote, dram, other);
    if (fabs(local - 1) > 0.05 || fabs(remote - 1) > 0.05)
        fail_msg("SMBA at 1 GB/s: slow reads at %.3f and %.3f GB/s", local, remote);
    if (free_slow < 2 || dram < 2 || other < 2)
        fail_msg("unlimited streams at %.3f, %.3f, %.3f GB/s", free_slow, dram, other);
}

/* ======================= profile keys ======================= */

static void test_profile_checks(void **state)
{
    (void)state;
    static const char base[] = "name: t\n"
                               "vendor: %s\n"
                               "topology: {sockets: 1, modules: 2}\n"
                               "core: {frequency: 1GHz, cpi: 1}\n"
                               "caches:\n"
                               "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                               "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                               "  L2: {size: 4K, ways: 4, latency: 10}\n"
                               "  L3: {size: 16K, ways: 8, latency: 30, monitored: true,\n"
                               "       allocation: {classes: 4, cbm_len: 8%s}}\n"
                               "memory: {channels: 1, peak: 10GB/s, latency: 100ns}\n"
                               "qos:\n"
                               "  monitoring: {ids: 8, occupancy: true, %s}\n";
    static const struct {
        const char *vendor, *alloc, *mon, *msg;
    } cases[] = {
        {"amd", ", io: true", "total: true, bmec: true, abmc: 32, abmc_by_class: true", NULL},
        {"intel", "", "total: true, bmec: true",
         "test.yaml:13: qos.monitoring.bmec: BMEC is AMD's (CPUID 0x80000020); this is an intel "
         "profile"},
        {"intel", "", "total: true, abmc: 4",
         "test.yaml:13: qos.monitoring.abmc: ABMC is AMD's (CPUID 0x80000020); this is an intel "
         "profile"},
        {"intel", ", io: true", "total: true",
         "test.yaml:10: caches.L3.allocation.io: SDCIAE is AMD's (CPUID 0x80000020); this is an "
         "intel profile"},
        {"amd", "", "total: true, abmc: 33",
         "test.yaml:13: qos.monitoring.abmc: 33 is out of range (1..32)"},
        {"amd", "", "bmec: true",
         "test.yaml:13: qos.monitoring.bmec: BMEC configures bandwidth events, and neither total "
         "nor local is counted"},
        {"amd", "", "abmc: 2",
         "test.yaml:13: qos.monitoring.abmc: ABMC configures bandwidth events, and neither total "
         "nor local is counted"},
        {"amd", "", "local: true, abmc_by_class: true",
         "test.yaml:13: qos.monitoring.abmc_by_class: counting by COS is a capability of ABMC's "
         "counters, and abmc gives none"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[2048];
        snprintf(text, sizeof text, base, cases[i].vendor, cases[i].alloc, cases[i].mon);
        struct plat p;
        struct err e = {0};
        int rc = load_text(&p, text, &e);
        if (!cases[i].msg) {
            if (rc)
                fail_msg("case %zu: %s", i, e.msg);
            assert_true(p.mon.bmec && p.mon.abmc == 32 && p.mon.abmc_by_class &&
                        p.cache[PLAT_L3].alloc.io);
            continue;
        }
        assert_int_equal(rc, -QOSIM_EPARSE);
        assert_string_equal(e.msg, cases[i].msg);
    }
}

#define BMEC(t) cmocka_unit_test_setup_teardown(t, setup_bmec, teardown)
#define NONE(t) cmocka_unit_test_setup_teardown(t, setup_none, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BMEC(test_cpuid),
        NONE(test_absent),
        BMEC(test_evt_cfg_reset_reserved_scope),
        BMEC(test_bmec_each_bit),
        BMEC(test_bmec_defaults),
        BMEC(test_bmec_write_clears_u_once),
        BMEC(test_bmec_untracked_u),
        BMEC(test_ext_cfg),
        BMEC(test_abmc_gp_until_enabled),
        BMEC(test_abmc_cfg_fields),
        BMEC(test_abmc_counts_exactly),
        BMEC(test_abmc_reassign_resets),
        BMEC(test_abmc_survives_tracker),
        BMEC(test_abmc_by_cos),
        BMEC(test_abmc_invalid),
        BMEC(test_abmc_transition),
        BMEC(test_sdciae),
        BMEC(test_smba_regs),
        BMEC(test_smba_effect),
        NONE(test_profile_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
