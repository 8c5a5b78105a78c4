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
#include <math.h>

#include "sim/mach.h"
#include "tiny_plat.h"
#include "tiny_rv.h"
#include "util/rng.h"

static struct mach M;

/* The machine again, from a profile: a shipped one, or tiny_rv.h's (two
 * worlds, two types, L2 per module: the CBQRI test platform). */
static void rebuild(const struct plat *p, unsigned ntask)
{
    struct err e = {0};
    mach_free(&M);
    assert_int_equal(mach_init(&M, p, ntask, &e), 0);
}

static void build_shipped(const char *name, unsigned ntask)
{
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, name, &e), 0);
    rebuild(&p, ntask);
}

static void build_tiny_rv(void)
{
    struct plat p;
    struct err e = {0};
    assert_int_equal(tiny_rv_plat(&p, 32, "1", "occupancy: true, total: true", &e), 0);
    rebuild(&p, 4);
}

/* tiny_plat.h's machine: 2 sockets x 1 node x 1 domain x 2 modules x 1
 * core x 1 thread = 4 CPUs; L3 16 KiB, 8 ways, 32 sets; masks are 8 bits,
 * one per way. */
static void build(const char *incl, unsigned width, const char *sample)
{
    char mon[128];
    snprintf(mon, sizeof mon,
             "ids: 8, occupancy: true, total: true, local: true, width: %u, scale: 64, sample: %s",
             width, sample);
    tiny_mach(&M,
              &(struct tiny_opt){.name = "tiny",
                                 .vendor = "amd",
                                 .inclusion = incl,
                                 .allocation = "classes: 4, cbm_len: 8, cdp: true",
                                 .monitoring = mon},
              4, NULL);
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
    return tag_lines(&M, PLAT_L3, d, tag, ways);
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

/* Traffic classes (BMEC's bits): a read counts as local or remote DRAM by
 * the line's node, a victim by the tag and class that filled the line; per
 * tag, per class of service and per task the three views agree, and
 * mach_bytes is built on them and cleared without touching them. */
static void test_traffic_classes(void **state)
{
    (void)state;
    mach_set_assoc(&M, 0, 0, 3, 4);
    for (uint64_t i = 0; i < 1000; i++)
        touch(0, HIER_STORE, addr(i % 4 == 0, 0, i)); /* a quarter remote */
    mach_set_assoc(&M, 0, 1, 2, 5);                   /* a second task, class and tag */
    for (uint64_t i = 0; i < 300; i++)
        touch(0, HIER_LOAD, addr(0, 1, i));
    const uint32_t rl = 1u << MACH_TR_RD_LOCAL, rr = 1u << MACH_TR_RD_REMOTE,
                   vi = 1u << MACH_TR_VICTIM;
    assert_int_equal(mach_traffic(&M, 0, 4, rl), 750 * 64);
    assert_int_equal(mach_traffic(&M, 0, 4, rr), 250 * 64);
    assert_int_equal(mach_traffic(&M, 0, 4, rl | rr), M.ts[0].rd_bytes);
    assert_int_equal(M.ts[0].traffic[MACH_TR_RD_LOCAL], 750 * 64);
    assert_int_equal(M.ts[0].traffic[MACH_TR_RD_REMOTE], 250 * 64);
    /* Task 1's loads evicted task 0's dirty lines: victims stay task 0's. */
    uint64_t v = mach_traffic(&M, 0, 4, vi);
    assert_true(v > 744 * 64);
    assert_int_equal(v, M.ts[0].traffic[MACH_TR_VICTIM]);
    assert_int_equal(v, M.ts[0].wr_bytes);
    assert_int_equal(mach_traffic(&M, 0, 5, MACH_TR_ALL), 300 * 64);
    assert_int_equal(M.ts[1].traffic[MACH_TR_VICTIM], 0);
    /* By class of service: the same bytes as by tag, tag 4 being class 3. */
    assert_int_equal(mach_traffic_cls(&M, 0, 3, MACH_TR_ALL), mach_traffic(&M, 0, 4, MACH_TR_ALL));
    assert_int_equal(mach_traffic_cls(&M, 0, 2, rl), 300 * 64);
    assert_int_equal(mach_traffic_cls(&M, 0, 0, MACH_TR_ALL), 0);
    assert_int_equal(mach_traffic(&M, 1, 4, MACH_TR_ALL), 0); /* the other domain saw nothing */
    /* No other class has anything: nothing slow, nothing non-temporal. */
    assert_int_equal(mach_traffic(&M, 0, 4, MACH_TR_ALL & ~(rl | rr | vi)), 0);
    /* mach_bytes: total and local are reads here; cleared, they restart
     * from 0 while the raw classes keep counting. */
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_TOTAL), 1000);
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_LOCAL), 750);
    mach_bytes_clear(&M, 0, 4);
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_TOTAL), 0);
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_WB), 0);
    mach_set_assoc(&M, 0, 0, 3, 4);
    touch(0, HIER_LOAD, addr(1, 0, 5000));
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_TOTAL), 1);
    assert_int_equal(mach_bytes(&M, 0, 4, MACH_CTR_LOCAL), 0);
    assert_int_equal(mach_traffic(&M, 0, 4, rr), 251 * 64);
}

/* Time a request waits at a bandwidth limiter counts as held (what the
 * whole-guest plugin paces the guest by) only for a class whose setting
 * limits it: an unlimited class's requests add nothing. */
