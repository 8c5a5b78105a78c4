/* Hardware prefetchers (pf.h): one ops table per kind, registered in
 * pf_table. Each sees the events of its level and appends the lines it
 * wants; the machine issues them. */
#include "pf.h"

#include <stdlib.h>
#include <string.h>

const char *const pf_kind_name[PF_NKIND] = {"l2_stream", "l2_adjacent", "l1_next_line",
                                            "l1_ip_stride"};

struct pf_ops {
    enum pf_kind kind;
    unsigned level; /* 1: trained by L1D accesses; 2: by L2 lookups */
    size_t size;    /* state bytes, zeroed at init */
    unsigned (*train)(void *st, const struct pf_params *k, unsigned lb, const struct pf_event *ev,
                      struct pf_req *out, unsigned room);
};

/* ---- L2 streamer ---- */

/* Intel: "detects and maintains up to 32 streams of data accesses"; here 32
 * entries, one per 4 KiB page, direct-mapped by page number (project
 * choice: a lookup costs one probe; two active pages that collide evict
 * each other), its direction the last one seen (project choice: Intel keeps
 * a forward and a backward stream per page; one is what a single-direction
 * scan needs). */
#define STREAMS 32
struct stream {
    uint64_t page;
    int last, ahead; /* line offsets in the page: last request, furthest prefetched */
    int dir;         /* +1, -1, 0: not yet known */
    unsigned conf;   /* steps seen in dir */
    int valid;
};
struct streamer {
    struct stream s[STREAMS];
};

/* A stream is detected once two successive requests step the same way
 * (project choice: Intel says only "when a forward or backward stream of
 * requests is detected"). Prefetches never leave the page (Intel:
 * "prefetched cache lines must be in the same 4K page"). Lines further
 * than l2_distance ahead are asked into L3 only; the machine moves the
 * others there too while `busy` requests are outstanding (pf_l2). */
static unsigned stream_train(void *st, const struct pf_params *k, unsigned lb,
                             const struct pf_event *ev, struct pf_req *out, unsigned room)
{
    struct streamer *sr = st;
    unsigned shift = lb < 12 ? 12 - lb : 0;
    int lpp = 1 << shift;
    uint64_t page = ev->block >> shift;
    int off = (int)(ev->block & (uint64_t)(lpp - 1));
    struct stream *e = &sr->s[(page ^ page >> 5) & (STREAMS - 1)];
    if (!e->valid || e->page != page) {
        *e = (struct stream){.page = page, .last = off, .ahead = off, .valid = 1};
        return 0;
    }
    int d = off - e->last;
    if (d == 0)
        return 0;
    int nd = d > 0 ? 1 : -1;
    if (nd == e->dir) {
        if (e->conf < 4)
            e->conf++;
    } else {
        e->dir = nd;
        e->conf = 1;
        e->ahead = off;
    }
    e->last = off;
    if (e->conf < 2)
        return 0;
    if ((e->ahead - off) * e->dir < 0)
        e->ahead = off;
    unsigned n = 0;
    while (n < k->degree && n < room) {
        int next = e->ahead + e->dir;
        int dist = (next - off) * e->dir;
        if (next < 0 || next >= lpp || dist > (int)k->distance)
            break;
        out[n++] = (struct pf_req){.block = (page << shift) | (uint64_t)next,
                                   .into = dist > (int)k->l2_distance ? PF_INTO_L3 : PF_INTO_L2,
                                   .kind = PF_L2_STREAM};
        e->ahead = next;
    }
    return n;
}

/* ---- L2 adjacent line (spatial) ---- */

/* Intel: it "strives to complete every cache line fetched to the L2 cache
 * with the pair line that completes it to a 128-byte aligned chunk": on an
 * L2 miss, the other lines of the chunk, into L2. */
