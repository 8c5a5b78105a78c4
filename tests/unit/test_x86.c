/* Unit tests for hw/x86.c: the register semantics of Intel RDT and AMD PQoS
 * as docs/registers.md section 1 and the specs state them (SDM 17.16, the L2 CDP
 * paper, AMD pub. 56375), on the shipped profiles intel-xeon, intel-atom and
 * amd-epyc and on a few small profiles written here. Every expected value is
 * derived from a profile by hand, never read back from the model.
 *
 * Tests marked "Was a bug:" caught x86.c doing other than the specs say;
 * they keep it fixed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "tiny_plat.h"

#include "util/rng.h"

#define NTASK 4

/* MSR addresses not named in x86.h. */
enum { L3_CFG = 0xC81, L2_CFG = 0xC82, EVTSEL = 0xC8D, QM_CTR = 0xC8E, PQR = 0xC8F };
enum { L3M = 0xC90, L2M = 0xD10, MBA = 0xD50 };
#define AMD_BW 0xC0000200u

#define E_BIT (1ull << 63)
#define U_BIT (1ull << 62)

#define X86_FIXTURE_NTASK NTASK
#include "x86_fixture.h"
#include "hw/x86_console.h"

/* ---- building machines ---- */

/* A small Intel or AMD machine (tiny_plat.h's): 2 sockets x 2 modules = 4
 * CPUs, 2 L3 domains (CPUs 0-1 and 2-3), L3 16 KiB of 8 ways (256 lines,
 * one mask bit per way), 4 COS with CDP, 8 RMIDs. */
static void boot_tiny(const char *vendor, const char *sparse, const char *total, unsigned width,
                      unsigned scale)
{
    char alloc[64], mon[128], text[2048];
    snprintf(alloc, sizeof alloc, "classes: 4, cbm_len: 8, cdp: true, sparse: %s", sparse);
    snprintf(mon, sizeof mon,
             "ids: 8, occupancy: true, total: %s, local: true, width: %u, scale: %u", total, width,
             scale);
    tiny_plat_text(text, sizeof text,
                   &(struct tiny_opt){
                       .name = "tiny", .vendor = vendor, .allocation = alloc, .monitoring = mon});
    boot_text(text);
}

/* ---- register access with the failing line in the message ---- */

static void wr_expect(unsigned cpu, uint32_t msr, uint64_t v, enum hw_fault want, int line)
{
    enum hw_fault f = x86_wrmsr(&X, cpu, msr, v);
    if (f != want)
        fail_msg("line %d: wrmsr(cpu %u, 0x%x, 0x%llx) = %s, want %s", line, cpu, msr,
                 (unsigned long long)v, hw_fault_name(f), hw_fault_name(want));
}

static uint64_t rd_at(unsigned cpu, uint32_t msr, int line)
{
    uint64_t v = 0;
    enum hw_fault f = x86_rdmsr(&X, cpu, msr, &v);
    if (f != HW_OK)
        fail_msg("line %d: rdmsr(cpu %u, 0x%x) = %s", line, cpu, msr, hw_fault_name(f));
    return v;
}

static void rd_gp_at(unsigned cpu, uint32_t msr, int line)
{
    uint64_t v = 0;
    enum hw_fault f = x86_rdmsr(&X, cpu, msr, &v);
    if (f != HW_GP)
        fail_msg("line %d: rdmsr(cpu %u, 0x%x) = %s, want #GP", line, cpu, msr, hw_fault_name(f));
}

#define WR_OK(cpu, msr, v) wr_expect((cpu), (msr), (v), HW_OK, __LINE__)
#define WR_GP(cpu, msr, v) wr_expect((cpu), (msr), (v), HW_GP, __LINE__)
#define RD(cpu, msr)       rd_at((cpu), (msr), __LINE__)
#define RD_GP(cpu, msr)    rd_gp_at((cpu), (msr), __LINE__)
/* The MSR reads back exactly want. */
#define RD_IS(cpu, msr, want)                                                                      \
    do {                                                                                           \
        uint64_t got_ = RD((cpu), (msr)), want_ = (want);                                          \
        if (got_ != want_)                                                                         \
            fail_msg("line %d: rdmsr(cpu %u, 0x%x) = 0x%llx, want 0x%llx", __LINE__,               \
                     (unsigned)(cpu), (unsigned)(msr), (unsigned long long)got_,                   \
                     (unsigned long long)want_);                                                   \
    } while (0)
