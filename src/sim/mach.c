#include "mach.h"

#include "util/bits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OWNER_NONE  0xffffu
#define OWNER_SLOTS 131072u /* hash slots: twice the owners a uint16_t can name */

static void *zalloc(size_t n, size_t size, int *bad)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        *bad = 1;
    return p;
}

/* Whether the occupancy estimator samples set s, one set in `period`,
 * chosen by a hash of the index (project choice). Not by its low bits: they
 * are address bits, and the adjacent-line prefetcher gives the two lines of
 * a 128-byte chunk different lifetimes, so a task's lines fall unevenly on
 * even and odd sets (docs/mechanisms.md, "Monitoring: occupancy"). Set 0
 * is always sampled, so an estimate never divides by zero sampled sets. */
static inline int samp_set(uint32_t period, uint32_t s)
{
    return ((s * 0x9e3779b1u) >> 8) % period == 0;
}

static int cache_setup(struct mach *m, enum plat_level l, struct err *e)
{
    const struct plat_cache *pc = &m->p.cache[l];
    unsigned n = plat_cache_count(&m->p, l);
    int bad = 0;
    m->ncache[l] = n;
    m->cache[l] = zalloc(n, sizeof *m->cache[l], &bad);
    if (bad)
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate %s caches", plat_level_name[l]);
    for (unsigned i = 0; i < n; i++) {
        struct mach_cache *x = &m->cache[l][i];
        int rc = cache_init(&x->c, plat_level_name[l], &pc->geom, pc->repl, e);
        if (rc)
            return rc;
        x->level = l;
        x->inst = i;
        x->victim = pc->victim;
        x->lat = (uint64_t)pc->latency * MACH_TICK;
        x->nclass = pc->alloc.classes ? pc->alloc.classes : 1;
        x->ways_per_bit = pc->alloc.cbm_len ? pc->geom.assoc / pc->alloc.cbm_len : 1;
        x->mask = zalloc(m->nconf * x->nclass * 2, sizeof *x->mask, &bad);
        for (unsigned k = 0; !bad && k < m->nconf * x->nclass * 2; k++)
            x->mask[k] = x->c.all_ways; /* reset: every class may fill every way */
        x->acct = pc->monitored || l == m->llc;
        if (x->acct) {
            x->occ_tag = zalloc(m->ntags * m->nsub, sizeof *x->occ_tag, &bad);
            x->occ_samp = zalloc(m->ntags * m->nsub, sizeof *x->occ_samp, &bad);
            x->occ_task = zalloc(m->ntask + 1, sizeof *x->occ_task, &bad);
            if (m->nsub > 1) { /* CBQRI capacity counters saturate at 0 */
                x->occ_low = zalloc(m->ntags * mach_nlow(m), sizeof *x->occ_low, &bad);
                x->samp_low = zalloc(m->ntags * mach_nlow(m), sizeof *x->samp_low, &bad);
            }
        }
        double per = m->p.mon.sample > 0 ? round(1 / m->p.mon.sample) : 1;
        x->samp_period = per < 1 ? 1 : per > x->c.sets ? x->c.sets : (uint32_t)per;
        x->nsampled = 0;
        for (uint32_t k = 0; k < x->c.sets; k++)
            x->nsampled += samp_set(x->samp_period, k);
        if (bad)
            return err_set(e, -QOSIM_ENOMEM, "cannot allocate %s state", plat_level_name[l]);
    }
    return 0;
}

/* An inclusive cache must remove what it evicts from the caches above it
 * that it serves. */
static int inclusion_setup(struct mach *m, enum plat_level l, struct err *e)
{
    if (!m->p.cache[l].present || m->p.cache[l].incl != HIER_INCLUSIVE)
        return 0;
    for (unsigned i = 0; i < m->ncache[l]; i++) {
        struct mach_cache *x = &m->cache[l][i];
        x->above = calloc((size_t)m->ncpu * 3, sizeof *x->above);
        if (!x->above)
            return err_set(e, -QOSIM_ENOMEM, "cannot allocate inclusion lists");
        for (unsigned c = 0; c < m->ncpu; c++) {
            struct mach_cpu *p = &m->cpu[c];
            struct mach_cache *up[3] = {p->l1i, p->l1d, l == PLAT_L3 ? p->l2 : NULL};
            if ((l == PLAT_L3 ? p->l3 : p->l2) != x)
                continue;
            for (int k = 0; k < 3; k++) {
                int dup = !up[k];
                for (unsigned j = 0; j < x->nabove && !dup; j++)
                    dup = x->above[j] == up[k];
                if (!dup)
                    x->above[x->nabove++] = up[k];
            }
        }
    }
    return 0;
}

/* A limiter's accounting window in ticks, at least one. */
static uint64_t window_ticks(const struct mach *m, const struct plat_bw *b)
{
    uint64_t w = (uint64_t)llround(b->window * m->ticks_per_sec);
    return w ? w : 1;
}

static int bw_setup(struct mach *m, struct err *e)
{
    const struct plat_bw *b = &m->p.bw;
    if (b->kind == BW_NONE)
        return 0;
    /* With a C bit, each (world, class, AT) has a limiter class (CBQRI 4.5). */
    unsigned per = m->nsub > 1 ? m->nconf * 2 : 1;
    struct bw_cfg cfg = {.kind = b->kind, .nclass = b->classes * per, .nport = 1};
    cfg.window = window_ticks(m, b);
    if (b->kind == BW_DELAY) {
        cfg.nthr = m->p.topo.threads; /* a throttle per thread: per_thread MBA */
        cfg.nport = m->p.topo.modules * m->p.topo.cores * cfg.nthr;
        cfg.link_rate = m->p.core.link / MACH_TICK;
    }
    /* ---- MBA request and spacing models (bw_delay.c): the profile's cycles as ticks ---- */
    double ticks[BW_DELAY_REQ_STEPS];
    if (b->kind == BW_DELAY && b->req_model != PLAT_MBA_LINK) {
        int request = b->req_model == PLAT_MBA_REQUEST;
        const double *cycles = request ? b->req_delay : b->req_spacing;
        for (unsigned i = 0; i < BW_DELAY_REQ_STEPS; i++)
            ticks[i] = cycles[i] * MACH_TICK;
        if (request)
            cfg.req_delay = ticks;
        else
            cfg.req_spacing = ticks;
    }
    cfg.capacity = m->p.mem.peak / m->ticks_per_sec;
    cfg.nblks = b->nblks;
    m->nbw = b->kind == BW_SHARE ? m->p.nnodes : m->p.ndomains;
    m->bw = calloc(m->nbw, sizeof *m->bw);
    m->bw_map = calloc((size_t)m->nconf * b->classes * 2, sizeof *m->bw_map);
    m->thr = calloc(m->p.ndomains, sizeof *m->thr);
    if (!m->bw || !m->bw_map || !m->thr)
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate bandwidth limiters");
    for (unsigned d = 0; d < m->p.ndomains; d++)
        m->thr[d] = b->per_thread ? MACH_THR_THREAD : MACH_THR_CORE_MAX;
    for (unsigned c = 0; c < m->nconf; c++)
        for (unsigned k = 0; k < b->classes; k++)
            for (unsigned t = 0; t < 2; t++)
                m->bw_map[(c * b->classes + k) * 2 + t] = (uint16_t)k;
    for (unsigned i = 0; i < m->nbw; i++) {
        int rc = bw_init(&m->bw[i], &cfg, e);
        if (rc) {
            m->nbw = i;
            return rc;
        }
    }
    return 0;
}

static uint64_t cbm_ways(const struct mach_cache *x, uint64_t cbm);

/* I/O agents: each L3's io ways at their reset value, and the caches above
 * it that a DMA write must invalidate (every L1 and L2 of the cores it
 * serves, whatever the inclusion). */
static int io_setup(struct mach *m, struct err *e)
{
    unsigned n = m->ncache[PLAT_L3];
    if (!n)
        return 0;
    m->io_ways = calloc(n, sizeof *m->io_ways);
    if (!m->io_ways)
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate the io ways");
    for (unsigned i = 0; i < n; i++) {
        struct mach_cache *x = &m->cache[PLAT_L3][i];
        m->io_ways[i] = cbm_ways(x, m->p.cache[PLAT_L3].io_ways);
        x->dom_up = calloc((size_t)m->ncpu * 3, sizeof *x->dom_up);
        if (!x->dom_up)
            return err_set(e, -QOSIM_ENOMEM, "cannot allocate the io lists");
        for (unsigned c = 0; c < m->ncpu; c++) {
            struct mach_cpu *p = &m->cpu[c];
            struct mach_cache *up[3] = {p->l1i, p->l1d, p->l2};
            for (int k = 0; k < 3 && p->l3 == x; k++) {
                int dup = 0;
                for (unsigned j = 0; j < x->ndom_up && !dup; j++)
                    dup = x->dom_up[j] == up[k];
                if (!dup)
                    x->dom_up[x->ndom_up++] = up[k];
            }
        }
    }
    return 0;
}

/* AMD SMBA: one rate limiter per L3 domain on what the domain reads from
 * all slow memory together (plat.c, load_sbw). */
