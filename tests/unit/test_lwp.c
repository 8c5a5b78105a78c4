/* Unit tests for sim/cpu/vmem.c (a process address space) and hw/lwp.c (the
 * LWP unit): the CPUID values of Table 2 for the amd-lwp profile, the
 * LWPMSRs' #GP cases, LLWPCB and SLWPCB as section 5.3 of the 2007 proposal
 * states them, and the ring-buffer rules of 3 and 5.4 (MissedEvents,
 * Threshold at equality, the lazy head of 5.5.3). Every expected value is
 * worked out by hand from the profile and the proposal, never read back from
 * the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "lwp_plat.h"

#include "hw/lwp.h"
#include "sim/scen/plat.h"
#include "sim/cpu/vmem.h"
#include "util/conf.h"
#include "util/rng.h"

#include "qosim.h"

static struct lwp U;
static struct vmem V;

/* Addresses in the test process. */
#define CB    0x10000ull /* an LWPCB, on its own user page */
#define CB2   0x11000ull /* another one */
#define BUF   0x20000ull /* a ring buffer */
#define KPAGE 0x30000ull /* a supervisor page */
#define RW    (VMEM_U | VMEM_W)

/* amd-lwp: 3 events, 10 latency bits, min_buffer 2 (64 records, reported
 * in CPUID 0x8000001C ECX[23:16]). */
#define CBSIZE   64u           /* 40 + 8 x 3 */
#define MINBUF   2048u         /* 2 x 32 records x 32 bytes */
#define ALL_MSR0 0x8000000Full /* Enabled, IRE, BRE, DME, Interrupt */

/* ---- set-up ---- */

static void boot_subs(const char *const *subs)
{
    struct plat p;
    struct err e = {0};
    lwp_plat(&p, subs);
    lwp_free(&U);
    if (lwp_init(&U, &p, 1, &e))
        fail_msg("lwp_init: %s", e.msg);
    vmem_free(&V);
    vmem_init(&V);
    assert_int_equal(vmem_map(&V, CB, 0x2000, RW), 0);
    assert_int_equal(vmem_map(&V, BUF, 0x4000, RW), 0);
    assert_int_equal(vmem_map(&V, KPAGE, 0x1000, VMEM_W), 0);
}

static void boot_with(const char *from, const char *to)
{
    const char *subs[] = {from, to, NULL};
    boot_subs(from ? subs : NULL);
}

static int setup(void **state)
{
    (void)state;
    boot_with(NULL, NULL);
    return 0;
}

static int setup_vmem(void **state)
{
    (void)state;
    vmem_init(&V);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    lwp_free(&U);
    vmem_free(&V);
    return 0;
}

/* ---- memory helpers (supervisor rights: the test harness is the OS) ---- */

static void w32(uint64_t a, uint32_t v)
{
    struct vmem_fault f;
    if (vmem_write_u(&V, a, 4, v, 0, &f))
        fail_msg("w32 0x%llx faults", (unsigned long long)a);
}

static void w64(uint64_t a, uint64_t v)
{
    struct vmem_fault f;
    if (vmem_write_u(&V, a, 8, v, 0, &f))
        fail_msg("w64 0x%llx faults", (unsigned long long)a);
}

static uint32_t r32(uint64_t a)
{
    uint64_t v = 0;
    struct vmem_fault f;
    if (vmem_read_u(&V, a, 4, &v, 0, &f))
        fail_msg("r32 0x%llx faults", (unsigned long long)a);
    return (uint32_t)v;
}

static uint64_t r64(uint64_t a)
{
    uint64_t v = 0;
    struct vmem_fault f;
    if (vmem_read_u(&V, a, 8, &v, 0, &f))
        fail_msg("r64 0x%llx faults", (unsigned long long)a);
    return v;
}

/* An LWPCB at a, by hand from Table 4 and docs/registers.md 3. */
struct ev {
    unsigned id;
    uint32_t interval, counter;
};

static void put_cb(uint64_t a, uint32_t bufsize, uint64_t base, uint32_t threshold,
                   const struct ev ev[3])
{
    w32(a + 0, 0xdeadbeef); /* Flags: must be overwritten by LLWPCB */
    w32(a + 4, bufsize);
    w64(a + 8, base);
    w32(a + 16, 0); /* BufferHeadOffset */
    w32(a + 20, 0); /* BufferTailOffset */
    w64(a + 24, 0); /* MissedEvents */
    w32(a + 32, threshold);
    w32(a + 36, 0); /* Filters */
    for (unsigned i = 0; i < 3; i++) {
        w32(a + 40 + 8 * i, ev[i].id << 26 | ev[i].interval);
        w32(a + 44 + 8 * i, ev[i].counter);
    }
}

static const struct ev EV3[3] = {{1, 100, 100}, {2, 200, 200}, {3, 300, 300}};

static void enable(unsigned cpu, uint64_t msr0)
{
    assert_int_equal(lwp_wrmsr(&U, cpu, LWP_MSR0, msr0), HW_OK);
}

static void llwpcb_ok(unsigned cpu, uint64_t addr, unsigned ring, uint64_t want_old, int line)
{
    uint64_t old = 0xbad;
    enum hw_fault f = lwp_llwpcb(&U, cpu, &V, addr, ring, &old);
    if (f != HW_OK)
        fail_msg("line %d: LLWPCB 0x%llx = %s", line, (unsigned long long)addr, hw_fault_name(f));
    if (old != want_old)
        fail_msg("line %d: LLWPCB returned old 0x%llx, want 0x%llx", line, (unsigned long long)old,
                 (unsigned long long)want_old);
}
#define LLWPCB_OK(cpu, a, ring, old) llwpcb_ok((cpu), (a), (ring), (old), __LINE__)

static uint64_t slwpcb(unsigned cpu, unsigned ring)
{
    uint64_t a = 0xbad;
    assert_int_equal(lwp_slwpcb(&U, cpu, &V, ring, &a), HW_OK);
    return a;
}

static void expect_pf(enum hw_fault f, unsigned cpu, uint64_t addr, unsigned code)
{
    assert_int_equal(f, HW_PF);
    assert_int_equal(U.cpu[cpu].pf.addr, addr);
    assert_int_equal(U.cpu[cpu].pf.code, code);
}

static struct lwp_rec rec_of(unsigned id, uint64_t ip)
{
    return (struct lwp_rec){.event_id = id, .ip = ip};
}

static void store_ok(unsigned cpu, unsigned id, uint64_t ip)
{
    struct lwp_rec r = rec_of(id, ip);
    assert_int_equal(lwp_store(&U, cpu, &r), HW_OK);
}

/* ======== vmem ======== */

static void test_vmem_scalars_le(void **state)
{
    (void)state;
    struct vmem_fault f;
    uint64_t v;
    assert_int_equal(vmem_map(&V, 0x5000, 0x1000, RW), 0);
    /* Demand-zero: a mapped page never written reads zeros. */
    assert_int_equal(vmem_read_u(&V, 0x5ff8, 8, &v, VMEM_ACC_USER, &f), VMEM_OK);
    assert_int_equal(v, 0);
    assert_int_equal(vmem_write_u(&V, 0x5010, 8, 0x0807060504030201ull, VMEM_ACC_USER, &f), 0);
    uint8_t b[8];
    assert_int_equal(vmem_read(&V, 0x5010, b, 8, VMEM_ACC_USER, &f), VMEM_OK);
    for (unsigned i = 0; i < 8; i++)
        assert_int_equal(b[i], i + 1); /* little-endian */
    assert_int_equal(vmem_read_u(&V, 0x5012, 2, &v, 0, &f), 0);
    assert_int_equal(v, 0x0403);
    assert_int_equal(vmem_read_u(&V, 0x5013, 1, &v, 0, &f), 0);
    assert_int_equal(v, 0x04);
    assert_int_equal(vmem_read_u(&V, 0x5014, 4, &v, 0, &f), 0);
    assert_int_equal(v, 0x08070605);
    assert_int_equal(vmem_write_u(&V, 0x5011, 2, 0xbbaa, 0, &f), 0);
    assert_int_equal(vmem_read_u(&V, 0x5010, 4, &v, 0, &f), 0);
    assert_int_equal(v, 0x04bbaa01);
    assert_int_equal(vmem_pages(&V), 1);
}

