/* Unit tests for the LWP event engine (hw/lwp_engine.c) and the context
 * switch of LWP state (lwp_save, lwp_restore): instructions, branches and
 * DCache misses counted and recorded as sections 3, 4 and 5.4 of the 2007
 * proposal say, with hand-built retired instructions; the isolation of
 * threads time-sharing a CPU (5.5.2, 5.5.4); the unit wired into the x86
 * model; and an end-to-end run through the core's retirement observer on
 * the amd-lwp machine. Every expected value is worked out by hand from the
 * profile and the proposal. */
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
#include "hw/x86.h"
#include "sim/cpu/core.h"
#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "sim/cpu/vmem.h"
#include "sim/wl/wl.h"
#include "util/conf.h"

#include "qosim.h"

static struct lwp U;
static struct vmem V, VB; /* two threads' address spaces */

#define CB       0x10000ull /* the LWPCB, in each space */
#define BUF      0x20000ull /* the ring buffer */
#define RING     8192u      /* 256 records */
#define RW       (VMEM_U | VMEM_W)
#define ALL_MSR0 0x8000000Full /* Enabled, IRE, BRE, DME, Interrupt */

/* Filters (5.4; docs/registers.md 3). */
#define F_NDB (1u << 24)
#define F_CLF (1u << 27)
#define F_NBC (1u << 28)
#define F_RDC (1u << 29)
#define F_RAM (1u << 30)
#define F_OTH (1u << 31)

/* Record flags (Figures 3 and 4), in the first dword. */
#define BR_PRD    (1u << 29)
#define BR_OK     (1u << 30)
#define BR_TAKEN  (1u << 31)
#define DC_ADDR   (1u << 28)
#define DC_SRC(s) ((uint32_t)(s) << 29)

/* ---- set-up ---- */

static void space(struct vmem *vm)
{
    vmem_free(vm);
    vmem_init(vm);
    assert_int_equal(vmem_map(vm, CB, 0x1000, RW), 0);
    assert_int_equal(vmem_map(vm, BUF, 0x10000, RW), 0);
}

static void boot_seed(const char *from, const char *to, uint64_t seed)
{
    struct plat p;
    struct err e = {0};
    const char *subs[] = {from, to ? to : "", NULL};
    lwp_plat(&p, from ? subs : NULL);
    lwp_free(&U);
    if (lwp_init(&U, &p, seed, &e))
        fail_msg("lwp_init: %s", e.msg);
    space(&V);
    space(&VB);
}

static void boot_with(const char *from, const char *to)
{
    boot_seed(from, to, 1);
}

