/* Unit tests of the trace readers (src/sim/trace*.c) and the byte source
 * under them (src/sim/trace/bsrc.c): every record kind of each format with exact
 * fields, every error with its code and the line or record in its message,
 * skip-bad counting, buffer refills, .xz input and standard input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <zstd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The Lackey reader once more, compiled without SSE2: the scalar address
 * parser must behave exactly like the vector one, so every Lackey test runs
 * against both. */
#pragma push_macro("__SSE2__")
#undef __SSE2__
#define trace_lackey trace_lackey_scalar
#include "sim/trace/trace_lackey.c"
#include "util/rng.h"
#undef trace_lackey
#pragma pop_macro("__SSE2__")

/* trace.c's TRACE_BUF: the longest line, newline included, is one less. */
#define LINE_BUF (1u << 20)

/* ---------------------------------------------------------------- helpers */

static char tmpdir[64];
static char *tmp_paths[64];
static int ntmp;

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/qosim-test-trace-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    for (int i = 0; i < ntmp; i++) {
        unlink(tmp_paths[i]);
        free(tmp_paths[i]);
    }
    ntmp = 0;
    return rmdir(tmpdir);
}

/* Writes data to tmpdir/name (replacing it) and returns the path. */
static const char *tmp_file(const char *name, const void *data, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, (const char *)data + off, len - off);
        assert_true(w > 0);
        off += (size_t)w;
    }
    assert_int_equal(close(fd), 0);
    for (int i = 0; i < ntmp; i++)
        if (!strcmp(tmp_paths[i], path))
            return tmp_paths[i];
    assert_true(ntmp < (int)(sizeof tmp_paths / sizeof tmp_paths[0]));
    tmp_paths[ntmp] = strdup(path);
    assert_non_null(tmp_paths[ntmp]);
    return tmp_paths[ntmp++];
}

static const char *tmp_str(const char *name, const char *s)
{
    return tmp_file(name, s, strlen(s));
}

/* Everything one reading of a trace gave. */
struct result {
    struct trace_rec *r;
    size_t n, cap;
    long rc; /* 0, or the error trace_open or trace_read returned */
    uint64_t bad, bad_first;
    char name[256];
    char msg[512];
};

static void result_free(struct result *res)
{
    free(res->r);
    res->r = NULL;
}

/* Opens path and reads it to the end or the first error in batches of
 * batch records, checking what every reader promises on the way. */
static struct result read_all(const char *path, const struct trace_ops *ops, int skip_bad,
                              size_t batch)
{
    struct result res = {0};
    struct trace t;
    struct err e = {0};
    res.rc = trace_open(&t, path, ops, skip_bad, &e);
    if (res.rc) {
        assert_int_equal(e.code, res.rc);
        snprintf(res.msg, sizeof res.msg, "%s", e.msg);
        trace_close(&t); /* harmless after a failed open */
        return res;
    }
    snprintf(res.name, sizeof res.name, "%s", t.name);
    struct trace_rec *buf = malloc(batch * sizeof *buf);
    assert_non_null(buf);
    for (;;) {
        memset(buf, 0xa5, batch * sizeof *buf);
        long got = trace_read(&t, buf, batch);
        if (got < 0) {
            res.rc = got;
            assert_int_equal(t.err.code, got);
            snprintf(res.msg, sizeof res.msg, "%s", t.err.msg);
            break;
        }
        if (!got) {
            /* The end stays the end. */
            assert_int_equal(trace_read(&t, buf, batch), 0);
            break;
        }
        assert_true((size_t)got <= batch);
        if (res.n + (size_t)got > res.cap) {
            res.cap = (res.n + (size_t)got) * 2;
            res.r = realloc(res.r, res.cap * sizeof *res.r);
            assert_non_null(res.r);
        }
        memcpy(res.r + res.n, buf, (size_t)got * sizeof *buf);
        res.n += (size_t)got;
    }
    if (!skip_bad)
        assert_int_equal(t.bad, 0);
    res.bad = t.bad;
    res.bad_first = t.bad_first;
    free(buf);
    trace_close(&t);
    return res;
}

#define ASSERT_REC(res, i, k, a, s, f)                                                             \
    do {                                                                                           \
        assert_true((size_t)(i) < (res).n);                                                        \
        const struct trace_rec *r_ = &(res).r[i];                                                  \
        assert_int_equal(r_->kind, (k));                                                           \
        assert_int_equal(r_->addr, (a));                                                           \
        assert_int_equal(r_->size, (s));                                                           \
        assert_int_equal(r_->flags, (f));                                                          \
    } while (0)

/* The error code, the message's start "PATH:WHERE: " (where "record" alone
 * checks "PATH:record") and a part of the rest. */
static void check_err(const struct result *res, long code, const char *path, const char *where,
                      const char *what)
{
    char want[512];
    snprintf(want, sizeof want, "%s:%s%s", path, where, strncmp(where, "record", 7) ? ": " : "");
    if (strncmp(res->msg, want, strlen(want)))
        fail_msg("message \"%s\" does not start with \"%s\"", res->msg, want);
    if (what && !strstr(res->msg, what))
        fail_msg("message \"%s\" does not contain \"%s\"", res->msg, what);
    assert_int_equal(res->rc, code);
}

static void assert_same_recs(const struct result *a, const struct result *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        if (a->r[i].kind != b->r[i].kind || a->r[i].addr != b->r[i].addr ||
            a->r[i].size != b->r[i].size || a->r[i].flags != b->r[i].flags)
            fail_msg("record %zu differs: kind %u/%u addr %llx/%llx size %u/%u flags %u/%u", i,
                     a->r[i].kind, b->r[i].kind, (unsigned long long)a->r[i].addr,
                     (unsigned long long)b->r[i].addr, a->r[i].size, b->r[i].size, a->r[i].flags,
                     b->r[i].flags);
    }
}

/* .xz of data, as xz(1) would write it (CRC64 check). */
static uint8_t *xz_encode(const void *data, size_t len, size_t *out_len)
{
    size_t cap = lzma_stream_buffer_bound(len);
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    *out_len = 0;
    assert_int_equal(
        lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, data, len, out, out_len, cap), LZMA_OK);
    return out;
}

/* How many bytes a streaming decoder gets out of a damaged .xz before it
 * stops: what bsrc delivers before its error. */
static size_t xz_decodable(const uint8_t *in, size_t len)
{
    lzma_stream s = LZMA_STREAM_INIT;
    assert_int_equal(lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED), LZMA_OK);
    static uint8_t out[1 << 16];
    size_t total = 0;
    s.next_in = in;
    s.avail_in = len;
    for (;;) {
        s.next_out = out;
        s.avail_out = sizeof out;
        lzma_ret r = lzma_code(&s, LZMA_FINISH);
        total += sizeof out - s.avail_out;
        if (r != LZMA_OK)
            break;
    }
    lzma_end(&s);
    return total;
}

/* zstd of data, as zstd(1) writes it (with its checksum). */
static uint8_t *zst_encode(const void *data, size_t len, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(len);
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    assert_non_null(c);
    assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)));
    *out_len = ZSTD_compress2(c, out, cap, data, len);
    assert_false(ZSTD_isError(*out_len));
    ZSTD_freeCCtx(c);
    return out;
}

/* How many bytes a streaming decoder gets out of a damaged zstd input. */
static size_t zst_decodable(const uint8_t *in, size_t len)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    assert_non_null(d);
    static uint8_t out[1 << 16];
    ZSTD_inBuffer ib = {in, len, 0};
    size_t total = 0;
    for (;;) {
        ZSTD_outBuffer ob = {out, sizeof out, 0};
        size_t r = ZSTD_decompressStream(d, &ob, &ib);
        total += ob.pos;
        if (ZSTD_isError(r) || (!ob.pos && ib.pos == ib.size))
            break;
    }
    ZSTD_freeDStream(d);
    return total;
}

