/* Configuration files: libyaml's event parser builds a tree of conf_node in a
 * private arena; typed getters validate one value each. See conf.h. */
#include "conf.h"

#include <yaml.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Deepest nesting of mappings and sequences a document may have. */
#define CONF_MAX_DEPTH 64
/* At most this much of a value is quoted back in a message. */
#define CONF_SHOW "%.64s"

/* ---- arena ---------------------------------------------------------------- */

struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
};

#define CHUNK_MIN 8192

static void *arena_alloc(struct conf *c, size_t n)
{
    const size_t a = sizeof(max_align_t);
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + a - 1) / a * a;
    struct chunk *h = c->arena_;
    if (!h || h->cap - h->used < n) {
        size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
        struct chunk *k = malloc(sizeof *k + cap);
        if (!k)
            return NULL;
        k->used = 0;
        k->cap = cap;
        if (h && n > CHUNK_MIN) {
            /* A big block gets its own chunk; the current one keeps filling. */
            k->next = h->next;
            h->next = k;
        } else {
            k->next = h;
            c->arena_ = k;
        }
        h = k;
    }
    void *p = (unsigned char *)h->data + h->used;
    h->used += n;
    return p;
}

static char *arena_strdup(struct conf *c, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = arena_alloc(c, len + 1);
    if (p) {
        if (len)
            memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

void conf_free(struct conf *c)
{
    if (!c)
        return;
    struct chunk *k = c->arena_;
    while (k) {
        struct chunk *next = k->next;
        free(k);
        k = next;
    }
    c->arena_ = NULL;
    c->root = NULL;
}

/* ---- paths and messages ----------------------------------------------------- */

static size_t path_put(const struct conf_node *n, char *buf, size_t cap, size_t pos)
{
    if (!n || !n->parent)
        return pos;
    pos = path_put(n->parent, buf, cap, pos);
    char *at = pos < cap ? buf + pos : NULL;
    size_t room = pos < cap ? cap - pos : 0;
    int w;
    if (n->parent->type == CONF_SEQ)
        w = snprintf(at, room, "[%u]", n->index);
    else
        w = snprintf(at, room, "%s%s", pos ? "." : "", n->key ? n->key : "?");
    return w > 0 ? pos + (size_t)w : pos;
}

void conf_path(const struct conf_node *n, char *buf, size_t cap)
{
    if (!buf || !cap)
        return;
    buf[0] = '\0';
    path_put(n, buf, cap, 0);
}

static const char *conf_name(const struct conf *c)
{
    return c && c->file[0] ? c->file : "<config>";
}

/* "FILE:LINE: PATH: msg", leaving out what is missing. */
static int conf_report(const struct conf *c, unsigned line, const char *path, const char *msg,
                       struct err *e)
{
    if (!line)
        return err_set(e, -QOSIM_EPARSE, "%s: %s", conf_name(c), msg);
    if (!path || !path[0])
        return err_set(e, -QOSIM_EPARSE, "%s:%u: %s", conf_name(c), line, msg);
    return err_set(e, -QOSIM_EPARSE, "%s:%u: %s: %s", conf_name(c), line, path, msg);
}

int conf_error(const struct conf *c, const struct conf_node *n, struct err *e, const char *fmt, ...)
{
    char msg[sizeof e->msg], path[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    conf_path(n, path, sizeof path);
    return conf_report(c, n ? n->line : 0, path, msg, e);
}

/* ---- loading ---------------------------------------------------------------- */

/* A mapping or sequence being read: its own place, and its entries so far. */
struct frame {
    enum conf_type type;
    unsigned line;
    const char *key;
    unsigned index;
    struct conf_node *v;
    size_t n, cap;
    int have_key; /* a map's key has been read, its value not yet */
    const char *pkey;
    unsigned pline;
};

struct loader {
    struct conf *c;
    struct err *e;
    const unsigned char *buf;
    size_t len;
    int depth; /* frames open: st[1..depth] */
    int ndocs;
    struct frame st[CONF_MAX_DEPTH + 1];
};

static unsigned mark_line(size_t line0)
{
    return line0 >= UINT_MAX - 1 ? UINT_MAX - 1 : (unsigned)line0 + 1;
}

static int oom(struct loader *L)
{
    return err_set(L->e, -QOSIM_ENOMEM, "%s: out of memory", conf_name(L->c));
}

/* Message at line for the open frames; with child, for the value about to be
 * read in the top frame (its pending key or next index). */
static int load_error(struct loader *L, unsigned line, int child, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int load_error(struct loader *L, unsigned line, int child, const char *fmt, ...)
{
    struct conf_node tmp[CONF_MAX_DEPTH + 2];
    char msg[sizeof L->e->msg], path[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    struct conf_node *last = NULL;
    int n = 0;
    for (int i = 1; i <= L->depth; i++, n++) {
        struct frame *f = &L->st[i];
        tmp[n] = (struct conf_node){.type = f->type, .key = f->key, .index = f->index};
        tmp[n].parent = last;
        last = &tmp[n];
    }
    struct frame *top = L->depth ? &L->st[L->depth] : NULL;
    if (child && top && (top->type == CONF_SEQ || top->have_key)) {
        tmp[n] = (struct conf_node){.type = CONF_SCALAR, .index = (unsigned)top->n};
        tmp[n].key = top->type == CONF_MAP ? top->pkey : NULL;
        tmp[n].parent = last;
        last = &tmp[n];
    }
    conf_path(last, path, sizeof path);
    return conf_report(L->c, line, path, msg, L->e);
}

/* Key, index and line of the value that starts at line in the top frame. */
static void begin_value(struct loader *L, unsigned line, struct conf_node *nd)
{
    memset(nd, 0, sizeof *nd);
    nd->val = "";
    nd->line = line;
    if (!L->depth)
        return;
    struct frame *f = &L->st[L->depth];
    nd->index = (unsigned)f->n;
    if (f->type == CONF_MAP) {
        nd->key = f->pkey;
        nd->line = f->pline; /* an entry is found by its key */
        f->have_key = 0;
    }
}

/* The kids of n now live at n->kids: point their own kids back at them. */
static void fix_parents(struct conf_node *n)
{
    for (unsigned i = 0; i < n->nkids; i++) {
        struct conf_node *k = &n->kids[i];
        k->parent = n;
        for (unsigned j = 0; j < k->nkids; j++)
            k->kids[j].parent = k;
    }
}

/* Adds a finished node to the top frame, or makes it the root. */
static int add_node(struct loader *L, const struct conf_node *nd)
{
    if (!L->depth) {
        struct conf_node *r = arena_alloc(L->c, sizeof *r);
        if (!r)
            return oom(L);
        *r = *nd;
        r->parent = NULL;
        fix_parents(r);
        L->c->root = r;
        return 0;
    }
    struct frame *f = &L->st[L->depth];
    if (f->n >= UINT_MAX)
        return load_error(L, nd->line, 0, "too many entries");
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        struct conf_node *v = realloc(f->v, cap * sizeof *v);
        if (!v)
            return oom(L);
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = *nd;
    return 0;
}

static int on_key(struct loader *L, const yaml_event_t *ev)
{
    struct frame *f = &L->st[L->depth];
    unsigned line = mark_line(ev->start_mark.line);
    if (ev->type != YAML_SCALAR_EVENT)
        return load_error(L, line, 0, "keys must be plain scalars, not %s",
                          ev->type == YAML_MAPPING_START_EVENT ? "mappings" : "sequences");
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (!len)
        return load_error(L, line, 0, "empty key");
    if (memchr(s, '\0', len))
        return load_error(L, line, 0, "key contains a NUL character");
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].key, s))
            return load_error(L, line, 0, "duplicate key '" CONF_SHOW "' (first at line %u)", s,
                              f->v[i].line);
    char *k = arena_strdup(L->c, s, len);
    if (!k)
        return oom(L);
    f->pkey = k;
    f->pline = line;
    f->have_key = 1;
    return 0;
}

static int on_event(struct loader *L, const yaml_event_t *ev)
{
    unsigned line = mark_line(ev->start_mark.line);
    struct frame *top = L->depth ? &L->st[L->depth] : NULL;
    int at_key = top && top->type == CONF_MAP && !top->have_key;
    const yaml_char_t *anchor = NULL;
    struct conf_node nd;

    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (L->ndocs++)
            return load_error(L, line, 0, "a second document is not supported");
        return 0;
    case YAML_ALIAS_EVENT:
        return load_error(L, line, !at_key, "aliases and anchors are not supported");
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
        if (!L->depth)
            return load_error(L, line, 0, "unbalanced end of collection");
        struct frame *f = &L->st[L->depth];
        nd = (struct conf_node){
            .type = f->type, .line = f->line, .key = f->key, .index = f->index, .val = ""};
        if (f->n) {
            nd.kids = arena_alloc(L->c, f->n * sizeof *nd.kids);
            if (!nd.kids)
                return oom(L);
            memcpy(nd.kids, f->v, f->n * sizeof *nd.kids);
            nd.nkids = (unsigned)f->n;
        }
        free(f->v);
        memset(f, 0, sizeof *f);
        L->depth--;
        /* The entries' own parent pointers are set again once nd itself is
         * in its final place (the parent's array, or the root). */
        fix_parents(&nd);
        return add_node(L, &nd);
    }
    default:
        return 0;
    }

    if (anchor)
        return load_error(L, line, !at_key, "aliases and anchors are not supported");
    if (at_key)
        return on_key(L, ev);
    if (!L->depth && L->c->root)
        return load_error(L, line, 0, "a second document is not supported");

    if (ev->type == YAML_SCALAR_EVENT &&
        memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
        return load_error(L, line, 1, "value contains a NUL character");
    if (ev->type != YAML_SCALAR_EVENT && L->depth >= CONF_MAX_DEPTH)
        return load_error(L, line, 1, "nesting deeper than %d levels", CONF_MAX_DEPTH);
    begin_value(L, line, &nd);
    if (ev->type == YAML_SCALAR_EVENT) {
        char *v = arena_strdup(L->c, (const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (!v)
            return oom(L);
        nd.val = v;
        nd.plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        return add_node(L, &nd);
    }
    struct frame *f = &L->st[++L->depth];
    memset(f, 0, sizeof *f);
    f->type = ev->type == YAML_MAPPING_START_EVENT ? CONF_MAP : CONF_SEQ;
    f->line = nd.line;
    f->key = nd.key;
    f->index = nd.index;
    return 0;
}

static int syntax_error(struct loader *L, const yaml_parser_t *p)
{
    unsigned line;
    if (p->error == YAML_MEMORY_ERROR)
        return oom(L);
    if (p->error == YAML_READER_ERROR) {
        size_t end = p->problem_offset < L->len ? p->problem_offset : L->len, nl = 0;
        for (size_t i = 0; i < end; i++)
            nl += L->buf[i] == '\n';
        line = mark_line(nl);
    } else {
        line = mark_line(p->problem_mark.line);
    }
    return conf_report(L->c, line, NULL, p->problem ? p->problem : "syntax error", L->e);
}

int conf_load_mem(struct conf *c, const char *name, const char *buf, size_t len, struct err *e)
{
    if (!c)
        return err_set(e, -QOSIM_EINVAL, "conf_load_mem: no conf");
    memset(c, 0, sizeof *c);
    snprintf(c->file, sizeof c->file, "%s", name ? name : "<config>");
    if (!buf && len)
        return err_set(e, -QOSIM_EINVAL, "%s: no buffer", c->file);

    struct loader *L = calloc(1, sizeof *L);
    if (!L)
        return err_set(e, -QOSIM_ENOMEM, "%s: out of memory", c->file);
    struct err scratch;
    L->c = c;
    L->e = e ? e : &scratch;
    L->buf = (const unsigned char *)(buf ? buf : "");
    L->len = len;

    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        free(L);
        return err_set(e, -QOSIM_ENOMEM, "%s: out of memory", c->file);
    }
    yaml_parser_set_input_string(&p, L->buf, len);

    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_error(L, &p);
            break;
        }
        rc = on_event(L, &ev);
        int done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (rc || done)
            break;
    }
    yaml_parser_delete(&p);

    if (!rc) {
        const struct conf_node *r = c->root;
        if (!r || (r->type == CONF_SCALAR && r->plain && !r->val[0]))
            rc = conf_report(c, 1, NULL, "empty document", L->e);
    }
    for (int i = 1; i <= L->depth; i++)
        free(L->st[i].v);
    free(L);
    if (rc)
        conf_free(c);
    return rc;
}

