/* Unit tests for sim/cache/cache.c and the replacement policies (sim/cache/repl_*.c).
 *
 * Every expected value below is derived by hand in the comment next to it;
 * sets are written most recent first for LRU, and as way 0..n-1 otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cache/cache.h"
#include "sim/cache/repl.h"

#define ALL ~0ull

/* ---- helpers ---------------------------------------------------------- */

static void mk(struct cache *c, const char *geom, const struct repl_ops *r)
{
    struct cache_geom g;
    struct err e = {0};
    assert_int_equal(cache_geom_parse(geom, &g, &e), 0);
    assert_int_equal(cache_init(c, "T", &g, r, &e), 0);
}

/* A plain read reference with every way allowed; returns 1 on a hit. */
static int rd(struct cache *c, uint64_t block, struct cache_victim *v)
{
    return cache_ref(c, block, 0, 0, ALL, v);
}

/* Tag of entry i of the set block b maps to. */
static uint64_t tag_at(const struct cache *c, uint32_t s, unsigned i)
{
    return cache_set(c, s)[i].tag;
}

/* The line holding block, which must be present. */
static const struct cache_line *line_of(const struct cache *c, uint64_t block)
{
    int i = cache_find(c, block);
    assert_true(i >= 0);
    return &cache_set(c, (uint32_t)block & c->set_mask)[i];
}

/* Way of the line holding block, which must be present. */
static unsigned way_of(const struct cache *c, uint64_t block)
{
    return line_of(c, block)->way;
}

#define assert_substr(hay, needle)                                                                 \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("message '%s' lacks '%s'", (hay), (needle));                                  \
    } while (0)

/* ---- geometry --------------------------------------------------------- */

static void test_geom_parse_good(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        uint64_t size;
        uint32_t assoc, line, sets;
    } ok[] = {
        {"32768,8,64", 32768, 8, 64, 64},
        {"3145728,12,64", 3145728, 12, 64, 4096}, /* 3 MiB 12-way: 4096 sets */
        {"65280,255,64", 65280, 255, 64, 4},      /* 255 ways (not a power of two), 4 sets */
        {"65536,256,64", 65536, 256, 64, 4},      /* 256 ways: the limit */
        {"32,1,16", 32, 1, 16, 2},                /* smallest: size > line, line 16 */
        {"8192,128,64", 8192, 128, 64, 1},
        {"0001024,02,0064", 1024, 2, 64, 8}, /* leading zeros are decimal digits */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct cache_geom g;
        struct err e = {0};
        assert_int_equal(cache_geom_parse(ok[i].s, &g, &e), 0);
        assert_int_equal(g.size, ok[i].size);
        assert_int_equal(g.assoc, ok[i].assoc);
        assert_int_equal(g.line, ok[i].line);
        struct cache c;
        assert_int_equal(cache_init(&c, "T", &g, &repl_lru, &e), 0);
        assert_int_equal(c.sets, ok[i].sets);
        assert_int_equal(c.set_mask, ok[i].sets - 1);
        assert_int_equal(1u << c.line_bits, ok[i].line);
        /* Every entry starts empty, its way its index. */
        for (uint32_t s = 0; s < c.sets; s++)
            for (uint32_t w = 0; w < c.g.assoc; w++) {
                assert_true(tag_at(&c, s, w) == CACHE_TAG_INVALID);
                assert_int_equal(cache_set(&c, s)[w].way, w);
            }
        cache_free(&c);
    }
}

