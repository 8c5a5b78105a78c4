/* What the trace reader harnesses share: the input goes into a memfd that the
 * reader opens by name, is read to the end in batches, and every record and
 * error is checked against what all readers promise. A broken promise
 * aborts, which libFuzzer reports as a crash.
 *
 * Included by fuzz_lackey.c, fuzz_champsim.c, fuzz_din.c and fuzz_qtr.c only
 * (the Makefile does not track this header: touch them after editing it). */
#ifndef QOSIM_FUZZ_TRACE_H
#define QOSIM_FUZZ_TRACE_H

#include "sim/trace/trace.h"

#include <lzma.h>
#include <stdint.h>
#include <zstd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz_check.h"

/* Reading stops after this many records (an .xz input can expand a lot). */
#define FZ_MAX_RECS (1u << 20)

/* Checks one record a format produced. */
typedef void (*fz_rec_check)(const struct trace_rec *r);

struct fz_run {
    struct trace_rec *r;
    size_t n, cap;
    long rc;
    int capped; /* stopped at FZ_MAX_RECS */
    uint64_t bad, bad_first;
    char msg[512];
};

/* A memfd holding data, and its name for trace_open. */
struct fz_file {
    int fd;
    char path[64];
};

static void fz_file_set(struct fz_file *f, const void *data, size_t len)
{
    if (f->fd <= 0) {
        f->fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
        FZ_CHECK(f->fd > 0, "memfd_create failed");
        snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    }
    FZ_CHECK(ftruncate(f->fd, 0) == 0, "ftruncate failed");
    for (size_t off = 0; off < len;) {
        ssize_t w = pwrite(f->fd, (const char *)data + off, len - off, (off_t)off);
        FZ_CHECK(w > 0, "pwrite failed");
        off += (size_t)w;
    }
}

static void fz_run_free(struct fz_run *run)
{
    free(run->r);
    run->r = NULL;
}

/* Reads path to the end with the given options, checking every batch. */
static struct fz_run fz_read(const char *path, const struct trace_ops *ops, int skip_bad,
                             size_t batch, fz_rec_check check)
{
    struct fz_run run = {0};
    struct trace t;
    struct err e = {0};
    int rc = trace_open(&t, path, ops, skip_bad, &e);
    FZ_CHECK(rc == 0, "cannot open %s: %s", path, e.msg);
    FZ_CHECK(!strcmp(t.name, path), "name %s", t.name);
    struct trace_rec *buf = malloc(batch * sizeof *buf);
    FZ_CHECK(buf, "out of memory");
    for (;;) {
        memset(buf, 0xa5, batch * sizeof *buf);
        long got = trace_read(&t, buf, batch);
        if (got < 0) {
            size_t nl = strlen(path);
            run.rc = got;
            FZ_CHECK(t.err.code == got, "err.code %d, returned %ld", t.err.code, got);
            FZ_CHECK(got == -QOSIM_EPARSE || got == -QOSIM_ETRUNC || got == -QOSIM_EXZ ||
                         got == -QOSIM_EIO || (ops == &trace_qtr && got == -QOSIM_EUNSUP),
                     "unexpected code %ld: %s", got, t.err.msg);
            FZ_CHECK(!strncmp(t.err.msg, path, nl) && t.err.msg[nl] == ':',
                     "message does not start with the file name and ':': %s", t.err.msg);
            FZ_CHECK((t.err.msg[nl + 1] >= '0' && t.err.msg[nl + 1] <= '9') ||
                         !strncmp(t.err.msg + nl + 1, "record ", 7) ||
                         !strncmp(t.err.msg + nl + 1, "byte ", 5),
                     "no line, record or byte after the name: %s", t.err.msg);
            FZ_CHECK(strstr(t.err.msg + nl + 1, ": ") && strlen(t.err.msg) < sizeof t.err.msg - 1,
                     "no reason, or cut short: %s", t.err.msg);
            /* Skipping leaves only what cannot be skipped (in qtr, nothing
             * can: every item depends on those before it). */
            if (skip_bad)
                FZ_CHECK(got == -QOSIM_EXZ || got == -QOSIM_EIO || ops == &trace_qtr ||
                             strstr(t.err.msg, "line longer than") ||
                             strstr(t.err.msg, "truncated .xz stream") ||
                             strstr(t.err.msg, "truncated zstd stream"),
                         "skip-bad stopped at: %s", t.err.msg);
            snprintf(run.msg, sizeof run.msg, "%s", t.err.msg);
            break;
        }
        FZ_CHECK((size_t)got <= batch, "%ld records for a batch of %zu", got, batch);
        if (!got) {
            FZ_CHECK(trace_read(&t, buf, batch) == 0, "the end did not stay the end");
            break;
        }
        for (long i = 0; i < got; i++) {
            FZ_CHECK(buf[i].kind <= TREC_M, "kind %u", buf[i].kind);
            check(&buf[i]); /* the flags: each format has its own */
        }
        if (run.n + (size_t)got > run.cap) {
            run.cap = (run.n + (size_t)got) * 2;
            run.r = realloc(run.r, run.cap * sizeof *run.r);
            FZ_CHECK(run.r, "out of memory");
        }
        memcpy(run.r + run.n, buf, (size_t)got * sizeof *buf);
        run.n += (size_t)got;
        if (run.n >= FZ_MAX_RECS) {
            run.capped = 1;
            break;
        }
    }
    FZ_CHECK(skip_bad || t.bad == 0, "bad %llu without skip-bad", (unsigned long long)t.bad);
    FZ_CHECK(!t.bad || (t.bad_first >= 1 && t.bad_first <= t.line), "bad_first %llu of %llu",
             (unsigned long long)t.bad_first, (unsigned long long)t.line);
    run.bad = t.bad;
    run.bad_first = t.bad_first;
    free(buf);
    trace_close(&t);
    return run;
}

