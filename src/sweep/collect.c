/* qosim sweep collect: the done points' results as one CSV table and one
 * JSON Lines file. See collect.h. json-c reads the points' files; the
 * project's own JSON writer (util/json.h) is not used here, as json-c
 * writes back what it read exactly (numbers keep their text). */
#include "collect.h"

#include "util/ofile.h"

#include <json-c/json.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define COLL_NAME 512 /* a flattened column name, with its NUL */
#define COLL_LIST 5   /* points named in a refusal, of each kind */
#define COLL_NOTE 20  /* points named in the left-out note, of each kind */
#define COLL_JSON (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* ---- reading the points' files ---- */

/* "0003, 0007 and 4 more": the first max of idx[0..n). */
static void coll_names(const struct sweep *sw, const size_t *idx, size_t n, size_t max, char *buf,
                       size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n && k < max && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%0*zu", k ? ", " : "", (int)sw->width,
                                idx[k]);
    if (n > max && len < cap)
        snprintf(buf + len, cap - len, " and %zu more", n - max);
}

size_t sweep_res_missing(const struct sweep *sw, const enum sweep_state *st,
                         const unsigned char *sel, size_t max, char *buf, size_t cap,
                         size_t *nfailed)
{
    size_t *idx = malloc((sw->npoint ? sw->npoint : 1) * sizeof *idx), total = 0;
    char part[2][1024];
    size_t n[2] = {0, 0};
    buf[0] = '\0';
    if (!idx) {
        snprintf(buf, cap, "(out of memory)");
        return 0;
    }
    /* Failed ones first: they are the ones that need looking at. */
    for (int kind = 0; kind < 2; kind++) {
        enum sweep_state want = kind ? SWEEP_PENDING : SWEEP_FAILED;
        for (size_t i = 0; i < sw->npoint; i++)
            if ((!sel || sel[i]) && st[i] == want)
                idx[n[kind]++] = i;
        coll_names(sw, idx, n[kind], max, part[kind], sizeof part[kind]);
        total += n[kind];
    }
    free(idx);
    if (n[0] && n[1])
        snprintf(buf, cap, "failed: %s; pending: %s", part[0], part[1]);
    else if (n[0] || n[1])
        snprintf(buf, cap, "%s: %s", n[0] ? "failed" : "pending", part[n[0] ? 0 : 1]);
    if (nfailed)
        *nfailed = n[0];
    return total;
}

/* An array member or object field of the type wanted, or NULL. */
static struct json_object *coll_get(struct json_object *o, const char *key, enum json_type t)
{
    struct json_object *v;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
        !json_object_is_type(v, t))
        return NULL;
    return v;
}

int sweep_res_read(const struct sweep *sw, size_t i, struct json_object **res, struct err *e)
{
    char path[4300];
    if (sweep_point_path(sw, i, "result.json", path, sizeof path))
        return err_set(e, -QOSIM_EINVAL, "%s: path too long", sw->dir);
    struct json_object *r = sweep_json_read(path, e);
    if (!r)
        return e->code;
    const char *bad = NULL;
    char where[96] = "";
    struct json_object *ph = coll_get(r, "phases", json_type_array);
    if (!ph)
        bad = "no \"phases\" array";
    for (size_t p = 0; !bad && p < json_object_array_length(ph); p++) {
        struct json_object *x = json_object_array_get_idx(ph, p);
        struct json_object *t = coll_get(x, "tasks", json_type_array);
        snprintf(where, sizeof where, "phases[%zu]", p);
        if (!coll_get(x, "name", json_type_string))
            bad = "has no \"name\"";
        else if (!t)
            bad = "has no \"tasks\" array";
        for (size_t k = 0; !bad && k < json_object_array_length(t); k++)
            if (!coll_get(json_object_array_get_idx(t, k), "task", json_type_string)) {
                snprintf(where, sizeof where, "phases[%zu].tasks[%zu]", p, k);
                bad = "has no \"task\" name";
            }
    }
    if (bad) {
        json_object_put(r);
        return err_set(e, -QOSIM_EPARSE, "%s: not the output of `qosim run --json`: %s%s%s", path,
                       where, *where ? " " : "", bad);
    }
    *res = r;
    return 0;
}

