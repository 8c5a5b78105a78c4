#include "plat.h"

#include "plat_builtin.h"
#include "util/bits.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const plat_level_name[PLAT_NLEVEL] = {"L1I", "L1D", "L2", "L3"};
const char *const plat_scope_name[PLAT_NSCOPE] = {"core", "module", "domain"};
const char *const plat_vendor_name[PLAT_NVENDOR] = {"intel", "amd", "riscv"};
const char *const plat_cbqri_spec_name[2] = {"1.0", "draft-2023"};
static const char *const incl_names[] = {"nine", "inclusive", "victim", "exclusive"};
static const char *const ctl_level_names[] = {"L2", "L3", "memory"};

const char *plat_builtin_name(unsigned i)
{
    for (unsigned k = 0; plat_builtins[k].name; k++)
        if (k == i)
            return plat_builtins[k].name;
    return NULL;
}

static const struct plat_builtin *builtin_find(const char *name)
{
    for (unsigned k = 0; plat_builtins[k].name; k++)
        if (!strcmp(plat_builtins[k].name, name))
            return &plat_builtins[k];
    return NULL;
}

const char *plat_builtin_text(const char *name)
{
    const struct plat_builtin *b = builtin_find(name);
    return b ? b->text : NULL;
}

const char *plat_builtin_list(char *buf, size_t cap)
{
    size_t n = 0;
    if (cap)
        buf[0] = '\0';
    for (unsigned k = 0; plat_builtins[k].name && n < cap; k++) {
        int w = snprintf(buf + n, cap - n, "%s%s", k ? ", " : "", plat_builtins[k].name);
        n += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

static int load_topo(struct plat *p, struct conf *c, struct conf_node *root, struct err *e)
{
    struct conf_node *t = conf_get(root, "topology");
    if (!t)
        return conf_error(c, root, e, "topology: missing section");
    static const char *const keys[6] = {"sockets", "nodes", "domains",
                                        "modules", "cores", "threads"};
    int rc = conf_expect(c, t, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, t, e, keys[0], keys[1], keys[2], keys[3], keys[4], keys[5], NULL);
    struct plat_topo *o = &p->topo;
    uint64_t v[6];
    for (int i = 0; i < 6 && !rc; i++) {
        v[i] = 1;
        rc = conf_u64(c, t, keys[i], i == 0 ? CONF_REQ : CONF_OPT, 1, 64, &v[i], e);
    }
    if (rc)
        return rc;
    /* Each count is at most 64, so the product of all six fits in 64 bits. */
    uint64_t cpus = v[0] * v[1] * v[2] * v[3] * v[4] * v[5];
    if (cpus > PLAT_MAX_CPUS)
        return conf_error(c, t, e, "%llu logical CPUs exceed qosim's limit of %d",
                          (unsigned long long)cpus, PLAT_MAX_CPUS);
    *o = (struct plat_topo){(unsigned)v[0], (unsigned)v[1], (unsigned)v[2],
                            (unsigned)v[3], (unsigned)v[4], (unsigned)v[5]};
    p->nnodes = o->sockets * o->nodes;
    p->ndomains = p->nnodes * o->domains;
    p->nmodules = p->ndomains * o->modules;
    p->ncores = p->nmodules * o->cores;
    p->ncpus = p->ncores * o->threads;
    return 0;
}

/* n's key, or n itself when the key is absent: where a message points. */
static struct conf_node *key_or(struct conf_node *n, const char *key)
{
    struct conf_node *k = conf_get(n, key);
    return k ? k : n;
}

/* The x86 CPU signature, CPUID 1 EAX (SDM vol. 2A, CPUID, "Version
 * Information"; AMD APM vol. 3, CPUID Fn0000_0001_EAX): a family of at most
 * 0xF + 0xFF (the base field saturates at 0xF and the 8-bit extended family
 * adds to it), a model of at most 0xFF (the 4-bit extended model on top of
 * the 4-bit base) and a 4-bit stepping. Software adds the extended model only
 * for family 0xF and up, and on Intel also for family 6, so a model above
 * 0xF needs such a family. A key left out takes the vendor's default (plat.h).
 * RISC-V has no CPUID: check_vendor refuses the keys there. */
static int load_signature(struct plat *p, struct conf *c, struct conf_node *n, struct err *e)
{
    uint64_t fam = PLAT_INTEL_FAMILY, model = PLAT_INTEL_MODEL, step = PLAT_INTEL_STEPPING;
    if (p->vendor == PLAT_AMD) {
        fam = PLAT_AMD_FAMILY;
        model = PLAT_AMD_MODEL;
        step = PLAT_AMD_STEPPING;
    }
    int rc = conf_u64(c, n, "family", CONF_OPT, 1, 0xF + 0xFF, &fam, e);
    if (!rc)
        rc = conf_u64(c, n, "model", CONF_OPT, 0, 0xFF, &model, e);
    if (!rc)
        rc = conf_u64(c, n, "stepping", CONF_OPT, 0, 0xF, &step, e);
    if (rc)
        return rc;
    int ext = fam >= 0xF || (p->vendor == PLAT_INTEL && fam == 6);
    if (p->vendor != PLAT_RISCV && model > 0xF && !ext)
        return conf_error(c, key_or(n, conf_get(n, "model") ? "model" : "family"), e,
                          "model 0x%llX needs CPUID 1's extended model field, which software "
                          "reads only for family %s0xF and up; family is 0x%llX",
                          (unsigned long long)model, p->vendor == PLAT_INTEL ? "6 and " : "",
                          (unsigned long long)fam);
    if (p->vendor == PLAT_RISCV)
        fam = model = step = 0;
    p->core.family = (unsigned)fam;
    p->core.model = (unsigned)model;
    p->core.stepping = (unsigned)step;
    return 0;
}

/* core.prefetch: the hardware prefetchers the part has (sim/cache/pf.h),
 * each `true` (with its defaults), `false` (absent, as when not named) or a
 * map of its parameters. Defaults: l2_stream 20 lines ahead at most, 2
 * requests per lookup (Intel: "can run up to 20 lines ahead", "may issue
 * two prefetch requests on every L2 lookup"), lines beyond 10 ahead and
 * while 16 requests are outstanding into L3 only (project choice: Intel
 * says only "far ahead" and "many outstanding requests"); the L1
 * prefetchers one line each. */
static int load_prefetch(struct plat *p, struct conf *c, struct conf_node *core, struct err *e)
{
    struct pf_cfg *o = &p->core.pf;
    memset(o, 0, sizeof *o);
    for (unsigned k = 0; k < PF_NKIND; k++)
        o->k[k] = (struct pf_params){
            .distance = 20, .degree = k == PF_L2_STREAM ? 2 : 1, .l2_distance = 10, .busy = 16};
    struct conf_node *n = conf_get(core, "prefetch");
    if (!n)
        return 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, pf_kind_name[0], pf_kind_name[1], pf_kind_name[2], pf_kind_name[3],
                       NULL);
    for (unsigned k = 0; k < PF_NKIND && !rc; k++) {
        struct conf_node *m = conf_get(n, pf_kind_name[k]);
        if (!m)
            continue;
        if (m->type != CONF_MAP) {
            int on = 0;
            rc = conf_bool(c, n, pf_kind_name[k], CONF_REQ, &on, e);
            o->present |= (unsigned)on << k;
            continue;
        }
        o->present |= 1u << k;
        struct pf_params *q = &o->k[k];
        uint64_t dist = q->distance, deg = q->degree, l2d = q->l2_distance, busy = q->busy;
        if (k == PF_L2_STREAM)
            rc = conf_keys(c, m, e, "distance", "degree", "l2_distance", "busy", NULL);
        else if (k == PF_L2_ADJ)
            rc = conf_keys(c, m, e, NULL);
        else
            rc = conf_keys(c, m, e, "degree", NULL);
        if (!rc && k == PF_L2_STREAM)
            rc = conf_u64(c, m, "distance", CONF_OPT, 1, 63, &dist, e);
        if (!rc && k != PF_L2_ADJ)
            rc = conf_u64(c, m, "degree", CONF_OPT, 1, 8, &deg, e);
        if (!rc && k == PF_L2_STREAM)
            rc = conf_u64(c, m, "l2_distance", CONF_OPT, 0, dist, &l2d, e);
        if (!rc && k == PF_L2_STREAM)
            rc = conf_u64(c, m, "busy", CONF_OPT, 1, 64, &busy, e);
        if (k == PF_L2_STREAM && !conf_get(m, "l2_distance") && l2d > dist)
            l2d = dist;
        *q = (struct pf_params){.distance = (unsigned)dist,
                                .degree = (unsigned)deg,
                                .l2_distance = (unsigned)l2d,
                                .busy = (unsigned)busy};
    }
    return rc;
}

/* core.fill_buffers and core.l2_queue bound the prefetchers (mach.c, pf_issue): an L1
 * prefetch is not issued while the core's L1D misses in flight fill its
 * fill buffers, an L2 prefetch while its L2 misses in flight fill the L2's
 * queue to the uncore. Defaults: the fill buffers are core.mlp rounded
 * (project choice: the misses a core overlaps are the ones its fill
 * buffers hold; Skylake has 10, Intel's Optimization Reference Manual), the
 * L2 queue 16 (Skylake's superqueue, the same manual; project choice for
 * other parts). At most PF_FLIGHT, the completions a queue keeps. */
static int load_pf_queues(struct plat *p, struct conf *c, struct conf_node *core, struct err *e)
{
    struct pf_cfg *o = &p->core.pf;
    uint64_t fb = (uint64_t)llround(p->core.mlp), sq = 16;
    if (fb > PF_FLIGHT)
        fb = PF_FLIGHT;
    int rc = conf_u64(c, core, "fill_buffers", CONF_OPT, 1, PF_FLIGHT, &fb, e);
    if (!rc)
        rc = conf_u64(c, core, "l2_queue", CONF_OPT, 1, PF_FLIGHT, &sq, e);
    o->fill_buffers = (unsigned)fb;
    o->l2_queue = (unsigned)sq;
    return rc;
}

static int load_core(struct plat *p, struct conf *c, struct conf_node *root, struct err *e)
{
    struct conf_node *n = conf_get(root, "core");
    if (!n)
        return conf_error(c, root, e, "core: missing section");
    struct plat_core *o = &p->core;
    o->mlp = 1;
    o->link = 64;
    uint64_t xlen = 64;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "frequency", "cpi", "mlp", "link", "family", "model", "stepping",
                       "xlen", "smstateen", "prefetch", "fill_buffers", "l2_queue", NULL);
    if (!rc)
        rc = conf_freq(c, n, "frequency", CONF_REQ, 1e6, 100e9, &o->freq, e);
    if (!rc)
        rc = conf_f64(c, n, "cpi", CONF_REQ, 0.05, 100, &o->cpi, e);
    if (!rc)
        rc = conf_f64(c, n, "mlp", CONF_OPT, 1, 64, &o->mlp, e);
    if (!rc)
        rc = conf_f64(c, n, "link", CONF_OPT, 1, 4096, &o->link, e);
    if (!rc)
        rc = load_signature(p, c, n, e);
    if (!rc)
        rc = conf_u64(c, n, "xlen", CONF_OPT, 32, 64, &xlen, e);
    if (!rc && xlen != 32 && xlen != 64)
        rc = conf_error(c, conf_get(n, "xlen"), e, "%llu: SXLEN is 32 or 64",
                        (unsigned long long)xlen);
    if (!rc)
        rc = conf_bool(c, n, "smstateen", CONF_OPT, &o->smstateen, e);
    o->xlen = (unsigned)xlen;
    if (!rc)
        rc = load_prefetch(p, c, n, e);
    if (!rc)
        rc = load_pf_queues(p, c, n, e);
    return rc;
}

