/* Unit tests for drv/lwpl.c, the LWP user library, on the amd-lwp model
 * through a simulated process (hw/lwp_proc.h): what it writes into the
 * LWPCB (Table 4), how it drains the ring (5.4, 5.5.3), and every refusal
 * of a profile the CPU or the OS does not allow (Table 2, Table 3). Records
 * are stored with the unit's lwp_store, as the hardware would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

#include "lwp_plat.h"

#include "drv/lwpl.h"
#include "hw/lwp.h"
#include "hw/x86.h"

static struct mach M;
static struct x86 X;
static struct lwp_proc P;
static struct lwp_procif R;

/* The machine of profile p; the OS's part: LWPMSR0 enables what the CPU
 * offers (msr0), or nothing. */
static int setup_plat(const struct plat *p, uint64_t msr0)
{
    struct err e = {0};
    if (mach_init(&M, p, 1, &e) || x86_init(&X, &M, &e))
        fail_msg("%s", e.msg);
    lwp_proc_init(&P, &X, 0);
    lwp_bind(&X.lwp, 0, &P.vm);
    lwp_proc_if(&P, &R);
    if (msr0)
        assert_int_equal(x86_wrmsr(&X, 0, LWP_MSR0, msr0), HW_OK);
    return 0;
}

static int setup_with(uint64_t msr0)
{
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, "amd-lwp", &e))
        fail_msg("%s", e.msg);
    return setup_plat(&p, msr0);
}

#define MSR0_ALL 0x8000000full /* Enabled, IRE, BRE, DME, Interrupt */

static int setup(void **state)
{
    (void)state;
    return setup_with(MSR0_ALL);
}

static int teardown(void **state)
{
    (void)state;
    lwp_proc_free(&P);
    x86_free(&X);
    mach_free(&M);
    return 0;
}

static struct lwpl_cfg cfg_ir(uint32_t interval, uint32_t buffer, uint32_t threshold)
{
    struct lwpl_cfg c = {.nev = 1, .buffer = buffer, .threshold = threshold};
    c.ev[0].id = LWP_EV_INSTR;
    c.ev[0].interval = interval;
    return c;
}

static uint32_t cb32(const struct lwpl *l, unsigned off)
{
    uint32_t v = 0;
    assert_int_equal(R.read(R.ctx, l->cb + off, &v, 4), 0);
    return v;
}

/* Collects drained records' instruction addresses. */
struct got {
    uint64_t ip[256];
    unsigned n;
};

static void collect(void *ctx, const uint8_t rec[LWPL_RECORD])
{
    struct got *g = ctx;
    uint64_t ip;
    memcpy(&ip, rec + 8, 8);
    assert_int_equal(rec[0], LWP_EV_INSTR);
    if (g->n < 256)
        g->ip[g->n++] = ip;
}

static void store(uint64_t ip)
{
    struct lwp_rec r = {.event_id = LWP_EV_INSTR, .ip = ip, .addr = ip + 4};
    assert_int_equal(lwp_store(&X.lwp, 0, &r), HW_OK);
}

/* CPUID as Table 2 and the profile give it. */
static void test_caps(void **state)
{
    (void)state;
    struct lwpl_caps c;
    lwpl_caps(&R, &c);
    assert_true(c.present);
    assert_int_equal(c.enabled, MSR0_ALL);
    assert_int_equal(c.cb_size, 40 + 8 * 3);
    assert_int_equal(c.event_size, 32);
    assert_int_equal(c.max_events, 3);
    assert_int_equal(c.version, 1);
    assert_int_equal(c.cache_max, 10);
    assert_true(c.data_address && c.cache_levels && c.cache_latency);
    assert_int_equal(c.min_buffer, 2); /* LwpMinBufferSize: 2 x 32 records */
    assert_int_equal(lwpl_min_buffer(&c), 2048);
}