static int sbw_setup(struct mach *m, struct err *e)
{
    const struct plat_bw *b = &m->p.sbw;
    if (b->kind != BW_RATE)
        return 0;
    struct bw_cfg cfg = {.kind = BW_RATE, .nclass = b->classes, .nport = 1};
    cfg.window = window_ticks(m, b);
    m->sbw = calloc(m->p.ndomains, sizeof *m->sbw);
    if (!m->sbw)
        return err_set(e, -QOSIM_ENOMEM, "cannot allocate slow memory bandwidth limiters");
    for (unsigned i = 0; i < m->p.ndomains; i++) {
        int rc = bw_init(&m->sbw[i], &cfg, e);
        if (rc)
            return rc;
        m->nsbw = i + 1;
    }
    return 0;
}

/* The class of a read of node's memory by a requester on cpu_node: DRAM or
 * slow memory, local or not (BMEC's bits; each CPU keeps them per node, rd_tr). */
static enum mach_traffic read_class(const struct mach *m, unsigned cpu_node, unsigned node)
{
    unsigned tr = mach_node_local(m, cpu_node, node) ? MACH_TR_RD_LOCAL : MACH_TR_RD_REMOTE;
    return (enum mach_traffic)(tr + m->node_slow[node] * (MACH_TR_SLOW_LOCAL - MACH_TR_RD_LOCAL));
}

/* Whether a read class is local memory, DRAM or slow. */
static inline int tr_local(unsigned tr)
{
    return tr == MACH_TR_RD_LOCAL || tr == MACH_TR_SLOW_LOCAL;
}

static int pf_setup(struct mach *m, struct err *e);

int mach_init(struct mach *m, const struct plat *p, unsigned ntask, struct err *e)
{
    memset(m, 0, sizeof *m);
    m->p = *p;
    if (ntask > MACH_MAX_TASKS)
        return err_set(e, -QOSIM_EINVAL, "%u tasks exceed qosim's limit of %d", ntask,
                       MACH_MAX_TASKS);
    m->ncpu = p->ncpus;
    m->ntask = ntask;
    m->ntags = p->mon.tags ? p->mon.tags : 1;
    /* CBQRI controllers tell requests apart by access type, and the 2023
     * draft's also by C bit (5.2.2; CBQRI 1.0 has no C bit). */
    int split = p->n_cbqri_cap + p->n_cbqri_bw > 0;
    m->nconf = split && p->cbqri_spec == PLAT_CBQRI_DRAFT ? 2 : 1;
    m->nsub = split ? m->nconf * 2 : 1;
    m->llc = p->cache[PLAT_L3].present ? PLAT_L3 : PLAT_L2;
    m->line = p->cache[PLAT_L1I].geom.line;
    m->line_bits = bits_log2(m->line);
    m->ticks_per_sec = p->core.freq * MACH_TICK;
    m->cpi_ticks = (uint64_t)llround(p->core.cpi * MACH_TICK);
    m->mlp_mul = (uint64_t)llround(65536 / p->core.mlp);
    m->ctr_mask = bits_mask(p->mon.width);
    int rc = 0, bad = 0;
    for (int l = 0; l < PLAT_NLEVEL && !rc; l++)
        if (p->cache[l].present)
            rc = cache_setup(m, (enum plat_level)l, e);
    m->cpu = zalloc(m->ncpu, sizeof *m->cpu, &bad);
    m->owners = zalloc(65536, sizeof *m->owners, &bad);
    m->owner_hash = zalloc(OWNER_SLOTS, sizeof *m->owner_hash, &bad);
    m->ts = zalloc(ntask + 1, sizeof *m->ts, &bad);
    m->tee = zalloc(ntask + 1, sizeof *m->tee, &bad);
    m->ntcls = p->bw.classes > 1 ? p->bw.classes : 1;
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        if (p->cache[l].present && p->cache[l].alloc.classes > m->ntcls)
            m->ntcls = p->cache[l].alloc.classes;
    m->bytes =
        zalloc((size_t)p->ndomains * m->ntags * m->nsub * MACH_NTRAFFIC, sizeof *m->bytes, &bad);
    m->bytes_base = zalloc((size_t)p->ndomains * m->ntags * MACH_NCTR, sizeof *m->bytes_base, &bad);
    m->cls_bytes =
        zalloc((size_t)p->ndomains * m->ntcls * MACH_NTRAFFIC, sizeof *m->cls_bytes, &bad);
    unsigned nmem = plat_mem_nodes(p); /* DRAM nodes, then slow ones */
    m->node_slow = zalloc(nmem, sizeof *m->node_slow, &bad);
    m->node_home = zalloc(nmem, sizeof *m->node_home, &bad);
    m->node_bytes = zalloc((size_t)nmem * m->ntags * m->nsub * 2, sizeof *m->node_bytes, &bad);
    struct mem_node_cfg *mn = zalloc(nmem, sizeof *mn, &bad);
    if (!rc && bad)
        rc = err_set(e, -QOSIM_ENOMEM, "cannot allocate the machine");
    if (rc) {
        free(mn);
        mach_free(m);
        return rc;
    }
    memset(m->owner_hash, 0xff, OWNER_SLOTS * sizeof *m->owner_hash);
    for (unsigned n = 0; n < nmem; n++) {
        int slow = n >= p->nnodes;
        m->node_slow[n] = (uint8_t)slow;
        m->node_home[n] = plat_node_home(p, n);
        const struct plat_mem *d = &p->mem;
        const struct plat_slow *sl = &p->slow;
        double peak = slow ? sl->peak : d->peak, lat = slow ? sl->latency : d->latency;
        mn[n] = (struct mem_node_cfg){.channels = slow ? sl->channels : d->channels,
                                      .peak = peak / m->ticks_per_sec,
                                      .latency = (uint64_t)llround(lat * m->ticks_per_sec),
                                      .home = m->node_home[n]};
    }
    for (unsigned c = 0; c < m->ncpu; c++) {
        struct mach_cpu *x = &m->cpu[c];
        struct plat_place pl;
        plat_place(p, c, &pl);
        x->id = c;
        x->wc = UINT64_MAX; /* no line being combined */
        x->node = pl.node;
        x->domain = pl.domain;
        x->port = pl.core % (p->topo.modules * p->topo.cores);
        for (unsigned n = 0; n < nmem; n++)
            x->rd_tr[n] = (uint8_t)read_class(m, x->node, n);
        x->l1i = &m->cache[PLAT_L1I][plat_cache_inst(p, PLAT_L1I, c)];
        x->l1d = &m->cache[PLAT_L1D][plat_cache_inst(p, PLAT_L1D, c)];
        x->l2 = &m->cache[PLAT_L2][plat_cache_inst(p, PLAT_L2, c)];
        x->l3 =
            p->cache[PLAT_L3].present ? &m->cache[PLAT_L3][plat_cache_inst(p, PLAT_L3, c)] : NULL;
        mach_set_assoc(m, c, -1, 0, 0);
    }
    struct mem_cfg mc = {.nodes = nmem,
                         .channels = p->mem.channels,
                         .peak = p->mem.peak / m->ticks_per_sec,
                         .latency = (uint64_t)llround(p->mem.latency * m->ticks_per_sec),
                         .remote = (uint64_t)llround(p->mem.remote * m->ticks_per_sec),
                         .line = m->line,
                         .node = p->nslow ? mn : NULL};
    if (!rc)
        rc = mem_init(&m->mem, &mc, e);
    free(mn);
    if (!rc)
        rc = inclusion_setup(m, PLAT_L2, e);
    if (!rc)
        rc = inclusion_setup(m, PLAT_L3, e);
    if (!rc)
        rc = bw_setup(m, e);
    if (!rc)
        rc = io_setup(m, e);
    if (!rc)
        rc = sbw_setup(m, e);
    if (!rc)
        rc = pf_setup(m, e); /* hardware prefetchers */
    if (rc)
        mach_free(m);
    return rc;
}

void mach_free(struct mach *m)
{
    for (int l = 0; l < PLAT_NLEVEL; l++) {
        for (unsigned i = 0; m->cache[l] && i < m->ncache[l]; i++) {
            struct mach_cache *x = &m->cache[l][i];
            cache_free(&x->c);
            free(x->mask);
            free(x->occ_tag);
            free(x->occ_samp);
            free(x->occ_low);
            free(x->samp_low);
            free(x->occ_task);
            free(x->above);
            free(x->cu);
            free(x->dom_up);
        }
        free(m->cache[l]);
        m->cache[l] = NULL;
    }
    for (unsigned i = 0; i < m->nbw; i++)
        bw_free(&m->bw[i]);
    free(m->bw);
    for (unsigned i = 0; i < m->nsbw; i++)
        bw_free(&m->sbw[i]);
    free(m->sbw);
    mem_free(&m->mem);
    for (unsigned c = 0; m->cpu && c < m->ncpu; c++) /* hardware prefetchers */
        if (m->cpu[c].pf) {
            pf_free(m->cpu[c].pf);
            free(m->cpu[c].pf);
        }
    free(m->cpu);
    free(m->bw_map);
    free(m->thr);
    free(m->owners);
    free(m->owner_hash);
    free(m->ts);
    free(m->tee);
    free(m->bytes);
    free(m->bytes_base);
    free(m->cls_bytes);
    free(m->node_slow);
    free(m->node_home);
    free(m->node_bytes);
    free(m->io_ways);
    memset(m, 0, sizeof *m);
}

/* ---- mechanisms ---- */

static struct mach_cache *inst_of(const struct mach *m, enum plat_level l, unsigned inst)
{
    if ((unsigned)l >= PLAT_NLEVEL || !m->cache[l] || inst >= m->ncache[l])
        return NULL;
    return &m->cache[l][inst];
}

