/* Trace writers: one ops table per format, registered in twrite.c, the
 * readers' counterparts (docs/traces.md says what each format keeps).
 *
 *   qtr       qosim's own format, always zstd-compressed: every field of
 *             every record comes back exactly;
 *   champsim  64-byte instruction records, plain or .xz: one record per
 *             instruction, its data as the cache lines it touches;
 *   lackey    Valgrind Lackey text, plain or .xz: all but the flags.
 *
 * The writer takes records in workload order (an instruction, then its data
 * records) in as many tw_put calls as the caller likes, split anywhere, and
 * writes to a FILE the caller opened (util/ofile.h) and closes. */
#ifndef QOSIM_SIM_TWRITE_H
#define QOSIM_SIM_TWRITE_H

#include "trace.h"

#include <stdint.h>
#include <stdio.h>

struct tw;

struct tw_ops {
    const char *name;
    const char *desc;
    int zstd;                    /* always zstd-compressed (else .xz when the name ends in .xz) */
    size_t state;                /* bytes of the format's state, zeroed at tw_open */
    void (*begin)(struct tw *w); /* NULL: no header */
    int (*put)(struct tw *w, const struct trace_rec *r, size_t n, struct err *e);
    int (*finish)(struct tw *w, struct err *e); /* NULL: nothing held back */
};

const struct tw_ops *tw_at(unsigned n);
const struct tw_ops *tw_find(const char *name);
/* The format a file name asks for, as the readers guess it (trace_guess):
 * ".qtr" in it qtr, "champsim" ChampSim, anything else (din too) Lackey. */
const struct tw_ops *tw_for_path(const char *path);

/* A writer of ops' format (NULL: tw_for_path(path)) into f; path names the
 * output in messages, and a champsim or lackey path ending in ".xz" makes
 * the output .xz. */
int tw_open(struct tw **out, const struct tw_ops *ops, FILE *f, const char *path, struct err *e);
/* Writes n records. After an error the writer only fails: tw_free it. */
int tw_put(struct tw *w, const struct trace_rec *r, size_t n, struct err *e);
/* Writes what is held back, ends the compressed stream and flushes f; frees
 * w, whatever happened. */
int tw_close(struct tw *w, struct err *e);
/* Frees w, writing nothing more (the output is to be dropped). */
void tw_free(struct tw *w);
/* Bytes written to f so far (compressed), for progress lines. */
uint64_t tw_out_bytes(const struct tw *w);
/* What the format could not hold and left out (ChampSim: the addresses of
 * lines beyond an instruction's slots, and data without an instruction);
 * always 0 for qtr and lackey. */
uint64_t tw_dropped(const struct tw *w);

extern const struct tw_ops tw_qtr, tw_champsim, tw_lackey;

#endif