int sweep_res_field(struct json_object *row, const char *name, struct json_object **v)
{
    if (!json_object_is_type(row, json_type_object))
        return 0;
    if (json_object_object_get_ex(row, name, v))
        return 1;
    /* "a.b.c": a key "a" holding "b.c", or "a.b" holding "c". */
    for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
        char key[COLL_NAME];
        struct json_object *sub;
        if ((size_t)(dot - name) >= sizeof key)
            break;
        snprintf(key, sizeof key, "%.*s", (int)(dot - name), name);
        if (json_object_object_get_ex(row, key, &sub) && sweep_res_field(sub, dot + 1, v))
            return 1;
    }
    return 0;
}

/* ---- the collection ---- */

struct coll {
    const struct sweep *sw;
    const struct sweep_collect_opts *o;
    enum sweep_state *st;        /* [npoint] */
    struct json_object **phases; /* [npoint] a done point's "phases", kept for the CSV */
    struct json_object *colidx;  /* column name -> its index */
    char **col;                  /* [ncol] names, in order of first appearance */
    size_t ncol, capcol;
    const char **val; /* [ncol] the row being written */
    struct ofile csv, jsonl;
};

static int coll_nomem(struct err *e)
{
    return err_set(e, -QOSIM_ENOMEM, "collecting the sweep's results: out of memory");
}

static int coll_addcol(struct coll *c, const char *name, struct err *e)
{
    if (c->ncol == c->capcol) {
        size_t cap = c->capcol ? 2 * c->capcol : 64;
        char **v = realloc(c->col, cap * sizeof *v);
        if (!v)
            return coll_nomem(e);
        c->col = v;
        c->capcol = cap;
    }
    struct json_object *k = json_object_new_int64((int64_t)c->ncol);
    char *dup = strdup(name);
    if (!k || !dup || json_object_object_add(c->colidx, name, k)) {
        json_object_put(k);
        free(dup);
        return coll_nomem(e);
    }
    c->col[c->ncol] = dup;
    c->ncol++;
    return 0;
}

/* Walks a task's row (or an object in it) with name[0..len) its prefix:
 * every number, and every null (a number that is not known), is a column.
 * fill 0: adds the columns not seen yet; fill 1: points c->val at the
 * row's text of each. Strings (the task's name), booleans and arrays are
 * not columns. */
static int coll_walk(struct coll *c, struct json_object *obj, char *name, size_t len, int fill,
                     struct err *e)
{
    json_object_object_foreach(obj, k, v)
    {
        int rc = 0, n = snprintf(name + len, COLL_NAME - len, "%s%s", len ? "." : "", k);
        if (n < 0 || (size_t)n >= COLL_NAME - len)
            return err_set(e, -QOSIM_EPARSE, "a field name longer than %d bytes: %.64s...",
                           COLL_NAME - 1, name);
        enum json_type t = json_object_get_type(v);
        struct json_object *ix;
        if (t == json_type_object)
            rc = coll_walk(c, v, name, len + (size_t)n, fill, e);
        else if (t != json_type_int && t != json_type_double && t != json_type_null)
            ;
        else if (!json_object_object_get_ex(c->colidx, name, &ix))
            rc = fill ? 0 : coll_addcol(c, name, e);
        else if (fill && v &&
                 !(c->val[json_object_get_int64(ix)] =
                       json_object_to_json_string_ext(v, COLL_JSON)))
            rc = coll_nomem(e);
        name[len] = '\0';
        if (rc)
            return rc;
    }
    return 0;
}