static int setup(void **state)
{
    (void)state;
    boot_with(NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    lwp_free(&U);
    vmem_free(&V);
    vmem_free(&VB);
    return 0;
}

/* ---- memory (supervisor rights: the test is the OS) ---- */

static void w32(struct vmem *vm, uint64_t a, uint32_t v)
{
    struct vmem_fault f;
    if (vmem_write_u(vm, a, 4, v, 0, &f))
        fail_msg("w32 0x%llx faults", (unsigned long long)a);
}

static void w64(struct vmem *vm, uint64_t a, uint64_t v)
{
    struct vmem_fault f;
    if (vmem_write_u(vm, a, 8, v, 0, &f))
        fail_msg("w64 0x%llx faults", (unsigned long long)a);
}

static uint32_t r32(struct vmem *vm, uint64_t a)
{
    uint64_t v = 0;
    struct vmem_fault f;
    if (vmem_read_u(vm, a, 4, &v, 0, &f))
        fail_msg("r32 0x%llx faults", (unsigned long long)a);
    return (uint32_t)v;
}

static uint64_t r64(struct vmem *vm, uint64_t a)
{
    uint64_t v = 0;
    struct vmem_fault f;
    if (vmem_read_u(vm, a, 8, &v, 0, &f))
        fail_msg("r64 0x%llx faults", (unsigned long long)a);
    return v;
}

/* ---- the LWPCB (Table 4; docs/registers.md 3) ---- */

struct ev {
    unsigned id;
    uint32_t interval, counter;
};

static void put_cb(struct vmem *vm, uint32_t bufsize, uint32_t threshold, uint32_t filters,
                   const struct ev ev[3])
{
    w32(vm, CB + 0, 0);
    w32(vm, CB + 4, bufsize); /* BufferSize [27:0], Random [31:28] */
    w64(vm, CB + 8, BUF);
    w32(vm, CB + 16, 0);
    w32(vm, CB + 20, 0);
    w64(vm, CB + 24, 0);
    w32(vm, CB + 32, threshold);
    w32(vm, CB + 36, filters);
    for (unsigned i = 0; i < 3; i++) {
        w32(vm, CB + 40 + 8 * i, ev[i].id << 26 | ev[i].interval);
        w32(vm, CB + 44 + 8 * i, ev[i].counter);
    }
}

/* LWP on CPU cpu from the LWPCB put in vm, by LLWPCB at ring 3. */
static void start(unsigned cpu, struct vmem *vm, uint32_t bufsize, uint32_t threshold,
                  uint32_t filters, const struct ev ev[3])
{
    assert_int_equal(lwp_wrmsr(&U, cpu, LWP_MSR0, ALL_MSR0), HW_OK);
    /* Off first, so the old state's flush does not land in the new LWPCB. */
    assert_int_equal(lwp_llwpcb(&U, cpu, vm, 0, 3, NULL), HW_OK);
    put_cb(vm, bufsize, threshold, filters, ev);
    assert_int_equal(lwp_llwpcb(&U, cpu, vm, CB, 3, NULL), HW_OK);
    assert_int_equal(U.cpu[cpu].state, LWP_ACTIVE);
}

static void start1(uint32_t filters, unsigned id, uint32_t interval)
{
    const struct ev ev[3] = {{id, interval, interval}, {0, 0, 0}, {0, 0, 0}};
    start(0, &V, RING, 0, filters, ev);
}

/* ---- retired instructions ---- */

static struct core_insn insn(uint64_t ip)
{
    return (struct core_insn){.ip = ip, .next = ip + 4};
}

static struct core_insn branch(uint64_t ip, uint64_t next, int taken, unsigned pred)
{
    return (struct core_insn){.ip = ip,
                              .next = next,
                              .flags = (uint8_t)(TREC_F_BRANCH | (taken ? TREC_F_TAKEN : 0)),
                              .pred = (uint8_t)pred};
}

static struct core_insn jump(uint64_t ip, uint64_t target)
{
    return (struct core_insn){.ip = ip,
                              .next = target,
                              .flags = TREC_F_BRANCH | TREC_F_TAKEN | TREC_F_DIRECT,
                              .pred = CORE_PRD_VALID | CORE_PRD_OK};
}

static void acc(struct core_insn *in, unsigned kind, uint64_t addr, uint32_t lat, unsigned src)
{
    in->acc[in->nacc++] =
        (struct core_acc){.addr = addr, .lat = lat, .kind = (uint8_t)kind, .src = (uint8_t)src};
}

static struct core_insn load(uint64_t ip, uint64_t addr, uint32_t lat, unsigned src)
{
    struct core_insn in = insn(ip);
    acc(&in, TREC_L, addr, lat, src);
    return in;
}

static void retire_on(unsigned cpu, struct core_insn in)
{
    enum hw_fault f = lwp_retire(&U, cpu, &in);
    if (f != HW_OK)
        fail_msg("retire 0x%llx: %s", (unsigned long long)in.ip, hw_fault_name(f));
}

static void retire(struct core_insn in)
{
    retire_on(0, in);
}

/* Record k of the ring in vm, field by field (Figure 1). */
struct got {
    uint32_t dw0, data;
    uint64_t ip, addr, resv;
};

static struct got rec_in(struct vmem *vm, unsigned k)
{
    uint64_t a = BUF + 32ull * k;
    return (struct got){r32(vm, a), r32(vm, a + 4), r64(vm, a + 8), r64(vm, a + 16),
                        r64(vm, a + 24)};
}

static struct got rec(unsigned k)
{
    return rec_in(&V, k);
}

static unsigned nrec(unsigned cpu)
{
    return U.cpu[cpu].head / 32;
}

/* The record k is (dw0, data, ip, addr), reserved quadword zero. */
static void expect_rec(struct vmem *vm, unsigned k, uint32_t dw0, uint32_t data, uint64_t ip,
                       uint64_t addr, int line)
{
    struct got g = rec_in(vm, k);
    if (g.dw0 != dw0 || g.data != data || g.ip != ip || g.addr != addr || g.resv)
        fail_msg("line %d: record %u = {0x%08x, %u, 0x%llx, 0x%llx, 0x%llx}, want {0x%08x, %u, "
                 "0x%llx, 0x%llx, 0}",
                 line, k, g.dw0, g.data, (unsigned long long)g.ip, (unsigned long long)g.addr,
                 (unsigned long long)g.resv, dw0, data, (unsigned long long)ip,
                 (unsigned long long)addr);
}
#define EXPECT_REC(k, dw0, data, ip, addr)                                                         \
    expect_rec(&V, (k), (dw0), (data), (ip), (addr), __LINE__)

/* ======== instructions retired (4.1) ======== */

static void test_instructions_every_n(void **state)
{
    (void)state;
    /* EventCounter is the starting count: 7 first, then every 100. */
    const struct ev ev[3] = {{1, 100, 7}, {0, 0, 0}, {0, 0, 0}};
    start(0, &V, RING, 0, 0, ev);
    for (uint64_t n = 1; n <= 1007; n++)
        retire(insn(0x400000 + 4 * n));
    assert_int_equal(nrec(0), 11);
    for (unsigned k = 0; k < 11; k++)
        EXPECT_REC(k, 1, 0, 0x400000 + 4 * (7 + 100 * k), 0);
    assert_int_equal(U.cpu[0].ctr[0].counter, 100);
    /* The head is written back lazily: still 0 in memory until SLWPCB. */
    assert_int_equal(r32(&V, CB + 16), 0);
    uint64_t a = 0;
    assert_int_equal(lwp_slwpcb(&U, 0, &V, 3, &a), HW_OK);
    assert_int_equal(a, CB);
    assert_int_equal(r32(&V, CB + 16), 11 * 32);
    assert_int_equal(r32(&V, CB + 44), 100);
    /* The CPU number is byte 1 (Figure 1). */
    const struct ev ev1[3] = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}};
    start(6, &VB, RING, 0, 0, ev1);
    retire_on(6, insn(0x1234));
    expect_rec(&VB, 0, 0x0601, 0, 0x1234, 0, __LINE__);
    /* Interval 0 records every instruction too. */
    start1(0, 1, 0);
    for (unsigned n = 0; n < 5; n++)
        retire(insn(0x5000 + n));
    assert_int_equal(nrec(0), 5);
}

static void test_missed_events(void **state)
{
    (void)state;
    /* A 64-record ring (the profile's minimum) holds 63; every instruction
     * recorded: 100 instructions, 63 stored, 37 missed, the last slot
     * holding the newest record (5.4 MissedEvents). */
    const struct ev ev[3] = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}};
    start(0, &V, 2048, 0, 0, ev);
    for (uint64_t n = 1; n <= 100; n++)
        retire(insn(0x400000 + 4 * n));
    assert_int_equal(U.cpu[0].head, 63 * 32);
    assert_int_equal(r64(&V, CB + 24), 37);
    assert_int_equal(r32(&V, CB + 16), 63 * 32); /* buffer full forced the head out */
    for (unsigned k = 0; k < 62; k++)
        EXPECT_REC(k, 1, 0, 0x400000 + 4 * (k + 1), 0);
    EXPECT_REC(63, 1, 0, 0x400000 + 4 * 100, 0);
    assert_int_equal(U.cpu[0].nstored + U.cpu[0].nmissed, 100);
    /* Software takes 10 records: the tail is reread, 10 more fit. */
    w32(&V, CB + 20, 320);
    for (uint64_t n = 101; n <= 115; n++)
        retire(insn(0x400000 + 4 * n));
    assert_int_equal(U.cpu[0].head, 9 * 32); /* wrapped: 63 -> 0 .. 9 */
    assert_int_equal(r64(&V, CB + 24), 37 + 5);
}

/* ======== branches retired (4.2) ======== */