/* A growing text buffer. */
struct text {
    char *s;
    size_t len, cap;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (t->s && (size_t)k < t->cap - t->len) {
            t->len += (size_t)k;
            return;
        }
        t->cap = (t->cap + (size_t)k + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
}

static void text_fill(struct text *t, char c, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        assert_non_null(t->s);
    }
    memset(t->s + t->len, c, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static struct rng rng_s; /* seeded in main() */

/* Standard input replaced by fd until stdin_restore. */
static int stdin_from(int fd)
{
    int saved = dup(STDIN_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    return saved;
}

static void stdin_restore(int saved)
{
    assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
    close(saved);
}

/* A child that writes data into a pipe, its first bytes one at a time with
 * pauses, so the reader sees them in pieces; returns the read end. */
static int slow_pipe(const void *data, size_t len, pid_t *pid)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    *pid = fork();
    assert_true(*pid >= 0);
    if (!*pid) {
        close(p[0]);
        const char *d = data;
        size_t off = 0;
        for (; off < len && off < 10; off++) {
            if (write(p[1], d + off, 1) != 1)
                _exit(1);
            usleep(2000);
        }
        while (off < len) {
            ssize_t w = write(p[1], d + off, len - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(p[1]);
    return p[0];
}

static void child_done(pid_t pid)
{
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* ---------------------------------------------------------------- registry */

static void test_registry(void **state)
{
    (void)state;
    assert_ptr_equal(trace_at(0), &trace_lackey);
    assert_ptr_equal(trace_at(1), &trace_champsim);
    assert_ptr_equal(trace_at(2), &trace_din);
    assert_ptr_equal(trace_at(3), &trace_qtr);
    assert_null(trace_at(4));
    assert_null(trace_at(1000));
    assert_ptr_equal(trace_find("lackey"), &trace_lackey);
    assert_ptr_equal(trace_find("champsim"), &trace_champsim);
    assert_ptr_equal(trace_find("din"), &trace_din);
    assert_ptr_equal(trace_find("qtr"), &trace_qtr);
    assert_null(trace_find("Lackey"));
    assert_null(trace_find(""));
    assert_null(trace_find("dinero"));
    for (unsigned i = 0; trace_at(i); i++) {
        assert_non_null(trace_at(i)->read);
        assert_true(strlen(trace_at(i)->desc) > 0);
    }
    assert_string_equal(trace_guess("run.champsim.xz"), "champsim");
    assert_string_equal(trace_guess("/data/600.perlbench-champsim"), "champsim");
    assert_string_equal(trace_guess("ls.din"), "din");
    assert_string_equal(trace_guess("ls.din.xz"), "din");
    assert_string_equal(trace_guess("ls.lackey"), "lackey");
    assert_string_equal(trace_guess("ls.qtr"), "qtr");
    assert_string_equal(trace_guess("/data/ls.qtr.zst"), "qtr");
    assert_string_equal(trace_guess("gcc-champsim.qtr"), "qtr");
    assert_string_equal(trace_guess("-"), "lackey");
    assert_string_equal(trace_guess("trace.out"), "lackey");
}

/* ---------------------------------------------------------------- opening */

static void test_open_errors(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/absent.lackey", tmpdir);
    struct trace t;
    struct err e = {0};
    assert_int_equal(trace_open(&t, path, &trace_lackey, 0, &e), -QOSIM_ENOENT);
    assert_int_equal(e.code, -QOSIM_ENOENT);
    char want[512];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    assert_string_equal(e.msg, want);
    trace_close(&t);

    /* A directory opens but cannot be read. */
    assert_int_equal(trace_open(&t, tmpdir, &trace_din, 0, &e), -QOSIM_EIO);
    snprintf(want, sizeof want, "%s: read failed: Is a directory", tmpdir);
    assert_string_equal(e.msg, want);
    trace_close(&t);

    /* Without an err to fill, only the code. */
    assert_int_equal(trace_open(&t, path, &trace_champsim, 0, NULL), -QOSIM_ENOENT);
    trace_close(&t);
}

static void test_empty_files(void **state)
{
    (void)state;
    const char *path = tmp_str("empty", "");
    for (unsigned i = 0; trace_at(i); i++) {
        struct result res = read_all(path, trace_at(i), 0, TRACE_MIN_BATCH);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, 0);
        assert_string_equal(res.name, path);
        result_free(&res);
    }
}

/* ---------------------------------------------------------------- lackey */

static void test_lackey_kinds(void **state)
{
    const struct trace_ops *ops = *state;
    const char *path = tmp_str("kinds.lackey", "I  0400d7d4,8\n"
                                               " L 7ff000398,8\n"
                                               " S 1ffefff9c0,4\n"
                                               " M 0601040,16\n"
                                               "I  00000000,1\n"
                                               " L 1,9999999\n");
    struct result res = read_all(path, ops, 0, 64);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 6);
    ASSERT_REC(res, 0, TREC_I, 0x0400d7d4, 8, 0);
    ASSERT_REC(res, 1, TREC_L, 0x7ff000398, 8, 0);
    ASSERT_REC(res, 2, TREC_S, 0x1ffefff9c0, 4, 0);
    ASSERT_REC(res, 3, TREC_M, 0x0601040, 16, 0);
    ASSERT_REC(res, 4, TREC_I, 0, 1, 0);
    ASSERT_REC(res, 5, TREC_L, 1, 9999999, 0);
    assert_int_equal(res.bad, 0);
    result_free(&res);
}

/* ==PID== lines of any length and empty lines are skipped, and counted as
 * lines: the error after them names the right line. */
static void test_lackey_pid_and_blank(void **state)
{
    const struct trace_ops *ops = *state;
    struct text t = {0};
    text_add(&t, "==1==\n");                                      /* 1 */
    text_add(&t, "==12345== Lackey, an example Valgrind tool\n"); /* 2 */
    text_add(&t, "\n");                                           /* 3 */
    text_add(&t, "I  10,4\n");                                    /* 4 */
    text_add(&t, "==\n");                                         /* 5 */
    text_add(&t, "==7== ");                                       /* 6: 100000 bytes */
    text_fill(&t, 'x', 100000 - 6);
    text_add(&t, "\n\n\n");           /* 6, 7, 8 */
    text_add(&t, " S 20,8\n");        /* 9 */
    text_add(&t, "==99== I  30,4\n"); /* 10: a record inside is not one */
    text_add(&t, "\n");               /* 11 */
    text_add(&t, " L 40,2\n");        /* 12 */
    text_add(&t, "=1=\n");            /* 13: not a Valgrind line */
    const char *path = tmp_file("pid.lackey", t.s, t.len);
    struct result res = read_all(path, ops, 0, TRACE_MIN_BATCH);
    check_err(&res, -QOSIM_EPARSE, path, "13", "malformed lackey record \"=1=\"");
    /* The batch that met the error is lost: here, all three records. */
    assert_int_equal(res.n, 0);
    result_free(&res);

    res = read_all(path, ops, 1, TRACE_MIN_BATCH);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 3);
    ASSERT_REC(res, 0, TREC_I, 0x10, 4, 0);
    ASSERT_REC(res, 1, TREC_S, 0x20, 8, 0);
    ASSERT_REC(res, 2, TREC_L, 0x40, 2, 0);
    assert_int_equal(res.bad, 1);
    assert_int_equal(res.bad_first, 13);
    result_free(&res);
    free(t.s);
}

static void test_lackey_no_final_newline(void **state)
{
    const struct trace_ops *ops = *state;
    struct result res = read_all(tmp_str("nonl.lackey", "I  10,4\n M abc,8"), ops, 0, 64);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 2);
    ASSERT_REC(res, 0, TREC_I, 0x10, 4, 0);
    ASSERT_REC(res, 1, TREC_M, 0xabc, 8, 0);
    result_free(&res);

    /* Shorter than the 6 bytes read to recognise .xz. */
    res = read_all(tmp_str("short.lackey", "I  a,1"), ops, 0, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 1);
    ASSERT_REC(res, 0, TREC_I, 0xa, 1, 0);
    result_free(&res);

    res = read_all(tmp_str("pidonly.lackey", "==5== done"), ops, 0, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 0);
    result_free(&res);

    const char *path = tmp_str("nonlbad.lackey", "I  10,4\n L 10,4x");
    res = read_all(path, ops, 0, 64);
    check_err(&res, -QOSIM_EPARSE, path, "2", "\" L 10,4x\"");
    result_free(&res);
}

/* Addresses of every length from 1 to 16 digits, both cases, against strtoull. */
static void test_lackey_addr_digits(void **state)
{
    const struct trace_ops *ops = *state;
    struct text t = {0};
    uint64_t want[16 * 4];
    int n = 0;
    for (int digits = 1; digits <= 16; digits++)
        for (int v = 0; v < 4; v++) {
            uint64_t a = rng_next(&rng_s);
            if (digits < 16)
                a &= (1ull << (4 * digits)) - 1;
            if (v == 0) /* all f: every digit is a letter */
                a = digits < 16 ? (1ull << (4 * digits)) - 1 : UINT64_MAX;
            char s[17];
            snprintf(s, sizeof s, v == 2 ? "%0*llX" : "%0*llx", digits, (unsigned long long)a);
            if (v == 3) /* mixed case */
                for (int i = 0; s[i]; i += 2)
                    s[i] = (char)(s[i] >= 'a' ? s[i] - 32 : s[i]);
            assert_int_equal(strtoull(s, NULL, 16), a);
            text_add(&t, "%s%s,%d\n", (n % 4 == 0) ? "I  " : " L ", s, n + 1);
            want[n++] = a;
        }
    text_add(&t, " S DEADBEEFCAFEBABE,8\n");
    text_add(&t, " S 0000000000000000,8\n");
    text_add(&t, " S FfFfFfFfFfFfFfFf,8\n");
    struct result res = read_all(tmp_file("digits.lackey", t.s, t.len), ops, 0, 1024);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, n + 3);
    for (int i = 0; i < n; i++)
        ASSERT_REC(res, i, i % 4 == 0 ? TREC_I : TREC_L, want[i], (uint32_t)i + 1, 0);
    ASSERT_REC(res, n, TREC_S, 0xdeadbeefcafebabeull, 8, 0);
    ASSERT_REC(res, n + 1, TREC_S, 0, 8, 0);
    ASSERT_REC(res, n + 2, TREC_S, UINT64_MAX, 8, 0);
    result_free(&res);
    free(t.s);
}

/* Each bad line after a good one: the error names line 2 and the reason. */
static void test_lackey_malformed(void **state)
{
    const struct trace_ops *ops = *state;
    static const char *const bad[] = {
        "I 10,4",                 /* one blank after I */
        "I   10,4",               /* three */
        "X  10,4",                /* unknown kind */
        " l 10,4",                /* lower-case kind */
        "\tL 10,4",               /* tab for blank */
        "L  10,4",                /* data kind in the I column */
        " I 10,4",                /* I in the data column */
        " L 10 4",                /* no comma */
        " L ,4",                  /* no address */
        " L 10,",                 /* no size */
        " L 10,4x",               /* text after the size */
        " L 10,4 ",               /* blank after the size */
        " L 10,4\r",              /* CR */
        " L 0x10,4",              /* 0x prefix */
        " L 10,-4",               /* negative size */
        " L 10,+4",               /* signed size */
        " L -10,4",               /* negative address */
        " L 1g,4",                /* not hex */
        " L 12345678g,4",         /* not hex after eight digits */
        " L 10,,4",               /* two commas */
        " L 10,4,4",              /* three fields */
        " L",                     /* nothing after the kind */
        "I",                      /* nothing after I */
        "=",                      /* half a Valgrind mark */
        " ",                      /* a blank */
        "I  10000000000000000,4", /* 17 digits */
        "I  00000000000000000,4", /* 17 digits, all zero */
        " L ABCDEF0123456789a,4", /* 17 digits, upper and lower */
        " S 10,10000000",         /* 8-digit size */
        " S 10,00000001",         /* 8-digit size, leading zeros */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char body[128], quoted[128];
        snprintf(body, sizeof body, "I  400,4\n%s\n L 500,8\n", bad[i]);
        const char *path = tmp_str("bad.lackey", body);
        struct result res = read_all(path, ops, 0, 64);
        trace_quote(quoted, sizeof quoted, bad[i], bad[i] + strlen(bad[i]));
        char what[200];
        snprintf(what, sizeof what, "malformed lackey record \"%s\" (expected", quoted);
        check_err(&res, -QOSIM_EPARSE, path, "2", what);
        result_free(&res);

        res = read_all(path, ops, 1, 64);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, 2);
        ASSERT_REC(res, 0, TREC_I, 0x400, 4, 0);
        ASSERT_REC(res, 1, TREC_L, 0x500, 8, 0);
        assert_int_equal(res.bad, 1);
        assert_int_equal(res.bad_first, 2);
        result_free(&res);
    }
}

