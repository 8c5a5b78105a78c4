/* Planning a sweep (plan.h): the sweep file's axes, zip groups and
 * exclusions expanded into points; each point the base scenario with its
 * axis values set at their key paths, checked as `qosim run` checks a
 * scenario, then written with the manifest. */
#include "plan.h"

#include "drv/qos_scen.h"
#include "sim/scen/scen.h"
#include "sweep.h"
#include "util/conf.h"
#include "util/ofile.h"
#include "util/path.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* More points than a sweep folder sensibly holds is a mistake in the file
 * (a range with a tiny step), not a sweep to start. */
#define PLAN_MAX_POINTS 1000000u
unsigned sweep_max_points = PLAN_MAX_POINTS;
#define PLAN_MAX_SEG 32

/* One step of a key path: a map key, or a sequence item by index or by
 * its `name:`. */
struct seg {
    char *key;  /* a map key; NULL for an item */
    char *item; /* an item's name; NULL for an index */
    unsigned idx;
};

struct axis {
    const char *name;
    struct conf_node *node, *keynode; /* the axis, its key: (NULL: a label) */
    struct seg seg[PLAN_MAX_SEG];
    unsigned nseg;
    struct conf_node **val; /* what each value sets */
    char **label;           /* and how the manifest shows it */
    unsigned nval;
    int group;  /* its zip group, or -1 */
    char *path; /* where its key is in the base scenario, as messages name it */
};

struct excl {
    struct conf_node *node;
    unsigned n, *axis, *val; /* axis[k] must have value val[k] */
    size_t hits;
};

struct plan {
    struct conf c;              /* the sweep file */
    struct conf_node *basenode; /* its base: */
    char sdir[PATH_MAX], bdir[PATH_MAX], bname[PATH_MAX + 16];
    char *btext; /* the base scenario's text */
    size_t blen;
    struct axis *ax;
    unsigned nax;
    struct excl *ex;
    unsigned nex;
    unsigned *dim_len, ndim; /* a dimension: an axis, or a zip group */
    int *ax_dim;             /* [nax] each axis's dimension */
    unsigned *pt;            /* [npt][nax] value index of each axis */
    size_t npt;
    unsigned width; /* digits of a point's number */
    /* Allocations: the plan's, and one point's (its tree's additions),
     * freed after it; cur is where own() puts them now. */
    struct pool {
        void **v;
        size_t n, cap;
    } keep, tmp, *cur;
};

static void *own(struct plan *p, void *x)
{
    struct pool *o = p->cur;
    if (!x)
        return NULL;
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 32;
        void **v = realloc(o->v, cap * sizeof *v);
        if (!v) {
            free(x);
            return NULL;
        }
        o->v = v;
        o->cap = cap;
    }
    return o->v[o->n++] = x;
}

static void pool_free(struct pool *o)
{
    while (o->n)
        free(o->v[--o->n]);
    free(o->v);
    o->v = NULL;
    o->cap = 0;
}

/* A subtree the scenario (not the sweep file's reader) reads. */
static void mark_used(struct conf_node *n)
{
    n->used = 1;
    for (unsigned i = 0; i < n->nkids; i++)
        mark_used(&n->kids[i]);
}

static int oom(struct err *e)
{
    return err_set(e, -QOSIM_ENOMEM, "out of memory");
}

/* ---- key paths ------------------------------------------------------------ */

/* "tasks[victim].workload.wss", "phases[1].alloc[0].mask", "seed". */
static int parse_path(struct plan *p, struct axis *a, struct err *e)
{
    const char *s = a->keynode->val;
    char buf[512];
    if (!*s || strlen(s) >= sizeof buf)
        return conf_error(&p->c, a->keynode, e,
                          "expected a key path such as tasks[0].workload.wss");
    snprintf(buf, sizeof buf, "%s", s);
    char *q = buf;
    while (*q) {
        if (a->nseg == PLAN_MAX_SEG)
            return conf_error(&p->c, a->keynode, e, "a key path of more than %d steps",
                              PLAN_MAX_SEG);
        struct seg *g = &a->seg[a->nseg];
        if (*q == '[') {
            char *end = strchr(q, ']');
            if (!end || end == q + 1 || !a->nseg)
                return conf_error(&p->c, a->keynode, e,
                                  "'%s': an item is [INDEX] or [NAME] after a key", s);
            *end = '\0';
            uint64_t v;
            if (!conf_parse_u64(q + 1, &v) && v < UINT_MAX)
                g->idx = (unsigned)v;
            else if (!(g->item = own(p, strdup(q + 1))))
                return oom(e);
            q = end + 1;
        } else {
            size_t n = strcspn(q, ".[");
            if (!n)
                return conf_error(&p->c, a->keynode, e, "'%s': an empty step", s);
            if (!(g->key = own(p, strndup(q, n))))
                return oom(e);
            q += n;
        }
        a->nseg++;
        if (*q == '.') {
            if (!*++q)
                return conf_error(&p->c, a->keynode, e, "'%s': ends with '.'", s);
        } else if (*q && *q != '[')
            return conf_error(&p->c, a->keynode, e, "'%s': expected '.' or '['", s);
    }
    return 0;
}

static struct conf_node *map_find(struct conf_node *m, const char *key)
{
    for (unsigned i = 0; i < m->nkids; i++)
        if (!strcmp(m->kids[i].key, key))
            return &m->kids[i];
    return NULL;
}

static struct conf_node *item_named(struct conf_node *s, const char *name)
{
    for (unsigned i = 0; i < s->nkids; i++) {
        struct conf_node *n = &s->kids[i];
        struct conf_node *k = n->type == CONF_MAP ? map_find(n, "name") : NULL;
        if (k && k->type == CONF_SCALAR && !strcmp(k->val, name))
            return n;
    }
    return NULL;
}

