/* The QLRU family of replacement policies, as Abel and Reineke measured and
 * named them on Intel parts (A. Abel and J. Reineke, "nanoBench: A
 * Low-Overhead Tool for Running Microbenchmarks on x86 Systems", ISPASS
 * 2020, sec. VI; their results per part in the nanoBench repository's
 * tools/CacheAnalyzer, whose policy simulator defines the notation, and on
 * uops.info's cache page).
 *
 * Every line has a 2-bit age (the line's rrpv byte; 3 = evict first, also
 * what an empty way has). A policy QLRU_Hxy_Mz_Rr_Uu[_UMO] is:
 *   H  hit promotion, age -> new age: H21 3>2 2>1 1>0, H20 3>2 2>0 1>0,
 *      H11 3>1 2>1 1>0, H10 3>1 2>0 1>0, H00 any>0;
 *   M  the age a filled line gets: M0..M3; MRab inserts at a, and at b one
 *      fill in 16 (a random choice in hardware; here a deterministic
 *      generator per cache, seeded at reset, so a run repeats exactly);
 *   R  the victim: R0 the first empty way, else the first of age 3; R1 the
 *      same, but way 0 when no line is 3; R2 the last empty way, else the
 *      first of age 3;
 *   U  after each access (UMO: only before a miss's replacement, no access
 *      excluded): U0 adds 3 - max(ages) to every age; U1 the same over the
 *      lines other than the accessed one, which it leaves; U2 adds 1 to all
 *      when none is 3; U3 the same to all but the accessed line.
 * R0 and R2 are not combined with U2 or U3 (an age 3 might not exist), as
 * in the simulator's list of variants.
 *
 * Measured (tools/CacheAnalyzer/cacheSim.py and uops.info): Skylake/Coffee
 * Lake L2 QLRU_H00_M1_R2_U1; Cannon Lake and Ice Lake L2 QLRU_H00_M1_R0_U1;
 * Coffee Lake L3 QLRU_H11_M1_R0_U0 in its fixed-policy sets; Ivy Bridge L3
 * QLRU_H11_M1_R1_U2. The L3s of Ivy Bridge and later are adaptive: a few
 * sets always use one policy, a few another, and the rest follow whichever
 * misses less (set dueling). "adaptive_" before a deterministic name is
 * that: the named policy duels with its thrash-resistant variant MR3z (fills
 * at age 3, one in 16 at the named age z).
 *
 * Allocation masks: a victim is chosen only among the allowed ways. When
 * no allowed line is 3 (the U rule guarantees a 3 somewhere in the set, not
 * among the allowed ways), the allowed lines age by 3 - their largest age
 * first (project choice: U0's ageing, confined to the ways the requester
 * may replace, as SRRIP ages; hardware's behaviour under CAT is not
 * published). Entries never move: entry i is way i. */
#include "cache.h"

#include <stdio.h>
#include <string.h>

#define QLRU_MAX 3

struct qlru_par {
    uint8_t hit[4];     /* new age on a hit, by old age */
    uint8_t miss, rare; /* fill age; one fill in 16 gets `rare` (= miss: deterministic) */
    uint8_t r, u, umo;
    uint8_t adaptive; /* duel against MR3<miss> */
};

/* Set dueling (adaptive): which sets lead. On Ice Lake's L3 the sets that
 * always use the base policy are those whose set-index bits 4:0 equal bits
 * 9:5 with bit 1 clear (uops.info lists sets 0, 33, 132, 165, ... 957 in
 * every slice): 16 per 1024. The other policy's leaders are not listed:
 * project choice, bits 4:0 equal the complement of bits 9:5, bit 1 clear,
 * the complement-select of Qureshi et al., "Adaptive Insertion Policies for
 * High Performance Caching", ISCA 2007. One 10-bit selector per cache
 * (project choice: whether slices share one is not published). */
#define QLRU_PSEL_MAX  1023u
#define QLRU_PSEL_INIT 511u /* below the middle: followers start with the base policy */

static int leader(uint32_t s)
{
    uint32_t lo = s & 31, hi = (s >> 5) & 31;
    if (lo & 2)
        return 0;
    return lo == hi ? 1 : lo == (~hi & 31) ? 2 : 0;
}

