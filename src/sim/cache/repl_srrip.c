/* SRRIP-HP with 2-bit re-reference prediction values (Jaleel et al., ISCA
 * 2010): fills predict a long re-reference interval (2), hits a near one (0);
 * the victim is the first allowed way predicted distant (3), ageing the
 * allowed ways until one is. */
#include "cache.h"

#define SRRIP_MAX    3
#define SRRIP_INSERT 2

static void srrip_reset(struct cache *c)
{
    for (uint64_t i = 0; i < (uint64_t)c->sets * c->g.assoc; i++)
        c->lines[i].rrpv = SRRIP_MAX;
}

static unsigned srrip_hit(struct cache *c, uint32_t s, unsigned i)
{
    cache_set(c, s)[i].rrpv = 0;
    return i;
}

static unsigned srrip_fill(struct cache *c, uint32_t s, unsigned i)
{
    cache_set(c, s)[i].rrpv = SRRIP_INSERT;
    return i;
}

static unsigned srrip_invalidate(struct cache *c, uint32_t s, unsigned i)
{
    cache_set(c, s)[i].rrpv = SRRIP_MAX;
    return i;
}

static unsigned srrip_victim(struct cache *c, uint32_t s, uint64_t mask)
{
    struct cache_line *set = cache_set(c, s);
    for (;;) {
        for (unsigned i = 0; i < c->g.assoc; i++)
            if (cache_way_allowed(mask, set[i].way) && set[i].rrpv >= SRRIP_MAX)
                return i;
        for (unsigned i = 0; i < c->g.assoc; i++)
            if (cache_way_allowed(mask, set[i].way))
                set[i].rrpv++;
    }
}

const struct repl_ops repl_srrip = {
    .name = "srrip",
    .desc = "static re-reference interval prediction, 2-bit, hit priority",
    .reset = srrip_reset,
    .hit = srrip_hit,
    .victim = srrip_victim,
    .fill = srrip_fill,
    .invalidate = srrip_invalidate,
};