static int fz_rec_eq(const struct trace_rec *a, const struct trace_rec *b)
{
    return a->addr == b->addr && a->size == b->size && a->kind == b->kind && a->flags == b->flags;
}

/* The records of one run are a prefix of the other's (a batch that meets an
 * error is lost, so runs that stop differ only in how much came before). */
static void fz_same_prefix(const struct fz_run *a, const struct fz_run *b, const char *what)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++)
        FZ_CHECK(fz_rec_eq(&a->r[i], &b->r[i]), "%s: record %zu differs", what, i);
}

/* Two runs that must agree completely. */
static void fz_same(const struct fz_run *a, const struct fz_run *b, const char *what)
{
    if (a->capped || b->capped)
        return;
    FZ_CHECK(a->rc == b->rc, "%s: rc %ld vs %ld (%s | %s)", what, a->rc, b->rc, a->msg, b->msg);
    FZ_CHECK(!strcmp(a->msg, b->msg), "%s: \"%s\" vs \"%s\"", what, a->msg, b->msg);
    FZ_CHECK(a->bad == b->bad, "%s: bad %llu vs %llu", what, (unsigned long long)a->bad,
             (unsigned long long)b->bad);
    fz_same_prefix(a, b, what);
    if (!a->rc)
        FZ_CHECK(a->n == b->n, "%s: %zu vs %zu records", what, a->n, b->n);
}

/* What a simple reference parser in the harness makes of the input: the
 * records a skip-bad reading gives, and the first malformed record, which a
 * strict reading must stop at. */
struct fz_ref {
    struct trace_rec *r;
    size_t n, cap;
    uint64_t bad, bad_first; /* count, and line or record of the first */
    int code;                /* of the first */
    char what[160];          /* how its message starts after "PATH:LINE: " */
};

static void fz_ref_add(struct fz_ref *ref, uint64_t addr, uint32_t size, unsigned kind,
                       unsigned flags)
{
    if (ref->n == ref->cap) {
        ref->cap = ref->cap ? 2 * ref->cap : 256;
        ref->r = realloc(ref->r, ref->cap * sizeof *ref->r);
        FZ_CHECK(ref->r, "out of memory");
    }
    ref->r[ref->n++] = (struct trace_rec){
        .addr = addr, .size = size, .kind = (uint8_t)kind, .flags = (uint8_t)flags};
}

