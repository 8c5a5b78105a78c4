/* The ops table behind struct bw: private to bw*.c. bw.c validates the
 * generic configuration (kind, nclass), owns b->set and b->stat, clamps
 * settings and keeps the statistics; a kind only keeps its timeline. */
#ifndef QOSIM_SIM_BW_IMPL_H
#define QOSIM_SIM_BW_IMPL_H

#include "bw.h"

struct bw_ops {
    enum bw_kind kind;
    /* Checks the cfg fields this kind uses and allocates b->state; on
     * failure leaves b->state NULL and returns a negative QOSIM_E* code. */
    int (*init)(struct bw *b, struct err *e);
    /* Frees b->state; called with NULL state too. */
    void (*free)(struct bw *b);
    /* b->set[cls] was just changed (already clamped to its range); NULL if
     * the kind reads the setting at each admission and needs nothing. */
    void (*set)(struct bw *b, unsigned cls, const struct bw_class_set *old);
    /* As bw_admit, with cls < nclass; returns a time >= now. */
    uint64_t (*admit)(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes);
};

extern const struct bw_ops bw_delay_ops, bw_rate_ops, bw_share_ops;

/* A finite, positive double (rejects NaN and infinities). */
static inline int bw_positive(double x)
{
    return x > 0 && x <= 1.7976931348623157e308;
}

#endif
