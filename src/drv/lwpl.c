#include "lwpl.h"

#include "hw/lwp.h"

#include <string.h>

static const char *const ev_name[LWP_NEV] = {"?", "instructions retired", "branches retired",
                                             "DCache misses"};

void lwpl_caps(const struct lwp_procif *r, struct lwpl_caps *c)
{
    uint32_t o[4];
    memset(c, 0, sizeof *c);
    r->cpuid(r->ctx, 0x80000000u, 0, o);
    if (o[0] < LWP_CPUID_LEAF) /* the leaf is not there */
        return;
    r->cpuid(r->ctx, LWP_CPUID_EXT, 0, o);
    if (!HW_FGET(o[2], CPUID_80000001_ECX, LWP))
        return;
    c->present = 1;
    r->cpuid(r->ctx, LWP_CPUID_LEAF, 0, o);
    c->enabled = o[0];
    c->avail = o[3];
    c->cb_size = (unsigned)HW_FGET(o[1], LWP_EBX, LWPCBSize); /* bytes */
    c->event_size = (unsigned)HW_FGET(o[1], LWP_EBX, LWPEventSize);
    c->max_events = (unsigned)HW_FGET(o[1], LWP_EBX, LWPMaxEvents);
    c->version = (unsigned)HW_FGET(o[1], LWP_EBX, LWPVersion);
    c->cache_max = (unsigned)HW_FGET(o[2], LWP_ECX, LWPCacheMax);
    c->data_address = (int)HW_FGET(o[2], LWP_ECX, LWPDataAddress);
    c->cache_levels = (int)HW_FGET(o[2], LWP_ECX, LWPCacheLevels);
    c->cache_latency = (int)HW_FGET(o[2], LWP_ECX, LWPCacheLatency);
    c->min_buffer = (unsigned)HW_FGET(o[2], LWP_ECX, LwpMinBufferSize);
}

uint32_t lwpl_min_buffer(const struct lwpl_caps *c)
{
    uint32_t min = c->min_buffer * LWP_MIN_BUFFER_UNIT * LWPL_RECORD;
    return min > 2 * LWPL_RECORD ? min : 2 * LWPL_RECORD;
}

static int rd32(struct lwpl *l, uint64_t off, uint32_t *v, struct err *e)
{
    if (l->r.read(l->r.ctx, l->cb + off, v, 4))
        return err_set(e, -QOSIM_EIO, "LWPCB at 0x%llx: cannot read offset %llu",
                       (unsigned long long)l->cb, (unsigned long long)off);
    return 0;
}

static int wr32(struct lwpl *l, uint64_t off, uint32_t v, struct err *e)
{
    if (l->r.write(l->r.ctx, l->cb + off, &v, 4))
        return err_set(e, -QOSIM_EIO, "LWPCB at 0x%llx: cannot write offset %llu",
                       (unsigned long long)l->cb, (unsigned long long)off);
    return 0;
}

/* Each event must be one the CPU offers, the OS enabled and the LWPCB has
 * room for (Table 2; 5.3: an event LWPMSR0 does not allow is not counted). */
