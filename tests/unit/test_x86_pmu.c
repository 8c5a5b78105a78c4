/* Unit tests for Intel's core PMU (hw/x86_pmu.c): CPUID 0AH per CPU model,
 * reset values, reserved bits (#GP), read-only registers, legacy counter
 * writes, counting by privilege, enable and global enable, AnyThread,
 * overflow into GLOBAL_STATUS and the PMI request, status reset and set,
 * in-use bits, RDPMC's counter selection and faults, and no PMU on AMD. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hw/x86_pmu.h"

#define X86_FIXTURE_NTASK 2
#include "x86_fixture.h"

static uint64_t rd(unsigned cpu, uint32_t msr)
{
    uint64_t v = 0;
    assert_int_equal(x86_rdmsr(&X, cpu, msr, &v), HW_OK);
    return v;
}

static void wr(unsigned cpu, uint32_t msr, uint64_t v)
{
    assert_int_equal(x86_wrmsr(&X, cpu, msr, v), HW_OK);
}

/* Events of one stretch: n instructions, n * 2 cycles, n / 4 LLC misses. */
static void run(unsigned cpu, int os, uint64_t n)
{
    uint64_t ev[X86_PMU_NEV] = {0};
    ev[X86_EV_INSTR] = n;
    ev[X86_EV_CYCLES] = 2 * n;
    ev[X86_EV_LLC_MISS] = n / 4;
    x86_pmu_count(&X, cpu, os, ev);
}

#define SEL(es, um, bits) ((uint64_t)(es) | (uint64_t)(um) << 8 | (bits))
#define USR               (1ull << 16)
#define OS                (1ull << 17)
#define INT               (1ull << 20)
#define ANY               (1ull << 21)
#define EN                (1ull << 22)

/* CPUID 0AH: version 4, 48-bit counters, 7 architectural events all
 * available, 3 fixed counters; 8 general-purpose counters on Ice Lake-SP
 * and Sapphire Rapids, 4 on Skylake-SP with 2 threads a core and on
 * Tremont. */
static void test_leaf(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint32_t eax;
    } want[] = {
        {"intel-xeon", 0x07300804},
        {"intel-xeon-spr", 0x07300804},
        {"intel-xeon-skx", 0x07300404},
        {"intel-atom", 0x07300404},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        boot(want[i].name);
        uint32_t r[4];
        assert_int_equal(x86_cpuid(&X, 0, 0xA, 0, r), HW_OK);
        assert_int_equal(r[0], want[i].eax);
        assert_int_equal(r[1], 0);
        assert_int_equal(r[2], 0);
        assert_int_equal(r[3], 3 | 48 << 5);
    }
}

/* Reset: every register 0 but GLOBAL_CTRL, whose general-purpose enables
 * are set. */
static void test_reset(void **state)
{
    (void)state;
    boot("intel-xeon");
    for (unsigned c = 0; c < 2; c++) {
        for (unsigned i = 0; i < 8; i++) {
            assert_int_equal(rd(c, X86_PMC_0 + i), 0);
            assert_int_equal(rd(c, X86_PERFEVTSEL_0 + i), 0);
        }
        for (unsigned i = 0; i < 3; i++)
            assert_int_equal(rd(c, X86_FIXED_CTR_0 + i), 0);
        assert_int_equal(rd(c, X86_FIXED_CTR_CTRL), 0);
        assert_int_equal(rd(c, X86_PERF_GLOBAL_STATUS), 0);
        assert_int_equal(rd(c, X86_PERF_GLOBAL_CTRL), 0xFF);
        assert_int_equal(rd(c, X86_PERF_GLOBAL_INUSE), 0);
    }
    /* x86_reset restores them. */
    wr(1, X86_PERF_GLOBAL_CTRL, 0x700000001ull);
    wr(1, X86_PMC_0 + 3, 5);
    x86_reset(&X);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_CTRL), 0xFF);
    assert_int_equal(rd(1, X86_PMC_0 + 3), 0);
}

/* Reserved bits are #GP and leave the register as it was; the counters a
 * part lacks are #GP. */
