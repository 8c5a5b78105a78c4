/* qosim sweep plot: one number of the done points drawn over their axes
 * with gnuplot. See plot.h. */
#include "plot.h"

#include "collect.h"
#include "util/conf.h"
#include "util/gnuplot.h"
#include "util/ofile.h"

#include <json-c/json.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_LIST  20  /* points named in a note, of each kind */
#define PLOT_TICS  16  /* a numeric axis's values labelled one by one up to this many */
#define PLOT_CELLS 400 /* a heatmap's cells carry their value up to this many */

/* Why a point has no value. */
enum plot_why { PLOT_OK, PLOT_NOPHASE, PLOT_NOTASK, PLOT_NOFIELD, PLOT_NULL, PLOT_NAN, PLOT_NWHY };

/* An axis as the plot places it. */
struct plot_axis {
    int a;            /* its index among the sweep's axes; -1: not drawn */
    int num;          /* every value drawn reads as a number */
    size_t n;         /* distinct values among the points drawn */
    const char **val; /* [n] in placing order */
    double *at;       /* [n] their places: the number, or the index */
};

struct plot {
    const struct sweep *sw;
    const struct sweep_plot_opts *o;
    const char *metric, *task;
    char *task_own;       /* the task's name when it was found, not given */
    unsigned char *sel;   /* [npoint] chosen by --where */
    enum sweep_state *st; /* [npoint] of the chosen ones */
    unsigned char *done;  /* [npoint] chosen and done */
    unsigned char *why;   /* [npoint] enum plot_why of the done ones */
    unsigned char *on;    /* [npoint] drawn */
    double *v;            /* [npoint] the value drawn */
    size_t non;
    char phase[256]; /* every drawn point's phase, when they share its name */
    char miss[1200]; /* the chosen points that are not done, named */
    size_t nmiss;
    int phases_differ;
    double vmin, vmax;
    struct plot_axis x, s, y; /* x; the series (lines); y (heatmap) */
    char *first_fields;       /* what the first point's row has, for a message */
};

/* ---- axis values ---- */

/* An axis value as a number: an integer (decimal or 0x-hex), a size (8K,
 * 1MiB), or a decimal with fraction or exponent. */
static int plot_num(const char *s, double *out)
{
    uint64_t u;
    if (!conf_parse_u64(s, &u) || !conf_parse_size(s, &u)) {
        *out = (double)u;
        return 1;
    }
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (!*s || *s == ' ' || *s == '\t' || *end || errno || !isfinite(d))
        return 0;
    *out = d;
    return 1;
}

/* Two values of an axis are the same: as written, or as numbers. */
static int plot_same(const char *a, const char *b)
{
    double x, y;
    return !strcmp(a, b) || (plot_num(a, &x) && plot_num(b, &y) && x == y);
}

static int plot_axis_index(const struct sweep *sw, const char *name)
{
    for (unsigned a = 0; a < sw->naxis; a++)
        if (!strcmp(sw->axis[a], name))
            return (int)a;
    return -1;
}

/* "a, b, c" of the sweep's axes, for messages. */
static void plot_axis_list(const struct sweep *sw, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned a = 0; a < sw->naxis && len < cap; a++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", a ? ", " : "", sw->axis[a]);
}

static int plot_axis_arg(const struct sweep *sw, const char *opt, const char *name, int *a,
                         struct err *e)
{
    char list[400];
    *a = name ? plot_axis_index(sw, name) : -1;
    if (!name || *a >= 0)
        return 0;
    plot_axis_list(sw, list, sizeof list);
    return err_set(e, -QOSIM_EINVAL, "%s %s: the sweep has no such axis (its axes: %s)", opt, name,
                   list);
}

/* "1, 2, 4 and 3 more": the distinct values of axis a that the points
 * with only[i] set have (all when only is NULL), in manifest order. */
static void plot_values(const struct sweep *sw, unsigned a, const unsigned char *only, char *buf,
                        size_t cap)
{
    size_t len = 0, n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sw->npoint; i++) {
        size_t k = 0;
        while (k < i && strcmp(sw->val[k][a], sw->val[i][a]))
            k++;
        if (k < i) /* not its first appearance */
            continue;
        for (k = i; only && k < sw->npoint; k++)
            if (only[k] && !strcmp(sw->val[k][a], sw->val[i][a]))
                break;
        if (k == sw->npoint)
            continue;
        if (n < 8 && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", n ? ", " : "", sw->val[i][a]);
        n++;
    }
    if (n > 8 && len < cap)
        snprintf(buf + len, cap - len, " and %zu more", n - 8);
}

