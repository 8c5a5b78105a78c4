/* Unit tests for sim/cache/hier.c: the I1/D1/[L2]/LL hierarchy.
 *
 * Every scenario runs twice, through hier_access() (inline fast path) and
 * through hier_access_slow(), which must agree exactly. Tiny caches with
 * 16-byte lines keep the hand derivations short: block = addr >> 4, and the
 * set is block & (sets - 1). Sets are written most recent first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cache/cache.h"
#include "sim/cache/hier.h"
#include "sim/cache/repl.h"
#include "util/rng.h"

enum { I = HIER_IFETCH, L = HIER_LOAD, S = HIER_STORE, M = HIER_MODIFY };

typedef unsigned (*acc_fn)(struct hier *, unsigned, uint64_t, uint32_t);

static unsigned acc_fast(struct hier *h, unsigned kind, uint64_t addr, uint32_t size)
{
    return hier_access(h, kind, addr, size);
}

static const acc_fn accs[2] = {acc_fast, hier_access_slow};
static const char *const acc_names[2] = {"hier_access", "hier_access_slow"};

#define assert_substr(hay, needle)                                                                 \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("message '%s' lacks '%s'", (hay), (needle));                                  \
    } while (0)

static void geom(struct cache_geom *g, const char *s)
{
    struct err e = {0};
    if (cache_geom_parse(s, g, &e))
        fail_msg("%s: %s", s, e.msg);
}

/* I1 and D1 share a geometry; l2 NULL means no L2. */
static void mkh(struct hier *h, const char *l1, const char *l2, const char *ll, enum hier_incl incl,
                int wbp, const struct repl_ops *r)
{
    struct hier_config cfg = {.repl = r, .incl = incl, .wb_propagate = wbp, .has_l2 = l2 != NULL};
    geom(&cfg.geom[HIER_L1I], l1);
    geom(&cfg.geom[HIER_L1D], l1);
    if (l2)
        geom(&cfg.geom[HIER_L2], l2);
    geom(&cfg.geom[HIER_LL], ll);
    struct err e = {0};
    if (hier_init(h, &cfg, &e))
        fail_msg("hier_init: %s", e.msg);
}

static int has(const struct hier *h, unsigned c, uint64_t block)
{
    return cache_find(&h->c[c], block) >= 0;
}

static const struct cache_line *line_of(const struct hier *h, unsigned c, uint64_t block)
{
    const struct cache *k = &h->c[c];
    int i = cache_find(k, block);
    if (i < 0)
        fail_msg("%s lacks block %llu", hier_cache_name[c], (unsigned long long)block);
    return &cache_set(k, (uint32_t)block & k->set_mask)[i];
}

static int dirty(const struct hier *h, unsigned c, uint64_t block)
{
    return line_of(h, c, block)->flags & CACHE_F_DIRTY;
}

/* Entries of the set holding block that carry it (an exclusive level must
 * never hold two). */
static unsigned copies(const struct hier *h, unsigned c, uint64_t block)
{
    const struct cache *k = &h->c[c];
    const struct cache_line *set = cache_set(k, (uint32_t)block & k->set_mask);
    unsigned n = 0;
    for (unsigned i = 0; i < k->g.assoc; i++)
        n += set[i].tag == block;
    return n;
}

static uint64_t refs(const struct hier *h, unsigned c)
{
    const struct hier_stats *s = &h->st[c];
    return s->ref[HIER_CI] + s->ref[HIER_CR] + s->ref[HIER_CW];
}

static uint64_t misses(const struct hier *h, unsigned c)
{
    const struct hier_stats *s = &h->st[c];
    return s->miss[HIER_CI] + s->miss[HIER_CR] + s->miss[HIER_CW];
}

/* ---- configuration ---------------------------------------------------- */

static void test_init(void **state)
{
    (void)state;
    struct hier h;
    mkh(&h, "128,2,16", NULL, "512,4,16", HIER_NINE, 0, &repl_lru);
    assert_int_equal(h.depth, 2);
    assert_int_equal(h.clamp, 16);
    assert_int_equal(h.path[0][0], HIER_L1I);
    assert_int_equal(h.path[1][0], HIER_L1D);
    assert_int_equal(h.path[0][1], HIER_LL);
    assert_int_equal(h.path[1][1], HIER_LL);
    assert_null(h.c[HIER_L2].lines);
    assert_true(h.mask[HIER_L1D] == ~0ull);
    assert_true(h.mask[HIER_LL] == ~0ull);
    assert_int_equal(h.mem_reads + h.mem_writes, 0);
    hier_free(&h);

    mkh(&h, "128,2,16", "256,2,16", "512,4,16", HIER_NINE, 0, &repl_lru);
    assert_int_equal(h.depth, 3);
    assert_int_equal(h.path[0][1], HIER_L2);
    assert_int_equal(h.path[1][1], HIER_L2);
    assert_int_equal(h.path[1][2], HIER_LL);
    hier_free(&h);

    /* The clamp is the smallest line size of any level. */
    struct hier_config cfg = {.repl = &repl_lru};
    geom(&cfg.geom[HIER_L1I], "1024,2,64");
    geom(&cfg.geom[HIER_L1D], "1024,2,32");
    geom(&cfg.geom[HIER_LL], "8192,4,128");
    struct err e = {0};
    assert_int_equal(hier_init(&h, &cfg, &e), 0);
    assert_int_equal(h.clamp, 32);
    hier_free(&h);

    /* Inclusion and writeback propagation need one line size everywhere. */
    for (int incl = HIER_INCLUSIVE; incl <= HIER_EXCLUSIVE; incl++) {
        cfg.incl = (enum hier_incl)incl;
        e = (struct err){0};
        assert_int_equal(hier_init(&h, &cfg, &e), -QOSIM_EGEOM);
        assert_int_equal(e.code, -QOSIM_EGEOM);
        assert_substr(e.msg, hier_incl_name[incl]);
        assert_substr(e.msg, "one line size at every level");
        assert_null(h.c[HIER_L1D].lines); /* nothing left allocated */
    }
    cfg.incl = HIER_NINE;
    cfg.wb_propagate = 1;
    assert_int_equal(hier_init(&h, &cfg, &e), -QOSIM_EGEOM);
    assert_substr(e.msg, "one line size");
    /* Only D1 differing is enough. */
    cfg.wb_propagate = 0;
    cfg.incl = HIER_INCLUSIVE;
    geom(&cfg.geom[HIER_L1I], "1024,2,64");
    geom(&cfg.geom[HIER_L1D], "1024,2,32");
    geom(&cfg.geom[HIER_LL], "8192,4,64");
    assert_int_equal(hier_init(&h, &cfg, &e), -QOSIM_EGEOM);
    /* With matching lines, each inclusion works. */
    geom(&cfg.geom[HIER_L1D], "1024,2,64");
    assert_int_equal(hier_init(&h, &cfg, &e), 0);
    hier_free(&h);
}

