/* Unit tests of the workloads (src/sim/wl/wl.c): parameter checks, the
 * synthetic generators' determinism, ratios, address ranges, exact
 * sequences, the chase cycle, the zipf law, the code footprint and whole-
 * instruction batches, and trace files as workloads (plain, looping, errors).
 *
 * Statistical checks use fixed seeds, so they are deterministic; their
 * tolerances are still about 5 standard deviations, so that any seed would
 * pass them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/wl/wl.h"
#include "util/rng.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* tests/data, found from this file's path (the suite runs from the top). */
static char data_dir[512];

static const char *data_path(const char *name)
{
    static char path[600];
    if (!data_dir[0]) {
        snprintf(data_dir, sizeof data_dir, "%s", __FILE__);
        char *slash = strrchr(data_dir, '/');
        if (slash)
            snprintf(slash, sizeof data_dir - (size_t)(slash - data_dir), "/../data");
        else
            snprintf(data_dir, sizeof data_dir, "../data");
    }
    snprintf(path, sizeof path, "%s/%s", data_dir, name);
    return path;
}

/* ---------------------------------------------------------------- helpers */

static char tmpdir[64];

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/qosim-test-wl-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd);
}

/* Writes s to tmpdir/name and returns the path (valid until the next call). */
static const char *tmp_str(const char *name, const char *s)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, strlen(s), f), strlen(s));
    assert_int_equal(fclose(f), 0);
    return path;
}

static struct wl_params params(enum wl_pattern pat, uint64_t wss)
{
    struct wl_params p;
    wl_params_default(&p);
    p.pattern = pat;
    p.wss = wss;
    return p;
}

static struct wl *synth(const struct wl_params *p, uint64_t seed)
{
    struct wl *w = NULL;
    struct err e = {0};
    int rc = wl_synth_new(p, seed, &w, &e);
    if (rc)
        fail_msg("wl_synth_new: %d %s", rc, e.msg);
    assert_non_null(w);
    return w;
}

/* Records from a workload, filled in batches of `batch`, checking what every
 * synthetic batch promises: whole instructions, between n - 1 and n records. */
struct recs {
    struct trace_rec *r;
    size_t n;
};

static struct recs gen_w(struct wl *w, size_t nrec, size_t batch)
{
    struct recs out = {malloc((nrec + batch) * sizeof(struct trace_rec)), 0};
    assert_non_null(out.r);
    struct err e = {0};
    while (out.n < nrec) {
        long got = wl_fill(w, out.r + out.n, batch, &e);
        assert_true(got >= (long)batch - 1 && got <= (long)batch);
        assert_int_equal(out.r[out.n].kind, TREC_I);
        /* The last record is an instruction or its one data record. */
        assert_true(out.r[out.n + (size_t)got - 1].kind == TREC_I ||
                    out.r[out.n + (size_t)got - 2].kind == TREC_I);
        out.n += (size_t)got;
    }
    return out;
}

static struct recs gen(const struct wl_params *p, uint64_t seed, size_t nrec)
{
    struct wl *w = synth(p, seed);
    struct recs out = gen_w(w, nrec, 4096);
    wl_free(w);
    return out;
}

static int same_rec(const struct trace_rec *a, const struct trace_rec *b)
{
    return a->addr == b->addr && a->size == b->size && a->kind == b->kind && a->flags == b->flags;
}

static void assert_same(const struct trace_rec *a, const struct trace_rec *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!same_rec(&a[i], &b[i]))
            fail_msg("record %zu differs: kind %u/%u addr %llx/%llx size %u/%u flags %u/%u", i,
                     a[i].kind, b[i].kind, (unsigned long long)a[i].addr,
                     (unsigned long long)b[i].addr, a[i].size, b[i].size, a[i].flags, b[i].flags);
}

/* The data records' addresses, in order. */
static uint64_t *data_addrs(const struct recs *rs, size_t *n)
{
    uint64_t *a = malloc((rs->n + 1) * sizeof *a);
    assert_non_null(a);
    *n = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].kind != TREC_I)
            a[(*n)++] = rs->r[i].addr;
    return a;
}

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: %.5f, expected %.5f +- %.5f", what, got, want, tol);
}

/* --------------------------------------------------------------- params */

/* A fed workload hands out what it was fed, in order, then ends (0) until
 * it is fed again: the whole-guest plugin's vCPUs run that way. */
static void test_feed(void **state)
{
    (void)state;
    struct wl *w;
    struct err e = {0};
    assert_int_equal(wl_feed_new(&w, &e), 0);
    struct trace_rec in[10], out[TRACE_MIN_BATCH];
    for (unsigned i = 0; i < 10; i++)
        in[i] = (struct trace_rec){.addr = 0x1000 + i, .size = i + 1, .kind = i ? TREC_L : TREC_I};
    assert_int_equal(wl_fill(w, out, TRACE_MIN_BATCH, &e), 0);
    wl_feed(w, in, 10);
    assert_int_equal(wl_fill(w, out, TRACE_MIN_BATCH, &e), TRACE_MIN_BATCH);
    assert_memory_equal(out, in, TRACE_MIN_BATCH * sizeof *out);
    assert_int_equal(wl_fill(w, out, TRACE_MIN_BATCH, &e), 2);
    assert_memory_equal(out, in + TRACE_MIN_BATCH, 2 * sizeof *out);
    assert_int_equal(wl_fill(w, out, TRACE_MIN_BATCH, &e), 0);
    wl_feed(w, in + 9, 1);
    assert_int_equal(wl_fill(w, out, TRACE_MIN_BATCH, &e), 1);
    assert_int_equal(out[0].addr, 0x1009);
    wl_free(w);
}

static void test_pattern_names(void **state)
{
    (void)state;
    assert_string_equal(wl_pattern_name[WL_SEQ], "seq");
    assert_string_equal(wl_pattern_name[WL_STRIDE], "stride");
    assert_string_equal(wl_pattern_name[WL_RANDOM], "random");
    assert_string_equal(wl_pattern_name[WL_CHASE], "chase");
    assert_string_equal(wl_pattern_name[WL_ZIPF], "zipf");
}

