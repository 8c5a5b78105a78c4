/* Bandwidth limiters: one per (domain or controller); one setting per class.
 * Three kinds, each an ops table registered in bw.c:
 *
 *   delay  Intel MBA style: a throttle at each core's L2-to-interconnect link.
 *          A link carries link_rate bytes per tick; a class throttled by
 *          delay_pct percent gets link_rate * (100 - delay_pct) / 100, so
 *          bandwidth falls monotonically as the delay grows. A link may
 *          have several throttles (one per thread, nthr): each paces its
 *          own transfers, and the link carries them all at link_rate.
 *          Request model (cfg.req_delay set): a throttle adds a fixed
 *          delay to every request instead of pacing it, so the bandwidth
 *          a core gets depends on how many requests it keeps in flight
 *          (Intel MBA as documented; bw_delay.c). Spacing model
 *          (cfg.req_spacing set): a throttle lets one request through per
 *          spacing, a request rate per core that costs a core nothing
 *          until its own requests come closer (project choice; bw_delay.c).
 *   rate   AMD L3BE style: an absolute cap in bytes per tick, enforced over
 *          accounting windows of `window` ticks: a class that used its
 *          window's budget waits for the next window.
 *   share  CBQRI style: capacity is divided into nblks blocks; a class is
 *          guaranteed rbwb blocks per window even under contention; the rest
 *          (unreserved blocks and what active classes leave unused) is split
 *          among the classes contending for it in proportion to weight
 *          (Mweight, 0..255); a class alone may use all of it. Work-conserving.
 *          With `hard` set, weight 0 is CBQRI 1.0's hard limit instead of the
 *          2023 draft's "spare last": the class never gets more than its
 *          rbwb blocks, even when the rest of the capacity lies idle.
 *          Each admission says whether it fell within the class's
 *          reservation (bw_in_resv), so that the memory behind the
 *          limiter can serve reserved transfers first (mem_read_prio).
 *
 * Time is in ticks, the machine's clock unit; requests of different ports
 * arrive in roughly, not exactly, increasing time (cores run in bounded
 * quanta), and every limiter must tolerate that. */
#ifndef QOSIM_SIM_BW_H
#define QOSIM_SIM_BW_H

#include "util/err.h"

#include <stdint.h>

enum bw_kind { BW_NONE, BW_DELAY, BW_RATE, BW_SHARE, BW_NKIND };
#define BW_DELAY_REQ_STEPS 100 /* delay_pct 0..99 */
extern const char *const bw_kind_name[BW_NKIND];

struct bw_cfg {
    enum bw_kind kind;
    unsigned nclass;  /* classes (>= 1) */
    unsigned nport;   /* delay: links, one per core behind this limiter (>= 1); others: 1 */
    unsigned nthr;    /* delay: throttles per link, one per thread (0 or 1: one); a port is
                         link * nthr + throttle */
    double link_rate; /* delay: bytes per tick of an unthrottled link */
    uint64_t window;  /* rate, share: accounting window in ticks (>= 1) */
    double capacity;  /* share: bytes per tick the controller carries */
    unsigned nblks;   /* share: blocks the capacity is divided into */

    /* delay, request model (BW_DELAY_REQ_STEPS entries, or NULL for the link model): ticks
       each request waits at its throttle for a delay_pct of i, added to its latency; the link
       then carries every request at link_rate (bw_delay.c) */
    const double *req_delay;
    /* delay, spacing model (BW_DELAY_REQ_STEPS entries, or NULL): ticks between successive
       requests of one throttle for a delay_pct of i (0: no spacing); the link as in the
       request model; with req_delay unset (bw_delay.c) */
    const double *req_spacing;
};

/* A class's setting; the reset setting limits nothing (delay 0, rate
 * unlimited, share: rbwb 0 and weight 1... see bw_class_reset). */
struct bw_class_set {
    unsigned delay_pct; /* delay: 0..99 */
    double rate;        /* rate: bytes per tick; 0 means unlimited */
    unsigned rbwb;      /* share: reserved blocks, sum over classes <= nblks (checked by caller) */
    unsigned weight;    /* share: 0..255 */
    int hard;           /* share: weight 0 is a hard limit (CBQRI 1.0): never more than rbwb */
};

struct bw_class_stat {
    uint64_t bytes;   /* admitted */
    uint64_t reqs;    /* admitted requests */
    uint64_t delayed; /* ticks requests waited in this limiter */
    uint64_t resv;    /* share: bytes admitted within the class's reservation */
};

struct bw_ops;
struct bw {
    const struct bw_ops *ops;
    struct bw_cfg cfg;
    struct bw_class_set *set;   /* [nclass] */
    struct bw_class_stat *stat; /* [nclass] */
    void *state;                /* the kind's private state */
    int resv;                   /* the last admission was within its class's reservation */
};

/* Whether class cls's setting limits it (a delay, a rate cap, or a share
 * class held to its reservation by a hard limit): what a request of an
 * unlimited class waits is contention alone. */
static inline int bw_limited(const struct bw *b, unsigned cls)
{
    const struct bw_class_set *s = &b->set[cls];
    return s->delay_pct || s->rate > 0 || (b->cfg.kind == BW_SHARE && s->hard && s->weight == 0);
}
/* Whether the last bw_admit fell within its class's reservation (share:
 * the class had used less than its rbwb blocks of the window it was charged
 * to; other kinds reserve nothing: 0). */
static inline int bw_in_resv(const struct bw *b)
{
    return b->resv;
}
/* The reset setting of a class for a kind: limits nothing. */
void bw_class_reset(enum bw_kind kind, struct bw_class_set *s);
int bw_init(struct bw *b, const struct bw_cfg *cfg, struct err *e);
void bw_free(struct bw *b);
/* Applies a class's setting from now on. */
void bw_set(struct bw *b, unsigned cls, const struct bw_class_set *s);
/* A transfer of bytes for class cls through port, asked for at time now:
 * books it and returns the time (>= now) at which it may proceed. */
uint64_t bw_admit(struct bw *b, unsigned cls, unsigned port, uint64_t now, uint32_t bytes);

#endif
