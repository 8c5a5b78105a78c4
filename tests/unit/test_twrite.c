/* Unit tests of the trace writers (src/sim/trace/twrite*.c) and the qtr
 * reader (src/sim/trace/trace_qtr.c): qtr gives back every field of every
 * record, whatever the stream and however it is handed over; its bytes are
 * the documented ones; every malformed input gives its exact error. The
 * ChampSim writer's bytes for each branch kind and its reader giving the
 * flags back, line splitting and what is dropped; the Lackey writer's text;
 * .xz and zstd output read back through bsrc; write errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/trace/twrite.h"
#include "testlib.h"
#include "util/rng.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

static char tmpdir[64];
static struct rng rng_s;

static int group_setup(void **state)
{
    (void)state;
    return testlib_mkdtemp(tmpdir, sizeof tmpdir, "twrite");
}

static int group_teardown(void **state)
{
    (void)state;
    return testlib_rmtree(tmpdir);
}

static const char *tmp_path(const char *name)
{
    static char path[8][128];
    static int k;
    k = (k + 1) % 8;
    snprintf(path[k], sizeof path[k], "%s/%s", tmpdir, name);
    return path[k];
}

static void put_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static uint8_t *get_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16;
    uint8_t *b = malloc(cap);
    assert_non_null(b);
    *len = 0;
    size_t got;
    while ((got = fread(b + *len, 1, cap - *len, f)) > 0) {
        *len += got;
        if (*len == cap) {
            b = realloc(b, cap *= 2);
            assert_non_null(b);
        }
    }
    fclose(f);
    return b;
}

/* The uncompressed bytes of a file, through bsrc. */
static uint8_t *get_plain(const char *path, size_t *len)
{
    struct bsrc b;
    struct err e = {0};
    assert_int_equal(bsrc_open(&b, path, &e), 0);
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    *len = 0;
    long got;
    while ((got = bsrc_read(&b, buf + *len, cap - *len, &e)) > 0) {
        *len += (size_t)got;
        if (*len == cap) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    assert_int_equal(got, 0);
    bsrc_close(&b);
    return buf;
}

/* Writes r[0..n) to path with ops, handing them over in pieces: cut[] are
 * the indices where a new tw_put starts (ncut of them, ascending); returns
 * tw_dropped. */
static uint64_t write_cut(const char *path, const struct tw_ops *ops, const struct trace_rec *r,
                          size_t n, const size_t *cut, size_t ncut)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    struct tw *w;
    struct err e = {0};
    assert_int_equal(tw_open(&w, ops, f, path, &e), 0);
    size_t at = 0;
    for (size_t i = 0; i <= ncut; i++) {
        size_t to = i < ncut ? cut[i] : n;
        if (tw_put(w, r + at, to - at, &e))
            fail_msg("tw_put: %s", e.msg);
        at = to;
    }
    uint64_t dropped = tw_dropped(w);
    if (tw_close(w, &e))
        fail_msg("tw_close: %s", e.msg);
    assert_int_equal(fclose(f), 0);
    return dropped;
}

static uint64_t write_all(const char *path, const struct tw_ops *ops, const struct trace_rec *r,
                          size_t n)
{
    return write_cut(path, ops, r, n, NULL, 0);
}

struct result {
    struct trace_rec *r;
    size_t n;
    long rc;
    char msg[512];
};

/* Reads path to the end (or the first error) in batches of batch. */
static struct result read_back(const char *path, const struct trace_ops *ops, int skip_bad,
                               size_t batch)
{
    struct result res = {0};
    struct trace t;
    struct err e = {0};
    res.rc = trace_open(&t, path, ops, skip_bad, &e);
    assert_int_equal(res.rc, 0);
    size_t cap = 1024;
    res.r = malloc(cap * sizeof *res.r);
    assert_non_null(res.r);
    for (;;) {
        if (res.n + batch > cap) {
            cap = 2 * (res.n + batch);
            res.r = realloc(res.r, cap * sizeof *res.r);
            assert_non_null(res.r);
        }
        long got = trace_read(&t, res.r + res.n, batch);
        if (got < 0) {
            res.rc = got;
            assert_int_equal(t.err.code, got);
            snprintf(res.msg, sizeof res.msg, "%s", t.err.msg);
            break;
        }
        if (!got) {
            assert_int_equal(trace_read(&t, res.r, batch), 0);
            break;
        }
        assert_true((size_t)got <= batch);
        res.n += (size_t)got;
    }
    assert_int_equal(t.bad, 0);
    trace_close(&t);
    return res;
}