static void test_params_default(void **state)
{
    (void)state;
    struct wl_params p;
    memset(&p, 0x5a, sizeof p);
    wl_params_default(&p);
    assert_int_equal(p.pattern, WL_SEQ);
    assert_int_equal(p.wss, 1 << 20);
    assert_true(p.access >= 1 && p.access <= 64);
    assert_true(p.stride >= 1);
    assert_true(p.zipf_alpha > 0);
    assert_true(p.mem_ratio == 0.3);
    assert_true(p.write_ratio == 0.2);
    assert_true(p.nt_ratio == 0);
    assert_int_equal(p.code, 4096);
    assert_true(p.branch_ratio == 0.15);
    assert_true(p.taken_ratio == 0.5);
    assert_null(wl_params_check(&p));
    /* Every pattern works with the defaults. */
    for (int pat = 0; pat < WL_NPATTERN; pat++) {
        p.pattern = (enum wl_pattern)pat;
        assert_null(wl_params_check(&p));
    }
}

/* wl_params_check's message for p, and wl_synth_new's refusal with it. */
static void check_bad(const struct wl_params *p, const char *want)
{
    const char *got = wl_params_check(p);
    if (!got || strcmp(got, want))
        fail_msg("wl_params_check: \"%s\", expected \"%s\"", got ? got : "(null)", want);
    struct wl *w = (struct wl *)1;
    struct err e = {0};
    assert_int_equal(wl_synth_new(p, 1, &w, &e), -QOSIM_EINVAL);
    assert_int_equal(e.code, -QOSIM_EINVAL);
    assert_string_equal(e.msg, want);
    assert_null(w);
}

static void test_params_check(void **state)
{
    (void)state;
    struct wl_params p = params(WL_RANDOM, 1 << 20);

    p.pattern = WL_NPATTERN;
    check_bad(&p, "pattern must be one of seq, stride, random, chase, zipf");
    p.pattern = (enum wl_pattern) - 1;
    check_bad(&p, "pattern must be one of seq, stride, random, chase, zipf");

    p = params(WL_RANDOM, 63);
    check_bad(&p, "wss must be at least 64 bytes (one line)");
    p.wss = 0;
    check_bad(&p, "wss must be at least 64 bytes (one line)");
    p.wss = (1ull << 40) + 64;
    check_bad(&p, "wss must be at most 1 TiB");
    /* Not a whole number of lines: fine, rounded down. */
    p.wss = 64 * 3 + 17;
    assert_null(wl_params_check(&p));

    static const uint32_t bad_access[] = {0, 3, 12, 65, 128, 0x80000000u};
    for (size_t i = 0; i < sizeof bad_access / sizeof bad_access[0]; i++) {
        p = params(WL_SEQ, 4096);
        p.access = bad_access[i];
        check_bad(&p, "access must be a power of two from 1 to 64");
    }
    for (uint32_t a = 1; a <= 64; a *= 2) {
        p.access = a;
        assert_null(wl_params_check(&p));
    }

    p = params(WL_STRIDE, 4096);
    p.stride = 0;
    check_bad(&p, "stride must be at least 1");
    p.stride = 1;
    assert_null(wl_params_check(&p));

    p = params(WL_ZIPF, 4096);
    p.zipf_alpha = 0;
    check_bad(&p, "zipf_alpha must be > 0");
    p.zipf_alpha = -1;
    check_bad(&p, "zipf_alpha must be > 0");
    p.zipf_alpha = NAN;
    check_bad(&p, "zipf_alpha must be > 0");
    p.zipf_alpha = INFINITY;
    check_bad(&p, "zipf_alpha must be finite");
    p.zipf_alpha = 1; /* the singular exponent of some methods: fine here */
    assert_null(wl_params_check(&p));

    p = params(WL_CHASE, (16ull << 30) + 64);
    check_bad(&p, "wss must be at most 16 GiB for chase (a 1 GiB table of its lines)");
    p.wss = 16ull << 30;
    assert_null(wl_params_check(&p));

    static const double bad_ratio[] = {-0.001, 1.001, NAN, INFINITY, -INFINITY};
    static const char *const ratio_msg[] = {
        "mem_ratio must be in [0, 1]", "write_ratio must be in [0, 1]",
        "branch_ratio must be in [0, 1]", "taken_ratio must be in [0, 1]"};
    for (int f = 0; f < 4; f++)
        for (size_t i = 0; i < sizeof bad_ratio / sizeof bad_ratio[0]; i++) {
            p = params(WL_RANDOM, 4096);
            double *r = f == 0   ? &p.mem_ratio
                        : f == 1 ? &p.write_ratio
                        : f == 2 ? &p.branch_ratio
                                 : &p.taken_ratio;
            *r = bad_ratio[i];
            check_bad(&p, ratio_msg[f]);
            *r = 0;
            assert_null(wl_params_check(&p));
            *r = 1;
            assert_null(wl_params_check(&p));
        }

    p = params(WL_RANDOM, 4096);
    p.code = 63;
    check_bad(&p, "code must be at least 64 bytes");
    p.code = WL_DATA_BASE - WL_CODE_BASE + 1;
    check_bad(&p, "code must be at most 252 MiB (code ends where data starts)");
    p.code = WL_DATA_BASE - WL_CODE_BASE;
    assert_null(wl_params_check(&p));

    /* Fields of other patterns are not checked. */
    p = params(WL_RANDOM, 4096);
    p.stride = 0;
    p.zipf_alpha = -1;
    assert_null(wl_params_check(&p));
}

/* ---------------------------------------------------------- determinism */

static void test_determinism(void **state)
{
    (void)state;
    for (int pat = 0; pat < WL_NPATTERN; pat++) {
        struct wl_params p = params((enum wl_pattern)pat, 1 << 16);
        struct recs a = gen(&p, 7, 200000), b = gen(&p, 7, 200000), c = gen(&p, 8, 200000);
        assert_int_equal(a.n, b.n);
        assert_same(a.r, b.r, a.n);
        /* Another seed: another stream (instruction pointers, mix and data). */
        size_t ndiff = 0, n = a.n < c.n ? a.n : c.n;
        for (size_t i = 0; i < n; i++)
            ndiff += !same_rec(&a.r[i], &c.r[i]);
        assert_true(ndiff > n / 2);
        free(a.r);
        free(b.r);
        free(c.r);
    }
    /* Seeds near each other, and 0, give unrelated streams too. */
    struct wl_params p = params(WL_RANDOM, 1 << 20);
    struct recs a = gen(&p, 0, 1000), b = gen(&p, 1, 1000);
    size_t ndiff = 0;
    for (size_t i = 0; i < 1000; i++)
        ndiff += !same_rec(&a.r[i], &b.r[i]);
    assert_true(ndiff > 500);
    free(a.r);
    free(b.r);
}

/* The code stream and the mix stream do not depend on the data pattern: the
 * same seed gives the same instructions and the same load/store choices. */