/* Neither rdmsr nor wrmsr reaches the MSR. */
#define ABSENT(cpu, msr)                                                                           \
    do {                                                                                           \
        RD_GP((cpu), (msr));                                                                       \
        WR_GP((cpu), (msr), 0);                                                                    \
        WR_GP((cpu), (msr), 1);                                                                    \
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

static uint64_t pqr(unsigned cos, unsigned rmid)
{
    return (uint64_t)cos << 32 | rmid;
}

static uint64_t evtsel(unsigned evt, unsigned rmid)
{
    return (uint64_t)rmid << 32 | evt;
}

/* QM_CTR as CPU cpu reads it after selecting (evt, rmid). */
static uint64_t counter(unsigned cpu, unsigned evt, unsigned rmid)
{
    WR_OK(cpu, EVTSEL, evtsel(evt, rmid));
    return RD(cpu, QM_CTR);
}

/* ---- driving the machine ---- */

static uint64_t addr(unsigned node, unsigned task, uint64_t line)
{
    return mach_phys_base(node, task) | (0x100000 + line * 64);
}

/* Task `task` runs on cpu (the association stays what PQR_ASSOC says). */
static void run_on(unsigned cpu, int task)
{
    mach_set_assoc(&M, cpu, task, M.cpu[cpu].cls, M.cpu[cpu].tag);
}

/* n distinct loads by cpu of lines first.. of task's space on node. */
static void loads(unsigned cpu, unsigned node, unsigned task, uint64_t first, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        mach_access(&M, &M.cpu[cpu], HIER_LOAD, addr(node, task, first + i));
}

static uint64_t ways(enum plat_level l, uint64_t cbm)
{
    return mach_cbm_ways(&M, l, cbm);
}

/* The machine's masks for class cls of one cache instance are (data, code). */
#define MASKS_ARE(l, inst, cls, data, code)                                                        \
    do {                                                                                           \
        uint64_t d_ = mach_get_mask(&M, (l), (inst), (cls), MACH_DATA),                            \
                 c_ = mach_get_mask(&M, (l), (inst), (cls), MACH_CODE);                            \
        uint64_t wd_ = ways((l), (data)), wc_ = ways((l), (code));                                 \
        if (d_ != wd_ || c_ != wc_)                                                                \
            fail_msg("line %d: L%d inst %u class %u masks data 0x%llx code 0x%llx, want "          \
                     "0x%llx 0x%llx",                                                              \
                     __LINE__, (l) == PLAT_L3 ? 3 : 2, (unsigned)(inst), (unsigned)(cls),          \
                     (unsigned long long)d_, (unsigned long long)c_, (unsigned long long)wd_,      \
                     (unsigned long long)wc_);                                                     \
    } while (0)

/* ======================= CPUID ======================= */

/* "GenuineIntel" and "AuthenticAMD" as EBX, EDX, ECX hold them (little-endian). */
#define GENU 0x756e6547u
#define INEI 0x49656e69u
#define NTEL 0x6c65746eu
#define AUTH 0x68747541u
#define ENTI 0x69746e65u
#define CAMD 0x444d4163u

static void test_cpuid_vendor_intel(void **state)
{
    (void)state;
    /* Intel's basic leaves reach 1FH, the V2 extended topology leaf. */
    CPUID_IS(0x0, 0, 0x1F, GENU, NTEL, INEI);
    uint32_t r[4];
    x86_cpuid(&X, 0, 0, 0, r);
    char s[13] = {0};
    memcpy(s, &r[1], 4);
    memcpy(s + 4, &r[3], 4);
    memcpy(s + 8, &r[2], 4);
    assert_string_equal(s, "GenuineIntel");
    /* Intel's extended leaves reach 0x80000008 and name no vendor. */
    CPUID_IS(0x80000000, 0, 0x80000008, 0, 0, 0);
}

static void test_cpuid_vendor_amd(void **state)
{
    (void)state;
    /* AMD's stop at 10H (PQE): it has no leaves 4, 0BH or 1FH here. */
    CPUID_IS(0x0, 0, 0x10, AUTH, CAMD, ENTI);
    uint32_t r[4];
    x86_cpuid(&X, 0, 0, 0, r);
    char s[13] = {0};
    memcpy(s, &r[1], 4);
    memcpy(s + 4, &r[3], 4);
    memcpy(s + 8, &r[2], 4);
    assert_string_equal(s, "AuthenticAMD");
    /* AMD's extended leaves reach 0x80000020 (L3BE) and repeat the vendor. */
    CPUID_IS(0x80000000, 0, 0x80000020, AUTH, CAMD, ENTI);
}

/* intel-xeon: 176 RMIDs, width 24, scale 64, all three events. */
static void test_cpuid_xeon_monitoring(void **state)
{
    (void)state;
    CPUID_IS(0x7, 0, 0, 1u << 12 | 1u << 15, 0, 0); /* PQM and PQE */
    CPUID_IS(0x7, 1, 0, 0, 0, 0);
    CPUID_IS(0xF, 0, 0, 175, 0, 1u << 1);
    CPUID_IS(0xF, 1, 24 - 24, 64, 175, 0x7);
    CPUID_IS(0xF, 2, 0, 0, 0, 0);
}

/* intel-xeon: L3 CAT 16 COS x 11 bits, shareable 0x600, CDP; L2 CAT 8 COS x
 * 16 bits, CDP; MBA 8 COS, max delay 90, linear. No AMD leaves. */
static void test_cpuid_xeon_allocation(void **state)
{
    (void)state;
    CPUID_IS(0x10, 0, 0, 1u << 1 | 1u << 2 | 1u << 3, 0, 0);
    CPUID_IS(0x10, 1, 11 - 1, 0x600, 1u << 2, 15);
    CPUID_IS(0x10, 2, 16 - 1, 0, 1u << 2, 7);
    CPUID_IS(0x10, 3, 90 - 1, 0, 1u << 2, 7);
    CPUID_IS(0x80000008, 0, 0, 0, 0, 0);
    CPUID_IS(0x80000020, 0, 0, 0, 0, 0);
    CPUID_IS(0x80000020, 1, 0, 0, 0, 0);
}

/* intel-atom: L2 CAT only (8 COS x 18 bits, CDP); no monitoring, no L3, no MBA. */
static void test_cpuid_atom(void **state)
{
    (void)state;
    CPUID_IS(0x0, 0, 0x1F, GENU, NTEL, INEI);
    CPUID_IS(0x7, 0, 0, 1u << 15, 0, 0);
    CPUID_IS(0xF, 0, 0, 0, 0, 0);
    CPUID_IS(0xF, 1, 0, 0, 0, 0);
    CPUID_IS(0x10, 0, 0, 1u << 2, 0, 0);
    CPUID_IS(0x10, 1, 0, 0, 0, 0);
    CPUID_IS(0x10, 2, 18 - 1, 0, 1u << 2, 7);
    CPUID_IS(0x10, 3, 0, 0, 0, 0);
}

/* amd-epyc: 256 RMIDs, AMD reads EAX 0 (width 44 is not reported), scale 64. */
static void test_cpuid_epyc_monitoring(void **state)
{
    (void)state;
    CPUID_IS(0x7, 0, 0, 1u << 12 | 1u << 15, 0, 0);
    CPUID_IS(0xF, 0, 0, 255, 0, 1u << 1);
    CPUID_IS(0xF, 1, 0, 64, 255, 0x7);
}

/* amd-epyc: L3 16 COS x 16 bits with CDP (no sparse bit: that is Intel's;
 * AMD masks are always arbitrary); no L2 CAT, no MBA; L3BE with BW_LEN 11
 * and 16 COS. */
static void test_cpuid_epyc_allocation(void **state)
{
    (void)state;
    CPUID_IS(0x10, 0, 0, 1u << 1, 0, 0);
    CPUID_IS(0x10, 1, 16 - 1, 0, 1u << 2, 15);
    CPUID_IS(0x10, 2, 0, 0, 0, 0);
    CPUID_IS(0x10, 3, 0, 0, 0, 0);
    /* ECX: 64 logical CPUs per package (NC 63), 6 APIC ID bits below the
     * package (1 thread, 3 core, 2 die bits). */
    CPUID_IS(0x80000008, 0, 0, 1u << 6, 6u << 12 | 63, 0);
    CPUID_IS(0x80000020, 0, 0, 1u << 1, 0, 0);
    CPUID_IS(0x80000020, 1, 11, 0, 0, 15);
}

/* Profile fields reach their CPUID fields: width 32 -> EAX 8, scale 128,
 * no total event -> EDX 0b101, sparse -> 0x10.1 ECX[3]. */
static void test_cpuid_custom_fields(void **state)
{
    (void)state;
    boot_tiny("intel", "true", "false", 32, 128);
    CPUID_IS(0xF, 0, 0, 7, 0, 1u << 1);
    CPUID_IS(0xF, 1, 32 - 24, 128, 7, 0x5);
    CPUID_IS(0x10, 0, 0, 1u << 1, 0, 0);
    CPUID_IS(0x10, 1, 8 - 1, 0, 1u << 2 | 1u << 3, 3);
    /* The same profile on AMD: EAX reads 0, and ECX[3] stays clear. */
    boot_tiny("amd", "true", "true", 32, 64);
    CPUID_IS(0xF, 1, 0, 64, 7, 0x7);
    CPUID_IS(0x10, 1, 8 - 1, 0, 1u << 2, 3);
}

/* Was a bug: an AMD platform with L3 bandwidth enforcement but no cache allocation
 * reports 0x80000008 EBX[6] (BE) and 0x80000020, yet leaves CPUID.7.0
 * EBX[15] (PQE) clear. 56375, "Presence and Capabilities": "When PQE support
 * is indicated by CPUID function 0x7, EBX bit 15, CPUID function 0x80000008
 * with ECX = 0 will return an indication in EBX bit 6 that AMD Bandwidth
 * Enforcement is supported" -- BE is a PQE sub-feature, so a driver that
 * follows the enumeration flow never finds it. x86_cpuid computes PQE from
 * L3/L2 CAT and MBA only, not L3BE. */
static void test_cpuid_amd_be_only_sets_pqe(void **state)
{
    (void)state;
    char text[2048];
    /* The tiny machine on one socket of 2 L3 domains (tiny_plat.h), no
     * remote memory: bandwidth enforcement alone. */
    tiny_plat_text(text, sizeof text,
                   &(struct tiny_opt){.name = "amd-be-only",
                                      .vendor = "amd",
                                      .topology = "sockets: 1, domains: 2, modules: 2",
                                      .local_only = 1,
                                      .qos = "  bandwidth: {kind: rate, classes: 4, max: 11}\n"});
    boot_text(text);
    /* ECX: 2 dies x 2 cores, NC 3 and 2 APIC ID bits (1 core, 1 die). */
    CPUID_IS(0x80000008, 0, 0, 1u << 6, 2u << 12 | 3, 0);
    CPUID_IS(0x80000020, 0, 0, 1u << 1, 0, 0);
    CPUID_IS(0x80000020, 1, 11, 0, 0, 3);
    CPUID_IS(0x10, 0, 0, 0, 0, 0);
    /* The registers are there: 4 BW_CONTROL MSRs, PQR_ASSOC with COS 0-3. */
    RD_IS(0, AMD_BW + 3, 0x800);
    RD_GP(0, AMD_BW + 4);
    WR_OK(0, PQR, pqr(3, 0));
    WR_GP(0, PQR, pqr(4, 0));
    CPUID_IS(0x7, 0, 0, 1u << 15, 0, 0); /* x86.c reported 0 */
}

/* ======================= reset values ======================= */

static void test_reset_xeon(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 32; c++) {
        RD_IS(c, PQR, 0);
        RD_IS(c, EVTSEL, 0);
        assert_int_equal(M.cpu[c].cls, 0);
        assert_int_equal(M.cpu[c].tag, 0);
    }
    for (unsigned d = 0; d < 2; d++) {
        unsigned c = d * 16;
        RD_IS(c, L3_CFG, 0);
        for (unsigned n = 0; n < 16; n++) {
            RD_IS(c, L3M + n, 0x7ff);
            MASKS_ARE(PLAT_L3, d, n, 0x7ff, 0x7ff);
        }
        for (unsigned n = 0; n < 8; n++) {
            RD_IS(c, MBA + n, 0);
            assert_int_equal(M.bw[d].set[n].delay_pct, 0);
        }
    }
    for (unsigned core = 0; core < 16; core++) {
        unsigned c = core * 2;
        RD_IS(c, L2_CFG, 0);
        for (unsigned n = 0; n < 8; n++) {
            RD_IS(c + 1, L2M + n, 0xffff);
            MASKS_ARE(PLAT_L2, core, n, 0xffff, 0xffff);
        }
    }
    assert_int_equal(ways(PLAT_L3, 0x7ff), 0x7ff); /* one way per bit */
}

static void test_reset_atom(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 24; c++)
        RD_IS(c, PQR, 0);
    for (unsigned mod = 0; mod < 6; mod++) {
        RD_IS(mod * 4, L2_CFG, 0);
        for (unsigned n = 0; n < 8; n++) {
            RD_IS(mod * 4 + 3, L2M + n, 0x3ffff);
            MASKS_ARE(PLAT_L2, mod, n, 0x3ffff, 0x3ffff);
        }
    }
}

static void test_reset_epyc(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 128; c++) {
        RD_IS(c, PQR, 0);
        RD_IS(c, EVTSEL, 0);
    }
    for (unsigned d = 0; d < 8; d++) {
        unsigned c = d * 16;
        RD_IS(c, L3_CFG, 0);
        for (unsigned n = 0; n < 16; n++) {
            RD_IS(c, L3M + n, 0xffff);
            MASKS_ARE(PLAT_L3, d, n, 0xffff, 0xffff);
            RD_IS(c + 15, AMD_BW + n, 1u << 11); /* U = 1: unlimited */
            assert_true(M.bw[d].set[n].rate == 0);
        }
    }
}

/* x86_reset puts back every register, and the machine with them. */
static void test_reset_after_writes(void **state)
{
    (void)state;
    WR_OK(3, PQR, pqr(5, 9));
    WR_OK(3, EVTSEL, evtsel(2, 9));
    WR_OK(3, L3M + 2, 0x00f);
    WR_OK(3, L2M + 1, 0x00f0);
    WR_OK(3, MBA + 4, 60);
    WR_OK(20, L3_CFG, 1);
    WR_OK(2, L2_CFG, 1);
    x86_reset(&X);
    RD_IS(3, PQR, 0);
    RD_IS(3, EVTSEL, 0);
    RD_IS(3, L3M + 2, 0x7ff);
    RD_IS(3, L2M + 1, 0xffff);
    RD_IS(3, MBA + 4, 0);
    RD_IS(20, L3_CFG, 0);
    RD_IS(2, L2_CFG, 0);
    assert_int_equal(M.cpu[3].cls, 0);
    assert_int_equal(M.cpu[3].tag, 0);
    MASKS_ARE(PLAT_L3, 0, 2, 0x7ff, 0x7ff);
    MASKS_ARE(PLAT_L3, 1, 0, 0x7ff, 0x7ff);
    MASKS_ARE(PLAT_L2, 1, 1, 0xffff, 0xffff);
    assert_int_equal(M.bw[0].set[4].delay_pct, 0);
}

/* ======================= PQR_ASSOC ======================= */

static void pqr_reserved(unsigned cpu, uint64_t valid)
{
    WR_OK(cpu, PQR, valid);
    for (unsigned b = 10; b < 32; b++) {
        if (x86_wrmsr(&X, cpu, PQR, valid | 1ull << b) != HW_GP)
            fail_msg("PQR_ASSOC reserved bit %u accepted", b);
        RD_IS(cpu, PQR, valid);
    }
}

/* Bits 31:10 are reserved, must be zero (56375 PQR_ASSOC; SDM 17.16.6). */
static void test_pqr_reserved_bits(void **state)
{
    (void)state;
    pqr_reserved(3, pqr(2, 3));
    boot("amd-epyc");
    pqr_reserved(70, pqr(15, 255));
}

static void test_pqr_rmid_range(void **state)
{
    (void)state;
    WR_OK(1, PQR, pqr(0, 175));
    WR_GP(1, PQR, pqr(0, 176));
    WR_GP(1, PQR, pqr(0, 1023));
    RD_IS(1, PQR, pqr(0, 175));
    boot("amd-epyc");
    WR_OK(1, PQR, pqr(0, 255));
    WR_GP(1, PQR, pqr(0, 256));
    RD_IS(1, PQR, pqr(0, 255));
    /* No monitoring: CPUID.F.0 EBX is 0, so RMID 0 is the only one. */
    boot("intel-atom");
    WR_OK(1, PQR, pqr(1, 0));
    WR_GP(1, PQR, pqr(0, 1));
}

