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
 * penalty on top. Writebacks occupy the channel but nobody waits. */
#ifndef QOSIM_SIM_MEM_H
#define QOSIM_SIM_MEM_H

#include "util/err.h"

#include <stdint.h>

struct mem_cfg {
    unsigned nodes;    /* >= 1 */
    unsigned channels; /* per node, >= 1 */
    double peak;       /* bytes per tick per node (all channels together) */
    uint64_t latency;  /* base latency of a read, ticks */
    uint64_t remote;   /* added when the reader's node differs from the line's */
    uint32_t line;     /* bytes per transfer */
};

struct mem_node_stat {
    uint64_t read_bytes, write_bytes;
    uint64_t queued; /* ticks reads spent waiting for a channel */
};

#define MEM_SLOTS   8    /* line transfers per bucket */
#define MEM_BUCKETS 4096 /* buckets a channel's timeline keeps */

struct mem_chan {
    uint64_t lo;                /* oldest bucket kept (absolute index) */
    uint16_t used[MEM_BUCKETS]; /* slots taken, bucket b at [b % MEM_BUCKETS] */
};

struct mem {
    struct mem_cfg cfg;
    uint64_t gap;               /* ticks a line occupies a channel, in 1/256 tick (fixed point) */
    struct mem_chan *ch;        /* [nodes * channels] */
    struct mem_node_stat *stat; /* [nodes] */
};

int mem_init(struct mem *m, const struct mem_cfg *cfg, struct err *e);
void mem_free(struct mem *m);
/* A line read of block (on node `node`) by a requester on node `from`,
 * issued at now: returns its latency in ticks (base + queueing + remote). */
uint64_t mem_read(struct mem *m, unsigned from, unsigned node, uint64_t block, uint64_t now);
/* A line written back to block on node at now. */
void mem_write(struct mem *m, unsigned node, uint64_t block, uint64_t now);

#endif
