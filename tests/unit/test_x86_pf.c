/* Unit tests for the prefetcher control MSRs (hw/x86_pf.c): Intel
 * MSR_MISC_FEATURE_CONTROL (0x1A4) and AMD PrefetchControl (MSRC000_0108).
 * Reset 0 (every prefetcher on); each disable bit turns its prefetcher off
 * in the machine for both threads of the core and no other core; reserved
 * bits are #GP; the register exists only where the part has prefetchers and
 * is the vendor's; a profile without prefetchers has neither. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "drv/pfctl.h"
#include "hw/x86_pf.h"

#define X86_FIXTURE_NTASK 2
#include "x86_fixture.h"

static const char text[] = "name: pf-x86\n"
                           "vendor: %s\n"
                           "topology: {sockets: 1, modules: 2, threads: 2}\n"
                           "core:\n"
                           "  frequency: 1GHz\n"
                           "  cpi: 1\n"
                           "%s"
                           "caches:\n"
                           "  L1I: {size: 4K, ways: 4, latency: 2}\n"
                           "  L1D: {size: 4K, ways: 4, latency: 4}\n"
                           "  L2: {size: 32K, ways: 8, latency: 12}\n"
                           "  L3: {size: 256K, ways: 8, latency: 40}\n"
                           "memory: {channels: 2, peak: 20GB/s, latency: 80ns}\n";

static const char all4[] = "  prefetch: {l2_stream: true, l2_adjacent: true, l1_next_line: true, "
                           "l1_ip_stride: true}\n";

static void boot_vendor(const char *vendor, const char *pf)
{
    char buf[2048];
    snprintf(buf, sizeof buf, text, vendor, pf);
    boot_text(buf);
}

static uint64_t rd(unsigned cpu, uint32_t msr)
{
    uint64_t v = 0;
    assert_int_equal(x86_rdmsr(&X, cpu, msr, &v), HW_OK);
    return v;
}

/* Intel: reset 0, all on; bit k turns kind k off on both threads of the
 * core (CPUs 2 and 3), not on core 0; 0xF all off; bits 4..63 #GP and leave
 * the value as it was. */
static void test_intel(void **state)
{
    (void)state;
    boot_vendor("intel", all4);
    for (unsigned c = 0; c < 4; c++) {
        assert_int_equal(rd(c, X86_MISC_FEATURE_CONTROL), 0);
        assert_int_equal(mach_get_prefetch(&M, c), PF_ALL);
    }
    static const unsigned bit_kind[4] = {PF_L2_STREAM, PF_L2_ADJ, PF_L1_NEXT, PF_L1_IP};
    for (unsigned b = 0; b < 4; b++) {
        assert_int_equal(x86_wrmsr(&X, 3, X86_MISC_FEATURE_CONTROL, 1ull << b), HW_OK);
        assert_int_equal(rd(2, X86_MISC_FEATURE_CONTROL), 1ull << b); /* one MSR per core */
        assert_int_equal(mach_get_prefetch(&M, 2), PF_ALL & ~(1u << bit_kind[b]));
        assert_int_equal(mach_get_prefetch(&M, 3), PF_ALL & ~(1u << bit_kind[b]));
        assert_int_equal(mach_get_prefetch(&M, 0), PF_ALL);
        assert_int_equal(rd(0, X86_MISC_FEATURE_CONTROL), 0);
    }
    assert_int_equal(x86_wrmsr(&X, 2, X86_MISC_FEATURE_CONTROL, 0xF), HW_OK);
    assert_int_equal(mach_get_prefetch(&M, 3), 0);
    for (unsigned b = 4; b < 64; b++)
        assert_int_equal(x86_wrmsr(&X, 2, X86_MISC_FEATURE_CONTROL, 1ull << b), HW_GP);
    assert_int_equal(rd(3, X86_MISC_FEATURE_CONTROL), 0xF);
    assert_int_equal(mach_get_prefetch(&M, 3), 0);
    /* AMD's register is not an Intel part's. */
    uint64_t v;
    assert_int_equal(x86_rdmsr(&X, 0, X86_AMD_PREFETCH_CONTROL, &v), HW_GP);
    /* Reset turns them all on again. */
    x86_reset(&X);
    assert_int_equal(rd(3, X86_MISC_FEATURE_CONTROL), 0);
    assert_int_equal(mach_get_prefetch(&M, 3), PF_ALL);
}

/* AMD: L1Stream, L1Stride, L2Stream and UpDown switch the DCU next-line,
 * IP-stride, streamer and adjacent-line prefetchers; L1Region is kept and
 * switches nothing modelled; bit 4 and 63:6 #GP. */
