/* sweep/collect and sweep/plot: each test makes a planned sweep's folder by
 * hand in a fresh directory under /tmp (manifest.tsv; points/NNNN/ with
 * scenario.yaml, an empty inputs, a small result.json and a record.json
 * under the point's real key), then checks the CSV's exact text and the
 * JSON Lines; the refusal when points are not done, with nothing written;
 * --allow-missing and its note; malformed results named with the reason;
 * and the gnuplot program a plot writes (QOSIM_GNUPLOT=cat puts it in the
 * output file), with its refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testlib.h"
#include "sweep/collect.h"
#include "sweep/plot.h"

#include <json-c/json.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static FILE *notef; /* a plot's notes */

enum rec { REC_NONE, REC_OK, REC_FAILED, REC_STALE };

static const char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *at(const char *fmt, ...)
{
    static char buf[4][sizeof dir + 256];
    static int k;
    char rel[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, rel);
    return buf[k];
}

/* The manifest (a header line, then a line per point; tab-separated) and
 * every point's folder with its scenario and inputs. */
static void plan(const char *manifest)
{
    testlib_put(at("manifest.tsv"), manifest);
    assert_int_equal(mkdir(at("points"), 0777), 0);
    size_t n = 0;
    for (const char *p = strchr(manifest, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
        n++;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(mkdir(at("points/%04zu", i), 0777), 0);
        testlib_put(at("points/%04zu/scenario.yaml", i), "duration: 1ms\n");
        testlib_put(at("points/%04zu/inputs", i), "");
    }
}

/* Point i's result.json (text NULL: none) and record.json. */
static void point(struct sweep *sw, size_t i, const char *result, enum rec rec)
{
    char key[SWEEP_KEY_HEX], text[512];
    struct err e = {0};
    if (result)
        testlib_put(at("points/%04zu/result.json", i), result);
    if (rec == REC_NONE)
        return;
    if (sweep_key(sw, i, key, &e))
        fail_msg("sweep_key: %s", e.msg);
    if (rec == REC_STALE)
        key[0] = key[0] == '0' ? '1' : '0';
    snprintf(text, sizeof text,
             "{\"key\":\"%s\",\"status\":\"%s\",\"exit_code\":%d,\"stderr_tail\":\"\","
             "\"provenance\":{\"qosim_version\":\"0.1.0\",\"host\":\"h\",\"wall_seconds\":0.12}}\n",
             key, rec == REC_FAILED ? "failed" : "ok", rec == REC_FAILED);
    testlib_put(at("points/%04zu/record.json", i), text);
}

static void open_sweep(struct sweep *sw)
{
    struct err e = {0};
    if (sweep_open(sw, dir, &e))
        fail_msg("sweep_open: %s", e.msg);
}

static int setup(void **state)
{
    (void)state;
    notef = tmpfile();
    return notef ? testlib_mkdtemp(dir, sizeof dir, "sweep-collect") : -1;
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("QOSIM_GNUPLOT");
    fclose(notef);
    return testlib_rmtree(dir);
}

/* What the notes say since the last call. */
static const char *note_text(void)
{
    static char buf[2048];
    rewind(notef);
    size_t n = fread(buf, 1, sizeof buf - 1, notef);
    buf[n] = '\0';
    rewind(notef);
    assert_int_equal(ftruncate(fileno(notef), 0), 0);
    return buf;
}

/* ---- collect ---- */

/* Three points whose rows differ: fields that only later points have come
 * after the first point's, in order of first appearance; a null is empty;
 * numbers keep their text (2224000000.0, 1e3, 2^64 - 1). */
static const char *const res3[3] = {
    "{\"scenario\":\"/s/a.yaml\",\"phases\":[{\"name\":\"shared\",\"at\":0,\"tasks\":["
    "{\"task\":\"victim\",\"instructions\":100,\"ipc\":0.5,\"references\":{\"L1I\":100,\"L3\":7},"
    "\"misses\":{\"L3\":3},\"mem_read_bytes_per_sec\":2224000000.0},"
    "{\"task\":\"noisy\",\"instructions\":200,\"ipc\":1.25,\"references\":{\"L1I\":200,\"L3\":9},"
    "\"misses\":{\"L3\":4},\"mem_read_bytes_per_sec\":1e3}]}],\"intervals\":[]}",
    "{\"phases\":[{\"name\":\"shared\",\"at\":0,\"tasks\":["
    "{\"task\":\"victim\",\"instructions\":101,\"ipc\":0.51,\"references\":{\"L1I\":101,\"L3\":8},"
    "\"misses\":{\"L3\":2},\"mem_read_bytes_per_sec\":5,\"monitor\":{\"rmid\":1,"
    "\"total_bytes\":null}}]},{\"name\":\"split, \\\"hard\\\"\",\"at\":0.01,\"tasks\":["
    "{\"task\":\"victim\",\"ipc\":0.75,\"misses\":{\"L3\":1},\"end\":\"trace\",\"ok\":true,"
    "\"list\":[1,2]}]}]}\n",
    "{\"phases\":[{\"name\":\"shared\",\"at\":0,\"tasks\":[{\"task\":\"victim\","
    "\"instructions\":18446744073709551615,\"prefetch\":{\"useful\":9},\"ipc\":-0.0}]}]}",
};

static const char *const csv3 =
    "point,ways,mix,phase,task,instructions,ipc,references.L1I,references.L3,misses.L3,"
    "mem_read_bytes_per_sec,monitor.rmid,monitor.total_bytes,prefetch.useful\n"
    "0000,2,\"a,b\",shared,victim,100,0.5,100,7,3,2224000000.0,,,\n"
    "0000,2,\"a,b\",shared,noisy,200,1.25,200,9,4,1e3,,,\n"
    "0001,4,plain,shared,victim,101,0.51,101,8,2,5,1,,\n"
    "0001,4,plain,\"split, \"\"hard\"\"\",victim,,0.75,,,1,,,,\n"
    "0002,8,\"q\"\"x\",shared,victim,18446744073709551615,-0.0,,,,,,,9\n";

static void plan3(struct sweep *sw)
{
    plan("point\tways\tmix\n0000\t2\ta,b\n0001\t4\tplain\n0002\t8\tq\"x\n");
    open_sweep(sw);
}

/* The three points, each done with its result. */
static void done3(struct sweep *sw)
{
    plan3(sw);
    for (size_t i = 0; i < 3; i++)
        point(sw, i, res3[i], REC_OK);
}

static void test_csv_exact(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    done3(&sw);
    struct sweep_collect_opts o = {0};
    if (sweep_collect(&sw, &o, &e))
        fail_msg("sweep_collect: %s", e.msg);
    assert_string_equal(testlib_slurp(at("results.csv")), csv3);
    assert_int_equal(testlib_entries(dir), 4); /* manifest, points, the two outputs */
    sweep_close(&sw);
}

/* A line per point: its name, its axes as written, its record and its
 * result as they were (numbers' text kept, slashes not escaped). */
static void test_jsonl(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    done3(&sw);
    struct sweep_collect_opts o = {.csv = at("out.csv"), .jsonl = at("out.jsonl")};
    if (sweep_collect(&sw, &o, &e))
        fail_msg("sweep_collect: %s", e.msg);
    assert_string_equal(testlib_slurp(at("out.csv")), csv3);
    char want[2048], key[SWEEP_KEY_HEX];
    sweep_key(&sw, 0, key, &e);
    snprintf(want, sizeof want,
             "{\"point\":\"0000\",\"axes\":{\"ways\":\"2\",\"mix\":\"a,b\"},\"record\":{\"key\":"
             "\"%s\",\"status\":\"ok\",\"exit_code\":0,\"stderr_tail\":\"\",\"provenance\":{"
             "\"qosim_version\":\"0.1.0\",\"host\":\"h\",\"wall_seconds\":0.12}},\"result\":%s}\n",
             key, res3[0]);
    const char *got = testlib_slurp(at("out.jsonl"));
    assert_memory_equal(got, want, strlen(want));
    /* Three lines, each one JSON object naming its point. */
    const char *p = got;
    for (int k = 0; k < 3; k++) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        char name[8];
        snprintf(name, sizeof name, "%04d", k);
        char *text = strndup(p, (size_t)(nl - p));
        struct json_object *line = json_tokener_parse(text), *pt;
        free(text);
        assert_non_null(line);
        assert_true(json_object_object_get_ex(line, "point", &pt));
        assert_string_equal(json_object_get_string(pt), name);
        json_object_put(line);
        p = nl + 1;
    }
    assert_string_equal(p, "");
    sweep_close(&sw);
}