/* ---- choosing the points ---- */

/* --where: the points whose value of each named axis is one of those
 * named for it. */
static int plot_where(struct plot *p, struct err *e)
{
    const struct sweep *sw = p->sw;
    memset(p->sel, 1, sw->npoint);
    for (unsigned a = 0; a < sw->naxis; a++) {
        int named = 0;
        for (size_t i = 0; i < sw->npoint; i++) {
            int any = 0;
            for (size_t w = 0; w < p->o->nwhere; w++) {
                const char *c = p->o->where[w], *eq = strchr(c, '=');
                if (!eq || (size_t)(eq - c) != strlen(sw->axis[a]) ||
                    strncmp(c, sw->axis[a], (size_t)(eq - c)))
                    continue;
                named = 1;
                any |= plot_same(sw->val[i][a], eq + 1);
            }
            if (named && !any)
                p->sel[i] = 0;
        }
    }
    /* Each condition names an axis and a value some point has. */
    for (size_t w = 0; w < p->o->nwhere; w++) {
        const char *c = p->o->where[w], *eq = strchr(c, '=');
        char name[256], list[400];
        if (!eq || eq == c)
            return err_set(e, -QOSIM_EINVAL, "--where %s: expected AXIS=VALUE", c);
        snprintf(name, sizeof name, "%.*s", (int)(eq - c), c);
        int a = plot_axis_index(sw, name);
        if (a < 0) {
            plot_axis_list(sw, list, sizeof list);
            return err_set(e, -QOSIM_EINVAL, "--where %s: the sweep has no axis %s (its axes: %s)",
                           c, name, list);
        }
        size_t i = 0;
        while (i < sw->npoint && !plot_same(sw->val[i][a], eq + 1))
            i++;
        if (i == sw->npoint) {
            plot_values(sw, (unsigned)a, NULL, list, sizeof list);
            return err_set(e, -QOSIM_EINVAL, "--where %s: no point has %s=%s (its values: %s)", c,
                           name, eq + 1, list);
        }
    }
    for (size_t i = 0; i < sw->npoint; i++)
        if (p->sel[i])
            return 0;
    return err_set(e, -QOSIM_ENOENT, "no point has all the --where values at once");
}

/* "ipc, cycles, references.L1I, ...": the numbers a row holds. */
static void plot_fields(struct json_object *obj, const char *prefix, char *buf, size_t cap,
                        size_t *len)
{
    json_object_object_foreach(obj, k, v)
    {
        char name[512];
        snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", k);
        enum json_type t = json_object_get_type(v);
        if (t == json_type_object)
            plot_fields(v, name, buf, cap, len);
        else if ((t == json_type_int || t == json_type_double || t == json_type_null) && *len < cap)
            *len += (size_t)snprintf(buf + *len, cap - *len, "%s%s", *len ? ", " : "", name);
    }
}

/* The task's name when none was given: the only one the phase has. */
static int plot_only_task(struct plot *p, struct json_object *tasks, struct err *e)
{
    size_t n = json_object_array_length(tasks), len = 0;
    char list[400] = "";
    for (size_t k = 0; k < n && len < sizeof list; k++) {
        struct json_object *t;
        json_object_object_get_ex(json_object_array_get_idx(tasks, k), "task", &t);
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "",
                                json_object_get_string(t));
    }
    if (n != 1)
        return err_set(e, -QOSIM_EINVAL, "choose the task with --task (the tasks: %s)", list);
    struct json_object *t;
    json_object_object_get_ex(json_object_array_get_idx(tasks, 0), "task", &t);
    p->task = json_object_get_string(t); /* kept alive: see plot_point */
    return 0;
}

/* The named phase of a result, or its last. */
static struct json_object *plot_phase(struct json_object *phases, const char *name)
{
    size_t n = json_object_array_length(phases);
    for (size_t k = 0; k < n; k++) {
        struct json_object *ph = json_object_array_get_idx(phases, k), *nm;
        json_object_object_get_ex(ph, "name", &nm);
        if (name ? !strcmp(json_object_get_string(nm), name) : k + 1 == n)
            return ph;
    }
    return NULL;
}