static void test_amd(void **state)
{
    (void)state;
    boot_vendor("amd", all4);
    assert_int_equal(rd(1, X86_AMD_PREFETCH_CONTROL), 0);
    static const struct {
        uint64_t bit;
        unsigned kinds_off;
    } map[] = {{1u << 0, 1u << PF_L1_NEXT},
               {1u << 1, 1u << PF_L1_IP},
               {1u << 2, 0},
               {1u << 3, 1u << PF_L2_STREAM},
               {1u << 5, 1u << PF_L2_ADJ}};
    for (unsigned i = 0; i < sizeof map / sizeof map[0]; i++) {
        assert_int_equal(x86_wrmsr(&X, 0, X86_AMD_PREFETCH_CONTROL, map[i].bit), HW_OK);
        assert_int_equal(rd(1, X86_AMD_PREFETCH_CONTROL), map[i].bit);
        assert_int_equal(mach_get_prefetch(&M, 1), PF_ALL & ~map[i].kinds_off);
        assert_int_equal(mach_get_prefetch(&M, 2), PF_ALL);
    }
    assert_int_equal(x86_wrmsr(&X, 0, X86_AMD_PREFETCH_CONTROL, 1u << 4), HW_GP);
    for (unsigned b = 6; b < 64; b++)
        assert_int_equal(x86_wrmsr(&X, 0, X86_AMD_PREFETCH_CONTROL, 1ull << b), HW_GP);
    assert_int_equal(rd(0, X86_AMD_PREFETCH_CONTROL), 1u << 5);
    uint64_t v;
    assert_int_equal(x86_rdmsr(&X, 0, X86_MISC_FEATURE_CONTROL, &v), HW_GP);
}

/* A part whose profile names no prefetcher has no control MSR: #GP both ways. */
static void test_absent(void **state)
{
    (void)state;
    boot_vendor("intel", "");
    uint64_t v;
    assert_int_equal(x86_rdmsr(&X, 0, X86_MISC_FEATURE_CONTROL, &v), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_MISC_FEATURE_CONTROL, 0), HW_GP);
    /* intel-atom names no prefetcher; intel-xeon, the default, names
     * Intel's four, so it has the MSR at its reset value 0. */
    boot("intel-atom");
    assert_int_equal(x86_rdmsr(&X, 0, X86_MISC_FEATURE_CONTROL, &v), HW_GP);
    assert_int_equal(x86_wrmsr(&X, 0, X86_MISC_FEATURE_CONTROL, 0), HW_GP);
    boot("intel-xeon");
    assert_int_equal(x86_rdmsr(&X, 0, X86_MISC_FEATURE_CONTROL, &v), HW_OK);
    assert_int_equal(v, 0);
    boot("amd-epyc");
    assert_int_equal(x86_rdmsr(&X, 0, X86_AMD_PREFETCH_CONTROL, &v), HW_GP);
}

/* Only the kinds the part has are switched on at reset. */
static void test_partial(void **state)
{
    (void)state;
    boot_vendor("intel", "  prefetch: {l2_stream: true}\n");
    assert_int_equal(mach_get_prefetch(&M, 0), 1u << PF_L2_STREAM);
    assert_int_equal(x86_wrmsr(&X, 0, X86_MISC_FEATURE_CONTROL, 0xE), HW_OK);
    assert_int_equal(mach_get_prefetch(&M, 0), 1u << PF_L2_STREAM);
    assert_int_equal(x86_wrmsr(&X, 0, X86_MISC_FEATURE_CONTROL, 0x1), HW_OK);
    assert_int_equal(mach_get_prefetch(&M, 1), 0);
}

/* The driver's write (drv/pfctl.c): the kinds left on become the vendor's
 * disable bits, and the machine follows. */
static void test_driver(void **state)
{
    (void)state;
    struct hw_x86_if r;
    struct err e = {0};
    boot_vendor("intel", all4);
    x86_regif(&X, &r);
    unsigned on = 1u << PF_L2_ADJ | 1u << PF_L1_IP;
    assert_int_equal(pfctl_set(&r, 0, 3, on, &e), 0);
    assert_int_equal(rd(2, X86_MISC_FEATURE_CONTROL), 0x5);
    assert_int_equal(mach_get_prefetch(&M, 2), on);
    boot_vendor("amd", all4);
    x86_regif(&X, &r);
    assert_int_equal(pfctl_set(&r, 1, 0, 0, &e), 0);
    assert_int_equal(rd(1, X86_AMD_PREFETCH_CONTROL), 0x2B); /* L1Region left on */
    assert_int_equal(mach_get_prefetch(&M, 1), 0);
    assert_int_equal(pfctl_set(&r, 1, 0, on, &e), 0);
    assert_int_equal(rd(0, X86_AMD_PREFETCH_CONTROL), 0x9); /* L2Stream, L1Stream */
    assert_int_equal(mach_get_prefetch(&M, 0), on);
    /* A part without the register: the driver reports the #GP. */
    boot_vendor("intel", "");
    x86_regif(&X, &r);
    assert_int_not_equal(pfctl_set(&r, 0, 0, 0, &e), 0);
    assert_non_null(strstr(e.msg, "0x1a4"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_intel, teardown),
        cmocka_unit_test_teardown(test_amd, teardown),
        cmocka_unit_test_teardown(test_absent, teardown),
        cmocka_unit_test_teardown(test_partial, teardown),
        cmocka_unit_test_teardown(test_driver, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
