/* Unit tests for sim/mem/mem.c: NUMA nodes of channels with bandwidth
 * timelines.
 *
 * The usual setup: 2 nodes of 4 channels, 16 bytes/tick per node, 64-byte
 * lines, so a channel carries 4 bytes/tick and a line holds it 16 ticks
 * (gap = 16 * 256 = 4096 in 1/256 tick); base latency 100, remote +50.
 * Lines go to channel block % 4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "sim/mem/mem.h"
#include "testlib.h"
#include "util/rng.h"

static const struct mem_cfg STD = {
    .nodes = 2, .channels = 4, .peak = 16, .latency = 100, .remote = 50, .line = 64};

static void mk(struct mem *m, const struct mem_cfg *cfg)
{
    struct err e = {0};
    if (mem_init(m, cfg, &e))
        fail_msg("mem_init: %s", e.msg);
}

static void test_init(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    assert_int_equal(m.node[0].gap, 16 * 256);
    for (unsigned i = 0; i < 8; i++)
        assert_int_equal(m.ch[i].used[0], 0);
    for (unsigned n = 0; n < 2; n++) {
        assert_int_equal(m.stat[n].read_bytes, 0);
        assert_int_equal(m.stat[n].queued, 0);
    }
    mem_free(&m);
    assert_null(m.ch);
    mem_free(&m); /* twice is harmless */

    /* A fractional gap: 64 bytes at 3/2 bytes/tick per channel is 42 2/3
     * ticks, 10922.67 rounded to 10923. */
    struct mem_cfg c = STD;
    c.peak = 3;
    c.channels = 2;
    mk(&m, &c);
    assert_int_equal(m.node[0].gap, 10923);
    mem_free(&m);
    /* Faster than 1/256 tick a line: the finest step there is. */
    c = STD;
    c.peak = 1e9;
    mk(&m, &c);
    assert_int_equal(m.node[0].gap, 1);
    mem_free(&m);
}

