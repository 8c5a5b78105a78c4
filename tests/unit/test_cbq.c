/* Unit tests for drv/cbq.c, the RISC-V CBQRI driver. It is driven through
 * struct cbqri_regif only: over the register model of the shipped profile
 * riscv-soc (and a tiny RISC-V profile written here), behind a shim that
 * counts accesses and can inject access faults; and over a small fake
 * controller written here, which answers any STATUS asked of it, so every
 * STATUS mapping, read-only-zero register and WARL field is reached.
 * Expected values come from the profile or the spec, and machine effects
 * are checked against the machine (masks, occupancy, bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "tiny_rv.h"

#include "drv/cbq.h"
#include "hw/cbqri.h"
#include "sim/mach.h"
#include "util/bits.h"

#define NTASK 4

static struct mach M;
static struct cbqri Q;
static struct cbq D;
static int booted;

/* riscv-soc, as firmware lists it (and cbqri_init builds it): L2
 * controllers 0-3, L3 4-5, memory 6. */
#define SOC_L2(i) (0x04820000ull + (i)*0x1000ull)
#define SOC_L3(i) (0x04828000ull + (i)*0x1000ull)
#define SOC_BW    0x04830000ull
enum { C_L2 = 0, C_L3 = 4, C_BW = 6, SOC_NCTL = 7 };
/* tiny (below): L2 0-1, L3 2, memory 3. */
enum { T_L2 = 0, T_L3 = 2, T_BW = 3 };
#define T_L3_BASE 0x10010000ull

#define SEC(a) ((a) + CBQRI_SECURE_OFFSET)

/* ---- the shim: the model's interface, counted, with faults on demand ---- */

static struct {
    struct cbqri_regif in;
    unsigned reads, writes, csr_writes;
    uint64_t fault_read, fault_write; /* an address that faults; 0: none */
} S;

static enum hw_fault sh_read(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t a,
                             unsigned size, uint64_t *v)
{
    (void)ctx;
    S.reads++;
    if (S.fault_read && a == S.fault_read) {
        *v = 0;
        return HW_ACCESS_FAULT;
    }
    return S.in.mmio_read(S.in.ctx, hart, md, a, size, v);
}

static enum hw_fault sh_write(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t a,
                              unsigned size, uint64_t v)
{
    (void)ctx;
    S.writes++;
    if (S.fault_write && a == S.fault_write)
        return HW_ACCESS_FAULT;
    return S.in.mmio_write(S.in.ctx, hart, md, a, size, v);
}

static enum hw_fault sh_csr_read(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                                 uint64_t *v)
{
    (void)ctx;
    return S.in.csr_read(S.in.ctx, hart, md, csr, v);
}

static enum hw_fault sh_csr_write(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                                  uint64_t v)
{
    (void)ctx;
    S.csr_writes++;
    return S.in.csr_write(S.in.ctx, hart, md, csr, v);
}

static const struct cbqri_regif SHIM = {NULL, sh_read, sh_write, sh_csr_read, sh_csr_write};

/* ---- machines and drivers ---- */

static void unboot(void)
{
    if (booted) {
        cbq_free(&D);
        cbqri_free(&Q);
        mach_free(&M);
        booted = 0;
    }
}

/* What firmware says of the platform: one entry per controller instance,
 * in the profile's order (instance i at base + i * stride), in the text
 * the profile follows. width, when not 0, replaces the profile's counter
 * width. */
static unsigned descs(struct cbq_desc *out, unsigned width)
{
    const struct plat *p = &M.p;
    unsigned n = 0, ver = p->cbqri_spec == PLAT_CBQRI_1_0 ? CBQRI_VER_1_0 : CBQRI_VER;
    for (unsigned k = 0; k < p->n_cbqri_cap; k++)
        for (unsigned i = 0; i < M.ncache[p->cbqri_cap[k].level]; i++)
            out[n++] = (struct cbq_desc){CBQRI_CAPACITY,
                                         p->cbqri_cap[k].base + i * p->cbqri_cap[k].stride, 0, ver};
    for (unsigned k = 0; k < p->n_cbqri_bw; k++)
        for (unsigned i = 0; i < p->nnodes; i++)
            out[n++] =
                (struct cbq_desc){CBQRI_BANDWIDTH, p->cbqri_bw[k].base + i * p->cbqri_bw[k].stride,
                                  width               ? width
                                  : p->mon.width < 62 ? p->mon.width
                                                      : 62,
                                  ver};
    return n;
}

static void up_drv(struct cbq *d, enum cbqri_mode md, int secure, unsigned width)
{
    struct cbq_desc desc[16];
    struct err e = {0};
    unsigned n = descs(desc, width);
    if (cbq_init(d, &SHIM, 0, md, secure, desc, n, &e))
        fail_msg("cbq_init: %s", e.msg);
}

static void boot_plat(const struct plat *p)
{
    struct err e = {0};
    unboot();
    if (mach_init(&M, p, NTASK, &e))
        fail_msg("mach_init(%s): %s", p->name, e.msg);
    if (cbqri_init(&Q, &M, &e)) {
        mach_free(&M);
        fail_msg("cbqri_init(%s): %s", p->name, e.msg);
    }
    booted = 1;
    cbqri_regif(&Q, &S.in);
    S.reads = S.writes = S.csr_writes = 0;
    S.fault_read = S.fault_write = 0;
    up_drv(&D, CBQRI_S, 0, 0);
}

static void boot(const char *name)
{
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, name, &e))
        fail_msg("plat_load(%s): %s", name, e.msg);
    boot_plat(&p);
}

/* 4 harts; L2 (2, NCBLKS 4, FRCID), L3 (1, NCBLKS 8, CDP: AT 0 and 1, no
 * FRCID), memory (NBWBLKS 16, MRBWB 12); 4 RCIDs, 8 MCIDs. */
static void boot_tiny(const char *events)
{
    struct err e = {0};
    struct plat p;
    if (tiny_rv_plat(&p, 20, "1", events, &e))
        fail_msg("tiny-rv: %s", e.msg);
    boot_plat(&p);
}

static int setup_soc(void **state)
{
    (void)state;
    boot("riscv-soc-draft");
    return 0;
}

static int setup_tiny(void **state)
{
    (void)state;
    boot_tiny("occupancy: true, total: true");
    return 0;
}

static int setup_soc10(void **state)
{
    (void)state;
    boot("riscv-soc");
    return 0;
}

/* tiny-rv in CBQRI 1.0's text, as o says. */
static void boot_tiny10(const struct tiny_rv_opt *o)
{
    struct err e = {0};
    struct plat p;
    if (tiny_rv_plat_opt(&p, 20, "1", "occupancy: true, total: true", o, &e))
        fail_msg("tiny-rv 1.0: %s", e.msg);
    boot_plat(&p);
}

static int teardown(void **state)
{
    (void)state;
    unboot();
    return 0;
}

#define IS(got, want)                                                                              \
    do {                                                                                           \
        uint64_t g_ = (got), w_ = (want);                                                          \
        if (g_ != w_)                                                                              \
            fail_msg("line %d: %s = 0x%llx (%llu), want 0x%llx (%llu)", __LINE__, #got,            \
                     (unsigned long long)g_, (unsigned long long)g_, (unsigned long long)w_,       \
                     (unsigned long long)w_);                                                      \
    } while (0)

/* A call that must succeed, with its message on failure. */
#define OK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_)                                                                                   \
            fail_msg("line %d: %s = %s: %s", __LINE__, #call, qosim_errname(rc_), E.msg);          \
    } while (0)

static struct err E;

/* A call that must fail with code, its message holding each of the
 * strings given. */
static void fails_at(int rc, int code, int line, const char *const *subs)
{
    if (rc != code)
        fail_msg("line %d: returned %s, want %s (%s)", line, qosim_errname(rc), qosim_errname(code),
                 E.msg);
    for (; *subs; subs++)
        if (!strstr(E.msg, *subs))
            fail_msg("line %d: message '%s' lacks '%s'", line, E.msg, *subs);
}
#define FAILS(call, code, ...)                                                                     \
    do {                                                                                           \
        memset(&E, 0, sizeof E);                                                                   \
        fails_at((call), (code), __LINE__, (const char *const[]){__VA_ARGS__, NULL});              \
    } while (0)

static uint64_t bw_v(unsigned rbwb, unsigned mweight, unsigned use_shared, unsigned shared_at)
{
    uint64_t v = HW_FSET(0, BW_ALLOC, Rbwb, rbwb);
    v = HW_FSET(v, BW_ALLOC, Mweight, mweight);
    v = HW_FSET(v, BW_ALLOC, useShared, use_shared);
    return HW_FSET(v, BW_ALLOC, sharedAT, shared_at);
}

static uint64_t cbm(unsigned ctl, unsigned rcid, unsigned at)
{
    uint64_t m = 0;
    OK(cbq_get_cbm(&D, ctl, rcid, at, &m, &E));
    return m;
}

static uint64_t bw(struct cbq *d, unsigned rcid, unsigned at)
{
    uint64_t v = 0;
    OK(cbq_get_bw(d, C_BW, rcid, at, &v, &E));
    return v;
}

