/* A byte source: a file or standard input, plain or .xz (recognised by its
 * magic bytes, so piped and renamed files work), read in large blocks. */
#ifndef QOSIM_SIM_BSRC_H
#define QOSIM_SIM_BSRC_H

#include "util/err.h"

#include <lzma.h>
#include <stdint.h>
#include <stddef.h>

struct bsrc {
    int fd;
    int xz;
    int in_eof;
    lzma_stream lz;
    uint8_t *in;     /* compressed input buffer (xz only) */
    uint8_t peek[6]; /* bytes read to recognise the format, delivered first */
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
