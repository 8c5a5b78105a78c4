/* Unit tests for hw/cbqri.c: the register semantics of RISC-V CBQRI as the
 * draft (spring 2023) and docs/registers.md section 2 state
 * them, and the project choices cbqri.h documents, on the shipped profile
 * riscv-soc and on a tiny RISC-V profile written here. Every expected value
 * is derived from a profile or the spec by hand, never read back from the
 * model; counters are compared with the machine's ground truth.
 *
 * Operations run asynchronously with the model's default latencies (BUSY
 * for CBQRI_BUSY_CYCLES, CBQRI_ACCESS_CYCLES per access): the helpers poll
 * BUSY as a driver would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "tiny_plat.h"
#include "tiny_rv.h"

#define CBQRI_FIXTURE_NTASK 4
#include "cbqri_fixture.h"

enum { CAP = CBQRI_CAPABILITIES, MON = CBQRI_MON_CTL, CTR = CBQRI_MON_CTR_VAL };
enum { ALLOC = CBQRI_ALLOC_CTL, MASK = CBQRI_BLOCK_MASK, BWA = CBQRI_BW_ALLOC };

/* ---- building machines ---- */

/* 1 socket, 1 L3 domain, 2 modules of 2 harts (L2 per module): 4 harts.
 * L2 4 KiB 4 ways (16 sets, one way per block); L3 16 KiB 8 ways (32 sets,
 * one way per block, code and data apart); LRU everywhere. */
static void boot_tiny_events(unsigned width, const char *sample, const char *events)
{
    unboot();
    struct err e = {0};
    struct plat p;
    if (tiny_rv_plat(&p, width, sample, events, &e))
        fail_msg("tiny-rv: %s", e.msg);
    boot_plat(&p);
}

static void boot_tiny(unsigned width, const char *sample)
{
    boot_tiny_events(width, sample, "occupancy: true, total: true");
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
    boot_tiny(20, "1");
    return 0;
}

/* ---- register access, with the failing line in the message ---- */

static uint64_t rd_at(unsigned hart, enum cbqri_mode md, uint64_t a, unsigned size, int line)
{
    uint64_t v = 0;
    enum hw_fault f = cbqri_mmio_read(&Q, hart, md, a, size, &v);
    if (f != HW_OK)
        fail_msg("line %d: read%u(0x%llx) by hart %u in %s = %s", line, size * 8,
                 (unsigned long long)a, hart, cbqri_mode_name[md], hw_fault_name(f));
    return v;
}

static void wr_at(unsigned hart, enum cbqri_mode md, uint64_t a, unsigned size, uint64_t v,
                  int line)
{
    enum hw_fault f = cbqri_mmio_write(&Q, hart, md, a, size, v);
    if (f != HW_OK)
        fail_msg("line %d: write%u(0x%llx, 0x%llx) by hart %u in %s = %s", line, size * 8,
                 (unsigned long long)a, (unsigned long long)v, hart, cbqri_mode_name[md],
                 hw_fault_name(f));
}

static void fault_at(unsigned hart, enum cbqri_mode md, uint64_t a, unsigned size, int line)
{
    uint64_t v = 0x5a5a;
    enum hw_fault f = cbqri_mmio_read(&Q, hart, md, a, size, &v);
    enum hw_fault g = cbqri_mmio_write(&Q, hart, md, a, size, ~0ull);
    if (f != HW_ACCESS_FAULT || g != HW_ACCESS_FAULT || v != 0)
        fail_msg("line %d: access%u(0x%llx) by hart %u in %s: read %s (0x%llx), write %s, want "
                 "access faults",
                 line, size * 8, (unsigned long long)a, hart, cbqri_mode_name[md], hw_fault_name(f),
                 (unsigned long long)v, hw_fault_name(g));
}

#define RD(a)            rd_at(0, CBQRI_S, (a), 8, __LINE__)
#define RD_M(md, a)      rd_at(0, (md), (a), 8, __LINE__)
#define RD32(a)          rd_at(0, CBQRI_S, (a), 4, __LINE__)
#define WR(a, v)         wr_at(0, CBQRI_S, (a), 8, (v), __LINE__)
#define WR_M(md, a, v)   wr_at(0, (md), (a), 8, (v), __LINE__)
#define WR32(a, v)       wr_at(0, CBQRI_S, (a), 4, (v), __LINE__)
#define FAULT(md, a, sz) fault_at(0, (md), (a), (sz), __LINE__)
#define IS(got, want)                                                                              \
    do {                                                                                           \
        uint64_t g_ = (got), w_ = (want);                                                          \
        if (g_ != w_)                                                                              \
            fail_msg("line %d: %s = 0x%llx, want 0x%llx", __LINE__, #got, (unsigned long long)g_,  \
                     (unsigned long long)w_);                                                      \
    } while (0)

/* ---- register values ---- */

static uint64_t mon_v(unsigned op, unsigned mcid, unsigned evt, unsigned atv, unsigned at)
{
    uint64_t v = HW_FSET(0, MON_CTL, OP, op);
    v = HW_FSET(v, MON_CTL, MCID, mcid);
    v = HW_FSET(v, MON_CTL, EVT_ID, evt);
    v = HW_FSET(v, MON_CTL, ATV, atv);
    return HW_FSET(v, MON_CTL, AT, at);
}

static uint64_t alloc_v(unsigned op, unsigned rcid, unsigned at)
{
    return HW_FSET(HW_FSET(HW_FSET(0, ALLOC_CTL, OP, op), ALLOC_CTL, RCID, rcid), ALLOC_CTL, AT,
                   at);
}

static uint64_t bw_v(unsigned rbwb, unsigned mweight, unsigned use_shared, unsigned shared_at)
{
    uint64_t v = HW_FSET(0, BW_ALLOC, Rbwb, rbwb);
    v = HW_FSET(v, BW_ALLOC, Mweight, mweight);
    v = HW_FSET(v, BW_ALLOC, useShared, use_shared);
    return HW_FSET(v, BW_ALLOC, sharedAT, shared_at);
}

/* Polls a control register until BUSY reads 0, as a driver does; returns
 * STATUS. Each poll is an access, so the model's clock moves on. */
static unsigned wait_at(enum cbqri_mode md, uint64_t ctl, int line)
{
    for (int i = 0; i < 1000; i++) {
        uint64_t v = rd_at(0, md, ctl, 8, line);
        if (!HW_FGET(v, MON_CTL, BUSY))
            return (unsigned)HW_FGET(v, MON_CTL, STATUS);
    }
    fail_msg("line %d: BUSY never cleared at 0x%llx", line, (unsigned long long)ctl);
    return 0;
}

static unsigned op_at(enum cbqri_mode md, uint64_t ctl, uint64_t v, int line)
{
    wr_at(0, md, ctl, 8, v, line);
    return wait_at(md, ctl, line);
}

/* STATUS of a mon or alloc operation on controller window base b. */
#define MON_OP(md, b, op, mcid, evt, atv, at)                                                      \
    op_at((md), (b) + MON, mon_v((op), (mcid), (evt), (atv), (at)), __LINE__)
#define ALLOC_OP(md, b, op, rcid, at)                                                              \
    op_at((md), (b) + ALLOC, alloc_v((op), (rcid), (at)), __LINE__)

static unsigned config_limit_at(enum cbqri_mode md, uint64_t b, unsigned rcid, unsigned at,
                                uint64_t operand, int line)
{
    wr_at(0, md, b + MASK, 8, operand, line);
    return op_at(md, b + ALLOC, alloc_v(CBQRI_CONFIG_LIMIT, rcid, at), line);
}

static uint64_t read_limit_at(enum cbqri_mode md, uint64_t b, unsigned rcid, unsigned at, int line)
{
    unsigned st = op_at(md, b + ALLOC, alloc_v(CBQRI_READ_LIMIT, rcid, at), line);
    if (st != CBQRI_ST_SUCCESS)
        fail_msg("line %d: READ_LIMIT(rcid %u, at %u) STATUS %u", line, rcid, at, st);
    return rd_at(0, md, b + MASK, 8, line);
}

static uint64_t counter_at(enum cbqri_mode md, uint64_t b, unsigned mcid, int line)
{
    unsigned st = op_at(md, b + MON, mon_v(CBQRI_READ_COUNTER, mcid, 0, 0, 0), line);
    if (st != CBQRI_ST_SUCCESS)
        fail_msg("line %d: READ_COUNTER(mcid %u) STATUS %u", line, mcid, st);
    return rd_at(0, md, b + CTR, 8, line);
}

static void config_event_at(enum cbqri_mode md, uint64_t b, unsigned mcid, unsigned evt, int line)
{
    unsigned st = op_at(md, b + MON, mon_v(CBQRI_CONFIG_EVENT, mcid, evt, 0, 0), line);
    if (st != CBQRI_ST_SUCCESS)
        fail_msg("line %d: CONFIG_EVENT(mcid %u, evt %u) STATUS %u", line, mcid, evt, st);
}

#define LIMIT(b, rcid, at, v)       config_limit_at(CBQRI_S, (b), (rcid), (at), (v), __LINE__)
#define LIMIT_M(md, b, rcid, at, v) config_limit_at((md), (b), (rcid), (at), (v), __LINE__)
#define READ_LIMIT(b, rcid, at)     read_limit_at(CBQRI_S, (b), (rcid), (at), __LINE__)
#define READ_LIMIT_M(md, b, r, at)  read_limit_at((md), (b), (r), (at), __LINE__)
#define COUNTER(b, mcid)            counter_at(CBQRI_S, (b), (mcid), __LINE__)
#define COUNTER_M(md, b, mcid)      counter_at((md), (b), (mcid), __LINE__)
#define EVENT(b, mcid, evt)         config_event_at(CBQRI_S, (b), (mcid), (evt), __LINE__)
#define EVENT_M(md, b, mcid, evt)   config_event_at((md), (b), (mcid), (evt), __LINE__)