/* The whole message, and how it quotes what is not printable or too long. */
static void test_lackey_message(void **state)
{
    const struct trace_ops *ops = *state;
    const char *path = tmp_str("msg.lackey", "I  1,1\n\n L 2,\\2\x01\n");
    struct result res = read_all(path, ops, 0, 8);
    char want[512];
    snprintf(want, sizeof want,
             "%s:3: malformed lackey record \" L 2,\\x5c2\\x01\" (expected \"I  ADDR,SIZE\", "
             "\" L|S|M ADDR,SIZE\" with hex ADDR of at most 16 digits and decimal SIZE of at most "
             "7, or a ==PID== line)",
             path);
    assert_string_equal(res.msg, want);
    assert_int_equal(res.rc, -QOSIM_EPARSE);
    result_free(&res);

    struct text t = {0};
    text_fill(&t, 'Z', 100);
    text_add(&t, "\n");
    path = tmp_file("long.lackey", t.s, t.len);
    res = read_all(path, ops, 0, 8);
    char q[80] = "\"";
    memset(q + 1, 'Z', 59);
    strcpy(q + 60, "...\" (");
    check_err(&res, -QOSIM_EPARSE, path, "1", q);
    result_free(&res);
    free(t.s);
}

static void test_lackey_skip_bad(void **state)
{
    const struct trace_ops *ops = *state;
    const char *path = tmp_str("skip.lackey", "==1== start\n"   /* 1 */
                                              " L 1,1\n"        /* 2 */
                                              "junk\n"          /* 3 */
                                              "I  2,2\n"        /* 4 */
                                              "\n"              /* 5 */
                                              " S 3,99999999\n" /* 6 */
                                              " M 4,4\n"        /* 7 */
                                              " Q 5,5\n"        /* 8 */
                                              "I  6,6");        /* 9 */
    struct result res = read_all(path, ops, 1, TRACE_MIN_BATCH);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 4);
    ASSERT_REC(res, 0, TREC_L, 1, 1, 0);
    ASSERT_REC(res, 1, TREC_I, 2, 2, 0);
    ASSERT_REC(res, 2, TREC_M, 4, 4, 0);
    ASSERT_REC(res, 3, TREC_I, 6, 6, 0);
    assert_int_equal(res.bad, 3);
    assert_int_equal(res.bad_first, 3);
    result_free(&res);

    res = read_all(path, ops, 0, TRACE_MIN_BATCH);
    check_err(&res, -QOSIM_EPARSE, path, "3", "\"junk\"");
    result_free(&res);
}

/* A line fills the buffer at most: LINE_BUF - 2 bytes and a newline. */
static void test_lackey_long_lines(void **state)
{
    const struct trace_ops *ops = *state;
    for (int last = 0; last < 2; last++) {
        /* The longest Valgrind line, then a record; or last, without newline. */
        struct text t = {0};
        text_add(&t, "I  10,4\n==1== ");
        text_fill(&t, 'v', LINE_BUF - 2 - 6);
        text_add(&t, last ? "" : "\n L 20,8\n");
        const char *path = tmp_file("longest.lackey", t.s, t.len);
        struct result res = read_all(path, ops, 0, TRACE_MIN_BATCH);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, last ? 1 : 2);
        ASSERT_REC(res, 0, TREC_I, 0x10, 4, 0);
        if (!last)
            ASSERT_REC(res, 1, TREC_L, 0x20, 8, 0);
        result_free(&res);

        /* One byte more is refused, even when the line is to be skipped. */
        t.len -= last ? 0 : strlen("\n L 20,8\n");
        text_fill(&t, 'v', 1);
        text_add(&t, last ? "" : "\n L 20,8\n");
        path = tmp_file("toolong.lackey", t.s, t.len);
        for (int skip = 0; skip < 2; skip++) {
            res = read_all(path, ops, skip, TRACE_MIN_BATCH);
            check_err(&res, -QOSIM_EPARSE, path, "2", "line longer than 1048575 bytes");
            result_free(&res);
        }
        free(t.s);
    }

    /* A long malformed line is refused as malformed, quoted in part. */
    struct text t = {0};
    text_add(&t, "\n\n\nI  ");
    text_fill(&t, '1', 500000);
    text_add(&t, ",4\n");
    const char *path = tmp_file("longbad.lackey", t.s, t.len);
    struct result res = read_all(path, ops, 0, TRACE_MIN_BATCH);
    check_err(&res, -QOSIM_EPARSE, path, "4", "\"I  11111111111");
    result_free(&res);
    free(t.s);
}

/* A random trace of more than 1 MiB, with its records. */
static void gen_lackey(struct text *t, struct result *want, size_t bytes)
{
    static const char *const prefix[] = {"I  ", " L ", " S ", " M "};
    static const unsigned kinds[] = {TREC_I, TREC_L, TREC_S, TREC_M};
    while (t->len < bytes) {
        uint64_t x = rng_next(&rng_s);
        if (x % 64 == 0) {
            text_add(t, "==%u== ", (unsigned)(x >> 8) % 100000);
            text_fill(t, '-', (x >> 24) % 3000);
            text_add(t, "\n");
            continue;
        }
        if (x % 64 == 1) {
            text_add(t, "\n");
            continue;
        }
        int digits = 1 + (int)((x >> 8) % 16);
        uint64_t a = rng_next(&rng_s);
        if (digits < 16)
            a &= (1ull << (4 * digits)) - 1;
        int sdig = 1 + (int)((x >> 16) % 7);
        uint32_t size = (uint32_t)(rng_next(&rng_s) % 10000000);
        static const uint32_t pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
        size %= pow10[sdig];
        unsigned k = (unsigned)(x >> 32) % 4;
        text_add(t, (x >> 40) & 1 ? "%s%0*llX,%0*u\n" : "%s%0*llx,%0*u\n", prefix[k], digits,
                 (unsigned long long)a, sdig, size);
        if (want->n == want->cap) {
            want->cap = want->cap ? want->cap * 2 : 1024;
            want->r = realloc(want->r, want->cap * sizeof *want->r);
            assert_non_null(want->r);
        }
        want->r[want->n++] = (struct trace_rec){.addr = a, .size = size, .kind = (uint8_t)kinds[k]};
    }
}

static void test_lackey_batches(void **state)
{
    const struct trace_ops *ops = *state;
    struct text t = {0};
    struct result want = {0};
    gen_lackey(&t, &want, 3 * LINE_BUF + 12345);
    const char *path = tmp_file("big.lackey", t.s, t.len);
    static const size_t batches[] = {TRACE_MIN_BATCH, TRACE_MIN_BATCH + 1, 1000, 1 << 16};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        struct result res = read_all(path, ops, 0, batches[i]);
        assert_int_equal(res.rc, 0);
        assert_same_recs(&res, &want);
        result_free(&res);
    }

    size_t zlen;
    uint8_t *z = xz_encode(t.s, t.len, &zlen);
    path = tmp_file("big.lackey.xz", z, zlen);
    for (size_t b = TRACE_MIN_BATCH; b <= 1 << 16; b <<= 13) {
        struct result res = read_all(path, ops, 0, b);
        assert_int_equal(res.rc, 0);
        assert_same_recs(&res, &want);
        result_free(&res);
    }
    free(z);
    result_free(&want);
    free(t.s);
}

