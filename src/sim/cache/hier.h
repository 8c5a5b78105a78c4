/* A cache hierarchy: split L1 (I and D), optional unified L2, unified LL.
 *
 * An access walks down its path one level at a time with cachegrind's rule:
 * at each level it is one reference that looks up (and fills) every line it
 * touches, at most two, and is one miss if any of them missed; the next level
 * sees it only on a miss. Caches are write-allocate and write-back: stores
 * dirty the L1 line and dirty victims are counted as writebacks. */
#ifndef QOSIM_SIM_HIER_H
#define QOSIM_SIM_HIER_H

#include "cache.h"

enum hier_kind { HIER_IFETCH, HIER_LOAD, HIER_STORE, HIER_MODIFY };
/* Statistics classes: an M (load and store of one address) counts as a read,
 * as in cachegrind. */
enum hier_class { HIER_CI, HIER_CR, HIER_CW, HIER_NCLASS };
enum hier_cache { HIER_L1I, HIER_L1D, HIER_L2, HIER_LL, HIER_NCACHE };
/* How a lower level relates to the levels above it. */
enum hier_incl {
    HIER_NINE,      /* filled on miss, evicts freely (cachegrind) */
    HIER_INCLUSIVE, /* its evictions back-invalidate the levels above */
    HIER_EXCLUSIVE, /* holds only lines evicted from above; a hit moves the line up */
};

struct hier_config {
    struct cache_geom geom[HIER_NCACHE];
    int has_l2;
    const struct repl_ops *repl; /* every level */
    enum hier_incl incl;         /* of L2 and LL */
    int wb_propagate; /* dirty victims write into the next level (else counted only, as cachegrind)
                       */
};

struct hier_stats {
    uint64_t ref[HIER_NCLASS], miss[HIER_NCLASS];
    uint64_t writebacks; /* dirty lines this cache evicted or lost to back-invalidation */
    uint64_t backinv;    /* lines removed because a lower inclusive level evicted them */
};

struct hier {
    struct cache c[HIER_NCACHE];
    struct hier_stats st[HIER_NCACHE];
    uint8_t path[2][3]; /* cache indices from L1 down, instruction and data side */
    unsigned depth;     /* levels on a path: 2 or 3 */
    uint32_t clamp;     /* cachegrind clamps access sizes to the smallest line size */
    enum hier_incl incl;
    int wb_propagate;
    uint16_t owner;                 /* monitoring tag of the current request */
    uint64_t mask[HIER_NCACHE];     /* allocation masks of the current request */
    uint64_t mem_reads, mem_writes; /* lines fetched from and written to memory */
};

/* The one name and meaning of each cache, for messages. */
extern const char *const hier_cache_name[HIER_NCACHE];
extern const char *const hier_incl_name[3];
int hier_incl_parse(const char *s, enum hier_incl *out);

int hier_init(struct hier *h, const struct hier_config *cfg, struct err *e);
void hier_free(struct hier *h);

/* Slow half of hier_access: any level after a miss or a straddle. */
unsigned hier_access_slow(struct hier *h, unsigned kind, uint64_t addr, uint32_t size);

/* Simulates one access; returns the level that served it (0 = L1, depth =
 * memory). */
static inline unsigned hier_access(struct hier *h, unsigned kind, uint64_t addr, uint32_t size)
{
    /* Fast path: a non-straddling hit in an LRU L1 at the MRU position. */
    struct cache *c = &h->c[kind == HIER_IFETCH ? HIER_L1I : HIER_L1D];
    uint64_t b = addr >> c->line_bits;
    uint32_t n = size - 1 < h->clamp ? size : (size ? h->clamp : 1);
    if (c->lru && b == (addr + n - 1) >> c->line_bits) {
        struct cache_line *l = cache_set(c, cache_index(c, b));
        if (l->tag == b) {
            unsigned cls = kind == HIER_IFETCH ? HIER_CI : kind == HIER_STORE ? HIER_CW : HIER_CR;
            h->st[kind == HIER_IFETCH ? HIER_L1I : HIER_L1D].ref[cls]++;
            l->flags |= (kind == HIER_STORE || kind == HIER_MODIFY) ? CACHE_F_DIRTY : 0;
            return 0;
        }
    }
    return hier_access_slow(h, kind, addr, size);
}

#endif