int mach_set_mask_conf(struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                       unsigned cls, enum mach_type t, uint64_t ways)
{
    struct mach_cache *x = inst_of(m, l, inst);
    if (!x || conf >= m->nconf || cls >= x->nclass || (unsigned)t > MACH_CODE ||
        (ways & ~x->c.all_ways))
        return -QOSIM_EINVAL;
    x->mask[(conf * x->nclass + cls) * 2 + t] = ways;
    return 0;
}

uint64_t mach_get_mask_conf(const struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                            unsigned cls, enum mach_type t)
{
    struct mach_cache *x = inst_of(m, l, inst);
    if (!x || conf >= m->nconf || cls >= x->nclass || (unsigned)t > MACH_CODE)
        return 0;
    return x->mask[(conf * x->nclass + cls) * 2 + t];
}

int mach_set_mask(struct mach *m, enum plat_level l, unsigned inst, unsigned cls, enum mach_type t,
                  uint64_t ways)
{
    return mach_set_mask_conf(m, l, inst, 0, cls, t, ways);
}

uint64_t mach_get_mask(const struct mach *m, enum plat_level l, unsigned inst, unsigned cls,
                       enum mach_type t)
{
    return mach_get_mask_conf(m, l, inst, 0, cls, t);
}

static uint64_t cbm_ways(const struct mach_cache *x, uint64_t cbm)
{
    uint64_t ways = 0, w = x->ways_per_bit;
    for (unsigned i = 0; i * w < x->c.g.assoc && i < 64; i++)
        if ((cbm >> i) & 1)
            ways |= bits_mask((unsigned)w) << (i * w);
    return ways & x->c.all_ways;
}

uint64_t mach_cbm_ways(const struct mach *m, enum plat_level l, uint64_t cbm)
{
    struct mach_cache *x = inst_of(m, l, 0);
    return x ? cbm_ways(x, cbm) : 0;
}

/* The owner of requests by (task, tag, sub, class): interned at
 * association time, so the access path only copies a 16-bit index. */
static uint16_t owner_intern(struct mach *m, unsigned task, unsigned tag, unsigned sub,
                             unsigned cls)
{
    struct mach_owner k = {(uint16_t)task, (uint16_t)tag, (uint16_t)sub, (uint16_t)cls};
    uint64_t h = ((uint64_t)task << 40 | (uint64_t)tag << 24 | (uint64_t)sub << 16 | cls) *
                 0x9e3779b97f4a7c15ull;
    for (uint32_t i = (uint32_t)(h >> 47);; i = (i + 1) % OWNER_SLOTS) {
        uint16_t *o = &m->owner_hash[i];
        if (*o == OWNER_NONE) {
            if (m->nowners >= OWNER_NONE)
                return 0; /* table full: attribute to the first owner rather than fail */
            m->owners[m->nowners] = k;
            return *o = (uint16_t)m->nowners++;
        }
        if (!memcmp(&m->owners[*o], &k, sizeof k))
            return *o;
    }
}

static const uint64_t *class_masks(const struct mach_cache *x, unsigned conf, unsigned cls)
{
    /* A class a resource does not have gets that resource's class 0. */
    return x ? &x->mask[(conf * x->nclass + (cls < x->nclass ? cls : 0)) * 2] : NULL;
}

void mach_set_assoc(struct mach *m, unsigned cpu, int task, unsigned cls, unsigned tag)
{
    if (cpu >= m->ncpu)
        return;
    struct mach_cpu *p = &m->cpu[cpu];
    unsigned t = task < 0 || (unsigned)task >= m->ntask ? m->ntask : (unsigned)task;
    p->task = t == m->ntask ? -1 : (int)t;
    p->cls = cls;
    p->tag = tag < m->ntags ? tag : 0;
    p->ts = &m->ts[t];
    for (unsigned c = 0; c < 2; c++) {
        unsigned w = c < m->nconf ? c : 0; /* one world: C changes nothing */
        for (unsigned k = 0; k < 2; k++)
            p->own[c][k] =
                owner_intern(m, t, p->tag, m->nsub > 1 ? mach_sub(w, k) : 0, cls & 0xffff);
        p->m2[c] = class_masks(p->l2, w, cls);
        p->m3[c] = class_masks(p->l3, w, cls);
    }
    p->conf_lo = m->nconf > 1 ? m->tee[t].lo : 0;
    p->conf_len = m->nconf > 1 ? m->tee[t].len : 0;
}

void mach_set_tee(struct mach *m, unsigned task, uint64_t lo, uint64_t len)
{
    if (task < m->ntask)
        m->tee[task] = (struct mach_tee){lo, len};
}

void mach_set_task(struct mach *m, unsigned cpu, int task)
{
    if (cpu < m->ncpu)
        mach_set_assoc(m, cpu, task, m->cpu[cpu].cls, m->cpu[cpu].tag);
}

/* Sums a per-sub-tag array over the sub-tags of (tag, at, conf). */
static uint64_t sub_sum(const struct mach *m, const uint64_t *a, size_t stride, unsigned tag,
                        int at, unsigned conf)
{
    if (m->nsub == 1)
        return conf ? 0 : a[(size_t)tag * stride];
    uint64_t n = 0;
    for (unsigned t = 0; t < 2; t++)
        if (at == MACH_ANY || (unsigned)at == t)
            n += a[((size_t)tag * m->nsub + mach_sub(conf, t)) * stride];
    return n;
}

uint64_t mach_occupancy_sel(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag,
                            int at, unsigned conf, int est)
{
    struct mach_cache *x = inst_of(m, l, inst);
    if (!x || !x->acct || tag >= m->ntags || conf >= m->nconf)
        return 0;
    if (!est)
        return sub_sum(m, x->occ_tag, 1, tag, at, conf);
    uint64_t n = sub_sum(m, x->occ_samp, 1, tag, at, conf);
    return (n * x->c.sets + x->nsampled / 2) / x->nsampled;
}

/* Where a selection's low-water mark is: a sub-tag's, or a world's
 * both-types sum (after the nsub sub-tags of each tag). */
static size_t low_index(const struct mach *m, unsigned tag, int at, unsigned conf)
{
    return (size_t)tag * mach_nlow(m) +
           (at == MACH_ANY ? m->nsub + conf : mach_sub(conf, (unsigned)at));
}

uint64_t mach_occupancy_low(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag,
                            int at, unsigned conf, int est)
{
    struct mach_cache *x = inst_of(m, l, inst);
    if (!x || !x->occ_low || tag >= m->ntags || conf >= m->nconf)
        return 0;
    if (!est)
        return x->occ_low[low_index(m, tag, at, conf)];
    uint64_t n = x->samp_low[low_index(m, tag, at, conf)];
    return (n * x->c.sets + x->nsampled / 2) / x->nsampled;
}

void mach_occupancy_low_reset(struct mach *m, enum plat_level l, unsigned inst, unsigned tag,
                              int at, unsigned conf)
{
    struct mach_cache *x = inst_of(m, l, inst);
    if (!x || !x->occ_low || tag >= m->ntags || conf >= m->nconf)
        return;
    size_t i = low_index(m, tag, at, conf);
    x->occ_low[i] = sub_sum(m, x->occ_tag, 1, tag, at, conf);
    x->samp_low[i] = sub_sum(m, x->occ_samp, 1, tag, at, conf);
}

uint64_t mach_occupancy(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag)
{
    return mach_occupancy_sel(m, l, inst, tag, MACH_ANY, 0, 0);
}

uint64_t mach_occupancy_est(const struct mach *m, enum plat_level l, unsigned inst, unsigned tag)
{
    return mach_occupancy_sel(m, l, inst, tag, MACH_ANY, 0, 1);
}

uint64_t mach_task_lines(const struct mach *m, enum plat_level l, unsigned task)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < m->ncache[l]; i++)
        if (m->cache[l][i].acct && task <= m->ntask)
            n += m->cache[l][i].occ_task[task];
    return n;
}

/* The bytes of one row of per-class counts in the classes of `classes`. */
static uint64_t class_sum(const uint64_t *a, uint32_t classes)
{
    uint64_t n = 0;
    for (unsigned t = 0; t < MACH_NTRAFFIC; t++)
        if (classes >> t & 1)
            n += a[t];
    return n;
}

/* The raw bytes of (domain, tag) in the classes of `classes`, summed over
 * its sub-tags. */
static uint64_t tag_traffic(const struct mach *m, unsigned domain, unsigned tag, uint32_t classes)
{
    const uint64_t *a = &m->bytes[((size_t)domain * m->ntags + tag) * m->nsub * MACH_NTRAFFIC];
    uint64_t n = 0;
    for (unsigned s = 0; s < m->nsub; s++, a += MACH_NTRAFFIC)
        n += class_sum(a, classes);
    return n;
}

static const uint32_t ctr_classes[MACH_NCTR] = {MACH_TR_TOTAL, MACH_TR_LOCALS,
                                                1u << MACH_TR_VICTIM};

uint64_t mach_bytes(const struct mach *m, unsigned domain, unsigned tag, enum mach_ctr c)
{
    if (domain >= m->p.ndomains || tag >= m->ntags || (unsigned)c >= MACH_NCTR)
        return 0;
    uint64_t raw = tag_traffic(m, domain, tag, ctr_classes[c]);
    raw -= m->bytes_base[((size_t)domain * m->ntags + tag) * MACH_NCTR + c];
    return raw / m->p.mon.scale & m->ctr_mask;
}