/* A bad level is named in front of the cache module's reason. */
static void test_init_bad_geometry(void **state)
{
    (void)state;
    struct hier h;
    struct hier_config cfg = {.repl = &repl_lru};
    cfg.geom[HIER_L1I] = (struct cache_geom){.size = 1024, .assoc = 2, .line = 64};
    cfg.geom[HIER_L1D] = (struct cache_geom){.size = 1024, .assoc = 1, .line = 8};
    cfg.geom[HIER_LL] = (struct cache_geom){.size = 8192, .assoc = 4, .line = 64};
    struct err e = {0};
    assert_int_equal(hier_init(&h, &cfg, &e), -QOSIM_EGEOM);
    assert_string_equal(e.msg, "D1: line size 8 is below 16 bytes (an instruction could span "
                               "three lines)");
    assert_int_equal(hier_init(&h, &cfg, NULL), -QOSIM_EGEOM);
    /* The policy's refusal comes through the same way. */
    cfg.geom[HIER_L1D] = cfg.geom[HIER_L1I];
    cfg.geom[HIER_LL] = (struct cache_geom){.size = 12288, .assoc = 12, .line = 64};
    cfg.repl = &repl_plru;
    assert_int_equal(hier_init(&h, &cfg, &e), -QOSIM_EGEOM);
    /* cache_init already names the cache here: not named twice */
    assert_string_equal(e.msg, "LL: policy plru: tree-PLRU needs a power-of-two "
                               "associativity of at most 64");
    /* An L2 is checked only when present. */
    cfg.repl = &repl_lru;
    cfg.geom[HIER_L2] = (struct cache_geom){0};
    assert_int_equal(hier_init(&h, &cfg, &e), 0);
    hier_free(&h);
    cfg.has_l2 = 1;
    assert_int_equal(hier_init(&h, &cfg, &e), -QOSIM_EGEOM);
    assert_substr(e.msg, "L2: associativity must be at least 1");
}

static void test_incl_parse(void **state)
{
    (void)state;
    enum hier_incl k = HIER_NINE;
    assert_int_equal(hier_incl_parse("exclusive", &k), 0);
    assert_int_equal(k, HIER_EXCLUSIVE);
    assert_int_equal(hier_incl_parse("inclusive", &k), 0);
    assert_int_equal(k, HIER_INCLUSIVE);
    assert_int_equal(hier_incl_parse("nine", &k), 0);
    assert_int_equal(k, HIER_NINE);
    assert_int_equal(hier_incl_parse("NINE", &k), -QOSIM_EINVAL);
    assert_int_equal(hier_incl_parse("", &k), -QOSIM_EINVAL);
    assert_int_equal(k, HIER_NINE);
}

/* ---- cachegrind's rules ----------------------------------------------- */

/* I1 = D1 = 4 sets x 2 ways, LL = 8 sets x 4 ways, 16-byte lines. */
#define SMALL "128,2,16", NULL, "512,4,16"

/* An access straddling two lines is one reference and at most one miss per
 * level, and fills both lines; the LL looks up both lines again. */
static void straddle(acc_fn acc, const struct repl_ops *r)
{
    struct hier h;
    mkh(&h, SMALL, HIER_NINE, 0, r);
    /* 0x1c..0x23: blocks 1 and 2, both missing everywhere. */
    assert_int_equal(acc(&h, L, 0x1c, 8), 2);
    assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 1);
    assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 1);
    assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 1);
    assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 1);
    assert_int_equal(h.mem_reads, 2); /* two lines fetched */
    assert_true(has(&h, HIER_L1D, 1) && has(&h, HIER_L1D, 2));
    assert_true(has(&h, HIER_LL, 1) && has(&h, HIER_LL, 2));
    assert_false(has(&h, HIER_L1I, 1));
    /* Again: both hit. */
    assert_int_equal(acc(&h, L, 0x1c, 8), 0);
    assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 2);
    assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 1);
    assert_int_equal(refs(&h, HIER_LL), 1);
    /* 0x2c..0x33: block 2 hits, block 3 misses: one miss at D1; at the LL,
     * block 2 hits and block 3 misses: one reference, one miss. */
    assert_int_equal(acc(&h, L, 0x2c, 8), 2);
    assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 3);
    assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 2);
    assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 2);
    assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 2);
    assert_int_equal(h.mem_reads, 3);
    /* A store straddling 3 and 4 dirties both L1 lines; the LL fill of 4 is clean. */
    assert_int_equal(acc(&h, S, 0x3e, 4), 2);
    assert_int_equal(h.st[HIER_L1D].ref[HIER_CW], 1);
    assert_int_equal(h.st[HIER_L1D].miss[HIER_CW], 1);
    assert_true(dirty(&h, HIER_L1D, 3) && dirty(&h, HIER_L1D, 4));
    assert_false(dirty(&h, HIER_L1D, 2));
    assert_false(dirty(&h, HIER_LL, 4));
    /* A straddling fetch that ends exactly at a line boundary does not straddle. */
    assert_int_equal(acc(&h, I, 0x40, 16), 1); /* I1 miss, LL hit */
    assert_true(has(&h, HIER_L1I, 4));
    assert_false(has(&h, HIER_L1I, 5));
    assert_int_equal(h.st[HIER_LL].ref[HIER_CI], 1);
    assert_int_equal(h.st[HIER_LL].miss[HIER_CI], 0); /* 4 is in the LL from the store */
    assert_int_equal(h.mem_reads, 4);
    hier_free(&h);
}

