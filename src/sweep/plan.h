/* Planning a sweep: a sweep file (docs/sweeps.md) expanded into its points,
 * each a complete scenario checked as `qosim run` would check it, written
 * into a sweep folder (sweep.h) with the manifest. */
#ifndef QOSIM_SWEEP_PLAN_H
#define QOSIM_SWEEP_PLAN_H

#include "util/err.h"

#include <stddef.h>

/* Plans FILE into DIR: a new or empty folder, or one planned before (then
 * points whose scenario and inputs are unchanged keep their results, and
 * folders of points that no longer exist are removed). Nothing is written
 * unless every point is a valid scenario. *npoint: the count. */
int sweep_plan(const char *file, const char *dir, size_t *npoint, struct err *e);
/* dir NULL: only the checks. */

/* The most points a plan may have: a million (the fuzz harness lowers it,
 * so that an input stays quick to check). */
extern unsigned sweep_max_points;

#endif