static void test_branch_records(void **state)
{
    (void)state;
    start1(0, 2, 1);
    retire(insn(0x1000)); /* not a branch: nothing */
    assert_int_equal(nrec(0), 0);
    retire(branch(0x1004, 0x2000, 1, CORE_PRD_VALID | CORE_PRD_OK));
    retire(branch(0x2000, 0x2006, 0, CORE_PRD_VALID)); /* not taken: the fall-through */
    retire(branch(0x2006, 0x3000, 1, 0));              /* no prediction information */
    retire(jump(0x3000, 0x1000));                      /* direct: always taken and predicted */
    assert_int_equal(nrec(0), 4);
    EXPECT_REC(0, 2 | BR_TAKEN | BR_OK | BR_PRD, 0, 0x1004, 0x2000);
    EXPECT_REC(1, 2 | BR_PRD, 0, 0x2000, 0x2006);
    EXPECT_REC(2, 2 | BR_TAKEN, 0, 0x2006, 0x3000);
    EXPECT_REC(3, 2 | BR_TAKEN | BR_OK | BR_PRD, 0, 0x3000, 0x1000);

    /* A profile whose records carry no prediction: PRD valid is 0. */
    boot_with("branch_prediction: true", "branch_prediction: false");
    start1(0, 2, 1);
    retire(branch(0x1004, 0x2000, 1, CORE_PRD_VALID | CORE_PRD_OK));
    retire(jump(0x3000, 0x1000));
    EXPECT_REC(0, 2 | BR_TAKEN, 0, 0x1004, 0x2000);
    EXPECT_REC(1, 2 | BR_TAKEN, 0, 0x3000, 0x1000);
}

static void test_branch_ndb(void **state)
{
    (void)state;
    /* Every second branch: j c j c j c. With NDB the jumps do not count:
     * the 2nd and 4th... conditional branches are recorded. */
    const uint64_t ips[6] = {0x100, 0x200, 0x300, 0x400, 0x500, 0x600};
    start1(F_NDB, 2, 2);
    for (unsigned i = 0; i < 6; i++)
        retire(i % 2 ? branch(ips[i], ips[i] + 2, 0, CORE_PRD_VALID) : jump(ips[i], 0x9000));
    assert_int_equal(nrec(0), 1);
    EXPECT_REC(0, 2 | BR_PRD, 0, 0x400, 0x402);
    /* Without NDB every branch counts: the 2nd, 4th and 6th. */
    start1(0, 2, 2);
    for (unsigned i = 0; i < 6; i++)
        retire(i % 2 ? branch(ips[i], ips[i] + 2, 0, CORE_PRD_VALID) : jump(ips[i], 0x9000));
    assert_int_equal(nrec(0), 3);
    EXPECT_REC(0, 2 | BR_PRD, 0, 0x200, 0x202);
    EXPECT_REC(2, 2 | BR_PRD, 0, 0x600, 0x602);
    /* NDB leaves the other events alone: instructions still count jumps. */
    const struct ev ev[3] = {{1, 3, 3}, {2, 50, 50}, {0, 0, 0}};
    start(0, &V, RING, 0, F_NDB, ev);
    for (unsigned i = 0; i < 3; i++)
        retire(jump(ips[i], 0x9000));
    assert_int_equal(nrec(0), 1);
    EXPECT_REC(0, 1, 0, 0x300, 0);
}

/* ======== DCache misses (4.3) ======== */

static void test_dcache_records(void **state)
{
    (void)state;
    start1(0, 3, 1);
    struct core_insn in = insn(0x100);
    acc(&in, TREC_S, 0x9000, 300, MACH_SRC_MEM_LOCAL); /* a store: not counted */
    retire(in);
    retire(load(0x104, 0x9040, 0, PLAT_L1D)); /* a hit */
    assert_int_equal(nrec(0), 0);
    retire(load(0x108, 0x9080, 65, PLAT_L3));             /* 65 cycles -> 64, local L3 */
    retire(load(0x10c, 0x90c0, 300, MACH_SRC_MEM_LOCAL)); /* 288, DRAM */
    in = insn(0x110);
    acc(&in, TREC_M, 0x9100, 2000, MACH_SRC_MEM_REMOTE); /* a load too; capped at 1008 */
    retire(in);
    retire(load(0x114, 0x9140, 20, PLAT_L2)); /* 16; no status from inside the core */
    retire(load(0x118, 0x9180, 15, PLAT_L2)); /* rounds to 0 */
    assert_int_equal(nrec(0), 5);
    EXPECT_REC(0, 3 | DC_ADDR | DC_SRC(1), 64, 0x108, 0x9080);
    EXPECT_REC(1, 3 | DC_ADDR | DC_SRC(3), 288, 0x10c, 0x90c0);
    EXPECT_REC(2, 3 | DC_ADDR | DC_SRC(3), 1008, 0x110, 0x9100);
    EXPECT_REC(3, 3 | DC_ADDR | DC_SRC(0), 16, 0x114, 0x9140);
    EXPECT_REC(4, 3 | DC_ADDR | DC_SRC(0), 0, 0x118, 0x9180);

    /* Two misses in one instruction: with interval 1 the first is recorded
     * and the counter is frozen for the second; with interval 3 both count
     * (3 "Count"), so the third miss, in the next instruction, records. */
    start1(0, 3, 1);
    in = insn(0x200);
    acc(&in, TREC_L, 0xa000, 100, MACH_SRC_MEM_LOCAL);
    acc(&in, TREC_L, 0xb000, 70, PLAT_L3);
    retire(in);
    assert_int_equal(nrec(0), 1);
    EXPECT_REC(0, 3 | DC_ADDR | DC_SRC(3), 96, 0x200, 0xa000);
    start1(0, 3, 3);
    retire(in);
    assert_int_equal(nrec(0), 0);
    retire(load(0x204, 0xc000, 70, PLAT_L3));
    EXPECT_REC(0, 3 | DC_ADDR | DC_SRC(1), 64, 0x204, 0xc000);

    /* Without the data address capability: no address, bit 28 clear. */
    boot_with("data_address: true", "data_address: false");
    start1(0, 3, 1);
    retire(load(0x108, 0x9080, 65, PLAT_L3));
    EXPECT_REC(0, 3 | DC_SRC(1), 64, 0x108, 0);
    /* 2^12 - 16 with 12 latency bits. */
    boot_with("latency_bits: 10", "latency_bits: 12");
    start1(0, 3, 1);
    retire(load(0x108, 0x9080, 5000, MACH_SRC_MEM_LOCAL));
    EXPECT_REC(0, 3 | DC_ADDR | DC_SRC(3), 4080, 0x108, 0x9080);
}