static void test_geom_parse_reject(void **state)
{
    (void)state;
    static const struct {
        const char *s, *why;
    } bad[] = {
        /* 3072 / 64 = 48 sets */
        {"3072,1,64", "not a power-of-two number of sets"},
        /* 6 sets */
        {"3072,8,64", "not a power-of-two number of sets"},
        /* 1536 / 24 = 64 sets, but a 24-byte line */
        {"1536,1,24", "line size 24 is not a power of two"},
        /* 128 sets of 8 bytes */
        {"1024,1,8", "line size 8 is below 16 bytes"},
        /* one line: size == line */
        {"64,1,64", "size 64 is not larger than the line size 64"},
        /* assoc 8 > size/line = 4: cachegrind's set-count check comes first and
         * catches it (64 % (16 * 8) != 0), so that is the reason given. */
        {"64,8,16", "not a power-of-two number of sets"},
        {"1024,0,64", "associativity must be at least 1"},
        {"1024,1,0", "line size must be at least 1"},
        /* 65792 / 64 / 257 = 4 sets, but 257 ways */
        {"65792,257,64", "associativity 257 exceeds qosim's limit of 256 ways"},
        /* 2^32 / 64 = 2^26 lines */
        {"4294967296,1,64", "67108864 lines exceed qosim's limit of 16777216 lines"},
        {"0,1,64", "not a power-of-two number of sets"},
        {"1024,4294967296,64", "out of range"},
        {"1024,2,4294967296", "out of range"},
        /* malformed */
        {"", "expected SIZE,ASSOC,LINE"},
        {"abc", "expected SIZE,ASSOC,LINE"},
        {"1024", "expected SIZE,ASSOC,LINE"},
        {"1024,2", "expected SIZE,ASSOC,LINE"},
        {"1024,2,", "expected SIZE,ASSOC,LINE"},
        {"1024,,64", "expected SIZE,ASSOC,LINE"},
        {",2,64", "expected SIZE,ASSOC,LINE"},
        {"1024,2,64,", "expected SIZE,ASSOC,LINE"},
        {"1024,2,64,1", "expected SIZE,ASSOC,LINE"},
        {"1024,2,64x", "expected SIZE,ASSOC,LINE"},
        {"1024,2,64 ", "expected SIZE,ASSOC,LINE"},
        {" 1024,2,64", "expected SIZE,ASSOC,LINE"},
        {"1024, 2,64", "expected SIZE,ASSOC,LINE"},
        {"-1024,2,64", "expected SIZE,ASSOC,LINE"},
        {"+1024,2,64", "expected SIZE,ASSOC,LINE"},
        {"0x400,2,64", "expected SIZE,ASSOC,LINE"},
        {"1k,2,64", "expected SIZE,ASSOC,LINE"},
        {"1024;2;64", "expected SIZE,ASSOC,LINE"},
        /* 2^64 + ... overflows the 64-bit field */
        {"99999999999999999999,2,64", "expected SIZE,ASSOC,LINE"},
        {"18446744073709551616,2,64", "expected SIZE,ASSOC,LINE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct cache_geom g = {0};
        struct err e = {0};
        int rc = cache_geom_parse(bad[i].s, &g, &e);
        if (rc != -QOSIM_EGEOM)
            fail_msg("'%s': returned %d, want -QOSIM_EGEOM", bad[i].s, rc);
        assert_int_equal(e.code, -QOSIM_EGEOM);
        assert_substr(e.msg, bad[i].why);
        /* Malformed input is quoted back so the user sees what was wrong. */
        if (strstr(bad[i].why, "SIZE") || strstr(bad[i].why, "range")) {
            char q[64];
            snprintf(q, sizeof q, "'%s'", bad[i].s);
            assert_substr(e.msg, q);
        }
        /* A NULL err is allowed and yields the same code. */
        assert_int_equal(cache_geom_parse(bad[i].s, &g, NULL), -QOSIM_EGEOM);
    }
}

static void test_geom_check_direct(void **state)
{
    (void)state;
    struct err e = {0};
    /* The same rules through the struct, including values the parser cannot
     * produce: assoc > size / line with a power-of-two quotient. */
    struct cache_geom g = {.size = 64, .assoc = 8, .line = 16};
    assert_int_equal(cache_geom_check(&g, &e), -QOSIM_EGEOM);
    assert_substr(e.msg, "size 64 / (line 16 x assoc 8)");
    g = (struct cache_geom){.size = 1u << 20, .assoc = 16, .line = 64};
    assert_int_equal(cache_geom_check(&g, &e), 0);
    g.assoc = 255 * 4; /* 1 MiB / 64 / 1020 is not an integer */
    assert_int_equal(cache_geom_check(&g, &e), -QOSIM_EGEOM);
    /* 2^24 lines is the limit itself: accepted. */
    g = (struct cache_geom){.size = (1ull << 24) * 16, .assoc = 1, .line = 16};
    assert_int_equal(cache_geom_check(&g, &e), 0);
    g.size *= 2;
    assert_int_equal(cache_geom_check(&g, &e), -QOSIM_EGEOM);
    assert_substr(e.msg, "33554432 lines exceed");
    /* cache_init applies the check too, and leaves nothing allocated. */
    struct cache c;
    g = (struct cache_geom){.size = 1024, .assoc = 1, .line = 8};
    assert_int_equal(cache_init(&c, "T", &g, &repl_lru, &e), -QOSIM_EGEOM);
    assert_null(c.lines);
    cache_free(&c);
}

static void test_repl_table(void **state)
{
    (void)state;
    assert_ptr_equal(repl_find("lru"), &repl_lru);
    assert_ptr_equal(repl_find("plru"), &repl_plru);
    assert_ptr_equal(repl_find("srrip"), &repl_srrip);
    assert_null(repl_find("LRU"));
    assert_null(repl_find(""));
    assert_ptr_equal(repl_at(0), &repl_lru);
    assert_ptr_equal(repl_at(1), &repl_plru);
    assert_ptr_equal(repl_at(2), &repl_srrip);
    assert_null(repl_at(3));
}

/* ---- LRU -------------------------------------------------------------- */

/* Recency order after hits and misses in one 4-way set (blocks 1..6 =
 * A..F; one set, so every block maps to set 0). */
static void test_lru_order(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_lru);
    assert_int_equal(c.sets, 1);
    for (uint64_t b = 1; b <= 4; b++) {
        assert_int_equal(rd(&c, b, &v), 0);
        assert_int_equal(v.valid, 0); /* empty ways are used first */
    }
    /* [D C B A] */
    assert_int_equal(tag_at(&c, 0, 0), 4);
    assert_int_equal(tag_at(&c, 0, 3), 1);
    assert_int_equal(rd(&c, 2, &v), 1); /* [B D C A] */
    assert_int_equal(rd(&c, 1, &v), 1); /* [A B D C] */
    assert_int_equal(rd(&c, 1, &v), 1); /* MRU hit (inline fast path): unchanged */
    uint64_t want1[] = {1, 2, 4, 3};
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(tag_at(&c, 0, i), want1[i]);
    assert_int_equal(rd(&c, 5, &v), 0); /* evicts C: [E A B D] */
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 3);
    assert_int_equal(rd(&c, 6, &v), 0); /* evicts D: [F E A B] */
    assert_int_equal(v.tag, 4);
    assert_int_equal(rd(&c, 4, &v), 0); /* D again: evicts B: [D F E A] */
    assert_int_equal(v.tag, 2);
    uint64_t want2[] = {4, 6, 5, 1};
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(tag_at(&c, 0, i), want2[i]);
    assert_int_equal(cache_find(&c, 3), -1);
    assert_int_equal(cache_find(&c, 1), 3);
    cache_free(&c);
}

