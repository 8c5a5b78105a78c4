/* A sweep's results gathered into one table (docs/sweeps.md, "Results:
 * collect and plot"): every done point's result.json, as
 *   CSV          a row per point, phase and task: the point, its axis
 *                values, the phase and the task, then every number of the
 *                task's row, nested objects flattened with '.' (misses.L3);
 *   JSON Lines   a line per point: its axes, its record.json, its
 *                result.json, whole.
 * Both are written whole or not at all, and together or neither. */
#ifndef QOSIM_SWEEP_COLLECT_H
#define QOSIM_SWEEP_COLLECT_H

#include "sweep.h"

#include <stdio.h>

struct json_object;

struct sweep_collect_opts {
    const char *csv;   /* NULL: DIR/results.csv; "-": standard output */
    const char *jsonl; /* NULL: DIR/results.jsonl */
    int allow_missing; /* collect the done points when some are not */
    FILE *note;        /* where left-out points are named; NULL: standard error */
};

/* Writes both outputs from the points that are done. When a point is not
 * done and !allow_missing: -QOSIM_ENOENT, a message that counts and names
 * them, and nothing written; with allow_missing they are left out and named
 * on o->note (no point done at all is the same error). A result.json or
 * record.json that cannot be read is -QOSIM_EPARSE (or EIO) naming it. */
int sweep_collect(const struct sweep *sw, const struct sweep_collect_opts *o, struct err *e);

/* ---- shared with plot.c ---- */

/* Names the points that are not done among those with sel[i] set (all when
 * sel is NULL), at most max of each kind, into buf: "failed: 0003; pending:
 * 0007, 0011 and 4 more". Returns how many there are; *nfailed (when not
 * NULL) how many of them failed. */
size_t sweep_res_missing(const struct sweep *sw, const enum sweep_state *st,
                         const unsigned char *sel, size_t max, char *buf, size_t cap,
                         size_t *nfailed);

/* Point i's result.json, checked to have the shape `qosim run --json`
 * gives it: "phases", each with a "name" and "tasks", each task's row with
 * its "task" name. */
int sweep_res_read(const struct sweep *sw, size_t i, struct json_object **res, struct err *e);

/* The field of a row named as the CSV's columns name it ("ipc",
 * "misses.L3"): 1 with *v (NULL for a JSON null), or 0 when absent. */
int sweep_res_field(struct json_object *row, const char *name, struct json_object **v);

#endif
