#include "scen.h"

#include "sim/mach.h"
#include "sim/wl/live.h"
#include "util/bits.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const type_names[] = {"data", "code", "both"};

/* A path as written in the file, relative to the file's directory. */
static void rel_path(char *out, size_t cap, const char *base, const char *p)
{
    if (p[0] == '/' || !base[0])
        snprintf(out, cap, "%s", p);
    else
        snprintf(out, cap, "%s/%s", base, p);
}

static int load_platform(struct scen *s, struct conf *c, const char *base, struct err *e)
{
    const char *name = NULL;
    int rc = conf_str(c, c->root, "platform", CONF_REQ, &name, e);
    if (rc)
        return rc;
    char path[512];
    if (plat_is_path(name)) /* a file, relative to the scenario's */
        rel_path(path, sizeof path, base, name);
    else
        snprintf(path, sizeof path, "%s", name);
    rc = plat_load(&s->plat, path, e);
    /* A profile's own errors name its file; one that is not there is this file's error. */
    if (rc == -QOSIM_ENOENT || rc == -QOSIM_EIO)
        return conf_error(c, conf_get(c->root, "platform"), e, "%s", e->msg);
    return rc;
}

static unsigned max_classes(const struct plat *p)
{
    unsigned n = p->bw.kind != BW_NONE ? p->bw.classes : 1;
    for (int l = 0; l < PLAT_NLEVEL; l++)
        if (p->cache[l].alloc.classes > n)
            n = p->cache[l].alloc.classes;
    return n;
}

/* workload: {program: [NAME, ARGS...], stdin: FILE, stdout: FILE}; a
 * program with no arguments may be a plain string. What it needs to start
 * (the program, QEMU, the plugin, its input) is checked here, so that a
 * program that cannot start is this line's error before anything runs. */