/* cachegrind on a 2-way, 2-set, 16-byte-line cache: set = block & 1. The
 * trace and each expected outcome, with the sets after it (MRU first):
 *   addr  blk set  result  set0    set1
 *   0x00  0   0    M       [0]
 *   0x2f  2   0    M       [2 0]
 *   0x10  1   1    M               [1]
 *   0x08  0   0    H       [0 2]
 *   0x40  4   0    M (-2)  [4 0]
 *   0x3c  3   1    M               [3 1]
 *   0x20  2   0    M (-0)  [2 4]
 *   0x1f  1   1    H               [1 3]
 *   0x50  5   1    M (-3)          [5 1]
 *   0x44  4   0    H       [4 2]
 *   0x01  0   0    M (-2)  [0 4]
 *   0x11  1   1    H               [1 5]
 *   0x30  3   1    M (-5)          [3 1]
 *   0x4f  4   0    H       [4 0]
 *   0x22  2   0    M (-0)  [2 4]
 *   0x00  0   0    M (-4)  [0 2]
 * 11 misses, 5 hits. */
static void test_lru_cachegrind_trace(void **state)
{
    (void)state;
    static const uint64_t addr[] = {0x00, 0x2f, 0x10, 0x08, 0x40, 0x3c, 0x20, 0x1f,
                                    0x50, 0x44, 0x01, 0x11, 0x30, 0x4f, 0x22, 0x00};
    static const char want[] = "MMMHMMMHMHMHMHMM";
    static const int64_t evict[] = {-1, -1, -1, -1, 2, -1, 0, -1, 3, -1, 2, -1, 5, -1, 0, 4};
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,2,16", &repl_lru);
    assert_int_equal(c.sets, 2);
    assert_int_equal(c.line_bits, 4);
    unsigned misses = 0;
    for (unsigned i = 0; i < 16; i++) {
        int hit = rd(&c, addr[i] >> c.line_bits, &v);
        if (hit != (want[i] == 'H'))
            fail_msg("access %u (0x%llx): got %s", i, (unsigned long long)addr[i],
                     hit ? "hit" : "miss");
        misses += !hit;
        if (evict[i] < 0)
            assert_int_equal(v.valid, 0);
        else {
            assert_int_equal(v.valid, 1);
            assert_int_equal(v.tag, (uint64_t)evict[i]);
        }
    }
    assert_int_equal(misses, 11);
    assert_int_equal(tag_at(&c, 0, 0), 0);
    assert_int_equal(tag_at(&c, 0, 1), 2);
    assert_int_equal(tag_at(&c, 1, 0), 3);
    assert_int_equal(tag_at(&c, 1, 1), 1);
    /* cache_reset empties everything. */
    cache_reset(&c);
    assert_int_equal(cache_find(&c, 0), -1);
    assert_int_equal(rd(&c, 0, &v), 0);
    cache_free(&c);
}

/* Fills go to ways 3, 2, 1, 0 in turn (the last empty entry is taken, so LRU
 * keeps its empty entries at the bottom); an invalidated entry is refilled
 * before anything is evicted, and then the true LRU is next. */