static void test_held_limited_only(void **state)
{
    (void)state;
    /* The tiny machine on one socket (CPUs 0 and 1, one L3), no remote
     * memory, no allocation or monitoring: a rate limit only. */
    mach_free(&M);
    tiny_mach(
        &M,
        &(struct tiny_opt){.name = "capped",
                           .vendor = "amd",
                           .topology = "sockets: 1, modules: 2",
                           .local_only = 1,
                           .qos = "  bandwidth: {kind: rate, classes: 2, max: 11, window: 1us}\n"},
        2, NULL);
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

/* CBQRI (riscv-soc, its bandwidth controller at memory): a read its class
 * reads within its reservation is served first at the channel, not behind
 * the writebacks queued there; one of a class without a reservation waits
 * behind them. */
static void test_share_reserved_first(void **state)
{
    (void)state;
    build_shipped("riscv-soc", 2);
    assert_int_equal(M.p.bw.kind, BW_SHARE);
    struct bw_class_set s;
    bw_class_reset(BW_SHARE, &s);
    s.rbwb = 16;
    assert_int_equal(mach_set_bw(&M, 0, 1, &s), 0);
    mach_set_assoc(&M, 0, 0, 0, 0); /* CPU 0: class 0, no reservation */
    mach_set_assoc(&M, 1, 1, 1, 0); /* CPU 1: class 1, Rbwb 16 */
    /* Unloaded: both miss everywhere and wait for nothing. */
    uint64_t base0 = touch(0, HIER_LOAD, addr(0, 0, 0)), base1 = touch(1, HIER_LOAD, addr(0, 1, 0));
    assert_int_equal(base0, base1);
    /* Writebacks queued on both channels, 4000 lines each (a neighbour's,
     * which the controller does not book). */
    for (uint64_t b = 0; b < 8000; b++)
        mem_write(&M.mem, 0, b, M.cpu[0].now);
    uint64_t w0 = touch(0, HIER_LOAD, addr(0, 0, 1000)), w1 = touch(1, HIER_LOAD, addr(0, 1, 1000));
    /* Class 1's read is served first, within a slot of its arrival. */
    assert_true(w1 <= base1 + 2 * MACH_TICK);
    /* Class 0's waits behind the backlog: 4000 lines of 64 bytes at 44.8
     * GB/s a channel, 5.7 us, most of it still ahead (at 2 GHz, 10,000
     * cycles and more). */
    assert_true(w0 > base0 + 8000 * MACH_TICK);
    assert_int_equal(M.bw[0].stat[1].resv, 2 * 64);
    assert_int_equal(M.bw[0].stat[0].resv, 0);
    assert_int_equal(M.mem.stat[0].prio_bytes, 2 * 64); /* both of class 1's reads */
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

/* ---- capacity-unit limits (CBQRI 1.0 cc_cunits) ---- */

/* Brute force: the lines of (level, inst) that requests of (world conf,
 * class cls, type at) filled, from the lines' owners. Where the machine does
 * not split types every line is data; a class the instance lacks is its 0. */
static uint64_t scan_class(enum plat_level l, unsigned inst, unsigned conf, unsigned cls, int at)
{
    const struct mach_cache *x = &M.cache[l][inst];
    uint64_t n = 0;
    for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++) {
        const struct cache_line *ln = &x->c.lines[i];
        if (ln->tag == CACHE_TAG_INVALID)
            continue;
        const struct mach_owner *o = &M.owners[ln->owner];
        unsigned w = M.nsub > 1 ? o->sub / 2u : 0, t = M.nsub > 1 ? o->sub % 2u : MACH_DATA;
        unsigned k = o->cls < x->nclass ? o->cls : 0;
        n += w == conf && k == cls && (at == MACH_ANY || (int)t == at);
    }
    return n;
}

/* Every count of every L2 and L3 instance against the brute force; the
 * classes of each world add up to the valid lines. */
static void check_class_lines(void)
{
    for (enum plat_level l = PLAT_L2; l <= PLAT_L3; l++)
        for (unsigned i = 0; i < M.ncache[l]; i++) {
            uint64_t sum = 0;
            for (unsigned w = 0; w < M.nconf; w++)
                for (unsigned k = 0; k < M.cache[l][i].nclass; k++) {
                    for (int at = MACH_ANY; at <= MACH_CODE; at++)
                        assert_int_equal(mach_class_lines(&M, l, i, w, k, at),
                                         scan_class(l, i, w, k, at));
                    sum += mach_class_lines(&M, l, i, w, k, MACH_ANY);
                }
            assert_int_equal(sum, mach_valid_lines(&M, l, i));
        }
}

/* Nothing above an inclusive L3 is missing from it. */
static void check_inclusion(void)
{
    for (unsigned c = 0; c < M.ncpu; c++) {
        const struct mach_cache *up[3] = {M.cpu[c].l1i, M.cpu[c].l1d, M.cpu[c].l2};
        for (int u = 0; u < 3; u++)
            for (uint64_t i = 0; i < (uint64_t)up[u]->c.sets * up[u]->c.g.assoc; i++)
                if (up[u]->c.lines[i].tag != CACHE_TAG_INVALID &&
                    cache_find(&M.cpu[c].l3->c, up[u]->c.lines[i].tag) < 0)
                    fail_msg("CPU %u: %s line %llx not in its L3", c, up[u]->c.name,
                             (unsigned long long)up[u]->c.lines[i].tag);
    }
}

/* A limit that never binds, on the instance's last class: the counts are
 * kept, not scanned, from what the instance holds now. */
static void keep_counting(enum plat_level l, unsigned i)
{
    assert_int_equal(
        mach_set_units(&M, l, i, M.nconf - 1, M.cache[l][i].nclass - 1, MACH_ANY, 1ull << 40), 0);
    assert_non_null(M.cache[l][i].cu);
}

/* Random traffic of every kind through limits that bind and limits that
 * do not, changing masks, classes, tags and limits, and flushing classes:
 * the counts stay exact, and so does occupancy. Whenever the last limit of
 * an instance goes, keep_counting starts its counts again from a scan. */
static void units_run(uint64_t seed, int steps)
{
    struct rng r;
    rng_seed(&r, seed, 0);
    for (enum plat_level l = PLAT_L2; l <= PLAT_L3; l++)
        for (unsigned i = 0; i < M.ncache[l]; i++)
            keep_counting(l, i);
    for (unsigned t = 0; t < M.ntask; t++) /* half of each task's lines are confidential */
        mach_set_tee(&M, t, mach_phys_base(0, t) | 0x100000, 1024 * 64);
    for (unsigned c = 0; c < M.ncpu; c++)
        mach_set_assoc(&M, c, (int)c, c % 3, c);
    static const unsigned kinds[] = {HIER_LOAD, HIER_LOAD, HIER_STORE, HIER_IFETCH};
    for (int step = 0; step < steps; step++) {
        unsigned cpu = (unsigned)rng_below(&r, M.ncpu);
        if (step % 1500 == 0) {
            enum plat_level l = rng_below(&r, 2) ? PLAT_L3 : PLAT_L2;
            unsigned i = (unsigned)rng_below(&r, M.ncache[l]);
            unsigned k = (unsigned)rng_below(&r, M.cache[l][i].nclass);
            unsigned w = (unsigned)rng_below(&r, M.nconf);
            int at = (int)rng_below(&r, 3) - 1;
            static const uint64_t lim[] = {0, 0, 1, 4, 16, 40, 100, 1000};
            assert_int_equal(mach_set_units(&M, l, i, w, k, at, lim[rng_below(&r, 8)]), 0);
            if (!M.cache[l][i].cu) /* that was the last limit: counting starts again */
                keep_counting(l, i);
            /* Non-zero masks: an inclusive L3 that may not allocate keeps
             * lines above it that it lacks (what the zero-mask test shows). */
            mach_set_mask_conf(&M, l, i, w, k, (enum mach_type)rng_below(&r, 2),
                               1 + rng_below(&r, M.cache[l][i].c.all_ways));
            mach_set_assoc(&M, cpu, (int)cpu, (unsigned)rng_below(&r, 4),
                           (unsigned)rng_below(&r, 8));
        }
        if (step % 3000 == 1500) {
            enum plat_level l = rng_below(&r, 2) ? PLAT_L3 : PLAT_L2;
            mach_flush_class(&M, l, (unsigned)rng_below(&r, M.ncache[l]),
                             (unsigned)rng_below(&r, M.nconf), (unsigned)rng_below(&r, 4),
                             (int)rng_below(&r, 3) - 1);
        }
        unsigned kind = kinds[rng_below(&r, 4)];
        touch(cpu, kind, mach_phys_base(0, cpu) | (0x100000 + rng_below(&r, 2048) * 64));
        if (step % 4000 == 0)
            check_class_lines();
    }
    check_class_lines();
    for (enum plat_level l = PLAT_L2; l <= PLAT_L3; l++)
        for (unsigned i = 0; i < M.ncache[l]; i++)
            assert_non_null(M.cache[l][i].cu);
}

static void test_units_counts_exact(void **state)
{
    (void)state;
    /* One world, one type (no CBQRI controllers), an inclusive L3. */
    mach_free(&M);
    build("inclusive", 24, "1");
    units_run(11, 60000);
    check_inclusion();
    check_occupancy();
    /* Two worlds, two types, L2 per module (the CBQRI test platform). */
    build_tiny_rv();
    assert_int_equal(M.nsub, 4);
    units_run(12, 60000);
}

/* Tasks 0 and 1 on CPUs 0 and 1, which share L3 0: class 1 streams through
 * 16 times the L3 while class 2 re-reads 160 lines (5 ways' worth); returns
 * class 2's L3 misses over the second half. */
static uint64_t stream_beside(uint64_t limit)
{
    mach_set_assoc(&M, 0, 0, 1, 1);
    mach_set_assoc(&M, 1, 1, 2, 2);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_ANY, limit), 0);
    uint64_t miss = 0;
    for (uint64_t i = 0; i < 4096; i++) {
        if (i == 2048)
            miss = M.ts[1].miss[PLAT_L3];
        touch(0, HIER_LOAD, addr(0, 0, i));
        touch(1, HIER_LOAD, addr(0, 1, i % 160));
        uint64_t n = mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY);
        if (limit && n > limit)
            fail_msg("class 1 holds %llu lines, above its limit %llu", (unsigned long long)n,
                     (unsigned long long)limit);
    }
    return M.ts[1].miss[PLAT_L3] - miss;
}