static int load_program(struct scen_task *t, struct conf *c, struct conf_node *w, const char *base,
                        struct err *e)
{
    struct conf_node *p = conf_get(w, "program");
    unsigned n = p->type == CONF_SEQ ? p->nkids : 1;
    if (p->type == CONF_MAP || !n)
        return conf_error(c, p, e,
                          "expected the program and its arguments, as a list "
                          "([gzip, -c, FILE]) or one name");
    t->argv = calloc(n + 1, sizeof *t->argv);
    if (!t->argv)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    t->is_live = 1;
    for (unsigned i = 0; i < n; i++) {
        struct conf_node *a = p->type == CONF_SEQ ? &p->kids[i] : p;
        if (a->type != CONF_SCALAR)
            return conf_error(c, a, e, "expected a string (an argument)");
        if (!(t->argv[i] = strdup(a->val)))
            return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    snprintf(t->dir, sizeof t->dir, "%s", base[0] ? base : ".");
    const char *in = NULL, *out = NULL;
    int rc = conf_str(c, w, "stdin", CONF_OPT, &in, e);
    if (!rc)
        rc = conf_str(c, w, "stdout", CONF_OPT, &out, e);
    if (rc)
        return rc;
    if (in)
        rel_path(t->in, sizeof t->in, base, in);
    if (out)
        rel_path(t->out, sizeof t->out, base, out);
    /* A name without a slash is looked up on PATH; one with a slash is
     * relative to the scenario's directory, where the program runs. */
    char prog[1024], found[4096];
    if (strchr(t->argv[0], '/'))
        rel_path(prog, sizeof prog, base, t->argv[0]);
    else
        snprintf(prog, sizeof prog, "%s", t->argv[0]);
    if ((rc = live_check(prog, found, sizeof found, e)))
        return conf_error(c, p->type == CONF_SEQ ? &p->kids[0] : p, e, "%s", e->msg);
    /* The program found now is the one that runs, wherever qosim is. */
    if (strchr(t->argv[0], '/')) {
        free(t->argv[0]);
        if (!(t->argv[0] = strdup(prog)))
            return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    if (in) {
        int fd = open(t->in, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return conf_error(c, conf_get(w, "stdin"), e, "cannot open %s: %s", t->in,
                              strerror(errno));
        close(fd);
    }
    return 0;
}

static int load_workload(struct scen_task *t, struct conf *c, struct conf_node *w, const char *base,
                         struct err *e)
{
    /* Both kinds' keys: synthetic ones beside a trace stay unread (unknown). */
    int rc = conf_expect(c, w, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, w, e, "trace", "format", "loop", "program", "stdin", "stdout", "pattern",
                       "wss", "access", "stride", "zipf_alpha", "mem_ratio", "write_ratio",
                       "nt_ratio", "code", "branch_ratio", "taken_ratio", NULL);
    if (rc)
        return rc;
    t->line = w->line;
    if (conf_get(w, "program"))
        return load_program(t, c, w, base, e);
    const char *path = NULL;
    if ((rc = conf_str(c, w, "trace", CONF_OPT, &path, e)))
        return rc;
    if (path) {
        const char *fmt = NULL;
        t->is_trace = 1;
        t->loop = 1;
        rel_path(t->trace, sizeof t->trace, base, path);
        rc = conf_str(c, w, "format", CONF_OPT, &fmt, e);
        if (!rc)
            rc = conf_bool(c, w, "loop", CONF_OPT, &t->loop, e);
        if (rc)
            return rc;
        if (!fmt)
            fmt = trace_guess(t->trace);
        t->fmt = trace_find(fmt);
        if (!t->fmt)
            return conf_error(c, conf_get(w, "format") ? conf_get(w, "format") : w, e,
                              "unknown trace format '%s' (lackey, champsim, din, qtr)", fmt);
        /* A trace that cannot be opened is this file's error, found before the run. */
        struct trace tr;
        if (trace_open(&tr, t->trace, t->fmt, 0, e))
            return conf_error(c, conf_get(w, "trace"), e, "%s", e->msg);
        trace_close(&tr);
        return 0;
    }
    struct wl_params *p = &t->wp;
    wl_params_default(p);
    unsigned pat = p->pattern;
    uint64_t access = p->access, stride = p->stride;
    rc = conf_enum(c, w, "pattern", CONF_REQ, wl_pattern_name, WL_NPATTERN, &pat, e);
    if (!rc)
        rc = conf_size(c, w, "wss", CONF_OPT, 64, 1ull << 40, &p->wss, e);
    if (!rc)
        rc = conf_size(c, w, "access", CONF_OPT, 1, 64, &access, e);
    if (!rc)
        rc = conf_size(c, w, "stride", CONF_OPT, 1, 1ull << 30, &stride, e);
    if (!rc)
        rc = conf_f64(c, w, "zipf_alpha", CONF_OPT, 0.01, 10, &p->zipf_alpha, e);
    if (!rc)
        rc = conf_f64(c, w, "mem_ratio", CONF_OPT, 0, 1, &p->mem_ratio, e);
    if (!rc)
        rc = conf_f64(c, w, "write_ratio", CONF_OPT, 0, 1, &p->write_ratio, e);
    if (!rc)
        rc = conf_f64(c, w, "nt_ratio", CONF_OPT, 0, 1, &p->nt_ratio, e);
    if (!rc)
        rc = conf_size(c, w, "code", CONF_OPT, 64, 1ull << 32, &p->code, e);
    if (!rc)
        rc = conf_f64(c, w, "branch_ratio", CONF_OPT, 0, 1, &p->branch_ratio, e);
    if (!rc)
        rc = conf_f64(c, w, "taken_ratio", CONF_OPT, 0, 1, &p->taken_ratio, e);
    if (rc)
        return rc;
    p->pattern = (enum wl_pattern)pat;
    p->access = (uint32_t)access;
    p->stride = (uint32_t)stride;
    const char *why = wl_params_check(p);
    if (why)
        return conf_error(c, w, e, "%s", why);
    return 0;
}

static int name_ok(const char *s)
{
    if (!*s || strlen(s) >= 64)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
            return 0;
    return 1;
}

/* A task's TEE region (CBQRI 5.2.2: the C bit is a property of the memory
 * region): `tee: true` for its whole space, or {base, size} for part. */
static int load_tee(const struct scen *s, struct conf *c, struct conf_node *m, struct scen_task *t,
                    struct err *e)
{
    struct conf_node *n = conf_get(m, "tee");
    if (!n)
        return 0;
    const struct plat *p = &s->plat;
    if (!p->n_cbqri_cap && !p->n_cbqri_bw)
        return conf_error(c, n, e,
                          "%s has no C bit: only platforms with CBQRI controllers tell "
                          "confidential requests apart",
                          p->name);
    if (p->cbqri_spec != PLAT_CBQRI_DRAFT)
        return conf_error(c, n, e,
                          "%s has no C bit: CBQRI 1.0 dropped the 2023 draft's confidential "
                          "requests and secure register windows (a draft-2023 profile has them)",
                          p->name);
    const uint64_t space = 1ull << MACH_VA_BITS;
    if (n->type != CONF_MAP) {
        int on = 0, rc = conf_bool(c, m, "tee", CONF_REQ, &on, e);
        t->tee_va = 0;
        t->tee_len = on ? space : 0;
        return rc;
    }
    uint64_t base = 0, size = 0;
    int rc = conf_keys(c, n, e, "base", "size", NULL);
    if (!rc)
        rc = conf_u64(c, n, "base", CONF_REQ, 0, space - 1, &base, e);
    if (!rc)
        rc = conf_size(c, n, "size", CONF_REQ, 1, space, &size, e);
    if (!rc && size > space - base)
        rc = conf_error(c, n, e, "the region passes the top of the task's %d-bit space",
                        MACH_VA_BITS);
    if (!rc)
        rc = conf_check_unused(c, n, e);
    t->tee_va = base;
    t->tee_len = size;
    return rc;
}

static int load_tasks(struct scen *s, struct conf *c, const char *base, struct err *e)
{
    struct conf_node *n = conf_get(c->root, "tasks");
    if (!n)
        return conf_error(c, c->root, e, "tasks: missing (a scenario runs at least one task)");
    int rc = conf_expect(c, n, CONF_SEQ, e);
    if (rc)
        return rc;
    if (!n->nkids || n->nkids > MACH_MAX_TASKS)
        return conf_error(c, n, e, "between 1 and %d tasks, not %u", MACH_MAX_TASKS, n->nkids);
    s->task = calloc(n->nkids, sizeof *s->task);
    if (!s->task)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    s->ntask = n->nkids;
    const struct plat *p = &s->plat;
    unsigned ncls = max_classes(p), ntags = p->mon.tags ? p->mon.tags : 1;
    for (unsigned i = 0; i < n->nkids; i++) {
        struct conf_node *m = &n->kids[i];
        struct scen_task *t = &s->task[i];
        const char *name = NULL;
        uint64_t cpu = 0, cls = 0, tag = 0, node = UINT64_MAX;
        if ((rc = conf_expect(c, m, CONF_MAP, e)) ||
            (rc = conf_keys(c, m, e, "name", "cpu", "class", "tag", "node", "tee", "workload",
                            NULL)))
            return rc;
        rc = conf_str(c, m, "name", CONF_REQ, &name, e);
        if (!rc && !name_ok(name))
            return conf_error(c, conf_get(m, "name"), e,
                              "'%s': names are 1-63 letters, digits, '-', '_' or '.'", name);
        for (unsigned j = 0; !rc && j < i; j++)
            if (!strcmp(s->task[j].name, name))
                return conf_error(c, conf_get(m, "name"), e, "a task called '%s' already exists",
                                  name);
        if (!rc)
            rc = conf_u64(c, m, "cpu", CONF_REQ, 0, p->ncpus - 1, &cpu, e);
        if (!rc)
            rc = conf_u64(c, m, "class", CONF_OPT, 0, ncls - 1, &cls, e);
        if (!rc)
            rc = conf_u64(c, m, "tag", CONF_OPT, 0, ntags - 1, &tag, e);
        if (!rc)
            /* Any memory node: a DRAM node, or a slow one (memory.slow). */
            rc = conf_u64(c, m, "node", CONF_OPT, 0, plat_mem_nodes(p) - 1, &node, e);
        if (rc)
            return rc;
        if ((rc = load_tee(s, c, m, t, e)))
            return rc;
        snprintf(t->name, sizeof t->name, "%s", name);
        t->cpu = (unsigned)cpu;
        t->cls = (unsigned)cls;
        t->tag = (unsigned)tag;
        t->node = node == UINT64_MAX ? -1 : (int)node;
        struct conf_node *w = conf_get(m, "workload");
        if (!w)
            return conf_error(c, m, e, "workload: missing");
        if ((rc = load_workload(t, c, w, base, e)))
            return rc;
    }
    return 0;
}

/* io: a list of I/O agents, {name, domain, node, rate, buffer,
 * write_ratio, class, tag}; every one checked before any is kept. */
static int load_io(struct scen *s, struct conf *c, struct err *e)
{
    struct conf_node *n = conf_get(c->root, "io");
    if (!n)
        return 0;
    int rc = conf_expect(c, n, CONF_SEQ, e);
    if (rc)
        return rc;
    const struct plat *p = &s->plat;
    /* DMA enters at an L3 (mach_io_port): without one there is nowhere for
     * an agent to attach. */
    if (!p->cache[PLAT_L3].present)
        return conf_error(
            c, n, e, "%s has no L3: I/O agents attach to an L3 domain and DMA through it", p->name);
    /* Each agent is a task of the machine (its lines' owner, its ground truth). */
    if (n->nkids > MACH_MAX_TASKS - s->ntask)
        return conf_error(c, n, e, "%u agents and %u tasks exceed qosim's limit of %d", n->nkids,
                          s->ntask, MACH_MAX_TASKS);
    s->io = calloc(n->nkids ? n->nkids : 1, sizeof *s->io);
    if (!s->io)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    unsigned ncls = max_classes(p), ntags = p->mon.tags ? p->mon.tags : 1;
    for (unsigned i = 0; i < n->nkids; i++) {
        struct conf_node *m = &n->kids[i];
        struct io_params *a = &s->io[i];
        const char *name = NULL;
        uint64_t dom = 0, node = UINT64_MAX, cls = 0, tag = 0, buf = 8ull << 20;
        double ratio = 1;
        if ((rc = conf_expect(c, m, CONF_MAP, e)) ||
            (rc = conf_keys(c, m, e, "name", "domain", "node", "rate", "buffer", "write_ratio",
                            "class", "tag", NULL)))
            return rc;
        rc = conf_str(c, m, "name", CONF_REQ, &name, e);
        if (!rc && !name_ok(name))
            return conf_error(c, conf_get(m, "name"), e,
                              "'%s': names are 1-63 letters, digits, '-', '_' or '.'", name);
        /* Agents' rows sit beside the tasks' in every output: one namespace. */
        for (unsigned j = 0; !rc && j < s->ntask; j++)
            if (!strcmp(s->task[j].name, name))
                return conf_error(c, conf_get(m, "name"), e, "a task called '%s' already exists",
                                  name);
        for (unsigned j = 0; !rc && j < i; j++)
            if (!strcmp(s->io[j].name, name))
                return conf_error(c, conf_get(m, "name"), e,
                                  "an I/O agent called '%s' already exists", name);
        if (!rc)
            rc = conf_u64(c, m, "domain", CONF_OPT, 0, p->ndomains - 1, &dom, e);
        if (!rc)
            rc = conf_u64(c, m, "node", CONF_OPT, 0, p->nnodes - 1, &node, e);
        if (!rc)
            rc = conf_rate(c, m, "rate", CONF_REQ, 1e6, 1e13, &a->rate, e);
        if (!rc)
            rc = conf_size(c, m, "buffer", CONF_OPT, 1, 1ull << MACH_VA_BITS, &buf, e);
        if (!rc && buf % p->cache[PLAT_L1I].geom.line)
            rc = conf_error(c, conf_get(m, "buffer"), e,
                            "%llu bytes is not a whole number of %u-byte lines",
                            (unsigned long long)buf, p->cache[PLAT_L1I].geom.line);
        if (!rc)
            rc = conf_f64(c, m, "write_ratio", CONF_OPT, 0, 1, &ratio, e);
        if (!rc)
            rc = conf_u64(c, m, "class", CONF_OPT, 0, ncls - 1, &cls, e);
        if (!rc)
            rc = conf_u64(c, m, "tag", CONF_OPT, 0, ntags - 1, &tag, e);
        if (rc)
            return rc;
        snprintf(a->name, sizeof a->name, "%s", name);
        a->domain = (unsigned)dom;
        /* By default its buffers are on the node of the domain it serves,
         * where a driver allocates them. */
        a->node = node == UINT64_MAX ? (unsigned)dom / p->topo.domains : (unsigned)node;
        a->buffer = buf;
        a->write_ratio = ratio;
        a->cls = (unsigned)cls;
        a->tag = (unsigned)tag;
        a->line = m->line;
        s->nio++;
    }
    return 0;
}

/* Reservations in force, per (limiter, class), to check sums as phases apply. */
struct resv {
    unsigned nctl, ncls;
    unsigned *rbwb;
};

static int load_alloc(struct scen *s, struct conf *c, struct conf_node *n, struct scen_set *o,
                      struct err *e)
{
    const struct plat *p = &s->plat;
    unsigned lvl = 0, type = 2;
    uint64_t cls = 0, cbm = 0, inst = UINT64_MAX;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "cache", "class", "mask", "type", "instance", NULL);
    if (!rc)
        rc = conf_enum(c, n, "cache", CONF_REQ, plat_level_name, PLAT_NLEVEL, &lvl, e);
    if (rc)
        return rc;
    const struct plat_cache *pc = &p->cache[lvl];
    if (!pc->present || !pc->alloc.classes)
        return conf_error(c, conf_get(n, "cache"), e, "%s of %s has no allocation control",
                          plat_level_name[lvl], p->name);
    rc = conf_u64(c, n, "class", CONF_REQ, 0, pc->alloc.classes - 1, &cls, e);
    if (!rc)
        rc = conf_u64(c, n, "mask", CONF_REQ, 0, bits_mask(pc->alloc.cbm_len), &cbm, e);
    if (!rc)
        rc = conf_enum(c, n, "type", CONF_OPT, type_names, 3, &type, e);
    if (!rc)
        rc = conf_u64(c, n, "instance", CONF_OPT, 0, plat_cache_count(p, lvl) - 1, &inst, e);
    if (rc)
        return rc;
    if (type != 2 && !pc->alloc.cdp)
        return conf_error(c, conf_get(n, "type"), e, "%s of %s cannot tell code from data (no CDP)",
                          plat_level_name[lvl], p->name);
    /* Masks set here skip the registers, but still only ones the vendor's
     * hardware could hold: a result must be one the machine can give. */
    const char *why;
    if (!plat_mask_ok(p, (enum plat_level)lvl, cbm, &why))
        return conf_error(c, conf_get(n, "mask"), e, "0x%llx: %s of %s %s", (unsigned long long)cbm,
                          plat_level_name[lvl], p->name, why);
    *o = (struct scen_set){.kind = SCEN_MASK,
                           .level = (enum plat_level)lvl,
                           .inst = inst == UINT64_MAX ? -1 : (int)inst,
                           .type = type == 2 ? -1 : (int)type,
                           .cbm = cbm,
                           .cls = (unsigned)cls};
    return 0;
}

static int load_bw(struct scen *s, struct conf *c, struct conf_node *n, struct scen_set *o,
                   struct resv *rv, struct err *e)
{
    const struct plat_bw *b = &s->plat.bw;
    if (b->kind == BW_NONE)
        return conf_error(c, n, e, "%s has no bandwidth control", s->plat.name);
    unsigned nctl = b->kind == BW_SHARE ? s->plat.nnodes : s->plat.ndomains;
    uint64_t cls = 0, ctl = UINT64_MAX, delay = 0, weight = 1;
    double rate = 0, resv = 0;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "class", "limiter", "delay", "rate", "reserve", "weight", NULL);
    if (!rc)
        rc = conf_u64(c, n, "class", CONF_REQ, 0, b->classes - 1, &cls, e);
    if (!rc)
        rc = conf_u64(c, n, "limiter", CONF_OPT, 0, nctl - 1, &ctl, e);
    if (rc)
        return rc;
    *o = (struct scen_set){
        .kind = SCEN_BW, .cls = (unsigned)cls, .ctl = ctl == UINT64_MAX ? -1 : (int)ctl};
    const char *need = b->kind == BW_DELAY ? "delay" : b->kind == BW_RATE ? "rate" : "reserve";
    if (b->kind == BW_DELAY) {
        rc = conf_u64(c, n, "delay", CONF_REQ, 0, b->max, &delay, e);
        if (!rc && delay % b->granularity)
            return conf_error(c, conf_get(n, "delay"), e, "%llu is not a multiple of %u",
                              (unsigned long long)delay, b->granularity);
        o->delay_pct = (unsigned)delay;
    } else if (b->kind == BW_RATE) {
        rc = conf_rate(c, n, "rate", CONF_REQ, 0, 1e13, &rate, e);
        o->rate = rate;
    } else {
        rc = conf_pct(c, n, "reserve", CONF_REQ, &resv, e);
        if (!rc)
            rc = conf_u64(c, n, "weight", CONF_OPT, 0, 255, &weight, e);
        o->rbwb = (unsigned)(resv / 100 * b->nblks + 0.5);
        o->weight = (unsigned)weight;
        for (unsigned k = 0; !rc && k < nctl; k++) {
            if (o->ctl >= 0 && (unsigned)o->ctl != k)
                continue;
            unsigned sum = 0;
            rv->rbwb[k * rv->ncls + o->cls] = o->rbwb;
            for (unsigned j = 0; j < rv->ncls; j++)
                sum += rv->rbwb[k * rv->ncls + j];
            if (sum > b->mrbwb)
                return conf_error(c, conf_get(n, "reserve"), e,
                                  "reservations at limiter %u would total %u of %u blocks "
                                  "(at most %u may be reserved)",
                                  k, sum, b->nblks, b->mrbwb);
        }
    }
    if (rc)
        return rc;
    static const char *const all[] = {"delay", "rate", "reserve", "weight"};
    for (unsigned k = 0; k < 4; k++) {
        struct conf_node *x = conf_get(n, all[k]);
        if (x && strcmp(all[k], need) && !(b->kind == BW_SHARE && k == 3))
            return conf_error(c, x, e, "%s limits bandwidth by %s, not by %s", s->plat.name, need,
                              all[k]);
    }
    return 0;
}

static int load_assoc(struct scen *s, struct conf *c, struct conf_node *n, struct scen_set *o,
                      struct err *e)
{
    const char *name = NULL;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "task", "class", "tag", NULL);
    if (!rc)
        rc = conf_str(c, n, "task", CONF_REQ, &name, e);
    if (rc)
        return rc;
    unsigned i = 0;
    while (i < s->ntask && strcmp(s->task[i].name, name))
        i++;
    if (i == s->ntask)
        return conf_error(c, conf_get(n, "task"), e, "no task called '%s'", name);
    uint64_t cls = s->task[i].cls, tag = s->task[i].tag;
    unsigned ntags = s->plat.mon.tags ? s->plat.mon.tags : 1;
    rc = conf_u64(c, n, "class", CONF_OPT, 0, max_classes(&s->plat) - 1, &cls, e);
    if (!rc)
        rc = conf_u64(c, n, "tag", CONF_OPT, 0, ntags - 1, &tag, e);
    *o = (struct scen_set){
        .kind = SCEN_ASSOC, .task = i, .new_cls = (unsigned)cls, .new_tag = (unsigned)tag};
    return rc;
}