/* One instruction with a miss from each place: which ones a filter keeps. */
static unsigned eligible(uint32_t filters)
{
    start1(filters, 3, 1);
    retire(load(0x10, 0x1000, 20, PLAT_L2));               /* 16 cycles, source 0 */
    retire(load(0x20, 0x2000, 65, PLAT_L3));               /* 64, local L3 */
    retire(load(0x30, 0x3000, 300, MACH_SRC_MEM_LOCAL));   /* 288, DRAM */
    retire(load(0x40, 0x4000, 1500, MACH_SRC_MEM_REMOTE)); /* 1008, DRAM */
    unsigned m = 0;
    for (unsigned k = 0; k < nrec(0); k++)
        m |= 1u << (rec(k).ip >> 4);
    return m; /* bit 1: the L2 hit .. bit 4: the remote miss */
}

static void test_dcache_filters(void **state)
{
    (void)state;
    assert_int_equal(eligible(0), 0x1e);
    /* MinLatency x 16 (5.4): at least 80 cycles. */
    assert_int_equal(eligible(5), 0x18);
    assert_int_equal(eligible(4), 0x1c); /* 64 >= 64 */
    /* 63 x 16 = 1008, the cap; a larger MinLatency is the cap (5.4). */
    assert_int_equal(eligible(63), 0x10);
    assert_int_equal(eligible(255), 0x10);
    /* CLF with one level each: NBC the L3, RAM memory; RDC and OTH name
     * sources this machine never has; CLF alone lets nothing through. The
     * L2 hit has no source and never passes CLF. */
    assert_int_equal(eligible(F_CLF | F_NBC), 0x04);
    assert_int_equal(eligible(F_CLF | F_RAM), 0x18);
    assert_int_equal(eligible(F_CLF | F_RDC | F_OTH), 0);
    assert_int_equal(eligible(F_CLF), 0);
    assert_int_equal(eligible(F_CLF | F_NBC | F_RAM | F_RDC | F_OTH), 0x1c);
    /* The level bits without CLF are ignored. */
    assert_int_equal(eligible(F_NBC), 0x1e);
    /* Both filters: both must pass. */
    assert_int_equal(eligible(F_CLF | F_NBC | 5), 0);
    assert_int_equal(eligible(F_CLF | F_NBC | F_RAM | 5), 0x18);
    assert_int_equal(eligible(F_CLF | F_NBC | F_RAM | 19), 0x10); /* 304 */

    /* Without the capability a filter is ignored (5.4 NOTE). */
    boot_with("cache_latency: true", "cache_latency: false");
    assert_int_equal(eligible(5), 0x1e);
    assert_int_equal(eligible(F_CLF | F_NBC | 5), 0x04);
    boot_with("cache_level: true", "cache_level: false");
    assert_int_equal(eligible(F_CLF | F_NBC), 0x1e);
    assert_int_equal(eligible(F_CLF | F_NBC | 5), 0x18);
}

/* ======== counters (3, 5.5.1) ======== */

static void test_one_record_per_instruction(void **state)
{
    (void)state;
    /* IR every 3, BR every 3, DCM every 2. */
    const struct ev ev[3] = {{1, 3, 3}, {2, 3, 3}, {3, 2, 2}};
    start(0, &V, RING, 0, 0, ev);
    struct core_insn b3 = branch(0x3, 0x100, 1, 0);
    acc(&b3, TREC_L, 0xd000, 300, MACH_SRC_MEM_LOCAL);
    retire(branch(0x1, 0x2, 0, 0));
    retire(branch(0x2, 0x3, 0, 0));
    retire(b3); /* IR and BR expire: the branch is recorded, IR freezes */
    assert_int_equal(nrec(0), 1);
    assert_int_equal(U.cpu[0].ctr[0].counter, 0);
    retire(insn(0x4));                                  /* IR's next eligible instruction */
    retire(load(0x5, 0xe000, 300, MACH_SRC_MEM_LOCAL)); /* DCM expires */
    assert_int_equal(nrec(0), 3);
    /* Now IR 2, BR 3, DCM 2. Two branches with misses: at the second, IR
     * and DCM expire: the miss is recorded. */
    struct core_insn b6 = branch(0x6, 0x7, 0, 0), b7 = branch(0x7, 0x8, 0, 0);
    acc(&b6, TREC_L, 0xf000, 300, MACH_SRC_MEM_LOCAL);
    acc(&b7, TREC_L, 0xf040, 300, MACH_SRC_MEM_LOCAL);
    retire(b6);
    retire(b7);
    /* IR is frozen, and BR expires at the next branch: the branch wins. */
    retire(branch(0x8, 0x9, 0, 0));
    /* Frozen at zero in the LWPCB too (SLWPCB flushes the counters). */
    uint64_t a;
    assert_int_equal(lwp_slwpcb(&U, 0, &V, 3, &a), HW_OK);
    assert_int_equal(r32(&V, CB + 44), 0);
    assert_int_equal(r32(&V, CB + 52), 3);
    retire(insn(0x9)); /* IR at last */
    assert_int_equal(nrec(0), 6);
    const unsigned want_id[6] = {2, 1, 3, 3, 2, 1};
    const uint64_t want_ip[6] = {0x3, 0x4, 0x5, 0x7, 0x8, 0x9};
    for (unsigned k = 0; k < 6; k++) {
        assert_int_equal(rec(k).dw0 & 0xff, want_id[k]);
        assert_int_equal(rec(k).ip, want_ip[k]);
    }

    /* A frozen branch counter waits for the next branch, not the next
     * instruction; a frozen miss counter for the next eligible miss. */
    const struct ev ev2[3] = {{2, 1, 1}, {3, 1, 1}, {0, 0, 0}};
    start(0, &V, RING, 0, 0, ev2);
    struct core_insn both = branch(0x10, 0x20, 1, 0);
    acc(&both, TREC_L, 0xa000, 300, MACH_SRC_MEM_LOCAL);
    retire(both);                                        /* the miss */
    retire(insn(0x20));                                  /* nothing */
    retire(load(0x24, 0xb000, 300, MACH_SRC_MEM_LOCAL)); /* a miss again */
    retire(load(0x28, 0xb040, 0, PLAT_L1D));             /* a hit: nothing */
    retire(branch(0x2c, 0x30, 0, 0));                    /* the branch */
    assert_int_equal(nrec(0), 3);
    EXPECT_REC(0, 3 | DC_ADDR | DC_SRC(3), 288, 0x10, 0xa000);
    EXPECT_REC(1, 3 | DC_ADDR | DC_SRC(3), 288, 0x24, 0xb000);
    EXPECT_REC(2, 2, 0, 0x2c, 0x30);
}