static void test_streams_independent(void **state)
{
    (void)state;
    struct wl_params p = params(WL_SEQ, 1 << 16);
    struct recs a = gen(&p, 99, 100000);
    p.pattern = WL_RANDOM;
    struct recs b = gen(&p, 99, 100000);
    p.pattern = WL_ZIPF;
    struct recs c = gen(&p, 99, 100000);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.n, c.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_int_equal(a.r[i].kind, b.r[i].kind);
        assert_int_equal(a.r[i].kind, c.r[i].kind);
        if (a.r[i].kind == TREC_I) {
            assert_true(same_rec(&a.r[i], &b.r[i]));
            assert_true(same_rec(&a.r[i], &c.r[i]));
        }
    }
    free(a.r);
    free(b.r);
    free(c.r);
}

/* --------------------------------------------------------------- ratios */

struct counts {
    uint64_t insn, data, stores, branches, taken;
};

static struct counts count(const struct recs *rs)
{
    struct counts c = {0};
    for (size_t i = 0; i < rs->n; i++) {
        const struct trace_rec *r = &rs->r[i];
        if (r->kind == TREC_I) {
            c.insn++;
            assert_int_equal(r->size, 4);
            assert_true(r->flags == 0 || r->flags == TREC_F_BRANCH ||
                        r->flags == (TREC_F_BRANCH | TREC_F_TAKEN));
            c.branches += !!(r->flags & TREC_F_BRANCH);
            c.taken += !!(r->flags & TREC_F_TAKEN);
        } else {
            /* A data record follows an instruction, one at most. */
            assert_true(i > 0 && rs->r[i - 1].kind == TREC_I);
            assert_true(r->kind == TREC_L || r->kind == TREC_S);
            c.data++;
            c.stores += r->kind == TREC_S;
        }
    }
    return c;
}

/* Five standard deviations of a share p measured over n trials. */
static double tol5(double p, uint64_t n)
{
    return 5 * sqrt(p * (1 - p) / (double)n) + 1e-9;
}

static void check_ratios(double mem, double write, double branch, double taken)
{
    struct wl_params p = params(WL_RANDOM, 1 << 20);
    p.mem_ratio = mem;
    p.write_ratio = write;
    p.branch_ratio = branch;
    p.taken_ratio = taken;
    struct recs rs = gen(&p, 12345, 2000000);
    struct counts c = count(&rs);
    assert_true(c.insn >= 1000000);
    assert_near((double)c.data / (double)c.insn, mem, tol5(mem, c.insn), "mem_ratio");
    if (c.data)
        assert_near((double)c.stores / (double)c.data, write, tol5(write, c.data), "write_ratio");
    assert_near((double)c.branches / (double)c.insn, branch, tol5(branch, c.insn), "branch_ratio");
    if (c.branches)
        assert_near((double)c.taken / (double)c.branches, taken, tol5(taken, c.branches),
                    "taken_ratio");
    /* 0 and 1 are exact. */
    if (mem == 0 || mem == 1)
        assert_int_equal(c.data, mem == 1 ? c.insn : 0);
    if (c.data && (write == 0 || write == 1))
        assert_int_equal(c.stores, write == 1 ? c.data : 0);
    if (branch == 0 || branch == 1)
        assert_int_equal(c.branches, branch == 1 ? c.insn : 0);
    if (c.branches && (taken == 0 || taken == 1))
        assert_int_equal(c.taken, taken == 1 ? c.branches : 0);
    free(rs.r);
}

static void test_ratios(void **state)
{
    (void)state;
    check_ratios(0.3, 0.2, 0.15, 0.5);
    check_ratios(0.9, 0.7, 0.05, 0.9);
    check_ratios(0.01, 0.5, 0.5, 0.1);
    check_ratios(0, 0.5, 0, 0.5);
    check_ratios(1, 1, 1, 1);
    check_ratios(1, 0, 1, 0);
}

/* Non-temporal stores: a share nt_ratio of the stores carries TREC_F_NT
 * (0 and 1 exactly), never a load; and nt_ratio changes nothing else: the
 * records are those of nt_ratio 0 but for the flag. */
static void check_nt(enum wl_pattern pat, double write, double nt)
{
    struct wl_params p = params(pat, 1 << 20);
    p.mem_ratio = 0.5;
    p.write_ratio = write;
    struct recs base = gen(&p, 777, 1000000);
    p.nt_ratio = nt;
    assert_null(wl_params_check(&p));
    struct recs rs = gen(&p, 777, 1000000);
    assert_int_equal(rs.n, base.n);
    uint64_t stores = 0, ntst = 0;
    for (size_t i = 0; i < rs.n; i++) {
        struct trace_rec r = rs.r[i];
        if (r.kind == TREC_I)
            continue;
        assert_true(!(r.flags & TREC_F_NT) || r.kind == TREC_S);
        stores += r.kind == TREC_S;
        ntst += !!(r.flags & TREC_F_NT);
        r.flags &= (uint8_t)~TREC_F_NT;
        assert_true(same_rec(&r, &base.r[i]));
    }
    if (pat == WL_CHASE) { /* a chase only loads */
        assert_int_equal(ntst, 0);
    } else {
        assert_true(stores > 50000);
        assert_near((double)ntst / (double)stores, nt, tol5(nt, stores), "nt_ratio");
        if (nt == 0 || nt == 1)
            assert_int_equal(ntst, nt == 1 ? stores : 0);
    }
    free(base.r);
    free(rs.r);
}

static void test_nt_ratio(void **state)
{
    (void)state;
    check_nt(WL_SEQ, 0.4, 0.3);
    check_nt(WL_RANDOM, 0.2, 0.9);
    check_nt(WL_SEQ, 0.5, 1);
    check_nt(WL_SEQ, 1, 1);
    check_nt(WL_ZIPF, 0.5, 0);
    check_nt(WL_CHASE, 1, 1);
    static const double bad[] = {-0.001, 1.001, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct wl_params p = params(WL_SEQ, 4096);
        p.nt_ratio = bad[i];
        check_bad(&p, "nt_ratio must be in [0, 1]");
    }
}

/* --------------------------------------------------------------- ranges */