/* Point i's value, or why it has none. */
static int plot_point(struct plot *p, size_t i, struct json_object **keep, struct err *e)
{
    struct json_object *res, *phases, *tasks, *nm, *v = NULL, *row = NULL;
    int rc = sweep_res_read(p->sw, i, &res, e);
    if (rc)
        return rc;
    json_object_object_get_ex(res, "phases", &phases);
    struct json_object *ph = plot_phase(phases, p->o->phase);
    if (!ph) {
        p->why[i] = PLOT_NOPHASE;
        json_object_put(res);
        return 0;
    }
    json_object_object_get_ex(ph, "name", &nm);
    json_object_object_get_ex(ph, "tasks", &tasks);
    if (!p->task && (rc = plot_only_task(p, tasks, e))) {
        json_object_put(res);
        return rc;
    }
    if (!*keep) /* the first result read holds the task's name, when it was chosen so */
        *keep = json_object_get(res);
    for (size_t k = 0; !row && k < json_object_array_length(tasks); k++) {
        struct json_object *r = json_object_array_get_idx(tasks, k), *t;
        json_object_object_get_ex(r, "task", &t);
        if (!strcmp(json_object_get_string(t), p->task))
            row = r;
    }
    enum json_type t = json_type_null;
    if (row && !p->first_fields && (p->first_fields = calloc(1, 600))) {
        size_t len = 0;
        plot_fields(row, "", p->first_fields, 600, &len);
    }
    if (!row)
        p->why[i] = PLOT_NOTASK;
    else if (!sweep_res_field(row, p->metric, &v))
        p->why[i] = PLOT_NOFIELD;
    else if ((t = json_object_get_type(v)) == json_type_null)
        p->why[i] = PLOT_NULL;
    else if (t != json_type_int && t != json_type_double)
        p->why[i] = PLOT_NAN;
    else {
        p->why[i] = PLOT_OK;
        p->v[i] = json_object_get_double(v);
        const char *name = json_object_get_string(nm);
        if (!p->non++)
            snprintf(p->phase, sizeof p->phase, "%s", name);
        else if (strcmp(p->phase, name))
            p->phases_differ = 1;
    }
    json_object_put(res);
    return 0;
}

/* Names the points of one kind on the note stream. */
static void plot_note(struct plot *p, const char *what, const unsigned char *of, int kind)
{
    const struct sweep *sw = p->sw;
    size_t n = 0, len = 0;
    char list[1024] = "";
    for (size_t i = 0; i < sw->npoint; i++) {
        if (!of[i] || p->why[i] != kind)
            continue;
        if (n < PLOT_LIST && len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%0*zu", n ? ", " : "",
                                    (int)sw->width, i);
        n++;
    }
    if (!n)
        return;
    if (n > PLOT_LIST && len < sizeof list)
        snprintf(list + len, sizeof list - len, " and %zu more", n - PLOT_LIST);
    fprintf(p->o->note ? p->o->note : stderr, "qosim sweep: left out %zu point%s, %s: %s\n", n,
            n == 1 ? "" : "s", what, list);
}

/* Why no point could be drawn, as an error. */
static int plot_none(struct plot *p, const unsigned char *done, struct err *e)
{
    size_t count[PLOT_NWHY] = {0};
    for (size_t i = 0; i < p->sw->npoint; i++)
        if (done[i])
            count[p->why[i]]++;
    const char *ph = p->o->phase ? p->o->phase : "(the last)";
    /* The furthest any point got says what is wrong: a point that has the
     * task's row but not the metric means the metric is. */
    if (count[PLOT_NOFIELD] || count[PLOT_NAN])
        return err_set(e, -QOSIM_EINVAL,
                       "--metric %s: %s's rows have no such number (they have %s)", p->metric,
                       p->task, p->first_fields ? p->first_fields : "none");
    if (count[PLOT_NULL])
        return err_set(e, -QOSIM_ENOENT, "--metric %s: no point has a value of it for %s (null)",
                       p->metric, p->task);
    if (count[PLOT_NOTASK])
        return err_set(e, -QOSIM_EINVAL, "--task %s: no point's phase %s has that task", p->task,
                       ph);
    return err_set(e, -QOSIM_EINVAL, "--phase %s: no point's result has that phase", ph);
}

