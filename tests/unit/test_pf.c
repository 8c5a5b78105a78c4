/* Unit tests for the hardware prefetchers (sim/cache/pf.c, issued by
 * sim/mach.c): a stream with them on misses L2 far less and runs faster; a
 * random pattern they cannot predict only costs memory traffic; turned off
 * (or not in the profile) the machine is exactly what it was; prefetches
 * carry the requester's class and tag (fills under its mask, occupancy and
 * byte counters exact against ground truth); they pass the MBA delay, and
 * a delayed prefetch is a late one. Profiles are inline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cpu/core.h"
#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "sim/wl/wl.h"
#include "util/conf.h"
#include "util/rng.h"

#include "qosim.h"
#include "tiny_plat.h"

static const char profile[] =
    "name: pf-test\n"
    "vendor: intel\n"
    "topology: {sockets: 1, modules: 2}\n"
    "core:\n"
    "  frequency: 1GHz\n"
    "  cpi: 0.5\n"
    "  mlp: 4\n"
    "  link: 16\n"
    "%s"
    "caches:\n"
    "  L1I: {size: 4K, ways: 4, latency: 2}\n"
    "  L1D: {size: 4K, ways: 4, latency: 4}\n"
    "  L2: {size: 32K, ways: 8, latency: 12}\n"
    "  L3:\n"
    "    size: 256K\n"
    "    ways: 8\n"
    "    latency: 40\n"
    "    monitored: true\n"
    "    allocation: {classes: 4, cbm_len: 8}\n"
    "memory: {channels: 4, peak: 400GB/s, latency: 100ns}\n"
    "qos:\n"
    "  monitoring: {ids: 8, occupancy: true, total: true, local: true, width: 62, scale: 1}\n"
    "  bandwidth:\n"
    "    kind: delay\n"
    "    classes: 4\n"
    "    max: 90\n"
    "    granularity: 10\n"
    "    model: request\n"
    "    request_delay: [0, 0, 0, 0, 0, 50, 100, 200, 400]\n";

/* Intel's four, at their defaults. */
static const char all4[] = "  prefetch:\n"
                           "    l2_stream: true\n"
                           "    l2_adjacent: true\n"
                           "    l1_next_line: true\n"
                           "    l1_ip_stride: true\n";
static const char l2only[] = "  prefetch: {l2_stream: true, l2_adjacent: true}\n";

static struct mach M;

static int build_rc(const char *pf, struct err *e)
{
    char text[4096];
    snprintf(text, sizeof text, profile, pf);
    return text_mach(&M, "pf-test.yaml", text, 2, e);
}

static void build(const char *pf)
{
    build_rc(pf, NULL);
}

static int teardown(void **state)
{
    (void)state;
    mach_free(&M);
    return 0;
}

/* Task 0 runs `pattern` over 16 MiB (a line per access, every instruction an
 * access) on CPU 0 in class cls, tag 1, for `cycles` cycles. */
static void run(enum wl_pattern pattern, unsigned cls, uint64_t cycles)
{
    struct wl *w = line_wl(pattern, 16ull << 20, 1);
    struct err e = {0};
    static struct core_task t;
    core_task_init(&t, w, mach_phys_base(0, 0));
    struct mach_cpu *p = &M.cpu[0];
    mach_set_assoc(&M, 0, 0, cls, 1);
    assert_int_equal(core_run(&M, p, &t, p->now + cycles * MACH_TICK, &e), 0);
    wl_free(w);
}

/* Task 0's counts after `pattern` in class 0 for `cycles` cycles on CPU 0
 * with Intel's four prefetchers turned off (*off), then on (*on): a new
 * machine each, the second left built. */
static void run_off_on(enum wl_pattern pattern, uint64_t cycles, struct mach_tstat *off,
                       struct mach_tstat *on)
{
    build(all4);
    mach_set_prefetch(&M, 0, 0);
    run(pattern, 0, cycles);
    *off = M.ts[0];
    mach_free(&M);
    build(all4);
    run(pattern, 0, cycles);
    *on = M.ts[0];
}