int conf_load_file(struct conf *c, const char *path, struct err *e)
{
    if (!c || !path)
        return err_set(e, -QOSIM_EINVAL, "conf_load_file: no conf or path");
    memset(c, 0, sizeof *c);
    snprintf(c->file, sizeof c->file, "%s", path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        int er = errno;
        return err_set(e, er == ENOENT ? -QOSIM_ENOENT : -QOSIM_EIO, "%s: cannot open: %s", path,
                       strerror(er));
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return err_set(e, -QOSIM_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                int er = errno;
                free(buf);
                fclose(f);
                return err_set(e, -QOSIM_EIO, "%s: cannot read: %s", path, strerror(er));
            }
            break;
        }
    }
    fclose(f);
    int rc = conf_load_mem(c, path, buf, len, e);
    free(buf);
    return rc;
}

/* ---- lookup ------------------------------------------------------------------- */

static int declared(const char *const *keys, const char *key)
{
    for (; *keys; keys++)
        if (!strcmp(*keys, key))
            return 1;
    return 0;
}

struct conf_node *conf_get(struct conf_node *map, const char *key)
{
    if (!map || map->type != CONF_MAP || !key)
        return NULL;
    if (map->keys && !map->undeclared && !declared(map->keys, key))
        map->undeclared = key;
    for (unsigned i = 0; i < map->nkids; i++) {
        struct conf_node *k = &map->kids[i];
        if (k->key && !strcmp(k->key, key)) {
            k->used = 1;
            return k;
        }
    }
    return NULL;
}