/* A class limited to N lines never holds more than N while it streams
 * through far more than the cache; a second, unlimited class keeps its
 * working set, which without the limit the stream pushes out. */
static void test_units_stream_bounded(void **state)
{
    (void)state;
    uint64_t free_miss = stream_beside(0);
    /* LRU: 5 lines of class 2 and 5 of the stream between two uses of each
     * in an 8-way set, so the stream evicts class 2's lines every time. */
    assert_int_equal(free_miss, 2048);
    mach_free(&M);
    build("nine", 24, "1");
    uint64_t lim_miss = stream_beside(20);
    assert_int_equal(lim_miss, 0);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 20);
    assert_int_equal(scan_class(PLAT_L3, 0, 0, 1, MACH_ANY), 20);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 2, MACH_ANY), 160);
    /* The limit is per instance: domain 1's L3 is not limited. */
    mach_set_assoc(&M, 2, 2, 1, 1);
    for (uint64_t i = 0; i < 1024; i++)
        touch(2, HIER_LOAD, addr(0, 2, i));
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 1, 0, 1, MACH_ANY), 256);
    check_occupancy();
}

/* Removing the limit restores normal fills (and stops the counting). */
static void test_units_remove(void **state)
{
    (void)state;
    mach_set_assoc(&M, 0, 0, 1, 1);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_DATA, 10), 0);
    assert_non_null(M.cache[PLAT_L3][0].cu);
    for (uint64_t i = 0; i < 1024; i++)
        touch(0, HIER_LOAD, addr(0, 0, i));
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 10);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_DATA, 0), 0);
    assert_null(M.cache[PLAT_L3][0].cu);
    for (uint64_t i = 1024; i < 2048; i++)
        touch(0, HIER_LOAD, addr(0, 0, i));
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 256);
    /* A limit set again counts from what is there, and holds at once. */
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_ANY, 100), 0);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 256);
    /* Above its limit the class only loses lines (class 2 takes them) and
     * never gains one back until it is below it. */
    mach_set_assoc(&M, 1, 1, 2, 2);
    uint64_t prev = 256;
    for (uint64_t i = 0; i < 4096; i++) {
        touch(0, HIER_LOAD, addr(0, 0, 2048 + i));
        touch(1, HIER_LOAD, addr(0, 1, i % 240));
        uint64_t n = mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY);
        assert_true(prev >= 100 ? n <= prev : n <= 100);
        prev = n;
    }
    assert_true(prev < 256);
    check_class_lines();
    /* Setting 0 where nothing is set allocates nothing. */
    assert_int_equal(mach_set_units(&M, PLAT_L2, 0, 0, 0, MACH_ANY, 0), 0);
    assert_null(M.cache[PLAT_L2][0].cu);
}