static void assert_recs(const struct trace_rec *got, size_t ngot, const struct trace_rec *want,
                        size_t nwant)
{
    for (size_t i = 0; i < ngot && i < nwant; i++)
        if (got[i].kind != want[i].kind || got[i].addr != want[i].addr ||
            got[i].size != want[i].size || got[i].flags != want[i].flags)
            fail_msg("record %zu: kind %u addr %llx size %u flags 0x%x, want kind %u addr %llx "
                     "size %u flags 0x%x",
                     i, got[i].kind, (unsigned long long)got[i].addr, got[i].size, got[i].flags,
                     want[i].kind, (unsigned long long)want[i].addr, want[i].size, want[i].flags);
    assert_int_equal(ngot, nwant);
}

/* The message is exactly want, after the path and ':'. */
static void check_msg(const struct result *res, long code, const char *path, const char *want)
{
    char full[600];
    snprintf(full, sizeof full, "%s:%s", path, want);
    if (strcmp(res->msg, full))
        fail_msg("message \"%s\", want \"%s\"", res->msg, full);
    assert_int_equal(res->rc, code);
}

#define REC(k, a, s, f) ((struct trace_rec){.addr = (a), .size = (s), .kind = (k), .flags = (f)})

/* ---------------------------------------------------------------- registry */

static void test_registry(void **state)
{
    (void)state;
    assert_ptr_equal(tw_at(0), &tw_lackey);
    assert_ptr_equal(tw_at(1), &tw_champsim);
    assert_ptr_equal(tw_at(2), &tw_qtr);
    assert_null(tw_at(3));
    for (unsigned i = 0; tw_at(i); i++) {
        assert_ptr_equal(tw_find(tw_at(i)->name), tw_at(i));
        assert_non_null(trace_find(tw_at(i)->name)); /* every writer has its reader */
        assert_true(strlen(tw_at(i)->desc) > 0);
    }
    assert_null(tw_find("din"));
    assert_ptr_equal(tw_for_path("run.qtr"), &tw_qtr);
    assert_ptr_equal(tw_for_path("run.champsim"), &tw_champsim);
    assert_ptr_equal(tw_for_path("run.champsim.xz"), &tw_champsim);
    assert_ptr_equal(tw_for_path("run.lackey"), &tw_lackey);
    assert_ptr_equal(tw_for_path("run.lackey.xz"), &tw_lackey);
    assert_ptr_equal(tw_for_path("-"), &tw_lackey);
    assert_ptr_equal(tw_for_path("run.din"), &tw_lackey); /* no din writer */
}

/* ---------------------------------------------------------------- qtr */

/* Every corner of the format in a hand-made stream. */
static size_t qtr_edges(struct trace_rec *r)
{
    size_t n = 0;
    /* Data before any instruction. */
    r[n++] = REC(TREC_L, 0x7ffc0000, 8, 0);
    r[n++] = REC(TREC_S, 0, 1, 0);
    /* Addresses at both ends, the jump between them. */
    r[n++] = REC(TREC_I, 0, 1, 0);
    r[n++] = REC(TREC_I, UINT64_MAX, 1, 0); /* ends at 0: wraps */
    r[n++] = REC(TREC_I, 0, 15, 0);
    r[n++] = REC(TREC_I, 0x8000000000000000ull, 3, 0);
    r[n++] = REC(TREC_L, UINT64_MAX, 1, 0);
    r[n++] = REC(TREC_L, 0, 1, 0);
    r[n++] = REC(TREC_M, UINT64_MAX - 7, 8, 0);
    /* rep movsb: one ip again and again, its data striding. */
    for (int i = 0; i < 5; i++) {
        r[n++] = REC(TREC_I, 0x401000, 2, 0);
        r[n++] = REC(TREC_L, 0x600000 + (uint64_t)i, 1, 0);
        r[n++] = REC(TREC_S, 0x700000 + (uint64_t)i, 1, 0);
    }
    /* Odd sizes. */
    static const uint32_t isz[] = {0, 16, 255, 0x80000000u, UINT32_MAX};
    for (size_t i = 0; i < sizeof isz / sizeof isz[0]; i++)
        r[n++] = REC(TREC_I, 0x402000 + 0x100 * i, isz[i], 0);
    static const uint32_t dsz[] = {0,  3,  6,   10,  12,          32,        63,
                                   64, 65, 128, 512, 0x80000000u, UINT32_MAX};
    for (size_t i = 0; i < sizeof dsz / sizeof dsz[0]; i++)
        r[n++] = REC((uint8_t)(1 + i % 3), 0x500000 + 0x40 * i, dsz[i], 0);
    /* Every flags value, on instructions and data. */
    for (unsigned f = 0; f < 256; f++) {
        r[n++] = REC(TREC_I, 0x403000 + 4 * f, 4, (uint8_t)f);
        r[n++] = REC((uint8_t)(1 + f % 3), 0x800000 + 8 * f, 8, (uint8_t)(255 - f));
    }
    /* xsave: dozens of data records of one instruction. */
    r[n++] = REC(TREC_I, 0x404000, 4, 0);
    for (int i = 0; i < 80; i++)
        r[n++] = REC(TREC_S, 0x900000 + 8 * (uint64_t)i, 8, 0);
    /* A taken branch back, huge jumps both ways. */
    r[n++] = REC(TREC_I, 0x401000, 2, TREC_F_BRANCH | TREC_F_TAKEN);
    r[n++] = REC(TREC_I, 0xffff800000001000ull, 5, 0);
    r[n++] = REC(TREC_I, 0x10, 5, 0);
    return n;
}

