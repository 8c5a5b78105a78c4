/* A byte source: a file or standard input, plain, .xz or zstd (each
 * recognised by its magic bytes, so piped and renamed files work), read in
 * large blocks. Concatenated .xz streams or zstd frames read as one. */
#ifndef QOSIM_SIM_BSRC_H
#define QOSIM_SIM_BSRC_H

#include "util/err.h"

#include <lzma.h>
#include <zstd.h>
#include <stdint.h>
#include <stddef.h>

struct bsrc {
    int fd;
    int xz, zst;
    int in_eof;
    lzma_stream lz;
    ZSTD_DStream *zs;
    ZSTD_inBuffer zin; /* zstd: the part of in not yet decoded */
    int zmid;          /* zstd: inside a frame (its end not yet seen) */
    uint8_t *in;       /* compressed input buffer (xz and zstd) */
    uint8_t peek[6];   /* bytes read to recognise the format, delivered first */
    size_t npeek, peek_pos;
    uint64_t in_bytes; /* compressed bytes consumed, for messages */
};

/* path "-" is standard input. */
int bsrc_open(struct bsrc *b, const char *path, struct err *e);
/* Reads up to n bytes; returns the count, 0 at the end, or a negative code
 * with e set (e.msg names what is wrong, not where). */
long bsrc_read(struct bsrc *b, void *buf, size_t n, struct err *e);
void bsrc_close(struct bsrc *b);

#endif