static void test_pqr_cos_range(void **state)
{
    (void)state;
    /* intel-xeon: COS_MAX 15 (L3); L2 and MBA have fewer. */
    WR_OK(0, PQR, pqr(15, 0));
    WR_GP(0, PQR, pqr(16, 0));
    WR_GP(0, PQR, pqr(0xffffffffu, 0));
    WR_GP(0, PQR, 1ull << 63);
    RD_IS(0, PQR, pqr(15, 0));
    boot("intel-atom");
    WR_OK(0, PQR, pqr(7, 0));
    WR_GP(0, PQR, pqr(8, 0));
    boot("amd-epyc");
    WR_OK(0, PQR, pqr(15, 0));
    WR_GP(0, PQR, pqr(16, 0));
}

/* L3 CDP on halves COS (16 -> 8) for the CPUs of that L3 only. */
static void test_pqr_cos_limit_l3_cdp(void **state)
{
    (void)state;
    WR_OK(0, PQR, pqr(15, 0));
    WR_OK(0, PQR, 0); /* software moves threads to COS 0 before toggling CDP */
    WR_OK(7, L3_CFG, 1);
    for (unsigned c = 0; c < 16; c += 5) {
        WR_OK(c, PQR, pqr(7, 1));
        WR_GP(c, PQR, pqr(8, 1));
        WR_GP(c, PQR, pqr(15, 1));
    }
    WR_OK(16, PQR, pqr(15, 0)); /* the other socket's L3 has CDP off */
    WR_OK(0, PQR, 0);
    WR_OK(0, L3_CFG, 0);
    WR_OK(0, PQR, pqr(15, 0));
}

/* L2 CDP on intel-atom: COS_MAX_CDP = 7 >> 1 = 3 within the module. */
static void test_pqr_cos_limit_l2_cdp(void **state)
{
    (void)state;
    WR_OK(1, PQR, pqr(7, 0));
    WR_OK(1, PQR, 0);
    WR_OK(0, L2_CFG, 1);
    for (unsigned c = 0; c < 4; c++) {
        WR_OK(c, PQR, pqr(3, 0));
        WR_GP(c, PQR, pqr(4, 0));
        WR_GP(c, PQR, pqr(7, 0));
    }
    WR_OK(4, PQR, pqr(7, 0)); /* module 1: CDP off */
    WR_OK(23, PQR, pqr(7, 0));
    WR_OK(2, L2_CFG, 0);
    WR_OK(1, PQR, pqr(7, 0));
}

/* PQR_ASSOC is per logical processor, and it is the CPU's class and tag. */
static void test_pqr_per_thread_and_effects(void **state)
{
    (void)state;
    run_on(1, 2);
    WR_OK(1, L3M + 3, 0x00f);
    WR_OK(1, L2M + 3, 0x00ff);
    WR_OK(1, PQR, pqr(3, 17));
    RD_IS(1, PQR, pqr(3, 17));
    RD_IS(0, PQR, 0); /* its SMT sibling */
    RD_IS(2, PQR, 0);
    RD_IS(17, PQR, 0);
    assert_int_equal(M.cpu[1].cls, 3);
    assert_int_equal(M.cpu[1].tag, 17);
    assert_int_equal(M.cpu[1].task, 2); /* the running task is not the register's */
    assert_int_equal(M.cpu[0].cls, 0);
    assert_int_equal(M.cpu[0].tag, 0);
    /* The CPU now fills with class 3's masks. */
    assert_int_equal(M.cpu[1].m3[0][MACH_DATA], ways(PLAT_L3, 0x00f));
    assert_int_equal(M.cpu[1].m3[0][MACH_CODE], ways(PLAT_L3, 0x00f));
    assert_int_equal(M.cpu[1].m2[0][MACH_DATA], ways(PLAT_L2, 0x00ff));
    assert_int_equal(M.cpu[0].m3[0][MACH_DATA], ways(PLAT_L3, 0x7ff));
    /* A refused write changes nothing. */
    WR_GP(1, PQR, pqr(16, 17));
    assert_int_equal(M.cpu[1].cls, 3);
    assert_int_equal(M.cpu[1].tag, 17);
    WR_OK(1, PQR, pqr(0, 0));
    assert_int_equal(M.cpu[1].cls, 0);
    assert_int_equal(M.cpu[1].tag, 0);
}

/* ======================= QM_EVTSEL ======================= */

static void evtsel_rules(unsigned cpu, unsigned maxrmid)
{
    uint64_t valid = evtsel(2, maxrmid);
    WR_OK(cpu, EVTSEL, valid);
    for (unsigned b = 8; b < 64; b++) {
        if (b >= 32 && b < 42)
            continue; /* RMID */
        if (x86_wrmsr(&X, cpu, EVTSEL, valid | 1ull << b) != HW_GP)
            fail_msg("QM_EVTSEL reserved bit %u accepted", b);
        RD_IS(cpu, EVTSEL, valid);
    }
    WR_GP(cpu, EVTSEL, evtsel(1, maxrmid + 1));
    WR_GP(cpu, EVTSEL, evtsel(1, 1023));
    RD_IS(cpu, EVTSEL, valid);
    /* Undefined event IDs are accepted here; QM_CTR reports E for them. */
    WR_OK(cpu, EVTSEL, evtsel(0xff, 0));
    WR_OK(cpu, EVTSEL, evtsel(0, maxrmid));
}

/* EvtID [7:0], RMID [41:32]; other bits and RMID > max RMID #GP (56375). */
static void test_evtsel_reserved_and_rmid(void **state)
{
    (void)state;
    evtsel_rules(5, 175);
    boot("amd-epyc");
    evtsel_rules(5, 255);
}

/* Intel: QM_EVTSEL per logical processor. */
static void test_evtsel_scope_intel(void **state)
{
    (void)state;
    WR_OK(0, EVTSEL, evtsel(1, 4));
    RD_IS(0, EVTSEL, evtsel(1, 4));
    RD_IS(1, EVTSEL, 0);
    RD_IS(15, EVTSEL, 0);
    WR_OK(1, EVTSEL, evtsel(3, 9));
    RD_IS(0, EVTSEL, evtsel(1, 4));
}

/* AMD: "The QM_EVTSEL register is shared by all the processors in a QOS
 * domain" (56375): CPUs 0-15 are one CCX, 16-31 the next. */
static void test_evtsel_scope_amd(void **state)
{
    (void)state;
    WR_OK(0, EVTSEL, evtsel(1, 4));
    for (unsigned c = 0; c < 16; c++)
        RD_IS(c, EVTSEL, evtsel(1, 4));
    RD_IS(16, EVTSEL, 0);
    RD_IS(64, EVTSEL, 0);
    WR_OK(9, EVTSEL, evtsel(2, 200));
    RD_IS(0, EVTSEL, evtsel(2, 200));
    WR_OK(31, EVTSEL, evtsel(3, 1));
    RD_IS(16, EVTSEL, evtsel(3, 1));
    RD_IS(15, EVTSEL, evtsel(2, 200));
}

/* ======================= QM_CTR ======================= */

/* "The PQR_CTR register is not writable. Attempts to write it will cause a #GP." */
static void test_qm_ctr_write_gp(void **state)
{
    (void)state;
    WR_GP(0, QM_CTR, 0);
    WR_GP(0, QM_CTR, 1);
    RD(0, QM_CTR);
    boot("amd-epyc");
    WR_GP(0, QM_CTR, 0);
    WR_GP(100, QM_CTR, E_BIT);
    RD(100, QM_CTR);
}

static void error_events(unsigned cpu)
{
    static const unsigned bad[] = {0, 4, 5, 0x80, 0xff};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(counter(cpu, bad[i], 0), E_BIT);
    for (unsigned evt = 1; evt <= 3; evt++)
        assert_int_equal(counter(cpu, evt, 0) & (E_BIT | U_BIT), 0);
}

/* E (bit 63) for an event CPUID.F.1 EDX does not list; the count is 0. */
static void test_qm_ctr_error_event(void **state)
{
    (void)state;
    error_events(0);
    boot("amd-epyc");
    error_events(0);
    /* No total-bandwidth event: EvtID 2 is E, 1 and 3 are fine. */
    boot_tiny("intel", "false", "false", 24, 64);
    assert_int_equal(counter(0, 2, 3), E_BIT);
    assert_int_equal(counter(0, 1, 3), 0);
    assert_int_equal(counter(0, 3, 3), 0);
}

/* Occupancy: L3 lines of the RMID in the reading CPU's L3 x 64 / scale. */
static void test_qm_ctr_occupancy_intel(void **state)
{
    (void)state;
    run_on(0, 0);
    WR_OK(0, PQR, pqr(0, 5));
    loads(0, 0, 0, 0, 1000);
    /* 1000 lines, far below the 11 MiB L3: all stay. Scale 64 = the line. */
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 5), 1000);
    assert_int_equal(counter(0, 1, 5), mach_occupancy(&M, PLAT_L3, 0, 5) * 64 / 64);
    assert_int_equal(counter(0, 1, 5), 1000);
    assert_int_equal(counter(0, 1, 6), 0);
    assert_int_equal(counter(15, 1, 5), 1000); /* same L3, its own QM_EVTSEL */
    assert_int_equal(counter(16, 1, 5), 0);    /* the other socket's L3 */
    /* A second RMID on the same L3 from the SMT sibling. */
    run_on(1, 1);
    WR_OK(1, PQR, pqr(0, 6));
    loads(1, 0, 1, 0, 300);
    assert_int_equal(counter(0, 1, 6), 300);
    assert_int_equal(counter(0, 1, 5), 1000);
    assert_int_equal(counter(0, 1, 0), 0);
}

/* MBM: total counts every line the L3 reads, local only those of the CPU's
 * own node; at scale 64 a count is a line. */
static void test_qm_ctr_mbm_intel(void **state)
{
    (void)state;
    run_on(2, 0);
    WR_OK(2, PQR, pqr(1, 7));
    loads(2, 0, 0, 0, 600);   /* node 0: local to socket 0 */
    loads(2, 1, 0, 600, 400); /* node 1: remote */
    assert_int_equal(counter(2, 2, 7), 1000);
    assert_int_equal(counter(2, 3, 7), 600);
    assert_int_equal(counter(2, 2, 7), mach_bytes(&M, 0, 7, MACH_CTR_TOTAL));
    assert_int_equal(counter(3, 2, 7), 1000);
    assert_int_equal(counter(16, 2, 7), 0);
    assert_int_equal(counter(2, 2, 8), 0);
    /* Hits count nothing: the same 600 lines again stay in the caches. */
    loads(2, 0, 0, 0, 600);
    assert_int_equal(counter(2, 2, 7), 1000);
}

