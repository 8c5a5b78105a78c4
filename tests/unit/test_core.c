/* Unit tests for sim/cpu/core.c's retirement observer: each instruction retired
 * once, in order, with its successor, branch outcome, prediction and data
 * accesses (virtual address, what served it); quantum boundaries and the
 * end of a trace; and a task without an observer timed exactly as with
 * one. Traces are small files written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/cpu/core.h"
#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "sim/trace/trace.h"
#include "sim/wl/wl.h"

#include "qosim.h"

static struct mach M;
static char path[64];

#define MAXI 64
struct seen {
    unsigned n;
    unsigned cpu;
    struct core_insn in[MAXI];
};

static struct core_ask record(void *ctx, const struct mach_cpu *p, const struct core_insn *in)
{
    struct seen *s = ctx;
    s->cpu = p->id;
    if (s->n < MAXI)
        s->in[s->n] = *in;
    s->n++;
    return CORE_ASK_ALL;
}

static int setup(void **state)
{
    (void)state;
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, "amd-lwp", &e) || mach_init(&M, &p, 2, &e))
        fail_msg("amd-lwp: %s", e.msg);
    mach_set_task(&M, 1, 1);
    path[0] = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mach_free(&M);
    if (path[0])
        unlink(path);
    return 0;
}

static void write_file(const void *data, size_t n)
{
    snprintf(path, sizeof path, "/tmp/qosim-test-core-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, n), (ssize_t)n);
    close(fd);
}

/* Runs the trace at path as task 1 on CPU 1, in quanta of q ticks (0: one
 * run to the end), watched by obs (may be NULL) with predictor bp. */
static void run_trace(const struct trace_ops *fmt, const struct core_obs *obs, struct bpred *bp,
                      uint64_t q)
{
    struct wl *w;
    struct err e = {0};
    assert_int_equal(wl_trace_new(path, fmt, 0, &w, &e), 0);
    static struct core_task t;
    core_task_init(&t, w, mach_phys_base(0, 1));
    t.obs = obs;
    t.bp = bp;
    struct mach_cpu *c = &M.cpu[1];
    int rc;
    do
        rc = core_run(&M, c, &t, q ? c->now + q : UINT64_MAX, &e);
    while (rc == 0);
    assert_int_equal(rc, 1);
    wl_free(w);
}

static const char lackey[] = "I  00400000,4\n"
                             " L 10000000,8\n"
                             "I  00400004,3\n"
                             " S 10000040,8\n"
                             " L 10000000,8\n"
                             "I  00400007,2\n"
                             " M 20000000,4\n"
                             "I  00400100,4\n"
                             "I  00400104,4\n"
                             " L 10000008,1\n L 10000010,1\n L 10000018,1\n L 10000020,1\n"
                             " L 10000028,1\n L 10000030,1\n L 10000038,1\n L 10000080,1\n"
                             " L 100000c0,1\n L 10000100,1\n"
                             "I  00400108,2\n";

static void test_observer_sees_retirement(void **state)
{
    (void)state;
    write_file(lackey, sizeof lackey - 1);
    static struct seen s;
    memset(&s, 0, sizeof s);
    const struct core_obs obs = {record, NULL, &s};
    run_trace(&trace_lackey, &obs, NULL, 0);
    assert_int_equal(s.n, 6);
    assert_int_equal(s.cpu, 1);
    const uint64_t ip[6] = {0x400000, 0x400004, 0x400007, 0x400100, 0x400104, 0x400108};
    for (unsigned i = 0; i < 6; i++) {
        assert_int_equal(s.in[i].ip, ip[i]);
        /* The next instruction; for the last, the end of its bytes. */
        assert_int_equal(s.in[i].next, i < 5 ? ip[i + 1] : 0x40010a);
        /* Lackey's one taken branch, inferred: 400007 (2 bytes) -> 400100. */
        assert_int_equal(s.in[i].flags, i == 2 ? TREC_F_BRANCH | TREC_F_TAKEN : 0);
        assert_int_equal(s.in[i].pred, 0); /* no predictor on this core */
    }
    /* A cold load: memory of the CPU's own node, addressed virtually (the
     * task's space sits at 1 << 47 physically); latency in cycles, at least
     * the profile's 70 ns at 3.6 GHz. */
    const struct core_acc *a = s.in[0].acc;
    assert_int_equal(s.in[0].nacc, 1);
    assert_int_equal(a[0].addr, 0x10000000);
    assert_int_equal(a[0].kind, TREC_L);
    assert_int_equal(a[0].src, MACH_SRC_MEM_LOCAL);
    assert_true(a[0].lat >= 252);
    a = s.in[1].acc;
    assert_int_equal(s.in[1].nacc, 2);
    assert_int_equal(a[0].kind, TREC_S);
    assert_int_equal(a[0].src, MACH_SRC_MEM_LOCAL);
    assert_int_equal(a[1].addr, 0x10000000);
    assert_int_equal(a[1].src, PLAT_L1D); /* the line the first load brought */
    assert_int_equal(a[1].lat, 0);
    assert_int_equal(s.in[2].acc[0].kind, TREC_M);
    assert_int_equal(s.in[3].nacc, 0);
    /* Ten loads: the first eight are shown; seven hit the line at
     * 0x10000000, which is in L1D. */
    assert_int_equal(s.in[4].nacc, CORE_MAX_ACC);
    for (unsigned i = 0; i < 7; i++)
        assert_int_equal(s.in[4].acc[i].src, PLAT_L1D);
    assert_int_equal(s.in[4].acc[7].addr, 0x10000080);
    assert_int_equal(s.in[4].acc[7].src, MACH_SRC_MEM_LOCAL);
    assert_int_equal(M.ts[1].instr, 6);
}

