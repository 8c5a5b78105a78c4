/* Unit tests for the L3's layout (issue 23): slices (sim/cache/slice.h,
 * cache_index) and the victim L3 modes (caches.L3.inclusion: victim,
 * exclusive; mach.c's victim L3 section). A small machine is built from a
 * profile written here and driven through mach_access, so every count is
 * known; occupancy and byte counters are checked against the lines really
 * held and the transfers really made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/mach.h"
#include "testlib.h"
#include "tiny_plat.h"
#include "util/rng.h"

static struct mach M;

/* The tiny machine (tiny_plat.h) on one socket, with more L3 lines `extra`:
 * 1 socket x 2 modules = 2 CPUs, one L3 domain. L1D 1 KiB 2-way (8 sets),
 * L2 4 KiB 4-way (16 sets), L3 16 KiB 8-way (32 sets, or 2 slices of 16),
 * LRU everywhere: line k of a task maps to L1 set k % 8, L2 set k % 16. */
static int build_text(const char *incl, const char *extra, struct err *e)
{
    return tiny_mach(
        &M,
        &(struct tiny_opt){.name = "tiny-l3",
                           .vendor = "intel",
                           .topology = "sockets: 1, modules: 2",
                           .inclusion = incl,
                           .allocation = "classes: 4, cbm_len: 8",
                           .l3 = extra,
                           .monitoring = "ids: 8, occupancy: true, total: true, local: true"},
        2, e);
}

static void build(const char *incl, const char *extra)
{
    struct err e = {0};
    if (build_text(incl, extra, &e))
        fail_msg("%s", e.msg);
    mach_set_assoc(&M, 0, 0, 1, 1); /* task 0 on CPU 0: class 1, tag 1 */
    mach_set_assoc(&M, 1, 1, 2, 2); /* task 1 on CPU 1: class 2, tag 2 */
}

static uint64_t addr(unsigned task, uint64_t line)
{
    return mach_phys_base(0, task) | (0x100000 + line * 64);
}

static void touch(unsigned cpu, unsigned kind, uint64_t a)
{
    mach_access(&M, &M.cpu[cpu], kind, a);
}

static struct mach_cache *l3(void)
{
    return &M.cache[PLAT_L3][0];
}

static int in_l3(unsigned task, uint64_t line)
{
    return cache_find(&l3()->c, addr(task, line) >> 6) >= 0;
}

static const struct cache_line *l3_line(unsigned task, uint64_t line)
{
    uint64_t b = addr(task, line) >> 6;
    int i = cache_find(&l3()->c, b);
    assert_true(i >= 0);
    return &cache_set(&l3()->c, cache_index(&l3()->c, b))[i];
}

/* Lines of tag `tag` held in the L3, and the ways they are in. */
static uint64_t lines_of_tag(unsigned tag, uint64_t *ways)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < (uint64_t)l3()->c.sets * l3()->c.g.assoc; i++) {
        const struct cache_line *ln = &l3()->c.lines[i];
        if (ln->tag != CACHE_TAG_INVALID && M.owners[ln->owner].tag == tag) {
            n++;
            if (ways)
                *ways |= 1ull << ln->way;
        }
    }
    return n;
}

static uint64_t traffic(unsigned tag, enum mach_traffic t)
{
    return mach_traffic(&M, 0, tag, 1u << t);
}

/* ---- slices ------------------------------------------------------------ */

/* Maurice et al.'s bits: address bit 6 is in o0 only, bit 7 in o1 only,
 * bit 8 in o2 only, bit 10 in o0 only, bit 17 in o0 and o1. */
static void test_slice_maurice(void **state)
{
    (void)state;
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 0, 6), 0);
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 1, 6), 1);                 /* bit 6 */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 2, 6), 2);                 /* bit 7 */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 4, 6), 4);                 /* bit 8 */
    assert_int_equal(slice_of(SLICE_MAURICE, 4, 4, 6), 0);                 /* o2 unused */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 1ull << 4, 6), 1);         /* bit 10 */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 1ull << 11, 6), 3);        /* bit 17 */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, (1ull << 11) | 1, 6), 2);  /* 17 ^ 6 */
    assert_int_equal(slice_of(SLICE_MAURICE, 2, (1ull << 40) >> 6, 6), 0); /* above 37 */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 1ull << (37 - 6), 6), 6);  /* bit 37 */
    assert_int_equal(slice_of(SLICE_MAURICE, 8, 1ull << (36 - 7), 7), 5);  /* 128-byte lines */
    assert_null(slice_check(SLICE_MAURICE, 8));
    assert_non_null(slice_check(SLICE_MAURICE, 6));
    assert_non_null(slice_check(SLICE_MAURICE, 16));
    assert_null(slice_check(SLICE_MIX, 18));
    assert_non_null(slice_check(SLICE_MIX, 0));
    assert_non_null(slice_check(SLICE_MIX, SLICE_MAX + 1));
}

