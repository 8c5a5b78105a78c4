/* util/conf: the YAML loader, paths and messages, typed getters, unknown keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "util/conf.h"
#include "util/rng.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F "t.yaml"

/* got equals want to a relative 1e-12 (exactly, for 0). */
static void close_to(double got, double want, int line)
{
    if (!(fabs(got - want) <= 1e-12 * fabs(want)))
        fail_msg("line %d: got %.17g, want %.17g", line, got, want);
}
#define assert_close(got, want) close_to(got, want, __LINE__)

/* Loads text as "t.yaml"; the test fails if it is refused. */
static void load(struct conf *c, const char *text)
{
    struct err e = {0};
    int rc = conf_load_mem(c, F, text, strlen(text), &e);
    if (rc)
        fail_msg("load failed: %s", e.msg);
    assert_non_null(c->root);
}

/* Loads text, expects a refusal with code and message msg. */
static void refused(const char *text, int code, const char *msg)
{
    struct conf c;
    struct err e = {0};
    assert_int_equal(conf_load_mem(&c, F, text, strlen(text), &e), code);
    assert_int_equal(e.code, code);
    assert_string_equal(e.msg, msg);
    assert_null(c.root);
    assert_null(c.arena_);
    conf_free(&c); /* harmless after a refusal */
}

/* ---- loading and the tree ---- */

static void test_tree(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "# profile\n"
             "name: xeon\n"
             "caches:\n"
             "  L3: {ways: 16, size: 32M}\n"
             "tasks:\n"
             "  - 1\n"
             "  - 'two'\n"
             "empty:\n");
    struct conf_node *r = c.root;
    assert_int_equal(r->type, CONF_MAP);
    assert_int_equal(r->line, 2);
    assert_null(r->parent);
    assert_null(r->key);
    assert_int_equal(r->nkids, 4);
    assert_string_equal(r->kids[0].key, "name");
    assert_string_equal(r->kids[0].val, "xeon");
    assert_int_equal(r->kids[0].line, 2);
    assert_true(r->kids[0].plain);
    assert_ptr_equal(r->kids[0].parent, r);

    struct conf_node *caches = &r->kids[1];
    assert_int_equal(caches->type, CONF_MAP);
    assert_int_equal(caches->line, 3); /* a collection's entry: the line of its key */
    struct conf_node *l3 = &caches->kids[0];
    assert_ptr_equal(l3->parent, caches);
    assert_int_equal(l3->nkids, 2);
    assert_ptr_equal(l3->kids[1].parent, l3);
    assert_string_equal(l3->kids[1].key, "size");
    assert_string_equal(l3->kids[1].val, "32M");
    assert_int_equal(l3->kids[1].line, 4);
    assert_int_equal(l3->kids[1].index, 1);

    struct conf_node *tasks = &r->kids[2];
    assert_int_equal(tasks->type, CONF_SEQ);
    assert_int_equal(tasks->nkids, 2);
    assert_null(tasks->kids[1].key);
    assert_int_equal(tasks->kids[1].index, 1);
    assert_string_equal(tasks->kids[1].val, "two");
    assert_false(tasks->kids[1].plain);
    assert_int_equal(tasks->kids[1].line, 7);
    assert_ptr_equal(tasks->kids[1].parent, tasks);

    assert_string_equal(r->kids[3].val, "");
    assert_int_equal(r->kids[3].type, CONF_SCALAR);
    conf_free(&c);
    assert_null(c.root);
    conf_free(&c); /* twice is harmless */
}

/* A document big enough to span several arena chunks and grow entry arrays. */
static void test_big_document(void **state)
{
    (void)state;
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    len += (size_t)snprintf(buf + len, cap - len, "items:\n");
    for (int i = 0; i < 3000; i++)
        len += (size_t)snprintf(buf + len, cap - len, "  - {id: %d, name: item%d}\n", i, i);
    len += (size_t)snprintf(buf + len, cap - len, "long: '%0*d'\n", 20000, 7);
    struct conf c;
    struct err e = {0};
    assert_int_equal(conf_load_mem(&c, F, buf, len, &e), 0);
    struct conf_node *items = conf_get(c.root, "items");
    assert_non_null(items);
    assert_int_equal(items->nkids, 3000);
    struct conf_node *it = &items->kids[2999];
    assert_ptr_equal(it->parent, items);
    assert_ptr_equal(it->kids[0].parent, it);
    uint64_t id = 0;
    assert_int_equal(conf_u64(&c, it, "id", CONF_REQ, 0, 5000, &id, &e), 0);
    assert_int_equal(id, 2999);
    char path[64];
    conf_path(&it->kids[1], path, sizeof path);
    assert_string_equal(path, "items[2999].name");
    const char *s = NULL;
    assert_int_equal(conf_str(&c, c.root, "long", CONF_REQ, &s, &e), 0);
    assert_int_equal(strlen(s), 20000);
    conf_free(&c);
    free(buf);
}

static void test_file(void **state)
{
    (void)state;
    char path[] = "/tmp/qosim-conf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "a: 1\nb: x\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    struct conf c;
    struct err e = {0};
    assert_int_equal(conf_load_file(&c, path, &e), 0);
    assert_string_equal(c.file, path);
    uint64_t v = 0;
    assert_int_equal(conf_u64(&c, c.root, "b", CONF_REQ, 0, 9, &v, &e), -QOSIM_EPARSE);
    char want[300];
    snprintf(want, sizeof want, "%s:2: b: expected an unsigned integer such as 16 or 0x40, got 'x'",
             path);
    assert_string_equal(e.msg, want);
    conf_free(&c);
    unlink(path);
}

static void test_file_errors(void **state)
{
    (void)state;
    struct conf c;
    struct err e = {0};
    assert_int_equal(conf_load_file(&c, "/nonexistent/qosim.yaml", &e), -QOSIM_ENOENT);
    assert_string_equal(e.msg, "/nonexistent/qosim.yaml: cannot open: No such file or directory");
    assert_null(c.root);
    conf_free(&c);
    /* A directory opens but cannot be read. */
    assert_int_equal(conf_load_file(&c, "/", &e), -QOSIM_EIO);
    assert_string_equal(e.msg, "/: cannot read: Is a directory");
    conf_free(&c);
}

static void test_empty_document(void **state)
{
    (void)state;
    refused("", -QOSIM_EPARSE, F ":1: empty document");
    refused("# only a comment\n\n", -QOSIM_EPARSE, F ":1: empty document");
    refused("---\n", -QOSIM_EPARSE, F ":1: empty document");
    refused("--- # nothing\n...\n", -QOSIM_EPARSE, F ":1: empty document");
}