/* ---- driving the machine ---- */

static uint64_t addr(unsigned task, uint64_t line)
{
    return mach_phys_base(0, task) | (0x100000 + line * 64);
}

static void access_n(unsigned hart, unsigned kind, unsigned task, uint64_t first, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        mach_access(&M, &M.cpu[hart], kind, addr(task, first + i));
}

/* Hart h runs task t; the driver associates it with (RCID, MCID). */
static void run_as(unsigned hart, int task, unsigned rcid, unsigned mcid)
{
    mach_set_task(&M, hart, task);
    OK(cbq_assoc(&D, hart, rcid, mcid, &E));
}

/* ======================= discovery ======================= */

static void test_discovery_soc(void **state)
{
    (void)state;
    IS(D.nctl, SOC_NCTL);
    IS(D.win_off, 0);
    IS(D.poll_max, CBQ_POLL_MAX);
    for (unsigned i = 0; i < 6; i++) {
        const struct cbq_ctl *c = &D.ctl[i];
        IS(c->kind, CBQRI_CAPACITY);
        IS(c->base, i < 4 ? SOC_L2(i) : SOC_L3(i - 4));
        IS(c->ver, 0x01);
        IS(c->ncblks, i < 4 ? 8 : 16);
        IS(c->frcid, 1);
        IS(c->nat, 1); /* no CDP in riscv-soc: AT read-only zero */
        IS(c->alloc, 1);
        IS(c->mon, 1);
        IS(c->mon_at, 0);
        IS(c->nrcid, 16);
        IS(c->nmcid, 64);
        IS(c->ctr_width, 0);
    }
    const struct cbq_ctl *b = &D.ctl[C_BW];
    IS(b->kind, CBQRI_BANDWIDTH);
    IS(b->base, SOC_BW);
    IS(b->ver, 0x01);
    IS(b->nbwblks, 256);
    IS(b->mrbwb, 224);
    IS(b->nat, 2);
    IS(b->alloc, 1);
    IS(b->mon, 1);
    IS(b->mon_at, 1);
    IS(b->nrcid, 16);
    IS(b->nmcid, 64);
    IS(b->ctr_width, 62);
    IS(D.nrcid, 16);
    IS(D.nmcid, 64);
    /* Discovery changed no limit: reset values (spec 3, 4). */
    IS(cbm(C_L3 + 1, 15, 0), 0xffff);
    IS(bw(&D, 0, 0), bw_v(224, 1, 0, 0));
    IS(bw(&D, 0, 1), bw_v(0, 0, 1, 0));
}

static void test_discovery_tiny(void **state)
{
    (void)state;
    IS(D.nctl, 4);
    IS(D.ctl[T_L2].ncblks, 4);
    IS(D.ctl[T_L2].frcid, 1);
    IS(D.ctl[T_L2].nat, 1);
    IS(D.ctl[T_L3].ncblks, 8);
    IS(D.ctl[T_L3].frcid, 0);
    IS(D.ctl[T_L3].nat, 2); /* CDP: AT 0 and 1 */
    IS(D.ctl[T_BW].nbwblks, 16);
    IS(D.ctl[T_BW].mrbwb, 12);
    IS(D.ctl[T_BW].ctr_width, 20);
    for (unsigned i = 0; i < 4; i++) {
        IS(D.ctl[i].nrcid, 4);
        IS(D.ctl[i].nmcid, 8);
        IS(D.ctl[i].mon, 1);
    }
    IS(D.nrcid, 4);
    IS(D.nmcid, 8);
}

/* Without occupancy monitoring cc_mon_ctl is read-only zero (3.2): the
 * probe finds no monitoring there, and the driver refuses it without an
 * access; the bandwidth controller still counts. */
static void test_discovery_no_occupancy(void **state)
{
    (void)state;
    boot_tiny("occupancy: false, total: true");
    for (unsigned i = 0; i < 3; i++) {
        IS(D.ctl[i].mon, 0);
        IS(D.ctl[i].nmcid, 0);
        IS(D.ctl[i].alloc, 1);
    }
    IS(D.ctl[T_BW].mon, 1);
    IS(D.nmcid, 8);
    unsigned r = S.reads, w = S.writes;
    uint64_t v;
    FAILS(cbq_mon_config(&D, T_L3, 1, CBQRI_EVT_OCCUPANCY, 0, 0, &E), -QOSIM_EUNSUP,
          "capacity controller 0x10010000", "monitoring is not implemented",
          "cc_mon_ctl is read-only zero", "spec 3.2");
    FAILS(cbq_mon_read(&D, T_L2, 1, &v, NULL, &E), -QOSIM_EUNSUP, "0x10000000");
    IS(S.reads, r);
    IS(S.writes, w);
}

/* ======================= capacity allocation ======================= */

static void test_cbm_round_trip(void **state)
{
    (void)state;
    OK(cbq_set_cbm(&D, C_L3 + 1, 5, 0, 0x0100, &E));
    IS(cbm(C_L3 + 1, 5, 0), 0x0100);
    IS(mach_get_mask(&M, PLAT_L3, 1, 5, MACH_DATA), 0x0100); /* one way per block */
    IS(mach_get_mask(&M, PLAT_L3, 1, 5, MACH_CODE), 0x0100); /* one AT serves both */
    IS(mach_get_mask(&M, PLAT_L3, 0, 5, MACH_DATA), 0xffff); /* the other cluster's L3 */
    IS(cbm(C_L3 + 0, 5, 0), 0xffff);
    /* L2: NCBLKS 8 over 16 ways, two ways per block. */
    OK(cbq_set_cbm(&D, C_L2 + 2, 5, 0, 0x81, &E));
    IS(cbm(C_L2 + 2, 5, 0), 0x81);
    IS(mach_get_mask(&M, PLAT_L2, 2, 5, MACH_DATA), 0xc003);
    IS(mach_get_mask(&M, PLAT_L2, 1, 5, MACH_DATA), 0xffff);
    /* Every RCID and block. */
    for (unsigned r = 0; r < 16; r++)
        OK(cbq_set_cbm(&D, C_L2 + 3, r, 0, 1u << (r % 8), &E));
    for (unsigned r = 0; r < 16; r++)
        IS(cbm(C_L2 + 3, r, 0), 1u << (r % 8));
    OK(cbq_set_cbm(&D, C_L3, 15, 0, 0xffff, &E));
}

/* What the hardware would silently change is refused before any access:
 * bits at or above NCBLKS (read-only zero, 3.5), an empty mask (3.5), AT 1
 * where AT is read-only zero (2.2), an RCID past the last (WARL field). */
static void test_cbm_refused_before_writes(void **state)
{
    (void)state;
    unsigned r = S.reads, w = S.writes;
    uint64_t v;
    FAILS(cbq_set_cbm(&D, C_L2, 1, 0, 0x100, &E), -QOSIM_EINVAL, "capacity controller 0x04820000",
          "mask 0x100", "NCBLKS 8", "spec 3.5");
    FAILS(cbq_set_cbm(&D, C_L3 + 1, 1, 0, 0x10000, &E), -QOSIM_EINVAL, "0x04829000", "NCBLKS 16");
    FAILS(cbq_set_cbm(&D, C_L3, 1, 0, 0, &E), -QOSIM_EINVAL, "empty block mask",
          "at least one capacity block", "spec 3.5");
    FAILS(cbq_set_cbm(&D, C_L3, 1, 1, 0x1, &E), -QOSIM_EINVAL, "AT 1", "no per-AT limits");
    FAILS(cbq_get_cbm(&D, C_L3, 1, 1, &v, &E), -QOSIM_EINVAL, "AT 1");
    FAILS(cbq_set_cbm(&D, C_L3, 16, 0, 0x1, &E), -QOSIM_EINVAL, "RCID 16 out of range",
          "RCIDs 0..15");
    FAILS(cbq_set_cbm(&D, SOC_NCTL, 1, 0, 0x1, &E), -QOSIM_EINVAL, "controller 7 does not exist");
    FAILS(cbq_set_cbm(&D, C_BW, 1, 0, 0x1, &E), -QOSIM_EINVAL, "bandwidth controller 0x04830000",
          "not a capacity controller");
    FAILS(cbq_set_bw(&D, C_L2, 1, 0, 1, 1, &E), -QOSIM_EINVAL, "not a bandwidth controller");
    IS(S.reads, r);
    IS(S.writes, w);
    IS(cbm(C_L2, 1, 0), 0xff);
    IS(cbm(C_L3 + 1, 1, 0), 0xffff);
}

