/* FZ_CHECK(cond, fmt, ...): a property every fuzz input must keep; on
 * violation, says which and aborts, so libFuzzer keeps the input. */
#ifndef QOSIM_FUZZ_CHECK_H
#define QOSIM_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