static int load_alloc(struct plat_cache *pc, struct conf *c, struct conf_node *n, struct err *e)
{
    struct conf_node *a = conf_get(n, "allocation");
    if (!a)
        return 0;
    int rc = conf_expect(c, a, CONF_MAP, e);
    uint64_t classes = 0, len = pc->geom.assoc, share = 0;
    int cdp = 0, sparse = 0, io = 0;
    if (!rc)
        rc = conf_keys(c, a, e, "classes", "cbm_len", "cdp", "shareable", "sparse", "io", NULL);
    if (!rc)
        rc = conf_u64(c, a, "classes", CONF_REQ, 1, PLAT_MAX_CLASSES, &classes, e);
    if (!rc)
        rc = conf_u64(c, a, "cbm_len", CONF_OPT, 1, 64, &len, e);
    if (!rc)
        rc = conf_bool(c, a, "cdp", CONF_OPT, &cdp, e);
    if (!rc)
        rc = conf_u64(c, a, "shareable", CONF_OPT, 0, UINT64_MAX, &share, e);
    if (!rc)
        rc = conf_bool(c, a, "sparse", CONF_OPT, &sparse, e);
    if (!rc) /* SDCIAE; who may have it: check_amd_qos */
        rc = conf_bool(c, a, "io", CONF_OPT, &io, e);
    if (rc)
        return rc;
    /* Each mask bit stands for a whole number of ways, so a mask confines
     * exactly the capacity it names. */
    if (len > pc->geom.assoc || pc->geom.assoc % len)
        return conf_error(c, conf_get(a, "cbm_len") ? conf_get(a, "cbm_len") : a, e,
                          "cbm_len %llu must divide the %u ways", (unsigned long long)len,
                          pc->geom.assoc);
    if (share & ~bits_mask((unsigned)len))
        return conf_error(c, conf_get(a, "shareable"), e, "0x%llx has bits beyond cbm_len %llu",
                          (unsigned long long)share, (unsigned long long)len);
    pc->alloc = (struct plat_alloc){(unsigned)classes, (unsigned)len, cdp, share, sparse, io};
    return 0;
}

/* caches.L3.io_ways: the ways I/O agents' DMA writes allocate into, as a
 * capacity bitmask of the L3 (cbm_len bits, one per way without
 * allocation control). Intel documents DDIO's writes as allocating into a
 * limited portion of the LLC; its ways are IIO_LLC_WAYS (MSR 0xC8B), 0x600
 * (two ways) by default on the Skylake-SP of Farshin et al., "Reexamining
 * Direct Cache Access to Optimize I/O Intensive Applications for
 * Multi-hundred-gigabit Networks", USENIX ATC 2020, and its ddio-bench
 * artifact. Which bits: any (project choice: IIO_LLC_WAYS is a plain way
 * mask, and SDCIAE's is a CAT mask of whatever the vendor allows). Only
 * the L3 takes it: DMA writes allocate nowhere else. */
static int load_io_ways(struct plat_cache *pc, struct conf *c, struct conf_node *n,
                        enum plat_level l, struct err *e)
{
    struct conf_node *k = conf_get(n, "io_ways");
    if (!k)
        return 0;
    if (l != PLAT_L3)
        return conf_error(c, k, e,
                          "only an L3 takes I/O writes (DMA allocates into the last level "
                          "shared by a domain)%s",
                          conf_get(n->parent, "L3") ? "" : "; this profile has no L3");
    unsigned len = pc->alloc.cbm_len ? pc->alloc.cbm_len : pc->geom.assoc;
    if (len > 64)
        len = 64;
    return conf_u64(c, n, "io_ways", CONF_OPT, 0, bits_mask(len), &pc->io_ways, e);
}

/* The L3's layout (issue 23): caches.L3.inclusion's victim modes and
 * caches.L3.slices / slice_hash. Opt-in: without these keys the L3 is
 * unsliced and nine or inclusive, as before.
 *
 * inclusion: victim (Intel Skylake-SP and later Xeons) or exclusive (AMD
 * Zen). Intel describes the Xeon Scalable L3 as non-inclusive: lines from
 * memory fill the core's L2 (MLC) only, and the L3 mostly holds what the
 * L2s evict (Intel, "Intel Xeon Processor Scalable Family Technical
 * Overview", 2017, "Cache Hierarchy Changes"); AMD's L3 is a victim cache
 * of its complex's L2s, "mostly exclusive": it gives up a line an L3 hit
 * sends to a core unless the line looks shared (AMD, Software Optimization
 * Guide for AMD Family 17h Processors, pub. 55723, its L3 cache section).
 * Both: an L2 eviction, clean or dirty, is inserted into the L3 under the
 * mask of the class of the request that filled it (project choice: whose
 * COS such a fill uses is not published; the filling request's keeps a
 * class's lines in its ways whichever task evicts them), keeping the
 * monitoring tag of that request. On an L3 hit, victim keeps the line in the
 * L3 (project choice: which lines Intel's heuristics keep is not
 * published; keeping them is the inclusive-like side), exclusive moves it
 * to the L2 (project choice: the sharing heuristic is not modelled; lines
 * of one core are never shared).
 *
 * slices: N splits the L3 into N slices of size / N, each with its own
 * sets (size / N / line / ways, a power of two); slice_hash: maurice (2,
 * 4 or 8 slices, the default there) or mix (any count, the default
 * elsewhere), sim/cache/slice.h. */