static const char *type_name(enum conf_type t)
{
    return t == CONF_MAP ? "a mapping" : t == CONF_SEQ ? "a sequence" : "a scalar";
}

/* The "got ..." part of a type error for node n. */
static int wrong_type(const struct conf *c, const struct conf_node *n, const char *want,
                      struct err *e)
{
    if (n->type != CONF_SCALAR)
        return conf_error(c, n, e, "expected %s, got %s", want, type_name(n->type));
    if (!n->val[0])
        return conf_error(c, n, e, "expected %s, got an empty value", want);
    return conf_error(c, n, e, "expected %s, got '" CONF_SHOW "'", want, n->val);
}

int conf_expect(const struct conf *c, const struct conf_node *n, enum conf_type t, struct err *e)
{
    if (n && n->type == t)
        return 0;
    if (!n)
        return conf_error(c, NULL, e, "expected %s, got nothing", type_name(t));
    return wrong_type(c, n, type_name(t), e);
}

/* Finds key's scalar in map: 1 with *pn set, 0 when absent and optional, or
 * an error. str allows a quoted empty string. */
static int lookup(const struct conf *c, struct conf_node *map, const char *key, int req,
                  const char *want, int str, struct conf_node **pn, struct err *e)
{
    *pn = NULL;
    if (!map) {
        if (req)
            return conf_error(c, NULL, e, "missing required key '%s'", key);
        return 0;
    }
    if (map->type != CONF_MAP)
        return conf_expect(c, map, CONF_MAP, e);
    struct conf_node *n = conf_get(map, key);
    if (!n) {
        if (req)
            return conf_error(c, map, e, "missing required key '%s'", key);
        return 0;
    }
    if (n->type != CONF_SCALAR)
        return wrong_type(c, n, want, e);
    if (!n->val[0] && (n->plain || !str))
        return conf_error(c, n, e, "missing value");
    *pn = n;
    return 1;
}