#define CC_INVALID (1ull << 63)
#define BC_INVALID (1ull << 62)
#define BC_OVF     (1ull << 63)

/* ---- driving the machine ---- */

/* Hart h runs task t under (RCID, MCID), loaded through sqoscfg. */
static void run_as(unsigned hart, int task, unsigned rcid, unsigned mcid)
{
    mach_set_assoc(&M, hart, task, M.cpu[hart].cls, M.cpu[hart].tag);
    assert_int_equal(
        cbqri_csr_write(&Q, hart, CBQRI_S, CBQRI_CSR_SQOSCFG, (uint64_t)(mcid << 16 | rcid)),
        HW_OK);
}

/* Lines of an MCID in one cache instance, each checked to sit in `ways`. */
static uint64_t lines_in(enum plat_level l, unsigned inst, unsigned mcid, uint64_t ways)
{
    return tag_lines(&M, l, inst, mcid, ways);
}

/* Everything a register access could change, for "no state changed". */
struct snap {
    uint64_t now, faults;
    uint64_t reg[16][2][4];
    uint8_t have[16][2][5];
    uint64_t limit[16][2][64];
    uint64_t csr[16];
};

static void take(struct snap *s)
{
    memset(s, 0, sizeof *s);
    s->now = Q.now;
    for (unsigned i = 0; i < Q.nctl && i < 16; i++)
        for (int w = 0; w < 2; w++) {
            const struct cbqri_win *x = &Q.ctl[i].win[w];
            uint64_t r[4] = {x->mon_ctl, x->ctr_val, x->alloc_ctl, x->operand};
            memcpy(s->reg[i][w], r, sizeof r);
            memcpy(s->have[i][w], x->have, sizeof x->have);
            unsigned n = Q.ctl[i].pc->rcids * Q.ctl[i].nat;
            memcpy(s->limit[i][w], x->limit, (n < 64 ? n : 64) * sizeof *x->limit);
        }
    memcpy(s->csr, Q.csr, (M.ncpu < 16 ? M.ncpu : 16) * sizeof *Q.csr);
}

static void same_state(const struct snap *before, int line)
{
    struct snap now;
    take(&now);
    now.faults = before->faults;
    if (memcmp(before, &now, sizeof now))
        fail_msg("line %d: a faulting access changed the model's state", line);
}

/* ======================= capabilities and reset ======================= */

/* cc_capabilities: VER 0x01 [7:0], NCBLKS [23:8], FRCID [24]; bc: VER,
 * NBWBLKS [23:8], MRBWB [47:32] (spec 3.1, 4.1; docs/registers.md 2). */
static void test_capabilities_soc(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 4; i++) {
        IS(RD(SOC_L2(i) + CAP), 0x01000801); /* FRCID 1, NCBLKS 8, VER 1 */
        IS(RD32(SOC_L2(i) + CAP), 0x01000801);
        IS(RD32(SOC_L2(i) + CAP + 4), 0);
        IS(RD_M(CBQRI_SECURE_M, SEC(SOC_L2(i)) + CAP), 0x01000801);
    }
    for (unsigned i = 0; i < 2; i++)
        IS(RD(SOC_L3(i) + CAP), 0x01001001); /* NCBLKS 16 */
    IS(RD(SOC_BW + CAP), 0xe000010001ull);   /* MRBWB 224, NBWBLKS 256 */
    IS(RD32(SOC_BW + CAP), 0x00010001);
    IS(RD32(SOC_BW + CAP + 4), 0xe0);
    IS(RD_M(CBQRI_SECURE_M, SEC(SOC_BW) + CAP), 0xe000010001ull);
    /* Writes to a read-only register are ignored. */
    WR(SOC_L2(0) + CAP, 0);
    WR(SOC_BW + CAP, ~0ull);
    IS(RD(SOC_L2(0) + CAP), 0x01000801);
    IS(RD(SOC_BW + CAP), 0xe000010001ull);
}

static void test_capabilities_tiny(void **state)
{
    (void)state;
    IS(RD(T_L2(0) + CAP), 0x01000401); /* FRCID, NCBLKS 4 */
    IS(RD(T_L2(1) + CAP), 0x01000401);
    IS(RD(T_L3 + CAP), 0x00000801);      /* no FRCID, NCBLKS 8 */
    IS(RD(T_BW + CAP), 0x0c00001001ull); /* MRBWB 12, NBWBLKS 16 */
}

/* Reset (spec 3, 4): STATUS and BUSY 0; all capacity to every RCID and AT;
 * RCID 0's AT 0 reserves MRBWB, AT 1 shares it; sqoscfg 0. */
static void test_reset_values_soc(void **state)
{
    (void)state;
    uint64_t bases[] = {SOC_L2(0), SOC_L2(3), SOC_L3(0), SOC_L3(1), SOC_BW};
    for (unsigned k = 0; k < 5; k++)
        for (unsigned off = MON; off <= MASK; off += 8) {
            IS(RD(bases[k] + off), 0);
            IS(RD_M(CBQRI_SECURE_M, SEC(bases[k]) + off), 0);
        }
    for (unsigned r = 0; r < 16; r++) {
        IS(READ_LIMIT(SOC_L2(1), r, 0), 0xff);
        IS(READ_LIMIT(SOC_L3(1), r, 0), 0xffff);
        IS(READ_LIMIT_M(CBQRI_SECURE_M, SEC(SOC_L3(0)), r, 0), 0xffff);
        IS(READ_LIMIT(SOC_BW, r, 0), bw_v(r ? 0 : 224, 1, 0, 0));
        IS(READ_LIMIT(SOC_BW, r, 1), bw_v(0, 0, 1, 0));
        MASKS_ARE(PLAT_L2, 2, r, 0xff, 0xff);
        MASKS_ARE(PLAT_L3, 1, r, 0xffff, 0xffff);
        IS(M.bw[0].set[r].rbwb, r ? 0 : 224);
        IS(M.bw[0].set[r].weight, 1);
    }
    for (unsigned h = 0; h < 16; h++) {
        uint64_t v = 1;
        assert_int_equal(cbqri_csr_read(&Q, h, CBQRI_S, CBQRI_CSR_SQOSCFG, &v), HW_OK);
        IS(v, 0);
        IS(M.cpu[h].cls, 0);
        IS(M.cpu[h].tag, 0);
    }
}

/* cbqri_reset after programming restores every reset value, machine too. */
static void test_reset_after_writes(void **state)
{
    (void)state;
    assert_int_equal(LIMIT(T_L3, 2, 1, 0x0f), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_L2(1), 1, 0, 0x1), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_BW, 0, 0, bw_v(4, 9, 0, 0)), CBQRI_ST_SUCCESS);
    EVENT(T_L3, 3, CBQRI_EVT_OCCUPANCY);
    run_as(1, 0, 3, 5);
    MASKS_ARE(PLAT_L3, 0, 2, 0xff, 0x0f);
    cbqri_reset(&Q);
    IS(RD(T_L3 + MON), 0);
    IS(RD(T_L3 + MASK), 0);
    IS(RD(T_BW + BWA), 0);
    MASKS_ARE(PLAT_L3, 0, 2, 0xff, 0xff);
    MASKS_ARE(PLAT_L2, 1, 1, 0xf, 0xf);
    IS(M.bw[0].set[0].rbwb, 12);
    IS(M.bw[0].set[0].weight, 1);
    IS(READ_LIMIT(T_BW, 0, 0), bw_v(12, 1, 0, 0));
    IS(READ_LIMIT(T_L3, 2, 1), 0xff);
    IS(Q.csr[1], 0);
    IS(M.cpu[1].cls, 0);
    IS(M.cpu[1].tag, 0);
    IS(COUNTER(T_L3, 3), 0); /* stopped at 0 */
}

/* ======================= WARL, WPRI, read-only ======================= */

/* All ones into each control register: only the writable fields stick;
 * WPRI reads 0; AT and ATV exist only with per-AT support (L3 in tiny). */
static void test_warl_control_registers(void **state)
{
    (void)state;
    uint64_t mon_rw = HW_FMASK(MON_CTL, OP) | HW_FMASK(MON_CTL, MCID) | HW_FMASK(MON_CTL, EVT_ID);
    uint64_t mon_at = HW_FMASK(MON_CTL, AT) | HW_FMASK(MON_CTL, ATV);
    uint64_t st2 = (uint64_t)CBQRI_ST_BAD_OP << 32; /* OP 31 is not an operation */
    WR(T_L2(0) + MON, ~0ull);
    assert_int_equal(wait_at(CBQRI_S, T_L2(0) + MON, __LINE__), CBQRI_ST_BAD_OP);
    IS(RD(T_L2(0) + MON), mon_rw | st2);
    WR(T_L3 + MON, ~0ull);
    wait_at(CBQRI_S, T_L3 + MON, __LINE__);
    IS(RD(T_L3 + MON), mon_rw | mon_at | st2);
    WR(T_BW + MON, ~0ull);
    wait_at(CBQRI_S, T_BW + MON, __LINE__);
    IS(RD(T_BW + MON), mon_rw | mon_at | st2);
    uint64_t al_rw = HW_FMASK(ALLOC_CTL, OP) | HW_FMASK(ALLOC_CTL, RCID);
    WR(T_L2(0) + ALLOC, ~0ull);
    wait_at(CBQRI_S, T_L2(0) + ALLOC, __LINE__);
    IS(RD(T_L2(0) + ALLOC), al_rw | st2); /* AT read-only zero: one AT */
    WR(T_L3 + ALLOC, ~0ull);
    wait_at(CBQRI_S, T_L3 + ALLOC, __LINE__);
    IS(RD(T_L3 + ALLOC), al_rw | HW_FMASK(ALLOC_CTL, AT) | st2);
    IS(RD(T_L3 + ALLOC), 0x2000fffffull);
    /* STATUS and BUSY are read-only: writing them starts an operation,
     * whose outcome replaces STATUS. */
    IS(op_at(CBQRI_S, T_L3 + ALLOC, HW_FMASK(ALLOC_CTL, STATUS) | CBQRI_READ_LIMIT, __LINE__),
       CBQRI_ST_SUCCESS);
}