static void test_freeze_until_stored(void **state)
{
    (void)state;
    start1(0, 1, 2);
    /* The ring is read-only: the record cannot be stored (#PF, the
     * instruction retires), the counter stays at zero, and every following
     * instruction tries again. */
    assert_int_equal(vmem_protect(&V, BUF, RING, VMEM_U), 0);
    retire(insn(0x1));
    struct core_insn i2 = insn(0x2), i3 = insn(0x3);
    assert_int_equal(lwp_retire(&U, 0, &i2), HW_PF);
    assert_int_equal(U.cpu[0].pf.addr, BUF);
    assert_int_equal(U.cpu[0].pf.code, VMEM_PF_P | VMEM_PF_W | VMEM_PF_U);
    assert_int_equal(U.cpu[0].ctr[0].counter, 0);
    /* Through the observer the fault is latched for the OS. */
    struct mach_cpu p = {.id = 0};
    struct vmem_fault f = {0};
    assert_false(lwp_take_pf(&U, 0, &f));
    lwp_observe(&U, &p, &i3);
    assert_true(lwp_take_pf(&U, 0, &f));
    assert_int_equal(f.addr, BUF);
    assert_false(lwp_take_pf(&U, 0, &f));
    assert_int_equal(vmem_protect(&V, BUF, RING, RW), 0);
    retire(insn(0x4)); /* stored now */
    retire(insn(0x5));
    retire(insn(0x6));
    assert_int_equal(nrec(0), 2);
    EXPECT_REC(0, 1, 0, 0x4, 0);
    EXPECT_REC(1, 1, 0, 0x6, 0);
    assert_int_equal(U.cpu[0].nstored, 2);
}

/* Gaps between instruction records with Random low bits (5.4). */
static void gaps(unsigned random, uint64_t seed, unsigned out[40])
{
    boot_seed(NULL, NULL, seed);
    const struct ev ev[3] = {{1, 0x100, 0x100}, {0, 0, 0}, {0, 0, 0}};
    start(0, &V, RING | random << 28, 0, 0, ev);
    uint64_t n = 0, last = 0;
    for (unsigned k = 0; k < 40; k++) {
        unsigned before = nrec(0);
        while (nrec(0) == before)
            retire(insn(++n));
        out[k] = (unsigned)(n - last);
        last = n;
    }
}

static void test_random_reload(void **state)
{
    (void)state;
    unsigned g[40], g2[40], g3[40];
    gaps(0, 1, g);
    for (unsigned k = 0; k < 40; k++)
        assert_int_equal(g[k], 0x100);
    /* Random 4: the first count is EventCounter; each reload is 0x100 with
     * its low 4 bits drawn, so gaps lie in [0x100, 0x10f] and vary. */
    gaps(4, 1, g);
    assert_int_equal(g[0], 0x100);
    unsigned seen = 0;
    for (unsigned k = 1; k < 40; k++) {
        assert_in_range(g[k], 0x100, 0x10f);
        seen |= 1u << (g[k] - 0x100);
    }
    assert_true(__builtin_popcount(seen) >= 8);
    /* The same seed repeats the run; another seed does not. */
    gaps(4, 1, g2);
    assert_memory_equal(g, g2, sizeof g);
    gaps(4, 2, g3);
    assert_memory_not_equal(g, g3, sizeof g);
}

/* ======== threshold interrupt (3 "Report", 5.4) ======== */

static void test_threshold_once_per_crossing(void **state)
{
    (void)state;
    const struct ev ev[3] = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}};
    start(0, &V, RING, 320, 0, ev); /* 10 records */
    assert_int_equal(r32(&V, CB), 0x80000003);
    uint64_t n = 0;
    for (unsigned i = 0; i < 9; i++)
        retire(insn(++n));
    assert_false(lwp_take_irq(&U, 0));
    assert_int_equal(r32(&V, CB + 16), 0); /* lazy below the threshold */
    retire(insn(++n));
    assert_int_equal(r32(&V, CB + 16), 320); /* forced out at the threshold */
    assert_true(lwp_take_irq(&U, 0));
    assert_false(lwp_take_irq(&U, 0));
    for (unsigned i = 0; i < 30; i++)
        retire(insn(++n));
    assert_false(lwp_take_irq(&U, 0)); /* still over: no second interrupt */
    assert_int_equal(r32(&V, CB + 16), 40 * 32);
    /* Software drains the ring; the next crossing interrupts once more. */
    w32(&V, CB + 20, 40 * 32);
    for (unsigned i = 0; i < 9; i++)
        retire(insn(++n));
    assert_false(lwp_take_irq(&U, 0));
    retire(insn(++n));
    assert_true(lwp_take_irq(&U, 0));
    assert_int_equal(U.cpu[0].nirq, 2);
    /* With interrupts off in LWPMSR0 the head still goes out, silently. */
    assert_int_equal(lwp_wrmsr(&U, 1, LWP_MSR0, 0xF), HW_OK);
    put_cb(&VB, RING, 64, 0, ev);
    assert_int_equal(lwp_llwpcb(&U, 1, &VB, CB, 3, NULL), HW_OK);
    retire_on(1, insn(1));
    retire_on(1, insn(2));
    assert_false(lwp_take_irq(&U, 1));
    assert_int_equal(r32(&VB, CB + 16), 64);
}

/* ======== context switch (5.5.2) ======== */

#define IP_A(n) (0xA0000000ull + 4 * (n))
#define IP_B(n) (0xB0000000ull + 4 * (n))

/* Thread B: a branch at every n % 3 == 1 (its ip to the next one). */
static struct core_insn b_insn(uint64_t n)
{
    return n % 3 == 1 ? branch(IP_B(n), IP_B(n + 1), 0, 0) : insn(IP_B(n));
}

static void run_a(uint64_t *n, unsigned k)
{
    while (k--) {
        ++*n;
        retire(insn(IP_A(*n)));
    }
}