static void test_syntax_error(void **state)
{
    (void)state;
    refused("a: 1\nb: 2\nc: [1, 2\n", -QOSIM_EPARSE, F ":4: did not find expected ',' or ']'");
    refused("a: 1\n b: 2\n", -QOSIM_EPARSE, F ":2: mapping values are not allowed in this context");
    refused("a: 1\nb:\n\t- x\n", -QOSIM_EPARSE,
            F ":3: found character that cannot start any token");
    /* libyaml's reader reports an offset: the line is counted from it. */
    refused("a: 1\nb: 2\nc: \xff\n", -QOSIM_EPARSE, F ":3: invalid leading UTF-8 octet");
}

static void test_aliases_refused(void **state)
{
    (void)state;
    refused("base: &b {ways: 4}\nL3: *b\n", -QOSIM_EPARSE,
            F ":1: base: aliases and anchors are not supported");
    refused("a: 1\nlist:\n  - x\n  - *y\n", -QOSIM_EPARSE,
            F ":4: list[1]: aliases and anchors are not supported");
    refused("&r\nx: 1\n", -QOSIM_EPARSE, F ":1: aliases and anchors are not supported");
    /* An alias in a key position names the map it is in. */
    refused("m:\n  *k : 1\n", -QOSIM_EPARSE, F ":2: m: aliases and anchors are not supported");
}

static void test_second_document(void **state)
{
    (void)state;
    refused("a: 1\n---\nb: 2\n", -QOSIM_EPARSE, F ":2: a second document is not supported");
    refused("---\na: 1\n...\n---\na: 1\n", -QOSIM_EPARSE,
            F ":4: a second document is not supported");
}

static void test_duplicate_key(void **state)
{
    (void)state;
    refused("a: 1\nb: 2\na: 3\n", -QOSIM_EPARSE, F ":3: duplicate key 'a' (first at line 1)");
    refused("caches:\n  L3:\n    ways: 4\n    size: 8M\n    ways: 8\n", -QOSIM_EPARSE,
            F ":5: caches.L3: duplicate key 'ways' (first at line 3)");
    refused("t:\n  - {x: 1, x: 2}\n", -QOSIM_EPARSE,
            F ":2: t[0]: duplicate key 'x' (first at line 2)");
    /* The same key in different maps is fine. */
    struct conf c;
    load(&c, "a: {x: 1}\nb: {x: 2}\n");
    conf_free(&c);
}

static void test_bad_keys(void **state)
{
    (void)state;
    refused("a: 1\n? [x, y]\n: 2\n", -QOSIM_EPARSE,
            F ":2: keys must be plain scalars, not sequences");
    refused("m:\n  {a: 1}: 2\n", -QOSIM_EPARSE,
            F ":2: m: keys must be plain scalars, not mappings");
    refused("a: 1\n\"\": 2\n", -QOSIM_EPARSE, F ":2: empty key");
    refused("a: 1\n?\n: 2\n", -QOSIM_EPARSE, F ":2: empty key");
    refused("a: \"x\\0y\"\n", -QOSIM_EPARSE, F ":1: a: value contains a NUL character");
}

/* Nests n flow sequences, with a map at the innermost. */
static char *nested(int n)
{
    char *s = malloc((size_t)n * 2 + 16);
    assert_non_null(s);
    char *p = s;
    for (int i = 0; i < n - 1; i++)
        *p++ = '[';
    p += sprintf(p, "{a: 1}");
    for (int i = 0; i < n - 1; i++)
        *p++ = ']';
    *p++ = '\n';
    *p = '\0';
    return s;
}

static void test_depth_bound(void **state)
{
    (void)state;
    struct conf c;
    char *ok = nested(64);
    load(&c, ok);
    conf_free(&c);
    free(ok);

    char *deep = nested(65);
    struct err e = {0};
    assert_int_equal(conf_load_mem(&c, F, deep, strlen(deep), &e), -QOSIM_EPARSE);
    assert_non_null(strstr(e.msg, ": nesting deeper than 64 levels"));
    assert_memory_equal(e.msg, F ":1: [0][0][0]", strlen(F ":1: [0][0][0]"));
    free(deep);

    /* Far deeper: refused at once, without exhausting anything. */
    size_t n = 200000;
    char *huge = malloc(n + 1);
    assert_non_null(huge);
    memset(huge, '[', n);
    huge[n] = '\0';
    assert_int_equal(conf_load_mem(&c, F, huge, n, &e), -QOSIM_EPARSE);
    assert_non_null(strstr(e.msg, "nesting deeper than 64 levels"));
    free(huge);

    /* Block style names the keys on the way: the root and k0..k62 make 64
     * mappings, k63's is one too many. */
    char block[8192], *p = block;
    for (int i = 0; i < 65; i++)
        p += sprintf(p, "%*sk%d:\n", 2 * i, "", i);
    sprintf(p, "%*sv: 1\n", 2 * 65, "");
    assert_int_equal(conf_load_mem(&c, F, block, strlen(block), &e), -QOSIM_EPARSE);
    assert_memory_equal(e.msg, F ":65: k0.k1.k2", strlen(F ":65: k0.k1.k2"));
    assert_non_null(strstr(e.msg, "k62.k63: nesting deeper than 64 levels"));
}

/* ---- paths and messages ---- */

static void test_path(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "caches:\n  L3:\n    ways: 16\n"
             "tasks:\n  - {name: a}\n  - workload:\n      wss: 1M\n");
    char buf[128];
    conf_path(c.root, buf, sizeof buf);
    assert_string_equal(buf, "");
    struct conf_node *ways = conf_get(conf_get(conf_get(c.root, "caches"), "L3"), "ways");
    assert_non_null(ways);
    conf_path(ways, buf, sizeof buf);
    assert_string_equal(buf, "caches.L3.ways");
    struct conf_node *tasks = conf_get(c.root, "tasks");
    struct conf_node *wss = conf_get(conf_get(&tasks->kids[1], "workload"), "wss");
    assert_non_null(wss);
    conf_path(wss, buf, sizeof buf);
    assert_string_equal(buf, "tasks[1].workload.wss");
    conf_path(&tasks->kids[0], buf, sizeof buf);
    assert_string_equal(buf, "tasks[0]");
    /* Cut to the buffer, always terminated. */
    char small[8];
    conf_path(wss, small, sizeof small);
    assert_string_equal(small, "tasks[1");
    conf_path(wss, small, 1);
    assert_string_equal(small, "");
    conf_path(wss, small, 0); /* nothing written */
    conf_path(NULL, buf, sizeof buf);
    assert_string_equal(buf, "");
    conf_free(&c);

    /* A sequence at the root. */
    load(&c, "- a\n- [x, y]\n");
    conf_path(&c.root->kids[1].kids[0], buf, sizeof buf);
    assert_string_equal(buf, "[1][0]");
    conf_free(&c);
}

