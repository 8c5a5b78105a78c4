/* Memory channels with a bandwidth timeline (see mem.h).
 *
 * Channel of a line: block % channels, so sequential lines take the channels
 * in turn and a sequential stream below peak never queues (a stride that is a
 * multiple of the channel count does pile onto one channel, as on a
 * controller without address hashing). A line occupies its channel for
 * gap = line / (peak / channels) ticks, kept in 1/256 tick like the channels'
 * timelines so fractional gaps add up; a read's queueing wait is rounded up
 * to a whole tick. */
#include "mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_FRAC 256u

/* One node's configuration checked and derived; messages start with `what`
 * ("" when one configuration is every node's, else "node N: "). */
static int node_init(struct mem_node *n, const struct mem_node_cfg *c, uint32_t line,
                     const char *what, struct err *e)
{
    if (c->channels < 1)
        return err_set(e, -QOSIM_EINVAL, "memory: %schannels per node must be at least 1 (got %u)",
                       what, c->channels);
    if (!(c->peak > 0) || isinf(c->peak))
        return err_set(e, -QOSIM_EINVAL,
                       "memory: %speak must be a positive number of bytes per tick (got %g)", what,
                       c->peak);
    double gap = (double)line * c->channels * MEM_FRAC / c->peak;
    if (gap >= 1.8e19)
        return err_set(e, -QOSIM_EINVAL,
                       "memory: peak %g bytes per tick is too low for %u-byte lines on %u "
                       "channels",
                       c->peak, (unsigned)line, c->channels);
    n->gap = (uint64_t)llround(gap);
    if (n->gap < 1) /* faster than 1/256 tick a line: the finest step there is */
        n->gap = 1;
    n->latency = c->latency;
    n->channels = c->channels;
    n->home = c->home;
    return 0;
}

int mem_init(struct mem *m, const struct mem_cfg *cfg, struct err *e)
{
    memset(m, 0, sizeof *m);
    if (cfg->nodes < 1)
        return err_set(e, -QOSIM_EINVAL, "memory: nodes must be at least 1 (got %u)", cfg->nodes);
    if (cfg->line < 1)
        return err_set(e, -QOSIM_EINVAL, "memory: line size must be at least 1 byte (got %u)",
                       (unsigned)cfg->line);
    m->node = calloc(cfg->nodes, sizeof *m->node);
    m->stat = calloc(cfg->nodes, sizeof *m->stat);
    if (!m->node || !m->stat) {
        mem_free(m);
        return err_set(e, -QOSIM_ENOMEM, "memory: cannot allocate %u nodes", cfg->nodes);
    }
    size_t nch = 0;
    for (unsigned i = 0; i < cfg->nodes; i++) {
        struct mem_node_cfg c = {cfg->channels, cfg->peak, cfg->latency, i};
        if (cfg->node)
            c = cfg->node[i];
        char what[32] = "";
        if (cfg->node)
            snprintf(what, sizeof what, "node %u: ", i);
        int rc = node_init(&m->node[i], &c, cfg->line, what, e);
        if (!rc && c.home >= cfg->nodes)
            rc = err_set(e, -QOSIM_EINVAL, "memory: node %u's home %u is no node", i, c.home);
        if (rc) {
            mem_free(m);
            return rc;
        }
        nch += c.channels;
    }
    m->ch = calloc(nch, sizeof *m->ch);
    if (!m->ch) {
        mem_free(m);
        return err_set(e, -QOSIM_ENOMEM, "memory: cannot allocate %u nodes' %zu channels",
                       cfg->nodes, nch);
    }
    for (unsigned i = 0, k = 0; i < cfg->nodes; k += m->node[i++].channels)
        m->node[i].ch = &m->ch[k];
    m->cfg = *cfg;
    m->cfg.node = NULL;
    return 0;
}

void mem_free(struct mem *m)
{
    free(m->ch);
    free(m->node);
    free(m->stat);
    m->ch = NULL;
    m->node = NULL;
    m->stat = NULL;
}

/* The bucket after b on channel c; a backlog past the horizon drops the
 * oldest bucket kept (whose place in the ring the new one takes). */