/* A sequential stream: with the prefetchers the L2 demand misses fall (to
 * about a third: the L2's queue of 16 bounds the stream at 16 lines per
 * memory latency, and this core asks for a new line every instruction, so
 * the streamer's requests beyond the queue are dropped and those lines
 * missed), most prefetches are used, and the stream runs faster; memory
 * traffic is the same lines (a stream uses what is prefetched). */
static void test_stream(void **state)
{
    (void)state;
    struct mach_tstat off, on;
    run_off_on(WL_SEQ, 200000, &off, &on);
    assert_int_equal(off.pf_req, 0);
    assert_int_equal(off.pf_bytes, 0);
    assert_true(on.pf_drop > 0);
    if (on.miss[PLAT_L2] * 5 > on.instr * 2 || on.instr < off.instr * 3 / 2)
        fail_msg("stream with prefetchers: %llu L2 misses in %llu instructions (off: %llu in "
                 "%llu)",
                 (unsigned long long)on.miss[PLAT_L2], (unsigned long long)on.instr,
                 (unsigned long long)off.miss[PLAT_L2], (unsigned long long)off.instr);
    if (on.pf_useful * 10 < on.pf_req * 8)
        fail_msg("stream: %llu of %llu prefetches used", (unsigned long long)on.pf_useful,
                 (unsigned long long)on.pf_req);
    assert_true(on.pf_bytes > 0 && on.pf_bytes <= on.rd_bytes);
    /* Lines read per instruction: one, prefetched or not (within the lines
     * prefetched ahead and not yet reached). */
    double per_on = (double)on.rd_bytes / 64 / (double)on.instr;
    if (per_on < 0.99 || per_on > 1.02)
        fail_msg("stream read %.3f lines per instruction with prefetchers", per_on);
}

/* Random lines: no stream forms, the adjacent-line prefetcher fetches each
 * miss's pair, which a random pattern over 16 MiB seldom uses: about twice
 * the memory traffic per demand miss, and no fewer demand misses. */
static void test_random(void **state)
{
    (void)state;
    struct mach_tstat off, on;
    run_off_on(WL_RANDOM, 200000, &off, &on);
    double r_off = (double)off.rd_bytes / (double)off.miss[PLAT_L3];
    double r_on = (double)on.rd_bytes / (double)on.miss[PLAT_L3];
    if (r_off > 64.5 || r_on < 1.8 * 64)
        fail_msg("random: %.1f bytes per L3 demand miss with prefetchers, %.1f without", r_on,
                 r_off);
    if (on.pf_useful * 20 > on.pf_req)
        fail_msg("random: %llu of %llu prefetches used", (unsigned long long)on.pf_useful,
                 (unsigned long long)on.pf_req);
    /* Demand misses per instruction do not fall. */
    assert_true((double)on.miss[PLAT_L2] / (double)on.instr >
                0.97 * (double)off.miss[PLAT_L2] / (double)off.instr);
}

/* Off is as before: a profile with prefetchers all turned off runs exactly
 * as the same profile without any (every count, the time, memory). */
static void test_off_is_today(void **state)
{
    (void)state;
    build("");
    run(WL_SEQ, 0, 100000);
    struct mach_tstat none = M.ts[0];
    uint64_t now = M.cpu[0].now, rd = M.mem.stat[0].read_bytes;
    mach_free(&M);
    build(all4);
    for (unsigned c = 0; c < M.ncpu; c++)
        mach_set_prefetch(&M, c, 0);
    run(WL_SEQ, 0, 100000);
    assert_memory_equal(&none, &M.ts[0], sizeof none);
    assert_int_equal(now, M.cpu[0].now);
    assert_int_equal(rd, M.mem.stat[0].read_bytes);
}

/* Counts L3 lines of tag `tag` and checks they sit in `ways`. */
static uint64_t lines_of_tag(unsigned tag, uint64_t ways)
{
    return tag_lines(&M, PLAT_L3, 0, tag, ways);
}

/* Prefetches are the requester's: class 2 may fill L3 ways 0-1 only, and
 * every line of its tag, prefetched ones included, is there; occupancy is
 * exact; the tag's and the class's byte counters are the task's reads,
 * prefetches included, and so are the memory's. */
