/* A set-associative cache: geometry, lines and one lookup-and-fill step.
 *
 * Tags are block numbers (address >> log2(line)), as in cachegrind, so the
 * set index and the tag come from one shift. Lines carry the monitoring tag
 * ("owner") of the request that filled them, for occupancy monitoring. */
#ifndef QOSIM_SIM_CACHE_H
#define QOSIM_SIM_CACHE_H

#include "repl.h"
#include "slice.h"
#include "util/err.h"

#include <stdint.h>

#define CACHE_TAG_INVALID UINT64_MAX
#define CACHE_MAX_ASSOC   256 /* the way index is a byte */
#define CACHE_MIN_LINE    16  /* cachegrind's minimum: an instruction spans at most two lines */

/* CACHE_F_PF: filled by a hardware prefetch and not yet used by a demand
 * request (sim/mach.c counts it useful then). */
enum { CACHE_F_DIRTY = 1, CACHE_F_PF = 2 };

/* 16 bytes per simulated line, everything included. */
struct cache_line {
    uint64_t tag;
    uint16_t owner; /* monitoring tag of the filling request */
    uint8_t way;    /* physical way of this entry */
    uint8_t flags;  /* CACHE_F_* */
    uint8_t rrpv;   /* SRRIP re-reference prediction value */
    uint8_t pad[3];
};
_Static_assert(sizeof(struct cache_line) == 16, "line metadata must stay within 16 bytes");

struct cache_geom {
    uint64_t size; /* bytes */
    uint32_t assoc;
    uint32_t line;      /* bytes */
    uint32_t slices;    /* 0 or 1: unsliced; else size is split into this many slices of
                           size / slices each (slice.h) */
    uint8_t slice_hash; /* enum slice_hash */
};

/* What a fill displaced: the hierarchy writes it back or back-invalidates it. */
struct cache_victim {
    uint64_t tag;
    uint16_t owner;
    uint8_t flags;
    uint8_t valid;
};

struct cache {
    char name[8];
    struct cache_geom g;
    uint32_t sets, set_mask, line_bits; /* sets in all; set_mask: of the sets of one slice */
    uint32_t slices;                    /* 1: unsliced */
    uint8_t slice_hash;
    uint64_t all_ways; /* mask of every way that exists (first 64) */
    const struct repl_ops *repl;
    int lru;                  /* repl == &repl_lru: a hit on the MRU entry is a no-op */
    int memo;                 /* the policy keeps a repeat-hit memo (repl.h) */
    struct cache_line *lines; /* sets * assoc entries, set-major */
    uint64_t *set_state;      /* one word per set for policies with set state */
    uint16_t *nvalid;         /* valid entries per set: a full set skips the search for an
                                 empty way, which after warm-up every fill would make */
    uint32_t rng, psel;       /* policy state of the whole cache: a random generator, a
                                 set-dueling selector (repl_qlru.c) */
};

/* Parses cachegrind's "SIZE,ASSOC,LINE" (decimal bytes). */
int cache_geom_parse(const char *s, struct cache_geom *g, struct err *e);
/* Checks a geometry as cachegrind does, plus qosim's own limits. */
int cache_geom_check(const struct cache_geom *g, struct err *e);

int cache_init(struct cache *c, const char *name, const struct cache_geom *g,
               const struct repl_ops *repl, struct err *e);
void cache_free(struct cache *c);
/* Empties every line and resets policy state. */
void cache_reset(struct cache *c);

static inline struct cache_line *cache_set(const struct cache *c, uint32_t s)
{
    return &c->lines[(uint64_t)s * c->g.assoc];
}

/* The set block maps to: its slice's first set plus the set within the
 * slice, which comes from the address bits as in an unsliced cache. */
static inline uint32_t cache_index(const struct cache *c, uint64_t block)
{
    uint32_t s = (uint32_t)block & c->set_mask;
    if (c->slices > 1)
        s += slice_of(c->slice_hash, c->slices, block, c->line_bits) * (c->set_mask + 1);
    return s;
}

/* Whether an allocation mask lets a fill use way w; ways past the 64th can
 * only be named by the all-ones mask. */
static inline int cache_way_allowed(uint64_t mask, unsigned w)
{
    return w < 64 ? (int)((mask >> w) & 1) : mask == ~0ull;
}

/* Entry index of block in its set, or -1. */
int cache_find(const struct cache *c, uint64_t block);

/* Slow half of cache_ref: the block is not at the MRU position. */
int cache_ref_slow(struct cache *c, uint64_t block, unsigned dirty, uint16_t owner, uint64_t mask,
                   struct cache_victim *v);

/* Looks block up; on a hit updates replacement state, on a miss fills it into
 * a way allowed by mask (no fill when mask is 0: the class may not allocate),
 * reporting any displaced line in *v. dirty marks the line written.
 * Returns 1 on a hit, 0 on a miss. */
static inline int cache_ref(struct cache *c, uint64_t block, unsigned dirty, uint16_t owner,
                            uint64_t mask, struct cache_victim *v)
{
    uint32_t s = cache_index(c, block);
    struct cache_line *set = cache_set(c, s);
    v->valid = 0;
    /* Under LRU the MRU entry stays MRU on a hit: the common case costs one compare. */
    if (c->lru && set[0].tag == block) {
        set[0].flags |= dirty;
        return 1;
    }
    /* Elsewhere a hit the policy has marked as changing nothing. */
    if (c->memo) {
        uint64_t m = c->set_state[s] >> CACHE_MEMO_SHIFT;
        if (m && set[m - 1].tag == block) {
            set[m - 1].flags |= dirty;
            return 1;
        }
    }
    return cache_ref_slow(c, block, dirty, owner, mask, v);
}

/* Inserts block (known absent) as a fill would; for exclusive levels and writebacks. */
void cache_insert(struct cache *c, uint64_t block, unsigned flags, uint16_t owner, uint64_t mask,
                  struct cache_victim *v);
/* Removes block if present; returns 1 and its state in *v if it was there. */
int cache_invalidate(struct cache *c, uint64_t block, struct cache_victim *v);

#endif
