#include "bsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BSRC_IN (256 * 1024)

static const uint8_t xz_magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
/* A zstd frame starts with 0xFD2FB528, little-endian (RFC 8878, 3.1.1). */
static const uint8_t zst_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

static long bsrc_raw(struct bsrc *b, void *buf, size_t n, struct err *e)
{
    for (;;) {
        ssize_t r = read(b->fd, buf, n);
        if (r >= 0)
            return (long)r;
        if (errno != EINTR)
            return err_set(e, -QOSIM_EIO, "read failed: %s", strerror(errno));
    }
}

int bsrc_open(struct bsrc *b, const char *path, struct err *e)
{
    memset(b, 0, sizeof *b);
    if (!strcmp(path, "-")) {
        b->fd = STDIN_FILENO;
    } else {
        b->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (b->fd < 0)
            return err_set(e, errno == ENOENT ? -QOSIM_ENOENT : -QOSIM_EIO, "cannot open: %s",
                           strerror(errno));
    }
    /* Fill the peek buffer fully: a pipe may deliver the magic in pieces. */
    while (b->npeek < sizeof b->peek) {
        long r = bsrc_raw(b, b->peek + b->npeek, sizeof b->peek - b->npeek, e);
        if (r < 0) {
            bsrc_close(b);
            return (int)r;
        }
        if (!r)
            break;
        b->npeek += (size_t)r;
    }
    if (b->npeek == sizeof b->peek && !memcmp(b->peek, xz_magic, sizeof xz_magic)) {
        b->xz = 1;
        b->in = malloc(BSRC_IN);
        lzma_stream init = LZMA_STREAM_INIT;
        b->lz = init;
        if (!b->in || lzma_stream_decoder(&b->lz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
            bsrc_close(b);
            return err_set(e, -QOSIM_ENOMEM, "cannot set up the .xz decoder");
        }
        memcpy(b->in, b->peek, b->npeek);
        b->lz.next_in = b->in;
        b->lz.avail_in = b->npeek;
        b->npeek = 0;
    } else if (b->npeek >= sizeof zst_magic && !memcmp(b->peek, zst_magic, sizeof zst_magic)) {
        b->zst = 1;
        b->in = malloc(BSRC_IN);
        b->zs = ZSTD_createDStream();
        if (!b->in || !b->zs || ZSTD_isError(ZSTD_initDStream(b->zs))) {
            bsrc_close(b);
            return err_set(e, -QOSIM_ENOMEM, "cannot set up the zstd decoder");
        }
        memcpy(b->in, b->peek, b->npeek);
        b->zin = (ZSTD_inBuffer){b->in, b->npeek, 0};
        b->zmid = 1;
        b->npeek = 0;
    }
    return 0;
}

static const char *bsrc_lzma_msg(lzma_ret r)
{
    switch (r) {
    case LZMA_FORMAT_ERROR:
        return "not an .xz stream";
    case LZMA_OPTIONS_ERROR:
        return "unsupported .xz options";
    case LZMA_DATA_ERROR:
        return "corrupt .xz data";
    case LZMA_BUF_ERROR:
        return "truncated .xz stream";
    case LZMA_MEM_ERROR:
        return "out of memory in the .xz decoder";
    default:
        return "unexpected .xz decoder error";
    }
}

static long bsrc_xz(struct bsrc *b, void *buf, size_t n, struct err *e)
{
    b->lz.next_out = buf;
    b->lz.avail_out = n;
    while (b->lz.avail_out == n) {
        if (!b->lz.avail_in && !b->in_eof) {
            long r = bsrc_raw(b, b->in, BSRC_IN, e);
            if (r < 0)
                return r;
            b->in_eof = !r;
            b->lz.next_in = b->in;
            b->lz.avail_in = (size_t)r;
        }
        size_t before = b->lz.avail_in;
        lzma_ret r = lzma_code(&b->lz, b->in_eof ? LZMA_FINISH : LZMA_RUN);
        b->in_bytes += before - b->lz.avail_in;
        if (r == LZMA_STREAM_END)
            break;
        if (r != LZMA_OK)
            return err_set(e, r == LZMA_BUF_ERROR ? -QOSIM_ETRUNC : -QOSIM_EXZ,
                           "%s (after %llu compressed bytes)", bsrc_lzma_msg(r),
                           (unsigned long long)b->in_bytes);
    }
    return (long)(n - b->lz.avail_out);
}

/* Frames follow each other (zstd(1) writes one per file, `cat a.zst b.zst`
 * two): the input may end only where a frame has ended. */
static long bsrc_zst(struct bsrc *b, void *buf, size_t n, struct err *e)
{
    ZSTD_outBuffer out = {buf, n, 0};
    for (;;) {
        if (b->zin.pos == b->zin.size && !b->in_eof) {
            long r = bsrc_raw(b, b->in, BSRC_IN, e);
            if (r < 0)
                return r;
            b->in_eof = !r;
            b->zin = (ZSTD_inBuffer){b->in, (size_t)r, 0};
        }
        int drained = b->in_eof && b->zin.pos == b->zin.size;
        if (drained && !b->zmid)
            return 0;
        /* Called even without input: the decoder may hold output. A call
         * that fails leaves zin as it was: count all it was given. */
        size_t before = b->zin.pos;
        size_t r = ZSTD_decompressStream(b->zs, &out, &b->zin);
        b->in_bytes += (ZSTD_isError(r) ? b->zin.size : b->zin.pos) - before;
        if (ZSTD_isError(r))
            return err_set(e, -QOSIM_EXZ,
                           "corrupt zstd data: %s (within the first %llu compressed bytes)",
                           ZSTD_getErrorName(r), (unsigned long long)b->in_bytes);
        b->zmid = r != 0;
        if (out.pos)
            return (long)out.pos;
        if (drained && b->zmid)
            return err_set(e, -QOSIM_ETRUNC, "truncated zstd stream (after %llu compressed bytes)",
                           (unsigned long long)b->in_bytes);
    }
}

long bsrc_read(struct bsrc *b, void *buf, size_t n, struct err *e)
{
    if (!n)
        return 0;
    if (b->xz)
        return bsrc_xz(b, buf, n, e);
    if (b->zst)
        return bsrc_zst(b, buf, n, e);
    if (b->peek_pos < b->npeek) {
        size_t k = b->npeek - b->peek_pos < n ? b->npeek - b->peek_pos : n;
        memcpy(buf, b->peek + b->peek_pos, k);
        b->peek_pos += k;
        return (long)k;
    }
    return bsrc_raw(b, buf, n, e);
}

void bsrc_close(struct bsrc *b)
{
    if (b->fd > STDIN_FILENO)
        close(b->fd);
    b->fd = -1;
    if (b->xz)
        lzma_end(&b->lz);
    ZSTD_freeDStream(b->zs);
    b->zs = NULL;
    free(b->in);
    b->in = NULL;
    b->xz = b->zst = 0;
}