static void test_init_reject(void **state)
{
    (void)state;
    static const struct {
        struct mem_cfg c;
        const char *why;
    } bad[] = {
        {{.nodes = 0, .channels = 4, .peak = 16, .line = 64}, "nodes must be at least 1 (got 0)"},
        {{.nodes = 1, .channels = 0, .peak = 16, .line = 64},
         "channels per node must be at least 1 (got 0)"},
        {{.nodes = 1, .channels = 4, .peak = 0, .line = 64},
         "peak must be a positive number of bytes per tick (got 0)"},
        {{.nodes = 1, .channels = 4, .peak = -5, .line = 64}, "(got -5)"},
        {{.nodes = 1, .channels = 4, .peak = NAN, .line = 64}, "peak must be a positive"},
        {{.nodes = 1, .channels = 4, .peak = INFINITY, .line = 64}, "peak must be a positive"},
        {{.nodes = 1, .channels = 4, .peak = 16, .line = 0}, "line size must be at least 1"},
        {{.nodes = 1, .channels = 4, .peak = 1e-30, .line = 64}, "is too low"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct mem m;
        struct err e = {0};
        int rc = mem_init(&m, &bad[i].c, &e);
        if (rc != -QOSIM_EINVAL)
            fail_msg("case %zu: returned %d, want -QOSIM_EINVAL", i, rc);
        assert_int_equal(e.code, -QOSIM_EINVAL);
        assert_substr(e.msg, "memory: ");
        assert_substr(e.msg, bad[i].why);
        assert_null(m.ch);
        assert_null(m.stat);
        mem_free(&m);
        assert_int_equal(mem_init(&m, &bad[i].c, NULL), -QOSIM_EINVAL);
    }
}

/* Unloaded: the base latency; a remote line adds the penalty; each read is
 * counted on the line's node. */
static void test_unloaded(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    assert_int_equal(mem_read(&m, 0, 0, 7, 1000), 100);
    assert_int_equal(mem_read(&m, 1, 0, 8, 1000), 150); /* from node 1: remote */
    assert_int_equal(mem_read(&m, 0, 1, 9, 1000), 150);
    assert_int_equal(mem_read(&m, 1, 1, 10, 1000), 100);
    assert_int_equal(m.stat[0].read_bytes, 128);
    assert_int_equal(m.stat[1].read_bytes, 128);
    /* Widely spaced reads of one block never queue. */
    for (uint64_t t = 2000; t < 200000; t += 17)
        assert_int_equal(mem_read(&m, 0, 0, 5, t), 100);
    assert_int_equal(m.stat[0].queued, 0);
    assert_int_equal(m.stat[1].queued, 0);
    mem_free(&m);
}

/* Hand-derived queueing on one channel; writes occupy it too. STD: 64-byte
 * lines take 16 ticks on a channel, so a bucket of 8 slots spans 128 ticks
 * (bucket 8 is [1024, 1152)). */
static void test_queueing(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    /* Nine reads of channel 0 at 1024: the first eight take the bucket's
     * slots 16 ticks apart, the ninth the first slot of the next bucket. */
    for (uint64_t k = 0; k < 8; k++)
        assert_int_equal(mem_read(&m, 0, 0, 4 * k, 1024), 100 + 16 * k);
    assert_int_equal(mem_read(&m, 0, 0, 32, 1024), 100 + 128);
    assert_int_equal(m.stat[0].queued, 16 * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7) + 128);
    /* From the other node: the same wait plus the penalty (bucket 9, slot 1). */
    assert_int_equal(mem_read(&m, 1, 0, 36, 1152), 100 + 50 + 16);
    /* A slot earlier in its bucket than the arrival costs no wait: bucket
     * 10, slot 0 (1280) for a read at 1300. */
    assert_int_equal(mem_read(&m, 0, 0, 40, 1300), 100);
    /* Writes take slots too: seven writes fill the rest of bucket 10, and a
     * read at 1400 goes to bucket 11, slot 0 at 1408. */
    for (int k = 0; k < 7; k++)
        mem_write(&m, 0, 44, 1300);
    assert_int_equal(m.stat[0].write_bytes, 7 * 64);
    assert_int_equal(mem_read(&m, 0, 0, 48, 1400), 108);
    /* Node 1's channel 0 is a different channel. */
    assert_int_equal(mem_read(&m, 1, 1, 0, 1024), 100);
    assert_int_equal(m.stat[1].queued, 0);
    mem_free(&m);
    /* A fractional gap: slots are 21 1/3 ticks apart, waits rounded up. */
    struct mem_cfg c = STD;
    c.channels = 1;
    c.peak = 3;
    mk(&m, &c);
    assert_int_equal(mem_read(&m, 0, 0, 0, 0), 100);
    assert_int_equal(mem_read(&m, 0, 0, 1, 0), 122);  /* 21.33 -> 22 */
    assert_int_equal(mem_read(&m, 0, 0, 2, 0), 143);  /* 42.67 -> 43 */
    assert_int_equal(mem_read(&m, 0, 0, 3, 10), 154); /* 64 - 10 */
    mem_free(&m);
}

/* Sequential lines take the channels in turn: four at once take slot 0 of
 * their channels, the fifth slot 1 of the first. */
static void test_interleave(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    for (uint64_t b = 40; b < 44; b++)
        assert_int_equal(mem_read(&m, 0, 0, b, 512), 100);
    assert_int_equal(m.stat[0].queued, 0);
    for (unsigned ch = 0; ch < 4; ch++)
        assert_int_equal(m.ch[ch].used[4], 1);
    assert_int_equal(mem_read(&m, 0, 0, 44, 512), 116);
    mem_free(&m);
}

/* Demand above peak: sequential reads at twice the peak. The node carries
 * exactly its peak, and latency grows as the queues do. */
