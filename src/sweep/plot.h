/* A sweep's results drawn: one number of one task's row in one phase (a
 * column of `qosim sweep collect`'s CSV) over one axis, through gnuplot
 * (docs/sweeps.md, "Results: collect and plot"):
 *   lines     x along the axis; one line per value of the one other axis
 *             that varies (none: a single line);
 *   heatmap   x and y axes (o->y), a cell per pair of values.
 * Axis values that all read as numbers (12, 8K, 0x1f, 1.5) are placed by
 * their value on a line plot's x axis, otherwise one after the other in the
 * manifest's order; a heatmap's cells are in numeric order when they are
 * numbers. Points that are not done, or that lack the value, are left out
 * and named on o->note. */
#ifndef QOSIM_SWEEP_PLOT_H
#define QOSIM_SWEEP_PLOT_H

#include "sweep.h"

#include <stdio.h>

struct sweep_plot_opts {
    const char *out;          /* FILE.svg, FILE.png, or "-": SVG on standard output */
    const char *metric;       /* a task row's number, named as the CSV's columns are
                                 ("ipc", "misses.L3"); NULL: "ipc" */
    const char *task;         /* NULL: the scenario's only task */
    const char *phase;        /* NULL: each point's last phase */
    const char *x;            /* NULL: the one axis that varies */
    const char *y;            /* NULL: lines; an axis: a heatmap over x and y */
    const char *const *where; /* [nwhere] "AXIS=VALUE": only the points with that value
                                 (several for one axis: any of them) */
    size_t nwhere;
    int logx;   /* a line plot's numeric x axis on a logarithmic scale */
    FILE *note; /* where left-out points are named; NULL: standard error */
};

/* Draws the plot into o->out, whole or not at all. A bad option (an axis,
 * task, phase or metric that no point has; two points at one place, which
 * names the axis to fix with --where) is -QOSIM_EINVAL; no point to draw
 * is -QOSIM_ENOENT; gnuplot's failures are gnuplot_run's. */
int sweep_plot(const struct sweep *sw, const struct sweep_plot_opts *o, struct err *e);

#endif
