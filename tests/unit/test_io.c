/* Unit tests for the I/O agents: the machine's DMA path (mach_dma_write,
 * mach_dma_read, the io ways) and sim/io's pacing. A small two-domain
 * machine is built from a profile written here and driven line by line,
 * so every count is known. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/io/io.h"
#include "testlib.h"
#include "tiny_plat.h"
#include "util/rng.h"

#define NTASK   3 /* tasks 0 and 1 run on CPUs; task 2 is the agent */
#define AGENT   2
#define IO_TAG  7
#define IO_CLS  3
#define L3_SETS 32u

static struct mach M;
static struct mach_cpu P; /* the agent's port, in domain 0 */

/* The tiny machine (tiny_plat.h) with io ways, NTASK tasks: 2 sockets x 1
 * node x 1 domain x 2 modules = 4 CPUs, two L3 domains; L3 16 KiB, 8 ways,
 * 32 sets (256 lines); masks of 8 bits, one per way; the io ways are ways
 * 4 and 5 (0x30). L2 4 KiB, L1s 1 KiB. */
static int build_text(const char *incl, unsigned cbm_len, const char *io_ways, struct err *e)
{
    char alloc[48], l3[48];
    snprintf(alloc, sizeof alloc, "classes: 4, cbm_len: %u", cbm_len);
    snprintf(l3, sizeof l3, "    io_ways: %s\n", io_ways);
    return tiny_mach(
        &M,
        &(struct tiny_opt){.name = "tiny-io",
                           .vendor = "intel",
                           .inclusion = incl,
                           .allocation = alloc,
                           .l3 = l3,
                           .monitoring = "ids: 8, occupancy: true, total: true, local: true"},
        NTASK, e);
}

