/* qosim cachesim: cachegrind's cache simulation over a recorded trace. With
 * the default options the model is cachegrind's exactly (true LRU,
 * write-allocate, LL looked up and filled only on L1 misses); --L2,
 * --policy, --inclusion and --writeback leave that model on purpose. */
#include "cli.h"

#include "sim/trace/replay.h"
#include "util/json.h"
#include "util/ofile.h"

#include <stdio.h>
#include <string.h>

static const char cachesim_help[] =
    "usage: qosim cachesim [OPTIONS] FILE|-\n"
    "\n"
    "Replays a memory trace through I1, D1 (and optionally L2) and LL caches and\n"
    "prints cachegrind's summary. With the default model the nine counts equal\n"
    "valgrind --tool=cachegrind --cache-sim=yes for the same run of the program.\n"
    "\n"
    "  --I1=SIZE,ASSOC,LINE   instruction L1 (default 32768,8,64)\n"
    "  --D1=SIZE,ASSOC,LINE   data L1 (default 32768,8,64)\n"
    "  --LL=SIZE,ASSOC,LINE   last-level cache (default 8388608,16,64)\n"
    "  --L2=SIZE,ASSOC,LINE   add a unified L2 between the L1s and LL\n"
    "  --policy=NAME          replacement at every level: lru (default), plru, srrip,\n"
    "                         qlru_H_M_R_U[_umo], adaptive_qlru_H_M_R_U (docs/mechanisms.md)\n"
    "  --inclusion=KIND       of L2/LL: nine (default), inclusive, exclusive\n"
    "  --writeback=MODE       count (default: dirty victims are counted only, as\n"
    "                         cachegrind ignores them) or propagate (they write the\n"
    "                         next level)\n"
    "  --format=FMT           lackey (default; qtr if the name contains '.qtr',\n"
    "                         champsim if 'champsim', din if '.din'), champsim, din, qtr\n"
    "  --skip-bad             count malformed records and go on, instead of stopping\n"
    "  --json                 print one JSON object instead of the text summary\n"
    "  -o, --output FILE      write the summary to FILE instead of standard output\n"
    "                         (written whole or not at all; docs/cachesim.md)\n"
    "\n"
    "FILE may be .xz- or zstd-compressed; '-' reads standard input.\n";

/* 1234567 -> "1,234,567", cachegrind's %,llu. */
static const char *commas(uint64_t v, char *buf)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v), k = 0;
    for (int i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = tmp[i];
    }
    buf[k] = '\0';
    return buf;
}

static int width(uint64_t v)
{
    char b[32];
    return (int)strlen(commas(v, b));
}

static double pct(uint64_t num, uint64_t den)
{
    return num * 100.0 / (double)(den ? den : 1);
}

/* cachegrind's 'rd + wr' row. */
static void row3(FILE *f, const char *label, int l1, int l2, int l3, uint64_t t, uint64_t r,
                 uint64_t w)
{
    char a[32], b[32], c[32];
    fprintf(f, "%s %*s  (%*s rd   + %*s wr)\n", label, l1, commas(t, a), l2, commas(r, b), l3,
            commas(w, c));
}

static void rate3(FILE *f, const char *label, int l1, int l2, int l3, double t, double r, double w)
{
    fprintf(f, "%s %*.1f%% (%*.1f%%     + %*.1f%%  )\n", label, l1, t, l2, r, l3, w);
}

