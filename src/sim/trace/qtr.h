/* qtr, qosim's own trace format (docs/traces.md, "qtr"): what its reader
 * (trace_qtr.c) and writer (twrite_qtr.c) share.
 *
 * A 5-byte header, then one item per record: a tag byte and the fields it
 * announces. Both sides keep the same predictor state, so an item holds only
 * what the state does not already say:
 *   instruction  tag 00DF SSSS: D a zigzag varint follows, the distance from
 *                the end of the previous instruction (else 0: sequential);
 *                F a flags byte follows (else flags 0); S the size 1..15, or
 *                0 when a varint size follows.
 *   data         tag TTZZ ZFMM: TT 01 load, 10 store, 11 modify; Z the size
 *                1 << Z for 0..6, or 7 when a varint size follows; F a flags
 *                byte follows; M where the address comes from: 00 the slot's
 *                prediction (its last address plus its last stride), 01 a
 *                zigzag varint from the slot's last address, 10 a zigzag
 *                varint from the previous data address, 11 reserved.
 * Fields follow the tag in this order: size, flags, address. A data record's
 * slot is chosen by its instruction's address and its index among that
 * instruction's data records, so a loop's load finds its own history. */
#ifndef QOSIM_SIM_QTR_H
#define QOSIM_SIM_QTR_H

#include <stdint.h>

#define QTR_VERSION  1
#define QTR_HDR      5  /* magic (4 bytes), version */
#define QTR_ITEM_MAX 22 /* tag, 10-byte size varint, flags, 10-byte address varint */

#define QTR_MAGIC "QTR\x1a" /* 4 bytes */

enum {
    QTR_I_DELTA = 0x20, /* instruction: an address varint follows */
    QTR_I_FLAGS = 0x10, /* instruction: a flags byte follows */
    QTR_D_FLAGS = 0x04, /* data: a flags byte follows */
    QTR_D_SIZE = 7,     /* data: size code for "a varint follows" */
};
/* A data record's address mode, the tag's low two bits. */
enum { QTR_A_PRED, QTR_A_SLOT, QTR_A_LAST, QTR_A_RESERVED };

/* 4096 slots of 16 bytes, 64 KiB, which stay in the L2 cache of the writer
 * and the reader. On a gzip trace 16384 slots made the stream 0.3% smaller,
 * 1024 made it 0.5% bigger. */
#define QTR_SLOT_BITS 12

struct qtr_slot {
    uint64_t addr, stride;
};

/* The predictor state, the same on both sides; all zero at the start. */
struct qtr_state {
    uint64_t next; /* the end of the previous instruction (address + size) */
    uint64_t ip;   /* the previous instruction's address */
    uint64_t last; /* the previous data record's address */
    uint64_t k;    /* data records since the previous instruction */
    struct qtr_slot slot[1u << QTR_SLOT_BITS];
};

/* The slot of data record k of the instruction at ip: Fibonacci hashing of
 * the address with k in its top bits. */
static inline struct qtr_slot *qtr_slot(struct qtr_slot *tab, uint64_t ip, uint64_t k)
{
    return &tab[((ip ^ (k << 57)) * 0x9E3779B97F4A7C15ull) >> (64 - QTR_SLOT_BITS)];
}

static inline uint64_t qtr_zigzag(uint64_t d)
{
    return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t qtr_unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

#endif