/* cc_block_mask: bits NCBLKS..63 read-only zero (3.5); bc_bw_alloc: WPRI
 * [19:16] and [63:32] read zero; useShared/sharedAT exist (per-AT). */
static void test_warl_operands(void **state)
{
    (void)state;
    WR(T_L2(0) + MASK, ~0ull);
    IS(RD(T_L2(0) + MASK), 0xf);
    WR(T_L3 + MASK, ~0ull);
    IS(RD(T_L3 + MASK), 0xff);
    WR(T_BW + BWA, ~0ull);
    IS(RD(T_BW + BWA), 0xfff0ffffull);
    WR(T_BW + BWA, 0x123456789abcdef0ull);
    IS(RD(T_BW + BWA), 0x9ab0def0ull);
    /* Monitoring counter values are read-only. */
    WR(T_L3 + CTR, ~0ull);
    WR(T_BW + CTR, ~0ull);
    IS(RD(T_L3 + CTR), 0);
    IS(RD(T_BW + CTR), 0);
}

/* ======================= STATUS codes ======================= */

static void test_mon_status(void **state)
{
    (void)state;
    const uint64_t b[] = {T_L2(1), T_L3, T_BW};
    for (unsigned k = 0; k < 3; k++) {
        assert_int_equal(MON_OP(CBQRI_S, b[k], 0, 0, 0, 0, 0), CBQRI_ST_BAD_OP);
        assert_int_equal(MON_OP(CBQRI_S, b[k], 3, 0, 0, 0, 0), CBQRI_ST_BAD_OP);
        assert_int_equal(MON_OP(CBQRI_S, b[k], 24, 0, 0, 0, 0), CBQRI_ST_BAD_OP);
        assert_int_equal(MON_OP(CBQRI_S, b[k], 1, 8, 1, 0, 0), CBQRI_ST_BAD_ID); /* 8 MCIDs */
        assert_int_equal(MON_OP(CBQRI_S, b[k], 2, 4095, 0, 0, 0), CBQRI_ST_BAD_ID);
        assert_int_equal(MON_OP(CBQRI_S, b[k], 1, 7, 1, 0, 0), CBQRI_ST_SUCCESS);
        assert_int_equal(MON_OP(CBQRI_S, b[k], 1, 7, 0, 0, 0), CBQRI_ST_SUCCESS); /* None */
        assert_int_equal(MON_OP(CBQRI_S, b[k], 1, 7, 128, 0, 0), CBQRI_ST_MON_BAD_EVT);
        /* ATV 0: AT ignored; READ_COUNTER ignores EVT_ID, AT and ATV. */
        assert_int_equal(MON_OP(CBQRI_S, b[k], 1, 7, 1, 0, 5), CBQRI_ST_SUCCESS);
        assert_int_equal(MON_OP(CBQRI_S, b[k], 2, 7, 99, 1, 7), CBQRI_ST_SUCCESS);
    }
    /* Capacity: EVT_ID 1 only; bandwidth: 1-3. */
    assert_int_equal(MON_OP(CBQRI_S, T_L3, 1, 0, 2, 0, 0), CBQRI_ST_MON_BAD_EVT);
    assert_int_equal(MON_OP(CBQRI_S, T_BW, 1, 0, 3, 0, 0), CBQRI_ST_SUCCESS);
    assert_int_equal(MON_OP(CBQRI_S, T_BW, 1, 0, 4, 0, 0), CBQRI_ST_MON_BAD_EVT);
    /* Invalid AT with ATV 1 where AT exists (L3, memory): 0 and 1 only. */
    assert_int_equal(MON_OP(CBQRI_S, T_L3, 1, 0, 1, 1, 2), CBQRI_ST_MON_BAD_AT);
    assert_int_equal(MON_OP(CBQRI_S, T_BW, 1, 0, 1, 1, 6), CBQRI_ST_MON_BAD_AT);
    assert_int_equal(MON_OP(CBQRI_S, T_L3, 1, 0, 1, 1, 1), CBQRI_ST_SUCCESS);
    /* L2 has no per-AT monitoring: ATV and AT read-only zero, so it succeeds. */
    assert_int_equal(MON_OP(CBQRI_S, T_L2(0), 1, 0, 1, 1, 2), CBQRI_ST_SUCCESS);
    IS(RD(T_L2(0) + MON), mon_v(1, 0, 1, 0, 0) | 1ull << 32);
    /* Order: OP before MCID before EVT_ID before AT. */
    assert_int_equal(MON_OP(CBQRI_S, T_L3, 5, 9, 9, 1, 7), CBQRI_ST_BAD_OP);
    assert_int_equal(MON_OP(CBQRI_S, T_L3, 1, 9, 9, 1, 7), CBQRI_ST_BAD_ID);
    assert_int_equal(MON_OP(CBQRI_S, T_L3, 1, 1, 9, 1, 7), CBQRI_ST_MON_BAD_EVT);
}

static void test_cc_alloc_status(void **state)
{
    (void)state;
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, 0, 0, 0), CBQRI_ST_BAD_OP);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, 4, 0, 0), CBQRI_ST_BAD_OP);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, 31, 0, 0), CBQRI_ST_BAD_OP);
    /* FLUSH_RCID only where FRCID is 1: L2, not L3. */
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, CBQRI_FLUSH_RCID, 1, 0), CBQRI_ST_BAD_OP);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L2(0), CBQRI_FLUSH_RCID, 1, 0), CBQRI_ST_SUCCESS);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L2(0), CBQRI_FLUSH_RCID, 4, 0), CBQRI_ST_BAD_ID);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, CBQRI_READ_LIMIT, 4, 0), CBQRI_ST_BAD_ID);
    assert_int_equal(LIMIT(T_L3, 4, 0, 1), CBQRI_ST_BAD_ID);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, CBQRI_READ_LIMIT, 3, 2), CBQRI_ST_ALLOC_BAD_AT);
    assert_int_equal(LIMIT(T_L3, 3, 7, 1), CBQRI_ST_ALLOC_BAD_AT);
    /* An empty mask: STATUS 5, the old limit stays. */
    assert_int_equal(LIMIT(T_L3, 3, 0, 0), CBQRI_ST_ALLOC_BAD_LIMIT);
    assert_int_equal(LIMIT(T_L2(1), 0, 0, 0x10), CBQRI_ST_ALLOC_BAD_LIMIT); /* above NCBLKS: 0 */
    IS(READ_LIMIT(T_L3, 3, 0), 0xff);
    IS(READ_LIMIT(T_L2(1), 0, 0), 0xf);
    MASKS_ARE(PLAT_L3, 0, 3, 0xff, 0xff);
    /* Success; READ_LIMIT writes cc_block_mask. */
    assert_int_equal(LIMIT(T_L3, 3, 0, 0x81), CBQRI_ST_SUCCESS);
    WR(T_L3 + MASK, 0);
    IS(READ_LIMIT(T_L3, 3, 0), 0x81);
    IS(RD(T_L3 + MASK), 0x81);
    /* One-AT controller: AT is read-only zero, so AT 1 is AT 0. */
    assert_int_equal(LIMIT(T_L2(0), 2, 1, 0x6), CBQRI_ST_SUCCESS);
    IS(RD(T_L2(0) + ALLOC), alloc_v(CBQRI_CONFIG_LIMIT, 2, 0) | 1ull << 32);
    IS(READ_LIMIT(T_L2(0), 2, 0), 0x6);
}

