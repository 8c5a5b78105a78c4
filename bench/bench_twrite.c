/* Speed and size of the trace writers (src/sim/trace/twrite.h) on a real
 * trace, and of reading what they wrote back.
 *
 *   make build/bench/bench_twrite
 *   build/bench/bench_twrite TRACE [OUTDIR] [RUNS] [FORMAT]
 *
 * TRACE (any format the readers know, by its name) is read into memory
 * first, so the timings are the writers' and readers' alone. Each writer
 * writes OUTDIR/bench.{qtr,champsim.xz,lackey.xz} (default /tmp) RUNS times
 * (default 3; the best run counts, the one the host disturbed least) in
 * batches of 4096 records, as a capture would hand them over; then each file
 * is read back once. A capture hands over records it has just made, in the
 * cache: each batch is copied to a small buffer before the clock runs, so
 * the timing does not include fetching 16 bytes a record from memory. Printed:
 * records and instructions, and per writer its rate, the bytes per
 * instruction of the format before compression (qtr only: the stream
 * decompressed) and after, and the reader's rate. Nothing here gates a
 * build: the numbers depend on the host. FORMAT (qtr, champsim or lackey)
 * runs that writer alone. */
#include "sim/trace/trace.h"
#include "sim/trace/twrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const struct err *e)
{
    fprintf(stderr, "bench_twrite: %s: %s\n", what, e->msg);
    exit(1);
}

/* Reads path to the end; keeps the records when out is not NULL. Returns
 * the count, *bytes the uncompressed bytes bsrc gave (when measured). */
static size_t read_all(const char *path, const struct trace_ops *ops, struct trace_rec **out)
{
    struct trace t;
    struct err e = {0};
    if (trace_open(&t, path, ops, 0, &e))
        die(path, &e);
    size_t n = 0, cap = out ? 1u << 20 : 4096;
    struct trace_rec *r = malloc(cap * sizeof *r);
    for (;;) {
        if (out && n + 4096 > cap)
            r = realloc(r, (cap *= 2) * sizeof *r);
        long got = trace_read(&t, out ? r + n : r, 4096);
        if (got < 0)
            die(path, &t.err);
        if (!got)
            break;
        n += (size_t)got;
    }
    trace_close(&t);
    if (out)
        *out = r;
    else
        free(r);
    return n;
}

/* The uncompressed size of a file, through bsrc. */
static uint64_t plain_bytes(const char *path)
{
    struct bsrc b;
    struct err e = {0};
    if (bsrc_open(&b, path, &e))
        die(path, &e);
    static char buf[1 << 20];
    uint64_t n = 0;
    long got;
    while ((got = bsrc_read(&b, buf, sizeof buf, &e)) > 0)
        n += (uint64_t)got;
    if (got < 0)
        die(path, &e);
    bsrc_close(&b);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_twrite TRACE [OUTDIR] [RUNS]\n");
        return 2;
    }
    const char *in = argv[1], *dir = argc > 2 ? argv[2] : "/tmp";
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    const char *only = argc > 4 ? argv[4] : NULL;
    const struct trace_ops *iops = trace_find(trace_guess(in));
    struct trace_rec *r;
    double t0 = now();
    size_t n = read_all(in, iops, &r);
    double tin = now() - t0;
    size_t ni = 0;
    for (size_t i = 0; i < n; i++)
        ni += r[i].kind == TREC_I;
    printf("%s: %zu records, %zu instructions (%.2f records each); %s reader %.1f M records/s\n",
           in, n, ni, (double)n / (double)ni, iops->name, n / tin / 1e6);
    printf("\n| format | write M rec/s | bytes/instr plain | bytes/instr file | dropped | read M "
           "rec/s |\n|---|---|---|---|---|---|\n");
    static const char *const names[] = {"bench.qtr", "bench.champsim.xz", "bench.lackey.xz"};
    for (int f = 0; f < 3; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        if (only && strcmp(tw_for_path(path)->name, only))
            continue;
        double best = 1e30;
        uint64_t out = 0, dropped = 0;
        for (int k = 0; k < runs; k++) {
            FILE *fp = fopen(path, "w");
            if (!fp) {
                perror(path);
                return 1;
            }
            struct tw *w;
            struct err e = {0};
            static struct trace_rec hot[4096];
            double dt = 0;
            t0 = now();
            if (tw_open(&w, NULL, fp, path, &e))
                die(path, &e);
            dt += now() - t0;
            for (size_t i = 0; i < n; i += 4096) {
                size_t m = n - i < 4096 ? n - i : 4096;
                memcpy(hot, r + i, m * sizeof *r);
                t0 = now();
                if (tw_put(w, hot, m, &e))
                    die(path, &e);
                dt += now() - t0;
            }
            out = tw_out_bytes(w);
            dropped = tw_dropped(w);
            t0 = now();
            if (tw_close(w, &e))
                die(path, &e);
            dt += now() - t0;
            out = (uint64_t)ftell(fp);
            fclose(fp);
            best = dt < best ? dt : best;
        }
        uint64_t plain = plain_bytes(path);
        t0 = now();
        size_t back = read_all(path, trace_find(trace_guess(path)), NULL);
        double tr = now() - t0;
        printf("| %s | %.1f | %.3f | %.3f | %llu | %.1f (%zu records) |\n", names[f] + 6,
               n / best / 1e6, (double)plain / (double)ni, (double)out / (double)ni,
               (unsigned long long)dropped, back / tr / 1e6, back);
    }
    free(r);
    return 0;
}