static void fz_ref_bad(struct fz_ref *ref, uint64_t where, int code, const char *what)
{
    if (!ref->bad++) {
        ref->bad_first = where;
        ref->code = code;
        snprintf(ref->what, sizeof ref->what, "%s", what);
    }
}

/* Compares a skip-bad and a strict reading of path with the reference. */
static void fz_ref_check(struct fz_ref *ref, const struct fz_run *strict, const struct fz_run *skip,
                         const char *path, const char *unit)
{
    if (strict->capped || skip->capped)
        goto out;
    FZ_CHECK(!skip->rc, "skip-bad failed: %s", skip->msg);
    FZ_CHECK(skip->n == ref->n, "reference: %zu records, reader %zu", ref->n, skip->n);
    for (size_t i = 0; i < ref->n; i++)
        FZ_CHECK(fz_rec_eq(&skip->r[i], &ref->r[i]),
                 "record %zu: reader kind %u addr %llx size %u flags %u, reference kind %u addr "
                 "%llx size %u flags %u",
                 i, skip->r[i].kind, (unsigned long long)skip->r[i].addr, skip->r[i].size,
                 skip->r[i].flags, ref->r[i].kind, (unsigned long long)ref->r[i].addr,
                 ref->r[i].size, ref->r[i].flags);
    FZ_CHECK(skip->bad == ref->bad && skip->bad_first == ref->bad_first,
             "bad %llu first %llu, reference %llu first %llu", (unsigned long long)skip->bad,
             (unsigned long long)skip->bad_first, (unsigned long long)ref->bad,
             (unsigned long long)ref->bad_first);
    if (!ref->bad) {
        FZ_CHECK(!strict->rc && strict->n == ref->n, "strict reading: %s", strict->msg);
    } else {
        char want[256];
        snprintf(want, sizeof want, "%s:%s%llu: %s", path, unit, (unsigned long long)ref->bad_first,
                 ref->what);
        FZ_CHECK(strict->rc == ref->code && !strncmp(strict->msg, want, strlen(want)),
                 "strict reading gave %ld \"%s\", reference %d \"%s...\"", strict->rc, strict->msg,
                 ref->code, want);
    }
out:
    free(ref->r);
    *ref = (struct fz_ref){0};
}

static int fz_is_xz(const uint8_t *data, size_t size)
{
    static const uint8_t magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
    return size >= sizeof magic && !memcmp(data, magic, sizeof magic);
}

/* Compressed already, .xz or zstd: bsrc decodes it. */
static int fz_is_packed(const uint8_t *data, size_t size)
{
    static const uint8_t zst[4] = {0x28, 0xB5, 0x2F, 0xFD};
    return fz_is_xz(data, size) || (size >= sizeof zst && !memcmp(data, zst, sizeof zst));
}

/* The readings fz_trace makes: small and large batches, strict and skip-bad. */
struct fz_runs {
    struct fz_run small, big, skip, skip_big;
};

static void fz_runs_free(struct fz_runs *runs)
{
    fz_run_free(&runs->small);
    fz_run_free(&runs->big);
    fz_run_free(&runs->skip);
    fz_run_free(&runs->skip_big);
}