/* With CDP (tiny's L3) each AT has its own mask: AT 0 data, AT 1 code. */
static void test_cbm_per_at(void **state)
{
    (void)state;
    OK(cbq_set_cbm(&D, T_L3, 1, CBQRI_AT_DATA, 0x0f, &E));
    OK(cbq_set_cbm(&D, T_L3, 1, CBQRI_AT_CODE, 0xf0, &E));
    IS(cbm(T_L3, 1, 0), 0x0f);
    IS(cbm(T_L3, 1, 1), 0xf0);
    IS(mach_get_mask(&M, PLAT_L3, 0, 1, MACH_DATA), mach_cbm_ways(&M, PLAT_L3, 0x0f));
    IS(mach_get_mask(&M, PLAT_L3, 0, 1, MACH_CODE), mach_cbm_ways(&M, PLAT_L3, 0xf0));
    uint64_t v;
    FAILS(cbq_get_cbm(&D, T_L3, 1, 2, &v, &E), -QOSIM_EINVAL, "AT 2", "AT 0 (data) and 1 (code)");
}

/* FLUSH_RCID (3.4) where FRCID is 1; refused without an access where it is 0. */
static void test_flush(void **state)
{
    (void)state;
    OK(cbq_flush(&D, T_L2 + 1, 3, &E));
    unsigned w = S.writes;
    FAILS(cbq_flush(&D, T_L3, 1, &E), -QOSIM_EUNSUP, "capacity controller 0x10010000",
          "FLUSH_RCID is not supported", "FRCID is 0");
    IS(S.writes, w);
    FAILS(cbq_flush(&D, T_BW, 1, &E), -QOSIM_EINVAL, "not a capacity controller");
    FAILS(cbq_flush(&D, T_L2, 4, &E), -QOSIM_EINVAL, "RCID 4 out of range");
}

/* ======================= bandwidth allocation ======================= */

static void test_bw(void **state)
{
    (void)state;
    /* Rbwb over MRBWB (224): the controller's STATUS 5 (4.5). */
    FAILS(cbq_set_bw(&D, C_BW, 1, 0, 225, 5, &E), -QOSIM_EINVAL, "bandwidth controller 0x04830000",
          "CONFIG_LIMIT RCID 1 AT 0", "STATUS 5", "reserved bandwidth blocks", "Table 13");
    FAILS(cbq_set_bw(&D, C_BW, 1, 0, 0, 5, &E), -QOSIM_EINVAL, "STATUS 5");
    /* RCID 0 reserves all 224 at reset: any more is over MRBWB. */
    FAILS(cbq_set_bw(&D, C_BW, 1, 0, 1, 5, &E), -QOSIM_EINVAL, "STATUS 5");
    IS(bw(&D, 1, 0), bw_v(0, 1, 0, 0)); /* unchanged */
    OK(cbq_set_bw(&D, C_BW, 0, 0, 100, 1, &E));
    OK(cbq_set_bw(&D, C_BW, 1, 0, 50, 5, &E));
    OK(cbq_set_bw(&D, C_BW, 2, 1, 74, 9, &E)); /* 224 */
    FAILS(cbq_set_bw(&D, C_BW, 3, 0, 1, 1, &E), -QOSIM_EINVAL, "RCID 3", "STATUS 5");
    IS(bw(&D, 0, 0), bw_v(100, 1, 0, 0));
    IS(bw(&D, 1, 0), bw_v(50, 5, 0, 0));
    IS(bw(&D, 2, 1), bw_v(74, 9, 0, 0));
    IS(bw(&D, 3, 0), bw_v(0, 1, 0, 0));
    /* Fields that would be truncated: refused before any access. */
    unsigned w = S.writes;
    FAILS(cbq_set_bw(&D, C_BW, 1, 0, 0x10000, 5, &E), -QOSIM_EINVAL, "Rbwb 65536");
    FAILS(cbq_set_bw(&D, C_BW, 1, 0, 1, 256, &E), -QOSIM_EINVAL, "Mweight 256", "0..255");
    FAILS(cbq_set_bw(&D, C_BW, 1, 2, 1, 1, &E), -QOSIM_EINVAL, "AT 2");
    IS(S.writes, w);
}

/* useShared (4.5): an AT takes another's allocation; sharing an AT that
 * has none of its own is UNSPECIFIED, and refused. */
static void test_share_bw(void **state)
{
    (void)state;
    OK(cbq_set_bw(&D, C_BW, 0, 0, 200, 1, &E));
    OK(cbq_set_bw(&D, C_BW, 1, 1, 20, 7, &E));
    IS(bw(&D, 1, 1), bw_v(20, 7, 0, 0));
    /* Reset: every AT 1 shares AT 0's; RCID 1's AT 1 now holds its own. */
    IS(bw(&D, 1, 0), bw_v(0, 1, 0, 0));
    OK(cbq_share_bw(&D, C_BW, 1, 0, 1, &E));
    IS(bw(&D, 1, 0), bw_v(0, 0, 1, 1));
    /* RCID 1's AT 1 cannot give its own up now that AT 0 shares it; RCID 2's
     * AT 0 cannot share AT 1, which shares AT 0's (reset). */
    unsigned w = S.writes;
    FAILS(cbq_share_bw(&D, C_BW, 1, 1, 0, &E), -QOSIM_EINVAL, "sharedAT 0 has no allocation");
    FAILS(cbq_share_bw(&D, C_BW, 2, 0, 1, &E), -QOSIM_EINVAL, "RCID 2 AT 0",
          "sharedAT 1 has no allocation of its own", "spec 4.5");
    FAILS(cbq_share_bw(&D, C_BW, 2, 1, 1, &E), -QOSIM_EINVAL, "another of its ATs");
    FAILS(cbq_share_bw(&D, C_BW, 2, 1, 2, &E), -QOSIM_EINVAL, "sharedAT 2");
    IS(S.writes - w, 2); /* a READ_LIMIT each, no CONFIG_LIMIT */
    IS(bw(&D, 2, 1), bw_v(0, 0, 1, 0));
    IS(bw(&D, 2, 0), bw_v(0, 1, 0, 0));
    /* AT 1 of RCID 1 back to a unique allocation, AT 0 back to its own. */
    OK(cbq_set_bw(&D, C_BW, 1, 0, 4, 7, &E));
    IS(bw(&D, 1, 0), bw_v(4, 7, 0, 0));
    OK(cbq_share_bw(&D, C_BW, 1, 1, 0, &E));
    IS(bw(&D, 1, 1), bw_v(0, 0, 1, 0));
    /* A capacity controller has no useShared. */
    FAILS(cbq_share_bw(&D, C_L3, 1, 0, 1, &E), -QOSIM_EINVAL, "not a bandwidth controller");
}

/* ======================= STATUS from the model ======================= */

/* STATUS 3 and 2 from the controller itself, reached by making discovery's
 * results wrong on purpose; STATUS 4 and 5 of the monitoring registers. */
static void test_status_from_model(void **state)
{
    (void)state;
    D.ctl[C_L3].nrcid = CBQ_MAX_IDS;
    FAILS(cbq_set_cbm(&D, C_L3, 16, 0, 0x1, &E), -QOSIM_EINVAL, "capacity controller 0x04828000",
          "CONFIG_LIMIT RCID 16 AT 0", "STATUS 3", "invalid RCID", "Table 7");
    D.ctl[C_BW].nmcid = CBQ_MAX_IDS;
    uint64_t v;
    FAILS(cbq_mon_read(&D, C_BW, 64, &v, NULL, &E), -QOSIM_EINVAL, "READ_COUNTER MCID 64",
          "STATUS 3", "invalid MCID", "Table 11");
    FAILS(cbq_mon_config(&D, C_L3, 1, 2, 0, 0, &E), -QOSIM_EINVAL, "CONFIG_EVENT MCID 1 EVT_ID 2",
          "STATUS 4", "invalid EVT_ID", "Table 5");
    FAILS(cbq_mon_config(&D, C_BW, 1, 4, 0, 0, &E), -QOSIM_EINVAL, "STATUS 4", "Table 11");
    FAILS(cbq_mon_config(&D, C_BW, 1, 1, 1, 2, &E), -QOSIM_EINVAL, "AT 2", "ATs 0..1");
    D.ctl[C_BW].nat = 3; /* wrong on purpose: the controller says STATUS 5 */
    FAILS(cbq_mon_config(&D, C_BW, 1, 1, 1, 2, &E), -QOSIM_EINVAL, "EVT_ID 1 AT 2", "STATUS 5",
          "invalid AT");
    FAILS(cbq_set_bw(&D, C_BW, 1, 2, 1, 1, &E), -QOSIM_EINVAL, "STATUS 4", "invalid AT");
    boot_tiny("occupancy: true, total: true");
    D.ctl[T_L3].frcid = 1;
    FAILS(cbq_flush(&D, T_L3, 1, &E), -QOSIM_EINVAL, "FLUSH_RCID RCID 1 AT 0", "STATUS 2",
          "operation not supported", "Table 7");
}

/* ======================= monitoring ======================= */

/* Occupancy (3.2, 3.3) of MCID 9 at the L3 of cluster 0, which samples
 * one set in ten: INVALID on too few samples, then the estimate. */