/* A long stream with a program's patterns: loops, strides, calls. */
static size_t qtr_random(struct trace_rec *r, size_t n)
{
    uint64_t ip = 0x400000, sp = 0x7ffd0000, heap = 0x5555000000;
    size_t k = 0;
    while (k + 16 < n) {
        uint64_t x = rng_next(&rng_s);
        uint32_t len = 1 + (uint32_t)(x % 15);
        uint8_t fl = (x >> 8) % 7 ? 0 : (uint8_t)(x >> 16);
        r[k++] = REC(TREC_I, ip, len, fl);
        unsigned nd = (x >> 24) % 5 == 4 ? (unsigned)(x >> 28) % 12 : (unsigned)(x >> 28) % 2;
        for (unsigned j = 0; j < nd; j++) {
            uint64_t y = rng_next(&rng_s);
            uint64_t a = y & 1 ? sp - 8 * (y >> 1 & 31) : y & 2 ? heap + (y >> 8 & 0xfffff) : y;
            uint32_t sz = y >> 40 & 1 ? 1u << (y >> 41 & 7) : (uint32_t)(y >> 44);
            r[k++] = REC((uint8_t)(1 + (y >> 36) % 3), a, sz, (y >> 50) % 9 ? 0 : (uint8_t)y);
        }
        ip = (x >> 32) % 8 ? ip + len : (x >> 35) % 4 ? ip - (x >> 40 & 0xff) : x;
    }
    return k;
}