static int load_l3_layout(struct plat_cache *pc, struct conf *c, struct conf_node *n,
                          enum plat_level l, unsigned *incl, struct err *e)
{
    struct conf_node *ks = conf_get(n, "slices"), *kh = conf_get(n, "slice_hash");
    if (*incl >= 2 && l != PLAT_L3)
        return conf_error(c, conf_get(n, "inclusion"), e,
                          "only an L3 can be a victim cache (of the L2s)");
    if (*incl >= 2) {
        pc->victim = *incl == 2 ? PLAT_VICTIM_KEEP : PLAT_VICTIM_MOVE;
        *incl = HIER_NINE;
    }
    if ((ks || kh) && l != PLAT_L3)
        return conf_error(c, ks ? ks : kh, e, "only an L3 is split into slices");
    uint64_t slices = 1;
    unsigned hash = SLICE_NHASH;
    int rc = conf_u64(c, n, "slices", CONF_OPT, 1, SLICE_MAX, &slices, e);
    if (!rc)
        rc = conf_enum(c, n, "slice_hash", CONF_OPT, slice_hash_name, SLICE_NHASH, &hash, e);
    if (rc)
        return rc;
    if (hash == SLICE_NHASH)
        hash = slices == 2 || slices == 4 || slices == 8 ? SLICE_MAURICE : SLICE_MIX;
    const char *why = slice_check(hash, (uint32_t)slices);
    if (why)
        return conf_error(c, kh ? kh : ks, e, "%s", why);
    pc->geom.slices = (uint32_t)slices;
    pc->geom.slice_hash = (uint8_t)hash;
    return 0;
}

static int load_cache(struct plat *p, struct conf *c, struct conf_node *caches, enum plat_level l,
                      struct err *e)
{
    struct plat_cache *pc = &p->cache[l];
    const char *name = plat_level_name[l];
    struct conf_node *n = conf_get(caches, name);
    if (!n) {
        if (l == PLAT_L3)
            return 0;
        return conf_error(c, caches, e, "%s: missing (L1I, L1D and L2 are required)", name);
    }
    int rc = conf_expect(c, n, CONF_MAP, e);
    uint64_t size = 0, ways = 0, line = 64, lat = 0;
    unsigned scope = l == PLAT_L3 ? PLAT_SCOPE_DOMAIN : PLAT_SCOPE_CORE, incl = HIER_NINE;
    const char *policy = "lru";
    if (!rc)
        rc =
            conf_keys(c, n, e, "size", "ways", "line", "latency", "shared_by", "inclusion",
                      "policy", "monitored", "allocation", "io_ways", "slices", "slice_hash", NULL);
    if (!rc)
        rc = conf_size(c, n, "size", CONF_REQ, 1, UINT64_MAX, &size, e);
    if (!rc)
        rc = conf_u64(c, n, "ways", CONF_REQ, 1, CACHE_MAX_ASSOC, &ways, e);
    if (!rc)
        rc = conf_u64(c, n, "line", CONF_OPT, 16, 4096, &line, e);
    if (!rc)
        rc = conf_u64(c, n, "latency", CONF_REQ, 1, 10000, &lat, e);
    if (!rc)
        rc = conf_enum(c, n, "shared_by", CONF_OPT, plat_scope_name, PLAT_NSCOPE, &scope, e);
    if (!rc)
        rc = conf_enum(c, n, "inclusion", CONF_OPT, incl_names, 4, &incl, e);
    if (!rc)
        rc = conf_str(c, n, "policy", CONF_OPT, &policy, e);
    if (!rc)
        rc = conf_bool(c, n, "monitored", CONF_OPT, &pc->monitored, e);
    if (rc)
        return rc;
    pc->present = 1;
    pc->geom = (struct cache_geom){.size = size, .assoc = (uint32_t)ways, .line = (uint32_t)line};
    if ((rc = load_l3_layout(pc, c, n, l, &incl, e)))
        return rc;
    pc->latency = (unsigned)lat;
    pc->scope = (enum plat_scope)scope;
    pc->incl = (enum hier_incl)incl;
    struct err ge;
    if (cache_geom_check(&pc->geom, &ge))
        return conf_error(c, n, e, "%s", ge.msg);
    pc->repl = repl_find(policy);
    if (!pc->repl)
        return conf_error(c, conf_get(n, "policy"), e,
                          "unknown replacement policy '%s' (lru, plru, srrip, "
                          "qlru_H_M_R_U[_umo], adaptive_qlru_H_M_R_U)",
                          policy);
    const char *why = pc->repl->check ? pc->repl->check(pc->geom.assoc) : NULL;
    if (why)
        return conf_error(c, conf_get(n, "policy"), e, "%s", why);
    /* L1s are private to a core; L2 belongs to a core or a module; L3 to a domain. */
    int ok = l <= PLAT_L1D  ? scope == PLAT_SCOPE_CORE
             : l == PLAT_L2 ? scope != PLAT_SCOPE_DOMAIN
                            : scope == PLAT_SCOPE_DOMAIN;
    if (!ok)
        return conf_error(c, conf_get(n, "shared_by"), e, "%s cannot be shared by a %s", name,
                          plat_scope_name[scope]);
    if (l <= PLAT_L1D && incl != HIER_NINE)
        return conf_error(c, conf_get(n, "inclusion"), e, "an L1 has no level above it");
    rc = load_alloc(pc, c, n, e);
    return rc ? rc : load_io_ways(pc, c, n, l, e);
}

static int load_caches(struct plat *p, struct conf *c, struct conf_node *root, struct err *e)
{
    struct conf_node *n = conf_get(root, "caches");
    if (!n)
        return conf_error(c, root, e, "caches: missing section");
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "L1I", "L1D", "L2", "L3", NULL);
    for (int l = 0; l < PLAT_NLEVEL && !rc; l++)
        rc = load_cache(p, c, n, (enum plat_level)l, e);
    if (rc)
        return rc;
    /* Lines move between levels whole. */
    for (int l = 1; l < PLAT_NLEVEL; l++)
        if (p->cache[l].present && p->cache[l].geom.line != p->cache[0].geom.line)
            return conf_error(c, conf_get(n, plat_level_name[l]), e,
                              "line size %u differs from L1I's %u: every level needs one line size",
                              p->cache[l].geom.line, p->cache[0].geom.line);
    /* Each level down is further away. */
    unsigned l1 = p->cache[PLAT_L1I].latency > p->cache[PLAT_L1D].latency
                      ? p->cache[PLAT_L1I].latency
                      : p->cache[PLAT_L1D].latency;
    if (p->cache[PLAT_L2].latency <= l1)
        return conf_error(c, conf_get(n, "L2"), e, "latency %u must exceed the L1s' %u",
                          p->cache[PLAT_L2].latency, l1);
    if (p->cache[PLAT_L3].present && p->cache[PLAT_L3].latency <= p->cache[PLAT_L2].latency)
        return conf_error(c, conf_get(n, "L3"), e, "latency %u must exceed L2's %u",
                          p->cache[PLAT_L3].latency, p->cache[PLAT_L2].latency);
    return 0;
}

/* memory.slow: CPU-less nodes of slow (CXL-attached) memory, `nodes` per
 * DRAM node, each with its own channels, peak and latency. A slow node is
 * local to the DRAM node it attaches to: AMD's BMEC tells "slow memory in
 * the local NUMA domain" from "in a non-local NUMA domain" (Linux
 * Documentation/filesystems/resctrl.rst, mbm_total_bytes_config bits 4 and
 * 5), so each belongs to one. Per DRAM node rather than per socket is a
 * project choice: it gives every slow node exactly one home, whatever the
 * nodes per socket. */
static int load_slow(struct plat *p, struct conf *c, struct conf_node *mem, struct err *e)
{
    struct conf_node *n = conf_get(mem, "slow");
    struct plat_slow *o = &p->slow;
    *o = (struct plat_slow){0};
    p->nslow = 0;
    if (!n)
        return 0;
    uint64_t nodes = 1, ch = 1;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "nodes", "channels", "peak", "latency", NULL);
    if (!rc)
        rc = conf_u64(c, n, "nodes", CONF_OPT, 1, PLAT_MAX_MEM_NODES - 1, &nodes, e);
    if (!rc)
        rc = conf_u64(c, n, "channels", CONF_OPT, 1, 64, &ch, e);
    if (!rc)
        rc = conf_rate(c, n, "peak", CONF_REQ, 1e6, 1e13, &o->peak, e);
    if (!rc)
        rc = conf_time(c, n, "latency", CONF_REQ, 1e-10, 1e-5, &o->latency, e);
    if (rc)
        return rc;
    if (p->nnodes * (1 + nodes) > PLAT_MAX_MEM_NODES)
        return conf_error(c, conf_get(n, "nodes") ? conf_get(n, "nodes") : n, e,
                          "%u DRAM nodes with %llu slow nodes each make %llu memory nodes; "
                          "qosim places at most %d (a physical address carries its node in "
                          "6 bits)",
                          p->nnodes, (unsigned long long)nodes,
                          (unsigned long long)(p->nnodes * (1 + nodes)), PLAT_MAX_MEM_NODES);
    o->nodes = (unsigned)nodes;
    o->channels = (unsigned)ch;
    p->nslow = p->nnodes * o->nodes;
    return 0;
}