static void test_occupancy(void **state)
{
    (void)state;
    uint64_t v = 77;
    int ovf = 5;
    OK(cbq_mon_config(&D, C_L3, 9, CBQRI_EVT_OCCUPANCY, 0, 0, &E));
    OK(cbq_mon_config(&D, C_L3 + 1, 9, CBQRI_EVT_OCCUPANCY, 0, 0, &E));
    run_as(0, 0, 0, 9);
    IS(M.cpu[0].tag, 9);
    access_n(0, HIER_LOAD, 0, 0, 100); /* 11 sampled lines */
    v = 77;
    FAILS(cbq_mon_read(&D, C_L3, 9, &v, NULL, &E), -QOSIM_EIO, "capacity controller 0x04828000",
          "MCID 9", "cc_mon_ctr_val INVALID", "spec 3.3");
    IS(v, 77);
    access_n(0, HIER_LOAD, 0, 100, 900);
    OK(cbq_mon_read(&D, C_L3, 9, &v, &ovf, &E));
    IS(v, mach_occupancy_est(&M, PLAT_L3, 0, 9));
    IS(v, 1027); /* 102 of 407 sampled sets (test_cbqri.c): 102 x 4096 / 407 */
    IS(ovf, 0);
    IS(mach_occupancy(&M, PLAT_L3, 0, 9), 1000);
    /* The other cluster holds none: no samples, so no valid count either. */
    FAILS(cbq_mon_read(&D, C_L3 + 1, 9, &v, NULL, &E), -QOSIM_EIO, "0x04829000", "INVALID");
    /* Event None: the counter keeps its value. */
    OK(cbq_mon_config(&D, C_L3, 9, 0, 0, 0, &E));
    access_n(0, HIER_LOAD, 0, 1000, 500);
    OK(cbq_mon_read(&D, C_L3, 9, &v, NULL, &E));
    IS(v, 1027);
}

/* Bytes at the memory controller (4.2, 4.3) equal the machine's count. */
static void test_bandwidth_counter(void **state)
{
    (void)state;
    uint64_t v;
    int ovf = 5;
    OK(cbq_mon_config(&D, C_BW, 7, CBQRI_EVT_RW_BYTES, 0, 0, &E));
    run_as(2, 1, 3, 7);
    access_n(2, HIER_LOAD, 1, 0, 300);
    OK(cbq_mon_read(&D, C_BW, 7, &v, &ovf, &E));
    IS(v, 300 * 64);
    IS(v, mach_bytes(&M, M.cpu[2].domain, 7, MACH_CTR_TOTAL));
    IS(ovf, 0);
    FAILS(cbq_mon_read(&D, C_BW, 64, &v, NULL, &E), -QOSIM_EINVAL, "MCID 64 out of range",
          "MCIDs 0..63");
    FAILS(cbq_mon_config(&D, C_BW, 7, 256, 0, 0, &E), -QOSIM_EINVAL, "EVT_ID 256");
    /* No monitoring by AT at riscv-soc's capacity controllers (ATV hardwired). */
    FAILS(cbq_mon_config(&D, C_L3, 7, 1, 1, 0, &E), -QOSIM_EUNSUP, "ATV is hardwired to 0");
}

/* A 16-bit counter wraps every 64 KiB. Read more often than that, the
 * running total is exact across wraps (difference modulo 2^16). */
static void test_mbm_wraps(void **state)
{
    (void)state;
    Q.ctr_width = 16;
    cbq_free(&D);
    up_drv(&D, CBQRI_S, 0, 16);
    IS(D.ctl[C_BW].ctr_width, 16);
    struct cbq_mbm st = {0};
    OK(cbq_mon_config(&D, C_BW, 11, CBQRI_EVT_RW_BYTES, 0, 0, &E));
    run_as(0, 0, 0, 11);
    access_n(0, HIER_LOAD, 0, 0, 50); /* before the first update: not counted */
    OK(cbq_mbm_update(&D, C_BW, 11, &st, &E));
    IS(st.bytes, 0);
    IS(st.prev, 50 * 64);
    for (unsigned k = 0; k < 8; k++) {
        access_n(0, HIER_LOAD, 0, 50 + k * 600, 600); /* 38400 bytes */
        OK(cbq_mbm_update(&D, C_BW, 11, &st, &E));
    }
    IS(st.bytes, 4800 * 64);
    IS(st.bytes + 50 * 64, mach_bytes(&M, 0, 11, MACH_CTR_TOTAL));
    /* The register itself: 4850 x 64 = 310400 = 4 x 65536 + 48256, OVF. */
    uint64_t v;
    int ovf;
    OK(cbq_mon_read(&D, C_BW, 11, &v, &ovf, &E));
    IS(v, 48256);
    IS(ovf, 1);
    /* No width from firmware: no running total. */
    D.ctl[C_BW].ctr_width = 0;
    FAILS(cbq_mbm_update(&D, C_BW, 11, &st, &E), -QOSIM_EUNSUP, "width is unknown");
    FAILS(cbq_mbm_update(&D, C_L3, 11, &st, &E), -QOSIM_EINVAL, "not a bandwidth controller");
}

/* OVF (4.3): its first setting tells of a wrap the difference alone would
 * miss (an interval between 2^16 and 2^17 bytes); its clearing tells of a
 * CONFIG_EVENT in between; so does a count that went back with OVF 0. */
static void test_mbm_ovf(void **state)
{
    (void)state;
    Q.ctr_width = 16;
    cbq_free(&D);
    up_drv(&D, CBQRI_S, 0, 16);
    struct cbq_mbm st = {0};
    OK(cbq_mon_config(&D, C_BW, 12, CBQRI_EVT_RD_BYTES, 0, 0, &E));
    run_as(1, 0, 0, 12);
    OK(cbq_mbm_update(&D, C_BW, 12, &st, &E));
    IS(st.ovf, 0);
    access_n(1, HIER_LOAD, 0, 0, 1500); /* 96000 bytes: CTR 30464, OVF 1 */
    OK(cbq_mbm_update(&D, C_BW, 12, &st, &E));
    IS(st.prev, 96000 - 65536);
    IS(st.ovf, 1);
    IS(st.bytes, 96000);
    access_n(1, HIER_LOAD, 0, 1500, 500); /* OVF 1 then 1: modulo 2^16 */
    OK(cbq_mbm_update(&D, C_BW, 12, &st, &E));
    IS(st.bytes, 2000 * 64);
    /* Software clears OVF by reprogramming the event (4.3). */
    OK(cbq_mon_config(&D, C_BW, 12, CBQRI_EVT_RD_BYTES, 0, 0, &E));
    access_n(1, HIER_LOAD, 0, 2000, 100);
    OK(cbq_mbm_update(&D, C_BW, 12, &st, &E));
    IS(st.bytes, 2100 * 64);
    IS(st.ovf, 0);
    OK(cbq_mon_config(&D, C_BW, 12, CBQRI_EVT_RD_BYTES, 0, 0, &E));
    access_n(1, HIER_LOAD, 0, 2100, 50); /* 3200 < 6400, OVF 0: restarted */
    OK(cbq_mbm_update(&D, C_BW, 12, &st, &E));
    IS(st.bytes, 2150 * 64);
    IS(st.bytes, mach_bytes(&M, 0, 12, MACH_CTR_TOTAL));
}

/* ======================= BUSY ======================= */

/* An operation in flight (another agent's) is waited for before the
 * driver writes (3.4: "Software must verify that BUSY is 0"). */
static void test_waits_for_busy(void **state)
{
    (void)state;
    Q.busy_cycles = 1000; /* about 60 polls of 16 cycles */
    uint64_t op = HW_FSET(HW_FSET(0, ALLOC_CTL, OP, CBQRI_CONFIG_LIMIT), ALLOC_CTL, RCID, 2);
    assert_int_equal(cbqri_mmio_write(&Q, 1, CBQRI_M, SOC_L3(0) + CBQRI_BLOCK_MASK, 8, 0x0f0),
                     HW_OK);
    assert_int_equal(cbqri_mmio_write(&Q, 1, CBQRI_M, SOC_L3(0) + CBQRI_ALLOC_CTL, 8, op), HW_OK);
    unsigned r = S.reads;
    IS(cbm(C_L3, 2, 0), 0x0f0);
    IS(S.reads - r > 100, 1); /* its wait, and its own */
    IS(mach_get_mask(&M, PLAT_L3, 0, 2, MACH_DATA), 0x0f0);
}

/* BUSY that never clears: -QOSIM_ETIMEDOUT after poll_max polls, naming
 * the register; the next call waits for it first; it completes later. */
static void test_timeout(void **state)
{
    (void)state;
    Q.busy_cycles = 1ull << 40;
    D.poll_max = 5;
    unsigned r = S.reads;
    FAILS(cbq_set_cbm(&D, C_L3, 1, 0, 0x0f, &E), -QOSIM_ETIMEDOUT, "capacity controller 0x04828000",
          "during CONFIG_LIMIT RCID 1 AT 0", "cc_alloc_ctl.BUSY still 1 after 5 polls");
    IS(S.reads - r, 1 + 5);
    uint64_t v = 7;
    FAILS(cbq_get_cbm(&D, C_L3, 1, 0, &v, &E), -QOSIM_ETIMEDOUT, "before READ_LIMIT RCID 1 AT 0");
    IS(v, 7);
    FAILS(cbq_mon_config(&D, C_BW, 1, 1, 0, 0, &E), -QOSIM_ETIMEDOUT, "bc_mon_ctl.BUSY");
    assert_string_equal(qosim_errname(-QOSIM_ETIMEDOUT), "QOSIM_ETIMEDOUT");
    cbqri_tick(&Q, Q.now + (1ull << 40) * MACH_TICK);
    Q.busy_cycles = CBQRI_BUSY_CYCLES;
    D.poll_max = CBQ_POLL_MAX;
    IS(cbm(C_L3, 1, 0), 0x0f);
    IS(mach_get_mask(&M, PLAT_L3, 0, 1, MACH_DATA), 0x0f);
}