/* A sliced cache's set: the slice's first set plus the index bits. */
static void test_slice_index(void **state)
{
    (void)state;
    struct cache c;
    struct err e;
    struct cache_geom g = {.size = 8u << 20, .assoc = 16, .line = 64, .slices = 4};
    assert_int_equal(cache_init(&c, "L3", &g, &repl_lru, &e), 0);
    /* Address bit 17 (in o0 and o1): slice 3; bit 9 (in none): set 8. */
    assert_int_equal(cache_index(&c, (1ull << 11) | (1ull << 3)), 3 * 2048 + 8);
    cache_free(&c);
}

/* The mix hash spreads a contiguous buffer evenly: 8 MiB (131,072 lines)
 * over 18 slices, 7,282 a slice on average with a binomial standard
 * deviation of 83 (1.1%); every slice within 4% (3.5 deviations). */
static void test_slice_mix_even(void **state)
{
    (void)state;
    uint64_t n[18] = {0}, lines = (8u << 20) / 64;
    for (uint64_t b = 0; b < lines; b++)
        n[slice_of(SLICE_MIX, 18, (1ull << 30) / 64 + b, 6)]++;
    for (unsigned s = 0; s < 18; s++)
        assert_near((double)n[s], (double)lines / 18, 0.04);
}

/* A sliced cache: 2 slices of 16 sets. Sets within a slice come from the
 * address bits; the slice from the hash, so more lines than ways share a
 * set index without conflict when they fall in different slices. */
static void test_sliced_cache(void **state)
{
    (void)state;
    struct cache c;
    struct err e = {0};
    struct cache_geom g = {.size = 16384, .assoc = 8, .line = 64, .slices = 2};
    assert_int_equal(cache_init(&c, "L3", &g, repl_find("lru"), &e), 0);
    assert_int_equal(c.sets, 32);
    assert_int_equal(c.set_mask, 15);
    /* Block 16 * k has set index 0; bit 6 of its address (block bit 0) is
     * 0, so its slice is the parity of o0 over address bits 10 and up. */
    unsigned in[2] = {0, 0};
    struct cache_victim v;
    for (uint64_t k = 0; k < 16; k++) {
        uint64_t b = 16 * k;
        unsigned s = slice_of(SLICE_MAURICE, 2, b, 6);
        assert_int_equal(cache_index(&c, b), s * 16);
        in[s]++;
        cache_ref(&c, b, 0, 0, ~0ull, &v);
        assert_int_equal(v.valid, 0); /* 16 lines, 8 per slice: no eviction */
    }
    assert_int_equal(in[0], 8);
    assert_int_equal(in[1], 8);
    cache_free(&c); /* cache_init starts from nothing: free before the next */
    /* Geometry: each slice must be a cache of its own. */
    g.slices = 3;
    assert_int_equal(cache_init(&c, "L3", &g, repl_find("lru"), &e), -QOSIM_EGEOM);
    g.slice_hash = SLICE_MIX;
    assert_int_equal(cache_init(&c, "L3", &g, repl_find("lru"), &e), -QOSIM_EGEOM);
    assert_substr(e.msg, "does not split into 3 slices");
    g = (struct cache_geom){
        .size = 3 * 16384, .assoc = 8, .line = 64, .slices = 3, .slice_hash = SLICE_MIX};
    assert_int_equal(cache_init(&c, "L3", &g, repl_find("lru"), &e), 0);
    assert_int_equal(c.sets, 96);
    assert_int_equal(c.set_mask, 31);
    cache_free(&c);
}