static int load_mem(struct plat *p, struct conf *c, struct conf_node *root, struct err *e)
{
    struct conf_node *n = conf_get(root, "memory");
    if (!n)
        return conf_error(c, root, e, "memory: missing section");
    struct plat_mem *o = &p->mem;
    uint64_t ch = 1;
    o->remote = 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "channels", "peak", "latency", "remote_penalty", "slow", NULL);
    if (!rc)
        rc = conf_u64(c, n, "channels", CONF_REQ, 1, 64, &ch, e);
    if (!rc)
        rc = conf_rate(c, n, "peak", CONF_REQ, 1e6, 1e13, &o->peak, e);
    if (!rc)
        rc = conf_time(c, n, "latency", CONF_REQ, 1e-10, 1e-5, &o->latency, e);
    if (!rc)
        rc = conf_time(c, n, "remote_penalty", CONF_OPT, 0, 1e-5, &o->remote, e);
    o->channels = (unsigned)ch;
    if (!rc)
        rc = load_slow(p, c, n, e);
    return rc;
}

/* AMD's newer monitoring (APM vol. 2, 19.3.3.2 BMEC, 19.3.3.3 ABMC): both
 * configure bandwidth events, so they need total or local; ABMC's CtrID
 * field is 5 bits (L3_QOS_ABMC_CFG[52:48]), so at most 32 counters; the
 * by-COS capability is ABMC's. The vendor: check_amd_qos. */
static int load_mon_amd(struct plat_mon *o, struct conf *c, struct conf_node *n, struct err *e)
{
    uint64_t abmc = 0;
    int rc = conf_bool(c, n, "bmec", CONF_OPT, &o->bmec, e);
    if (!rc)
        rc = conf_u64(c, n, "abmc", CONF_OPT, 1, 32, &abmc, e);
    if (!rc)
        rc = conf_bool(c, n, "abmc_by_class", CONF_OPT, &o->abmc_by_class, e);
    o->abmc = (unsigned)abmc;
    if (rc)
        return rc;
    static const char *const keys[] = {"bmec", "abmc"};
    for (unsigned i = 0; i < 2; i++)
        if (conf_get(n, keys[i]) && (i ? o->abmc != 0 : o->bmec) && !o->total && !o->local)
            return conf_error(c, conf_get(n, keys[i]), e,
                              "%s configures bandwidth events, and neither total nor local is "
                              "counted",
                              i ? "ABMC" : "BMEC");
    if (o->abmc_by_class && !o->abmc)
        return conf_error(c, conf_get(n, "abmc_by_class"), e,
                          "counting by COS is a capability of ABMC's counters, and abmc gives "
                          "none");
    return 0;
}

static int load_mon(struct plat *p, struct conf *c, struct conf_node *qos, struct err *e)
{
    struct plat_mon *o = &p->mon;
    *o = (struct plat_mon){.tags = 0, .width = 62, .scale = 64, .sample = 1};
    struct conf_node *n = conf_get(qos, "monitoring");
    if (!n)
        return 0;
    uint64_t tags = 0, width = o->width, scale = o->scale, tracked = 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "ids", "occupancy", "total", "local", "width", "scale", "sample",
                       "tracked", "bmec", "abmc", "abmc_by_class", NULL);
    if (!rc)
        rc = conf_u64(c, n, "ids", CONF_REQ, 1, PLAT_MAX_TAGS, &tags, e);
    if (!rc)
        rc = conf_bool(c, n, "occupancy", CONF_OPT, &o->occupancy, e);
    if (!rc)
        rc = conf_bool(c, n, "total", CONF_OPT, &o->total, e);
    if (!rc)
        rc = conf_bool(c, n, "local", CONF_OPT, &o->local, e);
    if (!rc)
        rc = conf_u64(c, n, "width", CONF_OPT, 8, 62, &width, e);
    if (!rc)
        rc = conf_u64(c, n, "scale", CONF_OPT, 1, 1u << 30, &scale, e);
    if (!rc)
        rc = conf_f64(c, n, "sample", CONF_OPT, 1e-6, 1, &o->sample, e);
    if (!rc) {
        tracked = tags;
        rc = conf_u64(c, n, "tracked", CONF_OPT, 1, PLAT_MAX_TAGS, &tracked, e);
    }
    o->tags = (unsigned)tags;
    o->width = (unsigned)width;
    o->scale = scale;
    o->tracked = (unsigned)tracked;
    if (!rc)
        rc = load_mon_amd(o, c, n, e);
    struct conf_node *t = rc ? NULL : conf_get(n, "tracked");
    if (!t)
        return rc;
    /* A limit on the bandwidth tracker (56375, "Platform QOS Monitoring of L3
     * External Bandwidth"): it tracks at least one RMID per processor of the
     * QoS domain, and never more than there are. */
    unsigned per = p->ncpus / p->ndomains;
    if (!o->total && !o->local)
        return conf_error(c, t, e,
                          "only bandwidth counters are tracked, and neither total "
                          "nor local is counted");
    if (o->tracked > o->tags)
        return conf_error(c, t, e, "%u exceeds the %u ids", o->tracked, o->tags);
    if (o->tracked < per)
        return conf_error(c, t, e,
                          "%u is fewer than the %u logical CPUs of an L3 domain (hardware "
                          "tracks at least one id per processor)",
                          o->tracked, per);
    return 0;
}

/* qos.bandwidth.model, request_delay and request_spacing (kind delay): which
 * model of Intel MBA the limiter is (sim/mem/bw_delay.c). `link` (the
 * default): a throttled class's link rate falls with the delay. `request`:
 * each request leaving L2 waits a delay of its own, request_delay's entry
 * for the throttle value, in cycles. `spacing`: successive requests leaving
 * one core's L2 are request_spacing's cycles apart. Each table has one
 * entry per step (granularity, 2 * granularity, ... max); a value between
 * steps is interpolated, delay 0 adds nothing. */
static const char *const bw_model_names[] = {"link", "request", "spacing"};

/* One table of cycles a throttle step, not decreasing, into at[0..steps]
 * (at[0] = 0 for delay 0). Whole cycles for request_delay (as it always
 * was), any finite number >= 0 for request_spacing. */
static int load_bw_steps(struct conf *c, struct conf_node *t, int whole, unsigned steps,
                         unsigned gran, double at[BW_DELAY_REQ_STEPS + 1], struct err *e)
{
    int rc = conf_expect(c, t, CONF_SEQ, e);
    if (rc)
        return rc;
    if (t->nkids != steps)
        return conf_error(c, t, e,
                          "%u entries for %u throttle steps (%u, %u, ... %u): one per step",
                          t->nkids, steps, gran, 2 * gran, steps * gran);
    at[0] = 0;
    for (unsigned k = 0; k < steps; k++) {
        double v = 0;
        uint64_t u = 0;
        if (whole) {
            rc = conf_node_u64(c, &t->kids[k], 0, 1000000, &u, e);
            v = (double)u;
        } else {
            rc = conf_node_f64(c, &t->kids[k], 0, 1000000, &v, e);
        }
        if (rc)
            return rc;
        if (k && v < at[k])
            return conf_error(c, &t->kids[k], e,
                              "%.10g cycles at %u is less than %.10g at %u: a larger throttle "
                              "value %s no less",
                              v, (k + 1) * gran, at[k], k * gran, whole ? "delays" : "spaces");
        at[k + 1] = v;
    }
    return 0;
}

/* at[0..steps] (cycles at throttle value k * gran) as one entry per delay
 * value 0..99: linear between steps, the last step's beyond max. */
static void bw_steps_expand(const double *at, unsigned steps, unsigned gran,
                            double out[BW_DELAY_REQ_STEPS])
{
    for (unsigned d = 0; d < BW_DELAY_REQ_STEPS; d++) {
        unsigned k = d / gran;
        out[d] = k >= steps ? at[steps] : at[k] + (at[k + 1] - at[k]) * (double)(d % gran) / gran;
    }
}

/* Reads one optional table into out (all 0 when absent). */
static int load_bw_table(struct conf *c, struct conf_node *t, int whole, unsigned max,
                         unsigned gran, double out[BW_DELAY_REQ_STEPS], struct err *e)
{
    double at[BW_DELAY_REQ_STEPS + 1] = {0};
    unsigned steps = max / gran;
    if (t) {
        int rc = load_bw_steps(c, t, whole, steps, gran, at, e);
        if (rc)
            return rc;
    }
    bw_steps_expand(at, steps, gran, out);
    return 0;
}

static int load_bw_model(struct plat_bw *o, struct conf *c, struct conf_node *n, unsigned max,
                         unsigned gran, struct err *e)
{
    unsigned model = 0;
    int rc = conf_enum(c, n, "model", CONF_OPT, bw_model_names, 3, &model, e);
    struct conf_node *rd = conf_get(n, "request_delay"), *rs = conf_get(n, "request_spacing");
    o->req_model = (int)model;
    if (rc)
        return rc;
    if (rd && model != PLAT_MBA_REQUEST)
        return conf_error(c, rd, e, "request_delay needs model: request");
    if (rs && model != PLAT_MBA_SPACING)
        return conf_error(c, rs, e, "request_spacing needs model: spacing");
    if (!rd && model == PLAT_MBA_REQUEST)
        return conf_error(c, n, e, "model: request needs request_delay (cycles per throttle step)");
    if (!rs && model == PLAT_MBA_SPACING)
        return conf_error(c, n, e,
                          "model: spacing needs request_spacing (cycles between requests per "
                          "throttle step)");
    rc = load_bw_table(c, rd, 1, max, gran, o->req_delay, e);
    if (!rc)
        rc = load_bw_table(c, rs, 0, max, gran, o->req_spacing, e);
    return rc;
}