static void test_vmem_permissions(void **state)
{
    (void)state;
    struct vmem_fault f = {0};
    uint64_t v;
    assert_int_equal(vmem_map(&V, 0x1000, 0x1000, RW), 0);
    assert_int_equal(vmem_map(&V, 0x2000, 0x1000, VMEM_U), 0); /* user, read-only */
    assert_int_equal(vmem_map(&V, 0x3000, 0x1000, VMEM_W), 0); /* supervisor */
    assert_int_equal(vmem_map(&V, 0x4000, 0x1000, 0), 0);      /* supervisor, read-only */

    /* Not mapped: P clear; W and U say what the access was. */
    assert_int_equal(vmem_read_u(&V, 0x9008, 4, &v, VMEM_ACC_USER, &f), VMEM_FAULT);
    assert_int_equal(f.addr, 0x9008);
    assert_int_equal(f.code, VMEM_PF_U);
    assert_int_equal(vmem_write_u(&V, 0x9008, 4, 1, 0, &f), VMEM_FAULT);
    assert_int_equal(f.code, VMEM_PF_W);

    /* User access to a supervisor page: P and U. */
    assert_int_equal(vmem_read_u(&V, 0x3004, 4, &v, VMEM_ACC_USER, &f), VMEM_FAULT);
    assert_int_equal(f.addr, 0x3004);
    assert_int_equal(f.code, VMEM_PF_P | VMEM_PF_U);
    /* The supervisor reads and writes it, and reads user pages (no SMAP). */
    assert_int_equal(vmem_write_u(&V, 0x3004, 4, 7, 0, &f), VMEM_OK);
    assert_int_equal(vmem_read_u(&V, 0x2000, 4, &v, 0, &f), VMEM_OK);
    /* Write to a read-only page faults from every privilege (CR0.WP = 1). */
    assert_int_equal(vmem_write_u(&V, 0x2000, 4, 1, VMEM_ACC_USER, &f), VMEM_FAULT);
    assert_int_equal(f.code, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(vmem_write_u(&V, 0x4000, 1, 1, 0, &f), VMEM_FAULT);
    assert_int_equal(f.code, VMEM_PF_P | VMEM_PF_W);
    assert_int_equal(vmem_read_u(&V, 0x4000, 1, &v, 0, &f), VMEM_OK);
    /* Reading a user read-only page from ring 3 is fine. */
    assert_int_equal(vmem_read_u(&V, 0x2ffc, 4, &v, VMEM_ACC_USER, &f), VMEM_OK);

    /* Across pages: the fault names the first byte of the page refused,
     * and nothing is written on the page allowed. */
    uint8_t ones[16];
    memset(ones, 0xff, sizeof ones);
    assert_int_equal(vmem_write(&V, 0x1ff8, ones, 16, VMEM_ACC_USER, &f), VMEM_FAULT);
    assert_int_equal(f.addr, 0x2000);
    assert_int_equal(f.code, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(vmem_read_u(&V, 0x1ff8, 8, &v, 0, &f), VMEM_OK);
    assert_int_equal(v, 0);
    /* An access starting on a refused page names its own first byte. */
    assert_int_equal(vmem_probe(&V, 0x2ff0, 32, VMEM_ACC_WRITE, &f), VMEM_FAULT);
    assert_int_equal(f.addr, 0x2ff0);
    /* Across two allowed pages it works. */
    assert_int_equal(vmem_map(&V, 0x2000, 0x1000, RW), 0);
    assert_int_equal(vmem_write(&V, 0x1ff8, ones, 16, VMEM_ACC_USER, &f), VMEM_OK);
    assert_int_equal(vmem_read_u(&V, 0x2000, 8, &v, VMEM_ACC_USER, &f), VMEM_OK);
    assert_int_equal(v, ~0ull);
    /* A zero-length access never faults. */
    assert_int_equal(vmem_probe(&V, 0x9000, 0, VMEM_ACC_WRITE | VMEM_ACC_USER, &f), VMEM_OK);
}

static void test_vmem_map_unmap_protect(void **state)
{
    (void)state;
    struct vmem_fault f;
    unsigned perm = 99;
    /* An unaligned range maps every page it touches. */
    assert_int_equal(vmem_map(&V, 0x10ff0, 0x20, RW), 0);
    assert_int_equal(vmem_pages(&V), 2);
    assert_true(vmem_mapped(&V, 0x10000, &perm));
    assert_int_equal(perm, RW);
    assert_true(vmem_mapped(&V, 0x11fff, NULL));
    assert_false(vmem_mapped(&V, 0x12000, NULL));
    assert_int_equal(vmem_write_u(&V, 0x10ff8, 8, 42, VMEM_ACC_USER, &f), 0);

    /* mprotect: keeps contents; fails, changing nothing, over a hole. */
    assert_int_equal(vmem_protect(&V, 0x10000, 0x3000, VMEM_U), -QOSIM_EINVAL);
    assert_true(vmem_mapped(&V, 0x10000, &perm));
    assert_int_equal(perm, RW);
    assert_int_equal(vmem_protect(&V, 0x10000, 0x2000, VMEM_U), 0);
    assert_true(vmem_mapped(&V, 0x11000, &perm));
    assert_int_equal(perm, VMEM_U);
    assert_int_equal(r64(0x10ff8), 42);

    /* Mapping again replaces: fresh zero pages. */
    assert_int_equal(vmem_map(&V, 0x10000, 0x1000, RW), 0);
    assert_int_equal(r64(0x10ff8), 0);
    assert_int_equal(vmem_pages(&V), 2);

    /* munmap skips holes. */
    vmem_unmap(&V, 0xf000, 0x2000);
    assert_false(vmem_mapped(&V, 0x10000, NULL));
    assert_true(vmem_mapped(&V, 0x11000, NULL));
    assert_int_equal(vmem_pages(&V), 1);
    assert_int_equal(vmem_read_u(&V, 0x10000, 1, &(uint64_t){0}, 0, &f), VMEM_FAULT);

    /* Bad arguments change nothing. */
    assert_int_equal(vmem_map(&V, ~0ull - 10, 100, RW), -QOSIM_EINVAL); /* wraps */
    assert_int_equal(vmem_map(&V, 0, 1ull << 48, RW), -QOSIM_EINVAL);   /* too many pages */
    assert_int_equal(vmem_map(&V, 0, 1, 4), -QOSIM_EINVAL);             /* unknown bit */
    assert_int_equal(vmem_map(&V, 0x50000, 0, RW), 0);                  /* nothing */
    assert_int_equal(vmem_pages(&V), 1);
    /* The last page of the address space is reachable. */
    assert_int_equal(vmem_map(&V, ~0ull - 0xfff, 0x1000, RW), 0);
    assert_int_equal(vmem_write_u(&V, ~0ull - 7, 8, 5, VMEM_ACC_USER, &f), VMEM_OK);
    assert_int_equal(r64(~0ull - 7), 5);
    /* A huge unmap walks the table and leaves nothing behind. */
    vmem_unmap(&V, 0, ~0ull);
    assert_int_equal(vmem_pages(&V), 0);
}

/* Many maps and unmaps against a plain bitmap: the hash table's probing
 * and backward-shift deletion keep every page findable. */
static void test_vmem_table_stress(void **state)
{
    (void)state;
    enum { NPG = 700 };
    static unsigned char ref[NPG];
    memset(ref, 0, sizeof ref);
    struct rng r;
    rng_seed(&r, 5, 1);
    /* Page numbers far apart too, so probes run across the table's end. */
    for (int op = 0; op < 20000; op++) {
        unsigned p = (unsigned)rng_below(&r, NPG), n = 1 + (unsigned)rng_below(&r, 4);
        if (p + n > NPG)
            n = NPG - p;
        uint64_t a = (uint64_t)p << 20; /* 1 MiB apart: page numbers p << 8 */
        for (unsigned k = 0; k < n; k++) {
            uint64_t pa = a + ((uint64_t)k << 20);
            if (rng_below(&r, 2)) {
                assert_int_equal(vmem_map(&V, pa, 1, RW), 0);
                ref[p + k] = 1;
            } else {
                vmem_unmap(&V, pa, 1);
                ref[p + k] = 0;
            }
        }
        if (op % 997 == 0 || op == 19999) {
            size_t want = 0;
            for (unsigned q = 0; q < NPG; q++) {
                want += ref[q];
                if (vmem_mapped(&V, (uint64_t)q << 20, NULL) != ref[q])
                    fail_msg("op %d: page %u mapped %d, want %d", op, q,
                             vmem_mapped(&V, (uint64_t)q << 20, NULL), ref[q]);
            }
            assert_int_equal(vmem_pages(&V), want);
        }
    }
}

/* ======== LWP: CPUID ======== */

static void cpuid(unsigned cpu, uint32_t leaf, uint32_t out[4])
{
    memset(out, 0, 4 * sizeof *out);
    lwp_cpuid(&U, cpu, leaf, 0, out);
}

static void test_cpuid_table2(void **state)
{
    (void)state;
    uint32_t o[4];
    /* 0x80000001 ECX[15]; the other bits the CPU model set are kept. */
    uint32_t ext[4] = {1, 2, 0x00000001, 4};
    lwp_cpuid(&U, 0, 0x80000001, 0, ext);
    assert_int_equal(ext[0], 1);
    assert_int_equal(ext[1], 2);
    assert_int_equal(ext[2], 0x00008001);
    assert_int_equal(ext[3], 4);
    /* 0x8000001C. EAX is LWPMSR0, 0 at reset. EBX: LWPCBSize 40 + 8 x 3 =
     * 64, LWPEventSize 32, LWPMaxEvents 3, LWPVersion 1. ECX: LWPCacheMax
     * 10, LWPDataAddress, LwpMinBufferSize 2 (bits 23:16, the later spec's
     * field: 2 x 32 records), LWPCacheLevels (30), LWPCacheLatency (31).
     * EDX: Enabled, Interrupt, IRE, BRE, DME = bits 0-4. */
    cpuid(3, 0x8000001C, o);
    assert_int_equal(o[0], 0);
    assert_int_equal(o[1], 0x01032040);
    assert_int_equal(o[2], 0xC002002A);
    assert_int_equal(lwp_min_ring(&U), MINBUF);
    assert_int_equal(o[3], 0x0000001F);
    assert_int_equal(lwp_cb_size(&U), CBSIZE);
    /* EAX follows this CPU's LWPMSR0 only. */
    enable(3, 0x80000005); /* Enabled, BRE, Interrupt */
    cpuid(3, 0x8000001C, o);
    assert_int_equal(o[0], 0x80000005);
    cpuid(2, 0x8000001C, o);
    assert_int_equal(o[0], 0);
    /* The extension leaf is not offered (EAX[30] is 0): left as given. */
    cpuid(3, 0x8000001D, o);
    assert_int_equal(o[0] | o[1] | o[2] | o[3], 0);
    /* Other leaves untouched. */
    uint32_t other[4] = {9, 9, 9, 9};
    lwp_cpuid(&U, 3, 0x80000008, 0, other);
    assert_int_equal(other[0] + other[1] + other[2] + other[3], 36);
}

static void test_cpuid_profile_variants(void **state)
{
    (void)state;
    uint32_t o[4];
    /* No cache-miss filter of either kind: DME cannot be offered (Table 2
     * requires one), and LWPMSR0.DME is then #GP. */
    boot_with("cache_latency: true", "cache_latency: false");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2], 0x4002002A); /* 10 bits, data address, 2 x 32 records, levels */
    assert_int_equal(o[3], 0x1F);
    const char *neither[] = {"cache_level: true", "cache_level: false", "cache_latency: true",
                             "cache_latency: false", NULL};
    boot_subs(neither);
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2], 0x0002002A);
    assert_int_equal(o[3], 0x0F);
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR0, 0x9), HW_GP);
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR0, 0x80000007), HW_OK);
    /* More events: a bigger LWPCB. */
    boot_with("max_events: 3", "max_events: 26");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[1], 0x011A20F8); /* 40 + 8 x 26 = 248 */
    boot_with("latency_bits: 10", "latency_bits: 31");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2] & 0x1f, 31);
}

