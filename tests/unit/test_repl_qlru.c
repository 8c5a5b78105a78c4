/* Unit tests for the QLRU family (sim/cache/repl_qlru.c): names, the H, M,
 * R and U rules step by step in one set (ages written way 0..n-1, derived
 * by hand from the definitions in repl_qlru.c's header), masks, and the
 * effect that makes the measured L3 policies matter for CAT: a cyclic
 * working set larger than a class's ways keeps a part of it resident. */
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

static void mk(struct cache *c, uint64_t size, uint32_t assoc, const char *policy)
{
    struct cache_geom g = {.size = size, .assoc = assoc, .line = 64};
    struct err e = {0};
    const struct repl_ops *r = repl_find(policy);
    assert_non_null(r);
    assert_int_equal(cache_init(c, "T", &g, r, &e), 0);
}

/* Ages of set 0, way by way, as a string of digits. */
static void ages(const struct cache *c, const char *want)
{
    char got[65];
    unsigned n = c->g.assoc;
    for (unsigned i = 0; i < n; i++)
        got[i] = (char)('0' + cache_set(c, 0)[i].rrpv);
    got[n] = 0;
    assert_string_equal(got, want);
}

static int rd(struct cache *c, uint64_t b, uint64_t mask, struct cache_victim *v)
{
    return cache_ref(c, b, 0, 0, mask, v);
}

/* Block number of the k-th block of set 0 in a cache of `sets` sets. */
#define B(k) ((uint64_t)(k)*sets)

static void test_names(void **state)
{
    (void)state;
    const struct repl_ops *a = repl_find("qlru_h00_m1_r2_u1");
    assert_non_null(a);
    assert_string_equal(a->name, "qlru_h00_m1_r2_u1");
    assert_ptr_equal(repl_find("qlru_h00_m1_r2_u1"), a); /* one table per name */
    assert_non_null(repl_find("qlru_h21_m2_r0_u0_umo"));
    assert_non_null(repl_find("qlru_h11_m1_r1_u2")); /* Ivy Bridge's L3 */
    assert_non_null(repl_find("qlru_h11_mr31_r0_u0"));
    assert_non_null(repl_find("adaptive_qlru_h11_m1_r0_u0"));
    /* R0 and R2 need an age 3 that U2 and U3 do not guarantee. */
    assert_null(repl_find("qlru_h11_m1_r0_u2"));
    assert_null(repl_find("qlru_h11_m1_r2_u3"));
    assert_null(repl_find("qlru_h12_m1_r0_u0"));   /* no such promotion */
    assert_null(repl_find("qlru_h11_m4_r0_u0"));   /* ages are 0..3 */
    assert_null(repl_find("qlru_h11_mr33_r0_u0")); /* a random insertion of two ages */
    assert_null(repl_find("qlru_h11_m1_r3_u0"));
    assert_null(repl_find("qlru_h11_m1_r0_u0_"));
    assert_null(repl_find("qlru_h11_m1_r0"));
    assert_null(repl_find("QLRU_H11_M1_R0_U0"));
    /* A duel's base is deterministic; its opponent is its MR3 variant. */
    assert_null(repl_find("adaptive_qlru_h11_mr31_r0_u0"));
    assert_null(repl_find("adaptive_lru"));
}

/* Skylake's L2 policy, QLRU_H00_M1_R2_U1, in one 4-way set. */
static void test_h00_m1_r2_u1(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    const uint32_t sets = 4;
    mk(&c, sets * 4 * 64, 4, "qlru_h00_m1_r2_u1");
    ages(&c, "3333");
    /* R2: empty ways from the last. A fills way 3 at age 1; U1's max over
     * the others is 3: nothing ages. */
    assert_int_equal(rd(&c, B(1), ALL, &v), 0);
    ages(&c, "3331");
    assert_int_equal(rd(&c, B(2), ALL, &v), 0);
    assert_int_equal(rd(&c, B(3), ALL, &v), 0);
    ages(&c, "3111");
    /* D fills way 0; the others' max is 1: they age by 2, D stays 1. */
    assert_int_equal(rd(&c, B(4), ALL, &v), 0);
    ages(&c, "1333");
    /* E: the first age 3 is way 1 (C, the second fill). */
    assert_int_equal(rd(&c, B(5), ALL, &v), 0);
    assert_int_equal(v.valid, 1);
    assert_int_equal(v.tag, B(3));
    ages(&c, "1133");
    /* A hit on D (way 0): H00 makes it 0; the others' max is 3. */
    assert_int_equal(rd(&c, B(4), ALL, &v), 1);
    ages(&c, "0133");
    cache_free(&c);
}