/* A failed, a never-run and a stale point: refused, named, nothing written. */
static void test_refuses_missing(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    plan("point\tn\n0000\t1\n0001\t2\n0002\t3\n0003\t4\n");
    open_sweep(&sw);
    point(&sw, 0, res3[2], REC_OK);
    point(&sw, 1, res3[2], REC_FAILED);
    point(&sw, 2, NULL, REC_NONE);
    point(&sw, 3, res3[2], REC_STALE); /* an input changed since it ran */
    struct sweep_collect_opts o = {0};
    assert_int_equal(sweep_collect(&sw, &o, &e), -QOSIM_ENOENT);
    assert_substr(e.msg, "3 of 4 points are not done (failed: 0001; pending: 0002, 0003); run "
                         "`qosim sweep status ");
    assert_substr(e.msg, "or --allow-missing to collect the rest");
    assert_int_equal(testlib_entries(dir), 2);
    /* One missing point: singular. */
    point(&sw, 1, res3[2], REC_OK);
    point(&sw, 3, res3[2], REC_OK);
    assert_int_equal(sweep_collect(&sw, &o, &e), -QOSIM_ENOENT);
    assert_substr(e.msg, "1 of 4 points is not done (pending: 0002)");
    assert_int_equal(testlib_entries(dir), 2);
    sweep_close(&sw);
}

