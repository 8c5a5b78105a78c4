/* Hardware prefetchers: what each one watches and which lines it asks for.
 * The machine (sim/mach.c, "prefetch requests") issues what they ask for as
 * requests like any other: in the requester's class and tag, filling under
 * its masks, through the bandwidth limiters, counted.
 *
 * The kinds are Intel's four, as Intel documents them (Intel 64 and IA-32
 * Architectures Optimization Reference Manual, "Data Prefetching" of the
 * Sandy Bridge microarchitecture and later; "Disclosure of H/W prefetcher
 * control on some Intel processors", Intel, 2014), with AMD's nearest
 * equivalents (docs/mechanisms.md, "Hardware prefetchers"):
 *
 *   l2_stream     L2 streamer: per 4 KiB page, a forward or backward stream
 *                 of L2 requests; once detected it runs up to `distance`
 *                 lines ahead, `degree` requests per L2 lookup, into L2 and
 *                 L3, or L3 only for lines far ahead or while many requests
 *                 are outstanding (`l2_distance`, `busy`).
 *   l2_adjacent   spatial: each line an L2 miss fetches is completed with its
 *                 128-byte pair.
 *   l1_next_line  DCU: an ascending load into a line after a load of the line
 *                 before fetches the next line into L1D.
 *   l1_ip_stride  DCU IP: per load instruction a constant stride (up to 2 KiB)
 *                 predicts its next `degree` addresses, into L1D.
 *
 * Each ops table is one kind; pf.c registers them in one table. */
#ifndef QOSIM_SIM_PF_H
#define QOSIM_SIM_PF_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* Bit order is Intel MISC_FEATURE_CONTROL's (0x1A4, bits 0..3). */
enum pf_kind { PF_L2_STREAM, PF_L2_ADJ, PF_L1_NEXT, PF_L1_IP, PF_NKIND };
#define PF_ALL    ((1u << PF_NKIND) - 1)
#define PF_L1_ANY (1u << PF_L1_NEXT | 1u << PF_L1_IP)
extern const char *const pf_kind_name[PF_NKIND];

/* Where a prefetch fills (and every level on its way above memory). */
enum pf_into { PF_INTO_L1, PF_INTO_L2, PF_INTO_L3 };

struct pf_params {
    unsigned distance;    /* lines ahead at most (l2_stream); stride multiples (l1_ip_stride) */
    unsigned degree;      /* requests per trigger */
    unsigned l2_distance; /* l2_stream: lines further ahead fill L3 only */
    unsigned busy;        /* l2_stream: with this many requests outstanding, L3 only */
};

struct pf_cfg {
    unsigned present; /* bit k: the part has kind k (plat core.prefetch) */
    struct pf_params k[PF_NKIND];
    unsigned fill_buffers; /* L1D misses in flight at most (plat core.fill_buffers) */
    unsigned l2_queue;     /* L2 misses in flight at most (plat core.l2_queue) */
};

/* One line a prefetcher asks for. */
struct pf_req {
    uint64_t block;
    uint8_t into; /* enum pf_into */
    uint8_t kind; /* enum pf_kind */
};
#define PF_MAX_OUT 64

/* What a prefetcher watches: a data access at L1D (addr and ip are
 * physical and the instruction's address) or a request looking up L2. */
struct pf_event {
    uint64_t block, addr, ip;
    uint64_t now; /* ticks */
    uint8_t miss; /* it missed the level it looked up */
    uint8_t load; /* L1D: a load (stores train nothing) */
};

#define PF_PEND   64 /* prefetched lines whose arrival time is kept */
#define PF_FLIGHT 32 /* requests whose completion a queue keeps: its largest size */

/* A request queue of the core: the completion times (ticks) of the last
 * PF_FLIGHT requests it took, demand and prefetch. Those after now are in
 * flight; the queue is full when as many are as it has entries (at most
 * PF_FLIGHT). Kept in issue order (project choice: adding is a store and
 * counting one pass over a small array): a request still in flight after
 * PF_FLIGHT later ones is no longer counted, which only matters when a
 * queue of nearly PF_FLIGHT entries holds requests of very different
 * latencies. */
struct pf_queue {
    uint64_t done[PF_FLIGHT];
    unsigned n;
};

/* One CPU's prefetchers: their state, and the prefetched lines not yet used. */
struct pf {
    const struct pf_cfg *cfg;
    unsigned line_bits;
    void *st[PF_NKIND];
    struct {
        uint64_t block, ready;
        uint8_t into; /* PF_INTO_* + 1; 0: empty */
    } pend[PF_PEND];
    struct pf_queue l1q; /* L1D misses: the fill buffers */
    struct pf_queue l2q; /* L2 misses: the L2's queue to the uncore (Intel's superqueue) */
};

int pf_init(struct pf *f, const struct pf_cfg *cfg, unsigned line_bits, struct err *e);
void pf_free(struct pf *f);
/* Candidates of the enabled (on) kinds trained at L1D / at L2, into out
 * (room PF_MAX_OUT); returns how many. pf_l2 also sets *inflight to the L2
 * misses in flight when the streamer's `busy` rule counted them, else to
 * PF_UNCOUNTED (the caller bounds its requests with the same count). */
#define PF_UNCOUNTED UINT32_MAX
unsigned pf_l1(struct pf *f, unsigned on, const struct pf_event *ev, struct pf_req *out);
unsigned pf_l2(struct pf *f, unsigned on, const struct pf_event *ev, struct pf_req *out,
               unsigned *inflight);

/* A prefetched line arrives at ready (ticks), into level `into`. */
void pf_pend_set(struct pf *f, uint64_t block, uint64_t ready, uint8_t into);
/* Whether one of the last prefetches kept asked for block into `into` or a
 * level above it: a request the prefetchers' queue drops (project choice:
 * two prefetchers, or one twice, asking for a line in flight make one
 * request, as a prefetch queue merges them). */
int pf_recent(const struct pf *f, uint64_t block, uint8_t into);
/* The arrival time of a prefetched line, forgotten once asked (0: none kept). */
uint64_t pf_pend_take(struct pf *f, uint64_t block);
/* A request of queue q completes at ready; how many of those kept are
 * after now (in flight). */
void pf_flight_add(struct pf_queue *q, uint64_t ready);
unsigned pf_outstanding(const struct pf_queue *q, uint64_t now);

#endif