static void test_straddle(void **state)
{
    (void)state;
    const struct repl_ops *pol[] = {&repl_lru, &repl_plru, &repl_srrip};
    for (unsigned a = 0; a < 2; a++)
        for (unsigned p = 0; p < 3; p++)
            straddle(accs[a], pol[p]);
}

/* The LL sees an access only when L1 missed it. D1 set 0 holds blocks 0, 4, 8. */
static void test_ll_only_on_miss(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, SMALL, HIER_NINE, 0, &repl_lru);
        assert_int_equal(acc(&h, L, 0x00, 4), 2);
        assert_int_equal(acc(&h, L, 0x04, 4), 0); /* same line */
        assert_int_equal(acc(&h, L, 0x0c, 4), 0);
        assert_int_equal(refs(&h, HIER_LL), 1);
        assert_int_equal(acc(&h, L, 0x40, 4), 2); /* D1 set 0: [4 0] */
        assert_int_equal(acc(&h, L, 0x80, 4), 2); /* [8 4]: 0 evicted */
        assert_false(has(&h, HIER_L1D, 0));
        assert_true(has(&h, HIER_LL, 0));
        assert_int_equal(acc(&h, L, 0x08, 4), 1); /* D1 miss, LL hit */
        assert_int_equal(acc(&h, L, 0x44, 4), 1); /* D1 [0 8] lost 4: LL hit */
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 7);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 5);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 5);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 3);
        assert_int_equal(h.mem_reads, 3);
        assert_int_equal(h.mem_writes, 0);
        hier_free(&h);
    }
}

/* I-side and D-side references land in their own cache and class; an M
 * counts as a read but dirties the line. */
static void test_classes(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, SMALL, HIER_NINE, 0, &repl_lru);
        assert_int_equal(acc(&h, I, 0x100, 4), 2);
        assert_int_equal(h.st[HIER_L1I].ref[HIER_CI], 1);
        assert_int_equal(h.st[HIER_L1I].miss[HIER_CI], 1);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CI], 1);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CI], 1);
        assert_int_equal(refs(&h, HIER_L1D), 0);
        assert_false(dirty(&h, HIER_L1I, 0x10));
        /* The same line as data: D1 misses, the unified LL hits. */
        assert_int_equal(acc(&h, L, 0x104, 4), 1);
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 1);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 1);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 1);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 0);
        assert_int_equal(acc(&h, I, 0x108, 4), 0); /* I1 hit */
        assert_int_equal(h.st[HIER_L1I].ref[HIER_CI], 2);
        assert_int_equal(refs(&h, HIER_L1I), 2);
        /* A store: class W, line dirty in D1, clean in the LL. */
        assert_int_equal(acc(&h, S, 0x200, 8), 2);
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CW], 1);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CW], 1);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CW], 1);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CW], 1);
        assert_true(dirty(&h, HIER_L1D, 0x20));
        assert_false(dirty(&h, HIER_LL, 0x20));
        /* A modify: class R (never W), and the line is dirtied. */
        assert_int_equal(acc(&h, M, 0x300, 4), 2);
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 2);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 2);
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CW], 1);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 2);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 1);
        assert_true(dirty(&h, HIER_L1D, 0x30));
        assert_false(dirty(&h, HIER_LL, 0x30));
        /* Hits at the MRU position (the inline fast path) dirty too. */
        assert_int_equal(acc(&h, L, 0x400, 4), 2);
        assert_false(dirty(&h, HIER_L1D, 0x40));
        assert_int_equal(acc(&h, M, 0x404, 4), 0);
        assert_true(dirty(&h, HIER_L1D, 0x40));
        assert_int_equal(acc(&h, L, 0x500, 4), 2);
        assert_int_equal(acc(&h, S, 0x50c, 4), 0);
        assert_true(dirty(&h, HIER_L1D, 0x50));
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 5);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 4);
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CW], 2);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CW], 1);
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CI], 0);
        assert_int_equal(h.st[HIER_L1I].ref[HIER_CR] + h.st[HIER_L1I].ref[HIER_CW], 0);
        hier_free(&h);
    }
}

/* Sizes are clamped to the smallest line (16 here, from I1) and size 0
 * counts as 1. D1 has 32-byte lines, the LL 64-byte lines. */