static unsigned adj_train(void *st, const struct pf_params *k, unsigned lb,
                          const struct pf_event *ev, struct pf_req *out, unsigned room)
{
    (void)st;
    (void)k;
    if (!ev->miss || lb >= 7)
        return 0;
    uint64_t per = 1ull << (7 - lb), base = ev->block & ~(per - 1);
    unsigned n = 0;
    for (uint64_t b = base; b < base + per && n < room; b++)
        if (b != ev->block)
            out[n++] = (struct pf_req){.block = b, .into = PF_INTO_L2, .kind = PF_L2_ADJ};
    return n;
}

/* ---- L1 DCU next line ---- */

/* Intel: "triggered by an ascending access to very recently loaded data":
 * a load into the line after the one the previous load touched fetches the
 * `degree` lines after it into L1D, within the page. */
struct dcu {
    uint64_t last;
};

static unsigned dcu_train(void *st, const struct pf_params *k, unsigned lb,
                          const struct pf_event *ev, struct pf_req *out, unsigned room)
{
    struct dcu *d = st;
    if (!ev->load)
        return 0;
    uint64_t prev = d->last;
    d->last = ev->block;
    if (ev->block != prev + 1)
        return 0;
    unsigned shift = lb < 12 ? 12 - lb : 0, n = 0;
    for (uint64_t b = ev->block + 1; n < k->degree && n < room; b++) {
        if (b >> shift != ev->block >> shift)
            break;
        out[n++] = (struct pf_req){.block = b, .into = PF_INTO_L1, .kind = PF_L1_NEXT};
    }
    return n;
}

/* ---- L1 DCU IP stride ---- */

/* Intel: it "keeps track of individual load instructions. If a load
 * instruction is detected to have a regular stride, then a prefetch is sent
 * to the next address which is the sum of the current address and the
 * stride ... can detect strides of up to 2K bytes." A stride is regular once
 * seen twice in a row (project choice); 64 instructions tracked,
 * direct-mapped by address (project choice: Intel gives no size). */
#define IPS 64
struct ipent {
    uint64_t ip, last;
    int64_t stride;
    unsigned conf;
};
struct ipstride {
    struct ipent e[IPS];
};

static unsigned ip_train(void *st, const struct pf_params *k, unsigned lb,
                         const struct pf_event *ev, struct pf_req *out, unsigned room)
{
    struct ipstride *t = st;
    if (!ev->load)
        return 0;
    struct ipent *e = &t->e[(ev->ip ^ ev->ip >> 6) & (IPS - 1)];
    if (e->ip != ev->ip) {
        *e = (struct ipent){.ip = ev->ip, .last = ev->addr};
        return 0;
    }
    int64_t s = (int64_t)(ev->addr - e->last);
    e->last = ev->addr;
    if (s == 0)
        return 0;
    if (s != e->stride) {
        e->stride = s;
        e->conf = 0;
        return 0;
    }
    if (e->conf < 3)
        e->conf++;
    if (s > 2048 || s < -2048)
        return 0;
    unsigned shift = lb < 12 ? 12 - lb : 0, n = 0;
    uint64_t prev = ev->block;
    for (unsigned i = 1; i <= k->degree && n < room; i++) {
        uint64_t b = (ev->addr + (uint64_t)(s * (int64_t)i)) >> lb;
        if (b >> shift != ev->block >> shift)
            break;
        if (b != prev)
            out[n++] = (struct pf_req){.block = b, .into = PF_INTO_L1, .kind = PF_L1_IP};
        prev = b;
    }
    return n;
}

static const struct pf_ops pf_table[PF_NKIND] = {
    [PF_L2_STREAM] = {PF_L2_STREAM, 2, sizeof(struct streamer), stream_train},
    [PF_L2_ADJ] = {PF_L2_ADJ, 2, 0, adj_train},
    [PF_L1_NEXT] = {PF_L1_NEXT, 1, sizeof(struct dcu), dcu_train},
    [PF_L1_IP] = {PF_L1_IP, 1, sizeof(struct ipstride), ip_train},
};