static void test_lackey_stdin(void **state)
{
    const struct trace_ops *ops = *state;
    const char *body = "I  10,4\n L 20,8\nbad\n";
    const char *path = tmp_str("stdin.lackey", body);

    /* A file as standard input. */
    int saved = stdin_from(open(path, O_RDONLY));
    struct result res = read_all("-", ops, 0, TRACE_MIN_BATCH);
    stdin_restore(saved);
    assert_string_equal(res.name, "<stdin>");
    check_err(&res, -QOSIM_EPARSE, "<stdin>", "3", "\"bad\"");
    result_free(&res);

    /* A pipe, with skip-bad. */
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], body, strlen(body)), (ssize_t)strlen(body));
    close(p[1]);
    saved = stdin_from(p[0]);
    res = read_all("-", ops, 1, TRACE_MIN_BATCH);
    stdin_restore(saved);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 2);
    ASSERT_REC(res, 0, TREC_I, 0x10, 4, 0);
    ASSERT_REC(res, 1, TREC_L, 0x20, 8, 0);
    assert_int_equal(res.bad, 1);
    assert_int_equal(res.bad_first, 3);
    result_free(&res);

    /* .xz through a pipe that delivers the magic bytes one at a time. */
    size_t zlen;
    uint8_t *z = xz_encode(body, strlen(body) - 4, &zlen);
    pid_t pid;
    saved = stdin_from(slow_pipe(z, zlen, &pid));
    res = read_all("-", ops, 0, TRACE_MIN_BATCH);
    stdin_restore(saved);
    child_done(pid);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 2);
    ASSERT_REC(res, 0, TREC_I, 0x10, 4, 0);
    ASSERT_REC(res, 1, TREC_L, 0x20, 8, 0);
    result_free(&res);
    free(z);

    /* Standard input is not closed by trace_close. */
    assert_true(fcntl(STDIN_FILENO, F_GETFD) >= 0);
}

/* A small Lackey text compressed by enc reads back whole; returns the
 * compressed bytes for more checks. */
static uint8_t *check_compressed(uint8_t *(*enc)(const void *, size_t, size_t *), const char *name,
                                 size_t *zlen)
{
    const char *body = "==3== hello\nI  1000,4\n L 2000,8\n\n S 3000,2\n M 4000,1";
    uint8_t *z = enc(body, strlen(body), zlen);
    struct result res = read_all(tmp_file(name, z, *zlen), &trace_lackey, 0, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 4);
    ASSERT_REC(res, 0, TREC_I, 0x1000, 4, 0);
    ASSERT_REC(res, 1, TREC_L, 0x2000, 8, 0);
    ASSERT_REC(res, 2, TREC_S, 0x3000, 2, 0);
    ASSERT_REC(res, 3, TREC_M, 0x4000, 1, 0);
    result_free(&res);
    return z;
}

/* ---------------------------------------------------------------- .xz */

static void test_xz_round_trip(void **state)
{
    (void)state;
    size_t zlen;
    uint8_t *z = check_compressed(xz_encode, "rt.lackey.xz", &zlen);
    struct result res;

    /* Recognised by content, whatever the name; two streams concatenated, as
     * `xz -c a b` writes them, are one text: here the first lacks the final
     * newline, so the second one's empty first line completes its last. */
    size_t z2len;
    uint8_t *z2 = xz_encode("\nI  5000,4\n", 11, &z2len);
    uint8_t *cat = malloc(zlen + z2len);
    assert_non_null(cat);
    memcpy(cat, z, zlen);
    memcpy(cat + zlen, z2, z2len);
    const char *path = tmp_file("cat.txt", cat, zlen + z2len);
    res = read_all(path, &trace_lackey, 0, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 5);
    ASSERT_REC(res, 3, TREC_M, 0x4000, 1, 0);
    ASSERT_REC(res, 4, TREC_I, 0x5000, 4, 0);
    result_free(&res);
    free(cat);
    free(z2);
    free(z);

    /* Five of the six magic bytes is plain text (and malformed). */
    path = tmp_file("notxz.lackey",
                    "\xfd"
                    "7zXZ\x01\n",
                    7);
    res = read_all(path, &trace_lackey, 0, 8);
    check_err(&res, -QOSIM_EPARSE, path, "1", "\"\\xfd7zXZ\\x01\"");
    result_free(&res);
}

static void test_xz_corrupt(void **state)
{
    (void)state;
    const char *body = "I  1000,4\n L 2000,8\n S 3000,2\n M 4000,1\n"
                       "I  1004,4\n L 2008,8\n S 3002,2\n M 4001,1\n";
    size_t zlen;
    uint8_t *z = xz_encode(body, strlen(body), &zlen);

    /* A flipped byte in the compressed data. */
    z[zlen / 2] ^= 0x55;
    const char *path = tmp_file("corrupt.lackey.xz", z, zlen);
    for (int skip = 0; skip < 2; skip++) {
        struct result res = read_all(path, &trace_lackey, skip, 8);
        check_err(&res, -QOSIM_EXZ, path, "1", ": corrupt .xz data (after ");
        assert_int_equal(res.n, 0);
        result_free(&res);
        res = read_all(path, &trace_din, skip, 8);
        check_err(&res, -QOSIM_EXZ, path, "1", ": corrupt .xz data (after ");
        result_free(&res);
    }
    z[zlen / 2] ^= 0x55;

    /* A damaged stream header. */
    z[7] ^= 0x01;
    path = tmp_file("header.lackey.xz", z, zlen);
    struct result res = read_all(path, &trace_lackey, 0, 8);
    check_err(&res, -QOSIM_EXZ, path, "1", ".xz");
    result_free(&res);
    z[7] ^= 0x01;

    /* Garbage after the stream. Too short for a stream header, it reads as a
     * truncated next stream, found in a decoder call of its own: all 8 lines
     * come through and the error names line 9. Longer, the decoder finds it
     * corrupt in the call that decoded the 8 lines, and bsrc drops what that
     * call produced: no records, line 1. */
    uint8_t *g = malloc(zlen + 16);
    assert_non_null(g);
    memcpy(g, z, zlen);
    memcpy(g + zlen, "garbage!garbage!", 16);
    path = tmp_file("trail.lackey.xz", g, zlen + 8);
    res = read_all(path, &trace_lackey, 0, 8);
    check_err(&res, -QOSIM_ETRUNC, path, "9", ": truncated .xz stream (after ");
    assert_int_equal(res.n, 8);
    ASSERT_REC(res, 7, TREC_M, 0x4001, 1, 0);
    result_free(&res);
    path = tmp_file("trail.lackey.xz", g, zlen + 16);
    res = read_all(path, &trace_lackey, 0, 8);
    check_err(&res, -QOSIM_EXZ, path, "1", ": corrupt .xz data (after ");
    assert_int_equal(res.n, 0);
    result_free(&res);
    free(g);
    free(z);
}

static void test_xz_truncated(void **state)
{
    (void)state;
    struct text t = {0};
    for (int i = 0; i < 200; i++)
        text_add(&t, " L %x,%d\n", i * 64 + 0x1000, 1 + i % 8);
    size_t zlen;
    uint8_t *z = xz_encode(t.s, t.len, &zlen);
    /* The error names the line where the data stops: the line after the
     * last newline the decoder could deliver. */
    const size_t cuts[] = {6, 12, zlen / 3, zlen / 2, zlen - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t got = xz_decodable(z, cuts[i]);
        assert_true(got <= t.len);
        assert_true(i < 2 ? got == 0 : i == 4 ? got == t.len : got > 0 && got < t.len);
        unsigned line = 1;
        for (size_t j = 0; j < got; j++)
            line += t.s[j] == '\n';
        char where[16];
        snprintf(where, sizeof where, "%u", line);
        const char *path = tmp_file("trunc.lackey.xz", z, cuts[i]);
        for (int skip = 0; skip < 2; skip++) {
            for (size_t batch = TRACE_MIN_BATCH; batch <= 1024; batch *= 128) {
                struct result res = read_all(path, &trace_lackey, skip, batch);
                check_err(&res, -QOSIM_ETRUNC, path, where, ": truncated .xz stream (after ");
                assert_true(res.n <= line - 1);
                for (size_t j = 0; j < res.n; j++)
                    ASSERT_REC(res, j, TREC_L, j * 64 + 0x1000, 1 + j % 8, 0);
                result_free(&res);
            }
        }
    }
    free(z);
    free(t.s);
}

/* ---------------------------------------------------------------- zstd */

