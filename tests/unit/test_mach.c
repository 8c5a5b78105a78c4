/* Unit tests for sim/mach.c: the QoS mechanisms as the issue states them.
 * A small two-node machine is built from a profile written here; tasks are
 * driven through mach_access() directly, so every count is known. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/mach.h"
#include "util/rng.h"

/* 2 sockets x 1 node x 1 domain x 2 modules x 1 core x 1 thread = 4 CPUs;
 * L3 16 KiB, 8 ways, 32 sets; masks are 8 bits, one per way. */
static const char profile[] = "name: tiny\n"
                              "vendor: amd\n"
                              "topology: {sockets: 2, modules: 2}\n"
                              "core: {frequency: 1GHz, cpi: 1, mlp: 1}\n"
                              "caches:\n"
                              "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                              "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                              "  L2: {size: 4K, ways: 4, latency: 10}\n"
                              "  L3:\n"
                              "    size: 16K\n"
                              "    ways: 8\n"
                              "    latency: 30\n"
                              "    inclusion: %s\n"
                              "    monitored: true\n"
                              "    allocation: {classes: 4, cbm_len: 8, cdp: true}\n"
                              "memory: {channels: 2, peak: 64GB/s, latency: 100ns, "
                              "remote_penalty: 50ns}\n"
                              "qos:\n"
                              "  monitoring: {ids: 8, occupancy: true, total: true, local: true,"
                              " width: %u, scale: 64, sample: %s}\n";

static struct mach M;

/* M, from a profile's text, with ntask tasks. */
static void build_text(const char *text, unsigned ntask)
{
    struct conf c;
    struct err e = {0};
    struct plat p;
    assert_int_equal(conf_load_mem(&c, "tiny.yaml", text, strlen(text), &e), 0);
    int rc = plat_from_conf(&p, &c, &e);
    if (rc)
        fail_msg("%s", e.msg);
    conf_free(&c);
    assert_int_equal(mach_init(&M, &p, ntask, &e), 0);
}

static void build(const char *incl, unsigned width, const char *sample)
{
    char text[2048];
    snprintf(text, sizeof text, profile, incl, width, sample);
    build_text(text, 4);
}

static int setup(void **state)
{
    (void)state;
    build("nine", 24, "1");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mach_free(&M);
    return 0;
}

/* Task t on CPU cpu, with memory on node `node`, reads (or writes) line i of its space. */
static uint64_t addr(unsigned node, unsigned task, uint64_t line)
{
    return mach_phys_base(node, task) | (0x100000 + line * 64);
}

static uint64_t touch(unsigned cpu, unsigned kind, uint64_t a)
{
    return mach_access(&M, &M.cpu[cpu], kind, a);
}

/* Counts L3 lines of domain d whose owner has tag `tag`, and checks they sit in `ways`. */
static uint64_t lines_of_tag(unsigned d, unsigned tag, uint64_t ways)
{
    const struct mach_cache *x = &M.cache[PLAT_L3][d];
    uint64_t n = 0;
    for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++) {
        const struct cache_line *l = &x->c.lines[i];
        if (l->tag == CACHE_TAG_INVALID || M.owners[l->owner].tag != tag)
            continue;
        n++;
        if (!((ways >> l->way) & 1))
            fail_msg("tag %u line in way %u outside mask 0x%llx", tag, l->way,
                     (unsigned long long)ways);
    }
    return n;
}

static void test_isolation(void **state)
{
    (void)state;
    /* Class 1 may fill ways 0-1, class 2 ways 2-7. */
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0x03), 0);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 2, MACH_DATA, 0xfc), 0);
    mach_set_assoc(&M, 0, 0, 1, 1);
    mach_set_assoc(&M, 1, 1, 2, 2);
    for (uint64_t i = 0; i < 4096; i++) {
        touch(0, HIER_LOAD, addr(0, 0, i % 1024));
        touch(1, HIER_LOAD, addr(0, 1, i % 1024));
    }
    /* Each class is confined to its ways and fills all of them: 2 and 6 ways x 32 sets. */
    assert_int_equal(lines_of_tag(0, 1, 0x03), 64);
    assert_int_equal(lines_of_tag(0, 2, 0xfc), 192);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 64);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 2), 192);
    assert_int_equal(mach_get_mask(&M, PLAT_L3, 0, 1, MACH_DATA), 0x03);
    /* A mask beyond the ways, a class or an instance that does not exist: refused. */
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0x100), -QOSIM_EINVAL);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 4, MACH_DATA, 0x1), -QOSIM_EINVAL);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 2, 0, MACH_DATA, 0x1), -QOSIM_EINVAL);
}