/* Per access type (CBQRI controllers tell types apart) against one limit
 * over both types; and worlds apart. */
/* Two threads of one core stream past its L2, thread 0 in class 1 (delay
 * pct), thread 1 in class 2 (no delay), a new line every 20 cycles each,
 * 4000 lines; the sum of each thread's latencies into sum[]. On
 * intel-xeon-spr, the part with IA32_MBA_CFG, its prefetchers off so that
 * only the demand requests pass the throttle. */
static void throttle_run(enum mach_thr mode, unsigned pct, uint64_t sum[2])
{
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, "intel-xeon-spr", &e), 0);
    assert_int_equal(p.topo.threads, 2);
    p.core.pf.present = 0;
    rebuild(&p, 2);
    struct bw_class_set s;
    bw_class_reset(BW_DELAY, &s);
    s.delay_pct = pct;
    assert_int_equal(mach_set_bw(&M, 0, 1, &s), 0);
    mach_set_assoc(&M, 0, 0, 1, 0);
    mach_set_assoc(&M, 1, 1, 2, 0);
    assert_int_equal(mach_set_throttle_mode(&M, 0, mode), 0);
    sum[0] = sum[1] = 0;
    for (uint64_t i = 0; i < 4000; i++)
        for (unsigned c = 0; c < 2; c++) { /* in time order */
            sum[c] += touch(c, HIER_LOAD, addr(0, c, i * 2));
            M.cpu[c].now += 20 * MACH_TICK;
        }
}

/* What each thread waited for the throttle: its latencies at delay 90 less
 * the same run's with no delay. */
static void throttle_pair(enum mach_thr mode, uint64_t *w0, uint64_t *w1)
{
    uint64_t held[2], free_[2];
    throttle_run(mode, 0, free_);
    throttle_run(mode, 90, held);
    *w0 = held[0] - free_[0];
    *w1 = held[1] - free_[1];
}

/* How a core's threads share a delay throttle (Intel MBA): per thread each
 * its own class's delay; CORE_MAX (MBA 1.0/2.0, the reset) the largest of
 * the core's threads', so the undelayed thread waits as the delayed one
 * does; CORE_MIN (IA32_MBA_CFG.MIN_DELAY) the smallest, so neither is
 * held back. */
static void test_throttle_modes(void **state)
{
    (void)state;
    uint64_t th0, th1, mx0, mx1, mn0, mn1;
    throttle_pair(MACH_THR_THREAD, &th0, &th1);
    throttle_pair(MACH_THR_CORE_MAX, &mx0, &mx1);
    throttle_pair(MACH_THR_CORE_MIN, &mn0, &mn1);
    assert_true(th0 > 10 * (th1 + 1)); /* per thread: thread 0 held back alone */
    assert_true(mx1 > 10 * (th1 + 1)); /* max: thread 1 at thread 0's delay too */
    assert_true(mn0 * 10 < th0);       /* min: thread 0 no longer held back */
    assert_true(mn1 * 10 < th0);
    assert_int_equal(mach_set_throttle_mode(&M, 0, MACH_THR_THREAD + 1), -QOSIM_EINVAL);
    assert_int_equal(mach_set_throttle_mode(&M, 99, MACH_THR_CORE_MAX), -QOSIM_EINVAL);
}

/* Low-water marks (CBQRI capacity counters saturate at 0): a selection's
 * mark is the lowest its count has been since its reset, per type and over
 * both, exact at every eviction; tags and the other type are apart. */