static void test_bc_alloc_status(void **state)
{
    (void)state;
    assert_int_equal(ALLOC_OP(CBQRI_S, T_BW, 0, 0, 0), CBQRI_ST_BAD_OP);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_BW, CBQRI_FLUSH_RCID, 0, 0), CBQRI_ST_BAD_OP);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_BW, 24, 0, 0), CBQRI_ST_BAD_OP);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_BW, CBQRI_READ_LIMIT, 4, 0), CBQRI_ST_BAD_ID);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_BW, CBQRI_READ_LIMIT, 0, 2), CBQRI_ST_ALLOC_BAD_AT);
    /* Rbwb outside 1..MRBWB (12). */
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(0, 5, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    assert_int_equal(LIMIT(T_BW, 0, 0, bw_v(13, 5, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    assert_int_equal(LIMIT(T_BW, 0, 0, bw_v(0xffff, 5, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    /* RCID 0 holds all 12 at reset: any more is over MRBWB. */
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(1, 5, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    assert_int_equal(LIMIT(T_BW, 0, 0, bw_v(12, 5, 0, 0)), CBQRI_ST_SUCCESS); /* its own */
    assert_int_equal(LIMIT(T_BW, 0, 0, bw_v(6, 5, 0, 0)), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(4, 5, 0, 0)), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_BW, 2, 1, bw_v(2, 5, 0, 0)), CBQRI_ST_SUCCESS); /* 12 */
    assert_int_equal(LIMIT(T_BW, 3, 0, bw_v(1, 5, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    IS(READ_LIMIT(T_BW, 3, 0), bw_v(0, 1, 0, 0)); /* unchanged */
    /* useShared: Rbwb ignored, so giving it up never over-reserves... */
    assert_int_equal(LIMIT(T_BW, 2, 1, bw_v(99, 0, 1, 0)), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_BW, 3, 0, bw_v(2, 5, 0, 0)), CBQRI_ST_SUCCESS); /* 12 again */
    /* ...but the shared AT must exist, be another, and hold its own. */
    assert_int_equal(LIMIT(T_BW, 1, 1, bw_v(1, 1, 1, 1)), CBQRI_ST_ALLOC_BAD_AT); /* itself */
    assert_int_equal(LIMIT(T_BW, 1, 1, bw_v(1, 1, 1, 5)), CBQRI_ST_ALLOC_BAD_AT); /* absent */
    /* RCID 1: AT 1 shares AT 0 (reset); AT 0 cannot share AT 1, a shared one. */
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(0, 0, 1, 1)), CBQRI_ST_ALLOC_BAD_AT);
    IS(READ_LIMIT(T_BW, 1, 0), bw_v(4, 5, 0, 0));
}

/* ======================= BUSY and time ======================= */

/* BUSY from the write for busy_cycles; writes while BUSY are ignored. */
static void test_busy_timing(void **state)
{
    (void)state;
    Q.busy_cycles = 100;
    Q.access_cycles = 0;
    uint64_t t0 = Q.now, c = MACH_TICK;
    WR(T_L3 + MASK, 0x3c);
    WR(T_L3 + ALLOC, alloc_v(CBQRI_CONFIG_LIMIT, 1, 1));
    IS(RD(T_L3 + ALLOC), alloc_v(CBQRI_CONFIG_LIMIT, 1, 1) | 1ull << 39); /* BUSY, STATUS 0 */
    /* Ignored while BUSY: another operation, and the operand. */
    WR(T_L3 + ALLOC, alloc_v(CBQRI_READ_LIMIT, 2, 0));
    WR(T_L3 + MASK, 0x01);
    IS(RD(T_L3 + MASK), 0x3c);
    cbqri_tick(&Q, t0 + 99 * c);
    IS(RD(T_L3 + ALLOC), alloc_v(CBQRI_CONFIG_LIMIT, 1, 1) | 1ull << 39);
    MASKS_ARE(PLAT_L3, 0, 1, 0xff, 0xff); /* not done yet */
    cbqri_tick(&Q, t0 + 100 * c);
    IS(RD(T_L3 + ALLOC), alloc_v(CBQRI_CONFIG_LIMIT, 1, 1) | 1ull << 32);
    MASKS_ARE(PLAT_L3, 0, 1, 0xff, 0x3c);
    /* The hart's own clock is the time of its access. */
    WR(T_BW + MON, mon_v(CBQRI_READ_COUNTER, 0, 0, 0, 0));
    WR(T_BW + MON, mon_v(CBQRI_CONFIG_EVENT, 99, 0, 0, 0)); /* ignored */
    IS(RD(T_BW + MON), mon_v(CBQRI_READ_COUNTER, 0, 0, 0, 0) | 1ull << 39);
    M.cpu[0].now = t0 + 200 * c;
    IS(RD(T_BW + MON), mon_v(CBQRI_READ_COUNTER, 0, 0, 0, 0) | 1ull << 32);
    IS(Q.now, t0 + 200 * c);
    cbqri_tick(&Q, 5); /* the clock never goes back */
    IS(Q.now, t0 + 200 * c);
    /* busy_cycles 0: done at the write. */
    Q.busy_cycles = 0;
    WR(T_L2(1) + ALLOC, alloc_v(CBQRI_READ_LIMIT, 3, 0));
    IS(RD(T_L2(1) + ALLOC), alloc_v(CBQRI_READ_LIMIT, 3, 0) | 1ull << 32);
    IS(RD(T_L2(1) + MASK), 0xf);
}

/* With the defaults (64-cycle operations, 16-cycle accesses) a driver
 * polling BUSY sees it clear on its fourth read. */
static void test_busy_polling(void **state)
{
    (void)state;
    WR(T_L3 + ALLOC, alloc_v(CBQRI_READ_LIMIT, 0, 0));
    for (int i = 0; i < 3; i++)
        IS(HW_FGET(RD(T_L3 + ALLOC), ALLOC_CTL, BUSY), 1);
    IS(RD(T_L3 + ALLOC), alloc_v(CBQRI_READ_LIMIT, 0, 0) | 1ull << 32);
}

/* ======================= split 8-byte writes ======================= */

static void test_split_writes(void **state)
{
    (void)state;
    /* Low then high: nothing until the high half; then one write. */
    WR32(T_BW + BWA, bw_v(3, 7, 0, 0));
    IS(RD(T_BW + BWA), 0);
    WR32(T_BW + BWA + 4, 0xffffffff); /* WPRI half */
    IS(RD(T_BW + BWA), bw_v(3, 7, 0, 0));
    /* High then low, on a control register: the operation starts with the
     * low half, not before. */
    WR32(T_L3 + MASK + 4, 0);
    WR32(T_L3 + MASK, 0x18);
    WR32(T_L3 + ALLOC + 4, 0);
    IS(RD(T_L3 + ALLOC), 0);
    WR32(T_L3 + ALLOC, (uint32_t)alloc_v(CBQRI_CONFIG_LIMIT, 2, 0));
    assert_int_equal(wait_at(CBQRI_S, T_L3 + ALLOC, __LINE__), CBQRI_ST_SUCCESS);
    MASKS_ARE(PLAT_L3, 0, 2, 0x18, 0xff);
    /* A lone half never takes effect. */
    WR32(T_L3 + MON, (uint32_t)mon_v(CBQRI_CONFIG_EVENT, 1, 1, 0, 0));
    IS(RD(T_L3 + MON), 0);
    IS(RD32(T_L3 + MON), 0);
    cbqri_tick(&Q, Q.now + 1000 * MACH_TICK);
    IS(RD(T_L3 + MON), 0);
    /* A half written again replaces the one held. */
    WR32(T_L3 + MASK, 0x01);
    WR32(T_L3 + MASK, 0x02);
    WR32(T_L3 + MASK + 4, 0x1234);
    IS(RD(T_L3 + MASK), 0x02);
    /* An 8-byte write drops a held half: a later lone high half is alone. */
    WR32(T_L3 + MASK, 0x40);
    WR(T_L3 + MASK, 0x80);
    WR32(T_L3 + MASK + 4, 0);
    IS(RD(T_L3 + MASK), 0x80);
    /* Halves of different registers do not pair. */
    WR32(T_BW + BWA, bw_v(5, 1, 0, 0));
    WR32(T_BW + ALLOC + 4, 0);
    IS(RD(T_BW + BWA), bw_v(3, 7, 0, 0));
    IS(RD(T_BW + ALLOC), 0);
    /* 4-byte reads return either half of the committed value. */
    WR(T_BW + BWA, bw_v(1, 2, 1, 1));
    IS(RD32(T_BW + BWA), 0x90200001);
    IS(RD32(T_BW + BWA + 4), 0);
}

/* ======================= access faults ======================= */

/* Other sizes, unaligned addresses, offsets holding no register, addresses
 * between windows, absent harts: an access fault that changes nothing. */
static void test_bad_accesses_fault(void **state)
{
    (void)state;
    WR(T_L3 + MASK, 0x5a);
    WR32(T_BW + BWA, 3); /* a half held, which must stay held */
    struct snap s;
    take(&s);
    uint64_t f0 = Q.faults;
    const unsigned sizes[] = {0, 1, 2, 3, 16};
    for (unsigned k = 0; k < 5; k++)
        FAULT(CBQRI_S, T_L3 + MON, sizes[k]);
    FAULT(CBQRI_S, T_L3 + MON + 4, 8); /* unaligned for its size */
    FAULT(CBQRI_S, T_L3 + MON + 2, 4);
    FAULT(CBQRI_S, T_L3 + MON + 1, 8);
    FAULT(CBQRI_S, T_L2(0) + 40, 8); /* NCBLKS 4: one block mask register */
    FAULT(CBQRI_S, T_L2(0) + 40, 4);
    FAULT(CBQRI_S, T_BW + 40, 8);
    FAULT(CBQRI_S, T_BW + 0xff8, 8);
    FAULT(CBQRI_S, T_L2(1) + 0x1000, 8); /* past the last L2 window */
    FAULT(CBQRI_S, T_L3 - 8, 8);
    FAULT(CBQRI_S, 0, 8);
    FAULT(CBQRI_S, ~7ull, 8);
    FAULT(CBQRI_S, SEC(T_BW) + 48, 8);
    IS(Q.fault_addr, SEC(T_BW) + 48);
    IS(cbqri_mmio_read(&Q, 4, CBQRI_S, T_L3, 8, &(uint64_t){0}), HW_ACCESS_FAULT); /* hart 4 */
    IS(cbqri_mmio_write(&Q, 99, CBQRI_M, T_L3 + ALLOC, 8, 1), HW_ACCESS_FAULT);
    IS(cbqri_mmio_write(&Q, 0, CBQRI_NMODE, T_L3 + ALLOC, 8, 1), HW_ACCESS_FAULT);
    IS(Q.faults - f0, 2 * 17 + 3);
    IS(Q.fault_addr, T_L3 + ALLOC);
    same_state(&s, __LINE__);
    IS(RD(T_L3 + MASK), 0x5a);
    WR32(T_BW + BWA + 4, 0);
    IS(RD(T_BW + BWA), 3);
}

/* Normal windows: M, S and secure M; secure windows: secure M only. */
static void test_privilege(void **state)
{
    (void)state;
    const enum cbqri_mode ok[] = {CBQRI_M, CBQRI_S, CBQRI_SECURE_M};
    const enum cbqri_mode no[] = {CBQRI_U, CBQRI_VS, CBQRI_VU};
    struct snap s;
    for (unsigned k = 0; k < 3; k++) {
        IS(RD_M(ok[k], T_L3 + CAP), 0x801);
        take(&s);
        FAULT(no[k], T_L3 + CAP, 8);
        FAULT(no[k], T_L3 + ALLOC, 8);
        FAULT(no[k], T_BW + BWA, 4);
        FAULT(ok[k] == CBQRI_SECURE_M ? no[k] : ok[k], SEC(T_L3) + ALLOC, 8);
        FAULT(no[k], SEC(T_BW) + CAP, 8);
        same_state(&s, __LINE__);
    }
    IS(RD_M(CBQRI_SECURE_M, SEC(T_L3) + CAP), 0x801);
    WR_M(CBQRI_M, T_L3 + MASK, 0x11);
    IS(RD_M(CBQRI_SECURE_M, T_L3 + MASK), 0x11);
}

/* ======================= sqoscfg ======================= */

static void test_sqoscfg(void **state)
{
    (void)state;
    uint64_t v;
    /* riscv-soc: 16 RCIDs (4 bits), 64 MCIDs (6 bits); WPRI reads 0. */
    IS(cbqri_csr_write(&Q, 3, CBQRI_S, CBQRI_CSR_SQOSCFG, 0xffffffff), HW_OK);
    IS(cbqri_csr_read(&Q, 3, CBQRI_S, CBQRI_CSR_SQOSCFG, &v), HW_OK);
    IS(v, 0x003f000f);
    IS(M.cpu[3].cls, 15);
    IS(M.cpu[3].tag, 63);
    IS(cbqri_csr_write(&Q, 3, CBQRI_M, CBQRI_CSR_SQOSCFG, 0x00250007), HW_OK);
    IS(cbqri_csr_read(&Q, 3, CBQRI_SECURE_M, CBQRI_CSR_SQOSCFG, &v), HW_OK);
    IS(v, 0x00250007);
    IS(M.cpu[3].cls, 7);
    IS(M.cpu[3].tag, 0x25);
    IS(cbqri_csr_write(&Q, 3, CBQRI_S, CBQRI_CSR_SQOSCFG, 0x0fff1234),
       HW_OK); /* RCID 4, MCID 0x3f */
    IS(Q.csr[3], 0x003f0004);
    /* Per hart. */
    IS(cbqri_csr_read(&Q, 2, CBQRI_S, CBQRI_CSR_SQOSCFG, &v), HW_OK);
    IS(v, 0);
    IS(M.cpu[2].cls, 0);
    /* U: illegal instruction; V=1: virtual instruction; nothing changes. */
    v = 7;
    IS(cbqri_csr_read(&Q, 3, CBQRI_U, CBQRI_CSR_SQOSCFG, &v), HW_ILLEGAL);
    IS(v, 0);
    IS(cbqri_csr_write(&Q, 3, CBQRI_U, CBQRI_CSR_SQOSCFG, 1), HW_ILLEGAL);
    IS(cbqri_csr_read(&Q, 3, CBQRI_VS, CBQRI_CSR_SQOSCFG, &v), HW_VIRTUAL);
    IS(cbqri_csr_write(&Q, 3, CBQRI_VS, CBQRI_CSR_SQOSCFG, 1), HW_VIRTUAL);
    IS(cbqri_csr_read(&Q, 3, CBQRI_VU, CBQRI_CSR_SQOSCFG, &v), HW_VIRTUAL);
    IS(cbqri_csr_write(&Q, 3, CBQRI_VU, CBQRI_CSR_SQOSCFG, 1), HW_VIRTUAL);
    IS(cbqri_csr_write(&Q, 16, CBQRI_S, CBQRI_CSR_SQOSCFG, 1), HW_ILLEGAL); /* no hart 16 */
    IS(Q.csr[3], 0x003f0004);
    IS(M.cpu[3].cls, 4);
    IS(M.cpu[3].tag, 63);
}

/* ======================= enforcement ======================= */

/* Block masks become way masks per AT (L3, per-AT) or for both types (L2). */
static void test_masks_per_at(void **state)
{
    (void)state;
    assert_int_equal(LIMIT(T_L3, 1, CBQRI_AT_DATA, 0x0f), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_L3, 1, CBQRI_AT_CODE, 0xf0), CBQRI_ST_SUCCESS);
    MASKS_ARE(PLAT_L3, 0, 1, 0x0f, 0xf0);
    IS(READ_LIMIT(T_L3, 1, 0), 0x0f);
    IS(READ_LIMIT(T_L3, 1, 1), 0xf0);
    assert_int_equal(LIMIT(T_L2(1), 3, 0, 0x9), CBQRI_ST_SUCCESS);
    MASKS_ARE(PLAT_L2, 1, 3, 0x9, 0x9);
    MASKS_ARE(PLAT_L2, 0, 3, 0xf, 0xf); /* the other module's L2 */
    /* A hart loads its RCID's masks. */
    run_as(2, 0, 1, 0);
    IS(M.cpu[2].m3[0][MACH_DATA], 0x0f);
    IS(M.cpu[2].m3[0][MACH_CODE], 0xf0);
}

/* riscv-soc L2: NCBLKS 8 over 16 ways, two ways per block. */
static void test_masks_blocks_to_ways(void **state)
{
    (void)state;
    assert_int_equal(LIMIT(SOC_L2(2), 5, 0, 0x81), CBQRI_ST_SUCCESS);
    IS(mach_get_mask(&M, PLAT_L2, 2, 5, MACH_DATA), 0xc003);
    IS(mach_get_mask(&M, PLAT_L2, 2, 5, MACH_CODE), 0xc003);
    IS(mach_get_mask(&M, PLAT_L2, 1, 5, MACH_DATA), 0xffff);
    assert_int_equal(LIMIT(SOC_L3(1), 5, 0, 0x0100), CBQRI_ST_SUCCESS);
    IS(mach_get_mask(&M, PLAT_L3, 1, 5, MACH_DATA), 0x0100);
    IS(mach_get_mask(&M, PLAT_L3, 0, 5, MACH_DATA), 0xffff);
}

/* Capacity isolation: RCID 1 may fill L3 ways 0-1, RCID 2 ways 2-7; each
 * stays in its ways and fills them (2 and 6 ways x 32 sets), and the
 * occupancy counters equal the lines found. */
static void test_capacity_isolation(void **state)
{
    (void)state;
    assert_int_equal(LIMIT(T_L3, 1, 0, 0x03), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_L3, 2, 0, 0xfc), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_L3, 1, 1, 0x04), CBQRI_ST_SUCCESS); /* code: way 2 */
    EVENT(T_L3, 1, CBQRI_EVT_OCCUPANCY);
    EVENT(T_L3, 2, CBQRI_EVT_OCCUPANCY);
    run_as(0, 0, 1, 1);
    run_as(2, 1, 2, 2);
    for (unsigned rep = 0; rep < 4; rep++) {
        access_n(0, HIER_LOAD, 0, 0, 1024);
        access_n(2, HIER_LOAD, 1, 0, 1024);
    }
    IS(lines_in(PLAT_L3, 0, 1, 0x03), 64);
    IS(lines_in(PLAT_L3, 0, 2, 0xfc), 192);
    IS(COUNTER(T_L3, 1), 64);
    IS(COUNTER(T_L3, 2), 192);
    IS(COUNTER(T_L3, 3), 0);
    /* RCID 1's code goes to way 2 only (it evicts RCID 2's lines there). */
    access_n(0, HIER_IFETCH, 0, 4096, 1024);
    IS(lines_in(PLAT_L3, 0, 1, 0x07), 96);
    IS(COUNTER(T_L3, 1), 96);
    IS(COUNTER(T_L3, 2), mach_occupancy(&M, PLAT_L3, 0, 2));
    IS(COUNTER(T_L3, 2), lines_in(PLAT_L3, 0, 2, 0xfc));
}

/* bc_bw_alloc reaches the share limiter: each (RCID, AT) is a limiter
 * class of its own, and useShared sends an AT's requests to its sharedAT's. */
#define BWC(r, at)   mach_bw_class(&M, 0, (r), (at))
#define BWMAP(r, at) M.bw_map[(r)*2 + (at)]
static void test_bw_limiter_settings(void **state)
{
    (void)state;
    assert_int_equal(LIMIT(T_BW, 0, 0, bw_v(4, 10, 0, 0)), CBQRI_ST_SUCCESS);
    IS(M.bw[0].set[BWC(0, 0)].rbwb, 4);
    IS(M.bw[0].set[BWC(0, 0)].weight, 10);
    IS(BWMAP(0, 1), BWC(0, 0)); /* reset: AT 1 shares AT 0's */
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(3, 20, 0, 0)), CBQRI_ST_SUCCESS);
    IS(M.bw[0].set[BWC(1, 0)].rbwb, 3);
    IS(M.bw[0].set[BWC(1, 0)].weight, 20);
    assert_int_equal(LIMIT(T_BW, 1, 1, bw_v(2, 20, 0, 0)), CBQRI_ST_SUCCESS);
    IS(M.bw[0].set[BWC(1, 1)].rbwb, 2);
    IS(BWMAP(1, 0), BWC(1, 0));
    IS(BWMAP(1, 1), BWC(1, 1));
    /* AT 0 shares AT 1's now: its class reserves nothing, its requests go
     * to AT 1's class. */
    assert_int_equal(LIMIT(T_BW, 1, 1, bw_v(2, 30, 0, 0)), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(0, 0, 1, 1)), CBQRI_ST_SUCCESS);
    IS(M.bw[0].set[BWC(1, 0)].rbwb, 0);
    IS(M.bw[0].set[BWC(1, 1)].rbwb, 2);
    IS(M.bw[0].set[BWC(1, 1)].weight, 30);
    IS(BWMAP(1, 0), BWC(1, 1));
    IS(READ_LIMIT(T_BW, 1, 0), bw_v(0, 0, 1, 1));
    /* 4 + 2 reserved: RCID 2 may have 6 more, not 7. */
    assert_int_equal(LIMIT(T_BW, 2, 0, bw_v(7, 1, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    assert_int_equal(LIMIT(T_BW, 2, 0, bw_v(6, 0, 0, 0)), CBQRI_ST_SUCCESS);
    IS(M.bw[0].set[BWC(2, 0)].rbwb, 6);
    IS(M.bw[0].set[BWC(2, 0)].weight, 0);
    IS(M.bw[0].set[BWC(3, 0)].rbwb, 0);
    IS(M.bw[0].set[BWC(3, 0)].weight, 1);
}

/* ======================= monitoring ======================= */

/* Occupancy in lines, from CONFIG_EVENT on; per cache instance; event None
 * freezes the value. */
static void test_occupancy_counts_lines(void **state)
{
    (void)state;
    EVENT(T_L3, 4, CBQRI_EVT_OCCUPANCY);
    EVENT(T_L2(0), 4, CBQRI_EVT_OCCUPANCY);
    EVENT(T_L2(1), 4, CBQRI_EVT_OCCUPANCY);
    run_as(1, 0, 0, 4); /* module 0 */
    access_n(1, HIER_LOAD, 0, 0, 40);
    IS(mach_occupancy(&M, PLAT_L3, 0, 4), 40);
    IS(COUNTER(T_L3, 4), 40);
    IS(COUNTER(T_L2(0), 4), mach_occupancy(&M, PLAT_L2, 0, 4));
    IS(COUNTER(T_L2(0), 4), 40 < 64 ? 40 : 64);
    IS(COUNTER(T_L2(1), 4), 0);
    /* Stop: the value stays while lines keep coming. */
    EVENT(T_L3, 4, 0);
    access_n(1, HIER_LOAD, 0, 40, 10);
    IS(COUNTER(T_L3, 4), 40);
    IS(mach_occupancy(&M, PLAT_L3, 0, 4), 50);
    /* Restart: from 0, counting only what comes after. */
    EVENT(T_L3, 4, CBQRI_EVT_OCCUPANCY);
    IS(COUNTER(T_L3, 4), 0);
    access_n(1, HIER_LOAD, 0, 50, 7);
    IS(COUNTER(T_L3, 4), 7);
}

/* Counter reuse: lines from before CONFIG_EVENT leave, the counter would
 * go below 0, INVALID until the MCID's occupancy has been seen at 0. */
static void test_occupancy_underflow(void **state)
{
    (void)state;
    run_as(0, 0, 0, 3);
    access_n(0, HIER_LOAD, 0, 0, 100);
    IS(mach_occupancy(&M, PLAT_L3, 0, 3), 100);
    EVENT(T_L3, 3, CBQRI_EVT_OCCUPANCY); /* MCID 3 reused: counts from 0 */
    IS(COUNTER(T_L3, 3), 0);
    access_n(0, HIER_LOAD, 0, 100, 5);
    IS(COUNTER(T_L3, 3), 5);
    /* Another MCID brings 6 lines into every set (LRU, 8 ways): sets 0-8
     * held 4 of MCID 3's 105 lines and lose 2, the other 23 sets lose 1. */
    run_as(2, 1, 0, 5);
    access_n(2, HIER_LOAD, 1, 0, 192);
    IS(mach_occupancy(&M, PLAT_L3, 0, 3), 105 - 9 * 2 - 23);
    IS(COUNTER(T_L3, 3), CC_INVALID | 0); /* saturated at 0 */
    /* Still invalid while old lines remain: each new line of MCID 3 takes
     * the place of an old one (the LRU line of its set). */
    access_n(0, HIER_LOAD, 0, 1000, 2);
    IS(mach_occupancy(&M, PLAT_L3, 0, 3), 64);
    IS(COUNTER(T_L3, 3), CC_INVALID | 0);
    /* Every MCID 3 line gone: exact again. */
    access_n(2, HIER_LOAD, 1, 192, 512);
    IS(mach_occupancy(&M, PLAT_L3, 0, 3), 0);
    IS(COUNTER(T_L3, 3), 0);
    access_n(0, HIER_LOAD, 0, 2000, 9);
    IS(COUNTER(T_L3, 3), 9);
    IS(mach_occupancy(&M, PLAT_L3, 0, 3), 9);
}

/* riscv-soc samples one L3 set in ten, chosen by a hash of the set index
 * (mach.c, samp_set): 407 of its 4096 sets. 100 lines in sets 0-99 meet 11
 * sampled sets, too few (< 16): INVALID, with the estimate (11 x 4096 / 407
 * = 110.7 -> 111). Sets 0-134 hold 15 sampled sets, 0-135 16: valid from
 * the 136th line. 1000 lines give 102 samples: 1027. */
static void test_occupancy_sampling(void **state)
{
    (void)state;
    EVENT(SOC_L3(0), 9, CBQRI_EVT_OCCUPANCY);
    run_as(0, 0, 0, 9);
    access_n(0, HIER_LOAD, 0, 0, 100);
    IS(mach_occupancy_est(&M, PLAT_L3, 0, 9), 111);
    IS(COUNTER(SOC_L3(0), 9), CC_INVALID | 111);
    access_n(0, HIER_LOAD, 0, 100, 35); /* 15 samples */
    IS(COUNTER(SOC_L3(0), 9), CC_INVALID | mach_occupancy_est(&M, PLAT_L3, 0, 9));
    access_n(0, HIER_LOAD, 0, 135, 1); /* 16 */
    IS(COUNTER(SOC_L3(0), 9), mach_occupancy_est(&M, PLAT_L3, 0, 9));
    access_n(0, HIER_LOAD, 0, 136, 864);
    IS(COUNTER(SOC_L3(0), 9), 1027);
    IS(mach_occupancy(&M, PLAT_L3, 0, 9), 1000);
}

/* Bandwidth events: 1 reads + writes, 2 reads, 3 writes (writebacks), in
 * bytes at the memory controller; equal to the machine's ground truth. */
static void test_bandwidth_events(void **state)
{
    (void)state;
    EVENT(T_BW, 1, CBQRI_EVT_RW_BYTES);
    EVENT(T_BW, 2, CBQRI_EVT_RD_BYTES);
    EVENT(T_BW, 3, CBQRI_EVT_WR_BYTES);
    /* MCID 1 stores 300 lines, then MCID 2's loads push them out dirty. */
    run_as(0, 0, 0, 1);
    access_n(0, HIER_STORE, 0, 0, 300); /* 300 line reads, dirty */
    run_as(0, 0, 0, 2);
    access_n(0, HIER_LOAD, 0, 1000, 600); /* evicts MCID 1's dirty lines */
    uint64_t rd1 = mach_bytes(&M, 0, 1, MACH_CTR_TOTAL), wr1 = mach_bytes(&M, 0, 1, MACH_CTR_WB);
    IS(rd1, 300 * 64);
    IS(wr1, 300 * 64); /* 600 lines > the 256-line L3: all of them written back */
    IS(COUNTER(T_BW, 1), rd1 + wr1);
    IS(M.ts[0].rd_bytes, 900 * 64);
    IS(COUNTER(T_BW, 2), 600 * 64);
    IS(COUNTER(T_BW, 3), 0);
    /* Counting starts at CONFIG_EVENT: MCID 1's event 3 now. */
    EVENT(T_BW, 1, CBQRI_EVT_WR_BYTES);
    IS(COUNTER(T_BW, 1), 0);
    run_as(0, 0, 0, 1);
    access_n(0, HIER_STORE, 0, 3000, 10);
    run_as(0, 0, 0, 3);
    access_n(0, HIER_LOAD, 0, 4000, 600);
    IS(COUNTER(T_BW, 1), 10 * 64);
    IS(COUNTER(T_BW, 3), 0);
    IS(COUNTER(T_BW, 0), 0); /* never configured */
    /* ATV 1: MCID 2 counts its reads of one access type only. */
    assert_int_equal(MON_OP(CBQRI_S, T_BW, 1, 2, CBQRI_EVT_RD_BYTES, 1, CBQRI_AT_CODE),
                     CBQRI_ST_SUCCESS);
    assert_int_equal(MON_OP(CBQRI_S, T_BW, 1, 3, CBQRI_EVT_RD_BYTES, 1, CBQRI_AT_DATA),
                     CBQRI_ST_SUCCESS);
    run_as(0, 0, 0, 2);
    access_n(0, HIER_LOAD, 0, 8000, 50);
    access_n(0, HIER_IFETCH, 0, 9000, 20);
    IS(COUNTER(T_BW, 2), 20 * 64);
    run_as(0, 0, 0, 3);
    access_n(0, HIER_LOAD, 0, 10000, 30);
    access_n(0, HIER_IFETCH, 0, 11000, 40);
    IS(COUNTER(T_BW, 3), 30 * 64);
}

/* A 12-bit counter: 100 lines read = 6400 bytes = 4096 + 2304: CTR 2304,
 * OVF 1, kept when stopped; CONFIG_EVENT clears both. The model observes
 * the machine's (equally narrow) counters every 32 lines. */
static void test_bandwidth_overflow(void **state)
{
    (void)state;
    boot_tiny(12, "1");
    EVENT(T_BW, 6, CBQRI_EVT_RD_BYTES);
    run_as(0, 0, 0, 6);
    for (unsigned k = 0; k < 100; k += 25) {
        access_n(0, HIER_LOAD, 0, k, 25);
        cbqri_tick(&Q, Q.now + 1);
    }
    IS(COUNTER(T_BW, 6), BC_OVF | 2304);
    EVENT(T_BW, 6, 0);
    access_n(0, HIER_LOAD, 0, 100, 10);
    IS(COUNTER(T_BW, 6), BC_OVF | 2304);
    EVENT(T_BW, 6, CBQRI_EVT_RD_BYTES);
    IS(COUNTER(T_BW, 6), 0);
    access_n(0, HIER_LOAD, 0, 200, 63);
    IS(COUNTER(T_BW, 6), 63 * 64);
    access_n(0, HIER_LOAD, 0, 300, 1);
    IS(COUNTER(T_BW, 6), BC_OVF | 0);
}

/* Without occupancy monitoring the capacity controllers' cc_mon_ctl and
 * cc_mon_ctr_val are read-only zero (3.2); the bandwidth one still counts. */
static void test_monitoring_absent(void **state)
{
    (void)state;
    boot_tiny_events(20, "1", "occupancy: false, total: true");
    WR(T_L3 + MON, mon_v(CBQRI_CONFIG_EVENT, 1, 1, 0, 0));
    IS(RD(T_L3 + MON), 0);
    WR(T_L2(0) + MON, ~0ull);
    IS(RD(T_L2(0) + MON), 0);
    IS(RD(T_L2(0) + CTR), 0);
    EVENT(T_BW, 1, CBQRI_EVT_RD_BYTES);
    run_as(0, 0, 0, 1);
    access_n(0, HIER_LOAD, 0, 0, 5);
    IS(COUNTER(T_BW, 1), 5 * 64);
    /* Allocation is there regardless. */
    assert_int_equal(LIMIT(T_L3, 1, 0, 0x3), CBQRI_ST_SUCCESS);
}

/* ======================= the secure window ======================= */

/* Secure and normal register states are apart in both directions; the
 * secure tables program only the confidential classes; secure counters
 * see nothing while no request carries C. */
static void test_secure_isolation(void **state)
{
    (void)state;
    const enum cbqri_mode sm = CBQRI_SECURE_M;
    /* Secure -> normal: a secure limit changes no normal one, nor the machine. */
    assert_int_equal(LIMIT_M(sm, SEC(T_L3), 1, 0, 0x01), CBQRI_ST_SUCCESS);
    IS(READ_LIMIT_M(sm, SEC(T_L3), 1, 0), 0x01);
    IS(READ_LIMIT(T_L3, 1, 0), 0xff);
    MASKS_ARE(PLAT_L3, 0, 1, 0xff, 0xff);
    /* Normal -> secure. */
    assert_int_equal(LIMIT(T_L3, 1, 0, 0x30), CBQRI_ST_SUCCESS);
    IS(READ_LIMIT_M(sm, SEC(T_L3), 1, 0), 0x01);
    MASKS_ARE(PLAT_L3, 0, 1, 0x30, 0xff);
    /* Registers apart: operand and control. */
    WR(T_L3 + MASK, 0x77);
    IS(RD_M(sm, SEC(T_L3) + MASK), 0x01);
    IS(RD_M(sm, SEC(T_L3) + ALLOC), alloc_v(CBQRI_READ_LIMIT, 1, 0) | 1ull << 32);
    /* Bandwidth tables and their MRBWB sums are apart too. */
    assert_int_equal(LIMIT_M(sm, SEC(T_BW), 0, 0, bw_v(2, 3, 0, 0)), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT_M(sm, SEC(T_BW), 1, 0, bw_v(10, 3, 0, 0)), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_BW, 1, 0, bw_v(1, 3, 0, 0)), CBQRI_ST_ALLOC_BAD_LIMIT);
    IS(M.bw[0].set[mach_bw_class(&M, 0, 0, 0)].rbwb, 12);
    IS(M.bw[0].set[mach_bw_class(&M, 0, 1, 0)].rbwb, 0);
    IS(M.bw[0].set[mach_bw_class(&M, 1, 0, 0)].rbwb, 2); /* the secure tables' classes */
    IS(M.bw[0].set[mach_bw_class(&M, 1, 1, 0)].rbwb, 10);
    IS(READ_LIMIT(T_BW, 1, 0), bw_v(0, 1, 0, 0));
    /* Counters: traffic of MCID 2 shows in the normal window only. */
    EVENT(T_L3, 2, CBQRI_EVT_OCCUPANCY);
    EVENT_M(sm, SEC(T_L3), 2, CBQRI_EVT_OCCUPANCY);
    EVENT(T_BW, 2, CBQRI_EVT_RW_BYTES);
    EVENT_M(sm, SEC(T_BW), 2, CBQRI_EVT_RW_BYTES);
    run_as(0, 0, 1, 2);
    access_n(0, HIER_LOAD, 0, 0, 30);
    IS(COUNTER(T_L3, 2), 30);
    IS(COUNTER(T_BW, 2), 30 * 64);
    IS(COUNTER_M(sm, SEC(T_L3), 2), 0);
    IS(COUNTER_M(sm, SEC(T_BW), 2), 0);
    IS(RD(T_L3 + CTR), 30);           /* the normal snapshot... */
    IS(RD_M(sm, SEC(T_BW) + CTR), 0); /* ...and the secure one apart */
    IS(RD_M(sm, SEC(T_L3) + MON), mon_v(CBQRI_READ_COUNTER, 2, 0, 0, 0) | 1ull << 32);
    /* A secure event configuration leaves the normal counter counting. */
    EVENT_M(sm, SEC(T_L3), 2, 0);
    access_n(0, HIER_LOAD, 0, 30, 3);
    IS(COUNTER(T_L3, 2), 33);
    /* An operation in flight in one window does not hold up the other. */
    Q.busy_cycles = 1000;
    WR(T_L3 + ALLOC, alloc_v(CBQRI_READ_LIMIT, 0, 0));
    WR_M(sm, SEC(T_L3) + MASK, 0x42);
    WR_M(sm, SEC(T_L3) + ALLOC, alloc_v(CBQRI_CONFIG_LIMIT, 3, 1));
    IS(HW_FGET(RD(T_L3 + ALLOC), ALLOC_CTL, BUSY), 1);
    IS(HW_FGET(RD_M(sm, SEC(T_L3) + ALLOC), ALLOC_CTL, BUSY), 1);
    cbqri_tick(&Q, Q.now + 1000 * MACH_TICK);
    IS(RD_M(sm, SEC(T_L3) + ALLOC), alloc_v(CBQRI_CONFIG_LIMIT, 3, 1) | 1ull << 32);
    IS(RD(T_L3 + MASK), 0xff); /* RCID 0's limit, read back */
    Q.busy_cycles = 0;
    IS(READ_LIMIT_M(sm, SEC(T_L3), 3, 1), 0x42);
    IS(READ_LIMIT(T_L3, 3, 1), 0xff);
    MASKS_ARE(PLAT_L3, 0, 3, 0xff, 0xff);
    /* Nothing but secure M reaches the secure window. */
    struct snap s;
    take(&s);
    const enum cbqri_mode no[] = {CBQRI_M, CBQRI_S, CBQRI_U, CBQRI_VS, CBQRI_VU};
    for (unsigned k = 0; k < 5; k++)
        for (unsigned off = 0; off <= 32; off += 8) {
            FAULT(no[k], SEC(T_L3) + off, 8);
            FAULT(no[k], SEC(T_BW) + off, 4);
        }
    same_state(&s, __LINE__);
}

/* Lines in one cache instance filled by requests of world conf and MCID
 * mcid, each checked to sit in `ways`. */
static uint64_t world_lines(enum plat_level l, unsigned inst, unsigned conf, unsigned mcid,
                            uint64_t ways)
{
    const struct mach_cache *x = &M.cache[l][inst];
    uint64_t n = 0;
    for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++) {
        const struct cache_line *ln = &x->c.lines[i];
        const struct mach_owner *o = &M.owners[ln->owner];
        if (ln->tag == CACHE_TAG_INVALID || o->tag != mcid || o->sub / 2 != conf)
            continue;
        n++;
        if (!((ways >> ln->way) & 1))
            fail_msg("C=%u MCID %u line in way %u outside 0x%llx", conf, mcid, ln->way,
                     (unsigned long long)ways);
    }
    return n;
}

