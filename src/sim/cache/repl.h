/* Replacement policies as ops tables, registered in repl.c.
 *
 * A set is an array of `assoc` entries. Each entry remembers the physical way
 * it occupies, so a policy may keep entries in any order (LRU keeps them in
 * recency order, as cachegrind does) while allocation masks still name ways. */
#ifndef QOSIM_SIM_REPL_H
#define QOSIM_SIM_REPL_H

#include <stdint.h>

struct cache;

struct repl_ops {
    const char *name;
    const char *desc;
    /* NULL if any geometry works, else a reason the geometry is refused. */
    const char *(*check)(uint32_t assoc);
    /* Puts per-line and per-set state in its reset condition. */
    void (*reset)(struct cache *c);
    /* Entry i of set s was hit; returns its index afterwards. */
    unsigned (*hit)(struct cache *c, uint32_t s, unsigned i);
    /* Index of the valid entry to evict among those whose way is in mask. */
    unsigned (*victim)(struct cache *c, uint32_t s, uint64_t mask);
    /* Entry i of set s was just filled; returns its index afterwards. */
    unsigned (*fill)(struct cache *c, uint32_t s, unsigned i);
    /* Entry i of set s was just invalidated; returns its index afterwards. */
    unsigned (*invalidate)(struct cache *c, uint32_t s, unsigned i);
    /* Policy parameters (the QLRU family's, repl_qlru.c); NULL elsewhere. */
    const void *arg;
    /* A fill into a set with empty ways takes the first empty one (else the
     * last, as cachegrind's LRU does). */
    unsigned char empty_first;
    /* The policy keeps a memo in bits 63:56 of the set's set_state word:
     * 1 + the entry a repeated hit would leave exactly as it is (0: none),
     * so cache_ref can serve that hit without calling it (caches of at most
     * CACHE_MEMO_ASSOC ways; the policy's own set state stays below bit 56). */
    unsigned char memo;
};

#define CACHE_MEMO_ASSOC 32
#define CACHE_MEMO_SHIFT 56
#define CACHE_MEMO_KEEP  ((1ull << CACHE_MEMO_SHIFT) - 1)

extern const struct repl_ops repl_lru, repl_plru, repl_srrip;

/* The QLRU family (repl_qlru.c): "qlru_H_M_R_U[_umo]" in Abel and
 * Reineke's notation, and "adaptive_" before such a name for set dueling;
 * NULL for a name that is not one. */
const struct repl_ops *repl_qlru_find(const char *name);

/* The policy called name, or NULL. */
const struct repl_ops *repl_find(const char *name);
/* The n-th registered policy, or NULL past the end (for listing). */
const struct repl_ops *repl_at(unsigned n);

#endif