static void test_size_clamp(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        struct hier_config cfg = {.repl = &repl_lru};
        geom(&cfg.geom[HIER_L1I], "256,2,16");
        geom(&cfg.geom[HIER_L1D], "512,2,32"); /* 8 sets */
        geom(&cfg.geom[HIER_LL], "4096,4,64"); /* 16 sets */
        struct err e = {0};
        assert_int_equal(hier_init(&h, &cfg, &e), 0);
        assert_int_equal(h.clamp, 16);
        /* 64 bytes at 0x20 would end in D1 block 2 (0x5f); clamped to 16 they
         * end at 0x2f, inside block 1. */
        assert_int_equal(acc(&h, L, 0x20, 64), 2);
        assert_true(has(&h, HIER_L1D, 1));
        assert_false(has(&h, HIER_L1D, 2));
        assert_int_equal(h.mem_reads, 1); /* LL block 0 only */
        assert_true(has(&h, HIER_LL, 0));
        assert_false(has(&h, HIER_LL, 1));
        /* 0x3c..0x43 straddles D1 blocks 1|2 and LL blocks 0|1. */
        assert_int_equal(acc(&h, L, 0x3c, 8), 2);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 2);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 2);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 2);
        assert_int_equal(h.mem_reads, 2);
        assert_true(has(&h, HIER_LL, 1));
        /* Size 0 at 0x80 touches one byte: D1 block 4, not block 3. */
        assert_int_equal(acc(&h, L, 0x80, 0), 2);
        assert_true(has(&h, HIER_L1D, 4));
        assert_false(has(&h, HIER_L1D, 3));
        assert_int_equal(acc(&h, S, 0x80, 0), 0);
        assert_true(dirty(&h, HIER_L1D, 4));
        /* The largest size is clamped as well: only D1 block 8 (0x100..0x10f). */
        assert_int_equal(acc(&h, L, 0x100, UINT32_MAX), 2);
        assert_true(has(&h, HIER_L1D, 8));
        assert_false(has(&h, HIER_L1D, 9));
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 4);
        /* Exactly the clamp: 16 bytes from 0x1f0 stay in D1 block 15. */
        assert_int_equal(acc(&h, L, 0x1f0, 16), 2);
        assert_false(has(&h, HIER_L1D, 16));
        /* One past it is clamped back: 17 bytes from 0x1f0 still end at 0x1ff. */
        assert_int_equal(acc(&h, L, 0x1f0, 17), 0);
        assert_false(has(&h, HIER_L1D, 16));
        /* and 16 bytes from 0x1f1 straddle. */
        assert_int_equal(acc(&h, L, 0x1f1, 16), 2);
        assert_true(has(&h, HIER_L1D, 16));
        hier_free(&h);
    }
}

/* ---- writebacks ------------------------------------------------------- */

/* Counted only (cachegrind's model): the dirty D1 victim is counted and the
 * LL is not touched by it. D1 set 0 holds blocks 0, 4, 8. */
static void test_writeback_count(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, SMALL, HIER_NINE, 0, &repl_lru);
        acc(&h, S, 0x00, 4);
        acc(&h, L, 0x40, 4);
        assert_int_equal(h.st[HIER_L1D].writebacks, 0);
        acc(&h, L, 0x80, 4); /* evicts 0, dirty */
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_false(dirty(&h, HIER_LL, 0));
        assert_int_equal(refs(&h, HIER_LL), 3);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CW], 1);
        acc(&h, L, 0xc0, 4); /* evicts 4, clean */
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_int_equal(h.st[HIER_LL].writebacks, 0);
        assert_int_equal(h.mem_writes, 0);
        /* A modify dirties as a store does. */
        acc(&h, M, 0x80, 4);  /* [8 12], 8 dirty */
        acc(&h, L, 0x100, 4); /* evicts 12 */
        acc(&h, L, 0x140, 4); /* evicts 8, dirty */
        assert_int_equal(h.st[HIER_L1D].writebacks, 2);
        /* Instruction lines are never dirty. */
        acc(&h, I, 0x00, 4);
        acc(&h, I, 0x40, 4);
        acc(&h, I, 0x80, 4);
        assert_int_equal(h.st[HIER_L1I].writebacks, 0);
        assert_int_equal(h.mem_writes, 0);
        hier_free(&h);
    }
}

/* I1 = D1 = 2 sets x 1 way, LL = 1 set x 2 ways (every block in LL set 0).
 *   S 0x00: D1 {0d}; LL [0]
 *   L 0x20: D1 evicts 0d -> writeback: propagate: LL hit, 0 dirty; then LL
 *           misses 2: [2 0d]         count only: LL [2 0], 0 clean
 *   L 0x40: D1 evicts 2 (clean); LL miss evicts 0: propagate: dirty ->
 *           LL writeback + mem_write; count only: nothing. */
#define TINY "32,1,16", NULL, "32,2,16"

static void test_writeback_propagate(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++)
        for (int wbp = 0; wbp < 2; wbp++) {
            acc_fn acc = accs[a];
            struct hier h;
            mkh(&h, TINY, HIER_NINE, wbp, &repl_lru);
            assert_int_equal(acc(&h, S, 0x00, 4), 2);
            assert_int_equal(acc(&h, L, 0x20, 4), 2);
            assert_int_equal(h.st[HIER_L1D].writebacks, 1);
            assert_int_equal(dirty(&h, HIER_LL, 0) != 0, wbp);
            assert_int_equal(refs(&h, HIER_LL), 2); /* a writeback is no reference */
            assert_int_equal(misses(&h, HIER_LL), 2);
            assert_int_equal(cache_set(&h.c[HIER_LL], 0)[0].tag, 2);
            assert_int_equal(acc(&h, L, 0x40, 4), 2);
            assert_int_equal(h.st[HIER_L1D].writebacks, 1);
            assert_int_equal(h.st[HIER_LL].writebacks, (uint64_t)wbp);
            assert_int_equal(h.mem_writes, (uint64_t)wbp);
            assert_int_equal(h.mem_reads, 3);
            assert_false(has(&h, HIER_LL, 0));
            hier_free(&h);
        }
}

/* A writeback that misses the next level fills it, dirty, with the owner of
 * the line written back (not of the request that displaced it).
 *   owner 5: S 0x10: D1 s1 {1d}; LL [1]
 *   owner 6: L 0x00: D1 s0 {0};  LL [0 1]
 *            L 0x20: D1 s0 {2};  LL [2 0] (1 evicted, clean)
 *            L 0x30: D1 s1 evicts 1d -> LL miss, fill 1d (evicts 0): [1d 2];
 *                    then LL misses 3: [3 1d]
 *            L 0x50: D1 s1 evicts 3; LL evicts 1d -> mem_write */
static void test_writeback_fill(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, TINY, HIER_NINE, 1, &repl_lru);
        h.owner = 5;
        acc(&h, S, 0x10, 4);
        h.owner = 6;
        acc(&h, L, 0x00, 4);
        acc(&h, L, 0x20, 4);
        assert_false(has(&h, HIER_LL, 1));
        assert_int_equal(acc(&h, L, 0x30, 4), 2);
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_true(dirty(&h, HIER_LL, 1));
        assert_int_equal(line_of(&h, HIER_LL, 1)->owner, 5);
        assert_true(has(&h, HIER_LL, 3));
        assert_false(has(&h, HIER_LL, 0));
        assert_false(has(&h, HIER_LL, 2));
        assert_int_equal(h.mem_reads, 4); /* a full-line writeback reads nothing */
        assert_int_equal(h.mem_writes, 0);
        assert_int_equal(h.st[HIER_LL].writebacks, 0);
        acc(&h, L, 0x50, 4);
        assert_int_equal(h.mem_writes, 1);
        assert_int_equal(h.st[HIER_LL].writebacks, 1);
        hier_free(&h);
    }
}