/* ======================= access faults ======================= */

static void test_access_faults(void **state)
{
    (void)state;
    uint64_t v = 3;
    S.fault_read = SOC_L3(0) + CBQRI_ALLOC_CTL;
    FAILS(cbq_get_cbm(&D, C_L3, 1, 0, &v, &E), -QOSIM_EIO, "capacity controller 0x04828000",
          "read of cc_alloc_ctl at 0x4828018", "hart 0 in S-mode", "access-fault");
    IS(v, 3);
    S.fault_read = 0;
    S.fault_write = SOC_L3(0) + CBQRI_BLOCK_MASK;
    FAILS(cbq_set_cbm(&D, C_L3, 1, 0, 0xf, &E), -QOSIM_EIO,
          "write of 0xf to cc_block_mask at 0x4828020", "access-fault");
    IS(mach_get_mask(&M, PLAT_L3, 0, 1, MACH_DATA), 0xffff);
    S.fault_write = SOC_BW + CBQRI_MON_CTL;
    FAILS(cbq_mon_config(&D, C_BW, 1, 1, 0, 0, &E), -QOSIM_EIO, "bc_mon_ctl at 0x4830008");
    S.fault_write = 0;
    /* Discovery: a controller that faults fails init, which keeps nothing. */
    struct cbq d2;
    struct cbq_desc desc[16];
    unsigned n = descs(desc, 0);
    S.fault_read = SOC_BW;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EIO,
          "bandwidth controller 0x04830000", "read of bc_capabilities at 0x4830000");
    IS(d2.ctl == NULL, 1);
    S.fault_read = 0;
    /* A described controller that is not there: the model faults. */
    desc[0].base = 0x05000000;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EIO, "0x5000000",
          "access-fault");
    /* U-mode may not reach the windows (the model's choice, cbqri.h). */
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_U, 0, desc + 1, n - 1, &E), -QOSIM_EIO, "in U-mode");
}

/* Bad descriptions are refused before any access. */
static void test_bad_descriptions(void **state)
{
    (void)state;
    struct cbq d2;
    struct cbq_desc desc[16];
    unsigned n = descs(desc, 0), r = S.reads;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, 0, &E), -QOSIM_EINVAL, "no controllers");
    desc[2].base += 8;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EINVAL, "controller 2",
          "0x4822008", "4 KiB aligned");
    desc[2].base -= 8;
    desc[C_BW].ctr_width = 63;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EINVAL, "counter width 63");
    desc[C_BW].ctr_width = 62;
    desc[1].kind = (enum cbqri_kind)9;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EINVAL, "kind 9");
    desc[1].kind = CBQRI_CAPACITY;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_NMODE, 0, desc, n, &E), -QOSIM_EINVAL, "mode");
    IS(S.reads, r);
}

/* ======================= secure windows ======================= */

/* The TSM's driver (secure M-mode) programs the secure windows (5.2.1):
 * the same discovery there, and limits the normal windows never see. */
static void test_secure_driver(void **state)
{
    (void)state;
    struct cbq t;
    up_drv(&t, CBQRI_SECURE_M, 1, 0);
    IS(t.win_off, CBQRI_SECURE_OFFSET);
    IS(t.nctl, SOC_NCTL);
    IS(t.ctl[C_L3].ncblks, 16);
    IS(t.ctl[C_BW].mrbwb, 224);
    IS(t.ctl[C_BW].nat, 2);
    IS(t.nrcid, 16);
    IS(t.nmcid, 64);
    IS(t.ctl[C_L3].base, SOC_L3(0)); /* described by its normal window */
    uint64_t v = 0;
    OK(cbq_set_cbm(&t, C_L3, 3, 0, 0x3, &E));
    OK(cbq_get_cbm(&t, C_L3, 3, 0, &v, &E));
    IS(v, 0x3);
    IS(cbm(C_L3, 3, 0), 0xffff);
    IS(mach_get_mask(&M, PLAT_L3, 0, 3, MACH_DATA), 0xffff);
    assert_int_equal(
        cbqri_mmio_read(&Q, 0, CBQRI_SECURE_M, SEC(SOC_L3(0)) + CBQRI_BLOCK_MASK, 8, &v), HW_OK);
    IS(v, 0x3);
    OK(cbq_set_bw(&t, C_BW, 0, 0, 10, 3, &E));
    IS(bw(&t, 0, 0), bw_v(10, 3, 0, 0));
    IS(bw(&D, 0, 0), bw_v(224, 1, 0, 0));
    /* The normal window's limit leaves the secure one. */
    OK(cbq_set_cbm(&D, C_L3, 3, 0, 0xf000, &E));
    OK(cbq_get_cbm(&t, C_L3, 3, 0, &v, &E));
    IS(v, 0x3);
    FAILS(cbq_set_bw(&t, C_BW, 1, 0, 215, 1, &E), -QOSIM_EINVAL,
          "bandwidth controller 0x04830000 (secure window 0x104830000)", "STATUS 5");
    cbq_free(&t);
}

/* The secure windows are the TSM's: another mode's driver is refused
 * before it touches anything. */
static void test_secure_needs_tsm(void **state)
{
    (void)state;
    struct cbq t;
    struct cbq_desc desc[16];
    unsigned n = descs(desc, 0), r = S.reads, w = S.writes;
    FAILS(cbq_init(&t, &SHIM, 0, CBQRI_S, 1, desc, n, &E), -QOSIM_EINVAL,
          "secure register interface", "secure-M", "spec 5.2.1", "not to S-mode");
    IS(t.ctl == NULL, 1);
    FAILS(cbq_init(&t, &SHIM, 0, CBQRI_M, 1, desc, n, &E), -QOSIM_EINVAL, "not to M-mode");
    IS(S.reads, r);
    IS(S.writes, w);
}

/* ======================= association ======================= */

static void test_assoc(void **state)
{
    (void)state;
    uint64_t v = 0;
    OK(cbq_assoc(&D, 3, 5, 33, &E));
    assert_int_equal(cbqri_csr_read(&Q, 3, CBQRI_S, CBQRI_CSR_SQOSCFG, &v), HW_OK);
    IS(v, 0x00210005);
    IS(M.cpu[3].cls, 5);
    IS(M.cpu[3].tag, 33);
    unsigned w = S.csr_writes;
    OK(cbq_assoc(&D, 3, 5, 33, &E)); /* unchanged: not written (6.1) */
    IS(S.csr_writes, w);
    FAILS(cbq_assoc(&D, 3, 16, 0, &E), -QOSIM_EINVAL, "hart 3", "RCID 16", "RCIDs 0..15");
    FAILS(cbq_assoc(&D, 3, 0, 64, &E), -QOSIM_EINVAL, "MCID 64", "MCIDs 0..63");
    IS(S.csr_writes, w);
    FAILS(cbq_assoc(&D, 16, 1, 1, &E), -QOSIM_EIO, "hart 16", "sqoscfg", "illegal-instruction");
    IS(M.cpu[3].cls, 5);
    OK(cbq_assoc(&D, 3, 0, 0, &E));
    IS(M.cpu[3].cls, 0);
    IS(M.cpu[3].tag, 0);
}

/* ======================= CBQRI 1.0 ======================= */

/* riscv-soc follows 1.0: VER 0x10 everywhere, CUNITS at both capacity
 * levels, direct MCIDs; the harts' CSR is srmcfg (Ssqosid). */
static void test_discovery_10(void **state)
{
    (void)state;
    IS(D.v10, 1);
    IS(D.csr, CBQRI_CSR_SRMCFG);
    IS(D.rpfx, 0);
    IS(D.nctl, 7);
    for (unsigned k = 0; k < D.nctl; k++) {
        const struct cbq_ctl *c = &D.ctl[k];
        IS(c->ver, CBQRI_VER_1_0);
        IS(c->v10, 1);
        IS(c->cunits, c->kind == CBQRI_CAPACITY);
        IS(c->rpfx, 0);
        IS(c->p, 0);
    }
    IS(D.nrcid, 16);
    IS(D.nmcid, 64);
}