static void test_reserved(void **state)
{
    (void)state;
    uint64_t v;
    boot("intel-xeon-skx"); /* 4 counters */
    wr(0, X86_PERFEVTSEL_0, SEL(0xC0, 0, USR | EN));
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERFEVTSEL_0, 1ull << 32), HW_GP);
    assert_int_equal(rd(0, X86_PERFEVTSEL_0), SEL(0xC0, 0, USR | EN));
    assert_int_equal(x86_rdmsr(&X, 0, X86_PERFEVTSEL_0 + 4, &v), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PMC_0 + 4, 0), HW_GP);
    assert_int_equal(x86_rdmsr(&X, 0, X86_FIXED_CTR_0 + 3, &v), HW_GP);
    /* GLOBAL_CTRL: bits 3:0 and 34:32 */
    wr(0, X86_PERF_GLOBAL_CTRL, 0x70000000Full);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_CTRL, 1ull << 4), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_CTRL, 1ull << 35), HW_GP);
    assert_int_equal(rd(0, X86_PERF_GLOBAL_CTRL), 0x70000000Full);
    /* FIXED_CTR_CTRL: three 4-bit fields */
    wr(0, X86_FIXED_CTR_CTRL, 0xFFF);
    assert_int_equal(x86_wrmsr(&X, 0, X86_FIXED_CTR_CTRL, 0x1000), HW_GP);
    assert_int_equal(rd(0, X86_FIXED_CTR_CTRL), 0xFFF);
    /* Fixed counters: 48 bits */
    wr(0, X86_FIXED_CTR_0, (1ull << 48) - 1);
    assert_int_equal(x86_wrmsr(&X, 0, X86_FIXED_CTR_0, 1ull << 48), HW_GP);
    assert_int_equal(rd(0, X86_FIXED_CTR_0), (1ull << 48) - 1);
    /* Read-only */
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_STATUS, 0), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_INUSE, 0), HW_GP);
    /* STATUS_RESET: counters, 58, 59, 61-63; STATUS_SET: not 63 */
    wr(0, X86_PERF_GLOBAL_STATUS_RESET, 0xEC0000070000000Full);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_STATUS_RESET, 1ull << 60), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_STATUS_RESET, 1ull << 4), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_STATUS_SET, 1ull << 63), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_STATUS_SET, 1ull << 35), HW_GP);
    assert_int_equal(rd(0, X86_PERF_GLOBAL_STATUS), 0);
}

/* A legacy write to IA32_PMCx takes bits 31:0 sign-extended to 48 bits
 * and ignores bits 63:32. */
static void test_pmc_write(void **state)
{
    (void)state;
    boot("intel-xeon");
    wr(0, X86_PMC_0, 0x7FFFFFFF);
    assert_int_equal(rd(0, X86_PMC_0), 0x7FFFFFFF);
    wr(0, X86_PMC_0, 0x80000000);
    assert_int_equal(rd(0, X86_PMC_0), 0xFFFF80000000ull);
    wr(0, X86_PMC_0, 0x1234500000001ull);
    assert_int_equal(rd(0, X86_PMC_0), 1);
}

/* Counting: USR counts CPL > 0, OS CPL 0; EN and the global enable gate;
 * each CPU counts its own events only; the fixed counters count
 * instructions and (both) cycles by their EN bits. */