static void test_quanta_retire_each_once(void **state)
{
    (void)state;
    write_file(lackey, sizeof lackey - 1);
    static struct seen whole, sliced;
    memset(&whole, 0, sizeof whole);
    memset(&sliced, 0, sizeof sliced);
    const struct core_obs o1 = {record, NULL, &whole};
    run_trace(&trace_lackey, &o1, NULL, 0);
    uint64_t ticks = M.ts[1].ticks;
    teardown(state);
    setup(state);
    write_file(lackey, sizeof lackey - 1);
    /* One tick per quantum: every instruction starts a quantum of its own. */
    const struct core_obs o2 = {record, NULL, &sliced};
    run_trace(&trace_lackey, &o2, NULL, 1);
    assert_int_equal(sliced.n, 6);
    assert_memory_equal(sliced.in, whole.in, sizeof whole.in);
    assert_int_equal(M.ts[1].ticks, ticks);
}

/* ChampSim records: ip, is_branch, taken, registers (destination 2,
 * source 4), no memory. */
static void cs(uint8_t *p, uint64_t ip, int br, int tk, const uint8_t reg[6])
{
    memset(p, 0, 64);
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(ip >> 8 * i);
    p[8] = (uint8_t)br;
    p[9] = (uint8_t)tk;
    if (reg)
        memcpy(p + 10, reg, 6);
}

static void test_branches_and_prediction(void **state)
{
    (void)state;
    static const uint8_t jcc[6] = {26, 0, 26, 25}, jmp[6] = {26, 0, 26};
    uint8_t b[64 * 50];
    /* Seven runs of a loop whose branch is taken twice then falls through
     * to a direct jump back; then a last instruction. */
    unsigned n = 0;
    for (unsigned r = 0; r < 7; r++) {
        for (unsigned i = 0; i < 3; i++) {
            cs(b + 64 * n++, 0x401000, 0, 0, NULL);
            cs(b + 64 * n++, 0x401004, 1, i < 2, jcc);
        }
        cs(b + 64 * n++, 0x401008, 1, 1, jmp);
    }
    cs(b + 64 * n++, 0x402000, 0, 0, NULL);
    write_file(b, 64 * n);
    static struct seen s;
    memset(&s, 0, sizeof s);
    const struct core_obs obs = {record, NULL, &s};
    struct bpred bp;
    bpred_init(&bp);
    run_trace(&trace_champsim, &obs, &bp, 0);
    assert_int_equal(s.n, 50);
    /* ChampSim's registers also give each branch its kind. */
    const unsigned cond = TREC_F_BRANCH | TREC_F_BR(TREC_BR_COND), tk = TREC_F_TAKEN,
                   dj = TREC_F_DIRECT, jump = TREC_F_BRANCH | TREC_F_BR(TREC_BR_JMP);
    for (unsigned r = 0; r < 7; r++) {
        const struct core_insn *in = &s.in[7 * r];
        for (unsigned i = 0; i < 6; i += 2) {
            assert_int_equal(in[i].flags, 0);
            assert_int_equal(in[i].pred, 0);
            assert_int_equal(in[i].next, 0x401004);
        }
        assert_int_equal(in[1].flags, cond | tk);
        assert_int_equal(in[1].next, 0x401000);
        assert_int_equal(in[3].flags, cond | tk);
        assert_int_equal(in[5].flags, cond);
        assert_int_equal(in[5].next, 0x401008); /* the fall-through */
        for (unsigned i = 1; i < 6; i += 2)
            assert_true(in[i].pred & CORE_PRD_VALID);
        /* The direct jump: always taken and predicted, not through the
         * table. */
        assert_int_equal(in[6].flags, jump | tk | dj);
        assert_int_equal(in[6].pred, CORE_PRD_VALID | CORE_PRD_OK);
        assert_int_equal(in[6].next, r < 6 ? 0x401000 : 0x402000);
        /* The history of conditional branches (T T N ...) has period 3:
         * from the 16th branch on, every one is predicted. */
        if (r >= 5)
            for (unsigned i = 1; i < 6; i += 2)
                assert_int_equal(in[i].pred, CORE_PRD_VALID | CORE_PRD_OK);
    }
    assert_int_equal(bp.branches, 21);
    /* Without a predictor: no prediction for conditional branches. */
    teardown(state);
    setup(state);
    write_file(b, 64 * n);
    memset(&s, 0, sizeof s);
    run_trace(&trace_champsim, &obs, NULL, 0);
    assert_int_equal(s.in[1].pred, 0);
    assert_int_equal(s.in[6].pred, CORE_PRD_VALID | CORE_PRD_OK);
}