/* The chosen points' states and values. */
static int plot_gather(struct plot *p, struct err *e)
{
    const struct sweep *sw = p->sw;
    struct json_object *keep = NULL;
    size_t ndone = 0;
    for (size_t i = 0; i < sw->npoint; i++) {
        p->st[i] = p->sel[i] ? sweep_state_now(sw, i) : SWEEP_DONE;
        ndone += p->done[i] = p->sel[i] && p->st[i] == SWEEP_DONE;
    }
    p->nmiss = sweep_res_missing(sw, p->st, p->sel, PLOT_LIST, p->miss, sizeof p->miss, NULL);
    int rc = 0;
    if (!ndone)
        rc = err_set(e, -QOSIM_ENOENT,
                     "none of the %s points is done (%s); run `qosim sweep status %s`",
                     p->o->nwhere ? "chosen" : "sweep's", p->miss, sw->dir);
    for (size_t i = 0; !rc && i < sw->npoint; i++)
        if (p->done[i])
            rc = plot_point(p, i, &keep, e);
    for (size_t i = 0; !rc && i < sw->npoint; i++)
        p->on[i] = p->done[i] && p->why[i] == PLOT_OK;
    if (!rc && !p->non)
        rc = plot_none(p, p->done, e);
    /* The task's name may live in the first result: it must outlive the
     * plot, so it is copied before that result goes. */
    if (!rc && !p->o->task && keep && !(p->task = p->task_own = strdup(p->task)))
        rc = err_set(e, -QOSIM_ENOMEM, "plotting the sweep: out of memory");
    json_object_put(keep);
    return rc;
}

/* The chosen points the plot leaves out, and why: said once it is sure to
 * be drawn, so that a refusal stands alone. */
static void plot_notes(struct plot *p)
{
    char what[600];
    const char *ph = p->o->phase ? p->o->phase : "the last";
    if (p->nmiss)
        fprintf(p->o->note ? p->o->note : stderr,
                "qosim sweep: left out %zu point%s, not done (%s)\n", p->nmiss,
                p->nmiss == 1 ? "" : "s", p->miss);
    snprintf(what, sizeof what, "without phase %s", ph);
    plot_note(p, what, p->done, PLOT_NOPHASE);
    snprintf(what, sizeof what, "without task %s in phase %s", p->task, ph);
    plot_note(p, what, p->done, PLOT_NOTASK);
    snprintf(what, sizeof what, "whose %s rows have no %s", p->task, p->metric);
    plot_note(p, what, p->done, PLOT_NOFIELD);
    snprintf(what, sizeof what, "whose %s is null for %s", p->metric, p->task);
    plot_note(p, what, p->done, PLOT_NULL);
    snprintf(what, sizeof what, "whose %s is not a number for %s", p->metric, p->task);
    plot_note(p, what, p->done, PLOT_NAN);
}

/* ---- placing the points ---- */

/* Axis a's values among the drawn points, distinct, as one set: 1 when
 * they are more than one. */
static int plot_varies(const struct plot *p, unsigned a)
{
    const char *first = NULL;
    for (size_t i = 0; i < p->sw->npoint; i++) {
        if (!p->on[i])
            continue;
        if (!first)
            first = p->sw->val[i][a];
        else if (strcmp(first, p->sw->val[i][a]))
            return 1;
    }
    return 0;
}

/* Points i and k are at one place: the same values of the drawn axes. */
static int plot_together(const struct plot *p, size_t i, size_t k)
{
    const int ax[3] = {p->x.a, p->s.a, p->y.a};
    for (int d = 0; d < 3; d++)
        if (ax[d] >= 0 && strcmp(p->sw->val[i][ax[d]], p->sw->val[k][ax[d]]))
            return 0;
    return 1;
}

/* Axis a is a function of x and axis by (-1: x alone): no two drawn
 * points with the same values of those differ in it (a zipped axis, or
 * one --where fixed). */
static int plot_follows(const struct plot *p, unsigned a, int by)
{
    const struct sweep *sw = p->sw;
    for (size_t i = 0; i < sw->npoint; i++)
        for (size_t k = i + 1; p->on[i] && k < sw->npoint; k++)
            if (p->on[k] && !strcmp(sw->val[i][p->x.a], sw->val[k][p->x.a]) &&
                (by < 0 || !strcmp(sw->val[i][by], sw->val[k][by])) &&
                strcmp(sw->val[i][a], sw->val[k][a]))
                return 0;
    return 1;
}

static int plot_follows_x(const struct plot *p, unsigned a)
{
    return plot_follows(p, a, -1);
}

/* Among the axes that vary with x held (cand[0..n)), the first that the
 * others follow (axes zipped together are told apart by any one of them),
 * or -1. */
static int plot_leader(const struct plot *p, const unsigned *cand, size_t n)
{
    for (size_t s = 0; s < n; s++) {
        size_t k = 0;
        while (k < n && (k == s || plot_follows(p, cand[k], (int)cand[s])))
            k++;
        if (k == n)
            return (int)cand[s];
    }
    return -1;
}