static void test_saturation(void **state)
{
    (void)state;
    static const double peaks[] = {16, 3, 10};
    for (unsigned p = 0; p < 3; p++) {
        struct mem m;
        struct mem_cfg c = STD;
        c.peak = peaks[p];
        mk(&m, &c);
        double gap = 64.0 * 4 / c.peak;       /* ticks a line holds a channel */
        double spacing = 64.0 / (2 * c.peak); /* twice the peak */
        uint64_t end = 0, first = 0, lat = 0;
        unsigned n = 20000;
        for (unsigned i = 0; i < n; i++) {
            uint64_t now = (uint64_t)(i * spacing);
            lat = mem_read(&m, 0, 0, i, now);
            assert_true(lat >= 100);
            if (i == 0)
                first = lat;
            uint64_t done = now + (lat - 100) + (uint64_t)ceil(gap);
            if (done > end)
                end = done;
        }
        double got = 64.0 * n / (double)end;
        assert_near(got, c.peak, 0.02);
        assert_int_equal(first, 100);
        /* The queue grows by half the demand: the last waits about half
         * the run. */
        assert_true(lat > 100 + (uint64_t)(0.4 * n * spacing));
        assert_true(m.stat[0].queued > 0);
        mem_free(&m);
    }
}

/* Demand below peak: sequential reads at half the peak never queue. */
static void test_below_peak(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    /* 64 bytes every 8 ticks: 8 bytes/tick, half of 16. */
    for (unsigned i = 0; i < 20000; i++)
        assert_int_equal(mem_read(&m, 0, 0, i, 1000 + 8ull * i), 100);
    assert_int_equal(m.stat[0].queued, 0);
    assert_int_equal(m.stat[0].read_bytes, 20000 * 64);
    /* ...as do reads and writes together, each stream a quarter of it. */
    for (unsigned i = 0; i < 20000; i++) {
        uint64_t now = 1000000 + 8ull * i;
        if (i % 2)
            mem_write(&m, 1, i, now);
        else
            assert_int_equal(mem_read(&m, 0, 1, i, now), 150);
    }
    assert_int_equal(m.stat[1].queued, 0);
    assert_int_equal(m.stat[1].write_bytes, 10000 * 64);
    mem_free(&m);
}

/* Time running backwards (cores in quanta, limiters holding requests
 * back): a read is booked in its own time's bucket, never waits for
 * transfers booked later in time, never gets less than the base latency,
 * and the node still carries exactly its peak. */
static void test_backwards(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    /* A request booked ahead (a limiter held it back to 5000) does not make
     * an earlier one wait: 4000 has its own bucket. */
    assert_int_equal(mem_read(&m, 0, 0, 0, 5000), 100);
    assert_int_equal(mem_read(&m, 0, 0, 4, 4000), 100);
    /* Far older than the timeline keeps (4096 buckets of 128 ticks): the
     * oldest bucket it remembers, never a negative wait. */
    assert_int_equal(mem_read(&m, 0, 0, 8, 1000000), 100);
    assert_true(mem_read(&m, 0, 0, 12, 10) >= 100);
    mem_free(&m);
    mk(&m, &STD);
    /* Two cores running in turn for quanta of 1000 ticks, each reading at
     * the peak (random lines): together twice it, and the node still carries
     * its peak. */
    uint64_t end = 0;
    struct rng r;
    rng_seed(&r, 1, 0);
    unsigned n = 0;
    for (uint64_t q = 10000; q < 210000; q += 1000)
        for (unsigned core = 0; core < 2; core++) /* the second behind the first */
            for (uint64_t t = q; t < q + 1000; t += 4) {
                uint64_t lat = mem_read(&m, 0, 0, rng_next(&r) % 1024, t);
                assert_true(lat >= 100);
                if (t + lat - 100 + 16 > end)
                    end = t + lat - 100 + 16;
                n++;
            }
    assert_near(64.0 * n / (double)(end - 10000), 16, 0.05);
    mem_free(&m);
}

/* A node or requester the memory lacks: the latency alone, nothing
 * booked or counted. */
static void test_bad_node(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    assert_int_equal(mem_read(&m, 0, 2, 0, 10), 150);
    mem_write(&m, 7, 0, 10);
    for (unsigned i = 0; i < 8; i++)
        assert_int_equal(m.ch[i].used[0], 0);
    assert_int_equal(m.stat[0].read_bytes + m.stat[1].read_bytes, 0);
    mem_free(&m);
}