/* Rate counters roll over at 2^width: 300 lines on an 8-bit counter read 44. */
static void test_qm_ctr_wrap(void **state)
{
    (void)state;
    /* An 8-bit counter (AMD: the width is the profile's, CPUID.F.1 EAX stays
     * 0; Intel profiles must have at least 24 bits). */
    boot_tiny("amd", "false", "true", 8, 64);
    run_on(0, 0);
    WR_OK(0, PQR, pqr(0, 1));
    loads(0, 0, 0, 0, 300);
    assert_int_equal(counter(0, 2, 1), 300 - 256);
    assert_int_equal(counter(0, 3, 1), 300 - 256);
    loads(0, 0, 0, 300, 212);
    assert_int_equal(counter(0, 2, 1), 0); /* 512 */
    loads(0, 0, 0, 512, 1);
    assert_int_equal(counter(0, 2, 1), 1);
    boot_tiny("amd", "false", "true", 8, 64);
    run_on(0, 0);
    WR_OK(0, PQR, pqr(0, 1));
    loads(0, 0, 0, 0, 300);
    assert_int_equal(counter(0, 2, 1), 44);
}

/* Count x conversion factor = bytes: at scale 128 a count is two lines. */
static void test_qm_ctr_scale(void **state)
{
    (void)state;
    boot_tiny("intel", "false", "true", 24, 128);
    run_on(2, 0);
    WR_OK(2, PQR, pqr(0, 3));
    loads(2, 1, 0, 0, 100); /* CPU 2 is on socket 1: node 1 is local */
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 1, 3), 100);
    assert_int_equal(counter(2, 1, 3), 100 * 64 / 128);
    assert_int_equal(counter(2, 2, 3), 100 * 64 / 128);
    assert_int_equal(counter(2, 3, 3), 100 * 64 / 128);
    assert_int_equal(counter(0, 2, 3), 0);
}

/* AMD U (bit 62): a bandwidth event for an RMID no CPU of the domain has
 * been associated with; never for occupancy; RMID 0 is in use from reset. */
static void test_amd_u_bit(void **state)
{
    (void)state;
    assert_int_equal(counter(0, 2, 9), U_BIT);
    assert_int_equal(counter(0, 3, 9), U_BIT);
    assert_int_equal(counter(0, 1, 9), 0);
    assert_int_equal(counter(0, 2, 0), 0);
    assert_int_equal(counter(100, 3, 0), 0);
    /* Domain 1 (CPU 16) starts tracking RMID 9: domain 0 still does not. */
    WR_OK(16, PQR, pqr(0, 9));
    assert_int_equal(counter(0, 2, 9), U_BIT);
    assert_int_equal(counter(16, 2, 9), 0);
    assert_int_equal(counter(31, 3, 9), 0);
    /* A CPU of domain 0 uses it: tracked from then on, the count starts at 0. */
    WR_OK(5, PQR, pqr(0, 9));
    assert_int_equal(counter(0, 2, 9), 0);
    assert_int_equal(counter(0, 3, 9), 0);
    /* 10,000 lines in order: the L3 is the L2's victim cache, so it holds
     * what the core's 512 KiB L2 (8,192 lines, 1,024 sets of 8) evicted:
     * 784 sets took 10 lines and gave up 2, 240 took 9 and gave up 1. */
    run_on(5, 1);
    loads(5, 0, 1, 0, 10000);
    assert_int_equal(counter(0, 2, 9), 10000);
    assert_int_equal(counter(0, 3, 9), 10000);
    assert_int_equal(counter(0, 1, 9), 10000 - 8192);
    /* Still another RMID is untracked in domain 0. */
    assert_int_equal(counter(0, 2, 10), U_BIT);
    assert_int_equal(counter(0, 1, 10), 0);
    /* E wins over U for an undefined event. */
    assert_int_equal(counter(0, 4, 10), E_BIT);
}

/* AMD counts per L3 domain (CCX): another CCX of the same socket sees none. */
static void test_amd_counts_per_domain(void **state)
{
    (void)state;
    run_on(17, 0);
    WR_OK(17, PQR, pqr(2, 3));
    loads(17, 0, 0, 0, 250);
    loads(17, 1, 0, 250, 50); /* the other socket's memory */
    WR_OK(0, PQR, pqr(0, 3)); /* domain 0 tracks RMID 3 too */
    /* The 300 lines are all in CPU 17's L2: its CCX's victim L3 holds none
     * of them yet. */
    assert_int_equal(counter(16, 1, 3), 0);
    assert_int_equal(counter(16, 2, 3), 300);
    assert_int_equal(counter(16, 3, 3), 250);
    assert_int_equal(counter(0, 1, 3), 0);
    assert_int_equal(counter(0, 2, 3), 0);
    /* 9,000 more: the L2 (8,192 lines) gives the L3 the surplus. */
    loads(17, 0, 0, 300, 9000);
    assert_int_equal(counter(16, 1, 3), 9300 - 8192);
    assert_int_equal(counter(16, 1, 3), mach_occupancy(&M, PLAT_L3, 1, 3));
    assert_int_equal(counter(0, 1, 3), 0);
}

/* Was a bug: "When the hardware begins tracking an RMID which it was not
 * previously tracking, it will clear the QM_CTR for the new RMID" (56375,
 * "Platform QOS Monitoring of L3 External Bandwidth"). After x86_reset the
 * domain tracks only RMID 0 (QM_CTR of RMID 9 reads U, correctly), but the
 * PQR_ASSOC write that starts tracking RMID 9 again does not clear its
 * count: x86.c sets tracked[] and keeps reading the machine's old bytes. */
static void test_amd_tracking_clears_counter(void **state)
{
    (void)state;
    run_on(0, 0);
    WR_OK(0, PQR, pqr(0, 9));
    loads(0, 0, 0, 0, 100);
    assert_int_equal(counter(0, 2, 9), 100);
    x86_reset(&X);
    assert_int_equal(counter(0, 2, 9), U_BIT);
    WR_OK(0, PQR, pqr(0, 9));
    assert_int_equal(counter(0, 2, 9), 0); /* x86.c read 100 */
    loads(0, 0, 0, 100, 50);
    assert_int_equal(counter(0, 2, 9), 50); /* x86.c read 150 */
}

/* ---- AMD's bandwidth tracker: fewer tracked RMIDs than exist (56375) ---- */

/* 1 socket, 2 L3 domains of 2 cores x SMT 2: CPUs 0-3 are domain 0, CPUs 4-7
 * domain 1; one node, so every read is local; the tiny L3 (256 lines) as in
 * boot_tiny; 16 RMIDs. tracked: 0 leaves the key out (the default, ids). The
 * key is on line 17. */
static void tracker_text(char *text, size_t cap, const char *vendor, const char *bw,
                         unsigned tracked)
{
    char key[64] = "";
    if (tracked)
        snprintf(key, sizeof key, "    tracked: %u\n", tracked);
    snprintf(text, cap,
             "name: tracker\n"
             "vendor: %s\n"
             "topology: {sockets: 1, domains: 2, modules: 2, threads: 2}\n"
             "core: {frequency: 1GHz, cpi: 1, mlp: 1}\n"
             "caches:\n"
             "  L1I: {size: 1K, ways: 2, latency: 2}\n"
             "  L1D: {size: 1K, ways: 2, latency: 2}\n"
             "  L2: {size: 4K, ways: 4, latency: 10}\n"
             "  L3: {size: 16K, ways: 8, latency: 30, monitored: true}\n"
             "memory: {channels: 2, peak: 64GB/s, latency: 100ns}\n"
             "qos:\n"
             "  monitoring:\n"
             "    ids: 16\n"
             "    occupancy: true\n"
             "    total: %s\n"
             "    local: %s\n"
             "%s",
             vendor, bw, bw, key);
}

static void boot_tracker(const char *vendor, unsigned tracked)
{
    char text[2048];
    tracker_text(text, sizeof text, vendor, "true", tracked);
    boot_text(text);
}

/* Exactly the RMIDs 0..n-1 in mask are tracked in cpu's domain: they read a
 * count on both bandwidth events, every other reads U alone (56375). */
static void tracks_at(unsigned cpu, unsigned n, uint64_t mask, int line)
{
    for (unsigned r = 0; r < n; r++)
        for (unsigned evt = X86_EVT_TOTAL; evt <= X86_EVT_LOCAL; evt++) {
            uint64_t v = counter(cpu, evt, r);
            int want_u = !(mask >> r & 1);
            if (want_u ? v != U_BIT : (v & (U_BIT | E_BIT)) != 0)
                fail_msg("line %d: cpu %u event %u RMID %u reads 0x%llx, want %s", line, cpu, evt,
                         r, (unsigned long long)v, want_u ? "U alone" : "a count");
        }
}

#define TRACKS(cpu, mask) tracks_at((cpu), 16, (mask), __LINE__)

/* tracked: 4 on domains of 4 CPUs. The tracker fills, then each new RMID
 * drops the least recently associated one no CPU of the domain uses: not
 * the lowest RMID, not the first tracked, never one in PQR_ASSOC. A dropped
 * RMID reads U on both bandwidth events and its occupancy as before;
 * associated again, it counts from zero. */