/* Requests to a task's TEE region carry C (spec 5.2.2): they use the
 * confidential allocations the secure window programs and count in the
 * secure counters only; the task's other requests use the normal ones.
 * Each window's FLUSH_RCID removes its own world's lines only. */
static void test_confidential_requests(void **state)
{
    (void)state;
    const enum cbqri_mode sm = CBQRI_SECURE_M;
    /* Task 1's lines 1000..1499 are its TEE region. */
    mach_set_tee(&M, 1, addr(1, 1000), 500 * 64);
    assert_int_equal(LIMIT_M(sm, SEC(T_L3), 1, 0, 0x01), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT_M(sm, SEC(T_L3), 1, 1, 0x02), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT_M(sm, SEC(T_L2(0)), 1, 0, 0x1), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_L3, 1, 0, 0x30), CBQRI_ST_SUCCESS);
    assert_int_equal(LIMIT(T_L3, 1, 1, 0x30), CBQRI_ST_SUCCESS);
    IS(mach_get_mask_conf(&M, PLAT_L3, 0, 1, 1, MACH_DATA), mach_cbm_ways(&M, PLAT_L3, 0x01));
    IS(mach_get_mask_conf(&M, PLAT_L3, 0, 1, 1, MACH_CODE), mach_cbm_ways(&M, PLAT_L3, 0x02));
    IS(mach_get_mask_conf(&M, PLAT_L2, 0, 1, 1, MACH_DATA), mach_cbm_ways(&M, PLAT_L2, 0x1));
    MASKS_ARE(PLAT_L3, 0, 1, 0x30, 0x30);
    EVENT(T_L3, 2, CBQRI_EVT_OCCUPANCY);
    EVENT_M(sm, SEC(T_L3), 2, CBQRI_EVT_OCCUPANCY);
    EVENT(T_BW, 2, CBQRI_EVT_RD_BYTES);
    EVENT_M(sm, SEC(T_BW), 2, CBQRI_EVT_RD_BYTES);
    run_as(0, 1, 1, 2);
    access_n(0, HIER_LOAD, 1, 1000, 100); /* confidential: way 0 of 32 sets */
    access_n(0, HIER_LOAD, 1, 0, 100);    /* not: ways 4-5 */
    IS(world_lines(PLAT_L3, 0, 1, 2, 0x01), 32);
    IS(world_lines(PLAT_L3, 0, 0, 2, 0x30), 64);
    IS(COUNTER_M(sm, SEC(T_L3), 2), 32);
    IS(COUNTER(T_L3, 2), 64);
    IS(COUNTER_M(sm, SEC(T_BW), 2), 100 * 64);
    IS(COUNTER(T_BW, 2), 100 * 64);
    /* Code fetched from the TEE region uses the secure AT 1 mask. */
    access_n(0, HIER_IFETCH, 1, 1200, 40);
    IS(world_lines(PLAT_L3, 0, 1, 2, 0x03), 64);
    IS(COUNTER_M(sm, SEC(T_BW), 2), 140 * 64);
    IS(COUNTER(T_BW, 2), 100 * 64);
    IS(M.ts[1].rd_bytes, 240 * 64); /* ground truth: every read, either world */
    /* Confidential lines in L2 instance 0 fill way 0 only (block 0). */
    IS(world_lines(PLAT_L2, 0, 1, 2, 0x1) > 0, 1);
    /* The normal window's FLUSH_RCID leaves the confidential lines. */
    uint64_t conf2 = world_lines(PLAT_L2, 0, 1, 2, 0x1);
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L2(0), CBQRI_FLUSH_RCID, 1, 0), CBQRI_ST_SUCCESS);
    IS(world_lines(PLAT_L2, 0, 0, 2, 0xf), 0);
    IS(world_lines(PLAT_L2, 0, 1, 2, 0x1), conf2);
    assert_int_equal(ALLOC_OP(sm, SEC(T_L2(0)), CBQRI_FLUSH_RCID, 1, 0), CBQRI_ST_SUCCESS);
    IS(world_lines(PLAT_L2, 0, 1, 2, 0x1), 0);
    /* Without a TEE region, the same addresses are normal requests. */
    mach_set_tee(&M, 1, 0, 0);
    run_as(0, 1, 1, 2);
    access_n(0, HIER_LOAD, 1, 2000, 10);
    IS(COUNTER_M(sm, SEC(T_BW), 2), 140 * 64);
    IS(COUNTER(T_BW, 2), 110 * 64);
}