static void test_zstd_round_trip(void **state)
{
    (void)state;
    size_t zlen;
    uint8_t *z = check_compressed(zst_encode, "rt.lackey.zst", &zlen);
    struct result res;

    /* Recognised by content; frames concatenated (`cat a.zst b.zst`), an
     * empty one among them, are one text, as for .xz. */
    size_t z2len, z3len;
    uint8_t *z2 = zst_encode("", 0, &z2len);
    uint8_t *z3 = zst_encode("\nI  5000,4\n", 11, &z3len);
    uint8_t *cat = malloc(zlen + z2len + z3len);
    assert_non_null(cat);
    memcpy(cat, z, zlen);
    memcpy(cat + zlen, z2, z2len);
    memcpy(cat + zlen + z2len, z3, z3len);
    const char *path = tmp_file("cat.txt", cat, zlen + z2len + z3len);
    for (size_t batch = TRACE_MIN_BATCH; batch <= 1024; batch *= 128) {
        res = read_all(path, &trace_lackey, 0, batch);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, 5);
        ASSERT_REC(res, 3, TREC_M, 0x4000, 1, 0);
        ASSERT_REC(res, 4, TREC_I, 0x5000, 4, 0);
        result_free(&res);
    }
    /* An empty frame alone is an empty trace. */
    res = read_all(tmp_file("empty.zst", z2, z2len), &trace_lackey, 0, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 0);
    result_free(&res);
    free(cat);
    free(z3);
    free(z2);
    free(z);

    /* Three of the four magic bytes is plain text (and malformed). */
    path = tmp_file("notzst.lackey", "\x28\xb5\x2f\n", 4);
    res = read_all(path, &trace_lackey, 0, 8);
    check_err(&res, -QOSIM_EPARSE, path, "1", "\"(\\xb5/\"");
    result_free(&res);
}

static void test_zstd_corrupt(void **state)
{
    (void)state;
    const char *body = "I  1000,4\n L 2000,8\n S 3000,2\n M 4000,1\n"
                       "I  1004,4\n L 2008,8\n S 3002,2\n M 4001,1\n";
    size_t zlen;
    uint8_t *z = zst_encode(body, strlen(body), &zlen);
    char want[128];

    /* A flipped byte in the data: the frame's checksum no longer holds. */
    z[zlen / 2] ^= 0x55;
    const char *path = tmp_file("corrupt.lackey.zst", z, zlen);
    for (int skip = 0; skip < 2; skip++) {
        struct result res = read_all(path, &trace_lackey, skip, 8);
        check_err(&res, -QOSIM_EXZ, path, "1", ": corrupt zstd data: ");
        assert_int_equal(res.n, 0);
        result_free(&res);
    }
    z[zlen / 2] ^= 0x55;

    /* A damaged checksum, found once all the data has come. */
    z[zlen - 1] ^= 0x01;
    path = tmp_file("sum.lackey.zst", z, zlen);
    struct result res = read_all(path, &trace_lackey, 0, 8);
    snprintf(want, sizeof want,
             ": corrupt zstd data: Restored data doesn't match checksum (within the first %zu "
             "compressed bytes)",
             zlen);
    check_err(&res, -QOSIM_EXZ, path, "1", want);
    result_free(&res);
    z[zlen - 1] ^= 0x01;

    /* Garbage after the frame: not the start of another. The message can
     * only say where the bytes given to the failing decoder call end. */
    uint8_t *g = malloc(zlen + 8);
    assert_non_null(g);
    memcpy(g, z, zlen);
    memcpy(g + zlen, "garbage!", 8);
    path = tmp_file("trail.lackey.zst", g, zlen + 8);
    res = read_all(path, &trace_lackey, 0, 8);
    snprintf(want, sizeof want,
             ": corrupt zstd data: Unknown frame descriptor (within the first %zu compressed "
             "bytes)",
             zlen + 8);
    check_err(&res, -QOSIM_EXZ, path, "9", want);
    assert_int_equal(res.n, 8);
    result_free(&res);
    free(g);
    free(z);
}

static void test_zstd_truncated(void **state)
{
    (void)state;
    struct text t = {0};
    for (int i = 0; i < 20000; i++)
        text_add(&t, " L %x,%d\n", (unsigned)(rng_next(&rng_s) & 0xffffff), 1 + i % 8);
    size_t zlen;
    uint8_t *z = zst_encode(t.s, t.len, &zlen);
    /* The error names the line where the data stops, and the bytes read.
     * zstd delivers whole blocks of 128 KiB: a cut in the first gives no
     * data, one in the second the first block, one in the checksum all. */
    const size_t cuts[] = {4, 12, zlen / 8, zlen * 3 / 4, zlen - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t got = zst_decodable(z, cuts[i]);
        assert_true(i < 3 ? got == 0 : i == 4 ? got == t.len : got == 128 * 1024);
        unsigned line = 1;
        for (size_t j = 0; j < got; j++)
            line += t.s[j] == '\n';
        char where[16], want[96];
        snprintf(where, sizeof where, "%u", line);
        snprintf(want, sizeof want, ": truncated zstd stream (after %zu compressed bytes)",
                 cuts[i]);
        const char *path = tmp_file("trunc.lackey.zst", z, cuts[i]);
        for (int skip = 0; skip < 2; skip++) {
            for (size_t batch = TRACE_MIN_BATCH; batch <= 1024; batch *= 128) {
                struct result res = read_all(path, &trace_lackey, skip, batch);
                check_err(&res, -QOSIM_ETRUNC, path, where, want);
                assert_true(res.n <= line - 1);
                result_free(&res);
            }
        }
    }
    free(z);
    free(t.s);
}

/* ---------------------------------------------------------------- din */

static void test_din_kinds(void **state)
{
    (void)state;
    const char *path = tmp_str("kinds.din", "r 10 4\n"
                                            "w 0x20 8\n"
                                            "i 0X30 2\n"
                                            "  r\t\tABCdef 0x1\t \n"
                                            "w 0xFFFFFFFFFFFFFFFF ffff\r\n"
                                            "i 0123456789abcdef 0xFFFF\n"
                                            "r 0 1\n"
                                            "\tw 7 0000000000000001");
    struct result res = read_all(path, &trace_din, 0, 64);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 8);
    ASSERT_REC(res, 0, TREC_L, 0x10, 4, 0);
    ASSERT_REC(res, 1, TREC_S, 0x20, 8, 0);
    ASSERT_REC(res, 2, TREC_I, 0x30, 2, 0);
    ASSERT_REC(res, 3, TREC_L, 0xabcdef, 1, 0);
    ASSERT_REC(res, 4, TREC_S, UINT64_MAX, 0xffff, 0);
    ASSERT_REC(res, 5, TREC_I, 0x0123456789abcdefull, 0xffff, 0);
    ASSERT_REC(res, 6, TREC_L, 0, 1, 0);
    ASSERT_REC(res, 7, TREC_S, 7, 1, 0);
    result_free(&res);
}

static void test_din_blank_lines(void **state)
{
    (void)state;
    const char *path = tmp_str("blank.din", "\n"        /* 1 */
                                            "   \n"     /* 2 */
                                            "\t\n"      /* 3 */
                                            "\r\n"      /* 4 */
                                            " \t \r\n"  /* 5 */
                                            "r 1 1\n"   /* 6 */
                                            "\n"        /* 7 */
                                            "\rw 2 2\n" /* 8: a stray CR is not a blank line */
                                            "w 3 3\n"); /* 9 */
    struct result res = read_all(path, &trace_din, 0, 8);
    check_err(&res, -QOSIM_EPARSE, path, "8", "unknown access type (expected r, w or i)");
    result_free(&res);
    res = read_all(path, &trace_din, 1, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 2);
    ASSERT_REC(res, 0, TREC_L, 1, 1, 0);
    ASSERT_REC(res, 1, TREC_S, 3, 3, 0);
    assert_int_equal(res.bad, 1);
    assert_int_equal(res.bad_first, 8);
    result_free(&res);
}

static void test_din_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"m 10 4", "Dinero access type not replayed by qosim (it reads r, w and i)"},
        {"c 10 4", "Dinero access type not replayed by qosim (it reads r, w and i)"},
        {"v 10 4", "Dinero access type not replayed by qosim (it reads r, w and i)"},
        {"x 10 4", "unknown access type (expected r, w or i)"},
        {"R 10 4", "unknown access type (expected r, w or i)"},
        {"0 10 4", "unknown access type (expected r, w or i)"},
        {"r10 4", "expected a blank after the access type"},
        {"read 10 4", "expected a blank after the access type"},
        {"r", "expected a blank after the access type"},
        {"r ", "address is not 1 to 16 hex digits"},
        {"r g 4", "address is not 1 to 16 hex digits"},
        {"r 0x 4", "address is not 1 to 16 hex digits"},
        {"r -1 4", "address is not 1 to 16 hex digits"},
        {"r 10000000000000000 4", "address is not 1 to 16 hex digits"},
        {"r 0x10000000000000000 4", "address is not 1 to 16 hex digits"},
        {"r 10", "size is not 1 to 16 hex digits after a blank"},
        {"r 10 ", "size is not 1 to 16 hex digits after a blank"},
        {"r 10,4", "size is not 1 to 16 hex digits after a blank"},
        {"r 10 0x", "size is not 1 to 16 hex digits after a blank"},
        {"r 10 10000000000000000", "size is not 1 to 16 hex digits after a blank"},
        {"r 10 0", "size must be 1 to 0xffff bytes"},
        {"r 10 0x0", "size must be 1 to 0xffff bytes"},
        {"r 10 10000", "size must be 1 to 0xffff bytes"},
        {"r 10 ffffffffffffffff", "size must be 1 to 0xffff bytes"},
        {"r 10 4 5", "unexpected text after the size"},
        {"r 10 4x", "unexpected text after the size"},
        {"r 10 4\r\r", "unexpected text after the size"},
        {"r 10 4 #", "unexpected text after the size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char body[128], quoted[128], what[300];
        snprintf(body, sizeof body, "i 400 4\n\n%s\nw 500 8\n", bad[i].line);
        const char *path = tmp_str("bad.din", body);
        struct result res = read_all(path, &trace_din, 0, 64);
        trace_quote(quoted, sizeof quoted, bad[i].line, bad[i].line + strlen(bad[i].line));
        snprintf(what, sizeof what, "malformed din record \"%s\": %s", quoted, bad[i].why);
        check_err(&res, -QOSIM_EPARSE, path, "3", what);
        result_free(&res);

        res = read_all(path, &trace_din, 1, 64);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, 2);
        ASSERT_REC(res, 0, TREC_I, 0x400, 4, 0);
        ASSERT_REC(res, 1, TREC_S, 0x500, 8, 0);
        assert_int_equal(res.bad, 1);
        assert_int_equal(res.bad_first, 3);
        result_free(&res);
    }
}