static int check(const struct lwpl_caps *k, const struct lwpl_cfg *c, struct err *e)
{
    if (!k->present)
        return err_set(e, -QOSIM_EUNSUP, "this CPU has no LWP (CPUID 0x80000001 ECX[15] is 0)");
    if (!(k->enabled & 1))
        return err_set(e, -QOSIM_EUNSUP, "the OS has not enabled LWP (CPUID 0x8000001C EAX[0])");
    if (k->event_size != LWPL_RECORD || k->version < 1)
        return err_set(e, -QOSIM_EUNSUP,
                       "LWP version %u with %u-byte records: this library "
                       "reads version 1's 32-byte records",
                       k->version, k->event_size);
    if (!c->nev || c->nev > k->max_events)
        return err_set(e, -QOSIM_EINVAL, "%u events: this CPU counts 1 to %u at once", c->nev,
                       k->max_events);
    for (unsigned i = 0; i < c->nev; i++) {
        unsigned id = c->ev[i].id;
        if (id < 1 || id >= LWP_NEV)
            return err_set(e, -QOSIM_EINVAL, "EventId %u: version 1 has events 1 to 3", id);
        if (!(k->avail >> (id + 1) & 1))
            return err_set(e, -QOSIM_EUNSUP,
                           "this CPU does not offer %s (CPUID 0x8000001C "
                           "EDX[%u])",
                           ev_name[id], id + 1);
        if (!(k->enabled >> id & 1))
            return err_set(e, -QOSIM_EUNSUP, "the OS has not enabled %s (LWPMSR0[%u])", ev_name[id],
                           id);
        if (!c->ev[i].interval || c->ev[i].interval > HW_FMASK(LWPCB_EVENT, EventInterval))
            return err_set(e, -QOSIM_EINVAL, "%s: interval %u is not 1 to %llu", ev_name[id],
                           c->ev[i].interval,
                           (unsigned long long)HW_FMASK(LWPCB_EVENT, EventInterval));
    }
    if (c->minlat && !k->cache_latency)
        return err_set(e, -QOSIM_EUNSUP, "this CPU cannot filter DCache misses by latency");
    if (c->clf && !k->cache_levels)
        return err_set(e, -QOSIM_EUNSUP, "this CPU cannot filter DCache misses by source");
    if (c->minlat > 255 || c->random > 15 || c->levels > 15)
        return err_set(e, -QOSIM_EINVAL,
                       "MinLatency (0-255), Random (0-15) or the levels "
                       "(4 bits) out of range");
    if (c->buffer / LWPL_RECORD < 2 || c->buffer > HW_FMASK(LWPCB_BUFSZ, BufferSize))
        return err_set(e, -QOSIM_EINVAL,
                       "a ring of %u bytes: at least two records, at most "
                       "%llu bytes",
                       c->buffer, (unsigned long long)HW_FMASK(LWPCB_BUFSZ, BufferSize));
    /* The smallest ring CPUID reports: below it LLWPCB would leave LWP off. */
    if (c->buffer / LWPL_RECORD * LWPL_RECORD < lwpl_min_buffer(k))
        return err_set(e, -QOSIM_EINVAL,
                       "a ring of %u bytes: this CPU takes at least %u records (%u bytes; "
                       "CPUID 0x8000001C ECX[23:16] LwpMinBufferSize %u x 32)",
                       c->buffer, lwpl_min_buffer(k) / LWPL_RECORD, lwpl_min_buffer(k),
                       k->min_buffer);
    if (c->threshold >= c->buffer / LWPL_RECORD * LWPL_RECORD)
        return err_set(e, -QOSIM_EINVAL, "threshold %u: must be below the ring's %u bytes",
                       c->threshold, c->buffer / LWPL_RECORD * LWPL_RECORD);
    return 0;
}

/* The LWPCB as Table 4 lays it out, in the process's memory. */
static int build(struct lwpl *l, struct err *e)
{
    const struct lwpl_cfg *c = &l->cfg;
    uint8_t cb[256];
    memset(cb, 0, sizeof cb);
    uint32_t bs = (uint32_t)HW_FSET(HW_FSET(0, LWPCB_BUFSZ, BufferSize, l->size), LWPCB_BUFSZ,
                                    Random, c->random);
    uint32_t f = (uint32_t)HW_FSET(0, LWPCB_FILTERS, MinLatency, c->minlat);
    f = (uint32_t)HW_FSET(f, LWPCB_FILTERS, NDB, c->ndb != 0);
    f = (uint32_t)HW_FSET(f, LWPCB_FILTERS, CLF, c->clf != 0);
    f |= (uint32_t)(c->clf ? c->levels : 0) << 28; /* NBC, RDC, RAM, OTH: bits 28-31 */
    uint32_t th = c->threshold / LWPL_RECORD * LWPL_RECORD;
    memcpy(cb + LWPCB_BUFFER_SIZE, &bs, 4);
    memcpy(cb + LWPCB_BUFFER_BASE, &l->buf, 8);
    memcpy(cb + LWPCB_THRESHOLD, &th, 4);
    memcpy(cb + LWPCB_FILTERS, &f, 4);
    for (unsigned i = 0; i < c->nev; i++) {
        uint32_t ev = (uint32_t)HW_FSET(HW_FSET(0, LWPCB_EVENT, EventInterval, c->ev[i].interval),
                                        LWPCB_EVENT, EventId, c->ev[i].id);
        uint32_t ctr = c->ev[i].interval; /* the starting count (5.4) */
        memcpy(cb + LWPCB_EVENT(i), &ev, 4);
        memcpy(cb + LWPCB_COUNTER(i), &ctr, 4);
    }
    if (l->r.write(l->r.ctx, l->cb, cb, l->caps.cb_size))
        return err_set(e, -QOSIM_EIO, "cannot write the LWPCB at 0x%llx",
                       (unsigned long long)l->cb);
    return 0;
}