void mach_bytes_clear(struct mach *m, unsigned domain, unsigned tag)
{
    if (domain >= m->p.ndomains || tag >= m->ntags)
        return;
    for (unsigned c = 0; c < MACH_NCTR; c++)
        m->bytes_base[((size_t)domain * m->ntags + tag) * MACH_NCTR + c] =
            tag_traffic(m, domain, tag, ctr_classes[c]);
}

uint64_t mach_traffic(const struct mach *m, unsigned domain, unsigned tag, uint32_t classes)
{
    if (domain >= m->p.ndomains || tag >= m->ntags)
        return 0;
    return tag_traffic(m, domain, tag, classes);
}

uint64_t mach_traffic_cls(const struct mach *m, unsigned domain, unsigned cls, uint32_t classes)
{
    if (domain >= m->p.ndomains || cls >= m->ntcls)
        return 0;
    return class_sum(&m->cls_bytes[((size_t)domain * m->ntcls + cls) * MACH_NTRAFFIC], classes);
}

void mach_count(struct mach *m, unsigned domain, unsigned stag, unsigned cls, unsigned task,
                enum mach_traffic t, uint64_t bytes)
{
    /* A class no resource has is counted as class 0, whose settings it gets. */
    unsigned c = cls < m->ntcls ? cls : 0;
    m->bytes[((size_t)domain * m->ntags * m->nsub + stag) * MACH_NTRAFFIC + t] += bytes;
    m->cls_bytes[((size_t)domain * m->ntcls + c) * MACH_NTRAFFIC + t] += bytes;
    m->ts[task <= m->ntask ? task : m->ntask].traffic[t] += bytes;
}

uint64_t mach_node_bytes(const struct mach *m, unsigned node, unsigned tag, int at, unsigned conf,
                         int write)
{
    if (node >= plat_mem_nodes(&m->p) || tag >= m->ntags || conf >= m->nconf)
        return 0;
    const uint64_t *a = &m->node_bytes[(size_t)node * m->ntags * m->nsub * 2 + (write != 0)];
    return sub_sum(m, a, 2, tag, at, conf);
}

unsigned mach_bw_class(const struct mach *m, unsigned conf, unsigned cls, unsigned at)
{
    return m->nsub > 1 ? (conf * m->p.bw.classes + cls) * 2 + at : cls;
}

int mach_set_bw_map(struct mach *m, unsigned conf, unsigned cls, unsigned at, unsigned bwcls)
{
    if (!m->bw_map || conf >= m->nconf || cls >= m->p.bw.classes || at > 1 || !m->nbw ||
        bwcls >= m->bw[0].cfg.nclass)
        return -QOSIM_EINVAL;
    m->bw_map[(conf * m->p.bw.classes + cls) * 2 + at] = (uint16_t)bwcls;
    return 0;
}

int mach_set_throttle_mode(struct mach *m, unsigned domain, enum mach_thr mode)
{
    if (!m->thr || domain >= m->p.ndomains || (unsigned)mode > MACH_THR_THREAD)
        return -QOSIM_EINVAL;
    m->thr[domain] = (uint8_t)mode;
    return 0;
}

/* The class whose delay throttles a request of p's class bc: bc itself
 * with per-thread controls, else the class of the core's threads with the
 * largest (CORE_MAX) or smallest (CORE_MIN) delay, as their association
 * registers hold them, busy or idle. */
static inline __attribute__((always_inline)) unsigned
throttle_class(const struct mach *m, const struct mach_cpu *p, unsigned bc)
{
    unsigned nthr = m->p.topo.threads, mode = m->thr[p->domain];
    if (nthr < 2 || mode == MACH_THR_THREAD)
        return bc;
    const struct bw *b = &m->bw[p->domain];
    const struct mach_cpu *t = &m->cpu[p->id - p->id % nthr];
    for (unsigned i = 0; i < nthr; i++, t++) {
        unsigned c = t->cls < m->p.bw.classes ? t->cls : 0;
        unsigned dc = b->set[c].delay_pct, db = b->set[bc].delay_pct;
        if (mode == MACH_THR_CORE_MAX ? dc > db : dc < db)
            bc = c;
    }
    return bc;
}

int mach_set_bw(struct mach *m, unsigned ctl, unsigned cls, const struct bw_class_set *s)
{
    if (ctl >= m->nbw || cls >= m->bw[ctl].cfg.nclass)
        return -QOSIM_EINVAL;
    bw_set(&m->bw[ctl], cls, s);
    return 0;
}

int mach_set_slow_bw(struct mach *m, unsigned domain, unsigned cls, const struct bw_class_set *s)
{
    if (domain >= m->nsbw || cls >= m->sbw[domain].cfg.nclass)
        return -QOSIM_EINVAL;
    bw_set(&m->sbw[domain], cls, s);
    return 0;
}

uint64_t mach_valid_lines(const struct mach *m, enum plat_level l, unsigned inst)
{
    struct mach_cache *x = inst_of(m, l, inst);
    uint64_t n = 0;
    for (uint64_t i = 0; x && i < (uint64_t)x->c.sets * x->c.g.assoc; i++)
        n += x->c.lines[i].tag != CACHE_TAG_INVALID;
    return n;
}

/* ---- capacity-unit limits (CBQRI 1.0 cc_cunits) ---- */

/* Limits and counts per (world, class): lines[k * 2 + type] held, lim[k * 3
 * + j] as set (j: data, code, either; 0: none) and cap[k * 3 + j], what a
 * fill compares the counts with (UINT64_MAX: none), k = world * nclass +
 * class. One allocation, freed when the last limit goes. */
struct mach_cunits {
    unsigned nlim; /* limits set */
    uint64_t *lines, *lim, *cap;
    uint64_t a[];
};

/* Where a line of owner `owner` counts: (world * nclass + class) * 2 + type. */
static inline unsigned cu_key(const struct mach *m, const struct mach_cache *x, uint16_t owner)
{
    const struct mach_owner *o = &m->owners[owner];
    unsigned k = o->cls < x->nclass ? o->cls : 0; /* a class it lacks uses its class 0 */
    return ((o->sub >> 1) * x->nclass + k) * 2 + (o->sub & 1u);
}

/* Counts the lines of x into n[], indexed by cu_key. */
static void cu_scan(const struct mach *m, const struct mach_cache *x, uint64_t *n)
{
    for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++)
        if (x->c.lines[i].tag != CACHE_TAG_INVALID)
            n[cu_key(m, x, x->c.lines[i].owner)]++;
}

/* The first limit set in x: counts start from what it holds now. */
static struct mach_cunits *cu_start(const struct mach *m, const struct mach_cache *x)
{
    size_t n = (size_t)m->nconf * x->nclass;
    struct mach_cunits *u = calloc(1, sizeof *u + n * 8 * sizeof u->a[0]);
    if (!u)
        return NULL;
    u->lines = u->a;
    u->lim = u->lines + n * 2;
    u->cap = u->lim + n * 3;
    for (size_t i = 0; i < n * 3; i++)
        u->cap[i] = UINT64_MAX;
    cu_scan(m, x, u->lines);
    return u;
}

int mach_set_units(struct mach *m, enum plat_level l, unsigned inst, unsigned conf, unsigned cls,
                   int at, uint64_t lines)
{
    struct mach_cache *x = inst_of(m, l, inst);
    if (!x || (l != PLAT_L2 && l != PLAT_L3) || conf >= m->nconf || cls >= x->nclass ||
        (at != MACH_ANY && at != MACH_DATA && at != MACH_CODE))
        return -QOSIM_EINVAL;
    if (!x->cu && !lines)
        return 0;
    if (!x->cu && !(x->cu = cu_start(m, x)))
        return -QOSIM_ENOMEM;
    struct mach_cunits *u = x->cu;
    size_t k = (size_t)conf * x->nclass + cls;
    uint64_t *lim = &u->lim[k * 3], *cap = &u->cap[k * 3];
    unsigned j = at == MACH_ANY ? 2 : (unsigned)at;
    u->nlim += (lines != 0) - (lim[j] != 0);
    lim[j] = lines;
    if (!u->nlim) { /* the last limit went: back to fills that count nothing */
        free(u);
        x->cu = NULL;
        return 0;
    }
    for (unsigned i = 0; i < 3; i++)
        cap[i] = lim[i] ? lim[i] : UINT64_MAX;
    if (m->nsub == 1) { /* types not told apart: every line counts as data */
        for (unsigned i = 1; i < 3; i++)
            if (cap[i] < cap[0])
                cap[0] = cap[i];
        cap[1] = cap[2] = UINT64_MAX;
    }
    return 0;
}

uint64_t mach_class_lines(const struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                          unsigned cls, int at)
{
    const struct mach_cache *x = inst_of(m, l, inst);
    if (!x || conf >= m->nconf || cls >= x->nclass ||
        (at != MACH_ANY && at != MACH_DATA && at != MACH_CODE))
        return 0;
    size_t k = (size_t)conf * x->nclass + cls;
    const uint64_t *n = x->cu ? x->cu->lines : NULL;
    uint64_t tmp[2] = {0, 0};
    if (!n) { /* no counts kept: scan for this class alone */
        for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++) {
            const struct cache_line *ln = &x->c.lines[i];
            unsigned key;
            if (ln->tag != CACHE_TAG_INVALID && (key = cu_key(m, x, ln->owner)) / 2 == k)
                tmp[key & 1]++;
        }
        n = tmp;
        k = 0;
    }
    return at == MACH_ANY ? n[k * 2] + n[k * 2 + 1] : n[k * 2 + (unsigned)at];
}

