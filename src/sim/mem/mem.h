/* Memory: NUMA nodes, each with channels that carry a peak bandwidth.
 *
 * Each channel has a bandwidth timeline: time is cut into buckets of
 * MEM_SLOTS line transfers, and a transfer takes the next free slot of the
 * first bucket at or after its arrival that has one, so demand above peak
 * queues and the wait adds to latency. A timeline rather than one "busy
 * until" time, because requests arrive out of time order (cores run in
 * quanta; limiters hold requests back): a request held back into the future
 * must not make an earlier one wait behind it. Lines are spread over a
 * node's channels by block number. A read from another node pays the remote
 * penalty on top; a node may be another's (slow memory attached to a DRAM
 * node: its home), and its home's readers pay none. Nodes may differ in
 * channels, peak and latency. Writebacks occupy the channel but nobody
 * waits.
 *
 * Reads within a reservation (mem_read_prio: a CBQRI bandwidth controller
 * admitted them within their RCID's Rbwb) are served first: they take the
 * first slots of a bucket, ahead of whatever it holds, and each line they
 * displace moves on to the next bucket with a free slot, so the channel
 * still carries exactly its peak. */
#ifndef QOSIM_SIM_MEM_H
#define QOSIM_SIM_MEM_H

#include "util/err.h"

#include <stdint.h>

/* A node that differs from the others (slow memory): its own channels,
 * peak and latency, and the node it is local to. */
struct mem_node_cfg {
    unsigned channels; /* >= 1 */
    double peak;       /* bytes per tick, all channels together */
    uint64_t latency;  /* base latency of a read from its home, ticks */
    unsigned home;     /* the node whose readers do not pay the remote penalty */
};

struct mem_cfg {
    unsigned nodes;    /* >= 1 */
    unsigned channels; /* per node, >= 1 */
    double peak;       /* bytes per tick per node (all channels together) */
    uint64_t latency;  /* base latency of a read, ticks */
    uint64_t remote;   /* added when the reader's node is not the line's node's home */
    uint32_t line;     /* bytes per transfer */
    /* [nodes] each node's own configuration, or NULL: every node has the
     * channels, peak and latency above and is its own home. */
    const struct mem_node_cfg *node;
};

struct mem_node_stat {
    uint64_t read_bytes, write_bytes;
    uint64_t queued;                  /* ticks reads spent waiting for a channel */
    uint64_t prio_bytes, prio_queued; /* of those, reads served first (mem_read_prio) */
};

#define MEM_SLOTS   8    /* line transfers per bucket */
#define MEM_BUCKETS 4096 /* buckets a channel's timeline keeps */

struct mem_chan {
    uint64_t lo;                /* oldest bucket kept (absolute index) */
    uint16_t used[MEM_BUCKETS]; /* slots taken, bucket b at [b % MEM_BUCKETS] */
    uint8_t prio[MEM_BUCKETS];  /* of those, by reads served first (mem_read_prio) */
};

/* What mem_init derived of one node. */
struct mem_node {
    uint64_t gap;        /* ticks a line occupies a channel, in 1/256 tick (fixed point) */
    uint64_t latency;    /* ticks */
    struct mem_chan *ch; /* [channels] */
    unsigned channels, home;
};

struct mem {
    struct mem_cfg cfg;         /* cfg.node is not kept */
    struct mem_node *node;      /* [nodes] */
    struct mem_chan *ch;        /* every node's channels */
    struct mem_node_stat *stat; /* [nodes] */
};

int mem_init(struct mem *m, const struct mem_cfg *cfg, struct err *e);
void mem_free(struct mem *m);
/* A line read of block (on node `node`) by a requester on node `from`,
 * issued at now: returns its latency in ticks (the node's base latency +
 * queueing + the remote penalty unless `from` is the node's home). */
uint64_t mem_read(struct mem *m, unsigned from, unsigned node, uint64_t block, uint64_t now);
/* As mem_read; with prio set, the read is served ahead of the reads and
 * writes that are not (its queueing is only behind other such reads). */
uint64_t mem_read_prio(struct mem *m, unsigned from, unsigned node, uint64_t block, uint64_t now,
                       int prio);
/* A line written to block on node at now (a writeback, or a write-combined
 * non-temporal line): returns the ticks it queued for its channel, which a
 * writeback's requester does not wait for. */
uint64_t mem_write(struct mem *m, unsigned node, uint64_t block, uint64_t now);

#endif