static void test_amd_tracker_drops_oldest_unused(void **state)
{
    (void)state;
    boot_tracker("amd", 4);
    assert_int_equal(M.p.mon.tracked, 4);
    TRACKS(0, 1u << 0); /* RMID 0, in every PQR_ASSOC from reset */
    TRACKS(4, 1u << 0);
    run_on(0, 0);
    WR_OK(0, PQR, pqr(0, 1));
    loads(0, 0, 0, 0, 100);
    assert_int_equal(counter(0, X86_EVT_TOTAL, 1), 100);
    assert_int_equal(counter(0, X86_EVT_LOCAL, 1), 100);
    assert_int_equal(counter(0, X86_EVT_OCCUPANCY, 1), 100);
    WR_OK(1, PQR, pqr(0, 2));
    WR_OK(2, PQR, pqr(0, 3));
    TRACKS(0, 0x0f); /* full: 0 (CPU 3), 1 (CPU 0), 2 (CPU 1), 3 (CPU 2) */
    /* CPU 0 moves to RMID 4: RMID 0 is the oldest but CPU 3 uses it; RMID 1,
     * which CPU 0 just left, is the oldest no CPU uses. */
    WR_OK(0, PQR, pqr(0, 4));
    TRACKS(0, 1u << 0 | 1u << 2 | 1u << 3 | 1u << 4);
    assert_int_equal(counter(0, X86_EVT_TOTAL, 1), U_BIT);
    assert_int_equal(counter(3, X86_EVT_LOCAL, 1), U_BIT);
    assert_int_equal(counter(0, X86_EVT_OCCUPANCY, 1), 100); /* per line tag: unaffected */
    assert_int_equal(counter(2, X86_EVT_OCCUPANCY, 1), 100);
    TRACKS(4, 1u << 0); /* domain 1 has its own tracker */
    /* Recency is the last association, not the first: RMID 2 (tracked before
     * 4) is associated again on CPU 3 after 4 was, then every CPU but CPU 2
     * moves to RMID 0; 2 and 4 are unused, and 4 is the older. */
    WR_OK(3, PQR, pqr(0, 2));
    WR_OK(0, PQR, pqr(0, 0));
    WR_OK(1, PQR, pqr(0, 0));
    WR_OK(3, PQR, pqr(0, 0));
    TRACKS(0, 1u << 0 | 1u << 2 | 1u << 3 | 1u << 4); /* tracked RMIDs stay tracked */
    WR_OK(0, PQR, pqr(0, 5));
    TRACKS(0, 1u << 0 | 1u << 2 | 1u << 3 | 1u << 5);
    WR_OK(1, PQR, pqr(0, 6)); /* now 2 is the only one unused */
    TRACKS(0, 1u << 0 | 1u << 3 | 1u << 5 | 1u << 6);
    /* RMID 1 again, on CPU 2 (which leaves 3, now unused and the oldest): its
     * count restarts from zero, not from 100. */
    WR_OK(2, PQR, pqr(0, 1));
    TRACKS(0, 1u << 0 | 1u << 1 | 1u << 5 | 1u << 6);
    assert_int_equal(counter(0, X86_EVT_TOTAL, 1), 0);
    assert_int_equal(counter(0, X86_EVT_LOCAL, 1), 0);
    run_on(2, 1);
    loads(2, 0, 1, 0, 40);
    assert_int_equal(counter(3, X86_EVT_TOTAL, 1), 40);
    assert_int_equal(counter(3, X86_EVT_LOCAL, 1), 40);
    assert_int_equal(counter(3, X86_EVT_OCCUPANCY, 1), 140);
    TRACKS(4, 1u << 0);
}

/* An RMID in use is never U: 3000 random PQR_ASSOC writes on both domains
 * of the tracked: 4 machine, checked after each against a list model of the
 * tracker (least recently associated first). */
static void test_amd_tracker_in_use_never_u(void **state)
{
    (void)state;
    boot_tracker("amd", 4);
    unsigned order[2][4] = {{0}, {0}}, n[2] = {1, 1}, rmid[8] = {0};
    struct rng g;
    rng_seed(&g, 56375, 0);
    for (int step = 0; step < 3000; step++) {
        unsigned cpu = (unsigned)(rng_next(&g) % 8), r = (unsigned)(rng_next(&g) % 16), d = cpu / 4,
                 *o = order[d], i = 0;
        WR_OK(cpu, PQR, pqr(0, r));
        rmid[cpu] = r;
        while (i < n[d] && o[i] != r)
            i++;
        if (i == n[d] && n[d] == 4) /* full: the first one no CPU of d uses */
            for (i = 0; i < 4; i++) {
                unsigned c = 4 * d;
                while (c < 4 * d + 4 && rmid[c] != o[i])
                    c++;
                if (c == 4 * d + 4)
                    break;
            }
        if (i == 4)
            fail_msg("step %d: no RMID to drop", step);
        if (i < n[d]) { /* r is renewed, or o[i] dropped: close the gap */
            memmove(&o[i], &o[i + 1], (n[d] - i - 1) * sizeof *o);
            n[d]--;
        }
        o[n[d]++] = r;
        uint64_t want = 0;
        for (i = 0; i < n[d]; i++)
            want |= 1ull << o[i];
        for (unsigned c = 4 * d; c < 4 * d + 4; c++)
            if (counter(c, X86_EVT_TOTAL, rmid[c]) & U_BIT)
                fail_msg("step %d: CPU %u's RMID %u reads U", step, c, rmid[c]);
        tracks_at(cpu, 16, want, __LINE__);
        if (step > 100 && n[d] != 4) /* full by then, and it stays full */
            fail_msg("step %d: %u RMIDs tracked", step, n[d]);
    }
}

/* Without the key AMD tracks every RMID (tracked = ids), and Intel always
 * does: after all 16 RMIDs went through domain 0, none reads U there and the
 * first one's count is intact. */
static void test_tracker_default_keeps_all(void **state)
{
    (void)state;
    for (int amd = 0; amd < 2; amd++) {
        boot_tracker(amd ? "amd" : "intel", 0);
        assert_int_equal(M.p.mon.tracked, 16);
        run_on(0, 0);
        WR_OK(0, PQR, pqr(0, 1));
        loads(0, 0, 0, 0, 100);
        for (unsigned r = 2; r < 16; r++)
            WR_OK(r % 4, PQR, pqr(0, r));
        WR_OK(0, PQR, pqr(0, 0));
        WR_OK(1, PQR, pqr(0, 0));
        TRACKS(0, 0xffff);
        assert_int_equal(counter(0, X86_EVT_TOTAL, 1), 100);
        assert_int_equal(counter(0, X86_EVT_LOCAL, 1), 100);
        TRACKS(4, amd ? 1u << 0 : 0xffff); /* Intel never reads U */
    }
}

/* amd-epyc tracks 32 RMIDs per CCX of 16 CPUs: CPU 0 going through RMIDs
 * 1..31 fills it (with RMID 0, in the other 15 CPUs' PQR_ASSOC); RMID 32
 * drops RMID 1. */
static void test_tracker_epyc(void **state)
{
    (void)state;
    assert_int_equal(M.p.mon.tracked, 32);
    for (unsigned r = 1; r < 32; r++)
        WR_OK(0, PQR, pqr(0, r));
    tracks_at(0, 64, 0xffffffffull, __LINE__);
    WR_OK(0, PQR, pqr(0, 32));
    tracks_at(15, 64, 0x1fffffffdull, __LINE__);
    tracks_at(16, 64, 1, __LINE__);
}

/* The key's checks, each with the file, line and path of the key. */
static void test_tracked_profile_checks(void **state)
{
    (void)state;
    static const struct {
        const char *vendor, *bw;
        unsigned tracked;
        const char *msg; /* NULL: valid */
    } cases[] = {
        {"amd", "true", 4, NULL},
        {"amd", "true", 16, NULL},
        {"intel", "true", 16, NULL},
        {"amd", "true", 3,
         "test.yaml:17: qos.monitoring.tracked: 3 is fewer than the 4 logical CPUs of an L3 "
         "domain (hardware tracks at least one id per processor)"},
        {"amd", "true", 17, "test.yaml:17: qos.monitoring.tracked: 17 exceeds the 16 ids"},
        {"amd", "false", 8,
         "test.yaml:17: qos.monitoring.tracked: only bandwidth counters are tracked, and "
         "neither total nor local is counted"},
        {"amd", "false", 16,
         "test.yaml:17: qos.monitoring.tracked: only bandwidth counters are tracked, and "
         "neither total nor local is counted"},
        {"intel", "true", 8,
         "test.yaml:17: qos.monitoring.tracked: 8 is fewer than the 16 ids, but only AMD "
         "tracks fewer bandwidth ids than it has (56375); intel hardware counts every one"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        tracker_text(text, sizeof text, cases[i].vendor, cases[i].bw, cases[i].tracked);
        struct conf c;
        struct err e = {0};
        struct plat p;
        assert_int_equal(conf_load_mem(&c, "test.yaml", text, strlen(text), &e), 0);
        int rc = plat_from_conf(&p, &c, &e);
        conf_free(&c);
        if (!cases[i].msg) {
            if (rc)
                fail_msg("case %zu: %s", i, e.msg);
            assert_int_equal(p.mon.tracked, cases[i].tracked);
            continue;
        }
        assert_int_equal(rc, -QOSIM_EPARSE);
        assert_string_equal(e.msg, cases[i].msg);
    }
}

/* ======================= QOS_CFG ======================= */

static void cfg_reserved(unsigned cpu, uint32_t msr)
{
    for (unsigned b = 1; b < 64; b++) {
        if (x86_wrmsr(&X, cpu, msr, 1ull << b | 1) != HW_GP)
            fail_msg("MSR 0x%x reserved bit %u accepted", msr, b);
        RD_IS(cpu, msr, 0);
    }
    WR_OK(cpu, msr, 1);
    RD_IS(cpu, msr, 1);
    WR_GP(cpu, msr, 2);
    RD_IS(cpu, msr, 1);
    WR_OK(cpu, msr, 0);
}

/* Bit 0 CDP; bits 63:1 reserved, #GP (L2 CDP paper, Figure 5; 56375 L3_QOS_CFG1). */
static void test_cfg_reserved_bits(void **state)
{
    (void)state;
    cfg_reserved(0, L3_CFG);
    cfg_reserved(0, L2_CFG);
    boot("intel-atom");
    cfg_reserved(6, L2_CFG);
    boot("amd-epyc");
    cfg_reserved(40, L3_CFG);
}

/* L3 CFG belongs to the L3 (socket on intel-xeon), L2 CFG to the L2 (the core). */
static void test_cfg_scope_xeon(void **state)
{
    (void)state;
    WR_OK(5, L3_CFG, 1);
    for (unsigned c = 0; c < 16; c++)
        RD_IS(c, L3_CFG, 1);
    for (unsigned c = 16; c < 32; c++)
        RD_IS(c, L3_CFG, 0);
    WR_OK(1, L2_CFG, 1);
    RD_IS(0, L2_CFG, 1);
    RD_IS(1, L2_CFG, 1);
    RD_IS(2, L2_CFG, 0);
    RD_IS(17, L2_CFG, 0);
}

/* intel-atom: IA32_L2_QOS_CFG "is defined at the same scope as the L2 cache,
 * typically at the module level" (L2 CDP paper): CPUs 0-3 are module 0. */
static void test_cfg_scope_atom(void **state)
{
    (void)state;
    WR_OK(3, L2_CFG, 1);
    for (unsigned c = 0; c < 4; c++)
        RD_IS(c, L2_CFG, 1);
    for (unsigned c = 4; c < 24; c++)
        RD_IS(c, L2_CFG, 0);
}

/* ======================= masks ======================= */

static int contiguous(uint64_t v)
{
    if (!v)
        return 0;
    v >>= __builtin_ctzll(v);
    return (v & (v + 1)) == 0;
}

/* Every value of cbm_len bits: Intel takes exactly the non-zero contiguous
 * ones ("FFFFH, 0FF0H, 003CH"), #GP for the rest, and a refused write
 * leaves the MSR and the machine as they were. */
static void intel_mask_exhaustive(unsigned cpu, uint32_t msr, enum plat_level l, unsigned inst,
                                  unsigned cls, unsigned len)
{
    uint64_t last = RD(cpu, msr);
    unsigned accepted = 0;
    for (uint64_t v = 0; v < (1ull << len); v++) {
        enum hw_fault f = x86_wrmsr(&X, cpu, msr, v), want = contiguous(v) ? HW_OK : HW_GP;
        if (f != want)
            fail_msg("mask 0x%llx on MSR 0x%x: %s, want %s", (unsigned long long)v, msr,
                     hw_fault_name(f), hw_fault_name(want));
        if (f == HW_OK) {
            last = v;
            accepted++;
        }
        uint64_t r = RD(cpu, msr);
        if (r != last)
            fail_msg("after 0x%llx MSR 0x%x reads 0x%llx, want 0x%llx", (unsigned long long)v, msr,
                     (unsigned long long)r, (unsigned long long)last);
        if (mach_get_mask(&M, l, inst, cls, MACH_DATA) != ways(l, last))
            fail_msg("after 0x%llx the machine's mask is not 0x%llx", (unsigned long long)v,
                     (unsigned long long)last);
    }
    /* len (len + 1) / 2 contiguous runs. */
    assert_int_equal(accepted, len * (len + 1) / 2);
}

static void test_intel_l3_mask_contiguity(void **state)
{
    (void)state;
    intel_mask_exhaustive(4, L3M + 6, PLAT_L3, 0, 6, 11);
    WR_OK(4, L3M + 6, 0x7ff);
    WR_OK(4, L3M + 6, 0x03c);
    WR_OK(4, L3M + 6, 0x400);
    WR_GP(4, L3M + 6, 0);
    WR_GP(4, L3M + 6, 0x401);
    WR_GP(4, L3M + 6, 0x0f1);
}

static void test_intel_l2_mask_contiguity(void **state)
{
    (void)state;
    intel_mask_exhaustive(0, L2M + 2, PLAT_L2, 0, 2, 16);
    /* intel-atom, 18 bits: the L2 CDP paper's examples and their opposites. */
    boot("intel-atom");
    static const uint64_t good[] = {0xffff, 0xff00,  0x00ff,  0x00f0, 0x0001,
                                    0x0003, 0x3ffff, 0x20000, 0x3fffe};
    static const uint64_t bad[] = {0, 0x20001, 0x10101, 0x3fffd, 0x5};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        WR_OK(5, L2M + 7, good[i]);
        RD_IS(4, L2M + 7, good[i]);
        MASKS_ARE(PLAT_L2, 1, 7, good[i], good[i]);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        WR_GP(5, L2M + 7, bad[i]);
        RD_IS(4, L2M + 7, 0x3fffe);
    }
}