static void test_lru_invalidate(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_lru);
    for (uint64_t b = 1; b <= 4; b++)
        rd(&c, b, &v); /* [D C B A] */
    assert_int_equal(way_of(&c, 1), 3);
    assert_int_equal(way_of(&c, 2), 2);
    assert_int_equal(way_of(&c, 3), 1);
    assert_int_equal(way_of(&c, 4), 0);
    cache_ref(&c, 3, CACHE_F_DIRTY, 0, ALL, &v); /* [C D B A], C dirty */
    assert_int_equal(cache_invalidate(&c, 3, &v), 1);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 3);
    assert_int_equal(v.flags, CACHE_F_DIRTY);
    assert_int_equal(cache_find(&c, 3), -1);
    assert_int_equal(cache_invalidate(&c, 3, &v), 0); /* already gone */
    assert_int_equal(v.valid, 0);
    assert_int_equal(cache_invalidate(&c, 99, &v), 0);
    /* [D B A -]: E takes C's old way without evicting. */
    assert_int_equal(rd(&c, 5, &v), 0);
    assert_int_equal(v.valid, 0);
    assert_int_equal(way_of(&c, 5), 1);
    assert_int_equal(line_of(&c, 5)->flags, 0); /* C's dirt did not stay behind */
    /* [E D B A]: F evicts A. */
    assert_int_equal(rd(&c, 6, &v), 0);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 1);
    assert_int_equal(way_of(&c, 6), 3);
    /* Invalidating the MRU entry: it becomes LRU and is refilled first. */
    assert_int_equal(cache_invalidate(&c, 6, &v), 1); /* [E D B -] */
    assert_int_equal(rd(&c, 7, &v), 0);
    assert_int_equal(v.valid, 0);
    assert_int_equal(way_of(&c, 7), 3);
    assert_int_equal(rd(&c, 8, &v), 0); /* [G E D B]: evicts B */
    assert_int_equal(v.tag, 2);
    cache_free(&c);
}

/* The owner is set by the fill and kept through hits; dirt accumulates and
 * both are reported when the line is displaced. A direct-mapped cache makes
 * the victim the same under every policy: blocks 10, 12, 14, 16 share set 0. */
static void test_owner_dirty_victim(void **state)
{
    (void)state;
    const struct repl_ops *pol[] = {&repl_lru, &repl_plru, &repl_srrip};
    for (unsigned p = 0; p < 3; p++) {
        struct cache c;
        struct cache_victim v;
        mk(&c, "32,1,16", pol[p]); /* two sets, one way */
        assert_int_equal(cache_ref(&c, 10, 0, 7, ALL, &v), 0);
        assert_int_equal(line_of(&c, 10)->owner, 7);
        assert_int_equal(line_of(&c, 10)->flags, 0);
        assert_int_equal(cache_ref(&c, 10, CACHE_F_DIRTY, 9, ALL, &v), 1);
        assert_int_equal(line_of(&c, 10)->owner, 7); /* a hit does not retag */
        assert_int_equal(line_of(&c, 10)->flags, CACHE_F_DIRTY);
        assert_int_equal(cache_ref(&c, 10, 0, 9, ALL, &v), 1);
        assert_int_equal(line_of(&c, 10)->flags, CACHE_F_DIRTY); /* a read keeps the dirt */
        assert_int_equal(cache_ref(&c, 11, 0, 4, ALL, &v), 0);   /* set 1: no victim */
        assert_int_equal(v.valid, 0);
        /* A store miss fills dirty and displaces 10 with its owner and dirt. */
        assert_int_equal(cache_ref(&c, 12, CACHE_F_DIRTY, 3, ALL, &v), 0);
        assert_int_equal(v.valid, 1);
        assert_int_equal(v.tag, 10);
        assert_int_equal(v.owner, 7);
        assert_int_equal(v.flags, CACHE_F_DIRTY);
        assert_int_equal(line_of(&c, 12)->owner, 3);
        assert_int_equal(line_of(&c, 12)->flags, CACHE_F_DIRTY);
        /* A load miss fills clean. */
        assert_int_equal(cache_ref(&c, 14, 0, 5, ALL, &v), 0);
        assert_int_equal(v.tag, 12);
        assert_int_equal(v.owner, 3);
        assert_int_equal(v.flags, CACHE_F_DIRTY);
        assert_int_equal(line_of(&c, 14)->owner, 5);
        assert_int_equal(line_of(&c, 14)->flags, 0);
        /* A clean victim reports no dirt. */
        assert_int_equal(cache_ref(&c, 16, 0, 1, ALL, &v), 0);
        assert_int_equal(v.valid, 1);
        assert_int_equal(v.tag, 14);
        assert_int_equal(v.owner, 5);
        assert_int_equal(v.flags, 0);
        /* cache_invalidate reports owner and flags too. */
        assert_int_equal(cache_invalidate(&c, 16, &v), 1);
        assert_int_equal(v.tag, 16);
        assert_int_equal(v.owner, 1);
        assert_int_equal(v.flags, 0);
        assert_int_equal(line_of(&c, 11)->owner, 4);
        cache_free(&c);
    }
}

/* cache_insert fills like a miss, with the given flags and owner. */
static void test_insert(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "32,2,16", &repl_lru);
    cache_insert(&c, 4, CACHE_F_DIRTY, 6, ALL, &v);
    assert_int_equal(v.valid, 0);
    assert_int_equal(line_of(&c, 4)->flags, CACHE_F_DIRTY);
    assert_int_equal(line_of(&c, 4)->owner, 6);
    assert_int_equal(way_of(&c, 4), 1);
    cache_insert(&c, 5, 0, 2, 0x1, &v); /* only way 0 */
    assert_int_equal(v.valid, 0);
    assert_int_equal(way_of(&c, 5), 0);
    cache_insert(&c, 6, 0, 2, 0x2, &v); /* only way 1: displaces 4 */
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 4);
    assert_int_equal(v.owner, 6);
    assert_int_equal(v.flags, CACHE_F_DIRTY);
    assert_int_equal(way_of(&c, 6), 1);
    cache_insert(&c, 7, 0, 2, 0, &v); /* mask 0: nothing */
    assert_int_equal(v.valid, 0);
    assert_int_equal(cache_find(&c, 7), -1);
    cache_insert(&c, 7, 0, 2, 0x4, &v); /* only a way that does not exist */
    assert_int_equal(v.valid, 0);
    assert_int_equal(cache_find(&c, 7), -1);
    assert_int_equal(cache_find(&c, 5), 1); /* [6 5] */
    assert_int_equal(cache_find(&c, 6), 0);
    cache_free(&c);
}