static void test_occupancy_low(void **state)
{
    (void)state;
    build_tiny_rv();
    mach_set_assoc(&M, 0, 0, 1, 3);
    for (uint64_t i = 0; i < 100; i++)
        touch(0, HIER_LOAD, addr(0, 0, i));
    for (uint64_t i = 0; i < 10; i++)
        touch(0, HIER_IFETCH, addr(0, 0, 4096 + i));
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 3), 110);
    mach_occupancy_low_reset(&M, PLAT_L3, 0, 3, MACH_ANY, 0);
    mach_occupancy_low_reset(&M, PLAT_L3, 0, 3, MACH_DATA, 0);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 3, MACH_ANY, 0, 0), 110);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 3, MACH_DATA, 0, 0), 100);
    /* Every line of class 1 leaves, then 40 data lines come back. */
    assert_int_equal(mach_flush_class(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 110);
    for (uint64_t i = 0; i < 40; i++)
        touch(0, HIER_LOAD, addr(0, 0, 1000 + i));
    assert_int_equal(mach_occupancy_sel(&M, PLAT_L3, 0, 3, MACH_ANY, 0, 0), 40);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 3, MACH_ANY, 0, 0), 0);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 3, MACH_DATA, 0, 0), 0);
    /* A reset starts from the count of now; another tag is untouched. */
    mach_occupancy_low_reset(&M, PLAT_L3, 0, 3, MACH_ANY, 0);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 3, MACH_ANY, 0, 0), 40);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 5, MACH_ANY, 0, 0), 0);
    /* Bad arguments read 0 and change nothing. */
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 8, MACH_ANY, 0, 0), 0);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 3, MACH_ANY, 2, 0), 0);
    mach_occupancy_low_reset(&M, PLAT_L3, 7, 3, MACH_ANY, 0);
    /* Without CBQRI controllers there are no marks. */
    build_shipped("intel-xeon", 4);
    assert_int_equal(mach_occupancy_low(&M, PLAT_L3, 0, 0, MACH_ANY, 0, 0), 0);
}

static void test_units_per_type(void **state)
{
    (void)state;
    build_tiny_rv();
    mach_set_assoc(&M, 0, 0, 1, 1);
    /* A data limit: data stays within it, code is not limited. */
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_DATA, 16), 0);
    for (uint64_t i = 0; i < 1024; i++) {
        touch(0, HIER_LOAD, addr(0, 0, i));
        touch(0, HIER_IFETCH, addr(0, 0, 4096 + i));
        assert_true(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_DATA) <= 16);
    }
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_DATA), 16);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_CODE), 256 - 16);
    check_class_lines();

    /* One limit over both types, from empty. */
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_DATA, 0), 0);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_ANY, 24), 0);
    assert_int_equal(mach_flush_class(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 256);
    for (uint64_t i = 0; i < 1024; i++) {
        touch(0, HIER_LOAD, addr(0, 0, 8192 + i));
        touch(0, HIER_IFETCH, addr(0, 0, 12288 + i));
        assert_true(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY) <= 24);
    }
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 24);
    assert_true(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_DATA) > 0);
    assert_true(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_CODE) > 0);
    check_class_lines();

    /* Limits of the confidential world hold its requests alone. */
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_ANY, 0), 0);
    assert_int_equal(mach_flush_class(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 24);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 1, 1, MACH_ANY, 8), 0);
    mach_set_tee(&M, 0, mach_phys_base(0, 0) | 0x100000, 1024 * 64);
    mach_set_assoc(&M, 0, 0, 1, 1);
    for (uint64_t i = 0; i < 1024; i++) {
        touch(0, HIER_LOAD, addr(0, 0, i));        /* C set */
        touch(0, HIER_LOAD, addr(0, 0, 1024 + i)); /* C clear */
    }
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 1, 1, MACH_ANY), 8);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 256 - 8);
    check_class_lines();
}

/* Without CBQRI controllers the machine does not tell types apart: every
 * line is data, and a code limit holds the class's lines of both types. */
static void test_units_one_type(void **state)
{
    (void)state;
    mach_set_assoc(&M, 0, 0, 1, 1);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_CODE, 12), 0);
    for (uint64_t i = 0; i < 1024; i++) {
        touch(0, i & 1 ? HIER_IFETCH : HIER_LOAD, addr(0, 0, i));
        assert_true(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY) <= 12);
    }
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_DATA), 12);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_CODE), 0);
    /* The smallest limit applies; removing it leaves the larger. */
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_DATA, 30), 0);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_CODE, 0), 0);
    for (uint64_t i = 0; i < 1024; i++)
        touch(0, HIER_LOAD, addr(0, 0, 1024 + i));
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 30);
    check_class_lines();
}

/* An inclusive L3 that does not allocate for a class at its limit cannot
 * leave the line above it: the request's copies go, and data it wrote goes
 * to memory. Where the class has a line in the set, it replaces that. */
