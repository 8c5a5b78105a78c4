/* The qtr reader (the format: qtr.h, docs/traces.md), plain or zstd (bsrc
 * recognises it). Items are decoded from a buffer with zeros behind its
 * data, so an item is read whole before its end is checked: a truncated one
 * reads zeros, never past the buffer. An item depends on every one before
 * it, so nothing can be skipped: every error stops the reading, and names
 * the byte offset in the uncompressed stream where the bad item starts. */
#include "qtr.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QTR_BUF (256 * 1024)
#define QTR_PAD 32

_Static_assert(QTR_PAD >= QTR_ITEM_MAX, "an item read past the data stays in the padding");

struct qtr_rd {
    uint64_t off; /* the stream offset of buf[0] */
    int started;  /* the header was read */
    struct qtr_state s;
};

/* An LEB128 varint; *wide set if it does not fit in 64 bits. Reads at most
 * 10 bytes. */
static inline const uint8_t *qtr_get(const uint8_t *p, uint64_t *v, int *wide)
{
    uint64_t x = *p & 0x7f;
    if (*p++ < 0x80) {
        *v = x;
        return p;
    }
    for (unsigned s = 7;; s += 7) {
        uint8_t b = *p++;
        x |= (uint64_t)(b & 0x7f) << s;
        if (b < 0x80 || s == 63) {
            *wide |= s == 63 && b > 1;
            *v = x;
            return p;
        }
    }
}

/* Moves the unread bytes to the buffer's start and reads behind them until
 * the longest item fits or the input ends. */
static int qtr_fill(struct trace *t, struct qtr_rd *q)
{
    memmove(t->buf, t->buf + t->pos, t->len - t->pos);
    q->off += t->pos;
    t->len -= t->pos;
    t->pos = 0;
    while (t->len < QTR_ITEM_MAX && !t->eof) {
        long got = bsrc_read(&t->src, t->buf + t->len, t->cap - t->len, &t->err);
        if (got < 0)
            return err_set(&t->err, (int)got, "%s:byte %llu: %s", t->name,
                           (unsigned long long)(q->off + t->len), t->err.msg);
        t->eof = !got;
        t->len += (size_t)got;
    }
    memset(t->buf + t->len, 0, QTR_PAD);
    return 0;
}

static int qtr_header(struct trace *t, struct qtr_rd *q)
{
    const uint8_t *b = (const uint8_t *)t->buf;
    size_t m = t->len < 4 ? t->len : 4;
    if (memcmp(b, QTR_MAGIC, m)) {
        char hex[16] = "";
        for (size_t i = 0; i < m; i++)
            snprintf(hex + 3 * i, sizeof hex - 3 * i, " %02x", b[i]);
        return err_set(&t->err, -QOSIM_EPARSE,
                       "%s:byte 0: not a qtr stream (it starts%s, a qtr stream 51 54 52 1a)",
                       t->name, hex);
    }
    if (t->len < QTR_HDR)
        return err_set(&t->err, -QOSIM_ETRUNC, "%s:byte 0: truncated qtr header (%zu of %d bytes)",
                       t->name, t->len, QTR_HDR);
    if (b[4] != QTR_VERSION)
        return err_set(&t->err, -QOSIM_EUNSUP,
                       "%s:byte 4: qtr version %u (this reader reads version %d)", t->name, b[4],
                       QTR_VERSION);
    t->pos = QTR_HDR;
    q->started = 1;
    return 0;
}

/* The error of the item at buf[at]: it runs past the data (cut), has a
 * varint too wide, a size too big, or a reserved tag. */
static int qtr_bad(struct trace *t, const struct qtr_rd *q, size_t at, int cut, unsigned tag,
                   int wide, uint64_t size)
{
    unsigned long long off = q->off + at;
    t->pos = at;
    if (cut)
        return err_set(&t->err, -QOSIM_ETRUNC,
                       "%s:byte %llu: truncated qtr item (tag 0x%02x): the stream ends after %zu "
                       "of its bytes",
                       t->name, off, tag, t->len - at);
    if (tag >= 0x40 && (tag & 3) == QTR_A_RESERVED)
        return err_set(&t->err, -QOSIM_EPARSE, "%s:byte %llu: unknown qtr tag 0x%02x", t->name, off,
                       tag);
    if (wide)
        return err_set(&t->err, -QOSIM_EPARSE,
                       "%s:byte %llu: varint of more than 64 bits in the item of tag 0x%02x",
                       t->name, off, tag);
    return err_set(&t->err, -QOSIM_EPARSE,
                   "%s:byte %llu: size %llu of more than 32 bits (tag 0x%02x)", t->name, off,
                   (unsigned long long)size, tag);
}