/* ---- the access path ---- */

static inline int sampled(const struct mach_cache *x, uint64_t block)
{
    return x->samp_period == 1 || samp_set(x->samp_period, cache_index(&x->c, block));
}

static inline unsigned stag_of(const struct mach *m, const struct mach_owner *o)
{
    return o->tag * m->nsub + o->sub;
}

/* A count of (tag, sub-tag) fell: the low-water marks of the sub-tag and
 * of its world's both-types sum follow (a CBQRI capacity counter is
 * occupancy less the lowest it has been since CONFIG_EVENT). */
static inline void low_follow(const struct mach *m, const uint64_t *cnt, uint64_t *low,
                              unsigned tag, unsigned sub)
{
    size_t b = (size_t)tag * m->nsub, l = (size_t)tag * mach_nlow(m);
    uint64_t v = cnt[b + sub], any = cnt[b + (sub & ~1u)] + cnt[b + (sub | 1u)];
    if (v < low[l + sub])
        low[l + sub] = v;
    if (any < low[l + m->nsub + sub / 2])
        low[l + m->nsub + sub / 2] = any;
}

static inline void occ_move(struct mach *m, struct mach_cache *x, uint16_t owner, uint64_t block,
                            int64_t d)
{
    const struct mach_owner *o = &m->owners[owner];
    unsigned st = stag_of(m, o);
    int samp = sampled(x, block);
    x->occ_tag[st] += (uint64_t)d;
    x->occ_task[o->task] += (uint64_t)d;
    if (samp)
        x->occ_samp[st] += (uint64_t)d;
    if (d < 0 && x->occ_low) {
        low_follow(m, x->occ_tag, x->occ_low, o->tag, o->sub);
        if (samp)
            low_follow(m, x->occ_samp, x->samp_low, o->tag, o->sub);
    }
}

static inline unsigned node_of(const struct mach *m, uint64_t block)
{
    return (unsigned)(block >> (MACH_NODE_SHIFT - m->line_bits));
}

/* A line written to memory: a dirty victim from memory's side of the last
 * level (or a write that allocated nowhere) or a non-temporal line, class
 * t; counted at the monitoring point against the tag, class and task of
 * owner (for a victim, the request that filled it). Returns the time the
 * write waited for its channel. */
static uint64_t mem_writeback(struct mach *m, struct mach_cpu *p, uint64_t block, uint16_t owner,
                              enum mach_traffic t)
{
    const struct mach_owner *o = &m->owners[owner];
    unsigned st = stag_of(m, o), node = node_of(m, block);
    mach_count(m, p->domain, st, o->cls, o->task, t, m->line);
    m->node_bytes[((size_t)node * m->ntags * m->nsub + st) * 2 + 1] += m->line;
    m->ts[o->task].wr_bytes += m->line;
    return mem_write(&m->mem, node, block, p->now);
}

/* A line read from memory for p, with owner `owner` and p's traffic class
 * for the line's node: counted where the L3 meets memory and per node. */
static void mem_read_count(struct mach *m, struct mach_cpu *p, unsigned node, uint16_t owner)
{
    const struct mach_owner *o = &m->owners[owner];
    unsigned st = stag_of(m, o);
    mach_count(m, p->domain, st, o->cls, o->task, (enum mach_traffic)p->rd_tr[node], m->line);
    m->node_bytes[((size_t)node * m->ntags * m->nsub + st) * 2] += m->line;
    p->ts->rd_bytes += m->line;
}

/* A line of owner `owner` left x: the counts kept there follow. */
static inline void line_gone(struct mach *m, struct mach_cache *x, uint16_t owner, uint64_t block)
{
    if (x->acct)
        occ_move(m, x, owner, block, -1);
    if (x->cu)
        x->cu->lines[cu_key(m, x, owner)]--;
}

/* Inclusion: the copies of block above x go; returns their flags (newer
 * data comes down with them). */
static inline uint8_t drop_above(struct mach *m, struct mach_cache *x, uint64_t block)
{
    uint8_t flags = 0;
    for (unsigned i = 0; i < x->nabove; i++) {
        struct mach_cache *a = x->above[i];
        struct cache_victim w;
        if (cache_invalidate(&a->c, block, &w)) {
            line_gone(m, a, w.owner, w.tag);
            flags |= w.flags;
        }
    }
    return flags;
}

/* Dirty data of block leaving level `from`: written back to the first
 * level below that holds the line; no level allocates for a writeback (a
 * fill belongs to a request and its class). */
static void write_down(struct mach *m, struct mach_cpu *p, enum plat_level from, uint64_t block,
                       uint16_t owner)
{
    struct mach_cache *below[2] = {from <= PLAT_L1D ? p->l2 : NULL, from <= PLAT_L2 ? p->l3 : NULL};
    for (int k = 0; k < 2; k++) {
        if (!below[k])
            continue;
        int i = cache_find(&below[k]->c, block);
        if (i >= 0) {
            cache_set(&below[k]->c, cache_index(&below[k]->c, block))[i].flags |= CACHE_F_DIRTY;
            return;
        }
    }
    mem_writeback(m, p, block, owner, MACH_TR_VICTIM);
}

static void l3_victim_in(struct mach *m, struct mach_cpu *p, const struct cache_victim *v);

void mach_left(struct mach *m, struct mach_cpu *p, struct mach_cache *x,
               const struct cache_victim *v)
{
    line_gone(m, x, v->owner, v->tag);
    uint8_t flags = v->flags | drop_above(m, x, v->tag);
    if (x->level == PLAT_L2 && p->l3 && p->l3->victim) { /* victim L3: the line goes down */
        struct cache_victim d = *v;
        d.flags = flags;
        if (p->defer && !p->pend.valid)
            p->pend = d;
        else
            l3_victim_in(m, p, &d);
        return;
    }
    if (flags & CACHE_F_DIRTY)
        write_down(m, p, x->level, v->tag, v->owner);
}

/* The ways of block's set holding lines of key's (world, class) and, unless
 * any_type, type: what a class at its limit may replace. A mask names only
 * the first 64 ways, and all 64 set would name every way (cache.h). */
static uint64_t cu_own_ways(const struct mach *m, const struct mach_cache *x, uint64_t block,
                            unsigned key, int any_type)
{
    const struct cache_line *set = cache_set(&x->c, cache_index(&x->c, block));
    unsigned match = any_type ? ~1u : ~0u;
    uint64_t ways = 0;
    for (unsigned i = 0; i < x->c.g.assoc; i++)
        if (set[i].tag != CACHE_TAG_INVALID && set[i].way < 64 &&
            ((cu_key(m, x, set[i].owner) ^ key) & match) == 0)
            ways |= 1ull << set[i].way;
    return ways == ~0ull && x->c.g.assoc > 64 ? ways & ~(1ull << 63) : ways;
}

/* level_ref in an instance with capacity-unit limits: counts every fill,
 * and a class at a limit replaces its own lines or does not allocate. */
static __attribute__((noinline)) int level_ref_cu(struct mach *m, struct mach_cpu *p,
                                                  struct mach_cache *x, uint64_t block,
                                                  uint64_t mask, uint16_t own)
{
    struct mach_cunits *u = x->cu;
    struct cache_victim v;
    unsigned key = cu_key(m, x, own), t = key & 1;
    const uint64_t *n = &u->lines[key & ~1u], *cap = &u->cap[(key >> 1) * 3];
    int per = n[t] >= cap[t], any = n[0] + n[1] >= cap[2], refused = 0;
    if (per || any) {
        if (cache_ref(&x->c, block, 0, own, 0, &v)) /* a lookup: hits are not limited */
            return 1;
        /* Per-type limit reached: replace a line of that type; else any of the class's. */
        uint64_t mine = mask & cu_own_ways(m, x, block, key, !per);
        refused = (mask & x->c.all_ways) && !mine;
        mask = mine;
        if (mask)
            cache_insert(&x->c, block, 0, own, mask, &v);
    } else if (cache_ref(&x->c, block, 0, own, mask, &v)) {
        return 1;
    }
    p->ts->miss[x->level]++;
    if (refused) {
        /* Not allocated here for the limit. An inclusive level cannot have
         * the line above it either: the copies this request just made go,
         * their written data to the level below or memory. */
        uint8_t flags = drop_above(m, x, block);
        if (flags & CACHE_F_DIRTY)
            write_down(m, p, x->level, block, own);
        return 0;
    }
    if (!(mask & x->c.all_ways)) /* an all-zero mask: as level_ref */
        return 0;
    if (x->acct)
        occ_move(m, x, own, block, 1);
    u->lines[key]++;
    if (v.valid)
        mach_left(m, p, x, &v);
    return 0;
}

/* Looks block up in x for p, filling by the class's mask on a miss. */
static inline int level_ref(struct mach *m, struct mach_cpu *p, struct mach_cache *x,
                            uint64_t block, uint64_t mask, uint16_t own)
{
    struct cache_victim v;
    p->ts->ref[x->level]++;
    if (x->cu)
        return level_ref_cu(m, p, x, block, mask, own);
    if (cache_ref(&x->c, block, 0, own, mask, &v))
        return 1;
    p->ts->miss[x->level]++;
    if (x->acct && (mask & x->c.all_ways))
        occ_move(m, x, own, block, 1);
    if (v.valid)
        mach_left(m, p, x, &v);
    return 0;
}