/* The LWPCB holds what was asked, and LLWPCB took it on. */
static void test_open_builds_lwpcb(void **state)
{
    (void)state;
    struct lwpl l;
    struct err e = {0};
    struct lwpl_cfg c = cfg_ir(1000, 4096 + 20, 1024);
    c.nev = 3;
    c.ev[1].id = LWP_EV_BRANCH;
    c.ev[1].interval = 50;
    c.ev[2].id = LWP_EV_DCMISS;
    c.ev[2].interval = 7;
    c.random = 4;
    c.minlat = 3;
    c.clf = 1;
    c.levels = LWPL_RAM;
    c.ndb = 1;
    assert_int_equal(lwpl_open(&l, &R, &c, &e), 0);
    assert_int_equal(l.size, 4096);        /* whole records */
    assert_int_equal(l.flags, 0x8000000f); /* EN, IRE, BRE, DME, INT (Threshold set) */
    assert_int_equal(cb32(&l, LWPCB_BUFFER_SIZE), 4096 | 4u << 28);
    assert_int_equal(cb32(&l, LWPCB_BUFFER_BASE), (uint32_t)l.buf);
    assert_int_equal(cb32(&l, LWPCB_THRESHOLD), 1024);
    assert_int_equal(cb32(&l, LWPCB_FILTERS), 3u | 1u << 24 | 1u << 27 | 1u << 30);
    assert_int_equal(cb32(&l, LWPCB_EVENT(0)), 1000 | 1u << 26);
    assert_int_equal(cb32(&l, LWPCB_EVENT(1)), 50 | 2u << 26);
    assert_int_equal(cb32(&l, LWPCB_EVENT(2)), 7 | 3u << 26);
    uint64_t a = 0;
    assert_int_equal(R.slwpcb(R.ctx, &a), HW_OK);
    assert_int_equal(a, l.cb);
    assert_int_equal(l.buf % 32, 0);
}

/* Records come out oldest first, the tail follows, and a drained ring is
 * empty; across the ring's wrap too. */
static void test_drain(void **state)
{
    (void)state;
    struct lwpl l;
    struct err e = {0};
    struct lwpl_cfg c = cfg_ir(10, 64 * 32, 0);
    assert_int_equal(lwpl_open(&l, &R, &c, &e), 0);
    struct got g = {0};
    for (unsigned k = 0; k < 3; k++)
        store(0x1000 + k);
    /* The head is written lazily: flush to see it. */
    assert_int_equal(lwpl_drain(&l, 1, collect, &g, &e), 3);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.ip[0], 0x1000);
    assert_int_equal(g.ip[2], 0x1002);
    assert_int_equal(cb32(&l, LWPCB_BUFFER_TAIL_OFFSET), 3 * 32);
    assert_int_equal(lwpl_drain(&l, 1, collect, &g, &e), 0);
    /* 70 more: the ring wraps; draining as it goes loses nothing. */
    for (unsigned k = 0; k < 70; k++) {
        store(0x2000 + k);
        if (k == 40)
            assert_int_equal(lwpl_drain(&l, 1, collect, &g, &e), 41);
    }
    assert_int_equal(lwpl_drain(&l, 1, collect, &g, &e), 29);
    assert_int_equal(g.n, 73);
    for (unsigned k = 0; k < 70; k++)
        assert_int_equal(g.ip[3 + k], 0x2000 + k);
    uint64_t missed = 1;
    assert_int_equal(lwpl_missed(&l, &missed, &e), 0);
    assert_int_equal(missed, 0);
    assert_int_equal(l.drained, 73);
}

/* A ring nobody drains fills: 63 records fit in 64 slots (head may not
 * meet tail), the rest are MissedEvents. */
static void test_full_ring(void **state)
{
    (void)state;
    struct lwpl l;
    struct err e = {0};
    struct lwpl_cfg c = cfg_ir(10, 64 * 32, 0);
    assert_int_equal(lwpl_open(&l, &R, &c, &e), 0);
    for (unsigned k = 0; k < 100; k++)
        store(0x3000 + k);
    struct got g = {0};
    uint64_t missed = 0;
    assert_int_equal(lwpl_close(&l, collect, &g, &e), 0);
    assert_int_equal(lwpl_missed(&l, &missed, &e), 0);
    assert_int_equal(g.n + missed, 100);
    assert_int_equal(g.n, 63);
    /* Closed: LWP is off. */
    uint64_t a = 1;
    assert_int_equal(R.slwpcb(R.ctx, &a), HW_OK);
    assert_int_equal(a, 0);
}

static void refused(const struct lwpl_cfg *c, int code, const char *msg)
{
    struct lwpl l;
    struct err e = {0};
    assert_int_equal(lwpl_open(&l, &R, c, &e), code);
    if (!strstr(e.msg, msg))
        fail_msg("message '%s' lacks '%s'", e.msg, msg);
}

static void test_refusals(void **state)
{
    (void)state;
    struct lwpl_cfg c = cfg_ir(0, 4096, 0);
    refused(&c, -QOSIM_EINVAL, "interval 0 is not 1 to 67108863");
    c = cfg_ir(1u << 26, 4096, 0);
    refused(&c, -QOSIM_EINVAL, "interval 67108864");
    c = cfg_ir(10, 32, 0);
    refused(&c, -QOSIM_EINVAL, "at least two records");
    c = cfg_ir(10, 4096, 4096);
    refused(&c, -QOSIM_EINVAL, "threshold 4096: must be below");
    c = cfg_ir(10, 4096, 0);
    c.ev[0].id = 4;
    refused(&c, -QOSIM_EINVAL, "EventId 4");
    c = cfg_ir(10, 4096, 0);
    c.nev = 4;
    refused(&c, -QOSIM_EINVAL, "1 to 3 at once");
    c = cfg_ir(10, 4096, 0);
    c.random = 16;
    refused(&c, -QOSIM_EINVAL, "out of range");
}