/* Sets are selected by the low block bits. */
static void test_set_index(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "256,2,16", &repl_lru); /* 8 sets */
    assert_int_equal(c.set_mask, 7);
    rd(&c, 1, &v);
    rd(&c, 9, &v);  /* set 1 again */
    rd(&c, 2, &v);  /* set 2: does not disturb set 1 */
    rd(&c, 17, &v); /* set 1: evicts 1 */
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 1);
    assert_int_equal(cache_find(&c, 2), 0);
    assert_int_equal(tag_at(&c, 1, 0), 17);
    assert_int_equal(tag_at(&c, 1, 1), 9);
    assert_int_equal(tag_at(&c, 2, 0), 2);
    cache_free(&c);
}

/* ---- way masks -------------------------------------------------------- */

static void test_lru_mask(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_lru);
    /* Ways 0 and 1 only: A takes the last allowed empty entry (way 1), B way 0. */
    assert_int_equal(cache_ref(&c, 1, 0, 0, 0x3, &v), 0);
    assert_int_equal(way_of(&c, 1), 1);
    assert_int_equal(cache_ref(&c, 2, 0, 0, 0x3, &v), 0);
    assert_int_equal(way_of(&c, 2), 0);
    /* Two ways are still empty, but C may not use them: it evicts A, the LRU
     * among the allowed ways. */
    assert_int_equal(cache_ref(&c, 3, 0, 0, 0x3, &v), 0);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 1);
    assert_int_equal(way_of(&c, 3), 1);
    /* D may use way 2 only. */
    assert_int_equal(cache_ref(&c, 4, 0, 0, 0x4, &v), 0);
    assert_int_equal(v.valid, 0);
    assert_int_equal(way_of(&c, 4), 2);
    /* Hits are not restricted: D (way 2) hits with mask 0, C (way 1) with way 3's mask. */
    assert_int_equal(cache_ref(&c, 4, 0, 0, 0, &v), 1);
    assert_int_equal(cache_ref(&c, 3, 0, 0, 0x8, &v), 1);
    assert_int_equal(cache_ref(&c, 2, 0, 0, 0x8, &v), 1); /* [B C D - ] */
    /* Mask 0 and a mask naming only ways that do not exist: a miss fills nothing. */
    assert_int_equal(cache_ref(&c, 5, 0, 0, 0, &v), 0);
    assert_int_equal(v.valid, 0);
    assert_int_equal(cache_find(&c, 5), -1);
    assert_int_equal(cache_ref(&c, 5, 0, 0, 0xf0, &v), 0);
    assert_int_equal(cache_find(&c, 5), -1);
    assert_int_equal(tag_at(&c, 0, 0), 2); /* recency order untouched by those */
    assert_int_equal(tag_at(&c, 0, 1), 3);
    assert_int_equal(tag_at(&c, 0, 2), 4);
    /* Ways 1 and 2: C and D, D being the older of the two. */
    assert_int_equal(cache_ref(&c, 6, 0, 0, 0x6, &v), 0);
    assert_int_equal(v.tag, 4);
    assert_int_equal(way_of(&c, 6), 2);
    cache_free(&c);
}

/* Every policy keeps fills within the mask and never touches other ways. */
static void test_mask_all_policies(void **state)
{
    (void)state;
    const struct repl_ops *pol[] = {&repl_lru, &repl_plru, &repl_srrip};
    for (unsigned p = 0; p < 3; p++) {
        struct cache c;
        struct cache_victim v;
        mk(&c, "128,8,16", pol[p]); /* one set, 8 ways */
        /* Six blocks fill ways 0, 1, 4..7. */
        for (uint64_t b = 100; b < 106; b++) {
            assert_int_equal(cache_ref(&c, b, 0, 1, 0xf3, &v), 0);
            assert_int_equal(v.valid, 0);
            assert_true((0xf3 >> way_of(&c, b)) & 1);
        }
        /* Twenty misses confined to ways 2 and 3. */
        for (uint64_t b = 0; b < 20; b++) {
            assert_int_equal(cache_ref(&c, b, 0, 2, 0x0c, &v), 0);
            unsigned w = way_of(&c, b);
            if (w != 2 && w != 3)
                fail_msg("%s: block %llu filled way %u", pol[p]->name, (unsigned long long)b, w);
            if (b < 2)
                assert_int_equal(v.valid, 0);
            else {
                /* the victim is one of the two previous fills */
                assert_int_equal(v.valid, 1);
                assert_int_equal(v.owner, 2);
                assert_true(v.tag < b);
            }
            /* hits on the protected lines, under the restrictive mask */
            assert_int_equal(cache_ref(&c, 100 + b % 6, 0, 2, 0x0c, &v), 1);
        }
        for (uint64_t b = 100; b < 106; b++)
            assert_int_equal(line_of(&c, b)->owner, 1);
        assert_true(cache_find(&c, 19) >= 0);
        assert_true(cache_find(&c, 18) >= 0);
        /* Mask 0 fills nothing. */
        assert_int_equal(cache_ref(&c, 50, 0, 2, 0, &v), 0);
        assert_int_equal(v.valid, 0);
        assert_int_equal(cache_find(&c, 50), -1);
        /* A single-way mask. */
        assert_int_equal(cache_ref(&c, 51, 0, 2, 0x80, &v), 0);
        assert_int_equal(way_of(&c, 51), 7);
        cache_free(&c);
    }
}