/* FLUSH_RCID (spec 3.5) writes back and invalidates the lines the RCID
 * allocated at that cache, and only those; the MCID's occupancy falls with
 * them; dirty data is not lost. */
static void test_flush_rcid(void **state)
{
    (void)state;
    EVENT(T_L2(0), 1, CBQRI_EVT_OCCUPANCY);
    EVENT(T_L2(0), 2, CBQRI_EVT_OCCUPANCY);
    run_as(0, 0, 1, 1);
    access_n(0, HIER_STORE, 0, 0, 20); /* 20 dirty lines of RCID 1 */
    run_as(1, 1, 2, 2);
    access_n(1, HIER_LOAD, 1, 0, 20);
    uint64_t l1 = mach_occupancy(&M, PLAT_L2, 0, 1), l2 = mach_occupancy(&M, PLAT_L2, 0, 2);
    IS(l1 > 0 && l2 > 0, 1);
    IS(COUNTER(T_L2(0), 1), l1);
    uint64_t wb = mach_node_bytes(&M, 0, 1, MACH_ANY, 0, 1);
    uint64_t dirty = 0;
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L2(0), CBQRI_FLUSH_RCID, 1, 0), CBQRI_ST_SUCCESS);
    IS(mach_occupancy(&M, PLAT_L2, 0, 1), 0);
    IS(mach_occupancy(&M, PLAT_L2, 0, 2), l2);
    IS(COUNTER(T_L2(0), 1), 0);
    IS(COUNTER(T_L2(0), 2), l2);
    /* The dirty data stays above (L1 holds its own copies), or went down to
     * L3 or memory: none is lost. */
    const struct mach_cache *lv[2] = {&M.cache[PLAT_L1D][0], &M.cache[PLAT_L3][0]};
    for (int k = 0; k < 2; k++) {
        const struct mach_cache *x = lv[k];
        for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++)
            dirty += x->c.lines[i].tag != CACHE_TAG_INVALID &&
                     M.owners[x->c.lines[i].owner].tag == 1 &&
                     (x->c.lines[i].flags & CACHE_F_DIRTY);
    }
    IS(dirty * 64 + mach_node_bytes(&M, 0, 1, MACH_ANY, 0, 1) - wb, 20 * 64);
    /* L3 has no FLUSH_RCID (FRCID 0): the operation is invalid. */
    assert_int_equal(ALLOC_OP(CBQRI_S, T_L3, CBQRI_FLUSH_RCID, 1, 0), CBQRI_ST_BAD_OP);
}