/* A writeback the next level may not allocate (mask 0) goes on to memory
 * rather than vanishing. */
static void test_writeback_masked(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, TINY, HIER_NINE, 1, &repl_lru);
        h.mask[HIER_LL] = 0;
        assert_int_equal(acc(&h, S, 0x00, 4), 2);
        assert_false(has(&h, HIER_LL, 0)); /* the LL may not allocate */
        assert_int_equal(acc(&h, L, 0x20, 4), 2);
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_false(has(&h, HIER_LL, 0));
        assert_int_equal(h.mem_writes, 1);
        assert_int_equal(h.mem_reads, 2);
        hier_free(&h);
    }
}

/* ---- inclusion -------------------------------------------------------- */

/* I1 = D1 = 2 sets x 2 ways, LL = 1 set x 2 ways.
 *   I 0x00: I1 {0}; LL [0]
 *   L 0x00: D1 miss, LL hit; D1 {0}
 *   L 0x10, S 0x10: D1 s1 {1d}; LL [1 0]
 *   L 0x20: D1 s0 [2 0]; LL evicts 0 -> inclusive: removed from I1 and D1
 *   L 0x30: D1 s1 [3 1d]; LL evicts 1 -> removed from D1, dirty: written back
 *   L 0x00: served by memory */
static void test_inclusive(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++)
        for (int incl = HIER_NINE; incl <= HIER_INCLUSIVE; incl++) {
            acc_fn acc = accs[a];
            struct hier h;
            int inc = incl == HIER_INCLUSIVE;
            mkh(&h, "64,2,16", NULL, "32,2,16", (enum hier_incl)incl, 0, &repl_lru);
            assert_int_equal(acc(&h, I, 0x00, 4), 2);
            assert_int_equal(acc(&h, L, 0x00, 4), 1);
            assert_int_equal(acc(&h, L, 0x10, 4), 2);
            assert_int_equal(acc(&h, S, 0x10, 4), 0);
            assert_int_equal(acc(&h, L, 0x20, 4), 2);
            assert_int_equal(has(&h, HIER_L1I, 0), !inc);
            assert_int_equal(has(&h, HIER_L1D, 0), !inc);
            assert_true(has(&h, HIER_L1D, 2));
            assert_int_equal(h.st[HIER_L1I].backinv, (uint64_t)inc);
            assert_int_equal(h.st[HIER_L1D].backinv, (uint64_t)inc);
            assert_int_equal(h.st[HIER_LL].backinv, 0);
            assert_int_equal(h.mem_writes, 0);
            assert_int_equal(acc(&h, L, 0x30, 4), 2);
            assert_int_equal(has(&h, HIER_L1D, 1), !inc);
            assert_int_equal(h.st[HIER_L1D].backinv, (uint64_t)(2 * inc));
            assert_int_equal(h.st[HIER_L1D].writebacks, (uint64_t)inc);
            assert_int_equal(h.mem_writes, (uint64_t)inc);
            assert_int_equal(acc(&h, L, 0x00, 4), inc ? 2 : 0);
            hier_free(&h);
        }
}

/* Three inclusive levels: I1 = D1 = 2 sets x 1 way, L2 = LL = 2 sets x 2 ways.
 * Even blocks (set 0 everywhere):
 *   L 0x00: D1 {0}, L2 [0], LL [0]
 *   I 0x20: I1 {2}, L2 [2 0], LL [2 0]
 *   I 0x40: I1 evicts 2; L2 evicts 0 -> D1 loses 0 (an I-side access);
 *           LL evicts 0 too (nothing left above)
 * Odd blocks (set 1):
 *   I 0x10: I1 {1}, L2 [1], LL [1]
 *   L 0x30: D1 {3}, L2 [3 1], LL [3 1]
 *   L 0x10: D1 {1}; L2 hit [1 3]; the LL is not told: [3 1]
 *   L 0x50: D1 {5}; L2 evicts 3 (in no L1); LL evicts 1 -> I1 and L2 lose 1 */
static void test_inclusive_l2(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, "32,1,16", "64,2,16", "64,2,16", HIER_INCLUSIVE, 0, &repl_lru);
        assert_int_equal(acc(&h, L, 0x00, 4), 3);
        assert_int_equal(acc(&h, I, 0x20, 4), 3);
        assert_int_equal(acc(&h, I, 0x40, 4), 3);
        assert_false(has(&h, HIER_L1D, 0));
        assert_false(has(&h, HIER_L2, 0));
        assert_false(has(&h, HIER_LL, 0));
        assert_int_equal(h.st[HIER_L1D].backinv, 1);
        assert_int_equal(h.st[HIER_L1I].backinv, 0);
        assert_int_equal(h.st[HIER_L2].backinv, 0);

        assert_int_equal(acc(&h, I, 0x10, 4), 3);
        assert_int_equal(acc(&h, L, 0x30, 4), 3);
        assert_int_equal(acc(&h, L, 0x10, 4), 1);
        assert_int_equal(refs(&h, HIER_LL), 5);
        assert_int_equal(acc(&h, L, 0x50, 4), 3);
        assert_false(has(&h, HIER_L1I, 1));
        assert_false(has(&h, HIER_L2, 1));
        assert_false(has(&h, HIER_LL, 1));
        assert_true(has(&h, HIER_LL, 3));
        assert_true(has(&h, HIER_L2, 5));
        assert_int_equal(h.st[HIER_L1I].backinv, 1);
        assert_int_equal(h.st[HIER_L2].backinv, 1);
        assert_int_equal(h.st[HIER_L1D].backinv, 1);
        assert_int_equal(h.mem_reads, 6);
        hier_free(&h);
    }
}

