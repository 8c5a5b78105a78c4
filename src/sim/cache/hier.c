#include "hier.h"

#include <string.h>

const char *const hier_cache_name[HIER_NCACHE] = {"I1", "D1", "L2", "LL"};
const char *const hier_incl_name[3] = {"nine", "inclusive", "exclusive"};

int hier_incl_parse(const char *s, enum hier_incl *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, hier_incl_name[i])) {
            *out = (enum hier_incl)i;
            return 0;
        }
    return -QOSIM_EINVAL;
}

int hier_init(struct hier *h, const struct hier_config *cfg, struct err *e)
{
    memset(h, 0, sizeof *h);
    h->incl = cfg->incl;
    h->wb_propagate = cfg->wb_propagate;
    h->depth = cfg->has_l2 ? 3 : 2;
    for (int s = 0; s < 2; s++) {
        h->path[s][0] = s ? HIER_L1D : HIER_L1I;
        h->path[s][1] = cfg->has_l2 ? HIER_L2 : HIER_LL;
        h->path[s][2] = HIER_LL;
    }
    h->clamp = UINT32_MAX;
    for (int i = 0; i < HIER_NCACHE; i++) {
        if (i == HIER_L2 && !cfg->has_l2)
            continue;
        int rc = cache_init(&h->c[i], hier_cache_name[i], &cfg->geom[i], cfg->repl, e);
        if (rc) {
            hier_free(h);
            /* A policy's refusal already starts with the cache's name (cache_init
             * names it): not named twice ("LL: LL: policy plru: ..."). */
            size_t n = strlen(hier_cache_name[i]);
            if (rc != -QOSIM_EGEOM || !e ||
                (!strncmp(e->msg, hier_cache_name[i], n) && e->msg[n] == ':'))
                return rc;
            return err_set(e, rc, "%s: %s", hier_cache_name[i], e->msg);
        }
        if (cfg->geom[i].line < h->clamp)
            h->clamp = cfg->geom[i].line;
        h->mask[i] = ~0ull;
    }
    /* A victim moves between levels as one line only when lines are one size. */
    if (cfg->incl != HIER_NINE || cfg->wb_propagate)
        for (int i = 0; i < HIER_NCACHE; i++)
            if (h->c[i].lines && cfg->geom[i].line != cfg->geom[HIER_L1D].line) {
                hier_free(h);
                return err_set(e, -QOSIM_EGEOM,
                               "%s inclusion and writeback propagation need one line size at "
                               "every level",
                               hier_incl_name[cfg->incl]);
            }
    return 0;
}

void hier_free(struct hier *h)
{
    for (int i = 0; i < HIER_NCACHE; i++)
        cache_free(&h->c[i]);
}

static void hier_victim(struct hier *h, unsigned side, unsigned k, const struct cache_victim *v);

/* Whether the current request's mask lets it allocate in cache idx at all. */
static int hier_may_fill(const struct hier *h, unsigned idx)
{
    return (h->mask[idx] & h->c[idx].all_ways) != 0;
}

/* Writes a dirty victim of level k into level k+1 (or memory). */
static void hier_writeback(struct hier *h, unsigned side, unsigned k, const struct cache_victim *d)
{
    if (k + 1 >= h->depth) {
        h->mem_writes++;
        return;
    }
    if (!h->wb_propagate)
        return;
    unsigned n = h->path[side][k + 1];
    struct cache_victim v;
    /* The line keeps the monitoring tag it had, not the displacing request's. */
    if (cache_ref(&h->c[n], d->tag, CACHE_F_DIRTY, d->owner, h->mask[n], &v))
        return;
    if (v.valid)
        hier_victim(h, side, k + 1, &v);
    else if (!hier_may_fill(h, n))
        hier_writeback(h, side, k + 1, d); /* level k+1 may not allocate: the data goes on down
                                              rather than vanishing */
}

/* Removes block from every cache above level k (both sides share L2 and LL). */
static void hier_back_invalidate(struct hier *h, unsigned k, uint64_t block)
{
    for (unsigned j = 0; j < k; j++)
        for (unsigned side = 0; side < 2; side++) {
            unsigned u = h->path[side][j];
            struct cache_victim v;
            if ((side == 0 || u != h->path[0][j]) && cache_invalidate(&h->c[u], block, &v)) {
                h->st[u].backinv++;
                if (v.flags & CACHE_F_DIRTY) {
                    h->st[u].writebacks++;
                    h->mem_writes++;
                }
            }
        }
}