/* An observer that asks for the same each time: tmpl, with quiet counting
 * down from every - 1 across runs; it notes what it sees. */
struct sampler {
    struct core_ask tmpl;
    uint64_t every, since, calls, syncs;
    struct core_skip seen_skipped, synced;
    uint64_t ip[MAXI];
    struct core_skip skip[MAXI];
};

static struct core_ask sample_ask(const struct sampler *s)
{
    struct core_ask a = s->tmpl;
    a.quiet = s->every ? s->every - 1 - s->since : UINT64_MAX;
    return a;
}

static void add_skip(struct core_skip *to, const struct core_skip *n)
{
    to->instr += n->instr;
    to->branches += n->branches;
    to->misses += n->misses;
}

static struct core_ask sample(void *ctx, const struct mach_cpu *p, const struct core_insn *in)
{
    (void)p;
    struct sampler *s = ctx;
    if (s->calls < MAXI) {
        s->ip[s->calls] = in->ip;
        s->skip[s->calls] = in->skipped;
    }
    s->calls++;
    add_skip(&s->seen_skipped, &in->skipped);
    s->since = 0;
    return sample_ask(s);
}

static struct core_ask sample_sync(void *ctx, const struct mach_cpu *p, const struct core_skip *n)
{
    (void)p;
    struct sampler *s = ctx;
    s->syncs++;
    add_skip(&s->synced, n);
    s->since += n->instr;
    return sample_ask(s);
}

static void test_observer_asks(void **state)
{
    (void)state;
    static const uint8_t jcc[6] = {26, 0, 26, 25};
    uint8_t b[64 * 30];
    /* 30 instructions at 0x1000 + 4i; branches at i = 4 and 5. */
    for (unsigned i = 0; i < 30; i++)
        cs(b + 64 * i, 0x1000 + 4 * i, i == 4 || i == 5, 0, i == 4 || i == 5 ? jcc : NULL);
    write_file(b, sizeof b);
    for (int sliced = 0; sliced < 2; sliced++) {
        struct sampler s = {.every = 7, .tmpl = {.want = CORE_WANT_BRANCH}};
        const struct core_obs obs = {sample, sample_sync, &s};
        /* One run, or quanta of one instruction each. */
        run_trace(&trace_champsim, &obs, NULL, sliced);
        /* Seen: the branches (i = 4, 5: quiet_br is 0) and the 7th
         * instruction after each seen one (12, 19, 26). */
        assert_int_equal(s.calls, 5);
        const uint64_t want[5] = {0x1010, 0x1014, 0x1030, 0x104c, 0x1068};
        for (unsigned k = 0; k < 5; k++)
            assert_int_equal(s.ip[k], want[k]);
        /* Every instruction is accounted for once: seen, skipped before a
         * seen one, or synced at the end of a run. */
        if (!sliced) {
            assert_int_equal(s.seen_skipped.instr, 4 + 0 + 6 + 6 + 6);
            assert_int_equal(s.synced.instr, 3);
            assert_int_equal(s.syncs, 2);
        } else {
            assert_int_equal(s.seen_skipped.instr, 0);
            assert_int_equal(s.synced.instr, 25);
        }
        assert_int_equal(s.seen_skipped.branches + s.synced.branches, 0);
        teardown(state);
        setup(state);
        write_file(b, sizeof b);
    }
}