static void test_counting(void **state)
{
    (void)state;
    boot("intel-xeon");
    wr(0, X86_PERFEVTSEL_0 + 0, SEL(0xC0, 0x00, USR | EN));      /* instructions, user */
    wr(0, X86_PERFEVTSEL_0 + 1, SEL(0xC0, 0x00, OS | EN));       /* instructions, kernel */
    wr(0, X86_PERFEVTSEL_0 + 2, SEL(0x3C, 0x00, USR | OS | EN)); /* cycles */
    wr(0, X86_PERFEVTSEL_0 + 3, SEL(0x2E, 0x41, USR | OS | EN)); /* LLC misses */
    wr(0, X86_PERFEVTSEL_0 + 4, SEL(0xC0, 0x00, USR));           /* not enabled */
    wr(0, X86_PERFEVTSEL_0 + 5, SEL(0x99, 0x00, USR | EN));      /* unknown event */
    wr(0, X86_FIXED_CTR_CTRL, 0x2 | 0x3 << 4 | 0x1 << 8); /* instr user, cycles all, ref kernel */
    wr(0, X86_PERF_GLOBAL_CTRL, 0x70000003Full);
    run(0, 0, 1000);
    run(0, 1, 100);
    run(1, 0, 7777); /* another CPU */
    assert_int_equal(rd(0, X86_PMC_0 + 0), 1000);
    assert_int_equal(rd(0, X86_PMC_0 + 1), 100);
    assert_int_equal(rd(0, X86_PMC_0 + 2), 2200);
    assert_int_equal(rd(0, X86_PMC_0 + 3), 250 + 25);
    assert_int_equal(rd(0, X86_PMC_0 + 4), 0);
    assert_int_equal(rd(0, X86_PMC_0 + 5), 0);
    assert_int_equal(rd(0, X86_FIXED_CTR_0 + 0), 1000);
    assert_int_equal(rd(0, X86_FIXED_CTR_0 + 1), 2200);
    assert_int_equal(rd(0, X86_FIXED_CTR_0 + 2), 200);
    /* Global enable off for counter 0 and fixed 1: they stop. */
    wr(0, X86_PERF_GLOBAL_CTRL, 0x50000003Eull);
    run(0, 0, 10);
    assert_int_equal(rd(0, X86_PMC_0 + 0), 1000);
    assert_int_equal(rd(0, X86_PMC_0 + 2), 2220);
    assert_int_equal(rd(0, X86_FIXED_CTR_0 + 1), 2200);
    assert_int_equal(rd(0, X86_FIXED_CTR_0 + 0), 1010);
    assert_int_equal(rd(1, X86_PMC_0 + 0), 0);
}

/* AnyThread counts the sibling thread's events too (CPUs 0 and 1 share
 * a core on intel-xeon); a counter without it only its own. */
static void test_any_thread(void **state)
{
    (void)state;
    boot("intel-xeon");
    wr(0, X86_PERFEVTSEL_0, SEL(0xC0, 0, USR | EN | ANY));
    wr(0, X86_PERFEVTSEL_0 + 1, SEL(0xC0, 0, USR | EN));
    wr(0, X86_FIXED_CTR_CTRL, 0x2 | 0x4); /* fixed 0: user, AnyThread */
    wr(0, X86_PERF_GLOBAL_CTRL, 0x100000003ull);
    run(1, 0, 40);
    run(0, 0, 2);
    run(2, 0, 500); /* another core */
    assert_int_equal(rd(0, X86_PMC_0), 42);
    assert_int_equal(rd(0, X86_PMC_0 + 1), 2);
    assert_int_equal(rd(0, X86_FIXED_CTR_0), 42);
}

/* Overflow: passing 2^48 wraps, sets the status bit whether or not the
 * interrupt is on, and asks a PMI only with INT (or the fixed PMI bit),
 * of the counter's own CPU; STATUS_RESET clears the bits written, and
 * STATUS_SET sets them without a PMI. */
static void test_overflow(void **state)
{
    (void)state;
    boot("intel-xeon");
    uint64_t ev[X86_PMU_NEV] = {0};
    ev[X86_EV_INSTR] = 10;
    wr(1, X86_PERFEVTSEL_0, SEL(0xC0, 0, USR | EN | INT));
    wr(1, X86_PERFEVTSEL_0 + 1, SEL(0xC0, 0, USR | EN));
    wr(1, X86_PMC_0, 0xFFFFFFFB);     /* -5 */
    wr(1, X86_PMC_0 + 1, 0xFFFFFFF6); /* -10 */
    wr(1, X86_FIXED_CTR_0, (1ull << 48) - 3);
    wr(1, X86_FIXED_CTR_CTRL, 0x2 | 0x8);
    wr(1, X86_PERF_GLOBAL_CTRL, 0x100000003ull);
    assert_int_equal(x86_pmu_count(&X, 1, 1, ev), 0); /* kernel: not counted */
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS), 0);
    assert_int_equal(x86_pmu_count(&X, 1, 0, ev), 1u << 1); /* thread 1 of core 0 */
    assert_int_equal(rd(1, X86_PMC_0), 5);
    assert_int_equal(rd(1, X86_PMC_0 + 1), 0);
    assert_int_equal(rd(1, X86_FIXED_CTR_0), 7);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS), 0x100000003ull);
    assert_int_equal(rd(0, X86_PERF_GLOBAL_STATUS), 0);
    /* Only counter 1 overflows (no INT): status, no PMI. */
    wr(1, X86_PERF_GLOBAL_STATUS_RESET, 0x100000003ull);
    wr(1, X86_PMC_0 + 1, 0xFFFFFFFF);
    assert_int_equal(x86_pmu_count(&X, 1, 0, ev), 0);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS), 0x2);
    wr(1, X86_PERF_GLOBAL_STATUS_RESET, 0x2);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS), 0);
    wr(1, X86_PERF_GLOBAL_STATUS_SET, 0x400000005ull | 1ull << 62);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS), 0x400000005ull | 1ull << 62);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS_RESET), 0);
    assert_int_equal(rd(1, X86_PERF_GLOBAL_STATUS_SET), 0);
}