/* The key of map n, or the name of an item of list n, that a misspelt
 * step most likely meant (conf_closest), or NULL. */
static const char *closest_step(struct conf_node *n, const struct seg *g)
{
    const char *names[65];
    unsigned k = 0;
    for (unsigned i = 0; i < n->nkids && k < 64; i++) {
        struct conf_node *c = &n->kids[i], *nm;
        if (g->key && c->key)
            names[k++] = c->key;
        else if (g->item && c->type == CONF_MAP && (nm = map_find(c, "name")) &&
                 nm->type == CONF_SCALAR)
            names[k++] = nm->val;
    }
    names[k] = NULL;
    return conf_closest(names, g->key ? g->key : g->item);
}

/* The node a's path names in the tree under root; a last map key that is
 * absent is added (the scenario's own check then says whether it may be
 * there). NULL with e naming the step that does not exist. */
static struct conf_node *resolve(struct plan *p, const struct axis *a, struct conf_node *root,
                                 struct err *e)
{
    struct conf_node *n = root;
    char at[600] = "the base scenario";
    for (unsigned i = 0; i < a->nseg; i++) {
        const struct seg *g = &a->seg[i];
        struct conf_node *next = NULL;
        if (g->key) {
            if (n->type != CONF_MAP) {
                conf_error(&p->c, a->keynode, e, "'%s': %s is not a mapping", a->keynode->val, at);
                return NULL;
            }
            next = map_find(n, g->key);
            if (!next && i + 1 == a->nseg) {
                struct conf_node *kids = own(p, calloc(n->nkids + 1, sizeof *kids));
                if (!kids) {
                    oom(e);
                    return NULL;
                }
                if (n->nkids)
                    memcpy(kids, n->kids, n->nkids * sizeof *kids);
                next = &kids[n->nkids];
                *next = (struct conf_node){
                    .type = CONF_SCALAR, .key = g->key, .val = "", .plain = 1, .parent = n};
                n->kids = kids;
                n->nkids++;
            }
        } else if (n->type != CONF_SEQ) {
            conf_error(&p->c, a->keynode, e, "'%s': %s is not a list", a->keynode->val, at);
            return NULL;
        } else if (g->item)
            next = item_named(n, g->item);
        else
            next = g->idx < n->nkids ? &n->kids[g->idx] : NULL;
        if (!next) {
            const char *hint = g->key || g->item ? closest_step(n, g) : NULL;
            char dym[96] = "";
            if (hint)
                snprintf(dym, sizeof dym, " (did you mean '%.64s'?)", hint);
            if (g->key)
                conf_error(&p->c, a->keynode, e, "'%s': %s has no key '%s'%s", a->keynode->val, at,
                           g->key, dym);
            else if (g->item)
                conf_error(&p->c, a->keynode, e, "'%s': %s has no item named '%s'%s",
                           a->keynode->val, at, g->item, dym);
            else
                conf_error(&p->c, a->keynode, e, "'%s': %s has %u items, so no [%u]",
                           a->keynode->val, at, n->nkids, g->idx);
            return NULL;
        }
        n = next;
        conf_path(n, at, sizeof at);
    }
    return n;
}

/* ---- the sweep file --------------------------------------------------------- */

static struct conf_node *scalar(struct plan *p, const char *text, unsigned line)
{
    struct conf_node *n = own(p, calloc(1, sizeof *n));
    char *v = own(p, strdup(text));
    if (!n || !v)
        return NULL;
    n->type = CONF_SCALAR;
    n->val = v;
    n->plain = 1;
    n->line = line;
    return n;
}

static int add_value(struct plan *p, struct axis *a, struct conf_node *v, const char *label,
                     struct err *e)
{
    if (a->nval >= sweep_max_points)
        return conf_error(&p->c, a->node, e, "more than %u values", sweep_max_points);
    struct conf_node **nv = realloc(a->val, (a->nval + 1) * sizeof *nv);
    if (nv)
        a->val = nv;
    char **nl = realloc(a->label, (a->nval + 1) * sizeof *nl);
    if (nl)
        a->label = nl;
    if (!nv || !nl || !v)
        return oom(e);
    char *l = NULL;
    if (label)
        l = strdup(label);
    else if (v->type == CONF_SCALAR)
        l = strdup(v->val);
    else { /* a mapping or list as one line of flow YAML */
        size_t n = 0;
        FILE *f = open_memstream(&l, &n);
        if (f) {
            conf_write(f, v, 1);
            fclose(f);
        }
        if (l) {
            size_t k = strlen(l);
            while (k && (l[k - 1] == '\n' || l[k - 1] == ' ' || l[k - 1] == '.'))
                l[--k] = '\0';
        }
    }
    if (!l || !own(p, l))
        return oom(e);
    if (strpbrk(l, "\t\n\r"))
        return conf_error(&p->c, v, e, "an axis value may not hold a tab or a line break");
    a->val[a->nval] = v;
    a->label[a->nval++] = l;
    return 0;
}

/* range: {from: A, to: B, step: S, unit: U}: A, A+S, ... up to B; integers
 * stay exact; U (ms, K, ...) is appended to each value. */