/* Records the ip of every instruction whose number is a multiple of 50. */
struct nth {
    uint64_t n, ip[MAXI];
};

static struct core_ask nth_retire(void *ctx, const struct mach_cpu *p, const struct core_insn *in)
{
    (void)p;
    struct nth *s = ctx;
    if (++s->n % 50 == 0 && s->n / 50 <= MAXI)
        s->ip[s->n / 50 - 1] = in->ip;
    return CORE_ASK_ALL;
}

static void test_observer_quiet_stretches(void **state)
{
    (void)state;
    /* Asked for every 50th instruction only, the core runs the 49 between
     * without looking (CORE_FF_MIN is below 49), across quanta: the same
     * instructions are seen as by an observer that sees them all. */
    struct wl_params wp;
    wl_params_default(&wp);
    uint64_t want[MAXI];
    for (int watched = 0; watched < 2; watched++) {
        if (watched) {
            teardown(state);
            setup(state);
        }
        struct wl *w;
        struct err e = {0};
        assert_int_equal(wl_synth_new(&wp, 5, &w, &e), 0);
        static struct core_task t;
        core_task_init(&t, w, mach_phys_base(0, 1));
        static struct nth all;
        static struct sampler s;
        memset(&all, 0, sizeof all);
        memset(&s, 0, sizeof s);
        s.every = 50;
        const struct core_obs o_all = {nth_retire, NULL, &all};
        const struct core_obs o_s = {sample, sample_sync, &s};
        t.obs = watched ? &o_s : &o_all;
        struct mach_cpu *c = &M.cpu[1];
        while (M.ts[1].instr < 50 * MAXI + 7)
            assert_int_equal(core_run(&M, c, &t, c->now + 777 * MACH_TICK, &e), 0);
        if (!watched) {
            memcpy(want, all.ip, sizeof want);
        } else {
            assert_int_equal(s.calls, M.ts[1].instr / 50);
            assert_memory_equal(s.ip, want, sizeof want);
            assert_int_equal(s.calls + s.seen_skipped.instr + s.synced.instr, M.ts[1].instr);
        }
        wl_free(w);
    }
    /* A trace that ends inside a quiet stretch: the rest is synced. */
    teardown(state);
    setup(state);
    char text[100 * 16 + 1], *q = text;
    for (unsigned i = 0; i < 100; i++)
        q += sprintf(q, "I  %08x,4\n", 0x400000 + 4 * i);
    write_file(text, strlen(text));
    struct sampler s = {.every = 40};
    const struct core_obs obs = {sample, sample_sync, &s};
    run_trace(&trace_lackey, &obs, NULL, 0);
    assert_int_equal(s.calls, 2);
    assert_int_equal(s.ip[0], 0x400000 + 4 * 39);
    assert_int_equal(s.ip[1], 0x400000 + 4 * 79);
    assert_int_equal(s.seen_skipped.instr, 78);
    assert_int_equal(s.synced.instr, 20);
}