/* Nodes of their own (slow memory): STD's two DRAM nodes and a slow node 2
 * of 2 channels, 4 bytes/tick and latency 300 attached to node 0. Each node
 * keeps its own latency, channels and peak; the remote penalty goes by the
 * slow node's home. */
static const struct mem_node_cfg NODES[3] = {
    {.channels = 4, .peak = 16, .latency = 100, .home = 0},
    {.channels = 4, .peak = 16, .latency = 100, .home = 1},
    {.channels = 2, .peak = 4, .latency = 300, .home = 0},
};

static void test_per_node(void **state)
{
    (void)state;
    struct mem m;
    struct mem_cfg c = STD;
    c.nodes = 3;
    c.node = NODES;
    mk(&m, &c);
    assert_null(m.cfg.node); /* not kept: the caller's array may go */
    assert_int_equal(m.node[0].gap, 16 * 256);
    assert_int_equal(m.node[2].gap, 32 * 256); /* 64 bytes at 2 bytes/tick per channel */
    assert_int_equal(m.node[2].channels, 2);
    assert_int_equal(mem_read(&m, 0, 2, 0, 1000), 300); /* from its home */
    assert_int_equal(mem_read(&m, 1, 2, 1, 1000), 350); /* from the other node */
    assert_int_equal(mem_read(&m, 0, 0, 0, 1000), 100);
    assert_int_equal(mem_read(&m, 1, 0, 1, 1000), 150);
    /* Its channels are its own: node 0's are untouched by node 2's reads. */
    assert_int_equal(m.stat[2].read_bytes, 128);
    assert_int_equal(m.ch[0].used[1000 * 256 / (16 * 256 * MEM_SLOTS)], 1);
    mem_free(&m);
    /* At twice its peak, the slow node carries its own peak (within 5%),
     * while node 0 at the same demand is below its peak and never queues. */
    mk(&m, &c);
    uint64_t end = 0, n = 20000;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t now = 8 * i; /* 8 bytes/tick asked */
        uint64_t lat = mem_read(&m, 0, 2, i, now);
        assert_true(lat >= 300);
        if (now + lat - 300 + 32 > end)
            end = now + lat - 300 + 32;
        assert_int_equal(mem_read(&m, 0, 0, i, now), 100);
    }
    assert_near(64.0 * n / (double)end, 4, 0.05);
    assert_true(m.stat[2].queued > 0);
    assert_int_equal(m.stat[0].queued, 0);
    /* Writes report the wait for their channel; the node's queue is long. */
    assert_true(mem_write(&m, 2, 0, 8 * n) > 0);
    assert_int_equal(mem_write(&m, 1, 0, 8 * n), 0);
    mem_free(&m);
    /* A node's own configuration is checked as the common one is, and names it. */
    struct mem_node_cfg bad[3] = {NODES[0], NODES[1], NODES[2]};
    struct err e = {0};
    bad[2].channels = 0;
    c.node = bad;
    assert_int_equal(mem_init(&m, &c, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "memory: node 2: channels per node must be at least 1 (got 0)");
    bad[2] = NODES[2];
    bad[2].peak = 0;
    assert_int_equal(mem_init(&m, &c, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "memory: node 2: peak must be a positive");
    bad[2] = NODES[2];
    bad[2].home = 3;
    assert_int_equal(mem_init(&m, &c, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "memory: node 2's home 3 is no node");
    assert_null(m.ch);
    assert_null(m.node);
}

/* Reads served first (mem_read_prio: admitted within a CBQRI
 * reservation), hand-derived on channel 0 of STD (buckets of 128 ticks;
 * bucket 8 is [1024, 1152)). */
static void test_prio(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    /* 32 reads at 1024 fill buckets 8-11; a read served first is not
     * behind them: it takes slot 0 of bucket 8, the next slot 1. */
    for (uint64_t k = 0; k < 32; k++)
        assert_int_equal(mem_read(&m, 0, 0, 4 * k, 1024), 100 + 16 * k);
    assert_int_equal(mem_read_prio(&m, 0, 0, 128, 1024, 1), 100);
    assert_int_equal(mem_read_prio(&m, 1, 0, 132, 1024, 1), 100 + 50 + 16);
    assert_int_equal(m.ch[0].prio[8], 2);
    /* The two lines they displaced went on to bucket 12 (free), so the
     * next other read waits two slots longer: bucket 12, slot 2, 1568. */
    assert_int_equal(m.ch[0].used[8], 8);
    assert_int_equal(m.ch[0].used[12], 2);
    assert_int_equal(mem_read(&m, 0, 0, 136, 1024), 100 + 1568 - 1024);
    /* Six more fill bucket 8's slots for them; the ninth goes to bucket 9,
     * slot 0, behind them only. */
    for (uint64_t k = 2; k < 8; k++)
        assert_int_equal(mem_read_prio(&m, 0, 0, 140 + 4 * k, 1024, 1), 100 + 16 * k);
    assert_int_equal(mem_read_prio(&m, 0, 0, 172, 1024, 1), 100 + 128);
    assert_int_equal(m.ch[0].used[12], 8);
    assert_int_equal(m.ch[0].used[13], 2);
    assert_int_equal(m.stat[0].prio_bytes, 9 * 64);
    assert_int_equal(m.stat[0].prio_queued, 16 * (1 + 2 + 3 + 4 + 5 + 6 + 7) + 128);
    assert_int_equal(m.stat[0].read_bytes, 42 * 64);
    /* In a bucket with room it displaces nothing: bucket 20 is empty. */
    assert_int_equal(mem_read_prio(&m, 0, 0, 0, 2560, 1), 100);
    assert_int_equal(m.ch[0].used[20], 1);
    assert_int_equal(m.ch[0].used[21], 0);
    /* prio 0 is mem_read. */
    assert_int_equal(mem_read_prio(&m, 0, 0, 4, 2560, 0), 116);
    assert_int_equal(m.ch[0].prio[20], 1);
    /* Writes are displaced as reads are: bucket 30 full of writes. */
    for (int k = 0; k < 8; k++)
        mem_write(&m, 0, 0, 3840);
    assert_int_equal(mem_read_prio(&m, 0, 0, 0, 3840, 1), 100);
    assert_int_equal(m.ch[0].used[31], 1);
    mem_free(&m);
}

/* Under saturation by other reads and writes (each twice the peak, in
 * turn), a stream served first at a quarter of the peak never queues
 * longer than a bucket, while the others' queue grows; the node still
 * carries exactly its peak. */
static void test_prio_saturated(void **state)
{
    (void)state;
    struct mem m;
    mk(&m, &STD);
    uint64_t end = 0, maxp = 0, lat = 0, n = 0;
    for (unsigned i = 0; i < 40000; i++) {
        uint64_t now = 2ull * i; /* 64 bytes every 2 ticks: 32 bytes/tick */
        if (i % 2)
            mem_write(&m, 0, i, now);
        else
            lat = mem_read(&m, 0, 0, i, now);
        n++;
        if (now + lat - 100 + 16 > end)
            end = now + lat - 100 + 16;
        if (i % 8 == 0) { /* 64 bytes every 16 ticks: 4 bytes/tick */
            uint64_t p = mem_read_prio(&m, 0, 0, i / 8, now, 1);
            assert_true(p >= 100);
            if (p > maxp)
                maxp = p;
            n++;
        }
    }
    assert_true(maxp <= 100 + 128);
    assert_true(lat > 100 + 20000); /* the others' queue: about half the run */
    /* Every line, displaced ones included, done by the end of the last
     * read's slot: the channels carried the peak. */
    assert_near(64.0 * (double)n / (double)end, 16.0, 0.02);
    assert_int_equal(m.stat[0].prio_bytes, 5000 * 64);
    mem_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),       cmocka_unit_test(test_init_reject),
        cmocka_unit_test(test_unloaded),   cmocka_unit_test(test_queueing),
        cmocka_unit_test(test_interleave), cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_below_peak), cmocka_unit_test(test_backwards),
        cmocka_unit_test(test_bad_node),   cmocka_unit_test(test_per_node),
        cmocka_unit_test(test_prio),       cmocka_unit_test(test_prio_saturated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
