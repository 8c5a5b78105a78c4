#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERR_NAME(n, m) "QOSIM_E" #n,
#define ERR_MSG(n, m)  m,
static const char *const err_names[] = {QOSIM_ERRLIST(ERR_NAME)};
static const char *const err_msgs[] = {QOSIM_ERRLIST(ERR_MSG)};

static int err_index(int code)
{
    int i = -code - 1;
    return (i >= 0 && i < (int)(sizeof err_names / sizeof err_names[0])) ? i : -1;
}

const char *qosim_errname(int code)
{
    int i = err_index(code);
    return code == 0 ? "QOSIM_OK" : i < 0 ? "QOSIM_E?" : err_names[i];
}

const char *qosim_strerror(int code)
{
    int i = err_index(code);
    return code == 0 ? "success" : i < 0 ? "unknown error" : err_msgs[i];
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (e) {
        /* Format aside first: callers prefix a location to e->msg itself. */
        char msg[sizeof e->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        memcpy(e->msg, msg, sizeof msg);
        e->code = code;
    }
    return code;
}