/* ---- value parsers ----------------------------------------------------------------- */

enum { P_OK = 0, P_SYNTAX = -1, P_RANGE = -2 };

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static int hex_val(char ch)
{
    if (is_digit(ch))
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Decimal digits (or 0x-hex when hex) from *ps; stops at the first other char. */
static int scan_u64(const char **ps, int hex, uint64_t *out)
{
    const char *s = *ps;
    unsigned base = 10;
    if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    uint64_t v = 0;
    int any = 0, over = 0;
    for (;; s++) {
        int d = base == 16 ? hex_val(*s) : is_digit(*s) ? *s - '0' : -1;
        if (d < 0)
            break;
        any = 1;
        if (v > (UINT64_MAX - (unsigned)d) / base)
            over = 1;
        else
            v = v * base + (unsigned)d;
    }
    *ps = s;
    if (!any)
        return P_SYNTAX;
    *out = v;
    return over ? P_RANGE : P_OK;
}

int conf_parse_u64(const char *s, uint64_t *out)
{
    int r = scan_u64(&s, 1, out);
    if (r == P_SYNTAX || *s)
        return P_SYNTAX;
    return r;
}

struct unit {
    const char *name;
    double mul; /* value = number * mul, or number / -mul when mul < 0 */
};

static int parse_size(const char *s, uint64_t *out)
{
    static const struct {
        const char *name;
        unsigned shift;
    } units[] = {{"", 0},   {"B", 0},    {"K", 10}, {"KiB", 10},
                 {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30}};
    uint64_t v;
    int r = scan_u64(&s, 0, &v);
    if (r == P_SYNTAX)
        return r;
    while (*s == ' ')
        s++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(s, units[i].name))
            continue;
        if (r == P_RANGE || v > (UINT64_MAX >> units[i].shift))
            return P_RANGE;
        *out = v << units[i].shift;
        return P_OK;
    }
    return P_SYNTAX;
}