/* Exclusive, I1 = D1 = 2 sets x 1 way, LL = 1 set x 2 ways:
 *   L 0x00: D1 {0}, LL {} (misses fill L1 only)               mem 1
 *   L 0x20: D1 {2}, LL [0] (the victim)                        mem 2
 *   L 0x00: LL hit moves 0 up; 2 goes down: D1 {0}, LL [2]
 *   S 0x00: 0 dirty
 *   L 0x20: D1 {2}, LL [0d]
 *   L 0x00: D1 {0d} (the dirt came up with it), LL [2]
 *   L 0x40: D1 {4}, LL [0d 2]                                  mem 3
 *   L 0x20: LL hit: 2 moves up, freeing the way 4 goes to: LL [4 0d]
 *   L 0x60: D1 {6}; 2 goes down, evicting 0d: LL [2 4]; mem 4, one write */
static void test_exclusive(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, TINY, HIER_EXCLUSIVE, 0, &repl_lru);
        assert_int_equal(acc(&h, L, 0x00, 4), 2);
        assert_false(has(&h, HIER_LL, 0));
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 1);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 1);
        assert_int_equal(acc(&h, L, 0x20, 4), 2);
        assert_true(has(&h, HIER_LL, 0));
        assert_false(has(&h, HIER_L1D, 0));
        assert_int_equal(acc(&h, L, 0x00, 4), 1);
        assert_true(has(&h, HIER_L1D, 0));
        assert_false(has(&h, HIER_LL, 0));
        assert_true(has(&h, HIER_LL, 2));
        assert_false(has(&h, HIER_L1D, 2));
        assert_int_equal(h.mem_reads, 2);
        assert_int_equal(acc(&h, S, 0x00, 4), 0);
        assert_int_equal(acc(&h, L, 0x20, 4), 1);
        assert_true(dirty(&h, HIER_LL, 0));
        /* a dirty line left D1: counted, even though it went down whole */
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_int_equal(acc(&h, L, 0x00, 4), 1);
        assert_true(dirty(&h, HIER_L1D, 0));
        assert_false(has(&h, HIER_LL, 0));
        assert_int_equal(acc(&h, L, 0x40, 4), 2);
        assert_int_equal(h.mem_reads, 3);
        assert_true(dirty(&h, HIER_LL, 0));
        assert_int_equal(cache_set(&h.c[HIER_LL], 0)[1].tag, 2); /* 2 is the LRU */
        /* The LL is looked up before D1's victim goes in: 2 is found. */
        assert_int_equal(acc(&h, L, 0x20, 4), 1);
        assert_int_equal(h.mem_reads, 3);
        assert_true(has(&h, HIER_LL, 4));
        assert_true(has(&h, HIER_LL, 0));
        assert_int_equal(acc(&h, L, 0x60, 4), 2);
        assert_int_equal(h.mem_reads, 4);
        assert_int_equal(h.mem_writes, 1);
        assert_int_equal(h.st[HIER_LL].writebacks, 1);
        assert_false(has(&h, HIER_LL, 0));
        assert_true(has(&h, HIER_LL, 2) && has(&h, HIER_LL, 4));
        /* Every block lives in exactly one level. */
        for (uint64_t b = 0; b < 8; b += 2)
            assert_int_equal(has(&h, HIER_L1D, b) + has(&h, HIER_LL, b), b != 0);
        /* eight D1 load misses; the LL hit four of them (0, 2, 0, 2) */
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 8);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 8);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 4);
        hier_free(&h);
    }
}

/* A line both L1s hold reaches an exclusive LL once, with the union of their
 * dirt.
 *   I 0x00: I1 {0}     S 0x00: D1 {0d} (the LL had no copy: memory)
 *   I 0x20: I1 evicts 0 -> LL [0]
 *   L 0x20: D1 evicts 0d -> already in the LL: merged, now dirty */
static void test_exclusive_split_l1(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, TINY, HIER_EXCLUSIVE, 0, &repl_lru);
        assert_int_equal(acc(&h, I, 0x00, 4), 2);
        assert_int_equal(acc(&h, S, 0x00, 4), 2);
        assert_int_equal(acc(&h, I, 0x20, 4), 2);
        assert_int_equal(copies(&h, HIER_LL, 0), 1);
        assert_false(dirty(&h, HIER_LL, 0));
        assert_int_equal(acc(&h, L, 0x20, 4), 2);
        assert_int_equal(copies(&h, HIER_LL, 0), 1);
        assert_true(dirty(&h, HIER_LL, 0));
        assert_int_equal(h.mem_reads, 4);
        /* The free way is still free: 4 goes down without evicting 0. */
        assert_int_equal(acc(&h, I, 0x40, 4), 2);
        assert_true(has(&h, HIER_LL, 0) && has(&h, HIER_LL, 2));
        assert_int_equal(h.mem_writes, 0);
        hier_free(&h);
    }
}

/* When the L1 may not allocate (mask 0), an LL hit leaves the line where it
 * is instead of dropping it. */
static void test_exclusive_masked(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, TINY, HIER_EXCLUSIVE, 0, &repl_lru);
        acc(&h, S, 0x00, 4);
        acc(&h, L, 0x20, 4); /* D1 {2}, LL [0d] */
        h.mask[HIER_L1D] = 0;
        assert_int_equal(acc(&h, L, 0x00, 4), 1);
        assert_false(has(&h, HIER_L1D, 0));
        assert_true(has(&h, HIER_L1D, 2));
        assert_true(dirty(&h, HIER_LL, 0));
        assert_int_equal(acc(&h, L, 0x00, 4), 1);
        assert_int_equal(h.mem_reads, 2);
        /* A miss with nowhere to go in L1 is served by memory and kept nowhere. */
        assert_int_equal(acc(&h, L, 0x40, 4), 2);
        assert_false(has(&h, HIER_L1D, 4) || has(&h, HIER_LL, 4));
        assert_int_equal(h.mem_reads, 3);
        hier_free(&h);
    }
}

