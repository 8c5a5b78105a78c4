/* The table of trace writers, and what they share: the output buffer and
 * its compression (none, .xz or zstd) on the way to the FILE. */
#include "twrite_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* zstd level 1, the fastest that compresses well: on the qtr stream of a
 * gzip run level 3 made the file 24% smaller but wrote 18% slower, level -1
 * wrote no faster and 12% bigger (docs/traces.md, "Writing traces"). A
 * capture spends its core on the program it runs. */
#define TW_ZSTD_LEVEL 1
/* xz preset 1, as `qosim trace record` uses: ChampSim's traces are
 * distributed as .xz, and higher presets are several times slower. */
#define TW_XZ_PRESET 1

static const struct tw_ops *const tw_table[] = {&tw_lackey, &tw_champsim, &tw_qtr};

const struct tw_ops *tw_at(unsigned n)
{
    return n < sizeof tw_table / sizeof tw_table[0] ? tw_table[n] : NULL;
}

const struct tw_ops *tw_find(const char *name)
{
    for (unsigned i = 0; tw_at(i); i++)
        if (!strcmp(tw_at(i)->name, name))
            return tw_at(i);
    return NULL;
}

/* The readers' guess, so a file reads back as what was written; din,
 * which has no writer, becomes Lackey. */
const struct tw_ops *tw_for_path(const char *path)
{
    const struct tw_ops *ops = tw_find(trace_guess(path));
    return ops ? ops : &tw_lackey;
}

static int tw_fail(struct tw *w, int code)
{
    if (!w->failed)
        w->failed = code;
    return code;
}

int tw_bad(struct tw *w, size_t i, struct err *e, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tw_fail(w, err_set(e, -QOSIM_EINVAL, "%s: record %llu: %s", w->path,
                              (unsigned long long)(w->recs + i + 1), msg));
}

static int tw_write(struct tw *w, const uint8_t *p, size_t n, struct err *e)
{
    errno = 0;
    if (n && fwrite(p, 1, n, w->f) != n)
        return tw_fail(w, err_set(e, -QOSIM_EIO, "%s: write failed: %s", w->path,
                                  strerror(errno ? errno : EIO)));
    w->out_bytes += n;
    return 0;
}

static int tw_xz(struct tw *w, const uint8_t *p, size_t n, lzma_action act, struct err *e)
{
    w->lz.next_in = p;
    w->lz.avail_in = n;
    for (;;) {
        w->lz.next_out = w->zbuf;
        w->lz.avail_out = w->zcap;
        lzma_ret r = lzma_code(&w->lz, act);
        if (r != LZMA_OK && r != LZMA_STREAM_END)
            return tw_fail(w, err_set(e, r == LZMA_MEM_ERROR ? -QOSIM_ENOMEM : -QOSIM_EXZ,
                                      "%s: .xz encoder failed (liblzma error %d)", w->path, r));
        int rc = tw_write(w, w->zbuf, w->zcap - w->lz.avail_out, e);
        if (rc)
            return rc;
        if (act == LZMA_FINISH ? r == LZMA_STREAM_END : !w->lz.avail_in)
            return 0;
    }
}

static int tw_zstd(struct tw *w, const uint8_t *p, size_t n, ZSTD_EndDirective end, struct err *e)
{
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {w->zbuf, w->zcap, 0};
        size_t r = ZSTD_compressStream2(w->zc, &out, &in, end);
        if (ZSTD_isError(r))
            return tw_fail(w, err_set(e, -QOSIM_EXZ, "%s: zstd encoder failed: %s", w->path,
                                      ZSTD_getErrorName(r)));
        int rc = tw_write(w, w->zbuf, out.pos, e);
        if (rc)
            return rc;
        /* Ending: until nothing is left to flush; else until all is taken. */
        if (end == ZSTD_e_end ? !r : in.pos == in.size)
            return 0;
    }
}