static void run_b(uint64_t *n, unsigned k)
{
    while (k--)
        retire(b_insn(++*n));
}

static void switch_to(struct lwp_xsave *save, struct vmem *vm, const struct lwp_xsave *next)
{
    lwp_save(&U, 0, save);
    lwp_restore(&U, 0, vm, next);
    assert_int_equal(lwp_ring3(&U, 0), HW_OK);
}

static void test_context_switch_isolation(void **state)
{
    (void)state;
    struct lwp_xsave xa, xb, xc, zero;
    memset(&zero, 0, sizeof zero);
    uint64_t na = 0, nb = 0;
    /* A: instructions every 100, in V. B (the same addresses, in VB):
     * instructions every 30 and branches every 5. */
    const struct ev eva[3] = {{1, 100, 100}, {0, 0, 0}, {0, 0, 0}};
    const struct ev evb[3] = {{1, 30, 30}, {2, 5, 5}, {0, 0, 0}};
    put_cb(&VB, RING, 0, 0, evb);
    start(0, &V, RING, 0, 0, eva);
    run_a(&na, 250);
    assert_int_equal(U.cpu[0].head, 64);
    assert_int_equal(r32(&V, CB + 16), 0);

    /* To B, which has never used LWP: LWP is off for it. */
    switch_to(&xa, &VB, &zero);
    assert_int_equal(r32(&V, CB + 16), 64); /* A's head went out at the switch */
    assert_int_equal(U.cpu[0].state, LWP_OFF);
    uint64_t a = 1;
    assert_int_equal(lwp_slwpcb(&U, 0, &VB, 3, &a), HW_OK);
    assert_int_equal(a, 0);
    run_b(&nb, 10); /* before its LLWPCB: nothing recorded anywhere */
    assert_int_equal(lwp_llwpcb(&U, 0, &VB, CB, 3, NULL), HW_OK);
    nb = 0;
    run_b(&nb, 130);

    /* While A is out, its LWPCB's counter and head fields are scribbled
     * on: the restore keeps the saved ones (5.5.2), not these. */
    w32(&V, CB + 44, 7);
    w32(&V, CB + 16, 0);
    switch_to(&xb, &V, &xa);
    assert_int_equal(U.cpu[0].state, LWP_ACTIVE);
    run_a(&na, 150); /* A: 400 */

    /* To C, which never used LWP: it runs without touching A or B. */
    switch_to(&xa, &VB, &zero);
    for (unsigned i = 0; i < 500; i++)
        retire(insn(0xC0000000ull + i));
    lwp_save(&U, 0, &xc);
    assert_int_equal(xc.cb, 0);

    switch_to(&xc, &VB, &xb);
    run_b(&nb, 70); /* B: 200 */
    switch_to(&xb, &V, &xa);

    /* A: records at 100, 200, 300, 400 and nothing else. */
    assert_int_equal(nrec(0), 4);
    for (unsigned k = 0; k < 4; k++)
        EXPECT_REC(k, 1, 0, IP_A(100 * (k + 1)), 0);
    assert_int_equal(rec(4).dw0, 0);
    /* B: instructions at 30..180 (6) and every 5th branch, branches being
     * at n = 3k - 2: n = 13, 28, ..., 193 (13); never on the same
     * instruction. In order of n. */
    uint64_t want[19];
    unsigned w = 0;
    for (uint64_t n = 1; n <= 200; n++)
        if (n % 30 == 0 || (n % 3 == 1 && ((n + 2) / 3) % 5 == 0))
            want[w++] = n;
    assert_int_equal(w, 19);
    assert_int_equal(xb.head, 19 * 32);
    for (unsigned k = 0; k < 19; k++) {
        struct got g = rec_in(&VB, k);
        assert_int_equal(g.ip, IP_B(want[k]));
        assert_int_equal(g.dw0 & 0xff, want[k] % 30 == 0 ? 1 : 2);
    }
    assert_int_equal(rec_in(&VB, 19).dw0, 0);
    /* Each thread's counters went on where they stopped: B counted 20
     * instructions since its last record at 180, and 2 branches (196, 199)
     * since its 65th (slots 0 and 1). */
    assert_int_equal(xb.counter[0], 10);
    assert_int_equal(xb.counter[1], 3);
    assert_int_equal(xb.live, 3);
    assert_int_equal(U.cpu[0].ctr[0].counter, 100);
    assert_int_equal(r32(&VB, CB + 16), 19 * 32); /* flushed at B's last switch */
}

static void test_restore_defers_to_ring3(void **state)
{
    (void)state;
    struct lwp_xsave xa, zero;
    memset(&zero, 0, sizeof zero);
    const struct ev ev[3] = {{1, 10, 10}, {0, 0, 0}, {0, 0, 0}};
    start(0, &V, RING, 0, 0, ev);
    for (unsigned n = 1; n <= 15; n++)
        retire(insn(n));
    lwp_save(&U, 0, &xa);
    assert_int_equal(xa.cb, CB);
    assert_int_equal(xa.head, 32);
    assert_int_equal(xa.counter[0], 5);
    assert_int_equal(xa.deferred, 0);
    lwp_restore(&U, 0, &VB, &zero);
    /* Back to A, with its LWPCB page not reachable from ring 3 now: the
     * restore itself touches no memory (5.5.2.4); entering ring 3 faults
     * and LWP counts nothing until a later entry succeeds. */
    assert_int_equal(vmem_protect(&V, CB, 0x1000, VMEM_W), 0);
    lwp_restore(&U, 0, &V, &xa);
    assert_int_equal(U.cpu[0].state, LWP_RESTORING);
    retire(insn(100));
    assert_int_equal(lwp_ring3(&U, 0), HW_PF);
    assert_int_equal(U.cpu[0].pf.addr, CB);
    assert_int_equal(U.cpu[0].state, LWP_RESTORING);
    retire(insn(101));
    /* A supervisor SLWPCB meanwhile writes the restored state out. */
    uint64_t a;
    assert_int_equal(lwp_rdmsr(&U, 0, LWP_MSR1, &a), HW_OK);
    assert_int_equal(a, CB);
    assert_int_equal(r32(&V, CB + 44), 5);
    assert_int_equal(vmem_protect(&V, CB, 0x1000, RW), 0);
    assert_int_equal(lwp_ring3(&U, 0), HW_OK);
    assert_int_equal(U.cpu[0].state, LWP_ACTIVE);
    for (unsigned n = 16; n <= 20; n++)
        retire(insn(n));
    assert_int_equal(nrec(0), 2);
    EXPECT_REC(1, 1, 0, 20, 0);

    /* An LLWPCB at ring 0 not yet completed is saved as such, and restored
     * to complete at ring 3 from the LWPCB (which now counts from 4). */
    assert_int_equal(lwp_llwpcb(&U, 0, &V, 0, 3, NULL), HW_OK);
    w32(&V, CB + 44, 4);
    assert_int_equal(lwp_llwpcb(&U, 0, &V, CB, 0, NULL), HW_OK);
    assert_int_equal(U.cpu[0].state, LWP_PENDING);
    lwp_save(&U, 0, &xa);
    assert_int_equal(xa.deferred, 1);
    lwp_restore(&U, 0, &VB, &zero);
    switch_to(&zero, &V, &xa);
    assert_int_equal(U.cpu[0].state, LWP_ACTIVE);
    for (unsigned n = 21; n <= 24; n++)
        retire(insn(n));
    assert_int_equal(nrec(0), 3);
    EXPECT_REC(2, 1, 0, 24, 0);
    /* Without LWP the calls do nothing. */
    struct lwp none;
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, "amd-epyc", &e), 0);
    assert_int_equal(lwp_init(&none, &p, 1, &e), 0);
    lwp_save(&none, 0, &xa);
    assert_int_equal(xa.cb, 0);
    lwp_restore(&none, 0, &V, &xa);
    struct core_insn i = insn(1);
    assert_int_equal(lwp_retire(&none, 0, &i), HW_OK);
    lwp_free(&none);
}