static uint64_t fz_hash(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

/* The checks every reader harness makes on one input: small and large
 * batches, with and without skip-bad, agree as they must; and (for one input
 * in eight each: compressing is slow) the input compressed with .xz, and with
 * zstd, reads the same as plain. The readings are left in *runs for the
 * harness. */
static struct fz_file fz_plain, fz_xz;

/* A reading of the input compressed (z, zlen) agrees with the plain one. */
static void fz_same_packed(const uint8_t *z, size_t zlen, const struct trace_ops *ops,
                           fz_rec_check check, const struct fz_run *big, const char *what)
{
    fz_file_set(&fz_xz, z, zlen);
    struct fz_run zrun = fz_read(fz_xz.path, ops, 0, 4096, check);
    if (!zrun.capped && !big->capped) {
        FZ_CHECK(zrun.rc == big->rc, "%s: rc %ld vs %ld (%s | %s)", what, zrun.rc, big->rc,
                 zrun.msg, big->msg);
        /* The messages agree but for the file name. */
        size_t zl = strlen(fz_xz.path), pl = strlen(fz_plain.path);
        FZ_CHECK(!zrun.rc || !strcmp(zrun.msg + zl, big->msg + pl), "%s: %s | %s", what, zrun.msg,
                 big->msg);
        fz_same_prefix(&zrun, big, what);
        if (!zrun.rc)
            FZ_CHECK(zrun.n == big->n, "%s: %zu vs %zu records", what, zrun.n, big->n);
    }
    fz_run_free(&zrun);
}

static void fz_trace(const uint8_t *data, size_t size, const struct trace_ops *ops,
                     fz_rec_check check, struct fz_runs *runs)
{
    fz_file_set(&fz_plain, data, size);
    runs->small = fz_read(fz_plain.path, ops, 0, TRACE_MIN_BATCH, check);
    runs->big = fz_read(fz_plain.path, ops, 0, 4096, check);
    runs->skip = fz_read(fz_plain.path, ops, 1, TRACE_MIN_BATCH, check);
    runs->skip_big = fz_read(fz_plain.path, ops, 1, 4096, check);
    struct fz_run *small = &runs->small, *big = &runs->big, *skip = &runs->skip,
                  *skip_big = &runs->skip_big;
    if (!small->capped && !big->capped) {
        FZ_CHECK(small->rc == big->rc && !strcmp(small->msg, big->msg), "batch sizes: %s | %s",
                 small->msg, big->msg);
        fz_same_prefix(small, big, "batch sizes");
        if (!small->rc)
            FZ_CHECK(small->n == big->n, "batch sizes: %zu vs %zu records", small->n, big->n);
    }
    if (!skip->capped && !skip_big->capped) {
        FZ_CHECK(skip->rc == skip_big->rc && !strcmp(skip->msg, skip_big->msg) &&
                     skip->bad == skip_big->bad && skip->bad_first == skip_big->bad_first,
                 "skip-bad batch sizes: %s | %s", skip->msg, skip_big->msg);
        fz_same_prefix(skip, skip_big, "skip-bad batch sizes");
        if (!skip->rc)
            FZ_CHECK(skip->n == skip_big->n, "skip-bad batch sizes");
    }
    /* Skipping changes nothing until the first malformed record. */
    fz_same_prefix(small, skip, "skip-bad");
    if (!small->rc && !small->capped && !skip->capped)
        FZ_CHECK(!skip->rc && !skip->bad && skip->n == small->n, "skip-bad on a clean input: %s",
                 skip->msg);
    if (small->rc && !skip->rc && !small->capped)
        FZ_CHECK(skip->bad >= 1, "skip-bad got past \"%s\" without skipping", small->msg);

    /* The same bytes as .xz and as zstd (unless they are compressed already). */
    uint64_t h = fz_hash(data, size);
    if (!fz_is_packed(data, size) && h % 8 == 0) {
        size_t cap = lzma_stream_buffer_bound(size), zlen = 0;
        uint8_t *z = malloc(cap);
        FZ_CHECK(z, "out of memory");
        FZ_CHECK(lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, data, size, z, &zlen, cap) ==
                     LZMA_OK,
                 "xz encode failed");
        fz_same_packed(z, zlen, ops, check, big, "xz");
        free(z);
    }
    if (!fz_is_packed(data, size) && h % 8 == 1) {
        size_t cap = ZSTD_compressBound(size);
        uint8_t *z = malloc(cap);
        FZ_CHECK(z, "out of memory");
        size_t zlen = ZSTD_compress(z, cap, data, size, 1);
        FZ_CHECK(!ZSTD_isError(zlen), "zstd encode failed");
        fz_same_packed(z, zlen, ops, check, big, "zstd");
        free(z);
    }
}

#endif