static void test_conf_error(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a:\n  b: 7\n");
    struct err e = {0};
    struct conf_node *b = conf_get(conf_get(c.root, "a"), "b");
    assert_int_equal(conf_error(&c, b, &e, "bad %s %d", "thing", 3), -QOSIM_EPARSE);
    assert_int_equal(e.code, -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":2: a.b: bad thing 3");
    assert_int_equal(conf_error(&c, c.root, &e, "at the root"), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":1: at the root");
    assert_int_equal(conf_error(&c, NULL, &e, "no node"), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ": no node");
    /* The inner message may be e->msg itself. */
    err_set(&e, -QOSIM_EGEOM, "bad geometry");
    conf_error(&c, b, &e, "%s", e.msg);
    assert_string_equal(e.msg, F ":2: a.b: bad geometry");
    assert_int_equal(conf_error(&c, b, NULL, "ignored"), -QOSIM_EPARSE);
    conf_free(&c);
}

static void test_expect(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "m: {a: 1}\ns: [1]\nv: x\ne:\n");
    struct err e = {0};
    assert_int_equal(conf_expect(&c, conf_get(c.root, "m"), CONF_MAP, &e), 0);
    assert_int_equal(conf_expect(&c, conf_get(c.root, "s"), CONF_MAP, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":2: s: expected a mapping, got a sequence");
    assert_int_equal(conf_expect(&c, conf_get(c.root, "v"), CONF_SEQ, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":3: v: expected a sequence, got 'x'");
    assert_int_equal(conf_expect(&c, conf_get(c.root, "e"), CONF_MAP, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: e: expected a mapping, got an empty value");
    assert_int_equal(conf_expect(&c, conf_get(c.root, "m"), CONF_SCALAR, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":1: m: expected a scalar, got a mapping");
    conf_free(&c);
}

/* ---- getters ---- */

static void test_get_marks_used(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 1\nb: 2\n");
    assert_false(c.root->kids[0].used);
    assert_null(conf_get(c.root, "c"));
    assert_false(c.root->kids[0].used);
    assert_false(c.root->kids[1].used);
    assert_ptr_equal(conf_get(c.root, "b"), &c.root->kids[1]);
    assert_true(c.root->kids[1].used);
    assert_false(c.root->kids[0].used);
    /* Not a map, or no map: absent. */
    assert_null(conf_get(&c.root->kids[0], "a"));
    assert_null(conf_get(NULL, "a"));
    conf_free(&c);
}

static void test_u64(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 16\nb: 0x40\nc: 0\nd: 18446744073709551615\ne: 0XfF\nf: '7'\n"
             "g: 300\nh: 18446744073709551616\ni: abc\nj: -1\nk: 1.5\nl: 0x\nm: 0x1g\n"
             "n:\no: [1]\np: 1 2\nq: 0xffffffffffffffff0\n");
    struct err e = {0};
    uint64_t v = 0;
    assert_int_equal(conf_u64(&c, c.root, "a", CONF_REQ, 0, UINT64_MAX, &v, &e), 0);
    assert_int_equal(v, 16);
    assert_int_equal(conf_u64(&c, c.root, "b", CONF_REQ, 0, UINT64_MAX, &v, &e), 0);
    assert_int_equal(v, 64);
    assert_int_equal(conf_u64(&c, c.root, "c", CONF_REQ, 0, 5, &v, &e), 0);
    assert_int_equal(v, 0);
    assert_int_equal(conf_u64(&c, c.root, "d", CONF_REQ, 0, UINT64_MAX, &v, &e), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(conf_u64(&c, c.root, "e", CONF_REQ, 0, UINT64_MAX, &v, &e), 0);
    assert_int_equal(v, 255);
    assert_int_equal(conf_u64(&c, c.root, "f", CONF_REQ, 0, UINT64_MAX, &v, &e), 0);
    assert_int_equal(v, 7);

    v = 99;
    assert_int_equal(conf_u64(&c, c.root, "g", CONF_REQ, 1, 256, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":7: g: 300 is out of range (1..256)");
    assert_int_equal(v, 99); /* untouched on error */
    assert_int_equal(conf_u64(&c, c.root, "a", CONF_REQ, 17, 20, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":1: a: 16 is out of range (17..20)");
    assert_int_equal(conf_u64(&c, c.root, "h", CONF_REQ, 0, UINT64_MAX, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":8: h: 18446744073709551616 is out of range (0..18446744073709551615)");
    assert_int_equal(conf_u64(&c, c.root, "q", CONF_REQ, 0, 10, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":17: q: 0xffffffffffffffff0 is out of range (0..10)");

    static const char *const bad[][2] = {{"i", "9: i"},  {"j", "10: j"}, {"k", "11: k"},
                                         {"l", "12: l"}, {"m", "13: m"}, {"p", "16: p"}};
    static const char *const got[] = {"abc", "-1", "1.5", "0x", "0x1g", "1 2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[200];
        snprintf(want, sizeof want,
                 F ":%s: expected an unsigned integer such as 16 or 0x40, got '%s'", bad[i][1],
                 got[i]);
        assert_int_equal(conf_u64(&c, c.root, bad[i][0], CONF_REQ, 0, UINT64_MAX, &v, &e),
                         -QOSIM_EPARSE);
        assert_string_equal(e.msg, want);
    }
    assert_int_equal(conf_u64(&c, c.root, "n", CONF_REQ, 0, 9, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":14: n: missing value");
    assert_int_equal(conf_u64(&c, c.root, "o", CONF_REQ, 0, 9, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F
                        ":15: o: expected an unsigned integer such as 16 or 0x40, got a sequence");
    conf_free(&c);
}

static void test_f64(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 0.5\nb: 2\nc: -1.25e2\nd: 1e999\ne: inf\nf: nan\ng: ' 1'\nh: 1x\ni: 3\n");
    struct err e = {0};
    double v = 0;
    assert_int_equal(conf_f64(&c, c.root, "a", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 0.5);
    assert_int_equal(conf_f64(&c, c.root, "b", CONF_REQ, 0, 10, &v, &e), 0);
    assert_close(v, 2);
    assert_int_equal(conf_f64(&c, c.root, "c", CONF_REQ, -1000, 0, &v, &e), 0);
    assert_close(v, -125);
    assert_int_equal(conf_f64(&c, c.root, "d", CONF_REQ, 0, 10, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: d: 1e999 is out of range (0..10)");
    assert_int_equal(conf_f64(&c, c.root, "i", CONF_REQ, 0, 2.5, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":9: i: 3 is out of range (0..2.5)");
    const char *bad[] = {"e", "f", "g", "h"};
    const char *msg[] = {F ":5: e: expected a number such as 0.5 or 2, got 'inf'",
                         F ":6: f: expected a number such as 0.5 or 2, got 'nan'",
                         F ":7: g: expected a number such as 0.5 or 2, got ' 1'",
                         F ":8: h: expected a number such as 0.5 or 2, got '1x'"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(conf_f64(&c, c.root, bad[i], CONF_REQ, -1e9, 1e9, &v, &e), -QOSIM_EPARSE);
        assert_string_equal(e.msg, msg[i]);
    }
    conf_free(&c);
}

static void test_size(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 32K\nb: 11M\nc: 1G\nd: 64KiB\ne: 3MiB\nf: 2GiB\ng: 512B\nh: 4096\ni: 2 MiB\n"
             "j: 0\n");
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
    static const uint64_t want[] = {32 << 10,   11 << 20, 1ull << 30, 64 << 10, 3 << 20,
                                    2ull << 30, 512,      4096,       2 << 20,  0};
    struct err e = {0};
    for (int i = 0; i < 10; i++) {
        uint64_t v = 1;
        assert_int_equal(conf_size(&c, c.root, keys[i], CONF_REQ, 0, UINT64_MAX, &v, &e), 0);
        assert_true(v == want[i]);
    }
    conf_free(&c);
}

static void test_size_errors(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 1.5M\nb: abc\nc: 32KB\nd: 16k\ne: 99999999999999999999\nf: 17179869184G\n"
             "g: 64M\nh: -1K\ni: 1000\nj: M\nk: {x: 1}\n");
    struct err e = {0};
    uint64_t v = 0;
    static const char *const bad[] = {"a", "b", "c", "d", "h", "j"};
    static const char *const got[] = {"1.5M", "abc", "32KB", "16k", "-1K", "M"};
    for (int i = 0; i < 6; i++) {
        char want[200];
        snprintf(want, sizeof want,
                 F ":%d: %s: expected a size in bytes such as 32K or 11M, got '%s'",
                 bad[i][0] - 'a' + 1, bad[i], got[i]);
        assert_int_equal(conf_size(&c, c.root, bad[i], CONF_REQ, 0, UINT64_MAX, &v, &e),
                         -QOSIM_EPARSE);
        assert_string_equal(e.msg, want);
    }
    assert_int_equal(conf_size(&c, c.root, "e", CONF_REQ, 0, UINT64_MAX, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":5: e: 99999999999999999999 is out of range (0..18446744073709551615)");
    assert_int_equal(conf_size(&c, c.root, "f", CONF_REQ, 1, 1ull << 40, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":6: f: 17179869184G is out of range (1..1024G)");
    assert_int_equal(conf_size(&c, c.root, "g", CONF_REQ, 1 << 10, 32 << 20, &v, &e),
                     -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":7: g: 64M is out of range (1K..32M)");
    assert_int_equal(conf_size(&c, c.root, "i", CONF_REQ, 1 << 12, 1536, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":9: i: 1000 is out of range (4K..1536)");
    assert_int_equal(conf_size(&c, c.root, "k", CONF_REQ, 0, 1, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":11: k: expected a size in bytes such as 32K or 11M, got a mapping");
    conf_free(&c);
}

static void test_time(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 80ns\nb: 1.5us\nc: 2ms\nd: 1s\ne: 0.5 s\nf: 1e3ns\ng: 80\nh: 80ps\ni: 2s\n"
             "j: 5 NS\nk: 1.5.3us\nl: -1ns\n");
    struct err e = {0};
    double v = 0;
    assert_int_equal(conf_time(&c, c.root, "a", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 80e-9);
    assert_int_equal(conf_time(&c, c.root, "b", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 1.5e-6);
    assert_int_equal(conf_time(&c, c.root, "c", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 2e-3);
    assert_int_equal(conf_time(&c, c.root, "d", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 1);
    assert_int_equal(conf_time(&c, c.root, "e", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 0.5);
    assert_int_equal(conf_time(&c, c.root, "f", CONF_REQ, 0, 1, &v, &e), 0);
    assert_close(v, 1e-6);

    static const char *const bad[] = {"g", "h", "j", "k"};
    static const char *const got[] = {"80", "80ps", "5 NS", "1.5.3us"};
    static const int line[] = {7, 8, 10, 11};
    for (int i = 0; i < 4; i++) {
        char want[200];
        snprintf(want, sizeof want, F ":%d: %s: expected a time such as 80ns or 1.5us, got '%s'",
                 line[i], bad[i], got[i]);
        assert_int_equal(conf_time(&c, c.root, bad[i], CONF_REQ, 0, 1, &v, &e), -QOSIM_EPARSE);
        assert_string_equal(e.msg, want);
    }
    assert_int_equal(conf_time(&c, c.root, "i", CONF_REQ, 1e-9, 1, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":9: i: 2s is out of range (1ns..1s)");
    assert_int_equal(conf_time(&c, c.root, "a", CONF_REQ, 0, 50e-9, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":1: a: 80ns is out of range (0..50ns)");
    assert_int_equal(conf_time(&c, c.root, "l", CONF_REQ, 0, 1e-3, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":12: l: -1ns is out of range (0..1ms)");
    assert_int_equal(conf_time(&c, c.root, "b", CONF_REQ, 2e-6, 2.5e-6, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":2: b: 1.5us is out of range (2us..2.5us)");
    conf_free(&c);
}

static void test_freq(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 2.4GHz\nb: 800MHz\nc: 32kHz\nd: 50Hz\ne: 3 GHz\nf: 2.4ghz\ng: 2.4\nh: 5GHz\n"
             "i: 32KHz\n");
    struct err e = {0};
    double v = 0;
    static const char *const keys[] = {"a", "b", "c", "d", "e"};
    static const double want[] = {2.4e9, 800e6, 32e3, 50, 3e9};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(conf_freq(&c, c.root, keys[i], CONF_REQ, 0, 1e10, &v, &e), 0);
        assert_close(v, want[i]);
    }
    assert_int_equal(conf_freq(&c, c.root, "f", CONF_REQ, 0, 1e10, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":6: f: expected a frequency such as 2.4GHz or 800MHz, got '2.4ghz'");
    assert_int_equal(conf_freq(&c, c.root, "g", CONF_REQ, 0, 1e10, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":7: g: expected a frequency such as 2.4GHz or 800MHz, got '2.4'");
    assert_int_equal(conf_freq(&c, c.root, "i", CONF_REQ, 0, 1e10, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":9: i: expected a frequency such as 2.4GHz or 800MHz, got '32KHz'");
    assert_int_equal(conf_freq(&c, c.root, "h", CONF_REQ, 100e6, 4.5e9, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":8: h: 5GHz is out of range (100MHz..4.5GHz)");
    conf_free(&c);
}

static void test_rate(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 25.6GB/s\nb: 800MB/s\nc: 64KB/s\nd: 64kB/s\ne: 100B/s\nf: 1KiB/s\n"
             "g: 2MiB/s\nh: 1GiB/s\ni: 10 GB/s\nj: 10GB\nk: 10gb/s\nl: 90GB/s\n");
    struct err e = {0};
    double v = 0;
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
    static const double want[] = {25.6e9, 800e6, 64e3, 64e3, 100, 1024, 2097152, 1073741824, 10e9};
    for (int i = 0; i < 9; i++) {
        assert_int_equal(conf_rate(&c, c.root, keys[i], CONF_REQ, 0, 1e12, &v, &e), 0);
        assert_close(v, want[i]);
    }
    assert_int_equal(conf_rate(&c, c.root, "j", CONF_REQ, 0, 1e12, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":10: j: expected a bandwidth such as 25.6GB/s or 800MB/s, got '10GB'");
    assert_int_equal(conf_rate(&c, c.root, "k", CONF_REQ, 0, 1e12, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":11: k: expected a bandwidth such as 25.6GB/s or 800MB/s, got '10gb/s'");
    assert_int_equal(conf_rate(&c, c.root, "l", CONF_REQ, 1e6, 51.2e9, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":12: l: 90GB/s is out of range (1MB/s..51.2GB/s)");
    conf_free(&c);
}

static void test_pct(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: 50%\nb: 50\nc: 12.5%\nd: 0\ne: 100%\nf: 150%\ng: -5\nh: half\ni: 5%%\n");
    struct err e = {0};
    double v = 0;
    static const char *const keys[] = {"a", "b", "c", "d", "e"};
    static const double want[] = {50, 50, 12.5, 0, 100};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(conf_pct(&c, c.root, keys[i], CONF_REQ, &v, &e), 0);
        assert_close(v, want[i]);
    }
    assert_int_equal(conf_pct(&c, c.root, "f", CONF_REQ, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":6: f: 150% is out of range (0..100)");
    assert_int_equal(conf_pct(&c, c.root, "g", CONF_REQ, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":7: g: -5 is out of range (0..100)");
    assert_int_equal(conf_pct(&c, c.root, "h", CONF_REQ, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":8: h: expected a percentage such as 50% or 12.5, got 'half'");
    assert_int_equal(conf_pct(&c, c.root, "i", CONF_REQ, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":9: i: expected a percentage such as 50% or 12.5, got '5%%'");
    conf_free(&c);
}

static void test_bool(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: true\nb: False\nc: yes\nd: NO\ne: on\nf: Off\ng: 1\nh: maybe\n");
    struct err e = {0};
    static const char *const keys[] = {"a", "b", "c", "d", "e", "f"};
    for (int i = 0; i < 6; i++) {
        int v = -1;
        assert_int_equal(conf_bool(&c, c.root, keys[i], CONF_REQ, &v, &e), 0);
        assert_int_equal(v, i % 2 == 0);
    }
    int v = -1;
    assert_int_equal(conf_bool(&c, c.root, "g", CONF_REQ, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":7: g: expected true or false (also yes/no, on/off), got '1'");
    assert_int_equal(conf_bool(&c, c.root, "h", CONF_REQ, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":8: h: expected true or false (also yes/no, on/off), got 'maybe'");
    assert_int_equal(v, -1);
    conf_free(&c);
}

static void test_str(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "a: hello world\nb: \"quoted: yes\"\nc: ''\nd:\ne: [x]\nf: |\n  two\n  lines\n");
    struct err e = {0};
    const char *s = NULL;
    assert_int_equal(conf_str(&c, c.root, "a", CONF_REQ, &s, &e), 0);
    assert_string_equal(s, "hello world");
    assert_int_equal(conf_str(&c, c.root, "b", CONF_REQ, &s, &e), 0);
    assert_string_equal(s, "quoted: yes");
    assert_int_equal(conf_str(&c, c.root, "c", CONF_REQ, &s, &e), 0); /* quoted: a value */
    assert_string_equal(s, "");
    assert_int_equal(conf_str(&c, c.root, "f", CONF_REQ, &s, &e), 0);
    assert_string_equal(s, "two\nlines\n");
    s = "default";
    assert_int_equal(conf_str(&c, c.root, "d", CONF_REQ, &s, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: d: missing value");
    assert_string_equal(s, "default");
    assert_int_equal(conf_str(&c, c.root, "e", CONF_REQ, &s, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":5: e: expected a string, got a sequence");
    conf_free(&c);
}

static void test_enum(void **state)
{
    (void)state;
    static const char *const pol[] = {"lru", "plru", "srrip"};
    struct conf c;
    load(&c, "a: plru\nb: srrip\nc: LRU\nd: x\ne:\n");
    struct err e = {0};
    unsigned v = 99;
    assert_int_equal(conf_enum(&c, c.root, "a", CONF_REQ, pol, 3, &v, &e), 0);
    assert_int_equal(v, 1);
    assert_int_equal(conf_enum(&c, c.root, "b", CONF_REQ, pol, 3, &v, &e), 0);
    assert_int_equal(v, 2);
    assert_int_equal(conf_enum(&c, c.root, "c", CONF_REQ, pol, 3, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":3: c: expected one of lru, plru, srrip, got 'LRU'");
    assert_int_equal(conf_enum(&c, c.root, "d", CONF_REQ, pol, 3, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: d: expected one of lru, plru, srrip, got 'x'");
    assert_int_equal(conf_enum(&c, c.root, "e", CONF_REQ, pol, 3, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":5: e: missing value");
    assert_int_equal(v, 2);
    conf_free(&c);
}

/* Absent optional keys (and absent sections) leave the default. */
static void test_absent_optional(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "x: 1\n");
    struct err e = {0};
    struct conf_node *maps[] = {c.root, NULL};
    for (int m = 0; m < 2; m++) {
        struct conf_node *map = maps[m];
        uint64_t u = 7;
        double d = 7;
        int b = 7;
        unsigned en = 7;
        const char *s = "dflt";
        static const char *const names[] = {"a"};
        assert_int_equal(conf_u64(&c, map, "k", CONF_OPT, 0, 9, &u, &e), 0);
        assert_int_equal(conf_size(&c, map, "k", CONF_OPT, 0, 9, &u, &e), 0);
        assert_int_equal(u, 7);
        assert_int_equal(conf_f64(&c, map, "k", CONF_OPT, 0, 9, &d, &e), 0);
        assert_int_equal(conf_time(&c, map, "k", CONF_OPT, 0, 9, &d, &e), 0);
        assert_int_equal(conf_freq(&c, map, "k", CONF_OPT, 0, 9, &d, &e), 0);
        assert_int_equal(conf_rate(&c, map, "k", CONF_OPT, 0, 9, &d, &e), 0);
        assert_int_equal(conf_pct(&c, map, "k", CONF_OPT, &d, &e), 0);
        assert_close(d, 7);
        assert_int_equal(conf_bool(&c, map, "k", CONF_OPT, &b, &e), 0);
        assert_int_equal(b, 7);
        assert_int_equal(conf_str(&c, map, "k", CONF_OPT, &s, &e), 0);
        assert_string_equal(s, "dflt");
        assert_int_equal(conf_enum(&c, map, "k", CONF_OPT, names, 1, &en, &e), 0);
        assert_int_equal(en, 7);
    }
    conf_free(&c);
}

static void test_required_missing(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "# header\n\nname: x\ncaches:\n  L3:\n    size: 8M\n");
    struct err e = {0};
    uint64_t v = 0;
    struct conf_node *l3 = conf_get(conf_get(c.root, "caches"), "L3");
    assert_int_equal(conf_u64(&c, l3, "ways", CONF_REQ, 1, 256, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":5: caches.L3: missing required key 'ways'");
    const char *s;
    assert_int_equal(conf_str(&c, c.root, "cpu", CONF_REQ, &s, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":3: missing required key 'cpu'");
    double d;
    assert_int_equal(conf_time(&c, NULL, "lat", CONF_REQ, 0, 1, &d, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ": missing required key 'lat'");
    conf_free(&c);
}

/* A getter handed something that is not a map. */
static void test_getter_not_a_map(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "caches: 3\nlist: [1, 2]\n");
    struct err e = {0};
    uint64_t v = 0;
    struct conf_node *caches = conf_get(c.root, "caches");
    assert_int_equal(conf_u64(&c, caches, "ways", CONF_OPT, 1, 256, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":1: caches: expected a mapping, got '3'");
    struct conf_node *list = conf_get(c.root, "list");
    assert_int_equal(conf_size(&c, list, "x", CONF_OPT, 0, 9, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":2: list: expected a mapping, got a sequence");
    conf_free(&c);
}

static void test_node_u64(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "cpus:\n  - 0\n  - 0x3\n  - 99\n  - x\n  - [1]\n  -\n");
    struct err e = {0};
    struct conf_node *cpus = conf_get(c.root, "cpus");
    assert_int_equal(cpus->nkids, 6);
    uint64_t v = 0;
    assert_int_equal(conf_node_u64(&c, &cpus->kids[1], 0, 63, &v, &e), 0);
    assert_int_equal(v, 3);
    assert_true(cpus->kids[1].used);
    assert_false(cpus->kids[0].used);
    assert_int_equal(conf_node_u64(&c, &cpus->kids[2], 0, 63, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: cpus[2]: 99 is out of range (0..63)");
    assert_int_equal(conf_node_u64(&c, &cpus->kids[3], 0, 63, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg,
                        F ":5: cpus[3]: expected an unsigned integer such as 16 or 0x40, got 'x'");
    assert_int_equal(conf_node_u64(&c, &cpus->kids[4], 0, 63, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(
        e.msg, F ":6: cpus[4]: expected an unsigned integer such as 16 or 0x40, got a sequence");
    assert_int_equal(conf_node_u64(&c, &cpus->kids[5], 0, 63, &v, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":7: cpus[5]: missing value");
    assert_int_equal(v, 3);
    conf_free(&c);
}

/* ---- unknown keys ---- */

static void test_unused_top(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "name: a\nnmae: b\nother: c\n");
    struct err e = {0};
    const char *s;
    assert_int_equal(conf_str(&c, c.root, "name", CONF_REQ, &s, &e), 0);
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":2: nmae: unknown key");
    /* A getter that failed still read its key. */
    assert_int_equal(conf_u64(&c, c.root, "nmae", CONF_REQ, 0, 1, &(uint64_t){0}, &e),
                     -QOSIM_EPARSE);
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":3: other: unknown key");
    conf_get(c.root, "other");
    e = (struct err){0};
    assert_int_equal(conf_check_unused(&c, c.root, &e), 0);
    assert_int_equal(e.code, 0);
    assert_int_equal(conf_check_unused(&c, NULL, &e), 0);
    conf_free(&c);
}

static void test_unused_nested(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "caches:\n"
             "  L3:\n"
             "    ways: 16\n"
             "    wyas: 12\n"
             "tasks:\n"
             "  - name: a\n"
             "    workload: {wss: 1M}\n"
             "  - name: b\n"
             "    workload:\n"
             "      wss: 2M\n"
             "      strdie: 64\n"
             "extra:\n"
             "  deep: {x: 1}\n");
    struct err e = {0};
    uint64_t v;
    struct conf_node *l3 = conf_get(conf_get(c.root, "caches"), "L3");
    assert_int_equal(conf_u64(&c, l3, "ways", CONF_REQ, 1, 256, &v, &e), 0);
    struct conf_node *tasks = conf_get(c.root, "tasks");
    for (unsigned i = 0; i < tasks->nkids; i++) {
        const char *s;
        assert_int_equal(conf_str(&c, &tasks->kids[i], "name", CONF_REQ, &s, &e), 0);
        struct conf_node *w = conf_get(&tasks->kids[i], "workload");
        assert_int_equal(conf_size(&c, w, "wss", CONF_REQ, 1, UINT64_MAX, &v, &e), 0);
    }
    /* File order: caches.L3.wyas comes first. */
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: caches.L3.wyas: unknown key");
    conf_get(l3, "wyas");
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":11: tasks[1].workload.strdie: unknown key");
    conf_get(conf_get(&tasks->kids[1], "workload"), "strdie");
    /* An unread section is reported itself, not what is inside it. */
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":12: extra: unknown key");
    /* Read, but not its contents. */
    conf_get(c.root, "extra");
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":13: extra.deep: unknown key");
    /* Checking a subtree only. */
    assert_int_equal(conf_check_unused(&c, tasks, &e), 0);
    conf_free(&c);
}

static void test_unused_sequences(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "cpus: [0, 1, 2]\n"
             "grid:\n"
             "  - [1, 2]\n"
             "  - [{a: 1, b: 2}]\n"
             "list: [x]\n");
    struct err e = {0};
    conf_get(c.root, "cpus"); /* items count as read with their sequence */
    struct conf_node *grid = conf_get(c.root, "grid");
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: grid[1][0].a: unknown key");
    struct conf_node *m = &grid->kids[1].kids[0];
    conf_get(m, "a");
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":4: grid[1][0].b: unknown key");
    conf_get(m, "b");
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":5: list: unknown key");
    conf_get(c.root, "list");
    assert_int_equal(conf_check_unused(&c, c.root, &e), 0);
    conf_free(&c);
}

/* ---- declared keys: a misspelling is named, with what it likely meant ---- */

/* The case: a misspelt required key was reported as the key it was
 * meant to be ("missing required key 'duration'"). Declared first, the map
 * names the stranger and the closest key it may hold. */
static void test_keys_before_required(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "platform: x\ndurration: 1ms\ntasks: []\n");
    struct err e = {0};
    assert_int_equal(conf_keys(&c, c.root, &e, "platform", "seed", "duration", "tasks", NULL),
                     -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":2: durration: unknown key (did you mean 'duration'?)");
    conf_free(&c);
}

/* At every depth, in maps inside sequences too; the first stranger in file
 * order; a valid map passes and keeps nothing marked as read. */
static void test_keys_nested(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "tasks:\n"
             "  - name: a\n"
             "    worklaod: {pattern: seq}\n"
             "    colour: red\n"
             "  - {name: b, workload: {patern: seq}}\n");
    struct err e = {0};
    struct conf_node *t = conf_get(c.root, "tasks");
    assert_int_equal(conf_keys(&c, &t->kids[1], &e, "name", "cpu", "workload", NULL), 0);
    assert_int_equal(t->kids[1].kids[0].used, 0);
    struct conf_node *w = conf_get(&t->kids[1], "workload");
    assert_int_equal(conf_keys(&c, w, &e, "trace", "pattern", "wss", NULL), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":5: tasks[1].workload.patern: unknown key (did you mean "
                                 "'pattern'?)");
    assert_int_equal(conf_keys(&c, &t->kids[0], &e, "name", "cpu", "workload", NULL),
                     -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":3: tasks[0].worklaod: unknown key (did you mean 'workload'?)");
    conf_free(&c);
}

/* What counts as close: about a third of the key's length in edits (a swap
 * of neighbours is one), never all of the stranger's characters; the first
 * declared key on a tie; case matters. Nothing close: no suggestion. */
static void test_keys_suggestions(void **state)
{
    (void)state;
    static const struct {
        const char *key, *want;
    } cases[] = {
        {"cpi", ""},                                   /* declared: no message */
        {"pci", "unknown key (did you mean 'cpi'?)"},  /* a swap */
        {"Cpi", "unknown key (did you mean 'cpi'?)"},  /* case */
        {"cpix", "unknown key (did you mean 'cpi'?)"}, /* one more */
        {"ci", "unknown key (did you mean 'cpi'?)"},   /* one less */
        {"xyz", "unknown key"},                        /* three edits from cpi */
        {"c", "unknown key"},                          /* all its characters */
        {"colour", "unknown key"},
        {"frequncy", "unknown key (did you mean 'frequency'?)"},
        {"freqq", "unknown key"},                   /* 4 edits */
        {"L4", "unknown key (did you mean 'L2'?)"}, /* L2 and L3: the first */
        {"remote-penalty", "unknown key (did you mean 'remote_penalty'?)"},
        {"remote_penalties", "unknown key (did you mean 'remote_penalty'?)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[64], want[128];
        snprintf(text, sizeof text, "%s: 1\n", cases[i].key);
        struct conf c;
        load(&c, text);
        struct err e = {0};
        int rc = conf_keys(&c, c.root, &e, "cpi", "frequency", "L2", "L3", "remote_penalty", NULL);
        if (!cases[i].want[0]) {
            assert_int_equal(rc, 0);
        } else {
            snprintf(want, sizeof want, F ":1: %s: %s", cases[i].key, cases[i].want);
            assert_int_equal(rc, -QOSIM_EPARSE);
            assert_string_equal(e.msg, want);
        }
        conf_free(&c);
    }
}

/* Not a map: nothing to declare (its reader reports the type). A key that
 * is declared but not read (another kind's) is unknown, with no suggestion
 * of itself; one read but not declared is qosim's bug, reported as such. */
static void test_keys_and_unused(void **state)
{
    (void)state;
    struct conf c;
    load(&c, "bw: {kind: delay, max: 90, blocks: 4}\nlist: [1]\nname: x\n");
    struct err e = {0};
    assert_int_equal(conf_keys(&c, conf_get(c.root, "list"), &e, "a", NULL), 0);
    assert_int_equal(conf_keys(&c, conf_get(c.root, "name"), &e, "a", NULL), 0);
    assert_int_equal(conf_keys(&c, NULL, &e, "a", NULL), 0);
    struct conf_node *bw = conf_get(c.root, "bw");
    assert_int_equal(conf_keys(&c, bw, &e, "kind", "max", "blocks", NULL), 0);
    conf_get(bw, "kind");
    conf_get(bw, "max");
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(e.msg, F ":1: bw.blocks: unknown key");
    conf_get(bw, "blocks");
    assert_int_equal(conf_check_unused(&c, c.root, &e), 0);
    assert_null(conf_get(bw, "granularity")); /* not declared */
    assert_int_equal(conf_check_unused(&c, c.root, &e), -QOSIM_EPARSE);
    assert_string_equal(
        e.msg, F ":1: bw: qosim reads key 'granularity' here but did not declare it (a bug)");
    conf_free(&c);
}

/* ---- robustness ---- */

static struct rng rng_s; /* seeded in main() */

/* Reads everything every way it can be read, ignoring the outcome. */
static void read_all(struct conf *c, struct conf_node *n, struct err *e)
{
    static const char *const names[] = {"lru", "plru"};
    char path[64];
    conf_path(n, path, sizeof path);
    if (n->type == CONF_SCALAR) {
        uint64_t u;
        conf_node_u64(c, n, 0, 100, &u, e);
        return;
    }
    for (unsigned i = 0; i < n->nkids; i++) {
        struct conf_node *k = &n->kids[i];
        if (n->type == CONF_MAP && k->key && (rng_next(&rng_s) & 3)) {
            uint64_t u;
            double d;
            int b;
            unsigned en;
            const char *s;
            switch (rng_next(&rng_s) % 10) {
            case 0:
                conf_u64(c, n, k->key, CONF_REQ, 1, 9, &u, e);
                break;
            case 1:
                conf_size(c, n, k->key, CONF_REQ, 1, 1 << 20, &u, e);
                break;
            case 2:
                conf_time(c, n, k->key, CONF_REQ, 0, 1, &d, e);
                break;
            case 3:
                conf_freq(c, n, k->key, CONF_REQ, 0, 1e9, &d, e);
                break;
            case 4:
                conf_rate(c, n, k->key, CONF_REQ, 0, 1e9, &d, e);
                break;
            case 5:
                conf_pct(c, n, k->key, CONF_REQ, &d, e);
                break;
            case 6:
                conf_bool(c, n, k->key, CONF_REQ, &b, e);
                break;
            case 7:
                conf_str(c, n, k->key, CONF_REQ, &s, e);
                break;
            case 8:
                conf_enum(c, n, k->key, CONF_REQ, names, 2, &en, e);
                break;
            default:
                conf_f64(c, n, k->key, CONF_REQ, -1, 1, &d, e);
                break;
            }
        }
        if (k->type != CONF_SCALAR)
            read_all(c, k, e);
    }
}

static void test_mutations(void **state)
{
    (void)state;
    static const char seed[] = "name: xeon # c\n"
                               "caches:\n"
                               "  L3: {ways: 16, size: 32M, policy: srrip}\n"
                               "tasks:\n"
                               "  - name: \"a\\tb\"\n"
                               "    workload:\n"
                               "      wss: 1M\n"
                               "      lat: [80ns, 1.5us]\n"
                               "  - 'x'\n"
                               "  - |\n"
                               "    text\n"
                               "bw: 25.6GB/s\n";
    static const char alphabet[] = ":-[]{}?&*!|>'\"#,\n \t%@`0x.\xff\xc3";
    char buf[sizeof seed + 64];
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = sizeof seed - 1;
        memcpy(buf, seed, len);
        int edits = 1 + (int)(rng_next(&rng_s) % 4);
        for (int k = 0; k < edits; k++) {
            size_t at = rng_next(&rng_s) % len;
            char ch = alphabet[rng_next(&rng_s) % (sizeof alphabet - 1)];
            switch (rng_next(&rng_s) % 3) {
            case 0:
                buf[at] = ch;
                break;
            case 1: /* delete */
                memmove(buf + at, buf + at + 1, len - at - 1);
                len--;
                break;
            default: /* insert */
                if (len + 1 < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = ch;
                    len++;
                }
                break;
            }
        }
        /* Not NUL-terminated: the loader must use len alone. */
        char *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        struct conf c;
        struct err e = {0};
        int rc = conf_load_mem(&c, F, copy, len, &e);
        if (rc) {
            assert_true(rc == -QOSIM_EPARSE);
            assert_memory_equal(e.msg, F ":", 7);
            assert_null(c.root);
        } else {
            read_all(&c, c.root, &e);
            conf_check_unused(&c, c.root, &e);
        }
        conf_free(&c);
        free(copy);
    }
}

/* ---- writing ---- */

/* Two trees are the same: types, keys, values and their quoting. */
static void same_tree(const struct conf_node *a, const struct conf_node *b)
{
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->nkids, b->nkids);
    if (a->key || b->key)
        assert_string_equal(a->key, b->key);
    if (a->type == CONF_SCALAR) {
        assert_string_equal(a->val, b->val);
        assert_int_equal(a->plain, b->plain);
    }
    for (unsigned i = 0; i < a->nkids; i++)
        same_tree(&a->kids[i], &b->kids[i]);
}

/* What conf_write writes reads back as the same tree, in block style and
 * in one flow line; a quoted scalar stays quoted, so that a string that
 * reads as a number (or as YAML syntax) keeps what it was. */
static void test_write_round_trip(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "a: 1\nb: [x, \"0x10\", 'y z']\nc:\n  d: {e: f, g: ''}\n  h:\n    - {i: 1}\n    - j\n",
        "- plain\n- \"quoted: colon\"\n- '#hash'\n- [1, [2, 3]]\n",
        "s: \"line\\nbreak\"\nu: \"caf\u00e9\"\n",
    };
    for (size_t k = 0; k < sizeof docs / sizeof *docs; k++)
        for (int flow = 0; flow < 2; flow++) {
            struct conf a, b;
            struct err e = {0};
            load(&a, docs[k]);
            char *text = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&text, &len);
            assert_non_null(f);
            assert_int_equal(conf_write(f, a.root, flow), 0);
            assert_int_equal(fclose(f), 0);
            if (conf_load_mem(&b, F, text, len, &e))
                fail_msg("doc %zu (flow %d) does not read back: %s\n%s", k, flow, e.msg, text);
            /* Flow style is one line: its only line break ends it. */
            if (flow)
                assert_ptr_equal(strchr(text, '\n'), text + len - 1);
            same_tree(a.root, b.root);
            free(text);
            conf_free(&a);
            conf_free(&b);
        }
}

int main(void)
{
    rng_seed(&rng_s, 1, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_big_document),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_empty_document),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_aliases_refused),
        cmocka_unit_test(test_second_document),
        cmocka_unit_test(test_duplicate_key),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_depth_bound),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_conf_error),
        cmocka_unit_test(test_expect),
        cmocka_unit_test(test_get_marks_used),
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_f64),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_size_errors),
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_freq),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_pct),
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_str),
        cmocka_unit_test(test_enum),
        cmocka_unit_test(test_absent_optional),
        cmocka_unit_test(test_required_missing),
        cmocka_unit_test(test_getter_not_a_map),
        cmocka_unit_test(test_node_u64),
        cmocka_unit_test(test_unused_top),
        cmocka_unit_test(test_unused_nested),
        cmocka_unit_test(test_unused_sequences),
        cmocka_unit_test(test_keys_before_required),
        cmocka_unit_test(test_keys_nested),
        cmocka_unit_test(test_keys_suggestions),
        cmocka_unit_test(test_keys_and_unused),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_write_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