/* LwpMinBufferSize, ECX[23:16] (AMD's later LWP spec; the proposal
 * reserves the bits): the profile's min_buffer as it is, in units of 32
 * records, and 0 without one. */
static void test_cpuid_min_buffer(void **state)
{
    (void)state;
    uint32_t o[4];
    /* min_buffer left out: no minimum, the field reads 0. */
    boot_with("min_buffer: 2", "# min_buffer left out");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2], 0xC000002A);
    assert_int_equal(lwp_min_ring(&U), 0);
    boot_with("min_buffer: 2", "min_buffer: 0");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2], 0xC000002A);
    boot_with("min_buffer: 2", "min_buffer: 1");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2], 0xC001002A);
    assert_int_equal(lwp_min_ring(&U), 1024);
    /* The widest the 8-bit field holds: 255 x 32 records of 32 bytes. */
    boot_with("min_buffer: 2", "min_buffer: 255");
    cpuid(0, 0x8000001C, o);
    assert_int_equal(o[2], 0xC0FF002A);
    assert_int_equal(lwp_min_ring(&U), 255u * 32 * 32);
    /* One more does not fit: the profile is refused at its line. */
    struct plat p;
    struct err e = {0};
    const char *wide[] = {"min_buffer: 2", "min_buffer: 256", NULL};
    assert_int_equal(lwp_plat_try(&p, wide, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, "test.yaml:54: qos.lwp.min_buffer: 256 x 32 records do not fit "
                               "CPUID 0x8000001C's 8-bit LwpMinBufferSize field (ECX[23:16])");
    /* lwp_init refuses it too, should a plat come from elsewhere. */
    lwp_plat(&p, NULL);
    p.lwp.min_buffer = 256;
    struct lwp a;
    assert_int_equal(lwp_init(&a, &p, 1, &e), -QOSIM_EINVAL);
    assert_non_null(strstr(e.msg, "does not fit CPUID 0x8000001C"));
}