/* A phase's `prefetch:` entry: {task: NAME, on: BOOL or [KIND...]}, the
 * hardware prefetchers of the task's core from then on: all the part has,
 * none, or those named (sim/cache/pf.h's names). Applied as the core's
 * prefetcher control MSR would (MSR 0x1A4 on Intel, C000_0108 on AMD): to
 * every thread of the core, whatever runs there. Needs a platform with
 * prefetchers (core.prefetch). */
static int load_pf_set(struct scen *s, struct conf *c, struct conf_node *n, struct scen_set *o,
                       struct err *e)
{
    const char *name = NULL;
    int rc = conf_expect(c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(c, n, e, "task", "on", NULL);
    if (!rc)
        rc = conf_str(c, n, "task", CONF_REQ, &name, e);
    if (rc)
        return rc;
    if (!s->plat.core.pf.present)
        return conf_error(c, n, e, "platform %s has no hardware prefetchers (core.prefetch)",
                          s->plat.name);
    unsigned i = 0;
    while (i < s->ntask && strcmp(s->task[i].name, name))
        i++;
    if (i == s->ntask)
        return conf_error(c, conf_get(n, "task"), e, "no task called '%s'", name);
    struct conf_node *on = conf_get(n, "on");
    unsigned mask = 0;
    if (!on)
        return conf_error(c, n, e, "on: missing (true, false or a list of prefetchers)");
    if (on->type == CONF_SEQ) {
        for (unsigned k = 0; k < on->nkids; k++) {
            const struct conf_node *v = &on->kids[k];
            unsigned j = 0;
            while (j < PF_NKIND && (v->type != CONF_SCALAR || strcmp(v->val, pf_kind_name[j])))
                j++;
            if (j == PF_NKIND)
                return conf_error(c, v, e,
                                  "unknown prefetcher (l2_stream, l2_adjacent, l1_next_line, "
                                  "l1_ip_stride)");
            if (!(s->plat.core.pf.present >> j & 1))
                return conf_error(c, v, e, "platform %s has no %s prefetcher", s->plat.name,
                                  pf_kind_name[j]);
            mask |= 1u << j;
        }
    } else {
        int all = 0;
        if ((rc = conf_bool(c, n, "on", CONF_REQ, &all, e)))
            return rc;
        mask = all ? s->plat.core.pf.present : 0;
    }
    *o = (struct scen_set){.kind = SCEN_PF, .task = i, .pf_on = mask};
    return 0;
}

static int load_phase(struct scen *s, struct conf *c, struct conf_node *n, struct scen_phase *ph,
                      struct resv *rv, const struct scen_sect *sect, struct err *e)
{
    static const char *const keys[] = {"alloc", "bandwidth", "assoc"};
    struct conf_node *qos = sect ? conf_get(n, "qos") : NULL;
    unsigned total = qos ? sect->phase_count(qos) : 0;
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        struct conf_node *l = conf_get(n, keys[k]);
        if (l && s->qos.present)
            return conf_error(c, l, e,
                              "with a qos section, settings go through the driver: use the "
                              "phase's qos list");
        if (l && !(rc = conf_expect(c, l, CONF_SEQ, e)))
            total += l->nkids;
    }
    struct conf_node *pfl = conf_get(n, "prefetch"); /* hardware prefetchers */
    if (!rc && pfl && !(rc = conf_expect(c, pfl, CONF_SEQ, e)))
        total += pfl->nkids;
    if (rc)
        return rc;
    ph->set = calloc(total ? total : 1, sizeof *ph->set);
    if (!ph->set)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    for (int k = 0; k < 3 && !rc; k++) {
        struct conf_node *l = conf_get(n, keys[k]);
        for (unsigned i = 0; l && i < l->nkids && !rc; i++) {
            struct scen_set *o = &ph->set[ph->nset++];
            rc = k == 0   ? load_alloc(s, c, &l->kids[i], o, e)
                 : k == 1 ? load_bw(s, c, &l->kids[i], o, rv, e)
                          : load_assoc(s, c, &l->kids[i], o, e);
        }
    }
    for (unsigned i = 0; pfl && i < pfl->nkids && !rc; i++)
        rc = load_pf_set(s, c, &pfl->kids[i], &ph->set[ph->nset++], e);
    if (!rc && qos)
        rc = sect->phase(s, c, qos, ph, e);
    return rc;
}