/* Many missing: the first few named, the rest counted. */
static void test_refusal_names_few(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    char m[512] = "point\tn\n";
    for (int i = 0; i < 12; i++)
        snprintf(m + strlen(m), sizeof m - strlen(m), "%04d\t%d\n", i, i);
    plan(m);
    open_sweep(&sw);
    point(&sw, 11, res3[2], REC_OK);
    struct sweep_collect_opts o = {0};
    assert_int_equal(sweep_collect(&sw, &o, &e), -QOSIM_ENOENT);
    assert_substr(e.msg, "11 of 12 points are not done (pending: 0000, 0001, 0002, 0003, 0004 "
                         "and 6 more)");
    sweep_close(&sw);
}

static void test_allow_missing(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    plan3(&sw);
    point(&sw, 0, res3[0], REC_FAILED);
    point(&sw, 1, res3[1], REC_OK);
    point(&sw, 2, res3[2], REC_NONE);
    struct sweep_collect_opts o = {.allow_missing = 1, .note = notef};
    if (sweep_collect(&sw, &o, &e))
        fail_msg("sweep_collect: %s", e.msg);
    /* Only point 1's rows, and only its columns. */
    assert_string_equal(testlib_slurp(at("results.csv")),
                        "point,ways,mix,phase,task,instructions,ipc,references.L1I,references.L3,"
                        "misses.L3,mem_read_bytes_per_sec,monitor.rmid,monitor.total_bytes\n"
                        "0001,4,plain,shared,victim,101,0.51,101,8,2,5,1,\n"
                        "0001,4,plain,\"split, \"\"hard\"\"\",victim,,0.75,,,1,,,\n");
    const char *jl = testlib_slurp(at("results.jsonl"));
    assert_true(!strncmp(jl, "{\"point\":\"0001\"", 15));
    assert_int_equal(strchr(jl, '\n')[1], '\0');
    assert_string_equal(note_text(), "qosim sweep: left out 2 of 3 points, not done (failed: "
                                     "0000; pending: 0002)\n");
    /* No point done: an error even so, and nothing replaced. */
    point(&sw, 1, res3[1], REC_FAILED);
    assert_int_equal(sweep_collect(&sw, &o, &e), -QOSIM_ENOENT);
    assert_substr(e.msg, "none of the 3 points of ");
    assert_substr(e.msg, "is done (failed: 0000, 0001; pending: 0002)");
    assert_substr(testlib_slurp(at("results.csv")), "0001,4,plain,shared");
    sweep_close(&sw);
}