static long qtr_read(struct trace *t, struct trace_rec *r, size_t n)
{
    struct qtr_rd *q = t->priv;
    if (!q) {
        /* trace_reopen frees the state but keeps the buffer. */
        t->priv = q = calloc(1, sizeof *q);
        if (!t->buf)
            t->buf = malloc(QTR_BUF + QTR_PAD);
        if (!q || !t->buf)
            return err_set(&t->err, -QOSIM_ENOMEM, "%s: out of memory", t->name);
        t->cap = QTR_BUF;
    }
    if (!q->started) {
        int rc = qtr_fill(t, q);
        if (rc)
            return rc;
        if (!t->len)
            return 0; /* an empty input is an empty trace, as in every format */
        if ((rc = qtr_header(t, q)))
            return rc;
    }
    const uint8_t *buf = (const uint8_t *)t->buf, *p = buf + t->pos, *end = buf + t->len;
    struct qtr_state *s = &q->s;
    uint64_t next = s->next, ip = s->ip, last = s->last, k = s->k;
    int code = 0;
    size_t i = 0;
    while (i < n) {
        if ((size_t)(end - p) < QTR_ITEM_MAX && !t->eof) {
            t->pos = (size_t)(p - buf);
            if ((code = qtr_fill(t, q)))
                break;
            p = buf + t->pos;
            end = buf + t->len;
            continue;
        }
        if (p == end)
            break;
        const uint8_t *at = p;
        unsigned tag = *p++;
        uint64_t size = 0, z = 0, a;
        unsigned fl = 0;
        int wide = 0;
        if (tag < 0x40) {
            size = tag & 15;
            if (!size)
                p = qtr_get(p, &size, &wide);
            if (tag & QTR_I_FLAGS)
                fl = *p++;
            if (tag & QTR_I_DELTA)
                p = qtr_get(p, &z, &wide);
            if (p > end || wide || size > UINT32_MAX)
                return qtr_bad(t, q, (size_t)(at - buf), p > end, tag, wide, size);
            a = next + qtr_unzigzag(z);
            ip = a;
            next = a + size;
            k = 0;
            r[i++] = (struct trace_rec){
                .addr = a, .size = (uint32_t)size, .kind = TREC_I, .flags = (uint8_t)fl};
            continue;
        }
        unsigned mode = tag & 3, zc = (tag >> 3) & 7;
        if (mode == QTR_A_RESERVED)
            return qtr_bad(t, q, (size_t)(at - buf), 0, tag, 0, 0);
        size = 1u << zc;
        if (zc == QTR_D_SIZE)
            p = qtr_get(p, &size, &wide);
        if (tag & QTR_D_FLAGS)
            fl = *p++;
        if (mode != QTR_A_PRED)
            p = qtr_get(p, &z, &wide);
        if (p > end || wide || size > UINT32_MAX)
            return qtr_bad(t, q, (size_t)(at - buf), p > end, tag, wide, size);
        struct qtr_slot *sl = qtr_slot(s->slot, ip, k++);
        a = mode == QTR_A_PRED   ? sl->addr + sl->stride
            : mode == QTR_A_SLOT ? sl->addr + qtr_unzigzag(z)
                                 : last + qtr_unzigzag(z);
        sl->stride = a - sl->addr;
        sl->addr = a;
        last = a;
        r[i++] = (struct trace_rec){
            .addr = a, .size = (uint32_t)size, .kind = (uint8_t)(tag >> 6), .flags = (uint8_t)fl};
        continue;
    }
    if (code)
        return code;
    t->pos = (size_t)(p - buf);
    s->next = next;
    s->ip = ip;
    s->last = last;
    s->k = k;
    return (long)i;
}

const struct trace_ops trace_qtr = {
    .name = "qtr",
    .desc = "qosim's compact binary trace (qosim's trace writers), plain or zstd",
    .unit = "byte ",
    .read = qtr_read,
};