static uint64_t chan_next(struct mem_chan *c, uint64_t b)
{
    if (++b >= c->lo + MEM_BUCKETS) {
        c->used[c->lo % MEM_BUCKETS] = 0;
        c->prio[c->lo++ % MEM_BUCKETS] = 0;
    }
    return b;
}

/* Books a line on block's channel at now; returns the wait in 1/256 tick.
 * Slots of a bucket are spaced one gap apart from its start; a slot already
 * in the past when the request arrives costs no wait (capacity unused
 * earlier in the bucket), so a bucket never carries more than MEM_SLOTS
 * lines and the long-run rate is exactly the peak. A line served first
 * (prio) takes the first bucket that has fewer than MEM_SLOTS such lines,
 * at the slot after them; if the bucket was full, the last of its other
 * lines moves on to the next bucket with a free slot. That line's requester
 * was told its wait already; the lines booked after it find the next bucket
 * fuller and wait the slot it lost instead (project choice: a timeline
 * cannot re-time an answered request, and this way the capacity the
 * displaced lines get is exactly what the reserved ones left). */
static uint64_t mem_book(struct mem *m, unsigned node, uint64_t block, uint64_t now, int prio)
{
    const struct mem_node *n = &m->node[node];
    struct mem_chan *c = &n->ch[block % n->channels];
    const uint64_t span = n->gap * MEM_SLOTS;
    uint64_t at = now > UINT64_MAX / MEM_FRAC / 2 ? UINT64_MAX / 2 : now * MEM_FRAC;
    uint64_t b = at / span;
    if (b >= c->lo + MEM_BUCKETS) { /* the timeline moves on: forget the oldest buckets */
        uint64_t lo = b - MEM_BUCKETS + 1;
        for (uint64_t k = c->lo; k < lo && k < c->lo + MEM_BUCKETS; k++) {
            c->used[k % MEM_BUCKETS] = 0;
            c->prio[k % MEM_BUCKETS] = 0;
        }
        c->lo = lo;
    }
    if (b < c->lo) /* older than the timeline remembers: its oldest bucket */
        b = c->lo;
    uint64_t slot;
    if (prio) {
        while (c->prio[b % MEM_BUCKETS] >= MEM_SLOTS)
            b = chan_next(c, b);
        slot = b * span + c->prio[b % MEM_BUCKETS]++ * n->gap;
        uint64_t d = b;
        while (c->used[d % MEM_BUCKETS] >= MEM_SLOTS) /* the line displaced, if any */
            d = chan_next(c, d);
        c->used[d % MEM_BUCKETS]++;
    } else {
        while (c->used[b % MEM_BUCKETS] >= MEM_SLOTS)
            b = chan_next(c, b);
        slot = b * span + c->used[b % MEM_BUCKETS]++ * n->gap;
    }
    return slot > at ? slot - at : 0;
}

uint64_t mem_read_prio(struct mem *m, unsigned from, unsigned node, uint64_t block, uint64_t now,
                       int prio)
{
    if (node >= m->cfg.nodes) /* no such node: nothing to book */
        return m->cfg.latency + (from != node ? m->cfg.remote : 0);
    const struct mem_node *n = &m->node[node];
    uint64_t lat = n->latency + (from != n->home ? m->cfg.remote : 0);
    uint64_t q = mem_book(m, node, block, now, prio), wait = q / MEM_FRAC + (q % MEM_FRAC != 0);
    struct mem_node_stat *st = &m->stat[node];
    st->read_bytes += m->cfg.line;
    st->queued += wait;
    if (prio) {
        st->prio_bytes += m->cfg.line;
        st->prio_queued += wait;
    }
    return lat + wait;
}

uint64_t mem_read(struct mem *m, unsigned from, unsigned node, uint64_t block, uint64_t now)
{
    return mem_read_prio(m, from, node, block, now, 0);
}

uint64_t mem_write(struct mem *m, unsigned node, uint64_t block, uint64_t now)
{
    if (node >= m->cfg.nodes)
        return 0;
    uint64_t q = mem_book(m, node, block, now, 0);
    m->stat[node].write_bytes += m->cfg.line;
    return q / MEM_FRAC + (q % MEM_FRAC != 0);
}