static int axis_range(struct plan *p, struct axis *a, struct conf_node *r, struct err *e)
{
    int rc = conf_expect(&p->c, r, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(&p->c, r, e, "from", "to", "step", "unit", NULL);
    if (rc)
        return rc;
    const char *unit = "";
    if ((rc = conf_str(&p->c, r, "unit", CONF_OPT, &unit, e)))
        return rc;
    const char *f = NULL, *t = NULL, *s = "1";
    if ((rc = conf_str(&p->c, r, "from", CONF_REQ, &f, e)) ||
        (rc = conf_str(&p->c, r, "to", CONF_REQ, &t, e)) ||
        (rc = conf_str(&p->c, r, "step", CONF_OPT, &s, e)))
        return rc;
    uint64_t fi, ti, si;
    char buf[64];
    if (!conf_parse_u64(f, &fi) && !conf_parse_u64(t, &ti) && !conf_parse_u64(s, &si)) {
        if (!si || ti < fi)
            return conf_error(&p->c, r, e, "expected from <= to and a step above 0");
        if ((ti - fi) / si >= sweep_max_points)
            return conf_error(&p->c, r, e, "more than %u values", sweep_max_points);
        for (uint64_t v = fi; v <= ti && !rc; v += si) {
            snprintf(buf, sizeof buf, "%" PRIu64 "%s", v, unit);
            rc = add_value(p, a, scalar(p, buf, r->line), NULL, e);
            if (ti - v < si)
                break;
        }
        return rc;
    }
    double fd, td, sd;
    if ((rc = conf_f64(&p->c, r, "from", CONF_REQ, -1e300, 1e300, &fd, e)) ||
        (rc = conf_f64(&p->c, r, "to", CONF_REQ, -1e300, 1e300, &td, e)) ||
        (rc = conf_f64(&p->c, r, "step", CONF_OPT, 1e-300, 1e300, &sd, e)))
        return rc;
    if (!conf_get(r, "step"))
        sd = 1;
    if (td < fd || (td - fd) / sd >= sweep_max_points)
        return conf_error(&p->c, r, e, "expected from <= to and at most %u values",
                          sweep_max_points);
    /* The k-th value is computed, not accumulated, so that 0.1 steps do not
     * drift; the last is kept when it misses `to` by rounding only. */
    unsigned n = (unsigned)floor((td - fd) / sd + 1e-9) + 1;
    for (unsigned k = 0; k < n && !rc; k++) {
        snprintf(buf, sizeof buf, "%.12g%s", fd + k * sd, unit);
        rc = add_value(p, a, scalar(p, buf, r->line), NULL, e);
    }
    return rc;
}

/* glob: PATTERN relative to the sweep file: the files it matches, sorted;
 * the scenario gets each file's absolute path, the manifest the match as
 * the pattern wrote it. */
static int axis_glob(struct plan *p, struct axis *a, struct conf_node *g, struct err *e)
{
    if (g->type != CONF_SCALAR || !g->val[0])
        return conf_error(&p->c, g, e, "expected a file pattern such as traces/*.xz");
    char pat[PATH_MAX * 2];
    snprintf(pat, sizeof pat, "%s%s%s", g->val[0] == '/' ? "" : p->sdir,
             g->val[0] == '/' ? "" : "/", g->val);
    glob_t gl;
    int r = glob(pat, 0, NULL, &gl);
    if (r == GLOB_NOMATCH)
        return conf_error(&p->c, g, e, "'%s' matches no file", g->val);
    if (r)
        return conf_error(&p->c, g, e, "'%s': cannot list its files", g->val);
    size_t skip = g->val[0] == '/' ? 0 : strlen(p->sdir) + 1;
    int rc = 0;
    for (size_t i = 0; i < gl.gl_pathc && !rc; i++)
        rc = add_value(p, a, scalar(p, gl.gl_pathv[i], g->line), gl.gl_pathv[i] + skip, e);
    globfree(&gl);
    return rc;
}

static int read_axis(struct plan *p, struct axis *a, struct conf_node *n, struct err *e)
{
    int rc = conf_expect(&p->c, n, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(&p->c, n, e, "name", "key", "values", "range", "glob", NULL);
    if (rc)
        return rc;
    a->node = n;
    a->group = -1;
    const char *key = NULL;
    if ((rc = conf_str(&p->c, n, "key", CONF_OPT, &key, e)) ||
        (rc = conf_str(&p->c, n, "name", CONF_OPT, &a->name, e)))
        return rc;
    if (!key && !a->name)
        return conf_error(&p->c, n, e, "an axis needs a key (what it sets) or a name");
    if (key) {
        a->keynode = conf_get(n, "key");
        if ((rc = parse_path(p, a, e)))
            return rc;
        if (!a->name) { /* the last key of the path */
            for (unsigned i = a->nseg; i-- > 0;)
                if (a->seg[i].key) {
                    a->name = a->seg[i].key;
                    break;
                }
        }
    }
    if (!a->name[0] || strpbrk(a->name, "\t\n\r,="))
        return conf_error(&p->c, conf_get(n, "name") ? conf_get(n, "name") : n, e,
                          "an axis name may not be empty or hold a tab, a line break, ',' or '='");
    struct conf_node *v = conf_get(n, "values"), *r = conf_get(n, "range"),
                     *g = conf_get(n, "glob");
    if (!!v + !!r + !!g != 1)
        return conf_error(&p->c, n, e, "an axis has one of values, range or glob");
    if (v) {
        if ((rc = conf_expect(&p->c, v, CONF_SEQ, e)))
            return rc;
        if (!v->nkids)
            return conf_error(&p->c, v, e, "an axis needs at least one value");
        /* The values are the scenario's from here on: its check reads them. */
        mark_used(v);
        for (unsigned i = 0; i < v->nkids && !rc; i++)
            rc = add_value(p, a, &v->kids[i], NULL, e);
        return rc;
    }
    return r ? axis_range(p, a, r, e) : axis_glob(p, a, g, e);
}

static const char **axis_names(struct plan *p)
{
    const char **v = own(p, calloc(p->nax + 1, sizeof *v));
    for (unsigned i = 0; v && i < p->nax; i++)
        v[i] = p->ax[i].name;
    return v;
}

static int find_axis(struct plan *p, struct conf_node *n, const char *name, unsigned *out,
                     struct err *e)
{
    for (unsigned i = 0; i < p->nax; i++)
        if (!strcmp(p->ax[i].name, name)) {
            *out = i;
            return 0;
        }
    const char *hint = conf_closest(axis_names(p), name);
    if (hint)
        return conf_error(&p->c, n, e, "no axis named '%s' (did you mean '%s'?)", name, hint);
    return conf_error(&p->c, n, e, "no axis named '%s'", name);
}

/* zip: [[A, B], ...]: the axes of a group move together, value k of each
 * in point after point; they must have as many values each. */
static int read_zip(struct plan *p, struct conf_node *z, struct err *e)
{
    int rc = conf_expect(&p->c, z, CONF_SEQ, e);
    for (unsigned g = 0; !rc && g < z->nkids; g++) {
        struct conf_node *grp = &z->kids[g];
        if ((rc = conf_expect(&p->c, grp, CONF_SEQ, e)))
            break;
        if (grp->nkids < 2)
            return conf_error(&p->c, grp, e, "a zip group names two axes or more");
        unsigned first = 0;
        for (unsigned k = 0; k < grp->nkids; k++) {
            struct conf_node *nm = &grp->kids[k];
            unsigned ai = 0;
            if (nm->type != CONF_SCALAR)
                return conf_error(&p->c, nm, e, "expected an axis name");
            if ((rc = find_axis(p, nm, nm->val, &ai, e)))
                return rc;
            struct axis *a = &p->ax[ai];
            if (a->group >= 0)
                return conf_error(&p->c, nm, e, "axis '%s' is already in zip group %d", a->name,
                                  a->group + 1);
            if (!k)
                first = ai;
            else if (a->nval != p->ax[first].nval)
                return conf_error(&p->c, nm, e,
                                  "axis '%s' has %u values and '%s' %u: zipped axes have as "
                                  "many",
                                  a->name, a->nval, p->ax[first].name, p->ax[first].nval);
            a->group = (int)g;
        }
    }
    return rc;
}

/* Value k of axis i (and of the axes zipped with it) repeats an earlier
 * one: the same point twice. */
static int repeats(const struct plan *p, unsigned i, unsigned j, unsigned k)
{
    for (unsigned x = 0; x < p->nax; x++)
        if ((x == i || (p->ax[i].group >= 0 && p->ax[x].group == p->ax[i].group)) &&
            strcmp(p->ax[x].label[j], p->ax[x].label[k]))
            return 0;
    return 1;
}

static int check_repeats(struct plan *p, struct err *e)
{
    for (unsigned i = 0; i < p->nax; i++) {
        const struct axis *a = &p->ax[i];
        for (unsigned k = 1; k < a->nval; k++)
            for (unsigned j = 0; j < k; j++)
                if (repeats(p, i, j, k)) {
                    struct conf_node *at = a->val[k]->line ? a->val[k] : a->node;
                    if (a->group < 0)
                        return conf_error(&p->c, at, e, "'%s' is already a value of axis '%s'",
                                          a->label[k], a->name);
                    return conf_error(&p->c, at, e,
                                      "'%s' and the values zipped with it repeat value %u of "
                                      "axis '%s'",
                                      a->label[k], j + 1, a->name);
                }
    }
    return 0;
}

/* exclude: [{A: v, B: w}, ...]: a point whose axes have all of one entry's
 * values is left out. */
static int read_exclude(struct plan *p, struct conf_node *x, struct err *e)
{
    int rc = conf_expect(&p->c, x, CONF_SEQ, e);
    if (rc)
        return rc;
    if (!(p->ex = own(p, calloc(x->nkids + 1, sizeof *p->ex))))
        return oom(e);
    for (unsigned i = 0; i < x->nkids; i++) {
        struct conf_node *m = &x->kids[i];
        struct excl *ex = &p->ex[p->nex++];
        if ((rc = conf_expect(&p->c, m, CONF_MAP, e)))
            return rc;
        if (!m->nkids)
            return conf_error(&p->c, m, e, "an exclusion names at least one axis");
        ex->node = m;
        ex->axis = own(p, calloc(m->nkids, sizeof *ex->axis));
        ex->val = own(p, calloc(m->nkids, sizeof *ex->val));
        if (!ex->axis || !ex->val)
            return oom(e);
        for (unsigned k = 0; k < m->nkids; k++) {
            struct conf_node *v = &m->kids[k];
            unsigned ai = 0;
            mark_used(v);
            if ((rc = find_axis(p, v, v->key, &ai, e)))
                return rc;
            const struct axis *a = &p->ax[ai];
            unsigned j = 0;
            while (j < a->nval && (v->type != CONF_SCALAR || strcmp(a->label[j], v->val)))
                j++;
            if (j == a->nval)
                return conf_error(&p->c, v, e, "'%s' is not a value of axis '%s'",
                                  v->type == CONF_SCALAR ? v->val : "(a mapping or list)", a->name);
            ex->axis[ex->n] = ai;
            ex->val[ex->n++] = j;
        }
    }
    return 0;
}

static int read_slurm(struct plan *p, struct conf_node *s, struct err *e)
{
    int rc = conf_expect(&p->c, s, CONF_MAP, e);
    if (!rc)
        rc = conf_keys(&p->c, s, e, "partition", "time", "mem", "throttle", "max_array", NULL);
    const char *str;
    uint64_t u;
    if (!rc)
        rc = conf_str(&p->c, s, "partition", CONF_OPT, &str, e);
    if (!rc)
        rc = conf_str(&p->c, s, "time", CONF_OPT, &str, e);
    if (!rc)
        rc = conf_str(&p->c, s, "mem", CONF_OPT, &str, e);
    if (!rc)
        rc = conf_u64(&p->c, s, "throttle", CONF_OPT, 1, UINT_MAX, &u, e);
    if (!rc)
        rc = conf_u64(&p->c, s, "max_array", CONF_OPT, 1, UINT_MAX, &u, e);
    return rc;
}

/* The folder of path, absolute. */
static int abs_dir(const char *path, char *out, struct err *e)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    char *sl = strrchr(tmp, '/');
    if (sl == tmp)
        sl[1] = '\0';
    else if (sl)
        *sl = '\0';
    else
        snprintf(tmp, sizeof tmp, ".");
    if (!realpath(tmp, out))
        return err_set(e, -QOSIM_ENOENT, "%s: %s", tmp, strerror(errno));
    return 0;
}

static int read_base(struct plan *p, struct conf_node *b, struct err *e)
{
    if (b->type == CONF_MAP) { /* inline: relative paths are the sweep file's */
        snprintf(p->bdir, sizeof p->bdir, "%s", p->sdir);
        snprintf(p->bname, sizeof p->bname, "%s (base)", p->c.file);
        FILE *f = open_memstream(&p->btext, &p->blen);
        if (!f || conf_write(f, b, 0) || fclose(f))
            return oom(e);
        mark_used(b);
        return 0;
    }
    if (b->type != CONF_SCALAR || !b->val[0])
        return conf_error(&p->c, b, e, "expected a scenario file, or a scenario as a mapping");
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s%s%s", b->val[0] == '/' ? "" : p->sdir,
             b->val[0] == '/' ? "" : "/", b->val);
    snprintf(p->bname, sizeof p->bname, "%s", b->val);
    if (!(p->btext = sweep_read_file(path, &p->blen, e)))
        return conf_error(&p->c, b, e, "%s", e->msg);
    return abs_dir(path, p->bdir, e);
}