static const struct qlru_par *par(const struct cache *c)
{
    return c->repl->arg;
}

static void qlru_reset(struct cache *c)
{
    for (uint64_t i = 0; i < (uint64_t)c->sets * c->g.assoc; i++)
        c->lines[i].rrpv = QLRU_MAX;
    c->rng = 0x9e3779b9u; /* any nonzero seed; fixed so runs repeat */
    c->psel = QLRU_PSEL_INIT;
}

/* The U rule over set s after an access to entry i (i = assoc: none). */
static void qlru_update(struct cache *c, struct cache_line *set, unsigned u, unsigned i)
{
    unsigned n = c->g.assoc, mx = 0, has3 = 0;
    for (unsigned k = 0; k < n && mx < QLRU_MAX; k++) { /* a 3 ends the search */
        if (k == i && (u == 1 || u == 3))
            continue;
        mx = set[k].rrpv > mx ? set[k].rrpv : mx;
    }
    has3 = mx >= QLRU_MAX;
    if (u <= 1) {
        if (has3)
            return;
        for (unsigned k = 0; k < n; k++)
            if (!(u == 1 && k == i))
                set[k].rrpv = (uint8_t)(set[k].rrpv + QLRU_MAX - mx);
        return;
    }
    /* U2 and U3: "none is 3" looks at the whole set, the accessed line included. */
    if (u == 3 && i < n && set[i].rrpv >= QLRU_MAX)
        return;
    if (has3)
        return;
    for (unsigned k = 0; k < n; k++)
        if (!(u == 3 && k == i))
            set[k].rrpv++;
}

static unsigned qlru_hit(struct cache *c, uint32_t s, unsigned i)
{
    const struct qlru_par *q = par(c);
    struct cache_line *set = cache_set(c, s);
    set[i].rrpv = q->hit[set[i].rrpv & 3];
    if (!q->umo)
        qlru_update(c, set, q->u, i);
    /* Afterwards a 3 exists elsewhere (every H lowers a 3), so the U rules
     * are idle: a repeated hit changes nothing when H keeps this age. */
    if (c->memo)
        c->set_state[s] =
            q->hit[set[i].rrpv] == set[i].rrpv ? (uint64_t)(i + 1) << CACHE_MEMO_SHIFT : 0;
    return i;
}

static unsigned qlru_victim(struct cache *c, uint32_t s, uint64_t mask)
{
    const struct qlru_par *q = par(c);
    struct cache_line *set = cache_set(c, s);
    unsigned n = c->g.assoc, mx = 0, first = n;
    if (q->umo)
        qlru_update(c, set, q->u, n);
    for (unsigned k = 0; k < n; k++) {
        if (!cache_way_allowed(mask, set[k].way))
            continue;
        if (set[k].rrpv >= QLRU_MAX)
            return k;
        if (first == n)
            first = k;
        mx = set[k].rrpv > mx ? set[k].rrpv : mx;
    }
    if (q->r == 1)
        return first; /* R1: no age 3 among them, the first (way 0 unmasked) */
    unsigned v = n;
    for (unsigned k = 0; k < n; k++)
        if (cache_way_allowed(mask, set[k].way)) {
            set[k].rrpv = (uint8_t)(set[k].rrpv + QLRU_MAX - mx);
            if (v == n && set[k].rrpv >= QLRU_MAX)
                v = k;
        }
    return v;
}

static unsigned qlru_fill(struct cache *c, uint32_t s, unsigned i)
{
    const struct qlru_par *q = par(c);
    struct cache_line *set = cache_set(c, s);
    uint8_t miss = q->miss, rare = q->rare;
    if (q->adaptive) {
        int l = leader(s & c->set_mask);
        if (l == 1 && c->psel < QLRU_PSEL_MAX)
            c->psel++; /* the base policy missed */
        else if (l == 2 && c->psel > 0)
            c->psel--;
        if (l == 2 || (l == 0 && c->psel > QLRU_PSEL_INIT)) {
            miss = QLRU_MAX; /* MR3<miss>: thrash-resistant insertion */
            rare = q->miss;
        }
    }
    if (miss != rare) {
        c->rng ^= c->rng << 13; /* xorshift32 (Marsaglia, J. Stat. Softw. 2003) */
        c->rng ^= c->rng >> 17;
        c->rng ^= c->rng << 5;
        if ((c->rng & 15) == 0)
            miss = rare;
    }
    set[i].rrpv = miss;
    if (!q->umo)
        qlru_update(c, set, q->u, i);
    if (c->memo)
        c->set_state[s] = 0;
    return i;
}