static void test_absent_unit(void **state)
{
    (void)state;
    struct plat p;
    struct err e = {0};
    struct lwp a;
    assert_int_equal(plat_load(&p, "amd-epyc", &e), 0);
    assert_int_equal(lwp_init(&a, &p, 1, &e), 0);
    assert_false(a.present);
    uint32_t o[4] = {0, 0, 0, 0};
    lwp_cpuid(&a, 0, 0x80000001, 0, o);
    lwp_cpuid(&a, 0, 0x8000001C, 0, o);
    assert_int_equal(o[0] | o[1] | o[2] | o[3], 0);
    uint64_t v = 1, old;
    assert_int_equal(lwp_rdmsr(&a, 0, LWP_MSR0, &v), HW_GP);
    assert_int_equal(v, 0);
    assert_int_equal(lwp_wrmsr(&a, 0, LWP_MSR0, 0), HW_GP);
    assert_int_equal(lwp_rdmsr(&a, 0, LWP_MSR1, &v), HW_GP);
    assert_int_equal(lwp_wrmsr(&a, 0, LWP_MSR1, 0), HW_GP);
    assert_int_equal(lwp_llwpcb(&a, 0, &V, CB, 3, &old), HW_UD);
    assert_int_equal(lwp_slwpcb(&a, 0, &V, 3, &v), HW_UD);
    assert_int_equal(lwp_ring3(&a, 0), HW_OK);
    lwp_free(&a);
    /* lwp_cpuid tolerates no unit at all. */
    lwp_cpuid(NULL, 0, 0x8000001C, 0, o);
    assert_int_equal(o[0] | o[1] | o[2] | o[3], 0);
}

/* ======== LWP: MSRs ======== */

static void test_msr0(void **state)
{
    (void)state;
    uint64_t v = 1;
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR0, &v), HW_OK);
    assert_int_equal(v, 0); /* Table 3: reset 0 */
    /* Every available feature bit alone, and all together. */
    const uint64_t ok[] = {1, 2, 4, 8, 1ull << 31, ALL_MSR0};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(lwp_wrmsr(&U, 1, LWP_MSR0, ok[i]), HW_OK);
        assert_int_equal(lwp_rdmsr(&U, 1, LWP_MSR0, &v), HW_OK);
        assert_int_equal(v, ok[i]);
    }
    /* Reserved bits [30:4] and [63:32]: #GP, and the MSR keeps its value. */
    for (unsigned b = 4; b < 64; b++) {
        if (b == 31)
            continue;
        if (lwp_wrmsr(&U, 1, LWP_MSR0, ALL_MSR0 | 1ull << b) != HW_GP)
            fail_msg("LWPMSR0 bit %u accepted", b);
    }
    assert_int_equal(lwp_rdmsr(&U, 1, LWP_MSR0, &v), HW_OK);
    assert_int_equal(v, ALL_MSR0);
    /* Per CPU. */
    assert_int_equal(lwp_rdmsr(&U, 2, LWP_MSR0, &v), HW_OK);
    assert_int_equal(v, 0);
    /* CPUs that do not exist, MSRs that are not LWP's. */
    assert_int_equal(lwp_rdmsr(&U, 8, LWP_MSR0, &v), HW_GP);
    assert_int_equal(lwp_wrmsr(&U, 8, LWP_MSR0, 1), HW_GP);
    assert_int_equal(lwp_rdmsr(&U, 0, 0xC0000107, &v), HW_GP);
    assert_true(lwp_owns_msr(0xC0000105));
    assert_true(lwp_owns_msr(0xC0000106));
    assert_false(lwp_owns_msr(0xC0000104));
    /* Reset clears it. */
    lwp_reset(&U);
    assert_int_equal(lwp_rdmsr(&U, 1, LWP_MSR0, &v), HW_OK);
    assert_int_equal(v, 0);
}

static void test_msr1(void **state)
{
    (void)state;
    uint64_t v = 5;
    const struct ev ev[3] = {{1, 50, 49}};
    put_cb(CB, MINBUF, BUF, 0, ev);
    /* Without LWPMSR0.Enabled, LWPMSR1 is #GP both ways. */
    enable(0, 0x2); /* IRE without Enabled */
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_GP);
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR1, CB), HW_GP);
    enable(0, ALL_MSR0);
    lwp_bind(&U, 0, &V);
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_OK);
    assert_int_equal(v, 0);
    /* A write is LLWPCB at CPL 0: the pointer loads, the LWPCB is not
     * touched until ring 3. */
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR1, CB), HW_OK);
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_OK);
    assert_int_equal(v, CB);
    assert_int_equal(r32(CB), 0xdeadbeef);
    assert_int_equal(lwp_ring3(&U, 0), HW_OK);
    assert_int_equal(r32(CB), 0x3); /* EN | IRE */
    /* A read is SLWPCB: it flushes (as the supervisor) and returns CB. */
    store_ok(0, 1, 0x400000);
    assert_int_equal(r32(CB + 16), 0); /* the head is flushed lazily */
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_OK);
    assert_int_equal(v, CB);
    assert_int_equal(r32(CB + 16), 32);
    assert_int_equal(r32(CB + 44), 50); /* counter reloaded by the store */
    /* A non-canonical linear address: #GP, nothing changes. */
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR1, 0x0000800000000000ull), HW_GP);
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_OK);
    assert_int_equal(v, CB);
    /* Writing 0 turns LWP off. */
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR1, 0), HW_OK);
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_OK);
    assert_int_equal(v, 0);
    /* The high canonical half is accepted (no memory access at CPL 0). */
    assert_int_equal(lwp_wrmsr(&U, 0, LWP_MSR1, 0xffff800000001000ull), HW_OK);
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &v), HW_OK);
    assert_int_equal(v, 0xffff800000001000ull);
}

/* ======== LWP: LLWPCB and SLWPCB ======== */

static void test_ud_when_not_enabled(void **state)
{
    (void)state;
    uint64_t v = 7;
    put_cb(CB, MINBUF, BUF, 0, EV3);
    /* Reset: LWPMSR0 is 0. */
    assert_int_equal(lwp_llwpcb(&U, 0, &V, CB, 3, &v), HW_UD);
    assert_int_equal(lwp_slwpcb(&U, 0, &V, 3, &v), HW_UD);
    assert_int_equal(lwp_llwpcb(&U, 0, &V, 0, 0, &v), HW_UD);
    /* Every feature but Enabled is still #UD. */
    enable(0, ALL_MSR0 & ~1ull);
    assert_int_equal(lwp_llwpcb(&U, 0, &V, CB, 3, &v), HW_UD);
    assert_int_equal(lwp_slwpcb(&U, 0, &V, 0, &v), HW_UD);
    assert_int_equal(r32(CB), 0xdeadbeef);
    /* Another CPU's enable does not count. */
    enable(1, ALL_MSR0);
    assert_int_equal(lwp_llwpcb(&U, 0, &V, CB, 3, &v), HW_UD);
    assert_int_equal(lwp_llwpcb(&U, 8, &V, CB, 3, &v), HW_UD); /* no such CPU */
    /* Clearing Enabled while profiling stops the instructions again, and
     * setting it back finds the state kept. */
    LLWPCB_OK(1, CB, 3, 0);
    enable(1, ALL_MSR0 & ~1ull);
    assert_int_equal(lwp_slwpcb(&U, 1, &V, 3, &v), HW_UD);
    enable(1, ALL_MSR0);
    assert_int_equal(slwpcb(1, 3), CB);
}

static void test_llwpcb_flags(void **state)
{
    (void)state;
    /* All three events, interrupts allowed, a threshold: EN, IRE, BRE,
     * DME and INT (Figure 6). */
    enable(0, ALL_MSR0);
    put_cb(CB, MINBUF, BUF, 256, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0x8000000F);
    assert_int_equal(slwpcb(0, 3), CB);
    /* Threshold 0: no interrupts whatever LWPMSR0 allows. */
    put_cb(CB2, MINBUF, BUF, 0, EV3);
    LLWPCB_OK(0, CB2, 3, CB);
    assert_int_equal(r32(CB2), 0x0000000F);
    /* The OS allows only instructions retired and no interrupts: the
     * branch and DCache events are dropped. */
    enable(1, 0x3);
    put_cb(CB2, MINBUF, BUF, 256, EV3);
    LLWPCB_OK(1, CB2, 3, 0);
    assert_int_equal(r32(CB2), 0x3);
    /* Only DME and branches, in other slots. */
    enable(2, 0xD);
    const struct ev ev[3] = {{3, 9, 9}, {0, 5, 5}, {2, 7, 7}};
    put_cb(CB2, MINBUF, BUF, 0, ev);
    LLWPCB_OK(2, CB2, 3, 0);
    assert_int_equal(r32(CB2), 0xD);
    assert_int_equal(U.cpu[2].slot[3], 0);
    assert_int_equal(U.cpu[2].slot[2], 2);
    assert_int_equal(U.cpu[2].slot[1], -1);
}

