/* amd-lwp with parts of its text replaced, for the LWP tests (test_lwp.c,
 * test_lwp_engine.c): subs holds (from, to) pairs, then NULL; each `from`
 * must be in the profile. */
#ifndef QOSIM_TESTS_LWP_PLAT_H
#define QOSIM_TESTS_LWP_PLAT_H

#include "sim/scen/plat.h"
#include "util/conf.h"

#include <stdio.h>
#include <string.h>

/* The variant loaded as "test.yaml": plat_from_conf's result, e its message. */
static inline int lwp_plat_try(struct plat *p, const char *const *subs, struct err *e)
{
    char text[8192], tmp[8192];
    const char *t = plat_builtin_text("amd-lwp");
    if (!t) {
        fail_msg("amd-lwp is not built in");
        return -1;
    }
    snprintf(text, sizeof text, "%s", t);
    for (; subs && subs[0]; subs += 2) {
        const char *at = strstr(text, subs[0]);
        if (!at)
            fail_msg("amd-lwp lacks '%s'", subs[0]);
        snprintf(tmp, sizeof tmp, "%.*s%s%s", (int)(at - text), text, subs[1],
                 at + strlen(subs[0]));
        memcpy(text, tmp, sizeof text);
    }
    struct conf c;
    if (conf_load_mem(&c, "test.yaml", text, strlen(text), e))
        fail_msg("conf_load_mem: %s", e->msg);
    int rc = plat_from_conf(p, &c, e);
    conf_free(&c);
    return rc;
}

/* The variant, which must be a valid profile. */
static inline void lwp_plat(struct plat *p, const char *const *subs)
{
    struct err e = {0};
    if (lwp_plat_try(p, subs, &e))
        fail_msg("plat_from_conf: %s", e.msg);
}

#endif