/* Coffee Lake's L3 fixed policy, QLRU_H11_M1_R0_U0, and a mask. */
static void test_h11_m1_r0_u0_mask(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    const uint32_t sets = 4;
    mk(&c, sets * 4 * 64, 4, "qlru_h11_m1_r0_u0");
    /* R0: empty ways from the first. After four fills all are 1, and U0
     * adds 3 - 1 to every age. */
    for (unsigned k = 1; k <= 4; k++)
        assert_int_equal(rd(&c, B(k), ALL, &v), 0);
    ages(&c, "3333");
    /* H11: 3 -> 1 on a hit; a 3 remains, no ageing. */
    assert_int_equal(rd(&c, B(1), ALL, &v), 1);
    assert_int_equal(rd(&c, B(2), ALL, &v), 1);
    ages(&c, "1133");
    /* E may fill only ways 0 and 1: neither is 3, so those two age by 2
     * (not the others) and the first of them, A, goes. */
    assert_int_equal(rd(&c, B(5), 0x3, &v), 0);
    assert_int_equal(v.tag, B(1));
    assert_int_equal(cache_find(&c, B(5)), 0);
    ages(&c, "1333");
    /* A mask with no way of age 3 cannot pick a way it may not use. */
    assert_int_equal(rd(&c, B(6), 0x1, &v), 0);
    assert_int_equal(v.tag, B(5));
    assert_int_equal(cache_find(&c, B(6)), 0);
    cache_free(&c);
}

/* U2 (Ivy Bridge): +1 to every age when none is 3; R1: way 0 when none is 3. */
static void test_h11_m1_r1_u2(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    const uint32_t sets = 2;
    mk(&c, sets * 2 * 64, 2, "qlru_h11_m1_r1_u2");
    assert_int_equal(rd(&c, B(1), ALL, &v), 0);
    ages(&c, "13");
    assert_int_equal(rd(&c, B(2), ALL, &v), 0);
    ages(&c, "22"); /* both 1, none 3: all + 1 */
    assert_int_equal(rd(&c, B(2), ALL, &v), 1);
    ages(&c, "32"); /* H11 2 -> 1, then none is 3: all + 1 */
    assert_int_equal(rd(&c, B(3), ALL, &v), 0);
    assert_int_equal(v.tag, B(1)); /* the age-3 way */
    ages(&c, "23");                /* C at 1, none 3: all + 1 */
    cache_free(&c);
}

/* MRab: a fill in 16 at b, the others at a; deterministic per cache. */
static void test_random_insertion(void **state)
{
    (void)state;
    struct cache c;
    struct cache_victim v;
    mk(&c, 1024 * 4 * 64, 4, "qlru_h11_mr31_r0_u0");
    unsigned at1 = 0, n = 1024;
    for (unsigned s = 0; s < n; s++) { /* one fill per set, into way 0 */
        assert_int_equal(cache_ref(&c, s, 0, 0, ALL, &v), 0);
        at1 += cache_set(&c, s)[0].rrpv == 1;
    }
    /* 1/16 of 1024, from a uniform generator: 64 expected, 40..90 allowed. */
    assert_in_range(at1, 40, 90);
    unsigned again = 0;
    cache_reset(&c);
    for (unsigned s = 0; s < n; s++) {
        cache_ref(&c, s, 0, 0, ALL, &v);
        again += cache_set(&c, s)[0].rrpv == 1;
    }
    assert_int_equal(again, at1); /* reset restarts the generator */
    cache_free(&c);
}

/* Misses per pass of an 8 MiB buffer read over and over in a 22 MiB
 * 11-way L3 (2 MiB a way, 32,768 sets) by a class with `ways` ways. */
static double cyclic_miss(const char *policy, unsigned ways)
{
    struct cache c;
    struct cache_victim v;
    mk(&c, 22ull << 20, 11, policy);
    uint64_t lines = (8ull << 20) / 64, miss = 0;
    const unsigned warm = 12, passes = 4;
    for (unsigned p = 0; p < warm + passes; p++)
        for (uint64_t b = 0; b < lines; b++)
            if (!cache_ref(&c, b, 0, 0, (1ull << ways) - 1, &v) && p >= warm)
                miss++;
    if (!strncmp(policy, "adaptive", 8))
        assert_true(c.psel > 511 || ways >= 4 || ways == 1); /* the MR3 side won */
    cache_free(&c);
    return (double)miss / (double)(passes * lines);
}