static void test_requester_class_and_tag(void **state)
{
    (void)state;
    build(all4);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 2, MACH_DATA, 0x3), 0);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 2, MACH_CODE, 0x3), 0);
    run(WL_SEQ, 2, 100000);
    uint64_t n = lines_of_tag(1, 0x3);
    assert_true(n > 0);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), n);
    assert_int_equal(mach_task_lines(&M, PLAT_L3, 0), n);
    assert_true(M.ts[0].pf_bytes > 0);
    assert_int_equal(mach_traffic(&M, 0, 1, MACH_TR_TOTAL), M.ts[0].rd_bytes);
    assert_int_equal(M.mem.stat[0].read_bytes, M.ts[0].rd_bytes);
    assert_int_equal(mach_traffic_cls(&M, 0, 2, MACH_TR_TOTAL), M.ts[0].rd_bytes);
}

/* Every tag's occupancy is exact and the tags' byte counters add up to the
 * tasks' reads, through a mixed run of two CPUs with prefetchers on:
 * streams and random accesses, stores, tags, classes and masks changed
 * mid-run (old lines keep their old tag). */
static void test_counts_exact_mixed(void **state)
{
    (void)state;
    build(all4);
    struct rng r;
    rng_seed(&r, 11, 0);
    uint64_t pos[2] = {0, 0};
    mach_set_assoc(&M, 0, 0, 0, 0);
    mach_set_assoc(&M, 1, 1, 0, 0);
    for (int step = 0; step < 60000; step++) {
        unsigned cpu = (unsigned)rng_below(&r, 2);
        if (step % 7000 == 0) {
            mach_set_assoc(&M, cpu, (int)cpu, (unsigned)rng_below(&r, 4),
                           (unsigned)rng_below(&r, 8));
            assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, (unsigned)rng_below(&r, 4), MACH_DATA,
                                           1 + rng_below(&r, 255)),
                             0);
        }
        uint64_t line = rng_below(&r, 3) ? pos[cpu]++ : rng_below(&r, 1 << 16);
        M.cpu[cpu].ip = 0x400000 + 4 * rng_below(&r, 8);
        unsigned kind = rng_below(&r, 5) == 0 ? HIER_STORE : HIER_LOAD;
        M.cpu[cpu].now +=
            mach_access(&M, &M.cpu[cpu], kind, mach_phys_base(0, cpu) | (0x100000 + line * 64)) +
            MACH_TICK;
        if (step % 10000 == 0 || step == 59999) {
            uint64_t sum = 0, bytes = 0;
            for (unsigned t = 0; t < 8; t++) {
                uint64_t n = lines_of_tag(t, ~0ull);
                assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, t), n);
                sum += n;
                bytes += mach_traffic(&M, 0, t, MACH_TR_TOTAL);
            }
            assert_int_equal(sum, mach_valid_lines(&M, PLAT_L3, 0));
            assert_int_equal(bytes, M.ts[0].rd_bytes + M.ts[1].rd_bytes + M.idle.rd_bytes);
        }
    }
    assert_true(M.ts[0].pf_req > 1000 && M.ts[1].pf_req > 1000);
}

/* Prefetches pass the L2-egress delay: with only the L2 prefetchers, every
 * request the limiter admits is a demand L2 miss or a prefetch (each of
 * which missed L2). Delayed, a prefetch arrives late: at delay 90 (400
 * cycles a request) the prefetched stream slows although its demand
 * requests hit prefetched lines. */
static void test_prefetch_delayed(void **state)
{
    (void)state;
    build(l2only);
    run(WL_SEQ, 1, 100000);
    const struct bw_class_stat *st = &M.bw[0].stat[1];
    assert_int_equal(st->reqs, M.ts[0].miss[PLAT_L2] + M.ts[0].pf_req);
    uint64_t fast = M.ts[0].instr;
    mach_free(&M);
    build(l2only);
    struct bw_class_set s;
    bw_class_reset(BW_DELAY, &s);
    s.delay_pct = 90;
    assert_int_equal(mach_set_bw(&M, 0, 1, &s), 0);
    run(WL_SEQ, 1, 100000);
    uint64_t slow = M.ts[0].instr;
    if (slow * 2 > fast)
        fail_msg("a prefetched stream at delay 90 ran %llu instructions, %llu undelayed",
                 (unsigned long long)slow, (unsigned long long)fast);
    /* Most demand requests still find their line prefetched (late, not missing). */
    assert_true(M.ts[0].pf_useful * 2 > M.ts[0].miss[PLAT_L1D]);
}