static void test_zero_mask_no_alloc(void **state)
{
    (void)state;
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 3, MACH_DATA, 0), 0);
    mach_set_assoc(&M, 0, 0, 3, 3);
    for (uint64_t i = 0; i < 100; i++)
        touch(0, HIER_LOAD, addr(0, 0, i));
    /* Nothing allocates in L3, yet every read went to memory and L2 kept them. */
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 3), 0);
    assert_int_equal(mach_valid_lines(&M, PLAT_L3, 0), 0);
    assert_int_equal(M.ts[0].miss[PLAT_L3], 100);
    assert_int_equal(mach_valid_lines(&M, PLAT_L2, 0), 64); /* 4 KiB L2 */
    assert_int_equal(mach_bytes(&M, 0, 3, MACH_CTR_TOTAL), 100);
}

static void test_hits_unrestricted_and_one_copy(void **state)
{
    (void)state;
    /* Class 1 fills way 0 only; class 2 may not allocate at all. */
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0x01), 0);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 2, MACH_DATA, 0x00), 0);
    mach_set_assoc(&M, 0, 0, 1, 1);
    mach_set_assoc(&M, 1, 0, 2, 2); /* the same task's space from the other CPU */
    uint64_t a = addr(0, 0, 5);
    touch(0, HIER_LOAD, a);
    assert_int_equal(M.ts[0].miss[PLAT_L3], 1);
    /* CPU 1 misses its private caches but hits the line in L3: a class that
     * may not allocate still hits, and no second copy appears. */
    touch(1, HIER_LOAD, a);
    assert_int_equal(M.ts[0].ref[PLAT_L3], 2);
    assert_int_equal(M.ts[0].miss[PLAT_L3], 1);
    assert_int_equal(mach_valid_lines(&M, PLAT_L3, 0), 1);
    /* The line keeps the tag of the request that filled it. */
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 1);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 2), 0);
}

static void test_cdp(void **state)
{
    (void)state;
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_CODE, 0x03), 0);
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0xf0), 0);
    mach_set_assoc(&M, 0, 0, 1, 1);
    mach_set_assoc(&M, 1, 1, 1, 2);
    for (uint64_t i = 0; i < 512; i++) {
        touch(0, HIER_IFETCH, addr(0, 0, i));
        touch(1, HIER_LOAD, addr(0, 1, i));
    }
    assert_int_equal(lines_of_tag(0, 1, 0x03), 64);
    assert_int_equal(lines_of_tag(0, 2, 0xf0), 128);
}

/* Occupancy equals the lines really held per tag, and the tags sum to the
 * valid lines, through fills, evictions, mask changes and tag changes. */
static void check_occupancy(void)
{
    for (unsigned d = 0; d < 2; d++) {
        uint64_t sum = 0;
        for (unsigned t = 0; t < 8; t++) {
            uint64_t n = lines_of_tag(d, t, ~0ull);
            assert_int_equal(mach_occupancy(&M, PLAT_L3, d, t), n);
            sum += n;
        }
        assert_int_equal(sum, mach_valid_lines(&M, PLAT_L3, d));
    }
}

static void occupancy_run(void)
{
    struct rng r;
    rng_seed(&r, 7, 0);
    for (int step = 0; step < 40000; step++) {
        unsigned cpu = (unsigned)rng_below(&r, 4), task = cpu;
        if (step % 5000 == 0) {
            /* Re-tag and re-partition mid-run: old lines keep their old tag. */
            mach_set_assoc(&M, cpu, (int)task, (unsigned)rng_below(&r, 4),
                           (unsigned)rng_below(&r, 8));
            mach_set_mask(&M, PLAT_L3, cpu / 2, (unsigned)rng_below(&r, 4), MACH_DATA,
                          rng_below(&r, 256));
        }
        unsigned kind = rng_below(&r, 4) == 0 ? HIER_STORE : HIER_LOAD;
        touch(cpu, kind, addr((unsigned)rng_below(&r, 2), task, rng_below(&r, 2048)));
        if (step % 4000 == 0)
            check_occupancy();
    }
    check_occupancy();
}

static void test_occupancy_exact(void **state)
{
    (void)state;
    occupancy_run();
}

static void test_occupancy_exact_inclusive(void **state)
{
    (void)state;
    mach_free(&M);
    build("inclusive", 24, "1");
    occupancy_run();
    /* Inclusion: nothing above the L3 is missing from it. */
    for (unsigned c = 0; c < 4; c++) {
        const struct mach_cache *l2 = M.cpu[c].l2;
        for (uint64_t i = 0; i < (uint64_t)l2->c.sets * l2->c.g.assoc; i++)
            if (l2->c.lines[i].tag != CACHE_TAG_INVALID)
                assert_true(cache_find(&M.cpu[c].l3->c, l2->c.lines[i].tag) >= 0);
    }
}

/* Reads count line-size bytes per fill from memory, split local/remote by
 * the line's node; writebacks count the dirty lines the L3 evicts. */
