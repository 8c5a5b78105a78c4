/* qosim public API: the error list shared by every layer.
 *
 * Functions return 0 or a negative QOSIM_E* code; qosim_errname() and
 * qosim_strerror() turn a code into its name and message, as libuv does. */
#ifndef QOSIM_H
#define QOSIM_H

#define QOSIM_VERSION "0.1.0"

/* X(name, message): one list yields the enum, the names and the messages. */
#define QOSIM_ERRLIST(X)                                                                           \
    X(NOMEM, "out of memory")                                                                      \
    X(INVAL, "invalid argument")                                                                   \
    X(IO, "input/output error")                                                                    \
    X(NOENT, "no such file or program")                                                            \
    X(PARSE, "malformed input")                                                                    \
    X(TRUNC, "truncated input")                                                                    \
    X(XZ, "corrupt compressed stream")                                                             \
    X(GEOM, "invalid cache geometry")                                                              \
    X(UNSUP, "unsupported feature")                                                                \
    X(NOTOOL, "required external tool not found")                                                  \
    X(CHILD, "child program failed")                                                               \
    X(TIMEDOUT, "operation timed out")

enum {
    QOSIM_OK = 0,
#define QOSIM_ERR_ENUM(n, m) QOSIM_E##n,
    QOSIM_ERR_FIRST_ = 0,
    QOSIM_ERRLIST(QOSIM_ERR_ENUM) QOSIM_ERR_COUNT_
#undef QOSIM_ERR_ENUM
};

/* Codes are returned negated: -QOSIM_EPARSE etc. */
const char *qosim_errname(int code);
const char *qosim_strerror(int code);

#endif