/* Ways past the 64th: only the all-ones mask reaches them; up to 256 ways. */
static void test_mask_wide(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "8192,128,64", &repl_lru); /* one set, 128 ways */
    assert_int_equal(c.all_ways, ALL);
    assert_int_equal(rd(&c, 1, &v), 0);
    assert_int_equal(way_of(&c, 1), 127); /* the last empty entry */
    assert_int_equal(cache_ref(&c, 2, 0, 0, 1ull << 63, &v), 0);
    assert_int_equal(way_of(&c, 2), 63);
    assert_int_equal(cache_ref(&c, 3, 0, 0, 1ull << 63, &v), 0);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, 2);
    assert_int_equal(way_of(&c, 3), 63);
    /* Every low way allowed but not all-ones: ways 64..126 stay out of reach. */
    for (uint64_t b = 10; b < 80; b++) {
        cache_ref(&c, b, 0, 0, ALL >> 1, &v);
        assert_true(way_of(&c, b) < 63);
    }
    assert_int_equal(way_of(&c, 1), 127);
    assert_int_equal(way_of(&c, 3), 63);
    cache_free(&c);
    /* 256 ways, the most a byte-sized way index can name: every way is
     * filled once, from 255 down, and then the true LRU (block 0) goes. */
    mk(&c, "16384,256,64", &repl_lru);
    for (uint64_t b = 0; b < 256; b++) {
        assert_int_equal(rd(&c, b, &v), 0);
        assert_int_equal(v.valid, 0);
        assert_int_equal(way_of(&c, b), 255 - b);
    }
    assert_int_equal(rd(&c, 256, &v), 0);
    assert_int_equal(v.tag, 0);
    assert_int_equal(way_of(&c, 256), 255);
    cache_free(&c);
    /* A 4-way cache: mask bits above the ways do not count as allowing a fill. */
    mk(&c, "64,4,16", &repl_srrip);
    assert_int_equal(cache_ref(&c, 1, 0, 0, ALL << 4, &v), 0);
    assert_int_equal(cache_find(&c, 1), -1);
    cache_free(&c);
}

/* ---- tree PLRU -------------------------------------------------------- */

/* One 4-way set; tree nodes 1 (root), 2 (ways 0-1), 3 (ways 2-3) are bits
 * 1..3 of the set state; a bit set means the victim is on the right.
 *   A..D fill empty ways 3, 2, 1, 0:
 *     touch 3: b1=0 b3=0; touch 2: b1=0 b3=1; touch 1: b1=1 b2=0;
 *     touch 0: b1=1 b2=1                           -> b1 b2 b3 = 1 1 1 (0xe)
 *   E: root right, node 3 right -> way 3 (A); touch 3 -> 0 1 0 (0x4)
 *   F: root left, node 2 right -> way 1 (C);  touch 1 -> 1 0 0 (0x2)
 *   G: root right, node 3 left -> way 2 (B);  touch 2 -> 0 0 1 (0x8)
 *   hit D (way 0): touch 0                      -> 1 1 1 (0xe)
 *   H: way 3 (E); touch 3                       -> 0 1 0 (0x4)
 *   I: way 1 (F)
 * True LRU would have evicted B, not C, for F: the tree is only approximate. */
static void test_plru_sequence(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_plru);
    assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, 0);
    for (uint64_t b = 1; b <= 4; b++) {
        assert_int_equal(rd(&c, b, &v), 0);
        assert_int_equal(way_of(&c, b), 4 - b);
    }
    assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, 0xe);
    static const struct {
        uint64_t block, victim;
        unsigned way;
        uint64_t state;
    } step[] = {
        {5, 1, 3, 0x4}, /* E evicts A */
        {6, 3, 1, 0x2}, /* F evicts C */
        {7, 2, 2, 0x8}, /* G evicts B */
    };
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(rd(&c, step[i].block, &v), 0);
        assert_int_equal(v.valid, 1);
        assert_int_equal(v.tag, step[i].victim);
        assert_int_equal(way_of(&c, step[i].block), step[i].way);
        /* entries never move: entry i is way i */
        assert_int_equal(cache_find(&c, step[i].block), step[i].way);
        assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, step[i].state);
    }
    assert_int_equal(rd(&c, 4, &v), 1);
    assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, 0xe);
    assert_int_equal(rd(&c, 8, &v), 0);
    assert_int_equal(v.tag, 5);
    assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, 0x4);
    assert_int_equal(rd(&c, 9, &v), 0);
    assert_int_equal(v.tag, 6);
    /* An invalidated way is refilled first, whatever the tree says. */
    assert_int_equal(cache_invalidate(&c, 4, &v), 1); /* way 0 */
    assert_int_equal(rd(&c, 10, &v), 0);
    assert_int_equal(v.valid, 0);
    assert_int_equal(way_of(&c, 10), 0);
    cache_free(&c);
}

