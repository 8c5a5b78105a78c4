/* Tree pseudo-LRU: assoc-1 bits per set in a heap-ordered binary tree; each
 * bit points toward the half that was used less recently. Entries never
 * move, so entry i is way i. */
#include "cache.h"

#include "util/bits.h"

static const char *plru_check(uint32_t assoc)
{
    return bits_is_pow2(assoc) && assoc <= 64
               ? NULL
               : "tree-PLRU needs a power-of-two associativity of at most 64";
}

static void plru_reset(struct cache *c)
{
    (void)c; /* all bits zero: every node points left */
}

/* Mask of ways lo..lo+n-1. */
static uint64_t plru_span(unsigned lo, unsigned n)
{
    return bits_mask(n) << lo;
}

/* Points every node on way w's path away from w. Touching w again changes
 * nothing: the memo (repl.h) says so. */
static unsigned plru_touch(struct cache *c, uint32_t s, unsigned w)
{
    uint64_t *bits = &c->set_state[s];
    if (c->memo)
        *bits = (*bits & CACHE_MEMO_KEEP) | (uint64_t)(w + 1) << CACHE_MEMO_SHIFT;
    unsigned node = 1, lo = 0, n = c->g.assoc;
    while (n > 1) {
        n /= 2;
        int right = w >= lo + n;
        if (right) {
            *bits &= ~(1ull << node); /* used the right half: point left */
            lo += n;
        } else {
            *bits |= 1ull << node;
        }
        node = 2 * node + (unsigned)right;
    }
    return w;
}

/* Follows the bits, turning aside where the pointed-to half has no allowed way. */
static unsigned plru_victim(struct cache *c, uint32_t s, uint64_t mask)
{
    uint64_t bits = c->set_state[s]; /* node < 64 and at most assoc - 1: below the memo */
    unsigned node = 1, lo = 0, n = c->g.assoc;
    while (n > 1) {
        n /= 2;
        int right = (int)((bits >> node) & 1);
        if (!(mask & plru_span(right ? lo + n : lo, n)))
            right = !right;
        if (right)
            lo += n;
        node = 2 * node + (unsigned)right;
    }
    return lo;
}

static unsigned plru_keep(struct cache *c, uint32_t s, unsigned i)
{
    (void)c;
    (void)s;
    return i;
}

const struct repl_ops repl_plru = {
    .name = "plru",
    .desc = "tree pseudo-LRU (power-of-two ways, at most 64)",
    .check = plru_check,
    .reset = plru_reset,
    .hit = plru_touch,
    .victim = plru_victim,
    .fill = plru_touch,
    .invalidate = plru_keep,
    .memo = 1,
};