/* ---- expansion --------------------------------------------------------------- */

static int excluded(struct plan *p, const unsigned *v)
{
    for (unsigned i = 0; i < p->nex; i++) {
        struct excl *x = &p->ex[i];
        unsigned k = 0;
        while (k < x->n && v[x->axis[k]] == x->val[k])
            k++;
        if (k == x->n) {
            x->hits++;
            return 1;
        }
    }
    return 0;
}

static int expand(struct plan *p, struct err *e)
{
    p->ax_dim = own(p, calloc(p->nax, sizeof *p->ax_dim));
    p->dim_len = own(p, calloc(p->nax, sizeof *p->dim_len));
    int *grp_dim = own(p, calloc(p->nax, sizeof *grp_dim));
    if (!p->ax_dim || !p->dim_len || !grp_dim)
        return oom(e);
    for (unsigned i = 0; i < p->nax; i++) {
        struct axis *a = &p->ax[i];
        if (a->group >= 0 && grp_dim[a->group]) {
            p->ax_dim[i] = grp_dim[a->group] - 1;
            continue;
        }
        p->ax_dim[i] = (int)p->ndim;
        p->dim_len[p->ndim++] = a->nval;
        if (a->group >= 0)
            grp_dim[a->group] = (int)p->ndim;
    }
    double total = 1;
    for (unsigned d = 0; d < p->ndim; d++)
        total *= p->dim_len[d];
    if (total > sweep_max_points)
        return err_set(e, -QOSIM_EINVAL, "%s: %.0f points, more than the %u a sweep may have",
                       p->c.file, total, sweep_max_points);
    unsigned *at = own(p, calloc(p->ndim + 1, sizeof *at));
    unsigned *v = own(p, calloc(p->nax + 1, sizeof *v));
    p->pt = own(p, calloc((size_t)total * p->nax + 1, sizeof *p->pt));
    if (!at || !v || !p->pt)
        return oom(e);
    /* The first axis varies slowest, as nested loops written in file
     * order would. */
    for (size_t k = 0; k < (size_t)total; k++) {
        for (unsigned i = 0; i < p->nax; i++)
            v[i] = at[p->ax_dim[i]];
        if (!excluded(p, v))
            memcpy(&p->pt[p->npt++ * p->nax], v, p->nax * sizeof *v);
        for (unsigned d = p->ndim; d-- > 0;) {
            if (++at[d] < p->dim_len[d])
                break;
            at[d] = 0;
        }
    }
    for (unsigned i = 0; i < p->nex; i++)
        if (!p->ex[i].hits)
            return conf_error(&p->c, p->ex[i].node, e,
                              "this exclusion matches no point (its axes are zipped apart?)");
    if (!p->npt)
        return err_set(e, -QOSIM_EINVAL, "%s: every point is excluded", p->c.file);
    char num[32];
    p->width = (unsigned)snprintf(num, sizeof num, "%zu", p->npt - 1);
    if (p->width < 4)
        p->width = 4;
    return 0;
}