static void print_text(FILE *f, const struct hier *h, uint64_t bad)
{
    const struct hier_stats *i1 = &h->st[HIER_L1I], *d1 = &h->st[HIER_L1D], *ll = &h->st[HIER_LL];
    uint64_t ir = i1->ref[HIER_CI], dr = d1->ref[HIER_CR], dw = d1->ref[HIER_CW];
    int l1 = width(ir), l2 = width(dr), l3 = width(dw);
    char a[32];

    for (int c = 0; c < HIER_NCACHE; c++)
        if (h->c[c].lines)
            fprintf(f, "%s cache:         %llu B, %u B, %u-way associative\n", hier_cache_name[c],
                    (unsigned long long)h->c[c].g.size, h->c[c].g.line, h->c[c].g.assoc);
    fprintf(f, "\n");
    fprintf(f, "I   refs:      %*s\n", l1, commas(ir, a));
    fprintf(f, "I1  misses:    %*s\n", l1, commas(i1->miss[HIER_CI], a));
    fprintf(f, "LLi misses:    %*s\n", l1, commas(ll->miss[HIER_CI], a));
    fprintf(f, "I1  miss rate: %*.2f%%\n", l1, pct(i1->miss[HIER_CI], ir));
    fprintf(f, "LLi miss rate: %*.2f%%\n", l1, pct(ll->miss[HIER_CI], ir));
    fprintf(f, "\n");
    row3(f, "D   refs:     ", l1, l2, l3, dr + dw, dr, dw);
    row3(f, "D1  misses:   ", l1, l2, l3, d1->miss[HIER_CR] + d1->miss[HIER_CW], d1->miss[HIER_CR],
         d1->miss[HIER_CW]);
    row3(f, "LLd misses:   ", l1, l2, l3, ll->miss[HIER_CR] + ll->miss[HIER_CW], ll->miss[HIER_CR],
         ll->miss[HIER_CW]);
    rate3(f, "D1  miss rate:", l1, l2, l3, pct(d1->miss[HIER_CR] + d1->miss[HIER_CW], dr + dw),
          pct(d1->miss[HIER_CR], dr), pct(d1->miss[HIER_CW], dw));
    rate3(f, "LLd miss rate:", l1, l2, l3, pct(ll->miss[HIER_CR] + ll->miss[HIER_CW], dr + dw),
          pct(ll->miss[HIER_CR], dr), pct(ll->miss[HIER_CW], dw));
    fprintf(f, "\n");
    if (h->c[HIER_L2].lines) {
        const struct hier_stats *s = &h->st[HIER_L2];
        uint64_t rr = s->ref[HIER_CI] + s->ref[HIER_CR], mr = s->miss[HIER_CI] + s->miss[HIER_CR];
        row3(f, "L2 refs:      ", l1, l2, l3, rr + s->ref[HIER_CW], rr, s->ref[HIER_CW]);
        row3(f, "L2 misses:    ", l1, l2, l3, mr + s->miss[HIER_CW], mr, s->miss[HIER_CW]);
        rate3(f, "L2 miss rate: ", l1, l2, l3, pct(mr + s->miss[HIER_CW], ir + dr + dw),
              pct(mr, ir + dr), pct(s->miss[HIER_CW], dw));
        fprintf(f, "\n");
    }
    uint64_t rr = ll->ref[HIER_CI] + ll->ref[HIER_CR], mr = ll->miss[HIER_CI] + ll->miss[HIER_CR];
    row3(f, "LL refs:      ", l1, l2, l3, rr + ll->ref[HIER_CW], rr, ll->ref[HIER_CW]);
    row3(f, "LL misses:    ", l1, l2, l3, mr + ll->miss[HIER_CW], mr, ll->miss[HIER_CW]);
    rate3(f, "LL miss rate: ", l1, l2, l3, pct(mr + ll->miss[HIER_CW], ir + dr + dw),
          pct(mr, ir + dr), pct(ll->miss[HIER_CW], dw));
    fprintf(f, "\nwritebacks:    I1 %s", commas(h->st[HIER_L1I].writebacks, a));
    for (int c = HIER_L1D; c < HIER_NCACHE; c++)
        if (h->c[c].lines)
            fprintf(f, ", %s %s", hier_cache_name[c], commas(h->st[c].writebacks, a));
    fprintf(f, "\n");
    if (bad)
        fprintf(f, "skipped:       %s malformed records\n", commas(bad, a));
}

static void print_json(FILE *f, const struct hier *h, const char *file, const char *fmt,
                       uint64_t records, uint64_t bad)
{
    const struct hier_stats *i1 = &h->st[HIER_L1I], *d1 = &h->st[HIER_L1D], *ll = &h->st[HIER_LL];
    struct json j;
    json_init(&j, f);
    json_obj_begin(&j, NULL);
    json_str(&j, "trace", file);
    json_str(&j, "format", fmt);
    json_u64(&j, "records", records);
    json_u64(&j, "skipped", bad);
    json_u64(&j, "Ir", i1->ref[HIER_CI]);
    json_u64(&j, "I1mr", i1->miss[HIER_CI]);
    json_u64(&j, "ILmr", ll->miss[HIER_CI]);
    json_u64(&j, "Dr", d1->ref[HIER_CR]);
    json_u64(&j, "D1mr", d1->miss[HIER_CR]);
    json_u64(&j, "DLmr", ll->miss[HIER_CR]);
    json_u64(&j, "Dw", d1->ref[HIER_CW]);
    json_u64(&j, "D1mw", d1->miss[HIER_CW]);
    json_u64(&j, "DLmw", ll->miss[HIER_CW]);
    if (h->c[HIER_L2].lines) {
        const struct hier_stats *s = &h->st[HIER_L2];
        json_u64(&j, "I2mr", s->miss[HIER_CI]);
        json_u64(&j, "D2mr", s->miss[HIER_CR]);
        json_u64(&j, "D2mw", s->miss[HIER_CW]);
    }
    json_obj_begin(&j, "caches");
    for (int c = 0; c < HIER_NCACHE; c++) {
        if (!h->c[c].lines)
            continue;
        json_obj_begin(&j, hier_cache_name[c]);
        json_u64(&j, "size", h->c[c].g.size);
        json_u64(&j, "assoc", h->c[c].g.assoc);
        json_u64(&j, "line", h->c[c].g.line);
        json_str(&j, "policy", h->c[c].repl->name);
        json_u64(&j, "writebacks", h->st[c].writebacks);
        json_u64(&j, "back_invalidations", h->st[c].backinv);
        json_obj_end(&j);
    }
    json_obj_end(&j);
    json_obj_end(&j);
}