static void build(const char *incl, unsigned cbm_len, const char *io_ways)
{
    struct err e = {0};
    if (build_text(incl, cbm_len, io_ways, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(mach_io_port(&M, &P, 0, AGENT, IO_CLS, IO_TAG), 0);
    mach_set_assoc(&M, 0, 0, 1, 1); /* task 0 on CPU 0 (domain 0), class 1, tag 1 */
    mach_set_assoc(&M, 2, 1, 2, 2); /* task 1 on CPU 2 (domain 1) */
}

static int setup(void **state)
{
    (void)state;
    build("nine", 8, "0x30");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mach_free(&M);
    return 0;
}

/* Line i of the agent's buffers, on node `node`. */
static uint64_t io_addr(unsigned node, uint64_t i)
{
    return mach_phys_base(node, AGENT) + i * 64;
}

/* Line i of task t's memory on its CPU's node. */
static uint64_t task_addr(unsigned node, unsigned t, uint64_t i)
{
    return mach_phys_base(node, t) | (0x100000 + i * 64);
}

static struct mach_cache *l3(unsigned d)
{
    return &M.cache[PLAT_L3][d];
}

/* The L3 entry of addr in domain d, or NULL. */
static const struct cache_line *l3_line(unsigned d, uint64_t addr)
{
    uint64_t b = addr >> 6;
    int i = cache_find(&l3(d)->c, b);
    return i < 0 ? NULL : &cache_set(&l3(d)->c, (uint32_t)b & l3(d)->c.set_mask)[i];
}

/* Lines of tag `tag` in the L3 of domain d, each checked to sit in `ways`. */
static uint64_t lines_of_tag(unsigned d, unsigned tag, uint64_t ways)
{
    return tag_lines(&M, PLAT_L3, d, tag, ways);
}

static void test_io_ways_reset_and_bad(void **state)
{
    (void)state;
    /* The profile's CBM is the reset value; with one way per bit, the ways are its bits. */
    assert_int_equal(mach_get_io_ways(&M, 0), 0x30);
    assert_int_equal(mach_get_io_ways(&M, 1), 0x30);
    assert_int_equal(mach_set_io_ways(&M, 1, 0x81), 0);
    assert_int_equal(mach_get_io_ways(&M, 1), 0x81);
    assert_int_equal(mach_get_io_ways(&M, 0), 0x30);
    assert_int_equal(mach_set_io_ways(&M, 0, 0x100), -QOSIM_EINVAL); /* no ninth way */
    assert_int_equal(mach_set_io_ways(&M, 2, 0x1), -QOSIM_EINVAL);   /* two L3s */
    assert_int_equal(mach_get_io_ways(&M, 2), 0);
    struct mach_cpu q;
    assert_int_equal(mach_io_port(&M, &q, 2, AGENT, 0, 0), -QOSIM_EINVAL); /* two domains */
    assert_int_equal(mach_io_port(&M, &q, 1, NTASK, 0, 0), -QOSIM_EINVAL); /* no such task */
    assert_int_equal(mach_io_port(&M, &q, 1, AGENT, 0, 0), 0);
    assert_ptr_equal(q.l3, l3(1));
    assert_int_equal(q.node, 1);
    /* Four bits of two ways each: 0x3 is ways 0-3. */
    mach_free(&M);
    build("nine", 4, "0x3");
    assert_int_equal(mach_get_io_ways(&M, 0), 0x0f);
    mach_free(&M);
    build("nine", 8, "0");
    assert_int_equal(mach_get_io_ways(&M, 0), 0);
}

/* Every DMA write allocates within the io ways only, dirty; occupancy and
 * victims' bytes are exact. */
static void test_alloc_within_io_ways(void **state)
{
    (void)state;
    /* The core first fills the whole L3 of domain 0 (its class may use every way). */
    for (uint64_t i = 0; i < 256; i++)
        mach_access(&M, &M.cpu[0], HIER_LOAD, task_addr(0, 0, i));
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 256);
    const uint64_t n = 1024; /* 32 lines per set */
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(mach_dma_write(&M, &P, io_addr(0, i)), MACH_DMA_FILL);
    /* The agent holds exactly its two ways of every set, the core the rest. */
    assert_int_equal(lines_of_tag(0, IO_TAG, 0x30), 2 * L3_SETS);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, IO_TAG), 2 * L3_SETS);
    assert_int_equal(mach_task_lines(&M, PLAT_L3, AGENT), 2 * L3_SETS);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 256 - 2 * L3_SETS);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 1, IO_TAG), 0);
    /* Its lines are dirty: every one it evicted was written back, against
     * its own tag and class; the core's clean lines it evicted cost nothing. */
    const uint64_t wb = (n - 2 * L3_SETS) * 64;
    assert_int_equal(M.ts[AGENT].wr_bytes, wb);
    assert_int_equal(mach_traffic(&M, 0, IO_TAG, 1u << MACH_TR_VICTIM), wb);
    assert_int_equal(mach_traffic_cls(&M, 0, IO_CLS, 1u << MACH_TR_VICTIM), wb);
    assert_int_equal(mach_node_bytes(&M, 0, IO_TAG, MACH_ANY, 0, 1), wb);
    assert_int_equal(M.ts[AGENT].traffic[MACH_TR_VICTIM], wb);
    assert_int_equal(M.ts[AGENT].rd_bytes, 0);
    assert_int_equal(M.ts[0].wr_bytes, 0);
    assert_int_equal(M.ts[AGENT].ref[PLAT_L3], n);
    assert_int_equal(M.ts[AGENT].miss[PLAT_L3], n);
    for (uint64_t i = n - 2 * L3_SETS; i < n; i++) {
        const struct cache_line *l = l3_line(0, io_addr(0, i));
        assert_non_null(l);
        assert_true(l->flags & CACHE_F_DIRTY);
        assert_int_equal(M.owners[l->owner].cls, IO_CLS);
    }
    /* Tags' counts still sum to the valid lines. */
    uint64_t sum = 0;
    for (unsigned t = 0; t < M.ntags; t++)
        sum += mach_occupancy(&M, PLAT_L3, 0, t);
    assert_int_equal(sum, mach_valid_lines(&M, PLAT_L3, 0));
}

/* A line in the L3 is updated in place: it stays where it is, with its
 * owner, dirty; copies above it in the domain go, without a writeback. */