/* With a mask the walk turns aside from halves with no allowed way. State
 * 0xe (b1 b2 b3 = 1 1 1) points at way 3; with ways 0 and 1 allowed the root
 * must turn left, and node 2 (right) gives way 1. */
static void test_plru_mask(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_plru);
    for (uint64_t b = 1; b <= 4; b++)
        rd(&c, b, &v);
    assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, 0xe);
    assert_int_equal(cache_ref(&c, 5, 0, 0, 0x3, &v), 0);
    assert_int_equal(v.tag, 3); /* C, in way 1 */
    assert_int_equal(way_of(&c, 5), 1);
    /* touch 1: b1=1 b2=0 -> 0xa; now only way 2 allowed: root right (allowed),
     * node 3 points right (way 3, not allowed) -> turns to way 2. */
    assert_int_equal(c.set_state[0] & CACHE_MEMO_KEEP, 0xa);
    assert_int_equal(cache_ref(&c, 6, 0, 0, 0x4, &v), 0);
    assert_int_equal(v.tag, 2); /* B */
    assert_int_equal(way_of(&c, 6), 2);
    cache_free(&c);
    /* 64 ways: the deepest tree, restricted to the last way. */
    mk(&c, "1024,64,16", &repl_plru);
    for (uint64_t b = 0; b < 64; b++)
        rd(&c, b, &v);
    assert_int_equal(cache_ref(&c, 64, 0, 0, 1ull << 63, &v), 0);
    assert_int_equal(way_of(&c, 64), 63);
    assert_int_equal(v.tag, 0); /* way 63 was filled first */
    /* Unrestricted after touching way 63: the tree points at way 0's half. */
    assert_int_equal(rd(&c, 65, &v), 0);
    assert_true(way_of(&c, 65) < 32);
    cache_free(&c);
}

static void test_plru_reject(void **state)
{
    (void)state;
    struct cache c;
    struct err e = {0};
    struct cache_geom g3 = {.size = 3072, .assoc = 3, .line = 64}; /* 16 sets */
    struct cache_geom g128 = {.size = 8192, .assoc = 128, .line = 64};
    struct cache_geom g64 = {.size = 4096, .assoc = 64, .line = 64};
    assert_int_equal(cache_init(&c, "L9", &g3, &repl_plru, &e), -QOSIM_EGEOM);
    assert_int_equal(e.code, -QOSIM_EGEOM);
    assert_substr(e.msg, "L9: policy plru:");
    assert_substr(e.msg, "power-of-two associativity of at most 64");
    assert_null(c.lines);
    e = (struct err){0};
    assert_int_equal(cache_init(&c, "L9", &g128, &repl_plru, &e), -QOSIM_EGEOM);
    assert_substr(e.msg, "at most 64");
    /* The same geometries are fine for the other policies, and 64 ways for PLRU. */
    assert_int_equal(cache_init(&c, "L9", &g3, &repl_lru, &e), 0);
    cache_free(&c);
    assert_int_equal(cache_init(&c, "L9", &g128, &repl_srrip, &e), 0);
    cache_free(&c);
    assert_int_equal(cache_init(&c, "L9", &g64, &repl_plru, &e), 0);
    cache_free(&c);
}

/* ---- SRRIP ------------------------------------------------------------ */

static void assert_rrpv(const struct cache *c, const uint8_t want[4])
{
    for (unsigned w = 0; w < 4; w++)
        if (cache_set(c, 0)[w].rrpv != want[w])
            fail_msg("way %u: rrpv %u, want %u", w, cache_set(c, 0)[w].rrpv, want[w]);
}

/* One 4-way set, entries never move (entry i is way i). RRPVs by way 0..3:
 *   reset                         3 3 3 3
 *   fill A..D (ways 3,2,1,0)      2 2 2 2   D C B A
 *   hit B                         2 2 0 2
 *   E: none at 3, age all once:   3 3 1 3 -> first 3 is way 0 (D); E=2
 *                                 2 3 1 3   E C B A
 *   F: way 1 (C)                  2 2 1 3   E F B A
 *   G: way 3 (A)                  2 2 1 2   E F B G
 *   H: age: 3 3 2 3 -> way 0 (E)  2 3 2 3   H F B G
 *   hit H, F; then I:             0 0 2 3 -> way 3 (G)
 *                                 0 0 2 2   H F B I
 *   J: age: 1 1 3 3 -> way 2 (B)  1 1 2 3   H F J I */