static unsigned qlru_invalidate(struct cache *c, uint32_t s, unsigned i)
{
    cache_set(c, s)[i].rrpv = QLRU_MAX;
    return i;
}

/* ---- names ---- */

#define QLRU_POOL 32 /* distinct QLRU policies one process may name */

static struct {
    struct repl_ops ops;
    struct qlru_par par;
    char name[40];
} pool[QLRU_POOL];
static unsigned npool;

static int digit(const char **p, unsigned max, unsigned *out)
{
    if (**p < '0' || **p > (char)('0' + max))
        return -1;
    *out = (unsigned)(*(*p)++ - '0');
    return 0;
}

/* Parses "qlru_H_M_R_U[_umo]" into *q; 0 or -1. */
static int qlru_parse(const char *s, struct qlru_par *q)
{
    static const uint8_t hits[5][4] = {
        {0, 0, 1, 2}, {0, 0, 0, 2}, {0, 0, 1, 1}, {0, 0, 0, 1}, {0, 0, 0, 0}};
    static const char *const hname[5] = {"h21", "h20", "h11", "h10", "h00"};
    memset(q, 0, sizeof *q);
    if (strncmp(s, "qlru_", 5))
        return -1;
    s += 5;
    int h = -1;
    for (int k = 0; k < 5; k++)
        if (!strncmp(s, hname[k], 3))
            h = k;
    if (h < 0 || s[3] != '_' || s[4] != 'm')
        return -1;
    memcpy(q->hit, hits[h], 4);
    s += 5;
    unsigned a, b, r, u;
    if (*s == 'r') {
        s++;
        if (digit(&s, 3, &a) || digit(&s, 3, &b) || a == b)
            return -1;
    } else if (digit(&s, 3, &a)) {
        return -1;
    } else {
        b = a;
    }
    if (strncmp(s, "_r", 2))
        return -1;
    s += 2;
    if (digit(&s, 2, &r) || strncmp(s, "_u", 2))
        return -1;
    s += 2;
    if (digit(&s, 3, &u))
        return -1;
    if (!strcmp(s, "_umo"))
        q->umo = 1;
    else if (*s)
        return -1;
    if (r != 1 && u >= 2)
        return -1; /* an age 3 might not exist to replace */
    q->miss = (uint8_t)a;
    q->rare = (uint8_t)b;
    q->r = (uint8_t)r;
    q->u = (uint8_t)u;
    return 0;
}

const struct repl_ops *repl_qlru_find(const char *name)
{
    struct qlru_par q;
    int adaptive = !strncmp(name, "adaptive_", 9);
    if (strlen(name) >= sizeof pool[0].name || qlru_parse(name + (adaptive ? 9 : 0), &q))
        return NULL;
    if (adaptive && q.miss != q.rare)
        return NULL; /* the base of a duel is deterministic */
    q.adaptive = (uint8_t)adaptive;
    for (unsigned k = 0; k < npool; k++)
        if (!strcmp(pool[k].name, name))
            return &pool[k].ops;
    if (npool == QLRU_POOL)
        return NULL;
    unsigned k = npool++;
    snprintf(pool[k].name, sizeof pool[k].name, "%s", name);
    pool[k].par = q;
    pool[k].ops = (struct repl_ops){
        .name = pool[k].name,
        .desc = adaptive ? "QLRU, set dueling against its MR3 insertion (Abel and Reineke)"
                         : "quad-age LRU (Abel and Reineke's QLRU notation)",
        .reset = qlru_reset,
        .hit = qlru_hit,
        .victim = qlru_victim,
        .fill = qlru_fill,
        .invalidate = qlru_invalidate,
        .arg = &pool[k].par,
        .empty_first = q.r != 2,
        .memo = 1,
    };
    return &pool[k].ops;
}