/* The columns of every task's row of every phase of a result. */
static int coll_columns(struct coll *c, struct json_object *phases, struct err *e)
{
    char name[COLL_NAME] = "";
    for (size_t p = 0; p < json_object_array_length(phases); p++) {
        struct json_object *t =
            coll_get(json_object_array_get_idx(phases, p), "tasks", json_type_array);
        for (size_t k = 0; k < json_object_array_length(t); k++) {
            int rc = coll_walk(c, json_object_array_get_idx(t, k), name, 0, 0, e);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* RFC 4180: quoted only when it holds a comma, a quote or a line break. */
static void coll_csv_field(FILE *f, const char *s)
{
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Point i's line: {"point", "axes", "record", "result"}. */
static int coll_jsonl(struct coll *c, size_t i, struct json_object *res, struct err *e)
{
    const struct sweep *sw = c->sw;
    char path[4300], pt[32];
    sweep_point_path(sw, i, "record.json", path, sizeof path);
    struct json_object *rec = sweep_json_read(path, e);
    if (!rec)
        return e->code;
    snprintf(pt, sizeof pt, "%0*zu", (int)sw->width, i);
    struct json_object *line = json_object_new_object(), *axes = json_object_new_object();
    int bad = !line || !axes;
    for (unsigned a = 0; !bad && a < sw->naxis; a++) {
        struct json_object *s = json_object_new_string(sw->val[i][a]);
        bad = !s || json_object_object_add(axes, sw->axis[a], s);
        if (bad)
            json_object_put(s);
    }
    if (!bad) {
        json_object_object_add(line, "point", json_object_new_string(pt));
        json_object_object_add(line, "axes", axes);
        axes = NULL;
        json_object_object_add(line, "record", rec);
        rec = NULL;
        json_object_object_add(line, "result", json_object_get(res));
    }
    const char *text = bad ? NULL : json_object_to_json_string_ext(line, COLL_JSON);
    if (text) {
        fputs(text, c->jsonl.f);
        fputc('\n', c->jsonl.f);
    }
    json_object_put(line);
    json_object_put(axes);
    json_object_put(rec);
    return text ? 0 : coll_nomem(e);
}

/* Pass one: each done point's line, and the columns its rows bring. Only
 * the phases stay in memory for the CSV, not the intervals, which are
 * most of a result. */
static int coll_read(struct coll *c, struct err *e)
{
    for (size_t i = 0; i < c->sw->npoint; i++) {
        if (c->st[i] != SWEEP_DONE)
            continue;
        struct json_object *res = NULL;
        int rc = sweep_res_read(c->sw, i, &res, e);
        if (!rc)
            rc = coll_jsonl(c, i, res, e);
        if (!rc) {
            c->phases[i] = json_object_get(coll_get(res, "phases", json_type_array));
            if ((rc = coll_columns(c, c->phases[i], e)) == -QOSIM_EPARSE) {
                char path[4300];
                sweep_point_path(c->sw, i, "result.json", path, sizeof path);
                rc = err_set(e, rc, "%s: %s", path, e->msg);
            }
        }
        json_object_put(res);
        if (rc)
            return rc;
    }
    return 0;
}

static void coll_csv_head(struct coll *c)
{
    FILE *f = c->csv.f;
    fputs("point", f);
    for (unsigned a = 0; a < c->sw->naxis; a++) {
        fputc(',', f);
        coll_csv_field(f, c->sw->axis[a]);
    }
    fputs(",phase,task", f);
    for (size_t k = 0; k < c->ncol; k++) {
        fputc(',', f);
        coll_csv_field(f, c->col[k]);
    }
    fputc('\n', f);
}

/* Pass two: a row per done point, phase and task. */
static int coll_csv(struct coll *c, struct err *e)
{
    const struct sweep *sw = c->sw;
    FILE *f = c->csv.f;
    char name[COLL_NAME] = "";
    coll_csv_head(c);
    for (size_t i = 0; i < sw->npoint; i++) {
        struct json_object *ph = c->phases[i];
        for (size_t p = 0; ph && p < json_object_array_length(ph); p++) {
            struct json_object *x = json_object_array_get_idx(ph, p);
            struct json_object *t = coll_get(x, "tasks", json_type_array);
            const char *phase = json_object_get_string(coll_get(x, "name", json_type_string));
            for (size_t k = 0; k < json_object_array_length(t); k++) {
                struct json_object *row = json_object_array_get_idx(t, k);
                memset(c->val, 0, c->ncol * sizeof *c->val);
                int rc = coll_walk(c, row, name, 0, 1, e);
                if (rc)
                    return rc;
                fprintf(f, "%0*zu", (int)sw->width, i);
                for (unsigned a = 0; a < sw->naxis; a++) {
                    fputc(',', f);
                    coll_csv_field(f, sw->val[i][a]);
                }
                fputc(',', f);
                coll_csv_field(f, phase);
                fputc(',', f);
                coll_csv_field(f, json_object_get_string(coll_get(row, "task", json_type_string)));
                for (size_t n = 0; n < c->ncol; n++) {
                    fputc(',', f);
                    fputs(c->val[n] ? c->val[n] : "", f); /* numbers: never quoted */
                }
                fputc('\n', f);
            }
        }
    }
    return 0;
}

/* The states of all points; a refusal when some are not done and that is
 * not allowed, or when none is. */
static int coll_states(struct coll *c, size_t *ndone, char *miss, size_t cap, struct err *e)
{
    const struct sweep *sw = c->sw;
    *ndone = 0;
    for (size_t i = 0; i < sw->npoint; i++) {
        c->st[i] = sweep_state_now(sw, i);
        *ndone += c->st[i] == SWEEP_DONE;
    }
    size_t nmiss = sweep_res_missing(sw, c->st, NULL, COLL_LIST, miss, cap, NULL);
    if (!*ndone)
        return err_set(e, -QOSIM_ENOENT,
                       "none of the %zu points of %s is done (%s); run `qosim sweep status %s`",
                       sw->npoint, sw->dir, miss, sw->dir);
    if (nmiss && !c->o->allow_missing)
        return err_set(e, -QOSIM_ENOENT,
                       "%zu of %zu points %s not done (%s); run `qosim sweep status %s`, or "
                       "--allow-missing to collect the rest",
                       nmiss, sw->npoint, nmiss == 1 ? "is" : "are", miss, sw->dir);
    if (nmiss) /* the note names more of them than a refusal does */
        sweep_res_missing(sw, c->st, NULL, COLL_NOTE, miss, cap, NULL);
    return 0;
}

/* The outputs' names (the defaults in DIR), refused when they name one
 * file: a usage error, said before the points are looked at. */
static int coll_names_out(struct coll *c, struct ofile_name out[2], char *csv, char *jsonl,
                          size_t cap, struct err *e)
{
    const struct sweep *sw = c->sw;
    if (snprintf(csv, cap, "%s/results.csv", sw->dir) >= (int)cap ||
        snprintf(jsonl, cap, "%s/results.jsonl", sw->dir) >= (int)cap)
        return err_set(e, -QOSIM_EINVAL, "%s: path too long", sw->dir);
    out[0] = (struct ofile_name){"--csv", c->o->csv ? c->o->csv : csv};
    out[1] = (struct ofile_name){"--jsonl", c->o->jsonl ? c->o->jsonl : jsonl};
    return ofile_distinct(out, 2, NULL, 0, e);
}

static int coll_open(struct coll *c, const struct ofile_name out[2], struct err *e)
{
    int rc = ofile_open(&c->csv, out[0].path, e);
    if (!rc && (rc = ofile_open(&c->jsonl, out[1].path, e)))
        ofile_abort(&c->csv);
    return rc;
}

int sweep_collect(const struct sweep *sw, const struct sweep_collect_opts *o, struct err *e)
{
    static const struct sweep_collect_opts none;
    struct coll c = {.sw = sw, .o = o ? o : &none};
    char miss[1200], csv[4200], jsonl[4200];
    size_t ndone = 0;
    c.st = calloc(sw->npoint ? sw->npoint : 1, sizeof *c.st);
    c.phases = calloc(sw->npoint ? sw->npoint : 1, sizeof *c.phases);
    c.colidx = json_object_new_object();
    struct ofile_name out[2];
    int rc = !c.st || !c.phases || !c.colidx ? coll_nomem(e) : 0;
    if (!rc)
        rc = coll_names_out(&c, out, csv, jsonl, sizeof csv, e);
    if (!rc)
        rc = coll_states(&c, &ndone, miss, sizeof miss, e);
    int opened = !rc && !(rc = coll_open(&c, out, e));
    if (!rc)
        rc = coll_read(&c, e);
    if (!rc && !(c.val = calloc(c.ncol ? c.ncol : 1, sizeof *c.val)))
        rc = coll_nomem(e);
    if (!rc)
        rc = coll_csv(&c, e);
    struct ofile *const ofs[2] = {&c.csv, &c.jsonl};
    if (rc && opened) {
        ofile_abort(&c.csv);
        ofile_abort(&c.jsonl);
    } else if (!rc) {
        rc = ofile_commit_all(ofs, 2, e);
    }
    /* Said once the outputs are there: what they lack. */
    if (!rc && ndone < sw->npoint)
        fprintf(c.o->note ? c.o->note : stderr,
                "qosim sweep: left out %zu of %zu points, not done (%s)\n", sw->npoint - ndone,
                sw->npoint, miss);
    for (size_t i = 0; c.phases && i < sw->npoint; i++)
        json_object_put(c.phases[i]);
    for (size_t k = 0; k < c.ncol; k++)
        free(c.col[k]);
    free(c.col);
    free(c.val);
    free(c.phases);
    free(c.st);
    json_object_put(c.colidx);
    return rc;
}