static void test_units_inclusive(void **state)
{
    (void)state;
    mach_free(&M);
    build("inclusive", 24, "1");
    mach_set_assoc(&M, 0, 0, 1, 1);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 1, MACH_ANY, 1), 0);
    touch(0, HIER_LOAD, addr(0, 0, 0)); /* set 0: fills, the limit reached */
    uint64_t a = addr(0, 0, 0) >> 6, b = addr(0, 0, 1) >> 6, c = addr(0, 0, 32) >> 6;
    assert_true(cache_find(&M.cpu[0].l3->c, a) >= 0);
    touch(0, HIER_STORE, addr(0, 0, 1)); /* set 1: nothing of class 1 there */
    assert_true(cache_find(&M.cpu[0].l3->c, b) < 0);
    assert_true(cache_find(&M.cpu[0].l2->c, b) < 0);
    assert_true(cache_find(&M.cpu[0].l1d->c, b) < 0);
    assert_int_equal(mach_bytes(&M, 0, 1, MACH_CTR_WB), 1);
    assert_int_equal(M.ts[0].miss[PLAT_L3], 2);
    touch(0, HIER_LOAD, addr(0, 0, 1)); /* not kept: a miss again */
    assert_int_equal(M.ts[0].miss[PLAT_L3], 3);
    touch(0, HIER_LOAD, addr(0, 0, 32)); /* set 0: replaces its own line */
    assert_true(cache_find(&M.cpu[0].l3->c, c) >= 0);
    assert_true(cache_find(&M.cpu[0].l3->c, a) < 0);
    assert_true(cache_find(&M.cpu[0].l2->c, a) < 0);
    assert_true(cache_find(&M.cpu[0].l1d->c, a) < 0);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 1, MACH_ANY), 1);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 1);
    check_inclusion();
    /* Only the ways its mask allows: with class 1's line outside the
     * mask, set 0 is as good as empty of it. */
    assert_true(cache_find(&M.cpu[0].l3->c, c) >= 0);
    int w = M.cpu[0].l3->c.lines[cache_find(&M.cpu[0].l3->c, c)].way;
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0xff & ~(1u << w)), 0);
    touch(0, HIER_LOAD, addr(0, 0, 64)); /* set 0 */
    assert_true(cache_find(&M.cpu[0].l3->c, addr(0, 0, 64) >> 6) < 0);
    assert_true(cache_find(&M.cpu[0].l3->c, c) >= 0);
    check_inclusion();
}

static void test_units_bad_args(void **state)
{
    (void)state;
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 3, MACH_ANY, 5), 0);
    assert_int_equal(mach_set_units(&M, PLAT_L2, 3, 0, 0, MACH_CODE, 5), 0); /* one class */
    assert_int_equal(mach_set_units(&M, PLAT_L2, 3, 0, 1, MACH_CODE, 5), -QOSIM_EINVAL);
    /* L1s fill without a class's mask; no such level, instance, world
     * (one without a C bit), class or type. */
    assert_int_equal(mach_set_units(&M, PLAT_L1D, 0, 0, 0, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L1I, 0, 0, 0, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_NLEVEL, 0, 0, 0, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 2, 0, 0, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L2, 4, 0, 0, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 1, 0, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 4, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 0, 2, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 0, 0, -2, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 1, 0, MACH_ANY), 0);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 4, MACH_ANY), 0);
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 0, 2), 0);
    assert_int_equal(mach_class_lines(&M, PLAT_NLEVEL, 0, 0, 0, MACH_ANY), 0);
    /* None of them changed a limit. */
    mach_set_assoc(&M, 0, 0, 0, 0);
    for (uint64_t i = 0; i < 1024; i++)
        touch(0, HIER_LOAD, addr(0, 0, i));
    assert_int_equal(mach_class_lines(&M, PLAT_L3, 0, 0, 0, MACH_ANY), 256);
    /* The world of a machine with a C bit. */
    build_tiny_rv();
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 1, 3, MACH_ANY, 5), 0);
    assert_int_equal(mach_set_units(&M, PLAT_L3, 0, 2, 3, MACH_ANY, 5), -QOSIM_EINVAL);
    assert_int_equal(mach_set_units(&M, PLAT_L2, 2, 0, 0, MACH_ANY, 5), -QOSIM_EINVAL);
}

/* ---- slow memory, SMBA and non-temporal stores ---- */

/* 2 sockets x 2 modules: CPUs 0 and 1 on node 0 (domain 0), 2 and 3 on node
 * 1 (domain 1); a slow node after the DRAM nodes for each: node 2 local to
 * node 0, node 3 to node 1. At 1 GHz a cycle is 64 ticks and a nanosecond a
 * cycle: DRAM 100 ns, slow 300 ns (100 ns in the SMBA test), remote +50 ns. */
static void build_slow(const char *peak, const char *lat)
{
    char slow[96];
    snprintf(slow, sizeof slow, "  slow: {nodes: 1, peak: %s, latency: %s, channels: 2}\n", peak,
             lat);
    mach_free(&M);
    tiny_mach(&M,
              &(struct tiny_opt){.name = "slowtiny",
                                 .vendor = "amd",
                                 .allocation = "classes: 4, cbm_len: 8",
                                 .memory = slow,
                                 .monitoring = "ids: 8, occupancy: true, total: true, local: true",
                                 .qos = "  bandwidth: {kind: rate, classes: 4, max: 11}\n"
                                        "  slow_bandwidth: {classes: 4, max: 11, window: 1us}\n"},
              4, NULL);
}

/* Reads of DRAM and slow memory from one CPU: each in its class, local or
 * remote by the slow node's home, exactly; the latency the node's own. */