static int load_phases(struct scen *s, struct conf *c, const struct scen_sect *sect, struct err *e)
{
    struct conf_node *n = conf_get(c->root, "phases");
    int rc = n ? conf_expect(c, n, CONF_SEQ, e) : 0;
    if (rc)
        return rc;
    unsigned np = n ? n->nkids : 0;
    for (unsigned i = 0; i < np && !rc; i++)
        if (!(rc = conf_expect(c, &n->kids[i], CONF_MAP, e)))
            rc = conf_keys(c, &n->kids[i], e, "name", "at", "alloc", "bandwidth", "assoc",
                           "prefetch", sect ? "qos" : NULL, NULL);
    if (rc)
        return rc;
    /* Without a phase at 0 the run starts in an implicit one with reset settings. */
    int lead = 1;
    double at0 = 0;
    if (np) {
        if ((rc = conf_expect(c, &n->kids[0], CONF_MAP, e)) ||
            (rc = conf_time(c, &n->kids[0], "at", CONF_REQ, 0, 1e6, &at0, e)))
            return rc;
        lead = at0 > 0;
    }
    s->phase = calloc(np + (unsigned)lead, sizeof *s->phase);
    struct resv rv = {.nctl = s->plat.nnodes > s->plat.ndomains ? s->plat.nnodes : s->plat.ndomains,
                      .ncls = s->plat.bw.classes};
    rv.rbwb = calloc((size_t)rv.nctl * rv.ncls, sizeof *rv.rbwb);
    if (!s->phase || !rv.rbwb) {
        free(rv.rbwb);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    if (lead) {
        snprintf(s->phase[0].name, sizeof s->phase[0].name, "start");
        s->nphase = 1;
    }
    for (unsigned i = 0; i < np && !rc; i++) {
        struct conf_node *m = &n->kids[i];
        struct scen_phase *ph = &s->phase[s->nphase++];
        const char *name = NULL;
        rc = conf_expect(c, m, CONF_MAP, e);
        if (!rc)
            rc = conf_str(c, m, "name", CONF_OPT, &name, e);
        if (!rc)
            rc = conf_time(c, m, "at", CONF_REQ, 0, 1e6, &ph->at, e);
        if (rc)
            break;
        snprintf(ph->name, sizeof ph->name, "%s", name ? name : "");
        if (!name)
            snprintf(ph->name, sizeof ph->name, "phase%u", i + 1);
        if (s->nphase > 1 && ph->at <= s->phase[s->nphase - 2].at)
            rc = conf_error(c, conf_get(m, "at"), e, "phases must start in increasing order");
        else if (ph->at >= s->duration)
            rc = conf_error(c, conf_get(m, "at"), e, "starts at or after the end of the run");
        if (!rc)
            rc = load_phase(s, c, m, ph, &rv, sect, e);
    }
    free(rv.rbwb);
    return rc;
}

int scen_from_conf(struct scen *s, struct conf *c, const char *base, const struct scen_sect *qos,
                   struct err *e)
{
    memset(s, 0, sizeof *s);
    snprintf(s->file, sizeof s->file, "%s", c->file);
    int rc = conf_expect(c, c->root, CONF_MAP, e);
    /* Every map declares its keys before it is read, so that a misspelt key
     * is reported as itself, not as the required key it was meant to be. */
    if (!rc)
        rc = conf_keys(c, c->root, e, "platform", "seed", "duration", "interval", "settle",
                       "quantum", "slice", "tasks", "io", "phases", qos ? "qos" : NULL, NULL);
    if (!rc)
        rc = load_platform(s, c, base, e);
    if (rc)
        return rc;
    struct conf_node *r = c->root;
    s->seed = 1;
    s->quantum = 1000;
    s->slice = 1e-3;
    rc = conf_u64(c, r, "seed", CONF_OPT, 0, UINT64_MAX, &s->seed, e);
    if (!rc)
        rc = conf_time(c, r, "duration", CONF_REQ, 1e-9, 1e3, &s->duration, e);
    s->interval = s->duration / 20;
    if (!rc)
        rc = conf_time(c, r, "interval", CONF_OPT, 1e-9, s->duration, &s->interval, e);
    if (!rc)
        rc = conf_time(c, r, "settle", CONF_OPT, 0, s->duration, &s->settle, e);
    if (!rc)
        rc = conf_u64(c, r, "quantum", CONF_OPT, 1, 1000000, &s->quantum, e);
    if (!rc)
        rc = conf_time(c, r, "slice", CONF_OPT, 1e-9, 1e3, &s->slice, e);
    if (!rc && s->duration / s->interval > 1e6)
        rc = conf_error(c, conf_get(r, "interval"), e, "more than a million intervals");
    if (!rc)
        rc = load_tasks(s, c, base, e);
    if (!rc)
        rc = load_io(s, c, e);
    if (!rc && qos)
        rc = qos->load(s, c, e);
    if (!rc)
        rc = load_phases(s, c, qos, e);
    if (!rc)
        rc = conf_check_unused(c, r, e);
    if (rc)
        scen_free(s);
    return rc;
}

int scen_load(struct scen *s, const char *path, const struct scen_sect *qos, struct err *e)
{
    struct conf c;
    memset(s, 0, sizeof *s);
    int rc = conf_load_file(&c, path, e);
    if (rc)
        return rc;
    char base[512];
    snprintf(base, sizeof base, "%s", path);
    char *slash = strrchr(base, '/');
    if (slash)
        *slash = '\0';
    else
        base[0] = '\0';
    rc = scen_from_conf(s, &c, base, qos, e);
    conf_free(&c);
    return rc;
}

static void scen_task_free(struct scen_task *t)
{
    for (char **a = t->argv; a && *a; a++)
        free(*a);
    free(t->argv);
    t->argv = NULL;
}

void scen_free(struct scen *s)
{
    for (unsigned i = 0; s->phase && i < s->nphase; i++)
        free(s->phase[i].set);
    free(s->phase);
    for (unsigned i = 0; s->task && i < s->ntask; i++)
        scen_task_free(&s->task[i]);
    free(s->task);
    free(s->qos.grp);
    free(s->qos.init);
    free(s->qos.tinit);
    free(s->qos.resv);
    free(s->qos.task_grp);
    free(s->io);
    s->io = NULL;
    s->nio = 0;
    s->phase = NULL;
    s->task = NULL;
    s->nphase = s->ntask = 0;
    memset(&s->qos, 0, sizeof s->qos);
}

int scen_only(struct scen *s, const char *names, struct err *e)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", names);
    unsigned keep = 0;
    unsigned *map = calloc(s->ntask, sizeof *map);
    if (!map)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    for (unsigned i = 0; i < s->ntask; i++)
        map[i] = UINT32_MAX;
    /* I/O agents are named the same way: those not in the list go too, so
     * that --only victim runs the victim alone. */
    uint8_t *io_keep = calloc(s->nio ? s->nio : 1, 1);
    if (!io_keep) {
        free(map);
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    }
    for (char *save = NULL, *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
        unsigned i = 0, k = 0;
        while (i < s->ntask && strcmp(s->task[i].name, n))
            i++;
        while (k < s->nio && strcmp(s->io[k].name, n))
            k++;
        if (i == s->ntask && k == s->nio) {
            free(map);
            free(io_keep);
            return err_set(e, -QOSIM_EINVAL, "--only: no task %scalled '%s' in %s",
                           s->nio ? "or I/O agent " : "", n, s->file);
        }
        if (i < s->ntask)
            map[i] = 0;
        else
            io_keep[k] = 1;
    }
    unsigned ntask = 0;
    for (unsigned i = 0; i < s->ntask; i++)
        ntask += map[i] == 0;
    if (!ntask) { /* a scenario runs at least one task */
        free(map);
        free(io_keep);
        return err_set(e, -QOSIM_EINVAL, "--only: the list names no task of %s", s->file);
    }
    unsigned nio = 0;
    for (unsigned k = 0; k < s->nio; k++)
        if (io_keep[k])
            s->io[nio++] = s->io[k];
    s->nio = nio;
    free(io_keep);
    for (unsigned i = 0; i < s->ntask; i++)
        if (map[i] == 0) {
            map[i] = keep;
            if (s->qos.task_grp)
                s->qos.task_grp[keep] = s->qos.task_grp[i];
            s->task[keep++] = s->task[i];
        } else {
            scen_task_free(&s->task[i]);
        }
    /* Settings for tasks that are gone go too; the others follow their task. */
    for (unsigned p = 0; p < s->nphase; p++) {
        unsigned k = 0;
        for (unsigned j = 0; j < s->phase[p].nset; j++) {
            struct scen_set *x = &s->phase[p].set[j];
            if (x->kind == SCEN_ASSOC || x->kind == SCEN_QOS_MOVE) {
                if (map[x->task] == UINT32_MAX)
                    continue;
                x->task = map[x->task];
            }
            s->phase[p].set[k++] = *x;
        }
        s->phase[p].nset = k;
    }
    s->ntask = keep;
    free(map);
    return 0;
}