/* x when none was named: the one axis that varies, other than y. */
static int plot_pick_x(struct plot *p, struct err *e)
{
    char list[400];
    size_t len = 0, n = 0;
    list[0] = '\0';
    for (unsigned a = 0; a < p->sw->naxis; a++) {
        if ((int)a == p->y.a || !plot_varies(p, a))
            continue;
        if (!n++)
            p->x.a = (int)a;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", n > 1 ? ", " : "",
                                    p->sw->axis[a]);
    }
    if (n == 1)
        return 0;
    if (!n)
        return err_set(e, -QOSIM_EINVAL, "no axis varies among the points drawn: nothing for x");
    return err_set(e, -QOSIM_EINVAL, "choose the x axis with --x (these vary: %s)", list);
}

/* Lines: the series axis is the one other axis that varies with x held;
 * two or more cannot be told apart by line alone. */
static int plot_pick_series(struct plot *p, struct err *e)
{
    char list[400];
    size_t len = 0, n = 0;
    unsigned *cand = malloc((p->sw->naxis + 1) * sizeof *cand);
    if (!cand)
        return err_set(e, -QOSIM_ENOMEM, "out of memory");
    list[0] = '\0';
    for (unsigned a = 0; a < p->sw->naxis; a++) {
        if ((int)a == p->x.a || !plot_varies(p, a) || plot_follows_x(p, a))
            continue;
        cand[n++] = a;
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", n > 1 ? ", " : "",
                                    p->sw->axis[a]);
    }
    p->s.a = n ? plot_leader(p, cand, n) : -1;
    free(cand);
    if (n <= 1 || p->s.a >= 0)
        return 0;
    return err_set(e, -QOSIM_EINVAL,
                   "with x = %s, %s vary apart: one line per value of one of them is drawn, so "
                   "fix the others with --where AXIS=VALUE (or draw a heatmap with --y AXIS)",
                   p->sw->axis[p->x.a], list);
}

/* Two drawn points at one place: refused, naming an axis they differ in. */
static int plot_collide(struct plot *p, struct err *e)
{
    const struct sweep *sw = p->sw;
    for (size_t i = 0; i < sw->npoint; i++)
        for (size_t k = i + 1; p->on[i] && k < sw->npoint; k++) {
            if (!p->on[k] || !plot_together(p, i, k))
                continue;
            unsigned a = 0;
            while (a < sw->naxis && !strcmp(sw->val[i][a], sw->val[k][a]))
                a++;
            if (a == sw->naxis)
                return err_set(e, -QOSIM_EINVAL,
                               "points %0*zu and %0*zu have the same value of every axis: the "
                               "plot cannot tell them apart",
                               (int)sw->width, i, (int)sw->width, k);
            char vals[400];
            plot_values(sw, a, p->on, vals, sizeof vals);
            return err_set(e, -QOSIM_EINVAL,
                           "points %0*zu and %0*zu would be drawn at one place: they differ in "
                           "%s (%s), which is not drawn; fix it with --where %s=VALUE",
                           (int)sw->width, i, (int)sw->width, k, sw->axis[a], vals, sw->axis[a]);
        }
    return 0;
}

/* Indices in the order of the numbers they index (ctx), ties by index. */
static int plot_cmp(const void *l, const void *r, void *ctx)
{
    const double *at = ctx;
    size_t a = *(const size_t *)l, b = *(const size_t *)r;
    return at[a] < at[b] ? -1 : at[a] > at[b] ? 1 : a < b ? -1 : a > b;
}

/* The axis's distinct values among the drawn points, in the order they
 * first appear in the manifest (whether or not that point is drawn), then
 * in numeric order when all are numbers; at[] their places: the number
 * (as_num) or the index. */