/* ======== the unit in the x86 model ======== */

static void test_x86_wiring(void **state)
{
    (void)state;
    struct plat p;
    struct mach m;
    struct x86 x;
    struct err e = {0};
    uint32_t out[4];
    uint64_t v;
    assert_int_equal(plat_load(&p, "amd-lwp", &e), 0);
    assert_int_equal(mach_init(&m, &p, 1, &e), 0);
    assert_int_equal(x86_init(&x, &m, &e), 0);
    assert_int_equal(x86_cpuid(&x, 0, 0x80000001, 0, out), HW_OK);
    /* LWP [15] beside the model's TopologyExtensions [22] and CmpLegacy [1]. */
    assert_int_equal(out[2], 1u << 22 | 1u << 15 | 1u << 1);
    assert_int_equal(x86_cpuid(&x, 3, 0x8000001C, 0, out), HW_OK);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0x01032040); /* version 1, 3 events, 32-byte records, LWPCB 64 */
    /* LwpMinBufferSize 2 in ECX[23:16] over LWPCacheMax 10, LWPDataAddress
     * and the two filters (bits 30, 31). */
    assert_int_equal(out[2], 0xC002002A);
    assert_int_equal(x86_wrmsr(&x, 3, LWP_MSR0, ALL_MSR0), HW_OK);
    assert_int_equal(x86_rdmsr(&x, 3, LWP_MSR0, &v), HW_OK);
    assert_int_equal(v, ALL_MSR0);
    assert_int_equal(x86_cpuid(&x, 3, 0x8000001C, 0, out), HW_OK);
    assert_int_equal(out[0], ALL_MSR0);
    assert_int_equal(x86_wrmsr(&x, 3, LWP_MSR0, 1ull << 4), HW_GP);
    assert_int_equal(x86_rdmsr(&x, 3, LWP_MSR1, &v), HW_OK); /* SLWPCB: off */
    assert_int_equal(v, 0);
    assert_int_equal(x86_rdmsr(&x, 8, LWP_MSR0, &v), HW_GP); /* no CPU 8 */
    x86_reset(&x);
    assert_int_equal(x86_rdmsr(&x, 3, LWP_MSR0, &v), HW_OK);
    assert_int_equal(v, 0);
    x86_free(&x);
    mach_free(&m);
    /* A profile without LWP: no CPUID bit, its MSRs #GP. */
    assert_int_equal(plat_load(&p, "amd-epyc", &e), 0);
    assert_int_equal(mach_init(&m, &p, 1, &e), 0);
    assert_int_equal(x86_init(&x, &m, &e), 0);
    assert_int_equal(x86_cpuid(&x, 0, 0x80000001, 0, out), HW_OK);
    assert_int_equal(out[2] & 1u << 15, 0);
    assert_int_equal(x86_cpuid(&x, 0, 0x8000001C, 0, out), HW_OK);
    assert_int_equal(out[0] | out[1] | out[2] | out[3], 0);
    assert_int_equal(x86_rdmsr(&x, 0, LWP_MSR0, &v), HW_GP);
    assert_int_equal(x86_wrmsr(&x, 0, LWP_MSR1, CB), HW_GP);
    x86_free(&x);
    mach_free(&m);
}

/* ======== end to end: the core's observer on the amd-lwp machine ======== */

/* An observer that counts what the engine should count, then passes the
 * instruction to the LWP unit. */
struct tally {
    struct lwp *u;
    uint64_t instr, branches, load_misses;
    uint64_t ip[4096]; /* ip of instruction n (1-based) while n < 4096 */
};

static struct core_ask tally_retire(void *ctx, const struct mach_cpu *p, const struct core_insn *in)
{
    struct tally *t = ctx;
    t->instr++;
    if (t->instr < 4096)
        t->ip[t->instr] = in->ip;
    t->branches += !!(in->flags & TREC_F_BRANCH);
    for (unsigned i = 0; i < in->nacc; i++)
        t->load_misses += in->acc[i].kind != TREC_S && in->acc[i].src != PLAT_L1D;
    lwp_observe(t->u, p, in);
    return CORE_ASK_ALL; /* every instruction, one by one */
}

static struct tally T;

/* The LWPCB and the ring after a run_machine. */
static uint8_t mem_after[2][64 + RING];

/* Runs a synthetic workload on CPU 2 of amd-lwp for about ninstr
 * instructions with LWP counting event id every interval; returns the
 * records stored plus MissedEvents. The tally sees every instruction and
 * passes each to the unit; direct, the unit is the observer and sees only
 * what it asks for (lwp_ask). Either way the LWPCB and ring end up in
 * mem_after[direct]. */
