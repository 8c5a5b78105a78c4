/* Unit tests for sim/cpu/bpred.c, the gshare branch predictor: the counts of
 * mispredictions follow from the 2-bit counters and the 12-bit global
 * history by hand (bpred.h), never from running the model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cpu/bpred.h"

static struct bpred B;

static int setup(void **state)
{
    (void)state;
    bpred_init(&B);
    return 0;
}

/* Runs a loop branch at ip taken n - 1 times, then not: mispredictions. */
static unsigned loop(uint64_t ip, unsigned n)
{
    unsigned miss = 0;
    for (unsigned i = 1; i <= n; i++)
        miss += !bpred_branch(&B, ip, i < n);
    return miss;
}

static void test_always_taken_from_reset(void **state)
{
    (void)state;
    /* Counters start weakly not taken and the history at 0: the first 12
     * branches each meet a new history (1, 11, 111, ...), so a new counter,
     * and mispredict; the 13th has the full history 0xfff, a fresh counter
     * too; from then on that counter says taken. */
    for (unsigned i = 0; i < 13; i++) {
        assert_false(bpred_predict(&B, 0x401000));
        assert_false(bpred_branch(&B, 0x401000, 1));
    }
    for (unsigned i = 0; i < 1000; i++)
        assert_true(bpred_branch(&B, 0x401000, 1));
    assert_int_equal(B.branches, 1013);
    assert_int_equal(B.miss, 13);
    assert_int_equal(B.hist, 0xfff);
}

static void test_long_loop(void **state)
{
    (void)state;
    /* 100 iterations, longer than the history: by the third run the twelve
     * histories after an exit are trained taken, the all-taken history is
     * saturated, and the exit is mispredicted, once per run (as a 2-bit
     * counter per branch would: Hennessy & Patterson 3.3). */
    for (unsigned r = 0; r < 3; r++)
        loop(0x401000, 100);
    for (unsigned r = 0; r < 10; r++) {
        for (unsigned i = 1; i < 100; i++)
            assert_true(bpred_branch(&B, 0x401000, 1));
        assert_true(bpred_predict(&B, 0x401000)); /* the exit looks like the rest */
        assert_false(bpred_branch(&B, 0x401000, 0));
    }
}

static void test_short_loop(void **state)
{
    (void)state;
    /* 5 iterations fit in the 12-bit history: each of the 5 positions in
     * the pattern TTTTN has a history of its own, and once trained the
     * exit is predicted too: no misprediction at all. A per-address 2-bit
     * counter would still miss every exit. */
    for (unsigned r = 0; r < 10; r++)
        loop(0x401000, 5);
    uint64_t before = B.miss;
    for (unsigned r = 0; r < 20; r++)
        assert_int_equal(loop(0x401000, 5), 0);
    assert_int_equal(B.miss, before);
    /* Alternating outcomes likewise (two histories, 0xaaa and 0x555). */
    for (unsigned i = 0; i < 40; i++)
        bpred_branch(&B, 0x402000, i & 1);
    for (unsigned i = 0; i < 100; i++)
        assert_true(bpred_branch(&B, 0x402000, i & 1));
}

static void test_counters_saturate(void **state)
{
    (void)state;
    /* Whatever the sequence, the counters stay 2-bit and the prediction the
     * function returns is the one bpred_predict gives before the update. */
    uint64_t x = 88172645463325252ull;
    for (unsigned i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t ip = 0x400000 + (x & 0x3ff) * 4;
        int taken = (x >> 20) % 3 != 0;
        int pred = bpred_predict(&B, ip);
        assert_int_equal(bpred_branch(&B, ip, taken), pred == taken);
    }
    for (unsigned i = 0; i < BPRED_SIZE; i++)
        assert_in_range(B.ctr[i], 0, 3);
    assert_true(B.hist < BPRED_SIZE);
    assert_int_equal(B.branches, 100000);
}

static void test_deterministic(void **state)
{
    (void)state;
    struct bpred a, b;
    bpred_init(&a);
    bpred_init(&b);
    for (unsigned i = 0; i < 5000; i++) {
        uint64_t ip = 0x400000 + (i * 2654435761u) % 4096;
        int taken = (i * 40503u) % 7 < 4;
        assert_int_equal(bpred_branch(&a, ip, taken), bpred_branch(&b, ip, taken));
    }
    assert_memory_equal(&a, &b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_always_taken_from_reset, setup),
        cmocka_unit_test_setup(test_long_loop, setup),
        cmocka_unit_test_setup(test_short_loop, setup),
        cmocka_unit_test_setup(test_counters_saturate, setup),
        cmocka_unit_test_setup(test_deterministic, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