static void test_din_skip_bad(void **state)
{
    (void)state;
    const char *path = tmp_str("skip.din", "r 1 1\nm 2 2\nw 3 3\nr 4 0\n\ni 5 5\nq\nw 6 6\n");
    struct result res = read_all(path, &trace_din, 1, 8);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 4);
    ASSERT_REC(res, 0, TREC_L, 1, 1, 0);
    ASSERT_REC(res, 1, TREC_S, 3, 3, 0);
    ASSERT_REC(res, 2, TREC_I, 5, 5, 0);
    ASSERT_REC(res, 3, TREC_S, 6, 6, 0);
    assert_int_equal(res.bad, 3);
    assert_int_equal(res.bad_first, 2);
    result_free(&res);

    res = read_all(path, &trace_din, 0, 8);
    check_err(&res, -QOSIM_EPARSE, path, "2", "\"m 2 2\"");
    result_free(&res);
}

static void test_din_batches(void **state)
{
    (void)state;
    struct text t = {0};
    struct result want = {0};
    static const char kc[] = {'r', 'w', 'i'};
    static const unsigned kinds[] = {TREC_L, TREC_S, TREC_I};
    while (t.len < 2 * LINE_BUF + 777) {
        uint64_t x = rng_next(&rng_s);
        if (x % 50 == 0) {
            text_add(&t, "%*s\n", (int)(x >> 8) % 2000, "");
            continue;
        }
        unsigned k = (unsigned)(x >> 4) % 3;
        int digits = 1 + (int)((x >> 8) % 16);
        uint64_t a = rng_next(&rng_s);
        if (digits < 16)
            a &= (1ull << (4 * digits)) - 1;
        uint32_t size = 1 + (uint32_t)((x >> 20) % 0xffff);
        text_add(&t, (x >> 40) & 1 ? "%c 0x%0*llX\t%x\n" : "%c %0*llx %X\r\n", kc[k], digits,
                 (unsigned long long)a, size);
        if (want.n == want.cap) {
            want.cap = want.cap ? want.cap * 2 : 1024;
            want.r = realloc(want.r, want.cap * sizeof *want.r);
            assert_non_null(want.r);
        }
        want.r[want.n++] = (struct trace_rec){.addr = a, .size = size, .kind = (uint8_t)kinds[k]};
    }
    const char *path = tmp_file("big.din", t.s, t.len);
    size_t zlen;
    uint8_t *z = xz_encode(t.s, t.len, &zlen);
    const char *zpath = tmp_file("big.din.xz", z, zlen);
    for (size_t b = TRACE_MIN_BATCH; b <= 1 << 16; b <<= 13) {
        struct result res = read_all(path, &trace_din, 0, b);
        assert_int_equal(res.rc, 0);
        assert_same_recs(&res, &want);
        result_free(&res);
        res = read_all(zpath, &trace_din, 0, b);
        assert_int_equal(res.rc, 0);
        assert_same_recs(&res, &want);
        result_free(&res);
    }
    free(z);
    result_free(&want);
    free(t.s);
}

static void test_din_stdin(void **state)
{
    (void)state;
    const char *path = tmp_str("stdin.din", "r 1 2\nw 3 4\nz 5 6\n");
    int saved = stdin_from(open(path, O_RDONLY));
    struct result res = read_all("-", &trace_din, 0, 8);
    stdin_restore(saved);
    check_err(&res, -QOSIM_EPARSE, "<stdin>", "3", "\"z 5 6\"");
    result_free(&res);
    saved = stdin_from(open(path, O_RDONLY));
    res = read_all("-", &trace_din, 1, 8);
    stdin_restore(saved);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 2);
    ASSERT_REC(res, 0, TREC_L, 1, 2, 0);
    ASSERT_REC(res, 1, TREC_S, 3, 4, 0);
    assert_int_equal(res.bad, 1);
    result_free(&res);
}

/* ---------------------------------------------------------------- champsim */

struct cs_rec {
    uint64_t ip;
    uint8_t is_branch, taken;
    uint64_t dst[2], src[4];
    int regs;       /* use reg (else noise) */
    uint8_t reg[6]; /* destination_registers[2], source_registers[4] */
};

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Register byte j (0-5) of record i: as given, or noise. */
static uint8_t cs_reg(const struct cs_rec *r, size_t i, int j)
{
    return r[i].regs ? r[i].reg[j] : (uint8_t)(i * 7 + (size_t)j + 10);
}

/* Encodes records as ChampSim writes them; the register bytes get noise
 * unless given, which the reader must classify as ChampSim would. */
static uint8_t *cs_encode(const struct cs_rec *r, size_t n)
{
    uint8_t *b = calloc(n ? n : 1, 64);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = b + 64 * i;
        put64(p, r[i].ip);
        p[8] = r[i].is_branch;
        p[9] = r[i].taken;
        for (int j = 10; j < 16; j++)
            p[j] = cs_reg(r, i, j - 10);
        for (int j = 0; j < 2; j++)
            put64(p + 16 + 8 * j, r[i].dst[j]);
        for (int j = 0; j < 4; j++)
            put64(p + 32 + 8 * j, r[i].src[j]);
    }
    return b;
}

/* ChampSim's rule (its inc/instruction.h) on record i's registers: the
 * branch flags it gives a branch. */
static uint8_t cs_branch_flags(const struct cs_rec *r, size_t i)
{
    enum { SP = 6, FL = 25, IP = 26 };
    unsigned w[32] = {0}, rd[32] = {0}, other = 0;
    for (int j = 0; j < 2; j++)
        if (cs_reg(r, i, j) < 32)
            w[cs_reg(r, i, j)] = 1;
    for (int j = 2; j < 6; j++) {
        uint8_t g = cs_reg(r, i, j);
        if (g == SP || g == FL || g == IP)
            rd[g] = 1;
        else if (g)
            other = 1;
    }
    unsigned kind = 0, taken = r[i].taken;
    if (!w[IP])
        return (uint8_t)(TREC_F_BRANCH | (taken ? TREC_F_TAKEN : 0));
    if (!rd[SP] && !rd[FL] && !other)
        kind = TREC_BR_JMP;
    else if (!rd[SP] && !rd[IP] && !rd[FL] && other)
        kind = TREC_BR_JMP_IND;
    else if (!rd[SP] && rd[IP] && !w[SP] && (rd[FL] || other))
        kind = TREC_BR_COND;
    else if (rd[SP] && rd[IP] && w[SP] && !rd[FL] && !other)
        kind = TREC_BR_CALL;
    else if (rd[SP] && rd[IP] && w[SP] && !rd[FL] && other)
        kind = TREC_BR_CALL_IND;
    else if (rd[SP] && !rd[IP] && w[SP])
        kind = TREC_BR_RET;
    if (kind != TREC_BR_OTHER && kind != TREC_BR_COND)
        taken = 1;
    return (uint8_t)(TREC_F_BRANCH | (taken ? TREC_F_TAKEN : 0) |
                     (kind == TREC_BR_JMP ? TREC_F_DIRECT : 0) | TREC_F_BR(kind));
}

/* What the reader makes of good records. */
static size_t cs_expect(const struct cs_rec *r, size_t n, struct trace_rec *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        out[k++] = (struct trace_rec){.addr = r[i].ip,
                                      .size = 1,
                                      .kind = TREC_I,
                                      .flags = r[i].is_branch ? cs_branch_flags(r, i) : 0};
        for (int j = 0; j < 4; j++)
            if (r[i].src[j])
                out[k++] = (struct trace_rec){.addr = r[i].src[j], .size = 1, .kind = TREC_L};
        for (int j = 0; j < 2; j++)
            if (r[i].dst[j])
                out[k++] = (struct trace_rec){.addr = r[i].dst[j], .size = 1, .kind = TREC_S};
    }
    return k;
}

