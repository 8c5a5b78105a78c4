/* DDIO's "leaky DMA" as the ring outgrows the I/O ways (issue 23): on
 * intel-xeon-skx (a sliced, adaptive-policy L3) the share of a receive
 * ring's lines still in the L3 when they are read falls gradually as the
 * DDIO ways shrink; on one unsliced LRU L3 of the same size (as intel-xeon
 * had before issue 23, written here) it is a cliff.
 *
 * The experiment is the device-side one of Farshin et al., "Reexamining
 * Direct Cache Access to Optimize I/O Intensive Applications for
 * Multi-hundred-gigabit Networks", USENIX ATC 2020 (the PCIe read hit rate
 * of a NIC forwarding what it received), in its worst case, the ring full:
 * every line of a 4 MiB ring is written by DMA, and read back by the
 * device just before it is written again, a whole ring later. IIO_LLC_WAYS
 * is set to the top 2, 3, 4 and 5 ways. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/mach.h"
#include "testlib.h"

static struct mach M;

static void build(const char *name)
{
    struct plat p;
    struct err e = {0};
    assert_int_equal(plat_load(&p, name, &e), 0);
    assert_int_equal(mach_init(&M, &p, 1, &e), 0);
}

/* An L3 of intel-xeon's geometry as it was before issue 23: 11 MiB, 11
 * ways, one slice, LRU, DDIO in the top two ways; inclusive (it was "nine":
 * the ring is written and read by DMA only, so the L2s never hold it and
 * the inclusion makes no difference here). The rest is trimmed to one
 * socket of two cores, which the ring does not touch. */
static const char unsliced_lru[] = "name: unsliced-lru\n"
                                   "vendor: intel\n"
                                   "topology: {sockets: 1, modules: 2}\n"
                                   "core: {frequency: 2.2GHz, cpi: 0.5, mlp: 10}\n"
                                   "caches:\n"
                                   "  L1I: {size: 32K, ways: 8, latency: 4}\n"
                                   "  L1D: {size: 32K, ways: 8, latency: 4}\n"
                                   "  L2: {size: 1M, ways: 16, latency: 14}\n"
                                   "  L3:\n"
                                   "    size: 11M\n"
                                   "    ways: 11\n"
                                   "    latency: 50\n"
                                   "    shared_by: domain\n"
                                   "    inclusion: inclusive\n"
                                   "    policy: lru\n"
                                   "    allocation: {classes: 16, cbm_len: 11, shareable: 0x600}\n"
                                   "    io_ways: 0x600\n"
                                   "memory: {channels: 2, peak: 25.6GB/s, latency: 80ns}\n";

static void build_unsliced_lru(void)
{
    struct conf c;
    struct plat p;
    struct err e = {0};
    if (conf_load_mem(&c, "unsliced-lru.yaml", unsliced_lru, strlen(unsliced_lru), &e))
        fail_msg("%s", e.msg);
    int rc = plat_from_conf(&p, &c, &e);
    conf_free(&c);
    if (rc || mach_init(&M, &p, 1, &e))
        fail_msg("%s", e.msg);
}

/* The device's read hit rate of a ring of `ring` bytes in `ways` io ways
 * (the top ones of an 11-way L3), after a first pass that fills it. */
static double ring_hit(unsigned ways, uint64_t ring)
{
    struct mach_cpu port;
    assert_int_equal(mach_io_port(&M, &port, 0, 0, 0, 7), 0);
    uint64_t io = ((1ull << ways) - 1) << (11 - ways);
    assert_int_equal(mach_set_io_ways(&M, 0, io), 0);
    uint64_t lines = ring / 64, hit = 0, n = 0, base = mach_phys_base(0, 0) + (1ull << 30);
    for (unsigned pass = 0; pass < 4; pass++)
        for (uint64_t i = 0; i < lines; i++) {
            if (pass) {
                hit += mach_dma_read(&M, &port, base + i * 64) == MACH_DMA_HIT;
                n++;
            }
            mach_dma_write(&M, &port, base + i * 64);
        }
    return (double)hit / (double)n;
}

/* One unsliced LRU L3: 16,384 sets; a 4 MiB ring is 4 lines a set in every
 * set. LRU in w ways keeps a line until w more lines of its set arrive:
 * all 4 survive a round in 4 ways or more, none in fewer. */
static void test_cliff_unsliced(void **state)
{
    (void)state;
    build_unsliced_lru();
    double h[6];
    for (unsigned w = 2; w <= 5; w++) {
        mach_free(&M);
        build_unsliced_lru();
        h[w] = ring_hit(w, 4u << 20);
    }
    assert_true(h[2] == 0.0 && h[3] == 0.0);
    assert_true(h[4] == 1.0 && h[5] == 1.0);
    mach_free(&M);
}

/* intel-xeon-skx: 18 slices of 2,048 sets. The ring's 32 lines of each set
 * index spread over the slices by the hash, so the lines of one set
 * (slice, index) number Binomial(32, 1/18), 1.78 on average. Under LRU a
 * line survives a round when its set holds at most w ring lines: a share
 * P(Binomial(31, 1/18) <= w - 1) of the lines, 0.48, 0.75, 0.91, 0.97 at
 * 2, 3, 4, 5 ways. The adaptive policy's thrash-resistant insertion keeps
 * part of an overfull set too, so it hits at least as often (less 0.02 for
 * the hash's deviation from the binomial). Gradual: every way adds hits,
 * 2 ways hit neither never nor always, 5 ways nearly always. */
static void test_gradual_sliced(void **state)
{
    (void)state;
    static const double lru[6] = {0, 0, 0.48, 0.75, 0.91, 0.97};
    double h[6];
    for (unsigned w = 2; w <= 5; w++) {
        build("intel-xeon-skx");
        h[w] = ring_hit(w, 4u << 20);
        mach_free(&M);
        if (h[w] < lru[w] - 0.02)
            fail_msg("%u ways: hit rate %.3f below LRU's %.2f", w, h[w], lru[w]);
        printf("# intel-xeon-skx, 4 MiB ring, %u DDIO ways: device read hit rate %.3f\n", w, h[w]);
    }
    assert_true(h[2] > 0.4 && h[2] < 0.8);
    for (unsigned w = 3; w <= 5; w++)
        assert_true(h[w] > h[w - 1] + 0.01);
    assert_true(h[5] > 0.95);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cliff_unsliced),
        cmocka_unit_test(test_gradual_sliced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
