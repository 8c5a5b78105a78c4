/* Error detail: a code from qosim.h plus a message that names where and what. */
#ifndef QOSIM_UTIL_ERR_H
#define QOSIM_UTIL_ERR_H

#include "qosim.h"
#include <stddef.h>

struct err {
    int code;
    char msg[512];
};

/* Records code and a printf-style message in e (when e is not NULL) and
 * returns code, so callers can write `return err_set(e, -QOSIM_EPARSE, ...)`.
 * The arguments may include e->msg, to add a location to an inner message. */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