/* Bits at and above cbm_len #GP, alone and with a valid mask. */
static void beyond(unsigned cpu, uint32_t msr, unsigned len, uint64_t valid)
{
    WR_OK(cpu, msr, valid);
    for (unsigned b = len; b < 64; b++) {
        if (x86_wrmsr(&X, cpu, msr, 1ull << b) != HW_GP)
            fail_msg("MSR 0x%x bit %u (cbm_len %u) accepted", msr, b, len);
        if (x86_wrmsr(&X, cpu, msr, valid | 1ull << b) != HW_GP)
            fail_msg("MSR 0x%x 0x%llx | bit %u accepted", msr, (unsigned long long)valid, b);
        RD_IS(cpu, msr, valid);
    }
}

static void test_mask_bits_beyond_cbm_len(void **state)
{
    (void)state;
    beyond(0, L3M, 11, 0x7ff);
    beyond(0, L3M + 15, 11, 0x400);
    beyond(16, L2M + 7, 16, 0xffff);
    boot("intel-atom");
    beyond(0, L2M, 18, 0x3ffff);
    boot("amd-epyc");
    beyond(0, L3M, 16, 0xffff);
    beyond(127, L3M + 15, 16, 0);
}

/* AMD: any mask, sparse and all-zero included; zero means no allocation. */
static void test_amd_mask_any(void **state)
{
    (void)state;
    static const uint64_t any[] = {0, 0x5555, 0x8001, 0xaaaa, 0x0001, 0xffff, 0x1234};
    for (size_t i = 0; i < sizeof any / sizeof any[0]; i++) {
        WR_OK(3, L3M + 4, any[i]);
        RD_IS(3, L3M + 4, any[i]);
        MASKS_ARE(PLAT_L3, 0, 4, any[i], any[i]);
    }
    WR_OK(3, L3M + 4, 0);
    assert_int_equal(mach_get_mask(&M, PLAT_L3, 0, 4, MACH_DATA), 0);
    /* Every 16-bit value is accepted. */
    for (uint64_t v = 0; v < 0x10000; v++)
        if (x86_wrmsr(&X, 20, L3M + 1, v) != HW_OK)
            fail_msg("AMD mask 0x%llx refused", (unsigned long long)v);
}

/* Intel with CPUID.10H.1 ECX[3]: non-contiguous masks are accepted. */
static void test_intel_sparse_masks(void **state)
{
    (void)state;
    boot_tiny("intel", "true", "true", 24, 64);
    WR_OK(0, L3M + 1, 0x05);
    RD_IS(1, L3M + 1, 0x05);
    MASKS_ARE(PLAT_L3, 0, 1, 0x05, 0x05);
    WR_OK(0, L3M + 1, 0xa5);
    WR_OK(0, L3M + 1, 0x81);
    WR_GP(0, L3M + 1, 0x100);
    RD_IS(0, L3M + 1, 0x81);
    /* Without ECX[3] the same masks #GP. */
    boot_tiny("intel", "false", "true", 24, 64);
    WR_GP(0, L3M + 1, 0x05);
    WR_GP(0, L3M + 1, 0x81);
    WR_OK(0, L3M + 1, 0x3c);
}

/* One mask MSR per COS, COS_MAX + 1 of them; the next is #GP, also with CDP on. */
static void test_mask_index_past_cos_max(void **state)
{
    (void)state;
    RD_IS(0, L3M + 15, 0x7ff);
    ABSENT(0, L3M + 16);
    RD_IS(0, L2M + 7, 0xffff);
    ABSENT(0, L2M + 8);
    RD_IS(0, MBA + 7, 0);
    ABSENT(0, MBA + 8);
    WR_OK(0, L3_CFG, 1);
    WR_OK(0, L3M + 15, 0x001); /* with CDP: COS 7's code mask */
    ABSENT(0, L3M + 16);
    boot("intel-atom");
    RD_IS(0, L2M + 7, 0x3ffff);
    ABSENT(0, L2M + 8);
    boot("amd-epyc");
    RD_IS(0, L3M + 15, 0xffff);
    ABSENT(0, L3M + 16);
    RD_IS(0, AMD_BW + 15, 0x800);
    ABSENT(0, AMD_BW + 16);
}

/* The MSRs of features a platform lacks #GP like unimplemented MSRs. */
static void test_absent_msrs(void **state)
{
    (void)state;
    ABSENT(0, AMD_BW); /* intel-xeon: AMD's bandwidth control */
    ABSENT(0, AMD_BW + 1);
    boot("intel-atom"); /* no L3, no monitoring, no MBA */
    ABSENT(0, L3_CFG);
    ABSENT(0, L3M);
    ABSENT(0, L3M + 7);
    ABSENT(0, EVTSEL);
    RD_GP(0, QM_CTR);
    ABSENT(0, MBA);
    ABSENT(0, AMD_BW);
    RD(0, PQR); /* L2 CAT still uses PQR_ASSOC's COS */
    RD(0, L2_CFG);
    boot("amd-epyc"); /* no L2 CAT, no MBA */
    ABSENT(0, L2_CFG);
    ABSENT(0, L2M);
    ABSENT(0, MBA);
    ABSENT(0, MBA + 3);
    RD(0, L3_CFG);
}

/* An MSR access on a logical processor that does not exist is refused. */
static void test_cpu_out_of_range(void **state)
{
    (void)state;
    static const uint32_t msrs[] = {PQR, EVTSEL, QM_CTR, L3_CFG, L2_CFG, L3M, L2M, MBA};
    for (size_t i = 0; i < sizeof msrs / sizeof msrs[0]; i++) {
        RD(31, msrs[i]);
        RD_GP(32, msrs[i]);
        RD_GP(1000, msrs[i]);
        RD_GP(~0u, msrs[i]);
        WR_GP(32, msrs[i], 0);
        WR_GP(~0u, msrs[i], 0);
    }
    WR_OK(31, PQR, pqr(1, 1));
    boot("amd-epyc");
    RD(127, AMD_BW);
    RD_GP(128, AMD_BW);
    WR_GP(128, AMD_BW, 0x800);
    WR_GP(128, PQR, 0);
    WR_GP(128, L3M, 0xffff);
}

/* ======================= CDP remapping ======================= */

/* intel-xeon, L3 CDP on socket 0: COS k takes data from MSR 2k, code from
 * 2k+1 (SDM 17.19; L2 CDP paper Table 1); socket 1 keeps 1:1 masks. */
