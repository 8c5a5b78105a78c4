/* The tiny machine the machine-level unit tests build from a profile
 * written here (test_mach.c, test_io.c, test_l3layout.c, test_x86.c): 2
 * sockets x 2 modules unless a test says otherwise, a core per module at
 * 1 GHz (a cycle is a nanosecond), cpi 1, mlp 1; L1I and L1D 1 KiB 2-way
 * (8 sets), L2 4 KiB 4-way (16 sets, 64 lines), L3 16 KiB 8-way (32 sets,
 * 256 lines: line k of a task maps to L1 set k % 8, L2 set k % 16, L3 set
 * k % 32), latencies 2, 10 and 30 cycles; memory 2 channels, 64 GB/s,
 * 100 ns, remote +50 ns. What differs between the tests (vendor, topology,
 * the L3's keys, QoS) is in struct tiny_opt.
 *
 * Besides: a machine from any profile's text (test_pf.c and test_mba.c
 * write their own), the lines a tag really holds in a cache (the ground
 * truth the counters are checked against; test_cbqri.c's too), and the
 * line-per-instruction workload the prefetcher and MBA tests run. Include
 * after cmocka.h: errors fail the test. */
#ifndef QOSIM_TESTS_TINY_PLAT_H
#define QOSIM_TESTS_TINY_PLAT_H

#include "sim/mach.h"
#include "sim/scen/plat.h"
#include "sim/wl/wl.h"
#include "util/conf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* What differs between the tests' tiny profiles; 0 or NULL leaves a key
 * out (or keeps the default said). */
struct tiny_opt {
    const char *name;       /* name: (NULL: tiny); the file is <name>.yaml */
    const char *vendor;     /* intel or amd (NULL: intel) */
    const char *topology;   /* the topology map's entries (NULL: "sockets: 2, modules: 2") */
    const char *inclusion;  /* caches.L3.inclusion */
    const char *allocation; /* caches.L3.allocation's entries ("classes: 4, cbm_len: 8") */
    const char *l3;         /* more caches.L3 lines, each "    key: value\n" (io_ways, slices) */
    int local_only;         /* no memory.remote_penalty */
    const char *memory;     /* more memory lines, each "  key: value\n" (slow) */
    const char *monitoring; /* qos.monitoring's entries; with them the L3 is monitored */
    const char *qos;        /* more qos lines, each "  key: value\n" (bandwidth) */
};

/* Appends to buf (len bytes used of cap); a text that does not fit fails
 * the test. */
static inline void tiny_put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void tiny_put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        fail_msg("tiny profile: %zu bytes are too few", cap);
    *len += (size_t)n;
}

/* The profile's text, into buf of cap bytes. */
static inline void tiny_plat_text(char *buf, size_t cap, const struct tiny_opt *o)
{
    size_t n = 0;
    tiny_put(buf, cap, &n,
             "name: %s\n"
             "vendor: %s\n"
             "topology: {%s}\n"
             "core: {frequency: 1GHz, cpi: 1, mlp: 1}\n"
             "caches:\n"
             "  L1I: {size: 1K, ways: 2, latency: 2}\n"
             "  L1D: {size: 1K, ways: 2, latency: 2}\n"
             "  L2: {size: 4K, ways: 4, latency: 10}\n"
             "  L3:\n"
             "    size: 16K\n"
             "    ways: 8\n"
             "    latency: 30\n",
             o->name ? o->name : "tiny", o->vendor ? o->vendor : "intel",
             o->topology ? o->topology : "sockets: 2, modules: 2");
    if (o->inclusion)
        tiny_put(buf, cap, &n, "    inclusion: %s\n", o->inclusion);
    if (o->monitoring)
        tiny_put(buf, cap, &n, "    monitored: true\n");
    if (o->allocation)
        tiny_put(buf, cap, &n, "    allocation: {%s}\n", o->allocation);
    tiny_put(buf, cap, &n, "%s", o->l3 ? o->l3 : "");
    tiny_put(buf, cap, &n, "memory:\n  channels: 2\n  peak: 64GB/s\n  latency: 100ns\n");
    if (!o->local_only)
        tiny_put(buf, cap, &n, "  remote_penalty: 50ns\n");
    tiny_put(buf, cap, &n, "%s", o->memory ? o->memory : "");
    if (o->monitoring || o->qos)
        tiny_put(buf, cap, &n, "qos:\n");
    if (o->monitoring)
        tiny_put(buf, cap, &n, "  monitoring: {%s}\n", o->monitoring);
    tiny_put(buf, cap, &n, "%s", o->qos ? o->qos : "");
}

/* The platform of a profile's text, read as file `file` (error messages
 * name it), or its error in e. */
static inline int text_plat(struct plat *p, const char *file, const char *text, struct err *e)
{
    struct conf c;
    int rc = conf_load_mem(&c, file, text, strlen(text), e);
    if (rc)
        return rc;
    rc = plat_from_conf(p, &c, e);
    conf_free(&c);
    return rc;
}

/* m, from a profile's text, with ntask tasks; or the error in e (e NULL:
 * an error fails the test with its message). */
static inline int text_mach(struct mach *m, const char *file, const char *text, unsigned ntask,
                            struct err *e)
{
    struct err own = {0};
    struct plat p;
    int rc = text_plat(&p, file, text, e ? e : &own);
    if (!rc)
        rc = mach_init(m, &p, ntask, e ? e : &own);
    if (rc && !e)
        fail_msg("%s", own.msg);
    return rc;
}

/* m, from the tiny profile o says, with ntask tasks; errors as text_mach's. */
static inline int tiny_mach(struct mach *m, const struct tiny_opt *o, unsigned ntask, struct err *e)
{
    char text[2048], file[64];
    tiny_plat_text(text, sizeof text, o);
    snprintf(file, sizeof file, "%s.yaml", o->name ? o->name : "tiny");
    return text_mach(m, file, text, ntask, e);
}

/* The lines of instance inst of cache level l whose owner has tag `tag`,
 * each checked to sit in `ways` (a mask of way numbers). */
static inline uint64_t tag_lines(const struct mach *m, enum plat_level l, unsigned inst,
                                 unsigned tag, uint64_t ways)
{
    const struct mach_cache *x = &m->cache[l][inst];
    uint64_t n = 0;
    for (uint64_t i = 0; i < (uint64_t)x->c.sets * x->c.g.assoc; i++) {
        const struct cache_line *ln = &x->c.lines[i];
        if (ln->tag == CACHE_TAG_INVALID || m->owners[ln->owner].tag != tag)
            continue;
        n++;
        if (!((ways >> ln->way) & 1))
            fail_msg("%s: tag %u line in way %u outside mask 0x%llx", plat_level_name[l], tag,
                     ln->way, (unsigned long long)ways);
    }
    return n;
}

/* A synthetic workload (seed `seed`) of which every instruction loads a new
 * 64-byte line (mem_ratio 1, no stores, no branches), over wss bytes in
 * `pattern`'s order; its 256 bytes of code stay in the L1I, so only data
 * misses. */
static inline struct wl *line_wl(enum wl_pattern pattern, uint64_t wss, uint64_t seed)
{
    struct wl_params wp;
    wl_params_default(&wp);
    wp.pattern = pattern;
    wp.wss = wss;
    wp.access = 64;
    wp.mem_ratio = 1;
    wp.write_ratio = 0;
    wp.branch_ratio = 0;
    wp.code = 256;
    struct wl *w;
    struct err e = {0};
    if (wl_synth_new(&wp, seed, &w, &e))
        fail_msg("%s", e.msg);
    return w;
}

#endif