static void test_update_in_place(void **state)
{
    (void)state;
    const uint64_t a = task_addr(0, 0, 5);
    mach_access(&M, &M.cpu[0], HIER_STORE, a); /* dirty in L1D; L2 and L3 hold it clean */
    const struct cache_line *l = l3_line(0, a);
    assert_non_null(l);
    unsigned way = l->way;
    uint16_t owner = l->owner;
    assert_false(l->flags & CACHE_F_DIRTY);
    assert_int_equal(mach_dma_write(&M, &P, a), MACH_DMA_HIT);
    l = l3_line(0, a);
    assert_non_null(l);
    assert_int_equal(l->way, way);
    assert_int_equal(l->owner, owner);
    assert_true(l->flags & CACHE_F_DIRTY);
    assert_int_equal(cache_find(&M.cpu[0].l1d->c, a >> 6), -1);
    assert_int_equal(cache_find(&M.cpu[0].l2->c, a >> 6), -1);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 1);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, IO_TAG), 0);
    assert_int_equal(M.ts[0].wr_bytes, 0); /* the core's dirty copy was not written back */
    assert_int_equal(M.ts[AGENT].wr_bytes, 0);
    assert_int_equal(M.ts[AGENT].ref[PLAT_L3], 1);
    assert_int_equal(M.ts[AGENT].miss[PLAT_L3], 0);
    /* The core's next load misses L1 and L2 and hits the updated line in L3. */
    uint64_t l3m = M.ts[0].miss[PLAT_L3];
    mach_access(&M, &M.cpu[0], HIER_LOAD, a);
    assert_int_equal(M.ts[0].miss[PLAT_L1D], 2);
    assert_int_equal(M.ts[0].miss[PLAT_L3], l3m);
    /* Another domain's copies are not the device's: its cores keep theirs. */
    const uint64_t b = task_addr(0, 1, 9);
    mach_access(&M, &M.cpu[2], HIER_LOAD, b);
    assert_int_equal(mach_dma_write(&M, &P, b), MACH_DMA_FILL);
    assert_true(cache_find(&M.cpu[2].l1d->c, b >> 6) >= 0);
    assert_non_null(l3_line(1, b));
}

/* With no io ways a write allocates nowhere: the line goes to memory and
 * every copy in the domain goes, dirty or not; the agent holds nothing. */
static void test_no_alloc(void **state)
{
    (void)state;
    assert_int_equal(mach_set_io_ways(&M, 0, 0), 0);
    const uint64_t a = task_addr(0, 0, 3);
    mach_access(&M, &M.cpu[0], HIER_STORE, a);
    mach_access(&M, &M.cpu[0], HIER_LOAD, task_addr(0, 0, 200)); /* an unrelated line */
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 2);
    assert_int_equal(mach_dma_write(&M, &P, a), MACH_DMA_MEM);
    assert_null(l3_line(0, a));
    assert_int_equal(cache_find(&M.cpu[0].l1d->c, a >> 6), -1);
    assert_int_equal(cache_find(&M.cpu[0].l2->c, a >> 6), -1);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, 1), 1);
    assert_int_equal(M.ts[0].wr_bytes, 0);
    const uint64_t n = 500;
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(mach_dma_write(&M, &P, io_addr(0, i)), MACH_DMA_MEM);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, IO_TAG), 0);
    assert_int_equal(mach_task_lines(&M, PLAT_L3, AGENT), 0);
    /* Its bytes went to memory exactly: one line per write. */
    assert_int_equal(M.ts[AGENT].wr_bytes, (n + 1) * 64);
    assert_int_equal(mach_traffic(&M, 0, IO_TAG, MACH_TR_ALL), (n + 1) * 64);
    assert_int_equal(mach_node_bytes(&M, 0, IO_TAG, MACH_ANY, 0, 1), (n + 1) * 64);
    assert_int_equal(mach_bytes(&M, 0, IO_TAG, MACH_CTR_WB), (n + 1) * 64 / 64);
    assert_int_equal(M.ts[AGENT].ref[PLAT_L3], 0); /* the L3 was not looked up */
    /* The core's unrelated line is still there. */
    assert_non_null(l3_line(0, task_addr(0, 0, 200)));
}

/* Reads: served by the L3 when the line is there, else by memory, never
 * allocating; reads of another node's memory are remote. */
static void test_dma_read(void **state)
{
    (void)state;
    assert_int_equal(mach_dma_write(&M, &P, io_addr(0, 1)), MACH_DMA_FILL);
    assert_int_equal(mach_dma_read(&M, &P, io_addr(0, 1)), MACH_DMA_HIT);
    assert_int_equal(M.ts[AGENT].rd_bytes, 0);
    assert_int_equal(mach_dma_read(&M, &P, io_addr(0, 2)), MACH_DMA_MEM);
    assert_null(l3_line(0, io_addr(0, 2)));
    assert_int_equal(mach_dma_read(&M, &P, io_addr(1, 2)), MACH_DMA_MEM);
    assert_int_equal(mach_dma_read(&M, &P, io_addr(1, 2)), MACH_DMA_MEM);
    assert_int_equal(M.ts[AGENT].rd_bytes, 3 * 64);
    assert_int_equal(mach_traffic(&M, 0, IO_TAG, 1u << MACH_TR_RD_LOCAL), 64);
    assert_int_equal(mach_traffic(&M, 0, IO_TAG, 1u << MACH_TR_RD_REMOTE), 2 * 64);
    assert_int_equal(mach_bytes(&M, 0, IO_TAG, MACH_CTR_TOTAL), 3);
    assert_int_equal(mach_bytes(&M, 0, IO_TAG, MACH_CTR_LOCAL), 1);
    assert_int_equal(mach_node_bytes(&M, 1, IO_TAG, MACH_ANY, 0, 0), 2 * 64);
    assert_int_equal(mach_occupancy(&M, PLAT_L3, 0, IO_TAG), 1);
    assert_int_equal(M.ts[AGENT].ref[PLAT_L3], 5);
    assert_int_equal(M.ts[AGENT].miss[PLAT_L3], 4);
}