/* A bad result is an error naming the file, where and why; the outputs
 * are not written (an old one stays as it was). */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"phases\":[{\"name\":\"a\",\"tasks\":[}]}",
         "result.json:1:33: malformed JSON: unexpected character"},
        {"{\"phases\":[]}\n{}", "result.json:2:1: malformed JSON: unexpected character"},
        {"{\"phases\":[{\"name\":\"a\",\n\"tasks\":[", "result.json:2:10: malformed JSON: the "
                                                       "file ends inside a value"},
        {"", "result.json: malformed JSON: the file is empty"},
        {"{\"phases\":[1 2]}", "result.json:1:14: malformed JSON: "},
        {"{\"phases\":{}}", "not the output of `qosim run --json`: no \"phases\" array"},
        {"{\"phases\":[{\"name\":\"a\",\"tasks\":[{\"ipc\":1}]}]}",
         "not the output of `qosim run --json`: phases[0].tasks[0] has no \"task\" name"},
    };
    struct sweep sw;
    struct err e = {0};
    done3(&sw);
    testlib_put(at("results.csv"), "old\n");
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        testlib_put(at("points/0001/result.json"), bad[k].text);
        struct sweep_collect_opts o = {0};
        if (sweep_collect(&sw, &o, &e) != -QOSIM_EPARSE)
            fail_msg("case %zu: %s", k, e.msg);
        assert_substr(e.msg, at("points/0001/result.json"));
        assert_substr(e.msg, bad[k].msg);
        assert_string_equal(testlib_slurp(at("results.csv")), "old\n");
        assert_int_equal(testlib_entries(dir), 3);
    }
    testlib_put(at("points/0001/result.json"), res3[1]);
    struct sweep_collect_opts o = {0};
    assert_int_equal(sweep_collect(&sw, &o, &e), 0);
    sweep_close(&sw);
}