/* AMD SMBA: a read of slow memory passes the domain's slow-memory limiter
 * too, after L3BE, in the CPU's class (the COS of PQR_ASSOC, as for every
 * AMD enforcement; a class it lacks: class 0). Returns the latency so far
 * (lat, ticks from now) with what the limiter held it. */
static uint64_t slow_admit(struct mach *m, struct mach_cpu *p, uint64_t now, uint64_t lat)
{
    struct bw *b = &m->sbw[p->domain];
    unsigned c = p->cls < b->cfg.nclass ? p->cls : 0;
    uint64_t t = bw_admit(b, c, 0, now + lat, m->line) - now;
    if (t != lat && bw_limited(b, c))
        p->held += t - lat;
    return t;
}

static void l3_victim_out(struct mach *m, struct mach_cpu *p, uint64_t block);

/* The limiter class of p's requests of world conf and type t, and (Intel
 * MBA) the delay a request leaving L2 at `at` waits at the core's link to
 * the interconnect, L3 hits included: per thread, or one throttle for the
 * whole core. Demand requests and prefetches alike (sim/mem/bw_delay.c). */
static inline unsigned egress(struct mach *m, struct mach_cpu *p, unsigned conf, unsigned t,
                              uint64_t at, uint64_t *wait)
{
    unsigned bc = p->cls < m->p.bw.classes ? p->cls : 0;
    if (m->bw_map) /* the limiter class (C, class, AT) uses */
        bc = m->bw_map[((conf < m->nconf ? conf : 0) * m->p.bw.classes + bc) * 2 + t];
    *wait = 0;
    if (m->p.bw.kind == BW_DELAY) {
        unsigned nthr = m->p.topo.threads, tp = p->port * nthr;
        if (m->thr[p->domain] == MACH_THR_THREAD)
            tp += p->id % nthr;
        bc = throttle_class(m, p, bc);
        *wait = bw_admit(&m->bw[p->domain], bc, tp, at, m->line) - at;
    }
    return bc;
}

/* A read of block from memory by p in limiter class bc, leaving the L3 at
 * now + lat: the memory-side limiters (AMD L3BE per L3 domain, CBQRI at the
 * serving node, AMD SMBA for slow memory), then the channel, which serves
 * what a CBQRI controller admitted within a reservation first. held: the
 * limiters' wait is the CPU's held time (a demand request's; a prefetch
 * holds no instruction). Returns the latency from now. */
static uint64_t mem_path(struct mach *m, struct mach_cpu *p, uint64_t block, unsigned bc,
                         uint16_t own, uint64_t now, uint64_t lat, int held)
{
    enum bw_kind bk = m->p.bw.kind;
    unsigned node = node_of(m, block);
    uint64_t asked = lat, held0 = p->held;
    if (bk == BW_RATE) /* AMD L3BE: what the L3 domain reads from outside */
        lat = bw_admit(&m->bw[p->domain], bc, 0, now + lat, m->line) - now;
    else if (bk == BW_SHARE && node < m->nbw) /* CBQRI: the controller at the memory that
                                                 serves it; slow nodes have none */
        lat = bw_admit(&m->bw[node], bc, 0, now + lat, m->line) - now;
    if (lat != asked && bw_limited(&m->bw[bk == BW_SHARE ? node : p->domain], bc))
        p->held += lat - asked;
    if (m->sbw && m->node_slow[node])
        lat = slow_admit(m, p, now, lat);
    if (!held)
        p->held = held0;
    int prio = bk == BW_SHARE && node < m->nbw && bw_in_resv(&m->bw[node]);
    lat += mem_read_prio(&m->mem, p->node, node, block, now + lat, prio);
    mem_read_count(m, p, node, own);
    return lat;
}

static inline uint64_t miss_path(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t block,
                                 unsigned conf)
{
    unsigned t = kind == HIER_IFETCH ? MACH_CODE : MACH_DATA;
    uint16_t own = p->own[conf][t];
    uint64_t now = p->now, lat = p->l2->lat, wait;
    p->src = PLAT_L2;
    if (level_ref(m, p, p->l2, block, p->m2[conf][t], own))
        return lat;
    /* Latencies are load-to-use from the level that serves the access; what
     * a limiter makes a request wait comes on top. */
    unsigned bc = egress(m, p, conf, t, now + lat, &wait);
    if (wait && bw_limited(&m->bw[p->domain], bc))
        p->held += wait;
    if (p->l3) {
        lat = p->l3->lat + wait;
        p->src = PLAT_L3;
        /* A victim L3 is looked up only: memory fills the L2 alone. */
        if (level_ref(m, p, p->l3, block, p->l3->victim ? 0 : p->m3[conf][t], own)) {
            if (p->l3->victim == PLAT_VICTIM_MOVE)
                l3_victim_out(m, p, block);
            return lat;
        }
    } else {
        lat += wait;
    }
    p->src = tr_local(p->rd_tr[node_of(m, block)]) ? MACH_SRC_MEM_LOCAL : MACH_SRC_MEM_REMOTE;
    return mem_path(m, p, block, bc, own, now, lat, 1);
}

static uint64_t pf_l2_side(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t block,
                           unsigned conf, uint64_t lat);

/* Everything after an L1 miss: the levels below and memory (miss_path);
 * on a victim L3 the L2's eviction enters the L3 only once the lookup is
 * done, so it cannot displace the line being fetched; then the L2
 * prefetchers, which see the lookup. */
uint64_t mach_miss(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t block, unsigned conf)
{
    uint64_t lat;
    if (!p->l3 || !p->l3->victim) {
        lat = miss_path(m, p, kind, block, conf);
    } else {
        p->defer = 1;
        lat = miss_path(m, p, kind, block, conf);
        p->defer = 0;
        if (p->pend.valid) {
            struct cache_victim v = p->pend;
            p->pend.valid = 0;
            l3_victim_in(m, p, &v);
        }
    }
    if (__builtin_expect(p->pf_on != 0, 0)) /* hardware prefetchers: below */
        lat = pf_l2_side(m, p, kind, block, conf, lat);
    return lat;
}

/* ---- victim L3 (caches.L3.inclusion: victim or exclusive; plat.c,
 * load_l3_layout, says whose description each follows) ---- */

/* An L2 eviction, clean or dirty, enters the L3 under the mask of the
 * class of the request that filled it (its owner's), keeping the tag it
 * was filled with; where that class may not allocate, dirty data goes to
 * memory. Project choice: Intel does not say whose COS an L2 victim's L3
 * fill uses; the owner's keeps CAT's promise that a class's lines stay in
 * its ways (what Linux's resctrl tests check on these parts) even when the
 * eviction happens while another task, of another class, runs on the
 * core. A line the L3 still holds (kept on the hit that brought it up)
 * takes the dirt. */
static void l3_victim_in(struct mach *m, struct mach_cpu *p, const struct cache_victim *v)
{
    struct mach_cache *x = p->l3;
    int i = cache_find(&x->c, v->tag);
    if (i >= 0) {
        cache_set(&x->c, cache_index(&x->c, v->tag))[i].flags |= v->flags & CACHE_F_DIRTY;
        return;
    }
    const struct mach_owner *o = &m->owners[v->owner];
    unsigned conf = m->nsub > 1 ? o->sub / 2 : 0, t = m->nsub > 1 ? o->sub % 2 : MACH_DATA;
    uint64_t mask = class_masks(x, conf, o->cls)[t];
    if (!(mask & x->c.all_ways)) {
        if (v->flags & CACHE_F_DIRTY)
            mem_writeback(m, p, v->tag, v->owner, MACH_TR_VICTIM);
        return;
    }
    struct cache_victim w;
    cache_insert(&x->c, v->tag, v->flags & CACHE_F_DIRTY, v->owner, mask, &w);
    if (x->acct)
        occ_move(m, x, v->owner, v->tag, 1);
    if (x->cu)
        x->cu->lines[cu_key(m, x, v->owner)]++;
    if (w.valid)
        mach_left(m, p, x, &w);
}

/* Exclusive: an L3 hit moves the line up into the L2 that just took a
 * copy (its dirt with it); where the L2 could not allocate it stays. */
static void l3_victim_out(struct mach *m, struct mach_cpu *p, uint64_t block)
{
    struct mach_cache *u = p->l2;
    int i = cache_find(&u->c, block);
    struct cache_victim v;
    if (i < 0 || !cache_invalidate(&p->l3->c, block, &v))
        return;
    line_gone(m, p->l3, v.owner, block);
    cache_set(&u->c, cache_index(&u->c, block))[i].flags |= v.flags & CACHE_F_DIRTY;
}

/* A non-temporal store (MOVNTI and kin; Intel SDM vol. 1 10.4.6.2, "Caching
 * of Temporal vs. Non-Temporal Data"): the stores of a stream are combined into whole lines in the
 * CPU's write-combining buffer, and a line goes to memory around the
 * caches. Modelled as one full-line write per line the stream enters
 * (project choice: charged on entry rather than when the stream leaves it,
 * so no buffer outlives a task's time on the CPU; counts are the same, and
 * a sequential stream writes each line once); one buffer per logical CPU
 * (project choice: hardware has several, a synthetic stream needs one).
 * A line is a line whatever part of it the stream wrote (a memory transfer
 * is one). The copies of the line in the CPU's caches go without a
 * writeback: the full-line write subsumes their data (project choice, as a
 * partial line would have hardware write the dirty copy back first).
 * Counted as BMEC's non-temporal class, local or remote by the line's node
 * (slow memory by its home: Linux resctrl.rst's classes 2 and 3 name "local
 * NUMA domain", not DRAM), against the CPU's domain, tag, class and task.
 * It passes no bandwidth limiter (project choice: AMD names L3BE "L3
 * external read bandwidth enforcement", CPUID Fn8000_0020_EBX[1], SMBA is
 * taken to be the same kind, and the machine's writebacks pass none
 * either); its latency is the wait for its memory channel only, a store
 * being posted. */