/* A valid line left level k of this side's path. */
static void hier_victim(struct hier *h, unsigned side, unsigned k, const struct cache_victim *v)
{
    unsigned idx = h->path[side][k];
    if (k > 0 && h->incl == HIER_INCLUSIVE)
        hier_back_invalidate(h, k, v->tag);
    /* Counted in every mode, exclusive included: writebacks are the dirty
     * lines this cache evicted (hier.h), whether or not the line moves whole. */
    if (v->flags & CACHE_F_DIRTY)
        h->st[idx].writebacks++;
    if (k + 1 < h->depth && h->incl == HIER_EXCLUSIVE) {
        /* The level below holds exactly what falls out of this one; a level
         * the class may not allocate in is passed over, so a dirty line is
         * never dropped. */
        unsigned j = k + 1;
        while (j < h->depth && !hier_may_fill(h, h->path[side][j]))
            j++;
        if (j == h->depth) {
            h->mem_writes += (v->flags & CACHE_F_DIRTY) != 0;
            return;
        }
        /* The other L1 may have put the same line below already (code read as
         * data): merge into that entry instead of making a second copy. */
        for (unsigned m = k + 1; m < h->depth; m++) {
            struct cache *c = &h->c[h->path[side][m]];
            int i = cache_find(c, v->tag);
            if (i >= 0) {
                cache_set(c, cache_index(c, v->tag))[i].flags |= v->flags;
                return;
            }
        }
        struct cache *c = &h->c[h->path[side][j]];
        struct cache_victim v2;
        cache_insert(c, v->tag, v->flags, v->owner, h->mask[h->path[side][j]], &v2);
        if (v2.valid)
            hier_victim(h, side, j, &v2);
        return;
    }
    if (v->flags & CACHE_F_DIRTY)
        hier_writeback(h, side, k, v);
}

/* One line at level k; returns 1 on a hit. A victim of an exclusive L1 is
 * left in *held: it may go down only after the levels below were looked up. */
static int hier_line(struct hier *h, unsigned side, unsigned k, uint64_t block, unsigned dirty,
                     struct cache_victim *held)
{
    unsigned idx = h->path[side][k];
    struct cache *c = &h->c[idx];
    struct cache_victim v;
    if (k > 0 && h->incl == HIER_EXCLUSIVE) {
        /* The line moves up into L1, the only level an exclusive miss fills
         * (the level just above may be an L2 that never took it in); keep its
         * dirt. Where L1 could not allocate (mask), it stays here. */
        struct cache *up = &h->c[h->path[side][0]];
        int i = cache_find(up, block);
        int hit = i < 0 ? cache_ref(c, block, 0, h->owner, 0, &v) : cache_invalidate(c, block, &v);
        if (!hit) {
            h->mem_reads += k + 1 == h->depth;
            return 0;
        }
        if (i >= 0 && (v.flags & CACHE_F_DIRTY))
            cache_set(up, cache_index(up, block))[i].flags |= CACHE_F_DIRTY;
        return 1;
    }
    int hit = cache_ref(c, block, dirty, h->owner, h->mask[idx], &v);
    if (!hit) {
        h->mem_reads += k + 1 == h->depth;
        if (v.valid && h->incl == HIER_EXCLUSIVE)
            *held = v;
        else if (v.valid)
            hier_victim(h, side, k, &v);
    }
    return hit;
}

unsigned hier_access_slow(struct hier *h, unsigned kind, uint64_t addr, uint32_t size)
{
    unsigned side = kind != HIER_IFETCH;
    unsigned cls = kind == HIER_IFETCH ? HIER_CI : kind == HIER_STORE ? HIER_CW : HIER_CR;
    unsigned dirty = (kind == HIER_STORE || kind == HIER_MODIFY) ? CACHE_F_DIRTY : 0;
    uint32_t n = size - 1 < h->clamp ? size : (size ? h->clamp : 1);
    uint64_t last = addr + n - 1;
    /* Exclusive L1 victims, inserted below once the lookups are done: put in
     * first, one could evict the very line this access is about to find there. */
    struct cache_victim held[2] = {{.valid = 0}, {.valid = 0}};
    unsigned k = 0;
    for (; k < h->depth; k++) {
        unsigned idx = h->path[side][k];
        unsigned bits = h->c[idx].line_bits;
        uint64_t b1 = addr >> bits, b2 = last >> bits;
        h->st[idx].ref[cls]++;
        /* Both lines are always looked up: each lookup changes replacement state. */
        int hit = hier_line(h, side, k, b1, dirty, &held[0]);
        if (b2 != b1)
            hit &= hier_line(h, side, k, b2, dirty, &held[1]);
        if (hit)
            break;
        h->st[idx].miss[cls]++;
        dirty = 0; /* lower levels are filled clean; only writebacks dirty them */
    }
    for (unsigned i = 0; i < 2; i++)
        if (held[i].valid)
            hier_victim(h, side, 0, &held[i]);
    return k;
}