/* ---- one point's scenario ----------------------------------------------------- */

struct point {
    struct conf c;
    struct conf_node *set[64]; /* nodes the axes replaced */
    unsigned nset;
    FILE *inputs; /* the files it reads, or NULL */
};

static int was_set(const struct point *pt, const struct conf_node *n)
{
    for (unsigned i = 0; i < pt->nset; i++)
        if (pt->set[i] == n)
            return 1;
    return 0;
}

/* A relative path made absolute: from the sweep file's folder when an axis
 * wrote it, else from the base scenario's, as `qosim run` would read it. */
static int abs_path(struct plan *p, struct point *pt, struct conf_node *n, int from_axis, int input,
                    struct err *e)
{
    if (n->type != CONF_SCALAR || !n->val[0])
        return 0; /* the scenario's check names it */
    if (n->val[0] != '/') {
        const char *dir = from_axis || was_set(pt, n) ? p->sdir : p->bdir;
        size_t len = strlen(dir) + strlen(n->val) + 2;
        char *s = own(p, malloc(len));
        if (!s)
            return oom(e);
        snprintf(s, len, "%s/%s", dir, n->val);
        n->val = s;
        n->plain = 0;
    }
    if (input && pt->inputs)
        fprintf(pt->inputs, "%s\n", n->val);
    return 0;
}

