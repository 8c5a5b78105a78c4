/* Output files that appear whole or not at all: written to a temporary in
 * the same directory, renamed over the target only when complete. */
#ifndef QOSIM_UTIL_OFILE_H
#define QOSIM_UTIL_OFILE_H

#include "err.h"

#include <stdio.h>

struct ofile {
    FILE *f;
    char path[1024], tmp[1040];
};

int ofile_open(struct ofile *o, const char *path, struct err *e);
/* Flushes, closes and renames; on failure removes the temporary. */
int ofile_commit(struct ofile *o, struct err *e);
/* Drops the temporary (an error happened); safe on an unopened ofile. */
void ofile_abort(struct ofile *o);

#endif
