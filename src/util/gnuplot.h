/* Plots through gnuplot: the program is written into gnuplot's standard
 * input, with the data inline, and gnuplot draws into an output file's
 * descriptor, so that the output keeps ofile's rules (whole or not at all;
 * "-" is standard output). */
#ifndef QOSIM_UTIL_GNUPLOT_H
#define QOSIM_UTIL_GNUPLOT_H

#include "err.h"
#include "ofile.h"

#include <stdio.h>

/* Sixteen line colours that stay apart on a white background. */
extern const char *const gnuplot_colour[16];

/* Runs gnuplot ($QOSIM_GNUPLOT, a shell command, else "gnuplot") with its
 * standard output on o's descriptor, has prog(f, ctx) write the program
 * into its standard input, and waits for it. opt names the option that asked
 * for the plot, for the message when gnuplot is missing. The caller commits
 * o, or drops it on failure. 0 when gnuplot exited with 0; else, with e:
 * -QOSIM_ENOTOOL (not found), -QOSIM_ECHILD (it failed to draw),
 * -QOSIM_EIO (it could not be started). */
int gnuplot_run(struct ofile *o, const char *opt, void (*prog)(FILE *f, void *ctx), void *ctx,
                struct err *e);

/* The output is PNG (its name ends in .png); otherwise SVG. */
int gnuplot_png(const struct ofile *o);

/* s in gnuplot's single quotes, where '' stands for one quote. */
void gnuplot_str(FILE *f, const char *s);

#endif