/* Every data record of a pattern stays in its working set, with its size. */
static void check_range(enum wl_pattern pat, uint64_t wss, uint32_t access, uint32_t stride)
{
    struct wl_params p = params(pat, wss);
    p.access = access;
    p.stride = stride;
    p.write_ratio = 0.5;
    p.mem_ratio = 0.8;
    struct recs rs = gen(&p, 5, 300000);
    uint64_t lines = wss / 64;
    for (size_t i = 0; i < rs.n; i++) {
        const struct trace_rec *r = &rs.r[i];
        if (r->kind == TREC_I)
            continue;
        assert_int_equal(r->size, access);
        assert_true(r->addr >= WL_DATA_BASE);
        uint64_t off = r->addr - WL_DATA_BASE;
        if (pat == WL_SEQ || pat == WL_STRIDE) {
            assert_true(off + access <= wss);
        } else {
            /* Whole lines only, and one line per access. */
            assert_true(off / 64 < lines);
            assert_true(off % 64 + access <= 64);
            assert_int_equal(off % access, 0);
        }
        if (pat == WL_CHASE) {
            assert_int_equal(r->kind, TREC_L);
            assert_int_equal(r->flags, TREC_F_DEP);
        } else {
            assert_int_equal(r->flags, 0);
        }
    }
    free(rs.r);
}

static void test_ranges(void **state)
{
    (void)state;
    static const uint64_t wss[] = {64, 100, 1000, 4096 + 8, 1 << 20, 3ull << 30};
    static const uint32_t access[] = {1, 8, 64};
    for (int pat = 0; pat < WL_NPATTERN; pat++)
        for (size_t i = 0; i < sizeof wss / sizeof wss[0]; i++)
            for (size_t j = 0; j < sizeof access / sizeof access[0]; j++) {
                if (pat == WL_CHASE && wss[i] > (64ull << 20))
                    continue; /* a big table: covered by test_chase_big */
                check_range((enum wl_pattern)pat, wss[i], access[j], 24);
            }
    check_range(WL_STRIDE, 1000, 8, 999);
    check_range(WL_STRIDE, 1000, 8, 5000);
    check_range(WL_STRIDE, 1 << 20, 4, 1);
}

/* ------------------------------------------------------ exact sequences */

static void test_seq_exact(void **state)
{
    (void)state;
    /* Every data access the next 8 bytes; 1000 is no multiple of 8 x 64, and
     * the last access that fits starts at 992. Data offsets do not depend on
     * which instructions have data. */
    struct wl_params p = params(WL_SEQ, 1000);
    p.access = 8;
    for (int k = 0; k < 2; k++) {
        p.mem_ratio = k ? 0.37 : 1;
        struct recs rs = gen(&p, 3, 20000);
        size_t n;
        uint64_t *a = data_addrs(&rs, &n);
        assert_true(n > 2000);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(a[i], WL_DATA_BASE + (i % 125) * 8);
        free(a);
        free(rs.r);
    }
    /* access 64 over 200 bytes: 0, 64, 128 (192 + 64 > 200), 0, ... */
    p = params(WL_SEQ, 200);
    p.access = 64;
    p.mem_ratio = 1;
    struct recs rs = gen(&p, 3, 1000);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], WL_DATA_BASE + (i % 3) * 64);
    free(a);
    free(rs.r);
}

static void test_stride_exact(void **state)
{
    (void)state;
    /* stride 24, access 8, wss 1000: offsets 0, 24, ..., 984 (42 of them),
     * then back to 0. */
    struct wl_params p = params(WL_STRIDE, 1000);
    p.access = 8;
    p.stride = 24;
    p.mem_ratio = 0.5;
    struct recs rs = gen(&p, 11, 40000);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    assert_true(n > 1000);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], WL_DATA_BASE + (i % 42) * 24);
    free(a);
    free(rs.r);

    /* A stride of 4 KiB over 64 KiB: 16 pages, then again. */
    p = params(WL_STRIDE, 64 << 10);
    p.stride = 4096;
    p.mem_ratio = 1;
    rs = gen(&p, 11, 1000);
    a = data_addrs(&rs, &n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], WL_DATA_BASE + (i % 16) * 4096);
    free(a);
    free(rs.r);

    /* A stride past the working set: always the start. */
    p = params(WL_STRIDE, 4096);
    p.stride = 4096;
    p.mem_ratio = 1;
    rs = gen(&p, 11, 1000);
    a = data_addrs(&rs, &n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], WL_DATA_BASE);
    free(a);
    free(rs.r);
}

/* ---------------------------------------------------------------- chase */

static void test_chase_cycle(void **state)
{
    (void)state;
    const size_t lines = 1000;
    struct wl_params p = params(WL_CHASE, lines * 64 + 63); /* the partial line is unused */
    p.mem_ratio = 0.6;
    p.write_ratio = 1; /* ignored: a chase only loads */
    p.access = 8;
    struct recs rs = gen(&p, 21, 20000);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    assert_true(n >= 3 * lines);
    for (size_t i = 0; i < rs.n; i++)
        if (rs.r[i].kind != TREC_I) {
            assert_int_equal(rs.r[i].kind, TREC_L);
            assert_int_equal(rs.r[i].flags, TREC_F_DEP);
            assert_int_equal(rs.r[i].size, 8);
        }
    /* Each pass of `lines` loads visits every line once, and the passes repeat:
     * one cycle through all the lines. */
    uint8_t *seen = calloc(lines, 1);
    assert_non_null(seen);
    for (size_t pass = 0; pass + 1 < n / lines; pass++) {
        memset(seen, 0, lines);
        for (size_t i = pass * lines; i < (pass + 1) * lines; i++) {
            assert_int_equal((a[i] - WL_DATA_BASE) % 64, 0);
            uint64_t line = (a[i] - WL_DATA_BASE) / 64;
            assert_true(line < lines);
            assert_int_equal(seen[line], 0);
            seen[line] = 1;
        }
    }
    for (size_t i = lines; i < n; i++)
        assert_int_equal(a[i], a[i - lines]);
    /* A random cycle: not the identity order. */
    size_t in_order = 0;
    for (size_t i = 1; i < lines; i++)
        in_order += a[i] == a[i - 1] + 64;
    assert_true(in_order < 20);
    free(seen);

    /* Another seed, another cycle. */
    struct recs rs2 = gen(&p, 22, 20000);
    size_t n2;
    uint64_t *a2 = data_addrs(&rs2, &n2);
    size_t same = 0;
    for (size_t i = 0; i < lines; i++)
        same += a[i] == a2[i];
    assert_true(same < 20);
    free(a);
    free(a2);
    free(rs.r);
    free(rs2.r);

    /* One line: a cycle of one. */
    p = params(WL_CHASE, 64);
    p.mem_ratio = 1;
    rs = gen(&p, 1, 100);
    a = data_addrs(&rs, &n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a[i], WL_DATA_BASE);
    free(a);
    free(rs.r);
}