static void test_qtr_round_trip(void **state)
{
    (void)state;
    struct trace_rec r[2048];
    size_t n = qtr_edges(r);
    assert_true(n < 2048);
    const char *path = tmp_path("edges.qtr");
    assert_int_equal(write_all(path, &tw_qtr, r, n), 0);
    assert_string_equal(trace_guess(path), "qtr");
    static const size_t batches[] = {TRACE_MIN_BATCH, 13, 4096};
    for (size_t b = 0; b < 3; b++) {
        struct result res = read_back(path, &trace_qtr, 0, batches[b]);
        assert_int_equal(res.rc, 0);
        assert_recs(res.r, res.n, r, n);
        free(res.r);
    }
    /* Again from the start, as a looping workload reads it: the predictor
     * state starts afresh. */
    struct trace t;
    struct err e = {0};
    struct trace_rec *buf = malloc(n * sizeof *buf);
    assert_non_null(buf);
    assert_int_equal(trace_open(&t, path, &trace_qtr, 0, &e), 0);
    for (int pass = 0; pass < 3; pass++) {
        if (pass)
            assert_int_equal(trace_reopen(&t, path, &e), 0);
        size_t got = 0;
        long k;
        while ((k = trace_read(&t, buf + got, n - got < 64 ? 64 : n - got)) > 0)
            got += (size_t)k;
        assert_int_equal(k, 0);
        assert_recs(buf, got, r, n);
    }
    trace_close(&t);
    free(buf);

    /* Handed over split anywhere: the same bytes. */
    size_t len0, len;
    uint8_t *one = get_plain(path, &len0);
    for (size_t cut = 0; cut <= n; cut += 7) {
        size_t cuts[3] = {cut / 2, cut, cut + 1 < n ? cut + 1 : n};
        write_cut(path, &tw_qtr, r, n, cuts, 3);
        uint8_t *b = get_plain(path, &len);
        assert_int_equal(len, len0);
        assert_memory_equal(b, one, len);
        free(b);
    }
    free(one);
    /* One record a call. */
    size_t *every = malloc(n * sizeof *every);
    assert_non_null(every);
    for (size_t i = 0; i < n; i++)
        every[i] = i;
    write_cut(path, &tw_qtr, r, n, every, n);
    struct result res = read_back(path, &trace_qtr, 0, 64);
    assert_recs(res.r, res.n, r, n);
    free(res.r);
    free(every);

    /* A long stream: several zstd and reader buffers, every batch size. */
    size_t big = 600000;
    struct trace_rec *br = malloc(big * sizeof *br);
    assert_non_null(br);
    big = qtr_random(br, big);
    path = tmp_path("big.qtr");
    write_all(path, &tw_qtr, br, big);
    static const size_t bb[] = {TRACE_MIN_BATCH, 4096, 1 << 20};
    for (size_t b = 0; b < 3; b++) {
        res = read_back(path, &trace_qtr, 0, bb[b]);
        assert_int_equal(res.rc, 0);
        assert_recs(res.r, res.n, br, big);
        free(res.r);
    }
    free(br);

    /* No records: a header alone. */
    path = tmp_path("none.qtr");
    write_all(path, &tw_qtr, r, 0);
    uint8_t *p = get_plain(path, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(p, "QTR\x1a\x01", 5);
    free(p);
    res = read_back(path, &trace_qtr, 0, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 0);
    free(res.r);
}

/* The bytes of the example in docs/traces.md, "qtr". */
static void test_qtr_bytes(void **state)
{
    (void)state;
    const struct trace_rec r[] = {
        REC(TREC_I, 0x1000, 4, 0),    /* 24 80 40     jump from 0: zigzag 0x2000 */
        REC(TREC_L, 0x7ff0, 8, 0),    /* 59 e0 ff 03  slot empty: from 0 */
        REC(TREC_I, 0x1004, 2, 0x13), /* 12 13        sequential, flags */
        REC(TREC_I, 0x1000, 4, 0),    /* 24 0b        back 6 */
        REC(TREC_L, 0x7ff8, 8, 0),    /* 59 10        slot: +8 */
        REC(TREC_S, 0x7ff8, 8, 0),    /* 9a 00        previous data address */
        REC(TREC_I, 0x1004, 2, 0x13), /* 12 13 */
        REC(TREC_I, 0x1000, 4, 0),    /* 24 0b */
        REC(TREC_L, 0x8000, 8, 0),    /* 58           the slot's stride: predicted */
        REC(TREC_S, 0x8000, 8, 0),    /* 9a 00 */
        REC(TREC_M, 0x10, 3, 4),      /* fd 03 04 20  size 3, flags 4, slot empty: 0x10 */
        REC(TREC_I, 0x1004, 2, 0),    /* 02 */
    };
    static const uint8_t want[] = {0x51, 0x54, 0x52, 0x1a, 0x01, 0x24, 0x80, 0x40, 0x59, 0xe0, 0xff,
                                   0x03, 0x12, 0x13, 0x24, 0x0b, 0x59, 0x10, 0x9a, 0x00, 0x12, 0x13,
                                   0x24, 0x0b, 0x58, 0x9a, 0x00, 0xfd, 0x03, 0x04, 0x20, 0x02};
    size_t n = sizeof r / sizeof r[0];
    const char *path = tmp_path("tiny.qtr");
    write_all(path, &tw_qtr, r, n);
    size_t len;
    uint8_t *raw = get_file(path, &len);
    assert_memory_equal(raw, "\x28\xb5\x2f\xfd", 4); /* a zstd frame */
    free(raw);
    uint8_t *p = get_plain(path, &len);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(p, want, sizeof want);
    free(p);
    /* The plain bytes read the same. */
    path = tmp_path("tiny-plain.qtr");
    put_file(path, want, sizeof want);
    struct result res = read_back(path, &trace_qtr, 0, TRACE_MIN_BATCH);
    assert_int_equal(res.rc, 0);
    assert_recs(res.r, res.n, r, n);
    free(res.r);
}

static void test_qtr_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
        long code;
        const char *msg;
    } bad[] = {
        {"QT", 2, -QOSIM_ETRUNC, "byte 0: truncated qtr header (2 of 5 bytes)"},
        {"QTR\x1a", 4, -QOSIM_ETRUNC, "byte 0: truncated qtr header (4 of 5 bytes)"},
        {"XYZW\x01", 5, -QOSIM_EPARSE,
         "byte 0: not a qtr stream (it starts 58 59 5a 57, a qtr stream 51 54 52 1a)"},
        {"Q", 1, -QOSIM_ETRUNC, "byte 0: truncated qtr header (1 of 5 bytes)"},
        {"q", 1, -QOSIM_EPARSE,
         "byte 0: not a qtr stream (it starts 71, a qtr stream 51 54 52 1a)"},
        {"QTR\x1a\x02\x01", 6, -QOSIM_EUNSUP,
         "byte 4: qtr version 2 (this reader reads version 1)"},
        {"QTR\x1a\x01\x01\x43", 7, -QOSIM_EPARSE, "byte 6: unknown qtr tag 0x43"},
        {"QTR\x1a\x01\xff", 6, -QOSIM_EPARSE, "byte 5: unknown qtr tag 0xff"},
        {"QTR\x1a\x01\x02\x24\x80", 8, -QOSIM_ETRUNC,
         "byte 6: truncated qtr item (tag 0x24): the stream ends after 2 of its bytes"},
        {"QTR\x1a\x01\x10", 6, -QOSIM_ETRUNC,
         "byte 5: truncated qtr item (tag 0x10): the stream ends after 1 of its bytes"},
        {"QTR\x1a\x01\x79", 6, -QOSIM_ETRUNC,
         "byte 5: truncated qtr item (tag 0x79): the stream ends after 1 of its bytes"},
        {"QTR\x1a\x01\x21\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 16, -QOSIM_EPARSE,
         "byte 5: varint of more than 64 bits in the item of tag 0x21"},
        {"QTR\x1a\x01\x21\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 17, -QOSIM_EPARSE,
         "byte 5: varint of more than 64 bits in the item of tag 0x21"},
        {"QTR\x1a\x01\x20\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 17, -QOSIM_EPARSE,
         "byte 5: varint of more than 64 bits in the item of tag 0x20"},
        {"QTR\x1a\x01\x00\x80\x80\x80\x80\x10", 11, -QOSIM_EPARSE,
         "byte 5: size 4294967296 of more than 32 bits (tag 0x00)"},
        {"QTR\x1a\x01\x78\x80\x80\x80\x80\x10\x00", 12, -QOSIM_EPARSE,
         "byte 5: size 4294967296 of more than 32 bits (tag 0x78)"},
    };
    const char *path = tmp_path("bad.qtr");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_file(path, bad[i].bytes, bad[i].len);
        for (int skip = 0; skip < 2; skip++) { /* nothing in qtr can be skipped */
            struct result res = read_back(path, &trace_qtr, skip, TRACE_MIN_BATCH);
            check_msg(&res, bad[i].code, path, bad[i].msg);
            free(res.r);
        }
    }
    /* The largest varints that fit are fine. */
    static const uint8_t ok[] = {'Q',  'T',  'R',  0x1a, 1,    0x21, 0xff, 0xff,
                                 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                                 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x41, 0x00};
    put_file(path, ok, sizeof ok);
    struct result res = read_back(path, &trace_qtr, 0, TRACE_MIN_BATCH);
    assert_int_equal(res.rc, 0);
    const struct trace_rec want[] = {REC(TREC_I, 0x8000000000000000ull, 1, 0),
                                     REC(TREC_I, 0x8000000000000001ull, UINT32_MAX, 0),
                                     REC(TREC_L, 0, 1, 0)};
    assert_recs(res.r, res.n, want, 3);
    free(res.r);
    /* An empty file is an empty trace, as in every format. */
    put_file(path, "", 0);
    res = read_back(path, &trace_qtr, 0, TRACE_MIN_BATCH);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 0);
    free(res.r);
}