static int load_bw(struct plat *p, struct conf *c, struct conf_node *qos, struct err *e)
{
    struct plat_bw *o = &p->bw;
    *o = (struct plat_bw){.kind = BW_NONE, .classes = 1, .window = 1e-6};
    struct conf_node *n = conf_get(qos, "bandwidth");
    if (!n)
        return 0;
    unsigned kind = 0;
    uint64_t classes = 1, max = 0, gran = 1, nblks = 0, mrbwb = 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    /* Every kind's keys: one of another kind is refused when the kind is
     * known (conf_check_unused), a misspelt one at once. */
    if (!rc)
        rc = conf_keys(c, n, e, "kind", "classes", "max", "granularity", "linear", "min_max",
                       "per_thread", "window", "blocks", "mrbwb", "model", "request_delay",
                       "request_spacing", NULL);
    if (!rc)
        rc = conf_enum(c, n, "kind", CONF_REQ, bw_kind_name + 1, BW_NKIND - 1, &kind, e);
    if (!rc)
        rc = conf_u64(c, n, "classes", CONF_REQ, 1, PLAT_MAX_CLASSES, &classes, e);
    if (rc)
        return rc;
    o->kind = (enum bw_kind)(kind + 1);
    o->classes = (unsigned)classes;
    if (o->kind == BW_DELAY) {
        rc = conf_u64(c, n, "max", CONF_REQ, 1, 99, &max, e);
        if (!rc)
            rc = conf_u64(c, n, "granularity", CONF_OPT, 1, 99, &gran, e);
        if (!rc)
            rc = conf_bool(c, n, "linear", CONF_OPT, &o->linear, e);
        /* Per-thread controls are MBA 3.0's (CPUID.10H.3 ECX[0]); without
         * them, IA32_MBA_CFG comes with more than 8 classes by default:
         * Intel's pqos takes such an MBA to be 2.0 and reads the register
         * (intel-cmt-cat lib/hw_cap.c, hw_cap_mba_discover). */
        if (!rc)
            rc = conf_bool(c, n, "per_thread", CONF_OPT, &o->per_thread, e);
        o->min_max = p->vendor == PLAT_INTEL && classes > 8 && !o->per_thread;
        if (!rc)
            rc = conf_bool(c, n, "min_max", CONF_OPT, &o->min_max, e);
        if (!rc && o->min_max && o->per_thread)
            return conf_error(c, conf_get(n, "min_max"), e,
                              "per-thread MBA (MBA 3.0) has no core-wide min/max choice for "
                              "IA32_MBA_CFG to make");
        if (!rc && max % gran)
            return conf_error(c, conf_get(n, "max"), e,
                              "%llu is not a multiple of granularity %llu", (unsigned long long)max,
                              (unsigned long long)gran);
        if (!rc)
            rc = load_bw_model(o, c, n, (unsigned)max, (unsigned)gran, e);
    } else {
        rc = conf_time(c, n, "window", CONF_OPT, 1e-9, 1e-2, &o->window, e);
        if (!rc && o->kind == BW_RATE)
            rc = conf_u64(c, n, "max", CONF_REQ, 1, 32, &max, e); /* BW_LEN */
        if (!rc && o->kind == BW_SHARE)
            rc = conf_u64(c, n, "blocks", CONF_REQ, 1, 65535, &nblks, e);
        if (!rc && o->kind == BW_SHARE) {
            mrbwb = nblks;
            rc = conf_u64(c, n, "mrbwb", CONF_OPT, 1, nblks, &mrbwb, e);
        }
    }
    o->max = (unsigned)max;
    o->granularity = (unsigned)gran;
    o->nblks = (unsigned)nblks;
    o->mrbwb = (unsigned)mrbwb;
    return rc;
}

/* qos.slow_bandwidth: AMD SMBA, "L3 external slow memory bandwidth
 * enforcement" (CPUID 0x80000020 EBX[2], L3SBE; Linux commit f334f723a63c,
 * "x86/cpufeatures: Add Slow Memory Bandwidth Allocation feature flag"):
 * per L3 domain and class a cap on what the domain reads from slow memory,
 * all slow memory together ("the throttling logic groups all the slow
 * sources together and applies the limit on them as a whole"). Its limits
 * are L3BE's kind (Linux gives SMBA the MBA resource's properties, commit
 * a5b699665580), so the keys are qos.bandwidth's of kind rate. */
static int load_sbw(struct plat *p, struct conf *c, struct conf_node *qos, struct err *e)
{
    struct plat_bw *o = &p->sbw;
    *o = (struct plat_bw){.kind = BW_NONE, .classes = 1, .window = 1e-6};
    struct conf_node *n = conf_get(qos, "slow_bandwidth");
    if (!n)
        return 0;
    uint64_t classes = 1, max = 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "classes", "max", "window", NULL);
    if (!rc)
        rc = conf_u64(c, n, "classes", CONF_REQ, 1, PLAT_MAX_CLASSES, &classes, e);
    if (!rc)
        rc = conf_u64(c, n, "max", CONF_REQ, 1, 32, &max, e); /* BW_LEN */
    if (!rc)
        rc = conf_time(c, n, "window", CONF_OPT, 1e-9, 1e-2, &o->window, e);
    if (rc)
        return rc;
    o->kind = BW_RATE;
    o->classes = (unsigned)classes;
    o->max = (unsigned)max;
    o->granularity = 1;
    return 0;
}

static int load_cbqri_list(struct plat *p, struct conf *c, struct conf_node *cb, const char *key,
                           int bw, struct err *e)
{
    struct conf_node *n = conf_get(cb, key);
    if (!n)
        return 0;
    int rc = conf_expect(c, n, CONF_SEQ, e);
    if (rc)
        return rc;
    if (n->nkids > PLAT_MAX_CTLS)
        return conf_error(c, n, e, "at most %d controllers", PLAT_MAX_CTLS);
    for (unsigned i = 0; i < n->nkids; i++) {
        struct conf_node *m = &n->kids[i];
        struct plat_cbqri_ctl *o = bw ? &p->cbqri_bw[i] : &p->cbqri_cap[i];
        uint64_t base = 0, rcids = 0, mcids = 0, blocks = 0, mrbwb = 0;
        uint64_t stride = PLAT_CBQRI_STRIDE;
        unsigned at = 0;
        rc = conf_expect(c, m, CONF_MAP, e);
        /* Both kinds' keys; frcid and cunits on bandwidth, mrbwb on capacity
         * are refused below. */
        if (!rc)
            rc = conf_keys(c, m, e, "at", "base", "stride", "rcids", "mcids", "blocks", "mrbwb",
                           "frcid", "cunits", NULL);
        if (!rc)
            rc = conf_enum(c, m, "at", CONF_REQ, ctl_level_names, 3, &at, e);
        if (!rc)
            rc = conf_u64(c, m, "base", CONF_REQ, 0, UINT64_MAX, &base, e);
        if (!rc)
            rc = conf_u64(c, m, "rcids", CONF_REQ, 1, PLAT_MAX_CLASSES, &rcids, e);
        if (!rc)
            rc = conf_u64(c, m, "mcids", CONF_REQ, 1, PLAT_MAX_TAGS, &mcids, e);
        if (!rc)
            rc = conf_u64(c, m, "blocks", CONF_REQ, 1, 65535, &blocks, e);
        if (!rc && bw) {
            mrbwb = blocks;
            rc = conf_u64(c, m, "mrbwb", CONF_OPT, 1, blocks, &mrbwb, e);
        }
        if (!rc)
            rc = conf_u64(c, m, "stride", CONF_OPT, 8, 1ull << 32, &stride, e);
        if (!rc && !bw)
            rc = conf_bool(c, m, "frcid", CONF_OPT, &o->frcid, e);
        if (!rc && !bw)
            rc = conf_bool(c, m, "cunits", CONF_OPT, &o->cunits, e);
        if (rc)
            return rc;
        static const char *const cap_only[] = {"frcid", "cunits"};
        for (unsigned k = 0; k < 2; k++)
            if (bw && conf_get(m, cap_only[k]))
                return conf_error(c, conf_get(m, cap_only[k]), e,
                                  "%s is a capacity controller's capability", cap_only[k]);
        if (!bw && conf_get(m, "mrbwb"))
            return conf_error(c, conf_get(m, "mrbwb"), e,
                              "mrbwb is a bandwidth controller's capability");
        if (bw ? at != 2 : at == 2)
            return conf_error(c, conf_get(m, "at"), e, "a %s controller cannot sit at %s",
                              bw ? "bandwidth" : "capacity", ctl_level_names[at]);
        o->level = at == 0 ? PLAT_L2 : at == 1 ? PLAT_L3 : PLAT_NLEVEL;
        if (!bw && !p->cache[o->level].present)
            return conf_error(c, conf_get(m, "at"), e, "the profile has no %s",
                              ctl_level_names[at]);
        o->base = base;
        o->stride = stride;
        o->rcids = (unsigned)rcids;
        o->mcids = (unsigned)mcids;
        o->blocks = (unsigned)blocks;
        o->mrbwb = (unsigned)mrbwb;
    }
    *(bw ? &p->n_cbqri_bw : &p->n_cbqri_cap) = n->nkids;
    return 0;
}

