/* libFuzzer harness for cache_geom_parse (src/sim/cache/cache.c) and the hierarchy
 * built from what it accepts (src/sim/cache/hier.c).
 *
 * The input, NUL-terminated, is parsed as cachegrind's "SIZE,ASSOC,LINE".
 * A refusal must be -QOSIM_EGEOM with a message; an acceptance must obey
 * every rule of the geometry, and then a hierarchy with that geometry at
 * every level is built for each replacement policy (and, for small caches,
 * each inclusion mode, with and without L2 and writeback propagation), takes
 * a hundred accesses and is freed: nothing may crash or leak, and the
 * statistics must add up. */
#include "sim/cache/cache.h"
#include "sim/cache/hier.h"
#include "util/bits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_check.h"
#include "util/rng.h"

/* Caches up to this many lines get every configuration; up to the second
 * bound one per policy; bigger ones (qosim allows 2^24 lines, 256 MiB each)
 * are only parsed: filling four of them per input would stall the fuzzer. */
#define FZ_ALL_CONFIGS_LINES (1u << 9)
#define FZ_BUILD_LINES       (1u << 14)
#define FZ_ACCESSES          100

static struct rng rng_s; /* seeded from each input */

/* Exactly three fields of decimal digits, and their values. */
static int plain_fields(const char *s, uint64_t v[3])
{
    for (int f = 0; f < 3; f++) {
        if (*s < '0' || *s > '9')
            return 0;
        char *end;
        v[f] = strtoull(s, &end, 10);
        s = end;
        if (*s != (f < 2 ? ',' : '\0'))
            return 0;
        s++;
    }
    return 1;
}

static void run_hier(const struct cache_geom *g, const struct repl_ops *repl, int has_l2,
                     enum hier_incl incl, int wb)
{
    struct hier_config cfg = {.has_l2 = has_l2, .repl = repl, .incl = incl, .wb_propagate = wb};
    for (int i = 0; i < HIER_NCACHE; i++)
        cfg.geom[i] = *g;
    struct hier h;
    struct err e = {0};
    int rc = hier_init(&h, &cfg, &e);
    const char *why = repl->check ? repl->check(g->assoc) : NULL;
    if (rc) {
        FZ_CHECK(rc == -QOSIM_EGEOM && why && e.code == rc && strstr(e.msg, why),
                 "hier_init refused %s: %d %s", repl->name, rc, e.msg);
        return;
    }
    FZ_CHECK(!why, "policy %s accepted assoc %u: %s", repl->name, g->assoc, why);
    FZ_CHECK(h.depth == (has_l2 ? 3u : 2u), "depth %u", h.depth);

    uint64_t n[2] = {0, 0};
    for (int i = 0; i < FZ_ACCESSES; i++) {
        uint64_t x = rng_next(&rng_s);
        unsigned kind = (unsigned)(x & 3);
        uint64_t addr;
        switch ((x >> 2) & 7) {
        case 0: /* anywhere */
            addr = rng_next(&rng_s);
            break;
        case 1: /* at the end of the address space: a straddle wraps */
            addr = UINT64_MAX - (x >> 8) % (2 * g->line);
            break;
        case 2: /* the last bytes of a line */
            addr = ((x >> 8) % (4 * g->size)) | (g->line - 1);
            break;
        default: /* enough distinct lines to evict */
            addr = (x >> 8) % (4 * g->size);
        }
        static const uint32_t fixed[] = {0, 1, 2, 4, 8, 16, UINT32_MAX};
        uint32_t size = (x >> 5) & 1 ? fixed[(x >> 6) % 7] : (uint32_t)((x >> 9) % (3 * g->line));
        unsigned level = hier_access(&h, kind, addr, size);
        FZ_CHECK(level <= h.depth, "level %u of %u", level, h.depth);
        n[kind != HIER_IFETCH]++;
    }

    /* Every access is one reference at L1; a level sees the misses of the
     * levels above it. */
    uint64_t ref[HIER_NCACHE] = {0}, miss[HIER_NCACHE] = {0};
    for (int c = 0; c < HIER_NCACHE; c++)
        for (int k = 0; k < HIER_NCLASS; k++) {
            FZ_CHECK(h.st[c].miss[k] <= h.st[c].ref[k], "%s: more misses than references",
                     hier_cache_name[c]);
            ref[c] += h.st[c].ref[k];
            miss[c] += h.st[c].miss[k];
        }
    FZ_CHECK(ref[HIER_L1I] == n[0] && ref[HIER_L1D] == n[1], "L1 references %llu %llu of %llu %llu",
             (unsigned long long)ref[HIER_L1I], (unsigned long long)ref[HIER_L1D],
             (unsigned long long)n[0], (unsigned long long)n[1]);
    uint64_t l1miss = miss[HIER_L1I] + miss[HIER_L1D];
    if (has_l2) {
        FZ_CHECK(ref[HIER_L2] == l1miss && ref[HIER_LL] == miss[HIER_L2], "L2/LL references");
    } else {
        FZ_CHECK(ref[HIER_L2] == 0 && ref[HIER_LL] == l1miss, "LL references");
    }
    hier_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FZ_CHECK(s, "out of memory");
    memcpy(s, data, size);
    s[size] = '\0';
    struct cache_geom g;
    memset(&g, 0xa5, sizeof g);
    struct err e = {0};
    int rc = cache_geom_parse(s, &g, &e);
    uint64_t v[3];
    int plain = plain_fields(s, v);
    if (rc) {
        FZ_CHECK(rc == -QOSIM_EGEOM && e.code == rc && e.msg[0], "refusal %d \"%s\"", rc, e.msg);
        free(s);
        return 0;
    }

    /* What was accepted is what was written, and a geometry cachegrind takes. */
    FZ_CHECK(plain && v[0] == g.size && v[1] == g.assoc && v[2] == g.line,
             "accepted \"%s\" as %llu,%u,%u", s, (unsigned long long)g.size, g.assoc, g.line);
    FZ_CHECK(g.assoc >= 1 && g.assoc <= CACHE_MAX_ASSOC, "assoc %u", g.assoc);
    FZ_CHECK(bits_is_pow2(g.line) && g.line >= CACHE_MIN_LINE, "line %u", g.line);
    FZ_CHECK(g.size > g.line && g.size % ((uint64_t)g.line * g.assoc) == 0 &&
                 bits_is_pow2(g.size / g.line / g.assoc),
             "size %llu", (unsigned long long)g.size);
    uint64_t lines = g.size / g.line;
    FZ_CHECK(lines <= (1u << 24) && g.assoc <= lines, "%llu lines", (unsigned long long)lines);
    FZ_CHECK(cache_geom_check(&g, NULL) == 0, "cache_geom_check refuses what parse accepted");

    if (lines <= FZ_BUILD_LINES) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < size; i++)
            h = (h ^ data[i]) * 0x100000001b3ull;
        rng_seed(&rng_s, h, 0);
        for (unsigned p = 0; repl_at(p); p++) {
            if (lines > FZ_ALL_CONFIGS_LINES) {
                run_hier(&g, repl_at(p), 1, (enum hier_incl)(p % 3), (int)(p & 1));
                continue;
            }
            for (int l2 = 0; l2 < 2; l2++)
                for (int incl = HIER_NINE; incl <= HIER_EXCLUSIVE; incl++)
                    for (int wb = 0; wb < 2; wb++)
                        run_hier(&g, repl_at(p), l2, (enum hier_incl)incl, wb);
        }
    }
    free(s);
    return 0;
}