int cli_cachesim(int argc, char **argv)
{
    static const char *const names[HIER_NCACHE] = {"--I1", "--D1", "--L2", "--LL"};
    struct hier_config cfg = {
        .geom = {{32768, 8, 64}, {32768, 8, 64}, {262144, 8, 64}, {8388608, 16, 64}},
        .repl = &repl_lru,
        .incl = HIER_NINE,
    };
    const char *file = NULL, *fmt = NULL, *out = NULL;
    int json = 0, skip_bad = 0;
    struct err e = {0};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int missing = 0, matched = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(cachesim_help, stdout);
            return 0;
        }
        for (int c = 0; c < HIER_NCACHE && !matched; c++) {
            if ((v = cli_optval(argc, argv, &i, names[c], &missing))) {
                matched = 1;
                if (cache_geom_parse(v, &cfg.geom[c], &e)) {
                    cli_error("cachesim", "%s: %s", names[c], e.msg);
                    return 2;
                }
                cfg.has_l2 |= c == HIER_L2;
            }
        }
        if (matched)
            continue;
        if (missing) {
            cli_error("cachesim", "%.*s needs a value", (int)strcspn(a, "="), a);
            return 2;
        } else if ((v = cli_optval(argc, argv, &i, "--policy", &missing))) {
            if (!(cfg.repl = repl_find(v))) {
                cli_error("cachesim",
                          "--policy: unknown policy '%s' (lru, plru, srrip, qlru_H_M_R_U[_umo] or "
                          "adaptive_qlru_H_M_R_U)",
                          v);
                return 2;
            }
        } else if ((v = cli_optval(argc, argv, &i, "--inclusion", &missing))) {
            if (hier_incl_parse(v, &cfg.incl)) {
                cli_error("cachesim",
                          "--inclusion: unknown kind '%s' (nine, inclusive or exclusive)", v);
                return 2;
            }
        } else if ((v = cli_optval(argc, argv, &i, "--writeback", &missing))) {
            if (strcmp(v, "count") && strcmp(v, "propagate")) {
                cli_error("cachesim", "--writeback: unknown mode '%s' (count or propagate)", v);
                return 2;
            }
            cfg.wb_propagate = !strcmp(v, "propagate");
        } else if ((v = cli_optval(argc, argv, &i, "--format", &missing))) {
            if (!trace_find(v)) {
                cli_error("cachesim",
                          "--format: unknown format '%s' (lackey, champsim, din or qtr)", v);
                return 2;
            }
            fmt = v;
        } else if ((v = cli_optval(argc, argv, &i, "-o", &missing)) ||
                   (v = cli_optval(argc, argv, &i, "--output", &missing))) {
            if (out) {
                cli_error("cachesim", "-o given twice ('%s' and '%s')", out, v);
                return 2;
            }
            out = v;
        } else if (missing) {
            cli_error("cachesim", "%.*s needs a value", (int)strcspn(a, "="), a);
            return 2;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--skip-bad")) {
            skip_bad = 1;
        } else if (a[0] == '-' && a[1]) {
            cli_error("cachesim", "unknown option '%s' (see qosim cachesim --help)", a);
            return 2;
        } else if (file) {
            cli_error("cachesim", "more than one trace file ('%s' and '%s')", file, a);
            return 2;
        } else {
            file = a;
        }
    }
    if (!file) {
        cli_error("cachesim", "no trace file (give FILE, or - for standard input)");
        return 2;
    }
    if (!fmt)
        fmt = trace_guess(file);

    const struct ofile_name on = {"-o", out}, in = {"the trace", file};
    if (out && ofile_distinct(&on, 1, &in, 1, &e)) {
        cli_error("cachesim", "%s", e.msg);
        return 2;
    }

    struct hier h;
    if (hier_init(&h, &cfg, &e)) {
        cli_error("cachesim", "%s", e.msg);
        return 2;
    }
    /* Opened before the replay, so a bad output fails before a long run. */
    static struct ofile o;
    ofile_trap_signals(NULL);
    if (ofile_open(&o, out ? out : "-", &e)) {
        cli_error("cachesim", "%s", e.msg);
        hier_free(&h);
        return 1;
    }
    struct trace t;
    int rc = trace_open(&t, file, trace_find(fmt), skip_bad, &e);
    uint64_t records = 0;
    if (!rc)
        rc = replay_trace(&h, &t, &records);
    if (rc) {
        cli_error("cachesim", "%s", t.err.code ? t.err.msg : e.msg);
    } else if (json) {
        print_json(o.f, &h, t.name, fmt, records, t.bad);
    } else {
        print_text(o.f, &h, t.bad);
    }
    if (rc)
        ofile_abort(&o);
    else if ((rc = ofile_commit(&o, &e)))
        cli_error("cachesim", "%s", e.msg);
    if (!rc && t.bad)
        fprintf(stderr,
                "qosim cachesim: warning: skipped %llu malformed records (first at %s:%llu)\n",
                (unsigned long long)t.bad, t.name, (unsigned long long)t.bad_first);
    trace_close(&t);
    hier_free(&h);
    return rc ? 1 : 0;
}