uint64_t mach_ntstore(struct mach *m, struct mach_cpu *p, uint64_t addr)
{
    uint64_t b = addr >> m->line_bits;
    int local = tr_local(p->rd_tr[node_of(m, b)]);
    p->src = local ? MACH_SRC_MEM_LOCAL : MACH_SRC_MEM_REMOTE;
    if (b == p->wc)
        return 0; /* combined into the line being written */
    p->wc = b;
    struct mach_cache *x[3] = {p->l1d, p->l2, p->l3};
    for (int i = 0; i < 3; i++) {
        struct cache_victim v;
        if (x[i] && cache_invalidate(&x[i]->c, b, &v))
            line_gone(m, x[i], v.owner, v.tag);
        if (x[i])
            drop_above(m, x[i], b); /* an inclusive level's other copies */
    }
    unsigned conf = addr - p->conf_lo < p->conf_len;
    return mem_writeback(m, p, b, p->own[conf][MACH_DATA],
                         local ? MACH_TR_NT_LOCAL : MACH_TR_NT_REMOTE);
}

uint64_t mach_flush_class(struct mach *m, enum plat_level l, unsigned inst, unsigned conf,
                          unsigned cls, int at)
{
    struct mach_cache *x = inst_of(m, l, inst);
    struct mach_cpu *p = NULL;
    for (unsigned c = 0; x && c < m->ncpu && !p; c++) /* a CPU this cache serves */
        if (m->cpu[c].l2 == x || m->cpu[c].l3 == x || m->cpu[c].l1d == x || m->cpu[c].l1i == x)
            p = &m->cpu[c];
    if (!p)
        return 0;
    uint64_t n = 0;
    /* An invalidation may reorder its set (replacement state), so each set
     * is scanned again from its start until nothing in it matches. */
    for (uint32_t set = 0; set < x->c.sets; set++) {
        const struct cache_line *ln = cache_set(&x->c, set);
        for (unsigned w = 0; w < x->c.g.assoc; w++) {
            if (ln[w].tag == CACHE_TAG_INVALID)
                continue;
            const struct mach_owner *o = &m->owners[ln[w].owner];
            unsigned sub = m->nsub > 1 ? o->sub : 0;
            if (o->cls != cls || sub / 2 != conf || (at != MACH_ANY && sub % 2 != (unsigned)at))
                continue;
            struct cache_victim v;
            if (cache_invalidate(&x->c, ln[w].tag, &v)) {
                mach_left(m, p, x, &v); /* dirty data goes down, copies above go too */
                n++;
                w = (unsigned)-1;
            }
        }
    }
    return n;
}

/* ---- I/O agents (DDIO, SDCI) ---- */

int mach_set_io_ways(struct mach *m, unsigned l3inst, uint64_t ways)
{
    struct mach_cache *x = inst_of(m, PLAT_L3, l3inst);
    if (!x || !m->io_ways || (ways & ~x->c.all_ways))
        return -QOSIM_EINVAL;
    m->io_ways[l3inst] = ways;
    return 0;
}

uint64_t mach_get_io_ways(const struct mach *m, unsigned l3inst)
{
    return inst_of(m, PLAT_L3, l3inst) && m->io_ways ? m->io_ways[l3inst] : 0;
}

int mach_io_port(struct mach *m, struct mach_cpu *port, unsigned domain, unsigned task,
                 unsigned cls, unsigned tag)
{
    const struct mach_cpu *c = NULL;
    for (unsigned i = 0; i < m->ncpu && !c; i++)
        if (m->cpu[i].domain == domain)
            c = &m->cpu[i];
    if (!c || !c->l3 || task >= m->ntask)
        return -QOSIM_EINVAL;
    /* No core and no L1 or L2: the device's requests enter at the L3, and
     * nothing it evicts there is written down to a level above. */
    memset(port, 0, sizeof *port);
    port->id = UINT32_MAX;
    port->node = c->node;
    memcpy(port->rd_tr, c->rd_tr, sizeof port->rd_tr); /* its node's, as the cores' */
    port->domain = domain;
    port->l3 = c->l3;
    port->task = (int)task;
    port->cls = cls;
    port->tag = tag < m->ntags ? tag : 0;
    port->ts = &m->ts[task];
    uint16_t own = owner_intern(m, task, port->tag, 0, cls & 0xffff);
    for (unsigned k = 0; k < 4; k++)
        port->own[k / 2][k % 2] = own;
    return 0;
}

enum mach_dma mach_dma_write(struct mach *m, struct mach_cpu *p, uint64_t addr)
{
    struct mach_cache *x = p->l3;
    uint64_t block = addr >> m->line_bits, ways = m->io_ways[x->inst];
    uint16_t own = p->own[0][MACH_DATA];
    struct cache_victim v;
    /* The device writes whole lines: a core's copy, dirty or not, is stale
     * and goes without a writeback (an invalidating write, as PCIe's
     * full-line writes are carried out). */
    for (unsigned i = 0; i < x->ndom_up; i++) {
        struct mach_cache *a = x->dom_up[i];
        if (cache_invalidate(&a->c, block, &v))
            line_gone(m, a, v.owner, block);
    }
    if (ways) {
        /* DDIO's write update on a hit, write allocate into its ways on a
         * miss. The line keeps the owner that filled it, as on a core's
         * store hit. A class's capacity-unit limit does not apply (the
         * device's fills are confined by the io ways alone) but the counts
         * stay exact. */
        p->ts->ref[PLAT_L3]++;
        if (cache_ref(&x->c, block, CACHE_F_DIRTY, own, ways, &v))
            return MACH_DMA_HIT;
        p->ts->miss[PLAT_L3]++;
        if (x->acct)
            occ_move(m, x, own, block, 1);
        if (x->cu)
            x->cu->lines[cu_key(m, x, own)]++;
        if (v.valid)
            mach_left(m, p, x, &v);
        return MACH_DMA_FILL;
    }
    /* No allocation (DDIO off, or no ways): the write goes to memory and the
     * L3's copy, now stale, goes too. */
    if (cache_invalidate(&x->c, block, &v))
        line_gone(m, x, v.owner, block);
    mem_writeback(m, p, block, own, MACH_TR_VICTIM);
    return MACH_DMA_MEM;
}

enum mach_dma mach_dma_read(struct mach *m, struct mach_cpu *p, uint64_t addr)
{
    struct mach_cache *x = p->l3;
    uint64_t block = addr >> m->line_bits;
    uint16_t own = p->own[0][MACH_DATA];
    struct cache_victim v;
    /* Copies in the cores' L1s and L2 are not looked at (project choice:
     * an agent's buffers are its own memory, which no task touches, so no
     * core holds them). */
    p->ts->ref[PLAT_L3]++;
    if (cache_ref(&x->c, block, 0, own, 0, &v))
        return MACH_DMA_HIT;
    p->ts->miss[PLAT_L3]++;
    unsigned node = node_of(m, block);
    mem_read(&m->mem, p->node, node, block, p->now);
    mem_read_count(m, p, node, own);
    return MACH_DMA_MEM;
}

/* ---- prefetch requests (sim/cache/pf.h decides what; this issues it) ----
 *
 * A prefetch is a request like any other (docs/mechanisms.md): it carries the
 * requesting CPU's class and tag (the owner its lines get, so occupancy and
 * byte counters count it), fills under the class's L2 and L3 masks, passes
 * the L2-egress delay (Intel MBA) and the memory-side limiters, and is
 * counted in the running task's ground truth (pf_req, pf_bytes, and
 * rd_bytes with its memory reads). It differs from a demand request in what
 * it does not do: it is not a reference or a miss of any level, does not
 * stall the core, does not promote a line it finds (a prefetch that finds
 * its line is dropped), and marks the line it fills at its target level
 * (CACHE_F_PF) so that the first demand access to it counts as useful. Its
 * arrival time is kept (pf.h's pending lines): a demand that finds the line
 * before then waits for the rest, so a delayed prefetch is a late one. */

static int pf_setup(struct mach *m, struct err *e)
{
    const struct pf_cfg *cfg = &m->p.core.pf;
    if (!cfg->present)
        return 0;
    for (unsigned c = 0; c < m->ncpu; c++) {
        struct mach_cpu *p = &m->cpu[c];
        p->pf = malloc(sizeof *p->pf);
        if (!p->pf)
            return err_set(e, -QOSIM_ENOMEM, "cannot allocate prefetchers");
        int rc = pf_init(p->pf, cfg, m->line_bits, e);
        if (rc) {
            free(p->pf);
            p->pf = NULL;
            return rc;
        }
        p->pf_on = cfg->present;
    }
    return 0;
}

int mach_set_prefetch(struct mach *m, unsigned cpu, unsigned on)
{
    if (cpu >= m->ncpu)
        return -QOSIM_EINVAL;
    m->cpu[cpu].pf_on = on & m->p.core.pf.present;
    return 0;
}

unsigned mach_get_prefetch(const struct mach *m, unsigned cpu)
{
    return cpu < m->ncpu ? m->cpu[cpu].pf_on : 0;
}