static void test_champsim_kinds(void **state)
{
    (void)state;
    const struct cs_rec r[] = {
        {.ip = 0x401000},
        {.ip = 0x401004, .is_branch = 1},
        {.ip = 0x401008, .is_branch = 1, .taken = 1},
        {.ip = 0x40100c,
         .src = {0x7ffd0001, 0x7ffd0002, 0x7ffd0003, 0x7ffd0004},
         .dst = {0x600001, 0x600002}},
        {.ip = 0x8000000000000001ull,
         .src = {0, 0x0102030405060708ull, 0, 0xfedcba9876543210ull},
         .dst = {0, 0xffffffffffffffffull}},
        {.ip = 0x12, .is_branch = 1, .taken = 1, .src = {0, 0, 0x33, 0}, .dst = {0x44, 0}},
    };
    uint8_t *b = cs_encode(r, 6);
    const char *path = tmp_file("kinds.champsim", b, 6 * 64);
    struct result res = read_all(path, &trace_champsim, 0, 64);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 17);
    ASSERT_REC(res, 0, TREC_I, 0x401000, 1, 0);
    ASSERT_REC(res, 1, TREC_I, 0x401004, 1, TREC_F_BRANCH);
    ASSERT_REC(res, 2, TREC_I, 0x401008, 1, TREC_F_BRANCH | TREC_F_TAKEN);
    ASSERT_REC(res, 3, TREC_I, 0x40100c, 1, 0);
    ASSERT_REC(res, 4, TREC_L, 0x7ffd0001, 1, 0);
    ASSERT_REC(res, 5, TREC_L, 0x7ffd0002, 1, 0);
    ASSERT_REC(res, 6, TREC_L, 0x7ffd0003, 1, 0);
    ASSERT_REC(res, 7, TREC_L, 0x7ffd0004, 1, 0);
    ASSERT_REC(res, 8, TREC_S, 0x600001, 1, 0);
    ASSERT_REC(res, 9, TREC_S, 0x600002, 1, 0);
    ASSERT_REC(res, 10, TREC_I, 0x8000000000000001ull, 1, 0);
    ASSERT_REC(res, 11, TREC_L, 0x0102030405060708ull, 1, 0);
    ASSERT_REC(res, 12, TREC_L, 0xfedcba9876543210ull, 1, 0);
    ASSERT_REC(res, 13, TREC_S, 0xffffffffffffffffull, 1, 0);
    ASSERT_REC(res, 14, TREC_I, 0x12, 1, TREC_F_BRANCH | TREC_F_TAKEN);
    ASSERT_REC(res, 15, TREC_L, 0x33, 1, 0);
    ASSERT_REC(res, 16, TREC_S, 0x44, 1, 0);
    /* The accesses of one instruction may not be split across batches:
     * batches of the minimum give the same, one instruction at a time. */
    result_free(&res);
    res = read_all(path, &trace_champsim, 0, TRACE_MIN_BATCH);
    assert_int_equal(res.rc, 0);
    struct trace_rec want[64];
    struct result w = {.r = want, .n = cs_expect(r, 6, want)};
    assert_int_equal(w.n, 17);
    assert_same_recs(&res, &w);
    result_free(&res);
    free(b);
}

/* ChampSim's register numbers: stack pointer 6, flags 25, ip 26. Every
 * kind of its rule, as its tracer writes them and in other spellings. */
static void test_champsim_branch_kinds(void **state)
{
    (void)state;
    const struct cs_rec r[] = {
        /* jmp rel: writes ip, reads ip (not taken in the file: made taken) */
        {.ip = 0x1000, .is_branch = 1, .regs = 1, .reg = {26, 0, 26}},
        /* the same reading nothing */
        {.ip = 0x1004, .is_branch = 1, .taken = 1, .regs = 1, .reg = {0, 26}},
        /* jcc: reads the flags and ip; not taken stays not taken */
        {.ip = 0x1008, .is_branch = 1, .taken = 1, .regs = 1, .reg = {26, 0, 26, 25}},
        {.ip = 0x100c, .is_branch = 1, .regs = 1, .reg = {26, 0, 25, 0, 26}},
        /* jrcxz: reads ip and another register (ChampSim: conditional too) */
        {.ip = 0x1010, .is_branch = 1, .regs = 1, .reg = {26, 0, 26, 2}},
        /* call: reads and writes the stack pointer and ip */
        {.ip = 0x1014, .is_branch = 1, .taken = 1, .regs = 1, .reg = {26, 6, 6, 26}},
        /* call *%rax: also another register */
        {.ip = 0x1018, .is_branch = 1, .regs = 1, .reg = {6, 26, 6, 26, 10}},
        /* jmp *%rax: reads another register */
        {.ip = 0x101c, .is_branch = 1, .taken = 1, .regs = 1, .reg = {26, 0, 0, 0, 0, 1}},
        /* ret: reads the stack pointer, writes it and ip */
        {.ip = 0x1020, .is_branch = 1, .regs = 1, .reg = {26, 6, 6}},
        /* other: writes ip with the flags and the stack pointer; keeps taken */
        {.ip = 0x1024, .is_branch = 1, .regs = 1, .reg = {26, 0, 6, 25}},
        {.ip = 0x1028, .is_branch = 1, .taken = 1, .regs = 1, .reg = {26, 0, 6, 25}},
        /* a branch that does not write ip: its file flags, kind other */
        {.ip = 0x102c, .is_branch = 1, .taken = 1, .regs = 1, .reg = {6, 0, 26}},
        /* not marked a branch: left alone */
        {.ip = 0x1030, .regs = 1, .reg = {26}},
    };
    size_t n = sizeof r / sizeof r[0];
    uint8_t *b = cs_encode(r, n);
    const char *path = tmp_file("jumps.champsim", b, 64 * n);
    struct result res = read_all(path, &trace_champsim, 0, 64);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, n);
    const unsigned br = TREC_F_BRANCH, tk = TREC_F_TAKEN, dj = TREC_F_DIRECT;
    ASSERT_REC(res, 0, TREC_I, 0x1000, 1, br | tk | dj | TREC_F_BR(TREC_BR_JMP));
    ASSERT_REC(res, 1, TREC_I, 0x1004, 1, br | tk | dj | TREC_F_BR(TREC_BR_JMP));
    ASSERT_REC(res, 2, TREC_I, 0x1008, 1, br | tk | TREC_F_BR(TREC_BR_COND));
    ASSERT_REC(res, 3, TREC_I, 0x100c, 1, br | TREC_F_BR(TREC_BR_COND));
    ASSERT_REC(res, 4, TREC_I, 0x1010, 1, br | TREC_F_BR(TREC_BR_COND));
    ASSERT_REC(res, 5, TREC_I, 0x1014, 1, br | tk | TREC_F_BR(TREC_BR_CALL));
    ASSERT_REC(res, 6, TREC_I, 0x1018, 1, br | tk | TREC_F_BR(TREC_BR_CALL_IND));
    ASSERT_REC(res, 7, TREC_I, 0x101c, 1, br | tk | TREC_F_BR(TREC_BR_JMP_IND));
    ASSERT_REC(res, 8, TREC_I, 0x1020, 1, br | tk | TREC_F_BR(TREC_BR_RET));
    ASSERT_REC(res, 9, TREC_I, 0x1024, 1, br | TREC_F_BR(TREC_BR_OTHER));
    ASSERT_REC(res, 10, TREC_I, 0x1028, 1, br | tk | TREC_F_BR(TREC_BR_OTHER));
    ASSERT_REC(res, 11, TREC_I, 0x102c, 1, br | tk);
    ASSERT_REC(res, 12, TREC_I, 0x1030, 1, 0);
    struct trace_rec want[16];
    struct result w = {.r = want, .n = cs_expect(r, n, want)};
    assert_same_recs(&res, &w);
    result_free(&res);
    free(b);
}