int conf_parse_size(const char *s, uint64_t *out)
{
    return parse_size(s, out);
}

/* A decimal number (optional sign, digits, fraction, exponent) at the start
 * of s, then a unit from units (NULL-terminated; "" for none). */
static int parse_num_unit(const char *s, const struct unit *units, double *out)
{
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (is_digit(*p))
        p++, digits++;
    if (*p == '.') {
        p++;
        while (is_digit(*p))
            p++, digits++;
    }
    if (!digits)
        return P_SYNTAX;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (is_digit(*q)) {
            while (is_digit(*q))
                q++;
            p = q;
        }
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end != p)
        return P_SYNTAX;
    while (*p == ' ')
        p++;
    /* Zero is zero in any unit: "at: 0" needs none. */
    if (!*p && v == 0) {
        *out = 0;
        return P_OK;
    }
    for (const struct unit *u = units; u->name; u++) {
        if (strcmp(p, u->name))
            continue;
        if (!isfinite(v))
            return P_RANGE;
        v = u->mul < 0 ? v / -u->mul : v * u->mul;
        if (!isfinite(v))
            return P_RANGE;
        *out = v;
        return P_OK;
    }
    return P_SYNTAX;
}

static const struct unit time_units[] = {
    {"ns", -1e9}, {"us", -1e6}, {"ms", -1e3}, {"s", 1}, {NULL, 0}};
