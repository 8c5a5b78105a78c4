/* Private temporary folders, where users and their systems expect them:
 * under $TMPDIR when it is set (as mktemp(1) and the C library's own
 * temporaries do; containers and clusters point it at a per-job place),
 * else /tmp. */
#ifndef QOSIM_UTIL_TMPDIR_H
#define QOSIM_UTIL_TMPDIR_H

#include "err.h"

#include <stddef.h>
#include <stdio.h>

/* Makes a new folder NAME.XXXXXX there, mode 0700 whatever the umask, and
 * writes its path to out (n bytes). 0, or a negative code with why in e. */
int tmpdir_make(const char *name, char *out, size_t n, struct err *e);

/* Creates file (which must not exist) with mode 0600 and opens it for
 * writing: what goes into a private folder stays private even if the
 * folder's mode is widened. NULL with errno set on failure. */
FILE *tmpdir_file(const char *path);

#endif