/* Errors far into a stream name their byte exactly, across buffer refills;
 * a cut zstd stream names where its data stops. */
static void test_qtr_offsets(void **state)
{
    (void)state;
    size_t n = 400000;
    struct trace_rec *r = malloc(n * sizeof *r);
    assert_non_null(r);
    n = qtr_random(r, n);
    const char *zpath = tmp_path("long.qtr");
    write_all(zpath, &tw_qtr, r, n);
    size_t len, zlen;
    uint8_t *plain = get_plain(zpath, &len);
    uint8_t *z = get_file(zpath, &zlen);
    assert_true(len > 600 * 1024); /* more than two reader buffers */
    plain = realloc(plain, len + 2);
    assert_non_null(plain);
    const char *path = tmp_path("long-plain.qtr");
    char want[160];
    /* A reserved tag at the end. */
    plain[len] = 0x47;
    put_file(path, plain, len + 1);
    for (size_t batch = TRACE_MIN_BATCH; batch <= 4096; batch *= 512) {
        struct result res = read_back(path, &trace_qtr, 0, batch);
        snprintf(want, sizeof want, "byte %zu: unknown qtr tag 0x47", len);
        check_msg(&res, -QOSIM_EPARSE, path, want);
        assert_true(res.n <= n);
        assert_recs(res.r, res.n, r, res.n);
        free(res.r);
    }
    /* Cut inside an item: a data record with a size varint. */
    plain[len] = 0x78;
    plain[len + 1] = 0x80;
    put_file(path, plain, len + 2);
    struct result res = read_back(path, &trace_qtr, 0, 4096);
    snprintf(want, sizeof want,
             "byte %zu: truncated qtr item (tag 0x78): the stream ends after 2 of its bytes", len);
    check_msg(&res, -QOSIM_ETRUNC, path, want);
    free(res.r);
    /* The zstd stream cut: the error names how much data had come. */
    const size_t cuts[] = {4, zlen / 2, zlen - 1};
    for (size_t i = 0; i < 3; i++) {
        put_file(path, z, cuts[i]);
        ZSTD_DStream *d = ZSTD_createDStream();
        uint8_t *out = malloc(len);
        ZSTD_inBuffer ib = {z, cuts[i], 0};
        ZSTD_outBuffer ob = {out, len, 0};
        while (ib.pos < ib.size)
            assert_false(ZSTD_isError(ZSTD_decompressStream(d, &ob, &ib)));
        ZSTD_freeDStream(d);
        free(out);
        res = read_back(path, &trace_qtr, 0, 4096);
        snprintf(want, sizeof want, "byte %zu: truncated zstd stream (after %zu compressed bytes)",
                 ob.pos, cuts[i]);
        check_msg(&res, -QOSIM_ETRUNC, path, want);
        free(res.r);
    }
    /* A damaged byte: the decoder or the checksum at the frame's end find
     * it, or the qtr reader before them, in what the decoder delivered. */
    z[zlen / 2] ^= 0x20;
    put_file(path, z, zlen);
    res = read_back(path, &trace_qtr, 0, 4096);
    if (res.rc == -QOSIM_EXZ)
        assert_non_null(strstr(res.msg, ": corrupt zstd data: "));
    else
        assert_true(res.rc == -QOSIM_EPARSE || res.rc == -QOSIM_ETRUNC);
    free(res.r);
    /* The checksum alone. */
    z[zlen / 2] ^= 0x20;
    z[zlen - 2] ^= 0x20;
    put_file(path, z, zlen);
    res = read_back(path, &trace_qtr, 0, 4096);
    /* The byte where the data stops: what the failing call decoded is lost. */
    unsigned long long at = strtoull(res.msg + strlen(path) + strlen(":byte "), NULL, 10);
    assert_in_range(at, len - 128 * 1024, len);
    snprintf(want, sizeof want,
             "byte %llu: corrupt zstd data: Restored data doesn't match checksum (within the "
             "first %zu compressed bytes)",
             at, zlen);
    check_msg(&res, -QOSIM_EXZ, path, want);
    free(res.r);
    free(z);
    free(plain);
    free(r);
}

