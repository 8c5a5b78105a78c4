#include "cache.h"

#include "util/bits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* qosim's bound on one cache: 2^24 lines, i.e. 256 MiB of line metadata. */
#define CACHE_MAX_LINES (1ull << 24)

static int geom_field(const char **p, uint64_t *out, int last)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (last ? *s != '\0' : *s != ',')
        return -1;
    *p = last ? s : s + 1;
    *out = v;
    return 0;
}

int cache_geom_parse(const char *s, struct cache_geom *g, struct err *e)
{
    uint64_t size, assoc, line;
    const char *p = s;
    if (geom_field(&p, &size, 0) || geom_field(&p, &assoc, 0) || geom_field(&p, &line, 1))
        return err_set(e, -QOSIM_EGEOM,
                       "'%s': expected SIZE,ASSOC,LINE as three decimal numbers of bytes, ways "
                       "and bytes (for example 32768,8,64)",
                       s);
    if (assoc > UINT32_MAX || line > UINT32_MAX)
        return err_set(e, -QOSIM_EGEOM, "'%s': associativity or line size out of range", s);
    *g = (struct cache_geom){.size = size, .assoc = (uint32_t)assoc, .line = (uint32_t)line};
    return cache_geom_check(g, e);
}

int cache_geom_check(const struct cache_geom *g, struct err *e)
{
    unsigned long long size = g->size, assoc = g->assoc, line = g->line;
    if (g->slices > 1) { /* each slice is a cache of its own geometry */
        const char *why = slice_check(g->slice_hash, g->slices);
        if (why)
            return err_set(e, -QOSIM_EGEOM, "%s", why);
        if (size % g->slices)
            return err_set(e, -QOSIM_EGEOM, "size %llu does not split into %u slices", size,
                           g->slices);
        size /= g->slices;
    }
    if (!assoc)
        return err_set(e, -QOSIM_EGEOM, "associativity must be at least 1");
    if (!line)
        return err_set(e, -QOSIM_EGEOM, "line size must be at least 1");
    /* cachegrind's checks, in cachegrind's order. */
    if (size % (line * assoc) || !bits_is_pow2(size / line / assoc))
        return err_set(e, -QOSIM_EGEOM,
                       "size %llu / (line %llu x assoc %llu) is not a power-of-two number of sets",
                       size, line, assoc);
    if (!bits_is_pow2(line))
        return err_set(e, -QOSIM_EGEOM, "line size %llu is not a power of two", line);
    if (line < CACHE_MIN_LINE)
        return err_set(e, -QOSIM_EGEOM,
                       "line size %llu is below %d bytes (an instruction could span three lines)",
                       line, CACHE_MIN_LINE);
    if (size <= line)
        return err_set(e, -QOSIM_EGEOM, "size %llu is not larger than the line size %llu", size,
                       line);
    if (assoc > size / line)
        return err_set(e, -QOSIM_EGEOM, "associativity %llu exceeds size / line = %llu", assoc,
                       size / line);
    if (assoc > CACHE_MAX_ASSOC)
        return err_set(e, -QOSIM_EGEOM, "associativity %llu exceeds qosim's limit of %d ways",
                       assoc, CACHE_MAX_ASSOC);
    if (size / line > CACHE_MAX_LINES)
        return err_set(e, -QOSIM_EGEOM, "%llu lines exceed qosim's limit of %llu lines per cache",
                       size / line, CACHE_MAX_LINES);
    return 0;
}

int cache_init(struct cache *c, const char *name, const struct cache_geom *g,
               const struct repl_ops *repl, struct err *e)
{
    memset(c, 0, sizeof *c);
    int rc = cache_geom_check(g, e);
    if (rc)
        return rc;
    const char *why = repl->check ? repl->check(g->assoc) : NULL;
    if (why)
        return err_set(e, -QOSIM_EGEOM, "%s: policy %s: %s", name, repl->name, why);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->g = *g;
    c->sets = (uint32_t)(g->size / g->line / g->assoc);
    c->slices = g->slices > 1 ? g->slices : 1;
    c->slice_hash = g->slice_hash;
    c->set_mask = c->sets / c->slices - 1;
    c->line_bits = bits_log2(g->line);
    c->all_ways = bits_mask(g->assoc);
    c->repl = repl;
    c->lru = repl == &repl_lru;
    c->memo = repl->memo && g->assoc <= CACHE_MEMO_ASSOC;
    c->lines = malloc((size_t)c->sets * g->assoc * sizeof *c->lines);
    c->set_state = calloc(c->sets, sizeof *c->set_state);
    c->nvalid = calloc(c->sets, sizeof *c->nvalid);
    if (!c->lines || !c->set_state || !c->nvalid) {
        cache_free(c);
        return err_set(e, -QOSIM_ENOMEM, "%s: cannot allocate %llu lines", name,
                       (unsigned long long)c->sets * g->assoc);
    }
    cache_reset(c);
    return 0;
}