/* Firmware and VER must name the same text; 1.0 has no secure windows. */
static void test_text_checks_10(void **state)
{
    (void)state;
    struct cbq d2;
    struct cbq_desc desc[16];
    unsigned n = descs(desc, 0);
    desc[4].ver = CBQRI_VER;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EIO, "0x04828000",
          "firmware describes CBQRI draft 0.1, but cc_capabilities.VER is 0x10 (1.0)");
    desc[4].ver = 0; /* unknown: VER decides */
    OK(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E));
    IS(d2.v10, 1);
    cbq_free(&d2);
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_SECURE_M, 1, desc, n, &E), -QOSIM_EUNSUP,
          "CBQRI 1.0 has no secure register interface");
    /* 8-byte aligned is all 1.0 asks (qos_intro): the description passes,
     * and the driver reads cc_mon_ctl (READ_COUNTER, OP 2) as capabilities ... */
    desc[0].base += 8;
    desc[0].ver = CBQRI_VER_1_0;
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EUNSUP, "0x04820008",
          "VER 0x02");
    desc[0].base += 4; /* ... but not 4 */
    FAILS(cbq_init(&d2, &SHIM, 0, CBQRI_S, 0, desc, n, &E), -QOSIM_EINVAL, "0x482000c",
          "not 8-byte aligned");
}

/* With Smstateen, S-mode reaches srmcfg only after M-mode set mstateen0
 * bit 55 (Ssqosid ch. 2): cbq_boot is that M-mode side. */
static void test_boot_10(void **state)
{
    (void)state;
    uint64_t v;
    FAILS(cbq_assoc(&D, 3, 5, 33, &E), -QOSIM_EIO, "hart 3", "srmcfg read in S-mode",
          "illegal-instruction");
    IS(M.cpu[3].cls, 0);
    OK(cbq_boot(&SHIM, M.ncpu, &E));
    for (unsigned h = 0; h < M.ncpu; h++)
        IS(Q.mstateen0[h], 1ull << 55);
    OK(cbq_assoc(&D, 3, 5, 33, &E));
    assert_int_equal(cbqri_csr_read(&Q, 3, CBQRI_S, CBQRI_CSR_SRMCFG, &v), HW_OK);
    IS(v, 0x00210005);
    IS(M.cpu[3].cls, 5);
    IS(M.cpu[3].tag, 33);
    FAILS(cbq_assoc(&D, 3, 0, 64, &E), -QOSIM_EINVAL, "MCID 64", "MCIDs 0..63");
    unsigned w = S.csr_writes;
    OK(cbq_boot(&SHIM, M.ncpu, &E)); /* again: the bit stays, the write is the same */
    IS(S.csr_writes, w + M.ncpu);
    IS(Q.mstateen0[0], 1ull << 55);
}

/* Without Smstateen there is no mstateen0 to set up; on RV32 bit 55 is
 * bit 23 of mstateen0h. */
static void test_boot_variants_10(void **state)
{
    (void)state;
    boot_tiny10(&(struct tiny_rv_opt){.v10 = 1, .prefix = -1});
    unsigned w = S.csr_writes;
    OK(cbq_boot(&SHIM, M.ncpu, &E));
    IS(S.csr_writes, w);
    OK(cbq_assoc(&D, 1, 2, 3, &E));
    IS(M.cpu[1].cls, 2);
    boot_tiny10(&(struct tiny_rv_opt){.v10 = 1, .smstateen = 1, .xlen = 32, .prefix = -1});
    FAILS(cbq_assoc(&D, 1, 2, 3, &E), -QOSIM_EIO, "srmcfg", "illegal-instruction");
    OK(cbq_boot(&SHIM, M.ncpu, &E));
    uint64_t v;
    assert_int_equal(cbqri_csr_read(&Q, 1, CBQRI_M, CBQRI_CSR_MSTATEEN0H, &v), HW_OK);
    IS(v, 1u << 23);
    assert_int_equal(cbqri_csr_read(&Q, 1, CBQRI_M, CBQRI_CSR_MSTATEEN0, &v), HW_OK);
    IS(v, 0);
    OK(cbq_assoc(&D, 1, 2, 3, &E));
    IS(M.cpu[1].tag, 3);
}

/* cc_cunits (CC_CUNITS): CONFIG_LIMIT writes the block mask and the unit
 * limit together, READ_LIMIT returns both. riscv-soc's L2 has 16384 lines. */
static void test_cunits_10(void **state)
{
    (void)state;
    uint64_t v = 0;
    OK(cbq_set_cap(&D, 0, 1, 0, 0xf, 100, &E));
    OK(cbq_get_cunits(&D, 0, 1, 0, &v, &E));
    IS(v, 100);
    OK(cbq_get_cbm(&D, 0, 1, 0, &v, &E));
    IS(v, 0xf);
    IS(Q.ctl[0].win[0].units[1], 100);
    IS(mach_class_lines(&M, PLAT_L2, 0, 0, 1, MACH_ANY), 0);
    OK(cbq_set_cbm(&D, 0, 1, 0, 0x3, &E)); /* a mask alone: no unit limit */
    OK(cbq_get_cunits(&D, 0, 1, 0, &v, &E));
    IS(v, 0);
    OK(cbq_get_cunits(&D, 0, 2, 0, &v, &E)); /* reset: none */
    IS(v, 0);
    FAILS(cbq_set_cap(&D, 0, 1, 0, 0xf, 16385, &E), -QOSIM_EINVAL, "cc_cunits reads back 16384",
          "after 16385", "WARL");
    OK(cbq_set_cap(&D, 0, 1, 0, 0xf, 16384, &E));
    FAILS(cbq_set_cap(&D, 6, 1, 0, 0xf, 1, &E), -QOSIM_EINVAL, "not a capacity controller");
    boot("riscv-edge"); /* no CUNITS there */
    FAILS(cbq_set_cap(&D, 0, 1, 0, 0xf, 100, &E), -QOSIM_EUNSUP, "CUNITS, which is 0");
    FAILS(cbq_get_cunits(&D, 0, 1, 0, &v, &E), -QOSIM_EUNSUP, "CUNITS 0");
    unsigned w = S.writes;
    OK(cbq_set_cbm(&D, 0, 1, 0, 0xf, &E)); /* no cc_cunits write without CUNITS */
    IS(S.writes, w + 2);
}

/* RCID-prefixed MCIDs (EMCID): tiny-rv with P 1 (4 RCIDs << 1 = 8 MCIDs). */
static void test_rpfx_10(void **state)
{
    (void)state;
    boot_tiny10(&(struct tiny_rv_opt){.v10 = 1, .prefix = 1});
    IS(D.rpfx, 1);
    IS(D.p, 1);
    for (unsigned k = 0; k < D.nctl; k++)
        IS(D.ctl[k].rpfx * 16 + D.ctl[k].p, 17);
    IS(cbq_emcid(&D, 3, 1), 7);
    IS(cbq_emcid(&D, 2, 3), 5); /* MCID & 1 */
    IS(cbq_emcid(&D, 0, 0), 0);
    FAILS(cbq_assoc(&D, 1, 3, 2, &E), -QOSIM_EINVAL, "MCID 2",
          "(RCID-prefixed, P bits) MCIDs 0..1");
    OK(cbq_assoc(&D, 1, 3, 1, &E));
    IS(M.cpu[1].cls, 3);
    IS(M.cpu[1].tag, 7);
    /* The counters are the effective MCIDs': 0..7 all exist. */
    OK(cbq_mon_config(&D, 2, 7, CBQRI_EVT_OCCUPANCY, 0, 0, &E));
    boot_tiny10(&(struct tiny_rv_opt){.v10 = 1, .prefix = -1});
    IS(D.rpfx, 0);
    IS(cbq_emcid(&D, 3, 5), 5);
}

/* ======================= a fake controller ======================= */

/* One controller at FAKE_BASE answering what the test asks: any STATUS,
 * read-only-zero registers, narrower ID fields, any VER, counters with
 * INVALID; and a sqoscfg that keeps only some bits. */
#define FAKE_BASE 0x00100000ull
static struct {
    enum cbqri_kind kind;
    uint64_t cap;
    int has_mon, has_alloc, mon_at, at_rw; /* at_rw: AT writable even with one AT */
    unsigned nat, id_bits, nids;
    int force;        /* STATUS every operation ends with; -1: none */
    unsigned polls;   /* reads that show BUSY after a write */
    uint64_t reg[5];  /* capabilities, mon_ctl, ctr_val, alloc_ctl, operand */
    unsigned left[2]; /* reads left showing BUSY: mon, alloc */
    uint64_t ctr;     /* what READ_COUNTER snapshots */
    uint32_t csr, csr_keep;
} F;

static void fake(enum cbqri_kind kind)
{
    memset(&F, 0, sizeof F);
    F.kind = kind;
    F.cap = kind == CBQRI_CAPACITY ? 0x01000801ull          /* FRCID, NCBLKS 8 */
                                   : 0x0000000c00001001ull; /* MRBWB 12, NBWBLKS 16 */
    F.has_mon = F.has_alloc = 1;
    F.nat = 1;
    F.id_bits = 12;
    F.nids = 10;
    F.polls = 2;
    F.force = -1;
    F.csr_keep = 0x0fff0fff;
}