/* An inclusive L3: a DMA fill's victim takes the core's copies above with
 * it, dirty data written back by its owner. */
static void test_inclusive_victim(void **state)
{
    (void)state;
    mach_free(&M);
    build("inclusive", 8, "0x01");
    /* The core's class fills only way 0, where the io ways are too. */
    assert_int_equal(mach_set_mask(&M, PLAT_L3, 0, 1, MACH_DATA, 0x01), 0);
    const uint64_t a = task_addr(0, 0, 0);
    mach_access(&M, &M.cpu[0], HIER_STORE, a);
    assert_true(cache_find(&M.cpu[0].l1d->c, a >> 6) >= 0);
    /* A DMA write to the same set of another line replaces it in way 0. */
    assert_int_equal(mach_dma_write(&M, &P, io_addr(0, (a >> 6) % L3_SETS)), MACH_DMA_FILL);
    assert_null(l3_line(0, a));
    assert_int_equal(cache_find(&M.cpu[0].l1d->c, a >> 6), -1);
    assert_int_equal(M.ts[0].wr_bytes, 64); /* its dirty data, written back as the core's */
    assert_int_equal(mach_traffic(&M, 0, 1, 1u << MACH_TR_VICTIM), 64);
    assert_int_equal(M.ts[AGENT].wr_bytes, 0);
}

/* A random mix of cores' accesses and DMA: occupancy counts equal a scan
 * of the lines, and the agent's traffic classes sum to its ground truth. */
static void test_counts_against_lines(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 7, 0);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = rng_next(&r);
        unsigned k = (unsigned)(x % 5);
        if (k == 4 && i % 997 == 0)
            mach_set_io_ways(&M, 0, (x >> 8) & 0xff);
        if (k < 2)
            mach_access(&M, &M.cpu[k], (x >> 3) & 1 ? HIER_STORE : HIER_LOAD,
                        task_addr(0, 0, (x >> 16) % 700));
        else if (k == 2)
            mach_dma_write(&M, &P, io_addr(0, (x >> 16) % 400));
        else if (k == 3)
            mach_dma_read(&M, &P, io_addr(0, (x >> 16) % 400));
        else
            mach_dma_write(&M, &P, task_addr(0, 0, (x >> 16) % 700)); /* the cores' lines */
    }
    uint64_t sum = 0;
    for (unsigned t = 0; t < M.ntags; t++) {
        uint64_t n = mach_occupancy(&M, PLAT_L3, 0, t);
        assert_int_equal(n, lines_of_tag(0, t, 0xff));
        sum += n;
    }
    assert_int_equal(sum, mach_valid_lines(&M, PLAT_L3, 0));
    assert_int_equal(mach_task_lines(&M, PLAT_L3, AGENT), lines_of_tag(0, IO_TAG, 0xff));
    uint64_t tr = 0;
    for (unsigned t = 0; t < MACH_NTRAFFIC; t++)
        tr += M.ts[AGENT].traffic[t];
    assert_int_equal(tr, M.ts[AGENT].rd_bytes + M.ts[AGENT].wr_bytes);
    assert_true(M.ts[AGENT].rd_bytes > 0 && M.ts[AGENT].wr_bytes > 0);
}

/* sim/io: an agent issues lines at its rate from time 0, writes and reads
 * in the ratio asked, each walking the ring with its own cursor. */