/* An exclusive level the class may not allocate in is passed over by
 * victims: with two levels a dirty one goes to memory; with three it lands
 * in the LL. */
static void test_exclusive_masked_victim(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, TINY, HIER_EXCLUSIVE, 0, &repl_lru);
        h.mask[HIER_LL] = 0;
        acc(&h, S, 0x00, 4);
        acc(&h, L, 0x10, 4);
        assert_int_equal(acc(&h, L, 0x20, 4), 2); /* D1 evicts 0d */
        assert_false(has(&h, HIER_LL, 0));
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_int_equal(h.mem_writes, 1);
        assert_int_equal(acc(&h, L, 0x30, 4), 2); /* D1 evicts 1, clean: no write */
        assert_int_equal(h.mem_writes, 1);
        hier_free(&h);

        mkh(&h, "32,1,16", "32,1,16", "64,2,16", HIER_EXCLUSIVE, 0, &repl_lru);
        h.mask[HIER_L2] = 0;
        acc(&h, S, 0x00, 4);
        assert_int_equal(acc(&h, L, 0x20, 4), 3); /* D1 evicts 0d: past L2, into the LL */
        assert_false(has(&h, HIER_L2, 0));
        assert_true(dirty(&h, HIER_LL, 0));
        assert_int_equal(acc(&h, L, 0x00, 4), 2); /* and back up from there */
        assert_true(dirty(&h, HIER_L1D, 0));
        assert_true(has(&h, HIER_LL, 2));
        assert_int_equal(h.mem_writes, 0);
        hier_free(&h);
    }
}

/* Three exclusive levels, I1 = D1 = L2 = 2 sets x 1 way, LL = 2 sets x 2 ways:
 *   S 0x00: D1 {0d}                                      mem 1
 *   L 0x20: D1 {2}; L2 {0d}                              mem 2
 *   L 0x40: D1 {4}; L2 {2}; LL [0d]                      mem 3
 *   L 0x00: L2 misses, LL hits: 0 moves to D1 with its dirt; 4 goes to L2
 *           and pushes 2 to the LL: D1 {0d}, L2 {4}, LL [2] */
static void test_exclusive_l2(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, "32,1,16", "32,1,16", "64,2,16", HIER_EXCLUSIVE, 0, &repl_lru);
        assert_int_equal(acc(&h, S, 0x00, 4), 3);
        assert_int_equal(acc(&h, L, 0x20, 4), 3);
        assert_true(dirty(&h, HIER_L2, 0));
        assert_int_equal(acc(&h, L, 0x40, 4), 3);
        assert_true(dirty(&h, HIER_LL, 0));
        assert_true(has(&h, HIER_L2, 2));
        assert_int_equal(acc(&h, L, 0x00, 4), 2);
        assert_true(dirty(&h, HIER_L1D, 0));
        assert_true(has(&h, HIER_L2, 4));
        assert_true(has(&h, HIER_LL, 2));
        for (uint64_t b = 0; b < 6; b += 2)
            assert_int_equal(has(&h, HIER_L1D, b) + has(&h, HIER_L2, b) + has(&h, HIER_LL, b), 1);
        assert_int_equal(h.mem_reads, 3);
        assert_int_equal(h.mem_writes, 0);
        assert_int_equal(misses(&h, HIER_L1D), 4);
        assert_int_equal(refs(&h, HIER_L2), 4);
        assert_int_equal(misses(&h, HIER_L2), 4);
        assert_int_equal(refs(&h, HIER_LL), 4);
        assert_int_equal(misses(&h, HIER_LL), 3);
        hier_free(&h);
    }
}

/* ---- an L2 in the path (non-inclusive) -------------------------------- */

/* I1 = D1 = 4 sets x 2 ways, L2 = 8 sets x 2 ways, LL = 16 sets x 4 ways.
 *   blk  D1 set0     L2 set0    LL         served by
 *   0    [0]         [0]        miss       memory
 *   4    [4 0]       (set 4)    miss       memory
 *   8    [8 4]       [8 0]      miss       memory
 *   0    [0 8]       hit [0 8]  -          L2
 *   I 0  (I1)        hit        -          L2 (shared)
 *   16   [16 0]      [16 0]     miss       memory
 *   24   [24 16]     [24 16]    miss       memory
 *   0    [0 24]      miss       hit        LL */
static void test_l2_path(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, "128,2,16", "256,2,16", "1024,4,16", HIER_NINE, 0, &repl_lru);
        static const struct {
            unsigned kind;
            uint64_t addr;
            unsigned level;
        } tr[] = {{L, 0x000, 3}, {L, 0x040, 3}, {L, 0x080, 3}, {L, 0x000, 1},
                  {I, 0x000, 1}, {L, 0x100, 3}, {L, 0x180, 3}, {L, 0x000, 2}};
        for (unsigned i = 0; i < sizeof tr / sizeof tr[0]; i++) {
            unsigned got = acc(&h, tr[i].kind, tr[i].addr, 4);
            if (got != tr[i].level)
                fail_msg("%s access %u: level %u, want %u", acc_names[a], i, got, tr[i].level);
        }
        assert_int_equal(h.st[HIER_L1D].ref[HIER_CR], 7);
        assert_int_equal(h.st[HIER_L1D].miss[HIER_CR], 7);
        assert_int_equal(h.st[HIER_L1I].ref[HIER_CI], 1);
        assert_int_equal(h.st[HIER_L1I].miss[HIER_CI], 1);
        assert_int_equal(h.st[HIER_L2].ref[HIER_CR], 7);
        assert_int_equal(h.st[HIER_L2].miss[HIER_CR], 6);
        assert_int_equal(h.st[HIER_L2].ref[HIER_CI], 1);
        assert_int_equal(h.st[HIER_L2].miss[HIER_CI], 0);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CR], 6);
        assert_int_equal(h.st[HIER_LL].miss[HIER_CR], 5);
        assert_int_equal(h.st[HIER_LL].ref[HIER_CI], 0);
        assert_int_equal(h.mem_reads, 5);
        hier_free(&h);
    }
}