/* Profile keys: opt-in, on the L3 only, with their errors. */
static void test_profile_keys(void **state)
{
    (void)state;
    struct err e = {0};
    build("nine", "    slices: 2\n");
    assert_int_equal(l3()->c.slices, 2);
    assert_int_equal(l3()->c.slice_hash, SLICE_MAURICE); /* the default for 2, 4, 8 */
    assert_int_equal(l3()->victim, 0);
    mach_free(&M);
    build("victim", "    slices: 2\n    slice_hash: mix\n");
    assert_int_equal(l3()->c.slice_hash, SLICE_MIX);
    assert_int_equal(l3()->victim, PLAT_VICTIM_KEEP);
    mach_free(&M);
    build("exclusive", "");
    assert_int_equal(l3()->c.slices, 1);
    assert_int_equal(l3()->victim, PLAT_VICTIM_MOVE);
    mach_free(&M);
    assert_int_not_equal(build_text("nine", "    slices: 3\n    slice_hash: maurice\n", &e), 0);
    assert_substr(e.msg, "caches.L3.slice_hash: the maurice hash is published for 2, 4 and 8");
    assert_int_not_equal(build_text("nine", "    slices: 3\n", &e), 0);
    assert_substr(e.msg, "does not split into 3 slices");
    assert_int_not_equal(build_text("nine", "    slice_hash: fold\n", &e), 0);
    assert_substr(e.msg, "caches.L3.slice_hash: expected one of maurice, mix");
    assert_int_not_equal(build_text("nine", "    slices: 0\n", &e), 0);
    assert_substr(e.msg, "caches.L3.slices");
    assert_int_not_equal(build_text("fifo", "", &e), 0);
    assert_substr(e.msg, "expected one of nine, inclusive, victim, exclusive");
}

/* An L2 cannot be a victim cache or sliced. */
static void test_profile_keys_l2(void **state)
{
    (void)state;
    static const char text[] = "name: t\nvendor: intel\ntopology: {sockets: 1, modules: 1}\n"
                               "core: {frequency: 1GHz, cpi: 1, mlp: 1}\ncaches:\n"
                               "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                               "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                               "  L2: {size: 4K, ways: 4, latency: 10, %s}\n"
                               "memory: {channels: 1, peak: 8GB/s, latency: 100ns}\n";
    const char *bad[][2] = {
        {"inclusion: victim", "caches.L2.inclusion: only an L3 can be a victim cache"},
        {"slices: 2", "caches.L2.slices: only an L3 is split into slices"},
    };
    for (unsigned k = 0; k < 2; k++) {
        char buf[1024];
        struct conf c;
        struct plat p;
        struct err e = {0};
        snprintf(buf, sizeof buf, text, bad[k][0]);
        assert_int_equal(conf_load_mem(&c, "t.yaml", buf, strlen(buf), &e), 0);
        assert_int_not_equal(plat_from_conf(&p, &c, &e), 0);
        assert_substr(e.msg, bad[k][1]);
        conf_free(&c);
    }
}

/* ---- victim L3 ----------------------------------------------------------- */

/* Lines 0, 16, 32, ... share L2 set 0 (and L1D set 0): reading five of
 * them evicts the first from the L2. */
static void test_victim_fill_path(void **state)
{
    (void)state;
    const char *mode[2] = {"victim", "exclusive"};
    for (unsigned k = 0; k < 2; k++) {
        build(mode[k], "");
        touch(0, HIER_LOAD, addr(0, 0));
        /* Memory filled the L2 only. */
        assert_int_equal(mach_valid_lines(&M, PLAT_L3, 0), 0);
        assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 0);
        assert_int_equal(traffic(1, MACH_TR_RD_LOCAL), 64);
        for (uint64_t i = 1; i <= 4; i++)
            touch(0, HIER_LOAD, addr(0, 16 * i));
        /* Line 0 left the L2 (LRU, 4 ways): it is in the L3 now, with its tag. */
        assert_true(in_l3(0, 0));
        assert_int_equal(mach_valid_lines(&M, PLAT_L3, 0), 1);
        assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 1);
        assert_int_equal(M.ts[0].miss[PLAT_L3], 5);
        /* Read again: an L3 hit, no memory read. Its L2 fill evicts line 16. */
        touch(0, HIER_LOAD, addr(0, 0));
        assert_int_equal(M.ts[0].miss[PLAT_L3], 5);
        assert_int_equal(traffic(1, MACH_TR_RD_LOCAL), 5 * 64);
        assert_true(in_l3(0, 16));
        /* victim keeps line 0 in the L3 too; exclusive moved it up. */
        assert_int_equal(in_l3(0, 0), k == 0);
        assert_int_equal(mach_valid_lines(&M, PLAT_L3, 0), k == 0 ? 2 : 1);
        assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), k == 0 ? 2 : 1);
        mach_free(&M);
    }
}