static unsigned fake_status(int mon, uint64_t v)
{
    unsigned op = (unsigned)HW_FGET(v, MON_CTL, OP); /* same bits in alloc_ctl */
    unsigned id = (unsigned)(mon ? HW_FGET(v, MON_CTL, MCID) : HW_FGET(v, ALLOC_CTL, RCID));
    if (F.force >= 0)
        return (unsigned)F.force;
    if (op < 1 || op > (mon ? 2u : 3u))
        return CBQRI_ST_BAD_OP;
    if (id >= F.nids)
        return CBQRI_ST_BAD_ID;
    if (!mon && HW_FGET(v, ALLOC_CTL, AT) >= F.nat)
        return CBQRI_ST_ALLOC_BAD_AT;
    if (mon && op == CBQRI_READ_COUNTER)
        F.reg[2] = F.ctr;
    return CBQRI_ST_SUCCESS;
}

static enum hw_fault fk_read(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t a,
                             unsigned size, uint64_t *v)
{
    (void)ctx, (void)hart, (void)md;
    uint64_t off = a - FAKE_BASE;
    *v = 0;
    if (size != 8 || off >= 40 || off % 8)
        return HW_ACCESS_FAULT;
    unsigned k = (unsigned)(off / 8);
    *v = k == 0 ? F.cap : F.reg[k];
    if (k == 1 || k == 3) {
        unsigned *left = &F.left[k == 3];
        if (*left && !--*left)
            F.reg[k] = HW_FSET(F.reg[k], MON_CTL, BUSY, 0);
    }
    return HW_OK;
}

static enum hw_fault fk_write(void *ctx, unsigned hart, enum cbqri_mode md, uint64_t a,
                              unsigned size, uint64_t v)
{
    (void)ctx, (void)hart, (void)md;
    uint64_t off = a - FAKE_BASE;
    if (size != 8 || off >= 40 || off % 8)
        return HW_ACCESS_FAULT;
    uint64_t ids = bits_mask(F.id_bits);
    if (off == CBQRI_MON_CTL && F.has_mon) {
        uint64_t w = HW_FMASK(MON_CTL, OP) | (ids << MON_CTL_MCID_SHIFT) |
                     HW_FMASK(MON_CTL, EVT_ID) |
                     (F.mon_at ? HW_FMASK(MON_CTL, AT) | HW_FMASK(MON_CTL, ATV) : 0);
        v &= w;
        F.reg[1] =
            HW_FSET(HW_FSET(v, MON_CTL, STATUS, fake_status(1, v)), MON_CTL, BUSY, F.polls != 0);
        F.left[0] = F.polls;
    } else if (off == CBQRI_ALLOC_CTL && F.has_alloc) {
        uint64_t w = HW_FMASK(ALLOC_CTL, OP) | (ids << ALLOC_CTL_RCID_SHIFT) |
                     (F.nat > 1 || F.at_rw ? HW_FMASK(ALLOC_CTL, AT) : 0);
        v &= w;
        F.reg[3] = HW_FSET(HW_FSET(v, ALLOC_CTL, STATUS, fake_status(0, v)), ALLOC_CTL, BUSY,
                           F.polls != 0);
        F.left[1] = F.polls;
    } else if (off == CBQRI_BLOCK_MASK && F.has_alloc) {
        F.reg[4] = v;
    }
    return HW_OK;
}

static enum hw_fault fk_csr_read(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                                 uint64_t *v)
{
    (void)ctx, (void)hart, (void)md, (void)csr;
    *v = F.csr;
    return HW_OK;
}

static enum hw_fault fk_csr_write(void *ctx, unsigned hart, enum cbqri_mode md, unsigned csr,
                                  uint64_t v)
{
    (void)ctx, (void)hart, (void)md, (void)csr;
    F.csr = (uint32_t)(v & F.csr_keep);
    return HW_OK;
}

static const struct cbqri_regif FAKE = {NULL, fk_read, fk_write, fk_csr_read, fk_csr_write};

static int fake_up(struct cbq *d, unsigned width)
{
    struct cbq_desc desc = {F.kind, FAKE_BASE, width, 0};
    memset(&E, 0, sizeof E);
    return cbq_init(d, &FAKE, 0, CBQRI_S, 0, &desc, 1, &E);
}

/* Every STATUS of every control register, and how each maps. */
static void test_fake_status_codes(void **state)
{
    (void)state;
    struct cbq d;
    uint64_t v;
    static const struct {
        unsigned st;
        int code;
        const char *mon, *cc, *bc;
    } t[] = {
        {0, -QOSIM_EIO, "reserved: the controller reported no outcome", NULL, NULL},
        {2, -QOSIM_EINVAL, "invalid operation (OP) requested: operation not supported", NULL, NULL},
        {3, -QOSIM_EINVAL, "invalid MCID", "invalid RCID", "invalid RCID"},
        {4, -QOSIM_EINVAL, "invalid EVT_ID", "invalid AT", "invalid AT"},
        {5, -QOSIM_EINVAL, "invalid AT", "invalid capacity block mask",
         "invalid/unsupported reserved bandwidth blocks"},
        {6, -QOSIM_EIO, "reserved for future standard use", NULL, NULL},
        {63, -QOSIM_EIO, "reserved for future standard use", NULL, NULL},
        {64, -QOSIM_EIO, "designated for custom use", NULL, NULL},
        {127, -QOSIM_EIO, "designated for custom use", NULL, NULL},
    };
    for (int kind = 0; kind < 2; kind++) {
        fake((enum cbqri_kind)kind);
        assert_int_equal(fake_up(&d, 0), 0);
        const char *who = kind == CBQRI_CAPACITY ? "capacity controller 0x00100000"
                                                 : "bandwidth controller 0x00100000";
        for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++) {
            char st[32];
            snprintf(st, sizeof st, "STATUS %u", t[i].st);
            F.force = (int)t[i].st;
            const char *al = kind == CBQRI_CAPACITY ? t[i].cc : t[i].bc;
            FAILS(cbq_mon_config(&d, 0, 1, 1, 0, 0, &E), t[i].code, who,
                  "CONFIG_EVENT MCID 1 EVT_ID 1", st, t[i].mon,
                  kind == CBQRI_CAPACITY ? "Table 5" : "Table 11");
            FAILS(cbq_mon_read(&d, 0, 2, &v, NULL, &E), t[i].code, "READ_COUNTER MCID 2", st);
            if (kind == CBQRI_CAPACITY) {
                FAILS(cbq_set_cbm(&d, 0, 3, 0, 0x3, &E), t[i].code, who, "CONFIG_LIMIT RCID 3 AT 0",
                      st, al ? al : t[i].mon, "Table 7");
                FAILS(cbq_get_cbm(&d, 0, 3, 0, &v, &E), t[i].code, "READ_LIMIT RCID 3 AT 0", st);
                FAILS(cbq_flush(&d, 0, 3, &E), t[i].code, "FLUSH_RCID RCID 3 AT 0", st);
            } else {
                FAILS(cbq_set_bw(&d, 0, 3, 0, 5, 1, &E), t[i].code, who, "CONFIG_LIMIT RCID 3 AT 0",
                      st, al ? al : t[i].mon, "Table 13");
                FAILS(cbq_get_bw(&d, 0, 3, 0, &v, &E), t[i].code, "READ_LIMIT RCID 3 AT 0", st);
            }
        }
        F.force = -1;
        OK(cbq_mon_read(&d, 0, 2, &v, NULL, &E));
        cbq_free(&d);
    }
}

/* Discovery over what the fake is: read-only-zero registers (no allocation,
 * no monitoring), IDs counted by STATUS 3 or by a narrower WARL field, AT
 * 1 refused by STATUS 4, another VER, NCBLKS over 64. */
