/* What the writer harnesses (fuzz_qtr.c, fuzz_champsim_rt.c) share. */
#ifndef QOSIM_FUZZ_TW_H
#define QOSIM_FUZZ_TW_H

#include "fuzz_check.h"
#include "sim/trace/twrite.h"

#include <stdio.h>

/* Writes r[0..n) with ops (NULL: by name) into memory, in tw_put calls of 1
 * to maxstep records that seed picks, as a capture hands records over.
 * Returns the bytes (for free) and sets *len, and *dropped to what the
 * writer left out. */
static char *fz_write(const struct tw_ops *ops, const char *name, const struct trace_rec *r,
                      size_t n, uint64_t seed, unsigned maxstep, size_t *len, uint64_t *dropped)
{
    char *mem = NULL;
    FILE *f = open_memstream(&mem, len);
    FZ_CHECK(f, "open_memstream failed");
    struct tw *w;
    struct err e = {0};
    FZ_CHECK(!tw_open(&w, ops, f, name, &e), "tw_open: %s", e.msg);
    for (size_t i = 0, step; i < n; i += step) {
        step = 1 + seed % maxstep;
        seed = seed >> 3 | seed << 61;
        if (step > n - i)
            step = n - i;
        FZ_CHECK(!tw_put(w, r + i, step, &e), "tw_put: %s", e.msg);
    }
    *dropped = tw_dropped(w);
    FZ_CHECK(!tw_close(w, &e), "tw_close: %s", e.msg);
    FZ_CHECK(!fclose(f), "fclose failed");
    return mem;
}

#endif