static void test_slow_classes(void **state)
{
    (void)state;
    build_slow("16GB/s", "300ns");
    assert_int_equal(M.node_slow[2], 1);
    assert_int_equal(M.node_slow[1], 0);
    assert_int_equal(M.node_home[2], 0);
    assert_int_equal(M.node_home[3], 1);
    assert_int_equal(M.node_home[1], 1);
    assert_true(mach_node_local(&M, 0, 2) && !mach_node_local(&M, 0, 3));
    /* Unloaded, one read each: L3's 30 cycles plus the node's latency, plus
     * the remote penalty unless the node (or its home) is the CPU's. */
    static const uint64_t want[4] = {130, 180, 330, 380};
    static const uint8_t src[4] = {MACH_SRC_MEM_LOCAL, MACH_SRC_MEM_REMOTE, MACH_SRC_MEM_LOCAL,
                                   MACH_SRC_MEM_REMOTE};
    mach_set_assoc(&M, 0, 0, 1, 3);
    for (unsigned n = 0; n < 4; n++) {
        M.cpu[0].now += 1000000;
        assert_int_equal(touch(0, HIER_LOAD, addr(n, 0, 0)), want[n] * MACH_TICK);
        assert_int_equal(M.cpu[0].src, src[n]);
    }
    /* Then 100, 200, 300 and 400 new lines of nodes 0..3. */
    for (unsigned n = 0; n < 4; n++)
        for (uint64_t i = 1; i <= 100 * (n + 1); i++)
            M.cpu[0].now += touch(0, HIER_LOAD, addr(n, 0, i));
    static const enum mach_traffic cls[4] = {MACH_TR_RD_LOCAL, MACH_TR_RD_REMOTE,
                                             MACH_TR_SLOW_LOCAL, MACH_TR_SLOW_REMOTE};
    for (unsigned n = 0; n < 4; n++) {
        uint64_t b = (100 * (n + 1) + 1) * 64;
        assert_int_equal(mach_traffic(&M, 0, 3, 1u << cls[n]), b);
        assert_int_equal(mach_traffic_cls(&M, 0, 1, 1u << cls[n]), b);
        assert_int_equal(M.ts[0].traffic[cls[n]], b);
        assert_int_equal(mach_node_bytes(&M, n, 3, MACH_ANY, 0, 0), b);
        assert_int_equal(M.mem.stat[n].read_bytes, b);
    }
    assert_int_equal(M.ts[0].rd_bytes, 1004 * 64);
    /* Local counts slow memory of its own node too (BMEC's default 0x15). */
    assert_int_equal(mach_bytes(&M, 0, 3, MACH_CTR_LOCAL), 101 + 301);
    assert_int_equal(mach_bytes(&M, 0, 3, MACH_CTR_TOTAL), 1004);
    assert_int_equal(mach_traffic(&M, 1, 3, MACH_TR_ALL), 0);
}

/* Non-temporal stores: one full line written per line the stream enters,
 * nothing allocated in any cache, counted as the non-temporal class by the
 * line's node (a slow node by its home), and no read at all. */
static void test_ntstore(void **state)
{
    (void)state;
    build_slow("16GB/s", "300ns");
    mach_set_assoc(&M, 0, 0, 2, 5);
    struct mach_cpu *p = &M.cpu[0];
    /* 8-byte stores over 100 lines of node 0 and 50 of node 3 (remote slow). */
    for (uint64_t i = 0; i < 100 * 8; i++)
        p->now += mach_ntstore(&M, p, addr(0, 0, 0) + i * 8);
    for (uint64_t i = 0; i < 50 * 8; i++)
        p->now += mach_ntstore(&M, p, addr(3, 0, 0) + i * 8);
    const uint32_t ntl = 1u << MACH_TR_NT_LOCAL, ntr = 1u << MACH_TR_NT_REMOTE;
    assert_int_equal(mach_traffic(&M, 0, 5, ntl), 100 * 64);
    assert_int_equal(mach_traffic(&M, 0, 5, ntr), 50 * 64);
    assert_int_equal(mach_traffic(&M, 0, 5, MACH_TR_ALL), 150 * 64);
    assert_int_equal(mach_traffic_cls(&M, 0, 2, ntl | ntr), 150 * 64);
    assert_int_equal(M.ts[0].traffic[MACH_TR_NT_LOCAL], 100 * 64);
    assert_int_equal(M.ts[0].traffic[MACH_TR_NT_REMOTE], 50 * 64);
    assert_int_equal(M.ts[0].wr_bytes, 150 * 64);
    assert_int_equal(M.ts[0].rd_bytes, 0);
    assert_int_equal(M.mem.stat[0].write_bytes, 100 * 64);
    assert_int_equal(M.mem.stat[3].write_bytes, 50 * 64);
    assert_int_equal(M.mem.stat[0].read_bytes + M.mem.stat[3].read_bytes, 0);
    assert_int_equal(mach_node_bytes(&M, 3, 5, MACH_ANY, 0, 1), 50 * 64);
    for (int l = PLAT_L1D; l <= PLAT_L3; l++)
        assert_int_equal(mach_valid_lines(&M, (enum plat_level)l, 0), 0);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 5), 0);
    /* MBM total counts them (resctrl's default, 0x7F less victims). */
    assert_int_equal(mach_bytes(&M, 0, 5, MACH_CTR_TOTAL), 150);
    assert_int_equal(mach_bytes(&M, 0, 5, MACH_CTR_LOCAL), 100);
    /* A line the CPU holds dirty: a non-temporal store takes it out of every
     * level without writing it back (the full line subsumes it). */
    uint64_t a = addr(0, 0, 4000);
    touch(0, HIER_STORE, a);
    assert_int_equal(mach_valid_lines(&M, PLAT_L1D, 0), 1);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 5), 1);
    mach_ntstore(&M, p, a + 8);
    for (int l = PLAT_L1D; l <= PLAT_L3; l++)
        assert_int_equal(mach_valid_lines(&M, (enum plat_level)l, 0), 0);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 5), 0);
    assert_int_equal(mach_traffic(&M, 0, 5, 1u << MACH_TR_VICTIM), 0);
    assert_int_equal(mach_traffic(&M, 0, 5, ntl), 101 * 64);
    /* Stores to the line being combined write nothing more; leaving it and
     * coming back writes it again (one buffer). */
    mach_ntstore(&M, p, a + 16);
    assert_int_equal(mach_traffic(&M, 0, 5, ntl), 101 * 64);
    mach_ntstore(&M, p, a + 64);
    mach_ntstore(&M, p, a);
    assert_int_equal(mach_traffic(&M, 0, 5, ntl), 103 * 64);
}