static void test_observer_counts_events(void **state)
{
    (void)state;
    static const uint8_t jcc[6] = {26, 0, 26, 25}, jmp[6] = {26, 0, 26};
    /* i: what (cold lines come from local memory, at least 252 cycles) */
    const struct {
        int br;
        const uint8_t *reg;
        uint64_t load;
    } prog[] = {
        {0, NULL, 0x10000000}, /* 0: a miss */
        {1, jcc, 0},           /* 1: a branch */
        {1, jmp, 0},           /* 2: a direct jump: not counted */
        {1, jcc, 0},           /* 3: a branch */
        {0, NULL, 0x10000008}, /* 4: a hit */
        {0, NULL, 0x10000040}, /* 5: a miss */
        {1, jcc, 0},           /* 6 */
        {1, jcc, 0},           /* 7 */
        {1, jcc, 0},           /* 8 */
        {0, NULL, 0},          /* 9 */
    };
    uint8_t b[64 * 10];
    for (unsigned i = 0; i < 10; i++) {
        cs(b + 64 * i, 0x1000 + 4 * i, prog[i].br, prog[i].br, prog[i].reg);
        for (int k = 0; k < 8; k++)
            b[64 * i + 32 + k] = (uint8_t)(prog[i].load >> 8 * k);
    }
    write_file(b, sizeof b);
    /* Two branches and one miss may go by, instructions without limit. */
    struct sampler s = {
        .tmpl = {.want = CORE_WANT_BRANCH | CORE_WANT_LOAD_MISS | CORE_WANT_NO_DIRECT,
                 .quiet_br = 2,
                 .quiet_miss = 1,
                 .miss_lat = 200,
                 .miss_src = 1u << MACH_SRC_MEM_LOCAL}};
    const struct core_obs obs = {sample, sample_sync, &s};
    run_trace(&trace_champsim, &obs, NULL, 0);
    /* 5 is the second miss; 8 the third branch after it. */
    assert_int_equal(s.calls, 2);
    assert_int_equal(s.ip[0], 0x1014);
    assert_int_equal(s.skip[0].instr, 5);
    assert_int_equal(s.skip[0].branches, 2);
    assert_int_equal(s.skip[0].misses, 1);
    assert_int_equal(s.ip[1], 0x1020);
    assert_int_equal(s.skip[1].instr, 2);
    assert_int_equal(s.skip[1].branches, 2);
    assert_int_equal(s.skip[1].misses, 0);
    assert_int_equal(s.synced.instr, 1);

    /* Misses that do not qualify (too short, or from elsewhere) go by
     * uncounted; direct jumps count as branches without NO_DIRECT. */
    for (int v = 0; v < 2; v++) {
        teardown(state);
        setup(state);
        write_file(b, sizeof b);
        memset(&s, 0, sizeof s);
        s.tmpl = (struct core_ask){.want = CORE_WANT_BRANCH | CORE_WANT_LOAD_MISS,
                                   .quiet_br = 2,
                                   .quiet_miss = 0,
                                   .miss_lat = v ? 0 : 100000,
                                   .miss_src = v ? 1u << PLAT_L3 : ~0u};
        run_trace(&trace_champsim, &obs, NULL, 0);
        /* The jump at 2 counts: the third branch is now 3; then 8. */
        assert_int_equal(s.calls, 2);
        assert_int_equal(s.ip[0], 0x100c);
        assert_int_equal(s.skip[0].branches, 2);
        assert_int_equal(s.ip[1], 0x1020);
        assert_int_equal(s.skip[1].misses, 0);
        assert_int_equal(s.synced.misses, 0);
    }
}

static void test_no_observer_same_timing(void **state)
{
    (void)state;
    /* A synthetic workload for 200000 instructions, watched and not: the
     * machine's time and counts agree to the tick. */
    struct wl_params wp;
    wl_params_default(&wp);
    wp.pattern = WL_ZIPF;
    wp.zipf_alpha = 0.9;
    wp.wss = 8 << 20;
    uint64_t now[2], miss[2], instr[2];
    for (int watched = 0; watched < 2; watched++) {
        if (watched) {
            teardown(state);
            setup(state);
        }
        struct wl *w;
        struct err e = {0};
        assert_int_equal(wl_synth_new(&wp, 3, &w, &e), 0);
        static struct core_task t;
        core_task_init(&t, w, mach_phys_base(0, 1));
        static struct seen s;
        memset(&s, 0, sizeof s);
        const struct core_obs obs = {record, NULL, &s};
        struct bpred bp;
        bpred_init(&bp);
        if (watched) {
            t.obs = &obs;
            t.bp = &bp;
        }
        struct mach_cpu *c = &M.cpu[1];
        while (M.ts[1].instr < 200000)
            assert_int_equal(core_run(&M, c, &t, c->now + 5000 * MACH_TICK, &e), 0);
        now[watched] = c->now;
        miss[watched] = M.ts[1].miss[PLAT_L1D];
        instr[watched] = M.ts[1].instr;
        if (watched)
            assert_int_equal(s.n, instr[1]);
        wl_free(w);
    }
    assert_int_equal(now[0], now[1]);
    assert_int_equal(miss[0], miss[1]);
    assert_int_equal(instr[0], instr[1]);
}

int main(void)
{
#define T_(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(test_observer_sees_retirement), T_(test_quanta_retire_each_once),
        T_(test_branches_and_prediction),  T_(test_observer_asks),
        T_(test_observer_counts_events),   T_(test_observer_quiet_stretches),
        T_(test_no_observer_same_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