static int plot_place(struct plot *p, struct plot_axis *ax, int as_num, struct err *e)
{
    const struct sweep *sw = p->sw;
    size_t cap = sw->npoint, nall = 0;
    ax->val = calloc(cap, sizeof *ax->val);
    ax->at = calloc(cap, sizeof *ax->at);
    size_t *ord = calloc(cap, sizeof *ord);
    const char **val = calloc(cap, sizeof *val);
    double *num = calloc(cap, sizeof *num);
    unsigned char *drawn = calloc(cap, 1);
    int rc = 0;
    if (!ax->val || !ax->at || !ord || !val || !num || !drawn)
        rc = err_set(e, -QOSIM_ENOMEM, "plotting the sweep: out of memory");
    for (size_t i = 0; !rc && i < sw->npoint; i++) {
        const char *v = sw->val[i][ax->a];
        size_t k = 0;
        while (k < nall && strcmp(val[k], v))
            k++;
        if (k == nall)
            val[nall++] = v;
        drawn[k] |= p->on[i];
    }
    ax->n = 0;
    ax->num = 1;
    for (size_t k = 0; !rc && k < nall; k++) {
        if (!drawn[k])
            continue;
        ax->num &= plot_num(val[k], &num[ax->n]);
        val[ax->n] = val[k];
        ord[ax->n] = ax->n;
        ax->n++;
    }
    if (!rc && ax->num)
        qsort_r(ord, ax->n, sizeof *ord, plot_cmp, num);
    for (size_t k = 0; !rc && k < ax->n; k++) {
        ax->val[k] = val[ord[k]];
        ax->at[k] = ax->num && as_num ? num[ord[k]] : (double)k;
    }
    free(ord);
    free(val);
    free(num);
    free(drawn);
    return rc;
}

/* The place of point i along ax. */
static double plot_at(const struct plot *p, const struct plot_axis *ax, size_t i)
{
    const char *v = p->sw->val[i][ax->a];
    for (size_t k = 0; k < ax->n; k++)
        if (!strcmp(ax->val[k], v))
            return ax->at[k];
    return NAN;
}

/* ---- the gnuplot program ---- */

/* An axis's tics: each value as written at its place, every step-th when
 * there are many. */
static void plot_tics(FILE *f, const char *which, const struct plot_axis *ax)
{
    size_t step = ax->n > 30 ? (ax->n + 29) / 30 : 1;
    fprintf(f, "set %stics (", which);
    for (size_t k = 0; k < ax->n; k += step) {
        fputs(k ? ", " : "", f);
        gnuplot_str(f, ax->val[k]);
        fprintf(f, " %.17g", ax->at[k]);
    }
    fputs(")\n", f);
}

static void plot_head(FILE *f, const struct plot *p, int png, int heat)
{
    const struct sweep *sw = p->sw;
    char title[1024];
    size_t len = 0;
    const char *ph = p->o->phase ? p->o->phase : p->phases_differ ? NULL : p->phase;
    len += (size_t)snprintf(title, sizeof title, "%s of %s, %s%s", p->metric, p->task,
                            ph ? "phase " : "the last phase", ph ? ph : "");
    for (size_t w = 0; w < p->o->nwhere && len < sizeof title; w++)
        len += (size_t)snprintf(title + len, sizeof title - len, "%s%s", w ? ", " : " (",
                                p->o->where[w]);
    if (p->o->nwhere && len < sizeof title)
        snprintf(title + len, sizeof title - len, ")");
    /* noenhanced: names such as mem_read_bytes are not subscripts */
    fprintf(f, "set terminal %s size %s noenhanced font ',11'\n", png ? "pngcairo" : "svg",
            heat ? "900,700" : "900,600");
    fputs("set output\n", f); /* standard output: gnuplot_run gives it the output file */
    fputs("set title ", f);
    gnuplot_str(f, title);
    fputs("\nset xlabel ", f);
    gnuplot_str(f, sw->axis[p->x.a]);
    fputc('\n', f);
}