static void test_srrip_sequence(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_srrip);
    assert_rrpv(&c, (const uint8_t[]){3, 3, 3, 3});
    for (uint64_t b = 1; b <= 4; b++)
        rd(&c, b, &v);
    assert_int_equal(way_of(&c, 1), 3);
    assert_int_equal(way_of(&c, 4), 0);
    assert_rrpv(&c, (const uint8_t[]){2, 2, 2, 2});
    assert_int_equal(rd(&c, 2, &v), 1);
    assert_rrpv(&c, (const uint8_t[]){2, 2, 0, 2});
    assert_int_equal(rd(&c, 5, &v), 0);
    assert_int_equal(v.tag, 4);
    assert_int_equal(way_of(&c, 5), 0);
    assert_rrpv(&c, (const uint8_t[]){2, 3, 1, 3});
    assert_int_equal(rd(&c, 6, &v), 0);
    assert_int_equal(v.tag, 3);
    assert_int_equal(way_of(&c, 6), 1);
    assert_rrpv(&c, (const uint8_t[]){2, 2, 1, 3});
    assert_int_equal(rd(&c, 7, &v), 0);
    assert_int_equal(v.tag, 1);
    assert_int_equal(way_of(&c, 7), 3);
    assert_rrpv(&c, (const uint8_t[]){2, 2, 1, 2});
    assert_int_equal(rd(&c, 8, &v), 0);
    assert_int_equal(v.tag, 5);
    assert_rrpv(&c, (const uint8_t[]){2, 3, 2, 3});
    assert_int_equal(rd(&c, 8, &v), 1);
    assert_int_equal(rd(&c, 6, &v), 1);
    assert_rrpv(&c, (const uint8_t[]){0, 0, 2, 3});
    assert_int_equal(rd(&c, 9, &v), 0);
    assert_int_equal(v.tag, 7);
    assert_rrpv(&c, (const uint8_t[]){0, 0, 2, 2});
    assert_int_equal(rd(&c, 10, &v), 0);
    assert_int_equal(v.tag, 2);
    assert_int_equal(way_of(&c, 10), 2);
    assert_rrpv(&c, (const uint8_t[]){1, 1, 2, 3});
    /* Invalidation: distant, and refilled first. */
    assert_int_equal(cache_invalidate(&c, 8, &v), 1); /* way 0 */
    assert_rrpv(&c, (const uint8_t[]){3, 1, 2, 3});
    assert_int_equal(rd(&c, 11, &v), 0);
    assert_int_equal(v.valid, 0);
    assert_int_equal(way_of(&c, 11), 0);
    assert_rrpv(&c, (const uint8_t[]){2, 1, 2, 3});
    cache_free(&c);
}

/* Ageing under a mask touches only the allowed ways. From 0 0 2 2 (H F B I
 * as above, reached directly here), a fill restricted to ways 0 and 1 ages
 * them three times (0 -> 3) and takes way 0, leaving ways 2 and 3 alone. */
static void test_srrip_mask(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, "64,4,16", &repl_srrip);
    for (uint64_t b = 1; b <= 4; b++)
        rd(&c, b, &v); /* 2 2 2 2: D C B A */
    rd(&c, 4, &v);     /* way 0 -> 0 */
    rd(&c, 3, &v);     /* way 1 -> 0 */
    assert_rrpv(&c, (const uint8_t[]){0, 0, 2, 2});
    assert_int_equal(cache_ref(&c, 5, 0, 0, 0x3, &v), 0);
    assert_int_equal(v.tag, 4);
    assert_int_equal(way_of(&c, 5), 0);
    assert_rrpv(&c, (const uint8_t[]){2, 3, 2, 2});
    /* Now way 2 only: ages 2 -> 3 and takes it; way 1, already 3, is not chosen. */
    assert_int_equal(cache_ref(&c, 6, 0, 0, 0x4, &v), 0);
    assert_int_equal(v.tag, 2);
    assert_int_equal(way_of(&c, 6), 2);
    assert_rrpv(&c, (const uint8_t[]){2, 3, 2, 2});
    cache_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geom_parse_good),
        cmocka_unit_test(test_geom_parse_reject),
        cmocka_unit_test(test_geom_check_direct),
        cmocka_unit_test(test_repl_table),
        cmocka_unit_test(test_lru_order),
        cmocka_unit_test(test_lru_cachegrind_trace),
        cmocka_unit_test(test_lru_invalidate),
        cmocka_unit_test(test_owner_dirty_victim),
        cmocka_unit_test(test_insert),
        cmocka_unit_test(test_set_index),
        cmocka_unit_test(test_lru_mask),
        cmocka_unit_test(test_mask_all_policies),
        cmocka_unit_test(test_mask_wide),
        cmocka_unit_test(test_plru_sequence),
        cmocka_unit_test(test_plru_mask),
        cmocka_unit_test(test_plru_reject),
        cmocka_unit_test(test_srrip_sequence),
        cmocka_unit_test(test_srrip_mask),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