/* A chase of 2^20 lines (64 MiB): still one cycle through all of them. */
static void test_chase_big(void **state)
{
    (void)state;
    const size_t lines = 1u << 20;
    struct wl_params p = params(WL_CHASE, (uint64_t)lines * 64);
    p.mem_ratio = 1;
    p.branch_ratio = 0;
    struct recs rs = gen(&p, 5, 2 * lines + 2);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    assert_true(n >= lines + 1);
    uint8_t *seen = calloc(lines, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < lines; i++) {
        uint64_t line = (a[i] - WL_DATA_BASE) / 64;
        assert_true(line < lines);
        assert_int_equal(seen[line], 0);
        seen[line] = 1;
    }
    assert_int_equal(a[lines], a[0]);
    free(seen);
    free(a);
    free(rs.r);
}

/* --------------------------------------------------------------- random */

static void test_random_uniform(void **state)
{
    (void)state;
    const size_t lines = 256;
    struct wl_params p = params(WL_RANDOM, lines * 64);
    p.mem_ratio = 1;
    p.access = 16;
    struct recs rs = gen(&p, 77, 1000000);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    uint64_t cnt[256] = {0}, off[4] = {0};
    for (size_t i = 0; i < n; i++) {
        uint64_t o = a[i] - WL_DATA_BASE;
        cnt[o / 64]++;
        off[o % 64 / 16]++;
    }
    /* Chi-square over 255 degrees of freedom: mean 255, sd 22.6. */
    double e = (double)n / lines, chi = 0;
    for (size_t l = 0; l < lines; l++)
        chi += ((double)cnt[l] - e) * ((double)cnt[l] - e) / e;
    if (chi > 255 + 5 * 22.6)
        fail_msg("line counts not uniform: chi-square %.1f", chi);
    for (int k = 0; k < 4; k++)
        assert_near((double)off[k] / (double)n, 0.25, tol5(0.25, n), "offset in line");
    free(a);
    free(rs.r);
}

/* ----------------------------------------------------------------- zipf */

struct linecount {
    uint64_t line, n;
};

static int by_count_desc(const void *x, const void *y)
{
    const struct linecount *a = x, *b = y;
    return a->n < b->n ? 1 : a->n > b->n ? -1 : (a->line > b->line) - (a->line < b->line);
}

/* Samples zipf(alpha) over `lines` lines and checks the law at its head. */
static void check_zipf(double alpha, size_t lines, uint64_t seed)
{
    struct wl_params p = params(WL_ZIPF, (uint64_t)lines * 64);
    p.zipf_alpha = alpha;
    p.mem_ratio = 1;
    p.access = 8;
    struct recs rs = gen(&p, seed, 2000000);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    struct linecount *lc = calloc(lines, sizeof *lc);
    assert_non_null(lc);
    for (size_t l = 0; l < lines; l++)
        lc[l].line = l;
    for (size_t i = 0; i < n; i++) {
        uint64_t o = a[i] - WL_DATA_BASE;
        assert_true(o / 64 < lines);
        assert_true(o % 64 + 8 <= 64);
        lc[o / 64].n++;
    }
    qsort(lc, lines, sizeof *lc, by_count_desc);

    /* P(rank 1) = 1 / sum k^-alpha; P(rank 1) / P(rank 2) = 2^alpha. */
    double hsum = 0;
    for (size_t k = lines; k >= 1; k--)
        hsum += pow((double)k, -alpha);
    double p1 = 1 / hsum, c1 = (double)lc[0].n, c2 = (double)lc[1].n;
    char what[64];
    snprintf(what, sizeof what, "alpha %.2f: P(top line)", alpha);
    assert_near(c1 / (double)n, p1, tol5(p1, n), what);
    snprintf(what, sizeof what, "alpha %.2f: P(rank 1) / P(rank 2)", alpha);
    double ratio = c1 / c2, want = pow(2, alpha);
    assert_near(ratio, want, 5 * want * sqrt(1 / c1 + 1 / c2), what);
    /* The third rank too. */
    double p3 = pow(3, -alpha) / hsum;
    snprintf(what, sizeof what, "alpha %.2f: P(rank 3)", alpha);
    assert_near((double)lc[2].n / (double)n, p3, tol5(p3, n), what);

    /* The hot lines are spread over the working set, not side by side. */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int k = 0; k < 8; k++) {
        lo = lc[k].line < lo ? lc[k].line : lo;
        hi = lc[k].line > hi ? lc[k].line : hi;
    }
    assert_true(hi - lo > 16);
    free(lc);
    free(a);
    free(rs.r);
}

static void test_zipf_law(void **state)
{
    (void)state;
    check_zipf(1.0, 4096, 1);
    check_zipf(0.99, 4096, 2);
    check_zipf(0.5, 256, 3);
    check_zipf(1.5, 100000, 4);
    check_zipf(1.0 + 1e-10, 1000, 5); /* next to the singularity of H */
    check_zipf(2.7, 1 << 20, 6);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The distinct lines a zipf workload touches: all within the working set, and
 * few for a steep law. */
static size_t zipf_distinct(double alpha, uint64_t lines, size_t nrec)
{
    struct wl_params p = params(WL_ZIPF, lines * 64);
    p.zipf_alpha = alpha;
    p.mem_ratio = 1;
    struct recs rs = gen(&p, 9, nrec);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n);
    for (size_t i = 0; i < n; i++)
        a[i] = (a[i] - WL_DATA_BASE) / 64;
    for (size_t i = 0; i < n; i++)
        assert_true(a[i] < lines);
    qsort(a, n, sizeof *a, cmp_u64);
    size_t d = n ? 1 : 0;
    for (size_t i = 1; i < n; i++)
        d += a[i] != a[i - 1];
    free(a);
    free(rs.r);
    return d;
}