static void test_llwpcb_duplicates(void **state)
{
    (void)state;
    enable(0, ALL_MSR0);
    /* Slots 0 and 1 both name EventId 2: only slot 0 counts (5.3). */
    const struct ev ev[3] = {{2, 10, 5}, {2, 20, 6}, {1, 30, 30}};
    put_cb(CB, MINBUF, BUF, 0, ev);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0x7); /* EN, IRE, BRE */
    /* A branch record reloads the earliest slot's counter from its own
     * interval; the duplicate's counter and EventId stay as software left
     * them. */
    store_ok(0, 2, 0x1234);
    assert_int_equal(slwpcb(0, 3), CB);
    assert_int_equal(r32(CB + 44), 10);
    assert_int_equal(r32(CB + 52), 6);
    assert_int_equal(r32(CB + 48), 2u << 26 | 20);
    assert_int_equal(r32(CB + 60), 30);
    /* Duplicates of an event the OS forbids are no better. */
    enable(1, 0x3);
    const struct ev ev2[3] = {{2, 10, 5}, {1, 20, 6}, {1, 30, 7}};
    put_cb(CB2, MINBUF, BUF, 0, ev2);
    LLWPCB_OK(1, CB2, 3, 0);
    assert_int_equal(r32(CB2), 0x3);
    assert_int_equal(U.cpu[1].slot[1], 1);
}

