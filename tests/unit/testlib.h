/* Assertions the unit tests share (include after cmocka.h). */
#ifndef QOSIM_TESTLIB_H
#define QOSIM_TESTLIB_H

#include <math.h>
#include <string.h>

/* The message hay contains needle. */
#define assert_substr(hay, needle)                                                                 \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("message '%s' lacks '%s'", (hay), (needle));                                  \
    } while (0)

/* |got / want - 1| <= tol, with both numbers in the message on failure. */
#define assert_near(got, want, tol)                                                                \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(fabs(g_ / w_ - 1) <= (tol)))                                                         \
            fail_msg("%s = %g, want %g within %g%%", #got, g_, w_, (tol)*100);                     \
    } while (0)

#endif