/* Two outputs on one file are refused before anything is read. */
static void test_outputs_distinct(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    done3(&sw);
    struct sweep_collect_opts o = {.csv = at("r"), .jsonl = at("r")};
    assert_int_equal(sweep_collect(&sw, &o, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "name the same file");
    assert_int_equal(testlib_entries(dir), 2);
    sweep_close(&sw);
}

static void test_field(void **state)
{
    (void)state;
    struct json_object
        *row = json_tokener_parse(
            "{\"ipc\":1,\"misses\":{\"L3\":2},\"a.b\":{\"c\":3},\"m\":{\"n\":null}}"),
        *v;
    assert_int_equal(sweep_res_field(row, "ipc", &v), 1);
    assert_int_equal(json_object_get_int(v), 1);
    assert_int_equal(sweep_res_field(row, "misses.L3", &v), 1);
    assert_int_equal(json_object_get_int(v), 2);
    assert_int_equal(sweep_res_field(row, "a.b.c", &v), 1);
    assert_int_equal(json_object_get_int(v), 3);
    assert_int_equal(sweep_res_field(row, "m.n", &v), 1);
    assert_null(v);
    assert_int_equal(sweep_res_field(row, "misses.L2", &v), 0);
    assert_int_equal(sweep_res_field(row, "misses", &v), 1); /* an object: not a number */
    json_object_put(row);
}

/* ---- plot ---- */

/* ways (4 values: 2, 8K, 0x10, 1.5) x mix (a, b) x seed (1, 2); victim's
 * IPC is ways_index + 10 * mix_index + 100 * seed_index. Points listed
 * in `done` are done; others have no record. */
static void plan_plot(struct sweep *sw, const char *done)
{
    static const char *const ways[4] = {"2", "8K", "0x10", "1.5"};
    char m[1024] = "point\tways\tmix\tseed\n";
    for (int i = 0; i < 16; i++)
        snprintf(m + strlen(m), sizeof m - strlen(m), "%04d\t%s\t%s\t%d\n", i, ways[i % 4],
                 i / 4 % 2 ? "b" : "a", 1 + i / 8);
    plan(m);
    open_sweep(sw);
    for (size_t i = 0; i < 16; i++) {
        char r[512];
        snprintf(r, sizeof r,
                 "{\"phases\":[{\"name\":\"warm\",\"tasks\":[{\"task\":\"victim\",\"ipc\":0}]},"
                 "{\"name\":\"hot\",\"tasks\":[{\"task\":\"victim\",\"ipc\":%zu,"
                 "\"misses\":{\"L3\":%zu}},{\"task\":\"noisy\",\"ipc\":7}]}]}",
                 i % 4 + 10 * (i / 4 % 2) + 100 * (i / 8), i);
        point(sw, i, r, done && !strchr(done, 'a' + (int)i) ? REC_NONE : REC_OK);
    }
    setenv("QOSIM_GNUPLOT", "cat", 1); /* the program into the output */
}

static int plot(struct sweep *sw, struct sweep_plot_opts *o, struct err *e)
{
    static const char *out;
    out = at("p.svg");
    o->out = out;
    o->note = notef;
    if (!o->task)
        o->task = "victim";
    return sweep_plot(sw, o, e);
}

/* Lines over ways, one per mix, seed fixed: numeric places (1.5 first,
 * 8K at 8192), labelled as written. */
static void test_plot_lines(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    plan_plot(&sw, NULL);
    const char *where[] = {"seed=1"};
    struct sweep_plot_opts o = {.x = "ways", .where = where, .nwhere = 1};
    if (plot(&sw, &o, &e))
        fail_msg("sweep_plot: %s", e.msg);
    const char *gp = testlib_slurp(at("p.svg"));
    assert_substr(gp, "$s0 << EOD\n1.5 3\n2 0\n16 2\n8192 1\nEOD\n");
    assert_substr(gp, "$s1 << EOD\n1.5 13\n2 10\n16 12\n8192 11\nEOD\n");
    assert_substr(gp, "set terminal svg size 900,600 noenhanced");
    assert_substr(gp, "set title 'ipc of victim, phase hot (seed=1)'");
    assert_substr(gp, "set xtics ('1.5' 1.5, '2' 2, '0x10' 16, '8K' 8192)\n");
    assert_substr(gp, "set key outside right top title 'mix'\n");
    assert_substr(gp, "title 'a'");
    assert_substr(gp, "title 'b'");
    assert_string_equal(note_text(), "");
    sweep_close(&sw);
}

/* x chosen when one axis varies; another metric, task and phase; a point
 * not done is named and left out. */
static void test_plot_one_line(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    plan_plot(&sw, "abcdfghijklmnop"); /* point 4 (e) not done */
    const char *where[] = {"seed=1", "mix=b"};
    struct sweep_plot_opts o = {.metric = "misses.L3", .where = where, .nwhere = 2};
    if (plot(&sw, &o, &e))
        fail_msg("sweep_plot: %s", e.msg);
    const char *gp = testlib_slurp(at("p.svg"));
    assert_substr(gp, "$s0 << EOD\n1.5 7\n16 6\n8192 5\nEOD\n");
    assert_substr(gp, "unset key\n");
    assert_string_equal(note_text(), "qosim sweep: left out 1 point, not done (pending: 0004)\n");
    /* The first phase: its IPC is 0 everywhere; the other task. */
    o = (struct sweep_plot_opts){.phase = "warm", .where = where, .nwhere = 2};
    assert_int_equal(plot(&sw, &o, &e), 0);
    assert_substr(testlib_slurp(at("p.svg")), "$s0 << EOD\n1.5 0\n16 0\n8192 0\nEOD\n");
    assert_substr(note_text(), "pending: 0004");
    o = (struct sweep_plot_opts){.task = "noisy", .where = where, .nwhere = 2};
    assert_int_equal(plot(&sw, &o, &e), 0);
    assert_substr(testlib_slurp(at("p.svg")), "1.5 7\n16 7\n8192 7\n");
    note_text();
    sweep_close(&sw);
}

/* A point left out breaks its line rather than being drawn across, and
 * its heatmap cell says "none". */
static void test_plot_gap(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    plan_plot(&sw, "acdefghijklmnop"); /* point 1 (b): 8K, a, 1 */
    const char *where[] = {"seed=1"};
    struct sweep_plot_opts o = {.x = "ways", .where = where, .nwhere = 1};
    if (plot(&sw, &o, &e))
        fail_msg("sweep_plot: %s", e.msg);
    const char *gp = testlib_slurp(at("p.svg"));
    assert_substr(gp, "$s0 << EOD\n1.5 3\n2 0\n16 2\n\nEOD\n");
    assert_substr(gp, "$s1 << EOD\n1.5 13\n2 10\n16 12\n8192 11\nEOD\n");
    assert_string_equal(note_text(), "qosim sweep: left out 1 point, not done (pending: 0001)\n");
    o = (struct sweep_plot_opts){.x = "ways", .y = "mix", .where = where, .nwhere = 1};
    assert_int_equal(plot(&sw, &o, &e), 0);
    gp = testlib_slurp(at("p.svg"));
    assert_substr(gp, "set label 'none' at 3,0 center");
    assert_substr(gp, "set label '13' at 0,1 center");
    assert_int_equal(strstr(gp, "set label 'none' at 3,1") == NULL, 1);
    note_text();
    sweep_close(&sw);
}

/* A heatmap of ways x mix at seed 2: cells by index, numeric order. */
static void test_plot_heatmap(void **state)
{
    (void)state;
    struct sweep sw;
    struct err e = {0};
    plan_plot(&sw, NULL);
    const char *where[] = {"seed=2"};
    struct sweep_plot_opts o = {.x = "ways", .y = "mix", .where = where, .nwhere = 1};
    if (plot(&sw, &o, &e))
        fail_msg("sweep_plot: %s", e.msg);
    const char *gp = testlib_slurp(at("p.svg"));
    assert_substr(gp, "$d << EOD\n1 0 100\n3 0 101\n2 0 102\n0 0 103\n1 1 110\n");
    assert_substr(gp, "set xtics ('1.5' 0, '2' 1, '0x10' 2, '8K' 3)\n");
    assert_substr(gp, "set ytics ('a' 0, 'b' 1)\n");
    assert_substr(gp, "with boxxyerror");
    assert_substr(gp, "set label '113' at 0,1 center front tc rgb '#ffffff'\n");
    note_text();
    sweep_close(&sw);
}

static void test_plot_refusals(void **state)
{
    (void)state;
    const struct {
        struct sweep_plot_opts o;
        int rc;
        const char *msg;
    } bad[] = {
        {{.x = "ways"}, -QOSIM_EINVAL, "with x = ways, mix, seed vary apart"},
        {{0}, -QOSIM_EINVAL, "choose the x axis with --x (these vary: ways, mix, seed)"},
        {{.x = "ways", .y = "mix"},
         -QOSIM_EINVAL,
         "points 0000 and 0008 would be drawn at one place: they differ in seed (1, 2), which "
         "is not drawn; fix it with --where seed=VALUE"},
        {{.x = "size"},
         -QOSIM_EINVAL,
         "--x size: the sweep has no such axis (its axes: ways, "
         "mix, seed)"},
        {{.x = "ways", .y = "ways"}, -QOSIM_EINVAL, "--x and --y name one axis (ways)"},
        {{.x = "ways", .where = (const char *[]){"seed=3"}, .nwhere = 1},
         -QOSIM_EINVAL,
         "--where seed=3: no point has seed=3 (its values: 1, 2)"},
        {{.x = "ways", .where = (const char *[]){"seed"}, .nwhere = 1},
         -QOSIM_EINVAL,
         "--where seed: expected AXIS=VALUE"},
        {{.x = "ways", .metric = "cycles", .where = (const char *[]){"seed=1"}, .nwhere = 1},
         -QOSIM_EINVAL,
         "--metric cycles: victim's rows have no such number (they have ipc, misses.L3)"},
        {{.x = "ways", .phase = "cold", .where = (const char *[]){"seed=1"}, .nwhere = 1},
         -QOSIM_EINVAL,
         "--phase cold: no point's result has that phase"},
        {{.x = "mix", .logx = 1, .where = (const char *[]){"seed=1"}, .nwhere = 1},
         -QOSIM_EINVAL,
         "--logx: mix's values are not all positive numbers"},
        {{.x = "ways", .y = "seed", .logx = 1, .where = (const char *[]){"mix=a"}, .nwhere = 1},
         -QOSIM_EINVAL,
         "--logx is for a line plot"},
    };
    struct sweep sw;
    struct err e = {0};
    plan_plot(&sw, NULL);
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        struct sweep_plot_opts o = bad[k].o;
        int rc = plot(&sw, &o, &e);
        if (rc != bad[k].rc)
            fail_msg("case %zu: %d (%s), want %d", k, rc, e.msg, bad[k].rc);
        assert_substr(e.msg, bad[k].msg);
        note_text();
        assert_int_equal(access(at("p.svg"), F_OK), -1);
    }
    /* A wrong output name, and the task that must be named. */
    struct sweep_plot_opts o = {.out = at("p.pdf"), .x = "ways"};
    assert_int_equal(sweep_plot(&sw, &o, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "p.pdf: the name must end in .svg or .png");
    o = (struct sweep_plot_opts){
        .out = at("p.png"), .x = "ways", .where = (const char *[]){"seed=1"}, .nwhere = 1};
    assert_int_equal(sweep_plot(&sw, &o, &e), -QOSIM_EINVAL);
    assert_substr(e.msg, "choose the task with --task (the tasks: victim, noisy)");
    /* A gnuplot that fails leaves nothing. */
    setenv("QOSIM_GNUPLOT", "cat >/dev/null; exit 3", 1);
    o = (struct sweep_plot_opts){.out = at("p.png"),
                                 .task = "victim",
                                 .x = "ways",
                                 .where = (const char *[]){"seed=1"},
                                 .nwhere = 1};
    assert_int_equal(sweep_plot(&sw, &o, &e), -QOSIM_ECHILD);
    assert_substr(e.msg, "gnuplot failed to draw ");
    assert_int_equal(access(at("p.png"), F_OK), -1);
    setenv("QOSIM_GNUPLOT", "/nonexistent/gnuplot 2>/dev/null", 1);
    assert_int_equal(sweep_plot(&sw, &o, &e), -QOSIM_ENOTOOL);
    assert_substr(e.msg, "needs gnuplot, which was not found");
    sweep_close(&sw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_csv_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_jsonl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusal_names_few, setup, teardown),
        cmocka_unit_test_setup_teardown(test_allow_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outputs_distinct, setup, teardown),
        cmocka_unit_test(test_field),
        cmocka_unit_test_setup_teardown(test_plot_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plot_one_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plot_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plot_heatmap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plot_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