static void test_byte_counters(void **state)
{
    (void)state;
    mach_set_assoc(&M, 0, 0, 0, 4);
    for (uint64_t i = 0; i < 1000; i++)
        touch(0, HIER_STORE, addr(i & 1, 0, i)); /* half local, half remote */
    /* Scale 64: counts are lines. */
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_TOTAL), M.ts[0].miss[PLAT_L3]);
    assert_int_equal(M.ts[0].miss[PLAT_L3], 1000);
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_LOCAL), 500);
    assert_int_equal(M.ts[0].rd_bytes, 64000);
    /* Writebacks: each stored line goes down a level as it is evicted (L1D
     * after 16 newer lines, L2 after 64, both while the level below still
     * holds it) and leaves for memory when the L3 evicts it. The 1000
     * sequential lines spread evenly over the L3's 32 sets, which keep 8 each:
     * 1000 - 256 = 744 dirty lines reached memory. */
    uint64_t wb = mach_bytes(&M, 0, 4, MACH_CTR_WB);
    assert_int_equal(wb, 744);
    assert_int_equal(M.ts[0].wr_bytes, 744 * 64);
    assert_int_equal(M.mem.stat[0].write_bytes + M.mem.stat[1].write_bytes, 744 * 64);
    assert_int_equal(M.mem.stat[0].read_bytes + M.mem.stat[1].read_bytes, 64000);
}

/* Time a request waits at a bandwidth limiter counts as held (what the
 * whole-guest plugin paces the guest by) only for a class whose setting
 * limits it: an unlimited class's requests add nothing. */
static void test_held_limited_only(void **state)
{
    (void)state;
    static const char rate[] = "name: capped\n"
                               "vendor: amd\n"
                               "topology: {sockets: 1, modules: 2}\n"
                               "core: {frequency: 1GHz, cpi: 1, mlp: 1}\n"
                               "caches:\n"
                               "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                               "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                               "  L2: {size: 4K, ways: 4, latency: 10}\n"
                               "  L3: {size: 16K, ways: 8, latency: 30}\n"
                               "memory: {channels: 2, peak: 64GB/s, latency: 100ns}\n"
                               "qos:\n"
                               "  bandwidth: {kind: rate, classes: 2, max: 11, window: 1us}\n";
    mach_free(&M);
    build_text(rate, 2);
    struct bw_class_set s;
    bw_class_reset(BW_RATE, &s);
    s.rate = 0.001; /* bytes per tick: a line every 64,000 ticks (1000 cycles) */
    mach_set_bw(&M, 0, 1, &s);
    mach_set_assoc(&M, 0, 0, 0, 0); /* CPU 0: class 0, unlimited */
    mach_set_assoc(&M, 1, 1, 1, 0); /* CPU 1: class 1, capped */
    for (uint64_t i = 0; i < 2000; i++) {
        M.cpu[0].now += touch(0, HIER_LOAD, addr(0, 0, i));
        M.cpu[1].now += touch(1, HIER_LOAD, addr(0, 1, i));
    }
    assert_int_equal(M.cpu[0].held, 0);
    /* Each miss takes 130 cycles (8,320 ticks) on its own; at a line per
     * 64,000 ticks, 2000 of them wait about 2000 x 55,680 ticks. */
    assert_true(M.cpu[1].held > 100000000);
    assert_true(M.cpu[1].held <= M.cpu[1].now);
}

static void test_counter_wrap(void **state)
{
    (void)state;
    mach_free(&M);
    build("nine", 8, "1");
    mach_set_assoc(&M, 0, 0, 0, 1);
    for (uint64_t i = 0; i < 300; i++)
        touch(0, HIER_LOAD, addr(0, 0, i));
    /* 300 lines of 64 bytes at scale 64 is a count of 300, which an 8-bit
     * counter shows as 300 - 256. */
    assert_int_equal(mach_bytes(&M, 0, 1, MACH_CTR_TOTAL), 44);
}

static void test_sampling_estimate(void **state)
{
    (void)state;
    mach_free(&M);
    build("nine", 24, "0.25");
    struct rng r;
    rng_seed(&r, 3, 0);
    for (unsigned t = 0; t < 4; t++)
        mach_set_assoc(&M, t, (int)t, 0, t + 1);
    for (int i = 0; i < 20000; i++) {
        unsigned c = (unsigned)rng_below(&r, 2);
        touch(c, HIER_LOAD, addr(0, c, rng_below(&r, 300 * (c + 1))));
    }
    /* 8 of 32 sets are sampled; a uniform workload's estimate is near the exact count. */
    assert_int_equal(M.cache[PLAT_L3][0].nsampled, 8);
    for (unsigned t = 1; t <= 2; t++) {
        double exact = (double)mach_occupancy(&M, PLAT_L3, 0, t),
               est = (double)mach_occupancy_est(&M, PLAT_L3, 0, t);
        assert_true(exact > 50);
        assert_true(est > exact * 0.75 && est < exact * 1.25);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_isolation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_mask_no_alloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hits_unrestricted_and_one_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cdp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_occupancy_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_occupancy_exact_inclusive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_byte_counters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counter_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_limited_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sampling_estimate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