/* ---------------------------------------------------------------- champsim */

static uint64_t u64at(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void test_champsim_branches(void **state)
{
    (void)state;
    const unsigned br = TREC_F_BRANCH, tk = TREC_F_TAKEN, dj = TREC_F_DIRECT;
    static const struct {
        uint8_t flags; /* given */
        uint8_t is_branch, taken, reg[6];
        uint8_t back; /* the reader's flags */
    } k[] = {
        {0, 0, 0, {0}, 0},
        /* a non-branch keeps no flags */
        {tk | dj | TREC_F_BR(TREC_BR_RET) | 4, 0, 0, {0}, 0},
        {br | TREC_F_BR(TREC_BR_COND), 1, 0, {26, 0, 26, 25}, br | TREC_F_BR(TREC_BR_COND)},
        {br | tk | TREC_F_BR(TREC_BR_COND),
         1,
         1,
         {26, 0, 26, 25},
         br | tk | TREC_F_BR(TREC_BR_COND)},
        {br | tk | dj | TREC_F_BR(TREC_BR_JMP), 1, 1, {26}, br | tk | dj | TREC_F_BR(TREC_BR_JMP)},
        /* a direct jump of unknown kind is a jump; ChampSim takes it */
        {br | dj, 1, 1, {26}, br | tk | dj | TREC_F_BR(TREC_BR_JMP)},
        {br | tk | TREC_F_BR(TREC_BR_JMP_IND),
         1,
         1,
         {26, 0, 10},
         br | tk | TREC_F_BR(TREC_BR_JMP_IND)},
        {br | tk | TREC_F_BR(TREC_BR_CALL),
         1,
         1,
         {26, 6, 26, 6},
         br | tk | TREC_F_BR(TREC_BR_CALL)},
        {br | TREC_F_BR(TREC_BR_CALL_IND),
         1,
         1,
         {26, 6, 26, 6, 10},
         br | tk | TREC_F_BR(TREC_BR_CALL_IND)},
        {br | tk | TREC_F_BR(TREC_BR_RET), 1, 1, {26, 6, 6}, br | tk | TREC_F_BR(TREC_BR_RET)},
        {br, 1, 0, {26, 0, 6, 25}, br},
        {br | tk, 1, 1, {26, 0, 6, 25}, br | tk},
        /* kind 7 does not exist: other; the data-only flag goes */
        {br | tk | TREC_F_BR(7) | 4, 1, 1, {26, 0, 6, 25}, br | tk},
    };
    size_t n = sizeof k / sizeof k[0];
    struct trace_rec r[16];
    for (size_t i = 0; i < n; i++)
        r[i] = REC(TREC_I, 0x1000 + 4 * i, 4, k[i].flags);
    const char *path = tmp_path("br.champsim");
    assert_int_equal(write_all(path, &tw_champsim, r, n), 0);
    size_t len;
    uint8_t *b = get_file(path, &len);
    assert_int_equal(len, 64 * n);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = b + 64 * i;
        assert_int_equal(u64at(p), 0x1000 + 4 * i);
        assert_int_equal(p[8], k[i].is_branch);
        assert_int_equal(p[9], k[i].taken);
        assert_memory_equal(p + 10, k[i].reg, 6);
        for (int j = 16; j < 64; j++)
            assert_int_equal(p[j], 0);
    }
    free(b);
    struct result res = read_back(path, &trace_champsim, 0, 64);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, n);
    for (size_t i = 0; i < n; i++) {
        if (res.r[i].flags != k[i].back)
            fail_msg("record %zu: flags 0x%x, want 0x%x", i, res.r[i].flags, k[i].back);
        assert_int_equal(res.r[i].size, 1);
    }
    free(res.r);
}