static void plot_lines(FILE *f, const struct plot *p, int png)
{
    const struct sweep *sw = p->sw;
    const size_t nser = p->s.a >= 0 ? p->s.n : 1;
    for (size_t s = 0; s < nser; s++) {
        /* This line's points in x order; a blank line (a break in the
         * line) where it has no point, so that nothing is drawn across a
         * point left out. */
        fprintf(f, "$s%zu << EOD\n", s);
        for (size_t k = 0; k < p->x.n; k++) {
            size_t i = 0;
            while (i < sw->npoint && (!p->on[i] || strcmp(sw->val[i][p->x.a], p->x.val[k]) ||
                                      (p->s.a >= 0 && strcmp(sw->val[i][p->s.a], p->s.val[s]))))
                i++;
            if (i < sw->npoint)
                fprintf(f, "%.17g %.17g\n", p->x.at[k], p->v[i]);
            else
                fputc('\n', f);
        }
        fputs("EOD\n", f);
    }
    plot_head(f, p, png, 0);
    fputs("set ylabel ", f);
    gnuplot_str(f, p->metric);
    fputs("\nset grid\n", f);
    /* A margin around the points, but none under a y axis from 0. */
    fprintf(f, "set offsets graph 0.03, graph 0.03, graph 0.05, %s\n",
            p->vmin >= 0 ? "0" : "graph 0.05");
    if (p->vmin >= 0)
        fputs("set yrange [0:*]\n", f);
    if (!p->x.num)
        fprintf(f, "set xrange [-0.5:%.17g]\n", (double)p->x.n - 0.5);
    if (!p->x.num || p->x.n <= PLOT_TICS)
        plot_tics(f, "x", &p->x);
    if (p->x.num && p->o->logx && p->x.at[0] > 0)
        fputs("set logscale x 2\n", f);
    if (p->s.a >= 0) {
        fputs("set key outside right top title ", f);
        gnuplot_str(f, sw->axis[p->s.a]);
        fputc('\n', f);
    } else {
        fputs("unset key\n", f);
    }
    fputs("plot ", f);
    for (size_t s = 0; s < nser; s++) {
        fprintf(f, "%s$s%zu using 1:2 with linespoints pt 7 ps 0.7 lw 2 lc rgb '%s' dt %zu",
                s ? ", " : "", s, gnuplot_colour[s % 16], 1 + s / 16);
        if (p->s.a >= 0) {
            fputs(" title ", f);
            gnuplot_str(f, p->s.val[s]);
        } else {
            fputs(" notitle", f);
        }
    }
    fputc('\n', f);
}

/* A drawn point has point i's place in the heatmap. */
static int plot_cell_drawn(const struct plot *p, size_t i)
{
    for (size_t k = 0; k < p->sw->npoint; k++)
        if (p->on[k] && plot_together(p, i, k))
            return 1;
    return 0;
}

static void plot_heat(FILE *f, const struct plot *p, int png)
{
    const struct sweep *sw = p->sw;
    fputs("$d << EOD\n", f);
    for (size_t i = 0; i < sw->npoint; i++)
        if (p->on[i])
            fprintf(f, "%.17g %.17g %.17g\n", plot_at(p, &p->x, i), plot_at(p, &p->y, i), p->v[i]);
    fputs("EOD\n", f);
    plot_head(f, p, png, 1);
    fputs("set ylabel ", f);
    gnuplot_str(f, sw->axis[p->y.a]);
    fputs("\nset cblabel ", f);
    gnuplot_str(f, p->metric);
    fprintf(f, "\nset xrange [-0.5:%.17g]\nset yrange [-0.5:%.17g]\n", (double)p->x.n - 0.5,
            (double)p->y.n - 0.5);
    plot_tics(f, "x", &p->x);
    plot_tics(f, "y", &p->y);
    fputs("set tics out nomirror\nunset key\n", f);
    fputs("set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')\n", f);
    /* Cells without a value are grey, not the palette's white, and say so
     * when one of the chosen points would be there. */
    fputs("set object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb '#bdbdbd' "
          "fs solid 1.0 noborder\n",
          f);
    for (size_t i = 0; p->x.n * p->y.n <= PLOT_CELLS && i < sw->npoint; i++) {
        double x = plot_at(p, &p->x, i), y = plot_at(p, &p->y, i);
        if (p->sel[i] && !p->on[i] && !isnan(x) && !isnan(y) && !plot_cell_drawn(p, i))
            fprintf(f, "set label 'none' at %.17g,%.17g center front tc rgb '#404040'\n", x, y);
    }
    /* One value everywhere still needs a range (gnuplot warns of an empty
     * one otherwise). */
    if (p->vmax > p->vmin)
        fprintf(f, "set cbrange [%.17g:%.17g]\n", p->vmin, p->vmax);
    else
        fprintf(f, "set cbrange [%.17g:%.17g]\n", p->vmin - 1, p->vmax + 1);
    /* Each cell's value, in white on the darker cells. */
    for (size_t i = 0; p->x.n * p->y.n <= PLOT_CELLS && i < sw->npoint; i++) {
        if (!p->on[i])
            continue;
        double t = p->vmax > p->vmin ? (p->v[i] - p->vmin) / (p->vmax - p->vmin) : 0;
        fprintf(f, "set label '%.3g' at %.17g,%.17g center front tc rgb '%s'\n", p->v[i],
                plot_at(p, &p->x, i), plot_at(p, &p->y, i), t > 0.6 ? "#ffffff" : "#000000");
    }
    fputs("plot $d using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder fc palette\n", f);
}

struct plot_gp {
    const struct plot *p;
    int png;
};

static void plot_program(FILE *f, void *ctx)
{
    const struct plot_gp *g = ctx;
    if (g->p->y.a >= 0)
        plot_heat(f, g->p, g->png);
    else
        plot_lines(f, g->p, g->png);
}