/* The files a scenario names (docs/scenarios.md): the platform's profile,
 * each task's trace, program and standard input and output. */
static int fix_paths(struct plan *p, struct point *pt, struct err *e)
{
    struct conf_node *root = pt->c.root, *n;
    int rc = 0;
    if (root->type != CONF_MAP)
        return 0;
    if ((n = map_find(root, "platform")) && n->type == CONF_SCALAR && plat_is_path(n->val))
        rc = abs_path(p, pt, n, 0, 1, e);
    struct conf_node *tasks = map_find(root, "tasks");
    for (unsigned i = 0; !rc && tasks && tasks->type == CONF_SEQ && i < tasks->nkids; i++) {
        struct conf_node *t = &tasks->kids[i], *w;
        if (t->type != CONF_MAP || !(w = map_find(t, "workload")) || w->type != CONF_MAP)
            continue;
        int ax = was_set(pt, t) || was_set(pt, w) || was_set(pt, tasks);
        if ((n = map_find(w, "trace")))
            rc = abs_path(p, pt, n, ax, 1, e);
        if (!rc && (n = map_find(w, "stdin")))
            rc = abs_path(p, pt, n, ax, 1, e);
        /* stdout stays as written: a relative one is each point's own,
         * in its folder, where its program runs. */
        struct conf_node *prog = map_find(w, "program");
        if (!rc && prog) {
            int pax = ax || was_set(pt, prog);
            n = prog->type == CONF_SEQ && prog->nkids ? &prog->kids[0] : prog;
            char found[PATH_MAX];
            if (n->type != CONF_SCALAR)
                continue;
            if (strchr(n->val, '/'))
                rc = abs_path(p, pt, n, pax, 1, e);
            else if (pt->inputs && !path_which(n->val, found, sizeof found))
                fprintf(pt->inputs, "%s\n", found); /* the program PATH finds now */
        }
    }
    return rc;
}

static void point_free(struct plan *p, struct point *pt)
{
    conf_free(&pt->c);
    pool_free(&p->tmp);
    p->cur = &p->keep;
}

/* Point k's scenario as a tree, its inputs listed into pt->inputs. */
static int point_tree(struct plan *p, size_t k, struct point *pt, struct err *e)
{
    p->cur = &p->tmp;
    int rc = conf_load_mem(&pt->c, p->bname, p->btext, p->blen, e);
    const unsigned *v = &p->pt[k * p->nax];
    for (unsigned i = 0; !rc && i < p->nax; i++) {
        struct axis *a = &p->ax[i];
        if (!a->keynode)
            continue;
        struct conf_node *n = resolve(p, a, pt->c.root, e), *val = a->val[v[i]];
        if (!n)
            return -QOSIM_EPARSE;
        n->type = val->type;
        n->val = val->val;
        n->plain = val->plain;
        n->kids = val->kids;
        n->nkids = val->nkids;
        if (pt->nset < sizeof pt->set / sizeof *pt->set)
            pt->set[pt->nset++] = n;
    }
    return rc ? rc : fix_paths(p, pt, e);
}

static void point_name(const struct plan *p, size_t k, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "point %0*zu (", (int)p->width, k);
    for (unsigned i = 0; i < p->nax && n > 0 && (size_t)n < cap; i++)
        n += snprintf(buf + n, cap - n, "%s%s=%s", i ? ", " : "", p->ax[i].name,
                      p->ax[i].label[p->pt[k * p->nax + i]]);
    if (n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - n, ")");
}

/* Point k's scenario file text (with a first line saying what it is). */
static int point_text(struct plan *p, size_t k, char **text, size_t *len, FILE *inputs,
                      struct err *e)
{
    struct point pt = {.inputs = inputs};
    int rc = point_tree(p, k, &pt, e);
    char name[1024];
    point_name(p, k, name, sizeof name);
    FILE *f = rc ? NULL : open_memstream(text, len);
    if (!rc && !f)
        rc = oom(e);
    if (f) {
        /* Not the sweep file's name as typed: the key hashes this line. */
        fprintf(f, "# %s of the sweep planned in ../../sweep.yaml\n", name);
        if (conf_write(f, pt.c.root, 0))
            rc = oom(e);
        if (fclose(f))
            rc = oom(e);
    }
    point_free(p, &pt);
    return rc;
}

/* Which axis an error of the scenario check is about: the one whose key
 * path the message's path starts with. */
static const struct axis *axis_of(struct plan *p, size_t k, const char *msg)
{
    if (strncmp(msg, "scenario.yaml:", 14))
        return NULL;                        /* a profile's own error */
    const char *q = strstr(msg + 14, ": "); /* past the line */
    if (!q)
        return NULL;
    q += 2;
    struct point pt = {0};
    struct err scratch;
    const struct axis *best = NULL;
    if (!point_tree(p, k, &pt, &scratch)) {
        for (unsigned i = 0; i < p->nax; i++) {
            if (!p->ax[i].keynode)
                continue;
            struct conf_node *n = resolve(p, &p->ax[i], pt.c.root, &scratch);
            char path[512];
            if (!n)
                continue;
            conf_path(n, path, sizeof path);
            size_t l = strlen(path);
            if (!strncmp(q, path, l) && strchr(":.[", q[l]))
                best = &p->ax[i];
        }
    }
    point_free(p, &pt);
    return best;
}