int lwpl_open(struct lwpl *l, const struct lwp_procif *r, const struct lwpl_cfg *c, struct err *e)
{
    memset(l, 0, sizeof *l);
    l->r = *r;
    l->cfg = *c;
    lwpl_caps(r, &l->caps);
    int rc = check(&l->caps, c, e);
    if (rc)
        return rc;
    if (l->caps.cb_size > 256 || l->caps.cb_size < LWPCB_SIZE(c->nev))
        return err_set(e, -QOSIM_EUNSUP, "LWPCBSize %u: expected %u to 256 bytes", l->caps.cb_size,
                       LWPCB_SIZE(c->nev));
    l->size = c->buffer / LWPL_RECORD * LWPL_RECORD;
    /* The ring is aligned to its records (BufferBase's low 5 bits are 0). */
    l->cb = r->map(r->ctx, l->caps.cb_size);
    l->buf = r->map(r->ctx, l->size);
    if (!l->cb || !l->buf || (l->buf & (LWPL_RECORD - 1)))
        return err_set(e, -QOSIM_ENOMEM, "cannot map the LWPCB and a %u-byte ring", l->size);
    if ((rc = build(l, e)))
        return rc;
    enum hw_fault f = r->llwpcb(r->ctx, l->cb);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "LLWPCB 0x%llx: %s", (unsigned long long)l->cb,
                       hw_fault_name(f));
    /* Flags tells what the hardware took on (Figure 6). */
    if ((rc = rd32(l, LWPCB_FLAGS, &l->flags, e)))
        return rc;
    if (!HW_FGET(l->flags, LWPCB_FLAGS, EN))
        return err_set(e, -QOSIM_EUNSUP, "LLWPCB left LWP off (Flags 0x%x)", l->flags);
    for (unsigned i = 0; i < c->nev; i++)
        if (!(l->flags >> c->ev[i].id & 1))
            return err_set(e, -QOSIM_EUNSUP, "LLWPCB did not enable %s (Flags 0x%x)",
                           ev_name[c->ev[i].id], l->flags);
    return 0;
}

long lwpl_drain(struct lwpl *l, int flush, lwpl_fn fn, void *ctx, struct err *e)
{
    uint64_t addr;
    if (flush) {
        enum hw_fault f = l->r.slwpcb(l->r.ctx, &addr);
        if (f != HW_OK)
            return err_set(e, -QOSIM_EIO, "SLWPCB: %s", hw_fault_name(f));
    }
    uint32_t head, tail;
    int rc = rd32(l, LWPCB_BUFFER_HEAD_OFFSET, &head, e);
    if (!rc)
        rc = rd32(l, LWPCB_BUFFER_TAIL_OFFSET, &tail, e);
    if (rc)
        return rc;
    if (head >= l->size || tail >= l->size || head % LWPL_RECORD || tail % LWPL_RECORD)
        return err_set(e, -QOSIM_EIO, "ring offsets head %u, tail %u do not fit a %u-byte ring",
                       head, tail, l->size);
    long n = 0;
    while (tail != head) {
        uint8_t rec[LWPL_RECORD];
        if (l->r.read(l->r.ctx, l->buf + tail, rec, LWPL_RECORD))
            return err_set(e, -QOSIM_EIO, "cannot read the ring at 0x%llx",
                           (unsigned long long)(l->buf + tail));
        if (fn)
            fn(ctx, rec);
        tail = (tail + LWPL_RECORD) % l->size;
        n++;
    }
    /* Only now is the space free for the hardware (5.5.3 rereads the tail). */
    if ((rc = wr32(l, LWPCB_BUFFER_TAIL_OFFSET, tail, e)))
        return rc;
    l->drained += (uint64_t)n;
    return n;
}

int lwpl_missed(struct lwpl *l, uint64_t *n, struct err *e)
{
    if (l->r.read(l->r.ctx, l->cb + LWPCB_MISSED_EVENTS, n, 8))
        return err_set(e, -QOSIM_EIO, "cannot read MissedEvents");
    return 0;
}

int lwpl_close(struct lwpl *l, lwpl_fn fn, void *ctx, struct err *e)
{
    long n = lwpl_drain(l, 1, fn, ctx, e);
    if (n < 0)
        return (int)n;
    enum hw_fault f = l->r.llwpcb(l->r.ctx, 0);
    if (f != HW_OK)
        return err_set(e, -QOSIM_EIO, "LLWPCB 0: %s", hw_fault_name(f));
    return 0;
}