void cache_free(struct cache *c)
{
    free(c->lines);
    free(c->set_state);
    free(c->nvalid);
    c->lines = NULL;
    c->set_state = NULL;
    c->nvalid = NULL;
}

void cache_reset(struct cache *c)
{
    for (uint32_t s = 0; s < c->sets; s++) {
        struct cache_line *set = cache_set(c, s);
        for (uint32_t i = 0; i < c->g.assoc; i++)
            set[i] = (struct cache_line){.tag = CACHE_TAG_INVALID, .way = (uint8_t)i};
    }
    memset(c->set_state, 0, c->sets * sizeof *c->set_state);
    memset(c->nvalid, 0, c->sets * sizeof *c->nvalid);
    c->repl->reset(c);
}

/* Entry of block in a set of n entries, or -1: two compares a step, as
 * the scan of a 16-way set for an absent line is the most common search. */
static inline int set_find(const struct cache_line *set, uint32_t n, uint64_t block)
{
    uint32_t i = 0;
    for (; i + 1 < n; i += 2) {
        if (set[i].tag == block)
            return (int)i;
        if (set[i + 1].tag == block)
            return (int)i + 1;
    }
    return i < n && set[i].tag == block ? (int)i : -1;
}

int cache_find(const struct cache *c, uint64_t block)
{
    return set_find(cache_set(c, cache_index(c, block)), c->g.assoc, block);
}

/* Empty ways are used before anything is evicted, as in hardware; the last
 * empty one is taken so that LRU, which keeps empty entries at the bottom,
 * behaves exactly like cachegrind's shift-down insertion, unless the policy
 * takes the first (QLRU's R0 and R1). */
static unsigned cache_pick(struct cache *c, uint32_t s, uint64_t mask)
{
    const struct cache_line *set = cache_set(c, s);
    if (c->nvalid[s] == c->g.assoc)
        return c->repl->victim(c, s, mask);
    if (c->repl->empty_first) {
        for (uint32_t i = 0; i < c->g.assoc; i++)
            if (set[i].tag == CACHE_TAG_INVALID && cache_way_allowed(mask, set[i].way))
                return i;
        return c->repl->victim(c, s, mask);
    }
    for (uint32_t i = c->g.assoc; i-- > 0;)
        if (set[i].tag == CACHE_TAG_INVALID && cache_way_allowed(mask, set[i].way))
            return i;
    return c->repl->victim(c, s, mask);
}

static void cache_fill_at(struct cache *c, uint32_t s, unsigned i, uint64_t block, unsigned flags,
                          uint16_t owner, struct cache_victim *v)
{
    struct cache_line *l = &cache_set(c, s)[i];
    v->valid = l->tag != CACHE_TAG_INVALID;
    c->nvalid[s] += !v->valid;
    v->tag = l->tag;
    v->owner = l->owner;
    v->flags = l->flags;
    l->tag = block;
    l->owner = owner;
    l->flags = (uint8_t)flags;
    c->repl->fill(c, s, i);
}

int cache_ref_slow(struct cache *c, uint64_t block, unsigned dirty, uint16_t owner, uint64_t mask,
                   struct cache_victim *v)
{
    uint32_t s = cache_index(c, block);
    struct cache_line *set = cache_set(c, s);
    v->valid = 0;
    int i = set_find(set, c->g.assoc, block);
    if (i >= 0) {
        set[i].flags |= (uint8_t)dirty;
        c->repl->hit(c, s, (unsigned)i);
        return 1;
    }
    if (mask & c->all_ways)
        cache_fill_at(c, s, cache_pick(c, s, mask), block, dirty, owner, v);
    return 0;
}

void cache_insert(struct cache *c, uint64_t block, unsigned flags, uint16_t owner, uint64_t mask,
                  struct cache_victim *v)
{
    uint32_t s = cache_index(c, block);
    v->valid = 0;
    if (mask & c->all_ways)
        cache_fill_at(c, s, cache_pick(c, s, mask), block, flags, owner, v);
}

int cache_invalidate(struct cache *c, uint64_t block, struct cache_victim *v)
{
    int i = cache_find(c, block);
    v->valid = 0;
    if (i < 0)
        return 0;
    uint32_t s = cache_index(c, block);
    struct cache_line *l = &cache_set(c, s)[i];
    *v = (struct cache_victim){.tag = l->tag, .owner = l->owner, .flags = l->flags, .valid = 1};
    l->tag = CACHE_TAG_INVALID;
    l->flags = 0;
    l->owner = 0;
    c->nvalid[s]--;
    c->repl->invalidate(c, s, (unsigned)i);
    return 1;
}