static void test_llwpcb_no_valid_event(void **state)
{
    (void)state;
    enable(0, ALL_MSR0);
    /* EventIds 0, 4 and 63 are not implemented: Flags 0, LWP off, and
     * SLWPCB returns 0 (5.3). */
    const struct ev none[3] = {{0, 10, 10}, {4, 10, 10}, {63, 10, 10}};
    put_cb(CB, MINBUF, BUF, 0, none);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    assert_int_equal(slwpcb(0, 3), 0);
    assert_int_equal(U.cpu[0].state, LWP_OFF);
    /* Events the OS did not allow count as none. */
    enable(1, 0x80000009); /* Enabled, DME, Interrupt */
    const struct ev ev[3] = {{1, 10, 10}, {2, 10, 10}, {0, 0, 0}};
    put_cb(CB, MINBUF, BUF, 64, ev);
    LLWPCB_OK(1, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    assert_int_equal(slwpcb(1, 3), 0);
    /* Going off from an active LWPCB returns the old address and flushes. */
    put_cb(CB2, MINBUF, BUF, 0, EV3);
    LLWPCB_OK(0, CB2, 3, 0);
    store_ok(0, 1, 1);
    put_cb(CB, MINBUF, BUF, 0, none);
    LLWPCB_OK(0, CB, 3, CB2);
    assert_int_equal(r32(CB2 + 16), 32);
    assert_int_equal(slwpcb(0, 3), 0);
    /* A ring below the minimum CPUID reports (2 x 32 records) cannot run:
     * one record short of 2048 bytes is off, 2048 (and 2048 + 31, rounded
     * down) run. */
    put_cb(CB, MINBUF - 32, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    put_cb(CB, MINBUF - 1, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    put_cb(CB, MINBUF + 31, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0xF);
    assert_int_equal(U.cpu[0].size, MINBUF);
}

/* LLWPCB checks the ring against the number CPUID reports, whatever it is:
 * none, or the field's widest. */
static void test_llwpcb_min_buffer(void **state)
{
    (void)state;
    /* No minimum: a ring of one record runs. Its only slot is always the
     * one kept free, so each record is written there and counted missed. */
    boot_with("min_buffer: 2", "# min_buffer left out");
    enable(0, ALL_MSR0);
    put_cb(CB, 32, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0xF);
    assert_int_equal(U.cpu[0].size, 32);
    store_ok(0, 1, 0x1234);
    assert_int_equal(r64(BUF + 8), 0x1234);
    assert_int_equal(r64(CB + 24), 1);
    assert_int_equal(r32(CB + 16), 0);
    /* Two records: one is stored. */
    put_cb(CB2, 64, BUF, 0, EV3);
    LLWPCB_OK(0, CB2, 3, CB);
    store_ok(0, 1, 0x5678);
    assert_int_equal(U.cpu[0].head, 32);
    assert_int_equal(r64(CB2 + 24), 0);
    /* Even with no minimum a ring needs a whole record: BufferSize 31
     * (0 records) and 0 leave LWP off. */
    put_cb(CB, 31, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, CB2);
    assert_int_equal(r32(CB), 0);
    assert_int_equal(slwpcb(0, 3), 0);
    put_cb(CB, 0, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    /* min_buffer 1: 32 records. */
    boot_with("min_buffer: 2", "min_buffer: 1");
    enable(0, ALL_MSR0);
    put_cb(CB, 1024 - 32, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    put_cb(CB, 1024, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0xF);
    /* min_buffer 255: one record short of 255 x 32 is off. */
    boot_with("min_buffer: 2", "min_buffer: 255");
    enable(0, ALL_MSR0);
    put_cb(CB, 255 * 1024 - 32, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0);
    put_cb(CB, 255 * 1024, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(r32(CB), 0xF);
    assert_int_equal(U.cpu[0].size, 255 * 1024);
}

static void test_llwpcb_page_faults(void **state)
{
    (void)state;
    uint64_t old = 0;
    enable(0, ALL_MSR0);
    /* Unmapped: P clear, W and U set. */
    expect_pf(lwp_llwpcb(&U, 0, &V, 0x90000, 3, &old), 0, 0x90000, VMEM_PF_W | VMEM_PF_U);
    /* A supervisor page: not the process's to write. */
    expect_pf(lwp_llwpcb(&U, 0, &V, KPAGE, 3, &old), 0, KPAGE, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    /* Read-only for the process. */
    put_cb(CB, MINBUF, BUF, 0, EV3);
    assert_int_equal(vmem_protect(&V, CB, 0x1000, VMEM_U), 0);
    expect_pf(lwp_llwpcb(&U, 0, &V, CB, 3, &old), 0, CB, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(r32(CB), 0xdeadbeef);
    /* An LWPCB crossing into a read-only page faults at that page, even
     * though the fields LWP writes lie on the first. */
    assert_int_equal(vmem_protect(&V, CB, 0x1000, RW), 0);
    uint64_t a = CB2 - 32; /* 64 bytes: 32 on each page */
    put_cb(a, MINBUF, BUF, 0, EV3);
    assert_int_equal(vmem_protect(&V, CB2, 0x1000, VMEM_U), 0);
    expect_pf(lwp_llwpcb(&U, 0, &V, a, 3, &old), 0, CB2, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    /* The LWPCB ending at the page boundary is fine. */
    a = CB2 - CBSIZE;
    put_cb(a, MINBUF, BUF, 0, EV3);
    LLWPCB_OK(0, a, 3, 0);
    assert_int_equal(r32(a), 0xF);
    /* A faulting LLWPCB leaves the unit as it was: still a, not flushed. */
    store_ok(0, 1, 1);
    expect_pf(lwp_llwpcb(&U, 0, &V, KPAGE, 3, &old), 0, KPAGE, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(r32(a + 16), 0);
    assert_int_equal(slwpcb(0, 3), a);
    assert_int_equal(r32(a + 16), 32);
}

static void test_llwpcb_deferred(void **state)
{
    (void)state;
    uint64_t old = 0;
    enable(0, ALL_MSR0);
    /* At ring 0 the pointer loads and nothing is read or checked: an
     * LWPCB on no page is no fault yet (5.3). */
    LLWPCB_OK(0, 0x90000, 0, 0);
    assert_int_equal(slwpcb(0, 0), 0x90000);
    assert_int_equal(U.cpu[0].state, LWP_PENDING);
    /* Entering ring 3 performs the load: #PF from ring 3, retried at the
     * next entry. */
    expect_pf(lwp_ring3(&U, 0), 0, 0x90000, VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(U.cpu[0].state, LWP_PENDING);
    assert_int_equal(vmem_map(&V, 0x90000, 0x1000, RW), 0);
    put_cb(0x90000, MINBUF, BUF, 128, EV3);
    assert_int_equal(r32(0x90000), 0xdeadbeef);
    assert_int_equal(lwp_ring3(&U, 0), HW_OK);
    assert_int_equal(r32(0x90000), 0x8000000F);
    assert_int_equal(U.cpu[0].state, LWP_ACTIVE);
    assert_int_equal(lwp_ring3(&U, 0), HW_OK); /* nothing more to do */
    /* A deferred load that finds no event turns LWP off then. */
    const struct ev none[3] = {{0}};
    put_cb(CB, MINBUF, BUF, 0, none);
    LLWPCB_OK(0, CB, 0, 0x90000);
    assert_int_equal(slwpcb(0, 0), CB);
    assert_int_equal(lwp_ring3(&U, 0), HW_OK);
    assert_int_equal(r32(CB), 0);
    assert_int_equal(slwpcb(0, 3), 0);
    /* An LWP instruction at ring 3 finding a load still deferred completes
     * it first, as the entry to ring 3 would have. */
    put_cb(CB2, MINBUF, BUF, 0, EV3);
    LLWPCB_OK(0, CB2, 0, 0);
    assert_int_equal(slwpcb(0, 3), CB2);
    assert_int_equal(r32(CB2), 0xF);
    /* ... and faults as that entry would have. */
    LLWPCB_OK(0, KPAGE, 1, CB2);
    expect_pf(lwp_slwpcb(&U, 0, &V, 3, &old), 0, KPAGE, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
}

static void test_llwpcb_flush_old(void **state)
{
    (void)state;
    enable(0, ALL_MSR0);
    const struct ev ev[3] = {{1, 1000, 1000}, {3, 40, 40}, {0, 0, 99}};
    put_cb(CB, MINBUF, BUF, 0, ev);
    LLWPCB_OK(0, CB, 3, 0);
    U.cpu[0].ctr[1].counter = 17; /* as the event engine would have counted */
    store_ok(0, 1, 0xa);
    store_ok(0, 1, 0xb);
    /* The head stays inside the unit until something forces it out. */
    assert_int_equal(r32(CB + 16), 0);
    /* LLWPCB of a new LWPCB flushes the old state to the old one, then
     * loads the new and returns the old address (5.3). */
    put_cb(CB2, MINBUF, BUF + 0x1000, 0, EV3);
    LLWPCB_OK(0, CB2, 3, CB);
    assert_int_equal(r32(CB + 16), 64);   /* BufferHeadOffset */
    assert_int_equal(r32(CB + 44), 1000); /* EventCounter0, reloaded by the stores */
    assert_int_equal(r32(CB + 52), 17);   /* EventCounter1 */
    assert_int_equal(r32(CB + 60), 99);   /* slot 2 unused: untouched */
    assert_int_equal(r32(CB), 0xB);       /* Flags are not rewritten by a flush */
    assert_int_equal(r32(CB2), 0xF);
    /* Off, then back on with the address LLWPCB returned: profiling
     * resumes where it stopped. */
    LLWPCB_OK(0, 0, 3, CB2);
    assert_int_equal(slwpcb(0, 3), 0);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(U.cpu[0].head, 64);
    assert_int_equal(U.cpu[0].ctr[1].counter, 17);
    store_ok(0, 1, 0xc);
    assert_int_equal(r64(BUF + 64 + 8), 0xc);
    /* A flush that cannot reach the old LWPCB faults and changes nothing:
     * the new LWPCB's Flags stay as they were. */
    assert_int_equal(vmem_protect(&V, CB, 0x1000, VMEM_U), 0);
    uint64_t old = 0;
    put_cb(CB2, MINBUF, BUF, 0, EV3);
    expect_pf(lwp_llwpcb(&U, 0, &V, CB2, 3, &old), 0, CB, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(r32(CB2), 0xdeadbeef);
    assert_int_equal(U.cpu[0].cb, CB);
    assert_int_equal(U.cpu[0].state, LWP_ACTIVE);
    /* At ring 0 the flush is a supervisor write: a supervisor-only LWPCB
     * page takes it, a read-only one still faults (CR0.WP). */
    expect_pf(lwp_llwpcb(&U, 0, &V, CB2, 0, &old), 0, CB, VMEM_PF_P | VMEM_PF_W);
    assert_int_equal(vmem_protect(&V, CB, 0x1000, VMEM_W), 0);
    LLWPCB_OK(0, CB2, 0, CB);
    assert_int_equal(r32(CB + 16), 96);
}

/* ======== LWP: the ring buffer ======== */

static void test_record_bytes(void **state)
{
    (void)state;
    enable(5, ALL_MSR0);
    put_cb(CB, MINBUF, BUF + 0x1f, 0, EV3); /* BufferBase's low 5 bits are ignored */
    /* Stale bytes where the record goes: reserved fields must become 0. */
    for (unsigned i = 0; i < 32; i += 8)
        w64(BUF + i, 0xaaaaaaaaaaaaaaaaull);
    LLWPCB_OK(5, CB, 3, 0);
    struct lwp_rec r = {.event_id = 2,
                        .flags = 1u << 31 | 1u << 29 | 0xffff, /* taken, PRD valid */
                        .data = 0x11223344,
                        .ip = 0x0000555512345678ull,
                        .addr = 0x00005555aabbccddull};
    assert_int_equal(lwp_store(&U, 5, &r), HW_OK);
    const uint8_t want[32] = {
        0x02, 0x05, 0x00, 0xa0,                         /* EventId, core 5, flags 31 and 29 */
        0x44, 0x33, 0x22, 0x11,                         /* event data */
        0x78, 0x56, 0x34, 0x12, 0x55, 0x55, 0x00, 0x00, /* instruction address */
        0xdd, 0xcc, 0xbb, 0xaa, 0x55, 0x55, 0x00, 0x00, /* branch target */
        0,    0,    0,    0,    0,    0,    0,    0,    /* reserved */
    };
    uint8_t got[32];
    struct vmem_fault f;
    assert_int_equal(vmem_read(&V, BUF, got, 32, 0, &f), VMEM_OK);
    assert_memory_equal(got, want, 32);
    /* A DCache miss record: data address valid, source DRAM, latency. */
    r = (struct lwp_rec){.event_id = 3,
                         .flags = (uint32_t)(HW_FMASK(LWP_REC_DC, AddrValid) |
                                             HW_FSET(0, LWP_REC_DC, Source, LWP_SRC_DRAM)),
                         .data = 1008,
                         .ip = 0x401000,
                         .addr = 0x7fff0000};
    assert_int_equal(lwp_store(&U, 5, &r), HW_OK);
    assert_int_equal(r32(BUF + 32), 0x70000503);
    assert_int_equal(r32(BUF + 36), 1008);
    assert_int_equal(r64(BUF + 40), 0x401000);
    assert_int_equal(r64(BUF + 48), 0x7fff0000);
    assert_int_equal(r64(BUF + 56), 0);
    /* Core 0 on CPU 0 (Figure 1: 0 for single-core systems). */
    uint8_t enc[32];
    lwp_rec_encode(&r, 0, enc);
    assert_int_equal(enc[1], 0);
    lwp_rec_encode(&r, 300, enc);
    assert_int_equal(enc[1], 300 - 256);
}

/* A small ring: amd-lwp with min_buffer 1, 32 records of 1024 bytes. */
static void ring_setup(unsigned cpu, uint64_t msr0, uint32_t threshold)
{
    boot_with("min_buffer: 2", "min_buffer: 1");
    enable(cpu, msr0);
    put_cb(CB, 1024, BUF, threshold, EV3);
    LLWPCB_OK(cpu, CB, 3, 0);
}

static void test_ring_missed_events(void **state)
{
    (void)state;
    ring_setup(0, ALL_MSR0, 0);
    for (unsigned i = 0; i < 31; i++)
        store_ok(0, 1, 0x1000 + i);
    /* 31 records fill the 32-slot ring (one slot always stays free). */
    assert_int_equal(U.cpu[0].head, 992);
    assert_int_equal(r32(CB + 16), 0); /* not flushed yet */
    assert_int_equal(r64(CB + 24), 0);
    /* The next record is written at the head, but advancing would meet
     * the tail: MissedEvents counts it, the head stays and is flushed. */
    store_ok(0, 1, 0x2000);
    assert_int_equal(r64(BUF + 992 + 8), 0x2000);
    assert_int_equal(r64(CB + 24), 1);
    assert_int_equal(U.cpu[0].head, 992);
    assert_int_equal(r32(CB + 16), 992);
    /* And again: the last record is overwritten (5.4). */
    U.cpu[0].ctr[1].counter = 5; /* as counted down by the event engine */
    store_ok(0, 2, 0x3000);
    assert_int_equal(r64(BUF + 992 + 8), 0x3000);
    assert_int_equal(r64(CB + 24), 2);
    /* The counter of a missed event reloads all the same (3 "Reset"). */
    assert_int_equal(U.cpu[0].ctr[1].counter, 200);
    /* Software frees two records: the tail is reread and the head wraps. */
    w32(CB + 20, 64);
    store_ok(0, 1, 0x4000);
    assert_int_equal(U.cpu[0].head, 0);
    assert_int_equal(r64(BUF + 992 + 8), 0x4000);
    assert_int_equal(r64(CB + 24), 2);
    store_ok(0, 1, 0x5000);
    assert_int_equal(U.cpu[0].head, 32);
    /* Full again at head 32 with tail 64. */
    store_ok(0, 1, 0x6000);
    assert_int_equal(U.cpu[0].head, 32);
    assert_int_equal(r64(CB + 24), 3);
    assert_int_equal(U.cpu[0].nstored, 33);
    assert_int_equal(U.cpu[0].nmissed, 3);
    /* An increment owed from a restored state (5.5.2) lands at the flush. */
    U.cpu[0].missed_pending = 1;
    assert_int_equal(slwpcb(0, 3), CB);
    assert_int_equal(r64(CB + 24), 4);
    assert_int_equal(U.cpu[0].missed_pending, 0);
    assert_int_equal(slwpcb(0, 3), CB);
    assert_int_equal(r64(CB + 24), 4);
}

static void test_ring_threshold(void **state)
{
    (void)state;
    /* Threshold 4 records (128 bytes), interrupts on. */
    ring_setup(0, ALL_MSR0, 128);
    assert_int_equal(r32(CB), 0x8000000F);
    for (unsigned i = 0; i < 3; i++)
        store_ok(0, 1, i);
    /* 96 bytes used: below, nothing raised, the head stays inside. */
    assert_false(lwp_take_irq(&U, 0));
    assert_int_equal(r32(CB + 16), 0);
    /* 128 used: exactly Threshold: one interrupt, head flushed. */
    store_ok(0, 1, 3);
    assert_int_equal(U.cpu[0].nirq, 1);
    assert_true(lwp_take_irq(&U, 0));
    assert_false(lwp_take_irq(&U, 0));
    assert_int_equal(r32(CB + 16), 128);
    /* 160 used: over, no second interrupt, but the head keeps going out
     * so that a poller sees progress (5.5.3). */
    store_ok(0, 1, 4);
    assert_int_equal(U.cpu[0].nirq, 1);
    assert_int_equal(r32(CB + 16), 160);
    /* Software empties up to the head; the next store rereads the tail
     * (the cached one says 192 used), finds 32 used: below again. */
    w32(CB + 20, 160);
    store_ok(0, 1, 5);
    assert_int_equal(U.cpu[0].tail, 160);
    assert_int_equal(r32(CB + 16), 160); /* not flushed below the threshold */
    store_ok(0, 1, 6);
    store_ok(0, 1, 7);
    assert_int_equal(U.cpu[0].nirq, 1);
    /* 128 used again (head 288, tail 160): the second crossing interrupts. */
    store_ok(0, 1, 8);
    assert_int_equal(U.cpu[0].nirq, 2);
    assert_int_equal(r32(CB + 16), 288);
    /* Software frees to 224; the next store (head 320) rereads the tail
     * because the cached 160 says 160 used, and finds 96. */
    w32(CB + 20, 224);
    store_ok(0, 1, 9);
    assert_int_equal(U.cpu[0].tail, 224);
    /* Now the cached tail says exactly Threshold for head 352, but software
     * has freed another record: the reread finds 96 and nothing is raised
     * or flushed. */
    w32(CB + 20, 256);
    store_ok(0, 1, 10);
    assert_int_equal(U.cpu[0].tail, 256);
    assert_int_equal(U.cpu[0].head, 352);
    assert_int_equal(U.cpu[0].nirq, 2);
    assert_int_equal(r32(CB + 16), 288);
}

static void test_ring_threshold_variants(void **state)
{
    (void)state;
    /* Threshold met but interrupts not allowed by the OS: no INT in Flags,
     * no interrupt, the head is still forced out. */
    ring_setup(0, 0xF, 64);
    assert_int_equal(r32(CB), 0xF);
    store_ok(0, 1, 0);
    store_ok(0, 1, 1);
    assert_int_equal(U.cpu[0].nirq, 0);
    assert_int_equal(r32(CB + 16), 64);
    /* A threshold that is not a multiple of 32 acts as the multiple below
     * (100 -> 96: the third record). */
    ring_setup(0, ALL_MSR0, 100);
    store_ok(0, 1, 0);
    store_ok(0, 1, 1);
    assert_int_equal(U.cpu[0].nirq, 0);
    store_ok(0, 1, 2);
    assert_int_equal(U.cpu[0].nirq, 1);
    /* Below one record: no threshold at all, and so no INT. */
    ring_setup(0, ALL_MSR0, 31);
    assert_int_equal(r32(CB), 0xF);
    /* Space used across the wrap: with tail 512 and Threshold 512, the
     * head reaching 0 from 992 makes (0 - 512) mod 1024 = 512. */
    ring_setup(0, ALL_MSR0, 512);
    LLWPCB_OK(0, 0, 3, CB);
    w32(CB + 16, 800);
    w32(CB + 20, 512);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(U.cpu[0].head, 800);
    for (unsigned i = 0; i < 6; i++) /* heads 832 ... 992: 320 ... 480 used */
        store_ok(0, 1, i);
    assert_int_equal(U.cpu[0].head, 992);
    assert_int_equal(U.cpu[0].nirq, 0);
    store_ok(0, 1, 6);
    assert_int_equal(U.cpu[0].head, 0);
    assert_int_equal(U.cpu[0].nirq, 1);
    assert_int_equal(r32(CB + 16), 0);
}

static void test_ring_faults(void **state)
{
    (void)state;
    enable(0, ALL_MSR0);
    put_cb(CB, MINBUF, KPAGE, 0, EV3); /* a ring on a supervisor page */
    LLWPCB_OK(0, CB, 3, 0);
    uint32_t c0 = U.cpu[0].ctr[0].counter = 3;
    struct lwp_rec r = rec_of(1, 0x77);
    expect_pf(lwp_store(&U, 0, &r), 0, KPAGE, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    /* Nothing moved: head, counter, statistics. */
    assert_int_equal(U.cpu[0].head, 0);
    assert_int_equal(U.cpu[0].ctr[0].counter, c0);
    assert_int_equal(U.cpu[0].nstored, 0);
    /* A read-only ring, and a ring that runs off its mapping. */
    put_cb(CB, MINBUF, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, CB);
    assert_int_equal(vmem_protect(&V, BUF, 0x1000, VMEM_U), 0);
    expect_pf(lwp_store(&U, 0, &r), 0, BUF, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(vmem_protect(&V, BUF, 0x1000, RW), 0);
    store_ok(0, 1, 0x77);
    assert_int_equal(r64(BUF + 8), 0x77);
    /* An LWPCB made read-only while profiling: the store that must write
     * the head (ring full) faults on it (5.4: the next access faults). */
    w32(CB + 20, 64); /* tail two records ahead: the next store fills it */
    U.cpu[0].tail = 64;
    assert_int_equal(vmem_protect(&V, CB, 0x1000, VMEM_U), 0);
    expect_pf(lwp_store(&U, 0, &r), 0, CB + 16, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(r64(BUF + 32 + 8), 0); /* the record was not written either */
    assert_int_equal(U.cpu[0].head, 32);
    /* Not active: a store does nothing. */
    assert_int_equal(vmem_protect(&V, CB, 0x1000, RW), 0);
    LLWPCB_OK(0, 0, 3, CB);
    assert_int_equal(lwp_store(&U, 0, &r), HW_OK);
    assert_int_equal(lwp_store(&U, 1, &r), HW_OK);
}

static void test_counter_reload_random(void **state)
{
    (void)state;
    enable(0, ALL_MSR0);
    /* Random 4: the low 4 bits of each reload are drawn (5.4). */
    put_cb(CB, MINBUF | 4u << 28, BUF, 0, EV3);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(U.cpu[0].random, 4);
    assert_int_equal(U.cpu[0].size, MINBUF);
    unsigned seen = 0;
    for (unsigned i = 0; i < 200; i++) {
        store_ok(0, 3, i);
        uint32_t c = U.cpu[0].ctr[2].counter;
        assert_int_equal(c & ~15u, 300 & ~15u);
        seen |= 1u << (c & 15);
        w32(CB + 20, U.cpu[0].head); /* keep the ring empty */
    }
    assert_true(seen == 0xffff); /* 200 draws cover all 16 values */
    /* Random 0: exactly the interval. */
    put_cb(CB2, MINBUF, BUF, 0, EV3);
    LLWPCB_OK(0, CB2, 3, CB);
    store_ok(0, 3, 0);
    assert_int_equal(U.cpu[0].ctr[2].counter, 300);
    /* Records of events not counted reload nothing. */
    store_ok(0, 9, 0);
}

static void test_head_tail_normalised(void **state)
{
    (void)state;
    enable(0, ALL_MSR0);
    /* Offsets off the record grid round down; past the end they are 0. */
    put_cb(CB, MINBUF, BUF, 0, EV3);
    w32(CB + 16, 70);
    w32(CB + 20, MINBUF + 64);
    LLWPCB_OK(0, CB, 3, 0);
    assert_int_equal(U.cpu[0].head, 64);
    assert_int_equal(U.cpu[0].tail, 0);
    put_cb(CB2, MINBUF, BUF, 0, EV3);
    w32(CB2 + 16, MINBUF);
    LLWPCB_OK(0, CB2, 3, CB);
    assert_int_equal(U.cpu[0].head, 0);
    /* EventCounter's bits [31:26] are not part of it. */
    const struct ev ev[3] = {{1, 5, 0xfc000007}};
    put_cb(CB, MINBUF, BUF, 0, ev);
    LLWPCB_OK(0, CB, 3, CB2);
    assert_int_equal(U.cpu[0].ctr[0].counter, 7);
    assert_int_equal(slwpcb(0, 3), CB);
    assert_int_equal(r32(CB + 44), 7);
}

static void test_cb_layout_table(void **state)
{
    (void)state;
    /* docs/registers.md 3, by name. */
    static const struct {
        const char *name;
        unsigned off, size;
        const char *rw;
    } want[] = {
        {"Flags", 0, 4, "Init"},           {"BufferSize", 4, 4, "No"},
        {"BufferBase", 8, 8, "No"},        {"BufferHeadOffset", 16, 4, "LWP"},
        {"BufferTailOffset", 20, 4, "SW"}, {"MissedEvents", 24, 8, "LWP"},
        {"Threshold", 32, 4, "No"},        {"Filters", 36, 4, "No"},
        {"EventInterval0", 40, 4, "No"},   {"EventCounter0", 44, 4, "LWP"},
    };
    assert_int_equal(lwp_cb_nfields, sizeof want / sizeof want[0]);
    for (unsigned i = 0; i < lwp_cb_nfields; i++) {
        assert_string_equal(lwp_cb_fields[i].name, want[i].name);
        assert_int_equal(lwp_cb_fields[i].off, want[i].off);
        assert_int_equal(lwp_cb_fields[i].size, want[i].size);
        assert_string_equal(lwp_cb_fields[i].rw, want[i].rw);
    }
    assert_int_equal(LWPCB_EVENT(2), 56);
    assert_int_equal(LWPCB_COUNTER(2), 60);
    assert_int_equal(LWPCB_SIZE(3), 64);
    assert_int_equal(HW_FMASK(LWPCB_FILTERS, CLF), 1u << 27);
    assert_int_equal(HW_FMASK(LWPCB_EVENT, EventId), 0xfc000000u);
}

int main(void)
{
#define VM(t)  cmocka_unit_test_setup_teardown(t, setup_vmem, teardown)
#define LWP(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        VM(test_vmem_scalars_le),
        VM(test_vmem_permissions),
        VM(test_vmem_map_unmap_protect),
        VM(test_vmem_table_stress),
        LWP(test_cpuid_table2),
        LWP(test_cpuid_profile_variants),
        LWP(test_cpuid_min_buffer),
        LWP(test_absent_unit),
        LWP(test_msr0),
        LWP(test_msr1),
        LWP(test_ud_when_not_enabled),
        LWP(test_llwpcb_flags),
        LWP(test_llwpcb_duplicates),
        LWP(test_llwpcb_no_valid_event),
        LWP(test_llwpcb_min_buffer),
        LWP(test_llwpcb_page_faults),
        LWP(test_llwpcb_deferred),
        LWP(test_llwpcb_flush_old),
        LWP(test_record_bytes),
        LWP(test_ring_missed_events),
        LWP(test_ring_threshold),
        LWP(test_ring_threshold_variants),
        LWP(test_ring_faults),
        LWP(test_counter_reload_random),
        LWP(test_head_tail_normalised),
        LWP(test_cb_layout_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