static int load_lwp(struct plat *p, struct conf *c, struct conf_node *qos, struct err *e)
{
    struct conf_node *n = conf_get(qos, "lwp");
    if (!n)
        return 0;
    struct plat_lwp *o = &p->lwp;
    uint64_t ev = 3, lat = 10, minbuf = 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "max_events", "latency_bits", "min_buffer", "data_address",
                       "cache_level", "cache_latency", "branch_prediction", "ip_filter", NULL);
    /* The LWPCB, 40 + 8 bytes per event, has its size in an 8-bit CPUID field. */
    if (!rc)
        rc = conf_u64(c, n, "max_events", CONF_OPT, 1, 26, &ev, e);
    if (!rc)
        rc = conf_u64(c, n, "latency_bits", CONF_OPT, 10, 31, &lat, e);
    /* In CPUID's unit, 32 records; whether it fits the field: check_vendor. */
    if (!rc)
        rc = conf_u64(c, n, "min_buffer", CONF_OPT, 0, UINT32_MAX, &minbuf, e);
    if (!rc)
        rc = conf_bool(c, n, "data_address", CONF_OPT, &o->data_address, e);
    if (!rc)
        rc = conf_bool(c, n, "cache_level", CONF_OPT, &o->cache_level, e);
    if (!rc)
        rc = conf_bool(c, n, "cache_latency", CONF_OPT, &o->cache_latency, e);
    if (!rc)
        rc = conf_bool(c, n, "branch_prediction", CONF_OPT, &o->branch_prediction, e);
    if (!rc)
        rc = conf_bool(c, n, "ip_filter", CONF_OPT, &o->ip_filter, e);
    o->present = 1;
    o->max_events = (unsigned)ev;
    o->latency_bits = (unsigned)lat;
    o->min_buffer = (unsigned)minbuf;
    return rc;
}

static int load_qos(struct plat *p, struct conf *c, struct conf_node *root, struct err *e)
{
    struct conf_node *q = conf_get(root, "qos");
    int rc = q ? conf_expect(c, q, CONF_MAP, e) : 0;
    if (!rc)
        rc = conf_keys(c, q, e, "monitoring", "bandwidth", "slow_bandwidth", "cbqri", "lwp", NULL);
    if (!rc)
        rc = load_mon(p, c, q, e);
    if (!rc)
        rc = load_bw(p, c, q, e);
    if (!rc)
        rc = load_sbw(p, c, q, e);
    struct conf_node *cb = q ? conf_get(q, "cbqri") : NULL;
    if (!rc && cb)
        rc = conf_expect(c, cb, CONF_MAP, e);
    if (!rc && cb)
        rc = conf_keys(c, cb, e, "spec", "mcid_prefix", "capacity", "bandwidth", "busy_cycles",
                       "access_cycles", NULL);
    /* The ratified text unless the profile names the 2023 draft. */
    unsigned spec = PLAT_CBQRI_1_0;
    uint64_t prefix = 0;
    if (!rc && cb)
        rc = conf_enum(c, cb, "spec", CONF_OPT, plat_cbqri_spec_name, 2, &spec, e);
    if (!rc && cb && conf_get(cb, "mcid_prefix"))
        rc = conf_u64(c, cb, "mcid_prefix", CONF_REQ, 0, 12, &prefix, e); /* P: 0..12 */
    p->cbqri_spec = (enum plat_cbqri_spec)spec;
    p->cbqri_rpfx = cb && conf_get(cb, "mcid_prefix") != NULL;
    p->cbqri_p = (unsigned)prefix;
    if (!rc && cb)
        rc = load_cbqri_list(p, c, cb, "capacity", 0, e);
    if (!rc && cb)
        rc = load_cbqri_list(p, c, cb, "bandwidth", 1, e);
    /* Operation latency and MMIO access cost (CBQRI 3.2: operations complete
     * asynchronously; how long they take is the implementation's). */
    uint64_t busy = PLAT_CBQRI_BUSY, access = PLAT_CBQRI_ACCESS;
    if (!rc && cb)
        rc = conf_u64(c, cb, "busy_cycles", CONF_OPT, 0, 1000000000, &busy, e);
    if (!rc && cb)
        rc = conf_u64(c, cb, "access_cycles", CONF_OPT, 0, 1000000, &access, e);
    p->cbqri_busy = (unsigned)busy;
    p->cbqri_access = (unsigned)access;
    if (!rc)
        rc = load_lwp(p, c, q, e);
    if (rc)
        return rc;
    /* Occupancy is only monitored where a cache says so, and only with tags. */
    struct conf_node *caches = conf_get(root, "caches");
    for (int l = 0; l < PLAT_NLEVEL; l++)
        if (p->cache[l].monitored && !p->mon.tags)
            return conf_error(c, conf_get(conf_get(caches, plat_level_name[l]), "monitored"), e,
                              "%s is monitored but qos.monitoring gives no ids",
                              plat_level_name[l]);
    return 0;
}

/* A key of the profile by path, for messages: path is keys separated by '.'. */
static struct conf_node *at(struct conf *c, const char *path)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    struct conf_node *n = c->root;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && n; k = strtok_r(NULL, ".", &save))
        n = n->type == CONF_MAP ? conf_get(n, k) : NULL;
    return n ? n : c->root;
}

/* The i-th entry of qos.cbqri.capacity or .bandwidth, for messages. */
static struct conf_node *ctl_node(struct conf *c, int bw, unsigned i, const char *key)
{
    struct conf_node *l = at(c, bw ? "qos.cbqri.bandwidth" : "qos.cbqri.capacity");
    if (l->type != CONF_SEQ || i >= l->nkids)
        return l;
    struct conf_node *k = conf_get(&l->kids[i], key);
    return k ? k : &l->kids[i];
}

/* Features belong to their vendor's architecture, and the numbers the
 * registers will report must fit the registers' fields. */