static void test_champsim_lines(void **state)
{
    (void)state;
    const struct trace_rec r[] = {
        REC(TREC_L, 0x5000, 4, 0), /* before any instruction: dropped (1) */
        REC(TREC_I, 0x401000, 3, 0),
        REC(TREC_L, 0x203c, 8, 0), /* straddles: 0x203c and 0x2040 */
        REC(TREC_L, 0x2008, 4, 0), /* a line already there */
        REC(TREC_S, 0x3000, 8, 0),
        REC(TREC_M, 0x3010, 4, 0),  /* store line there, load line new */
        REC(TREC_L, 0x4000, 1, 0),  /* the fourth load */
        REC(TREC_L, 0x4040, 1, 0),  /* a fifth line: dropped (2) */
        REC(TREC_S, 0x3ff8, 16, 0), /* 0x3ff8 new, 0x4000: no slot left (3) */
        REC(TREC_I, 0x401003, 2, TREC_F_BRANCH),
        REC(TREC_L, 0x10000, 1024, 0),              /* 16 lines: 4 kept (15) */
        REC(TREC_M, 0x10010, 0, 0),                 /* size 0: its line, held as a load, stored */
        REC(TREC_S, 0xffffffffffffffc8ull, 128, 0), /* runs off the end: one line */
        REC(TREC_S, 0, 4, 0),                       /* address 0 is "unused" (16) */
        REC(TREC_I, 0, 4, 0),                       /* refused by ChampSim (17) */
        REC(TREC_S, 0x9000, 8, 0),                  /* no instruction (18) */
        REC(TREC_I, 0x401005, 2, 0),
        REC(TREC_M, 0x10, 0x80000000u, 0), /* 2^25 lines in both: 6 kept */
    };
    size_t n = sizeof r / sizeof r[0];
    const char *path = tmp_path("lines.champsim");
    uint64_t dropped = write_all(path, &tw_champsim, r, n);
    assert_int_equal(dropped, 18 + 2 * (0x80000000ull / 64 + 1) - 6);
    struct result res = read_back(path, &trace_champsim, 0, 64);
    assert_int_equal(res.rc, 0);
    const struct trace_rec want[] = {
        REC(TREC_I, 0x401000, 1, 0),
        REC(TREC_L, 0x203c, 1, 0),
        REC(TREC_L, 0x2040, 1, 0),
        REC(TREC_L, 0x3010, 1, 0),
        REC(TREC_L, 0x4000, 1, 0),
        REC(TREC_S, 0x3000, 1, 0),
        REC(TREC_S, 0x3ff8, 1, 0),
        REC(TREC_I, 0x401003, 1, TREC_F_BRANCH | TREC_F_BR(TREC_BR_OTHER)),
        REC(TREC_L, 0x10000, 1, 0),
        REC(TREC_L, 0x10040, 1, 0),
        REC(TREC_L, 0x10080, 1, 0),
        REC(TREC_L, 0x100c0, 1, 0),
        REC(TREC_S, 0x10010, 1, 0),
        REC(TREC_S, 0xffffffffffffffc8ull, 1, 0),
        REC(TREC_I, 0x401005, 1, 0),
        REC(TREC_L, 0x10, 1, 0),
        REC(TREC_L, 0x40, 1, 0),
        REC(TREC_L, 0x80, 1, 0),
        REC(TREC_L, 0xc0, 1, 0),
        REC(TREC_S, 0x10, 1, 0),
        REC(TREC_S, 0x40, 1, 0),
    };
    assert_recs(res.r, res.n, want, sizeof want / sizeof want[0]);
    free(res.r);

    /* Split anywhere, .xz or not: the same bytes. */
    size_t len0, len;
    uint8_t *one = get_file(path, &len0);
    const char *zpath = tmp_path("lines.champsim.xz");
    for (size_t cut = 0; cut <= n; cut++) {
        write_cut(path, &tw_champsim, r, n, &cut, 1);
        uint8_t *b = get_file(path, &len);
        assert_int_equal(len, len0);
        assert_memory_equal(b, one, len);
        free(b);
    }
    assert_int_equal(write_cut(zpath, &tw_champsim, r, n, NULL, 0), dropped);
    uint8_t *raw = get_file(zpath, &len);
    assert_memory_equal(raw,
                        "\xfd"
                        "7zXZ",
                        5);
    free(raw);
    uint8_t *b = get_plain(zpath, &len);
    assert_int_equal(len, len0);
    assert_memory_equal(b, one, len);
    free(b);
    free(one);
}