/* Checks point k as `qosim run` would check its file, without running. */
static int point_check(struct plan *p, size_t k, struct err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc = point_text(p, k, &text, &len, NULL, e);
    char name[1024];
    point_name(p, k, name, sizeof name);
    if (!rc) {
        struct conf c;
        struct scen s;
        memset(&s, 0, sizeof s);
        rc = conf_load_mem(&c, "scenario.yaml", text, len, e);
        if (!rc)
            rc = scen_from_conf(&s, &c, p->sdir, &qos_scen, e);
        if (!rc)
            scen_free(&s);
        conf_free(&c);
        if (rc) {
            const struct axis *a = axis_of(p, k, e->msg);
            char msg[sizeof e->msg];
            /* The line of a file not written means nothing to the reader:
             * the key path and the point's values say where. */
            const char *m = e->msg;
            if (!strncmp(m, "scenario.yaml:", 14) && strstr(m + 14, ": "))
                m = strstr(m + 14, ": ") + 2;
            snprintf(msg, sizeof msg, "%s", m);
            /* A key no axis sets is the base's: its line. */
            rc = conf_error(&p->c, a ? a->node : p->basenode, e, "%s: %s", name, msg);
        }
    } else {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        rc = err_set(e, rc, "%s (%s)", msg, name);
    }
    free(text);
    return rc;
}

/* ---- the folder ------------------------------------------------------------------- */

static int write_file(const char *path, const char *text, size_t len, struct err *e)
{
    /* Unchanged files are left alone, so a plan made again touches nothing
     * that did not change. */
    size_t olen = 0;
    struct err scratch;
    char *old = sweep_read_file(path, &olen, &scratch);
    if (old && olen == len && !memcmp(old, text, len)) {
        free(old);
        return 0;
    }
    free(old);
    struct ofile o;
    int rc = ofile_open(&o, path, e);
    if (rc)
        return rc;
    fwrite(text, 1, len, o.f);
    return ofile_commit(&o, e);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Point folders of an earlier plan that this one has not. */
static void remove_stale(const char *dir, size_t npt, unsigned width)
{
    char pts[PATH_MAX + 16];
    snprintf(pts, sizeof pts, "%s/points", dir);
    DIR *d = opendir(pts);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        if (de->d_name[0] == '.')
            continue;
        unsigned long k = strtoul(de->d_name, &end, 10);
        if (!*end && strlen(de->d_name) == width && k < npt)
            continue;
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", pts, de->d_name);
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    if (d)
        closedir(d);
}

/* DIR may be new, empty, or a sweep folder (it has a manifest). */
static int prepare_dir(const char *dir, int *fresh, struct err *e)
{
    *fresh = 0;
    if (!mkdir(dir, 0777)) {
        *fresh = 1;
        return 0;
    }
    if (errno != EEXIST)
        return err_set(e, -QOSIM_EIO, "%s: cannot make the folder: %s", dir, strerror(errno));
    DIR *d = opendir(dir);
    if (!d)
        return err_set(e, -QOSIM_EIO, "%s: %s", dir, strerror(errno));
    struct dirent *de;
    int other = 0, sweep = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        sweep |= !strcmp(de->d_name, "manifest.tsv");
        /* A plan that was interrupted wrote points (and perhaps the sweep
         * file) but no manifest yet: it is planned again. */
        other += strcmp(de->d_name, "points") && strcmp(de->d_name, "sweep.yaml");
    }
    closedir(d);
    if (other && !sweep)
        return err_set(e, -QOSIM_EINVAL,
                       "%s exists and is not a sweep folder (no manifest.tsv): name a new or "
                       "empty folder",
                       dir);
    return 0;
}

static int write_points(struct plan *p, const char *dir, struct err *e)
{
    unsigned width = p->width;
    char path[PATH_MAX * 2];
    snprintf(path, sizeof path, "%s/points", dir);
    if (mkdir(path, 0777) && errno != EEXIST)
        return err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(errno));
    int rc = 0;
    for (size_t k = 0; k < p->npt && !rc; k++) {
        snprintf(path, sizeof path, "%s/points/%0*zu", dir, (int)width, k);
        if (mkdir(path, 0777) && errno != EEXIST)
            return err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(errno));
        char *text = NULL, *in = NULL;
        size_t len = 0, inlen = 0;
        FILE *inputs = open_memstream(&in, &inlen);
        if (!inputs)
            return oom(e);
        rc = point_text(p, k, &text, &len, inputs, e);
        fclose(inputs);
        if (!rc) {
            snprintf(path, sizeof path, "%s/points/%0*zu/scenario.yaml", dir, (int)width, k);
            rc = write_file(path, text, len, e);
        }
        if (!rc) {
            snprintf(path, sizeof path, "%s/points/%0*zu/inputs", dir, (int)width, k);
            rc = write_file(path, in ? in : "", inlen, e);
        }
        free(text);
        free(in);
    }
    if (rc)
        return rc;
    remove_stale(dir, p->npt, width);
    /* The manifest last: a folder with one is a complete plan. */
    char *m = NULL;
    size_t mlen = 0;
    FILE *f = open_memstream(&m, &mlen);
    if (!f)
        return oom(e);
    fputs("point", f);
    for (unsigned i = 0; i < p->nax; i++)
        fprintf(f, "\t%s", p->ax[i].name);
    fputc('\n', f);
    for (size_t k = 0; k < p->npt; k++) {
        fprintf(f, "%0*zu", (int)width, k);
        for (unsigned i = 0; i < p->nax; i++)
            fprintf(f, "\t%s", p->ax[i].label[p->pt[k * p->nax + i]]);
        fputc('\n', f);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/sweep.yaml", dir);
    size_t swlen = 0;
    char *sw = sweep_read_file(p->c.file, &swlen, e);
    rc = sw ? write_file(path, sw, swlen, e) : e->code;
    free(sw);
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    if (!rc)
        rc = write_file(path, m, mlen, e);
    free(m);
    return rc;
}