static void test_champsim_malformed(void **state)
{
    (void)state;
    static const struct {
        struct cs_rec r;
        const char *what;
    } bad[] = {
        {{.ip = 0}, "ip=0x0 is_branch=0 branch_taken=0"},
        {{.ip = 0, .is_branch = 1, .src = {5}}, "ip=0x0 is_branch=1 branch_taken=0"},
        {{.ip = 0x10, .is_branch = 2}, "ip=0x10 is_branch=2 branch_taken=0"},
        {{.ip = 0x10, .is_branch = 255, .taken = 1}, "ip=0x10 is_branch=255 branch_taken=1"},
        {{.ip = 0x10, .is_branch = 1, .taken = 2}, "ip=0x10 is_branch=1 branch_taken=2"},
        {{.ip = 0x10, .is_branch = 0, .taken = 1}, "ip=0x10 is_branch=0 branch_taken=1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct cs_rec r[3] = {{.ip = 0x100, .src = {0x200}}, bad[i].r, {.ip = 0x300}};
        uint8_t *b = cs_encode(r, 3);
        const char *path = tmp_file("bad.champsim", b, 3 * 64);
        struct result res = read_all(path, &trace_champsim, 0, 64);
        char what[200];
        snprintf(what, sizeof what,
                 "malformed ChampSim record at byte offset 64: %s (ip must be non-zero, the "
                 "flags 0 or 1, and only a branch can be taken)",
                 bad[i].what);
        check_err(&res, -QOSIM_EPARSE, path, "record 2", what);
        result_free(&res);

        res = read_all(path, &trace_champsim, 1, TRACE_MIN_BATCH);
        assert_int_equal(res.rc, 0);
        assert_int_equal(res.n, 3);
        ASSERT_REC(res, 0, TREC_I, 0x100, 1, 0);
        ASSERT_REC(res, 1, TREC_L, 0x200, 1, 0);
        ASSERT_REC(res, 2, TREC_I, 0x300, 1, 0);
        assert_int_equal(res.bad, 1);
        assert_int_equal(res.bad_first, 2);
        result_free(&res);
        free(b);
    }
}

static void test_champsim_truncated(void **state)
{
    (void)state;
    const struct cs_rec r[3] = {{.ip = 1}, {.ip = 2, .dst = {3}}, {.ip = 4}};
    uint8_t *b = cs_encode(r, 3);
    for (size_t cut = 1; cut < 64; cut += 31) {
        const char *path = tmp_file("trunc.champsim", b, 2 * 64 + cut);
        for (size_t batch = TRACE_MIN_BATCH; batch <= 1024; batch *= 128) {
            struct result res = read_all(path, &trace_champsim, 0, batch);
            char what[128];
            snprintf(what, sizeof what,
                     "truncated ChampSim record: %zu of 64 bytes at byte offset 128", cut);
            check_err(&res, -QOSIM_ETRUNC, path, "record 3", what);
            /* In batches of the minimum the first call returns both whole
             * instructions (3 records), and the error comes with the next. */
            if (batch == TRACE_MIN_BATCH) {
                assert_int_equal(res.n, 3);
                ASSERT_REC(res, 2, TREC_S, 3, 1, 0);
            }
            result_free(&res);

            res = read_all(path, &trace_champsim, 1, batch);
            assert_int_equal(res.rc, 0);
            assert_int_equal(res.n, 3);
            ASSERT_REC(res, 0, TREC_I, 1, 1, 0);
            ASSERT_REC(res, 1, TREC_I, 2, 1, 0);
            ASSERT_REC(res, 2, TREC_S, 3, 1, 0);
            assert_int_equal(res.bad, 1);
            assert_int_equal(res.bad_first, 3);
            result_free(&res);
        }
    }
    /* Less than one record. */
    const char *path = tmp_file("tiny.champsim", b, 5);
    struct result res = read_all(path, &trace_champsim, 0, 8);
    check_err(&res, -QOSIM_ETRUNC, path, "record 1",
              "truncated ChampSim record: 5 of 64 bytes at byte offset 0");
    result_free(&res);
    free(b);
}

/* More than 1 MiB of random records, in every batch size, plain and .xz. */
static void test_champsim_batches(void **state)
{
    (void)state;
    size_t n = 3 * LINE_BUF / 64 + 77;
    struct cs_rec *r = calloc(n, sizeof *r);
    assert_non_null(r);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rng_next(&rng_s);
        r[i].ip = rng_next(&rng_s) | 1;
        r[i].is_branch = x & 1;
        r[i].taken = r[i].is_branch & (x >> 1);
        for (int j = 0; j < 4; j++)
            r[i].src[j] = (x >> (8 + j)) & 1 ? rng_next(&rng_s) : 0;
        for (int j = 0; j < 2; j++)
            r[i].dst[j] = (x >> (12 + j)) & 1 ? rng_next(&rng_s) : 0;
    }
    uint8_t *b = cs_encode(r, n);
    struct result want = {.r = malloc(7 * n * sizeof *want.r)};
    assert_non_null(want.r);
    want.n = cs_expect(r, n, want.r);
    const char *path = tmp_file("big.champsim", b, 64 * n);
    size_t zlen;
    uint8_t *z = xz_encode(b, 64 * n, &zlen);
    const char *zpath = tmp_file("big.champsim.xz", z, zlen);
    static const size_t batches[] = {TRACE_MIN_BATCH, 13, 4096, 1 << 16};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        struct result res = read_all(path, &trace_champsim, 0, batches[i]);
        assert_int_equal(res.rc, 0);
        assert_same_recs(&res, &want);
        result_free(&res);
        res = read_all(zpath, &trace_champsim, 0, batches[i]);
        assert_int_equal(res.rc, 0);
        assert_same_recs(&res, &want);
        result_free(&res);
    }

    /* A truncated .xz: the error names the record where the data stops. */
    size_t cut = zlen / 2;
    size_t got = xz_decodable(z, cut);
    assert_true(got < 64 * n);
    path = tmp_file("cut.champsim.xz", z, cut);
    for (int skip = 0; skip < 2; skip++) {
        struct result res = read_all(path, &trace_champsim, skip, 1024);
        char where[64];
        snprintf(where, sizeof where, "record %zu", got / 64 + 1);
        check_err(&res, -QOSIM_ETRUNC, path, where, ": truncated .xz stream (after ");
        result_free(&res);
    }
    /* Only the magic bytes. */
    path = tmp_file("magic.champsim.xz", z, 6);
    struct result res = read_all(path, &trace_champsim, 0, 1024);
    check_err(&res, -QOSIM_ETRUNC, path, "record 1", ": truncated .xz stream (after ");
    result_free(&res);
    /* Corrupt data: the error names a record no later than where the
     * decoder stopped (what the failing decoder call produced is dropped). */
    z[zlen / 2] ^= 0xff;
    path = tmp_file("bad.champsim.xz", z, zlen);
    got = xz_decodable(z, zlen);
    res = read_all(path, &trace_champsim, 1, 1024);
    check_err(&res, -QOSIM_EXZ, path, "record", NULL);
    unsigned long long rec = strtoull(res.msg + strlen(path) + strlen(":record "), NULL, 10);
    assert_in_range(rec, 1, got / 64 + 1);
    assert_non_null(strstr(res.msg, ": corrupt .xz data (after "));
    result_free(&res);
    /* Small, it fails in the decoder's first call: record 1. */
    free(z);
    z = xz_encode(b, 64 * 4, &zlen);
    z[zlen / 2] ^= 0xff;
    path = tmp_file("small.champsim.xz", z, zlen);
    for (int skip = 0; skip < 2; skip++) {
        res = read_all(path, &trace_champsim, skip, TRACE_MIN_BATCH);
        check_err(&res, -QOSIM_EXZ, path, "record 1", ": corrupt .xz data (after ");
        assert_int_equal(res.n, 0);
        result_free(&res);
    }

    free(z);
    free(want.r);
    free(b);
    free(r);
}

static void test_champsim_stdin(void **state)
{
    (void)state;
    const struct cs_rec r[2] = {{.ip = 0xabc, .is_branch = 1, .src = {0xdef}}, {.ip = 0}};
    uint8_t *b = cs_encode(r, 2);
    size_t zlen;
    uint8_t *z = xz_encode(b, 128, &zlen);
    pid_t pid;
    int saved = stdin_from(slow_pipe(z, zlen, &pid));
    struct result res = read_all("-", &trace_champsim, 0, 8);
    stdin_restore(saved);
    child_done(pid);
    check_err(&res, -QOSIM_EPARSE, "<stdin>", "record 2", "ip=0x0");
    assert_int_equal(res.n, 2);
    ASSERT_REC(res, 0, TREC_I, 0xabc, 1, TREC_F_BRANCH);
    ASSERT_REC(res, 1, TREC_L, 0xdef, 1, 0);
    result_free(&res);

    /* Plain, through a pipe in pieces, one byte short. */
    saved = stdin_from(slow_pipe(b, 127, &pid));
    res = read_all("-", &trace_champsim, 1, 8);
    stdin_restore(saved);
    child_done(pid);
    assert_int_equal(res.rc, 0);
    assert_int_equal(res.n, 2);
    assert_int_equal(res.bad, 1);
    assert_int_equal(res.bad_first, 2);
    result_free(&res);
    free(z);
    free(b);
}

/* Each Lackey test twice: the SSE2 reader of the library, then the scalar one. */
#define LACKEY_TEST(f)                                                                             \
    {#f "/sse2", f, NULL, NULL, (void *)&trace_lackey},                                            \
    {                                                                                              \
#f "/scalar", f, NULL, NULL, (void *)&trace_lackey_scalar                                  \
    }

int main(void)
{
    rng_seed(&rng_s, 1, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_empty_files),
        LACKEY_TEST(test_lackey_kinds),
        LACKEY_TEST(test_lackey_pid_and_blank),
        LACKEY_TEST(test_lackey_no_final_newline),
        LACKEY_TEST(test_lackey_addr_digits),
        LACKEY_TEST(test_lackey_malformed),
        LACKEY_TEST(test_lackey_message),
        LACKEY_TEST(test_lackey_skip_bad),
        LACKEY_TEST(test_lackey_long_lines),
        LACKEY_TEST(test_lackey_batches),
        LACKEY_TEST(test_lackey_stdin),
        cmocka_unit_test(test_xz_round_trip),
        cmocka_unit_test(test_xz_corrupt),
        cmocka_unit_test(test_xz_truncated),
        cmocka_unit_test(test_zstd_round_trip),
        cmocka_unit_test(test_zstd_corrupt),
        cmocka_unit_test(test_zstd_truncated),
        cmocka_unit_test(test_din_kinds),
        cmocka_unit_test(test_din_blank_lines),
        cmocka_unit_test(test_din_malformed),
        cmocka_unit_test(test_din_skip_bad),
        cmocka_unit_test(test_din_batches),
        cmocka_unit_test(test_din_stdin),
        cmocka_unit_test(test_champsim_kinds),
        cmocka_unit_test(test_champsim_branch_kinds),
        cmocka_unit_test(test_champsim_malformed),
        cmocka_unit_test(test_champsim_truncated),
        cmocka_unit_test(test_champsim_batches),
        cmocka_unit_test(test_champsim_stdin),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