static void test_pacing(void **state)
{
    (void)state;
    struct io io;
    struct err e = {0};
    struct io_params p = {.name = "nic",
                          .domain = 0,
                          .node = 0,
                          .cls = IO_CLS,
                          .tag = IO_TAG,
                          .rate = 10e9,
                          .buffer = 64 * 100,
                          .write_ratio = 0.75};
    assert_int_equal(io_init(&io, &M, &p, 1, AGENT, &e), 0);
    uint64_t now = 1;
    assert_int_equal(io_next(&io, &now), 0);
    assert_int_equal(now, 0);
    /* 1 ms in steps as the scheduler gives them (a quantum of 1000 cycles). */
    const uint64_t end = (uint64_t)(1e-3 * M.ticks_per_sec), q = 1000 * MACH_TICK;
    for (uint64_t t = 0; t < end; t += q)
        io_run(&io, 0, t + q < end ? t + q : end);
    const struct io_agent *a = &io.a[0];
    double bytes = (double)(a->st.wr + a->st.rd) * 64;
    assert_near(bytes / 1e-3, 10e9, 0.02);
    /* Exactly: line n leaves at n x 6.4 ns, so 156,250 lines in 1 ms. */
    assert_int_equal(a->st.wr + a->st.rd, 156250);
    assert_int_equal(a->st.wr, 156250 * 3 / 4);
    assert_int_equal(a->wpos, a->st.wr % 100);
    assert_int_equal(a->rpos, a->st.rd % 100);
    assert_true(a->port.now >= end);
    assert_int_equal(a->st.wr_fill + a->st.wr_hit + a->st.wr_mem, a->st.wr);
    assert_int_equal(a->st.rd_hit + a->st.rd_mem, a->st.rd);
    /* The ring (100 lines) fits the io ways (64 lines) only in part, so
     * reads right behind the writes mostly hit. */
    assert_true(a->st.rd_hit > a->st.rd / 2);
    io_free(&io);
}

/* The profile key: checked against the L3's bitmask, refused elsewhere. */
static void test_profile_key(void **state)
{
    (void)state;
    mach_free(&M);
    struct err e = {0};
    assert_int_not_equal(build_text("nine", 8, "0x100", &e), 0);
    assert_substr(e.msg, "io_ways");
    assert_substr(e.msg, "0..255");
    assert_int_not_equal(build_text("nine", 4, "0x10", &e), 0);
    assert_substr(e.msg, "0..15");
    /* On L2, with no L3 in the profile. */
    const char *l2 = "name: l2io\nvendor: intel\ntopology: {sockets: 1}\n"
                     "core: {frequency: 1GHz, cpi: 1}\ncaches:\n"
                     "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                     "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                     "  L2: {size: 4K, ways: 4, latency: 10, io_ways: 0x1}\n"
                     "memory: {channels: 1, peak: 10GB/s, latency: 100ns}\n";
    struct conf c;
    struct plat p;
    assert_int_equal(conf_load_mem(&c, "l2io.yaml", l2, strlen(l2), &e), 0);
    assert_int_not_equal(plat_from_conf(&p, &c, &e), 0);
    conf_free(&c);
    assert_substr(e.msg, "l2io.yaml:8: caches.L2.io_ways: only an L3 takes I/O writes");
    assert_substr(e.msg, "this profile has no L3");
    /* Built without an L3, the machine has no io ways and no port. */
    const char *nol3 = "name: nol3\nvendor: intel\ntopology: {sockets: 1}\n"
                       "core: {frequency: 1GHz, cpi: 1}\ncaches:\n"
                       "  L1I: {size: 1K, ways: 2, latency: 2}\n"
                       "  L1D: {size: 1K, ways: 2, latency: 2}\n"
                       "  L2: {size: 4K, ways: 4, latency: 10}\n"
                       "memory: {channels: 1, peak: 10GB/s, latency: 100ns}\n";
    assert_int_equal(conf_load_mem(&c, "nol3.yaml", nol3, strlen(nol3), &e), 0);
    assert_int_equal(plat_from_conf(&p, &c, &e), 0);
    conf_free(&c);
    assert_int_equal(mach_init(&M, &p, NTASK, &e), 0);
    assert_int_equal(mach_set_io_ways(&M, 0, 1), -QOSIM_EINVAL);
    assert_int_equal(mach_get_io_ways(&M, 0), 0);
    struct mach_cpu q;
    assert_int_equal(mach_io_port(&M, &q, 0, AGENT, 0, 0), -QOSIM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_io_ways_reset_and_bad, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_within_io_ways, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_alloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dma_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inclusive_victim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counts_against_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pacing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_profile_key, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
