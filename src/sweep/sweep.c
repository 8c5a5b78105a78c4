/* A planned sweep's folder: its manifest, its points' files, their keys and
 * their state. See sweep.h for the layout. */
#include "sweep.h"

#include "commit.h"

#include <json-c/json.h>
#include <nettle/sha2.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sweep_close(struct sweep *sw)
{
    for (size_t i = 0; sw->val && i < sw->npoint; i++) {
        for (unsigned a = 0; sw->val[i] && a < sw->naxis; a++)
            free(sw->val[i][a]);
        free(sw->val[i]);
    }
    for (unsigned a = 0; sw->axis && a < sw->naxis; a++)
        free(sw->axis[a]);
    free(sw->val);
    free(sw->axis);
    memset(sw, 0, sizeof *sw);
}

/* The tab-separated fields of line (its newline removed), as new strings. */
static char **split_tabs(char *line, unsigned *n)
{
    line[strcspn(line, "\n")] = '\0';
    unsigned k = 1;
    for (const char *p = line; *p; p++)
        k += *p == '\t';
    char **v = calloc(k, sizeof *v);
    if (!v)
        return NULL;
    char *p = line;
    for (unsigned i = 0; i < k; i++) {
        char *t = strchr(p, '\t');
        if (t)
            *t = '\0';
        if (!(v[i] = strdup(p))) {
            while (i--)
                free(v[i]);
            free(v);
            return NULL;
        }
        p = t ? t + 1 : p + strlen(p);
    }
    *n = k;
    return v;
}