/* Switching per CPU: mach_set_prefetch keeps only kinds the part has. */
static void test_set_prefetch(void **state)
{
    (void)state;
    build(l2only);
    assert_int_equal(mach_get_prefetch(&M, 0), 3);
    assert_int_equal(mach_set_prefetch(&M, 0, PF_ALL), 0);
    assert_int_equal(mach_get_prefetch(&M, 0), 3);
    assert_int_equal(mach_set_prefetch(&M, 1, 1), 0);
    assert_int_equal(mach_get_prefetch(&M, 1), 1);
    assert_int_equal(mach_set_prefetch(&M, M.ncpu, 0), -QOSIM_EINVAL);
}

/* Task 0's load of line `line` (of 64 bytes, from 1 MiB into CPU 0's
 * memory) at instruction address ip, without the core's time. */
static void load(unsigned line, uint64_t ip)
{
    mach_set_assoc(&M, 0, 0, 0, 0);
    M.cpu[0].ip = ip;
    mach_access(&M, &M.cpu[0], HIER_LOAD, mach_phys_base(0, 0) | (0x100000 + line * 64ull));
}

/* The L2 prefetchers stop at the L2's queue: with only the adjacent-line
 * prefetcher and a queue of 4, an L2 miss's pair line is asked for while
 * fewer than 4 L2 misses are in flight, the miss itself included, and
 * counted dropped when they are 4. */
static void test_l2_queue_bound(void **state)
{
    (void)state;
    static const char adj[] = "  l2_queue: 4\n  prefetch: {l2_adjacent: true}\n";
    const uint64_t later = 1ull << 60; /* requests still in flight throughout */
    build(adj);
    assert_int_equal(M.p.core.pf.l2_queue, 4);
    for (int i = 0; i < 2; i++)
        pf_flight_add(&M.cpu[0].pf->l2q, later);
    load(0, 0x1000); /* 2 + this miss = 3 in flight: room for its pair */
    assert_int_equal(M.ts[0].miss[PLAT_L2], 1);
    assert_int_equal(M.ts[0].pf_req, 1);
    assert_int_equal(M.ts[0].pf_drop, 0);
    assert_int_equal(pf_outstanding(&M.cpu[0].pf->l2q, M.cpu[0].now), 4); /* the pair too */
    mach_free(&M);
    build(adj);
    for (int i = 0; i < 3; i++)
        pf_flight_add(&M.cpu[0].pf->l2q, later);
    load(0, 0x1000); /* 3 + this miss = 4: full */
    assert_int_equal(M.ts[0].miss[PLAT_L2], 1);
    assert_int_equal(M.ts[0].pf_req, 0);
    assert_int_equal(M.ts[0].pf_drop, 1);
    assert_int_equal(M.ts[0].pf_bytes, 0);
    assert_int_equal(M.ts[0].rd_bytes, 64); /* the demand line alone */
}

/* The L1 prefetchers stop at the fill buffers: the next-line prefetcher
 * asking for 4 lines after two ascending loads, with 3 fill buffers, gets
 * one (the two loads' misses hold two) and 3 are dropped; once those
 * misses have completed, 3 of 4; with 8 fill buffers all 4. */
static void test_fill_buffer_bound(void **state)
{
    (void)state;
    static const char fb3[] = "  fill_buffers: 3\n  prefetch: {l1_next_line: {degree: 4}}\n";
    build(fb3);
    assert_int_equal(M.p.core.pf.fill_buffers, 3);
    load(1, 0x1000);
    load(2, 0x1004);
    assert_int_equal(M.ts[0].miss[PLAT_L1D], 2);
    assert_int_equal(M.ts[0].pf_req, 1);
    assert_int_equal(M.ts[0].pf_drop, 3);
    mach_free(&M);

    build(fb3);
    load(1, 0x1000);
    M.cpu[0].now += 1000000 * MACH_TICK; /* the first miss has completed */
    load(2, 0x1004);
    assert_int_equal(M.ts[0].pf_req, 2); /* the second's miss holds one */
    assert_int_equal(M.ts[0].pf_drop, 2);
    mach_free(&M);

    build("  fill_buffers: 8\n  prefetch: {l1_next_line: {degree: 4}}\n");
    load(1, 0x1000);
    load(2, 0x1004);
    assert_int_equal(M.ts[0].pf_req, 4);
    assert_int_equal(M.ts[0].pf_drop, 0);
    assert_int_equal(M.ts[0].pf_useful, 0);
    load(3, 0x1008); /* the first prefetched line, used */
    assert_int_equal(M.ts[0].pf_useful, 1);
}