/* Passes buf on; end: and ends the compressed stream. */
static int tw_pass(struct tw *w, int end, struct err *e)
{
    if (w->failed)
        return w->failed;
    int rc;
    if (w->z == TW_XZ)
        rc = tw_xz(w, w->buf, w->len, end ? LZMA_FINISH : LZMA_RUN, e);
    else if (w->z == TW_ZSTD)
        rc = tw_zstd(w, w->buf, w->len, end ? ZSTD_e_end : ZSTD_e_continue, e);
    else
        rc = tw_write(w, w->buf, w->len, e);
    w->len = 0;
    return rc;
}

int tw_flush(struct tw *w, struct err *e)
{
    return tw_pass(w, 0, e);
}

void tw_free(struct tw *w)
{
    if (!w)
        return;
    if (w->z == TW_XZ)
        lzma_end(&w->lz);
    ZSTD_freeCCtx(w->zc);
    free(w->buf);
    free(w->zbuf);
    free(w->st);
    free(w);
}

static int tw_ends(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int tw_open(struct tw **out, const struct tw_ops *ops, FILE *f, const char *path, struct err *e)
{
    *out = NULL;
    if (!ops)
        ops = tw_for_path(path);
    struct tw *w = calloc(1, sizeof *w);
    if (!w)
        return err_set(e, -QOSIM_ENOMEM, "%s: out of memory", path);
    w->ops = ops;
    w->f = f;
    snprintf(w->path, sizeof w->path, "%s", strcmp(path, "-") ? path : "<stdout>");
    w->z = ops->zstd ? TW_ZSTD : tw_ends(path, ".xz") ? TW_XZ : TW_PLAIN;
    w->buf = malloc(TW_BUF);
    w->st = calloc(1, ops->state ? ops->state : 1);
    w->zcap = w->z == TW_ZSTD ? ZSTD_CStreamOutSize() : TW_BUF;
    w->zbuf = w->z != TW_PLAIN ? malloc(w->zcap) : NULL;
    int ok = w->buf && w->st && (w->z == TW_PLAIN || w->zbuf);
    if (ok && w->z == TW_XZ) {
        lzma_stream init = LZMA_STREAM_INIT;
        w->lz = init;
        ok = lzma_easy_encoder(&w->lz, TW_XZ_PRESET, LZMA_CHECK_CRC64) == LZMA_OK;
        if (!ok)
            w->z = TW_PLAIN; /* nothing to end */
    } else if (ok && w->z == TW_ZSTD) {
        /* The checksum, as zstd(1) writes it: damage is found, not read. */
        ok = (w->zc = ZSTD_createCCtx()) &&
             !ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, TW_ZSTD_LEVEL)) &&
             !ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_checksumFlag, 1));
    }
    if (!ok) {
        tw_free(w);
        return err_set(e, -QOSIM_ENOMEM, "%s: cannot set up the %s writer", path, ops->name);
    }
    if (ops->begin)
        ops->begin(w);
    *out = w;
    return 0;
}

int tw_put(struct tw *w, const struct trace_rec *r, size_t n, struct err *e)
{
    if (w->failed)
        return err_set(e, w->failed, "%s: an earlier error stopped the writer", w->path);
    int rc = w->ops->put(w, r, n, e);
    w->recs += n;
    return rc;
}

int tw_close(struct tw *w, struct err *e)
{
    int rc =
        w->failed ? err_set(e, w->failed, "%s: an earlier error stopped the writer", w->path) : 0;
    if (!rc && w->ops->finish)
        rc = w->ops->finish(w, e);
    if (!rc)
        rc = tw_pass(w, 1, e);
    if (!rc && fflush(w->f))
        rc = err_set(e, -QOSIM_EIO, "%s: write failed: %s", w->path, strerror(errno));
    tw_free(w);
    return rc;
}

uint64_t tw_out_bytes(const struct tw *w)
{
    return w->out_bytes;
}

uint64_t tw_dropped(const struct tw *w)
{
    return w->dropped;
}