/* Fills block, absent from x, as a prefetch of owner own would: under mask,
 * with flags; occupancy and evictions as for any fill. */
static void pf_fill(struct mach *m, struct mach_cpu *p, struct mach_cache *x, uint64_t block,
                    uint64_t mask, uint16_t own, unsigned flags)
{
    struct cache_victim v;
    if (x->cu) {
        /* Capacity-unit limits apply to prefetches as to any fill; the
         * line is not marked (project choice: a rare combination). */
        uint64_t miss = p->ts->miss[x->level];
        level_ref_cu(m, p, x, block, mask, own);
        p->ts->miss[x->level] = miss;
        return;
    }
    if (!(mask & x->c.all_ways))
        return; /* the class may not allocate here */
    cache_insert(&x->c, block, flags, own, mask, &v);
    if (x->acct)
        occ_move(m, x, own, block, 1);
    if (v.valid)
        mach_left(m, p, x, &v);
}

static uint64_t pf_used(struct mach_cpu *p, struct mach_cache *x, uint64_t block);

/* A prefetch request found its line at level x: a line another prefetch
 * brought there has served (project choice: it is useful, as the data it
 * fetched went on towards the core), and the request waits for it if it is
 * still on its way. Returns the request's latency from p->now. */
static uint64_t pf_found(struct mach_cpu *p, struct mach_cache *x, uint64_t block, uint64_t lat)
{
    uint64_t ready = pf_used(p, x, block);
    return ready > p->now + lat ? ready - p->now : lat;
}

/* A prefetch that missed L2, from L2's egress on: the L2-egress delay as
 * mach_miss applies it, then L3 (filled, marked when it is the target) and
 * memory. Returns its latency from p->now. */
static uint64_t pf_below(struct mach *m, struct mach_cpu *p, uint64_t block, unsigned conf,
                         unsigned t, uint16_t own, int into_l3)
{
    uint64_t now = p->now, lat = p->l2->lat, wait;
    unsigned bc = egress(m, p, conf, t, now + lat, &wait);
    if (p->l3) {
        lat = p->l3->lat + wait;
        /* A prefetch into L3 was looked up there already (pf_issue). */
        if (!into_l3 && cache_find(&p->l3->c, block) >= 0)
            return pf_found(p, p->l3, block, lat);
        /* A victim L3 takes only what is prefetched into it: a prefetch
         * into L2 fills the L2 alone, as memory's fills do. */
        if (into_l3 || !p->l3->victim)
            pf_fill(m, p, p->l3, block, p->m3[conf][t], own, into_l3 ? CACHE_F_PF : 0);
    } else {
        lat += wait;
    }
    lat = mem_path(m, p, block, bc, own, now, lat, 0);
    p->ts->pf_bytes += m->line;
    return lat;
}

static void pf_train_l2(struct mach *m, struct mach_cpu *p, uint64_t block, unsigned conf,
                        unsigned t, int miss);

/* One prefetch of block by p into level `into` (enum pf_into), type t.
 * *inflight is what its queue holds: the L1D misses in flight for an L1
 * prefetch (the fill buffers), the L2 misses for an L2 one (the L2's
 * queue to the uncore), counted once per training event, when first needed
 * (PF_UNCOUNTED until then: most candidates are there already), and kept
 * up to date here. A prefetch that finds its queue full is not issued
 * and counted dropped: the queue serves demand first and a prefetch is
 * only a hint (project choice: Intel's streamer "adjusts dynamically to
 * the number of outstanding requests"; a prefetch waiting for an entry
 * would be a late one, a demand's load held back by a prefetch is not
 * modelled). */
static void pf_issue(struct mach *m, struct mach_cpu *p, uint64_t block, unsigned conf, unsigned t,
                     unsigned into, unsigned *inflight)
{
    if (into == PF_INTO_L3 && !p->l3)
        into = PF_INTO_L2;
    struct mach_cache *x = into == PF_INTO_L1 ? p->l1d : into == PF_INTO_L2 ? p->l2 : p->l3;
    if (pf_recent(p->pf, block, (uint8_t)into) || cache_find(&x->c, block) >= 0)
        return; /* asked for already, or there already: dropped */
    const struct pf_cfg *cfg = p->pf->cfg;
    if (*inflight == PF_UNCOUNTED)
        *inflight = pf_outstanding(into == PF_INTO_L1 ? &p->pf->l1q : &p->pf->l2q, p->now);
    if (*inflight >= (into == PF_INTO_L1 ? cfg->fill_buffers : cfg->l2_queue)) {
        p->ts->pf_drop++; /* no entry free in its queue */
        return;
    }
    ++*inflight;
    uint16_t own = p->own[conf][t];
    uint64_t lat = p->l2->lat;
    /* Into L2: x is the L2, where it was not found just above. */
    int in_l2 = into == PF_INTO_L1 && cache_find(&p->l2->c, block) >= 0;
    p->ts->pf_req++;
    if (in_l2)
        lat = pf_found(p, p->l2, block, lat);
    else {
        if (into != PF_INTO_L3)
            pf_fill(m, p, p->l2, block, p->m2[conf][t], own, into == PF_INTO_L2 ? CACHE_F_PF : 0);
        lat = pf_below(m, p, block, conf, t, own, into == PF_INTO_L3);
        pf_flight_add(&p->pf->l2q, p->now + lat);
    }
    if (into == PF_INTO_L1) {
        pf_fill(m, p, p->l1d, block, ~0ull, own, CACHE_F_PF);
        pf_flight_add(&p->pf->l1q, p->now + lat);
    }
    pf_pend_set(p->pf, block, p->now + lat, (uint8_t)into);
    /* The L2 streamer watches the L1 prefetchers' requests too (Intel:
     * "monitored read requests include L1 DCache requests initiated by load
     * and store operations and by the hardware prefetchers"). */
    if (into == PF_INTO_L1)
        pf_train_l2(m, p, block, conf, t, !in_l2);
}

/* The L2 prefetchers see one L2 lookup and issue what they ask. */
static void pf_train_l2(struct mach *m, struct mach_cpu *p, uint64_t block, unsigned conf,
                        unsigned t, int miss)
{
    if (!(p->pf_on & (1u << PF_L2_STREAM | 1u << PF_L2_ADJ)))
        return;
    struct pf_req out[PF_MAX_OUT];
    struct pf_event ev = {.block = block, .now = p->now, .miss = (uint8_t)miss};
    unsigned inflight, n = pf_l2(p->pf, p->pf_on, &ev, out, &inflight);
    for (unsigned i = 0; i < n; i++)
        pf_issue(m, p, out[i].block, conf, t, out[i].into, &inflight);
}

/* A prefetched line at level x that a demand request just found: counted
 * useful once; returns when it arrives (0: not kept, or not prefetched). */
static uint64_t pf_used(struct mach_cpu *p, struct mach_cache *x, uint64_t block)
{
    struct cache_line *set = cache_set(&x->c, cache_index(&x->c, block));
    int i = set[0].tag == block ? 0 : cache_find(&x->c, block); /* LRU: a hit is in front */
    if (i < 0)
        return 0;
    struct cache_line *l = &set[i];
    if (!(l->flags & CACHE_F_PF))
        return 0;
    l->flags &= (uint8_t)~CACHE_F_PF;
    p->ts->pf_useful++;
    return pf_pend_take(p->pf, block);
}

/* After a demand L1 miss (mach_miss): a prefetched line it found in L2 or
 * L3 is used (a late one costs the rest of its way); an L1D miss holds a
 * fill buffer and an L2 miss an entry of the L2's queue until it
 * completes; the L2 prefetchers train on the lookup. */
static __attribute__((noinline)) uint64_t pf_l2_side(struct mach *m, struct mach_cpu *p,
                                                     unsigned kind, uint64_t block, unsigned conf,
                                                     uint64_t lat)
{
    unsigned src = p->src, t = kind == HIER_IFETCH ? MACH_CODE : MACH_DATA;
    struct mach_cache *x = src == PLAT_L2 ? p->l2 : src == PLAT_L3 ? p->l3 : NULL;
    uint64_t ready = x ? pf_used(p, x, block) : 0;
    if (ready > p->now + lat)
        lat = ready - p->now;
    if (t == MACH_DATA)
        pf_flight_add(&p->pf->l1q, p->now + lat);
    if (src != PLAT_L2)
        pf_flight_add(&p->pf->l2q, p->now + lat);
    pf_train_l2(m, p, block, conf, t, src != PLAT_L2);
    return lat;
}

uint64_t mach_pf_l1(struct mach *m, struct mach_cpu *p, unsigned kind, uint64_t addr, int hit)
{
    uint64_t b = addr >> m->line_bits, extra = 0;
    p->pf_blk = b;
    if (hit) {
        uint64_t ready = pf_used(p, p->l1d, b);
        if (ready > p->now)
            extra = ready - p->now;
    }
    unsigned conf = addr - p->conf_lo < p->conf_len;
    struct pf_req out[PF_MAX_OUT];
    struct pf_event ev = {.block = b,
                          .addr = addr,
                          .ip = p->ip,
                          .now = p->now,
                          .miss = (uint8_t)!hit,
                          .load = kind != HIER_STORE};
    unsigned inflight = PF_UNCOUNTED, n = pf_l1(p->pf, p->pf_on, &ev, out);
    for (unsigned i = 0; i < n; i++)
        pf_issue(m, p, out[i].block, conf, MACH_DATA, out[i].into, &inflight);
    return extra;
}