/* The library reads the smallest ring from CPUID (LwpMinBufferSize, ECX[23:16])
 * and refuses a smaller one itself, before LLWPCB, which would only leave
 * LWP off with Flags 0 and no reason. */
static void test_min_buffer(void **state)
{
    (void)state;
    /* amd-lwp: 2 x 32 records. One record short is refused, naming the
     * field, and LWP stays off. */
    struct lwpl_cfg c = cfg_ir(10, 2048 - 32, 0);
    refused(&c, -QOSIM_EINVAL,
            "a ring of 2016 bytes: this CPU takes at least 64 records (2048 bytes; "
            "CPUID 0x8000001C ECX[23:16] LwpMinBufferSize 2 x 32)");
    uint64_t a = 1;
    assert_int_equal(R.slwpcb(R.ctx, &a), HW_OK);
    assert_int_equal(a, 0);
    /* Whole records count: 2048 + 31 bytes is 64 records, too. */
    c = cfg_ir(10, 2048 + 31, 0);
    struct lwpl l;
    struct err e = {0};
    assert_int_equal(lwpl_open(&l, &R, &c, &e), 0);
    assert_int_equal(l.size, 2048);
    assert_int_equal(l.flags, 0x3); /* EN, IRE */
    assert_int_equal(lwpl_close(&l, NULL, NULL, &e), 0);
    /* A CPU that reports no minimum (0, as on one built to the 2007
     * proposal): the library's own floor, two records, is all. */
    teardown(state);
    struct plat p;
    const char *none[] = {"min_buffer: 2", "# min_buffer left out", NULL};
    lwp_plat(&p, none);
    setup_plat(&p, MSR0_ALL);
    struct lwpl_caps k;
    lwpl_caps(&R, &k);
    assert_int_equal(k.min_buffer, 0);
    assert_int_equal(lwpl_min_buffer(&k), 64);
    c = cfg_ir(10, 64, 0);
    assert_int_equal(lwpl_open(&l, &R, &c, &e), 0);
    assert_int_equal(l.flags, 0x3);
    c = cfg_ir(10, 63, 0);
    refused(&c, -QOSIM_EINVAL, "at least two records");
}

/* What the OS did not enable in LWPMSR0 is refused before LLWPCB. */
static void test_os_not_enabled(void **state)
{
    (void)state;
    teardown(state);
    setup_with(0);
    struct lwpl_cfg c = cfg_ir(10, 4096, 0);
    refused(&c, -QOSIM_EUNSUP, "the OS has not enabled LWP");
    teardown(state);
    setup_with(0x1 | 0x2); /* Enabled, IRE only */
    c.ev[0].id = LWP_EV_BRANCH;
    refused(&c, -QOSIM_EUNSUP, "the OS has not enabled branches retired (LWPMSR0[2])");
    c.ev[0].id = LWP_EV_INSTR;
    struct lwpl l;
    struct err e = {0};
    assert_int_equal(lwpl_open(&l, &R, &c, &e), 0);
    assert_int_equal(l.flags, 0x3); /* no INT: Threshold 0 */
}

/* A CPU without LWP (amd-epyc): refused, naming the CPUID bit. */
static void test_no_lwp(void **state)
{
    (void)state;
    struct plat p;
    struct mach m;
    struct x86 x;
    struct lwp_proc pr;
    struct lwp_procif r;
    struct err e = {0};
    if (plat_load(&p, "amd-epyc", &e) || mach_init(&m, &p, 1, &e) || x86_init(&x, &m, &e))
        fail_msg("%s", e.msg);
    lwp_proc_init(&pr, &x, 0);
    lwp_proc_if(&pr, &r);
    struct lwpl l;
    struct lwpl_cfg c = cfg_ir(10, 4096, 0);
    assert_int_equal(lwpl_open(&l, &r, &c, &e), -QOSIM_EUNSUP);
    assert_non_null(strstr(e.msg, "CPUID 0x80000001 ECX[15] is 0"));
    lwp_proc_free(&pr);
    x86_free(&x);
    mach_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_builds_lwpcb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_min_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_os_not_enabled, setup, teardown),
        cmocka_unit_test(test_no_lwp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