/* ---------------------------------------------------------------- lackey */

static void test_lackey_writer(void **state)
{
    (void)state;
    const struct trace_rec r[] = {
        REC(TREC_I, 0x401b792, 2, TREC_F_BRANCH),
        REC(TREC_L, 0x1fff0006f0, 8, 0),
        REC(TREC_S, 0, 0, 0),
        REC(TREC_M, UINT64_MAX, 9999999, 4),
        REC(TREC_L, 0x10, 10000000, 0),
        REC(TREC_I, 0xabcdef12, 15, 0),
    };
    static const char want[] = "I  0401b792,2\n"
                               " L 1fff0006f0,8\n"
                               " S 00000000,0\n"
                               " M ffffffffffffffff,9999999\n"
                               "I  abcdef12,15\n";
    for (int xz = 0; xz < 2; xz++) {
        const char *path = tmp_path(xz ? "w.lackey.xz" : "w.lackey");
        assert_int_equal(write_all(path, NULL, r, 6), 1); /* the 8-digit size */
        size_t len;
        uint8_t *b = get_plain(path, &len);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(b, want, len);
        free(b);
        struct result res = read_back(path, &trace_lackey, 0, 8);
        assert_int_equal(res.rc, 0);
        const struct trace_rec back[] = {r[0], r[1], r[2], r[3], r[5]};
        struct trace_rec noflags[5];
        for (int i = 0; i < 5; i++) {
            noflags[i] = back[i];
            noflags[i].flags = 0;
        }
        assert_recs(res.r, res.n, noflags, 5);
        free(res.r);
    }
}

/* ---------------------------------------------------------------- errors */

static void test_write_errors(void **state)
{
    (void)state;
    const struct trace_rec r[] = {REC(TREC_I, 0x1000, 4, 0), REC(4, 0x2000, 4, 0)};
    for (unsigned f = 0; tw_at(f); f++) {
        const char *path = tmp_path("err.out");
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        struct tw *w;
        struct err e = {0};
        assert_int_equal(tw_open(&w, tw_at(f), fp, path, &e), 0);
        assert_int_equal(tw_put(w, r, 1, &e), 0);
        assert_int_equal(tw_put(w, r, 2, &e), -QOSIM_EINVAL);
        char want[256];
        snprintf(want, sizeof want, "%s: record 3: kind 4 is not I, L, S or M", path);
        assert_string_equal(e.msg, want);
        /* The writer only fails from then on. */
        assert_int_equal(tw_put(w, r, 1, &e), -QOSIM_EINVAL);
        snprintf(want, sizeof want, "%s: an earlier error stopped the writer", path);
        assert_string_equal(e.msg, want);
        assert_int_equal(tw_close(w, &e), -QOSIM_EINVAL);
        fclose(fp);

        /* A full disk: found at the latest when tw_close flushes. */
        fp = fopen("/dev/full", "wb");
        assert_non_null(fp);
        assert_int_equal(tw_open(&w, tw_at(f), fp, "/dev/full", &e), 0);
        int rc = 0;
        for (int i = 0; i < 100000 && !rc; i++)
            rc = tw_put(w, r, 1, &e);
        if (!rc)
            rc = tw_close(w, &e);
        else
            tw_free(w);
        assert_int_equal(rc, -QOSIM_EIO);
        assert_string_equal(e.msg, "/dev/full: write failed: No space left on device");
        fclose(fp);
    }
    /* Abandoned: nothing more is written. */
    const char *path = tmp_path("abandon.qtr");
    FILE *fp = fopen(path, "wb");
    struct tw *w;
    struct err e = {0};
    assert_int_equal(tw_open(&w, NULL, fp, path, &e), 0);
    assert_int_equal(tw_put(w, r, 1, &e), 0);
    tw_free(w);
    assert_int_equal(ftell(fp), 0);
    fclose(fp);
}

int main(void)
{
    rng_seed(&rng_s, 7, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),       cmocka_unit_test(test_qtr_round_trip),
        cmocka_unit_test(test_qtr_bytes),      cmocka_unit_test(test_qtr_malformed),
        cmocka_unit_test(test_qtr_offsets),    cmocka_unit_test(test_champsim_branches),
        cmocka_unit_test(test_champsim_lines), cmocka_unit_test(test_lackey_writer),
        cmocka_unit_test(test_write_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