/* With propagation, a dirty D1 victim writes into the L2, not the LL. */
static void test_l2_writeback(void **state)
{
    (void)state;
    for (unsigned a = 0; a < 2; a++) {
        acc_fn acc = accs[a];
        struct hier h;
        mkh(&h, "32,1,16", "64,2,16", "128,2,16", HIER_NINE, 1, &repl_lru);
        acc(&h, S, 0x00, 4);
        acc(&h, L, 0x20, 4); /* D1 evicts 0d */
        assert_int_equal(h.st[HIER_L1D].writebacks, 1);
        assert_true(dirty(&h, HIER_L2, 0));
        assert_false(dirty(&h, HIER_LL, 0));
        /* L2 set 0 holds [2 0d]; block 4 pushes 0d out of it, into the LL (a hit there). */
        acc(&h, L, 0x40, 4);
        assert_int_equal(h.st[HIER_L2].writebacks, 1);
        assert_true(dirty(&h, HIER_LL, 0));
        assert_int_equal(h.mem_writes, 0);
        hier_free(&h);
    }
}

/* ---- invariants on a pseudo-random trace ------------------------------ */

/* Whether every valid line of cache `up` is also in cache `down`. */
static int subset(const struct hier *h, unsigned up, unsigned down)
{
    const struct cache *c = &h->c[up];
    for (uint64_t i = 0; i < (uint64_t)c->sets * c->g.assoc; i++)
        if (c->lines[i].tag != CACHE_TAG_INVALID && !has(h, down, c->lines[i].tag))
            return 0;
    return 1;
}

/* No set of cache c holds a block twice, and (when other is not c) no block
 * is in both c and other. */
static int disjoint(const struct hier *h, unsigned c, unsigned other)
{
    const struct cache *k = &h->c[c];
    for (uint64_t i = 0; i < (uint64_t)k->sets * k->g.assoc; i++) {
        uint64_t t = k->lines[i].tag;
        if (t == CACHE_TAG_INVALID)
            continue;
        if (copies(h, c, t) != 1 || (other != c && has(h, other, t)))
            return 0;
    }
    return 1;
}

/* 4000 mixed accesses over 96 lines, some straddling: inclusive levels
 * contain the levels above after every access; exclusive levels never hold
 * a line twice nor share one (and with data only, D1 shares none with them).
 * Both entry points give identical statistics. */
static void test_random_invariants(void **state)
{
    (void)state;
    static const char *const l2s[2] = {NULL, "64,2,16"};
    for (int incl = HIER_NINE; incl <= HIER_EXCLUSIVE; incl++)
        for (unsigned l2 = 0; l2 < 2; l2++)
            for (int wbp = 0; wbp < 2; wbp++)
                for (int dataonly = 0; dataonly < 2; dataonly++) {
                    struct hier h[2];
                    for (unsigned a = 0; a < 2; a++)
                        mkh(&h[a], "64,2,16", l2s[l2], "256,4,16", (enum hier_incl)incl, wbp,
                            &repl_lru);
                    struct rng x;
                    rng_seed(&x, 12345, 0);
                    for (unsigned n = 0; n < 4000; n++) {
                        uint64_t r = rng_next(&x) >> 33;
                        unsigned kind = dataonly ? 1 + r % 3 : r % 4;
                        uint64_t addr = (r >> 8) % (96 * 16);
                        uint32_t size = 1 + (uint32_t)((r >> 20) % 8);
                        for (unsigned a = 0; a < 2; a++)
                            accs[a](&h[a], kind, addr, size);
                        if (incl == HIER_INCLUSIVE) {
                            unsigned mid = l2 ? HIER_L2 : HIER_LL;
                            assert_true(subset(&h[0], HIER_L1I, mid));
                            assert_true(subset(&h[0], HIER_L1D, mid));
                            assert_true(subset(&h[0], HIER_L2, HIER_LL) || !l2);
                        } else if (incl == HIER_EXCLUSIVE) {
                            assert_true(disjoint(&h[0], HIER_LL, l2 ? HIER_L2 : HIER_LL));
                            if (l2)
                                assert_true(disjoint(&h[0], HIER_L2, HIER_LL));
                            if (dataonly) {
                                assert_true(disjoint(&h[0], HIER_L1D, HIER_LL));
                                if (l2)
                                    assert_true(disjoint(&h[0], HIER_L1D, HIER_L2));
                            }
                        }
                    }
                    assert_memory_equal(h[0].st, h[1].st, sizeof h[0].st);
                    assert_int_equal(h[0].mem_reads, h[1].mem_reads);
                    assert_int_equal(h[0].mem_writes, h[1].mem_writes);
                    /* Something happened at every level. */
                    assert_true(misses(&h[0], HIER_LL) > 100);
                    for (unsigned a = 0; a < 2; a++)
                        hier_free(&h[a]);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_init_bad_geometry),
        cmocka_unit_test(test_incl_parse),
        cmocka_unit_test(test_straddle),
        cmocka_unit_test(test_ll_only_on_miss),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_size_clamp),
        cmocka_unit_test(test_writeback_count),
        cmocka_unit_test(test_writeback_propagate),
        cmocka_unit_test(test_writeback_fill),
        cmocka_unit_test(test_writeback_masked),
        cmocka_unit_test(test_inclusive),
        cmocka_unit_test(test_inclusive_l2),
        cmocka_unit_test(test_exclusive),
        cmocka_unit_test(test_exclusive_split_l1),
        cmocka_unit_test(test_exclusive_masked),
        cmocka_unit_test(test_exclusive_masked_victim),
        cmocka_unit_test(test_exclusive_l2),
        cmocka_unit_test(test_l2_path),
        cmocka_unit_test(test_l2_writeback),
        cmocka_unit_test(test_random_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