static uint64_t run_machine(unsigned id, uint32_t interval, uint32_t bufsize, uint64_t ninstr,
                            uint32_t filters, int direct)
{
    struct plat p;
    struct mach m;
    struct x86 x;
    struct err e = {0};
    assert_int_equal(plat_load(&p, "amd-lwp", &e), 0);
    assert_int_equal(mach_init(&m, &p, 1, &e), 0);
    assert_int_equal(x86_init(&x, &m, &e), 0);
    mach_set_task(&m, 2, 0);
    /* The OS enables LWP; the task loads its LWPCB from ring 3. */
    assert_int_equal(x86_wrmsr(&x, 2, LWP_MSR0, ALL_MSR0), HW_OK);
    space(&V);
    const struct ev ev[3] = {{id, interval, interval}, {0, 0, 0}, {0, 0, 0}};
    put_cb(&V, bufsize, 0, filters, ev);
    assert_int_equal(lwp_llwpcb(&x.lwp, 2, &V, CB, 3, NULL), HW_OK);

    struct wl_params wp;
    wl_params_default(&wp);
    wp.pattern = WL_RANDOM;
    wp.wss = 4 << 20;
    struct wl *w;
    assert_int_equal(wl_synth_new(&wp, 7, &w, &e), 0);
    static struct core_task t;
    core_task_init(&t, w, mach_phys_base(0, 0));
    struct bpred bp;
    bpred_init(&bp);
    memset(&T, 0, sizeof T);
    T.u = &x.lwp;
    const struct core_obs tally = {tally_retire, NULL, &T};
    const struct core_obs unit = {lwp_observe, lwp_observe_sync, &x.lwp};
    t.obs = direct ? &unit : &tally;
    t.bp = &bp;
    struct mach_cpu *c = &m.cpu[2];
    /* Quanta of 10000 cycles, as a scheduler would give. */
    while (m.ts[0].instr < ninstr)
        assert_int_equal(core_run(&m, c, &t, c->now + 10000 * MACH_TICK, &e), 0);
    if (!direct)
        assert_int_equal(T.instr, m.ts[0].instr); /* all retired at each quantum's end */
    uint64_t addr;
    assert_int_equal(lwp_slwpcb(&x.lwp, 2, &V, 3, &addr), HW_OK);
    struct vmem_fault f;
    assert_int_equal(vmem_read(&V, CB, mem_after[direct], 64, 0, &f), VMEM_OK);
    assert_int_equal(vmem_read(&V, BUF, mem_after[direct] + 64, RING, 0, &f), VMEM_OK);
    uint64_t got = r32(&V, CB + 16) / 32 + r64(&V, CB + 24);
    assert_int_equal(got, x.lwp.cpu[2].nstored + x.lwp.cpu[2].nmissed);
    /* Every record names CPU 2 and the event. */
    for (unsigned k = 0; k < r32(&V, CB + 16) / 32; k++)
        assert_int_equal(rec(k).dw0 & 0xffff, 0x200 | id);
    if (id == 1 && !direct)
        for (unsigned k = 0; k < r32(&V, CB + 16) / 32 && (k + 1) * interval < 4096; k++)
            assert_int_equal(rec(k).ip, T.ip[(k + 1) * interval]);
    wl_free(w);
    x86_free(&x);
    mach_free(&m);
    return got;
}

/* The same run seen instruction by instruction and as the unit asks:
 * the LWPCB and ring must come out byte for byte the same. */
static uint64_t run_both(unsigned id, uint32_t interval, uint32_t bufsize, uint64_t ninstr,
                         uint32_t filters)
{
    uint64_t direct = run_machine(id, interval, bufsize, ninstr, filters, 1);
    uint64_t got = run_machine(id, interval, bufsize, ninstr, filters, 0);
    assert_int_equal(direct, got);
    assert_memory_equal(mem_after[0], mem_after[1], sizeof mem_after[0]);
    return got;
}

static void test_core_end_to_end(void **state)
{
    (void)state;
    /* Instructions every 1000: exactly instructions / 1000 records, all
     * stored in a ring of 256. */
    uint64_t got = run_both(1, 1000, RING, 200000, 0);
    assert_int_equal(got, T.instr / 1000);
    assert_true(got >= 200);
    assert_int_equal(r64(&V, CB + 24), 0);
    /* Every 100 into the smallest ring (63 records): the rest are missed,
     * and stored + MissedEvents is still instructions / 100. */
    got = run_both(1, 100, 2048, 20000, 0);
    assert_int_equal(got, T.instr / 100);
    assert_int_equal(r32(&V, CB + 16), 63 * 32);
    assert_int_equal(r64(&V, CB + 24), got - 63);
    /* Branches every 50 and load misses every 40, counted by the tally. */
    got = run_both(2, 50, RING, 50000, 0);
    assert_int_equal(got, T.branches / 50);
    assert_true(got > 100);
    got = run_both(3, 40, RING, 20000, 0);
    assert_int_equal(got, T.load_misses / 40);
    assert_true(got > 100);
    /* With filters the core counts only what qualifies: the same records
     * either way. MinLatency 10 x 16 cycles and CLF with RAM take memory
     * only; CLF with NBC takes the L3 hits, lines of the 4 MiB set that
     * left the 2 MiB L2 (which takes some 45,000 loads to fill). */
    const uint32_t filt[3] = {10, F_CLF | F_RAM, F_CLF | F_NBC};
    for (unsigned i = 0; i < 3; i++) {
        got = run_both(3, 100, RING, i == 2 ? 400000 : 100000, filt[i]);
        assert_true(got > 5);
        for (unsigned k = 0; k < got && k < 255; k++) {
            assert_int_equal(rec(k).dw0 >> 29, i == 2 ? LWP_SRC_LOCAL_L3 : LWP_SRC_DRAM);
            if (i == 0)
                assert_true(rec(k).data >= 160);
        }
    }
}

int main(void)
{
#define T_(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(test_instructions_every_n),
        T_(test_missed_events),
        T_(test_branch_records),
        T_(test_branch_ndb),
        T_(test_dcache_records),
        T_(test_dcache_filters),
        T_(test_one_record_per_instruction),
        T_(test_freeze_until_stored),
        T_(test_random_reload),
        T_(test_threshold_once_per_crossing),
        T_(test_context_switch_isolation),
        T_(test_restore_defers_to_ring3),
        T_(test_x86_wiring),
        T_(test_core_end_to_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
