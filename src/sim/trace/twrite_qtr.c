/* The qtr writer (the format: qtr.h, docs/traces.md): one item per record,
 * zstd-compressed by twrite.c. This runs behind a capture of tens of
 * millions of records a second, so the loop keeps the state in registers
 * and checks for room once per record. */
#include "qtr.h"
#include "twrite_impl.h"

#include <string.h>

_Static_assert(QTR_ITEM_MAX <= TW_REC_MAX, "tw_room leaves room for an item");

/* LEB128: 7 bits a byte, lowest first, the top bit set on all but the last. */
static inline uint8_t *qtr_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static void qtr_begin(struct tw *w)
{
    memcpy(w->buf, QTR_MAGIC, 4);
    w->buf[4] = QTR_VERSION;
    w->len = QTR_HDR;
}

static int qtr_put(struct tw *w, const struct trace_rec *r, size_t n, struct err *e)
{
    struct qtr_state *s = w->st;
    uint64_t next = s->next, ip = s->ip, last = s->last, k = s->k;
    uint8_t *p = w->buf + w->len;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const struct trace_rec *x = &r[i];
        if (p > w->buf + TW_BUF - TW_REC_MAX) {
            w->len = (size_t)(p - w->buf);
            rc = tw_flush(w, e);
            p = w->buf;
            if (rc)
                break;
        }
        uint8_t *tag = p++;
        if (x->kind == TREC_I) {
            unsigned t = x->size - 1 < 15 ? x->size : 0;
            if (!t)
                p = qtr_varint(p, x->size);
            if (x->flags) {
                t |= QTR_I_FLAGS;
                *p++ = x->flags;
            }
            if (x->addr != next) {
                t |= QTR_I_DELTA;
                p = qtr_varint(p, qtr_zigzag(x->addr - next));
            }
            *tag = (uint8_t)t;
            ip = x->addr;
            next = x->addr + x->size;
            k = 0;
        } else if (x->kind <= TREC_M) {
            unsigned t = (unsigned)x->kind << 6, sz = x->size;
            if (sz && !(sz & (sz - 1)) && sz <= 64) {
                t |= (unsigned)__builtin_ctz(sz) << 3;
            } else {
                t |= QTR_D_SIZE << 3;
                p = qtr_varint(p, sz);
            }
            if (x->flags) {
                t |= QTR_D_FLAGS;
                *p++ = x->flags;
            }
            struct qtr_slot *sl = qtr_slot(s->slot, ip, k++);
            uint64_t a = x->addr, zs = qtr_zigzag(a - sl->addr), zl = qtr_zigzag(a - last);
            if (a == sl->addr + sl->stride) {
                t |= QTR_A_PRED;
            } else if (zs <= zl) {
                t |= QTR_A_SLOT;
                p = qtr_varint(p, zs);
            } else {
                t |= QTR_A_LAST;
                p = qtr_varint(p, zl);
            }
            *tag = (uint8_t)t;
            sl->stride = a - sl->addr;
            sl->addr = a;
            last = a;
        } else {
            p = tag;
            rc = tw_bad(w, i, e, "kind %u is not I, L, S or M", x->kind);
            break;
        }
    }
    w->len = (size_t)(p - w->buf);
    s->next = next;
    s->ip = ip;
    s->last = last;
    s->k = k;
    return rc;
}

const struct tw_ops tw_qtr = {
    .name = "qtr",
    .desc = "qosim's compact trace, zstd-compressed; keeps every field of every record",
    .zstd = 1,
    .state = sizeof(struct qtr_state),
    .begin = qtr_begin,
    .put = qtr_put,
};