/* Dirty data: written in L1, down to the L2, into the L3 with the L2's
 * eviction (no memory write), and to memory once, when the L3 evicts it. */
static void test_victim_dirty(void **state)
{
    (void)state;
    const char *mode[2] = {"victim", "exclusive"};
    for (unsigned k = 0; k < 2; k++) {
        build(mode[k], "");
        touch(0, HIER_STORE, addr(0, 0));
        /* Lines 32 i share L2 set 0 and L3 set 0: 4 more evict line 0 from
         * the L2 into the L3. */
        for (uint64_t i = 1; i <= 4; i++)
            touch(0, HIER_LOAD, addr(0, 32 * i));
        assert_true(in_l3(0, 0));
        assert_true(l3_line(0, 0)->flags & CACHE_F_DIRTY);
        assert_int_equal(traffic(1, MACH_TR_VICTIM), 0);
        /* 8 more L2 evictions into L3 set 0 (8 ways, LRU): line 0 goes. */
        for (uint64_t i = 5; i <= 12; i++)
            touch(0, HIER_LOAD, addr(0, 32 * i));
        assert_false(in_l3(0, 0));
        assert_int_equal(traffic(1, MACH_TR_VICTIM), 64);
        assert_int_equal(M.ts[0].wr_bytes, 64);
        mach_free(&M);
    }
}

/* A victim L3 with class 1 (CPU 0's, tag 1) held to ways 0x3, after CPU 0
 * read 512 lines: its L2 victims filled those two ways. */
static void build_class1_two_ways(void)
{
    build("victim", "");
    mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0x3);
    for (uint64_t i = 0; i < 512; i++)
        touch(0, HIER_LOAD, addr(0, i));
}

/* The filling class's mask places L2 victims; a class that may not
 * allocate in the L3 sends dirty victims to memory and drops clean ones. */
static void test_victim_mask(void **state)
{
    (void)state;
    build_class1_two_ways();
    uint64_t ways = 0;
    assert_int_equal(lines_of_tag(1, &ways), 2 * 32); /* two ways of 32 sets, full */
    assert_int_equal(ways, 0x3);
    mach_set_mask(&M, PLAT_L3, 0, 2, MACH_DATA, 0);
    touch(1, HIER_STORE, addr(1, 0));
    for (uint64_t i = 1; i <= 4; i++)
        touch(1, HIER_LOAD, addr(1, 16 * i));
    assert_int_equal(lines_of_tag(2, NULL), 0);
    assert_int_equal(traffic(2, MACH_TR_VICTIM), 64); /* line 0's data, to memory */
    mach_free(&M);
}

/* An L2 victim enters the L3 under the mask of the class that filled it,
 * not of the class the core runs when it is evicted (mach.c, l3_victim_in):
 * class 1's lines stay in its two ways while class 3, which may fill every
 * way, pushes them out of the L2. */
static void test_victim_mask_filler(void **state)
{
    (void)state;
    build_class1_two_ways();
    /* The same CPU, now class 3 and tag 3: 96 lines push the 64 of class 1
     * that the L2 holds out of it, and 32 of their own into the L3's empty
     * ways. */
    mach_set_assoc(&M, 0, 0, 3, 3);
    for (uint64_t i = 512; i < 512 + 96; i++)
        touch(0, HIER_LOAD, addr(0, i));
    uint64_t ways = 0, n = lines_of_tag(1, &ways);
    assert_true(n > 0);
    assert_int_equal(ways, 0x3);
    ways = 0;
    assert_true(lines_of_tag(3, &ways) > 0);
    assert_true((ways & ~0x3ull) != 0); /* class 3's own lines use the other ways */
    mach_free(&M);
}

/* Occupancy equals the lines held per tag, tags sum to the valid lines,
 * and every byte read from memory is counted, through a random run with
 * both CPUs, stores, re-tagging and re-partitioning. */