/* ======================= odds and ends ======================= */

static void test_reg_names(void **state)
{
    (void)state;
    const struct cbqri_ctl *c;
    int sec;
    assert_string_equal(cbqri_reg_name(&Q, SOC_L3(1) + MASK, &c, &sec), "cc_block_mask");
    IS(c->inst, 1);
    IS(c->level, PLAT_L3);
    IS(sec, 0);
    assert_string_equal(cbqri_reg_name(&Q, SEC(SOC_BW) + BWA + 4, &c, &sec), "bc_bw_alloc");
    IS(sec, 1);
    assert_string_equal(cbqri_reg_name(&Q, SOC_L2(3), NULL, NULL), "cc_capabilities");
    assert_string_equal(cbqri_reg_name(&Q, SOC_BW + 16, NULL, NULL), "bc_mon_ctr_val");
    assert_null(cbqri_reg_name(&Q, SOC_L2(0) + 40, &c, NULL));
    assert_null(c);
    assert_null(cbqri_reg_name(&Q, SOC_L2(4), NULL, NULL));
}

/* The register interface drivers use is the model itself. */
static void test_regif(void **state)
{
    (void)state;
    struct cbqri_regif r;
    cbqri_regif(&Q, &r);
    uint64_t v = 0;
    uint64_t c = 1;
    IS(r.mmio_read(r.ctx, 1, CBQRI_S, SOC_BW, 8, &v), HW_OK);
    IS(v, 0xe000010001ull);
    IS(r.mmio_write(r.ctx, 1, CBQRI_U, SOC_BW + 24, 8, 1), HW_ACCESS_FAULT);
    IS(r.csr_write(r.ctx, 1, CBQRI_S, CBQRI_CSR_SQOSCFG, 0x20003), HW_OK);
    IS(r.csr_read(r.ctx, 1, CBQRI_VS, CBQRI_CSR_SQOSCFG, &c), HW_VIRTUAL);
    IS(r.csr_read(r.ctx, 1, CBQRI_S, CBQRI_CSR_SQOSCFG, &c), HW_OK);
    IS(c, 0x20003);
}