/* In use: a counter with an event selected, a fixed counter enabled, and
 * bit 63 while any interrupt enable is set. */
static void test_inuse(void **state)
{
    (void)state;
    boot("intel-xeon");
    wr(0, X86_PERFEVTSEL_0 + 2, SEL(0x3C, 0, 0));
    wr(0, X86_FIXED_CTR_CTRL, 0x1 << 4);
    assert_int_equal(rd(0, X86_PERF_GLOBAL_INUSE), 0x200000004ull);
    wr(0, X86_PERFEVTSEL_0 + 7, SEL(0, 0, INT));
    assert_int_equal(rd(0, X86_PERF_GLOBAL_INUSE), 0x200000004ull | 1ull << 63);
}

/* RDPMC: ECX n reads general-purpose counter n, ECX 2^30 + n fixed
 * counter n; anything else is #GP. */
static void test_rdpmc(void **state)
{
    (void)state;
    boot("intel-xeon-skx");
    uint64_t v;
    wr(1, X86_PMC_0 + 3, 1234);
    wr(1, X86_FIXED_CTR_0 + 2, 0xABCDEF012345ull);
    assert_int_equal(x86_pmu_rdpmc(&X, 1, 3, &v), HW_OK);
    assert_int_equal(v, 1234);
    assert_int_equal(x86_pmu_rdpmc(&X, 1, 1u << 30 | 2, &v), HW_OK);
    assert_int_equal(v, 0xABCDEF012345ull);
    assert_int_equal(x86_pmu_rdpmc(&X, 1, 4, &v), HW_GP);
    assert_int_equal(x86_pmu_rdpmc(&X, 1, 1u << 30 | 3, &v), HW_GP);
    assert_int_equal(x86_pmu_rdpmc(&X, 1, 1u << 31, &v), HW_GP);
    assert_int_equal(x86_pmu_rdpmc(&X, 1, 1u << 29, &v), HW_GP);
}

/* AMD: no Intel PMU; leaf 0AH reads 0 and the MSRs are #GP. */
static void test_amd(void **state)
{
    (void)state;
    boot("amd-epyc");
    uint32_t r[4];
    uint64_t v;
    assert_int_equal(x86_cpuid(&X, 0, 0xA, 0, r), HW_OK);
    assert_int_equal(r[0] | r[1] | r[2] | r[3], 0);
    assert_int_equal(x86_rdmsr(&X, 0, X86_PERFEVTSEL_0, &v), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_PERF_GLOBAL_CTRL, 0), HW_GP);
    assert_int_equal(x86_pmu_rdpmc(&X, 0, 0, &v), HW_GP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_leaf, teardown),
        cmocka_unit_test_teardown(test_reset, teardown),
        cmocka_unit_test_teardown(test_reserved, teardown),
        cmocka_unit_test_teardown(test_pmc_write, teardown),
        cmocka_unit_test_teardown(test_counting, teardown),
        cmocka_unit_test_teardown(test_any_thread, teardown),
        cmocka_unit_test_teardown(test_overflow, teardown),
        cmocka_unit_test_teardown(test_inuse, teardown),
        cmocka_unit_test_teardown(test_rdpmc, teardown),
        cmocka_unit_test_teardown(test_amd, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