int pf_init(struct pf *f, const struct pf_cfg *cfg, unsigned line_bits, struct err *e)
{
    memset(f, 0, sizeof *f);
    f->cfg = cfg;
    f->line_bits = line_bits;
    for (unsigned k = 0; k < PF_NKIND; k++) {
        if (!(cfg->present >> k & 1))
            continue;
        if (!pf_table[k].size)
            continue;
        f->st[k] = calloc(1, pf_table[k].size);
        if (!f->st[k]) {
            pf_free(f);
            return err_set(e, -QOSIM_ENOMEM, "cannot allocate prefetcher %s", pf_kind_name[k]);
        }
    }
    return 0;
}

void pf_free(struct pf *f)
{
    for (unsigned k = 0; k < PF_NKIND; k++) {
        free(f->st[k]);
        f->st[k] = NULL;
    }
}

/* The enabled kinds of one level, in the table's order. Inlined with the
 * level a constant, so the loop unrolls and each call is direct: this runs
 * on every L1D access and L2 lookup. `on` holds only kinds the part has. */
static inline __attribute__((always_inline)) unsigned
train(struct pf *f, unsigned on, unsigned level, const struct pf_event *ev, struct pf_req *out)
{
    unsigned n = 0;
#pragma GCC unroll 4
    for (unsigned k = 0; k < PF_NKIND; k++)
        if (pf_table[k].level == level && (on >> k & 1))
            n += pf_table[k].train(f->st[k], &f->cfg->k[k], f->line_bits, ev, out + n,
                                   PF_MAX_OUT - n);
    return n;
}

unsigned pf_l1(struct pf *f, unsigned on, const struct pf_event *ev, struct pf_req *out)
{
    return train(f, on, 1, ev, out);
}

unsigned pf_l2(struct pf *f, unsigned on, const struct pf_event *ev, struct pf_req *out,
               unsigned *inflight)
{
    unsigned n = train(f, on, 2, ev, out);
    /* The streamer's L3-only rule for many outstanding requests, counted
     * only when it has asked for something (the count is passed on for the
     * queue's bound). */
    *inflight = PF_UNCOUNTED;
    for (unsigned i = 0; i < n; i++)
        if (out[i].kind == PF_L2_STREAM && out[i].into == PF_INTO_L2) {
            if (*inflight == PF_UNCOUNTED)
                *inflight = pf_outstanding(&f->l2q, ev->now);
            if (*inflight >= f->cfg->k[PF_L2_STREAM].busy)
                out[i].into = PF_INTO_L3;
        }
    return n;
}

void pf_pend_set(struct pf *f, uint64_t block, uint64_t ready, uint8_t into)
{
    unsigned i = (unsigned)(block & (PF_PEND - 1));
    f->pend[i].block = block;
    f->pend[i].ready = ready;
    f->pend[i].into = (uint8_t)(into + 1);
}

int pf_recent(const struct pf *f, uint64_t block, uint8_t into)
{
    unsigned i = (unsigned)(block & (PF_PEND - 1));
    return f->pend[i].into && f->pend[i].block == block && f->pend[i].into <= into + 1;
}

uint64_t pf_pend_take(struct pf *f, uint64_t block)
{
    unsigned i = (unsigned)(block & (PF_PEND - 1));
    if (f->pend[i].block != block || !f->pend[i].ready)
        return 0;
    uint64_t r = f->pend[i].ready;
    f->pend[i].ready = 0;
    return r;
}

void pf_flight_add(struct pf_queue *q, uint64_t ready)
{
    q->done[q->n++ % PF_FLIGHT] = ready;
}

/* Hot path (a count per training event that issues): unrolled, a compare
 * and an add with carry per request kept, no branch. */
unsigned pf_outstanding(const struct pf_queue *q, uint64_t now)
{
    unsigned n = 0;
#pragma GCC unroll 32
    for (unsigned i = 0; i < PF_FLIGHT; i++)
        n += q->done[i] > now;
    return n;
}
