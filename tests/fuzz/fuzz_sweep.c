/* libFuzzer harness for sweep files (sweep/plan.c): the input is a sweep
 * file beside a small scenario (base.yaml), planned without a folder: every
 * axis, range, glob, zip group and exclusion read, the points expanded and
 * each checked as `qosim run` checks a scenario. A refusal must say where
 * (the sweep file's name, or the base's); nothing may crash, hang or leak.
 * Inputs naming files ('/') are skipped: a base or glob like /dev/zero
 * would make the harness read the filesystem. At most 64 points an input,
 * so that one stays quick. */
#include "sweep/plan.h"
#include "util/tmpdir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_check.h"

static char dir[4096];

static const char base[] =
    "platform: intel-atom\n"
    "duration: 100us\n"
    "tasks:\n"
    "  - {name: a, cpu: 0, class: 1, workload: {pattern: random, wss: 32K}}\n"
    "phases:\n"
    "  - name: one\n"
    "    at: 0us\n"
    "    alloc: [{cache: L2, class: 1, mask: 0xff}]\n";

/* The harness's folder goes when it ends. */
static void cleanup(void)
{
    char path[sizeof dir + 16];
    snprintf(path, sizeof path, "%s/base.yaml", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/fuzz.yaml", dir);
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    struct err e;
    if (tmpdir_make("qosim-fuzz-sweep", dir, sizeof dir, &e) || chdir(dir))
        abort();
    atexit(cleanup);
    FILE *f = fopen("base.yaml", "w");
    if (!f || fputs(base, f) < 0 || fclose(f))
        abort();
    sweep_max_points = 64;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memchr(data, '/', size) || memchr(data, '\0', size))
        return 0;
    FILE *f = fopen("fuzz.yaml", "w");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    struct err e = {0};
    size_t n = 0;
    int rc = sweep_plan("fuzz.yaml", NULL, &n, &e);
    if (rc) {
        FZ_CHECK(rc < 0, "rc %d", rc);
        FZ_CHECK(e.msg[0], "empty message for %d", rc);
        if (rc != -QOSIM_ENOMEM)
            FZ_CHECK(!strncmp(e.msg, "fuzz.yaml", 9) || !strncmp(e.msg, "base.yaml", 9),
                     "message does not say where: %s", e.msg);
    } else
        FZ_CHECK(n >= 1 && n <= 64, "%zu points", n);
    return 0;
}
