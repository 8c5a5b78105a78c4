/* The machine and x86 register model the x86 unit tests (test_x86.c,
 * test_x86_topo.c) build and tear down, one at a time: from a shipped
 * profile, from profile text, with cmocka setups for the shipped ones.
 * Define X86_FIXTURE_NTASK (the machine's tasks) before including. */
#ifndef QOSIM_TESTS_X86_FIXTURE_H
#define QOSIM_TESTS_X86_FIXTURE_H

#include "hw/x86.h"
#include "sim/mach.h"

#include <string.h>

static struct mach M;
static struct x86 X;
static int booted;

static inline void unboot(void)
{
    if (booted) {
        x86_free(&X);
        mach_free(&M);
        booted = 0;
    }
}

static inline void boot_plat(const struct plat *p)
{
    struct err e = {0};
    if (mach_init(&M, p, X86_FIXTURE_NTASK, &e))
        fail_msg("mach_init(%s): %s", p->name, e.msg);
    if (x86_init(&X, &M, &e)) {
        mach_free(&M);
        fail_msg("x86_init(%s): %s", p->name, e.msg);
    }
    booted = 1;
}

static inline void boot(const char *name)
{
    unboot();
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, name, &e))
        fail_msg("plat_load(%s): %s", name, e.msg);
    boot_plat(&p);
}

/* The profile in text, or its error in e (then nothing is booted). */
static inline int load_text(struct plat *p, const char *text, struct err *e)
{
    struct conf c;
    if (conf_load_mem(&c, "test.yaml", text, strlen(text), e))
        return -1;
    int rc = plat_from_conf(p, &c, e);
    conf_free(&c);
    return rc;
}

static inline void boot_text(const char *text)
{
    unboot();
    struct plat p;
    struct err e = {0};
    if (load_text(&p, text, &e))
        fail_msg("profile: %s", e.msg);
    boot_plat(&p);
}

static inline int setup_xeon(void **state)
{
    (void)state;
    boot("intel-xeon");
    return 0;
}

/* intel-xeon with the caches of before issue 23's measured effects: LRU,
 * an L3 that every fill passes (not a victim cache), one slice, no
 * prefetchers. For register tests that count lines one by one and so need
 * each load to leave exactly one line in the L3 and nothing more. */
static inline int setup_xeon_plain(void **state)
{
    (void)state;
    unboot();
    struct plat p;
    struct err e = {0};
    if (plat_load(&p, "intel-xeon", &e))
        fail_msg("plat_load(intel-xeon): %s", e.msg);
    for (int l = 0; l < PLAT_NLEVEL; l++)
        p.cache[l].repl = &repl_lru;
    p.cache[PLAT_L3].victim = 0;
    p.cache[PLAT_L3].geom.slices = 0;
    p.core.pf.present = 0;
    boot_plat(&p);
    return 0;
}

static inline int setup_atom(void **state)
{
    (void)state;
    boot("intel-atom");
    return 0;
}

static inline int setup_epyc(void **state)
{
    (void)state;
    boot("amd-epyc");
    return 0;
}

static inline int setup_none(void **state)
{
    (void)state;
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    unboot();
    return 0;
}

#endif
