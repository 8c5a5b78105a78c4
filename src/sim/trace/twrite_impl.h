/* What the trace writers (twrite_*.c) share with twrite.c: the writer and
 * its output buffer. A format puts its bytes in buf; tw_flush passes them
 * through the compressor (if any) to the FILE. */
#ifndef QOSIM_SIM_TWRITE_IMPL_H
#define QOSIM_SIM_TWRITE_IMPL_H

#include "twrite.h"

#include <lzma.h>
#include <zstd.h>

/* The format's bytes are handed on in blocks of this size: big enough that
 * a call per block costs nothing, small enough to stay in the L2 cache. */
#define TW_BUF (128 * 1024)
/* Room every format may count on after tw_room: its longest record. */
#define TW_REC_MAX 64

enum tw_z { TW_PLAIN, TW_XZ, TW_ZSTD };

struct tw {
    const struct tw_ops *ops;
    FILE *f;
    char path[256];
    enum tw_z z;
    lzma_stream lz;
    ZSTD_CCtx *zc;
    int failed;         /* the first error's code: the writer only fails after it */
    uint64_t recs;      /* records taken, for messages */
    uint64_t out_bytes; /* written to f */
    uint64_t dropped;
    uint8_t *buf; /* TW_BUF bytes of the format's output, len of them used */
    size_t len;
    uint8_t *zbuf; /* compressed output, zcap bytes */
    size_t zcap;
    void *st; /* the format's state, ops->state bytes, zeroed */
};

/* Passes buf on and empties it; 0 or the error (also kept in w->failed). */
int tw_flush(struct tw *w, struct err *e);
/* An error of record i of the current tw_put call: the message names the
 * file and the record (counted from 1 over the whole output). */
int tw_bad(struct tw *w, size_t i, struct err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Makes room for TW_REC_MAX bytes at buf + len. */
static inline int tw_room(struct tw *w, struct err *e)
{
    return w->len <= TW_BUF - TW_REC_MAX ? 0 : tw_flush(w, e);
}

#endif