/* A non-temporal stream above the channel's peak waits for it: its
 * latency is the channel's queue, so the stream runs at the peak. */
static void test_ntstore_paced(void **state)
{
    (void)state;
    build_slow("4GB/s", "300ns");
    mach_set_assoc(&M, 0, 0, 0, 1);
    struct mach_cpu *p = &M.cpu[0];
    uint64_t t0 = p->now, n = 20000;
    for (uint64_t i = 0; i < n; i++)
        p->now += 1 + mach_ntstore(&M, p, addr(2, 0, i)); /* a line per tick asked */
    double gbs = (double)n * 64 / ((double)(p->now - t0) / (1e9 * MACH_TICK)) / 1e9;
    if (fabs(gbs - 4) > 0.2)
        fail_msg("a non-temporal stream to a 4 GB/s slow node ran at %.3f GB/s", gbs);
}

/* Streams of two CPUs of one domain, each issuing its next read when the
 * last is 1/16 done (an MLP of 16), lines of `node`, until n lines each;
 * returns the domain's read rate in GB/s. */
static double stream2(unsigned node, uint64_t n)
{
    uint64_t t0 = M.cpu[0].now > M.cpu[1].now ? M.cpu[0].now : M.cpu[1].now;
    M.cpu[0].now = M.cpu[1].now = t0;
    uint64_t next[2] = {0, 0};
    static uint64_t base = 0;
    while (next[0] < n || next[1] < n) {
        unsigned c = next[1] >= n || (next[0] < n && M.cpu[0].now <= M.cpu[1].now) ? 0 : 1;
        M.cpu[c].now += touch(c, HIER_LOAD, addr(node, c, base + next[c]++)) / 16 + 1;
    }
    base += n;
    uint64_t t1 = M.cpu[0].now > M.cpu[1].now ? M.cpu[0].now : M.cpu[1].now;
    return (double)(2 * n * 64) / ((double)(t1 - t0) / (1e9 * MACH_TICK)) / 1e9;
}

/* SMBA: the domain's class holds its reads of slow memory, of both its CPUs
 * together, to the cap; its DRAM reads pass; the other class and domain
 * are not limited; held time counts the wait. */
static void test_smba(void **state)
{
    (void)state;
    build_slow("64GB/s", "100ns");
    mach_set_assoc(&M, 0, 0, 1, 1);
    mach_set_assoc(&M, 1, 1, 1, 1);
    double free_slow = stream2(2, 20000);
    assert_int_equal(M.cpu[0].held + M.cpu[1].held, 0);
    struct bw_class_set s;
    bw_class_reset(BW_RATE, &s);
    s.rate = 4e9 / (1e9 * MACH_TICK); /* 4 GB/s in bytes per tick */
    assert_int_equal(mach_set_slow_bw(&M, 0, 1, &s), 0);
    double capped = stream2(2, 20000);
    if (fabs(capped - 4) > 0.2)
        fail_msg("SMBA at 4 GB/s: the domain read slow memory at %.3f GB/s", capped);
    if (free_slow < 3 * 4)
        fail_msg("unlimited, the two streams read only %.3f GB/s of slow memory", free_slow);
    assert_true(M.cpu[0].held > 0 && M.cpu[1].held > 0);
    /* DRAM, remote slow... the cap is on slow memory: DRAM is not held. */
    uint64_t held = M.cpu[0].held + M.cpu[1].held;
    double dram = stream2(0, 20000);
    if (dram < 3 * 4)
        fail_msg("SMBA held DRAM reads to %.3f GB/s", dram);
    assert_int_equal(M.cpu[0].held + M.cpu[1].held, held);
    /* The remote slow node is slow memory too: capped the same. */
    double remote = stream2(3, 20000);
    if (fabs(remote - 4) > 0.2)
        fail_msg("SMBA at 4 GB/s: the domain read remote slow memory at %.3f GB/s", remote);
    /* Class 0 is unlimited. */
    mach_set_assoc(&M, 0, 0, 0, 1);
    mach_set_assoc(&M, 1, 1, 0, 1);
    double other = stream2(2, 20000);
    if (other < 3 * 4)
        fail_msg("SMBA's class 1 cap held class 0 to %.3f GB/s", other);
    /* No such domain or class; a machine without SMBA has none. */
    assert_int_equal(mach_set_slow_bw(&M, 2, 0, &s), -QOSIM_EINVAL);
    assert_int_equal(mach_set_slow_bw(&M, 0, 4, &s), -QOSIM_EINVAL);
    mach_free(&M);
    build("nine", 24, "1");
    assert_int_equal(mach_set_slow_bw(&M, 0, 0, &s), -QOSIM_EINVAL);
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
        cmocka_unit_test_setup_teardown(test_traffic_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counter_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_limited_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_share_reserved_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sampling_estimate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_counts_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_stream_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_throttle_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_occupancy_low, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_per_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_one_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_inclusive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_units_bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_classes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ntstore, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ntstore_paced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_smba, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