static void victim_random(const char *incl, const char *extra)
{
    build(incl, extra);
    struct rng r;
    rng_seed(&r, 11, 0);
    for (int step = 0; step < 60000; step++) {
        unsigned cpu = (unsigned)rng_below(&r, 2);
        if (step % 6000 == 0) {
            mach_set_assoc(&M, cpu, (int)cpu, (unsigned)rng_below(&r, 4),
                           (unsigned)rng_below(&r, 8));
            mach_set_mask(&M, PLAT_L3, 0, (unsigned)rng_below(&r, 4), MACH_DATA,
                          rng_below(&r, 256));
        }
        unsigned kind = rng_below(&r, 4) == 0 ? HIER_STORE : HIER_LOAD;
        touch(cpu, kind, addr(cpu, rng_below(&r, 1024)));
        if (step % 5000 == 0 || step == 59999) {
            uint64_t sum = 0;
            for (unsigned t = 0; t < 8; t++) {
                uint64_t n = lines_of_tag(t, NULL);
                assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, t), n);
                sum += n;
            }
            assert_int_equal(sum, mach_valid_lines(&M, PLAT_L3, 0));
        }
    }
    uint64_t rd = 0, counted = 0;
    for (unsigned t = 0; t < 2; t++)
        rd += M.ts[t].rd_bytes + M.ts[t].wr_bytes;
    for (unsigned t = 0; t < 8; t++)
        counted += mach_traffic(&M, 0, t, MACH_TR_ALL);
    assert_int_equal(counted, rd);
    assert_true(rd > 0);
    mach_free(&M);
}

static void test_victim_counts_exact(void **state)
{
    (void)state;
    victim_random("victim", "");
    victim_random("exclusive", "");
    victim_random("victim", "    slices: 2\n");
    victim_random("nine", "    slices: 2\n    slice_hash: mix\n");
    victim_random("inclusive", "    slices: 2\n");
}

/* The CAT experiment on intel-xeon-skx: an 8 MiB buffer read over
 * and over by a class with 1 to 5 of the L3's 11 ways (2.25 MiB each).
 * With the adaptive policy, the victim L3 and the slices the curve is
 * gradual, each way taking tens of percent off the misses (the issue:
 * "each way removed adds misses in steps of tens of percent"), where the
 * unsliced LRU L3 of intel-xeon goes from every line to none at once.
 * Measured: 0.96, 0.68, 0.42, 0.23, 0.11 of the buffer per pass. */
static void test_cat_curve_skx(void **state)
{
    (void)state;
    double f[6];
    for (unsigned k = 1; k <= 5; k++) {
        struct plat p;
        struct err e = {0};
        assert_int_equal(plat_load(&p, "intel-xeon-skx", &e), 0);
        assert_int_equal(mach_init(&M, &p, 1, &e), 0);
        mach_set_assoc(&M, 0, 0, 1, 1);
        /* The cache's own curve: prefetchers off (intel-xeon-skx has them
         * since its calibration), as the resctrl selftest's read order
         * defeats them on the part (docs/fidelity.md). */
        mach_set_prefetch(&M, 0, 0);
        mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, (1ull << k) - 1);
        uint64_t base = mach_phys_base(0, 0) + (1ull << 30), lines = (8ull << 20) / 64, m0 = 0;
        for (int pass = 0; pass < 6; pass++) {
            if (pass == 3)
                m0 = M.ts[0].miss[PLAT_L3];
            for (uint64_t i = 0; i < lines; i++)
                touch(0, HIER_LOAD, base + i * 64);
        }
        f[k] = (double)(M.ts[0].miss[PLAT_L3] - m0) / 3 / (double)lines;
        mach_free(&M);
    }
    if (f[1] < 0.9 || f[4] > 0.35 || f[5] <= 0)
        fail_msg("1..5 ways: %.3f %.3f %.3f %.3f %.3f", f[1], f[2], f[3], f[4], f[5]);
    for (unsigned k = 2; k <= 5; k++)
        if (f[k - 1] - f[k] < 0.1)
            fail_msg("way %u takes only %.3f off (%.3f to %.3f)", k, f[k - 1] - f[k], f[k - 1],
                     f[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_maurice),       cmocka_unit_test(test_slice_index),
        cmocka_unit_test(test_slice_mix_even),      cmocka_unit_test(test_sliced_cache),
        cmocka_unit_test(test_profile_keys),        cmocka_unit_test(test_profile_keys_l2),
        cmocka_unit_test(test_victim_fill_path),    cmocka_unit_test(test_victim_dirty),
        cmocka_unit_test(test_victim_mask),         cmocka_unit_test(test_victim_mask_filler),
        cmocka_unit_test(test_victim_counts_exact), cmocka_unit_test(test_cat_curve_skx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