static void test_zipf_shapes(void **state)
{
    (void)state;
    /* A flat law touches nearly every line of a small set. */
    size_t d = zipf_distinct(0.01, 512, 200000);
    assert_true(d <= 512 && d >= 500);
    /* alpha = 1 over 2^30 lines (64 GiB): 100k samples hit about 60k lines
     * (uniform sampling would hit nearly 100k). */
    d = zipf_distinct(1.0, 1ull << 30, 200000);
    assert_true(d > 40000 && d < 80000);
    /* A steep law: the top line nearly always (P(rank 1) = 1 / zeta(20)). */
    d = zipf_distinct(20, 1 << 20, 200000);
    assert_true(d <= 3);
    /* One line. */
    assert_int_equal(zipf_distinct(1.0, 1, 1000), 1);
    assert_int_equal(zipf_distinct(0.3, 1, 1000), 1);
    /* Two lines, alpha 1: 2/3 and 1/3. */
    struct wl_params p = params(WL_ZIPF, 128);
    p.zipf_alpha = 1;
    p.mem_ratio = 1;
    struct recs rs = gen(&p, 4, 600000);
    size_t n;
    uint64_t *a = data_addrs(&rs, &n), c0 = 0;
    for (size_t i = 0; i < n; i++)
        c0 += a[i] < WL_DATA_BASE + 64;
    double share = (double)c0 / (double)n;
    if (share < 0.5)
        share = 1 - share;
    assert_near(share, 2.0 / 3, tol5(2.0 / 3, n), "two lines");
    free(a);
    free(rs.r);

    /* Where the hot line lies depends on the seed. */
    p = params(WL_ZIPF, 1 << 20);
    p.zipf_alpha = 3;
    p.mem_ratio = 1;
    uint64_t first[4];
    for (int seed = 0; seed < 4; seed++) {
        rs = gen(&p, (uint64_t)seed, 1000);
        a = data_addrs(&rs, &n);
        qsort(a, n, sizeof *a, cmp_u64);
        first[seed] = a[n / 2] / 64; /* the median: the top line (P = 0.83) */
        free(a);
        free(rs.r);
    }
    assert_false(first[0] == first[1] && first[1] == first[2] && first[2] == first[3]);
}

/* ----------------------------------------------------------------- code */

static void check_code(uint64_t code, double branch, double taken)
{
    struct wl_params p = params(WL_RANDOM, 1 << 16);
    p.code = code;
    p.branch_ratio = branch;
    p.taken_ratio = taken;
    struct recs rs = gen(&p, 31, 1500000);
    uint64_t slots = code / 4;
    uint8_t *hit = calloc(slots, 1);
    assert_non_null(hit);
    uint64_t prev = 0;
    int prev_taken = -1;
    for (size_t i = 0; i < rs.n; i++) {
        const struct trace_rec *r = &rs.r[i];
        if (r->kind != TREC_I)
            continue;
        assert_true(r->addr >= WL_CODE_BASE && r->addr + 4 <= WL_CODE_BASE + code);
        assert_int_equal(r->addr % 4, 0);
        hit[(r->addr - WL_CODE_BASE) / 4] = 1;
        if (prev_taken == 1) {
            /* A taken branch went to a whole block of the footprint. */
            assert_int_equal(r->addr % 64, 0);
            assert_true(r->addr + 64 <= WL_CODE_BASE + code);
        } else if (prev_taken == 0) {
            /* Otherwise the next instruction, or the start at the end. */
            if (prev + 8 <= WL_CODE_BASE + code)
                assert_int_equal(r->addr, prev + 4);
            else
                assert_int_equal(r->addr, WL_CODE_BASE);
        } else {
            assert_int_equal(r->addr, WL_CODE_BASE); /* the first */
        }
        prev = r->addr;
        prev_taken = !!(r->flags & TREC_F_TAKEN);
    }
    /* The whole footprint is fetched, nothing outside it. */
    for (uint64_t s = 0; s < slots; s++)
        if (!hit[s])
            fail_msg("code %llu: instruction at +%llu never fetched", (unsigned long long)code,
                     (unsigned long long)s * 4);
    free(hit);
    free(rs.r);
}

static void test_code_footprint(void **state)
{
    (void)state;
    check_code(4096, 0.15, 0.5);
    check_code(4096, 0, 0);
    check_code(64, 0.15, 0.5);
    check_code(100, 0.3, 0.5);     /* one whole block; 25 instructions */
    check_code(66, 1, 0);          /* 16 instructions, branches all not taken */
    check_code(1 << 16, 0.2, 0.9); /* mostly jumping */
    check_code(4096, 1, 0.1);      /* every instruction a branch */
}

static void test_code_sequential(void **state)
{
    (void)state;
    /* No branches: WL_CODE_BASE, +4, ..., +252, and again. */
    struct wl_params p = params(WL_SEQ, 4096);
    p.code = 256;
    p.branch_ratio = 0;
    struct recs rs = gen(&p, 1, 10000);
    uint64_t k = 0;
    for (size_t i = 0; i < rs.n; i++)
        if (rs.r[i].kind == TREC_I) {
            assert_int_equal(rs.r[i].addr, WL_CODE_BASE + (k++ % 64) * 4);
            assert_int_equal(rs.r[i].flags, 0);
        }
    free(rs.r);
}

/* ------------------------------------------------------------- batches */

/* Any batch sizes give the same stream, cut at instruction boundaries. */
static void test_batches(void **state)
{
    (void)state;
    for (int pat = 0; pat < WL_NPATTERN; pat++) {
        struct wl_params p = params((enum wl_pattern)pat, 1 << 14);
        p.mem_ratio = 0.7;
        struct recs whole = gen(&p, 55, 100000);
        struct wl *w = synth(&p, 55);
        struct trace_rec *buf = malloc((whole.n + 100) * sizeof *buf);
        assert_non_null(buf);
        size_t got = 0;
        struct rng r;
        rng_seed(&r, 1, 0);
        struct err e = {0};
        while (got < whole.n) {
            uint64_t x = rng_next(&r);
            size_t n = TRACE_MIN_BATCH + (x >> 60) + ((x >> 40) % 3 ? 0 : (x >> 50) % 64);
            long k = wl_fill(w, buf + got, n, &e);
            assert_true(k >= (long)n - 1 && k <= (long)n);
            assert_int_equal(buf[got].kind, TREC_I);
            /* Whole: the next batch starts with an instruction, checked above. */
            got += (size_t)k;
        }
        assert_same(buf, whole.r, whole.n);
        /* Too little room is refused. */
        assert_int_equal(wl_fill(w, buf, TRACE_MIN_BATCH - 1, &e), -QOSIM_EINVAL);
        assert_int_equal(e.code, -QOSIM_EINVAL);
        free(buf);
        wl_free(w);
        free(whole.r);
    }
}

static void test_free_null(void **state)
{
    (void)state;
    wl_free(NULL);
}

/* ----------------------------------------------------------------- trace */

