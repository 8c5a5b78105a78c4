/* Assertions the unit tests share (include after cmocka.h). */
#ifndef QOSIM_TESTLIB_H
#define QOSIM_TESTLIB_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A test group's scratch directory, /tmp/qosim-test-NAME-XXXXXX: made by
 * the group's setup, removed with what is in it by its teardown. */
static inline int testlib_mkdtemp(char *dir, size_t cap, const char *name)
{
    snprintf(dir, cap, "/tmp/qosim-test-%s-XXXXXX", name);
    return mkdtemp(dir) ? 0 : -1;
}

static inline int testlib_rmtree(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

/* A file's text (up to 64 KiB, in a buffer the next call reuses), or
 * "(missing)". */
static inline const char *testlib_slurp(const char *path)
{
    static char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return f ? buf : "(missing)";
}

/* Writes text to path. */
static inline void testlib_put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* How many entries a folder has (temporaries included). */
static inline int testlib_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

#endif