/* The CAT cliff: under LRU the 4 lines per set of the buffer fit
 * 4 ways and miss every time in 3, 2 or 1. Under the measured adaptive L3
 * policy the followers use thrash-resistant insertion (age 3, and 1 in 16
 * at age 1): a line inserted at 1 stays while the lines at 3 churn through
 * one way, so k ways keep k - 1 of the 4 lines and a pass misses
 * (4 - (k - 1)) / 4: 0.50 at 3 ways, 0.75 at 2, 1 at 1 (one way: the only
 * victim is the line just filled). Leader sets (32 of 1024 use the base
 * policy and miss every time) add 1/64 of (1 - that) at most. */
static void test_cyclic_curve(void **state)
{
    (void)state;
    assert_true(cyclic_miss("lru", 4) == 0.0);
    assert_true(cyclic_miss("lru", 3) == 1.0);
    assert_true(cyclic_miss("lru", 1) == 1.0);
    const char *a = "adaptive_qlru_h11_m1_r0_u0";
    assert_true(cyclic_miss(a, 4) == 0.0);
    double m3 = cyclic_miss(a, 3), m2 = cyclic_miss(a, 2), m1 = cyclic_miss(a, 1);
    if (m3 < 0.49 || m3 > 0.53 || m2 < 0.74 || m2 > 0.77 || m1 != 1.0)
        fail_msg("3/2/1 ways: %.4f %.4f %.4f; expected 0.50, 0.75, 1", m3, m2, m1);
    /* The deterministic base policy alone is FIFO-like on a cycle: a cliff. */
    assert_true(cyclic_miss("qlru_h11_m1_r0_u0", 3) == 1.0);
}

/* The repeat-hit memo (repl.h) is exact: a cache that serves memo'd hits
 * without the policy and one that calls the policy on every hit see the
 * same hits, victims, ages and tree bits, over a random run with masks. */
static void test_memo_exact(void **state)
{
    (void)state;
    const char *pol[] = {"plru", "qlru_h00_m1_r2_u1", "qlru_h11_m1_r0_u0", "qlru_h21_m2_r0_u0_umo",
                         "adaptive_qlru_h11_m1_r0_u0"};
    for (unsigned p = 0; p < 5; p++) {
        struct cache a, b;
        mk(&a, 64 * 8 * 64, 8, pol[p]);
        mk(&b, 64 * 8 * 64, 8, pol[p]);
        assert_int_equal(a.memo, 1);
        b.memo = 0;
        uint64_t x = 12345, memo_hits = 0;
        for (unsigned k = 0; k < 200000; k++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            /* Mostly repeats of a few hot lines, some sweeps, some masks. */
            uint64_t blk = (x >> 33) % ((x >> 20) & 1 ? 16 : 1024);
            uint64_t mask = (x >> 40) & 3 ? ALL : (x >> 45) & 0xff;
            struct cache_victim va, vb;
            uint32_t s = cache_index(&a, blk);
            uint64_t m = a.set_state[s] >> CACHE_MEMO_SHIFT;
            memo_hits += m && cache_set(&a, s)[m - 1].tag == blk;
            int ha = cache_ref(&a, blk, 0, 0, mask, &va), hb = cache_ref(&b, blk, 0, 0, mask, &vb);
            assert_int_equal(ha, hb);
            assert_int_equal(va.valid, vb.valid);
            if (va.valid)
                assert_int_equal(va.tag, vb.tag);
        }
        for (uint64_t i = 0; i < (uint64_t)a.sets * 8; i++) {
            assert_int_equal(a.lines[i].tag, b.lines[i].tag);
            assert_int_equal(a.lines[i].rrpv, b.lines[i].rrpv);
        }
        for (uint32_t s = 0; s < a.sets; s++)
            assert_int_equal(a.set_state[s] & CACHE_MEMO_KEEP, b.set_state[s] & CACHE_MEMO_KEEP);
        assert_true(memo_hits > 10000); /* the memo was used */
        cache_free(&a);
        cache_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_h00_m1_r2_u1),
        cmocka_unit_test(test_h11_m1_r0_u0_mask),
        cmocka_unit_test(test_h11_m1_r1_u2),
        cmocka_unit_test(test_random_insertion),
        cmocka_unit_test(test_cyclic_curve),
        cmocka_unit_test(test_memo_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