/* What trace_read gives for path. */
static struct recs trace_all(const char *path, const struct trace_ops *ops)
{
    struct trace t;
    struct err e = {0};
    if (trace_open(&t, path, ops, 0, &e))
        fail_msg("trace_open: %s", e.msg);
    struct recs out = {malloc(100000 * sizeof(struct trace_rec)), 0};
    assert_non_null(out.r);
    long got;
    while ((got = trace_read(&t, out.r + out.n, 1000)) > 0) {
        out.n += (size_t)got;
        assert_true(out.n + 1000 <= 100000);
    }
    assert_int_equal(got, 0);
    trace_close(&t);
    return out;
}

static struct wl *trace_wl(const char *path, const struct trace_ops *ops, int loop)
{
    struct wl *w = NULL;
    struct err e = {0};
    if (wl_trace_new(path, ops, loop, &w, &e))
        fail_msg("wl_trace_new: %s", e.msg);
    assert_non_null(w);
    return w;
}

/* Reads up to max records from w in batches of batch; stops at the end. */
static struct recs wl_all(struct wl *w, size_t max, size_t batch)
{
    struct recs out = {malloc((max + batch) * sizeof(struct trace_rec)), 0};
    assert_non_null(out.r);
    struct err e = {0};
    while (out.n < max) {
        long got = wl_fill(w, out.r + out.n, batch, &e);
        if (got < 0)
            fail_msg("wl_fill: %ld %s", got, e.msg);
        if (!got)
            break;
        assert_true((size_t)got <= batch);
        out.n += (size_t)got;
    }
    return out;
}

/* Lackey has no branches: a workload flags an instruction as a taken
 * branch when the next one does not start where it ends; looping, the last
 * one's successor is the first (wrap), else it has none. */
static void infer_taken(struct recs *r, int wrap)
{
    size_t first = r->n, last = r->n;
    for (size_t i = 0; i < r->n; i++) {
        if (r->r[i].kind != TREC_I)
            continue;
        if (first == r->n)
            first = i;
        if (last < r->n && r->r[i].addr != r->r[last].addr + r->r[last].size)
            r->r[last].flags |= TREC_F_BRANCH | TREC_F_TAKEN;
        last = i;
    }
    if (wrap && last < r->n && r->r[first].addr != r->r[last].addr + r->r[last].size)
        r->r[last].flags |= TREC_F_BRANCH | TREC_F_TAKEN;
}

static void check_trace(const char *name, const struct trace_ops *ops)
{
    const char *path = data_path(name);
    struct recs want = trace_all(path, ops);
    assert_true(want.n > 0);
    int lackey = ops == &trace_lackey;
    if (lackey)
        infer_taken(&want, 0);

    /* Once through, then the end, which stays the end. */
    struct wl *w = trace_wl(path, ops, 0);
    struct recs got = wl_all(w, 100000, 8);
    assert_int_equal(got.n, want.n);
    assert_same(got.r, want.r, want.n);
    struct trace_rec buf[8];
    struct err e = {0};
    assert_int_equal(wl_fill(w, buf, 8, &e), 0);
    assert_int_equal(wl_fill(w, buf, 8, &e), 0);
    wl_free(w);
    free(got.r);

    /* Looping: the same records pass after pass, whatever the batches. */
    if (lackey)
        infer_taken(&want, 1);
    static const size_t batches[] = {8, 9, 1000};
    for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
        w = trace_wl(path, ops, 1);
        got = wl_all(w, 7 * want.n, batches[b]);
        assert_true(got.n >= 7 * want.n);
        for (size_t pass = 0; pass < 7; pass++)
            assert_same(got.r + pass * want.n, want.r, want.n);
        wl_free(w);
        free(got.r);
    }
    free(want.r);
}

static void test_trace_files(void **state)
{
    (void)state;
    check_trace("small.lackey", &trace_lackey);
    check_trace("small.din", &trace_din);
    check_trace("small.champsim", &trace_champsim);
    check_trace("small.champsim.xz", &trace_champsim);
    /* No format: the one the name suggests. */
    struct recs want = trace_all(data_path("small.din"), &trace_din);
    struct wl *w = trace_wl(data_path("small.din"), NULL, 0);
    struct recs got = wl_all(w, 1000, 8);
    assert_int_equal(got.n, want.n);
    assert_same(got.r, want.r, want.n);
    wl_free(w);
    free(got.r);
    free(want.r);
}

static void test_trace_lackey_exact(void **state)
{
    (void)state;
    /* small.lackey, by hand: I 1000, L 2000, I 1004, S 2000, I 1008, M 3000,
     * I 103e, L 203c. */
    struct wl *w = trace_wl(data_path("small.lackey"), &trace_lackey, 1);
    struct recs got = wl_all(w, 16, 8);
    static const struct {
        unsigned kind;
        uint64_t addr;
        uint32_t size;
    } want[8] = {{TREC_I, 0x1000, 4}, {TREC_L, 0x2000, 8}, {TREC_I, 0x1004, 4},
                 {TREC_S, 0x2000, 8}, {TREC_I, 0x1008, 4}, {TREC_M, 0x3000, 8},
                 {TREC_I, 0x103e, 4}, {TREC_L, 0x203c, 8}};
    assert_true(got.n >= 16);
    for (size_t i = 0; i < 16; i++) {
        assert_int_equal(got.r[i].kind, want[i % 8].kind);
        assert_int_equal(got.r[i].addr, want[i % 8].addr);
        assert_int_equal(got.r[i].size, want[i % 8].size);
        /* Taken branches, inferred: 1008 -> 103e, and 103e -> 1000 (the loop). */
        unsigned taken = want[i % 8].addr == 0x1008 || want[i % 8].addr == 0x103e;
        assert_int_equal(got.r[i].flags, taken ? TREC_F_BRANCH | TREC_F_TAKEN : 0);
    }
    wl_free(w);
    free(got.r);
}

