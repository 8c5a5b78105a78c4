/* True LRU, kept as cachegrind keeps it: the entries of a set in recency
 * order, most recent first, so a hit on the MRU line changes nothing. */
#include "cache.h"

static void lru_reset(struct cache *c)
{
    (void)c;
}

/* Moves entry i to the front, shifting the more recent ones down. The
 * shifts are loops, not memmove: a set is at most a few dozen lines, and
 * under AddressSanitizer memmove is intercepted by a byte-at-a-time copy
 * that made it a fifth of a sanitized run's time. */
static unsigned lru_to_front(struct cache *c, uint32_t s, unsigned i)
{
    struct cache_line *set = cache_set(c, s);
    if (i) {
        struct cache_line l = set[i];
        for (; i; i--)
            set[i] = set[i - 1];
        set[0] = l;
    }
    return 0;
}

static unsigned lru_victim(struct cache *c, uint32_t s, uint64_t mask)
{
    const struct cache_line *set = cache_set(c, s);
    for (unsigned i = c->g.assoc; i-- > 0;) {
        if (cache_way_allowed(mask, set[i].way))
            return i;
    }
    return c->g.assoc - 1; /* unreachable: the caller checked mask against the ways */
}

/* An emptied line becomes least recent, so it is refilled first. */
static unsigned lru_invalidate(struct cache *c, uint32_t s, unsigned i)
{
    struct cache_line *set = cache_set(c, s);
    unsigned last = c->g.assoc - 1;
    struct cache_line l = set[i];
    for (; i < last; i++)
        set[i] = set[i + 1];
    set[last] = l;
    return last;
}

const struct repl_ops repl_lru = {
    .name = "lru",
    .desc = "true least-recently-used (cachegrind's policy)",
    .reset = lru_reset,
    .hit = lru_to_front,
    .victim = lru_victim,
    .fill = lru_to_front,
    .invalidate = lru_invalidate,
};