static void test_fake_discovery(void **state)
{
    (void)state;
    struct cbq d;
    uint64_t v;
    fake(CBQRI_CAPACITY);
    assert_int_equal(fake_up(&d, 0), 0);
    IS(d.ctl[0].nrcid, 10); /* STATUS 3 from RCID 10 on */
    IS(d.ctl[0].nmcid, 10);
    IS(d.ctl[0].nat, 1);
    IS(d.ctl[0].mon_at, 0);
    cbq_free(&d);
    /* AT writable, and AT 1 valid: two ATs; ATV writable. */
    fake(CBQRI_BANDWIDTH);
    F.nat = 2;
    F.mon_at = 1;
    F.nids = 4096;
    F.id_bits = 5; /* RCID and MCID keep 5 bits: 32 IDs */
    assert_int_equal(fake_up(&d, 40), 0);
    IS(d.ctl[0].nat, 2);
    IS(d.ctl[0].mon_at, 1);
    IS(d.ctl[0].nrcid, 32);
    IS(d.ctl[0].nmcid, 32);
    IS(d.ctl[0].ctr_width, 40);
    cbq_free(&d);
    /* AT writable but AT 1 refused with STATUS 4: one AT. */
    fake(CBQRI_CAPACITY);
    F.at_rw = 1;
    assert_int_equal(fake_up(&d, 0), 0);
    IS(d.ctl[0].nat, 1);
    cbq_free(&d);
    /* Nothing but capabilities: both control registers read-only zero. */
    fake(CBQRI_BANDWIDTH);
    F.has_mon = F.has_alloc = 0;
    assert_int_equal(fake_up(&d, 0), 0);
    IS(d.ctl[0].alloc, 0);
    IS(d.ctl[0].mon, 0);
    IS(d.nrcid, CBQ_MAX_IDS);
    IS(d.nmcid, CBQ_MAX_IDS);
    FAILS(cbq_set_bw(&d, 0, 1, 0, 1, 1, &E), -QOSIM_EUNSUP, "allocation is not implemented",
          "bc_alloc_ctl is read-only zero", "spec 4.4");
    FAILS(cbq_get_bw(&d, 0, 1, 0, &v, &E), -QOSIM_EUNSUP, "allocation is not implemented");
    FAILS(cbq_mon_read(&d, 0, 1, &v, NULL, &E), -QOSIM_EUNSUP, "bc_mon_ctl is read-only zero");
    cbq_free(&d);
    /* NCBLKS 0: no capacity allocation (3.5), without a probe. */
    fake(CBQRI_CAPACITY);
    F.cap = 0x01;
    assert_int_equal(fake_up(&d, 0), 0);
    IS(d.ctl[0].alloc, 0);
    IS(d.ctl[0].mon, 1);
    cbq_free(&d);
    /* Versions this driver does not know. */
    fake(CBQRI_CAPACITY);
    F.cap = 0x01000820;
    FAILS(fake_up(&d, 0), -QOSIM_EUNSUP, "cc_capabilities.VER 0x20 (version 2.0)", "2023 draft",
          "1.0 (VER 0x10)");
    IS(d.ctl == NULL, 1);
    F.cap = 0;
    FAILS(fake_up(&d, 0), -QOSIM_EUNSUP, "VER 0x00");
    fake(CBQRI_BANDWIDTH);
    F.cap = 0x02;
    FAILS(fake_up(&d, 0), -QOSIM_EUNSUP, "bc_capabilities.VER 0x02");
    fake(CBQRI_CAPACITY);
    F.cap = 0x01004101; /* NCBLKS 65 */
    FAILS(fake_up(&d, 0), -QOSIM_EUNSUP, "NCBLKS 65", "wider than 64 bits");
    /* MCID 0 refused: broken. */
    fake(CBQRI_CAPACITY);
    F.nids = 0;
    FAILS(fake_up(&d, 0), -QOSIM_EINVAL, "READ_COUNTER MCID 0: STATUS 3");
    /* BUSY that never clears during discovery. */
    fake(CBQRI_CAPACITY);
    F.polls = 100000;
    FAILS(fake_up(&d, 0), -QOSIM_ETIMEDOUT, "cc_mon_ctl.BUSY still 1 after 10000 polls");
    IS(d.ctl == NULL, 1);
}

/* A control register that reads back another OP or ID than written: the
 * request was not taken as written (a narrower WARL field), so its STATUS
 * is not this request's. */
static void test_fake_readback(void **state)
{
    (void)state;
    struct cbq d;
    fake(CBQRI_CAPACITY);
    F.nids = 4096;
    F.id_bits = 4;
    assert_int_equal(fake_up(&d, 0), 0);
    IS(d.ctl[0].nrcid, 16);
    d.ctl[0].nrcid = CBQ_MAX_IDS; /* wrong on purpose */
    FAILS(cbq_set_cbm(&d, 0, 17, 0, 0x1, &E), -QOSIM_EIO, "CONFIG_LIMIT RCID 17 AT 0",
          "cc_alloc_ctl reads back OP 1 RCID 1", "did not take the request as written");
    cbq_free(&d);
}

/* Counters: INVALID (3.3, 4.3) is -QOSIM_EIO; CTR and OVF decode per kind. */
static void test_fake_counters(void **state)
{
    (void)state;
    struct cbq d;
    uint64_t v = 0;
    int ovf = 7;
    fake(CBQRI_CAPACITY);
    assert_int_equal(fake_up(&d, 0), 0);
    F.ctr = 0x7fffffffffffffffull; /* CTR all ones, INVALID 0 */
    OK(cbq_mon_read(&d, 0, 1, &v, &ovf, &E));
    IS(v, 0x7fffffffffffffffull);
    IS(ovf, 0);
    F.ctr = 1ull << 63 | 5;
    FAILS(cbq_mon_read(&d, 0, 1, &v, &ovf, &E), -QOSIM_EIO, "cc_mon_ctr_val INVALID", "spec 3.3");
    FAILS(cbq_mbm_update(&d, 0, 1, &(struct cbq_mbm){0}, &E), -QOSIM_EINVAL,
          "not a bandwidth controller");
    cbq_free(&d);
    fake(CBQRI_BANDWIDTH);
    assert_int_equal(fake_up(&d, 8), 0);
    F.ctr = 1ull << 63 | 0x1ff; /* OVF; CTR above the 8-bit width ignored */
    OK(cbq_mon_read(&d, 0, 1, &v, &ovf, &E));
    IS(v, 0xff);
    IS(ovf, 1);
    F.ctr = 1ull << 62;
    FAILS(cbq_mon_read(&d, 0, 1, &v, &ovf, &E), -QOSIM_EIO, "bc_mon_ctr_val INVALID", "spec 4.3");
    /* An INVALID reading leaves the running total alone. */
    struct cbq_mbm st = {0};
    F.ctr = 200;
    OK(cbq_mbm_update(&d, 0, 1, &st, &E));
    F.ctr = 1ull << 62 | 10;
    FAILS(cbq_mbm_update(&d, 0, 1, &st, &E), -QOSIM_EIO, "INVALID");
    IS(st.prev, 200);
    F.ctr = 250; /* OVF 0, 0: exact */
    OK(cbq_mbm_update(&d, 0, 1, &st, &E));
    IS(st.bytes, 50);
    F.ctr = 1ull << 63 | 250; /* OVF 0, 1: a wrap the difference would miss */
    OK(cbq_mbm_update(&d, 0, 1, &st, &E));
    IS(st.bytes, 50 + 256);
    F.ctr = 1ull << 63 | 20; /* OVF 1, 1: modulo 2^8 */
    OK(cbq_mbm_update(&d, 0, 1, &st, &E));
    IS(st.bytes, 50 + 256 + 26);
    F.ctr = 7; /* OVF 1, 0: CONFIG_EVENT in between */
    OK(cbq_mbm_update(&d, 0, 1, &st, &E));
    IS(st.bytes, 50 + 256 + 26 + 7);
    F.ctr = 3; /* OVF 0, 0, lower: CONFIG_EVENT in between */
    OK(cbq_mbm_update(&d, 0, 1, &st, &E));
    IS(st.bytes, 50 + 256 + 26 + 7 + 3);
    cbq_free(&d);
}

/* sqoscfg keeps the bits a hart implements (WARL): a value that reads back
 * otherwise is put back and refused; WPRI bits are kept as read. */
static void test_fake_csr(void **state)
{
    (void)state;
    struct cbq d;
    fake(CBQRI_CAPACITY);
    F.nids = 4096;
    assert_int_equal(fake_up(&d, 0), 0);
    F.csr_keep = 0xf0030003; /* 2 RCID bits, 2 MCID bits, and WPRI [31:28] */
    F.csr = 0xa0010002;
    FAILS(cbq_assoc(&d, 1, 5, 1, &E), -QOSIM_EINVAL, "hart 1",
          "reads back RCID 1 MCID 1 after RCID 5 MCID 1", "WARL", "put back 0xa0010002");
    IS(F.csr, 0xa0010002);
    OK(cbq_assoc(&d, 1, 3, 2, &E));
    IS(F.csr, 0xa0020003);
    cbq_free(&d);
}

#define SOC(t)   cmocka_unit_test_setup_teardown(t, setup_soc, teardown)
#define TINY(t)  cmocka_unit_test_setup_teardown(t, setup_tiny, teardown)
#define BARE(t)  cmocka_unit_test(t)
#define SOC10(t) cmocka_unit_test_setup_teardown(t, setup_soc10, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        SOC(test_discovery_soc),
        TINY(test_discovery_tiny),
        TINY(test_discovery_no_occupancy),
        SOC(test_cbm_round_trip),
        SOC(test_cbm_refused_before_writes),
        TINY(test_cbm_per_at),
        TINY(test_flush),
        SOC(test_bw),
        SOC(test_share_bw),
        SOC(test_status_from_model),
        SOC(test_occupancy),
        SOC(test_bandwidth_counter),
        SOC(test_mbm_wraps),
        SOC(test_mbm_ovf),
        SOC(test_waits_for_busy),
        SOC(test_timeout),
        SOC(test_access_faults),
        SOC(test_bad_descriptions),
        SOC(test_secure_driver),
        SOC(test_secure_needs_tsm),
        SOC(test_assoc),
        BARE(test_fake_status_codes),
        BARE(test_fake_discovery),
        BARE(test_fake_readback),
        BARE(test_fake_counters),
        BARE(test_fake_csr),
        SOC10(test_discovery_10),
        SOC10(test_text_checks_10),
        SOC10(test_boot_10),
        SOC10(test_boot_variants_10),
        SOC10(test_cunits_10),
        SOC10(test_rpfx_10),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