static void test_trace_no_insn(void **state)
{
    (void)state;
    const char *path = tmp_str("noinsn.lackey", " L 2000,8\n S 2008,4\n");
    char want[300];
    snprintf(want, sizeof want, "%s: a looping trace needs at least one instruction record", path);

    /* Without looping: its records, then the end. */
    struct wl *w = trace_wl(path, &trace_lackey, 0);
    struct trace_rec buf[16];
    struct err e = {0};
    assert_int_equal(wl_fill(w, buf, 16, &e), 2);
    assert_int_equal(wl_fill(w, buf, 16, &e), 0);
    wl_free(w);

    /* Looping: its records, then the error at the end, again if asked again. */
    w = trace_wl(path, &trace_lackey, 1);
    assert_int_equal(wl_fill(w, buf, 16, &e), 2);
    assert_int_equal(wl_fill(w, buf, 16, &e), -QOSIM_EINVAL);
    assert_int_equal(e.code, -QOSIM_EINVAL);
    assert_string_equal(e.msg, want);
    memset(&e, 0, sizeof e);
    assert_int_equal(wl_fill(w, buf, 16, &e), -QOSIM_EINVAL);
    assert_string_equal(e.msg, want);
    wl_free(w);

    /* An empty file (only Valgrind's lines) cannot loop either. */
    path = tmp_str("empty.lackey", "==1== nothing here\n");
    snprintf(want, sizeof want, "%s: a looping trace needs at least one instruction record", path);
    w = trace_wl(path, &trace_lackey, 1);
    assert_int_equal(wl_fill(w, buf, 16, &e), -QOSIM_EINVAL);
    assert_string_equal(e.msg, want);
    wl_free(w);
    w = trace_wl(path, &trace_lackey, 0);
    assert_int_equal(wl_fill(w, buf, 16, &e), 0);
    wl_free(w);
}

static void test_trace_errors(void **state)
{
    (void)state;
    struct wl *w = (struct wl *)1;
    struct err e = {0};
    char missing[128];
    snprintf(missing, sizeof missing, "%s/missing.lackey", tmpdir);
    int rc = wl_trace_new(missing, &trace_lackey, 1, &w, &e);
    assert_true(rc < 0);
    assert_int_equal(e.code, rc);
    assert_null(w);
    assert_int_equal(strncmp(e.msg, missing, strlen(missing)), 0);

    /* A reader's error, with the reader's message, then again. */
    const char *path = tmp_str("bad.lackey", "I  1000,4\n L 2000,8\nI  zz,4\nI  1004,4\n");
    struct trace t;
    assert_int_equal(trace_open(&t, path, &trace_lackey, 0, &e), 0);
    struct trace_rec buf[16];
    long trc = trace_read(&t, buf, 16);
    assert_true(trc < 0);
    char want[512];
    snprintf(want, sizeof want, "%s", t.err.msg);
    trace_close(&t);
    assert_non_null(strstr(want, ":3: "));

    for (int loop = 0; loop < 2; loop++) {
        w = trace_wl(path, &trace_lackey, loop);
        memset(&e, 0, sizeof e);
        long got = wl_fill(w, buf, 16, &e);
        if (got == 2) /* the records before it may come first */
            got = wl_fill(w, buf, 16, &e);
        assert_int_equal(got, trc);
        assert_int_equal(e.code, trc);
        assert_string_equal(e.msg, want);
        wl_free(w);
    }

    /* Standard input cannot be read twice, so it cannot loop. */
    w = (struct wl *)1;
    assert_int_equal(wl_trace_new("-", &trace_lackey, 1, &w, &e), -QOSIM_EINVAL);
    assert_null(w);
    assert_non_null(strstr(e.msg, "standard input cannot loop"));
}

/* "I  1000,4\n L 2000,8\n" n times: 20 bytes, two records each. */
static const char *tmp_pairs(const char *name, size_t n)
{
    char *s = malloc(n * 20 + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * 20, "I  1000,4\n L 2000,8\n", 20);
    s[n * 20] = '\0';
    const char *path = tmp_str(name, s);
    free(s);
    return path;
}

/* A looping trace larger than the reader's 1 MiB buffer is read from its
 * file on every pass; when the file goes away: the reopen's error, then
 * again. */
static void test_trace_reopen_fails(void **state)
{
    (void)state;
    const size_t n = 60000; /* 1.2 MB */
    const char *path = tmp_pairs("gone.lackey", n);
    char keep[128];
    snprintf(keep, sizeof keep, "%s", path);
    struct wl *w = trace_wl(keep, &trace_lackey, 1);
    struct trace_rec buf[1000];
    struct err e = {0};
    for (size_t got = 0; got < 2 * n;) {
        long k = wl_fill(w, buf, 1000, &e);
        assert_true(k > 0);
        got += (size_t)k;
    }
    assert_int_equal(unlink(keep), 0);
    /* The open file reads to its end; the next pass cannot open it. */
    long rc;
    size_t more = 0;
    while ((rc = wl_fill(w, buf, 1000, &e)) > 0 && more <= 2 * n)
        more += (size_t)rc;
    assert_true(more <= 2 * n);
    assert_true(rc < 0);
    assert_int_equal(e.code, rc);
    assert_int_equal(strncmp(e.msg, keep, strlen(keep)), 0);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", e.msg);
    memset(&e, 0, sizeof e);
    assert_int_equal(wl_fill(w, buf, 16, &e), rc);
    assert_string_equal(e.msg, msg);
    wl_free(w);
}

/* A looping trace that fits the buffer is read once and its passes parsed
 * from memory (a short trace loops millions of times a run): every pass
 * gives the same records, even once the file is gone. */
static void test_trace_loop_from_memory(void **state)
{
    (void)state;
    const char *path = tmp_pairs("once.lackey", 3);
    char keep[128];
    snprintf(keep, sizeof keep, "%s", path);
    struct wl *w = trace_wl(keep, &trace_lackey, 1);
    struct recs first = wl_all(w, 8, 8);
    assert_int_equal(unlink(keep), 0);
    struct recs all = wl_all(w, 6000, 8);
    assert_true(all.n >= 6000);
    for (size_t i = 0; i < 6000; i++) {
        assert_int_equal(all.r[i].kind, i % 2 ? TREC_L : TREC_I);
        assert_int_equal(all.r[i].addr, i % 2 ? 0x2000 : 0x1000);
        assert_int_equal(all.r[i].size, i % 2 ? 8 : 4);
    }
    wl_free(w);
    free(first.r);
    free(all.r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_names),
        cmocka_unit_test(test_feed),
        cmocka_unit_test(test_params_default),
        cmocka_unit_test(test_params_check),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_streams_independent),
        cmocka_unit_test(test_ratios),
        cmocka_unit_test(test_nt_ratio),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_seq_exact),
        cmocka_unit_test(test_stride_exact),
        cmocka_unit_test(test_chase_cycle),
        cmocka_unit_test(test_chase_big),
        cmocka_unit_test(test_random_uniform),
        cmocka_unit_test(test_zipf_law),
        cmocka_unit_test(test_zipf_shapes),
        cmocka_unit_test(test_code_footprint),
        cmocka_unit_test(test_code_sequential),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_trace_files),
        cmocka_unit_test(test_trace_lackey_exact),
        cmocka_unit_test(test_trace_no_insn),
        cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_trace_reopen_fails),
        cmocka_unit_test(test_trace_loop_from_memory),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