static const struct unit freq_units[] = {
    {"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}, {NULL, 0}};
static const struct unit rate_units[] = {
    {"B/s", 1},        {"KB/s", 1e3},        {"kB/s", 1e3},           {"MB/s", 1e6}, {"GB/s", 1e9},
    {"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0}, {NULL, 0}};
static const struct unit pct_units[] = {{"", 1}, {"%", 1}, {NULL, 0}};

/* ---- bounds in messages --------------------------------------------------------------- */

static void fmt_size(char *buf, size_t cap, uint64_t v)
{
    static const char sfx[] = "GMK";
    for (int i = 0; i < 3; i++) {
        unsigned sh = 30 - 10 * (unsigned)i;
        if (v && !(v & ((1ull << sh) - 1))) {
            snprintf(buf, cap, "%" PRIu64 "%c", v >> sh, sfx[i]);
            return;
        }
    }
    snprintf(buf, cap, "%" PRIu64, v);
}

/* v with the largest unit of units (ascending multipliers) it reaches. */
static void fmt_scaled(char *buf, size_t cap, double v, const struct unit *units, size_t nu)
{
    size_t best = 0;
    for (size_t i = 0; i < nu; i++) {
        double m = units[i].mul < 0 ? 1 / -units[i].mul : units[i].mul;
        if (fabs(v) >= m * (1 - 1e-12))
            best = i;
    }
    double m = units[best].mul < 0 ? 1 / -units[best].mul : units[best].mul;
    if (v == 0)
        snprintf(buf, cap, "0");
    else
        snprintf(buf, cap, "%g%s", v / m, units[best].name);
}

/* ---- getters -------------------------------------------------------------------------- */

#define WANT_U64  "an unsigned integer such as 16 or 0x40"
#define WANT_F64  "a number such as 0.5 or 2"
#define WANT_SIZE "a size in bytes such as 32K or 11M"
#define WANT_TIME "a time such as 80ns or 1.5us"
#define WANT_FREQ "a frequency such as 2.4GHz or 800MHz"
#define WANT_RATE "a bandwidth such as 25.6GB/s or 800MB/s"
#define WANT_PCT  "a percentage such as 50% or 12.5"
#define WANT_BOOL "true or false (also yes/no, on/off)"
#define WANT_STR  "a string"

static int range_error(const struct conf *c, const struct conf_node *n, const char *lo,
                       const char *hi, struct err *e)
{
    return conf_error(c, n, e, CONF_SHOW " is out of range (%s..%s)", n->val, lo, hi);
}

static int node_u64(const struct conf *c, const struct conf_node *n, uint64_t min, uint64_t max,
                    uint64_t *out, struct err *e)
{
    uint64_t v = 0;
    int r = conf_parse_u64(n->val, &v);
    if (r == P_SYNTAX)
        return wrong_type(c, n, WANT_U64, e);
    if (r == P_RANGE || v < min || v > max) {
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%" PRIu64, min);
        snprintf(hi, sizeof hi, "%" PRIu64, max);
        return range_error(c, n, lo, hi, e);
    }
    *out = v;
    return 0;
}

/* A sequence item that must be a non-empty scalar of kind want, marked used. */
static int scalar_item(const struct conf *c, struct conf_node *n, const char *want, struct err *e)
{
    if (!n)
        return conf_error(c, NULL, e, "expected %s, got nothing", want);
    n->used = 1;
    if (n->type != CONF_SCALAR)
        return wrong_type(c, n, want, e);
    if (!n->val[0])
        return conf_error(c, n, e, "missing value");
    return 0;
}

int conf_node_u64(const struct conf *c, struct conf_node *n, uint64_t min, uint64_t max,
                  uint64_t *out, struct err *e)
{
    int rc = scalar_item(c, n, WANT_U64, e);
    return rc ? rc : node_u64(c, n, min, max, out, e);
}

int conf_u64(const struct conf *c, struct conf_node *map, const char *key, int req, uint64_t min,
             uint64_t max, uint64_t *out, struct err *e)
{
    struct conf_node *n;
    int r = lookup(c, map, key, req, WANT_U64, 0, &n, e);
    return r <= 0 ? r : node_u64(c, n, min, max, out, e);
}

static int node_f64(const struct conf *c, struct conf_node *n, double min, double max, double *out,
                    struct err *e)
{
    const char *s = n->val;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ||
        (!isfinite(v) && errno != ERANGE))
        return wrong_type(c, n, WANT_F64, e);
    if (!isfinite(v) || !(v >= min && v <= max)) {
        char lo[32], hi[32];
        snprintf(lo, sizeof lo, "%g", min);
        snprintf(hi, sizeof hi, "%g", max);
        return range_error(c, n, lo, hi, e);
    }
    *out = v;
    return 0;
}

int conf_f64(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
             double max, double *out, struct err *e)
{
    struct conf_node *n;
    int r = lookup(c, map, key, req, WANT_F64, 0, &n, e);
    return r <= 0 ? r : node_f64(c, n, min, max, out, e);
}

int conf_node_f64(const struct conf *c, struct conf_node *n, double min, double max, double *out,
                  struct err *e)
{
    int rc = scalar_item(c, n, WANT_F64, e);
    return rc ? rc : node_f64(c, n, min, max, out, e);
}

int conf_size(const struct conf *c, struct conf_node *map, const char *key, int req, uint64_t min,
              uint64_t max, uint64_t *out, struct err *e)
{
    struct conf_node *n;
    int r = lookup(c, map, key, req, WANT_SIZE, 0, &n, e);
    if (r <= 0)
        return r;
    uint64_t v = 0;
    r = parse_size(n->val, &v);
    if (r == P_SYNTAX)
        return wrong_type(c, n, WANT_SIZE, e);
    if (r == P_RANGE || v < min || v > max) {
        char lo[32], hi[32];
        fmt_size(lo, sizeof lo, min);
        fmt_size(hi, sizeof hi, max);
        return range_error(c, n, lo, hi, e);
    }
    *out = v;
    return 0;
}

/* time, freq, rate and pct: a number with a unit, in [min, max]. */
static int get_unit(const struct conf *c, struct conf_node *map, const char *key, int req,
                    double min, double max, double *out, struct err *e, const char *want,
                    const struct unit *units, const struct unit *shown, size_t nshown)
{
    struct conf_node *n;
    int r = lookup(c, map, key, req, want, 0, &n, e);
    if (r <= 0)
        return r;
    double v = 0;
    r = parse_num_unit(n->val, units, &v);
    if (r == P_SYNTAX)
        return wrong_type(c, n, want, e);
    if (r == P_RANGE || !(v >= min && v <= max)) {
        char lo[48], hi[48];
        fmt_scaled(lo, sizeof lo, min, shown, nshown);
        fmt_scaled(hi, sizeof hi, max, shown, nshown);
        return range_error(c, n, lo, hi, e);
    }
    *out = v;
    return 0;
}

int conf_time(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
              double max, double *out, struct err *e)
{
    return get_unit(c, map, key, req, min, max, out, e, WANT_TIME, time_units, time_units, 4);
}

int conf_freq(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
              double max, double *out, struct err *e)
{
    return get_unit(c, map, key, req, min, max, out, e, WANT_FREQ, freq_units, freq_units, 4);
}

int conf_rate(const struct conf *c, struct conf_node *map, const char *key, int req, double min,
              double max, double *out, struct err *e)
{
    static const struct unit shown[] = {{"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}};
    return get_unit(c, map, key, req, min, max, out, e, WANT_RATE, rate_units, shown, 4);
}

int conf_pct(const struct conf *c, struct conf_node *map, const char *key, int req, double *out,
             struct err *e)
{
    static const struct unit shown[] = {{"", 1}};
    return get_unit(c, map, key, req, 0, 100, out, e, WANT_PCT, pct_units, shown, 1);
}

int conf_bool(const struct conf *c, struct conf_node *map, const char *key, int req, int *out,
              struct err *e)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    struct conf_node *n;
    int r = lookup(c, map, key, req, WANT_BOOL, 0, &n, e);
    if (r <= 0)
        return r;
    for (int i = 0; i < 3; i++) {
        if (!strcasecmp(n->val, yes[i])) {
            *out = 1;
            return 0;
        }
        if (!strcasecmp(n->val, no[i])) {
            *out = 0;
            return 0;
        }
    }
    return wrong_type(c, n, WANT_BOOL, e);
}

int conf_str(const struct conf *c, struct conf_node *map, const char *key, int req,
             const char **out, struct err *e)
{
    struct conf_node *n;
    int r = lookup(c, map, key, req, WANT_STR, 1, &n, e);
    if (r <= 0)
        return r;
    *out = n->val;
    return 0;
}

int conf_enum(const struct conf *c, struct conf_node *map, const char *key, int req,
              const char *const *names, unsigned n, unsigned *out, struct err *e)
{
    char want[400];
    size_t pos = 0;
    want[0] = '\0';
    pos += (size_t)snprintf(want, sizeof want, "one of ");
    for (unsigned i = 0; names && i < n && pos < sizeof want; i++)
        pos += (size_t)snprintf(want + pos, sizeof want - pos, "%s%s", i ? ", " : "",
                                names[i] ? names[i] : "?");
    struct conf_node *nd;
    int r = lookup(c, map, key, req, want, 0, &nd, e);
    if (r <= 0)
        return r;
    for (unsigned i = 0; names && i < n; i++) {
        if (names[i] && !strcmp(nd->val, names[i])) {
            *out = i;
            return 0;
        }
    }
    return wrong_type(c, nd, want, e);
}

/* ---- unknown keys ----------------------------------------------------------------------- */

#define KEY_MAX 64 /* longer keys get no suggestion */

/* Edits (insert, delete, replace, swap two neighbours) from a to b: the
 * optimal string alignment distance. */
static unsigned edit_distance(const char *a, const char *b)
{
    size_t m = strlen(a), n = strlen(b);
    unsigned d[KEY_MAX + 1][KEY_MAX + 1];
    if (m > KEY_MAX || n > KEY_MAX)
        return UINT_MAX;
    for (size_t i = 0; i <= m; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= n; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= m; i++)
        for (size_t j = 1; j <= n; j++) {
            unsigned v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[m][n];
}

/* The declared key a misspelling most likely meant, or NULL: the nearest
 * (first in declared order on a tie) within about a third of its length,
 * at least one edit and always fewer edits than the key has characters, so
 * that short or unrelated keys suggest nothing. */
const char *conf_closest(const char *const *keys, const char *key)
{
    const char *best = NULL;
    unsigned best_d = UINT_MAX;
    size_t klen = strlen(key);
    for (; keys && *keys; keys++) {
        size_t len = strlen(*keys);
        unsigned d = edit_distance(key, *keys), lim = (unsigned)(len + 1) / 3;
        lim = lim < 1 ? 1 : lim > 3 ? 3 : lim;
        if (d <= lim && d < klen && d < best_d) {
            best = *keys;
            best_d = d;
        }
    }
    return best;
}

static int unknown_key(const struct conf *c, const struct conf_node *k, struct err *e)
{
    const char *const *keys = k->parent ? k->parent->keys : NULL;
    const char *hint =
        k->key && keys && !declared(keys, k->key) ? conf_closest(keys, k->key) : NULL;
    if (hint)
        return conf_error(c, k, e, "unknown key (did you mean '%s'?)", hint);
    return conf_error(c, k, e, "unknown key");
}

int conf_keys(struct conf *c, struct conf_node *map, struct err *e, ...)
{
    if (!map || map->type != CONF_MAP)
        return 0;
    va_list ap;
    size_t n = 0;
    va_start(ap, e);
    while (va_arg(ap, const char *))
        n++;
    va_end(ap);
    const char **keys = arena_alloc(c, (n + 1) * sizeof *keys);
    if (!keys)
        return err_set(e, -QOSIM_ENOMEM, "%s: out of memory", conf_name(c));
    va_start(ap, e);
    for (size_t i = 0; i < n; i++)
        keys[i] = va_arg(ap, const char *);
    keys[n] = NULL;
    va_end(ap);
    map->keys = keys;
    for (unsigned i = 0; i < map->nkids; i++)
        if (!map->kids[i].key || !declared(keys, map->kids[i].key))
            return unknown_key(c, &map->kids[i], e);
    return 0;
}

int conf_check_unused(const struct conf *c, const struct conf_node *n, struct err *e)
{
    if (!n)
        return 0;
    if (n->undeclared) /* the declaration and the reader disagree: qosim's mistake */
        return conf_error(c, n, e, "qosim reads key '%s' here but did not declare it (a bug)",
                          n->undeclared);
    for (unsigned i = 0; i < n->nkids; i++) {
        const struct conf_node *k = &n->kids[i];
        if (n->type == CONF_MAP && !k->used)
            return unknown_key(c, k, e);
        if (k->type != CONF_SCALAR) {
            int r = conf_check_unused(c, k, e);
            if (r)
                return r;
        }
    }
    return 0;
}

/* ---- writing ------------------------------------------------------------- */

static int emit(yaml_emitter_t *em, yaml_event_t *ev)
{
    return yaml_emitter_emit(em, ev) ? 0 : -1;
}

static int write_node(yaml_emitter_t *em, const struct conf_node *n, int flow)
{
    yaml_event_t ev;
    if (n->type == CONF_SCALAR) {
        /* A quoted scalar stays quoted, so that "0x10" stays a string where
         * a reader tells the two apart; the emitter quotes a plain one
         * only where YAML needs it. */
        yaml_scalar_event_initialize(
            &ev, NULL, NULL, (yaml_char_t *)n->val, (int)strlen(n->val), 1, 1,
            n->plain ? YAML_ANY_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
        return emit(em, &ev);
    }
    if (n->type == CONF_MAP)
        yaml_mapping_start_event_initialize(
            &ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
    else
        yaml_sequence_start_event_initialize(
            &ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
    if (emit(em, &ev))
        return -1;
    for (unsigned i = 0; i < n->nkids; i++) {
        const struct conf_node *k = &n->kids[i];
        if (n->type == CONF_MAP) {
            yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)k->key,
                                         (int)strlen(k->key), 1, 1, YAML_ANY_SCALAR_STYLE);
            if (emit(em, &ev))
                return -1;
        }
        if (write_node(em, k, flow))
            return -1;
    }
    if (n->type == CONF_MAP)
        yaml_mapping_end_event_initialize(&ev);
    else
        yaml_sequence_end_event_initialize(&ev);
    return emit(em, &ev);
}

int conf_write(FILE *f, const struct conf_node *n, int flow)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return -QOSIM_ENOMEM;
    yaml_emitter_set_output_file(&em, f);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, flow ? -1 : 100);
    int rc = 0;
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    rc |= emit(&em, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    rc = rc ? rc : emit(&em, &ev);
    rc = rc ? rc : write_node(&em, n, flow);
    yaml_document_end_event_initialize(&ev, 1);
    rc = rc ? rc : emit(&em, &ev);
    yaml_stream_end_event_initialize(&ev);
    rc = rc ? rc : emit(&em, &ev);
    if (!rc && !yaml_emitter_flush(&em))
        rc = -1;
    yaml_emitter_delete(&em);
    return rc ? -QOSIM_EIO : 0;
}