static void test_x86_has_no_cbqri(void **state)
{
    (void)state;
    unboot();
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, "intel-xeon", &e), 0);
    assert_int_equal(mach_init(&M, &p, CBQRI_FIXTURE_NTASK, &e), 0);
    assert_int_equal(cbqri_init(&Q, &M, &e), -QOSIM_EUNSUP);
    assert_substr(e.msg, "not a RISC-V platform");
    mach_free(&M);
}

static void test_fault_names(void **state)
{
    (void)state;
    assert_string_equal(hw_fault_name(HW_ACCESS_FAULT), "access-fault");
    assert_string_equal(hw_fault_name(HW_ILLEGAL), "illegal-instruction");
    assert_string_equal(hw_fault_name(HW_VIRTUAL), "virtual-instruction");
    assert_string_equal(cbqri_mode_name[CBQRI_SECURE_M], "secure-M");
}

#define SOC(t)  cmocka_unit_test_setup_teardown(t, setup_soc, teardown)
#define TINY(t) cmocka_unit_test_setup_teardown(t, setup_tiny, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        SOC(test_capabilities_soc),
        TINY(test_capabilities_tiny),
        SOC(test_reset_values_soc),
        TINY(test_reset_after_writes),
        TINY(test_warl_control_registers),
        TINY(test_warl_operands),
        TINY(test_mon_status),
        TINY(test_cc_alloc_status),
        TINY(test_bc_alloc_status),
        TINY(test_busy_timing),
        TINY(test_busy_polling),
        TINY(test_split_writes),
        TINY(test_bad_accesses_fault),
        TINY(test_privilege),
        SOC(test_sqoscfg),
        TINY(test_masks_per_at),
        SOC(test_masks_blocks_to_ways),
        TINY(test_capacity_isolation),
        TINY(test_bw_limiter_settings),
        TINY(test_occupancy_counts_lines),
        TINY(test_occupancy_underflow),
        SOC(test_occupancy_sampling),
        TINY(test_bandwidth_events),
        TINY(test_bandwidth_overflow),
        TINY(test_monitoring_absent),
        TINY(test_secure_isolation),
        TINY(test_confidential_requests),
        TINY(test_flush_rcid),
        SOC(test_reg_names),
        SOC(test_regif),
        TINY(test_x86_has_no_cbqri),
        TINY(test_fault_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