static void free_fields(char **v, unsigned n)
{
    for (unsigned i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

int sweep_open(struct sweep *sw, const char *dir, struct err *e)
{
    memset(sw, 0, sizeof *sw);
    if (snprintf(sw->dir, sizeof sw->dir, "%s", dir) >= (int)sizeof sw->dir)
        return err_set(e, -QOSIM_EINVAL, "%s: path too long", dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(e, errno == ENOENT ? -QOSIM_ENOENT : -QOSIM_EIO,
                       "%s: not a planned sweep (%s: %s); make one with 'qosim sweep plan'", dir,
                       path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, ln = 1, ncap = 0;
    int rc = 0;
    unsigned n;
    char **head = getline(&line, &cap, f) > 0 ? split_tabs(line, &n) : NULL;
    if (!head || strcmp(head[0], "point")) {
        rc = err_set(e, -QOSIM_EPARSE, "%s:1: expected the header line 'point<TAB>AXIS...'", path);
        free_fields(head, head ? n : 0);
        goto out;
    }
    free(head[0]);
    sw->naxis = n - 1;
    sw->axis = n > 1 ? malloc((n - 1) * sizeof *sw->axis) : NULL;
    for (unsigned a = 0; a + 1 < n; a++)
        sw->axis[a] = head[a + 1];
    free(head);
    while (getline(&line, &cap, f) > 0) {
        ln++;
        char **v = split_tabs(line, &n);
        if (!v) {
            rc = err_set(e, -QOSIM_ENOMEM, "out of memory");
            goto out;
        }
        char want[32];
        snprintf(want, sizeof want, "%0*zu", sw->width ? (int)sw->width : (int)strlen(v[0]),
                 sw->npoint);
        if (n != sw->naxis + 1 || strcmp(v[0], want)) {
            free_fields(v, n);
            rc = err_set(e, -QOSIM_EPARSE, "%s:%zu: expected point %s with %u axis values", path,
                         ln, want, sw->naxis);
            goto out;
        }
        sw->width = strlen(v[0]);
        if (sw->npoint == ncap) {
            ncap = ncap ? 2 * ncap : 64;
            char ***nv = realloc(sw->val, ncap * sizeof *nv);
            if (!nv) {
                free_fields(v, n);
                rc = err_set(e, -QOSIM_ENOMEM, "out of memory");
                goto out;
            }
            sw->val = nv;
        }
        free(v[0]);
        memmove(v, v + 1, sw->naxis * sizeof *v);
        sw->val[sw->npoint++] = v;
    }
    if (!sw->npoint)
        rc = err_set(e, -QOSIM_EPARSE, "%s: no points", path);
out:
    free(line);
    fclose(f);
    if (rc)
        sweep_close(sw);
    return rc;
}

int sweep_point_path(const struct sweep *sw, size_t i, const char *file, char *out, size_t cap)
{
    int n = file ? snprintf(out, cap, "%s/points/%0*zu/%s", sw->dir, (int)sw->width, i, file)
                 : snprintf(out, cap, "%s/points/%0*zu", sw->dir, (int)sw->width, i);
    return n < 0 || (size_t)n >= cap ? -QOSIM_EINVAL : 0;
}

static void hex(const uint8_t *d, char out[SWEEP_KEY_HEX])
{
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* Feeds a file's bytes to a hash. */
static int hash_fd(struct sha256_ctx *c, const char *path, struct err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(e, -QOSIM_ENOENT, "%s: %s", path, strerror(errno));
    uint8_t buf[65536];
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0)
        sha256_update(c, (size_t)k, buf);
    int er = errno;
    close(fd);
    if (k < 0)
        return err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(er));
    return 0;
}

/* Hashes already made by this process: many points share a profile or a
 * large trace, which is read once, not once a point. An entry holds while
 * the file's identity, size and modification time are the same. */
struct hashed {
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    char hex[SWEEP_KEY_HEX];
};
static struct hashed *hcache;
static size_t nhcache;

static struct hashed *cached(const char *path, const struct stat *st)
{
    for (size_t i = 0; i < nhcache; i++) {
        struct hashed *h = &hcache[i];
        if (!strcmp(h->path, path) && h->dev == st->st_dev && h->ino == st->st_ino &&
            h->size == st->st_size && h->mtime.tv_sec == st->st_mtim.tv_sec &&
            h->mtime.tv_nsec == st->st_mtim.tv_nsec)
            return h;
    }
    return NULL;
}

int sweep_hash_file(const char *path, char out[SWEEP_KEY_HEX], struct err *e)
{
    struct stat st;
    int have = !stat(path, &st);
    struct hashed *h = have ? cached(path, &st) : NULL;
    if (h) {
        memcpy(out, h->hex, SWEEP_KEY_HEX);
        return 0;
    }
    struct sha256_ctx c;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    int rc = hash_fd(&c, path, e);
    if (rc)
        return rc;
    sha256_digest(&c, sizeof d, d);
    hex(d, out);
    struct hashed *v =
        have && S_ISREG(st.st_mode) ? realloc(hcache, (nhcache + 1) * sizeof *v) : NULL;
    if (v) { /* not kept when memory is short: only slower */
        hcache = v;
        h = &v[nhcache];
        if ((h->path = strdup(path))) {
            h->dev = st.st_dev;
            h->ino = st.st_ino;
            h->size = st.st_size;
            h->mtime = st.st_mtim;
            memcpy(h->hex, out, SWEEP_KEY_HEX);
            nhcache++;
        }
    }
    return 0;
}

const char *sweep_version(void)
{
    return QOSIM_VERSION " " QOSIM_COMMIT;
}

const char *sweep_commit(void)
{
    return QOSIM_COMMIT;
}

/* A string with its terminating NUL, so that adjacent fields cannot run
 * into each other. */
static void hash_str(struct sha256_ctx *c, const char *s)
{
    sha256_update(c, strlen(s) + 1, (const uint8_t *)s);
}

int sweep_key(const struct sweep *sw, size_t i, char key[SWEEP_KEY_HEX], struct err *e)
{
    char path[4300];
    struct sha256_ctx c;
    sha256_init(&c);
    hash_str(&c, "qosim sweep key 1");
    hash_str(&c, sweep_version());
    sweep_point_path(sw, i, "scenario.yaml", path, sizeof path);
    int rc = hash_fd(&c, path, e);
    if (rc)
        return rc;
    sweep_point_path(sw, i, "inputs", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(e, -QOSIM_ENOENT, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    while (!rc && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        char h[SWEEP_KEY_HEX];
        /* An input that is gone is this point's error when it runs. */
        if ((rc = sweep_hash_file(line, h, e)))
            rc = err_set(e, rc, "point %0*zu: input %s", (int)sw->width, i, e->msg);
        hash_str(&c, line);
        hash_str(&c, h);
    }
    free(line);
    fclose(f);
    if (rc)
        return rc;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_digest(&c, sizeof d, d);
    hex(d, key);
    return 0;
}

enum sweep_state sweep_state(const struct sweep *sw, size_t i, const char key[SWEEP_KEY_HEX])
{
    char path[4300];
    sweep_point_path(sw, i, "record.json", path, sizeof path);
    struct err e;
    struct json_object *r = access(path, F_OK) ? NULL : sweep_json_read(path, &e);
    if (!r)
        return SWEEP_PENDING;
    struct json_object *k, *s;
    enum sweep_state st = SWEEP_PENDING;
    if (json_object_object_get_ex(r, "key", &k) && json_object_object_get_ex(r, "status", &s) &&
        !strcmp(json_object_get_string(k), key)) {
        if (!strcmp(json_object_get_string(s), "failed"))
            st = SWEEP_FAILED;
        else if (!strcmp(json_object_get_string(s), "ok")) {
            sweep_point_path(sw, i, "result.json", path, sizeof path);
            st = access(path, R_OK) ? SWEEP_PENDING : SWEEP_DONE;
        }
    }
    json_object_put(r);
    return st;
}

enum sweep_state sweep_state_now(const struct sweep *sw, size_t i)
{
    char key[SWEEP_KEY_HEX];
    struct err e;
    if (sweep_key(sw, i, key, &e))
        return SWEEP_PENDING;
    return sweep_state(sw, i, key);
}

/* Line and column of byte off in buf, for a message. */
static void where(const char *buf, size_t off, unsigned *line, unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t k = 0; k < off; k++) {
        if (buf[k] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

char *sweep_read_file(const char *path, size_t *len, struct err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(e, errno == ENOENT ? -QOSIM_ENOENT : -QOSIM_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f), en = errno;
    fclose(f);
    if (!buf) {
        err_set(e, -QOSIM_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (bad) {
        free(buf);
        err_set(e, -QOSIM_EIO, "%s: %s", path, strerror(en));
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* json_object_from_file would take a file cut short after its first value,
 * or with text after it, and its last error outlives a later success: a
 * tokener of our own checks the whole file and says where it went wrong. */
struct json_object *sweep_json_read(const char *path, struct err *e)
{
    size_t len;
    char *buf = sweep_read_file(path, &len, e);
    if (!buf)
        return NULL;
    if (len > INT_MAX - 1) {
        free(buf);
        err_set(e, -QOSIM_EPARSE, "%s: too large for JSON (%zu bytes)", path, len);
        return NULL;
    }
    struct json_tokener *tok = json_tokener_new();
    if (!tok) {
        free(buf);
        err_set(e, -QOSIM_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    /* The NUL after the text ends a value that could go on (a number). */
    struct json_object *v = json_tokener_parse_ex(tok, buf, (int)len + 1);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    size_t k = end;
    while (v && k < len && strchr(" \t\r\n", buf[k]))
        k++;
    if (v && k >= len) {
        free(buf);
        return v;
    }
    unsigned line, col;
    where(buf, v ? k : end, &line, &col);
    if (v)
        err_set(e, -QOSIM_EPARSE, "%s:%u:%u: malformed JSON: text after the value", path, line,
                col);
    else if (!len || strspn(buf, " \t\r\n") == len)
        err_set(e, -QOSIM_EPARSE, "%s: malformed JSON: the file is empty", path);
    else if (je == json_tokener_continue || end >= len)
        err_set(e, -QOSIM_EPARSE, "%s:%u:%u: malformed JSON: the file ends inside a value", path,
                line, col);
    else
        err_set(e, -QOSIM_EPARSE, "%s:%u:%u: malformed JSON: %s", path, line, col,
                json_tokener_error_desc(je));
    json_object_put(v);
    free(buf);
    return NULL;
}