/* A queue counts the requests kept whose completion is after now. */
static void test_queue_count(void **state)
{
    (void)state;
    struct pf_queue q;
    memset(&q, 0, sizeof q);
    assert_int_equal(pf_outstanding(&q, 0), 0);
    for (uint64_t i = 1; i <= 10; i++)
        pf_flight_add(&q, 100 * i);
    assert_int_equal(pf_outstanding(&q, 0), 10);
    assert_int_equal(pf_outstanding(&q, 100), 9); /* done at 100: no longer in flight */
    assert_int_equal(pf_outstanding(&q, 550), 5);
    assert_int_equal(pf_outstanding(&q, 1000), 0);
    for (unsigned i = 0; i < PF_FLIGHT; i++) /* the window: the last PF_FLIGHT requests */
        pf_flight_add(&q, 5000);
    assert_int_equal(pf_outstanding(&q, 0), PF_FLIGHT);
}

static void bad(const char *pf, const char *msg)
{
    struct err e = {0};
    if (!build_rc(pf, &e)) {
        mach_free(&M);
        fail_msg("accepted: %s", pf);
    }
    if (!strstr(e.msg, msg) || !strstr(e.msg, "pf-test.yaml:"))
        fail_msg("'%s' lacks '%s'", e.msg, msg);
}

static void test_profile_keys(void **state)
{
    (void)state;
    build("  prefetch: {l2_stream: {distance: 8, degree: 4}, l1_next_line: false}\n");
    const struct pf_cfg *c = &M.p.core.pf;
    assert_int_equal(c->present, 1);
    assert_int_equal(c->k[PF_L2_STREAM].distance, 8);
    assert_int_equal(c->k[PF_L2_STREAM].degree, 4);
    assert_int_equal(c->k[PF_L2_STREAM].l2_distance, 8); /* at most the distance */
    assert_int_equal(c->k[PF_L2_STREAM].busy, 16);
    assert_int_equal(c->fill_buffers, 4); /* core.mlp's */
    assert_int_equal(c->l2_queue, 16);
    mach_free(&M);
    bad("  prefetch: {l2_streamer: true}\n", "unknown key");
    bad("  prefetch: {l2_stream: {distance: 64}}\n", "distance");
    bad("  prefetch: {l2_adjacent: {degree: 2}}\n", "unknown key");
    bad("  prefetch: {l1_next_line: maybe}\n", "l1_next_line");
    bad("  fill_buffers: 0\n", "fill_buffers");
    bad("  fill_buffers: 33\n", "fill_buffers");
    bad("  fill_buffers: ten\n", "fill_buffers");
    bad("  l2_queue: 0\n", "l2_queue");
    bad("  l2_queue: 64\n", "l2_queue");
    bad("  l2_queue: 1.5\n", "l2_queue");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_stream, teardown),
        cmocka_unit_test_teardown(test_random, teardown),
        cmocka_unit_test_teardown(test_off_is_today, teardown),
        cmocka_unit_test_teardown(test_requester_class_and_tag, teardown),
        cmocka_unit_test_teardown(test_counts_exact_mixed, teardown),
        cmocka_unit_test_teardown(test_prefetch_delayed, teardown),
        cmocka_unit_test_teardown(test_set_prefetch, teardown),
        cmocka_unit_test_teardown(test_l2_queue_bound, teardown),
        cmocka_unit_test_teardown(test_fill_buffer_bound, teardown),
        cmocka_unit_test(test_queue_count),
        cmocka_unit_test(test_profile_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