static int check_vendor(struct plat *p, struct conf *c, struct err *e)
{
    int x86 = p->vendor != PLAT_RISCV;
    if (p->n_cbqri_cap + p->n_cbqri_bw && x86)
        return conf_error(c, at(c, "qos.cbqri"), e, "CBQRI is RISC-V's; this is an %s profile",
                          plat_vendor_name[p->vendor]);
    if (p->lwp.present && p->vendor != PLAT_AMD)
        return conf_error(c, at(c, "qos.lwp"), e, "LWP is AMD's; this is an %s profile",
                          plat_vendor_name[p->vendor]);
    if (p->lwp.min_buffer > 255) /* CPUID 0x8000001C ECX[23:16], LwpMinBufferSize */
        return conf_error(c, at(c, "qos.lwp.min_buffer"), e,
                          "%u x 32 records do not fit CPUID 0x8000001C's 8-bit LwpMinBufferSize "
                          "field (ECX[23:16])",
                          p->lwp.min_buffer);
    if (p->bw.min_max && p->vendor != PLAT_INTEL)
        return conf_error(c, at(c, "qos.bandwidth.min_max"), e,
                          "IA32_MBA_CFG is Intel's; this is an %s profile",
                          plat_vendor_name[p->vendor]);
    if (p->bw.per_thread && p->vendor != PLAT_INTEL)
        return conf_error(c, at(c, "qos.bandwidth.per_thread"), e,
                          "per-thread MBA is Intel's (CPUID.10H.3 ECX[0]); this is an %s profile",
                          plat_vendor_name[p->vendor]);
    if (x86 && (at(c, "core.xlen") != c->root || at(c, "core.smstateen") != c->root))
        return conf_error(c, at(c, at(c, "core.xlen") != c->root ? "core.xlen" : "core.smstateen"),
                          e, "SXLEN and Smstateen are RISC-V's; this is an %s profile",
                          plat_vendor_name[p->vendor]);
    static const char *const sig[] = {"core.family", "core.model", "core.stepping"};
    for (unsigned i = 0; i < 3 && !x86; i++)
        if (at(c, sig[i]) != c->root)
            return conf_error(c, at(c, sig[i]), e,
                              "a CPU signature is x86's (CPUID 1); this is a riscv profile");
    if (p->mon.tracked < p->mon.tags && p->vendor != PLAT_AMD)
        return conf_error(c, at(c, "qos.monitoring.tracked"), e,
                          "%u is fewer than the %u ids, but only AMD tracks fewer bandwidth "
                          "ids than it has (56375); %s hardware counts every one",
                          p->mon.tracked, p->mon.tags, plat_vendor_name[p->vendor]);
    if (!x86)
        return 0;
    /* CPUID leaves 4 and 0x8000001D count the CPUs sharing a cache in a
     * power of two, and software takes the APIC IDs that differ only below
     * that power to share it (SDM vol. 2A, CPUID leaf 4 EAX[25:14]): the
     * cores of a module must fill such a block of core IDs. */
    if (p->cache[PLAT_L2].scope == PLAT_SCOPE_MODULE && !bits_is_pow2(p->topo.cores))
        return conf_error(c, at(c, "topology.cores"), e,
                          "%u cores per module cannot share an L2 that CPUID describes "
                          "(x86 groups the CPUs of a cache by APIC ID bits: a module needs "
                          "a power-of-two number of cores)",
                          p->topo.cores);
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        if (p->cache[l].alloc.cbm_len > 32) /* CPUID.10H EAX[4:0] holds length - 1 */
            return conf_error(c,
                              at(c, l == PLAT_L2 ? "caches.L2.allocation.cbm_len"
                                                 : "caches.L3.allocation.cbm_len"),
                              e, "%u bits do not fit CPUID.10H's 5-bit length field",
                              p->cache[l].alloc.cbm_len);
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++)
        if (p->cache[l].alloc.cdp && p->cache[l].alloc.classes % 2) /* CDP pairs the masks */
            return conf_error(c,
                              at(c, l == PLAT_L2 ? "caches.L2.allocation.classes"
                                                 : "caches.L3.allocation.classes"),
                              e, "%u classes cannot be paired into code and data masks (CDP)",
                              p->cache[l].alloc.classes);
    if (p->vendor == PLAT_INTEL && p->mon.tags && p->mon.width < 24)
        return conf_error(c, at(c, "qos.monitoring.width"), e,
                          "Intel counters are at least 24 bits (CPUID.0FH.1 EAX is width - 24)");
    if (p->mon.tags > 1024) /* IA32_PQR_ASSOC.RMID is bits 9:0 */
        return conf_error(c, at(c, "qos.monitoring.ids"), e,
                          "%u RMIDs do not fit PQR_ASSOC's 10-bit RMID field", p->mon.tags);
    if (p->bw.kind == BW_SHARE)
        return conf_error(c, at(c, "qos.bandwidth.kind"), e,
                          "reserved shares are CBQRI's; x86 limits by delay or rate");
    return 0;
}

/* BMEC, ABMC and SDCIAE are AMD's (APM vol. 2, 19.3.3.2, 19.3.3.3, 19.4.7;
 * CPUID 0x80000020), SDCIAE the L3's, and it confines I/O to the mask of
 * the highest COS, so it needs L3 allocation (it sits in its map). */
static int check_amd_qos(struct plat *p, struct conf *c, struct err *e)
{
    static const char *const keys[] = {"qos.monitoring.bmec", "qos.monitoring.abmc",
                                       "qos.monitoring.abmc_by_class", "caches.L3.allocation.io"};
    const int on[] = {p->mon.bmec, p->mon.abmc != 0, p->mon.abmc_by_class,
                      p->cache[PLAT_L3].alloc.io};
    for (unsigned i = 0; i < sizeof keys / sizeof *keys; i++)
        if (on[i] && p->vendor != PLAT_AMD)
            return conf_error(c, at(c, keys[i]), e,
                              "%s is AMD's (CPUID 0x80000020); this is an %s profile",
                              i == 3   ? "SDCIAE"
                              : i == 0 ? "BMEC"
                                       : "ABMC",
                              plat_vendor_name[p->vendor]);
    if (p->cache[PLAT_L2].alloc.io)
        return conf_error(c, at(c, "caches.L2.allocation.io"), e,
                          "SDCI allocation enforcement is the L3's (APM vol. 2, 19.4.7)");
    return 0;
}

/* Where a controller's instances sit. The draft places each register
 * block at a 4 KiB-aligned range a multiple of 4 KiB long (ch. 1); 1.0
 * asks only for an 8-byte aligned start (qos_intro), so instances may be
 * packed as tightly as their registers: capacity 48 bytes with cc_cunits
 * (offset 32 + BMW/8, NCBLKS <= 64 here), bandwidth 40. In RCID-prefixed
 * mode every effective MCID, RCID << P | (MCID & (2^P - 1)), must name a
 * counter the controller has. */
static int check_place(const struct plat *p, struct conf *c, const struct plat_cbqri_ctl *k, int bw,
                       unsigned i, struct err *e)
{
    int draft = p->cbqri_spec == PLAT_CBQRI_DRAFT;
    uint64_t align = draft ? 4096 : 8, regs = draft ? 4096 : bw ? 40 : 48;
    if (k->base % align)
        return conf_error(c, ctl_node(c, bw, i, "base"), e,
                          "0x%llx is not %s aligned (CBQRI %s register blocks are)",
                          (unsigned long long)k->base, draft ? "4 KiB" : "8-byte",
                          plat_cbqri_spec_name[p->cbqri_spec]);
    if (k->stride % align || k->stride < regs)
        return conf_error(c, ctl_node(c, bw, i, "stride"), e, "%llu: instances are %s (CBQRI %s)",
                          (unsigned long long)k->stride,
                          draft ? "a multiple of 4 KiB apart"
                          : bw  ? "at least 40 bytes apart, a multiple of 8"
                                : "at least 48 bytes apart, a multiple of 8",
                          plat_cbqri_spec_name[p->cbqri_spec]);
    if (p->cbqri_rpfx && ((uint64_t)k->rcids << p->cbqri_p) > k->mcids)
        return conf_error(c, at(c, "qos.cbqri.mcid_prefix"), e,
                          "P %u: %u RCIDs << %u name effective MCIDs up to %llu, but the "
                          "controller has %u MCIDs",
                          p->cbqri_p, k->rcids, p->cbqri_p,
                          ((unsigned long long)k->rcids << p->cbqri_p) - 1, k->mcids);
    return 0;
}

/* On RISC-V the QoS resources are the CBQRI controllers: each level with
 * allocation control has a capacity controller whose sizes are the level's,
 * memory bandwidth control is the bandwidth controller's, and no two
 * controllers' register blocks overlap. */