static void test_l3_cdp_remap_xeon(void **state)
{
    (void)state;
    WR_OK(0, L3M + 0, 0x003);
    WR_OK(0, L3M + 1, 0x00c);
    WR_OK(0, L3M + 2, 0x030);
    WR_OK(0, L3M + 3, 0x0c0);
    WR_OK(16, L3M + 1, 0x0f0);
    MASKS_ARE(PLAT_L3, 0, 0, 0x003, 0x003);
    MASKS_ARE(PLAT_L3, 0, 1, 0x00c, 0x00c);
    WR_OK(7, L3_CFG, 1);
    MASKS_ARE(PLAT_L3, 0, 0, 0x003, 0x00c);
    MASKS_ARE(PLAT_L3, 0, 1, 0x030, 0x0c0);
    for (unsigned k = 2; k < 8; k++) /* MSRs 4-15 are still all ones */
        MASKS_ARE(PLAT_L3, 0, k, 0x7ff, 0x7ff);
    MASKS_ARE(PLAT_L3, 1, 0, 0x7ff, 0x7ff);
    MASKS_ARE(PLAT_L3, 1, 1, 0x0f0, 0x0f0);
    /* The MSRs themselves read what was written. */
    RD_IS(3, L3M + 0, 0x003);
    RD_IS(3, L3M + 1, 0x00c);
    /* Writes with CDP on land on the remapped class; the CPU sees them. */
    WR_OK(2, PQR, pqr(1, 0));
    WR_OK(9, L3M + 2, 0x1f0);
    WR_OK(9, L3M + 5, 0x600);
    MASKS_ARE(PLAT_L3, 0, 1, 0x1f0, 0x0c0);
    MASKS_ARE(PLAT_L3, 0, 2, 0x7ff, 0x600);
    assert_int_equal(M.cpu[2].m3[0][MACH_DATA], ways(PLAT_L3, 0x1f0));
    assert_int_equal(M.cpu[2].m3[0][MACH_CODE], ways(PLAT_L3, 0x0c0));
    /* CDP off: back to one mask per class. */
    WR_OK(2, PQR, 0);
    WR_OK(0, L3_CFG, 0);
    MASKS_ARE(PLAT_L3, 0, 0, 0x003, 0x003);
    MASKS_ARE(PLAT_L3, 0, 1, 0x00c, 0x00c);
    MASKS_ARE(PLAT_L3, 0, 2, 0x1f0, 0x1f0);
    MASKS_ARE(PLAT_L3, 0, 5, 0x600, 0x600);
}

/* intel-atom, L2 CDP on module 0 only (L2 CDP paper, Table 1). */
static void test_l2_cdp_remap_atom(void **state)
{
    (void)state;
    WR_OK(1, L2M + 0, 0x0000f);
    WR_OK(1, L2M + 1, 0x000f0);
    WR_OK(1, L2M + 2, 0x00f00);
    WR_OK(1, L2M + 3, 0x0f000);
    WR_OK(4, L2M + 0, 0x00003);
    WR_OK(2, L2_CFG, 1);
    MASKS_ARE(PLAT_L2, 0, 0, 0x0000f, 0x000f0);
    MASKS_ARE(PLAT_L2, 0, 1, 0x00f00, 0x0f000);
    MASKS_ARE(PLAT_L2, 0, 2, 0x3ffff, 0x3ffff);
    MASKS_ARE(PLAT_L2, 0, 3, 0x3ffff, 0x3ffff);
    MASKS_ARE(PLAT_L2, 1, 0, 0x00003, 0x00003); /* module 1: CDP off */
    MASKS_ARE(PLAT_L2, 1, 1, 0x3ffff, 0x3ffff);
    WR_OK(3, PQR, pqr(1, 0));
    assert_int_equal(M.cpu[3].m2[0][MACH_DATA], ways(PLAT_L2, 0x00f00));
    assert_int_equal(M.cpu[3].m2[0][MACH_CODE], ways(PLAT_L2, 0x0f000));
    WR_OK(3, PQR, 0);
    WR_OK(0, L2_CFG, 0);
    MASKS_ARE(PLAT_L2, 0, 0, 0x0000f, 0x0000f);
    MASKS_ARE(PLAT_L2, 0, 1, 0x000f0, 0x000f0);
    MASKS_ARE(PLAT_L2, 0, 3, 0x0f000, 0x0f000);
}

/* amd-epyc: "The data allocation mask will be specified in MSR C90 + (2*COS)
 * while the instruction allocation mask will be specified by MSR C91 +
 * (2*COS)" (56375), sparse and zero masks included. */
static void test_l3_cdp_remap_amd(void **state)
{
    (void)state;
    WR_OK(0, L3M + 0, 0x5555);
    WR_OK(0, L3M + 1, 0xaaaa);
    WR_OK(0, L3M + 2, 0);
    WR_OK(0, L3M + 3, 0x8001);
    WR_OK(0, L3_CFG, 1);
    RD_IS(15, L3_CFG, 1);
    RD_IS(16, L3_CFG, 0);
    MASKS_ARE(PLAT_L3, 0, 0, 0x5555, 0xaaaa);
    MASKS_ARE(PLAT_L3, 0, 1, 0, 0x8001);
    MASKS_ARE(PLAT_L3, 0, 7, 0xffff, 0xffff);
    MASKS_ARE(PLAT_L3, 1, 0, 0xffff, 0xffff);
    WR_OK(0, L3_CFG, 0);
    MASKS_ARE(PLAT_L3, 0, 1, 0xaaaa, 0xaaaa);
    MASKS_ARE(PLAT_L3, 0, 2, 0, 0);
}

/* CDP off: for every class, both access types use mask k. */
static void test_cdp_off_types_equal(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 16; k++)
        WR_OK(0, L3M + k, 1ull << (k % 11));
    for (unsigned k = 0; k < 8; k++)
        WR_OK(1, L2M + k, 3ull << k);
    for (unsigned k = 0; k < 16; k++)
        MASKS_ARE(PLAT_L3, 0, k, 1ull << (k % 11), 1ull << (k % 11));
    for (unsigned k = 0; k < 8; k++)
        MASKS_ARE(PLAT_L2, 0, k, 3ull << k, 3ull << k);
    /* On and off again restores the 1:1 view exactly. */
    WR_OK(0, L3_CFG, 1);
    WR_OK(0, L2_CFG, 1);
    MASKS_ARE(PLAT_L3, 0, 3, 1ull << 6, 1ull << 7);
    MASKS_ARE(PLAT_L2, 0, 3, 3ull << 6, 3ull << 7);
    WR_OK(0, L3_CFG, 0);
    WR_OK(0, L2_CFG, 0);
    for (unsigned k = 0; k < 16; k++)
        MASKS_ARE(PLAT_L3, 0, k, 1ull << (k % 11), 1ull << (k % 11));
    for (unsigned k = 0; k < 8; k++)
        MASKS_ARE(PLAT_L2, 0, k, 3ull << k, 3ull << k);
}

/* ======================= mask scope ======================= */

/* intel-xeon: an L3 mask belongs to its socket's L3 (CPUs 0-15, 16-31). */
static void test_l3_mask_scope_xeon(void **state)
{
    (void)state;
    WR_OK(3, L3M + 1, 0x0f0);
    for (unsigned c = 0; c < 16; c++)
        RD_IS(c, L3M + 1, 0x0f0);
    for (unsigned c = 16; c < 32; c++)
        RD_IS(c, L3M + 1, 0x7ff);
    MASKS_ARE(PLAT_L3, 0, 1, 0x0f0, 0x0f0);
    MASKS_ARE(PLAT_L3, 1, 1, 0x7ff, 0x7ff);
    WR_OK(30, L3M + 1, 0x001);
    RD_IS(16, L3M + 1, 0x001);
    RD_IS(15, L3M + 1, 0x0f0);
    MASKS_ARE(PLAT_L3, 1, 1, 0x001, 0x001);
}

/* amd-epyc: L3 masks per CCX: 16 CPUs each, 4 per socket. */
static void test_l3_mask_scope_amd(void **state)
{
    (void)state;
    WR_OK(7, L3M + 2, 0x0f0f);
    RD_IS(0, L3M + 2, 0x0f0f);
    RD_IS(15, L3M + 2, 0x0f0f);
    RD_IS(16, L3M + 2, 0xffff);
    RD_IS(64, L3M + 2, 0xffff);
    MASKS_ARE(PLAT_L3, 0, 2, 0x0f0f, 0x0f0f);
    for (unsigned d = 1; d < 8; d++)
        MASKS_ARE(PLAT_L3, d, 2, 0xffff, 0xffff);
    WR_OK(127, L3M + 2, 0x8000);
    RD_IS(112, L3M + 2, 0x8000);
    RD_IS(111, L3M + 2, 0xffff);
    MASKS_ARE(PLAT_L3, 7, 2, 0x8000, 0x8000);
}

/* intel-atom: L2 masks per module: CPUs 0-3 share, CPU 4 does not. */
static void test_l2_mask_scope_atom(void **state)
{
    (void)state;
    WR_OK(2, L2M + 5, 0x00ff0);
    for (unsigned c = 0; c < 4; c++)
        RD_IS(c, L2M + 5, 0x00ff0);
    for (unsigned c = 4; c < 24; c++)
        RD_IS(c, L2M + 5, 0x3ffff);
    MASKS_ARE(PLAT_L2, 0, 5, 0x00ff0, 0x00ff0);
    MASKS_ARE(PLAT_L2, 1, 5, 0x3ffff, 0x3ffff);
    WR_OK(4, L2M + 5, 0x00001);
    RD_IS(7, L2M + 5, 0x00001);
    RD_IS(3, L2M + 5, 0x00ff0);
}

/* intel-xeon: L2 is per core, its two SMT threads share the masks. */
static void test_l2_mask_scope_xeon(void **state)
{
    (void)state;
    WR_OK(1, L2M + 4, 0x0ff0);
    RD_IS(0, L2M + 4, 0x0ff0);
    RD_IS(1, L2M + 4, 0x0ff0);
    RD_IS(2, L2M + 4, 0xffff);
    RD_IS(16, L2M + 4, 0xffff);
    MASKS_ARE(PLAT_L2, 0, 4, 0x0ff0, 0x0ff0);
    MASKS_ARE(PLAT_L2, 1, 4, 0xffff, 0xffff);
}

/* ======================= bandwidth ======================= */

/* Intel MBA: delay [15:0], at most the max throttle (90); #GP above it and
 * for any bit past 15. */
static void test_mba_values(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < 0x10000; v++) {
        enum hw_fault f = x86_wrmsr(&X, 0, MBA + 3, v), want = v <= 90 ? HW_OK : HW_GP;
        if (f != want)
            fail_msg("MBA delay %llu: %s, want %s", (unsigned long long)v, hw_fault_name(f),
                     hw_fault_name(want));
    }
    RD_IS(0, MBA + 3, 90);
    WR_OK(0, MBA + 3, 40);
    for (unsigned b = 16; b < 64; b++) {
        if (x86_wrmsr(&X, 0, MBA + 3, 1ull << b | 10) != HW_GP)
            fail_msg("MBA bit %u accepted", b);
        RD_IS(0, MBA + 3, 40);
    }
}