/* ---- the whole ---- */

static int plot_check_out(const char *out, struct err *e)
{
    size_t n = out ? strlen(out) : 0;
    if (!out)
        return err_set(e, -QOSIM_EINVAL, "no output file for the plot");
    if (strcmp(out, "-") && (n < 5 || (strcmp(out + n - 4, ".svg") && strcmp(out + n - 4, ".png"))))
        return err_set(e, -QOSIM_EINVAL,
                       "%s: the name must end in .svg or .png (or be - for SVG on standard "
                       "output)",
                       out);
    return 0;
}

/* Where the points go: x, and the series or y; none two at one place. */
static int plot_layout(struct plot *p, struct err *e)
{
    int rc = p->x.a < 0 ? plot_pick_x(p, e) : 0;
    if (!rc && p->x.a == p->y.a)
        rc = err_set(e, -QOSIM_EINVAL, "--x and --y name one axis (%s)", p->sw->axis[p->x.a]);
    if (!rc && p->y.a < 0)
        rc = plot_pick_series(p, e);
    if (!rc)
        rc = plot_collide(p, e);
    if (!rc)
        rc = plot_place(p, &p->x, p->y.a < 0, e);
    if (!rc && p->s.a >= 0)
        rc = plot_place(p, &p->s, 0, e);
    if (!rc && p->y.a >= 0)
        rc = plot_place(p, &p->y, 0, e);
    if (!rc && p->o->logx && p->y.a >= 0)
        rc = err_set(e, -QOSIM_EINVAL,
                     "--logx is for a line plot; a heatmap's cells are evenly "
                     "spaced");
    else if (!rc && p->o->logx && (!p->x.num || p->x.at[0] <= 0))
        rc = err_set(e, -QOSIM_EINVAL, "--logx: %s's values are not all positive numbers",
                     p->sw->axis[p->x.a]);
    return rc;
}

static void plot_free(struct plot *p)
{
    struct plot_axis *ax[3] = {&p->x, &p->s, &p->y};
    for (int k = 0; k < 3; k++) {
        free(ax[k]->val);
        free(ax[k]->at);
    }
    free(p->task_own);
    free(p->first_fields);
    free(p->sel);
    free(p->st);
    free(p->why);
    free(p->done);
    free(p->on);
    free(p->v);
}

int sweep_plot(const struct sweep *sw, const struct sweep_plot_opts *o, struct err *e)
{
    struct plot p = {.sw = sw, .o = o, .metric = o->metric ? o->metric : "ipc", .task = o->task};
    p.x.a = p.s.a = p.y.a = -1;
    int rc = plot_check_out(o->out, e);
    if (!rc)
        rc = plot_axis_arg(sw, "--x", o->x, &p.x.a, e);
    if (!rc)
        rc = plot_axis_arg(sw, "--y", o->y, &p.y.a, e);
    if (!rc && o->y && !o->x)
        rc = err_set(e, -QOSIM_EINVAL, "--y %s: a heatmap needs --x too", o->y);
    size_t n = sw->npoint ? sw->npoint : 1;
    if (!rc &&
        (!(p.sel = calloc(n, 1)) || !(p.st = calloc(n, sizeof *p.st)) || !(p.why = calloc(n, 1)) ||
         !(p.done = calloc(n, 1)) || !(p.on = calloc(n, 1)) || !(p.v = calloc(n, sizeof *p.v))))
        rc = err_set(e, -QOSIM_ENOMEM, "plotting the sweep: out of memory");
    if (!rc)
        rc = plot_where(&p, e);
    if (!rc)
        rc = plot_gather(&p, e);
    if (!rc)
        rc = plot_layout(&p, e);
    p.vmin = INFINITY;
    p.vmax = -INFINITY;
    for (size_t i = 0; !rc && i < sw->npoint; i++)
        if (p.on[i]) {
            p.vmin = fmin(p.vmin, p.v[i]);
            p.vmax = fmax(p.vmax, p.v[i]);
        }
    struct ofile of;
    if (!rc && !(rc = ofile_open(&of, o->out, e))) {
        plot_notes(&p);
        struct plot_gp g = {&p, gnuplot_png(&of)};
        rc = gnuplot_run(&of, "plot", plot_program, &g, e);
        if (rc)
            ofile_abort(&of);
        else
            rc = ofile_commit(&of, e);
    }
    plot_free(&p);
    return rc;
}