static int check_cbqri(struct plat *p, struct conf *c, struct err *e)
{
    if (p->vendor != PLAT_RISCV)
        return 0;
    if (p->cbqri_spec == PLAT_CBQRI_DRAFT && at(c, "qos.cbqri.mcid_prefix") != c->root)
        return conf_error(c, at(c, "qos.cbqri.mcid_prefix"), e,
                          "RCID-prefixed MCIDs are CBQRI 1.0's; the 2023 draft has none");
    if (p->core.smstateen && p->cbqri_spec == PLAT_CBQRI_DRAFT)
        return conf_error(c, at(c, "core.smstateen"), e,
                          "mstateen0 bit 55 gates Ssqosid's srmcfg (CBQRI 1.0); the 2023 draft's "
                          "sqoscfg has no such control");
    struct span {
        uint64_t lo, hi;
        int bw;
        unsigned i;
    } s[2 * PLAT_MAX_CTLS];
    unsigned ns = 0;
    for (unsigned i = 0; i < p->n_cbqri_cap; i++) {
        const struct plat_cbqri_ctl *k = &p->cbqri_cap[i];
        const struct plat_cache *pc = &p->cache[k->level];
        for (unsigned j = 0; j < i; j++)
            if (p->cbqri_cap[j].level == k->level)
                return conf_error(c, ctl_node(c, 0, i, "at"), e,
                                  "%s already has a capacity controller",
                                  plat_level_name[k->level]);
        if (!pc->alloc.classes || pc->alloc.classes != k->rcids)
            return conf_error(c, ctl_node(c, 0, i, "rcids"), e,
                              "%u RCIDs, but caches.%s.allocation has %u classes", k->rcids,
                              plat_level_name[k->level], pc->alloc.classes);
        if (k->blocks != pc->alloc.cbm_len)
            return conf_error(c, ctl_node(c, 0, i, "blocks"), e,
                              "NCBLKS %u, but caches.%s.allocation.cbm_len is %u", k->blocks,
                              plat_level_name[k->level], pc->alloc.cbm_len);
        if (k->mcids != p->mon.tags)
            return conf_error(c, ctl_node(c, 0, i, "mcids"), e,
                              "%u MCIDs, but qos.monitoring has %u ids", k->mcids, p->mon.tags);
        if (k->cunits && p->cbqri_spec != PLAT_CBQRI_1_0)
            return conf_error(c, ctl_node(c, 0, i, "cunits"), e,
                              "cc_cunits is CBQRI 1.0's; the 2023 draft has no capacity-unit "
                              "limits");
        int rc = check_place(p, c, k, 0, i, e);
        if (rc)
            return rc;
        s[ns++] = (struct span){k->base, k->base + k->stride * plat_cache_count(p, k->level), 0, i};
    }
    for (int l = PLAT_L2; l < PLAT_NLEVEL; l++) {
        unsigned i = 0;
        while (i < p->n_cbqri_cap && p->cbqri_cap[i].level != (enum plat_level)l)
            i++;
        if (p->cache[l].alloc.classes && i == p->n_cbqri_cap)
            return conf_error(
                c, at(c, l == PLAT_L2 ? "caches.L2.allocation" : "caches.L3.allocation"), e,
                "no CBQRI capacity controller at %s controls this allocation", plat_level_name[l]);
    }
    if (p->n_cbqri_bw > 1)
        return conf_error(c, ctl_node(c, 1, 1, "at"), e,
                          "one bandwidth controller per node's memory is all qosim models");
    if (p->n_cbqri_bw) {
        const struct plat_cbqri_ctl *k = &p->cbqri_bw[0];
        if (p->bw.kind != BW_SHARE)
            return conf_error(c, ctl_node(c, 1, 0, "at"), e,
                              "a bandwidth controller needs qos.bandwidth of kind share");
        if (k->rcids != p->bw.classes || k->blocks != p->bw.nblks || k->mrbwb != p->bw.mrbwb)
            return conf_error(c, ctl_node(c, 1, 0, "rcids"), e,
                              "RCIDs %u, NBWBLKS %u, MRBWB %u differ from qos.bandwidth's "
                              "classes %u, blocks %u, mrbwb %u",
                              k->rcids, k->blocks, k->mrbwb, p->bw.classes, p->bw.nblks,
                              p->bw.mrbwb);
        if (k->mcids != p->mon.tags)
            return conf_error(c, ctl_node(c, 1, 0, "mcids"), e,
                              "%u MCIDs, but qos.monitoring has %u ids", k->mcids, p->mon.tags);
        int rc = check_place(p, c, k, 1, 0, e);
        if (rc)
            return rc;
        s[ns++] = (struct span){k->base, k->base + k->stride * p->nnodes, 1, 0};
    } else if (p->bw.kind != BW_NONE) {
        return conf_error(c, at(c, "qos.bandwidth.kind"), e,
                          "no CBQRI bandwidth controller at memory controls this");
    }
    for (unsigned i = 0; i < ns; i++)
        for (unsigned j = 0; j < i; j++)
            if (s[i].lo < s[j].hi && s[j].lo < s[i].hi)
                return conf_error(c, ctl_node(c, s[i].bw, s[i].i, "base"), e,
                                  "registers 0x%llx-0x%llx overlap another controller's "
                                  "0x%llx-0x%llx",
                                  (unsigned long long)s[i].lo, (unsigned long long)s[i].hi - 1,
                                  (unsigned long long)s[j].lo, (unsigned long long)s[j].hi - 1);
    return 0;
}

/* SMBA is AMD's (CPUID 0x80000020 EBX[2]), limits per L3 domain, and
 * limits what goes to slow memory: the profile must have all three. */
static int check_slow(struct plat *p, struct conf *c, struct err *e)
{
    if (p->sbw.kind == BW_NONE)
        return 0;
    struct conf_node *n = at(c, "qos.slow_bandwidth");
    if (p->vendor != PLAT_AMD)
        return conf_error(c, n, e,
                          "slow memory bandwidth enforcement (SMBA) is AMD's; this is %s %s "
                          "profile",
                          p->vendor == PLAT_RISCV ? "a" : "an", plat_vendor_name[p->vendor]);
    if (!p->cache[PLAT_L3].present)
        return conf_error(c, n, e, "SMBA limits what an L3 domain reads, but there is no L3");
    if (!p->nslow)
        return conf_error(c, n, e, "SMBA limits slow memory, but memory.slow gives none");
    return 0;
}

int plat_from_conf(struct plat *p, struct conf *c, struct err *e)
{
    memset(p, 0, sizeof *p);
    snprintf(p->file, sizeof p->file, "%s", c->file);
    struct conf_node *root = c->root;
    int rc = conf_expect(c, root, CONF_MAP, e);
    const char *name = NULL;
    unsigned vendor = 0;
    /* Every map declares its keys before it is read, so that a misspelt key
     * is reported as itself, not as the required key it was meant to be. */
    if (!rc)
        rc = conf_keys(c, root, e, "name", "vendor", "topology", "core", "caches", "memory", "qos",
                       NULL);
    if (!rc)
        rc = conf_str(c, root, "name", CONF_REQ, &name, e);
    if (!rc)
        rc = conf_enum(c, root, "vendor", CONF_REQ, plat_vendor_name, PLAT_NVENDOR, &vendor, e);
    if (rc)
        return rc;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->vendor = (enum plat_vendor)vendor;
    if ((rc = load_topo(p, c, root, e)) || (rc = load_core(p, c, root, e)) ||
        (rc = load_caches(p, c, root, e)) || (rc = load_mem(p, c, root, e)) ||
        (rc = load_qos(p, c, root, e)))
        return rc;
    if (p->bw.kind == BW_RATE && !p->cache[PLAT_L3].present)
        return conf_error(c, conf_get(conf_get(conf_get(root, "qos"), "bandwidth"), "kind"), e,
                          "rate limits L3-to-memory traffic, but there is no L3");
    if ((rc = check_vendor(p, c, e)) || (rc = check_amd_qos(p, c, e)) ||
        (rc = check_slow(p, c, e)) || (rc = check_cbqri(p, c, e)))
        return rc;
    return conf_check_unused(c, root, e);
}

int plat_is_path(const char *name)
{
    /* Both of YAML's suffixes: a file called board.yml is no shipped name. */
    static const char *const ext[] = {".yaml", ".yml"};
    size_t n = strlen(name);
    if (strchr(name, '/'))
        return 1;
    for (unsigned i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t k = strlen(ext[i]);
        if (n > k && !strcmp(name + n - k, ext[i]))
            return 1;
    }
    return 0;
}

int plat_load(struct plat *p, const char *what, struct err *e)
{
    struct conf c;
    int rc;
    if (plat_is_path(what)) {
        rc = conf_load_file(&c, what, e);
    } else {
        const struct plat_builtin *b = builtin_find(what);
        if (!b) {
            char names[256];
            return err_set(e, -QOSIM_ENOENT, "no platform profile called '%s' (shipped: %s)", what,
                           plat_builtin_list(names, sizeof names));
        }
        rc = conf_load_mem(&c, b->file, b->text, strlen(b->text), e);
    }
    if (rc)
        return rc;
    rc = plat_from_conf(p, &c, e);
    conf_free(&c);
    return rc;
}

void plat_place(const struct plat *p, unsigned cpu, struct plat_place *o)
{
    const struct plat_topo *t = &p->topo;
    unsigned core = cpu / t->threads, module = core / t->cores, domain = module / t->modules,
             node = domain / t->domains;
    *o = (struct plat_place){node / t->nodes, node, domain, module, core, cpu % t->threads};
}

unsigned plat_cache_inst(const struct plat *p, enum plat_level l, unsigned cpu)
{
    struct plat_place pl;
    plat_place(p, cpu, &pl);
    switch (p->cache[l].scope) {
    case PLAT_SCOPE_CORE:
        return pl.core;
    case PLAT_SCOPE_MODULE:
        return pl.module;
    default:
        return pl.domain;
    }
}

unsigned plat_cache_count(const struct plat *p, enum plat_level l)
{
    if (!p->cache[l].present)
        return 0;
    return p->cache[l].scope == PLAT_SCOPE_CORE     ? p->ncores
           : p->cache[l].scope == PLAT_SCOPE_MODULE ? p->nmodules
                                                    : p->ndomains;
}

/* The vendors' rules for a capacity bitmask, checked wherever a mask enters
 * the machine (a scenario's phases, its qos section, the x86 MSRs) so that
 * none of them holds a mask the hardware would refuse. Bits beyond cbm_len
 * are reserved everywhere. Intel: non-zero and contiguous unless CPUID.10H
 * ECX[3] says non-contiguous masks are allowed (SDM 17.19.4.2; the profile's
 * sparse); AMD: any mask, all-zero included, which stops the class from
 * allocating (56375); CBQRI: at least one capacity block (3.5: STATUS 5). */
int plat_mask_ok(const struct plat *p, enum plat_level l, uint64_t v, const char **why)
{
    const struct plat_alloc *a = &p->cache[l].alloc;
    const char *no = NULL;
    if (v & ~bits_mask(a->cbm_len))
        no = "takes only masks within its cbm_len bits";
    else if (p->vendor == PLAT_INTEL && !a->sparse && (!v || ((v + (v & -v)) & v)))
        no = "takes only non-zero masks whose bits are contiguous";
    else if (p->vendor == PLAT_RISCV && !v)
        no = "takes only non-zero masks (a CBQRI capacity allocation needs at least one block)";
    if (why)
        *why = no;
    return !no;
}