/* MBA values become the L3 domain's delay limiter for the class. */
static void test_mba_effect_and_scope(void **state)
{
    (void)state;
    WR_OK(4, MBA + 3, 50);
    RD_IS(15, MBA + 3, 50);
    RD_IS(16, MBA + 3, 0);
    assert_int_equal(M.bw[0].set[3].delay_pct, 50);
    assert_int_equal(M.bw[1].set[3].delay_pct, 0);
    assert_int_equal(M.bw[0].set[2].delay_pct, 0);
    WR_OK(20, MBA + 3, 90);
    assert_int_equal(M.bw[1].set[3].delay_pct, 90);
    assert_int_equal(M.bw[0].set[3].delay_pct, 50);
    WR_OK(0, MBA + 7, 10);
    assert_int_equal(M.bw[0].set[7].delay_pct, 10);
    WR_GP(0, MBA + 3, 91);
    assert_int_equal(M.bw[0].set[3].delay_pct, 50);
    WR_OK(0, MBA + 3, 0);
    assert_int_equal(M.bw[0].set[3].delay_pct, 0);
}

/* Delay granularity (intel-xeon: 10): a value between steps is taken and
 * reads back as written, and throttles as the step below it. */
static void test_mba_granularity(void **state)
{
    (void)state;
    assert_int_equal(M.p.bw.granularity, 10);
    for (unsigned v = 0; v <= 90; v++) {
        WR_OK(0, MBA + 2, v);
        RD_IS(0, MBA + 2, v);
        if (M.bw[0].set[2].delay_pct != v / 10 * 10)
            fail_msg("delay %u throttles as %u, want %u", v, M.bw[0].set[2].delay_pct, v / 10 * 10);
    }
    WR_OK(0, MBA + 2, 11);
    WR_OK(0, MBA + 3, 12);
    assert_int_equal(M.bw[0].set[2].delay_pct, M.bw[0].set[3].delay_pct);
}

/* AMD L3QOS_BW_CONTROL_n: BW [10:0], U [11]; every 12-bit value is
 * accepted, any bit above #GP. */
static void test_amd_bw_values(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < 0x1000; v++)
        if (x86_wrmsr(&X, 0, AMD_BW + 5, v) != HW_OK)
            fail_msg("BW_CONTROL 0x%llx refused", (unsigned long long)v);
    RD_IS(0, AMD_BW + 5, 0xfff);
    WR_OK(0, AMD_BW + 5, 0x7ff);
    for (unsigned b = 12; b < 64; b++) {
        if (x86_wrmsr(&X, 0, AMD_BW + 5, 1ull << b) != HW_GP)
            fail_msg("BW_CONTROL bit %u accepted", b);
        RD_IS(0, AMD_BW + 5, 0x7ff);
    }
}

/* AMD limits are absolute, 1/8 GB/s a unit, per CCX and COS; U = unlimited. */
static void test_amd_bw_effect_and_scope(void **state)
{
    (void)state;
    double unit = 0.125e9 / M.ticks_per_sec; /* bytes per tick of 1/8 GB/s */
    WR_OK(16, AMD_BW + 2, 16);               /* 2 GB/s for COS 2 on CCX 1 */
    RD_IS(31, AMD_BW + 2, 16);
    RD_IS(0, AMD_BW + 2, 0x800);
    RD_IS(32, AMD_BW + 2, 0x800);
    assert_true(M.bw[1].set[2].rate > 0);
    assert_near(M.bw[1].set[2].rate, 16 * unit, 1e-9);
    assert_true(M.bw[0].set[2].rate == 0);
    assert_true(M.bw[1].set[1].rate == 0);
    WR_OK(16, AMD_BW + 2, 0x7ff);
    assert_near(M.bw[1].set[2].rate, 0x7ff * unit, 1e-9);
    /* U set: "the other bits in the BW field have no effect". */
    WR_OK(16, AMD_BW + 2, 0x800 | 16);
    RD_IS(16, AMD_BW + 2, 0x810);
    assert_true(M.bw[1].set[2].rate == 0);
    WR_OK(16, AMD_BW + 2, 1);
    assert_near(M.bw[1].set[2].rate, unit, 1e-9);
    WR_OK(16, AMD_BW + 2, 0x800);
    assert_true(M.bw[1].set[2].rate == 0);
}

/* ======================= life cycle ======================= */

static void test_riscv_has_no_x86(void **state)
{
    (void)state;
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, "riscv-soc", &e), 0);
    assert_int_equal(mach_init(&M, &p, NTASK, &e), 0);
    struct x86 x;
    assert_int_equal(x86_init(&x, &M, &e), -QOSIM_EUNSUP);
    assert_substr(e.msg, "RISC-V");
    mach_free(&M);
}

/* The console's lines that only look (x86_console_sets 0) change no
 * setting; a wrmsr is the one that sets. A console attached to a running
 * guest simulates the guest's pending accesses before a setting only
 * (qemu/plugin/qosim-vm.c), so reading from it changes nothing. */
static void test_console_sets(void **state)
{
    (void)state;
    static const char *const looks[] = {"cpuid 0x10 1",
                                        "  rdmsr 0 0xc8f",
                                        "rdmsr 0 0xc90",
                                        "rdmsr 2 0xd51 # MBA",
                                        "# wrmsr 0 0xc8f 0x1",
                                        "",
                                        "\t\n",
                                        "run 1000",
                                        "wrmsrx 0 0xc8f 1",
                                        "wrmsr",
                                        "rdmsr 0 0xc8e"};
    static const char *const other[] = {"mem write64 0x1000 5", "llwpcb 0 0x1000", "slwpcb 0",
                                        "mem map 0x1000 4096"};
    struct x86_console k = {.x = &X};
    uint64_t before[4], after[4];
    const uint32_t msrs[4] = {X86_PQR_ASSOC, X86_L3_MASK_0 + 1, X86_MBA_THRTL_0 + 1, X86_QM_EVTSEL};
    char line[64];
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    assert_int_equal(x86_wrmsr(&X, 0, X86_L3_MASK_0 + 1, 0x0f0), HW_OK);
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(x86_rdmsr(&X, 0, msrs[i], &before[i]), HW_OK);
    for (unsigned i = 0; i < sizeof looks / sizeof *looks; i++) {
        assert_int_equal(x86_console_sets(looks[i]), 0);
        snprintf(line, sizeof line, "%s", looks[i]);
        x86_console_line(&k, line, out);
    }
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(x86_rdmsr(&X, 0, msrs[i], &after[i]), HW_OK);
        assert_int_equal(after[i], before[i]);
    }
    for (unsigned i = 0; i < sizeof other / sizeof *other; i++) /* the console's own process */
        assert_int_equal(x86_console_sets(other[i]), 0);
    assert_int_equal(x86_console_sets("wrmsr 0 0xc8f 0x100000001"), 1);
    assert_int_equal(x86_console_sets(" \twrmsr\t0 0xc90 0x3"), 1);
    snprintf(line, sizeof line, "wrmsr 0 0xc8f 0x100000001");
    x86_console_line(&k, line, out);
    assert_int_equal(x86_rdmsr(&X, 0, X86_PQR_ASSOC, &after[0]), HW_OK);
    assert_int_equal(after[0], 0x100000001ull);
    fclose(out);
}

#define XEON(t)       cmocka_unit_test_setup_teardown(t, setup_xeon, teardown)
#define XEON_PLAIN(t) cmocka_unit_test_setup_teardown(t, setup_xeon_plain, teardown)
#define ATOM(t)       cmocka_unit_test_setup_teardown(t, setup_atom, teardown)
#define EPYC(t)       cmocka_unit_test_setup_teardown(t, setup_epyc, teardown)
#define NONE(t)       cmocka_unit_test_setup_teardown(t, setup_none, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        XEON(test_console_sets),
        XEON(test_cpuid_vendor_intel),
        EPYC(test_cpuid_vendor_amd),
        XEON(test_cpuid_xeon_monitoring),
        XEON(test_cpuid_xeon_allocation),
        ATOM(test_cpuid_atom),
        EPYC(test_cpuid_epyc_monitoring),
        EPYC(test_cpuid_epyc_allocation),
        NONE(test_cpuid_custom_fields),
        NONE(test_cpuid_amd_be_only_sets_pqe),
        XEON(test_reset_xeon),
        ATOM(test_reset_atom),
        EPYC(test_reset_epyc),
        XEON(test_reset_after_writes),
        XEON(test_pqr_reserved_bits),
        XEON(test_pqr_rmid_range),
        XEON(test_pqr_cos_range),
        XEON(test_pqr_cos_limit_l3_cdp),
        ATOM(test_pqr_cos_limit_l2_cdp),
        XEON(test_pqr_per_thread_and_effects),
        XEON(test_evtsel_reserved_and_rmid),
        XEON(test_evtsel_scope_intel),
        EPYC(test_evtsel_scope_amd),
        XEON(test_qm_ctr_write_gp),
        XEON(test_qm_ctr_error_event),
        XEON_PLAIN(test_qm_ctr_occupancy_intel),
        XEON_PLAIN(test_qm_ctr_mbm_intel),
        NONE(test_qm_ctr_wrap),
        NONE(test_qm_ctr_scale),
        EPYC(test_amd_u_bit),
        EPYC(test_amd_counts_per_domain),
        EPYC(test_amd_tracking_clears_counter),
        NONE(test_amd_tracker_drops_oldest_unused),
        NONE(test_amd_tracker_in_use_never_u),
        NONE(test_tracker_default_keeps_all),
        EPYC(test_tracker_epyc),
        NONE(test_tracked_profile_checks),
        XEON(test_cfg_reserved_bits),
        XEON(test_cfg_scope_xeon),
        ATOM(test_cfg_scope_atom),
        XEON(test_intel_l3_mask_contiguity),
        XEON(test_intel_l2_mask_contiguity),
        XEON(test_mask_bits_beyond_cbm_len),
        EPYC(test_amd_mask_any),
        NONE(test_intel_sparse_masks),
        XEON(test_mask_index_past_cos_max),
        XEON(test_absent_msrs),
        XEON(test_cpu_out_of_range),
        XEON(test_l3_cdp_remap_xeon),
        ATOM(test_l2_cdp_remap_atom),
        EPYC(test_l3_cdp_remap_amd),
        XEON(test_cdp_off_types_equal),
        XEON(test_l3_mask_scope_xeon),
        EPYC(test_l3_mask_scope_amd),
        ATOM(test_l2_mask_scope_atom),
        XEON(test_l2_mask_scope_xeon),
        XEON(test_mba_values),
        XEON(test_mba_effect_and_scope),
        XEON(test_mba_granularity),
        EPYC(test_amd_bw_values),
        EPYC(test_amd_bw_effect_and_scope),
        NONE(test_riscv_has_no_x86),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