static void plan_free(struct plan *p)
{
    for (unsigned i = 0; p->ax && i < p->nax; i++) {
        free(p->ax[i].val);
        free(p->ax[i].label);
    }
    free(p->ax);
    free(p->btext);
    pool_free(&p->tmp);
    pool_free(&p->keep);
    conf_free(&p->c);
}

/* Paths a and b name one place, or one holds the other. */
static int overlap(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;
    return !strncmp(a, b, l) && (la == lb || strchr(".[", la < lb ? b[l] : a[l]));
}

static int read_sweep(struct plan *p, const char *file, struct err *e)
{
    int rc = conf_load_file(&p->c, file, e);
    /* libyaml's word for a bracket in a flow mapping: say what to do. */
    if (rc == -QOSIM_EPARSE && strstr(e->msg, "did not find expected ',' or '}'")) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return err_set(e, rc,
                       "%.400s (a key path with brackets in a {...} mapping is quoted: "
                       "{key: \"tasks[0].cpu\", ...})",
                       msg);
    }
    if (rc)
        return rc;
    struct conf_node *root = p->c.root;
    if ((rc = conf_expect(&p->c, root, CONF_MAP, e)) ||
        (rc = conf_keys(&p->c, root, e, "base", "axes", "zip", "exclude", "slurm", NULL)) ||
        (rc = abs_dir(file, p->sdir, e)))
        return rc;
    struct conf_node *b = conf_get(root, "base"), *axes = conf_get(root, "axes");
    p->basenode = b;
    if (!b)
        return conf_error(&p->c, root, e, "missing key 'base' (the scenario to sweep)");
    if (!axes)
        return conf_error(&p->c, root, e, "missing key 'axes' (what the sweep varies)");
    if ((rc = read_base(p, b, e)) || (rc = conf_expect(&p->c, axes, CONF_SEQ, e)))
        return rc;
    if (!axes->nkids)
        return conf_error(&p->c, axes, e, "a sweep needs at least one axis");
    struct conf base;
    if ((rc = conf_load_mem(&base, p->bname, p->btext, p->blen, e)))
        return rc;
    if (!(p->ax = calloc(axes->nkids, sizeof *p->ax))) {
        conf_free(&base);
        return oom(e);
    }
    for (unsigned i = 0; !rc && i < axes->nkids; i++) {
        struct axis *a = &p->ax[p->nax++];
        rc = read_axis(p, a, &axes->kids[i], e);
        for (unsigned j = 0; !rc && j + 1 < p->nax; j++)
            if (!strcmp(p->ax[j].name, a->name))
                rc = conf_error(&p->c, a->node, e,
                                "two axes are called '%s' (give one a name: different)", a->name);
        /* Its key must name a place in the scenario, and one no other axis
         * sets, itself or a part of it: the manifest would label points
         * with values they do not have. */
        struct conf_node *at = !rc && a->keynode ? resolve(p, a, base.root, e) : NULL;
        if (!rc && a->keynode && !at)
            rc = -QOSIM_EPARSE;
        if (at) {
            char path[512];
            conf_path(at, path, sizeof path);
            if (!(a->path = own(p, strdup(path))))
                rc = oom(e);
            for (unsigned j = 0; !rc && j + 1 < p->nax; j++)
                if (p->ax[j].path && overlap(p->ax[j].path, a->path))
                    rc = conf_error(&p->c, a->keynode, e,
                                    "'%s' (%s) overlaps what axis '%s' sets (line %u, %s): a "
                                    "key has one axis",
                                    a->keynode->val, a->path, p->ax[j].name, p->ax[j].keynode->line,
                                    p->ax[j].path);
        }
    }
    conf_free(&base);
    struct conf_node *n;
    if (!rc && (n = conf_get(root, "zip")))
        rc = read_zip(p, n, e);
    for (unsigned i = 0; !rc && i < p->nax; i++)
        if (!p->ax[i].keynode && p->ax[i].group < 0)
            rc = conf_error(&p->c, p->ax[i].node, e,
                            "axis '%s' sets no key, so its points would all be the same: zip it "
                            "with the axes it labels (zip: [[%s, ...]]) or give it a key",
                            p->ax[i].name, p->ax[i].name);
    if (!rc)
        rc = check_repeats(p, e);
    if (!rc && (n = conf_get(root, "exclude")))
        rc = read_exclude(p, n, e);
    if (!rc && (n = conf_get(root, "slurm")))
        rc = read_slurm(p, n, e);
    if (!rc)
        rc = conf_check_unused(&p->c, root, e);
    return rc;
}

int sweep_plan(const char *file, const char *dir, size_t *npoint, struct err *e)
{
    struct plan p;
    memset(&p, 0, sizeof p);
    p.cur = &p.keep;
    int rc = read_sweep(&p, file, e);
    if (!rc)
        rc = expand(&p, e);
    /* Every point is checked before anything is written. */
    for (size_t k = 0; !rc && k < p.npt; k++)
        rc = point_check(&p, k, e);
    int fresh = 0;
    if (!rc && dir)
        rc = prepare_dir(dir, &fresh, e);
    if (!rc && dir) {
        rc = write_points(&p, dir, e);
        if (rc && fresh)
            nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    *npoint = p.npt;
    plan_free(&p);
    return rc;
}
